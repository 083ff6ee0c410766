"""Documents of any input layout, in order: the texts that counting and encoding consume.

A *part* (:class:`Part`) is what one worker reads: a whole file, a byte range of whole
lines of an uncompressed JSON lines file, or one row group of a Parquet file. Its
documents come out as ``(text, starts_document)``: a JSON record or Parquet row is one
document; a text file is one document, coming out in pieces cut where cutting cannot
change the words (:class:`purebpe.pretokenize.chunking.ChunkCutter`). No word spans two
documents. Memory holds one block or one row group per reader, never a whole file.

A regular file is checked before and after its part is read (size, modification time,
inode): a file replaced or rewritten meanwhile fails the run in one line.
"""

from __future__ import annotations

import io
import os
import sys
from contextlib import contextmanager, nullcontext
from typing import (
    Any,
    BinaryIO,
    Iterable,
    Iterator,
    List,
    Literal,
    NamedTuple,
    Optional,
    Tuple,
    Union,
    overload,
)

from ..errors import InputError, PureBPEError
from ..pretokenize.chunking import CHUNK_BYTES, ChunkCutter, decode_chunk, read_chunks
from .compression import STREAM_ERRORS, Prefixed, decompressed, read_head, stream_error
from .inputs import LAYOUTS, STDIN, Source, check_unchanged, expand, recognise, signature_of
from .jsonl import key_path, records
from .parquet import row_group_texts

#: ``--errors`` choices: ``skip`` drops bad records (counted), ``replace`` substitutes
#: U+FFFD for bad UTF-8, ``strict`` fails.
ERRORS = ("strict", "replace", "skip")


class ReadOptions(NamedTuple):
    """How records hold their text, and what to do with bad input."""

    #: The JSON lines key, as a path (``("meta", "body")`` for ``meta.body``).
    keys: Tuple[str, ...] = ("text",)
    #: The Parquet column.
    column: str = "text"
    #: One of :data:`ERRORS`.
    errors: str = "strict"


def read_options(text_key: str = "text", column: str = "text", errors: str = "strict") -> ReadOptions:
    """Checked :class:`ReadOptions`.

    >>> read_options("meta.body").keys
    ('meta', 'body')
    """
    if errors not in ERRORS:
        raise PureBPEError(f"errors must be one of {', '.join(ERRORS)}, not {errors!r}")
    if not isinstance(text_key, str) or not text_key or "" in text_key.split("."):
        raise PureBPEError(f"text_key must be a key or a dotted path of keys, not {text_key!r}")
    if not isinstance(column, str) or not column:
        raise PureBPEError(f"column must be a column name, not {column!r}")
    return ReadOptions(key_path(text_key), column, errors)


class RawText(NamedTuple):
    """A piece of a text file not decoded yet: whoever consumes it decodes it
    (:meth:`text`), so that a worker process, not the reader, pays for the decoding and the
    piece crosses a pipe as the bytes it already is, or less (:func:`shipped`)."""

    data: bytes
    #: Where the piece is, for the message of a decoding error.
    name: str
    offset: int
    line: int
    #: ``"strict"`` or ``"replace"``.
    errors: str
    #: The regular, uncompressed file the bytes are in (``None``: a stream's, or
    #: decompressed): another process can read them from there itself.
    source: Optional[Source] = None

    def text(self) -> str:
        """The piece decoded (bad UTF-8 is an :class:`InputError` naming file, offset and line).

        >>> RawText(b"caf\\xc3\\xa9", "f.txt", 0, 1, "strict").text()
        'café'
        """
        return decode_chunk(self.data, self.name, self.offset, self.line, self.errors)


class FileText(NamedTuple):
    """A piece of a regular, uncompressed text file, by where it is: what a
    :class:`RawText` of such a file crosses a pipe as (:func:`shipped`), a few numbers
    rather than its bytes; the process that gets it reads the bytes from the file (the page
    cache) and decodes them (:meth:`text`)."""

    source: Source
    offset: int
    #: The piece's length in bytes.
    size: int
    #: The number of the line it starts on, for the message of a decoding error.
    line: int
    #: ``"strict"`` or ``"replace"``.
    errors: str

    def text(self) -> str:
        """The piece read and decoded; a file changed since it was recognised, or bad
        UTF-8, is an :class:`InputError`.

        >>> import tempfile
        >>> with tempfile.NamedTemporaryFile(suffix=".txt") as f:
        ...     _ = f.write("abc café".encode()); f.flush()
        ...     FileText(recognise(f.name), 4, 5, 1, "strict").text()
        'café'
        """
        with _opened(Part(self.source, self.offset), None) as f:
            data = f.read(self.size)
            check_unchanged(self.source, f.fileno())
        return decode_chunk(data, self.source.name, self.offset, self.line, self.errors)


#: A document, or a piece of one: text, or a text file's bytes not decoded yet.
Piece = Union[str, RawText]
#: A piece as it is sent to another process (:func:`shipped`).
ShippedPiece = Union[str, RawText, FileText]


