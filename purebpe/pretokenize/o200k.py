r"""GPT-4o's pattern (``o200k_base``): scanner, ``re`` form, safe cuts.

The definition is tiktoken's string for it, run by the ``regex`` package (seven
alternatives joined by ``|``; ``UP`` is ``[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]``, ``LO`` is
``[\p{Ll}\p{Lm}\p{Lo}\p{M}]``, ``C`` is ``(?i:'s|'t|'re|'ve|'m|'ll|'d)``)::

    [^\r\n\p{L}\p{N}]?UP*LO+C?  |  [^\r\n\p{L}\p{N}]?UP+LO*C?  |  \p{N}{1,3}
    |  ?[^\s\p{L}\p{N}]+[\r\n/]*  |  \s*[\r\n]+  |  \s+(?!\S)  |  \s+

So a word is its capitals then its small letters (``"Hello"``, ``"HTMLParser"`` whole,
``"camelCase"`` as ``"camel"``, ``"Case"``), with a contraction glued on (``"don't"``), led
by at most one non-letter that is not ``\r\n`` (``" world"``).  Letters of no case (Lm,
Lo: CJK, Arabic...) and marks (M, which are not letters!) belong to both ``UP`` and
``LO``, which makes the backtracking of ``UP*LO+`` matter.  :func:`word_end` works it out
without backtracking: with ``R`` the run of ``UP`` characters from ``k``,

* if the character after the run is in ``LO`` (it can only be a small letter), ``LO+``
  runs on from there;
* otherwise ``UP*`` gives back characters until one that is also in ``LO`` (Lm, Lo or M)
  can be the ``LO+``: the word ends just after the last such character of the run;
* if there is none, the first alternative fails and the second takes the whole run.

And the leader: a mark is both a possible leader and a possible word start, so
``[^\r\n\p{L}\p{N}]?`` first tries it as the leader, then (only for the first
alternative, which always succeeds from a mark) as the word's first character.

The rest is like cl100k: digits in threes; "other" runs led by one U+0020 and followed by
``\r``, ``\n`` and ``/``; whitespace up to the last ``\r``/``\n`` of its run; otherwise a run
gives back its last character.  Unlike cl100k there is no ``\s++$``: a run at the end that
holds a newline still ends at the newline.

Cuts that change nothing (:func:`safe_cut`):

* after a ``\n`` that a non-space other than ``/`` follows (an "other" run takes the
  ``\r\n/`` after it);
* before a U+0020 that a non-space precedes;
* in text without whitespace, after a letter or number followed by a character of
  another class, except a letter followed by an apostrophe (the contraction glues on).
"""

from __future__ import annotations

from typing import Final, List

from ._tables import (
    ASCII_CASED_CLASS_OF,
    CASED_CLASS_OF,
    CASED_EITHER,
    CASED_LOWER,
    CASED_MARK,
    CASED_NUMBER,
    CASED_OTHER,
    CASED_UPPER,
    CASED_WHITESPACE,
    ascii_contraction_end,
    compiled_forms,
    contraction_end,
    newline_space_or_class_cut,
    re_class_body,
)
from ._tables import (
    re_split as re_split_segments,
)
from ._unicode_classes import (
    CASELESS_RANGES,
    LETTER_RANGES,
    LOWER_RANGES,
    MARK_RANGES,
    NUMBER_RANGES,
    UPPER_RANGES,
    WHITESPACE_RANGES,
)
from .sinks import BytesTokenSink, TokenSink
from .utf8 import char_at, class_at, utf8_contraction_end

PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

# Class sets as bit masks over CASED_* (1 << kind): membership is one shift and one and.
_UP: Final = 1 << CASED_UPPER | 1 << CASED_EITHER | 1 << CASED_MARK
_LO: Final = 1 << CASED_LOWER | 1 << CASED_EITHER | 1 << CASED_MARK
_BOTH: Final = 1 << CASED_EITHER | 1 << CASED_MARK
#: Characters that may lead a word: not \r, \n, a letter or a number (marks may).
_LEADER: Final = 1 << CASED_OTHER | 1 << CASED_MARK | 1 << CASED_WHITESPACE
#: [^\s\p{L}\p{N}]: "other" characters and marks.
_PUNCT: Final = 1 << CASED_OTHER | 1 << CASED_MARK
#: Letters with a case: a word of them alone is capitals then small letters.
_CASED: Final = 1 << CASED_UPPER | 1 << CASED_LOWER


