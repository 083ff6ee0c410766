"""A text being normalized, with where each of its characters came from in the input.

HF ``tokenizers`` keeps, for every byte of the normalized text, the byte span of the
original text it stands for (``NormalizedString``'s alignments).  Every alignment HF
builds is a whole original character (or a run of them), so the same information fits in
two lists of *character* offsets, one entry per character of :attr:`Normalized.text`:
``starts[i]:ends[i]`` is the stretch of the original input character ``i`` comes from.
Offsets are absolute (into the whole original input), so a slice needs no shift.

:attr:`Normalized.origin` is HF's ``original_shift``: where the original text this one was
made from starts.  Normalizing keeps it (a normalizer that drops the first characters does
not move it), a slice starts at its first character's span.  HF reads it in two places:
Metaspace's ``prepend_scheme="first"`` (prepend only to the piece whose origin is 0), and
the span of a character inserted before everything else.

:meth:`Normalized.transform` is HF's ``transform`` rule, the one all alignment-changing
steps share: the new text is given as ``(char, change)`` pairs; ``change <= 0`` means the
char *replaces* the next input character (taking its span) and then ``-change`` further
input characters are dropped; ``change > 0`` means it is *inserted* and takes the span of
the input character before it (the empty span at ``origin`` at the very start, as HF does).
"""

from __future__ import annotations

from typing import Iterable, List, Optional, Tuple


class Normalized:
    """Text plus, per character, the original ``[start, end)`` it comes from.

    >>> n = Normalized.of("abc", 10)
    >>> n.span(1, 3)
    (11, 13)
    >>> n.slice(1, 2).text, n.slice(1, 2).starts
    ('b', [11])
    """

    __slots__ = ("text", "starts", "ends", "origin")

    def __init__(self, text: str, starts: List[int], ends: List[int], origin: Optional[int] = None) -> None:
        self.text = text
        self.starts = starts
        self.ends = ends
        #: HF's ``original_shift`` (the first character's start unless given).
        self.origin: int = origin if origin is not None else (starts[0] if starts else 0)

    @classmethod
    def of(cls, text: str, offset: int = 0) -> "Normalized":
        """``text`` aligned to itself, its first character at original offset ``offset``."""
        starts = list(range(offset, offset + len(text)))
        return cls(text, starts, [i + 1 for i in starts], offset)

    def __len__(self) -> int:
        return len(self.text)

    def __repr__(self) -> str:
        return f"Normalized({self.text!r}, {self.starts!r}, {self.ends!r}, origin={self.origin})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Normalized):
            return NotImplemented
        return (
            self.text == other.text
            and self.starts == other.starts
            and self.ends == other.ends
            and self.origin == other.origin
        )

    __hash__ = None  # type: ignore[assignment]

    def span(self, i: int, j: int) -> Tuple[int, int]:
        """The original ``(start, end)`` of ``text[i:j]``.

        As HF's ``convert_offsets``: the first character's start and the last one's end.
        An empty span (``i == j``) is the empty original span where character ``i``
        starts (after the last character when ``i`` is the end; at :attr:`origin` for no
        text).

        >>> Normalized("ab", [0, 0], [2, 2]).span(0, 1)
        (0, 2)
        >>> Normalized.of("ab", 5).span(2, 2)
        (7, 7)
        """
        if i < j:
            return self.starts[i], self.ends[j - 1]
        if i < len(self.starts):
            return self.starts[i], self.starts[i]
        if self.ends:
            return self.ends[-1], self.ends[-1]
        return self.origin, self.origin

    def slice(self, i: int, j: int) -> "Normalized":
        """``text[i:j]`` with its alignments (still absolute original offsets)."""
        origin = self.starts[i] if i < j else self.span(i, i)[0]
        return Normalized(self.text[i:j], self.starts[i:j], self.ends[i:j], origin)

    def original_span(self) -> Tuple[int, int]:
        """The original ``(start, end)`` this whole text covers (HF's ``offsets_original``).

        As HF's, an end before the start (marks reordered across characters) is the empty
        span at the start.

        >>> Normalized("ab", [4, 1], [5, 2]).original_span()
        (4, 4)
        """
        start, end = self.span(0, len(self.text))
        return (start, end) if end >= start else (start, start)

    def transform(self, changes: Iterable[Tuple[str, int]], initial_offset: int = 0) -> "Normalized":
        """The text HF's ``transform(changes, initial_offset)`` makes of this one.

        ``initial_offset`` input characters are dropped first.  See the module docstring
        for what ``change`` means.

        >>> Normalized.of("ab").transform([("x", 0), ("y", 1), ("z", -1)]).starts
        [0, 0, 1]
        """
        starts = self.starts
        ends = self.ends
        out_chars: List[str] = []
        new_starts: List[int] = []
        new_ends: List[int] = []
        pos = initial_offset  # the next input character to be replaced
        for char, change in changes:
            if change > 0:
                if pos == 0:
                    start = end = self.origin
                else:
                    start, end = starts[pos - 1], ends[pos - 1]
            else:
                start, end = starts[pos], ends[pos]
                pos += 1 - change
            out_chars.append(char)
            new_starts.append(start)
            new_ends.append(end)
        return Normalized("".join(out_chars), new_starts, new_ends, self.origin)
