"""HF ``tokenizers`` pre-tokenizers: how a ``tokenizer.json``'s ``"pre_tokenizer"`` cuts text.

Each pre-tokenizer has ``pre_tokenize(pieces) -> pieces`` over :class:`Normalized` pieces
(splitting them, and for ``ByteLevel``/``Metaspace`` also rewriting their characters) and
``pre_tokenize_str(text)``, which gives what HF's ``pre_tokenize_str`` gives: the pieces with
their character offsets.  :func:`from_json` builds one from its JSON object.
"""
from __future__ import annotations

from typing import Any, List, Mapping, Tuple

from ..errors import PureBPEError
from ..normalizers.normalized import Normalized

__all__ = ["PreTokenizer", "from_json"]


class PreTokenizer:
    """The interface every pre-tokenizer has."""

    def pre_tokenize(self, pieces: List[Normalized]) -> List[Normalized]:
        """The pieces each of ``pieces`` is cut into (and transformed), in order."""
        raise NotImplementedError

    def pre_tokenize_str(self, text: str) -> List[Tuple[str, Tuple[int, int]]]:
        """As HF's ``pre_tokenize_str``: each piece with its character offsets in ``text``."""
        return [(p.text, p.original_span()) for p in self.pre_tokenize([Normalized.of(text)])]


def from_json(obj: Mapping[str, Any]) -> PreTokenizer:
    """The pre-tokenizer a ``tokenizer.json`` object describes, or a one-line error naming it."""
    kind = obj.get("type") if isinstance(obj, Mapping) else None
    raise PureBPEError(f"pre-tokenizer {kind!r} is not supported")
