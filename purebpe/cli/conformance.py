"""``purebpe conformance``: run the conformance suite on any BPE implementation.

``purebpe conformance mypackage.bpe:train_bpe`` imports the callable (the current
directory is on the import path, as with ``python -m``), runs every property of its kind
(:mod:`purebpe.testing.checks`) and prints a Markdown table -- property, pass/FAIL, the
counterexample -- then each failure's full report with a runnable snippet. Exit status 1
when a property fails, 0 when all pass, 2 when the callable cannot be imported.

``purebpe conformance --encoder mypackage.tok:encode --tokenizer FILE`` checks an encoder
(``encode(text) -> ids``) against purebpe's reading of a tokenizer file
(:func:`purebpe.testing.checks.check_encoder`), stopping at the first failing property.
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
    parser.add_argument("target", metavar="MODULE:CALLABLE", nargs="?", help="e.g. mypackage.bpe:train_bpe")
    parser.add_argument(
        "--encoder",
        metavar="MODULE:CALLABLE",
        help="check encode(text) -> ids against purebpe's reading of --tokenizer FILE",
    )
    parser.add_argument(
        "--tokenizer",
        metavar="FILE",
        help="with --encoder: the tokenizer file (HF tokenizer.json, tiktoken ranks, Tekken, ...)",
    )
    parser.add_argument(
        "--add-special-tokens",
        action="store_true",
        help="with --encoder: the encoder adds BOS/EOS as the tokenizer.json's post-processor does",
    )
    parser.add_argument(
        "--encoding",
        metavar="NAME",
        help="with --encoder and a tiktoken-format rank file: the model it belongs to (llama3, qwen, ...)",
    )
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
    if args.encoder is not None or args.target is None:
        return _run_encoder(args)
    if args.tokenizer is not None or args.add_special_tokens or args.encoding is not None:
        raise PureBPEError(
            "--tokenizer is for --encoder MODULE:CALLABLE (a trainer, tokenizer or masker takes none)"
        )
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
    return _report(outcomes)


def _run_encoder(args: argparse.Namespace) -> int:
    from ..testing.checks import encoder_conformance
    from ..testing.harness import default_settings, load_callable

    if args.encoder is None and args.tokenizer is not None:
        raise PureBPEError("--tokenizer is for --encoder MODULE:CALLABLE: name the encoder to check")
    if args.encoder is None:
        raise PureBPEError(
            "name the implementation: MODULE:CALLABLE, or --encoder MODULE:CALLABLE --tokenizer FILE"
        )
    if args.target is not None:
        raise PureBPEError(f"give MODULE:CALLABLE ({args.target}) or --encoder, not both")
    if args.tokenizer is None:
        raise PureBPEError("--encoder needs --tokenizer FILE (the tokenizer file it encodes with)")
    fn = load_callable(args.encoder)
    options = {} if args.encoding is None else {"encoding": args.encoding}
    from ..testing.encoder_checks import load_reference

    reference = load_reference(args.tokenizer, args.add_special_tokens, **options)
    print(
        f"purebpe conformance: {args.encoder} as an encoder of {args.tokenizer}"
        + (" (with BOS/EOS)" if args.add_special_tokens else "")
        + f", {args.max_examples} examples per property\n"
    )
    sys.stdout.flush()
    outcomes = encoder_conformance(
        fn,
        reference,
        add_special_tokens=args.add_special_tokens,
        settings=default_settings(args.max_examples),
        progress=args.progress == "bar",
    )
    return _report(outcomes)


def _report(outcomes: List[Any]) -> int:
    """Print the outcomes as a table and each failure's report; the exit status."""
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
