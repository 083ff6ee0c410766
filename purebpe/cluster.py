"""Counting on a Ray cluster: a ``concurrent.futures.Executor`` whose jobs are Ray tasks.

::

    counts = purebpe.count(files, ["<|endoftext|>"], executor=purebpe.ray_executor())

Each call submitted becomes a Ray task (``ray.remote``), and Ray's own
``ObjectRef.future()`` is the ``concurrent.futures.Future`` that :func:`purebpe.count`
waits on, exactly as it waits on a local process pool or on Dask's
``Client.get_executor()``. Ray runs a task again when the worker process running it dies
(up to ``max_retries`` times), so a lost worker costs time, never counts; past the retries
the count fails.

Ray is imported only when an executor is made: it is an optional dependency (CPython only).
"""

from __future__ import annotations

from concurrent.futures import Executor, Future
from functools import partial
from typing import Any, Callable, Dict, Optional, TypeVar

from .errors import PureBPEError

T = TypeVar("T")


class RayExecutor(Executor):
    """Runs each submitted call as a Ray task; made by :func:`ray_executor`."""

    def __init__(self, ray: Any, max_retries: int, owns_ray: bool) -> None:
        self._ray = ray
        self._max_retries = max_retries
        self._owns_ray = owns_ray
        # One remote function per Python function: Ray ships each function once.
        self._remote: Dict[Callable[..., Any], Any] = {}

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        remote = self._remote.get(fn)
        if remote is None:
            remote = self._remote[fn] = self._ray.remote(max_retries=self._max_retries)(fn)
        future: Future[T] = Future()
        remote.remote(*args, **kwargs).future().add_done_callback(partial(_settle, future))
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop Ray if this executor started it (a Ray that was running is left alone)."""
        if self._owns_ray:
            self._owns_ray = False
            self._ray.shutdown()


def _settle(future: Future[T], ray_future: Future[T]) -> None:
    """Give ``future`` the outcome of ``ray_future``, with the task's own exception in
    place of Ray's wrapper (``RayTaskError``, whose message is a traceback): an
    ``InputError`` raised in a worker arrives as itself, one line naming file and offset."""
    if ray_future.cancelled():
        future.cancel()
        return
    exc = ray_future.exception()
    if exc is None:
        future.set_result(ray_future.result())
        return
    cause = getattr(exc, "cause", None)
    future.set_exception(cause if isinstance(cause, Exception) else exc)


def ray_executor(address: Optional[str] = None, *, max_retries: int = 3, **init_options: Any) -> RayExecutor:
    """An executor counting on Ray: the cluster at ``address``, or a local Ray.

    If Ray is already initialized it is used as it is; else ``ray.init(address,
    **init_options)`` starts or joins it, and the executor's ``shutdown()`` (the end of a
    ``with`` block) stops it again. ``max_retries`` is how many times a task is run again
    after its worker process died. Every worker needs purebpe installed (or pass
    ``runtime_env={"pip": ["purebpe"]}``).
    """
    try:
        import ray
    except ImportError:
        raise PureBPEError("ray_executor needs Ray: pip install ray (CPython only)") from None
    if max_retries < 0:
        raise PureBPEError(f"max_retries must be at least 0, not {max_retries}")
    owns_ray = not ray.is_initialized()
    if owns_ray:
        ray.init(address, **init_options)
    return RayExecutor(ray, max_retries, owns_ray)
