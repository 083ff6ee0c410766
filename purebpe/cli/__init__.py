"""The ``purebpe`` command line: one module per subcommand.

Each module in :data:`COMMANDS` defines ``add_parser(subparsers)``, which registers its
subcommand and sets ``func`` to a ``run(args) -> int``. Bad input raises
:class:`purebpe.errors.PureBPEError` (or ``OSError``), which :func:`main` prints as one line
(``purebpe: error: ...``) with exit status 2: never a traceback. Ctrl-C exits 130 and
SIGTERM 143, saying which complete outputs were written; a closed pipe (``| head``) ends
quietly with the SIGPIPE status, 141.
"""

from __future__ import annotations

import argparse
import errno
import fcntl
import importlib
import os
import signal
import sys
import threading
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Dict, Optional, Sequence

from .._atomic import CANCELLED, Cancelled, remove_own_temporaries, written
from .._workers import STOPPED
from ..errors import PureBPEError
from ._io import CLOSED_STREAMS

# Subcommand modules, in the order ``purebpe --help`` lists them.
COMMANDS = (
    "train",
    "count",
    "encode",
    "decode",
    "export",
    "convert",
    "mask",
    "conformance",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="purebpe",
        description="Byte-level BPE tokenizers in readable pure Python.",
    )
    from .. import __version__

    parser.add_argument("--version", action="version", version=f"purebpe {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for name in COMMANDS:
        importlib.import_module(f"{__name__}.{name}").add_parser(subparsers)
    return parser


#: Errors of writing to a full or failing device, which files name and stdout does not.
_WRITE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO)


class Terminated(Cancelled):
    """Raised in the main thread when the process receives SIGTERM or SIGHUP."""

    def __init__(self, signum: int = signal.SIGTERM) -> None:
        super().__init__(signum)


