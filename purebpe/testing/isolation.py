"""Calling the implementation under test with a time limit, or in another process.

Two things the checks cannot do by calling ``fn(...)`` directly:

* **a time limit**: a trainer that loops forever must be reported, not waited on.
  :func:`call_with_time_limit` runs the call in a daemon thread and stops waiting after
  ``seconds``; it then raises :class:`TimeLimitExceeded`, which is a ``BaseException``, so
  Hypothesis does not try to shrink the case (each try would wait the limit again). The
  thread cannot be killed: on CPython it is sent an exception, which stops a loop of Python
  code at its next bytecode; elsewhere (PyPy, or a call blocked in C) it is left running,
  as a daemon, until the process exits.
* **another process**: merges that depend on hash order (ties broken by the iteration order
  of a dict or set of ``bytes``) are the same in every run of one process, and differ
  between processes started with different ``PYTHONHASHSEED``. A :class:`Worker` is a
  child process, started with a given seed, that imports the callable from its
  ``"module:function"`` spec (:func:`spec_of` finds it for a module-level function) and
  answers calls sent over a pipe (pickled arguments in, pickled result out). It dies with
  its parent (its stdin closes) and is killed when a call runs past the time limit.
"""

from __future__ import annotations

import ctypes
import os
import pickle
import platform
import select
import struct
import subprocess
import sys
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence

from .harness import TimeLimitExceeded, load_callable

#: Seconds one call of the implementation may take before it is reported as hanging.
DEFAULT_TIME_LIMIT = 60.0

_LENGTH = struct.Struct("<Q")


def call_with_time_limit(
    fn: Callable[..., Any], args: Sequence[Any], kwargs: Dict[str, Any], seconds: float
) -> Any:
    """``fn(*args, **kwargs)``, or :class:`TimeLimitExceeded` after ``seconds``."""
    outcome: List[Any] = []

    def target() -> None:
        try:
            outcome.append((True, fn(*args, **kwargs)))
        except BaseException as exc:  # handed to the caller's thread
            outcome.append((False, exc))

    thread = threading.Thread(target=target, name="purebpe-conformance-call", daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        _interrupt(thread)
        raise TimeLimitExceeded(seconds)
    ok, value = outcome[0]
    if not ok:
        raise value
    return value


def _interrupt(thread: threading.Thread) -> None:
    """Ask a hung thread to stop (CPython only: an exception raised at its next bytecode)."""
    if platform.python_implementation() != "CPython" or thread.ident is None:
        return
    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(SystemExit))


def spec_of(fn: Callable[..., Any]) -> Optional[str]:
    """``"module:qualified.name"`` if importing it gives ``fn`` back, else ``None``
    (lambdas, closures, ``functools.partial`` objects, callables of ``__main__``)."""
    module = getattr(fn, "__module__", None)
    name = getattr(fn, "__qualname__", None)
    if not module or not name or module == "__main__" or "<" in name:
        return None
    spec = f"{module}:{name}"
    try:
        found = load_callable(spec)
    except Exception:
        return None
    return spec if found == fn else None  # (== for bound methods, which are made anew each time)


class Worker:
    """A child process that runs the callable ``spec`` with ``PYTHONHASHSEED=hash_seed``."""

    def __init__(self, spec: str, hash_seed: int) -> None:
        self.spec = spec
        self.hash_seed = hash_seed
        self.process: Optional["subprocess.Popen[bytes]"] = None

    def _start(self) -> "subprocess.Popen[bytes]":
        env = dict(os.environ, PYTHONHASHSEED=str(self.hash_seed))
        # The child imports what this process can import: the same sys.path.
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "purebpe.testing.isolation", self.spec],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            cwd=os.getcwd(),
        )
        return self.process

    def call(self, args: Sequence[Any], kwargs: Dict[str, Any], seconds: float) -> Any:
        """The result of the call in the child; its exception is re-raised here."""
        process = self.process if self.process is not None and self.process.poll() is None else self._start()
        assert process.stdin is not None and process.stdout is not None
        payload = pickle.dumps((tuple(args), kwargs))
        try:
            process.stdin.write(_LENGTH.pack(len(payload)) + payload)
            process.stdin.flush()
            header = self._read(process, _LENGTH.size, seconds)
            ok, value = pickle.loads(self._read(process, _LENGTH.unpack(header)[0], seconds))
        except TimeLimitExceeded:
            self.close()
            raise
        except (OSError, EOFError, struct.error) as exc:
            self.close()
            raise RuntimeError(f"the worker process (PYTHONHASHSEED={self.hash_seed}) died: {exc}") from None
        if not ok:
            raise value
        return value

    def _read(self, process: "subprocess.Popen[bytes]", size: int, seconds: float) -> bytes:
        assert process.stdout is not None
        fd = process.stdout.fileno()
        chunks = []
        while size:
            ready, _, _ = select.select([fd], [], [], seconds)
            if not ready:
                raise TimeLimitExceeded(seconds)
            chunk = os.read(fd, size)
            if not chunk:
                raise EOFError("end of output")
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def close(self) -> None:
        """Stop the child (killed: it may be hung)."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            for stream in (self.process.stdin, self.process.stdout):
                if stream is not None:
                    stream.close()
            self.process = None


def _serve(spec: str) -> None:
    """The child's loop: read a call, run it, write ``(ok, result or exception)``."""
    fn = load_callable(spec)
    # The answers go to the original stdout; what the callable prints goes to stderr.
    stdin, stdout = sys.stdin.buffer, os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    while True:
        header = stdin.read(_LENGTH.size)
        if len(header) < _LENGTH.size:
            return  # the parent is gone
        args, kwargs = pickle.loads(stdin.read(_LENGTH.unpack(header)[0]))
        try:
            answer: Any = (True, fn(*args, **kwargs))
        except Exception as exc:
            answer = (False, exc)
        try:
            payload = pickle.dumps(answer)
        except Exception as exc:  # an unpicklable result or exception
            payload = pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
        stdout.write(_LENGTH.pack(len(payload)) + payload)
        stdout.flush()


if __name__ == "__main__":
    _serve(sys.argv[1])