def shipped(piece: Piece) -> ShippedPiece:
    """What ``piece`` is sent to another process as: a :class:`FileText` for a
    :class:`RawText` of a regular, uncompressed file (the same text, read there), else
    itself.

    >>> source = Source("f.txt", "text", None, (8, 0, 0, 0))
    >>> shipped(RawText(b"abcd", "f.txt", 4, 1, "strict", source))[1:]
    (4, 4, 1, 'strict')
    >>> shipped(RawText(b"abcd", "<stdin>", 4, 1, "strict"))[0]
    b'abcd'
    """
    if isinstance(piece, RawText) and piece.source is not None:
        return FileText(piece.source, piece.offset, len(piece.data), piece.line, piece.errors)
    return piece


def as_text(piece: ShippedPiece) -> str:
    """A piece as text (its ``text()`` for one not decoded, or not read, yet).

    >>> as_text("ab"), as_text(RawText(b"ab", "f.txt", 0, 1, "strict"))
    ('ab', 'ab')
    """
    return piece if isinstance(piece, str) else piece.text()


class Part(NamedTuple):
    """What one worker reads of one source."""

    source: Source
    #: Byte range of an uncompressed JSON lines file (``length`` -1: to the end)...
    start: int = 0
    length: int = -1
    #: ... and the line it starts on (``None``: found only if an error needs it).
    first_line: Optional[int] = 1
    #: The Parquet row group (-1: every one).
    row_group: int = -1


def sources(items: Iterable[str], layout: str = "auto") -> List[Source]:
    """Every input file recognised; streams (stdin, FIFOs) are recognised when opened."""
    if layout not in LAYOUTS:
        raise PureBPEError(f"format must be one of {', '.join(LAYOUTS)}, not {layout!r}")
    found: List[Source] = []
    for path in expand(list(items)):
        if path == STDIN or not _is_regular(path):
            if layout == "parquet":
                name = "<stdin>" if path == STDIN else path
                raise PureBPEError(
                    f"{name}: Parquet is read from a file, not a stream (its index is at the end)"
                )
            found.append(Source(path, layout, None, None))
        else:
            found.append(recognise(path, layout))
    return found


def _is_regular(path: str) -> bool:
    try:
        return os.path.isfile(path)
    except OSError:
        return False


@contextmanager
def open_stream(source: Source) -> Iterator[Tuple[Source, BinaryIO]]:
    """A stream source (stdin, a FIFO, ``<(...)``) opened and recognised by its first bytes."""
    if source.path == STDIN:
        raw: BinaryIO = sys.stdin.buffer
        if raw is None:  # pragma: no cover - closed stdin
            raise PureBPEError("<stdin>: standard input is closed")
        context = nullcontext(raw)
    else:
        try:
            context = open(source.path, "rb")  # type: ignore[assignment]
        except OSError as exc:
            raise PureBPEError(f"{source.path}: {exc.strerror}") from None
    with context as stream:
        head = read_head(stream)
        known = recognise(source.path, source.layout, head)
        yield known._replace(signature=None), io.BufferedReader(Prefixed(head, stream))


@contextmanager
def open_source(source: Source) -> Iterator[Tuple[Source, BinaryIO]]:
    """Any source opened for reading by this process: a regular file (checked against
    its signature), or a stream recognised by its first bytes (:func:`open_stream`)."""
    if not source.seekable:
        with open_stream(source) as opened:
            yield opened
        return
    with _opened(Part(source), None) as f:
        yield source, f


class _Checked(io.RawIOBase):
    """A decompressed stream whose read errors are bad input: a one-line
    :class:`InputError` naming the file or, with ``errors="skip"``, the end of the stream
    (the rest of a broken stream counted as one skipped record)."""

    def __init__(self, stream: BinaryIO, source: Source, errors: str, skipped: List[int]) -> None:
        self._stream = stream
        self._source = source
        self._errors = errors
        self._skipped = skipped
        self._broken = False

    def readable(self) -> bool:
        return True

    def readinto(self, out: Any) -> int:
        if self._broken:
            return 0
        try:
            data = self._stream.read(len(out))
        except PureBPEError:
            raise
        except STREAM_ERRORS as exc:
            if self._source.compression is None:
                raise InputError(f"cannot be read ({exc})", self._source.name) from None
            if self._errors != "skip":
                raise stream_error(self._source.name, self._source.compression, exc) from None
            self._skipped[0] += 1
            self._broken = True
            return 0
        out[: len(data)] = data
        return len(data)


def checked_stream(raw: BinaryIO, source: Source, errors: str, skipped: List[int]) -> BinaryIO:
    """``raw`` decompressed (by ``source.compression``), its read errors made bad input."""
    data = decompressed(raw, source.compression, source.name)
    if source.compression is None:
        return data
    return io.BufferedReader(_Checked(data, source, errors, skipped), 1 << 20)


