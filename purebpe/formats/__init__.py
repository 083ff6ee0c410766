"""Reading and writing tokenizer files: one module per format, all written atomically.

Each format module defines ``FILES`` (the file names it writes), ``save(model, directory)
-> list[Path]`` and ``load(path) -> BPEModel``. :func:`load` recognises a format by its
file name; a directory may hold several formats only if they hold the same model.
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
    """Read a model from a format file, or from a directory holding one.

    A directory may hold several formats (a model exported beside itself): they are all
    read, and if they do not hold the same model the load is refused, naming the files,
    so that a stale file never silently wins over a newer one.
    """
    target = Path(path)
    if not target.exists():
        raise PureBPEError(f"{target}: no such file or directory")
    if target.is_dir():
        return _load_directory(target)
    for format in FORMATS:
        module = _module(format)
        if module.recognises(target):
            model: "BPEModel" = module.load(target)
            return model
    raise PureBPEError(f"{target}: not a tokenizer file (expected one of: {_main_files()})")


def _load_directory(directory: Path) -> "BPEModel":
    found = [
        (directory / _module(format).FILES[0], _module(format))
        for format in FORMATS
        if (directory / _module(format).FILES[0]).exists()
    ]
    if not found:
        raise PureBPEError(f"{directory}: no tokenizer files found (looked for {_main_files()})")
    models: List["BPEModel"] = [module.load(main_file) for main_file, module in found]
    differing = [str(main_file) for (main_file, _), model in zip(found, models) if model != models[0]]
    if differing:
        raise PureBPEError(
            f"{directory}: holds different models in {found[0][0].name} and "
            f"{', '.join(Path(d).name for d in differing)} (a stale file?); load one file by its "
            "name, or remove the stale one"
        )
    return models[0]


def _main_files() -> str:
    return ", ".join(_module(f).FILES[0] for f in FORMATS)
