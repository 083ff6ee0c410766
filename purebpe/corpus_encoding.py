"""Encoding a corpus to token ids in parallel, in input order, for a pre-training run.

This process reads the documents of every input (:mod:`purebpe.readers`: text, JSON lines,
Parquet, compressed or not) and makes batches of about :data:`JOB_CHARS` characters for
worker processes, each holding the tokenizer; the ids come back as typed arrays (their raw
bytes) and are handed on in the order of the batches, so the output is the same, byte for
byte, for any number of processes. A text file is one document, read in pieces cut where
cutting cannot change the ids; a regular uncompressed file's pieces go to the workers as
where they are (:class:`purebpe.readers.FileText`), and the workers read and decode them
themselves; a stream's or a compressed file's as their bytes
(:class:`purebpe.readers.RawText`). ``separator`` (an id) follows every document. With an
HF ``tokenizer.json`` pipeline (:class:`purebpe.hf.HFTokenizer`) the jobs hold whole
documents instead, each streamed through the pipeline (:mod:`purebpe.document_encoding`).

Where the time goes, end to end: starting the interpreter and loading the tokenizer (about
half a second), then encoding; a worker that started cold would pay again for the load, for
an empty word cache and, on PyPy, for compiling the encode loop. So this process encodes
the first batch itself (its ids are the output's first) and only then starts the
workers: where processes are forked (Linux), they inherit the loaded tables, the warm word
cache and PyPy's compiled code, and start encoding at full speed. Even so, each forked
worker costs something of its own (PyPy compiles what the parent had not run yet, and the
pages either process writes after the fork are copied), and a parent that only read,
dispatched and wrote would leave most of its core idle: so this process is one of the
``processes`` (:func:`purebpe._workers.ordered_map`'s ``share``), forking one worker fewer
and encoding a batch itself whenever every worker has its share queued. Elsewhere (spawn)
``processes`` workers receive the tokenizer pickled and start cold; the ids are the same.
"""

from __future__ import annotations

import os
from array import array
from collections import deque
from concurrent.futures import Future
from itertools import chain
from typing import Any, Deque, Generator, Iterable, Iterator, List, Optional, Sequence, Tuple, Union

from ._workers import can_fork, ordered_map, stop_workers, worker_pool
from .document_encoding import Scratch, SpilledIds, document_jobs, encode_documents
from .errors import PureBPEError, check_int
from .hf import HFTokenizer
from .pretokenize.chunking import ChunkCutter
from .readers import Piece, ReadOptions, ShippedPiece, Source, capped, shipped, source_documents
from .tokenizer import AllowedSpecial, Tokenizer

#: Characters of documents per job (a text file's jobs are two or three pieces). Small
#: jobs keep both sides busy: this process, which encodes jobs too, reads the workers'
#: results and sends them jobs only between two of its own, and a worker whose results
#: fill its pipe (1 MiB) waits. With jobs of 1 MiB, a PyPy worker encoding 100 MB of Linux
#: source waited 0.9 s of its 3.5 s; with 256 Ki characters (and :data:`IN_FLIGHT`), 0.1 s.
#: Once a job's ids stopped growing one list on PyPy (:meth:`Tokenizer._encode_text`),
#: 512 Ki did better still: 2 processes on PyPy, 6 interleaved runs, 7.07-7.62 CPU s and
#: 4.0-4.4 s wall against 7.30-7.99 s and 4.1-4.6 s for 256 Ki (1 Mi: 7.25-7.87 s, 4.3-4.7
#: s); CPython 13.6-14.3 against 14.2-14.5 CPU s; 29 MB of Chinese with o200k's uint32 ids
#: the same within noise (3.13-3.40 against 3.13-3.46 s).
JOB_CHARS = 1 << 19
#: Characters of the first job, which this process encodes itself to warm up before the
#: workers are forked (see the module docstring): small, since nothing runs in parallel yet.
FIRST_JOB_CHARS = 1 << 18
#: Bytes of a text file read at a time (the pieces jobs are made of).
PIECE_BYTES = 1 << 18
#: Jobs sent ahead to each worker: enough for it to work on while this process encodes
#: one of its own, or waits for a core on a busy machine (2: 1.3 s of waiting in the
#: measurement of :data:`JOB_CHARS`).
IN_FLIGHT = 4
#: array typecodes that hold every id below the limit.
TYPECODES = {"uint16": "H", "uint32": "I"}

