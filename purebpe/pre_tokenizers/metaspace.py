"""The ``Metaspace`` pre-tokenizer (SentencePiece-style): spaces become ``▁``, a ``▁`` is
prepended per ``prepend_scheme``, and pieces are cut before each ``▁`` (``split``).

As HF: each ``▁`` takes the span of the space it replaces; the prepended one takes the
span of the piece's first character; ``"first"`` prepends only to a piece whose
:attr:`~purebpe.normalizers.Normalized.origin` is 0 (the start of the input: not after an
added token, not a later piece of an earlier split); nothing is prepended to a piece that
already starts with ``▁``.  Older files say ``"add_prefix_space": false`` for
``prepend_scheme: "never"``.
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from ..errors import PureBPEError
from ..normalizers.normalized import Normalized
from .split import kept_spans

PREPEND_SCHEMES = ("always", "first", "never")


class Metaspace:
    """``Metaspace``.

    >>> Metaspace().pre_tokenize_str("Hey  friend")
    [('▁Hey', (0, 3)), ('▁', (3, 4)), ('▁friend', (4, 11))]
    """

    __slots__ = ("replacement", "prepend_scheme", "split")

    def __init__(self, replacement: str = "▁", prepend_scheme: str = "always", split: bool = True) -> None:
        if not isinstance(replacement, str) or len(replacement) != 1:
            raise PureBPEError(f"Metaspace: replacement must be one character, got {replacement!r}")
        if prepend_scheme not in PREPEND_SCHEMES:
            raise PureBPEError(
                f"Metaspace: prepend_scheme {prepend_scheme!r} is not one of {', '.join(PREPEND_SCHEMES)}"
            )
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme
        self.split = split

    def to_json(self) -> Dict[str, Any]:
        return {
            "type": "Metaspace",
            "replacement": self.replacement,
            "prepend_scheme": self.prepend_scheme,
            "split": self.split,
        }

    def _cuts(self, text: str) -> List[Tuple[int, int]]:
        # Each replacement char is a match merged with what follows it.
        rep = self.replacement
        matches = []
        done = 0
        at = text.find(rep)
        while at >= 0:
            if done < at:
                matches.append((done, at, False))
            matches.append((at, at + 1, True))
            done = at + 1
            at = text.find(rep, done)
        if done < len(text) or not matches:
            matches.append((done, len(text), False))
        return kept_spans(matches, "MergedWithNext")

    def _prepends(self, text: str, at_origin: bool) -> bool:
        if not text or text.startswith(self.replacement):
            return False
        return self.prepend_scheme == "always" or (self.prepend_scheme == "first" and at_origin)

    def pre_tokenize(self, pieces: List[Normalized]) -> List[Normalized]:
        out: List[Normalized] = []
        rep = self.replacement
        for piece in pieces:
            text = piece.text.replace(" ", rep)
            starts, ends = piece.starts, piece.ends
            if self._prepends(text, piece.origin == 0):
                text = rep + text
                starts = [starts[0]] + starts
                ends = [ends[0]] + ends
            piece = Normalized(text, starts, ends, piece.origin)
            if not self.split:
                if text:
                    out.append(piece)
                continue
            for start, end in self._cuts(text):
                if end > start:
                    out.append(piece.slice(start, end))
        return out

    def split_texts(self, pieces: List[str], at_origin: bool = False) -> Tuple[List[str], bool]:
        """Plain-text pieces; ``at_origin``: the first piece starts the input (and no other)."""
        out: List[str] = []
        rep = self.replacement
        for index, piece in enumerate(pieces):
            text = piece.replace(" ", rep)
            if self._prepends(text, at_origin and index == 0):
                text = rep + text
            if not self.split:
                if text:
                    out.append(text)
                continue
            out.extend([text[start:end] for start, end in self._cuts(text) if end > start])
        return out, at_origin and bool(out)

    def pre_tokenize_str(self, text: str) -> List[Tuple[str, Tuple[int, int]]]:
        return [(p.text, p.original_span()) for p in self.pre_tokenize([Normalized.of(text)])]
