"""pytest-benchmark benchmarks of Wakong masking, on any interpreter::

    python3 -m pytest bench/test_bench_wakong.py --benchmark-only
    PYTHONPATH=. /tmp/pypyenv/bin/python -m pytest bench/test_bench_wakong.py --benchmark-only \
        -p no:cacheprovider

Each round draws 1,000 schemes of one length. The ``wakong`` package's rows run only where
it is installed (CPython >= 3.10); ``python -m bench.bench_wakong`` prints the comparison table.
"""

from __future__ import annotations

from random import Random
from typing import Any, Callable

import pytest

from purebpe.wakong import Wakong, mask_batch, mask_scheme

LENGTHS = [32, 64, 128, 256, 512]
SCHEMES_PER_ROUND = 1000

# Short runs on a shared machine; 20 warm-up rounds (20,000 schemes) are plenty for PyPy's
# JIT, whose default warm-up in pytest-benchmark would run for seconds per benchmark.
pytestmark = pytest.mark.benchmark(max_time=0.5, warmup=True, warmup_iterations=20)


def draw_many(draw: Callable[[Random, int], object], seq_len: int) -> Callable[[], None]:
    rng = Random(0)

    def run() -> None:
        for _ in range(SCHEMES_PER_ROUND):
            draw(rng, seq_len)

    return run


@pytest.mark.parametrize("seq_len", LENGTHS)
def test_purebpe_mask_scheme(benchmark: Any, seq_len: int) -> None:
    benchmark.group = f"schemes of {seq_len}"
    benchmark(draw_many(mask_scheme, seq_len))


@pytest.mark.parametrize("seq_len", LENGTHS)
def test_wakong_package_generate_mask_scheme(benchmark: Any, seq_len: int) -> None:
    wakong = pytest.importorskip("wakong", reason="the wakong package is not installed")
    benchmark.group = f"schemes of {seq_len}"
    benchmark(draw_many(wakong.generate_mask_scheme, seq_len))


def test_purebpe_mask_batch(benchmark: Any) -> None:
    rng = Random(0)
    lengths = [LENGTHS[i % len(LENGTHS)] for i in range(SCHEMES_PER_ROUND)]
    benchmark.group = "batch of 1000 mixed lengths"
    benchmark(mask_batch, rng, lengths)


def test_purebpe_wakong_on_words(benchmark: Any) -> None:
    masker = Wakong(0)
    sentence = ("the quick brown fox jumps over the lazy dog " * 14).split()  # 126 words
    benchmark.group = "mask 1000 sentences of 126 words"

    def run() -> None:
        for _ in range(SCHEMES_PER_ROUND):
            masker(sentence)

    benchmark(run)