#: One batch of work: ``(text, starts_document)`` items, and whether the batch starts the
#: corpus (no separator before its first document). Each document but the first is preceded
#: by the separator, and the last is followed by one (:func:`encode_corpus`): the separator
#: follows every document, wherever the batches were cut.
EncodeJob = Tuple[List[Tuple[Piece, bool]], bool]
#: A batch as it is sent to a worker (:func:`shipped_job`).
ShippedJob = Tuple[List[Tuple[ShippedPiece, bool]], bool]
#: A tokenizer of purebpe's own engine, or an HF pipeline (whose jobs are
#: :data:`purebpe.document_encoding.DocumentJob`).
AnyTokenizer = Union[Tokenizer, HFTokenizer]

# The worker's tokenizer and options, set once per process by _init_worker.
_worker: List[object] = []


def _init_worker(
    tokenizer: AnyTokenizer, allowed: AllowedSpecial, separator: Optional[int], typecode: str
) -> None:
    _worker[:] = [tokenizer, allowed, separator, typecode]


def encode_job(job: Any) -> "Union[array[int], SpilledIds]":
    """The ids of one batch: each document's ids followed by the separator (when set)."""
    tokenizer, allowed, separator, typecode = _worker
    assert isinstance(tokenizer, (Tokenizer, HFTokenizer)) and isinstance(typecode, str)
    return _encode_items(tokenizer, job, allowed, separator, typecode)  # type: ignore[arg-type]


def _encode_items(
    tokenizer: AnyTokenizer,
    items: Any,
    allowed: AllowedSpecial,
    separator: Optional[int],
    typecode: str,
) -> "Union[array[int], SpilledIds]":
    if isinstance(tokenizer, HFTokenizer):
        return encode_documents(tokenizer, items, separator, typecode)
    texts, corpus_start = items
    ids = array(typecode)
    encode = tokenizer.encode_to_array
    for index, (piece, starts) in enumerate(texts):
        if separator is not None and starts and (index or not corpus_start):
            ids.append(separator)
        encoded = encode(piece if isinstance(piece, str) else piece.text(), allowed, typecode=typecode)
        if ids:
            ids += encoded
        else:  # most jobs are one piece: no copy (0.1 s of 100 MB on PyPy)
            ids = encoded
    return ids


def shipped_job(job: EncodeJob) -> ShippedJob:
    """A job as it is sent to a worker: a regular file's pieces as where they are in it
    (:func:`purebpe.readers.shipped`), which the worker reads itself.

    >>> shipped_job(([("ab", True)], True))
    ([('ab', True)], True)
    """
    items, corpus_start = job
    return [(shipped(piece), starts) for piece, starts in items], corpus_start


def batches(
    texts: Iterable[Tuple[Piece, bool]], job_chars: Optional[int] = None, first_chars: Optional[int] = None
) -> Iterator[EncodeJob]:
    """Items in batches of about ``job_chars`` characters, the first of ``first_chars``
    (a text file's pieces may end up in several; undecoded pieces are counted in bytes).

    >>> [len(items) for items, _ in batches([("ab", True)] * 5, job_chars=4, first_chars=2)]
    [1, 2, 2]
    """
    job_chars = JOB_CHARS if job_chars is None else job_chars
    batch: List[Tuple[Piece, bool]] = []
    size = 0
    first = True
    limit = FIRST_JOB_CHARS if first_chars is None else first_chars
    for piece, starts in texts:
        batch.append((piece, starts))
        size += len(piece) if isinstance(piece, str) else len(piece.data)
        if size >= limit:
            yield batch, first
            batch, size, first, limit = [], 0, False, job_chars
    if batch:
        yield batch, first


