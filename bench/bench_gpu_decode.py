#!/usr/bin/env python3
"""Batch detokenization throughput: Python loop, HF ``tokenizers``, purebpe NumPy and CuPy.

Run from the repository root on each interpreter::

    python3 bench/bench_gpu_decode.py
    PYTHONPATH=. /tmp/pypyenv/bin/python bench/bench_gpu_decode.py
    python3 bench/bench_gpu_decode.py --corpus /work/shared/corpora/zh-fortunes.txt

The vocab is GPT-2's (``gpt2-vocab.json``/``gpt2-merges.txt`` from ``--corpora``, 50 257
ids, read by ``purebpe.Tokenizer.from_files``). The corpus is encoded with it
(``<|endoftext|>`` is id 50256) and the id stream is cut into ``--rows`` x ``--width``
ids (256 x 1024 by default). Every method decodes the same batch, and its output is
checked against ``tok.decode``.

Batch methods (tokens per second, best of ``--repeat`` rounds after one warm-up; each
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
over ``--width`` steps, the batch's columns in order): ``BatchDecodeStream.step`` on each backend, against one stdlib
incremental UTF-8 decoder per row in a Python loop.
"""
from __future__ import annotations

import argparse
import codecs
import functools
import os
import platform
import re
import sys
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy  # noqa: E402

from purebpe import Tokenizer  # noqa: E402
from purebpe.gpu import (  # noqa: E402
    BatchDecodeStream,
    DecodeTable,
    cupy_unavailable_reason,
    decode_batch,
    gather_bytes,
)

SPECIAL = "<|endoftext|>"
Step = Callable[[int], List[str]]


def interpreter() -> str:
    return f"{platform.python_implementation()} {platform.python_version()}"


def best_seconds(methods: Mapping[str, Callable[[], object]], repeat: int) -> Dict[str, float]:
    """Each method's best time over ``repeat`` rounds; every round runs every method once,
    so no method always runs in the wake of the same other one (allocator and cache state
    left behind by the Python loops moved NumPy's times by up to 2x when run in blocks)."""
    for run in methods.values():
        run()  # warm-up (PyPy's JIT, CUDA kernel compilation)
    best = {name: float("inf") for name in methods}
    for _ in range(repeat):
        for name, run in methods.items():
            began = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - began)
    return best


