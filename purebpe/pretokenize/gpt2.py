r"""GPT-2's pattern (``r50k_base``, ``p50k_base``): the scanner, its ``re`` form, its safe cuts.

The definition is tiktoken's string for it, run by the ``regex`` package::

    '(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s

which finds the same tokens as the 2019 original (``GPT2_PATTERN``, without possessive
quantifiers: a possessive run followed by nothing that could fail changes nothing, and a
whitespace run that reaches the end is one token under ``\s++$`` as under ``\s+(?!\S)``).

How the scanner reproduces it (leftmost alternative wins, each greedy):

* An apostrophe followed by ``s d m t`` or ``ll ve re`` (lower case only) is a contraction
  token.  Only at the start of a token: inside a run of "other" characters (``"!'s"``) or
  after a leading space (``" 's"``) the apostrophe is just another "other" character.
* A U+0020 space followed by a non-space joins the run of that next character's class:
  ``" hello"``, ``" 42"``, ``" ..."``.  Any other whitespace character never leads a run.
* A run of whitespace reaching the end of the text is one token.  A run followed by a
  non-space gives back its last character (``\s+(?!\S)`` backtracks one step), which
  then leads the next run if it is U+0020, or is a token by itself otherwise; a run of
  just one character cannot give anything back and is a token (the final ``\s``).
* Any other character starts a maximal run of its own class.

Safe cuts (where a text may be split in two without changing its tokens; see
:func:`safe_cut`): just before a whitespace character that a certain non-space follows --
the last character of a whitespace run always starts a token, and the rest of the run is
one token exactly as at the end of a text -- and, in text without whitespace, between two
characters of different classes (letter, number, other), unless the first is an
apostrophe (``'s`` is a contraction only when the apostrophe starts a token).
"""

from __future__ import annotations

import re
from typing import Dict, List

from ._tables import (
    ABOVE_BMP,
    CLASS_OF,
    CUT_TRIES,
    NO_RUN,
    WHITESPACE,
    certainly_not_space,
    last_class_change,
    re_class_body,
)
from ._unicode_classes import LETTER_RANGES, NUMBER_RANGES, WHITESPACE_RANGES
from .sinks import BytesTokenSink, TokenSink

PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
#: The 2019 original, which GPT-2's ``encoder.py`` and most BPE code spell this way.
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def scan(text: str, counts: TokenSink) -> None:
    """Count the pre-tokens of ``text`` into ``counts`` (see the module docstring).

    One pass over the characters; the current token is ``text[start:i]`` and ``run_kind``
    is the class its run continues with (``NO_RUN`` when no run is open, e.g. just after a
    contraction).  The common case -- the next character continues the run -- is the one
    comparison at the top; everything else happens once per token.  This flat shape
    measured faster on PyPy than an outer loop per token with an inner loop per run.
    """
    class_of = CLASS_OF
    n = len(text)
    start = 0
    run_kind = NO_RUN
    i = 0
    while i < n:
        kind = class_of[ord(text[i])]
        if kind == run_kind:
            i += 1
            continue
        # text[i] ends the open token (if any).
        if run_kind == WHITESPACE:
            if i - start > 1:
                # "\s+(?!\S)" backtracks one step: all but the last whitespace character.
                token = text[start : i - 1]
                counts[token] = counts.get(token, 0) + 1
                start = i - 1
            if text[start] == " ":
                # " ?\p{L}+" and friends: a lone U+0020 leads the run that starts at text[i].
                run_kind = kind
                i += 1
                continue
        if start < i:
            token = text[start:i]
            counts[token] = counts.get(token, 0) + 1
            start = i
        # A token starts at text[i].  Contractions come first among the alternatives, and
        # match only here -- never inside a run of "other" or after a leading space.
        if text[i] == "'" and i + 1 < n:
            after = text[i + 1]
            if after == "s" or after == "t" or after == "d" or after == "m":
                end = i + 2
            elif text[i + 1 : i + 3] in ("ll", "ve", "re"):
                end = i + 3
            else:
                end = 0
            if end:
                token = text[i:end]
                counts[token] = counts.get(token, 0) + 1
                start = i = end
                run_kind = NO_RUN
                continue
        run_kind = kind
        i += 1
    if start < n:
        # The last run; a whitespace run at the end keeps all of it ("\s++$").
        token = text[start:n]
        counts[token] = counts.get(token, 0) + 1


