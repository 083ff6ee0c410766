"""Shared inputs for the pytest-benchmark suites (``pytest bench --benchmark-only``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, List

import pytest

import purebpe
from purebpe.corpus import default_corpus


@pytest.fixture(scope="session")
def pydoc_texts() -> List[str]:
    return default_corpus()


@pytest.fixture(scope="session")
def pydoc_file(tmp_path_factory: pytest.TempPathFactory, pydoc_texts: List[str]) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "pydoc.txt"
    path.write_text("\n\n".join(pydoc_texts), encoding="utf-8")
    return path


def time_training(
    benchmark: Any, counts: "purebpe.WordCounts", vocab: int, variant: str
) -> "purebpe.BPEModel":
    """Benchmark the merge phase of one variant on counted words; returns the model."""
    model: purebpe.BPEModel = benchmark.pedantic(
        purebpe.train_from_counts,
        args=(counts, vocab),
        kwargs={"variant": variant},
        rounds=3,
        warmup_rounds=1,  # lets PyPy's JIT compile first, as it would in a long run
    )
    return model
