r"""SuperBPE's stage-2 pattern, split "isolated": its scanner and its safe cuts.

The definition is the reference recipe's pattern (``PythonNut/superbpe``), run by the
``regex`` package as HF's ``Split(pattern, "isolated")`` -- the matches *and* the stretches
of text between them are pieces::

    \p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)

This module finds the same pieces without ``regex`` (so ``train --superbpe`` needs no
optional package), with two engines proven equal to it: the scanner (:func:`scan`) and the
standard library's ``re`` with the classes spelled out (:func:`re_split`; its BMP-only
form, as the full form is slower than the scanner: a text holding a character above
U+FFFF goes to the scanner).  :func:`split` and :func:`count` use the faster one here:
the scanner on PyPy, whose JIT compiles it, and where this module is compiled
(``setup.py``); ``re`` on interpreted CPython, where it is 2.5x faster than the scanner.  What matches at a
position ``i`` (alternatives in order, the first that matches wins; where none does, ``text[i]``
belongs to the gap before the next match):

1. A number character: it and up to two more that follow (``"12345"`` is ``"123"``,
   ``"45"``).
2. A run of two or more "other" characters (not whitespace, letter or number), led by at
   most one U+0020, with every ``\r``, ``\n`` and ``/`` right after it (``"!!\n/"``; a
   ``/`` straight after the run is "other", so the run has taken it already).  A space
   followed by one "other" character is not a match; neither is a lone "other" character.
3. A run of U+0020 spaces that whitespace or the end of the text follows, whole; a run
   followed by a non-space gives back its last space (``(?!\S)`` backtracks one step), so
   a single space before a non-space is no match.

Safe cuts (:func:`safe_cut`): just before an ASCII digit, or before the first of two ASCII
"other" characters other than ``/``, where the byte before is ASCII and neither a U+0020
space nor of the class that follows.  A match starts there in the whole text -- nothing
before it can run on into that class, and no run of spaces ends there -- and every match
before it ended for a reason that the cut does not change (alternative 3's look-ahead
only ever looks at a space after a space; a ``[\r\n/]*`` tail could take a ``/``, which is
why ``/`` never starts a cut).  Gaps are split at matches only, so text without digits or
punctuation runs (plain prose) has no cut: its pieces *are* that long.
"""

from __future__ import annotations

import platform
from typing import Dict, List

from ._tables import (
    ABOVE_BMP,
    CLASS_OF,
    NUMBER,
    OTHER,
    WHITESPACE,
    add_counts,
    compiled_forms,
    is_ascii_digit,
    re_class_body,
    split_at_matches,
)
from ._unicode_classes import LETTER_RANGES, NUMBER_RANGES, WHITESPACE_RANGES
from .sinks import TokenList, TokenSink

PATTERN = r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)"


def scan(text: str, counts: TokenSink) -> None:
    """Count the pieces of ``text`` (matches and the gaps between them) into ``counts``.

    ``text[done:i]`` is the gap seen so far.  Letters, lone spaces and lone punctuation
    -- most of any text -- only move ``i`` on; each match costs one look at its run.
    """
    class_of = CLASS_OF
    n = len(text)
    done = 0
    i = 0
    while i < n:
        char = text[i]
        kind = class_of[ord(char)]
        if kind == NUMBER:  # 1. \p{N}{1,3}
            end = i + 1
            while end < n and end < i + 3 and class_of[ord(text[end])] == NUMBER:
                end += 1
        elif kind == OTHER or char == " ":
            # 2. " ?[^\s\p{L}\p{N}]{2,}[\r\n/]*"
            first = i + 1 if char == " " else i
            end = first
            while end < n and class_of[ord(text[end])] == OTHER:
                end += 1
            if end - first >= 2:
                while end < n and (text[end] == "\n" or text[end] == "\r" or text[end] == "/"):
                    end += 1
            elif char == " ":
                # 3. " +(?!\S)"
                end = i + 1
                while end < n and text[end] == " ":
                    end += 1
                if end < n and class_of[ord(text[end])] != WHITESPACE:
                    end -= 1  # give back the last space; a lone one is no match
                if end == i:
                    i += 1
                    continue
            else:
                i = end  # one "other" character: part of the gap
                continue
        else:
            i += 1  # a letter, or whitespace other than U+0020: part of the gap
            continue
        # A match text[i:end], after the gap text[done:i].
        if done < i:
            gap = text[done:i]
            counts[gap] = counts.get(gap, 0) + 1
        token = text[i:end]
        counts[token] = counts.get(token, 0) + 1
        done = i = end
    if done < n:
        gap = text[done:n]
        counts[gap] = counts.get(gap, 0) + 1


