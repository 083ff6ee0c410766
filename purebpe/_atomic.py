"""Atomic file output: write a temporary file beside the target, then rename it into place.

An interrupted run (Ctrl-C, a crash, a full disk) therefore never leaves a half-written
file under the target's name: either the old file (or none) or the complete new one.
"""
from __future__ import annotations

import os
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator, Union

from .errors import PureBPEError

PathLike = Union[str, "os.PathLike[str]"]


@contextmanager
def atomic_file(path: PathLike) -> Iterator[BinaryIO]:
    """A binary file open for writing that appears at ``path`` only if the block succeeds.

    The data goes to a temporary file in the same directory, which is synced and renamed
    over ``path`` at the end of the block; on any exception it is deleted instead.
    """
    target = Path(path)
    if target.is_dir():
        raise PureBPEError(f"{target}: output path is a directory")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        # mkstemp creates the file private (0600); give it the usual permissions instead.
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w+b") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def write_bytes(path: PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically and return the path."""
    with atomic_file(path) as f:
        f.write(data)
    return Path(path)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text(path: PathLike, text: str) -> Path:
    """Write ``text`` as UTF-8 to ``path`` atomically and return the path."""
    return write_bytes(path, text.encode("utf-8"))


def make_output_dir(directory: PathLike) -> Path:
    """Create ``directory`` (and parents) unless it exists; refuse a path that is a file."""
    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise PureBPEError(f"{out}: output path exists and is not a directory")
    out.mkdir(parents=True, exist_ok=True)
    return out
