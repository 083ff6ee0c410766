"""Encoding a corpus to token ids in parallel, in input order, for a pre-training run.

This process reads the documents of every input (:mod:`purebpe.readers`: text, JSON lines,
Parquet, compressed or not) and sends them in batches of about :data:`JOB_CHARS`
characters to worker processes, each holding the tokenizer; the ids come back as typed
arrays and are handed on in the order the batches were sent, so the output is the same,
byte for byte, for any number of processes. A text file is one document, read in pieces cut
where cutting cannot change the ids. ``separator`` (an id) follows every document.
"""

from __future__ import annotations

from array import array
from collections import deque
from concurrent.futures import Future
from typing import Deque, Generator, Iterable, Iterator, List, Optional, Sequence, Tuple

from ._workers import stop_workers, worker_pool
from .errors import PureBPEError
from .pretokenize.chunking import ChunkCutter
from .readers import ReadOptions, Source, capped, source_documents
from .tokenizer import AllowedSpecial, Tokenizer

#: Characters of documents per job: large enough to amortise the trip to a worker.
JOB_CHARS = 1 << 20
#: array typecodes that hold every id below the limit.
TYPECODES = {"uint16": "H", "uint32": "I"}

#: One batch of work: ``(text, starts_document)`` items, and whether the batch starts the
#: corpus (no separator before its first document). Each document but the first is preceded
#: by the separator, and the last is followed by one (:func:`encode_corpus`): the separator
#: follows every document, wherever the batches were cut.
EncodeJob = Tuple[List[Tuple[str, bool]], bool]

# The worker's tokenizer and options, set once per process by _init_worker.
_worker: List[object] = []


def _init_worker(
    tokenizer: Tokenizer, allowed: AllowedSpecial, separator: Optional[int], typecode: str
) -> None:
    _worker[:] = [tokenizer, allowed, separator, typecode]


def encode_job(job: EncodeJob) -> "array[int]":
    """The ids of one batch: each document's ids followed by the separator (when set)."""
    tokenizer, allowed, separator, typecode = _worker
    assert isinstance(tokenizer, Tokenizer) and isinstance(typecode, str)
    return _encode_items(tokenizer, job, allowed, separator, typecode)  # type: ignore[arg-type]


def _encode_items(
    tokenizer: Tokenizer,
    items: EncodeJob,
    allowed: AllowedSpecial,
    separator: Optional[int],
    typecode: str,
) -> "array[int]":
    texts, corpus_start = items
    ids: List[int] = []
    encode = tokenizer.encode
    for index, (text, starts) in enumerate(texts):
        if separator is not None and starts and (index or not corpus_start):
            ids.append(separator)
        ids.extend(encode(text, allowed))
    return array(typecode, ids)


def batches(texts: Iterable[Tuple[str, bool]], job_chars: int = JOB_CHARS) -> Iterator[EncodeJob]:
    """Items in batches of about ``job_chars`` characters (a text file's pieces may end up
    in several)."""
    batch: List[Tuple[str, bool]] = []
    size = 0
    first = True
    for text, starts in texts:
        batch.append((text, starts))
        size += len(text)
        if size >= job_chars:
            yield batch, first
            batch, size, first = [], 0, False
    if batch:
        yield batch, first


def corpus_texts(
    found: Sequence[Source],
    options: ReadOptions,
    cutter: ChunkCutter,
    skipped: List[int],
    doc_cap: Optional[int] = None,
    max_chars: Optional[int] = None,
) -> Iterator[Tuple[str, bool]]:
    """Every document of ``found``, in order, as ``(text, starts_document)``."""

    everything = (item for source in found for item in source_documents(source, options, cutter, skipped))
    if doc_cap is None and max_chars is None:
        return everything
    return capped(everything, doc_cap, max_chars)


def encode_corpus(
    tokenizer: Tokenizer,
    texts: Iterable[Tuple[str, bool]],
    *,
    allowed_special: AllowedSpecial = "all",
    separator: Optional[int] = None,
    dtype: str = "uint32",
    processes: int = 1,
) -> Generator["array[int]", None, None]:
    """The ids of ``texts`` (``(text, starts_document)`` items, see :func:`corpus_texts`),
    as arrays of ``dtype``, in order; ``separator`` after every document.

    >>> from purebpe import train_from_iterator
    >>> tok = train_from_iterator(["ab ab ab"], 258).tokenizer()
    >>> [list(a) for a in encode_corpus(tok, [("ab", True), ("ab", True)], separator=0)]
    [[256, 0, 256], [0]]
    """
    if dtype not in TYPECODES:
        raise PureBPEError(f"dtype must be uint16 or uint32, not {dtype!r}")
    typecode = TYPECODES[dtype]
    any_text = [False]

    def noting(items: Iterable[Tuple[str, bool]]) -> Iterator[Tuple[str, bool]]:
        for item in items:
            any_text[0] = True
            yield item

    yield from _encoded(tokenizer, batches(noting(texts)), allowed_special, separator, typecode, processes)
    if separator is not None and any_text[0]:
        yield array(typecode, [separator])


def _encoded(
    tokenizer: Tokenizer,
    jobs: Iterator[EncodeJob],
    allowed_special: AllowedSpecial,
    separator: Optional[int],
    typecode: str,
    processes: int,
) -> Iterator["array[int]"]:
    if processes <= 1:
        for job in jobs:
            yield _encode_items(tokenizer, job, allowed_special, separator, typecode)
        return
    pool = worker_pool(processes, _init_worker, (tokenizer, allowed_special, separator, typecode))
    pending: Deque["Future[array[int]]"] = deque()
    try:
        for job in jobs:
            pending.append(pool.submit(encode_job, job))
            if len(pending) >= 2 * processes:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    except BaseException:
        stop_workers(pool)
        raise
    pool.shutdown()
