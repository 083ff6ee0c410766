"""The array namespaces ``purebpe.gpu`` runs on: NumPy (CPU, the reference) and CuPy (GPU).

Every decoding function is written once against an array module ``xp`` that has NumPy's
API; with ``xp=numpy`` it runs on the CPU, with ``xp=cupy`` the very same code runs on the
GPU. Neither library is a dependency of purebpe: they are imported here, lazily, the first
time a table is built, and a missing one raises :class:`~purebpe.errors.PureBPEError`
saying what to install. The few places that must know which backend they run on (moving
results to the host, the optional fused CUDA kernel) ask :func:`is_cupy`.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType
from typing import Any, Optional, Union

from ..errors import PureBPEError

#: What ``xp`` may be: an array module, its name (``"numpy"``, ``"cupy"``) or ``None`` (NumPy).
Namespace = Union[ModuleType, str, None]

#: An array of the table's namespace (``numpy.ndarray`` or ``cupy.ndarray``).
Array = Any

_INSTALL = {
    "numpy": "pip install numpy",
    "cupy": "pip install 'purebpe[gpu]' (cupy-cuda12x) on a machine with an NVIDIA GPU",
}


def import_backend(name: str) -> ModuleType:
    """Import ``numpy`` or ``cupy``, or raise ``PureBPEError`` saying how to install it."""
    if name not in _INSTALL:
        raise PureBPEError(f"unknown array namespace {name!r}; choose numpy or cupy")
    loaded = sys.modules.get(name)
    if loaded is not None:  # the hot path: import_module takes a lock, slow on PyPy
        return loaded
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        raise PureBPEError(
            f"purebpe.gpu needs {name} for this ({exc}); install it: {_INSTALL[name]}"
        ) from None


def resolve_namespace(xp: Namespace) -> ModuleType:
    """The array module ``xp`` stands for: ``None`` means NumPy, a name is imported."""
    if xp is None:
        return import_backend("numpy")
    if isinstance(xp, str):
        return import_backend(xp)
    if isinstance(xp, ModuleType) and hasattr(xp, "asarray") and hasattr(xp, "cumsum"):
        return xp
    raise PureBPEError(f"xp must be numpy, cupy, their name or None, not {xp!r}")


def is_cupy(xp: ModuleType) -> bool:
    """Whether ``xp`` is CuPy (arrays on the GPU) rather than NumPy."""
    return xp.__name__.split(".")[0] == "cupy"


def to_numpy(xp: ModuleType, array: Array) -> Any:
    """``array`` as a NumPy array on the host (one device-to-host copy under CuPy)."""
    return xp.asnumpy(array) if is_cupy(xp) else array


def cupy_unavailable_reason() -> Optional[str]:
    """``None`` when CuPy imports and sees a GPU, else why not (for skips and benches)."""
    try:
        cupy = importlib.import_module("cupy")
    except ImportError as exc:
        return f"cupy is not installed ({exc})"
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as exc:  # CUDARuntimeError and friends when no driver is present
        return f"cupy finds no usable GPU ({type(exc).__name__}: {exc})"
    return None if count > 0 else "cupy finds no GPU"
