"""Streams for ``purebpe encode`` and ``purebpe decode``: text in, ids out, and back.

Input is read in blocks of ``BLOCK_BYTES`` (UTF-8 decoded incrementally, so a character
split between blocks is fine), ids are written in batches, so memory stays flat however
large the file. Ids go out as text (space-separated), as a NumPy ``.npy`` file or as raw
little-endian ``uint16``/``uint32`` (``.bin``), the layouts training pipelines memory-map.
The ``.npy`` header is written by hand (NumPy is optional): a fixed-size header is
written first and rewritten with the final length at the end. File outputs go to a
temporary file beside the target, renamed into place only when complete.
"""

from __future__ import annotations

import argparse
import ast
import codecs
import fcntl
import os
import struct
import sys
from array import array
from contextlib import contextmanager
from pathlib import Path
from typing import (
    IO,
    TYPE_CHECKING,
    Any,
    BinaryIO,
    Dict,
    Iterable,
    Iterator,
    List,
    Optional,
    Set,
    Tuple,
    Union,
)

from .._atomic import atomic_file, check_output_file
from ..errors import InputError, PureBPEError, excerpt
from ..progress import Bar

if TYPE_CHECKING:
    from ..hf import HFTokenizer
    from ..tokenizer import Tokenizer

BLOCK_BYTES = 1 << 20
#: Ids per write: large enough to amortise the call, small enough to keep memory flat.
BATCH_IDS = 1 << 16
#: ``--dtype`` name -> (array typecode, .npy descr).
DTYPES: Dict[str, Tuple[str, str]] = {"uint16": ("H", "<u2"), "uint32": ("I", "<u4")}
#: .npy descr -> array typecode, for reading.
NPY_TYPECODES = {"|u1": "B", "<u2": "H", "<i2": "h", "<u4": "I", "<i4": "i", "<u8": "Q", "<i8": "q"}
NPY_MAGIC = b"\x93NUMPY"
#: Total size of the .npy header we write: room for any length, a multiple of 64.
NPY_HEADER_BYTES = 128
FORMATS = ("text", "npy", "bin")
#: The standard streams that were closed when the command started (``<&-``, ``>&-``):
#: filled by :func:`purebpe.cli.guard_standard_streams`.
CLOSED_STREAMS: Set[str] = set()


def add_format_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help=f"how {what} ids are stored: text (space-separated), npy or bin (raw "
        "little-endian); default: from the file suffix (.npy, .bin), else text",
    )
    parser.add_argument(
        "--dtype",
        choices=tuple(DTYPES),
        default=None,
        help="integer type of npy/bin ids (default: uint16 when every id fits, else uint32)",
    )


def add_tokenizer_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--tokenizer",
        required=True,
        metavar="FILE",
        help="a tokenizer file or folder, recognised by its content: an HF tokenizer.json, a "
        "tiktoken-format rank file (name its --encoding), Mistral's Tekken JSON, GPT-2's "
        "vocab.json + merges.txt, or a purebpe model",
    )
    parser.add_argument(
        "--encoding",
        default=None,
        metavar="NAME",
        help="for a tiktoken-format rank file: the model or OpenAI encoding it belongs to "
        "(llama3, llama4, qwen, qwen3.5, whisper, cl100k_base, ...), which gives its pattern "
        "and special tokens",
    )


def open_tokenizer(path: str, encoding: Optional[str]) -> "Union[Tokenizer, HFTokenizer]":
    """The tokenizer ``--tokenizer`` names, as :meth:`purebpe.Tokenizer.from_file` reads it:
    an HF ``tokenizer.json`` with its whole pipeline, any other kind on purebpe's engine."""
    from ..files.tiktoken_models import PatternNeeded
    from ..tokenizer import Tokenizer

    options = {} if encoding is None else {"encoding": encoding}
    try:
        tokenizer: "Union[Tokenizer, HFTokenizer]" = Tokenizer.from_file(path, **options)
    except PatternNeeded as missing:
        raise PatternNeeded(missing.path, "name it with --encoding") from None
    return tokenizer


def ids_format(path: Optional[str], chosen: Optional[str]) -> str:
    """The ids format: ``--format`` if given, else from the file suffix, else text."""
    if chosen is not None:
        return chosen
    suffix = Path(path).suffix if path and path != "-" else ""
    return {".npy": "npy", ".bin": "bin"}.get(suffix, "text")


def dtype_for(chosen: Optional[str], max_id: int) -> str:
    if chosen is None:
        return "uint16" if max_id < 1 << 16 else "uint32"
    if chosen == "uint16" and max_id >= 1 << 16:
        raise PureBPEError(f"--dtype uint16 cannot hold ids up to {max_id}; use uint32")
    return chosen


def is_std(path: Optional[str]) -> bool:
    return path is None or path == "-"


