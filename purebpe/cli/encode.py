"""``purebpe encode``: text to token ids, streamed, as text, ``.npy`` or raw ``uint16``/``uint32``."""
from __future__ import annotations

import argparse
import sys
from typing import Any

from ..formats import load as load_model
from ..progress import progress_bar
from ..tokenizer import AllowedSpecial
from ._common import add_errors_and_progress_arguments, progress_option
from ._io import (
    add_format_arguments,
    atomic_output,
    check_npy_output,
    check_output,
    dtype_for,
    ids_format,
    open_input,
    read_text,
    write_ids,
)


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "encode",
        help="encode text to token ids",
        description=(
            "Encode a UTF-8 text file (or stdin) to token ids with a trained tokenizer. Ids go "
            "to stdout as text, or to OUTPUT as text, .npy or raw uint16/uint32 (.bin) for "
            "training pipelines. The file is streamed: memory does not grow with its size, "
            "except with a custom-pattern tokenizer (trained with --pattern): no cut is known to "
            "be safe for an arbitrary pattern, so the text between two special tokens is held "
            "whole (about 30 bytes of memory per input byte)."
        ),
    )
    parser.add_argument("--tokenizer", required=True, metavar="DIR", help="a saved model (any format)")
    parser.add_argument("file", nargs="?", default="-", metavar="FILE", help="text to encode (default: stdin)")
    parser.add_argument("-o", "--output", default="-", metavar="OUTPUT", help="(default: stdout)")
    add_format_arguments(parser, "the written")
    parser.add_argument(
        "--ordinary",
        action="store_true",
        help="encode special tokens in the text as plain text, not as their ids",
    )
    add_errors_and_progress_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_output(args.output)
    tokenizer = load_model(args.tokenizer).tokenizer()
    format = ids_format(args.output, args.format)
    dtype = dtype_for(args.dtype, max(tokenizer.vocab))
    allowed: AllowedSpecial = frozenset() if args.ordinary else "all"
    with open_input(args.file) as (stream, source, size):
        bar = progress_bar(progress_option(args), "encode", size, "B", unit_scale=True)
        try:
            with atomic_output(args.output) as out:
                if format == "npy":
                    check_npy_output(out, "<stdout>" if args.output == "-" else args.output)
                texts = read_text(stream, source, args.errors, bar)
                count = write_ids(out, tokenizer.encode_iterable(texts, allowed), format, dtype)
        finally:
            bar.close()
    if args.output != "-":
        print(f"wrote {count:,} ids to {args.output} ({format}, {dtype if format != 'text' else 'text'})",
              file=sys.stderr)
    return 0
