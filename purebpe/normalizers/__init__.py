"""HF ``tokenizers`` normalizers: what a ``tokenizer.json``'s ``"normalizer"`` does to text.

Each normalizer has ``normalize(Normalized) -> Normalized`` (keeping, per character, where
it came from in the input, as HF's ``NormalizedString`` does) and ``normalize_str(str) ->
str`` (the same text, no alignment: the fast path for encoding without offsets).
:func:`from_json` builds one from its JSON object; ``to_json`` gives that object back.

``NFC``, ``NFD``, ``NFKC``, ``NFKD``, ``Lowercase``, ``Strip``, ``StripAccents``
(:mod:`.unicode`), ``Replace``, ``Prepend`` (:mod:`.replace`) and ``Sequence`` (here).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Dict, List, Protocol

from ..errors import PureBPEError
from ._json import field
from .normalized import Normalized
from .replace import Prepend, Replace
from .unicode import Lowercase, Strip, StripAccents, UnicodeForm

__all__ = [
    "Lowercase",
    "Normalized",
    "Normalizer",
    "Prepend",
    "Replace",
    "Sequence",
    "Strip",
    "StripAccents",
    "UnicodeForm",
    "from_json",
]


class Normalizer(Protocol):
    """What every normalizer has."""

    def normalize(self, s: Normalized) -> Normalized:
        """``s`` normalized, with its alignments (``s`` itself is never changed)."""

    def normalize_str(self, text: str) -> str:
        """``text`` normalized: what :meth:`normalize` gives as ``.text``, without alignments."""

    def to_json(self) -> Dict[str, Any]:
        """The ``tokenizer.json`` object of this normalizer."""


class Sequence:
    """``Sequence``: each normalizer in turn (none at all: the text as it is).

    >>> Sequence([UnicodeForm("NFKC"), Lowercase()]).normalize_str("ＡＢ")
    'ab'
    """

    __slots__ = ("normalizers",)

    def __init__(self, normalizers: List["Normalizer"]) -> None:
        self.normalizers = normalizers

    def to_json(self) -> Dict[str, Any]:
        return {"type": "Sequence", "normalizers": [n.to_json() for n in self.normalizers]}

    def normalize_str(self, text: str) -> str:
        for normalizer in self.normalizers:
            text = normalizer.normalize_str(text)
        return text

    def normalize(self, s: Normalized) -> Normalized:
        for normalizer in self.normalizers:
            s = normalizer.normalize(s)
        return s


def from_json(obj: Mapping[str, Any]) -> Normalizer:
    """The normalizer a ``tokenizer.json`` object describes, or a one-line error naming it.

    >>> from_json({"type": "Sequence", "normalizers": [{"type": "NFC"}]}).normalize_str("e\\u0301")
    'é'
    >>> from_json({"type": "Precompiled"})
    Traceback (most recent call last):
    purebpe.errors.PureBPEError: normalizer 'Precompiled' is not supported
    """
    if not isinstance(obj, Mapping):
        raise PureBPEError(f"normalizer must be a JSON object, got {obj!r}")
    kind = obj.get("type")
    what = f"normalizer {kind!r}"
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        return UnicodeForm(kind)
    if kind == "Lowercase":
        return Lowercase()
    if kind == "StripAccents":
        return StripAccents()
    if kind == "Strip":
        return Strip(field(obj, "strip_left", bool, what), field(obj, "strip_right", bool, what))
    if kind == "Replace":
        return Replace(field(obj, "pattern", Mapping, what), field(obj, "content", str, what))
    if kind == "Prepend":
        return Prepend(field(obj, "prepend", str, what))
    if kind == "Sequence":
        return Sequence([from_json(item) for item in field(obj, "normalizers", list, what)])
    raise PureBPEError(f"normalizer {kind!r} is not supported")
