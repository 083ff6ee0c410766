"""Batch detokenization throughput: Python loop, HF ``tokenizers``, purebpe NumPy and CuPy.

Run from the repository root on each interpreter::

    python -m bench.bench_gpu_decode
    /work/pypy-venv/bin/python -m bench.bench_gpu_decode
    python -m bench.bench_gpu_decode --corpus zh-fortunes.txt

The vocab is GPT-2's (``gpt2-vocab.json``/``gpt2-merges.txt`` of the shared corpora, 50 257
ids, read by ``purebpe.Tokenizer.from_files``). The corpus is encoded with it
(``<|endoftext|>`` is id 50256) and the id stream is cut into ``--rows`` x ``--width``
ids (256 x 1024 by default). Every method decodes the same batch, and its output is
checked against ``tok.decode``.

Batch methods (tokens per second, best of ``--rounds`` rounds after one warm-up; each
round runs every method once):

* Python loop: ``[tok.decode(row) for row in rows]`` with the ids as lists of ints, and
  the same from the 2-D array (``.tolist()`` first, as when ids come out of a model);
* HF ``tokenizers`` ``Tokenizer.decode_batch`` with a GPT-2 BPE model and ByteLevel
  decoder built from the same files (CPython only; Rust, uses every core: rayon);
* purebpe NumPy ``decode_batch`` on a 2-D ``int64`` array (the default ``gather="windows"``,
  and ``gather="segments"``, the array expression CuPy runs), and on the lists;
* purebpe CuPy ``decode_batch`` on a device array (array-expression gather and the fused
  kernel), when CuPy sees a GPU;
* the host part alone: the per-row ``bytes.decode`` that every path ends with, timed on
  bytes already gathered: no device path can beat this floor.

Streaming (milliseconds per step, ``--rows`` rows, one new id per row per step, averaged
over ``--width`` steps, the batch's columns in order): ``BatchDecodeStream.step`` on each backend, against one
stdlib incremental UTF-8 decoder per row in a Python loop.
"""

from __future__ import annotations

import argparse
import codecs
import functools
import importlib.util
import os
import platform
import re
import sys
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy

from purebpe import Tokenizer
from purebpe.gpu import BatchDecodeStream, DecodeTable, cupy_unavailable_reason, decode_batch, gather_bytes

from ._harness import Script, Table, corpora_dir, interpreter_name, measure_each, timed
from .peer_encoders import gpt2_hf

LOOP = "Python loop: tok.decode per row (lists)"
Step = Callable[[int], List[str]]

script = Script("bench_gpu_decode", __doc__, rounds=5, corpora=["en-kjv-fortunes-5m.txt"])
script.option("--rows", type=int, default=256)
script.option("--width", type=int, default=1024, help="ids per row")


def cupy_methods(vocab: Mapping[int, bytes], ids: Any) -> Dict[str, Callable[[], List[str]]]:
    """The CuPy batch methods, each synchronising (the host decode does) before it returns."""
    import cupy

    methods: Dict[str, Callable[[], List[str]]] = {}
    device_ids = cupy.asarray(ids)
    for gather in ("segments", "fused"):
        table = DecodeTable.from_vocab(vocab, xp=cupy, gather=gather)
        name = "purebpe CuPy" + (" fused kernel" if gather == "fused" else "")
        methods[name] = functools.partial(decode_batch, table, device_ids)
    return methods


