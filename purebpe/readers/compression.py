"""Compressed inputs, recognised by their magic bytes: gzip, bzip2, xz and zstd, streamed.

The first bytes of a file say how it is compressed, whatever its name; a name that
promises a compression the bytes do not have (``x.jsonl.gz`` holding plain text) is
refused in one line, as a file that is not what its suffix says. gzip, bzip2 and xz come
with Python; zstd needs Python 3.14's ``compression.zstd`` or an optional backend
(``pip install 'purebpe[zstd]'``: ``pyzstd`` or ``zstandard``). A stream that ends early
(a truncated download) raises :class:`purebpe.InputError` naming the file.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import zlib
from typing import IO, Any, BinaryIO, Optional

from ..errors import InputError, PureBPEError

#: Compression name -> the bytes every such stream starts with.
MAGIC = {
    "gzip": b"\x1f\x8b",
    "bzip2": b"BZh",
    "xz": b"\xfd7zXZ\x00",
    "zstd": b"\x28\xb5\x2f\xfd",
}
#: File name suffix -> the compression it promises.
SUFFIXES = {".gz": "gzip", ".gzip": "gzip", ".bz2": "bzip2", ".xz": "xz", ".zst": "zstd", ".zstd": "zstd"}
#: Bytes read ahead to recognise a compression.
MAGIC_BYTES = 6
#: Compressed bytes read per step of a zstandard stream.
_ZSTD_READ = 1 << 20


def sniff(head: bytes) -> Optional[str]:
    """The compression whose magic bytes ``head`` starts with, or ``None``.

    >>> sniff(b"\\x1f\\x8b\\x08\\x00"), sniff(b"hello")
    ('gzip', None)
    """
    for name, magic in MAGIC.items():
        if head.startswith(magic):
            return name
    return None


def decompressed(raw: BinaryIO, compression: Optional[str], source: str) -> BinaryIO:
    """A binary stream of ``raw``'s decompressed bytes (``raw`` itself when not compressed)."""
    if compression is None:
        return raw
    if compression == "gzip":
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    if compression == "bzip2":
        return bz2.BZ2File(raw, "rb")  # type: ignore[return-value]
    if compression == "xz":
        return lzma.LZMAFile(raw, "rb")  # type: ignore[return-value]
    return _zstd_stream(raw, source)


def zstd_available() -> bool:
    """Whether some zstd backend can be imported."""
    try:
        _zstd_backend()
    except PureBPEError:
        return False
    return True


def _zstd_backend() -> Any:
    for name in ("compression.zstd", "pyzstd", "zstandard"):
        try:
            return __import__(name, fromlist=["_"])
        except ImportError:
            continue
    raise PureBPEError("no zstd backend")


def _zstd_stream(raw: BinaryIO, source: str) -> BinaryIO:
    try:
        backend = _zstd_backend()
    except PureBPEError:
        raise PureBPEError(
            f"{source}: is zstd-compressed and no zstd module is installed; "
            "pip install 'purebpe[zstd]' (pyzstd or zstandard), or use Python 3.14+"
        ) from None
    if backend.__name__ == "zstandard":
        return io.BufferedReader(_ZstandardReader(backend, raw), 1 << 16)
    return backend.ZstdFile(raw, "rb")  # type: ignore[no-any-return]


class _ZstandardReader(io.RawIOBase):
    """``zstandard``'s decompressor as a stream that raises at a truncated end.

    (Its own ``stream_reader`` ends quietly when the input stops inside a frame.)
    """

    def __init__(self, module: Any, raw: BinaryIO) -> None:
        self._module = module
        self._raw = raw
        self._obj = module.ZstdDecompressor().decompressobj()
        self._buffer = b""
        self._in_frame = False

    def readable(self) -> bool:
        return True

    def readinto(self, out: Any) -> int:
        while not self._buffer:
            data = self._raw.read(_ZSTD_READ)
            if not data:
                if self._in_frame:
                    raise EOFError("compressed file ended before the end-of-stream marker was reached")
                return 0
            while data:
                self._in_frame = True
                self._buffer += self._obj.decompress(data)
                if self._obj.eof:  # a frame ended; more frames may follow
                    data = self._obj.unused_data
                    self._obj = self._module.ZstdDecompressor().decompressobj()
                    self._in_frame = False
                else:
                    data = b""
        n = min(len(out), len(self._buffer))
        out[:n] = self._buffer[:n]
        self._buffer = self._buffer[n:]
        return n


#: What a broken compressed stream raises, by backend.
STREAM_ERRORS = (EOFError, OSError, zlib.error, lzma.LZMAError, ValueError)


def stream_error(
    source: str, compression: Optional[str], exc: BaseException, offset: Optional[int] = None
) -> InputError:
    """The one-line error for a compressed stream that cannot be read to its end."""
    what = f"{compression} stream" if compression else "file"
    reason = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
    return InputError(f"the {what} is truncated or corrupt ({reason[:120]})", source, offset=offset)


def read_head(stream: IO[bytes]) -> bytes:
    """Up to :data:`MAGIC_BYTES` first bytes of a stream that cannot seek back (a pipe)."""
    head = b""
    while len(head) < MAGIC_BYTES:
        more = stream.read(MAGIC_BYTES - len(head))
        if not more:
            break
        head += more
    return head


class Prefixed(io.RawIOBase):
    """A stream that returns ``head`` and then the rest of ``stream``: the bytes read to
    recognise a pipe's compression, put back."""

    def __init__(self, head: bytes, stream: IO[bytes]) -> None:
        self._head = head
        self._stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, out: Any) -> int:
        if self._head:
            n = min(len(out), len(self._head))
            out[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._stream.read(len(out))
        out[: len(data)] = data
        return len(data)
