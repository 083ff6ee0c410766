"""Atomic file output: write temporary files beside the targets, then rename them into place.

An interrupted run (Ctrl-C, SIGKILL, a full disk) therefore never leaves a half-written
file under a target's name: either the old file (or none) or the complete new one.

An output made of several files (:func:`write_files`) is written as a unit: every file is
written and synced to its temporary first, so a full disk or an error changes nothing;
only then are they renamed, in the order given. Formats put first the file that records
a digest of the others (:func:`digest`), so a crash between two renames leaves a new
first file beside an old partner, which the loader refuses as a mismatched pair.

What is renamed over (:func:`resolve_output`): only a regular file, or nothing. A path that
is (or links to) a device, a FIFO or a socket, or that names a descriptor
(``/dev/stdout``, ``/dev/fd/N``, ``/proc/self/fd/N``), is written in place as a stream.
A symbolic link is followed: ``-o link`` replaces the file the link points to, in that
file's directory, and the link stays; a dangling link creates its target; a link loop is
refused. A replaced file keeps its permission bits; a new one gets ``0o666`` less the
umask, applied by the kernel (the process umask is never changed).

Temporary files are named ``.{target}.purebpe-{pid}-h{origin}-{random}.tmp``, where origin
is a digest of the host name and PID namespace. The writer holds an exclusive advisory lock
(``flock``) on its temporary until it is renamed. A save removes a temporary of its
directory only if nobody holds its lock and either it is older than
:data:`STALE_SECONDS`, or it was written from this host and PID namespace by a process
that no longer runs (a SIGKILL). A live run in another container or on another host
therefore never loses its temporary: it holds the lock, or its file is young.

A signal can end a run at any instant, the one between a temporary's creation and the
``try`` that would remove it included. So every temporary (file or directory) of this
process is recorded *before* it is created, and forgotten once renamed or removed:
:func:`remove_own_temporaries`, which the command line calls as a run ends, removes
whatever such an interruption left.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
import socket
import stat
import time
import zlib
from collections import deque
from contextlib import contextmanager
from pathlib import Path
from typing import (
    IO,
    BinaryIO,
    Callable,
    Deque,
    Iterator,
    List,
    Optional,
    Sequence,
    Set,
    Tuple,
    TypeVar,
    Union,
)

from .errors import PureBPEError

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Windows: staleness by age alone
    fcntl = None  # type: ignore[assignment]

PathLike = Union[str, "os.PathLike[str]"]
T = TypeVar("T")

_TEMP_NAME = re.compile(r"^\..+\.purebpe-(\d+)-(?:h([0-9a-f]{8})-)?[^.]*\.tmp$")
#: A temporary nobody holds the lock of is stale after this many seconds without a write,
#: whoever wrote it (a temporary being written is touched by every write).
STALE_SECONDS = 3600
#: How many symbolic links an output path may go through (Linux's own limit).
_MAX_LINKS = 40
#: Paths that name an open descriptor, not a file: written in place, never renamed over.
_DESCRIPTOR = re.compile(
    r"^/(?:dev/(?:stdin|stdout|stderr|fd/\d+)|proc/(?:self|thread-self|\d+)(?:/task/\d+)?/fd/\d+)$"
)

#: This process's temporaries that may exist: recorded before each is created, dropped once
#: it is renamed into place or removed (see the module docstring).
_OWN_TEMPORARIES: Set[str] = set()

#: The files this process last put in place, in order (the most recent ones only): the
#: CLI's interrupted message says what a command wrote before the interruption.
written: Deque[Path] = deque(maxlen=64)


def digest(data: bytes) -> str:
    """The fingerprint one file of a multi-file output records for a partner file."""
    import hashlib  # here: on PyPy it loads OpenSSL, a fifth of a second of every start-up

    return hashlib.sha256(data).hexdigest()


def file_digest(path: Path) -> str:
    """:func:`digest` of the contents of ``path``."""
    return digest(path.read_bytes())


class MismatchedFiles(PureBPEError):
    """Files of one output whose records say they were not saved together."""


#: How often :func:`read_together` reads again files that changed while it read them.
READ_ATTEMPTS = 50
#: Mismatched files read alike this many more times (10 ms apart) are not being saved.
_READS_AT_REST = 3


def read_together(paths: Sequence[Path], parse: Callable[[List[bytes]], T]) -> T:
    """``parse`` of the contents of ``paths``, each read once, as a consistent set.

    ``parse`` checks what it was given (a digest one file records of another) and raises
    :class:`MismatchedFiles` if the set is not one save's. If a file was replaced while
    it was read (a save running beside this load), they are read again, a few times;
    if none changed, the files were mixed by hand (or a save crashed), and the error
    stands at once. A parse never sees bytes of a second read of the same file.
    """
    previous: List[bytes] = []
    alike = 0  # how many reads in a row found these same contents
    for attempt in range(READ_ATTEMPTS):
        contents: List[bytes] = []
        seen: List[Tuple[int, ...]] = []
        for path in paths:
            with open(path, "rb") as f:
                seen.append(_identity(os.fstat(f.fileno())))
                contents.append(f.read())
        try:
            return parse(contents)
        except MismatchedFiles:
            # At rest means: read alike several times over tens of milliseconds, unchanged
            # since, and no save under way. (A save loop can offer the same mix twice, and
            # a replaced file's inode number and timestamp can repeat.)
            alike = alike + 1 if contents == previous else 0
            # The temporaries first: a save that renames one after this look changes a file,
            # which the identities, looked at next, show.
            at_rest = alike >= _READS_AT_REST and not _save_in_progress(paths) and not _changed(paths, seen)
            if at_rest or attempt == READ_ATTEMPTS - 1:
                raise
            previous = contents
            time.sleep(0.01)  # let the save finish its renames
    raise AssertionError("unreachable")  # pragma: no cover


def _changed(paths: Sequence[Path], seen: Sequence[Tuple[int, ...]]) -> bool:
    """Whether any of ``paths`` is no longer the file that was read."""
    for path, identity in zip(paths, seen):
        try:
            if _identity(os.stat(path)) != identity:
                return True
        except OSError:
            return True
    return False


def _save_in_progress(paths: Sequence[Path]) -> bool:
    """Whether a save of one of ``paths`` is under way: a temporary of it exists, locked."""
    for path in paths:
        prefix = f".{path.name}.purebpe-"
        try:
            names = os.listdir(path.parent)
        except OSError:
            continue
        for name in names:
            if name.startswith(prefix) and _TEMP_NAME.match(name) and _is_locked(str(path.parent / name)):
                return True
    return False


def _is_locked(path: str) -> bool:
    """Whether a writer holds ``path``'s lock (without ``flock``: whether it is young).

    A temporary that vanished since it was listed was just renamed into place: held too.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return True
    except OSError:
        return False
    try:
        if fcntl is None:  # pragma: no cover
            return time.time() - os.fstat(fd).st_mtime < STALE_SECONDS
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return True
        return False
    finally:
        os.close(fd)


