"""Decode token ids to text on the device: batches at once, and streams step by step.

When a model generates on the GPU, turning thousands of sequences back into text in a
Python loop is a bottleneck. This package decodes with array operations instead, written
once against an array module ``xp`` so the same code runs on NumPy (CPU; the reference the
tests check) and on CuPy (GPU)::

    import purebpe.gpu as pg

    table = pg.DecodeTable.from_tokenizer(tok, xp="cupy")   # any loaded tokenizer, or from_vocab
    texts = pg.decode_batch(table, ids, lengths)             # == [tok.decode(r) for r in rows]

    stream = pg.BatchDecodeStream(table, batch_size=256)
    for step_ids in generation:                              # one id (or a few) per row
        pieces = stream.step(step_ids)                       # complete characters only
    tails = stream.flush()

NumPy and CuPy are both optional: importing this package needs neither, and building a
table on a missing one raises :class:`~purebpe.errors.PureBPEError` saying what to
install. Modules: :mod:`~purebpe.gpu.backend` (namespaces), :mod:`~purebpe.gpu.table`
(the token table), :mod:`~purebpe.gpu.plan` (what a tokenizer's decoder pipeline means
as a table: ``ByteFallback`` runs, ``Metaspace``, ``Strip``), :mod:`~purebpe.gpu.decode`
(batch decoding),
:mod:`~purebpe.gpu.stream` (streaming).
"""

from __future__ import annotations

from .backend import cupy_unavailable_reason
from .decode import decode_batch, gather_bytes
from .stream import BatchDecodeStream
from .table import DecodeTable

__all__ = [
    "BatchDecodeStream",
    "DecodeTable",
    "cupy_unavailable_reason",
    "decode_batch",
    "gather_bytes",
]
