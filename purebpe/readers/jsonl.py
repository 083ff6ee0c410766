"""JSON lines: one record per line, its text at a key (``text``, or a dotted path such as
``meta.body`` for nested records).

A blank line is no record. A line that is not JSON, a record without the key, or one whose
value is not a string is bad input: an error naming the file and line, or, with
``errors="skip"``, a record skipped and counted.
"""

from __future__ import annotations

import json
from typing import BinaryIO, Iterator, List, Optional, Tuple

from ..errors import InputError

#: Bytes read per block of a JSON lines stream.
BLOCK_BYTES = 1 << 22


def key_path(text_key: str) -> Tuple[str, ...]:
    """``"meta.body"`` as ``("meta", "body")``.

    >>> key_path("text"), key_path("meta.body")
    (('text',), ('meta', 'body'))
    """
    return tuple(text_key.split("."))


def record_text(line: bytes, keys: Tuple[str, ...], errors: str) -> str:
    """The text of one JSON line's record; a bad record raises ``ValueError`` saying why."""
    try:
        decoded = line.decode("utf-8", "replace" if errors == "replace" else "strict")
    except UnicodeDecodeError as exc:
        raise ValueError(f"invalid UTF-8 (byte 0x{line[exc.start]:02x} at column {exc.start + 1})") from None
    try:
        value = json.loads(decoded)
    except RecursionError:
        raise ValueError("not JSON (nested too deeply)") from None
    except ValueError as exc:
        raise ValueError(f"not JSON ({str(exc)[:80]})") from None
    for key in keys:
        if not isinstance(value, dict) or key not in value:
            raise ValueError(f"the record has no key {'.'.join(keys)!r}")
        value = value[key]
    if not isinstance(value, str):
        raise ValueError(f"{'.'.join(keys)!r} holds {type(value).__name__}, not a string")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        if errors != "replace":
            raise ValueError(
                f"lone surrogate {value[exc.start]!r} at index {exc.start} of the text"
            ) from None
        value = value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return value


def records(
    stream: BinaryIO,
    name: str,
    keys: Tuple[str, ...],
    errors: str,
    skipped: List[int],
    length: int = -1,
    first_line: Optional[int] = 1,
    start: int = 0,
) -> Iterator[str]:
    """The texts of the records in ``stream`` (``length`` bytes of it, or all), in order.

    ``first_line`` is the line number of the first line, or ``None`` when unknown (a byte
    range of a file): an error then finds it by counting the lines before ``start``.
    Bad records are skipped and counted in ``skipped[0]`` when ``errors == "skip"``.
    """
    line_no = 0  # lines read so far
    carry = b""
    left = length
    while True:
        size = BLOCK_BYTES if left < 0 else min(BLOCK_BYTES, left)
        block = stream.read(size) if size else b""
        if left >= 0:
            left -= len(block)
        data = carry + block if carry else block
        if block:
            lines = data.split(b"\n")
            carry = lines.pop()  # the start of a line that continues in the next block
        else:
            lines = [data] if data else []
        for line in lines:
            line_no += 1
            if line.strip():
                try:
                    yield record_text(line, keys, errors)
                except ValueError as exc:
                    if errors != "skip":
                        base = first_line if first_line is not None else _line_at(name, start)
                        raise InputError(str(exc), name, line=base + line_no - 1) from None
                    skipped[0] += 1
        if not block:
            return


def _line_at(path: str, offset: int) -> int:
    """The line number (1-based) of byte ``offset`` of the file ``path``."""
    lines = 1
    with open(path, "rb") as f:
        while offset > 0:
            block = f.read(min(BLOCK_BYTES, offset))
            if not block:
                break
            lines += block.count(b"\n")
            offset -= len(block)
    return lines


def line_ranges(path: str, size: int, target: int) -> List[Tuple[int, int]]:
    """``(start, length)`` byte ranges of about ``target`` bytes covering the file, each
    ending after a newline (or at the end of the file): whole lines, for parallel jobs."""
    ranges: List[Tuple[int, int]] = []
    start = 0
    with open(path, "rb") as f:
        while start < size:
            end = start + target
            if end >= size:
                ranges.append((start, size - start))
                break
            f.seek(end)
            while True:
                block = f.read(1 << 16)
                newline = block.find(b"\n")
                if newline >= 0:
                    end += newline + 1
                    break
                if not block:
                    end = size
                    break
                end += len(block)
            ranges.append((start, min(end, size) - start))
            start = end
    return ranges


def line_blocks(stream: BinaryIO, block_bytes: int = BLOCK_BYTES) -> Iterator[Tuple[bytes, int]]:
    """``(whole lines, number of the first)`` blocks of about ``block_bytes`` covering
    ``stream``: what a worker parses (:func:`records`) when this process decompresses."""
    line = 1
    carry = b""
    while True:
        block = stream.read(block_bytes)
        data = carry + block if carry else block
        if not block:
            if data:
                yield data, line
            return
        end = data.rfind(b"\n") + 1
        if end == 0:
            carry = data  # a line longer than a block: read on
            continue
        yield data[:end], line
        line += data.count(b"\n", 0, end)
        carry = data[end:]