def word_end(text: str, k: int, n: int, either: bool, contractions: bool = True) -> int:
    """Where ``UP*LO+C?`` (or, with ``either``, failing that ``UP+LO*C?``) ends from ``k``.

    -1 if no word starts at ``k``.  See the module docstring for the reasoning.  Without
    ``contractions`` the words are ``UP*LO+`` and ``UP+LO*`` (Tekken's, :mod:`.tekken`).
    """
    class_of = CASED_CLASS_OF
    j = k
    while j < n and (_UP >> class_of[ord(text[j])]) & 1:
        j += 1
    if j < n and class_of[ord(text[j])] == CASED_LOWER:
        end = j + 1
        while end < n and (_LO >> class_of[ord(text[end])]) & 1:
            end += 1
    else:
        last = j - 1
        while last >= k and not (_BOTH >> class_of[ord(text[last])]) & 1:
            last -= 1
        if last >= k:
            end = last + 1
        elif either and j > k:
            end = j
        else:
            return -1
    if contractions and end < n and text[end] == "'":
        # (A call only at an apostrophe: the compiled build does not compile _tables.)
        return contraction_end(text, end, n) or end
    return end


def scan(text: str, counts: TokenSink) -> None:
    """Count the pre-tokens of ``text`` into ``counts`` (see the module docstring)."""
    scan_variant(text, counts, True, 3)


def scan_variant(text: str, counts: TokenSink, contractions: bool, max_digits: int) -> None:
    r""":func:`scan` for o200k and its cheap variants: ``contractions`` is the optional
    ``(?i:'s|...)`` after a word, ``max_digits`` the ``n`` of ``\p{N}{1,n}`` (3 or 1)."""
    if text.isascii():
        scan_ascii(text, counts, contractions, max_digits)
        return
    class_of = CASED_CLASS_OF
    n = len(text)
    i = 0
    while i < n:
        start = i
        char = text[i]
        kind = class_of[ord(char)]
        after = class_of[ord(text[i + 1])] if i + 1 < n else CASED_WHITESPACE
        # A character that may lead a word but cannot start one (marks can).
        leads = kind == CASED_OTHER or (kind == CASED_WHITESPACE and char != "\r" and char != "\n")
        if (_CASED >> kind) & 1 or (leads and (_CASED >> after) & 1):
            # The common word, as in scan_ascii: perhaps a leader that cannot start a
            # word itself, capitals, small letters. A letter of no case or a mark after
            # them makes backtracking matter: word_end works that out.
            word = i if (_CASED >> kind) & 1 else i + 1
            i = word
            while i < n and class_of[ord(text[i])] == CASED_UPPER:
                i += 1
            while i < n and class_of[ord(text[i])] == CASED_LOWER:
                i += 1
            if i < n and (_BOTH >> class_of[ord(text[i])]) & 1:
                i = word_end(text, word, n, True, contractions)
            elif contractions and i < n and text[i] == "'":
                # Calls only at an apostrophe: _tables is not compiled, so in the compiled
                # build a call is a Python call (o200k's scan 15 -> 24 MB/s there).
                i = contraction_end(text, i, n) or i
        elif kind == CASED_EITHER:
            i = word_end(text, i, n, True, contractions)
        elif kind == CASED_MARK:
            # A mark leads a word, or else starts one (it is in both UP and LO).
            end = word_end(text, i + 1, n, False, contractions)
            i = end if end >= 0 else word_end(text, i, n, False, contractions)
        elif leads and (_BOTH >> after) & 1:
            i = word_end(text, i + 1, n, True, contractions)
        elif kind == CASED_NUMBER:
            i += 1
            if max_digits > 1 and after == CASED_NUMBER:
                i += 1
                if max_digits > 2 and i < n and class_of[ord(text[i])] == CASED_NUMBER:
                    i += 1
        elif kind == CASED_OTHER or (char == " " and after == CASED_OTHER):
            # [ ]other+ (marks included) then every \r, \n and /.
            i += 1
            while i < n and (_PUNCT >> class_of[ord(text[i])]) & 1:
                i += 1
            while i < n and (text[i] == "\n" or text[i] == "\r" or text[i] == "/"):
                i += 1
        else:
            # A whitespace run text[start:end]: up to its last \r or \n; else, if a
            # non-space follows, all but its last character (or the one character).
            end = i + 1
            while end < n and class_of[ord(text[end])] == CASED_WHITESPACE:
                end += 1
            # Just past the run's last \r or \n (``start`` if it has none): a loop, not two
            # rfind calls, which the compiled build makes by name (runs are short).
            newline_end = end
            while newline_end > start and text[newline_end - 1] != "\n" and text[newline_end - 1] != "\r":
                newline_end -= 1
            if newline_end > start:
                i = newline_end
            elif end == n or end - start == 1:
                i = end
            else:
                i = end - 1
        token = text[start:i]
        counts[token] = counts.get(token, 0) + 1


