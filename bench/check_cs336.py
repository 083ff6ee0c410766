"""Check purebpe against Stanford CS336's reference trainer on its own fixture.

Trains every variant on ``../shared/corpora/cs336-corpus.en`` (vocab 500, special token
``<|endoftext|>``) and compares the merges with ``cs336-reference-merges.txt`` and the
vocab (as a set of byte strings) with ``cs336-reference-vocab.json``. Exits 1 on a mismatch.

    python bench/check_cs336.py [CORPORA_DIR]
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import purebpe
from purebpe.bytemap import decode_token

HERE = Path(__file__).resolve().parent
CORPORA = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parent.parent / "shared" / "corpora"


def main() -> int:
    corpus = CORPORA / "cs336-corpus.en"
    if not corpus.exists():
        print(f"skipped: {corpus} not found")
        return 0
    expected_merges = [
        tuple(decode_token(part) for part in line.split(" "))
        for line in (CORPORA / "cs336-reference-merges.txt").read_text(encoding="utf-8").splitlines()
    ]
    reference_vocab = json.loads((CORPORA / "cs336-reference-vocab.json").read_text(encoding="utf-8"))
    expected_vocab = {
        token.encode("utf-8") if token == "<|endoftext|>" else decode_token(token)
        for token in reference_vocab
    }
    failures = 0
    for variant in purebpe.VARIANTS:
        start = time.perf_counter()
        model = purebpe.train(corpus, 500, ["<|endoftext|>"], variant=variant)
        seconds = time.perf_counter() - start
        merges_ok = model.merges == expected_merges
        vocab_ok = set(model.vocab.values()) == expected_vocab
        failures += not (merges_ok and vocab_ok)
        print(
            f"{variant:12s} merges {'OK ' if merges_ok else 'DIFFER'} "
            f"vocab {'OK ' if vocab_ok else 'DIFFER'} ({len(model.merges)} merges, {seconds:.2f} s)"
        )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
