"""pytest-benchmark: every trainer variant on the pydoc corpus, merging alone and whole training.

    pytest bench/test_bench_trainers.py --benchmark-only                       # CPython
    PYTHONPATH=. pypy3 -m pytest bench/test_bench_trainers.py --benchmark-only  # PyPy

``test_merges`` times :func:`purebpe.train_from_counts` on words counted once (counting
excluded); ``test_whole_training`` times :func:`purebpe.train_from_iterator` (counting
included). The vocabulary is 2000 (1743 merges), except for ``naive``, which recounts every
pair after every merge and gets 400. Peers and the larger corpora are in
``python -m bench.compare_peers``.
"""

from __future__ import annotations

from typing import Any, List

import pytest

import purebpe
from bench.conftest import time_training

SPECIAL = "<|endoftext|>"
VOCAB = 2000
NAIVE_VOCAB = 400
variants = pytest.mark.parametrize("variant", sorted(purebpe.VARIANTS))


def vocab_for(variant: str) -> int:
    return NAIVE_VOCAB if variant == "naive" else VOCAB


@pytest.fixture(scope="session")
def pydoc_counts(pydoc_texts: List[str]) -> purebpe.WordCounts:
    return purebpe.count_from_iterator(pydoc_texts, [SPECIAL])


@variants
def test_merges(benchmark: Any, pydoc_counts: purebpe.WordCounts, variant: str) -> None:
    vocab = vocab_for(variant)
    model = time_training(benchmark, pydoc_counts, vocab, variant)
    assert model.vocab_size == vocab


@variants
def test_whole_training(benchmark: Any, pydoc_texts: List[str], variant: str) -> None:
    vocab = vocab_for(variant)
    model = benchmark.pedantic(
        purebpe.train_from_iterator,
        args=(pydoc_texts, vocab, [SPECIAL]),
        kwargs={"variant": variant},
        rounds=3,
        warmup_rounds=1,
    )
    assert model.vocab_size == vocab