def scan_ascii(text: str, counts: TokenSink, contractions: bool, max_digits: int) -> None:
    """:func:`scan_variant` of an ASCII ``text``, read as bytes.

    In ASCII there are no letters of no case and no marks, so a word is a run of capitals
    then a run of small letters (the backtracking of ``UP*LO+`` never arises), led by one
    character that is neither ``\r``, ``\n``, a letter nor a digit.  The rest is
    :func:`scan_variant`'s logic with ``data[i]`` for ``text[i]``.
    """
    class_of = ASCII_CASED_CLASS_OF
    data = text.encode("ascii")
    n = len(data)
    i = 0
    while i < n:
        start = i
        byte = data[i]
        kind = class_of[byte]
        after = class_of[data[i + 1]] if i + 1 < n else CASED_WHITESPACE
        if (
            kind == CASED_UPPER
            or kind == CASED_LOWER
            or (
                (after == CASED_UPPER or after == CASED_LOWER)
                and kind != CASED_NUMBER
                and byte != 0x0A
                and byte != 0x0D
            )
        ):
            if kind != CASED_UPPER and kind != CASED_LOWER:
                i += 1  # the leader
            while i < n and class_of[data[i]] == CASED_UPPER:
                i += 1
            while i < n and class_of[data[i]] == CASED_LOWER:
                i += 1
            if contractions and i < n and data[i] == 0x27:
                i = ascii_contraction_end(data, i, n) or i
        elif kind == CASED_NUMBER:
            i += 1
            if max_digits > 1 and after == CASED_NUMBER:
                i += 1
                if max_digits > 2 and i < n and class_of[data[i]] == CASED_NUMBER:
                    i += 1
        elif kind == CASED_OTHER or (byte == 0x20 and after == CASED_OTHER):
            i += 1
            while i < n and class_of[data[i]] == CASED_OTHER:
                i += 1
            while i < n and (data[i] == 0x0A or data[i] == 0x0D or data[i] == 0x2F):
                i += 1
        else:
            end = i + 1
            while end < n and class_of[data[end]] == CASED_WHITESPACE:
                end += 1
            newline_end = end
            while newline_end > start and data[newline_end - 1] != 0x0A and data[newline_end - 1] != 0x0D:
                newline_end -= 1
            if newline_end > start:
                i = newline_end
            elif end == n or end - start == 1:
                i = end
            else:
                i = end - 1
        token = text[start:i]
        counts[token] = counts.get(token, 0) + 1


def scan_utf8(data: bytes, counts: BytesTokenSink) -> None:
    """:func:`scan` on valid UTF-8, pre-tokens as their bytes."""
    scan_utf8_variant(data, counts, True, 3)


