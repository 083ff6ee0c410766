"""Counting throughput per process, and memory per distinct word, for the huge-corpora guide.

    python -m bench.bench_counting [--corpus CORPUS]            # CPython (also tracemalloc figures)
    /work/pypy-venv/bin/python -m bench.bench_counting [--corpus CORPUS]

Counts CORPUS (default ``en-gcide-18m.txt`` of the shared corpora, else the pydoc corpus)
with 1 and 2 processes (best of 3 rounds after a warm-up, wall time; CPU time of this
process and its workers beside it) and prints MB/s; then builds the word table from the
counts and reports the memory of the counts dict and of the word table per distinct word
(``tracemalloc``, CPython only: PyPy's objects are smaller and tracemalloc does not exist
there).
"""

from __future__ import annotations

import argparse
import gc
import sys

import purebpe
from purebpe.core import WordTable

from ._harness import Script, Table, corpus_path, measure

script = Script("bench_counting", __doc__, corpora=["en-gcide-18m.txt"])


@script.register
def throughput(args: argparse.Namespace) -> Table:
    corpus = args.corpus[0] if args.corpus else corpus_path("pydoc")
    megabytes = corpus.stat().st_size / 1e6
    rows = []
    for processes in (1, 2):
        timing = measure(lambda processes=processes: purebpe.count(corpus, processes=processes), args.rounds)
        rows.append(
            {
                "processes": processes,
                "seconds": round(timing.best, 2),
                "CPU s": round(timing.best_cpu, 2),
                "MB/s": round(megabytes / timing.best, 1),
            }
        )
    counts = purebpe.count(corpus)
    notes = f"{len(counts):,} distinct words, {counts.total():,} in all; best of {args.rounds}"
    if not hasattr(sys, "pypy_version_info"):
        notes += "; " + memory_per_word(counts)
    return Table(
        rows, title=f"counting {corpus.name} ({megabytes:.1f} MB): MB/s per process count", notes=notes
    )


def memory_per_word(counts: purebpe.WordCounts) -> str:
    import tracemalloc

    gc.collect()
    tracemalloc.start()
    # Fresh copies of the keys, so that the words themselves are traced too.
    words = {bytes(bytearray(word)): n for word, n in counts.words.items()}
    counts_bytes = tracemalloc.get_traced_memory()[0]
    table = WordTable.from_word_counts(words)
    table_bytes = tracemalloc.get_traced_memory()[0] - counts_bytes
    tracemalloc.stop()
    del table  # alive until measured
    return (
        f"counts (dict and words): {counts_bytes / len(words):.0f} bytes per distinct word; "
        f"word table on top: {table_bytes / len(words):.0f} bytes per distinct word"
    )


if __name__ == "__main__":
    sys.exit(script.main())
