#!/usr/bin/env python3
"""SuperBPE against BPE: compression on held-out text, and stage 2's time and memory.

Run from the repository root (CPython; ``--pypy`` adds purebpe on PyPy)::

    python3 bench/bench_superbpe.py --pypy .tox/pypy3/bin/python

Every run is a fresh subprocess (this script re-invoked with ``--child``), so that its peak
RSS is its own. For each vocabulary size and transition point (50 %, 80 %, 90 % of the
merges) purebpe trains SuperBPE on the training corpus and encodes the held-out corpus;
plain BPE at the same size is the baseline. HF ``tokenizers`` cannot continue from merges,
so its row is the closest like-for-like: a from-scratch training with the same stage-2
``Split`` (one thread, ``TOKENIZERS_PARALLELISM=false``), against purebpe's stage 2 alone.
Wall and CPU seconds are both recorded: the machine may be shared.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "corpora"
sys.path.insert(0, str(ROOT / "bench"))


def peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child(spec: Dict[str, Any]) -> Dict[str, Any]:
    sys.path.insert(0, str(ROOT))
    import purebpe
    from purebpe.superbpe import STAGE2_PATTERN, extend_superbpe

    train_path, vocab = spec["train"], spec["vocab"]
    result: Dict[str, Any] = {}
    began, cpu = time.perf_counter(), time.process_time()
    if spec["tool"] == "hf":
        from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

        tokenizer = Tokenizer(models.BPE())
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(STAGE2_PATTERN), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
        trainer = trainers.BpeTrainer(
            vocab_size=vocab, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False
        )
        tokenizer.train([train_path], trainer)
        result["stage2_s"] = time.perf_counter() - began
        result["stage2_cpu_s"] = time.process_time() - cpu
    else:
        transition = spec["transition"]
        model = purebpe.train(train_path, 256 + (vocab - 256 if transition is None else transition))
        result["stage1_s"] = time.perf_counter() - began
        if transition is not None:
            middle, middle_cpu = time.perf_counter(), time.process_time()
            model = extend_superbpe(train_path, vocab, model)
            result["stage2_s"] = time.perf_counter() - middle
            result["stage2_cpu_s"] = time.process_time() - middle_cpu
        result["peak_rss_mb"] = peak_rss_mb()
        held_out = Path(spec["held_out"]).read_text(encoding="utf-8")
        ids = model.tokenizer().encode(held_out)
        result["bytes_per_token"] = len(held_out.encode("utf-8")) / len(ids)
    result.setdefault("peak_rss_mb", peak_rss_mb())
    return result


def run(python: str, spec: Dict[str, Any], timeout: float) -> Dict[str, Any]:
    env = dict(os.environ, TOKENIZERS_PARALLELISM="false", RAYON_NUM_THREADS="1")
    try:
        proc = subprocess.run(
            [python, __file__, "--child", json.dumps(spec)],
            capture_output=True, text=True, env=env, timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout:.0f} s"}
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip().splitlines() or ["failed"])[-1][:100]}
    result: Dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def fmt(value: Optional[float], digits: int = 2) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--child")
    parser.add_argument("--train", default=str(SHARED / "en-gcide-18m.txt"))
    parser.add_argument("--held-out", default=str(SHARED / "en-kjv-fortunes-5m.txt"))
    parser.add_argument("--vocab", type=int, default=10_000)
    parser.add_argument("--transitions", default="0.5,0.8,0.9", help="fractions of the merges")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--pypy", help="also run purebpe on this PyPy")
    parser.add_argument("--timeout", type=float, default=1800)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(json.loads(args.child))))
        return

    merges = args.vocab - 256
    base = {"train": args.train, "held_out": args.held_out, "vocab": args.vocab}
    interpreters = [("CPython", args.python)] + ([("PyPy", args.pypy)] if args.pypy else [])
    load = os.getloadavg()[0]
    rows: List[str] = []
    for label, python in interpreters:
        plain = run(python, dict(base, tool="purebpe", transition=None), args.timeout)
        rows.append(
            f"| purebpe BPE | {label} | - | {fmt(plain.get('stage1_s'))} | | | "
            f"{fmt(plain.get('peak_rss_mb'), 0)} | {fmt(plain.get('bytes_per_token'), 3)} | 1.00x |"
            if "error" not in plain else f"| purebpe BPE | {label} | - | {plain['error']} | | | | | |"
        )
        for fraction in map(float, args.transitions.split(",")):
            transition = int(merges * fraction)
            result = run(python, dict(base, tool="purebpe", transition=transition), args.timeout)
            if "error" in result:
                rows.append(f"| purebpe SuperBPE | {label} | {fraction:.0%} | {result['error']} | | | | | |")
                continue
            fewer = plain["bytes_per_token"] / result["bytes_per_token"] if "error" not in plain else None
            rows.append(
                f"| purebpe SuperBPE | {label} | {fraction:.0%} ({transition}) | {fmt(result['stage1_s'])} | "
                f"{fmt(result['stage2_s'])} | {fmt(result['stage2_cpu_s'])} | {fmt(result['peak_rss_mb'], 0)} | "
                f"{fmt(result['bytes_per_token'], 3)} | {fmt(fewer)}x |"
            )
            print(rows[-1], file=sys.stderr, flush=True)
    hf = run(args.python, dict(base, tool="hf"), args.timeout)
    rows.append(
        f"| HF tokenizers, stage-2 Split from scratch, 1 thread | CPython | - | | {fmt(hf.get('stage2_s'))} | "
        f"{fmt(hf.get('stage2_cpu_s'))} | {fmt(hf.get('peak_rss_mb'), 0)} | | |"
        if "error" not in hf else f"| HF tokenizers | CPython | - | {hf['error']} | | | | | |"
    )
    table = "\n".join(
        [
            "| tokenizer | interpreter | transition | stage 1 s | stage 2 s | stage 2 CPU s | peak RSS MB "
            "| held-out bytes/token | tokens vs BPE |",
            "|---|---|---|---:|---:|---:|---:|---:|---:|",
        ]
        + rows
    )
    title = (
        f"SuperBPE vs BPE, vocab {args.vocab}: trained on {Path(args.train).name}, "
        f"encoding {Path(args.held_out).name}"
    )
    print(f"\n{title} (load average {load:.1f} at the start)\n\n{table}")
    from _results import record

    record(
        "bench_superbpe",
        table,
        interpreter="all",
        title=title,
        notes=f"Load average {load:.1f} at the start; one run each; 'tokens vs BPE' is SuperBPE's "
        "token count on the held-out text over plain BPE's at the same size (0.80x: 20 % fewer).",
    )


if __name__ == "__main__":
    main()
