#!/usr/bin/env python3
"""Wakong schemes per second, purebpe versus the ``wakong`` package, as a Markdown table.

Run from the repository root on each interpreter::

    python3 bench/bench_wakong.py --save /tmp/wakong-cpython.json
    PYTHONPATH=. /tmp/pypyenv/bin/python bench/bench_wakong.py --peer-from /tmp/wakong-cpython.json

Each row draws ``--schemes`` schemes of one length from a ``random.Random(0)``, one call
at a time (``purebpe.wakong.mask_scheme`` against ``wakong.generate_mask_scheme``), and
reports the best of ``--repeat`` timed passes, after one untimed warm-up pass over every
length (PyPy's JIT needs it). Times are CPU seconds of this process (``time.process_time``), so other work
on a shared machine does not count against either side. Both sides run in the same process when the package imports. It does not on
PyPy (the package requires CPython >= 3.10): there ``--peer-from`` takes the package's
figures from a CPython run's ``--save`` file on the same machine, and the ratio column is
labelled as a cross-interpreter comparison.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from random import Random
from typing import Callable, Dict, List, Optional

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from purebpe.wakong import mask_scheme  # noqa: E402

LENGTHS = (32, 64, 128, 256, 512)
Draw = Callable[[Random, int], object]


def seconds_per_pass(draw: Draw, seq_len: int, schemes: int) -> float:
    rng = Random(0)
    began = time.process_time()
    for _ in range(schemes):
        draw(rng, seq_len)
    return time.process_time() - began


def schemes_per_second(
    draws: Dict[str, Draw], seq_len: int, schemes: int, repeat: int
) -> Dict[str, float]:
    """Best of ``repeat`` passes for each draw, alternating between them pass by pass so
    that a change in the machine's load hits both sides alike."""
    best = {name: float("inf") for name in draws}
    for _ in range(repeat):
        for name, draw in draws.items():
            best[name] = min(best[name], seconds_per_pass(draw, seq_len, schemes))
    return {name: schemes / seconds for name, seconds in best.items()}


def peer_draw() -> Optional[Draw]:
    try:
        from wakong import generate_mask_scheme
    except ImportError:
        return None
    return generate_mask_scheme  # type: ignore[no-any-return]


def interpreter() -> str:
    return f"{platform.python_implementation()} {platform.python_version()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--schemes", type=int, default=10000, help="schemes per timed pass")
    parser.add_argument("--repeat", type=int, default=5, help="timed passes; the best counts")
    parser.add_argument("--save", help="write the figures as JSON here")
    parser.add_argument("--peer-from", help="JSON from a CPython run: its wakong figures")
    args = parser.parse_args()

    draws: Dict[str, Draw] = {"purebpe": mask_scheme}
    peer_label = f"wakong ({interpreter()})"
    package_draw = peer_draw()
    if package_draw is not None:
        draws["wakong"] = package_draw
    for draw in draws.values():  # warm-up: every length once, so PyPy's JIT has seen them all
        for n in LENGTHS:
            seconds_per_pass(draw, n, args.schemes)
    figures = {n: schemes_per_second(draws, n, args.schemes, args.repeat) for n in LENGTHS}
    ours = {n: figures[n]["purebpe"] for n in LENGTHS}
    peer: Dict[int, float] = {}
    cross = False
    if package_draw is not None:
        peer = {n: figures[n]["wakong"] for n in LENGTHS}
    elif args.peer_from:
        with open(args.peer_from, encoding="utf-8") as f:
            saved = json.load(f)
        peer = {int(n): v for n, v in saved["wakong"].items()}
        peer_label = f"wakong ({saved['interpreter']}, cross-interpreter)"
        cross = True

    rows: List[str] = [
        f"| length | purebpe ({interpreter()}) schemes/s | {peer_label} schemes/s | ratio |",
        "|---:|---:|---:|---:|",
    ]
    for n in LENGTHS:
        if n in peer:
            ratio = f"{ours[n] / peer[n]:.1f}x" + (" (cross-interpreter)" if cross else "")
            rows.append(f"| {n} | {ours[n]:,.0f} | {peer[n]:,.0f} | {ratio} |")
        else:
            rows.append(f"| {n} | {ours[n]:,.0f} | (wakong not importable) | - |")
    print(f"Wakong schemes per CPU second on {platform.machine()}, {args.schemes:,} schemes "
          f"per pass, best of {args.repeat}:\n")
    print("\n".join(rows))

    if args.save:
        with open(args.save, "w", encoding="utf-8") as f:
            json.dump(
                {"interpreter": interpreter(), "purebpe": ours, "wakong": peer if not cross else {}},
                f,
                indent=1,
            )
    from _results import record

    record(
        "bench_wakong",
        "\n".join(rows),
        title=f"Wakong schemes per CPU second, purebpe vs the wakong package "
        f"({args.schemes:,} schemes per pass, best of {args.repeat})",
    )


if __name__ == "__main__":
    main()
