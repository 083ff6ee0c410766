"""The character classes HF ``tokenizers`` tests with Rust's ``char`` methods.

Python's own predicates differ from Rust's in places that change pieces: ``str.isspace``
also accepts U+001C..U+001F (Rust's ``is_whitespace`` is the Unicode White_Space
property, which does not), ``str.isnumeric`` accepts CJK numerals such as 一 (Rust's
``is_numeric`` is the general categories Nd, Nl, No only), and ``str.lower`` lowers a
final Σ to ς (Rust's ``to_lowercase`` works one character at a time).  Everything here
is a plain set or a general-category test, so it costs one lookup per character.
"""
from __future__ import annotations

import unicodedata
from typing import FrozenSet

#: Rust's ``char::is_whitespace``: the Unicode White_Space property.
WHITESPACE: FrozenSet[str] = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
    "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)

_category = unicodedata.category

#: ASCII punctuation as Rust's ``is_ascii_punctuation`` has it (it includes ``$+<=>^`|~``).
_ASCII_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")

#: Alphabetic characters that are neither letters, marks nor letter numbers (circled
#: letters): the rest of Unicode's Other_Alphabetic is made of marks.
_OTHER_ALPHABETIC = ((0x24B6, 0x24E9), (0x1F130, 0x1F149), (0x1F150, 0x1F169), (0x1F170, 0x1F189))


def is_numeric(char: str) -> bool:
    """Rust's ``char::is_numeric``: general category Nd, Nl or No.

    >>> is_numeric("7"), is_numeric("½"), is_numeric("一")
    (True, True, False)
    """
    return _category(char) in ("Nd", "Nl", "No")


def is_punctuation(char: str) -> bool:
    """HF's ``Punctuation`` test: ASCII punctuation or a Unicode P* category.

    >>> is_punctuation("$"), is_punctuation("。"), is_punctuation("€")
    (True, True, False)
    """
    return char in _ASCII_PUNCTUATION or _category(char)[0] == "P"


def is_combining_mark(char: str) -> bool:
    """A combining mark (general category Mn, Mc or Me), what ``StripAccents`` removes.

    >>> is_combining_mark("\\u0301"), is_combining_mark("e")
    (True, False)
    """
    return _category(char)[0] == "M"


def is_word(char: str) -> bool:
    """Rust ``regex``'s Unicode ``\\w``: Alphabetic, marks, Nd, Pc, ZWNJ and ZWJ.

    >>> is_word("é"), is_word("_"), is_word("\\u200d"), is_word("-")
    (True, True, True, False)
    """
    category = _category(char)
    if category[0] in "LM" or category in ("Nd", "Nl", "Pc"):
        return True
    if category == "So":
        code = ord(char)
        for low, high in _OTHER_ALPHABETIC:
            if low <= code <= high:
                return True
        return False
    return char == "\u200c" or char == "\u200d"


def lower(char: str) -> str:
    """Rust's ``char::to_lowercase``: one character lowered on its own (Σ is always σ).

    >>> lower("Σ"), lower("İ") == "i\\u0307"
    ('σ', True)
    """
    return "σ" if char == "Σ" else char.lower()
