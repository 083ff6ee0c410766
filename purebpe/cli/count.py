"""``purebpe count``: count the words of a corpus once, to train many vocabularies from them."""
from __future__ import annotations

import argparse
from typing import Any

from .._atomic import check_output_file
from ..errors import PureBPEError
from ..wordcounts import WordCounts
from ._common import add_input_arguments, count_input


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "count",
        help="count words once; train many sizes with 'train --counts'",
        description=(
            "Count the pre-tokenized words of text files and save them as gzipped TSV, "
            "to train any number of vocabularies with 'purebpe train --counts FILE'. "
            "With --merge, add up counts files instead (shards counted on many machines)."
        ),
    )
    add_input_arguments(parser)
    parser.add_argument(
        "--merge",
        action="store_true",
        help="FILES are counts files saved by 'purebpe count': add them up into one",
    )
    parser.add_argument("-o", "--output", default="counts.tsv.gz", metavar="FILE")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_output_file(args.output)
    if args.merge:
        return merge(args)
    counts, source = count_input(args)
    path = counts.save(args.output)
    print(f"counted {source}: {counts.total():,} words, {len(counts):,} distinct; saved {path}")
    return 0


def merge(args: argparse.Namespace) -> int:
    """Add up the counts files FILES; their headers give the special tokens and pre-tokenizer."""
    if not args.files:
        raise PureBPEError("--merge needs the counts files to add up")
    options = (args.special_token, args.processes, args.pattern, args.pretokenizer)
    if any(options):
        raise PureBPEError(
            "--merge reads the special tokens and pre-tokenizer from the counts files; "
            "--special-token, --pretokenizer, --pattern and --processes do not apply"
        )
    counts = WordCounts.sum(args.files)
    path = counts.save(args.output)
    print(
        f"added {len(args.files)} counts files: {counts.total():,} words, "
        f"{len(counts):,} distinct; saved {path}"
    )
    return 0