@script.register
def batch_decode(args: argparse.Namespace) -> List[Table]:
    corpus = args.corpus[0]
    rows_n, width = (16, 128) if args.quick else (args.rows, args.width)
    vocab_path, merges_path = (str(corpora_dir() / f"gpt2-{name}") for name in ("vocab.json", "merges.txt"))
    tok = Tokenizer.from_files(vocab_path, merges_path)
    vocab = tok.vocab
    total = rows_n * width
    with open(corpus, encoding="utf-8") as f:
        text = f.read(6 * total)  # GPT-2 tokens average well under 6 characters
    flat, encode_s, _ = timed(tok.encode, text)
    flat = flat[:total]
    if len(flat) < total:
        raise SystemExit(f"{corpus}: only {len(flat)} ids, {total} needed")
    rows = [flat[r * width : (r + 1) * width] for r in range(rows_n)]
    grid = numpy.asarray(rows, dtype=numpy.int64)
    expected = [tok.decode(row) for row in rows]

    table = DecodeTable.from_tokenizer(tok)
    shared = DecodeTable.from_tokenizer(tok, gather="segments")
    methods: Dict[str, Callable[[], List[str]]] = {
        LOOP: lambda: [tok.decode(row) for row in rows],
        "Python loop: tok.decode per row (2-D array, .tolist() first)": lambda: [
            tok.decode(row) for row in grid.tolist()
        ],
    }
    hf = gpt2_hf(vocab_path, merges_path) if importlib.util.find_spec("tokenizers") else None
    if hf is not None:
        methods["HF tokenizers decode_batch"] = lambda: hf.decode_batch(rows, skip_special_tokens=False)
    methods["purebpe NumPy (2-D array)"] = lambda: decode_batch(table, grid)
    methods["purebpe NumPy, gather='segments' (2-D array; the expression CuPy runs)"] = lambda: decode_batch(
        shared, grid
    )
    methods["purebpe NumPy (lists)"] = lambda: decode_batch(table, rows)
    gpu_reason = cupy_unavailable_reason()
    if gpu_reason is None:
        methods.update(cupy_methods(vocab, grid))
    # What any device path still does on the host: bytes to str, row by row.
    buffer, row_offsets = gather_bytes(table, grid)
    host_buffer, offsets = numpy.asarray(buffer), row_offsets.tolist()

    def host_part() -> List[str]:
        data = host_buffer.tobytes()
        return [data[a:b].decode("utf-8", "replace") for a, b in zip(offsets, offsets[1:])]

    methods["host part alone (bytes to str per row): the floor of a device path"] = host_part
    # Every round runs every method once, so no method always runs in the wake of the same
    # other one (allocator and cache state left behind by the Python loops moved NumPy's
    # times by up to 2x when run in blocks); the cold pass is the warm-up (JIT, CUDA).
    timings = measure_each(methods, args.rounds)
    loop, peer = timings[LOOP].best, timings["HF tokenizers decode_batch"].best if hf is not None else None
    batch_rows: List[Dict[str, Any]] = []
    for name, timing in timings.items():
        got = timing.value
        s = timing.best
        batch_rows.append(
            {
                "method": name,
                "tokens/s": f"{total / s:,.0f}",
                "ms per batch": f"{s * 1000:.1f}",
                "vs Python loop": f"{loop / s:.2f}x",
                "vs HF decode_batch": f"{peer / s:.2f}x" if peer else "(not importable)",
                "rows differing": sum(a != b for a, b in zip(got, expected)) + abs(len(got) - len(expected)),
            }
        )
    if gpu_reason is not None:
        batch_rows.append({"method": "purebpe CuPy", "tokens/s": f"not measured: {gpu_reason}"})
    corpus_name = re.sub(r"\W+", "_", corpus.stem).strip("_")
    bytes_per_id = len(b"".join(e.encode() for e in expected)) / total
    return [
        Table(
            batch_rows,
            suffix=f"_{corpus_name}",
            title=f"Batch decode of {rows_n} x {width} GPT-2 ids from {corpus.name}",
            notes=f"Tokens per second, best of {args.rounds}; {interpreter_name()} on {platform.machine()}, "
            f"{os.cpu_count()} cores; {bytes_per_id:.2f} bytes per id, encoded in {encode_s:.1f} s"
            + ("" if gpu_reason is None else f"; CuPy not measured: {gpu_reason}")
            + ". Rows differing: rows whose text is not exactly tok.decode's. The plot shows the "
            "speed-up over the Python loop.",
            plot={
                "label": "method",
                "value": "vs Python loop",
                "log": True,
                "xlabel": "speed-up over the Python loop (log scale)",
            },
        ),
        streaming(tok, grid, expected, gpu_reason),
    ]


def streaming(tok: Tokenizer, grid: Any, expected: List[str], gpu_reason: Optional[str]) -> Table:
    """Milliseconds per step of each streaming decoder (printed, not recorded)."""
    rows_n, width = grid.shape
    vocab = tok.vocab
    columns = [grid[:, t].copy() for t in range(width)]
    column_lists = [[[i] for i in c.tolist()] for c in columns]

    def python_stream() -> Tuple[Step, Callable[[], List[str]]]:
        decoders = [codecs.getincrementaldecoder("utf-8")("replace") for _ in range(rows_n)]

        def step(t: int) -> List[str]:
            return [
                decoder.decode(b"".join([vocab[i] for i in ids]))
                for decoder, ids in zip(decoders, column_lists[t])
            ]

        return step, lambda: [d.decode(b"", final=True) for d in decoders]

    def purebpe_stream(
        table: DecodeTable, device_columns: Sequence[Any]
    ) -> Tuple[Step, Callable[[], List[str]]]:
        stream = BatchDecodeStream(table, rows_n)
        return (lambda t: stream.step(device_columns[t])), stream.flush

    streams = {
        "Python: one incremental decoder per row (ids as lists)": python_stream(),
        "purebpe NumPy BatchDecodeStream (1-D array per step)": purebpe_stream(
            DecodeTable.from_tokenizer(tok), columns
        ),
    }
    if gpu_reason is None:
        import cupy

        streams["purebpe CuPy BatchDecodeStream (device array per step)"] = purebpe_stream(
            DecodeTable.from_vocab(vocab, xp=cupy), [cupy.asarray(c) for c in columns]
        )
    rows: List[Dict[str, Any]] = []
    for name, (step, finish) in streams.items():
        pieces, seconds, _ = timed(lambda step=step: [step(t) for t in range(width)])
        texts = ["".join(p[r] for p in pieces) + tail for r, tail in enumerate(finish())]
        rows.append(
            {
                "method": name,
                "ms per step": f"{seconds / width * 1000:.3f}",
                "all text emitted == tok.decode": texts == expected,
            }
        )
    if gpu_reason is not None:
        rows.append(
            {"method": "purebpe CuPy BatchDecodeStream", "ms per step": f"not measured: {gpu_reason}"}
        )
    return Table(
        rows,
        title=f"Streaming, {rows_n} rows, one id per row per step, mean of {width} steps "
        "(the first includes any warm-up)",
        record=False,
    )


if __name__ == "__main__":
    sys.exit(script.main())
