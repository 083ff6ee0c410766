r"""Qwen's pattern (Qwen 1 to 2.5, ``qwen.tiktoken``): Llama 3's with single digits.

Qwen writes tiktoken's older cl100k string (:mod:`.llama3`) with ``\p{N}`` in place of
``\p{N}{1,3}``, so every digit is a token of its own::

    (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*
    |\s*[\r\n]+|\s+(?!\S)|\s+

It runs on the cl100k scanner with a digit run of one (:func:`.cl100k.scan_variant`) and
cuts where cl100k cuts: a cut between a digit and another class is safe for single
digits as it is for runs of three.
"""

from __future__ import annotations

from typing import List

from . import cl100k, llama3
from ._tables import compiled_forms
from ._tables import re_split as re_split_segments
from .sinks import BytesTokenSink, TokenSink

PATTERN = llama3.PATTERN.replace(r"\p{N}{1,3}", r"\p{N}")

#: Cut where cl100k cuts (module docstring).
safe_cut = cl100k.safe_cut


def re_source(bmp_only: bool) -> str:
    """Qwen's pattern for ``re``."""
    return llama3.re_source_digits(1, bmp_only)


_re_form = compiled_forms(re_source)


def scan(text: str, counts: TokenSink) -> None:
    """Count Qwen's pre-tokens of ``text`` into ``counts``."""
    cl100k.scan_variant(text, counts, 1, False)


def scan_utf8(data: bytes, counts: BytesTokenSink) -> None:
    """:func:`scan` on valid UTF-8, pre-tokens as their bytes."""
    cl100k.scan_utf8_variant(data, counts, 1, False)


def re_split(text: str) -> List[str]:
    """Qwen's pre-tokens of ``text`` by the standard library's ``re``."""
    return re_split_segments(text, _re_form(True), _re_form(False), llama3.line_start_ok)


__all__ = ["PATTERN", "re_source", "re_split", "safe_cut", "scan", "scan_utf8"]
