"""The ``purebpe`` command line: one module per subcommand.

Each module in :data:`COMMANDS` defines ``add_parser(subparsers)``, which registers its
subcommand and sets ``func`` to a ``run(args) -> int``. Bad input raises
:class:`purebpe.errors.PureBPEError` (or ``OSError``), which :func:`main` prints as one line
(``purebpe: error: ...``) with exit status 2: never a traceback.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from typing import Optional, Sequence

from ..errors import PureBPEError

# Subcommand modules, in the order ``purebpe --help`` lists them.
COMMANDS = (
    "train",
    "count",
    "encode",
    "decode",
    "export",
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


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.func(args)
    except (PureBPEError, OSError) as exc:
        message = str(exc) if isinstance(exc, PureBPEError) else _describe_os_error(exc)
        print(f"purebpe: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("purebpe: interrupted; no output was written", file=sys.stderr)
        return 130
    return status


def _describe_os_error(exc: OSError) -> str:
    if exc.filename is not None:
        return f"{exc.filename}: {exc.strerror or exc}"
    return str(exc)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