def count_utf8(data: bytes, counts: BytesTokenSink) -> None:
    """Count the pre-tokens of ``data``, valid UTF-8, into ``counts`` as their bytes:
    :func:`scan` on the text's UTF-8, the same branches in the same order.

    A character is read where it starts: an ASCII byte is its own code point (an int: no
    one-character string, no ``ord``), a longer one is put together from its 2 to 4 bytes;
    ``last`` is where the character before ``i`` starts (the one a whitespace run gives
    back). The data must be valid UTF-8: this reads no further than a character's bytes.

    Counting wants each word as bytes: counting the bytes as they are read skips decoding
    the text and encoding every word back (on PyPy 4 MB of gcide, all ASCII, counted in
    0.7x the time, of Linux source with some UTF-8 in 0.7x, of Chinese in 0.65x).
    """
    class_of = CLASS_OF
    n = len(data)
    start = 0
    run_kind = NO_RUN
    i = last = 0
    while i < n:
        byte = data[i]
        if byte < 0x80:
            kind = class_of[byte]
            size = 1
        elif byte < 0xE0:
            kind = class_of[(byte & 0x1F) << 6 | (data[i + 1] & 0x3F)]
            size = 2
        elif byte < 0xF0:
            kind = class_of[(byte & 0x0F) << 12 | (data[i + 1] & 0x3F) << 6 | (data[i + 2] & 0x3F)]
            size = 3
        else:
            code = (byte & 0x07) << 18 | (data[i + 1] & 0x3F) << 12 | (data[i + 2] & 0x3F) << 6
            kind = class_of[code | (data[i + 3] & 0x3F)]
            size = 4
        if kind == run_kind:
            last = i
            i += size
            continue
        # data[i] ends the open token (if any).
        if run_kind == WHITESPACE:
            if last > start:
                # "\s+(?!\S)" backtracks one character: all but the last whitespace one.
                token = data[start:last]
                counts[token] = counts.get(token, 0) + 1
                start = last
            if data[start] == 0x20:  # " " leads the run that starts at data[i]
                run_kind = kind
                last = i
                i += size
                continue
        if start < i:
            token = data[start:i]
            counts[token] = counts.get(token, 0) + 1
            start = i
        if byte == 0x27 and i + 1 < n:  # "'": a contraction, only where a token starts
            after = data[i + 1]
            if after == 0x73 or after == 0x74 or after == 0x64 or after == 0x6D:  # s t d m
                end = i + 2
            elif data[i + 1 : i + 3] in (b"ll", b"ve", b"re"):
                end = i + 3
            else:
                end = 0
            if end:
                token = data[i:end]
                counts[token] = counts.get(token, 0) + 1
                start = i = end
                run_kind = NO_RUN
                continue
        run_kind = kind
        last = i
        i += size
    if start < n:
        token = data[start:n]
        counts[token] = counts.get(token, 0) + 1


def re_source(bmp_only: bool) -> str:
    """The pattern for ``re``: classes spelled out, no possessive quantifiers (Python 3.9)."""
    letter = re_class_body(LETTER_RANGES, bmp_only)
    number = re_class_body(NUMBER_RANGES, bmp_only)
    space = re_class_body(WHITESPACE_RANGES, bmp_only)
    # (?!\S) becomes "not followed by a character outside the table's whitespace".
    return (
        f"'(?:[sdmt]|ll|ve|re)| ?[{letter}]+| ?[{number}]+| ?[^{space}{letter}{number}]+"
        f"|[{space}]+(?![^{space}])|[{space}]+"
    )


# --------------------------------------------------------------------------------------
# The "re" engine.  Rather than choosing the full form for a whole text that holds one
# character above U+FFFF (see ``re_split``), this pattern's engine runs the full form only
# on short segments around such characters, cut where a token starts whatever follows.
# --------------------------------------------------------------------------------------
_re_cache: Dict[str, "re.Pattern[str]"] = {}


def _re_compiled(name: str) -> "re.Pattern[str]":
    """The ``re`` patterns of this engine, compiled on first use (~20 ms each on CPython)."""
    pattern = _re_cache.get(name)
    if pattern is None:
        if name == "bmp" or name == "full":
            source = re_source(bmp_only=name == "bmp")
        else:  # "segment end": a non-whitespace character followed by whitespace
            space = re_class_body(WHITESPACE_RANGES, False)
            source = f"[^{space}](?=[{space}])"
        pattern = _re_cache[name] = re.compile(source)
    return pattern


def _segment_start(text: str, low: int, index: int) -> int:
    """Where to cut ``text`` before ``text[index]``, a non-whitespace character.

    At the last whitespace character of ``text[low:index]`` (``low`` if there is none): the
    last whitespace before a non-whitespace character always starts a token -- alone, it
    ends the run before it; ending a longer run, ``\\s+(?!\\S)`` gives it back -- and the
    tokens before it come out the same when the text ends there.
    """
    class_of = CLASS_OF
    while index > low:
        index -= 1
        if class_of[ord(text[index])] == WHITESPACE:
            return index
    return low


def re_split(text: str) -> List[str]:
    """The pre-tokens of ``text`` by the standard library's ``re``."""
    above_bmp = ABOVE_BMP.search(text)
    bmp_pattern = _re_compiled("bmp")
    if above_bmp is None:
        return bmp_pattern.findall(text)
    full_pattern = _re_compiled("full")
    segment_end_pattern = _re_compiled("segment end")
    tokens: List[str] = []
    done = 0  # text[:done] is tokenized
    while above_bmp is not None:
        # The segment [start, end) around the character above U+FFFF, cut where a token
        # starts whatever follows.  It ends before the first whitespace that follows a
        # non-whitespace character: that ends the run (or contraction) before it.
        start = _segment_start(text, done, above_bmp.start())
        boundary = segment_end_pattern.search(text, above_bmp.start())
        end = len(text) if boundary is None else boundary.end()
        # findall(text, pos, endpos) sees the text as ending at endpos, as a split must.
        tokens += bmp_pattern.findall(text, done, start)
        tokens += full_pattern.findall(text, start, end)
        done = end
        above_bmp = ABOVE_BMP.search(text, done)
    tokens += bmp_pattern.findall(text, done)
    return tokens


# --------------------------------------------------------------------------------------
# Safe cuts
# --------------------------------------------------------------------------------------
def _class_change(before: str, after: str) -> bool:
    kind = CLASS_OF[ord(before)]
    return kind != WHITESPACE and before != "'" and CLASS_OF[ord(after)] not in (kind, WHITESPACE)


def safe_cut(buf: bytes, end: int) -> int:
    """The last cut at or before byte ``end`` that leaves the tokens unchanged, or -1."""
    for space in (b"\n", b" "):
        i = buf.rfind(space, 0, end)
        tries = 0
        while i > 0 and tries < CUT_TRIES:
            if certainly_not_space(buf, i + 1):
                return i
            i = buf.rfind(space, 0, i)
            tries += 1
    return last_class_change(buf, end, _class_change)


__all__ = ["GPT2_PATTERN", "PATTERN", "count_utf8", "re_source", "re_split", "safe_cut", "scan"]
