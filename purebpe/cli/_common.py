"""What ``purebpe train`` and ``purebpe count`` share: the input options and the counting."""
from __future__ import annotations

import argparse
from typing import Any, Dict, Optional, Tuple

from ..corpus import NAME as DEFAULT_CORPUS
from ..corpus import default_corpus
from ..counting import count, count_from_iterator
from ..pretokenize import PRETOKENIZERS, Pattern, Pretokenizer
from ..progress import Progress
from ..wordcounts import WordCounts


def add_input_arguments(parser: argparse.ArgumentParser) -> None:
    """FILES and the options that say how to count them."""
    parser.add_argument(
        "files", nargs="*", metavar="FILE", help=f"UTF-8 text files (default: {DEFAULT_CORPUS})"
    )
    parser.add_argument(
        "--special-token",
        action="append",
        default=[],
        metavar="TOKEN",
        help="a special token (repeatable), e.g. '<|endoftext|>'",
    )
    split = parser.add_mutually_exclusive_group()
    split.add_argument(
        "--pretokenizer",
        default=None,
        choices=PRETOKENIZERS,
        help="a named pattern: gpt2 (default), cl100k (GPT-4), o200k (GPT-4o), or none "
        "(one word per line)",
    )
    split.add_argument(
        "--pattern",
        metavar="REGEX",
        help="any regular expression instead (needs the regex package); the matches and "
        "the text between them are the words, as in HF's Split(..., 'isolated')",
    )
    parser.add_argument("--processes", type=int, default=None, help="count in P processes")
    add_errors_and_progress_arguments(parser)


def add_errors_and_progress_arguments(parser: argparse.ArgumentParser) -> None:
    """``--errors`` (what to do with bytes that are not UTF-8) and ``--progress``."""
    parser.add_argument(
        "--errors",
        choices=("strict", "replace"),
        default="strict",
        help="what to do with bytes that are not UTF-8 (default: strict, an error)",
    )
    parser.add_argument(
        "--progress",
        choices=("bar", "jsonl", "none"),
        default="bar",
        help="progress bars, JSON lines on stderr, or nothing (default: bar)",
    )


def progress_option(args: argparse.Namespace) -> Progress:
    """The ``progress`` argument for the ``--progress`` choice."""
    choices: Dict[str, Progress] = {"bar": True, "jsonl": "jsonl", "none": False}
    return choices[args.progress]


def pretokenizer_option(args: argparse.Namespace) -> Pretokenizer:
    """The pre-tokenizer ``--pretokenizer`` names (default: gpt2), or the ``--pattern``."""
    pattern: Optional[str] = args.pattern
    if pattern is not None:
        return Pattern(pattern)
    return str(args.pretokenizer or "gpt2")


def count_input(args: argparse.Namespace) -> Tuple[WordCounts, str]:
    """Count FILES (or the default corpus); returns the counts and a name for the source."""
    options: Any = dict(
        pretokenizer=pretokenizer_option(args),
        processes=args.processes,
        errors=args.errors,
        progress=progress_option(args),
    )
    if args.files:
        return count(args.files, args.special_token, **options), ", ".join(args.files)
    return count_from_iterator(default_corpus(), args.special_token, **options), DEFAULT_CORPUS
