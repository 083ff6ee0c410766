"""The normalizers that insert text: ``Replace`` and ``Prepend``.

Alignment (HF's ``replace`` and ``prepend``): every character of a replacement is an
insertion after the replaced stretch, so it takes the span of the stretch's *last*
character (an empty match takes the span of the character before it).  ``Prepend`` puts
its text in place of the first character and re-inserts that character after it, so all
of them take the first character's span; an empty text gets nothing prepended.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping

from .normalized import Normalized
from .pattern import HFPattern


class Replace:
    """``Replace``: every match of ``pattern`` replaced by ``content``.

    >>> r = Replace({"String": " "}, "▁")
    >>> r.normalize_str("a b")
    'a▁b'
    >>> Replace({"Regex": "ab+"}, "X").normalize(Normalized.of("cabb")).starts
    [0, 3]
    """

    __slots__ = ("pattern", "content")

    def __init__(self, pattern: Mapping[str, Any], content: str) -> None:
        self.pattern = HFPattern(pattern, "Replace normalizer")
        self.content = content

    def to_json(self) -> Dict[str, Any]:
        return {"type": "Replace", "pattern": self.pattern.to_json(), "content": self.content}

    def normalize_str(self, text: str) -> str:
        if self.pattern.kind == "String" and self.pattern.source:
            return text.replace(self.pattern.source, self.content)
        parts: List[str] = []
        done = 0
        for start, end in self.pattern.spans(text):
            parts.append(text[done:start])
            parts.append(self.content)
            done = end
        parts.append(text[done:])
        return "".join(parts)

    def normalize(self, s: Normalized) -> Normalized:
        text = s.text
        spans = self.pattern.spans(text)
        if not spans:
            return s
        starts, ends = s.starts, s.ends
        width = len(self.content)
        out_text: List[str] = []
        out_starts: List[int] = []
        out_ends: List[int] = []
        done = 0
        for start, end in spans:
            out_text.append(text[done:start])
            out_starts.extend(starts[done:start])
            out_ends.extend(ends[done:start])
            if width:
                if end > 0:
                    span_start, span_end = starts[end - 1], ends[end - 1]
                else:
                    span_start = span_end = s.origin
                out_text.append(self.content)
                out_starts.extend([span_start] * width)
                out_ends.extend([span_end] * width)
            done = end
        out_text.append(text[done:])
        out_starts.extend(starts[done:])
        out_ends.extend(ends[done:])
        return Normalized("".join(out_text), out_starts, out_ends, s.origin)


class Prepend:
    """``Prepend``: ``prepend`` put before a non-empty text.

    >>> n = Prepend("▁").normalize(Normalized.of("ab", 3))
    >>> n.text, n.starts, n.ends
    ('▁ab', [3, 3, 4], [4, 4, 5])
    """

    __slots__ = ("prepend",)

    def __init__(self, prepend: str) -> None:
        self.prepend = prepend

    def to_json(self) -> Dict[str, Any]:
        return {"type": "Prepend", "prepend": self.prepend}

    def normalize_str(self, text: str) -> str:
        return self.prepend + text if text else text

    def normalize(self, s: Normalized) -> Normalized:
        if not s.text or not self.prepend:
            return s
        width = len(self.prepend)
        return Normalized(
            self.prepend + s.text,
            [s.starts[0]] * width + s.starts,
            [s.ends[0]] * width + s.ends,
            s.origin,
        )
