"""The patterns of ``tokenizer.json`` files: ``{"String": ...}`` or ``{"Regex": ...}``.

``Replace`` (normalizer and decoder) and the ``Split`` pre-tokenizer share HF's
``find_matches``: the text cut into stretches, each flagged as a match or not, covering the
whole text in order.  Offsets here are character offsets.

A ``String`` pattern is found with ``str.find`` (HF escapes it into a regular expression,
which finds the same leftmost non-overlapping occurrences).  A ``Regex`` pattern goes through
:mod:`purebpe.pretokenize`: a string that is one of the named patterns runs on that pattern's
fast splitter (every one of their pieces is a match: the named patterns match every
character), anything else is compiled by the optional ``regex`` package
(:func:`purebpe.pretokenize.custom.compiled`, where untrusted patterns are bounded).

HF compiles its regexes with Oniguruma.  The constructs real files use (``\\p{L}``,
``\\p{N}``, ``(?i:...)``, ``\\s+(?!\\S)``, character ranges, ``[\\r\\n]``, POSIX brackets)
mean the same in ``regex``.  Empty matches follow Oniguruma's iterator: an empty match right
where the previous match ended is skipped.  Known differences: ``\\w`` (Oniguruma leaves
out ZWJ/ZWNJ) and ``\\h`` (Oniguruma: a hex digit; ``regex``: horizontal space).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from .. import pretokenize
from ..errors import PureBPEError
from ..pretokenize import custom

#: A stretch of text ``(start, end, is_match)``.
Match = Tuple[int, int, bool]


def _named_splitter(source: str) -> Optional[Callable[[str], List[str]]]:
    """The fast splitter of ``source`` if ``purebpe.pretokenize`` knows it as a named pattern."""
    resolved: object = next((name for name, pat in pretokenize.PATTERNS.items() if pat == source), None)
    if resolved is None:
        try:
            # The pattern machinery also knows variants of the named patterns.
            resolved = pretokenize.check_pretokenizer(pretokenize.Pattern(source))
        except PureBPEError:
            resolved = None
    if not isinstance(resolved, str) or resolved == "none":
        return None
    return pretokenize.splitter(resolved)


def regex_source(source: str) -> str:
    r"""``source`` (Oniguruma syntax) as ``regex`` reads it the same way.

    Oniguruma allows a class inside a class (``[^(\s|[.,!?])]``, BLOOM's pattern) and
    ``&&`` intersections; ``regex`` reads those only in its VERSION1 mode, so such a
    pattern gets ``(?V1)`` (everything else stays VERSION0, which matches Oniguruma's
    other rules more closely).

    >>> print(regex_source(r"[^(\s|[.,])]+"))
    (?V1)[^(\s|[.,])]+
    >>> print(regex_source(r"[[:alpha:]\]]+"))
    [[:alpha:]\]]+
    """
    in_class = False
    i = 0
    n = len(source)
    while i < n:
        char = source[i]
        if char == "\\":
            i += 2
            continue
        if not in_class:
            if char == "[":
                in_class = True
                i += 1
                # A "]" first in a class (after an optional "^") is a literal.
                if source.startswith("^", i):
                    i += 1
                if source.startswith("]", i):
                    i += 1
                continue
        elif source.startswith("[:", i):
            end = source.find(":]", i + 2)
            i = end + 2 if end >= 0 else n
            continue
        elif char == "[" or source.startswith("&&", i):
            return "(?V1)" + source
        elif char == "]":
            in_class = False
        i += 1
    return source


class HFPattern:
    """A ``tokenizer.json`` pattern, able to give HF's ``find_matches``.

    >>> HFPattern({"String": "ab"}).find_matches("xabyab")
    [(0, 1, False), (1, 3, True), (3, 4, False), (4, 6, True)]
    """

    __slots__ = ("kind", "source", "_split", "_finditer")

    def __init__(self, obj: Mapping[str, Any], where: str = "pattern") -> None:
        if not isinstance(obj, Mapping) or len(obj) != 1:
            raise PureBPEError(f"{where}: expected {{\"String\": ...}} or {{\"Regex\": ...}}, got {obj!r}")
        ((kind, source),) = obj.items()
        if kind not in ("String", "Regex") or not isinstance(source, str):
            raise PureBPEError(f"{where}: expected {{\"String\": ...}} or {{\"Regex\": ...}}, got {obj!r}")
        self.kind: str = kind
        self.source: str = source
        self._split: Optional[Callable[[str], List[str]]] = None
        self._finditer: Any = None
        if kind == "Regex" or source == "":
            self._split = _named_splitter(source) if kind == "Regex" else None
            if self._split is None:
                self._finditer = custom.compiled(regex_source(source) if kind == "Regex" else "").finditer

    def to_json(self) -> Dict[str, Any]:
        """The JSON object this pattern was read from."""
        return {self.kind: self.source}

    def spans(self, text: str) -> List[Tuple[int, int]]:
        """The ``(start, end)`` of each match, in order (empty matches included, as HF's)."""
        found: List[Tuple[int, int]] = []
        if self._split is not None:
            at = 0
            for piece in self._split(text):
                found.append((at, at + len(piece)))
                at += len(piece)
            return found
        if self._finditer is not None:
            last_end = -1
            for match in self._finditer(text):
                start, end = match.span()
                if start == end == last_end:
                    continue  # Oniguruma skips an empty match where the last one ended
                found.append((start, end))
                last_end = end
            return found
        source = self.source
        width = len(source)
        at = text.find(source)
        while at >= 0:
            found.append((at, at + width))
            at = text.find(source, at + width)
        return found

    def find_matches(self, text: str) -> List[Match]:
        """HF's ``find_matches``: stretches covering ``text``, each flagged match or not.

        An empty text is one empty non-match, as in HF.
        """
        if not text:
            return [(0, 0, False)]
        out: List[Match] = []
        prev = 0
        for start, end in self.spans(text):
            if prev != start:
                out.append((prev, start, False))
            out.append((start, end, True))
            prev = end
        if prev != len(text):
            out.append((prev, len(text), False))
        return out
