"""``purebpe mask``: Wakong span masking of the words on each line of a text.

Each line is split on whitespace; the words are masked with :class:`purebpe.wakong.Wakong`
(one random stream for the whole input, so a seed reproduces the output) and printed
joined by single spaces. ``--show`` adds, under each line, the picture of its scheme
(``.`` a kept word, ``x`` a masked one, ``( )`` a mask).
"""

from __future__ import annotations

import argparse
import sys
from typing import BinaryIO, Iterator, Tuple

from ..errors import InputError
from ..wakong import PROPOSED_MASK_RATE, TABLES, MaskConfig, Wakong, apply_mask, show


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "mask",
        help="mask spans of words on each line (Wakong text infilling)",
        description=(
            "Mask spans of each line's words with the Wakong algorithm (about 15% of the "
            "words, in spans of 0 to 10, one mask token each) and print the result."
        ),
    )
    parser.add_argument(
        "file", nargs="?", default="-", metavar="FILE", help="UTF-8 text, '-' for stdin (default)"
    )
    parser.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    parser.add_argument("--mask", default="<mask>", help="mask token (default: <mask>)")
    parser.add_argument(
        "--rate",
        type=float,
        default=PROPOSED_MASK_RATE,
        help=f"proposed mask rate in (0, 1) (default: {PROPOSED_MASK_RATE}, masks ~15%%)",
    )
    parser.add_argument(
        "--table",
        choices=TABLES,
        default="float64",
        help="span-length table; 'published' reproduces the wakong package seed for seed",
    )
    parser.add_argument("--show", action="store_true", help="print each line's mask picture under it")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    masker = Wakong(args.seed, MaskConfig(rate=args.rate, table=args.table))
    if args.file == "-":
        return _mask_lines(sys.stdin.buffer, "stdin", masker, args)
    with open(args.file, "rb") as stream:
        return _mask_lines(stream, args.file, masker, args)


def _mask_lines(stream: BinaryIO, source: str, masker: Wakong, args: argparse.Namespace) -> int:
    write = sys.stdout.write
    for line in _decoded_lines(stream, source):
        words = line.split()
        scheme = masker.scheme(len(words))
        write(" ".join(apply_mask(words, scheme, args.mask)) + "\n")
        if args.show:
            write(show(len(words), scheme) + "\n")
    return 0


def _decoded_lines(stream: BinaryIO, source: str) -> Iterator[str]:
    """The lines of ``stream`` as text; invalid UTF-8 raises :class:`InputError` with the
    line number and the byte offset of the first bad byte in the whole input."""
    offset = 0
    for line_no, raw in enumerate(stream, 1):
        text, offset = _decode(raw, source, offset, line_no)
        yield text


def _decode(raw: bytes, source: str, offset: int, line_no: int) -> Tuple[str, int]:
    try:
        return raw.decode("utf-8"), offset + len(raw)
    except UnicodeDecodeError as exc:
        raise InputError(
            f"invalid UTF-8 ({exc.reason})", source, offset=offset + exc.start, line=line_no
        ) from None