def check_stdin_open(paths: Iterable[Optional[str]]) -> None:
    """Refuse at once to read a closed stdin (``-``, or no FILE) as if it were empty."""
    if "stdin" in CLOSED_STREAMS and any(is_std(path) for path in paths):
        raise PureBPEError("<stdin>: standard input is closed; give a FILE to read")


@contextmanager
def open_input(path: Optional[str]) -> Iterator[Tuple[BinaryIO, str, Optional[int]]]:
    """``(binary stream, name, size or None)`` for FILE, or stdin for ``-``/nothing."""
    if is_std(path):
        check_stdin_open([path])
        yield sys.stdin.buffer, "<stdin>", None
        return
    assert path is not None
    source = Path(path)
    if source.is_dir():
        raise PureBPEError(f"{source}: is a directory, not a file")
    with open(source, "rb") as f:
        yield f, str(source), source.stat().st_size


def check_output(path: Optional[str]) -> None:
    """Refuse at once an OUTPUT file that could not be written at the end (stdout is fine)."""
    if is_std(path):
        if "stdout" in CLOSED_STREAMS:
            raise PureBPEError("<stdout>: standard output is closed; give -o FILE to write")
    else:
        assert path is not None
        check_output_file(path)


@contextmanager
def atomic_output(path: Optional[str]) -> Iterator[BinaryIO]:
    """A binary stream to ``path``, renamed into place on success; stdout for ``-``/nothing."""
    if is_std(path):
        if "stdout" in CLOSED_STREAMS:
            raise PureBPEError("<stdout>: standard output is closed; give -o FILE to write")
        yield sys.stdout.buffer
        sys.stdout.buffer.flush()
        return
    assert path is not None
    with atomic_file(path) as f:
        yield f


