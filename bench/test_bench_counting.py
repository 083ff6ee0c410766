"""pytest-benchmark: word counting (pre-tokenization included) on the pydoc corpus.

pytest bench/test_bench_counting.py --benchmark-only                       # CPython
PYTHONPATH=. pypy3 -m pytest bench/test_bench_counting.py --benchmark-only  # PyPy
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, List

import pytest

import purebpe


@pytest.mark.parametrize("pretokenizer", ["gpt2", "none"])
def test_count_file(benchmark: Any, pydoc_file: Path, pretokenizer: str) -> None:
    counts = benchmark(purebpe.count, pydoc_file, ["<|endoftext|>"], pretokenizer=pretokenizer)
    assert counts.total() > 0


def test_count_iterator(benchmark: Any, pydoc_texts: List[str]) -> None:
    counts = benchmark(purebpe.count_from_iterator, pydoc_texts)
    assert counts.total() > 0


def test_count_file_two_processes(benchmark: Any, pydoc_file: Path) -> None:
    counts = benchmark.pedantic(
        purebpe.count, args=(pydoc_file,), kwargs={"processes": 2, "chunk_bytes": 1 << 16}, rounds=3
    )
    assert counts.total() > 0
