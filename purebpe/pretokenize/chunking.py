"""Chunking: cut text into pieces that can be pre-tokenized apart without changing the result.

Counting streams files in chunks (:func:`read_chunks`), and the tokenizer streams text the
same way (:func:`cut_stream`): both cut only where :class:`ChunkCutter` says that cutting
cannot change the words. :func:`decode_chunk`, :func:`check_text`, :func:`clean_text` and
:func:`decode_stream` turn bytes, or items of a text iterable, into checked text, naming
where bad input is.
"""

from __future__ import annotations

import codecs
import os
import re
from contextlib import nullcontext
from typing import BinaryIO, Callable, Iterable, Iterator, List, Optional, Pattern, Sequence, Tuple, Union

from .._atomic import PathLike
from ..errors import InputError, PureBPEError
from . import Pretokenizer, cut_finder

#: Bytes read per chunk. Large enough that per-chunk overhead vanishes, small enough that
#: a pool of workers stays busy and memory stays flat.
CHUNK_BYTES = 1 << 22


class ChunkCutter:
    """Finds the last position in a buffer where a chunk may end without changing the counts.

    Two kinds of safe cut, tried in this order:

    * just before a special token whose match is final (no longer special token could
      start there with more text): pieces between special tokens are counted separately
      anyway;
    * where the pre-tokenizer's own rule allows (``safe_cut`` in each module of
      :mod:`purebpe.pretokenize`, with the argument for the rule): after a newline for
      ``"none"``; around whitespace, or between characters of different classes, for the
      named patterns; nowhere for an arbitrary :class:`purebpe.Pattern`.

    A pre-tokenizer cut is only taken where no special-token match spans it. Every cut stays
    at least ``reserve`` bytes before the end of the buffer (and as far as the longest
    special token), so a string of that length that starts before the cut ends inside the
    buffer: a caller can look for it in the whole buffer before cutting.
    """

    def __init__(self, special_tokens: Sequence[str], pretokenizer: Pretokenizer, reserve: int = 0) -> None:
        self.pretokenizer = pretokenizer
        self._text_cut = cut_finder(pretokenizer)
        encoded = sorted({t.encode("utf-8") for t in special_tokens}, key=lambda t: (-len(t), t))
        self.special: Optional[Pattern[bytes]] = (
            re.compile(b"|".join(re.escape(t) for t in encoded)) if encoded else None
        )
        # Bytes kept after every cut: the longest special token, or more if asked.
        self.lookahead = max(len(encoded[0]) if encoded else 0, reserve)

    def cut(self, buf: bytes) -> int:
        """The last safe cut in ``buf`` (``0 < cut < len(buf)``), or -1 if there is none."""
        limit = len(buf) - self.lookahead  # matches starting later are not final yet
        spans: List[Tuple[int, int]] = []
        if self.special is not None:
            spans = [m.span() for m in self.special.finditer(buf) if m.start() <= limit]
            starts = [s for s, _ in spans if s > 0]
            if starts:
                return starts[-1]
        end = min(len(buf) - 1, limit)
        while end > 0:
            cut = self._text_cut(buf, end)
            if cut <= 0:
                return -1
            if not any(s < cut < e for s, e in spans):
                return cut
            end = cut - 1
        return -1


def read_chunks(
    path: Union[PathLike, BinaryIO], cutter: ChunkCutter, chunk_bytes: int = CHUNK_BYTES
) -> Iterator[Tuple[bytes, int, int]]:
    """Yield ``(chunk, byte_offset, first_line_number)`` covering the whole file, in order.

    ``path`` may also be a binary stream, read from where it is to its end (not closed).

    Where a buffer has no safe cut (a huge line), the next read is twice as large, so a
    chunk of ``n`` bytes costs O(n) copying and cut searching, not O(n^2 / chunk_bytes).
    """
    offset, line = 0, 1
    carry = b""
    read_size = chunk_bytes
    with open(path, "rb") if isinstance(path, (str, os.PathLike)) else nullcontext(path) as f:
        while True:
            block = f.read(read_size)
            buf = carry + block if carry else block
            if not block:
                if buf:
                    yield buf, offset, line
                return
            cut = cutter.cut(buf)
            if cut <= 0:
                carry = buf  # no safe cut yet: read on (a huge line is kept whole)
                read_size = 2 * read_size
                continue
            read_size = chunk_bytes
            chunk, carry = buf[:cut], buf[cut:]
            yield chunk, offset, line
            offset += len(chunk)
            line += chunk.count(b"\n")


