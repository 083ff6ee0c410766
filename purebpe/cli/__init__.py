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
import importlib
import os
import signal
import sys
import threading
from typing import Any, Optional, Sequence

from .._atomic import written
from ..errors import PureBPEError

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


class Terminated(BaseException):
    """Raised in the main thread when the process receives SIGTERM."""


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run one command; returns the exit status (0, 2 for bad input, 130/143 interrupted)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    written.clear()
    previous_handler = _raise_on_sigterm()
    try:
        status: int = args.func(args)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (``| head``): what it wanted it got; end quietly.
        _discard_stdout()
        return 128 + signal.SIGPIPE
    except (PureBPEError, OSError) as exc:
        if isinstance(exc, PureBPEError):
            message = str(exc)
        elif exc.filename is None and exc.errno in _WRITE_ERRNOS:  # writing stdout: /dev/full
            message = f"<stdout>: cannot write ({exc.strerror or exc})"
            _discard_stdout()
        else:
            message = _describe_os_error(exc)
        print(f"purebpe: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"purebpe: interrupted; {_outputs_written()}", file=sys.stderr)
        return 130
    except Terminated:
        print(f"purebpe: terminated; {_outputs_written()}", file=sys.stderr)
        return 128 + signal.SIGTERM
    finally:
        if previous_handler is not None:
            signal.signal(signal.SIGTERM, previous_handler)
    return status


def _raise_on_sigterm() -> Any:
    """Turn SIGTERM into :class:`Terminated` (so worker pools are torn down); the old handler."""

    def terminate(signum: int, frame: Any) -> None:
        raise Terminated()

    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, terminate)


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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
