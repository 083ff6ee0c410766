"""The pre-tokenizers that only cut: ``Split``, ``Digits``, ``Punctuation``, ``Whitespace``,
``WhitespaceSplit``, and HF's five ways of treating what a pattern matched.

Every one of them works as HF's ``NormalizedString::split``: the text is cut into stretches
flagged *match* or not (``find_matches``), a behaviour turns those into the pieces to keep,
and empty pieces are dropped.  A piece keeps the original spans of its characters, so no
alignment is ever recomputed.  A character predicate (digits, punctuation, whitespace)
makes every matching character a match of its own, as HF's does, which is what
``MergedWithPrevious`` and friends then see.

Each class has ``pre_tokenize`` (pieces with alignments) and ``split_texts`` (plain strings:
the fast path for encoding without offsets), which give the same texts.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Tuple

from ..errors import PureBPEError
from ..normalizers.chars import WHITESPACE, is_numeric, is_punctuation, is_word
from ..normalizers.normalized import Normalized
from ..normalizers.pattern import HFPattern, Match

BEHAVIORS = ("Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous")

Span = Tuple[int, int]


def check_behavior(value: object, where: str) -> str:
    """``value`` if it is one of HF's split behaviours, else a one-line error."""
    if isinstance(value, str) and value in BEHAVIORS:
        return value
    raise PureBPEError(f"{where}: behavior {value!r} is not one of {', '.join(BEHAVIORS)}")


def kept_spans(matches: List[Match], behavior: str) -> List[Span]:
    """The ``(start, end)`` of the pieces ``behavior`` makes of ``matches`` (empty ones too).

    >>> m = [(0, 1, False), (1, 2, True), (2, 3, False)]
    >>> kept_spans(m, "Removed"), kept_spans(m, "MergedWithPrevious"), kept_spans(m, "MergedWithNext")
    ([(0, 1), (2, 3)], [(0, 2), (2, 3)], [(0, 1), (1, 3)])
    """
    if behavior == "Isolated":
        return [(start, end) for start, end, _ in matches]
    if behavior == "Removed":
        return [(start, end) for start, end, is_match in matches if not is_match]
    spans: List[List[int]] = []
    previous = False
    if behavior == "MergedWithNext":
        for start, end, is_match in reversed(matches):
            if is_match and not previous and spans:
                spans[-1][0] = start
            else:
                spans.append([start, end])
            previous = is_match
        spans.reverse()
    else:
        contiguous = behavior == "Contiguous"
        for start, end, is_match in matches:
            if spans and ((is_match == previous) if contiguous else (is_match and not previous)):
                spans[-1][1] = end
            else:
                spans.append([start, end])
            previous = is_match
    return [(start, end) for start, end in spans]


def char_matches(text: str, predicate: Callable[[str], bool]) -> List[Match]:
    """HF's ``find_matches`` for a character predicate: each matching character alone.

    >>> char_matches("a12", str.isdigit)
    [(0, 1, False), (1, 2, True), (2, 3, True)]
    """
    if not text:
        return [(0, 0, False)]
    out: List[Match] = []
    done = 0
    for i, char in enumerate(text):
        if predicate(char):
            if done < i:
                out.append((done, i, False))
            out.append((i, i + 1, True))
            done = i + 1
    if done < len(text):
        out.append((done, len(text), False))
    return out


class _Splitter:
    """Shared by the cutting pre-tokenizers: ``matches(text)`` plus a behaviour."""

    __slots__ = ()
    behavior = "Isolated"

    def matches(self, text: str) -> List[Match]:
        raise NotImplementedError

    def pre_tokenize(self, pieces: List[Normalized]) -> List[Normalized]:
        out: List[Normalized] = []
        behavior = self.behavior
        for piece in pieces:
            for start, end in kept_spans(self.matches(piece.text), behavior):
                if end > start:
                    out.append(piece.slice(start, end))
        return out

    def split_texts(self, pieces: List[str], at_origin: bool = False) -> Tuple[List[str], bool]:
        out: List[str] = []
        behavior = self.behavior
        for index, piece in enumerate(pieces):
            for start, end in kept_spans(self.matches(piece), behavior):
                if end > start:
                    if not out and (index > 0 or start > 0):
                        at_origin = False  # the start of the text was cut away
                    out.append(piece[start:end])
        return out, at_origin and bool(out)

    def pre_tokenize_str(self, text: str) -> List[Tuple[str, Tuple[int, int]]]:
        return [(p.text, p.original_span()) for p in self.pre_tokenize([Normalized.of(text)])]


