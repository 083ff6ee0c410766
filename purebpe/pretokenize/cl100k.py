r"""GPT-4's pattern (``cl100k_base``; Llama 3 splits the same way): scanner, ``re`` form, cuts.

The definition is tiktoken's string for it, run by the ``regex`` package::

    '(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+
    |\s++$|\s*[\r\n]|\s+(?!\S)|\s

What it finds at a token start ``i`` (alternatives in order, the first that matches wins):

1. An apostrophe and ``s d m t`` or ``ll ve re`` in any case (``'S``, ``'Ll``; ``regex``
   also folds U+017F LATIN SMALL LETTER LONG S to ``s``).
2. A run of letters, led by at most one character that is neither ``\r``, ``\n``, a
   letter nor a number -- a space, a tab, a comma, a mark: ``" hello"``, ``"'tis"``,
   ``"\tx"``, ``"(word"``.  Possessive ``?+`` changes nothing here: without the leader the
   run would have to start at a non-letter.
3. One to three digits: ``"12345"`` is ``"123"``, ``"45"``.
4. A run of "other" characters (not whitespace, letter or number), led by at most one
   U+0020, with every ``\r`` and ``\n`` right after it: ``" ...\n"``, ``"!)\r\n"``.
5. A whitespace run that reaches the end of the text, whole.
6. Whitespace up to and including the *last* ``\r`` or ``\n`` of the run (``\s*``
   backtracks to it): ``"  \n\n  x"`` gives ``"  \n\n"`` first.
7. Otherwise a run of two or more whitespace characters gives back its last one
   (``\s+(?!\S)``), which leads the next token; 8. a single one is a token.

Cuts that change nothing (:func:`safe_cut`):

* after a ``\n`` that a non-space follows: no alternative continues a token from a
  newline into a non-space, and the whitespace before it ends in the same token either
  way (alternative 6 in the whole text, alternative 5 at the end of the first half);
* before a U+0020 that a non-space precedes: a token holding that non-space never
  takes a following space (only ``\r\n`` follow an "other" run), and the space starts
  the rest exactly as it does in the whole text;
* in text without whitespace, after a letter or number followed by a character of
  another class (letter, number, other): letters run only over letters, digits are
  grouped from the start of their run, and only an "other" character can lead a letter
  run -- so ``"ab|12"``, ``"12|ab"``, ``"ab|+"`` are cuts, ``"+|ab"`` is not.
"""

from __future__ import annotations

from typing import List

from ._tables import (
    ASCII_CLASS_OF,
    CLASS_OF,
    LETTER,
    NUMBER,
    OTHER,
    WHITESPACE,
    ascii_contraction_end,
    compiled_forms,
    contraction_end,
    newline_space_or_class_cut,
    re_class_body,
)
from ._tables import (
    re_split as re_split_segments,
)
from ._unicode_classes import LETTER_RANGES, NUMBER_RANGES, WHITESPACE_RANGES
from .sinks import BytesTokenSink, TokenSink
from .utf8 import char_at, utf8_contraction_end

PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)


def scan(text: str, counts: TokenSink) -> None:
    """Count the pre-tokens of ``text`` into ``counts`` (see the module docstring).

    One iteration per token: the branches pick the alternative from the first one or two
    characters, and inner loops run over the token's characters.
    """
    scan_variant(text, counts, 3, True)