def scan_utf8_variant(data: bytes, counts: BytesTokenSink, contractions: bool, max_digits: int) -> None:
    """:func:`scan_variant` on valid UTF-8 ``data``: the same branches in the same order,
    on each character's code point read where it starts (:func:`~.utf8.char_at`), its
    pre-tokens the ``bytes`` slices (``following``: where the next character starts).
    """
    class_of = CASED_CLASS_OF
    n = len(data)
    i = 0
    while i < n:
        start = i
        byte = data[i]
        if byte < 0x80:
            kind = class_of[byte]
            following = i + 1
        else:
            found = char_at(data, i)
            kind = class_of[found >> 3]
            following = i + (found & 7)
        if following < n:
            next_byte = data[following]
            after = class_of[next_byte] if next_byte < 0x80 else class_of[char_at(data, following) >> 3]
        else:
            after = CASED_WHITESPACE
        leads = kind == CASED_OTHER or (kind == CASED_WHITESPACE and byte != 0x0D and byte != 0x0A)
        if (_CASED >> kind) & 1 or (leads and (_CASED >> after) & 1):
            word = i if (_CASED >> kind) & 1 else following
            i = word
            while i < n:
                byte = data[i]
                if byte < 0x80:
                    if class_of[byte] != CASED_UPPER:
                        break
                    i += 1
                else:
                    found = char_at(data, i)
                    if class_of[found >> 3] != CASED_UPPER:
                        break
                    i += found & 7
            while i < n:
                byte = data[i]
                if byte < 0x80:
                    if class_of[byte] != CASED_LOWER:
                        break
                    i += 1
                else:
                    found = char_at(data, i)
                    if class_of[found >> 3] != CASED_LOWER:
                        break
                    i += found & 7
            # (No ASCII character is a letter of no case or a mark.)
            if i < n and data[i] >= 0x80 and (_BOTH >> class_of[char_at(data, i) >> 3]) & 1:
                i = utf8_word_end(data, word, n, True, contractions)
            elif contractions and i < n and data[i] == 0x27:
                i = utf8_contraction_end(data, i, n) or i
        elif kind == CASED_EITHER:
            i = utf8_word_end(data, i, n, True, contractions)
        elif kind == CASED_MARK:
            end = utf8_word_end(data, following, n, False, contractions)
            i = end if end >= 0 else utf8_word_end(data, i, n, False, contractions)
        elif leads and (_BOTH >> after) & 1:
            i = utf8_word_end(data, following, n, True, contractions)
        elif kind == CASED_NUMBER:
            i = following
            if max_digits > 1 and after == CASED_NUMBER:
                i += char_at(data, i) & 7
                if max_digits > 2 and i < n:
                    found = char_at(data, i)
                    if class_of[found >> 3] == CASED_NUMBER:
                        i += found & 7
        elif kind == CASED_OTHER or (byte == 0x20 and after == CASED_OTHER):
            i = following
            while i < n:
                byte = data[i]
                if byte < 0x80:
                    if not (_PUNCT >> class_of[byte]) & 1:
                        break
                    i += 1
                else:
                    found = char_at(data, i)
                    if not (_PUNCT >> class_of[found >> 3]) & 1:
                        break
                    i += found & 7
            while i < n and (data[i] == 0x0A or data[i] == 0x0D or data[i] == 0x2F):
                i += 1
        else:
            # A whitespace run data[start:end], its last character at data[last].
            last = start
            end = following
            while end < n:
                byte = data[end]
                if byte < 0x80:
                    if class_of[byte] != CASED_WHITESPACE:
                        break
                    last = end
                    end += 1
                else:
                    found = char_at(data, end)
                    if class_of[found >> 3] != CASED_WHITESPACE:
                        break
                    last = end
                    end += found & 7
            newline_end = end
            while newline_end > start and data[newline_end - 1] != 0x0A and data[newline_end - 1] != 0x0D:
                newline_end -= 1
            if newline_end > start:
                i = newline_end
            elif end == n or last == start:
                i = end
            else:
                i = last
        token = data[start:i]
        counts[token] = counts.get(token, 0) + 1


