"""What ``variant="auto"`` should pick: ``bucket`` against ``positional`` on inputs of every shape.

    python -m bench.bench_auto --pypy /work/pypy-venv/bin/python --vocab-size 2000

For each input below the words are counted once (in this process, saved as a counts file);
then each variant trains from the counts in a child process of the interpreter given
(``--pypy``, else ``--python``), ``--rounds`` times, interleaved, and the median merge time
is reported with its CPU time. The table also gives the shape statistics that the
auto rule (:func:`purebpe.trainers.choose_variant`) reads -- the longest word, and the
bytes of distinct words longer than ``LONG_WORD_BYTES`` -- and what the rule picks on the
interpreter measured, and ``auto / best``: the time of the pick over the time of the
faster variant (the goal is at most 1.25).

Inputs (from the shared corpora): ``gcide-18m`` and ``kjv-5m`` (GPT-2 pre-tokenizer,
``<|endoftext|>`` special), ``zh-fortunes`` with ``pretokenizer="none"`` (one word per line)
and the same text as one line, ``"a" * 10**6`` (``none``: one word), and 30 MB of base64
without whitespace (GPT-2 pre-tokenizer: runs of letters, digits and ``+/``). ``--quick``
runs the small ones, cut to their first 256 KB (``"a" * 10**4``, 1 MB of base64).
"""

from __future__ import annotations

import argparse
import base64
import random
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import purebpe
from purebpe.counting import WordCounts
from purebpe.trainers import LONG_WORD_BYTES, choose_variant

from ._harness import Script, Table, corpus_path, interpreter_label, run_child, timed

VARIANTS = ("bucket", "positional")

script = Script("bench_auto", __doc__, rounds=1, interpreters=True)
script.option("--vocab-size", type=int, default=2000)
script.option("--inputs", action="append", default=[], help="input names to run (repeatable)")


def read(name: str, quick: bool) -> str:
    return corpus_path(name, quick=quick).read_text(encoding="utf-8")


def joined_lines(k: int, quick: bool) -> str:
    """zh-fortunes with every ``k`` lines joined into one: words ``k`` times as long."""
    lines = read("zh-fortunes.txt", quick).split("\n")
    return "\n".join("".join(lines[i : i + k]) for i in range(0, len(lines), k))


def base64_text(quick: bool) -> str:
    rng = random.Random(0)
    return base64.b64encode(rng.randbytes((1 if quick else 30) * 10**6 * 3 // 4)).decode("ascii")


#: name -> (text maker, pretokenizer, special tokens, in --quick)
INPUTS: Dict[str, Tuple[Callable[[bool], str], str, List[str], bool]] = {
    "gcide-18m": (lambda q: read("en-gcide-18m.txt", q), "gpt2", ["<|endoftext|>"], False),
    "kjv-5m": (lambda q: read("en-kjv-fortunes-5m.txt", q), "gpt2", ["<|endoftext|>"], True),
    "zh-fortunes lines": (lambda q: read("zh-fortunes.txt", q), "none", [], True),
    "zh-fortunes one line": (lambda q: read("zh-fortunes.txt", q).replace("\n", ""), "none", [], True),
    "zh-fortunes 8 lines a word": (lambda q: joined_lines(8, q), "none", [], False),
    "zh-fortunes 64 lines a word": (lambda q: joined_lines(64, q), "none", [], False),
    "a * 10**6": (lambda q: "a" * 10 ** (4 if q else 6), "none", [], True),
    "base64 30 MB": (base64_text, "gpt2", [], True),
}


@script.child
def train(spec: Dict[str, Any]) -> Dict[str, Any]:
    counts = WordCounts.load(spec["counts"])
    model, wall, cpu = timed(purebpe.train_from_counts, counts, spec["vocab_size"], variant=spec["variant"])
    return {"wall": wall, "cpu": cpu, "merges": len(model.merges), "pick": choose_variant(counts.words)}


@script.register
def auto_choice(args: argparse.Namespace) -> Table:
    python = args.pypy or args.python
    vocab_size = 500 if args.quick else args.vocab_size
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (make, pretokenizer, specials, in_quick) in INPUTS.items():
            if (args.inputs and name not in args.inputs) or (args.quick and not in_quick):
                continue
            counts = purebpe.count_from_iterator([make(args.quick)], specials, pretokenizer=pretokenizer)
            spec = {"counts": str(Path(tmp) / "counts.tsv.gz"), "vocab_size": vocab_size}
            counts.save(spec["counts"])
            lengths = [len(word) for word in counts.words]
            runs: Dict[str, List[Dict[str, Any]]] = {v: [] for v in VARIANTS}
            for _ in range(args.rounds):
                for variant in VARIANTS:
                    runs[variant].append(
                        run_child("bench.bench_auto", dict(spec, variant=variant), python=python)
                    )
            wall = {v: statistics.median(r["wall"] for r in runs[v]) for v in VARIANTS}
            cpu = {v: statistics.median(r["cpu"] for r in runs[v]) for v in VARIANTS}
            pick = runs[VARIANTS[0]][0]["pick"]  # what auto picks on the children's interpreter
            rows.append(
                {
                    "input": name,
                    "longest word": f"{max(lengths, default=0):,}",
                    "long-word bytes": f"{sum(n for n in lengths if n > LONG_WORD_BYTES):,}",
                    **{f"{v} s (cpu)": f"{wall[v]:.2f} ({cpu[v]:.2f})" for v in VARIANTS},
                    "auto picks": pick,
                    "auto / best": f"{wall[pick] / min(wall.values()):.2f}",
                }
            )
            print(rows[-1], file=sys.stderr, flush=True)
    return Table(
        rows,
        title=f"variant='auto': bucket vs positional, vocab {vocab_size}, on {interpreter_label(python)}",
        notes=f"merge phase alone, median of {args.rounds} interleaved rounds, each in a fresh process",
        interpreter=interpreter_label(python),
    )


if __name__ == "__main__":
    sys.exit(script.main())