def _identity(info: "os.stat_result") -> Tuple[int, ...]:
    """What changes when a file is replaced or rewritten."""
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def resolve_output(path: PathLike) -> Tuple[Path, bool]:
    """``(where to write, whether to write it in place as a stream)`` for an output path.

    Symbolic links are followed to the file they name (a loop is refused); a device, FIFO
    or socket, or a path naming a descriptor (``/dev/stdout``), is written in place.

    >>> resolve_output("/dev/null")
    (PosixPath('/dev/null'), True)
    """
    given = Path(path)
    current = given
    for _ in range(_MAX_LINKS):
        if _DESCRIPTOR.match(os.path.abspath(current)):
            return current, True
        try:
            mode = os.lstat(current).st_mode
        except FileNotFoundError:
            return current, False
        except OSError as exc:
            if exc.errno == errno.ENOTDIR:
                return current, False  # an ancestor is a file: the ancestor check says so
            raise PureBPEError(f"{given}: cannot use it as an output ({exc.strerror})") from None
        if not stat.S_ISLNK(mode):
            return current, not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))
        current = current.parent / os.readlink(current)
    raise PureBPEError(f"{given}: a loop of symbolic links (more than {_MAX_LINKS} links)")


class Cancelled(BaseException):
    """The run was ended by a signal (SIGTERM, SIGHUP): no output may appear any more."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


#: The signals that have ended this run (the command line's handler notes them). A handler
#: that runs inside Python's at-fork hooks has its exception swallowed ("Exception ignored
#: in _afterFork", seen on 3.13 while a worker was being forked): outputs check this list
#: before they appear, so such a run still leaves nothing behind.
CANCELLED: List[int] = []


def _check_not_cancelled() -> None:
    if CANCELLED:
        raise Cancelled(CANCELLED[0])


@contextmanager
def atomic_file(path: PathLike) -> Iterator[BinaryIO]:
    """A binary file open for writing that appears at ``path`` only if the block succeeds.

    The data goes to a temporary file in the same directory, which is synced and renamed
    over ``path`` at the end of the block; on any exception it is deleted instead. A
    ``path`` that is a device or a pipe (``/dev/null``, ``/dev/full``) is written directly.
    Write errors name ``path``, never the temporary file.
    """
    given = Path(path)
    target, in_place = resolve_output(given)
    if in_place:
        with _named_errors(target, given), _open_in_place(target) as direct:
            yield direct
        return
    with _named_errors(target, given):
        fd, tmp = _temporary(target)
    try:
        with _named_errors(target, given):
            with os.fdopen(fd, "w+b") as f:
                yield f
                f.flush()
                os.fsync(f.fileno())
                _check_not_cancelled()
                os.replace(tmp, target)  # before the close: the lock is held until then
        _OWN_TEMPORARIES.discard(tmp)
        written.append(given)
    except BaseException:
        _remove_temporary(tmp)
        raise


def write_files(files: Sequence[Tuple[PathLike, bytes]]) -> List[Path]:
    """Write each ``(path, data)`` atomically, as a unit; returns the paths.

    All temporaries are written and synced before the first rename, so an error while
    writing (a full disk) leaves every target as it was; then they are renamed in order.
    """
    given = [Path(path) for path, _ in files]
    targets = [resolve_output(path) for path in given]
    temps: List[Tuple[str, IO[bytes]]] = []
    try:
        for (target, in_place), name, (_, data) in zip(targets, given, files):
            if in_place:
                continue
            with _named_errors(target, name):
                fd, tmp = _temporary(target)
                temp_file: IO[bytes] = os.fdopen(fd, "wb")
                temps.append((tmp, temp_file))
                temp_file.write(data)
                temp_file.flush()
                os.fsync(temp_file.fileno())
        _check_not_cancelled()
        pending = iter(temps)
        for (target, in_place), name, (_, data) in zip(targets, given, files):
            with _named_errors(target, name):
                if in_place:
                    with _open_in_place(target) as direct:
                        direct.write(data)
                else:
                    renamed = next(pending)[0]
                    os.replace(renamed, target)
                    _OWN_TEMPORARIES.discard(renamed)
            written.append(name)
    except BaseException:
        for tmp, _f in temps:
            _remove_temporary(tmp)
        raise
    finally:
        for _tmp, opened in temps:
            opened.close()  # after the renames: each lock is held until its file is in place
    return given


#: This process's own descriptors by name: ``/dev/stdout`` is 1, ``/dev/fd/N`` and
#: ``/proc/self/fd/N`` are N.
_OWN_DESCRIPTOR = re.compile(
    r"^/(?:dev/(std(?:in|out|err))|dev/fd/(\d+)|proc/(?:self|thread-self)/fd/(\d+))$"
)


def _open_in_place(target: Path) -> BinaryIO:
    """A stream writing ``target`` where it is: one of this process's descriptors is used as
    it is (never reopened: that would truncate a ``>>`` file), anything else opened."""
    match = _OWN_DESCRIPTOR.match(os.path.abspath(target))
    if match is None:
        return open(target, "wb")
    name, number, proc_number = match.groups()
    fd = {"stdin": 0, "stdout": 1, "stderr": 2}[name] if name else int(number or proc_number)
    stream: BinaryIO = os.fdopen(os.dup(fd), "wb")
    return stream


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
    target, _ = resolve_output(out)
    with _named_errors(target, out):
        target.mkdir(parents=True, exist_ok=True)
    return out


def check_output_dir(directory: PathLike) -> Path:
    """Refuse, before any work, a directory that cannot be created or written into.

    The rule for every command: missing directories are created (at save time), an
    existing one must be writable; nothing is created here. A symbolic link is followed
    (a dangling one: its target will be created; a loop is refused).
    """
    out = Path(directory)
    target, _ = resolve_output(out)
    if target.exists() and not target.is_dir():
        raise PureBPEError(f"{out}: output path exists and is not a directory")
    _check_writable_ancestor(target, out)
    return out


def check_output_file(path: PathLike) -> Path:
    """Refuse, before any work, an output file that could not be written at the end.

    An existing file is replaced (through a symbolic link: the file it points to); a
    directory is refused; missing parent directories are created when the file is
    written; a device or pipe is written in place.
    """
    given = Path(path)
    target, in_place = resolve_output(given)
    if target.is_dir():
        raise PureBPEError(f"{given}: output path is a directory")
    if in_place:
        if not os.access(target, os.W_OK):
            raise PureBPEError(f"{given}: not writable")
        return given
    _check_writable_ancestor(target.parent, given)
    return given


def remove_stale_temporaries(directory: Path, now: Optional[float] = None) -> List[Path]:
    """Delete this module's stale temporaries in ``directory`` (the rule: module docstring)."""
    removed: List[Path] = []
    try:
        names = os.listdir(directory)
    except OSError:
        return removed
    now = time.time() if now is None else now
    for name in names:
        match = _TEMP_NAME.match(name)
        if match and _is_stale(str(directory / name), int(match.group(1)), match.group(2), now):
            if _unlink_quietly(str(directory / name)):
                removed.append(directory / name)
    return removed


