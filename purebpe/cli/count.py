"""``purebpe count``: count the words of a corpus once, to train many vocabularies from them."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Dict, List, Tuple

from .._atomic import check_output_file
from ..errors import PureBPEError
from ..wordcounts import WordCounts
from ._common import add_input_arguments, count_input
from ._io import CLOSED_STREAMS

#: Where ``-o -`` writes: stdout's descriptor, which is written in place.
STDOUT = "/dev/stdout"


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "count",
        help="count words once; train many sizes with 'train --counts'",
        description=(
            "Count the pre-tokenized words of a corpus (text, JSON lines or Parquet, "
            "compressed or not) and save them as gzipped TSV, "
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
    parser.add_argument(
        "-o",
        "--output",
        default="counts.tsv.gz",
        metavar="FILE",
        help="(default: counts.tsv.gz; - for stdout)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.output == "-":
        if "stdout" in CLOSED_STREAMS:
            raise PureBPEError("<stdout>: standard output is closed; give -o FILE to write")
        args.output = STDOUT  # a stream: written in place; the summary goes to stderr
    check_output_file(args.output)
    if args.merge:
        return merge(args)
    counts, source = count_input(args)
    path = counts.save(args.output)
    report(f"counted {source}: {counts.total():,} words, {len(counts):,} distinct; saved {path}", args)
    return 0


def report(line: str, args: argparse.Namespace) -> None:
    """The summary line: on stdout, unless the counts went there (``-o -``, ``-o /dev/fd/1``)."""
    try:
        output, stdout = os.stat(args.output), os.fstat(sys.stdout.fileno())
        to_stdout = (output.st_dev, output.st_ino) == (stdout.st_dev, stdout.st_ino)
    except (OSError, ValueError, AttributeError):
        to_stdout = args.output == STDOUT
    print(line, file=sys.stderr if to_stdout else sys.stdout)


def merge(args: argparse.Namespace) -> int:
    """Add up the counts files FILES; their headers give the special tokens and pre-tokenizer."""
    if not args.files:
        raise PureBPEError("--merge needs the counts files to add up")
    options = (
        args.special_token,
        args.processes,
        args.pattern,
        args.pretokenizer,
        args.max_chars,
        args.doc_cap,
    )
    if any(option is not None and option != [] for option in options):
        raise PureBPEError(
            "--merge reads the special tokens and pre-tokenizer from the counts files; "
            "--special-token, --pretokenizer, --pattern and --processes do not apply (nor "
            "--max-chars, --doc-cap)"
        )
    _refuse_repeated_files(args.files)
    counts = WordCounts.sum(args.files)
    path = counts.save(args.output)
    report(
        f"added {len(args.files)} counts files: {counts.total():,} words, "
        f"{len(counts):,} distinct; saved {path}",
        args,
    )
    return 0


def _refuse_repeated_files(files: List[str]) -> None:
    """The same counts file given twice (under any name) would be added twice: refused."""
    seen: Dict[Tuple[int, int], str] = {}
    for name in files:
        try:
            info = os.stat(name)
        except OSError:
            continue  # reading it says what is wrong
        first = seen.get((info.st_dev, info.st_ino))
        if first is not None:
            same = f"given twice (as {first} and {name})" if first != name else "given twice"
            raise PureBPEError(f"{name}: {same}; its counts would be added twice")
        seen[(info.st_dev, info.st_ino)] = name
