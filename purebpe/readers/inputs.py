"""Corpus inputs: paths, directories, globs and ``-`` expanded to files, each recognised.

Every input file becomes a :class:`Source`: its layout (``text``, ``jsonl`` or
``parquet``), its compression (by magic bytes, see :mod:`purebpe.readers.compression`),
whether it is a regular file (which workers may reopen and seek in) or a stream (stdin, a
FIFO, ``<(...)``, read once, by one process), and its size, modification time and inode,
so that a file replaced or rewritten during a run is noticed (:func:`check_unchanged`).
Directories are walked recursively in sorted order, hidden files skipped; a glob that
matches nothing, a missing path and an empty directory are errors.
"""

from __future__ import annotations

import glob
import os
import stat
from pathlib import Path
from typing import List, NamedTuple, Optional, Sequence, Tuple, Union

from ..errors import InputError, PureBPEError
from .compression import MAGIC_BYTES, SUFFIXES, sniff

PathLike = Union[str, "os.PathLike[str]"]
#: ``--format`` choices.
LAYOUTS = ("auto", "text", "jsonl", "parquet")
#: Suffixes (under any compression suffix) that mean JSON lines, and Parquet.
JSONL_SUFFIXES = (".jsonl", ".ndjson", ".json")
PARQUET_SUFFIXES = (".parquet", ".pq")
PARQUET_MAGIC = b"PAR1"
#: The name of standard input.
STDIN = "-"
#: ``(size, mtime_ns, inode, device)``: what must not change while a file is read.
Signature = Tuple[int, int, int, int]


class Source(NamedTuple):
    """One input file, recognised: what to read and how."""

    #: The path as given (or found in a directory); ``"-"`` for stdin.
    path: str
    #: ``"text"``, ``"jsonl"`` or ``"parquet"``.
    layout: str
    #: ``"gzip"``, ``"bzip2"``, ``"xz"``, ``"zstd"`` or ``None``.
    compression: Optional[str]
    #: A regular file's size, mtime, inode and device; ``None`` for a stream.
    signature: Optional[Signature]

    @property
    def name(self) -> str:
        """The file's name in messages."""
        return "<stdin>" if self.path == STDIN else self.path

    @property
    def seekable(self) -> bool:
        """Whether workers may reopen the file and read parts of it."""
        return self.signature is not None

    @property
    def size(self) -> int:
        return self.signature[0] if self.signature is not None else 0


def expand(items: Union[PathLike, Sequence[PathLike]]) -> List[str]:
    """Paths, directories (walked recursively, sorted, hidden files skipped), globs and
    ``-`` as a list of file paths, in order.

    >>> expand([])
    Traceback (most recent call last):
    ...
    purebpe.errors.PureBPEError: no input files given
    """
    if isinstance(items, (str, os.PathLike)):
        items = [items]
    paths: List[str] = []
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise TypeError(f"an input path must be a str or path, not {type(item).__name__}")
        name = os.fspath(item)
        if name == STDIN:
            paths.append(STDIN)
        elif os.path.isdir(name):
            found = _walk(name)
            if not found:
                raise PureBPEError(f"{name}: the directory holds no files")
            paths.extend(found)
        elif os.path.exists(name) or os.path.islink(name):
            paths.append(name)
        elif glob.has_magic(name):
            matches = sorted(m for m in glob.glob(name, recursive=True) if not os.path.isdir(m))
            if not matches:
                raise PureBPEError(f"{name}: no file matches")
            paths.extend(matches)
        else:
            raise PureBPEError(f"{name}: no such file")
    if not paths:
        raise PureBPEError("no input files given")
    return paths


def _walk(directory: str) -> List[str]:
    found: List[str] = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        found.extend(os.path.join(root, f) for f in sorted(files) if not f.startswith("."))
    return found


def signature_of(st: os.stat_result) -> Signature:
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)


def recognise(path: str, layout: str = "auto", head: Optional[bytes] = None) -> Source:
    """The :class:`Source` for ``path``, its layout forced by ``layout`` unless ``"auto"``.

    A stream's first bytes (``head``) are read by the caller, who must put them back.
    """
    if layout not in LAYOUTS:
        raise PureBPEError(f"format must be one of {', '.join(LAYOUTS)}, not {layout!r}")
    signature: Optional[Signature] = None
    if path != STDIN and head is None:
        try:
            st = os.stat(path)
        except OSError as exc:
            raise PureBPEError(f"{path}: {exc.strerror}") from None
        if stat.S_ISDIR(st.st_mode):
            raise PureBPEError(f"{path}: is a directory, not a file")
        if stat.S_ISREG(st.st_mode):
            signature = signature_of(st)
            if head is None:
                try:
                    with open(path, "rb") as f:
                        head = f.read(MAGIC_BYTES)
                except OSError as exc:
                    raise PureBPEError(f"{path}: {exc.strerror}") from None
    name = "<stdin>" if path == STDIN else path
    suffixes = [s.lower() for s in Path(path).suffixes] if path != STDIN else []
    compression = sniff(head) if head is not None else None
    inner = suffixes[-1] if suffixes else ""
    if inner in SUFFIXES:
        promised = SUFFIXES[inner]
        if head is not None and compression != promised:
            raise InputError(
                f"named {inner} but is not {promised}-compressed (it starts with {head[:4]!r})", name
            )
        compression = promised if head is None else compression
        inner = suffixes[-2] if len(suffixes) > 1 else ""
    is_parquet = head is not None and head.startswith(PARQUET_MAGIC)
    if layout == "auto":
        if inner in PARQUET_SUFFIXES or is_parquet:
            layout = "parquet"
        elif inner in JSONL_SUFFIXES:
            layout = "jsonl"
        else:
            layout = "text"
    if layout == "parquet":
        if signature is None:
            raise PureBPEError(f"{name}: Parquet is read from a file, not a stream (its index is at the end)")
        if not is_parquet:
            raise InputError(f"not a Parquet file (it starts with {(head or b'')[:4]!r}, not b'PAR1')", name)
        compression = None  # Parquet compresses inside, per column chunk
    return Source(path, layout, compression, signature)


def check_unchanged(source: Source, fd: Optional[int] = None) -> None:
    """Raise :class:`InputError` if ``source`` is no longer the file it was when recognised:
    another size, modification time or inode (replaced, truncated, rewritten), for the
    open file ``fd`` or the path."""
    if source.signature is None:
        return
    try:
        now = [signature_of(os.stat(source.path))]
        if fd is not None:
            now.append(signature_of(os.fstat(fd)))
    except OSError as exc:
        raise InputError(
            f"the file went away while it was read ({exc.strerror}); nothing was counted", source.name
        ) from None
    for current in now:
        if current != source.signature:
            what = "replaced" if current[2:] != source.signature[2:] else "rewritten"
            raise InputError(
                f"the file was {what} while it was read (size {source.signature[0]} -> "
                f"{current[0]}); its counts would mix two versions, so nothing was written",
                source.name,
            )
