"""What an HF pipeline's encode returns, before and after post-processing.

One list per field, as ``tokenizers.Encoding`` has them: ``ids``, ``tokens``,
``offsets`` (character offsets into the original text), ``type_ids``,
``special_tokens_mask`` (1 for a token a post-processor added) and ``attention_mask``.
"""

from __future__ import annotations

from typing import List, Optional, Sequence, Tuple

__all__ = ["Encoding", "Offsets"]

#: ``(start, end)`` character offsets of a token in the original text.
Offsets = Tuple[int, int]


class Encoding:
    """The tokens of one text and what HF's ``Encoding`` says about each.

    >>> e = Encoding([5, 6], ["a", "b"], [(0, 1), (1, 2)])
    >>> e.type_ids, e.special_tokens_mask, e.attention_mask
    ([0, 0], [0, 0], [1, 1])
    """

    __slots__ = ("ids", "tokens", "offsets", "type_ids", "special_tokens_mask", "attention_mask")

    def __init__(
        self,
        ids: List[int],
        tokens: List[str],
        offsets: List[Offsets],
        type_ids: Optional[List[int]] = None,
        special_tokens_mask: Optional[List[int]] = None,
        attention_mask: Optional[List[int]] = None,
    ) -> None:
        self.ids = ids
        self.tokens = tokens
        self.offsets = offsets
        self.type_ids = [0] * len(ids) if type_ids is None else type_ids
        self.special_tokens_mask = [0] * len(ids) if special_tokens_mask is None else special_tokens_mask
        self.attention_mask = [1] * len(ids) if attention_mask is None else attention_mask

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        return f"Encoding(num_tokens={len(self.ids)}, ids={self.ids!r})"

    def copy(self) -> "Encoding":
        return Encoding(
            list(self.ids),
            list(self.tokens),
            list(self.offsets),
            list(self.type_ids),
            list(self.special_tokens_mask),
            list(self.attention_mask),
        )

    @classmethod
    def special(cls, ids: Sequence[int], tokens: Sequence[str], type_id: int) -> "Encoding":
        """Tokens a post-processor adds: offsets ``(0, 0)``, marked special."""
        n = len(ids)
        return cls(list(ids), list(tokens), [(0, 0)] * n, [type_id] * n, [1] * n, [1] * n)

    @classmethod
    def merge(cls, parts: Sequence["Encoding"]) -> "Encoding":
        """The parts one after the other (HF's ``Encoding::merge`` without growing offsets)."""
        merged = cls([], [], [], [], [], [])
        for part in parts:
            merged.ids += part.ids
            merged.tokens += part.tokens
            merged.offsets += part.offsets
            merged.type_ids += part.type_ids
            merged.special_tokens_mask += part.special_tokens_mask
            merged.attention_mask += part.attention_mask
        return merged
