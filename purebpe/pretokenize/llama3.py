r"""Llama 3's pattern: cl100k as tiktoken first wrote it, run by the cl100k scanner.

Llama 3 (``llama_models/llama3/tokenizer.py``, and HF's Llama 3 / GPT-4 ``tokenizer.json``)
splits with tiktoken's *older* cl100k string::

    (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*
    |\s*[\r\n]+|\s+(?!\S)|\s+

It differs from today's cl100k string (:mod:`.cl100k`) in one place only: cl100k's
``\s++$`` takes a whitespace run that ends the text whole, while here such a run still
ends a token after its last ``\r`` or ``\n`` (``"a\n "`` is ``"a", "\n", " "`` here,
``"a", "\n "`` in cl100k).  Everything else is the same language: the contraction
alternatives are one set, the possessive quantifiers change no match (see
:mod:`.cl100k`), and ``\s*[\r\n]+|\s+(?!\S)|\s+`` finds what ``\s*[\r\n]|\s+(?!\S)|\s``
finds before a non-space.  ``tests/test_pattern_resolve.py`` checks that against
``regex`` on every string of up to four characters over one representative of every
class, and on Hypothesis text.

Qwen writes the same string with single digits (:mod:`.qwen`).  Both run on
:func:`purebpe.pretokenize.cl100k.scan_variant`, and cut where cl100k cuts (:func:`safe_cut`): the cuts never
leave a whitespace run at the end of a piece that the whole text continues, so the one difference
never arises at a cut.
"""

from __future__ import annotations

from typing import List

from . import cl100k
from ._tables import (
    CLASS_OF,
    WHITESPACE,
    compiled_forms,
    re_class_body,
)
from ._tables import (
    re_split as re_split_segments,
)
from ._unicode_classes import LETTER_RANGES, NUMBER_RANGES, WHITESPACE_RANGES
from .sinks import BytesTokenSink, TokenSink

PATTERN = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"""
    r"""| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

#: Cut where cl100k cuts (module docstring).
safe_cut = cl100k.safe_cut


def re_source_digits(max_digits: int, bmp_only: bool) -> str:
    """The pattern for ``re`` (classes spelled out; nothing possessive to rewrite), with
    ``\\p{N}{1,3}`` for ``max_digits=3`` or ``\\p{N}`` for 1."""
    letter = re_class_body(LETTER_RANGES, bmp_only)
    number = re_class_body(NUMBER_RANGES, bmp_only)
    space = re_class_body(WHITESPACE_RANGES, bmp_only)
    digits = "{1,3}" if max_digits == 3 else ""
    return (
        f"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n{letter}{number}]?[{letter}]+|[{number}]{digits}"
        f"| ?[^{space}{letter}{number}]+[\\r\\n]*|[{space}]*[\\r\\n]+"
        f"|[{space}]+(?![^{space}])|[{space}]+"
    )


def re_source(bmp_only: bool) -> str:
    """Llama 3's pattern for ``re``."""
    return re_source_digits(3, bmp_only)


_re_form = compiled_forms(re_source)


def line_start_ok(char: str) -> bool:
    """A cut just after a newline is safe when a non-space starts the next line."""
    return CLASS_OF[ord(char)] != WHITESPACE


def scan(text: str, counts: TokenSink) -> None:
    """Count Llama 3's pre-tokens of ``text`` into ``counts``."""
    cl100k.scan_variant(text, counts, 3, False)


def scan_utf8(data: bytes, counts: BytesTokenSink) -> None:
    """:func:`scan` on valid UTF-8, pre-tokens as their bytes."""
    cl100k.scan_utf8_variant(data, counts, 3, False)


def re_split(text: str) -> List[str]:
    """Llama 3's pre-tokens of ``text`` by the standard library's ``re``."""
    return re_split_segments(text, _re_form(True), _re_form(False), line_start_ok)


__all__ = [
    "PATTERN",
    "line_start_ok",
    "re_source",
    "re_source_digits",
    "re_split",
    "safe_cut",
    "scan",
    "scan_utf8",
]
