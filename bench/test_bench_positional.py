"""pytest-benchmark: the positional trainer where words are long, beside a word-rewriting variant.

    pytest bench/test_bench_positional.py --benchmark-only                       # CPython
    PYTHONPATH=. pypy3 -m pytest bench/test_bench_positional.py --benchmark-only -p no:cacheprovider

Merging alone (``train_from_counts`` on words counted once), ``pretokenizer="none"``:

* ``lines``: the pydoc text, one word per line (short words: the word-based variants'
  home ground), vocab 1000;
* ``one line``: the pydoc text as a single 466 KB sequence, vocab 300: a variant that
  rewrites whole words pays the whole line at every merge, the positional one only the
  merged occurrences;
* ``zh``: ``../shared/corpora/zh-fortunes.txt`` (when present), vocab 5000, positional only
  (``python -m bench.bench_positional`` compares it with HF ``tokenizers``).
"""

from __future__ import annotations

from typing import Any, Dict, List

import pytest

import purebpe
from bench._harness import corpora_dir
from bench.conftest import time_training

#: The comparison: positional and the heap variant (a word-rewriting one), where registered.
VARIANTS = [name for name in ("heap", "positional") if name in purebpe.VARIANTS]

pytestmark = pytest.mark.benchmark(min_rounds=3, warmup=True, warmup_iterations=1)


@pytest.fixture(scope="session")
def line_counts(pydoc_texts: List[str]) -> Dict[str, purebpe.WordCounts]:
    return {
        "lines": purebpe.count_from_iterator(pydoc_texts, pretokenizer="none"),
        "one line": purebpe.count_from_iterator(
            [" ".join(pydoc_texts).replace("\n", " ")], pretokenizer="none"
        ),
    }


def merge(benchmark: Any, counts: purebpe.WordCounts, vocab: int, variant: str) -> None:
    model = time_training(benchmark, counts, vocab, variant)
    assert len(model.merges) == vocab - 256


#: The pydoc cases: (name, vocab size, benchmark group).
CASES = [
    ("lines", 1000, "pydoc, one word per line, vocab 1000"),
    ("one line", 300, "pydoc as one 466 KB line, vocab 300"),
]


@pytest.mark.parametrize("case, vocab, group", CASES, ids=[case for case, _, _ in CASES])
@pytest.mark.parametrize("variant", VARIANTS)
def test_pydoc(
    benchmark: Any,
    line_counts: Dict[str, purebpe.WordCounts],
    variant: str,
    case: str,
    vocab: int,
    group: str,
) -> None:
    benchmark.group = group
    merge(benchmark, line_counts[case], vocab, variant)


def test_zh_fortunes(benchmark: Any) -> None:
    corpus = corpora_dir() / "zh-fortunes.txt"
    if not corpus.exists():
        pytest.skip(f"{corpus} not found (benchmark corpora live in the shared corpora directory)")
    benchmark.group = "zh-fortunes.txt, vocab 5000"
    merge(benchmark, purebpe.count(corpus, pretokenizer="none"), 5000, "positional")