def _is_stale(path: str, pid: int, origin: Optional[str], now: float) -> bool:
    """Nobody holds its lock, and it is old or its writer here is gone."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return False
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                return False  # a live writer holds it, wherever it runs
        if now - os.fstat(fd).st_mtime > STALE_SECONDS:
            return True
        return origin == _origin() and not process_alive(pid)
    finally:
        os.close(fd)  # releases the probe's lock


_origin_cache: List[str] = []


def _origin() -> str:
    """A checksum of this host's name and PID namespace: where a pid means this process."""
    if not _origin_cache:
        try:
            namespace = os.readlink("/proc/self/ns/pid")
        except OSError:
            namespace = ""
        where = f"{socket.gethostname()}\0{namespace}".encode()
        _origin_cache.append(f"{zlib.crc32(where):08x}")
    return _origin_cache[0]


def _temporary(target: Path) -> Tuple[int, str]:
    """A new temporary file beside ``target``, locked: its descriptor and path.

    Created with mode ``0o666`` (the kernel applies the umask), or with the mode of the
    file it will replace.
    """
    directory = target.parent
    directory.mkdir(parents=True, exist_ok=True)  # the rule for every output: create missing directories
    remove_stale_temporaries(directory)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = str(directory / f".{target.name}.purebpe-{os.getpid()}-h{_origin()}-{os.urandom(4).hex()}.tmp")
        _OWN_TEMPORARIES.add(tmp)  # before it exists: see the module docstring
        try:
            fd = os.open(tmp, flags, 0o666)
            break
        except FileExistsError:
            _OWN_TEMPORARIES.discard(tmp)  # not ours: a stale one of an earlier process of this pid
            continue
        except BaseException:
            # A signal's exception can come as the call returns, the file made.
            _remove_temporary(tmp)
            raise
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            mode = os.stat(target).st_mode
        except OSError:
            pass
        else:
            os.fchmod(fd, stat.S_IMODE(mode))  # an overwritten file keeps its permissions
    except BaseException:
        os.close(fd)
        _remove_temporary(tmp)
        raise
    return fd, tmp


