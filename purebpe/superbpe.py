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

import attrs

from .counting import Files, count
from .errors import PureBPEError
from .model import BPEModel
from .pretokenize import Pattern, Pretokenizer, superwords
from .progress import Progress
from .training import count_with, merge_counts
from .training_options import TrainingOptions
from .wordcounts import WordCounts

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
    options = TrainingOptions(
        vocab_size=vocab_size,
        special_tokens=special_tokens,
        variant=variant,
        pretokenizer=pretokenizer,
        processes=processes,
        executor=executor,
        min_frequency=min_frequency,
        errors=errors,
        progress=progress,
    )
    merges = vocab_size - 256 - len(options.special_tokens)
    if not 0 <= transition <= merges:
        raise PureBPEError(
            f"transition {transition} must be between 0 and the number of merges "
            f"({merges} for vocab_size {vocab_size} with "
            f"{len(options.special_tokens)} special tokens)"
        )
    stage1 = attrs.evolve(options, vocab_size=256 + transition + len(options.special_tokens))
    counts = count_with(stage1, count, files)
    return _extend(files, attrs.evolve(options, initial=merge_counts(counts, stage1)))


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
    return _extend(
        files,
        TrainingOptions(
            vocab_size=vocab_size,
            special_tokens=initial.special_tokens,
            variant=variant,
            pretokenizer=STAGE2_PRETOKENIZER,
            processes=processes,
            executor=executor,
            min_frequency=min_frequency,
            initial=initial,
            errors=errors,
            progress=progress,
        ),
    )


def _extend(files: Files, options: TrainingOptions) -> BPEModel:
    """Stage 2 of ``options`` (whose ``initial`` is stage 1) on ``files``."""
    assert options.initial is not None
    counted = attrs.evolve(
        options, special_tokens=options.initial.special_tokens, pretokenizer=STAGE2_PRETOKENIZER
    )
    counts = count_with(counted, count, files)
    return _stage2(counts, counted)


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
    return _stage2(
        counts,
        TrainingOptions(
            vocab_size=vocab_size,
            special_tokens=counts.special_tokens,
            variant=variant,
            pretokenizer=counts.pretokenizer,
            min_frequency=min_frequency,
            initial=initial,
            progress=progress,
        ),
    )


def _stage2(counts: WordCounts, options: TrainingOptions) -> BPEModel:
    """Merge stage-2 words: ``positional`` unless another variant is named.

    Stage 2 is the one place where ``initial`` was learned with another pre-tokenizer on
    purpose (so :meth:`TrainingOptions.check_initial_fits` is not called): its words hold
    stage 1's words whole.
    """
    if options.variant == "auto":
        options = attrs.evolve(options, variant=STAGE2_VARIANT)
    return merge_counts(counts, options)
