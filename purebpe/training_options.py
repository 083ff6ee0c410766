"""The options of a training run, built and checked once where they enter the package.

``train``, ``train_from_iterator``, ``train_from_counts``, SuperBPE and ``purebpe train`` all
take the same knobs. Each public entry point turns its arguments into one
:class:`TrainingOptions` (which refuses bad values at once, before any counting) and passes
that object down; nothing below checks them again.

>>> options = TrainingOptions(vocab_size=300, special_tokens=["<|endoftext|>"])
>>> options.merges_wanted(256)
43
>>> TrainingOptions(vocab_size=200)  # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
...
purebpe.errors.PureBPEError: vocab_size 200 is too small: it must hold the 256 byte tokens and
0 special tokens
"""

from __future__ import annotations

from concurrent.futures import Executor
from typing import Iterable, Optional, Tuple

import attrs

from .core import check_limits
from .errors import PureBPEError, check_int
from .model import BPEModel
from .pretokenize import Pretokenizer
from .progress import Progress, check_progress
from .specials import check_special_tokens
from .trainers import resolve_variant


def _special_tokens(tokens: Iterable[str]) -> Tuple[str, ...]:
    return check_special_tokens(tokens)


@attrs.frozen(kw_only=True)
class TrainingOptions:
    """How to count and train; see :func:`purebpe.train` for what each option means.

    ``pretokenizer`` is the one the words are (or will be) counted with. Counting options
    (``processes``, ``executor``, ``errors``) are checked by the counting itself.
    """

    vocab_size: int
    special_tokens: Tuple[str, ...] = attrs.field(default=(), converter=_special_tokens)
    variant: str = "auto"
    pretokenizer: Pretokenizer = "gpt2"
    min_frequency: int = 1
    max_token_length: Optional[int] = None
    tie_break: str = "canonical"
    initial: Optional[BPEModel] = None
    progress: Progress = False
    processes: Optional[int] = None
    executor: Optional[Executor] = None
    errors: str = "strict"

    def __attrs_post_init__(self) -> None:
        if not isinstance(self.vocab_size, int) or isinstance(self.vocab_size, bool):
            raise TypeError(f"vocab_size must be an int, not {self.vocab_size!r}")
        check_int(self.min_frequency, "min_frequency")
        if self.max_token_length is not None:
            check_int(self.max_token_length, "max_token_length")
        if self.processes is not None:
            check_int(self.processes, "processes", 1)
        check_limits(self.min_frequency, self.max_token_length, self.tie_break)
        resolve_variant(self.variant)
        check_progress(self.progress)
        if self.initial is not None and not isinstance(self.initial, BPEModel):
            raise TypeError(
                f"initial must be a BPEModel (purebpe.load(...)), not {type(self.initial).__name__}"
            )
        initial_size = 256 if self.initial is None else 256 + len(self.initial.merges)
        if self.vocab_size < initial_size + len(self.special_tokens):
            raise PureBPEError(
                f"vocab_size {self.vocab_size} is too small: it must hold the {initial_size} "
                f"{'byte' if self.initial is None else 'initial'} tokens and "
                f"{len(self.special_tokens)} special tokens"
            )

    def check_initial_fits(self) -> None:
        """Refuse an ``initial`` model learned with another pre-tokenizer than the words'.

        Its merges would not fit the words. SuperBPE's stage 2 is the one caller that
        continues across pre-tokenizers on purpose, and so does not call this.
        """
        if self.initial is not None and self.initial.pretokenizer != self.pretokenizer:
            raise PureBPEError(
                f"the initial model was learned with pretokenizer {self.initial.pretokenizer!r}; "
                f"these words are counted with {self.pretokenizer!r}"
            )

    def all_special_tokens(self) -> Tuple[str, ...]:
        """The model's special tokens: ``initial``'s first (their ids stay), then the new ones."""
        if self.initial is None:
            return self.special_tokens
        kept = self.initial.special_tokens
        return kept + tuple(s for s in self.special_tokens if s not in kept)

    def merges_wanted(self, tokens: int) -> int:
        """How many merges fill the vocabulary from ``tokens`` tokens (bytes and initial merges)."""
        return self.vocab_size - len(self.all_special_tokens()) - tokens
