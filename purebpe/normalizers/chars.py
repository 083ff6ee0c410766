"""The character tests HF ``tokenizers`` makes with Rust's ``char`` methods, exactly.

Python's own predicates differ from HF's in places that change pieces: ``str.isspace``
also accepts U+001C..U+001F (Rust's ``is_whitespace`` does not), ``str.isnumeric`` accepts
CJK numerals such as 一 (Rust's ``is_numeric`` does not), ``str.lower`` lowers a final Σ
to ς (Rust lowers one character at a time), and every one of them follows the
interpreter's Unicode version while HF's follow its crates' (Unicode 8 for punctuation,
9 for marks, newer for the rest).  So the tests here read tables probed from HF itself
(``_hf_unicode.py``, made by ``scripts/gen_hf_unicode.py``): one byte of flags per code
point, built on first use, looked up with one index.
"""

from __future__ import annotations

from typing import Dict, FrozenSet, Optional

from ._hf_unicode import COMBINING_MARK, LOWERCASE, NUMERIC, PUNCTUATION, WORD
from ._hf_unicode import WHITESPACE as _WHITESPACE

#: Rust's ``char::is_whitespace``: the Unicode White_Space property.
WHITESPACE: FrozenSet[str] = frozenset(chr(c) for first, last in _WHITESPACE for c in range(first, last + 1))

_NUMERIC = 1
_PUNCTUATION = 2
_WORD = 4
_MARK = 8
_flags: Optional[bytes] = None

#: What ``Lowercase`` turns a character into, for every character it changes.
_LOWER: Dict[str, str] = {chr(point): lowered for point, lowered in LOWERCASE.items()}


def flags() -> bytes:
    """One byte per code point: which of HF's character tests it passes (bits)."""
    global _flags
    if _flags is None:
        table = bytearray(0x110000)
        for bit, ranges in (
            (_NUMERIC, NUMERIC),
            (_PUNCTUATION, PUNCTUATION),
            (_WORD, WORD),
            (_MARK, COMBINING_MARK),
        ):
            for first, last in ranges:
                for point in range(first, last + 1):
                    table[point] |= bit
        _flags = bytes(table)
    return _flags


def is_numeric(char: str) -> bool:
    """Rust's ``char::is_numeric`` (``Digits``): general category Nd, Nl or No.

    >>> is_numeric("7"), is_numeric("½"), is_numeric("一")
    (True, True, False)
    """
    return bool(flags()[ord(char)] & _NUMERIC)


def is_punctuation(char: str) -> bool:
    """HF's ``Punctuation`` test: ASCII punctuation or a Unicode P* category (Unicode 8).

    >>> is_punctuation("$"), is_punctuation("。"), is_punctuation("€")
    (True, True, False)
    """
    return bool(flags()[ord(char)] & _PUNCTUATION)


def is_combining_mark(char: str) -> bool:
    """A combining mark (general category M, Unicode 9): what ``StripAccents`` removes.

    >>> is_combining_mark("\\u0301"), is_combining_mark("e")
    (True, False)
    """
    return bool(flags()[ord(char)] & _MARK)


def is_word(char: str) -> bool:
    """Rust ``regex``'s Unicode ``\\w``: Alphabetic, marks, Nd, Pc, ZWNJ and ZWJ.

    >>> is_word("é"), is_word("_"), is_word("\\u200d"), is_word("-")
    (True, True, True, False)
    """
    return bool(flags()[ord(char)] & _WORD)


def lower(char: str) -> str:
    """HF's ``Lowercase`` of one character (Rust's ``to_lowercase``: Σ is always σ).

    >>> lower("Σ"), lower("İ") == "i\\u0307", lower("a")
    ('σ', True, 'a')
    """
    return _LOWER.get(char, char)


def lower_text(text: str) -> str:
    """HF's ``Lowercase`` of ``text``: :func:`lower` of each character.

    >>> lower_text("ΟΔΟΣ Straße")
    'οδοσ straße'
    """
    if text.isascii():
        return text.lower()
    get = _LOWER.get
    return "".join([get(c, c) for c in text])