def make_temporary_directory(parent: PathLike, prefix: str) -> str:
    """A new empty directory ``{prefix}{random}.tmp`` in ``parent``, recorded as this
    process's temporary: :func:`remove_temporary_directory` removes it, and so does
    :func:`remove_own_temporaries` if the run ends first.

    >>> import tempfile
    >>> scratch = make_temporary_directory(tempfile.gettempdir(), "purebpe-doc-")
    >>> os.path.isdir(scratch)
    True
    >>> remove_temporary_directory(scratch); os.path.exists(scratch)
    False
    """
    while True:
        path = os.path.join(parent, f"{prefix}{os.urandom(4).hex()}.tmp")
        _OWN_TEMPORARIES.add(path)  # before it exists: see the module docstring
        try:
            os.mkdir(path, 0o700)
            return path
        except FileExistsError:
            _OWN_TEMPORARIES.discard(path)
        except BaseException:
            # A signal's exception can come as the call returns, the directory made.
            remove_temporary_directory(path)
            raise


def remove_temporary_directory(path: str) -> None:
    """Remove a directory of :func:`make_temporary_directory` and all it holds."""
    shutil.rmtree(path, ignore_errors=True)
    _OWN_TEMPORARIES.discard(path)


def remove_own_temporaries() -> List[str]:
    """Remove every temporary of this process still on record; returns their paths.

    The command line calls it as a run ends: a signal that arrived between a temporary's
    creation and the block that would have removed it leaves nothing behind.
    """
    removed = []
    for path in sorted(_OWN_TEMPORARIES):
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            _unlink_quietly(path)
        if not os.path.lexists(path):
            removed.append(path)
    _OWN_TEMPORARIES.clear()
    return removed


def _remove_temporary(path: str) -> None:
    _unlink_quietly(path)
    _OWN_TEMPORARIES.discard(path)


@contextmanager
def _named_errors(target: Path, given: Optional[Path] = None) -> Iterator[None]:
    """Report an ``OSError`` of writing ``target`` (or its temporary) as one line naming it.

    The line names ``given``, the path the user gave (default: ``target``).
    """
    try:
        yield
    except OSError as exc:
        if exc.filename is not None and Path(exc.filename).name.startswith(f".{target.name}."):
            pass  # the temporary file: name the target instead
        elif exc.filename is not None and Path(exc.filename) not in (target, target.parent, given):
            raise  # not about this output (e.g. reading an input inside the block)
        reason = exc.strerror or errno.errorcode.get(exc.errno or 0, str(exc))
        raise PureBPEError(f"{given or target}: cannot write ({reason})") from None


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
