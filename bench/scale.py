"""The scaling benchmark: every trainer at 18 MB, 100 MB and 1 GB, time and memory by size.

Run from the repository root (PyPy found as ``--pypy``, ``$PUREBPE_PYPY`` or ``pypy3``)::

    python -m bench.scale --pypy /work/pypy-venv/bin/python       # all three sizes
    python -m bench.scale --sizes 18m,100m --timeout 600           # a quicker look
    python -m bench.scale --quick --sizes 18m                      # end to end, in seconds

The corpora: ``en-gcide-18m.txt`` (English, vocabulary 10 000) from the shared corpora,
and 100 MB and 1 GB of the Linux source (vocabulary 32 000), built once and
deterministically by ``../shared/corpora/make-linux-corpus.sh`` into
``~/.cache/purebpe-corpora`` (this script runs it when they are missing). Each size is one
run of :mod:`bench.compare_peers` with the GPT-2 pattern: purebpe ``auto`` on CPython, on
CPython's mypyc-compiled build (``--no-compiled``: not) and on PyPy with 1 and 2 counting
processes, HF ``tokenizers`` and ``rustbpe`` on 1 and 2 threads,
and ``bpeasy``; each contender in a fresh process, recording wall and CPU seconds and peak
RSS (its counting processes' CPU included). A contender over ``--timeout`` or not installed
is listed as skipped, never left out. The figures go into ``bench/results`` (one table per
size, ``scale_*``) and two log-log plots, time and peak memory against corpus size, into
``docs/img``. A row whose CPU time is well below its wall time on one thread ran on a busy
machine: compare such rows with care.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Mapping, Sequence, Tuple

from . import compare_peers
from ._harness import ROOT, Script, Table, corpora_dir

CACHE = Path.home() / ".cache" / "purebpe-corpora"

#: size label -> (corpus path, vocabulary size, megabytes for the plots)
SIZES: Dict[str, Tuple[Path, int, float]] = {
    "18m": (corpora_dir() / "en-gcide-18m.txt", 10_000, 18.0),
    "100m": (CACHE / "linux-100m.txt", 32_000, 100.0),
    "1g": (CACHE / "linux-1g.txt", 32_000, 1000.7),
}

script = Script("scale", __doc__, rounds=1, interpreters=True)
script.option("--sizes", default="18m,100m,1g")
script.option("--timeout", type=float, default=900, help="seconds per run")


def ensure_linux_corpus() -> None:
    if (CACHE / "linux-1g.txt").exists() and (CACHE / "linux-100m.txt").exists():
        return
    make = corpora_dir() / "make-linux-corpus.sh"
    print(f"building the Linux corpora with {make} (once) ...", file=sys.stderr)
    subprocess.run(["bash", str(make), str(CACHE)], check=True)


@script.register
def sizes(args: argparse.Namespace) -> List[Table]:
    labels = args.sizes.split(",")
    if any(label != "18m" for label in labels):
        ensure_linux_corpus()
    tables = []
    for label in labels:
        path, vocab, _ = SIZES[label]
        argv = [
            "--corpus",
            str(path),
            "--vocab",
            str(vocab),
            "--variants",
            "auto",
            "--processes",
            "1,2",
            "--bpeasy",
            "--timeout",
            str(args.timeout),
            "--python",
            args.python,
            "--pypy",
            args.pypy or "none",
            "--compiled" if args.compiled else "--no-compiled",
            "--rounds",
            str(args.rounds),
        ] + (["--quick"] if args.quick else [])
        table = compare_peers.compare(compare_peers.script.parse(argv))[0]
        tables.append(
            Table(
                table.rows,
                suffix=f"_{label}",
                interpreter="all",
                notes=table.notes,
                title=f"Scaling: {path.name} ({label}) to {vocab} tokens, GPT-2 pattern",
            )
        )
    if args.record:
        plot({label: table.rows for label, table in zip(labels, tables)})
    return tables


def plot(results: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
    """The two log-log plots: time and peak memory by corpus size, one line per contender."""
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


if __name__ == "__main__":
    sys.exit(script.main())
