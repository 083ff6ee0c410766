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
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Callable, List, Optional, Tuple

from ._atomic import process_alive

#: The name of a scratch directory (:func:`scratch_directory`), with its owner's pid.
_SCRATCH_NAME = re.compile(r"purebpe-counts-(\d+)-")
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
    """A new private directory for workers to leave their results in, under ``$TMPDIR``.

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
    return tempfile.mkdtemp(prefix=f"purebpe-counts-{os.getpid()}-")