def decode_chunk(data: bytes, source: str, offset: int, line: int, errors: str) -> str:
    """Decode a chunk as UTF-8; invalid bytes raise :class:`InputError` with their location."""
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as exc:
        raise InputError(
            f"invalid UTF-8 (byte 0x{data[exc.start]:02x}: {exc.reason}); "
            "pass errors='replace' (--errors replace) to substitute U+FFFD",
            source,
            offset=offset + exc.start,
            line=line + data.count(b"\n", 0, exc.start),
        ) from None


def is_utf8(data: bytes) -> bool:
    """Whether ``data`` is valid UTF-8 (all ASCII, found by a C loop, or it decodes).

    >>> is_utf8(b"caf\\xc3\\xa9"), is_utf8(b"caf\\xe9")
    (True, False)
    """
    if data.isascii():
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def check_text(text: object, index: int, errors: str) -> str:
    """Validate one item of a text iterable: a ``str`` that UTF-8 can encode."""
    if not isinstance(text, str):
        raise PureBPEError(f"<text {index}>: expected str, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        if errors == "replace":
            # One U+FFFD per lone surrogate, as tiktoken does.
            return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        raise InputError(
            f"lone surrogate {text[exc.start]!r} cannot be encoded as UTF-8; "
            "pass errors='replace' to substitute U+FFFD",
            f"<text {index}>",
            offset=exc.start,
        ) from None
    return text


def clean_text(text: object) -> str:
    """``text`` checked to be a ``str``, with lone surrogates replaced by U+FFFD."""
    if not isinstance(text, str):
        raise PureBPEError(f"expected text as str, got {type(text).__name__}")
    return check_text(text, 0, "replace")


def decode_stream(items: Iterable[Union[str, bytes]]) -> Iterator[str]:
    """``items`` as text: ``bytes`` items are decoded as one UTF-8 stream; invalid UTF-8
    raises :class:`InputError` with its byte offset in the stream, and an item of any
    other type :class:`PureBPEError` naming its index (as ``encode`` refuses non-text).

    >>> list(decode_stream(["é", b"\\xc3", b"\\xa9"]))
    ['é', '', 'é']
    """
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
    offset = 0  # bytes of the stream before the current item
    for index, item in enumerate(items):
        if isinstance(item, str):
            yield item
            continue
        if not isinstance(item, (bytes, bytearray)):
            raise PureBPEError(f"encode_iterable: item {index} is {type(item).__name__}, not str or bytes")
        try:
            yield decoder.decode(item)
        except UnicodeDecodeError as exc:
            raise _invalid_utf8(offset, exc, len(item)) from None
        offset += len(item)
    try:
        decoder.decode(b"", final=True)
    except UnicodeDecodeError as exc:
        raise _invalid_utf8(offset, exc, 0) from None


def _invalid_utf8(offset: int, exc: UnicodeDecodeError, item_size: int) -> InputError:
    """Where invalid UTF-8 is in the stream: the decoder's pending bytes come before the item."""
    pending = len(exc.object) - item_size
    return InputError(f"invalid UTF-8 ({exc.reason})", "the byte stream", offset - pending + exc.start)


def cut_stream(
    texts: Iterable[str],
    cutter: ChunkCutter,
    check: Callable[[str, int], None],
    chunk_chars: int,
) -> Iterator[str]:
    """The concatenation of ``texts`` in pieces, each cut where ``cutter`` allows.

    Text is gathered until about ``chunk_chars`` characters are pending, cleaned
    (:func:`clean_text`), passed to ``check(text, offset in the stream)``, and cut at its
    last safe place; a stretch with no safe place is held until twice as much text has
    come. A high surrogate at the end of a buffer is held, as it may pair with a low one
    in the next item. The pieces joined are the whole stream, cleaned.
    """
    pending: List[str] = []
    size = 0
    done = 0  # characters of the stream already yielded: where ``pending`` starts
    threshold = chunk_chars
    for chunk in texts:
        pending.append(chunk)
        size += len(chunk)
        if size < threshold:
            continue
        text = "".join(pending)
        held = text[-1] if "\ud800" <= text[-1] <= "\udbff" else ""
        clean = clean_text(text[: len(text) - len(held)])
        # The cutter keeps its reserve before the end: a string of that length that starts
        # before the cut (a disallowed token) is whole in what ``check`` saw.
        check(clean, done)
        data = clean.encode("utf-8")
        cut = cutter.cut(data)
        if cut <= 0:
            pending, size = [data.decode("utf-8"), held], size
            threshold = 2 * size  # look again when twice as much text has come
            continue
        head = data[:cut].decode("utf-8")
        yield head
        done += len(head)
        rest = data[cut:].decode("utf-8") + held
        pending, size, threshold = [rest], len(rest), chunk_chars
    text = clean_text("".join(pending))
    check(text, done)
    yield text
