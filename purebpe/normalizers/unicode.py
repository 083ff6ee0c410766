"""The normalizers that work character by character: NFC, NFD, NFKC, NFKD, Lowercase,
Strip, StripAccents.

Alignments follow HF's rules (``NormalizedString::transform``, see :mod:`.normalized`):

* Unicode forms, with HF's Unicode 9.0 data (``_hf_unicode.py``: a character added since
  neither decomposes nor is a combining mark for HF).  HF decomposes each character into its full
  decomposition, the first character of it *replacing* the input character and the rest *inserted*
  after it (taking the same span); then the canonical reordering sorts every run of combining marks
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

import re
import unicodedata
from bisect import bisect_right
from typing import Any, Dict, FrozenSet, List, Tuple

from ._hf_unicode import CANONICAL, COMPATIBILITY, MARK_CLASSES
from .chars import WHITESPACE, is_combining_mark, lower, lower_text
from .normalized import Normalized

# Typed loosely: typeshed wants a literal form name, these take the form as a variable.
_normalize: Any = unicodedata.normalize
_is_normalized: Any = unicodedata.is_normalized

#: form -> {char: its full decomposition}, filled as characters are met
_DECOMPOSED: Dict[str, Dict[str, str]] = {"NFD": {}, "NFKD": {}}
#: first + second -> the primary composite of the pair, or "" when they do not compose
_COMPOSED: Dict[str, str] = {}
_DECOMPOSABLE: Dict[str, Tuple[Tuple[int, int], ...]] = {"NFD": CANONICAL, "NFKD": COMPATIBILITY}
#: mark -> canonical combining class, as HF knows them
_CLASS: Dict[str, int] = {
    chr(point): klass
    for klass, ranges in MARK_CLASSES.items()
    for first, last in ranges
    for point in range(first, last + 1)
}
_class_of = _CLASS.get


_FIRSTS: Dict[str, List[int]] = {form: [first for first, _ in r] for form, r in _DECOMPOSABLE.items()}


def _decomposes(char: str, form: str) -> bool:
    """Whether HF's NFD (``form="NFD"``) or NFKD changes ``char``."""
    point = ord(char)
    index = bisect_right(_FIRSTS[form], point) - 1
    return index >= 0 and point <= _DECOMPOSABLE[form][index][1]


def _decomposition(char: str, form: str) -> str:
    table = _DECOMPOSED[form]
    parts = table.get(char)
    if parts is None:
        # Decompositions never change once assigned: unicodedata's is HF's for the
        # characters HF decomposes; the others (newer than HF's Unicode 9) stay as they are.
        parts = table[char] = _normalize(form, char) if _decomposes(char, form) else char
    return parts


_divergent: Dict[str, Any] = {}


def divergent(form: str) -> Any:
    """A compiled ``re`` finding the characters on which :mod:`unicodedata`'s ``form``
    (``"NFD"`` or ``"NFKD"`` and their composed forms) and HF's differ: those it decomposes
    or gives a combining class that HF (Unicode 9) does not.  Text without them normalizes
    the same with :func:`unicodedata.normalize` (Unicode's stability policy: no newer
    character is a composite of older ones).  Built on first use (a fraction of a second).
    """
    found = _divergent.get(form)
    if found is None:
        chars = []
        for point in range(0x30000):  # no decomposition or combining class lies above
            char = chr(point)
            decomposition = unicodedata.decomposition(char)
            if decomposition and (form == "NFKD" or not decomposition.startswith("<")):
                if not _decomposes(char, form):
                    chars.append(char)
            klass = unicodedata.combining(char)
            if klass and _class_of(char, 0) != klass:
                chars.append(char)
        source = "[" + "".join(re.escape(c) for c in chars) + "]" if chars else "(?!)"
        found = _divergent[form] = re.compile(source)
    return found


_second_starters: Dict[str, FrozenSet[str]] = {}