def corpus_texts(
    found: Sequence[Source],
    options: ReadOptions,
    cutter: ChunkCutter,
    skipped: List[int],
    doc_cap: Optional[int] = None,
    max_chars: Optional[int] = None,
) -> Iterator[Tuple[Piece, bool]]:
    """Every document of ``found``, in order, as ``(text, starts_document)``; a text
    file's pieces undecoded (:class:`purebpe.readers.RawText`) unless a cap needs their
    characters counted here."""
    if doc_cap is None and max_chars is None:
        return (
            item
            for source in found
            for item in source_documents(source, options, cutter, skipped, True, PIECE_BYTES)
        )
    everything = (item for source in found for item in source_documents(source, options, cutter, skipped))
    return capped(everything, doc_cap, max_chars)


def encode_corpus(
    tokenizer: AnyTokenizer,
    texts: Iterable[Tuple[Piece, bool]],
    *,
    allowed_special: AllowedSpecial = "all",
    separator: Optional[int] = None,
    dtype: str = "uint32",
    processes: Optional[int] = None,
) -> Generator["array[int]", None, None]:
    """The ids of ``texts`` (``(text, starts_document)`` items, see :func:`corpus_texts`),
    as arrays of ``dtype``, in order; ``separator`` after every document.

    ``processes`` (default: this machine's cores) encode in parallel once the texts fill
    more than the first batch; the ids do not depend on it. An HF pipeline gives each
    document the ids of its ``encode(document)`` (added tokens are always split off:
    ``allowed_special`` does not apply).

    >>> from purebpe import train_from_iterator
    >>> tok = train_from_iterator(["ab ab ab"], 258).tokenizer()
    >>> [list(a) for a in encode_corpus(tok, [("ab", True), ("ab", True)], separator=0)]
    [[256, 0, 256], [0]]
    """
    if dtype not in TYPECODES:
        raise PureBPEError(f"dtype must be uint16 or uint32, not {dtype!r}")
    if processes is not None:
        check_int(processes, "processes", 1)
    typecode = TYPECODES[dtype]
    any_text = [False]

    def noting(items: Iterable[Tuple[Piece, bool]]) -> Iterator[Tuple[Piece, bool]]:
        for item in items:
            any_text[0] = True
            yield item

    workers = processes if processes is not None else os.cpu_count() or 1
    scratch = Scratch()
    try:
        jobs: Iterator[Any] = (
            document_jobs(noting(texts), scratch, JOB_CHARS, FIRST_JOB_CHARS)
            if isinstance(tokenizer, HFTokenizer)
            else batches(noting(texts))
        )
        for ids in _encoded(tokenizer, jobs, allowed_special, separator, typecode, workers):
            if isinstance(ids, SpilledIds):
                yield from ids.read()
            else:
                yield ids
    finally:
        scratch.remove()
    if separator is not None and any_text[0]:
        yield array(typecode, [separator])


def _encoded(
    tokenizer: AnyTokenizer,
    jobs: Iterator[Any],
    allowed_special: AllowedSpecial,
    separator: Optional[int],
    typecode: str,
    processes: int,
) -> "Iterator[Union[array[int], SpilledIds]]":
    # The first job here, warming this process up before the workers are forked (see the
    # module docstring); every job here with one process.
    for job in jobs:
        yield _encode_items(tokenizer, job, allowed_special, separator, typecode)
        if processes > 1:
            break
    following = next(jobs, None)
    if following is None:
        return
    # An HF pipeline's jobs (whole documents) go as they are.
    ship = shipped_job if isinstance(tokenizer, Tokenizer) else None
    if can_fork():
        # The forked workers find the tokenizer where encode_job looks for it.
        _init_worker(tokenizer, allowed_special, separator, typecode)
        try:
            yield from ordered_map(
                encode_job, chain([following], jobs), processes, IN_FLIGHT, share=True, ship=ship
            )
        finally:
            _worker.clear()
        return
    pool = worker_pool(processes, _init_worker, (tokenizer, allowed_special, separator, typecode))
    pending: "Deque[Future[Union[array[int], SpilledIds]]]" = deque()
    try:
        for job in chain([following], jobs):
            pending.append(pool.submit(encode_job, job if ship is None else ship(job)))
            if len(pending) >= IN_FLIGHT * processes:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    except BaseException:
        stop_workers(pool)
        raise
    pool.shutdown()
