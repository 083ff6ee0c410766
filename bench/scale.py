#!/usr/bin/env python3
"""The scaling benchmark: every trainer at 18 MB, 100 MB and 1 GB, time and memory by size.

Run from the repository root (PyPy found as ``--pypy``, ``$PUREBPE_PYPY`` or ``pypy3``)::

    python3 bench/scale.py --pypy .tox/pypy3/bin/python            # all three sizes
    python3 bench/scale.py --sizes 18m,100m --timeout 600           # a quicker look

The corpora: ``en-gcide-18m.txt`` (English, vocabulary 10 000) from ``../shared/corpora``,
and 100 MB and 1 GB of the Linux source (vocabulary 32 000), built once and
deterministically by ``../shared/corpora/make-linux-corpus.sh`` into
``~/.cache/purebpe-corpora`` (this script runs it when they are missing). Each size is one
run of ``bench/compare_peers.py`` with the GPT-2 pattern: purebpe ``auto`` on CPython and
PyPy with 1 and 2 counting processes, HF ``tokenizers`` and ``rustbpe`` on 1 and 2 threads,
and ``bpeasy``; each contender in a fresh process, recording wall and CPU seconds and peak
RSS (its counting processes' CPU included). A contender over ``--timeout`` or not installed
is listed as skipped, never left out. The figures go into ``bench/results`` (one table per
size, ``scale_*``) and two log-log plots, time and peak memory against corpus size, into
``docs/img``. A row whose CPU time is well below its wall time on one thread ran on a busy
machine: compare such rows with care.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED = ROOT.parent / "shared" / "corpora"
CACHE = Path.home() / ".cache" / "purebpe-corpora"

#: size label -> (corpus path, vocabulary size, megabytes for the plots)
SIZES: Dict[str, Tuple[Path, int, float]] = {
    "18m": (SHARED / "en-gcide-18m.txt", 10_000, 18.0),
    "100m": (CACHE / "linux-100m.txt", 32_000, 100.0),
    "1g": (CACHE / "linux-1g.txt", 32_000, 1000.7),
}


def ensure_linux_corpus() -> None:
    if (CACHE / "linux-1g.txt").exists() and (CACHE / "linux-100m.txt").exists():
        return
    script = SHARED / "make-linux-corpus.sh"
    print(f"building the Linux corpora with {script} (once) ...", file=sys.stderr)
    subprocess.run(["bash", str(script), str(CACHE)], check=True)


def run_size(label: str, args: argparse.Namespace, markdown: Path) -> None:
    path, vocab, _ = SIZES[label]
    command = [
        sys.executable, str(HERE / "compare_peers.py"), "--corpus", str(path),
        "--vocab", str(vocab), "--variants", "auto", "--processes", "1,2", "--bpeasy",
        "--timeout", str(args.timeout), "--markdown", str(markdown), "--no-record",
    ]
    if args.pypy:
        command += ["--pypy", args.pypy]
    subprocess.run(command, check=False)


def rows_of(markdown: Path) -> List[Dict[str, str]]:
    lines = [line for line in markdown.read_text().splitlines() if line.startswith("| ")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    return [dict(zip(header, (c.strip() for c in line.strip("|").split("|")))) for line in lines[1:]]


def plot(results: Dict[str, List[Dict[str, str]]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    for column, name, ylabel in (
        ("total s", "time", "wall seconds"),
        ("peak RSS MB", "memory", "peak RSS, MB"),
    ):
        series: Dict[str, List[Tuple[float, float]]] = {}
        for label, rows in results.items():
            for row in rows:
                try:
                    value = float(row[column])
                except (KeyError, ValueError):
                    continue  # a skipped contender: no point
                series.setdefault(f"{row['contender']} ({row['interpreter']})", []).append(
                    (SIZES[label][2], value)
                )
        figure, axes = plt.subplots(figsize=(8, 5))
        for contender, points in sorted(series.items()):
            xs, ys = zip(*sorted(points))
            axes.plot(xs, ys, marker="o", label=contender)
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.set_xlabel("corpus size, MB")
        axes.set_ylabel(ylabel)
        axes.set_title(f"Training to 10 000 (18 MB) / 32 000 tokens: {ylabel} by corpus size")
        axes.legend(fontsize=7)
        figure.tight_layout()
        target = ROOT / "docs" / "img" / f"bench-scale-{name}.png"
        figure.savefig(target, dpi=90)
        print(f"wrote {target}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="18m,100m,1g")
    parser.add_argument("--pypy", default=os.environ.get("PUREBPE_PYPY", "pypy3"))
    parser.add_argument("--timeout", type=float, default=900, help="seconds per run")
    args = parser.parse_args()
    labels = args.sizes.split(",")
    if any(label != "18m" for label in labels):
        ensure_linux_corpus()
    sys.path.insert(0, str(HERE))
    from _results import record

    results: Dict[str, List[Dict[str, str]]] = {}
    for label in labels:
        markdown = Path(f"/tmp/purebpe-scale-{label}.md")
        run_size(label, args, markdown)
        results[label] = rows_of(markdown)
        path, vocab, _ = SIZES[label]
        record(
            f"scale_{label}",
            results[label],
            interpreter="all",
            title=f"Scaling: {path.name} ({label}) to {vocab} tokens, GPT-2 pattern",
            notes=markdown.read_text().splitlines()[0],
        )
    Path("/tmp/purebpe-scale.json").write_text(json.dumps(results, indent=1))
    plot(results)


if __name__ == "__main__":
    main()