def second_starters() -> FrozenSet[str]:
    """The starters (combining class 0 for HF) that HF's composition can join to the
    character before them: the second half of a primary composite HF knows -- the
    Hangul vowel and trailing jamo, and a few vowel signs (U+0B3E, U+0DCF, ...).

    Unicode's stability policy makes a character's canonical decomposition permanent, so
    reading it from :mod:`unicodedata` (a newer Unicode than HF's) misses none of HF's;
    a pair HF would not compose (a composite newer than HF's data) only adds a character
    here, which costs a cut, never exactness.  Built on first use.
    """
    found = _second_starters.get("")
    if found is None:
        seconds = {chr(c) for c in range(0x1161, 0x1176)} | {chr(c) for c in range(0x11A8, 0x11C3)}
        for point in range(0x30000):  # no decomposition lies above
            parts = unicodedata.decomposition(chr(point)).split()
            if len(parts) == 2 and not parts[0].startswith("<"):
                second = chr(int(parts[1], 16))
                if _class_of(second, 0) == 0:
                    seconds.add(second)
        found = _second_starters[""] = frozenset(seconds)
    return found


def _compose(first: str, second: str) -> str:
    pair = first + second
    found = _COMPOSED.get(pair)
    if found is None:
        composed = _normalize("NFC", pair)
        ok = len(composed) == 1 and _decomposes(composed, "NFD")
        found = _COMPOSED[pair] = composed if ok else ""
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
            parts = _decomposition(char, form)
        change = 0
        for part in parts:
            chars.append(part)
            changes.append(change)
            classes.append(_class_of(part, 0))
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
        klass = _class_of(char, 0)
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

    def safe_before(self, char: str) -> bool:
        """Whether this form of any text ``a + char + b`` is the form of ``a`` followed by
        the form of ``char + b``: a place where a stream may be normalized in two parts.

        HF decomposes each character on its own, then sorts each run of combining marks
        (class > 0) by class, then (NFC, NFKC) composes each mark or starter with the last
        starter when nothing between blocks it.  If ``char``'s decomposition starts with a
        starter ``s``, no run of marks crosses the cut, so the decomposed text is the two
        parts' decompositions.  Composition never reaches back past a starter: a mark
        after ``s`` is blocked from anything before it, and so is any later starter.  So
        the only link is ``s`` itself joining what precedes it, which needs ``s`` to be
        the second half of a composite (:func:`second_starters`).

        >>> nfc = UnicodeForm("NFC")
        >>> nfc.safe_before("a"), nfc.safe_before("\u0301"), nfc.safe_before("\u1161")
        (True, False, False)
        >>> UnicodeForm("NFD").safe_before("\u1161"), nfc.safe_before("\u00e9")
        (True, True)
        """
        if char < "\u0300":
            return True  # ASCII and Latin-1: starters that decompose to a starter
        first = _decomposition(char, self._decomposition)[0]
        if _class_of(first, 0) != 0:
            return False
        return not self._compose or first not in second_starters()

    def _stream(self, text: str) -> List[Tuple[str, int]]:
        stream = decomposed(text, self._decomposition)
        if self._compose:
            stream = recomposed(stream)
        return stream

    def normalize_str(self, text: str) -> str:
        # Text unicodedata finds normalized is normalized for HF too: HF's Unicode 9 data
        # decomposes, reorders and composes a subset of what newer data does.
        if text.isascii() or _is_normalized(self.form, text):
            return text
        if divergent(self._decomposition).search(text) is None:
            normalized: str = _normalize(self.form, text)
            return normalized
        return "".join([char for char, _ in self._stream(text)])

    def normalize(self, s: Normalized) -> Normalized:
        text = s.text
        if text.isascii() or _is_normalized(self.form, text):
            return s
        return s.transform(self._stream(text))


class Lowercase:
    """``Lowercase``: each character lowered on its own, as Rust's ``to_lowercase``.

    >>> Lowercase().normalize_str("ΟΔΟΣ İ")
    'οδοσ i̇'
    """

    __slots__ = ()

    def to_json(self) -> Dict[str, Any]:
        return {"type": "Lowercase"}

    def normalize_str(self, text: str) -> str:
        return lower_text(text)

    def normalize(self, s: Normalized) -> Normalized:
        lowered = self.normalize_str(s.text)
        if lowered == s.text:
            return s
        if len(lowered) == len(s.text):
            return Normalized(lowered, s.starts, s.ends, s.origin)
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
        return Normalized(s.text[start:end], s.starts[start:end], s.ends[start:end], s.origin)


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
            "".join([text[i] for i in keep]),
            [starts[i] for i in keep],
            [ends[i] for i in keep],
            s.origin,
        )
