"""HF ``tokenizers`` normalizers: what a ``tokenizer.json``'s ``"normalizer"`` does to text.

Each normalizer has ``normalize(Normalized) -> Normalized`` (keeping, per character, where
it came from in the input, as HF's ``NormalizedString`` does) and ``normalize_str(str) ->
str`` (the same text, no alignment: the fast path for encoding without offsets).
:func:`from_json` builds one from its JSON object.
"""
from __future__ import annotations

from typing import Any, Mapping

from ..errors import PureBPEError
from .normalized import Normalized

__all__ = ["Normalized", "Normalizer", "from_json"]


class Normalizer:
    """The interface every normalizer has."""

    def normalize(self, s: Normalized) -> Normalized:
        """``s`` normalized, with its alignments."""
        raise NotImplementedError

    def normalize_str(self, text: str) -> str:
        """``text`` normalized (what :meth:`normalize` gives as ``.text``)."""
        return self.normalize(Normalized.of(text)).text


def from_json(obj: Mapping[str, Any]) -> Normalizer:
    """The normalizer a ``tokenizer.json`` object describes, or a one-line error naming it."""
    kind = obj.get("type") if isinstance(obj, Mapping) else None
    raise PureBPEError(f"normalizer {kind!r} is not supported")
