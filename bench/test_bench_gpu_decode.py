"""pytest-benchmark: decoding a 256 x 1024 batch, and one streaming step of 256 rows.

Run with ``python3 -m pytest bench/test_bench_gpu_decode.py`` (``--benchmark-group-by=group``
puts the peers side by side). Self-contained: the vocab is a purebpe model trained on the
default corpus (vocab 2000, two special tokens), the ids are that corpus (twice over) encoded with it.
For the GPT-2 vocab and real corpora, and a Markdown table of ratios, run
``python -m bench.bench_gpu_decode``. CuPy cases run when CuPy sees a GPU, and are skipped with
the reason otherwise.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, List, Tuple

import pytest

import purebpe
from purebpe.bytemap import encode_token
from purebpe.corpus import default_corpus
from purebpe.gpu import BatchDecodeStream, DecodeTable, cupy_unavailable_reason, decode_batch

numpy = pytest.importorskip("numpy")

ROWS, WIDTH = 256, 1024
SPECIALS = ["<|endoftext|>", "<|pad|>"]
CUPY_REASON = cupy_unavailable_reason()
needs_gpu = pytest.mark.skipif(CUPY_REASON is not None, reason=f"not measured: {CUPY_REASON}")

Batch = Tuple[Any, List[List[int]], Any, List[str]]


@pytest.fixture(scope="module")
def batch() -> Batch:
    """``(tokenizer, rows as lists, rows as a 2-D array, expected texts)``."""
    texts = default_corpus()
    model = purebpe.train_from_iterator(texts[:80], 2000, SPECIALS)
    tok = purebpe.Tokenizer.from_model(model)
    flat: List[int] = []
    for text in itertools.cycle(texts):  # the corpus holds fewer ids than the batch
        flat.extend(tok.encode(text + SPECIALS[0]))
        if len(flat) >= ROWS * WIDTH:
            break
    rows = [flat[r * WIDTH : (r + 1) * WIDTH] for r in range(ROWS)]
    return tok, rows, numpy.asarray(rows, dtype=numpy.int64), [tok.decode(r) for r in rows]


def _measure(benchmark: Any, run: Callable[[], List[str]], expected: List[str]) -> None:
    assert run() == expected
    benchmark.extra_info["tokens"] = ROWS * WIDTH
    benchmark(run)


@pytest.mark.benchmark(group="decode 256x1024")
def test_python_loop(benchmark: Any, batch: Batch) -> None:
    tok, rows, _, expected = batch
    _measure(benchmark, lambda: [tok.decode(row) for row in rows], expected)


@pytest.mark.benchmark(group="decode 256x1024")
def test_hf_tokenizers_decode_batch(benchmark: Any, batch: Batch) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    tok, rows, _, expected = batch
    special_ids = set(tok.special_ids.values())
    vocab = {encode_token(t): i for i, t in tok.vocab.items() if i not in special_ids}
    merges = [(encode_token(left), encode_token(right)) for left, right in tok.merges]
    hf = tokenizers.Tokenizer(tokenizers.models.BPE(vocab=vocab, merges=merges))
    hf.decoder = tokenizers.decoders.ByteLevel()
    hf.add_special_tokens(SPECIALS)
    _measure(benchmark, lambda: hf.decode_batch(rows, skip_special_tokens=False), expected)


@pytest.mark.benchmark(group="decode 256x1024")
@pytest.mark.parametrize("gather", ["windows", "segments"])
def test_purebpe_numpy(benchmark: Any, batch: Batch, gather: str) -> None:
    tok, _, grid, expected = batch
    table = DecodeTable.from_tokenizer(tok, gather=gather)
    _measure(benchmark, lambda: decode_batch(table, grid), expected)


@pytest.mark.benchmark(group="decode 256x1024")
@pytest.mark.parametrize("gather", ["segments", "fused"])
@needs_gpu
def test_purebpe_cupy(benchmark: Any, batch: Batch, gather: str) -> None:
    import cupy

    tok, _, grid, expected = batch
    table = DecodeTable.from_tokenizer(tok, xp=cupy, gather=gather)
    device_grid = cupy.asarray(grid)
    _measure(benchmark, lambda: decode_batch(table, device_grid), expected)


def _stream_step(benchmark: Any, tok: Any, grid: Any, xp: Any) -> None:
    table = DecodeTable.from_tokenizer(tok, xp=xp)
    stream = BatchDecodeStream(table, ROWS)
    columns = [xp.asarray(grid[:, t].copy()) for t in range(WIDTH)]
    position = [0]

    def step() -> List[str]:
        position[0] = (position[0] + 1) % WIDTH
        return stream.step(columns[position[0]])

    benchmark(step)


@pytest.mark.benchmark(group="stream step, 256 rows")
def test_stream_step_numpy(benchmark: Any, batch: Batch) -> None:
    tok, _, grid, _ = batch
    _stream_step(benchmark, tok, grid, numpy)


@pytest.mark.benchmark(group="stream step, 256 rows")
@needs_gpu
def test_stream_step_cupy(benchmark: Any, batch: Batch) -> None:
    import cupy

    tok, _, grid, _ = batch
    _stream_step(benchmark, tok, grid, cupy)
