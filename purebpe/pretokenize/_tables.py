"""What the pattern modules share: per-code-point class tables, counting, ``re`` helpers.

A scanner looks up ``table[ord(char)]`` -- one ``bytes`` of length 0x110000 -- rather than
asking :mod:`unicodedata`, whose Unicode version depends on the interpreter: the tables are
built from ``_unicode_classes.py``, probed from the ``regex`` package, so every engine
agrees with ``regex`` on every code point.
"""

from __future__ import annotations

import platform
import re
from collections import Counter
from typing import Any, Callable, Dict, Final, Iterable, Iterator, List, Protocol, Tuple

from ._unicode_classes import (
    CASELESS_RANGES,
    LETTER_RANGES,
    LOWER_RANGES,
    MARK_RANGES,
    NUMBER_RANGES,
    UPPER_RANGES,
    WHITESPACE_RANGES,
)

Ranges = Tuple[Tuple[int, int], ...]

# The classes of the gpt2 and cl100k scanners (marks are "other" there).
OTHER: Final = 0
LETTER: Final = 1
NUMBER: Final = 2
WHITESPACE: Final = 3
NO_RUN: Final = 255  # no character has this class: "no run is open"


def build_table(classes: Iterable[Tuple[int, Ranges]]) -> bytes:
    """One byte per code point: the class of the last ``(kind, ranges)`` holding it, else 0."""
    table = bytearray(0x110000)
    for kind, ranges in classes:
        fill = bytes((kind,))
        for first, last in ranges:
            table[first : last + 1] = fill * (last - first + 1)
    return bytes(table)


#: letter / number / whitespace / other, for gpt2 and cl100k.
CLASS_OF: Final[bytes] = build_table(
    ((LETTER, LETTER_RANGES), (NUMBER, NUMBER_RANGES), (WHITESPACE, WHITESPACE_RANGES))
)

# The finer classes of the o200k scanner: its words are [Lu Lt Lm Lo M]* [Ll Lm Lo M]+,
# so a letter is upper-only, lower-only or either; marks (not letters) are either too.
CASED_OTHER: Final = 0
CASED_UPPER: Final = 1  # Lu, Lt
CASED_LOWER: Final = 2  # Ll
CASED_EITHER: Final = 3  # Lm, Lo: letters that may stand on both sides
CASED_MARK: Final = 4  # M: not a letter, but on both sides of an o200k word
CASED_NUMBER: Final = 5
CASED_WHITESPACE: Final = 6

#: o200k's classes.
CASED_CLASS_OF: Final[bytes] = build_table(
    (
        (CASED_EITHER, CASELESS_RANGES),
        (CASED_UPPER, UPPER_RANGES),
        (CASED_LOWER, LOWER_RANGES),
        (CASED_MARK, MARK_RANGES),
        (CASED_NUMBER, NUMBER_RANGES),
        (CASED_WHITESPACE, WHITESPACE_RANGES),
    )
)


#: The classes of the 128 ASCII characters, indexed by byte value: the scanners' ASCII
#: paths read ``data[i]`` of the text's bytes (an int, no one-character string and no
#: ``ord``), which PyPy and mypyc both index natively.
ASCII_CLASS_OF: Final[bytes] = CLASS_OF[:128]
ASCII_CASED_CLASS_OF: Final[bytes] = CASED_CLASS_OF[:128]

_APOSTROPHE: Final = 0x27
_CASE_BIT: Final = 0x20  # ASCII letter | 0x20 is the small letter


def ascii_contraction_end(data: bytes, i: int, n: int) -> int:
    """:func:`contraction_end` on ASCII bytes (``data[i]`` an int).

    ``byte | 0x20`` folds the case: of the ASCII characters only ``S`` and ``s`` give ``s``.
    """
    if i + 1 >= n or data[i] != _APOSTROPHE:
        return 0
    after = data[i + 1] | _CASE_BIT
    if after == 0x73 or after == 0x74 or after == 0x64 or after == 0x6D:  # s t d m
        return i + 2
    if i + 2 < n:
        last = data[i + 2] | _CASE_BIT
        if (after == 0x6C and last == 0x6C) or ((after == 0x76 or after == 0x72) and last == 0x65):
            return i + 3  # ll ve re
    return 0