def hf_decoder(vocab_path: str, merges_path: str) -> Optional[Any]:
    try:
        from tokenizers import Tokenizer, decoders, models
    except ImportError:
        return None
    tokenizer = Tokenizer(models.BPE.from_file(vocab_path, merges_path))
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens([SPECIAL])
    return tokenizer


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


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--corpora", default="/work/shared/corpora", help="GPT-2 files here")
    parser.add_argument("--corpus", default=None, help="text to encode (en-kjv-fortunes-5m.txt)")
    parser.add_argument("--rows", type=int, default=256)
    parser.add_argument("--width", type=int, default=1024, help="ids per row")
    parser.add_argument("--repeat", type=int, default=5, help="timed passes; the best counts")
    args = parser.parse_args()
    corpus = args.corpus or os.path.join(args.corpora, "en-kjv-fortunes-5m.txt")

    vocab_path = os.path.join(args.corpora, "gpt2-vocab.json")
    merges_path = os.path.join(args.corpora, "gpt2-merges.txt")
    tok = Tokenizer.from_files(vocab_path, merges_path)
    vocab = tok.vocab
    total = args.rows * args.width
    with open(corpus, encoding="utf-8") as f:
        text = f.read(6 * total)  # GPT-2 tokens average well under 6 characters
    began = time.perf_counter()
    flat = tok.encode(text)[:total]
    if len(flat) < total:
        sys.exit(f"{corpus}: only {len(flat)} ids, {total} needed")
    encode_s = time.perf_counter() - began
    rows = [flat[r * args.width : (r + 1) * args.width] for r in range(args.rows)]
    grid = numpy.asarray(rows, dtype=numpy.int64)
    expected = [tok.decode(row) for row in rows]

    table = DecodeTable.from_tokenizer(tok)
    methods: Dict[str, Callable[[], List[str]]] = {
        "Python loop: tok.decode per row (lists)": lambda: [tok.decode(row) for row in rows],
        "Python loop: tok.decode per row (2-D array, .tolist() first)": lambda: [
            tok.decode(row) for row in grid.tolist()
        ],
    }
    hf = hf_decoder(vocab_path, merges_path)
    if hf is not None:
        methods["HF tokenizers decode_batch"] = lambda: hf.decode_batch(rows, skip_special_tokens=False)
    methods["purebpe NumPy (2-D array)"] = lambda: decode_batch(table, grid)
    shared = DecodeTable.from_tokenizer(tok, gather="segments")
    methods["purebpe NumPy, gather='segments' (2-D array; the expression CuPy runs)"] = (
        lambda: decode_batch(shared, grid)
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

    mismatches: Dict[str, int] = {}
    for name, run in methods.items():
        got = run()
        mismatches[name] = sum(a != b for a, b in zip(got, expected)) + abs(len(got) - len(expected))
    seconds = best_seconds(methods, args.repeat)

    print(f"Batch decode, {interpreter()} on {platform.machine()}, {os.cpu_count()} cores; "
          f"{args.rows} x {args.width} GPT-2 ids from {os.path.basename(corpus)} "
          f"({len(b''.join(e.encode() for e in expected)) / total:.2f} bytes per id; "
          f"encoded in {encode_s:.1f} s); best of {args.repeat}:\n")
    batch_table = ["| method | tokens/s | ms per batch | vs Python loop | vs HF decode_batch | rows differing |",
                   "|---|---:|---:|---:|---:|---:|"]
    loop = seconds["Python loop: tok.decode per row (lists)"]
    peer = seconds.get("HF tokenizers decode_batch")
    for name, s in seconds.items():
        vs_hf = f"{peer / s:.2f}x" if peer else "(not importable)"
        batch_table.append(f"| {name} | {total / s:,.0f} | {s * 1000:.1f} | {loop / s:.2f}x | {vs_hf} | "
                           f"{mismatches[name]} |")
    if gpu_reason is not None:
        batch_table.append(f"| purebpe CuPy | not measured: {gpu_reason} | | | | |")
    print("\n".join(batch_table))

    print("\n(rows differing: rows whose text is not exactly tok.decode's)")
    print(f"\nStreaming, {args.rows} rows, one id per row per step, "
          f"mean of {args.width} steps (the first includes any warm-up):\n")
    print("| method | ms per step | all text emitted == tok.decode |")
    print("|---|---:|---:|")
    columns = [grid[:, t].copy() for t in range(args.width)]
    column_lists = [[[i] for i in c.tolist()] for c in columns]

    def python_stream() -> Tuple[Step, Callable[[], List[str]]]:
        decoders = [codecs.getincrementaldecoder("utf-8")("replace") for _ in range(args.rows)]

        def step(t: int) -> List[str]:
            return [
                decoder.decode(b"".join([vocab[i] for i in ids]))
                for decoder, ids in zip(decoders, column_lists[t])
            ]

        return step, lambda: [d.decode(b"", final=True) for d in decoders]

    def purebpe_stream(table: DecodeTable, device_columns: Sequence[Any]) -> Tuple[
        Step, Callable[[], List[str]]
    ]:
        stream = BatchDecodeStream(table, args.rows)
        return (lambda t: stream.step(device_columns[t])), stream.flush

    streams = {"Python: one incremental decoder per row (ids as lists)": python_stream(),
               "purebpe NumPy BatchDecodeStream (1-D array per step)": purebpe_stream(table, columns)}
    if gpu_reason is None:
        import cupy

        gpu_table = DecodeTable.from_vocab(vocab, xp=cupy)
        streams["purebpe CuPy BatchDecodeStream (device array per step)"] = purebpe_stream(
            gpu_table, [cupy.asarray(c) for c in columns]
        )
    for name, (step, finish) in streams.items():
        began = time.perf_counter()
        pieces = [step(t) for t in range(args.width)]
        ms = (time.perf_counter() - began) / args.width * 1000
        texts = ["".join(p[r] for p in pieces) + tail for r, tail in enumerate(finish())]
        print(f"| {name} | {ms:.3f} | {texts == expected} |")
    if gpu_reason is not None:
        print(f"| purebpe CuPy BatchDecodeStream | not measured: {gpu_reason} | |")
    from _results import record

    corpus_name = re.sub(r"\W+", "_", os.path.splitext(os.path.basename(corpus))[0]).strip("_")
    record(
        f"bench_gpu_decode_{corpus_name}",
        "\n".join(batch_table),
        title=f"Batch decode of {args.rows} x {args.width} GPT-2 ids from {os.path.basename(corpus)}",
        notes=f"Tokens per second, best of {args.repeat}; {os.cpu_count()} cores"
        + ("" if gpu_reason is None else f"; CuPy not measured: {gpu_reason}")
        + ". The plot shows the speed-up over the Python loop.",
        plot={"label": "method", "value": "vs Python loop", "log": True,
              "xlabel": "speed-up over the Python loop (log scale)"},
    )


if __name__ == "__main__":
    main()
