"""Wakong schemes per second, purebpe versus the ``wakong`` package, as a Markdown table.

Run from the repository root on each interpreter::

    python -m bench.bench_wakong --save /tmp/wakong-cpython.json
    /work/pypy-venv/bin/python -m bench.bench_wakong --peer-from /tmp/wakong-cpython.json

Each row draws ``--schemes`` schemes of one length from a ``random.Random(0)``, one call
at a time (``purebpe.wakong.mask_scheme`` against ``wakong.generate_mask_scheme``), and
reports the best of ``--rounds`` timed passes, after one untimed warm-up pass over every
length (PyPy's JIT needs it). Times are CPU seconds of this process, so other work on a
shared machine does not count against either side. Both sides run in the same process
when the package imports. It does not on PyPy (the package requires CPython >= 3.10):
there ``--peer-from`` takes the package's figures from a CPython run's ``--save`` file on
the same machine, and the ratio column is labelled as a cross-interpreter comparison.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from random import Random
from typing import Callable, Dict

from purebpe.wakong import mask_scheme

from ._harness import Script, Table, interpreter_name, measure_each

LENGTHS = (32, 64, 128, 256, 512)
Draw = Callable[[Random, int], object]

script = Script("bench_wakong", __doc__, rounds=5)
script.option("--schemes", type=int, default=10000, help="schemes per timed pass")
script.option("--save", help="write the figures as JSON here")
script.option("--peer-from", help="JSON from a CPython run: its wakong figures")


def one_pass(draw: Draw, seq_len: int, schemes: int) -> Callable[[], None]:
    def run() -> None:
        rng = Random(0)
        for _ in range(schemes):
            draw(rng, seq_len)

    return run


@script.register
def schemes_per_second(args: argparse.Namespace) -> Table:
    schemes = 1000 if args.quick else args.schemes
    draws: Dict[str, Draw] = {"purebpe": mask_scheme}
    try:
        from wakong import generate_mask_scheme

        draws["wakong"] = generate_mask_scheme
    except ImportError:
        pass
    for draw in draws.values():  # warm-up: every length once, so PyPy's JIT has seen them all
        for n in LENGTHS:
            one_pass(draw, n, schemes)()
    figures = {
        n: {
            name: schemes / t.best_cpu
            for name, t in measure_each(
                {name: one_pass(draw, n, schemes) for name, draw in draws.items()}, args.rounds, cold=False
            ).items()
        }
        for n in LENGTHS
    }
    ours = {n: figures[n]["purebpe"] for n in LENGTHS}
    peer = {n: figures[n]["wakong"] for n in LENGTHS if "wakong" in figures[n]}
    peer_label, cross = f"wakong ({interpreter_name()})", False
    if not peer and args.peer_from:
        with open(args.peer_from, encoding="utf-8") as f:
            saved = json.load(f)
        peer = {int(n): v for n, v in saved["wakong"].items()}
        peer_label, cross = f"wakong ({saved['interpreter']}, cross-interpreter)", True
    if args.save:
        with open(args.save, "w", encoding="utf-8") as f:
            json.dump(
                {"interpreter": interpreter_name(), "purebpe": ours, "wakong": peer if not cross else {}},
                f,
                indent=1,
            )
    rows = []
    for n in LENGTHS:
        ratio = f"{ours[n] / peer[n]:.1f}x" + (" (cross-interpreter)" if cross else "") if n in peer else "-"
        rows.append(
            {
                "length": n,
                f"purebpe ({interpreter_name()}) schemes/s": f"{ours[n]:,.0f}",
                f"{peer_label} schemes/s": f"{peer[n]:,.0f}" if n in peer else "(wakong not importable)",
                "ratio": ratio,
            }
        )
    return Table(
        rows,
        title=f"Wakong schemes per CPU second, purebpe vs the wakong package "
        f"({schemes:,} schemes per pass, best of {args.rounds})",
        notes=f"{platform.machine()}; CPU time of this process.",
    )


if __name__ == "__main__":
    sys.exit(script.main())
