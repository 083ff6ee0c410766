"""HF ``tokenizers`` decoders: how a ``tokenizer.json``'s ``"decoder"`` turns tokens into text.

Each decoder has ``decode_chain(tokens) -> tokens`` (HF's semantics: a ``Sequence`` feeds
each decoder's output tokens to the next) and ``decode(tokens) -> str``, their concatenation.
:func:`from_json` builds one from its JSON object.
"""
from __future__ import annotations

from typing import Any, List, Mapping

from ..errors import PureBPEError

__all__ = ["Decoder", "from_json"]


class Decoder:
    """The interface every decoder has."""

    def decode_chain(self, tokens: List[str]) -> List[str]:
        """The tokens after this decoder (HF's ``decode_chain``)."""
        raise NotImplementedError

    def decode(self, tokens: List[str]) -> str:
        """The text of ``tokens``."""
        return "".join(self.decode_chain(tokens))


def from_json(obj: Mapping[str, Any]) -> Decoder:
    """The decoder a ``tokenizer.json`` object describes, or a one-line error naming it."""
    kind = obj.get("type") if isinstance(obj, Mapping) else None
    raise PureBPEError(f"decoder {kind!r} is not supported")
