"""HF ``tokenizers`` pre-tokenizers: how a ``tokenizer.json``'s ``"pre_tokenizer"`` cuts text.

Each pre-tokenizer has

``pre_tokenize(pieces) -> pieces``
    over :class:`~purebpe.normalizers.Normalized` pieces: cuts them and, for ``ByteLevel``
    and ``Metaspace``, rewrites their characters, keeping every character's original span
    (what offsets are computed from);
``split_texts(pieces, at_origin) -> (pieces, at_origin)``
    the same texts from plain strings, no alignments: the fast path for encoding without
    offsets.  ``at_origin`` says whether the first piece starts the input (only
    ``Metaspace(prepend_scheme="first")`` reads it); :func:`split_text` is the one-text form;
``pre_tokenize_str(text)``
    what HF's ``pre_tokenize_str`` gives: the pieces with their character offsets.

:func:`from_json` builds one from its JSON object; ``to_json`` gives that object back.
``ByteLevel`` (:mod:`.byte_level`), ``Metaspace`` (:mod:`.metaspace`), ``Split``,
``Digits``, ``Punctuation``, ``Whitespace``, ``WhitespaceSplit`` (:mod:`.split`) and
``Sequence`` (here).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Dict, List, Optional, Protocol, Tuple

from ..errors import PureBPEError
from ..normalizers._json import field
from ..normalizers.normalized import Normalized
from .byte_level import ByteLevel
from .metaspace import Metaspace
from .split import (
    Digits,
    Punctuation,
    Split,
    Whitespace,
    WhitespaceSplit,
    check_behavior,
)

__all__ = [
    "ByteLevel",
    "Digits",
    "Metaspace",
    "PreTokenizer",
    "Punctuation",
    "Sequence",
    "Split",
    "Whitespace",
    "WhitespaceSplit",
    "from_json",
    "metaspace_from_json",
    "named_pretokenizer",
    "split_text",
]


class PreTokenizer(Protocol):
    """What every pre-tokenizer has."""

    def pre_tokenize(self, pieces: List[Normalized]) -> List[Normalized]:
        """The pieces each of ``pieces`` is cut into (and rewritten to), in order."""

    def split_texts(self, pieces: List[str], at_origin: bool = False) -> Tuple[List[str], bool]:
        """As :meth:`pre_tokenize` on plain texts; also whether the first piece starts the input."""

    def pre_tokenize_str(self, text: str) -> List[Tuple[str, Tuple[int, int]]]:
        """As HF's ``pre_tokenize_str``: each piece with its character offsets in ``text``."""

    def to_json(self) -> Dict[str, Any]:
        """The ``tokenizer.json`` object of this pre-tokenizer."""


class Sequence:
    """``Sequence``: each pre-tokenizer in turn on the pieces of the one before.

    >>> Sequence([WhitespaceSplit(), Digits(True)]).pre_tokenize_str("ab12 c")
    [('ab', (0, 2)), ('1', (2, 3)), ('2', (3, 4)), ('c', (5, 6))]
    """

    __slots__ = ("pretokenizers",)

    def __init__(self, pretokenizers: List[PreTokenizer]) -> None:
        self.pretokenizers = pretokenizers

    def to_json(self) -> Dict[str, Any]:
        return {"type": "Sequence", "pretokenizers": [p.to_json() for p in self.pretokenizers]}

    def pre_tokenize(self, pieces: List[Normalized]) -> List[Normalized]:
        for pretokenizer in self.pretokenizers:
            pieces = pretokenizer.pre_tokenize(pieces)
        return pieces

    def split_texts(self, pieces: List[str], at_origin: bool = False) -> Tuple[List[str], bool]:
        for pretokenizer in self.pretokenizers:
            pieces, at_origin = pretokenizer.split_texts(pieces, at_origin)
        return pieces, at_origin

    def pre_tokenize_str(self, text: str) -> List[Tuple[str, Tuple[int, int]]]:
        return [(p.text, p.original_span()) for p in self.pre_tokenize([Normalized.of(text)])]


def split_text(pretokenizer: PreTokenizer, text: str, at_origin: bool = True) -> List[str]:
    """The pieces of ``text`` (no offsets); ``at_origin``: ``text`` starts the input.

    ``at_origin`` is HF's "the normalized text's origin is offset 0": true for the first
    stretch of an input (before any added token), whatever a normalizer dropped from it.

    >>> split_text(Metaspace(prepend_scheme="first"), "a b", at_origin=False)
    ['a', '▁b']
    """
    return pretokenizer.split_texts([text] if text else [], at_origin)[0]


