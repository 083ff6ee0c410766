"""Throughput of pre-tokenization per pattern and engine, a Markdown table (MB/s of UTF-8 input).

Run from the repository root on each interpreter::

    python -m bench.bench_pretokenize
    /work/pypy-venv/bin/python -m bench.bench_pretokenize --rounds 5

Each engine's ``count_pretokens`` counts the corpus into one fresh dict, fed in chunks of
about 1 MiB split at line ends (how training calls it).  The peer row is bare
``regex.findall(PATTERNS[name], chunk)`` with tiktoken's string -- no counting -- for scale.
Each figure is the best of ``--rounds`` timed passes, in process CPU time (the machine may
be shared), after one untimed warm-up pass over the first chunk (PyPy's JIT needs it).
Corpora: the ``pydoc_data`` topics (ships with every interpreter) and, when present,
files of the shared corpora (read only here, never by the tests).
"""

from __future__ import annotations

import argparse
import importlib
import platform
import sys
from typing import Callable, Dict, List, Optional

from purebpe.errors import PureBPEError
from purebpe.pretokenize import DEFAULT_ENGINE, ENGINES, PATTERNS, count_pretokens

from ._harness import Script, Table, chunks_of, measure

PEER = "regex.findall"

script = Script("bench_pretokenize", __doc__, corpora=["pydoc", "en-gcide-18m.txt", "zh-fortunes.txt"])
script.option("--engines", default=",".join(ENGINES) + "," + PEER)
script.option("--patterns", default=",".join(PATTERNS))


def make_run(engine: str, pattern: str) -> Optional[Callable[[List[str]], None]]:
    """A function doing one pass of ``engine`` over some chunks, or None if it cannot run."""
    if engine == PEER:
        try:
            find = importlib.import_module("regex").compile(PATTERNS[pattern]).findall
        except ImportError:
            return None

        def find_all(pieces: List[str]) -> None:
            for piece in pieces:
                find(piece)

        return find_all
    try:
        count_pretokens("probe", {}, engine, pretokenizer=pattern)
    except PureBPEError:  # engine="regex" without the package
        return None

    def count_all(pieces: List[str]) -> None:
        counts: Dict[str, int] = {}
        for piece in pieces:
            count_pretokens(piece, counts, engine, pretokenizer=pattern)

    return count_all


@script.register
def throughput(args: argparse.Namespace) -> Table:
    corpora = [(path.name, path.read_text(encoding="utf-8")) for path in args.corpus]
    rows = []
    for pattern in args.patterns.split(","):
        for engine in args.engines.split(","):
            label = f"{pattern} `{engine}`" if engine != PEER else f"{pattern} `{PEER}` (peer, no counting)"
            row = {"engine": label}  # the same row labels on every interpreter
            for name, text in corpora:
                size_mb = len(text.encode("utf-8")) / 1e6
                run = make_run(engine, pattern)
                chunks = chunks_of(text)
                if run is not None:
                    run(chunks[:1])  # warm-up (PyPy's JIT): the first chunk
                    timing = measure(lambda run=run, chunks=chunks: run(chunks), args.rounds, cold=False)
                    rate = size_mb / timing.best_cpu
                    print(
                        f"  {pattern:7} {engine:14} {name:20} {rate:7.1f} MB/s", file=sys.stderr, flush=True
                    )
                row[f"{name} ({size_mb:.1f} MB)"] = f"{rate:.1f}" if run is not None else "n/a"
            rows.append(row)
    impl = f"{platform.python_implementation()} {platform.python_version()}"
    return Table(
        rows,
        title=f"Pre-tokenization per pattern and engine, MB/s of UTF-8 input (best of {args.rounds})",
        notes=f"Default engine on {impl}: `{DEFAULT_ENGINE}`. Process CPU time.",
    )


if __name__ == "__main__":
    sys.exit(script.main())