#: The signals that end a run as SIGTERM does (outputs cleaned up, workers stopped), and
#: what the last message calls them.
_ENDING_SIGNALS: Dict[int, str] = {signal.SIGTERM: "terminated", signal.SIGHUP: "hung up"}
#: An error message longer than this is cut (quoted input is cut where it is quoted; this
#: is the net under every other message).
MESSAGE_CHARS = 500
#: The access-mode bits of a descriptor's flags (``os.O_ACCMODE``, which PyPy lacks).
_ACCESS_MODE = getattr(os, "O_ACCMODE", 3)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run one command; returns the exit status (0, 2 for bad input, 130/143 interrupted)."""
    guard_standard_streams()
    parser = build_parser()
    args = parser.parse_args(argv)
    written.clear()
    CANCELLED.clear()
    previous_handlers = _raise_on_ending_signals()
    try:
        status: int = args.func(args)
        sys.stdout.flush()
        if CANCELLED:  # signalled, its exception swallowed, and nothing left to refuse
            raise Cancelled(CANCELLED[0])
    except BrokenPipeError:
        # The reader went away (``| head``): what it wanted it got; end quietly.
        _discard_stdout()
        return 128 + signal.SIGPIPE
    except (PureBPEError, OSError, MemoryError, RecursionError, BrokenProcessPool) as exc:
        if isinstance(exc, PureBPEError):
            message = str(exc)
        elif isinstance(exc, MemoryError):
            message = "out of memory (the input, or a limit such as ulimit -v, is too large for this run)"
        elif isinstance(exc, RecursionError):
            message = "input nested too deeply to process"
        elif isinstance(exc, BrokenProcessPool):
            message = "a worker process died (out of memory, or killed); run again with fewer --processes"
        elif exc.errno in (errno.EMFILE, errno.ENFILE):
            message = "too many open files (the limit is ulimit -n); run with fewer --processes or raise it"
        elif exc.filename is None and exc.errno in _WRITE_ERRNOS:  # writing stdout: /dev/full
            message = f"<stdout>: cannot write ({exc.strerror or exc})"
            _discard_stdout()
        else:
            message = _describe_os_error(exc)
        print(f"purebpe: error: {_cut_message(message)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"purebpe: interrupted; {_outputs_written()}", file=sys.stderr)
        return 130
    except Cancelled as ended:  # Terminated, or an output refused after a swallowed one
        print(f"purebpe: {_ENDING_SIGNALS[ended.signum]}; {_outputs_written()}", file=sys.stderr)
        return 128 + ended.signum
    finally:
        # A signal between a temporary's creation and the block that would remove it
        # left it behind: it is on record (see purebpe._atomic).
        remove_own_temporaries()
        for signum, handler in previous_handlers.items():
            signal.signal(signum, handler)
    return status


def guard_standard_streams() -> None:
    """Make closed standard streams harmless: /dev/null holds their descriptors.

    Otherwise the first file opened would get descriptor 1 (say) and receive what is
    printed. Python leaves ``sys.stdout`` None for a closed stdout; it becomes a stream
    on /dev/null, and :data:`CLOSED_STREAMS` remembers it, so that a command that must
    write its data there says so in one line, and a summary line is dropped quietly.
    """
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        closed_at_start = getattr(sys, name) is None  # Python found the descriptor closed
        try:
            os.fstat(fd)
            if fd and fcntl.fcntl(fd, fcntl.F_GETFL) & _ACCESS_MODE == os.O_RDONLY:
                # A descriptor left open for reading where stdout or stderr should be (a
                # shell wrapper's own script, after 2>&-): writing it fails, so it is closed.
                closed_at_start = True
        except OSError:
            closed_at_start = True
            devnull = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
            if devnull != fd:
                os.dup2(devnull, fd)
                os.close(devnull)
        if closed_at_start:
            # The descriptor may since belong to a file an import opened: never use it.
            setattr(sys, name, open(os.devnull, "r" if fd == 0 else "w"))
            CLOSED_STREAMS.add(name)
    # File names are bytes on Linux: one that is not UTF-8 is printed as it is.
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            try:
                reconfigure(errors="surrogateescape")
            except (ValueError, OSError):  # pragma: no cover - a replaced stream
                pass


def _cut_message(message: str) -> str:
    if len(message) <= MESSAGE_CHARS:
        return message
    return f"{message[:MESSAGE_CHARS]}... ({len(message):,} characters)"


def _raise_on_ending_signals() -> Dict[int, Any]:
    """Turn SIGTERM and SIGHUP into :class:`Terminated` (so worker pools are torn down and
    temporaries removed); the old handlers."""

    def terminate(signum: int, frame: Any) -> None:
        CANCELLED.append(signum)  # in case this exception is swallowed (see CANCELLED)
        raise Terminated(signum)

    if threading.current_thread() is not threading.main_thread():
        return {}
    return {signum: signal.signal(signum, terminate) for signum in _ENDING_SIGNALS}


def _outputs_written() -> str:
    """What the interrupted command wrote, for its last message."""
    paths = list(written)
    if not paths:
        return "no output file was written"
    return "it had written " + ", ".join(str(path) for path in paths) + " (complete)"


def _discard_stdout() -> None:
    """Point stdout at /dev/null, so that the flush at exit cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass  # stdout is not a real file (captured in tests): nothing to flush at exit


def _describe_os_error(exc: OSError) -> str:
    if exc.filename is not None:
        return f"{exc.filename}: {exc.strerror or exc}"
    return str(exc)


def entry() -> None:
    """The ``purebpe`` command: :func:`main`, then exit with its status.

    Where a run killed its worker processes (an error, Ctrl-C, SIGTERM, SIGHUP), the exit
    skips the interpreter's exit handlers once the outputs are cleaned up and the streams
    flushed: before Python 3.12, ``concurrent.futures``' handler can wait forever for a
    pool whose killed worker left half a message in its pipe.
    """
    status = main()
    if STOPPED:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(status)
    sys.exit(status)


if __name__ == "__main__":  # pragma: no cover
    entry()