def utf8_word_end(data: bytes, k: int, n: int, either: bool, contractions: bool) -> int:
    """:func:`word_end` on UTF-8. Where it walks back over the ``UP`` run to the last
    character that is also in ``LO``, this notes that character's end on the way forward."""
    class_of = CASED_CLASS_OF
    j = k
    both_end = -1  # the end of the run's last character that is also in LO
    while j < n:
        found = char_at(data, j)
        kind = class_of[found >> 3]
        if not (_UP >> kind) & 1:
            break
        j += found & 7
        if (_BOTH >> kind) & 1:
            both_end = j
    if j < n and class_at(data, j, class_of) == CASED_LOWER:
        end = j + (char_at(data, j) & 7)
        while end < n:
            byte = data[end]
            if byte < 0x80:
                if not (_LO >> class_of[byte]) & 1:
                    break
                end += 1
            else:
                found = char_at(data, end)
                if not (_LO >> class_of[found >> 3]) & 1:
                    break
                end += found & 7
    elif both_end >= 0:
        end = both_end
    elif either and j > k:
        end = j
    else:
        return -1
    if contractions and end < n and data[end] == 0x27:
        return utf8_contraction_end(data, end, n) or end
    return end


def re_source(bmp_only: bool) -> str:
    """The pattern for ``re``: every class spelled out (Python's ``re`` has no ``\\p{..}``).

    It has no possessive quantifiers to remove; ``(?i:...)`` scoped flags exist since 3.6.
    """
    return re_source_variant(True, 3, bmp_only)


def re_source_variant(contractions: bool, max_digits: int, bmp_only: bool) -> str:
    """:func:`re_source` for o200k's variants (see :func:`scan_variant`)."""
    letter = re_class_body(LETTER_RANGES, bmp_only)
    number = re_class_body(NUMBER_RANGES, bmp_only)
    space = re_class_body(WHITESPACE_RANGES, bmp_only)
    mark = re_class_body(MARK_RANGES, bmp_only)
    upper = re_class_body(UPPER_RANGES, bmp_only)
    lower = re_class_body(LOWER_RANGES, bmp_only)
    either = re_class_body(CASELESS_RANGES, bmp_only)
    up = f"[{upper}{either}{mark}]"
    lo = f"[{lower}{either}{mark}]"
    contraction = "(?i:'s|'t|'re|'ve|'m|'ll|'d)?" if contractions else ""
    digits = "{1,3}" if max_digits == 3 else ""
    leader = f"[^\\r\\n{letter}{number}]?"
    return "|".join(
        [
            f"{leader}{up}*{lo}+{contraction}",
            f"{leader}{up}+{lo}*{contraction}",
            f"[{number}]{digits}",
            f" ?[^{space}{letter}{number}]+[\\r\\n/]*",
            f"[{space}]*[\\r\\n]+",
            f"[{space}]+(?![^{space}])",
            f"[{space}]+",
        ]
    )


_re_form = compiled_forms(re_source)


def line_start_ok(char: str) -> bool:
    """A cut just after a newline is safe when a non-space other than / starts the next line."""
    return CASED_CLASS_OF[ord(char)] != CASED_WHITESPACE and char != "/"


def re_split(text: str) -> List[str]:
    """The pre-tokens of ``text`` by the standard library's ``re``."""
    return re_split_segments(text, _re_form(True), _re_form(False), line_start_ok)


_LETTER_OR_NUMBER: Final = 1 << CASED_UPPER | 1 << CASED_LOWER | 1 << CASED_EITHER | 1 << CASED_NUMBER


def _class_change(before: str, after: str) -> bool:
    kind = CASED_CLASS_OF[ord(before)]
    other = CASED_CLASS_OF[ord(after)]
    if not (_LETTER_OR_NUMBER >> kind) & 1:
        return False
    if kind == CASED_NUMBER:
        return other != CASED_NUMBER and other != CASED_WHITESPACE
    # After a letter: a number, or an "other" character that is not an apostrophe.
    return other == CASED_NUMBER or (other == CASED_OTHER and after != "'")


def safe_cut(buf: bytes, end: int) -> int:
    """The last cut at or before byte ``end`` that leaves the tokens unchanged, or -1."""
    return newline_space_or_class_cut(buf, end, b"/", _class_change)


__all__ = [
    "PATTERN",
    "line_start_ok",
    "re_source",
    "re_source_variant",
    "re_split",
    "safe_cut",
    "scan",
    "scan_ascii",
    "scan_utf8",
    "scan_utf8_variant",
    "scan_variant",
    "utf8_word_end",
    "word_end",
]