def scan_variant(
    text: str, counts: TokenSink, max_digits: int, final_run_whole: bool, class_of: bytes = CLASS_OF
) -> None:
    r""":func:`scan` for cl100k and its cheap variants (:mod:`.llama3`, :mod:`.qwen`,
    :mod:`.qwen35`).

    ``max_digits`` is the ``n`` of ``\p{N}{1,n}`` (3, or 1 for ``\p{N}``);
    ``final_run_whole`` is cl100k's ``\s++$``: a whitespace run ending the text is one
    token.  Without it (tiktoken's older string, Llama 3's) such a run still splits after
    its last ``\r`` or ``\n``. ``class_of`` is the class table (Qwen 3.5's counts marks
    among the letters); ASCII text, where the tables agree, takes :func:`scan_ascii`.
    """
    if text.isascii():
        scan_ascii(text, counts, max_digits, final_run_whole)
        return
    n = len(text)
    i = 0
    while i < n:
        start = i
        char = text[i]
        kind = class_of[ord(char)]
        if char == "'":
            # 1: a contraction comes first; otherwise the apostrophe is "other".
            end = contraction_end(text, i, n)
            if end:
                token = text[i:end]
                counts[token] = counts.get(token, 0) + 1
                i = end
                continue
        nxt = class_of[ord(text[i + 1])] if i + 1 < n else WHITESPACE
        if kind == LETTER or (
            nxt == LETTER and (kind == OTHER or (kind == WHITESPACE and char != "\r" and char != "\n"))
        ):
            # 2: letters, perhaps led by one character that is not \r, \n or a number.
            i += 1
            while i < n and class_of[ord(text[i])] == LETTER:
                i += 1
        elif kind == NUMBER:
            i += 1
            if nxt == NUMBER and max_digits > 1:
                i += 1
                if max_digits > 2 and i < n and class_of[ord(text[i])] == NUMBER:
                    i += 1
        elif kind == OTHER or (char == " " and nxt == OTHER):
            # 4: [ ]other+ then every \r and \n.
            i += 1
            while i < n and class_of[ord(text[i])] == OTHER:
                i += 1
            while i < n and (text[i] == "\n" or text[i] == "\r"):
                i += 1
        else:
            # 5-8: a whitespace run text[start:end].
            end = i + 1
            while end < n and class_of[ord(text[end])] == WHITESPACE:
                end += 1
            # Just past the run's last \r or \n (``start`` if it has none): a loop, not two
            # rfind calls, which the compiled build makes by name (runs are short).
            newline_end = end
            while newline_end > start and text[newline_end - 1] != "\n" and text[newline_end - 1] != "\r":
                newline_end -= 1
            if end == n and (final_run_whole or newline_end == start):
                i = n
            elif newline_end > start:
                i = newline_end
            elif end - start > 1:
                i = end - 1
            else:
                i = end
        token = text[start:i]
        counts[token] = counts.get(token, 0) + 1


def scan_ascii(text: str, counts: TokenSink, max_digits: int, final_run_whole: bool) -> None:
    """:func:`scan_variant` of an ASCII ``text``, read as bytes (``data[i]`` for ``text[i]``:
    an int, no one-character string, no ``ord``); the same branches in the same order."""
    class_of = ASCII_CLASS_OF
    data = text.encode("ascii")
    n = len(data)
    i = 0
    while i < n:
        start = i
        byte = data[i]
        kind = class_of[byte]
        if byte == 0x27:
            end = ascii_contraction_end(data, i, n)
            if end:
                token = text[i:end]
                counts[token] = counts.get(token, 0) + 1
                i = end
                continue
        nxt = class_of[data[i + 1]] if i + 1 < n else WHITESPACE
        if kind == LETTER or (
            nxt == LETTER and (kind == OTHER or (kind == WHITESPACE and byte != 0x0D and byte != 0x0A))
        ):
            i += 1
            while i < n and class_of[data[i]] == LETTER:
                i += 1
        elif kind == NUMBER:
            i += 1
            if nxt == NUMBER and max_digits > 1:
                i += 1
                if max_digits > 2 and i < n and class_of[data[i]] == NUMBER:
                    i += 1
        elif kind == OTHER or (byte == 0x20 and nxt == OTHER):
            i += 1
            while i < n and class_of[data[i]] == OTHER:
                i += 1
            while i < n and (data[i] == 0x0A or data[i] == 0x0D):
                i += 1
        else:
            end = i + 1
            while end < n and class_of[data[end]] == WHITESPACE:
                end += 1
            newline_end = end
            while newline_end > start and data[newline_end - 1] != 0x0A and data[newline_end - 1] != 0x0D:
                newline_end -= 1
            if end == n and (final_run_whole or newline_end == start):
                i = n
            elif newline_end > start:
                i = newline_end
            elif end - start > 1:
                i = end - 1
            else:
                i = end
        token = text[start:i]
        counts[token] = counts.get(token, 0) + 1


def scan_utf8(data: bytes, counts: BytesTokenSink) -> None:
    """:func:`scan` on valid UTF-8, pre-tokens as their bytes."""
    scan_utf8_variant(data, counts, 3, True)


