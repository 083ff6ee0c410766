"""SuperBPE against BPE: compression on held-out text, and stage 2's time and memory.

Run from the repository root (CPython; ``--pypy`` adds purebpe on PyPy, and the compiled
build of this CPython runs too unless ``--no-compiled``)::

    python -m bench.bench_superbpe --pypy /work/pypy-venv/bin/python

Every run is a child process (this script re-run with ``--child``), so that its peak RSS
is its own. For each transition point (50 %, 80 %, 90 % of the merges) purebpe trains
SuperBPE on the training corpus and encodes the held-out corpus; plain BPE at the same
size is the baseline. HF ``tokenizers`` cannot continue from merges, so its row is the
closest like-for-like: a from-scratch training with the same stage-2 ``Split`` (one
thread, ``TOKENIZERS_PARALLELISM=false``), against purebpe's stage 2 alone. Wall and CPU
seconds are both recorded: the machine may be shared. A run that fails or runs over
``--timeout`` shows why in its row.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Mapping, Optional, Tuple

from ._harness import (
    ChildFailed,
    Script,
    Table,
    corpus_path,
    fmt,
    peak_rss_mb,
    run_child,
    timed,
)
from .hf_trainer_adapter import hf_trainer

script = Script("bench_superbpe", __doc__, rounds=1, interpreters=True)
script.option("--train", default="en-gcide-18m.txt")
script.option("--held-out", default="en-kjv-fortunes-5m.txt")
script.option("--vocab", type=int, default=10_000)
script.option("--transitions", default="0.5,0.8,0.9", help="fractions of the merges")
script.option("--timeout", type=float, default=1800)
script.option("--cli-corpus", default="linux-100m.txt", help="the corpus of the whole-run measurement")
script.option("--cli-vocab", type=int, default=32_000)
script.option("--cli-transition", type=float, default=0.8, help="a fraction of the merges")
script.option("--nursery", default="4MB", help="PYPY_GC_NURSERY of the PyPy runs ('default': unset)")
script.option("--peer-rounds", type=int, default=1, help="rounds of HF's run in superbpe_whole_run")


@script.child
def child(spec: Dict[str, Any]) -> Dict[str, Any]:
    import purebpe
    from purebpe.superbpe import STAGE2_PATTERN, extend_superbpe

    train_path, vocab = spec["train"], spec["vocab"]
    if spec["tool"] == "hf":
        tokenizer, trainer = hf_trainer(vocab, spec.get("specials", []), split=STAGE2_PATTERN)
        _, wall, cpu = timed(tokenizer.train, [train_path], trainer)
        return {"stage2_s": wall, "stage2_cpu_s": cpu}
    if spec["tool"] == "cli":  # the whole `purebpe train --superbpe`, as a user runs it
        import tempfile

        from purebpe.cli import main

        arguments = ["train", train_path, "--vocab-size", str(vocab), "--superbpe"]
        arguments += ["--transition", str(spec["transition"]), "--special-token", "<|endoftext|>"]
        with tempfile.TemporaryDirectory() as out:
            _, wall, cpu = timed(main, [*arguments, "--progress", "none", "-o", out])
        workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        return {"wall_s": wall, "cpu_s": cpu, "workers_peak_rss_mb": workers}
    transition = spec["transition"]
    began = time.perf_counter()
    model = purebpe.train(train_path, 256 + (vocab - 256 if transition is None else transition))
    result: Dict[str, Any] = {"stage1_s": time.perf_counter() - began}
    if transition is not None:
        model, result["stage2_s"], result["stage2_cpu_s"] = timed(extend_superbpe, train_path, vocab, model)
    result["peak_rss_mb"] = peak_rss_mb()  # before encoding the held-out text
    held_out = Path(spec["held_out"]).read_text(encoding="utf-8")
    result["bytes_per_token"] = len(held_out.encode("utf-8")) / len(model.tokenizer().encode(held_out))
    return result


@script.register
def superbpe_vs_bpe(args: argparse.Namespace) -> Table:
    vocab = 1000 if args.quick else args.vocab
    train, held_out = (corpus_path(name, quick=args.quick) for name in (args.train, args.held_out))
    base = {"train": str(train), "held_out": str(held_out), "vocab": vocab}
    fractions = [float(f) for f in args.transitions.split(",")][: 1 if args.quick else None]

    def run(python: str, compiled: Optional[Path] = None, **spec: Any) -> Dict[str, Any]:
        env = {"TOKENIZERS_PARALLELISM": "false", "RAYON_NUM_THREADS": "1"}
        try:
            return run_child(
                "bench.bench_superbpe",
                dict(base, **spec),
                python=python,
                env=env,
                timeout=args.timeout,
                compiled=compiled,
            )
        except ChildFailed as failure:
            print(failure, file=sys.stderr)
            return failure.row()

    def row(
        tokenizer: str, label: str, transition: str, result: Dict[str, Any], fewer: Optional[float]
    ) -> None:
        if "error" in result:
            rows.append(
                {
                    "tokenizer": tokenizer,
                    "interpreter": label,
                    "transition": transition,
                    "stage 1 s": result["error"],
                }
            )
            return
        rows.append(
            {
                "tokenizer": tokenizer,
                "interpreter": label,
                "transition": transition,
                "stage 1 s": fmt(result.get("stage1_s")),
                "stage 2 s": fmt(result.get("stage2_s")),
                "stage 2 CPU s": fmt(result.get("stage2_cpu_s")),
                "peak RSS MB": fmt(result.get("peak_rss_mb"), 0),
                "held-out bytes/token": fmt(result.get("bytes_per_token"), 3),
                "tokens vs BPE": fmt(fewer) + "x" if fewer is not None else "",
            }
        )
        print(rows[-1], file=sys.stderr, flush=True)

    rows: List[Dict[str, Any]] = []
    interpreters: List[Tuple[str, str, Optional[Path]]] = [("CPython", args.python, None)]
    if args.compiled:
        interpreters.append(("CPython-compiled", args.python, args.compiled))
    if args.pypy:
        interpreters.append(("PyPy", args.pypy, None))
    for label, python, compiled in interpreters:
        plain = run(python, compiled, tool="purebpe", transition=None)
        row("purebpe BPE", label, "-", plain, 1.0)
        for fraction in fractions:
            transition = int((vocab - 256) * fraction)
            result = run(python, compiled, tool="purebpe", transition=transition)
            fewer = (
                plain["bytes_per_token"] / result["bytes_per_token"]
                if "error" not in plain and "error" not in result
                else None
            )
            row("purebpe SuperBPE", label, f"{fraction:.0%} ({transition})", result, fewer)
    row(
        "HF tokenizers, stage-2 Split from scratch, 1 thread",
        "CPython",
        "-",
        run(args.python, tool="hf"),
        None,
    )
    return Table(
        rows,
        interpreter="all",
        title=f"SuperBPE vs BPE, vocab {vocab}: trained on {train.name}, encoding {held_out.name}",
        notes="One run each; 'tokens vs BPE' is SuperBPE's token count on the held-out text over plain "
        "BPE's at the same size (0.80x: 20 % fewer).",
    )


@script.register
def superbpe_whole_run(args: argparse.Namespace) -> Table:
    """Peak memory and time of the whole ``purebpe train --superbpe`` (stage 1, stage 2, the
    summary) on PyPy, the compiled build and CPython, against HF ``tokenizers``' stage 2
    alone (from scratch, the stage-2 split, one thread): median of ``--rounds`` fresh
    processes each (HF: ``--peer-rounds``)."""
    corpus = corpus_path(args.cli_corpus, quick=args.quick)
    vocab = 2000 if args.quick else args.cli_vocab
    transition = int((vocab - 257) * args.cli_transition)
    size_mb = corpus.stat().st_size / 1e6
    base = {"train": str(corpus), "vocab": vocab, "transition": transition, "specials": ["<|endoftext|>"]}
    single = {"TOKENIZERS_PARALLELISM": "false", "RAYON_NUM_THREADS": "1"}
    command = "purebpe train --superbpe"
    runs: List[Tuple[str, str, str, str, Optional[Path]]] = []
    if args.pypy:
        runs.append((command, "PyPy", args.pypy, "cli", None))
    if args.compiled:
        runs.append((command, "CPython-compiled", args.python, "cli", args.compiled))
    runs.append((command, "CPython", args.python, "cli", None))
    runs.append(("HF tokenizers, stage-2 Split from scratch, 1 thread", "CPython", args.python, "hf", None))
    rows: List[Mapping[str, Any]] = []
    for tool, label, python, kind, compiled in runs:
        env = dict(single)
        if label == "PyPy" and args.nursery != "default":
            env["PYPY_GC_NURSERY"] = args.nursery
        results = []
        for _ in range(args.rounds if kind == "cli" else args.peer_rounds):
            try:
                spec = dict(base, tool=kind)
                result = run_child("bench.bench_superbpe", spec, python=python, env=env, compiled=compiled)
                results.append(result)
            except ChildFailed as failure:
                print(failure, file=sys.stderr)
                results.append(failure.row())
        good = [r for r in results if "error" not in r]
        if not good:
            rows.append({"tool": tool, "interpreter": label, "wall s": results[-1]["error"]})
            continue
        wall = statistics.median(r["wall_s"] if kind == "cli" else r["stage2_s"] for r in good)
        cpu = statistics.median(r["child_cpu_s"] for r in good)
        peak = statistics.median(r["peak_rss_mb"] for r in good)
        rows.append(
            {
                "tool": tool,
                "interpreter": label
                + (f" (GC nursery {env['PYPY_GC_NURSERY']})" if "PYPY_GC_NURSERY" in env else ""),
                "rounds": len(good),
                "wall s": fmt(wall, 1),
                "CPU s (with workers)": fmt(cpu, 1),
                "peak RSS MB": fmt(peak, 0),
                "x corpus": fmt(peak * (1 << 20) / 1e6 / size_mb, 1),
                "workers' peak RSS MB": fmt(
                    statistics.median(r.get("workers_peak_rss_mb", 0) for r in good), 0
                )
                if kind == "cli"
                else "",
            }
        )
        print(rows[-1], file=sys.stderr, flush=True)
    return Table(
        rows,
        suffix="_whole_run",
        interpreter="all",
        plot={"label": "tool", "value": "peak RSS MB", "xlabel": "peak RSS (MiB)"},
        title=f"purebpe train --superbpe on {corpus.name} ({size_mb:.0f} MB) -> {vocab}, "
        f"transition {transition}",
        notes="Median of the rounds, each a fresh process; peak RSS of the process that trains (counting "
        "workers apart, their largest in its own column); HF's row is its stage 2 alone. The machine was "
        "shared with other jobs: compare CPU seconds rather than wall.",
    )


if __name__ == "__main__":
    sys.exit(script.main())
