"""Superword tokenizers (SuperBPE): subwords first, then tokens that bridge whitespace.

SuperBPE (Liu et al., "SuperBPE: Space Travel for Language Models", COLM 2025,
arXiv 2503.13423) trains in two stages:

1. **Stage 1** is ordinary BPE with a pre-tokenization pattern (here any purebpe
   pre-tokenizer, GPT-2's by default), up to the *transition point*: ``transition`` merges.
2. **Stage 2** continues from exactly those merges -- they stay, in order, with their
   ids -- to the final vocabulary, counting words with :data:`STAGE2_PATTERN` as HF
   ``Split(..., "isolated")``: the matches *and the text between them* are words, so
   letters and single spaces run on across word boundaries ("by the way" can become one
   token), while digit groups, runs of two or more punctuation characters and runs of
   spaces before a word stay apart.

Stage 2's pattern runs on a scanner of its own (:mod:`purebpe.pretokenize.superwords`,
proven equal to ``regex``), so SuperBPE needs no optional package, and its files stream
in pieces cut where that module's rule allows.

The stage-2 pattern is the reference recipe's, from ``scripts/extend_tokenizer.sh`` in the
authors' repository ``PythonNut/superbpe``, which also shows stage 2 inheriting the first
``t`` lines of stage 1's ``merges.txt``.  Special tokens split the text first in both
stages, as always.  The trained model's pre-tokenizer is the stage-2 pattern: encoding
splits with it and applies all merges, stage 1's first (HF loads the exported
``tokenizer.json`` unchanged: ``Split(Regex, "isolated")`` then ``ByteLevel``).

Stage-2 words are long (whole runs of words), which is where the trainers' cost differs:
``variant="positional"`` works on a flat array of the text's positions, its cost not
depending on word length, and is what ``variant="auto"`` gives stage 2 here.
"""
from __future__ import annotations

from concurrent.futures import Executor
from typing import Iterable, Optional

from .counting import Files, WordCounts, count
from .errors import PureBPEError
from .model import BPEModel
from .pretokenize import Pattern, Pretokenizer, superwords
from .progress import Progress
from .training import check_arguments, merge_counts, train

__all__ = [
    "STAGE2_PATTERN",
    "STAGE2_PRETOKENIZER",
    "extend_superbpe",
    "superwords_from_counts",
    "train_superbpe",
]

#: The reference recipe's stage-2 split (``PythonNut/superbpe``, ``extend_tokenizer.sh``).
STAGE2_PATTERN = superwords.PATTERN
#: The stage-2 pre-tokenizer: :data:`STAGE2_PATTERN` as HF's "isolated" split.
STAGE2_PRETOKENIZER = Pattern(STAGE2_PATTERN)
#: The trainer for stage 2's long words (see the module docstring).
STAGE2_VARIANT = "positional"


def train_superbpe(
    files: Files,
    vocab_size: int,
    transition: int,
    special_tokens: Iterable[str] = (),
    *,
    pretokenizer: Pretokenizer = "gpt2",
    variant: str = "auto",
    processes: Optional[int] = None,
    executor: Optional[Executor] = None,
    min_frequency: int = 1,
    errors: str = "strict",
    progress: Progress = False,
) -> BPEModel:
    """Train a SuperBPE tokenizer: ``transition`` merges with ``pretokenizer``, then superwords.

    ``vocab_size`` counts the 256 bytes, all merges and the special tokens, as in
    :func:`purebpe.train`.  ``transition`` is the number of stage-1 merges kept (the
    first ``transition`` lines of stage 1's ``merges.txt``); the rest of the vocabulary
    is learned on stage-2 words.  ``variant`` names stage 1's trainer; stage 2 runs
    ``positional`` when ``variant`` is ``"auto"``, else the variant named.
    """
    specials = list(special_tokens)
    if not 0 <= transition <= vocab_size - 256 - len(specials):
        raise PureBPEError(
            f"transition {transition} must be between 0 and the number of merges "
            f"({vocab_size - 256 - len(specials)} for vocab_size {vocab_size} with "
            f"{len(specials)} special tokens)"
        )
    options = dict(processes=processes, executor=executor, errors=errors, progress=progress)
    stage1 = train(
        files,
        256 + transition + len(specials),
        specials,
        pretokenizer=pretokenizer,
        variant=variant,
        min_frequency=min_frequency,
        **options,  # type: ignore[arg-type]
    )
    return extend_superbpe(
        files, vocab_size, stage1, variant=variant, min_frequency=min_frequency, **options  # type: ignore[arg-type]
    )


def extend_superbpe(
    files: Files,
    vocab_size: int,
    initial: BPEModel,
    *,
    variant: str = "auto",
    processes: Optional[int] = None,
    executor: Optional[Executor] = None,
    min_frequency: int = 1,
    errors: str = "strict",
    progress: Progress = False,
) -> BPEModel:
    """Stage 2 alone: continue ``initial`` (any tokenizer, e.g. a loaded one) with superwords.

    The reference's ``extend_existing_tokenizer``: ``initial``'s merges stay, in order,
    with their ids, and its special tokens are kept.
    """
    counts = count(
        files,
        initial.special_tokens,
        pretokenizer=STAGE2_PRETOKENIZER,
        processes=processes,
        executor=executor,
        errors=errors,
        progress=progress,
    )
    return superwords_from_counts(
        counts, vocab_size, initial, variant=variant, min_frequency=min_frequency, progress=progress
    )


def superwords_from_counts(
    counts: WordCounts,
    vocab_size: int,
    initial: BPEModel,
    *,
    variant: str = "auto",
    min_frequency: int = 1,
    progress: Progress = False,
) -> BPEModel:
    """Stage 2 on words counted with :data:`STAGE2_PRETOKENIZER` (e.g. ``count --pattern``)."""
    if counts.pretokenizer != STAGE2_PRETOKENIZER:
        raise PureBPEError(
            f"SuperBPE's stage 2 needs words counted with its pattern {STAGE2_PATTERN!r}, "
            f"not with {counts.pretokenizer!r}"
        )
    # Stage 2 is the one place where ``initial`` was learned with another pre-tokenizer on
    # purpose (train_from_counts refuses that): its words hold stage 1's words whole.
    specials = check_arguments(
        vocab_size, counts.special_tokens, variant, initial, progress, min_frequency
    )
    return merge_counts(
        counts,
        vocab_size,
        specials,
        variant=STAGE2_VARIANT if variant == "auto" else variant,
        min_frequency=min_frequency,
        max_token_length=None,
        tie_break="canonical",
        initial=initial,
        progress=progress,
    )
