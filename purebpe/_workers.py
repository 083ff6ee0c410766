"""Worker processes that die with their parent.

A ``ProcessPoolExecutor``'s workers wait on a pipe for jobs; if the parent is killed
(SIGKILL, or SIGTERM where nothing cleans up), they would wait forever with PPID 1. Each
worker therefore asks Linux to SIGKILL it when its parent dies (``prctl(PR_SET_PDEATHSIG)``,
through ``ctypes``) and, on every system, runs a watchdog thread that ends it within
:data:`WATCHDOG_SECONDS` of its parent's death (``os.getppid()`` changes). Workers ignore
Ctrl-C: the parent handles it and stops them (:func:`stop_workers`), by the pids they
reported when they started (a pool's own list of its processes is private).
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import pickle
import re
import select
import shutil
import signal
import struct
import sys
import tempfile
import threading
import time
from array import array
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, Deque, Dict, Generator, Iterable, Iterator, List, Optional, Tuple

from ._atomic import make_temporary_directory, process_alive
from .errors import PureBPEError

#: The name of a scratch directory (:func:`scratch_directory`), with its owner's pid.
_SCRATCH_NAME = re.compile(r"purebpe-(?:scratch|counts)-(\d+)-")  # "counts": older releases
#: How often a worker's watchdog checks that its parent still runs.
WATCHDOG_SECONDS = 0.5
_PR_SET_PDEATHSIG = 1


class WorkerPool(ProcessPoolExecutor):
    """A process pool whose workers die with this process and say who they are.

    Each worker puts its pid on a queue as it starts, so that :func:`stop_workers` can kill
    exactly this pool's workers, those still busy with their first job included.
    """

    def __init__(
        self, workers: int, initializer: Optional[Callable[..., None]] = None, initargs: Tuple[Any, ...] = ()
    ) -> None:
        context = multiprocessing.get_context()
        self._started: Any = context.SimpleQueue()  # the pids of the workers started so far
        self._pids: List[int] = []
        super().__init__(
            workers,
            mp_context=context,
            initializer=_start_worker,
            initargs=(os.getpid(), self._started, initializer, initargs),
        )

    def worker_pids(self) -> List[int]:
        """The pids of the workers this pool has started (some may have ended since)."""
        while not self._started.empty():
            self._pids.append(self._started.get())
        return list(self._pids)


def worker_pool(
    workers: int, initializer: Optional[Callable[..., None]] = None, initargs: Tuple[Any, ...] = ()
) -> WorkerPool:
    """A process pool whose workers die with this process (and first run ``initializer``)."""
    return WorkerPool(workers, initializer, initargs)


def _start_worker(
    parent: int, started: Any, initializer: Optional[Callable[..., None]], initargs: Tuple[Any, ...]
) -> None:
    """Worker initializer: report this worker's pid, :func:`die_with_parent`, then the
    pool's own ``initializer``."""
    started.put(os.getpid())
    die_with_parent(parent)
    if initializer is not None:
        initializer(*initargs)


