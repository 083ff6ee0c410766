"""``purebpe count``: count the words of a corpus once, to train many vocabularies from them."""
from __future__ import annotations

import argparse
from typing import Any

from .._atomic import check_output_file
from ._common import add_input_arguments, count_input


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "count",
        help="count words once; train many sizes with 'train --counts'",
        description=(
            "Count the pre-tokenized words of text files and save them as gzipped TSV, "
            "to train any number of vocabularies with 'purebpe train --counts FILE'."
        ),
    )
    add_input_arguments(parser)
    parser.add_argument("-o", "--output", default="counts.tsv.gz", metavar="FILE")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_output_file(args.output)
    counts, source = count_input(args)
    path = counts.save(args.output)
    print(f"counted {source}: {counts.total():,} words, {len(counts):,} distinct; saved {path}")
    return 0