class Split(_Splitter):
    """``Split``: cut at a pattern's matches; ``invert`` swaps matches and the rest.

    >>> Split({"String": "-"}, "MergedWithPrevious").pre_tokenize_str("a-b-")
    [('a-', (0, 2)), ('b-', (2, 4))]
    """

    __slots__ = ("pattern", "behavior", "invert")

    def __init__(self, pattern: Mapping[str, Any], behavior: str = "Isolated", invert: bool = False) -> None:
        self.pattern = HFPattern(pattern, "Split pre-tokenizer")
        self.behavior = check_behavior(behavior, "Split pre-tokenizer")
        self.invert = invert

    def to_json(self) -> Dict[str, Any]:
        return {
            "type": "Split",
            "pattern": self.pattern.to_json(),
            "behavior": self.behavior,
            "invert": self.invert,
        }

    def matches(self, text: str) -> List[Match]:
        found = self.pattern.find_matches(text)
        if self.invert:
            return [(start, end, not is_match) for start, end, is_match in found]
        return found

    def split_texts(self, pieces: List[str], at_origin: bool = False) -> Tuple[List[str], bool]:
        split = self.pattern.named_split
        if split is None:
            return _Splitter.split_texts(self, pieces, at_origin)
        # A named pattern matches every character: its pieces are all matches, which every
        # behaviour keeps as they are, except that Removed drops them all and Contiguous
        # joins them back into one.
        if self.behavior == "Removed" and not self.invert:
            return [], False
        if self.behavior == "Contiguous":
            return [p for p in pieces if p], at_origin and bool(pieces) and bool(pieces[0])
        out: List[str] = []
        for piece in pieces:
            out.extend(split(piece))
        return out, at_origin and bool(out)


class Digits(_Splitter):
    """``Digits``: numbers (Rust's ``is_numeric``) cut out, one per digit if ``individual``.

    >>> Digits(False).pre_tokenize_str("ab123c")
    [('ab', (0, 2)), ('123', (2, 5)), ('c', (5, 6))]
    """

    __slots__ = ("individual_digits", "behavior")

    def __init__(self, individual_digits: bool = False) -> None:
        self.individual_digits = individual_digits
        self.behavior = "Isolated" if individual_digits else "Contiguous"

    def to_json(self) -> Dict[str, Any]:
        return {"type": "Digits", "individual_digits": self.individual_digits}

    def matches(self, text: str) -> List[Match]:
        return char_matches(text, is_numeric)


class Punctuation(_Splitter):
    """``Punctuation``: cut at punctuation characters, each treated per ``behavior``.

    >>> Punctuation().pre_tokenize_str("a,b!")
    [('a', (0, 1)), (',', (1, 2)), ('b', (2, 3)), ('!', (3, 4))]
    """

    __slots__ = ("behavior",)

    def __init__(self, behavior: str = "Isolated") -> None:
        self.behavior = check_behavior(behavior, "Punctuation pre-tokenizer")

    def to_json(self) -> Dict[str, Any]:
        return {"type": "Punctuation", "behavior": self.behavior}

    def matches(self, text: str) -> List[Match]:
        return char_matches(text, is_punctuation)


def _is_whitespace(char: str) -> bool:
    return char in WHITESPACE


class WhitespaceSplit(_Splitter):
    """``WhitespaceSplit``: cut at whitespace, which is dropped.

    >>> WhitespaceSplit().pre_tokenize_str(" a  b\\u3000")
    [('a', (1, 2)), ('b', (4, 5))]
    """

    __slots__ = ()
    behavior = "Removed"

    def to_json(self) -> Dict[str, Any]:
        return {"type": "WhitespaceSplit"}

    def matches(self, text: str) -> List[Match]:
        return char_matches(text, _is_whitespace)


class Whitespace(_Splitter):
    """``Whitespace``: runs of word characters and runs of other non-space characters
    (HF's ``\\w+|[^\\w\\s]+``); whitespace is dropped.

    >>> Whitespace().pre_tokenize_str("Hi, you!!")
    [('Hi', (0, 2)), (',', (2, 3)), ('you', (4, 7)), ('!!', (7, 9))]
    """

    __slots__ = ()
    behavior = "Removed"

    def to_json(self) -> Dict[str, Any]:
        return {"type": "Whitespace"}

    def matches(self, text: str) -> List[Match]:
        # Class of each run: 0 whitespace, 1 word, 2 other; runs of 1 and 2 are the
        # matches (kept, as the pattern is inverted and the rest removed).
        if not text:
            return [(0, 0, False)]
        out: List[Match] = []
        start = 0
        current = -1
        for i, char in enumerate(text):
            klass = 0 if char in WHITESPACE else (1 if is_word(char) else 2)
            if klass != current:
                if i > start:
                    out.append((start, i, current != 0))
                start = i
                current = klass
        out.append((start, len(text), current != 0))
        # Invert + Removed: the kept stretches are the pattern's matches.
        return [(s, e, not m) for s, e, m in out]
