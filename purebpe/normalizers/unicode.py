"""The normalizers that work character by character: NFC, NFD, NFKC, NFKD, Lowercase,
Strip, StripAccents.

Alignments follow HF's rules (``NormalizedString::transform``, see :mod:`.normalized`):

* Unicode forms.  HF decomposes each character into its full decomposition, the first
  character of it *replacing* the input character and the rest *inserted* after it
  (taking the same span); then the canonical reordering sorts every run of combining marks
  by combining class (stably), and the flags travel with the characters, so a mark moved
  before another character's mark is aligned by HF's positional rule, not by where it came
  from.  NFC/NFKC then recompose: a starter absorbing a mark makes one character whose
  change is the sum of both changes minus one.  This module rebuilds exactly that
  ``(char, change)`` stream with :mod:`unicodedata` and feeds it to ``transform``.
* Lowercase: a character lowering to several (``İ`` to ``i̇``) gives the first in its
  place and inserts the rest.
* Strip and StripAccents only drop characters: the kept ones keep their spans.

Texts already in the target form (all of ASCII, most real text) keep their alignment as
is; ``normalize_str`` skips alignments altogether.  Normalizers never change a
:class:`Normalized` in place, so an unchanged one is returned as it is.
"""
from __future__ import annotations

import unicodedata
from typing import Any, Dict, List, Tuple

from .chars import WHITESPACE, is_combining_mark, lower
from .normalized import Normalized

_combining = unicodedata.combining
# Typed loosely: typeshed wants a literal form name, these take the form as a variable.
_normalize: Any = unicodedata.normalize
_is_normalized: Any = unicodedata.is_normalized

#: form -> {char: its full decomposition}
_DECOMPOSED: Dict[str, Dict[str, str]] = {"NFD": {}, "NFKD": {}}
#: first + second -> the primary composite of the pair, or "" when they do not compose
_COMPOSED: Dict[str, str] = {}


def _compose(first: str, second: str) -> str:
    pair = first + second
    found = _COMPOSED.get(pair)
    if found is None:
        composed = _normalize("NFC", pair)
        found = _COMPOSED[pair] = composed if len(composed) == 1 else ""
    return found


def decomposed(text: str, form: str) -> List[Tuple[str, int]]:
    """HF's ``(char, change)`` stream for NFD (``form="NFD"``) or NFKD of ``text``.

    >>> decomposed("é!", "NFD")
    [('e', 0), ('́', 1), ('!', 0)]
    """
    table = _DECOMPOSED[form]
    chars: List[str] = []
    changes: List[int] = []
    classes: List[int] = []
    for char in text:
        parts = table.get(char)
        if parts is None:
            parts = table[char] = _normalize(form, char)
        change = 0
        for part in parts:
            chars.append(part)
            changes.append(change)
            classes.append(_combining(part))
            change = 1
    # Canonical reordering: each run of non-starters sorted stably by combining class.
    n = len(chars)
    i = 0
    while i < n:
        if classes[i] == 0:
            i += 1
            continue
        j = i + 1
        while j < n and classes[j] != 0:
            j += 1
        if j - i > 1:
            order = sorted(range(i, j), key=classes.__getitem__)
            chars[i:j] = [chars[k] for k in order]
            changes[i:j] = [changes[k] for k in order]
        i = j
    return list(zip(chars, changes))


def recomposed(stream: List[Tuple[str, int]]) -> List[Tuple[str, int]]:
    """Canonical composition of a decomposed ``(char, change)`` stream, changes merged.

    >>> recomposed([("e", 0), ("\\u0301", 1)])
    [('é', 0)]
    """
    out: List[Tuple[str, int]] = []
    pending: List[Tuple[str, int]] = []  # marks not absorbed by the current starter
    starter = ""
    starter_change = 0
    last_class = -1  # class of the last pending mark; -1: none since the starter
    for char, change in stream:
        klass = _combining(char)
        if not starter:
            if klass != 0:
                out.append((char, change))
            else:
                starter, starter_change = char, change
            continue
        if last_class == -1 or last_class < klass:
            composite = _compose(starter, char)
            if composite:
                starter = composite
                starter_change += change - 1
                continue
        if klass == 0:
            # A new starter that did not compose: the current one and its marks are done.
            out.append((starter, starter_change))
            out.extend(pending)
            pending = []
            starter, starter_change = char, change
            last_class = -1
        else:
            pending.append((char, change))
            last_class = klass
    if starter:
        out.append((starter, starter_change))
    out.extend(pending)
    return out


