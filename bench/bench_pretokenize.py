#!/usr/bin/env python3
"""Throughput of pre-tokenization per pattern and engine, a Markdown table (MB/s of UTF-8 input).

Run from the repository root on each interpreter::

    python3 bench/bench_pretokenize.py
    /tmp/pypyenv/bin/python bench/bench_pretokenize.py --repeat 5

Each engine's ``count_pretokens`` counts the corpus into one fresh dict, fed in chunks of
about 1 MiB split at line ends (how training calls it).  The peer row is bare
``regex.findall(PATTERNS[name], chunk)`` with tiktoken's string -- no counting -- for scale.  Each figure is the
best of ``--repeat`` timed passes, in process CPU time (the machine may be shared), after
one untimed warm-up pass over the first chunk (PyPy's JIT needs it).  Corpora: the
``pydoc_data`` topics (ships with every interpreter) and, when present, the files in
``/work/shared/corpora`` (read only here, never by the tests).
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import sys
import time
from typing import Callable, Dict, List, Optional, Tuple

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from purebpe.errors import PureBPEError
from purebpe.pretokenize import DEFAULT_ENGINE, ENGINES, PATTERNS, count_pretokens

CORPORA_DIR = "/work/shared/corpora"
CHUNK_CHARS = 1 << 20


def pydoc_corpus() -> str:
    import pydoc_data.topics

    return "\n\n".join(v for k, v in sorted(pydoc_data.topics.topics.items()))


def load_corpora(names: List[str]) -> List[Tuple[str, str]]:
    corpora = []
    for name in names:
        if name == "pydoc":
            corpora.append(("pydoc_data topics", pydoc_corpus()))
            continue
        path = os.path.join(CORPORA_DIR, name)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as f:
                corpora.append((name, f.read()))
        else:
            print(f"(skipping {name}: {path} not found)", file=sys.stderr)
    return corpora


def chunks_of(text: str, size: int = CHUNK_CHARS) -> List[str]:
    """Pieces of about ``size`` characters, each ending at a newline where possible."""
    pieces = []
    start = 0
    while start < len(text):
        end = text.find("\n", start + size)
        end = len(text) if end < 0 else end + 1
        pieces.append(text[start:end])
        start = end
    return pieces


def best_seconds(run: Callable[[List[str]], None], chunks: List[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        began = time.process_time()
        run(chunks)
        best = min(best, time.process_time() - began)
    return best


def make_run(
    engine: str, pattern: str, peer: Optional[Callable[[str], object]]
) -> Optional[Callable[[List[str]], None]]:
    """A function doing one pass of ``engine`` over some chunks, or None if it cannot run."""
    if engine == "regex.findall":
        if peer is None:
            return None
        find = peer

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--engines", default=",".join(ENGINES) + ",regex.findall")
    parser.add_argument("--patterns", default=",".join(PATTERNS))
    parser.add_argument(
        "--corpora",
        default="pydoc,en-gcide-18m.txt,zh-fortunes.txt",
        help="comma-separated; 'pydoc' or file names",
    )
    args = parser.parse_args()

    corpora = load_corpora(args.corpora.split(","))
    rows: Dict[str, List[str]] = {}
    for pattern in args.patterns.split(","):
        peer: Optional[Callable[[str], object]] = None
        try:
            peer = importlib.import_module("regex").compile(PATTERNS[pattern]).findall
        except ImportError:
            pass
        for engine in args.engines.split(","):
            cells = []
            for name, text in corpora:
                chunks = chunks_of(text)
                size_mb = len(text.encode("utf-8")) / 1e6
                run = make_run(engine, pattern, peer)
                if run is None:
                    cells.append("n/a")
                    continue
                run(chunks[:1])  # warm-up (PyPy's JIT): the first chunk
                seconds = best_seconds(run, chunks, args.repeat)
                cells.append(f"{size_mb / seconds:.1f}")
                print(
                    f"  {pattern:7} {engine:14} {name:20} {size_mb / seconds:7.1f} MB/s",
                    file=sys.stderr,
                    flush=True,
                )
            label = (
                f"{pattern} `{engine}`"
                if engine != "regex.findall"
                else f"{pattern} `regex.findall` (peer, no counting)"
            )
            if engine == DEFAULT_ENGINE:
                label += " (default)"
            rows[label] = cells

    impl = f"{platform.python_implementation()} {platform.python_version()}"
    print(f"\n{impl} on {platform.machine()}, MB/s of UTF-8 input, best of {args.repeat}\n")
    header = ["engine"] + [
        f"{name} ({len(text.encode('utf-8')) / 1e6:.1f} MB)" for name, text in corpora
    ]
    table = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] + ["---:"] * len(corpora)) + "|"]
    table += ["| " + " | ".join([label] + cells) + " |" for label, cells in rows.items()]
    print("\n".join(table))
    from _results import record

    record(
        "bench_pretokenize",
        "\n".join(table).replace(" (default)", ""),  # same row labels on every interpreter
        title=f"Pre-tokenization per pattern and engine, MB/s of UTF-8 input (best of {args.repeat})",
        notes=f"Default engine on {impl}: `{DEFAULT_ENGINE}`. Process CPU time.",
    )


if __name__ == "__main__":
    main()
