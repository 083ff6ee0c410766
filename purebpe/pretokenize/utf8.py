"""Reading valid UTF-8 a character at a time: what the scanners' twins on bytes share.

A scanner's twin on UTF-8 (``gpt2.count_utf8``, ``cl100k.scan_utf8_variant``) takes the
same branches as the scanner over a ``str``, on the code points it reads from the bytes,
and writes its pre-tokens as ``bytes`` slices. On PyPy, which keeps a ``str`` as UTF-8,
indexing a string that holds any non-ASCII character goes through an index of character
offsets, and every ``text[i]`` makes a one-character string: reading the bytes skips
both (docs/pretokenization.md). The twins read an ASCII byte inline and call
:func:`char_at` only for a longer character: a call per character cost the compiled build
up to 12% on English text. Each run's loop is written out where it runs, not shared as a
helper: PyPy's JIT does not inline a function that loops, and a ``run_end(data, i, n,
class_of, classes)`` serving every run made the twins 20-40% slower there.
"""

from __future__ import annotations

__all__ = ["char_at", "class_at", "utf8_contraction_end"]


def char_at(data: bytes, i: int) -> int:
    """The character of valid UTF-8 that starts at ``data[i]``, packed as
    ``code_point << 3 | length_in_bytes`` (one int: no tuple, in the compiled build either).

    >>> found = char_at("aé".encode(), 1)
    >>> chr(found >> 3), found & 7
    ('é', 2)
    """
    byte = data[i]
    if byte < 0x80:
        return byte << 3 | 1
    if byte < 0xE0:
        return ((byte & 0x1F) << 6 | (data[i + 1] & 0x3F)) << 3 | 2
    if byte < 0xF0:
        return ((byte & 0x0F) << 12 | (data[i + 1] & 0x3F) << 6 | (data[i + 2] & 0x3F)) << 3 | 3
    code = (byte & 0x07) << 18 | (data[i + 1] & 0x3F) << 12 | (data[i + 2] & 0x3F) << 6
    return (code | (data[i + 3] & 0x3F)) << 3 | 4


def class_at(data: bytes, i: int, class_of: bytes) -> int:
    """The class (in ``class_of``, a table by code point) of the character at ``data[i]``.

    >>> class_at("aé".encode(), 1, bytes(range(256)))
    233
    """
    byte = data[i]
    return class_of[byte] if byte < 0x80 else class_of[char_at(data, i) >> 3]


def utf8_contraction_end(data: bytes, i: int, n: int) -> int:
    """:func:`~._tables.contraction_end` on UTF-8: the end of a contraction starting at
    ``data[i]``, or 0. ``byte | 0x20`` folds an ASCII letter's case, and U+017F LATIN
    SMALL LETTER LONG S, which ``regex`` folds to ``s``, is the two bytes C5 BF.

    >>> utf8_contraction_end(b"'Re", 0, 3), utf8_contraction_end("'\u017f".encode(), 0, 3)
    (3, 3)
    """
    if i + 1 >= n or data[i] != 0x27:
        return 0
    after = data[i + 1] | 0x20
    if after == 0x73 or after == 0x74 or after == 0x64 or after == 0x6D:  # s t d m
        return i + 2
    if i + 2 < n:
        if data[i + 1] == 0xC5 and data[i + 2] == 0xBF:
            return i + 3
        last = data[i + 2] | 0x20
        if (after == 0x6C and last == 0x6C) or ((after == 0x76 or after == 0x72) and last == 0x65):
            return i + 3  # ll ve re
    return 0