def contraction_end(text: str, i: int, n: int) -> int:
    """The end of a contraction starting at ``text[i]``, or 0 if none starts there.

    cl100k's ``'(?i:[sdmt]|ll|ve|re)`` and o200k's ``(?i:'s|'t|'re|'ve|'m|'ll|'d)`` are the
    same set: an apostrophe, then ``s t d m`` or ``ll ve re`` in any case (``regex`` also
    folds U+017F LATIN SMALL LETTER LONG S to ``s``).
    """
    if i + 1 >= n or text[i] != "'":
        return 0
    after = text[i + 1]
    if after in "sStTdDmM\u017f":
        return i + 2
    if i + 2 < n:
        last = text[i + 2]
        if (after in "lL" and last in "lL") or (after in "vVrR" and last in "eE"):
            return i + 3
    return 0


def _add_counts_loop(tokens: List[str], counts: Dict[str, int]) -> None:
    for token in tokens:
        counts[token] = counts.get(token, 0) + 1


def _add_counts_counter(tokens: List[str], counts: Dict[str, int]) -> None:
    # Counter counts in C on CPython; merging then touches each distinct token once.
    for token, count in Counter(tokens).items():
        counts[token] = counts.get(token, 0) + count


# Measured on 8 MB of en-gcide: Counter-then-merge is ~15% faster on CPython, the plain
# loop ~20% faster on PyPy (whose JIT compiles it; Counter is Python code there too).
add_counts = _add_counts_loop if platform.python_implementation() == "PyPy" else _add_counts_counter

# --------------------------------------------------------------------------------------
# Spelling the classes out for the standard library's ``re`` (which has no \p{..}).
# --------------------------------------------------------------------------------------
BMP_END = 0xFFFF
#: A character above U+FFFF: where a pattern needs its full classes (see :func:`re_split`).
ABOVE_BMP: "re.Pattern[str]" = re.compile("[\U00010000-\U0010ffff]")


def re_class_body(ranges: Ranges, bmp_only: bool) -> str:
    """The inside of a ``[...]`` matching ``ranges``; ``\\U`` escapes keep it printable."""
    parts = []
    for first, last in ranges:
        if bmp_only:
            if first > BMP_END:
                continue
            last = min(last, BMP_END)
        parts.append("\\U%08x" % first if first == last else "\\U%08x-\\U%08x" % (first, last))
    return "".join(parts)


def compiled_forms(re_source: Callable[[bool], str]) -> Callable[[bool], "re.Pattern[str]"]:
    """``form(bmp_only)``: a pattern's ``re`` form, compiled on first use (~20 ms each)."""
    cache: Dict[bool, "re.Pattern[str]"] = {}

    def form(bmp_only: bool) -> "re.Pattern[str]":
        pattern = cache.get(bmp_only)
        if pattern is None:
            pattern = cache[bmp_only] = re.compile(re_source(bmp_only))
        return pattern

    return form


def re_split(
    text: str, bmp: "re.Pattern[str]", full: "re.Pattern[str]", line_start_ok: "LineStartRule"
) -> List[str]:
    """``findall`` with the BMP-only form of a pattern, the full form only where needed.

    ``re`` stores the part of a class above U+FFFF as a list of ranges that it scans one by
    one whenever the fast bitmap of the part below says no -- for every space or comma
    that ends a run of letters -- which makes the full form 4-5x slower; the BMP form
    gives the same tokens on any text without a character above U+FFFF.  So the full form
    runs only on the lines around such characters, cut after a newline where
    ``line_start_ok(char)`` says the character starting the next line makes that safe
    (the pattern module's safe-cut rule).  ``findall(text, pos, endpos)`` sees the text
    as ending at ``endpos``, as a cut must.
    """
    if ABOVE_BMP.search(text) is None:
        tokens: List[str] = bmp.findall(text)
        return tokens
    tokens = []
    for start, end, bmp_only in bmp_segments(text, line_start_ok):
        tokens += (bmp if bmp_only else full).findall(text, start, end)
    return tokens


def bmp_segments(text: str, line_start_ok: "LineStartRule") -> Iterator[Tuple[int, int, bool]]:
    """``(start, end, bmp_only)`` of the stretches of ``text`` a pattern may be run on apart,
    in order and covering it: ``bmp_only`` where no character above U+FFFF is in the
    stretch; each other stretch is the lines around such characters, cut where
    ``line_start_ok`` allows (:func:`re_split`).

    >>> list(bmp_segments("ab\\ncd\\n\U0001f600\\nef", lambda char: char != " "))
    [(0, 6, True), (6, 8, False), (8, 10, True)]
    """
    done = 0  # text[:done] is given out
    above = ABOVE_BMP.search(text)
    while above is not None:
        start = _line_cut(text, done, above.start(), line_start_ok, backwards=True)
        end = _line_cut(text, above.start(), len(text), line_start_ok, backwards=False)
        if start > done:
            yield done, start, True
        yield start, end, False
        done = end
        above = ABOVE_BMP.search(text, done)
    if done < len(text):
        yield done, len(text), True