def die_with_parent(parent: int) -> None:
    """Worker initializer: end this process when ``parent`` ends; leave Ctrl-C to the parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the parent's handler, inherited by fork
    if sys.platform.startswith("linux"):
        _request_death_signal()
    if os.getppid() != parent:  # the parent died before we got here
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), name="purebpe-watchdog", daemon=True).start()


def _request_death_signal() -> None:
    try:
        # This program's own symbols hold libc's: no find_library, which runs ldconfig
        # (10 ms of every worker's start on PyPy).
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        pass  # the watchdog still covers it


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(WATCHDOG_SECONDS)
    os._exit(1)


#: Whether this process has killed a pool's workers (:func:`stop_workers`): its exit must
#: then not wait for the pool (see :func:`purebpe.cli.entry`).
STOPPED: List[bool] = []


def stop_workers(pool: WorkerPool) -> None:
    """Kill a pool's workers now and shut it down without waiting for their jobs.

    The pool has not reaped its workers yet (it does so on shutdown), so their pids still
    name them: no other process can have taken one.
    """
    # A worker spawned just before an error (EMFILE spawning the next one) may not have
    # reported its pid yet: the pool's own table names it, and exit would wait for it forever.
    spawned = list(getattr(pool, "_processes", None) or ())
    for pid in set(pool.worker_pids()) | set(spawned):
        try:
            os.kill(pid, signal.SIGKILL)  # no handler of any kind runs, nothing is printed
        except ProcessLookupError:
            pass
    pool.shutdown(wait=False, cancel_futures=True)
    STOPPED.append(True)


def scratch_directory() -> str:
    """A new private directory for work files under ``$TMPDIR``: workers' results, the
    trial output of a conversion.

    Its owner removes it when it is done; one whose owner was killed (SIGKILL) is removed
    by the next call, as :mod:`purebpe._atomic` does with its temporaries.
    """
    parent = tempfile.gettempdir()
    try:
        names = os.listdir(parent)
    except OSError:
        names = []
    for name in names:
        match = _SCRATCH_NAME.match(name)
        if match and not process_alive(int(match.group(1))):
            shutil.rmtree(os.path.join(parent, name), ignore_errors=True)
    return make_temporary_directory(parent, f"purebpe-scratch-{os.getpid()}-")


#: Bytes read or written at a time on a worker's pipes.
_PIPE_BYTES = 1 << 20
#: A message's header: the length of its body, and its kind: ``p``, the body is a pickle;
#: an ``array`` typecode, the body is the raw bytes of an array of that type.
_HEADER = struct.Struct("<Qc")
_PICKLE = b"p"


def can_fork() -> bool:
    """Whether workers are forked here (they then inherit this process's memory)."""
    return multiprocessing.get_start_method(allow_none=False) == "fork"


def ordered_map(
    function: Callable[[Any], Any],
    jobs: Iterable[Any],
    processes: int,
    in_flight: int = 2,
    share: bool = False,
    ship: Optional[Callable[[Any], Any]] = None,
) -> Generator[Any, None, None]:
    """``function(job)`` for every job, computed in ``processes`` forked workers and handed
    back in the order of ``jobs`` (a job that raised raises here, in its turn).

    Workers are forked when this generator first needs one, so they inherit whatever this
    process has loaded and warmed up; at most ``in_flight`` jobs per worker are sent ahead.
    No thread runs on either side: this process moves the pickled jobs and results itself,
    through non-blocking pipes watched by ``select``, so that neither side can wait for the
    other forever. (A ``ProcessPoolExecutor`` moves them with threads, which on PyPy cost
    tens of milliseconds per megabyte.) A worker that dies fails the run in one line; on
    any error, or when the generator is closed early, the workers are killed. Needs the
    fork start method (:func:`can_fork`).

    With ``share``, this process is one of the ``processes``: it forks one worker fewer
    and computes the next job itself whenever every worker holds its ``in_flight`` jobs.
    Each worker costs its own warm-up (on PyPy, compiling what the parent had not run yet,
    and copying the pages its garbage collector touches), and a parent that only moves
    jobs and results leaves a core mostly idle: on two cores, two processes computing do
    more than two workers and a parent that waits.

    ``ship`` gives what a job is sent to a worker as, where a worker can get its data more
    cheaply than through a pipe (a range of a file, which it reads itself); ``function``
    must give the same result for the job and its shipped form.

    >>> list(ordered_map(abs, [-3, 2, -1], 2))
    [3, 2, 1]
    >>> list(ordered_map(abs, [-3, 2, -1, 4], 2, share=True))
    [3, 2, 1, 4]
    """
    context = multiprocessing.get_context("fork")
    parent = os.getpid()
    workers: List[_Worker] = []
    try:
        for _ in range(processes - 1 if share else processes):
            workers.append(_Worker(context, parent, function, workers))
        yield from _exchange(workers, iter(jobs), in_flight, function if share else None, ship)
    except BaseException:
        for worker in workers:
            worker.kill()
        if workers:
            STOPPED.append(True)
        raise
    for worker in workers:
        worker.finish()


class _Inbox:
    """Bytes read from a pipe, handed out as whole messages (:data:`_HEADER`, then a body).

    Kept as a list of the pieces read and joined once a message is whole: no slicing of a
    growing buffer, which on PyPy costs milliseconds per megabyte."""

    def __init__(self) -> None:
        self.pieces: List[bytes] = []
        self.size = 0
        self.need = -1  # the length of the message under way; -1 before its header
        self.kind = _PICKLE

    def add(self, data: bytes) -> None:
        self.pieces.append(data)
        self.size += len(data)

    def _take(self, count: int) -> bytes:
        joined = self.pieces[0] if len(self.pieces) == 1 else b"".join(self.pieces)
        rest = joined[count:]
        self.pieces = [rest] if rest else []
        self.size -= count
        return joined[:count] if rest else joined

    def message(self) -> Optional[Tuple[bytes, bytes]]:
        """The next whole message's kind and body, or ``None`` until it has all come in."""
        if self.need < 0:
            if self.size < _HEADER.size:
                return None
            self.need, self.kind = _HEADER.unpack(self._take(_HEADER.size))
        if self.size < self.need:
            return None
        body = self._take(self.need)
        self.need = -1
        return self.kind, body


def _framed(value: Any) -> bytes:
    """A message holding ``value`` pickled."""
    payload = pickle.dumps(value, pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(payload), _PICKLE) + payload


def _result_message(value: Any) -> List[bytes]:
    """The message of a job's result, in pieces: an ``array`` (the ids of an encoded job,
    megabytes of them) as its raw bytes, which on PyPy cost a tenth of its pickle to send
    and to read; anything else as the pickle of ``(True, value)``."""
    if type(value) is array:
        data = value.tobytes()
        return [_HEADER.pack(len(data), value.typecode.encode("ascii")), data]
    return [_framed((True, value))]


def _unframed(kind: bytes, body: bytes) -> Any:
    """What a message holds: its pickle loaded, or the array its bytes are."""
    if kind == _PICKLE:
        return pickle.loads(body)
    values = array(kind.decode("ascii"))
    values.frombytes(body)
    return values


def _widen_pipe(fd: int) -> None:
    """Ask Linux for a pipe of :data:`_PIPE_BYTES` (64 KiB by default): fewer system calls
    per job."""
    try:
        import fcntl

        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), _PIPE_BYTES)
    except (ImportError, OSError):
        pass  # another system, or over the user's limit: the default size works too


