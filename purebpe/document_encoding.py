"""A corpus encoded with an HF ``tokenizer.json`` pipeline: the document is the unit.

HF encodes a document as one text: its normalizer and pre-tokenizer see the whole of it
(``Strip`` its two ends, ``Metaspace("first")`` its start), so the reader's cuts
(:class:`purebpe.pretokenize.chunking.ChunkCutter`, which follows purebpe's own
pre-tokenizer rule) are no place to split one.  So here a text file is read in pieces cut
anywhere between two characters (:class:`CharacterCutter`), the pieces of one document
always go to the same job, and a worker streams them through
:meth:`purebpe.hf.HFTokenizer.encode_iterable`, which gives exactly the ids of the whole
in bounded memory.

Jobs hold whole documents, about :data:`~purebpe.corpus_encoding.JOB_CHARS` characters
of them (:func:`document_jobs`).  A document longer than :data:`DOCUMENT_CHARS` does not
cross the pipe: it is written to a scratch file as it is read (its text file's bytes as
they are, so the worker decodes them and reports bad UTF-8 where it is, in its turn), the
worker streams that file through the pipeline and writes the ids to a second file, and
this process reads them back in batches (:class:`SpilledIds`).  Memory then holds a few
jobs and the pipeline's stream, whatever a document's length; the disk holds the long
documents in flight.
"""

from __future__ import annotations

import os
import shutil
from array import array
from itertools import islice
from typing import BinaryIO, Iterable, Iterator, List, NamedTuple, Optional, Tuple, Union

from ._workers import scratch_directory
from .hf import HFTokenizer
from .pretokenize.chunking import ChunkCutter, decode_chunk, read_chunks
from .readers import Piece, RawText, as_text

#: Characters (bytes of an undecoded piece) above which a document goes through a file.
DOCUMENT_CHARS = 1 << 20
#: Bytes of a scratch file read at a time, and ids written or read back at a time.
BLOCK_BYTES = 1 << 18
BATCH_IDS = 1 << 16


class CharacterCutter(ChunkCutter):
    """Cuts a text file's bytes before any character: the pieces of an HF document, which
    the pipeline's stream joins exactly, wherever they were cut.

    >>> CharacterCutter().cut("aé".encode("utf-8"))
    1
    """

    def __init__(self) -> None:
        ChunkCutter.__init__(self, [], "none")

    def cut(self, buf: bytes) -> int:
        end = len(buf) - 1
        while end > 0 and 0x80 <= buf[end] < 0xC0:  # a UTF-8 continuation byte
            end -= 1
        return end if end > 0 else -1


class SpilledDocument(NamedTuple):
    """A long document in a scratch file: UTF-8 (``errors`` decodes it), the first byte at
    ``offset`` and line ``line`` of ``name``, for the message of a decoding error."""

    path: str
    name: str
    offset: int
    line: int
    errors: str


class SpilledIds(NamedTuple):
    """The ids of a job in a scratch file, as native ``typecode`` values."""

    path: str
    typecode: str

    def read(self) -> Iterator["array[int]"]:
        """The ids in batches; the file is removed once read."""
        size = array(self.typecode).itemsize * BATCH_IDS
        with open(self.path, "rb") as f:
            while True:
                data = f.read(size)
                if not data:
                    break
                ids = array(self.typecode)
                ids.frombytes(data)
                yield ids
        os.unlink(self.path)


#: One job: whole documents (each a list of pieces) or one long document in a file, and
#: whether the job starts the corpus (no separator before its first document).
DocumentJob = Tuple[Union[List[List[Piece]], SpilledDocument], bool]


class Scratch:
    """The scratch directory of one run, made at its first use; :meth:`remove` at the end."""

    def __init__(self) -> None:
        self.directory: Optional[str] = None
        self._count = 0

    def new_path(self) -> str:
        if self.directory is None:
            self.directory = scratch_directory()
        self._count += 1
        return os.path.join(self.directory, f"document-{self._count}")

    def remove(self) -> None:
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
            self.directory = None


def _size(piece: Piece) -> int:
    return len(piece) if isinstance(piece, str) else len(piece.data)


def _spilled(head: Piece, path: str) -> SpilledDocument:
    """Where a document whose first piece is ``head`` goes, and how to read it back."""
    if isinstance(head, RawText):
        return SpilledDocument(path, head.name, head.offset, head.line, head.errors)
    return SpilledDocument(path, "<document>", 0, 1, "surrogatepass")


