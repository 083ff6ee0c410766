"""``purebpe conformance``: run the conformance suite on any BPE implementation.

``purebpe conformance mypackage.bpe:train_bpe`` imports the callable (the current
directory is on the import path, as with ``python -m``), runs every property of its kind
(:mod:`purebpe.testing.checks`) and prints a Markdown table -- property, pass/FAIL, the
counterexample -- then each failure's full report with a runnable snippet. Exit status 1
when a property fails, 0 when all pass, 2 when the callable cannot be imported.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, List

from ..errors import PureBPEError

#: Characters of a counterexample shown in the table (the full one follows it).
CELL_CHARS = 110


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "conformance",
        help="check a BPE trainer, tokenizer or masker against purebpe's properties",
        description=(
            "Run purebpe's property-based conformance suite (Hypothesis) on MODULE:CALLABLE "
            "and print a table of the properties with pass/FAIL and minimal counterexamples."
        ),
    )
    parser.add_argument("target", metavar="MODULE:CALLABLE", help="e.g. mypackage.bpe:train_bpe")
    parser.add_argument(
        "--kind",
        choices=("trainer", "counts-trainer", "tokenizer", "masker"),
        default="trainer",
        help=(
            "trainer: train_bpe(input_path, vocab_size, special_tokens) -> (vocab, merges); "
            "tokenizer: factory(vocab, merges, special_tokens); "
            "masker: mask_scheme(rng, seq_len) (default: trainer)"
        ),
    )
    parser.add_argument(
        "--semantics",
        choices=("cs336", "purebpe", "hf"),
        default="cs336",
        help="trainers: cs336 compares the vocab as a set of bytes (default), purebpe the exact ids, "
        "hf Hugging Face tokenizers' rules",
    )
    parser.add_argument(
        "--max-examples",
        type=int,
        default=50,
        metavar="N",
        help="Hypothesis examples per property (default 50)",
    )
    parser.add_argument(
        "--progress", choices=("bar", "none"), default="bar", help="a progress bar on stderr (default: bar)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        from ..testing.checks import conformance
        from ..testing.harness import default_settings, load_callable
    except ImportError as exc:
        raise PureBPEError(
            f"purebpe conformance needs hypothesis ({exc}); pip install 'purebpe[test]'"
        ) from None
    if args.max_examples < 1:
        raise PureBPEError(f"--max-examples must be at least 1, not {args.max_examples}")
    fn = load_callable(args.target)
    print(
        f"purebpe conformance: {args.target} as a {args.kind}"
        + (f" ({args.semantics} semantics)" if args.kind.endswith("trainer") else "")
        + f", {args.max_examples} examples per property\n"
    )
    sys.stdout.flush()
    outcomes = conformance(
        args.kind,
        fn,
        semantics=args.semantics,
        settings=default_settings(args.max_examples),
        progress=args.progress == "bar",
    )
    lines = ["| property | result | counterexample |", "| --- | --- | --- |"]
    for outcome in outcomes:
        lines.append(
            f"| {outcome.name} | {'pass' if outcome.passed else 'FAIL'} | {_cell(outcome.summary())} |"
        )
    failed = [outcome for outcome in outcomes if not outcome.passed]
    reports: List[str] = [f"\n### {outcome.name}\n\n```text\n{outcome.report()}\n```" for outcome in failed]
    print("\n".join(lines + reports))
    print(f"\n{len(outcomes) - len(failed)} of {len(outcomes)} properties pass")
    return 1 if failed else 0


def _cell(text: str) -> str:
    """``text`` fit for one Markdown table cell: one line, pipes escaped, shortened."""
    flat = text.replace("\n", " ")
    if len(flat) > CELL_CHARS:
        flat = flat[: CELL_CHARS - 3] + "..."
    return flat.replace("|", "\\|")
