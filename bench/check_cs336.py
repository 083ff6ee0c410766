"""Check purebpe against Stanford CS336's reference trainer on its own fixture.

Trains every variant on ``cs336-corpus.en`` of the shared corpora (vocab 500, special token
``<|endoftext|>``) and compares the merges with ``cs336-reference-merges.txt`` and the
vocab (as a set of byte strings) with ``cs336-reference-vocab.json``. Exits 1 on a mismatch.

    python -m bench.check_cs336 [--corpora DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import List

import purebpe
from purebpe.bytemap import decode_token

from ._harness import Script, Table, corpora_dir, timed

script = Script("check_cs336", __doc__, rounds=1)
script.option("--corpora", type=Path, default=None, help="the shared corpora directory")


@script.register
def every_variant(args: argparse.Namespace) -> List[Table]:
    corpora = args.corpora or corpora_dir()
    corpus = corpora / "cs336-corpus.en"
    if not corpus.exists():
        print(f"skipped: {corpus} not found", file=sys.stderr)
        return []
    expected_merges = [
        tuple(decode_token(part) for part in line.split(" "))
        for line in (corpora / "cs336-reference-merges.txt").read_text(encoding="utf-8").splitlines()
    ]
    reference_vocab = json.loads((corpora / "cs336-reference-vocab.json").read_text(encoding="utf-8"))
    expected_vocab = {
        token.encode("utf-8") if token == "<|endoftext|>" else decode_token(token)
        for token in reference_vocab
    }
    rows = []
    for variant in purebpe.VARIANTS:
        model, wall, cpu = timed(purebpe.train, corpus, 500, ["<|endoftext|>"], variant=variant)
        rows.append(
            {
                "variant": variant,
                "merges": "OK" if model.merges == expected_merges else "DIFFER",
                "vocab": "OK" if set(model.vocab.values()) == expected_vocab else "DIFFER",
                "learned": len(model.merges),
                "wall s": f"{wall:.2f}",
                "CPU s": f"{cpu:.2f}",
            }
        )
    ok = all(row["merges"] == row["vocab"] == "OK" for row in rows)
    return [Table(rows, title="purebpe against CS336's reference merges and vocab", ok=ok, record=False)]


if __name__ == "__main__":
    sys.exit(script.main())