def split_at_matches(text: str, matches: Iterable[Any]) -> List[str]:
    """``text`` cut around ``matches`` (``re``/``regex`` match objects, in order): each
    match and the gap before it when not empty, then the rest (``"".join`` gives ``text``).

    An empty match cuts nothing.

    >>> split_at_matches("a1b22", re.finditer(r"\\d*", "a1b22"))
    ['a', '1', 'b', '22']
    """
    pieces: List[str] = []
    done = 0
    for found in matches:
        start, end = found.span()
        if end == start:
            continue
        if start > done:
            pieces.append(text[done:start])
        pieces.append(text[start:end])
        done = end
    if done < len(text):
        pieces.append(text[done:])
    return pieces


class LineStartRule(Protocol):
    def __call__(self, char: str) -> bool: ...


def _line_cut(text: str, low: int, high: int, ok: LineStartRule, backwards: bool) -> int:
    """The last (or first) safe cut just after a newline in ``text[low:high]``, or the bound."""
    find = text.rfind if backwards else text.find
    newline = find("\n", low, high)
    while newline >= 0:
        if newline + 1 < len(text) and ok(text[newline + 1]):
            return newline + 1
        newline = text.rfind("\n", low, newline) if backwards else text.find("\n", newline + 1, high)
    return low if backwards else high


# --------------------------------------------------------------------------------------
# Safe cuts in UTF-8 bytes (see ``ChunkCutter`` in purebpe.counting)
# --------------------------------------------------------------------------------------
def is_ascii_letter(byte: int) -> bool:
    return 0x61 <= byte <= 0x7A or 0x41 <= byte <= 0x5A


def is_ascii_digit(byte: int) -> bool:
    return 0x30 <= byte <= 0x39


def certainly_not_space(buf: bytes, i: int) -> bool:
    """Whether the character starting at byte ``i`` is non-whitespace under every definition."""
    if i >= len(buf):
        return False
    byte = buf[i]
    if 0x21 <= byte <= 0x7E:
        return True
    if byte < 0xC2 or byte > 0xF4:
        return False
    char = buf[i : i + 4].decode("utf-8", "ignore")[:1]
    return char.isalnum()


#: How many candidate bytes a cut search looks at before it gives up (cuts are an
#: optimisation of memory: failing to find one only means reading on).
CUT_TRIES: Final = 64


def newline_space_or_class_cut(
    buf: bytes, end: int, joins_after_newline: bytes, safe_between: "PairRule"
) -> int:
    """The cuts cl100k and o200k share (their modules give the argument), last first:

    just after a ``\n`` that a certain non-space starts the next line with (unless it is
    one of ``joins_after_newline``); else just before a U+0020 that an ASCII graphic
    character precedes; else between two characters ``safe_between`` allows.
    """
    i = buf.rfind(b"\n", 0, end)
    tries = 0
    while i >= 0 and tries < CUT_TRIES:
        if buf[i + 1 : i + 2] not in joins_after_newline and certainly_not_space(buf, i + 1):
            return i + 1
        i = buf.rfind(b"\n", 0, i)
        tries += 1
    i = buf.rfind(b" ", 1, end + 1)
    tries = 0
    while i > 0 and tries < CUT_TRIES:
        if 0x21 <= buf[i - 1] <= 0x7E:
            return i
        i = buf.rfind(b" ", 1, i)
        tries += 1
    return last_class_change(buf, end, safe_between)


class PairRule(Protocol):
    """Whether a cut between two adjacent characters leaves a pattern's tokens unchanged."""

    def __call__(self, before: str, after: str) -> bool: ...


def last_class_change(buf: bytes, end: int, safe_between: PairRule) -> int:
    """The last character boundary ``i <= end`` where ``safe_between`` allows a cut, or -1.

    Looks back ``4 * CUT_TRIES`` bytes at most: the cut is for text without the usual
    whitespace cuts (base64, one long line of CJK), where such boundaries are dense.
    Only boundaries between two well-formed characters count, so a cut never splits a
    byte sequence that decodes differently in two halves.
    """
    i = end
    low = max(1, end - 4 * CUT_TRIES)
    while i >= low:
        if buf[i] & 0xC0 != 0x80:  # a character starts at byte i
            j = i - 1
            while j > 0 and buf[j] & 0xC0 == 0x80:
                j -= 1
            try:
                before = buf[j:i].decode("utf-8")
                after = buf[i : i + 4].decode("utf-8", "replace")[:1]
            except UnicodeDecodeError:
                before = ""
            if len(before) == 1 and after != "\ufffd" and safe_between(before, after):
                return i
        i -= 1
    return -1