class UnicodeForm:
    """``NFC``, ``NFD``, ``NFKC`` or ``NFKD``.

    >>> UnicodeForm("NFKC").normalize_str("ﬁ①")
    'fi1'
    >>> n = UnicodeForm("NFD").normalize(Normalized.of("é"))
    >>> n.text == "e\\u0301", n.starts, n.ends
    (True, [0, 0], [1, 1])
    """

    __slots__ = ("form", "_decomposition", "_compose")

    def __init__(self, form: str) -> None:
        self.form = form
        self._decomposition = "NFKD" if form in ("NFKC", "NFKD") else "NFD"
        self._compose = form in ("NFC", "NFKC")

    def to_json(self) -> Dict[str, Any]:
        return {"type": self.form}

    def normalize_str(self, text: str) -> str:
        if text.isascii():
            return text
        normalized: str = _normalize(self.form, text)
        return normalized

    def normalize(self, s: Normalized) -> Normalized:
        text = s.text
        if text.isascii() or _is_normalized(self.form, text):
            return s
        stream = decomposed(text, self._decomposition)
        if self._compose:
            stream = recomposed(stream)
        return s.transform(stream)


class Lowercase:
    """``Lowercase``: each character lowered on its own, as Rust's ``to_lowercase``.

    >>> Lowercase().normalize_str("ΟΔΟΣ İ")
    'οδοσ i̇'
    """

    __slots__ = ()

    def to_json(self) -> Dict[str, Any]:
        return {"type": "Lowercase"}

    def normalize_str(self, text: str) -> str:
        if "Σ" in text:
            # str.lower would make a final Σ a ς; per character it is always σ.
            text = text.replace("Σ", "σ")
        return text.lower()

    def normalize(self, s: Normalized) -> Normalized:
        lowered = self.normalize_str(s.text)
        if lowered == s.text:
            return s
        if len(lowered) == len(s.text):
            return Normalized(lowered, s.starts, s.ends)
        changes: List[Tuple[str, int]] = []
        for char in s.text:
            change = 0
            for part in lower(char):
                changes.append((part, change))
                change = 1
        return s.transform(changes)


class Strip:
    """``Strip``: whitespace (Rust's ``is_whitespace``) removed at the left and/or right.

    >>> Strip(True, True).normalize(Normalized.of(" a b\\u3000")).starts
    [1, 2, 3]
    """

    __slots__ = ("left", "right")

    def __init__(self, left: bool = True, right: bool = True) -> None:
        self.left = left
        self.right = right

    def to_json(self) -> Dict[str, Any]:
        return {"type": "Strip", "strip_left": self.left, "strip_right": self.right}

    def _bounds(self, text: str) -> Tuple[int, int]:
        start, end = 0, len(text)
        if self.left:
            while start < end and text[start] in WHITESPACE:
                start += 1
        if self.right:
            while end > start and text[end - 1] in WHITESPACE:
                end -= 1
        return start, end

    def normalize_str(self, text: str) -> str:
        start, end = self._bounds(text)
        return text[start:end]

    def normalize(self, s: Normalized) -> Normalized:
        start, end = self._bounds(s.text)
        if start == 0 and end == len(s.text):
            return s
        return s.slice(start, end)


class StripAccents:
    """``StripAccents``: combining marks removed (meant to follow NFD or NFKD).

    >>> StripAccents().normalize_str("e\\u0301t\\u0308e")
    'ete'
    """

    __slots__ = ()

    def to_json(self) -> Dict[str, Any]:
        return {"type": "StripAccents"}

    def normalize_str(self, text: str) -> str:
        if text.isascii():
            return text
        return "".join([c for c in text if not is_combining_mark(c)])

    def normalize(self, s: Normalized) -> Normalized:
        text = s.text
        if text.isascii():
            return s
        keep = [i for i, c in enumerate(text) if not is_combining_mark(c)]
        if len(keep) == len(text):
            return s
        starts, ends = s.starts, s.ends
        return Normalized(
            "".join([text[i] for i in keep]), [starts[i] for i in keep], [ends[i] for i in keep]
        )
