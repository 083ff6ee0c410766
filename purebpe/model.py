"""The result of training: a vocabulary, the merges that built it, and the special tokens."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Dict, List, Sequence, Tuple, Union

import attr

from .errors import PureBPEError
from .pretokenize import Pretokenizer

if TYPE_CHECKING:
    from .core import WordTable
    from .tokenizer import Tokenizer

PathLike = Union[str, "os.PathLike[str]"]


@attr.s(frozen=True, slots=True, auto_attribs=True)
class BPEModel:
    """A byte-level BPE tokenizer's data.

    ``vocab`` maps ids to token bytes (special tokens as their UTF-8 bytes), ``merges`` are
    the learned merges in order as byte pairs, ``special_tokens`` the special strings and
    ``pretokenizer`` the pre-tokenizer the merges were learned with (a name such as
    ``"gpt2"``, ``"cl100k"``, ``"o200k"``, ``"none"``, or a :class:`purebpe.Pattern`). A model trained by
    purebpe has the canonical layout: ids 0..255 are the raw bytes, then one id per merge in order,
    then the special tokens.
    """

    vocab: Dict[int, bytes]
    merges: List[Tuple[bytes, bytes]]
    special_tokens: Tuple[str, ...] = ()
    pretokenizer: Pretokenizer = "gpt2"

    @classmethod
    def from_merges(
        cls,
        merges: Sequence[Tuple[bytes, bytes]],
        special_tokens: Sequence[str] = (),
        pretokenizer: Pretokenizer = "gpt2",
    ) -> "BPEModel":
        """The canonical-layout model for ``merges`` (bytes, then merges, then specials)."""
        tokens = [bytes([b]) for b in range(256)] + [left + right for left, right in merges]
        tokens += [s.encode("utf-8") for s in special_tokens]
        return cls(dict(enumerate(tokens)), list(merges), tuple(special_tokens), pretokenizer)

    @classmethod
    def from_table(
        cls, table: "WordTable", special_tokens: Sequence[str], pretokenizer: Pretokenizer
    ) -> "BPEModel":
        """Assemble the result of a training run from its word table."""
        return cls.from_merges(table.merges, special_tokens, pretokenizer)

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def special_ids(self) -> Dict[str, int]:
        """The id of each special token: the highest id holding its bytes (specials come last)."""
        ids: Dict[str, int] = {}
        wanted = {s.encode("utf-8"): s for s in self.special_tokens}
        for tid, token in self.vocab.items():
            if token in wanted and tid > ids.get(wanted[token], -1):
                ids[wanted[token]] = tid
        missing = [s for s in self.special_tokens if s not in ids]
        if missing:
            raise PureBPEError(f"special tokens {missing!r} are not in the vocab")
        return ids

    def truncate(self, vocab_size: int) -> "BPEModel":
        """The model training to ``vocab_size`` would give: the first merges, same specials."""
        num_merges = vocab_size - 256 - len(self.special_tokens)
        if num_merges < 0 or num_merges > len(self.merges):
            raise PureBPEError(
                f"vocab_size {vocab_size} is outside "
                f"{256 + len(self.special_tokens)}..{self.vocab_size} for this model"
            )
        return BPEModel.from_merges(self.merges[:num_merges], self.special_tokens, self.pretokenizer)

    def tokenizer(self) -> "Tokenizer":
        """A :class:`purebpe.Tokenizer` that encodes and decodes text with this model."""
        # An upward edge (tests/test_layers.py allows it): the tokenizer
        # is built on the model, and this is only a convenience for it.
        from .tokenizer import Tokenizer

        return Tokenizer.from_model(self)

    def save(self, directory: PathLike, format: str = "purebpe") -> List[Path]:
        """Write the model into ``directory`` (created if needed) atomically; returns the files.

        ``format`` is one of :data:`purebpe.formats.FORMATS`.
        """
        # An upward edge (tests/test_layers.py allows it): the formats read and write models,
        # and this is only a convenience for :func:`purebpe.formats.save`.
        from .formats import save

        return save(self, directory, format)