class _Worker:
    """One forked worker, as this process sees it: its pipes, what is waiting to be sent
    to it, what it has half sent back, and the indices of the jobs it holds, in order."""

    def __init__(
        self, context: Any, parent: int, function: Callable[[Any], Any], others: List["_Worker"]
    ) -> None:
        job_read, self.job_write = os.pipe()
        self.result_read, result_write = os.pipe()
        _widen_pipe(self.job_write)
        _widen_pipe(self.result_read)
        # The child closes its copies of this side's ends (its own and earlier workers'):
        # a pipe whose write end is still open somewhere never reads as ended.
        ours = [self.job_write, self.result_read]
        ours += [fd for worker in others for fd in (worker.job_write, worker.result_read)]
        self.process = context.Process(
            target=_serve, args=(parent, job_read, result_write, function, ours), daemon=True
        )
        try:
            self.process.start()
        finally:
            os.close(job_read)
            os.close(result_write)
        os.set_blocking(self.job_write, False)
        self.outbox: Deque[bytes] = deque()
        self.sent = 0  # bytes of outbox[0] written
        self.inbox = _Inbox()
        self.holding: Deque[int] = deque()

    def send(self, index: int, job: Any) -> None:
        self.outbox.append(_framed(job))
        self.holding.append(index)

    def write_some(self) -> None:
        """Write what the pipe takes of the messages waiting (all of them, where jobs are
        small: a worker is never left waiting for a job this process had queued)."""
        while self.outbox:
            message = self.outbox[0]
            piece = (
                message
                if self.sent == 0 and len(message) <= _PIPE_BYTES
                else message[self.sent : self.sent + _PIPE_BYTES]
            )
            try:
                written = os.write(self.job_write, piece)
            except BlockingIOError:
                return
            except BrokenPipeError:
                raise _died() from None
            self.sent += written
            if self.sent < len(message):
                return  # the pipe is full
            self.outbox.popleft()
            self.sent = 0

    def read_some(self) -> List[Tuple[int, Any]]:
        """The results that have come in whole, with their job indices."""
        data = os.read(self.result_read, _PIPE_BYTES)
        if not data:
            raise _died()
        self.inbox.add(data)
        done: List[Tuple[int, Any]] = []
        message = self.inbox.message()
        while message is not None:
            kind, body = message
            value = _unframed(kind, body)
            # A pickle holds (ok, value); an array is the result of a job that succeeded.
            done.append((self.holding.popleft(), value if kind == _PICKLE else (True, value)))
            message = self.inbox.message()
        return done

    def finish(self) -> None:
        os.close(self.job_write)  # the worker reads the end and exits
        os.close(self.result_read)
        self.process.join()

    def kill(self) -> None:
        if self.process.pid is not None:
            try:
                os.kill(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for fd in (self.job_write, self.result_read):
            try:
                os.close(fd)
            except OSError:
                pass
        self.process.join()


class WorkerDied(PureBPEError):
    """A worker of :func:`ordered_map` died (killed, or out of memory) before its results
    came back: a caller may say so in its own words."""


def _died() -> WorkerDied:
    return WorkerDied("a worker process died (out of memory, or killed); run again with fewer --processes")


def _exchange(
    workers: List[_Worker],
    jobs: Iterator[Any],
    in_flight: int,
    here: Optional[Callable[[Any], Any]],
    ship: Optional[Callable[[Any], Any]],
) -> Iterator[Any]:
    """Send the jobs to the least busy workers (or compute them ``here``, when every worker
    holds ``in_flight`` jobs) and hand the results back in job order."""
    window = in_flight * (len(workers) + (here is not None))
    sent = handed = 0
    ready: Dict[int, Tuple[bool, Any]] = {}
    exhausted = False
    while True:
        while handed in ready:
            ok, result = ready.pop(handed)
            handed += 1
            if not ok:
                raise result
            yield result
        local: Any = _END
        while not exhausted and sent - handed < window:
            worker = min(workers, key=lambda w: len(w.holding)) if workers else None
            job = next(jobs, _END)
            if job is _END:
                exhausted = True
            elif here is not None and (worker is None or len(worker.holding) >= in_flight):
                local = job
            else:
                assert worker is not None
                worker.send(sent, job if ship is None else ship(job))
                sent += 1
                if len(worker.outbox) == 1:
                    # Start it now: making the next job may take a while (counting finds the
                    # cuts of a whole range), and the worker would wait for it idle.
                    worker.write_some()
                continue
            break
        if local is not _END:
            # The jobs just queued go out (and results come in) before this process is busy.
            ready.update(_move(workers, 0.0))
            ready[sent] = _outcome(here, local)  # type: ignore[arg-type]
            sent += 1
        elif exhausted and handed == sent:
            return
        else:
            ready.update(_move(workers, None))


def _move(workers: List[_Worker], timeout: Optional[float]) -> List[Tuple[int, Any]]:
    """Write what the workers can take and read what they sent back (waiting up to
    ``timeout`` seconds, ``None``: until one of them is ready): the results that came in whole."""
    writers = [w.job_write for w in workers if w.outbox]
    readers = [w.result_read for w in workers if w.holding]
    if not writers and not readers:
        return []
    readable, writable, _ = select.select(readers, writers, [], timeout)
    done: List[Tuple[int, Any]] = []
    for worker in workers:
        if worker.job_write in writable:
            worker.write_some()
        if worker.result_read in readable:
            done += worker.read_some()
    return done


def _outcome(function: Callable[[Any], Any], job: Any) -> Tuple[bool, Any]:
    try:
        return True, function(job)
    except Exception as exc:  # raised in its turn, as a worker's would be
        return False, exc


_END = object()


def _serve(
    parent: int, job_read: int, result_write: int, function: Callable[[Any], Any], foreign: List[int]
) -> None:
    """A worker's life: read a job, send back ``(True, result)`` or ``(False, error)``,
    until the parent closes the job pipe."""
    for fd in foreign:
        os.close(fd)
    die_with_parent(parent)
    inbox = _Inbox()
    while True:
        message = inbox.message()
        if message is None:
            data = os.read(job_read, _PIPE_BYTES)
            if not data:
                return  # the parent closed the pipe: no more jobs
            inbox.add(data)
            continue
        try:
            pieces = _result_message(function(_unframed(*message)))
        except Exception as exc:  # sent back, raised there in its turn
            pieces = [_pickled_error(exc)]
        for piece in pieces:
            done = os.write(result_write, piece)
            while done < len(piece):
                done += os.write(result_write, piece[done:])


def _pickled_error(exc: Exception) -> bytes:
    try:
        return _framed((False, exc))
    except Exception:  # an exception that cannot be pickled: its message then
        return _framed((False, PureBPEError(str(exc))))
