"""Counting throughput per process, and memory per distinct word, for the huge-corpora guide.

    python3 bench/bench_counting.py [CORPUS]            # CPython (also tracemalloc figures)
    PYTHONPATH=. pypy3 bench/bench_counting.py [CORPUS]

Counts CORPUS (default ``../shared/corpora/en-gcide-18m.txt``, else the pydoc corpus) with 1
and 2 processes (best of 3 wall times) and prints MB/s; then builds the word table from the counts and reports the
memory of the counts dict and of the word table per distinct word (``tracemalloc``, CPython
only: PyPy's objects are smaller and tracemalloc does not exist there).
"""
from __future__ import annotations

import gc
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import purebpe  # noqa: E402
from purebpe.core import WordTable  # noqa: E402

HERE = Path(__file__).resolve().parent
DEFAULT = HERE.parent.parent / "shared" / "corpora" / "en-gcide-18m.txt"


def main() -> None:
    corpus = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    if not corpus.exists():
        import tempfile

        from purebpe.corpus import default_corpus

        corpus = Path(tempfile.mkdtemp()) / "pydoc.txt"
        corpus.write_text("\n\n".join(default_corpus()), encoding="utf-8")
    megabytes = corpus.stat().st_size / 1e6
    rows = []
    purebpe.count(corpus)  # warm-up (JIT on PyPy, page cache)
    for processes in (1, 2):
        seconds = float("inf")
        for _ in range(3):  # best of 3: the machine is shared
            start = time.perf_counter()
            counts = purebpe.count(corpus, processes=processes)
            seconds = min(seconds, time.perf_counter() - start)
        rows.append({"processes": processes, "seconds": round(seconds, 2), "MB/s": round(megabytes / seconds, 1)})
    print(f"## Counting {corpus.name} ({megabytes:.1f} MB), {sys.implementation.name}\n")
    print("| processes | seconds | MB/s |\n|---:|---:|---:|")
    for row in rows:
        print(f"| {row['processes']} | {row['seconds']} | {row['MB/s']} |")
    print(f"\n{len(counts):,} distinct words, {counts.total():,} in all")
    from _results import record

    record("bench_counting", rows, title=f"counting {corpus.name}: MB/s per process count")
    if hasattr(sys, "pypy_version_info"):
        return
    import tracemalloc

    gc.collect()
    tracemalloc.start()
    # Fresh copies of the keys, so that the words themselves are traced too.
    words = {bytes(bytearray(word)): n for word, n in counts.words.items()}
    counts_bytes = tracemalloc.get_traced_memory()[0]
    table = WordTable.from_word_counts(words)
    table_bytes = tracemalloc.get_traced_memory()[0] - counts_bytes
    del table  # alive until measured
    tracemalloc.stop()
    per_word = counts_bytes / len(words)
    print(f"\ncounts (dict and words): {per_word:.0f} bytes per distinct word; "
          f"word table on top: {table_bytes / len(words):.0f} bytes per distinct word")


if __name__ == "__main__":
    main()