def scan_utf8_variant(
    data: bytes, counts: BytesTokenSink, max_digits: int, final_run_whole: bool, class_of: bytes = CLASS_OF
) -> None:
    """:func:`scan_variant` on valid UTF-8 ``data``: the same branches in the same order,
    on each character's code point read where it starts (:func:`~.utf8.char_at`), its
    pre-tokens the ``bytes`` slices. A character is a code point and a length in bytes, so
    "the next character" is ``i + length``, and a whitespace run's last character starts
    at ``last``. ``\r``, ``\n`` and the apostrophe are single bytes that no longer
    character holds, so they are compared as bytes.
    """
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
        if byte == 0x27:
            end = utf8_contraction_end(data, i, n)
            if end:
                token = data[i:end]
                counts[token] = counts.get(token, 0) + 1
                i = end
                continue
        if following < n:
            next_byte = data[following]
            nxt = class_of[next_byte] if next_byte < 0x80 else class_of[char_at(data, following) >> 3]
        else:
            nxt = WHITESPACE
        if kind == LETTER or (
            nxt == LETTER and (kind == OTHER or (kind == WHITESPACE and byte != 0x0D and byte != 0x0A))
        ):
            i = following
            while i < n:
                byte = data[i]
                if byte < 0x80:
                    if class_of[byte] != LETTER:
                        break
                    i += 1
                else:
                    found = char_at(data, i)
                    if class_of[found >> 3] != LETTER:
                        break
                    i += found & 7
        elif kind == NUMBER:
            i = following
            if nxt == NUMBER and max_digits > 1:
                i += char_at(data, i) & 7
                if max_digits > 2 and i < n:
                    found = char_at(data, i)
                    if class_of[found >> 3] == NUMBER:
                        i += found & 7
        elif kind == OTHER or (byte == 0x20 and nxt == OTHER):
            i = following
            while i < n:
                byte = data[i]
                if byte < 0x80:
                    if class_of[byte] != OTHER:
                        break
                    i += 1
                else:
                    found = char_at(data, i)
                    if class_of[found >> 3] != OTHER:
                        break
                    i += found & 7
            while i < n and (data[i] == 0x0A or data[i] == 0x0D):
                i += 1
        else:
            # A whitespace run data[start:end], its last character at data[last].
            last = start
            end = following
            while end < n:
                byte = data[end]
                if byte < 0x80:
                    if class_of[byte] != WHITESPACE:
                        break
                    last = end
                    end += 1
                else:
                    found = char_at(data, end)
                    if class_of[found >> 3] != WHITESPACE:
                        break
                    last = end
                    end += found & 7
            newline_end = end
            while newline_end > start and data[newline_end - 1] != 0x0A and data[newline_end - 1] != 0x0D:
                newline_end -= 1
            if end == n and (final_run_whole or newline_end == start):
                i = n
            elif newline_end > start:
                i = newline_end
            elif last > start:
                i = last
            else:
                i = end
        token = data[start:i]
        counts[token] = counts.get(token, 0) + 1


def re_source(bmp_only: bool) -> str:
    """The pattern for ``re``: classes spelled out, no possessive quantifiers (Python 3.9).

    Each possessive quantifier here is followed by nothing that could make the match fail
    (the end of its alternative, or a class its run cannot hold), so the greedy form finds
    the same match; ``\\s++$`` is "whitespace to the end": ``\\Z`` (``re``'s ``$`` would also
    match before a final newline, which a whitespace run would have taken anyway).
    """
    letter = re_class_body(LETTER_RANGES, bmp_only)
    number = re_class_body(NUMBER_RANGES, bmp_only)
    space = re_class_body(WHITESPACE_RANGES, bmp_only)
    return (
        f"'(?i:[sdmt]|ll|ve|re)|[^\\r\\n{letter}{number}]?[{letter}]+|[{number}]{{1,3}}"
        f"| ?[^{space}{letter}{number}]+[\\r\\n]*|[{space}]+\\Z|[{space}]*[\\r\\n]"
        f"|[{space}]+(?![^{space}])|[{space}]"
    )


_re_form = compiled_forms(re_source)


def _line_start_ok(char: str) -> bool:
    """A cut just after a newline is safe when a non-space starts the next line."""
    return CLASS_OF[ord(char)] != WHITESPACE


def re_split(text: str) -> List[str]:
    """The pre-tokens of ``text`` by the standard library's ``re``."""
    return re_split_segments(text, _re_form(True), _re_form(False), _line_start_ok)


def _class_change(before: str, after: str) -> bool:
    kind = CLASS_OF[ord(before)]
    return (kind == LETTER or kind == NUMBER) and CLASS_OF[ord(after)] not in (kind, WHITESPACE)


def safe_cut(buf: bytes, end: int) -> int:
    """The last cut at or before byte ``end`` that leaves the tokens unchanged, or -1."""
    return newline_space_or_class_cut(buf, end, b"", _class_change)


__all__ = [
    "PATTERN",
    "re_source",
    "re_split",
    "safe_cut",
    "scan",
    "scan_ascii",
    "scan_utf8",
    "scan_utf8_variant",
    "scan_variant",
]