@overload
def documents(
    part: Part,
    options: ReadOptions,
    cutter: ChunkCutter,
    skipped: List[int],
    stream: Optional[BinaryIO] = None,
    raw: Literal[False] = False,
    chunk_bytes: int = CHUNK_BYTES,
) -> Iterator[Tuple[str, bool]]: ...


@overload
def documents(
    part: Part,
    options: ReadOptions,
    cutter: ChunkCutter,
    skipped: List[int],
    stream: Optional[BinaryIO],
    raw: bool,
    chunk_bytes: int = CHUNK_BYTES,
) -> Iterator[Tuple[Piece, bool]]: ...


def documents(
    part: Part,
    options: ReadOptions,
    cutter: ChunkCutter,
    skipped: List[int],
    stream: Optional[BinaryIO] = None,
    raw: bool = False,
    chunk_bytes: int = CHUNK_BYTES,
) -> Iterator[Tuple[Piece, bool]]:
    """``(text, starts_document)`` for every document (or text piece) of ``part``, in order.

    ``stream`` is the opened input of a stream source; a regular file is opened here.
    Bad records are counted in ``skipped[0]`` with ``errors="skip"``. With ``raw``, a text
    file's pieces (of about ``chunk_bytes``) come out as :class:`RawText`, left to the
    consumer to decode.
    """
    source = part.source
    name = source.name
    if source.layout == "parquet":
        groups = [part.row_group] if part.row_group >= 0 else range(_row_group_count(source, options))
        for group in groups:
            for text in row_group_texts(source.path, options.column, group, options.errors, skipped):
                yield text, True
        check_unchanged(source)
        return
    with _opened(part, stream) as opened:
        data = checked_stream(opened, source, options.errors, skipped)
        if source.layout == "jsonl":
            texts = records(
                data, name, options.keys, options.errors, skipped, part.length, part.first_line, part.start
            )
            for text in texts:
                yield text, True
        else:
            decode_errors = "replace" if options.errors == "replace" else "strict"
            in_file = source if stream is None and source.compression is None and source.seekable else None
            first = True
            for chunk, offset, line in read_chunks(data, cutter, chunk_bytes):
                piece = RawText(chunk, name, offset, line, decode_errors, in_file)
                yield (piece if raw else piece.text()), first
                first = False
        if source.signature is not None:
            check_unchanged(source, opened.fileno())


@overload
def source_documents(
    source: Source,
    options: ReadOptions,
    cutter: ChunkCutter,
    skipped: List[int],
    raw: Literal[False] = False,
    chunk_bytes: int = CHUNK_BYTES,
) -> Iterator[Tuple[str, bool]]: ...


@overload
def source_documents(
    source: Source,
    options: ReadOptions,
    cutter: ChunkCutter,
    skipped: List[int],
    raw: bool,
    chunk_bytes: int = CHUNK_BYTES,
) -> Iterator[Tuple[Piece, bool]]: ...


def source_documents(
    source: Source,
    options: ReadOptions,
    cutter: ChunkCutter,
    skipped: List[int],
    raw: bool = False,
    chunk_bytes: int = CHUNK_BYTES,
) -> Iterator[Tuple[Piece, bool]]:
    """:func:`documents` of a whole source: a regular file, or a stream opened here
    (:func:`open_stream`)."""
    if source.seekable:
        yield from documents(Part(source), options, cutter, skipped, None, raw, chunk_bytes)
        return
    with open_stream(source) as (known, stream):
        yield from documents(Part(known), options, cutter, skipped, stream, raw, chunk_bytes)


def _row_group_count(source: Source, options: ReadOptions) -> int:
    from .parquet import row_groups

    return row_groups(source.path, options.column)


@contextmanager
def _opened(part: Part, stream: Optional[BinaryIO]) -> Iterator[BinaryIO]:
    if stream is not None:
        yield stream
        return
    source = part.source
    try:
        f = open(source.path, "rb")
    except OSError as exc:
        raise InputError(f"cannot be opened ({exc.strerror})", source.name) from None
    with f:
        if source.signature is not None and signature_of(os.fstat(f.fileno())) != source.signature:
            check_unchanged(source, f.fileno())
        if part.start:
            f.seek(part.start)
        yield f


def capped(
    texts: Iterable[Tuple[str, bool]], doc_cap: Optional[int], max_chars: Optional[int]
) -> Iterator[Tuple[str, bool]]:
    """The first ``doc_cap`` characters of each document, and the first ``max_chars``
    characters of them all, in order.

    >>> list(capped([("abcd", True), ("ef", False), ("ghi", True), ("jk", True)], 3, 5))
    [('abc', True), ('gh', True)]
    """
    total = 0
    in_document = 0
    for text, starts in texts:
        if starts:
            in_document = 0
        if doc_cap is not None:
            text = text[: max(0, doc_cap - in_document)]
        if max_chars is not None:
            text = text[: max(0, max_chars - total)]
        in_document += len(text)
        total += len(text)
        if text or starts:
            yield text, starts
        if max_chars is not None and total >= max_chars:
            return
