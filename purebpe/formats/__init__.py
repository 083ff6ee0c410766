"""Reading and writing tokenizer files: one module per format, all written atomically.

Each format module defines ``FILES`` (the file names it writes), ``save(model, directory)
-> list[Path]`` and ``load(path) -> BPEModel``. :func:`load` recognises a format by its
file name, or, given a directory, by the first of the format files it contains.
"""
from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Dict, List, Union

from .._atomic import make_output_dir
from ..errors import PureBPEError

if TYPE_CHECKING:
    from ..model import BPEModel

PathLike = Union[str, "os.PathLike[str]"]

#: format name -> module under ``purebpe.formats``; also the order :func:`load` looks in.
FORMATS: Dict[str, str] = {
    "purebpe": "native",
    "gpt2": "gpt2",
    "hf": "hf",
    "tiktoken": "tiktoken_format",
}


def _module(format: str) -> ModuleType:
    if format not in FORMATS:
        raise PureBPEError(f"unknown format {format!r}; choose one of: {', '.join(FORMATS)}")
    return importlib.import_module(f"{__name__}.{FORMATS[format]}")


def save(model: "BPEModel", directory: PathLike, format: str = "purebpe") -> List[Path]:
    """Write ``model`` into ``directory`` in ``format``; returns the paths written."""
    module = _module(format)
    paths: List[Path] = module.save(model, make_output_dir(directory))
    return paths


def load(path: PathLike) -> "BPEModel":
    """Read a model from a format file, or from a directory holding one."""
    target = Path(path)
    if not target.exists():
        raise PureBPEError(f"{target}: no such file or directory")
    for format in FORMATS:
        module = _module(format)
        main_file: str = module.FILES[0]
        if target.is_dir() and (target / main_file).exists():
            model: "BPEModel" = module.load(target / main_file)
            return model
        if target.is_file() and module.recognises(target):
            model = module.load(target)
            return model
    raise PureBPEError(
        f"{target}: no tokenizer files found (looked for "
        + ", ".join(_module(f).FILES[0] for f in FORMATS)
        + ")"
    )