def named_pretokenizer(pre_tokenizer: PreTokenizer) -> Optional[str]:
    """The named pattern (``"gpt2"``, ``"cl100k"``, ``"o200k"``) whose pieces, as UTF-8 bytes,
    are exactly this pre-tokenizer's pieces (in GPT-2's byte alphabet), or None.

    That is ``ByteLevel(add_prefix_space=False)`` (HF's regex is GPT-2's), or a ``Split``
    of a named pattern (isolated) followed by ``ByteLevel(add_prefix_space=False,
    use_regex=False)``: the byte-level pipelines purebpe's own engine runs as they are.

    >>> named_pretokenizer(from_json({"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True}))
    'gpt2'
    >>> named_pretokenizer(Metaspace()) is None
    True
    """
    steps = pre_tokenizer.pretokenizers if isinstance(pre_tokenizer, Sequence) else [pre_tokenizer]
    last = steps[-1] if steps else None
    if not isinstance(last, ByteLevel) or last.add_prefix_space:
        return None
    if len(steps) == 1:
        return "gpt2" if last.use_regex else None
    split = steps[0]
    if len(steps) == 2 and not last.use_regex and isinstance(split, Split) and not split.invert:
        # Every piece of a named pattern is a match: these behaviours keep them as they are.
        if split.behavior in ("Isolated", "MergedWithPrevious", "MergedWithNext"):
            return split.pattern.name
    return None


def metaspace_from_json(obj: Mapping[str, Any]) -> Metaspace:
    """A ``Metaspace`` object (pre-tokenizer or decoder: they share the fields)."""
    what = "pre-tokenizer 'Metaspace'"
    scheme = obj.get("prepend_scheme")
    legacy = obj.get("add_prefix_space")
    if legacy is False:
        # Files written before prepend_scheme existed say add_prefix_space=false for "never";
        # HF refuses the contradiction of both fields.
        if scheme not in (None, "never"):
            raise PureBPEError(
                f"pre-tokenizer 'Metaspace': add_prefix_space=false contradicts prepend_scheme {scheme!r}"
            )
        scheme = "never"
    return Metaspace(
        field(obj, "replacement", str, what, "▁"),
        scheme if scheme is not None else "always",
        field(obj, "split", bool, what, True),
    )


def from_json(obj: Mapping[str, Any]) -> PreTokenizer:
    """The pre-tokenizer a ``tokenizer.json`` object describes, or a one-line error naming it.

    >>> from_json({"type": "Digits", "individual_digits": True}).pre_tokenize_str("a12")
    [('a', (0, 1)), ('1', (1, 2)), ('2', (2, 3))]
    >>> from_json({"type": "BertPreTokenizer"})
    Traceback (most recent call last):
    purebpe.errors.PureBPEError: pre-tokenizer 'BertPreTokenizer' is not supported
    """
    if not isinstance(obj, Mapping):
        raise PureBPEError(f"pre-tokenizer must be a JSON object, got {obj!r}")
    kind = obj.get("type")
    what = f"pre-tokenizer {kind!r}"
    if kind == "ByteLevel":
        return ByteLevel(
            field(obj, "add_prefix_space", bool, what, True),
            field(obj, "trim_offsets", bool, what, True),
            field(obj, "use_regex", bool, what, True),
        )
    if kind == "Metaspace":
        return metaspace_from_json(obj)
    if kind == "Split":
        return Split(
            field(obj, "pattern", Mapping, what),
            check_behavior(obj.get("behavior"), "pre-tokenizer 'Split'"),
            field(obj, "invert", bool, what, False),
        )
    if kind == "Digits":
        return Digits(field(obj, "individual_digits", bool, what, False))
    if kind == "Punctuation":
        return Punctuation(check_behavior(obj.get("behavior", "Isolated"), "pre-tokenizer 'Punctuation'"))
    if kind == "Whitespace":
        return Whitespace()
    if kind == "WhitespaceSplit":
        return WhitespaceSplit()
    if kind == "Sequence":
        return Sequence([from_json(item) for item in field(obj, "pretokenizers", list, what)])
    raise PureBPEError(f"pre-tokenizer {kind!r} is not supported")