def scan_split(text: str) -> List[str]:
    """The pieces of ``text`` by the scanner, in order (``"".join`` gives ``text`` back).

    >>> scan_split("by the way, 2024!!  ok")
    ['by the way, ', '202', '4', '!!', ' ', ' ok']
    """
    tokens = TokenList()
    scan(text, tokens)
    return tokens.tokens


def re_source(bmp_only: bool) -> str:
    """The pattern for ``re``: the classes spelled out (``(?!\\S)`` as "no non-space")."""
    letter = re_class_body(LETTER_RANGES, bmp_only)
    number = re_class_body(NUMBER_RANGES, bmp_only)
    space = re_class_body(WHITESPACE_RANGES, bmp_only)
    return f"[{number}]{{1,3}}| ?[^{space}{letter}{number}]{{2,}}[\\r\\n/]*| +(?![^{space}])"


_re_form = compiled_forms(re_source)


def re_split(text: str) -> List[str]:
    """The pieces of ``text`` by ``re``: each match, and the gap before it when not empty.

    >>> re_split("by the way, 2024!!  ok")
    ['by the way, ', '202', '4', '!!', ' ', ' ok']
    """
    if ABOVE_BMP.search(text) is not None:
        return scan_split(text)
    return split_at_matches(text, _re_form(True).finditer(text))


def _count_by_re(text: str, counts: Dict[str, int]) -> None:
    add_counts(re_split(text), counts)


#: The scanner where it is compiled -- by PyPy's JIT, or by mypyc (this module is then an
#: extension, not a ``.py`` file) -- else ``re``.
_SCANNER_IS_FASTER = platform.python_implementation() == "PyPy" or not __file__.endswith(".py")
split = scan_split if _SCANNER_IS_FASTER else re_split
count = scan if _SCANNER_IS_FASTER else _count_by_re


def _starts_cut(buf: bytes, i: int) -> bool:
    """Whether a match certainly starts at byte ``i`` whatever precedes ``buf[i - 1]``."""
    byte, before = buf[i], buf[i - 1]
    if before >= 0x80 or before == 0x20:
        return False
    if is_ascii_digit(byte):
        return not is_ascii_digit(before)
    # ``before`` is ASCII here, and may be a control character: "other" to the pattern
    # (U+001C-U+001F are no ``\s`` in ``regex``, though ``str.isspace`` says they are), so
    # a run of "other" would start before it.
    return (
        _is_ascii_other(byte)
        and byte != 0x2F
        and i + 1 < len(buf)
        and _is_ascii_other(buf[i + 1])
        and CLASS_OF[before] != OTHER
    )


def _is_ascii_other(byte: int) -> bool:
    """An ASCII character of class "other": graphic, neither letter nor digit."""
    return 0x21 <= byte <= 0x7E and CLASS_OF[byte] == OTHER


#: How far back :func:`safe_cut` looks: cuts are an optimisation of memory, so failing to
#: find one only means reading on.
CUT_LOOKBACK = 1 << 16


def safe_cut(buf: bytes, end: int) -> int:
    """The last cut at or before byte ``end`` that leaves the pieces unchanged, or -1.

    >>> data = "see x42 and a!! there".encode()
    >>> safe_cut(data, len(data) - 1), safe_cut(data, 3)
    (13, -1)
    """
    low = max(1, end - CUT_LOOKBACK)
    i = min(end, len(buf) - 1)
    while i >= low:
        if _starts_cut(buf, i):
            return i
        i -= 1
    return -1


__all__ = ["PATTERN", "count", "re_source", "re_split", "safe_cut", "scan", "scan_split", "split"]