def read_text(stream: BinaryIO, source: str, errors: str, bar: Bar) -> Iterator[str]:
    """The text of ``stream`` in blocks, decoded as UTF-8; bad bytes raise :class:`InputError`."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors)
    consumed = 0  # bytes fed to the decoder before this block
    lines = 1
    while True:
        block = stream.read(BLOCK_BYTES)
        pending = len(decoder.getstate()[0])
        try:
            text = decoder.decode(block, final=not block)
        except UnicodeDecodeError as exc:
            # exc.object is the undecoded tail of the previous block followed by this one.
            data = exc.object
            raise InputError(
                f"invalid UTF-8 (byte 0x{data[exc.start]:02x}: {exc.reason}); "
                "pass --errors replace to substitute U+FFFD",
                source,
                offset=consumed - pending + exc.start,
                line=lines + data.count(b"\n", 0, exc.start),
            ) from None
        consumed += len(block)
        lines += block.count(b"\n")
        bar.update(len(block))
        if text:
            yield text
        if not block:
            return


def batches(ids: Iterable[int], size: int = BATCH_IDS) -> Iterator[List[int]]:
    batch: List[int] = []
    for tid in ids:
        batch.append(tid)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def write_ids(out: BinaryIO, ids: Iterable[int], format: str, dtype: str) -> int:
    """Write ``ids`` to ``out`` in ``format``; returns how many were written."""
    if format == "text":
        return _write_text_ids(out, ids)
    typecode, descr = DTYPES[dtype]
    start = 0
    if format == "npy":
        # The header records the length, known only at the end: it is rewritten then.
        start = out.tell()
        out.write(_npy_header(descr, 0))
    count = 0
    for batch in batches(ids):
        values = array(typecode, batch)
        if sys.byteorder == "big":
            values.byteswap()
        out.write(values.tobytes())
        count += len(batch)
    if format == "npy":
        out.seek(start)
        out.write(_npy_header(descr, count))
        out.seek(0, os.SEEK_END)
    return count


def check_npy_output(out: BinaryIO, name: str) -> None:
    """Refuse, before any ids are written, a ``.npy`` output that cannot be rewound.

    The ``.npy`` header records the number of ids, known only at the end, so the header is
    rewritten then; a pipe cannot be rewound (``--format bin`` can be streamed).
    """
    try:
        seekable = out.seekable() and out.tell() >= 0
        # Opened for appending (``>>``), every write goes to the end, the header's too.
        seekable = seekable and not fcntl.fcntl(out.fileno(), fcntl.F_GETFL) & os.O_APPEND
    except (OSError, ValueError, AttributeError):
        seekable = False
    if not seekable:
        raise PureBPEError(
            f"{name}: a .npy output must be a file (its header records the number of ids, "
            "written at the end), not a pipe or a file opened for appending; write to a file, "
            "or use --format bin"
        )


def _write_text_ids(out: BinaryIO, ids: Iterable[int]) -> int:
    count = 0
    separator = b""
    for batch in batches(ids):
        out.write(separator + " ".join(map(str, batch)).encode("ascii"))
        separator = b" "
        count += len(batch)
    out.write(b"\n")
    return count


def _npy_header(descr: str, length: int) -> bytes:
    """A version 1.0 ``.npy`` header of exactly ``NPY_HEADER_BYTES`` bytes."""
    fields = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': ({length},), }}"
    size = NPY_HEADER_BYTES - len(NPY_MAGIC) - 4
    return NPY_MAGIC + b"\x01\x00" + struct.pack("<H", size) + fields.ljust(size - 1).encode("ascii") + b"\n"


def read_ids(stream: BinaryIO, source: str, format: str, dtype: str) -> Iterator[List[int]]:
    """Batches of the ids stored in ``stream`` (text, npy or bin)."""
    if format == "text":
        return _read_text_ids(stream, source)
    length: Optional[int] = None
    if format == "npy":
        typecode, length = _read_npy_header(stream, source)
    else:
        typecode = DTYPES[dtype][0]
    return _read_binary_ids(stream, source, typecode, length)


def _read_text_ids(stream: BinaryIO, source: str) -> Iterator[List[int]]:
    carry = b""
    while True:
        block = stream.read(BLOCK_BYTES)
        data = carry + block
        words = data.split()
        # A number may continue in the next block unless the block ended in whitespace.
        carry = words.pop() if block and words and not data[-1:].isspace() else b""
        if not all(map(bytes.isdigit, words)):
            # Only plain ASCII digits: int() would also take "+104", "1_05" and "-0".
            bad = next(w for w in words if not w.isdigit())
            raise PureBPEError(f"{source}: {excerpt(bad)} is not a token id (digits 0-9 only)")
        yield [int(word) for word in words]
        if not block:
            return


def _read_binary_ids(
    stream: BinaryIO, source: str, typecode: str, length: Optional[int] = None
) -> Iterator[List[int]]:
    """Batches of raw ids; ``length``, if given (a ``.npy`` header's), must be their number."""
    itemsize = array(typecode).itemsize
    carry = b""
    seen = 0
    while True:
        block = stream.read(BLOCK_BYTES)
        data = carry + block
        usable = len(data) - len(data) % itemsize
        seen += usable // itemsize
        if length is not None and (seen > length or (not block and seen != length)):
            held = f"more than {length}" if seen > length else f"only {seen}"
            raise PureBPEError(
                f"{source}: the .npy header records {length} ids but the file holds {held} "
                "(truncated or appended to?)"
            )
        if not block and usable != len(data):
            raise PureBPEError(f"{source}: {len(data) % itemsize} trailing bytes are not a whole id")
        values = array(typecode)
        values.frombytes(data[:usable])
        if sys.byteorder == "big":
            values.byteswap()
        carry = data[usable:]
        if values:
            yield values.tolist()
        if not block:
            return


def _read_npy_header(stream: BinaryIO, source: str) -> Tuple[str, int]:
    """Check a ``.npy`` header (a 1-D array of integers): the array typecode and length."""
    start = stream.read(len(NPY_MAGIC) + 2)
    if len(start) < len(NPY_MAGIC) + 2 or start[: len(NPY_MAGIC)] != NPY_MAGIC:
        raise PureBPEError(f"{source}: not a .npy file (no NumPy magic bytes)")
    major = start[-2]
    size_format = "<H" if major == 1 else "<I"
    length_bytes = stream.read(struct.calcsize(size_format))
    try:
        (length,) = struct.unpack(size_format, length_bytes)
        text = stream.read(length)
        if len(text) < length:
            raise ValueError(f"the file ends inside the header, after {len(text)} of {length} bytes")
        header: Any = ast.literal_eval(text.decode("latin-1"))
        descr, shape, fortran = header["descr"], header["shape"], header["fortran_order"]
        if not isinstance(shape, tuple) or not isinstance(descr, str):
            raise ValueError(f"descr {descr!r}, shape {shape!r}")
    except (ValueError, SyntaxError, KeyError, TypeError, struct.error, MemoryError, RecursionError) as exc:
        raise PureBPEError(f"{source}: malformed .npy header ({exc})") from None
    if descr not in NPY_TYPECODES or len(shape) != 1 or not _is_count(shape[0]):
        raise PureBPEError(
            f"{source}: .npy holds {descr!r} with shape {excerpt(shape)}; expected a 1-D array of integers"
        )
    del fortran  # irrelevant for 1-D arrays
    return NPY_TYPECODES[descr], shape[0]


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def write_text_stream(out: IO[bytes], pieces: Iterable[bytes]) -> None:
    """Decode byte pieces as one UTF-8 stream (invalid bytes -> U+FFFD) and write the text."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    for piece in pieces:
        out.write(decoder.decode(piece).encode("utf-8"))
    out.write(decoder.decode(b"", final=True).encode("utf-8"))
