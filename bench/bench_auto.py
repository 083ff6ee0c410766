#!/usr/bin/env python3
"""What ``variant="auto"`` should pick: ``bucket`` against ``positional`` on inputs of every shape.

    python3 bench/bench_auto.py --python /tmp/pypyenv/bin/python --vocab-size 2000

For each input below the words are counted once (in this process, saved as a counts file);
then each variant trains from the counts in a fresh subprocess of the interpreter given
(``--python``, default this one), ``--repeat`` times, interleaved, and the median merge time
is reported with its CPU time. The table also gives the shape statistics that the
auto rule (:func:`purebpe.trainers.choose_variant`) reads -- the longest word, and the
bytes of distinct words longer than ``LONG_WORD_BYTES`` -- and what the rule picks on the
interpreter measured, and
``auto / best``: the time of the pick over the time of the faster variant (the goal is
at most 1.25).

Inputs (from ``../shared/corpora``): ``gcide-18m`` and ``kjv-5m`` (GPT-2 pre-tokenizer,
``<|endoftext|>`` special), ``zh-fortunes`` with ``pretokenizer="none"`` (one word per line)
and the same text as one line, ``"a" * 10**6`` (``none``: one word), and 30 MB of base64
without whitespace (GPT-2 pre-tokenizer: runs of letters, digits and ``+/``).
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Dict, List, Tuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import purebpe  # noqa: E402
from purebpe.counting import WordCounts  # noqa: E402
from purebpe.trainers import LONG_WORD_BYTES, choose_variant  # noqa: E402

CORPORA = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora"
VARIANTS = ("bucket", "positional")


def _read(name: str) -> str:
    return (CORPORA / name).read_text(encoding="utf-8")


def _joined_lines(k: int) -> str:
    """zh-fortunes with every ``k`` lines joined into one: words ``k`` times as long."""
    lines = _read("zh-fortunes.txt").split("\n")
    return "\n".join("".join(lines[i : i + k]) for i in range(0, len(lines), k))


def _base64_text() -> str:
    rng = random.Random(0)
    return base64.b64encode(rng.randbytes(30 * 10**6 * 3 // 4)).decode("ascii")


#: name -> (text maker, pretokenizer, special tokens)
INPUTS: Dict[str, Tuple[Callable[[], str], str, List[str]]] = {
    "gcide-18m": (lambda: _read("en-gcide-18m.txt"), "gpt2", ["<|endoftext|>"]),
    "kjv-5m": (lambda: _read("en-kjv-fortunes-5m.txt"), "gpt2", ["<|endoftext|>"]),
    "zh-fortunes lines": (lambda: _read("zh-fortunes.txt"), "none", []),
    "zh-fortunes one line": (lambda: _read("zh-fortunes.txt").replace("\n", ""), "none", []),
    "zh-fortunes 8 lines a word": (lambda: _joined_lines(8), "none", []),
    "zh-fortunes 64 lines a word": (lambda: _joined_lines(64), "none", []),
    "a * 10**6": (lambda: "a" * 10**6, "none", []),
    "base64 30 MB": (_base64_text, "gpt2", []),
}


def child(counts_path: str, variant: str, vocab_size: int) -> None:
    counts = WordCounts.load(counts_path)
    wall, cpu = time.perf_counter(), time.process_time()
    model = purebpe.train_from_counts(counts, vocab_size, variant=variant)
    print(json.dumps({
        "wall": time.perf_counter() - wall,
        "cpu": time.process_time() - cpu,
        "merges": len(model.merges),
        "pick": choose_variant(counts.words),
    }))


def shape(counts: WordCounts) -> Dict[str, int]:
    lengths = [len(word) for word in counts.words]
    return {
        "distinct bytes": sum(lengths),
        "longest word": max(lengths, default=0),
        "long-word bytes": sum(n for n in lengths if n > LONG_WORD_BYTES),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--vocab-size", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--only", nargs="*", default=None, help="input names to run")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], args.child[1], int(args.child[2]))
        return
    print(f"interpreter {args.python}; vocab {args.vocab_size}; load {os.getloadavg()[0]:.2f} at start")
    print("| input | longest word | long-word bytes | bucket s (cpu) | positional s (cpu) | auto picks | auto / best |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (make, pretokenizer, specials) in INPUTS.items():
            if args.only and name not in args.only:
                continue
            counts = purebpe.count_from_iterator([make()], specials, pretokenizer=pretokenizer)
            counts_path = str(Path(tmp) / "counts.tsv.gz")
            counts.save(counts_path)
            stats = shape(counts)
            times: Dict[str, List[Tuple[float, float]]] = {v: [] for v in VARIANTS}
            pick = ""
            for _ in range(args.repeat):
                for variant in VARIANTS:
                    out = subprocess.run(
                        [args.python, __file__, "--child", counts_path, variant, str(args.vocab_size)],
                        check=True, capture_output=True, text=True,
                    ).stdout
                    result = json.loads(out)
                    times[variant].append((result["wall"], result["cpu"]))
                    pick = result["pick"]  # what auto picks on the children's interpreter
            median = {v: statistics.median(w for w, _ in times[v]) for v in VARIANTS}
            cpu = {v: statistics.median(c for _, c in times[v]) for v in VARIANTS}
            ratio = median[pick] / min(median.values())
            print(
                f"| {name} | {stats['longest word']:,} | {stats['long-word bytes']:,} "
                f"| {median['bucket']:.2f} ({cpu['bucket']:.2f}) "
                f"| {median['positional']:.2f} ({cpu['positional']:.2f}) | {pick} | {ratio:.2f} |",
                flush=True,
            )
    print(f"load {os.getloadavg()[0]:.2f} at end")


if __name__ == "__main__":
    main()