def _write(f: BinaryIO, piece: Piece) -> None:
    f.write(piece.encode("utf-8", "surrogatepass") if isinstance(piece, str) else piece.data)


def _documents(
    texts: Iterable[Tuple[Piece, bool]], scratch: Scratch
) -> Iterator[Union[List[Piece], SpilledDocument]]:
    """Each document: its pieces, or, once they pass :data:`DOCUMENT_CHARS`, a scratch
    file holding them and the rest of the document, written as it is read."""
    items = iter(texts)
    item = next(items, None)
    while item is not None:
        pieces = [item[0]]
        size = _size(item[0])
        item = None
        spilled: Optional[SpilledDocument] = None
        out: Optional[BinaryIO] = None
        try:
            for piece, starts in items:
                if starts:
                    item = (piece, starts)
                    break
                if out is not None:
                    _write(out, piece)
                    continue
                pieces.append(piece)
                size += _size(piece)
                if size > DOCUMENT_CHARS:
                    spilled = _spilled(pieces[0], scratch.new_path())
                    out = open(spilled.path, "wb")
                    for held in pieces:
                        _write(out, held)
                    pieces = []
        finally:
            if out is not None:
                out.close()
        yield pieces if spilled is None else spilled


def document_jobs(
    texts: Iterable[Tuple[Piece, bool]], scratch: Scratch, job_chars: int, first_chars: int
) -> Iterator[DocumentJob]:
    """Whole documents in jobs of about ``job_chars`` characters (the first of
    ``first_chars``); a long document alone in its job, through a scratch file.

    >>> jobs = document_jobs([("ab", True), ("c", False), ("d", True)], Scratch(), 3, 1)
    >>> [(docs, first) for docs, first in jobs]
    [([['ab', 'c']], True), ([['d']], False)]
    """
    batch: List[List[Piece]] = []
    size = 0
    first = True
    limit = first_chars
    for document in _documents(texts, scratch):
        if isinstance(document, SpilledDocument):
            if batch:
                yield batch, first
                batch, size, first = [], 0, False
            yield document, first
            first, limit = False, job_chars
            continue
        batch.append(document)
        size += sum(_size(piece) for piece in document)
        if size >= limit:
            yield batch, first
            batch, size, first, limit = [], 0, False, job_chars
    if batch:
        yield batch, first


def encode_documents(
    tok: HFTokenizer, job: DocumentJob, separator: Optional[int], typecode: str
) -> Union["array[int]", SpilledIds]:
    """The ids of a job's documents, each preceded by the separator but the corpus's
    first (:func:`purebpe.corpus_encoding.encode_corpus` adds the one after the last)."""
    documents, corpus_start = job
    if isinstance(documents, SpilledDocument):
        return _encode_spilled(tok, documents, separator if not corpus_start else None, typecode)
    # Into an array as they come: on PyPy a list of a job's ids, grown a document at a
    # time, would be copied again and again (see ``purebpe.Tokenizer._encode_text``).
    ids = array(typecode)
    for index, pieces in enumerate(documents):
        if separator is not None and (index or not corpus_start):
            ids.append(separator)
        if len(pieces) == 1:
            ids.extend(tok.encode(as_text(pieces[0])))
        else:
            ids.extend(tok.encode_iterable(as_text(piece) for piece in pieces))
    return ids


def _encode_spilled(
    tok: HFTokenizer, document: SpilledDocument, separator: Optional[int], typecode: str
) -> SpilledIds:
    ids_path = document.path + ".ids"
    chunks = read_chunks(document.path, CharacterCutter(), BLOCK_BYTES)
    texts = (
        decode_chunk(
            chunk, document.name, document.offset + offset, document.line + line - 1, document.errors
        )
        for chunk, offset, line in chunks
    )
    stream = iter(tok.encode_iterable(texts))
    with open(ids_path, "wb") as out:
        if separator is not None:
            array(typecode, [separator]).tofile(out)
        while True:
            batch = array(typecode, islice(stream, BATCH_IDS))
            if not batch:
                break
            batch.tofile(out)
    os.unlink(document.path)
    return SpilledIds(ids_path, typecode)
