"""pytest-benchmark: encoding and decoding with a tokenizer trained on the pydoc corpus.

    pytest bench/test_bench_encode.py --benchmark-only                       # CPython
    PYTHONPATH=. pypy3 -m pytest bench/test_bench_encode.py --benchmark-only  # PyPy

The peers (tiktoken, HF tokenizers) run on the same exported vocab where installed; the
side-by-side table with ratios is ``python -m bench.bench_encode``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, List

import pytest

import purebpe
from purebpe import BPEModel, Tokenizer
from purebpe.formats.tiktoken_format import tiktoken_encoding

EOT = "<|endoftext|>"


@pytest.fixture(scope="session")
def model(pydoc_texts: List[str]) -> BPEModel:
    return purebpe.train_from_iterator(pydoc_texts, 2000, [EOT])


@pytest.fixture(scope="session")
def text(pydoc_texts: List[str]) -> str:
    return EOT.join(pydoc_texts)


@pytest.fixture(scope="session")
def exported(model: BPEModel, tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("exported")
    model.save(directory, "tiktoken")
    model.save(directory, "hf")
    return directory


def test_encode_cold(benchmark: Any, model: BPEModel, text: str) -> None:
    """A fresh tokenizer each round: every word goes through the merges once."""
    ids = benchmark.pedantic(lambda: model.tokenizer().encode(text), rounds=3)
    assert len(ids) > 0


def test_encode_warm(benchmark: Any, model: BPEModel, text: str) -> None:
    tok = model.tokenizer()
    tok.encode(text)
    ids = benchmark(tok.encode, text)
    assert tok.decode(ids) == text


def test_encode_iterable(benchmark: Any, model: BPEModel, text: str) -> None:
    tok = model.tokenizer()
    tok.encode(text)
    lines = text.splitlines(keepends=True)
    count = benchmark(lambda: sum(1 for _ in tok.encode_iterable(lines)))
    assert count == len(tok.encode(text))


def test_decode(benchmark: Any, model: BPEModel, text: str) -> None:
    tok: Tokenizer = model.tokenizer()
    ids = tok.encode(text)
    assert benchmark(tok.decode, ids) == text


def test_tiktoken_encode(benchmark: Any, exported: Path, model: BPEModel, text: str) -> None:
    pytest.importorskip("tiktoken")
    encoding = tiktoken_encoding(exported)
    ids = benchmark(encoding.encode, text, allowed_special="all")
    assert ids == model.tokenizer().encode(text)


def test_hf_tokenizers_encode(benchmark: Any, exported: Path, model: BPEModel, text: str) -> None:
    os.environ.setdefault("RAYON_NUM_THREADS", "1")
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.Tokenizer.from_file(str(exported / "tokenizer.json"))
    encoding = benchmark(hf.encode, text, add_special_tokens=False)
    assert encoding.ids == model.tokenizer().encode(text)
