"""What ``purebpe train`` and ``purebpe count`` share: the input options and the counting."""

from __future__ import annotations

import argparse
from typing import Any, Dict, Optional, Sequence, Tuple

from ..corpus import NAME as DEFAULT_CORPUS
from ..corpus import default_corpus
from ..counting import CompactCounts, count, count_compact, count_from_iterator
from ..pretokenize import PRETOKENIZERS, Pattern, Pretokenizer
from ..progress import Progress
from ..readers import LAYOUTS, capped
from ..wordcounts import WordCounts
from ._io import check_stdin_open


def add_input_arguments(parser: argparse.ArgumentParser, format_flag: bool = True) -> None:
    """FILES and the options that say how to read and count them (``--format`` too for the
    input layout, unless the command gives ``--format`` another meaning)."""
    parser.add_argument(
        "files",
        nargs="*",
        metavar="FILE",
        help="text, JSON lines or Parquet files, compressed or not (gzip, bzip2, xz, zstd), "
        f"directories (recursive), globs, or - for stdin (default: {DEFAULT_CORPUS})",
    )
    add_layout_arguments(parser, format_flag)
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
        help="a named pattern: gpt2 (default), cl100k (GPT-4), o200k (GPT-4o, Llama 4), "
        "llama3, qwen, qwen3.5, tekken (Mistral), or none (one word per line)",
    )
    split.add_argument(
        "--pattern",
        metavar="REGEX",
        help="any regular expression instead (needs the regex package); the matches and "
        "the text between them are the words, as in HF's Split(..., 'isolated')",
    )
    add_processes_argument(parser, "count")
    add_errors_and_progress_arguments(parser, records=True)


def add_layout_arguments(parser: argparse.ArgumentParser, format_flag: bool = True) -> None:
    """How to read the inputs: layout, JSON key, Parquet column, and nanochat's caps."""
    flags = ("--format", "--input-format") if format_flag else ("--input-format",)
    parser.add_argument(
        *flags,
        dest="input_format",
        choices=LAYOUTS,
        default="auto",
        help="the inputs' layout: auto (default: by suffix and content), text, jsonl or parquet",
    )
    parser.add_argument(
        "--text-key",
        default="text",
        metavar="KEY",
        help="JSON lines: the key of each record's text, a dotted path for nested records (default: text)",
    )
    parser.add_argument(
        "--column", default="text", metavar="NAME", help="Parquet: the text column (default: text)"
    )
    parser.add_argument(
        "--max-chars",
        type=int,
        default=None,
        metavar="N",
        help="read only the first N characters of the documents, in input order",
    )
    parser.add_argument(
        "--doc-cap", type=int, default=None, metavar="N", help="keep at most N characters of each document"
    )


def add_processes_argument(parser: argparse.ArgumentParser, verb: str) -> None:
    parser.add_argument(
        "--processes",
        type=int,
        default=None,
        metavar="P",
        help=f"{verb} in P processes (default: this machine's cores; the result is the same)",
    )


def add_errors_and_progress_arguments(parser: argparse.ArgumentParser, records: bool = False) -> None:
    """``--errors`` (what to do with bad input) and ``--progress``."""
    parser.add_argument(
        "--errors",
        choices=("strict", "replace", "skip") if records else ("strict", "replace"),
        default="strict",
        help="what to do with bytes that are not UTF-8 (replace: U+FFFD)"
        + (" and with bad records (skip: leave them out, and say how many)" if records else "")
        + " (default: strict, an error)",
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
        return Pattern(pattern, origin="--pattern")
    return str(args.pretokenizer or "gpt2")


def count_input(
    args: argparse.Namespace,
    special_tokens: Optional[Sequence[str]] = None,
    pretokenizer: Optional[Pretokenizer] = None,
) -> Tuple[WordCounts, str]:
    """Count FILES (or the default corpus) with ``special_tokens`` and ``pretokenizer``
    (by default the command line's); returns the counts and a name for the source."""
    specials = args.special_token if special_tokens is None else special_tokens
    options = _count_options(args, pretokenizer)
    if args.files:
        check_stdin_open(args.files)
        counts = count(args.files, specials, **options, **_layout_options(args))
        return counts, describe_files(args.files) + skipped_note(counts.skipped)
    texts = default_corpus()
    if args.max_chars is not None or args.doc_cap is not None:
        texts = [text for text, _ in capped(((t, True) for t in texts), args.doc_cap, args.max_chars)]
    return count_from_iterator(texts, specials, **options), DEFAULT_CORPUS


def count_input_compact(
    args: argparse.Namespace, special_tokens: Sequence[str], pretokenizer: Pretokenizer
) -> Tuple[CompactCounts, str]:
    """:func:`count_input` into :class:`~purebpe.counting.CompactCounts` (SuperBPE's stage 2)."""
    if not args.files:  # the default corpus: small
        words, source = count_input(args, special_tokens, pretokenizer)
        counts = CompactCounts()
        counts.add_counts(words.words)
        return counts, source
    check_stdin_open(args.files)
    options = _count_options(args, pretokenizer)
    counts = count_compact(args.files, special_tokens, **options, **_layout_options(args))
    return counts, describe_files(args.files) + skipped_note(counts.skipped)


def _count_options(args: argparse.Namespace, pretokenizer: Optional[Pretokenizer]) -> Any:
    return dict(
        pretokenizer=pretokenizer_option(args) if pretokenizer is None else pretokenizer,
        processes=args.processes,
        errors=args.errors,
        progress=progress_option(args),
    )


def _layout_options(args: argparse.Namespace) -> Any:
    return dict(
        format=args.input_format,
        text_key=args.text_key,
        column=args.column,
        max_chars=args.max_chars,
        doc_cap=args.doc_cap,
    )


#: A summary names this many input files; the rest are counted.
NAMED_FILES = 3


def describe_files(files: Sequence[str]) -> str:
    """The input files for a summary line: a few names, then how many more.

    >>> describe_files(["a.txt", "b.txt", "c.txt", "d.txt", "e.txt"])
    'a.txt, b.txt, c.txt and 2 more files (5 in all)'
    """
    if len(files) <= NAMED_FILES + 1:
        return ", ".join(files)
    named = ", ".join(files[:NAMED_FILES])
    return f"{named} and {len(files) - NAMED_FILES:,} more files ({len(files):,} in all)"


def skipped_note(skipped: int) -> str:
    """`` (skipped N bad records)`` for a summary, or nothing."""
    return f" (skipped {skipped:,} bad record{'s' if skipped != 1 else ''})" if skipped else ""
