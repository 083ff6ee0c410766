r"""Mistral's Tekken pattern (``tekken_*.json``): o200k without contractions, single digits.

Tekken files (Mistral NeMo, Pixtral; ``mistral-common``) split with::

    [^\r\n\p{L}\p{N}]?UP*LO+  |  [^\r\n\p{L}\p{N}]?UP+LO*  |  \p{N}
    |  ?[^\s\p{L}\p{N}]+[\r\n/]*  |  \s*[\r\n]+  |  \s+(?!\S)  |  \s+

(``UP``, ``LO`` as in :mod:`.o200k`): o200k's alternatives with no contraction glued to a
word (``"don't"`` is ``"don"``, ``"'t"``) and every digit a token of its own.  It runs on
:func:`purebpe.pretokenize.o200k.scan_variant` with those two switches: a word's end never
depended on what follows it except through the contraction, and a digit run is cut after
every digit instead of every third.  It cuts where o200k cuts (:func:`safe_cut`): o200k
never cuts between a letter and an apostrophe, which is only more careful here, and a
cut between a digit and another class is safe for single digits too.
"""

from __future__ import annotations

from typing import List

from . import o200k
from ._tables import compiled_forms
from ._tables import re_split as re_split_segments
from .sinks import BytesTokenSink, TokenSink

PATTERN = (
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+"
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*"
    r"|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)

#: Cut where o200k cuts (module docstring).
safe_cut = o200k.safe_cut


def re_source(bmp_only: bool) -> str:
    """Tekken's pattern for ``re``."""
    return o200k.re_source_variant(False, 1, bmp_only)


_re_form = compiled_forms(re_source)


def scan(text: str, counts: TokenSink) -> None:
    """Count Tekken's pre-tokens of ``text`` into ``counts``."""
    o200k.scan_variant(text, counts, False, 1)


def scan_utf8(data: bytes, counts: BytesTokenSink) -> None:
    """:func:`scan` on valid UTF-8, pre-tokens as their bytes."""
    o200k.scan_utf8_variant(data, counts, False, 1)


def re_split(text: str) -> List[str]:
    """Tekken's pre-tokens of ``text`` by the standard library's ``re``."""
    return re_split_segments(text, _re_form(True), _re_form(False), o200k.line_start_ok)


__all__ = ["PATTERN", "re_source", "re_split", "safe_cut", "scan", "scan_utf8"]
