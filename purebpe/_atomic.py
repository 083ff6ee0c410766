"""Atomic file output: write temporary files beside the targets, then rename them into place.

An interrupted run (Ctrl-C, SIGKILL, a full disk) therefore never leaves a half-written
file under a target's name: either the old file (or none) or the complete new one.

An output made of several files (:func:`write_files`) is written as a unit: every file is
written and synced to its temporary first, so a full disk or an error changes nothing;
only then are they renamed, in the order given. Formats put first the file that records
a digest of the others (:func:`digest`), so a crash between two renames leaves a new
first file beside an old partner, which the loader refuses as a mismatched pair.

Temporary files are named ``.{target}.purebpe-{pid}-{random}.tmp``; a save first removes
those of its directory whose process is gone (left by a SIGKILL), and never others.
"""
from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import tempfile
from collections import deque
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Deque, Iterator, List, Optional, Sequence, Tuple, Union

from .errors import PureBPEError

PathLike = Union[str, "os.PathLike[str]"]

_TEMP_NAME = re.compile(r"^\..+\.purebpe-(\d+)-[^.]*\.tmp$")

#: The files this process last put in place, in order (the most recent ones only): the
#: CLI's interrupted message says what a command wrote before the interruption.
written: Deque[Path] = deque(maxlen=64)


def digest(data: bytes) -> str:
    """The fingerprint one file of a multi-file output records for a partner file."""
    return hashlib.sha256(data).hexdigest()


def file_digest(path: Path) -> str:
    """:func:`digest` of the contents of ``path``."""
    return digest(path.read_bytes())


@contextmanager
def atomic_file(path: PathLike) -> Iterator[BinaryIO]:
    """A binary file open for writing that appears at ``path`` only if the block succeeds.

    The data goes to a temporary file in the same directory, which is synced and renamed
    over ``path`` at the end of the block; on any exception it is deleted instead. A
    ``path`` that is a device or a pipe (``/dev/null``, ``/dev/full``) is written directly.
    Write errors name ``path``, never the temporary file.
    """
    target = Path(path)
    if _is_special_file(target):
        with _named_errors(target), open(target, "wb") as direct:
            yield direct
        return
    with _named_errors(target):
        fd, tmp = _temporary(target)
    try:
        with _named_errors(target):
            with os.fdopen(fd, "w+b") as f:
                yield f
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, target)
        written.append(target)
    except BaseException:
        _unlink_quietly(tmp)
        raise


def write_files(files: Sequence[Tuple[PathLike, bytes]]) -> List[Path]:
    """Write each ``(path, data)`` atomically, as a unit; returns the paths.

    All temporaries are written and synced before the first rename, so an error while
    writing (a full disk) leaves every target as it was; then they are renamed in order.
    """
    targets = [Path(path) for path, _ in files]
    temps: List[str] = []
    try:
        for target, (_, data) in zip(targets, files):
            with _named_errors(target):
                fd, tmp = _temporary(target)
                temps.append(tmp)
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                    f.flush()
                    os.fsync(f.fileno())
        for target, tmp in zip(targets, temps):
            with _named_errors(target):
                os.replace(tmp, target)
            written.append(target)
    except BaseException:
        for tmp in temps:
            _unlink_quietly(tmp)
        raise
    return targets


def write_bytes(path: PathLike, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically and return the path."""
    return write_files([(path, data)])[0]


def write_text(path: PathLike, text: str) -> Path:
    """Write ``text`` as UTF-8 to ``path`` atomically and return the path."""
    return write_bytes(path, text.encode("utf-8"))


def make_output_dir(directory: PathLike) -> Path:
    """Create ``directory`` (and parents) unless it exists; refuse a path that is a file."""
    out = Path(directory)
    check_output_dir(out)
    with _named_errors(out):
        out.mkdir(parents=True, exist_ok=True)
    return out


def check_output_dir(directory: PathLike) -> Path:
    """Refuse, before any work, a directory that cannot be created or written into.

    The rule for every command: missing directories are created (at save time), an
    existing one must be writable; nothing is created here.
    """
    out = Path(directory)
    if out.exists() and not out.is_dir():
        raise PureBPEError(f"{out}: output path exists and is not a directory")
    _check_writable_ancestor(out)
    return out


def check_output_file(path: PathLike) -> Path:
    """Refuse, before any work, an output file that could not be written at the end.

    An existing file is replaced; a directory is refused; missing parent directories
    are created when the file is written.
    """
    target = Path(path)
    if target.is_dir():
        raise PureBPEError(f"{target}: output path is a directory")
    if _is_special_file(target):
        if not os.access(target, os.W_OK):
            raise PureBPEError(f"{target}: not writable")
        return target
    _check_writable_ancestor(target.parent, target)
    return target


def remove_stale_temporaries(directory: Path) -> List[Path]:
    """Delete this module's temporaries in ``directory`` whose process no longer runs."""
    removed: List[Path] = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    for name in names:
        match = _TEMP_NAME.match(name)
        if match and not process_alive(int(match.group(1))):
            if _unlink_quietly(str(directory / name)):
                removed.append(directory / name)
    return removed


def _temporary(target: Path) -> Tuple[int, str]:
    """A new temporary file beside ``target``: its descriptor and path."""
    directory = target.parent
    directory.mkdir(parents=True, exist_ok=True)  # the rule for every output: create missing directories
    remove_stale_temporaries(directory)
    fd, tmp = tempfile.mkstemp(
        prefix=f".{target.name}.purebpe-{os.getpid()}-", suffix=".tmp", dir=directory
    )
    # mkstemp creates the file private (0600); give it the usual permissions instead.
    os.fchmod(fd, 0o666 & ~_umask())
    return fd, tmp


@contextmanager
def _named_errors(target: Path) -> Iterator[None]:
    """Report an ``OSError`` of writing ``target`` (or its temporary) as one line naming it."""
    try:
        yield
    except OSError as exc:
        if exc.filename is not None and Path(exc.filename).name.startswith(f".{target.name}."):
            pass  # the temporary file: name the target instead
        elif exc.filename is not None and Path(exc.filename) not in (target, target.parent):
            raise  # not about this output (e.g. reading an input inside the block)
        reason = exc.strerror or errno.errorcode.get(exc.errno or 0, str(exc))
        raise PureBPEError(f"{target}: cannot write ({reason})") from None


def _check_writable_ancestor(path: Path, output: Optional[Path] = None) -> None:
    """The nearest existing ancestor of ``path`` (itself included) must be a writable directory.

    Errors name ``output`` (default: ``path``), the path the user gave.
    """
    existing = path
    path = output or path
    while not existing.exists():
        if existing.parent == existing:
            break
        existing = existing.parent
    if not existing.is_dir():
        raise PureBPEError(f"{path}: cannot create it, {existing} is not a directory")
    if not os.access(existing, os.W_OK | os.X_OK):
        reason = "read-only file system" if _read_only_fs(existing) else "permission denied"
        raise PureBPEError(f"{path}: cannot write into {existing} ({reason})")


def _read_only_fs(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def _is_special_file(path: Path) -> bool:
    """A device or a pipe: written in place (it cannot be renamed over)."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISBLK(mode)


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` runs (this one always does)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def _unlink_quietly(path: str) -> bool:
    try:
        os.unlink(path)
    except OSError:
        return False
    return True


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
