"""Check that ``tie_break="hf"`` reproduces Hugging Face ``tokenizers``' merges exactly.

For each corpus of the shared corpora (gcide-18m and kjv-5m at vocab 10000, the CS336
fixture at 500) it trains ``tokenizers``' ``BpeTrainer`` the usual way -- ``BPE`` model,
``ByteLevel`` pre-tokenizer without prefix space, the full byte alphabet,
``tokenizer.train([path], trainer)`` with ``<|endoftext|>`` as a special token -- and
purebpe on the same words with ``tie_break="hf"``, then compares the merge lists.

Training on the same words means doing what ``tokenizer.train`` does with a file, found by
experiment (``docs/conformance.md``, "Hugging Face semantics"): it reads the file line by
line, each line with its ``\\n``, so no word spans two lines; and it does not cut the
special tokens out of the text, so ``<|endoftext|>`` is pre-tokenized and counted as
ordinary text (``<|``, ``endoftext``, ``|>``). purebpe gets the lines as its iterator and
no special tokens while counting; the special token still takes one id of the vocabulary.

    python -m bench.check_hf_reproduction [--corpora DIR] [--quick]   # --quick: the fixture alone

Prints one line per corpus (merges equal or the first difference, CPU and wall time of
each side) and exits 1 on a mismatch. CPython only (``tokenizers`` has no PyPy wheels).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Iterator, List, Tuple

import purebpe

from ._harness import Script, Table, corpora_dir, timed
from .hf_trainer_adapter import train_bpe

CASES = [("en-gcide-18m.txt", 10000), ("en-kjv-fortunes-5m.txt", 10000), ("cs336-corpus.en", 500)]
SPECIAL = "<|endoftext|>"
Merges = List[Tuple[bytes, bytes]]

script = Script("check_hf_reproduction", __doc__, rounds=1)
script.option("--corpora", type=Path, default=None, help="the shared corpora directory")


def lines(path: Path) -> Iterator[str]:
    """The file's lines as ``tokenizers`` reads them: split on ``\\n`` only, kept."""
    with open(path, encoding="utf-8", newline="") as stream:
        yield from stream


def purebpe_merges(path: Path, vocab_size: int) -> Merges:
    # The special token is text to tokenizers' trainer but still one id of its vocab.
    model = purebpe.train_from_iterator(lines(path), vocab_size - 1, (), tie_break="hf", processes=1)
    return model.merges


@script.register
def every_corpus(args: argparse.Namespace) -> Table:
    rows = []
    for name, vocab_size in CASES[-1:] if args.quick else CASES:
        path = (args.corpora or corpora_dir()) / name
        if not path.exists():
            print(f"{name}: skipped, not found", file=sys.stderr)
            continue
        (_, theirs), hf_wall, hf_cpu = timed(train_bpe, path, vocab_size, [SPECIAL])
        mine, wall, cpu = timed(purebpe_merges, path, vocab_size)
        if mine == theirs:
            verdict = f"{len(mine)} merges, identical"
        else:
            index = next(
                (i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b), min(len(mine), len(theirs))
            )
            verdict = (
                f"DIFFER at merge {index} of {len(theirs)} (purebpe {len(mine)}): "
                f"tokenizers {theirs[index] if index < len(theirs) else None}, "
                f"purebpe {mine[index] if index < len(mine) else None}"
            )
        rows.append(
            {
                "corpus": name,
                "vocab": vocab_size,
                "merges": verdict,
                "tokenizers wall / CPU s": f"{hf_wall:.1f} / {hf_cpu:.1f}",
                "purebpe (tie_break='hf') wall / CPU s": f"{wall:.1f} / {cpu:.1f}",
            }
        )
    return Table(
        rows,
        title="tie_break='hf' against HF tokenizers' trainer",
        record=False,
        ok=all(row["merges"].endswith("identical") for row in rows),
    )


if __name__ == "__main__":
    sys.exit(script.main())
