"""The training API: count words, build the word table, run a trainer variant, assemble.

``train`` (files) and ``train_from_iterator`` (strings) count words with
:mod:`purebpe.counting`; ``train_from_counts`` does the rest, so a corpus can be counted
once and trained many times. ``train_bpe`` is the CS336 assignment's signature.
"""
from __future__ import annotations

from concurrent.futures import Executor
from typing import Dict, Iterable, List, Optional, Sequence, Tuple

from .core import WordTable, check_limits
from .counting import Files, count, count_from_iterator
from .wordcounts import WordCounts
from .errors import PureBPEError
from .model import BPEModel
from .pretokenize import Pretokenizer
from .progress import Progress, check_progress, end_early, progress_bar
from .specials import check_special_tokens
from .trainers import choose_variant, get_trainer, resolve_variant


def train(
    files: Files,
    vocab_size: int,
    special_tokens: Iterable[str] = (),
    *,
    variant: str = "auto",
    pretokenizer: Pretokenizer = "gpt2",
    processes: Optional[int] = None,
    executor: Optional[Executor] = None,
    min_frequency: int = 1,
    max_token_length: Optional[int] = None,
    tie_break: str = "canonical",
    initial: Optional[BPEModel] = None,
    errors: str = "strict",
    progress: Progress = False,
) -> BPEModel:
    """Train a byte-level BPE model on text files (one path or a list of paths).

    ``vocab_size`` counts the 256 byte tokens, the merges and the special tokens. Training
    stops early when no pair occurs at least ``min_frequency`` times; a pair whose merged
    token would exceed ``max_token_length`` bytes is never merged. ``tie_break="hf"`` breaks
    ties as Hugging Face ``tokenizers`` does (:data:`purebpe.core.TIE_BREAKS`). ``initial`` continues
    training from an earlier model: its merges come first, with their ids.
    """
    specials = check_arguments(
        vocab_size, special_tokens, variant, initial,
        progress, min_frequency, max_token_length,
        tie_break=tie_break,
        pretokenizer=pretokenizer,
    )
    counts = count(
        files,
        specials,
        pretokenizer=pretokenizer,
        processes=processes,
        executor=executor,
        errors=errors,
        progress=progress,
    )
    return train_from_counts(
        counts,
        vocab_size,
        variant=variant,
        min_frequency=min_frequency,
        max_token_length=max_token_length,
        tie_break=tie_break,
        initial=initial,
        progress=progress,
    )


def train_from_iterator(
    texts: Iterable[str],
    vocab_size: int,
    special_tokens: Iterable[str] = (),
    *,
    variant: str = "auto",
    pretokenizer: Pretokenizer = "gpt2",
    processes: Optional[int] = None,
    executor: Optional[Executor] = None,
    min_frequency: int = 1,
    max_token_length: Optional[int] = None,
    tie_break: str = "canonical",
    initial: Optional[BPEModel] = None,
    errors: str = "strict",
    progress: Progress = False,
) -> BPEModel:
    """Train on an iterable of strings (consumed once, streamed); options as :func:`train`.

    Each string is pre-tokenized on its own: a word never spans two strings.
    """
    specials = check_arguments(
        vocab_size, special_tokens, variant, initial,
        progress, min_frequency, max_token_length,
        tie_break=tie_break,
        pretokenizer=pretokenizer,
    )
    counts = count_from_iterator(
        texts,
        specials,
        pretokenizer=pretokenizer,
        processes=processes,
        executor=executor,
        errors=errors,
        progress=progress,
    )
    return train_from_counts(
        counts,
        vocab_size,
        variant=variant,
        min_frequency=min_frequency,
        max_token_length=max_token_length,
        tie_break=tie_break,
        initial=initial,
        progress=progress,
    )


def train_from_counts(
    counts: WordCounts,
    vocab_size: int,
    *,
    variant: str = "auto",
    min_frequency: int = 1,
    max_token_length: Optional[int] = None,
    tie_break: str = "canonical",
    initial: Optional[BPEModel] = None,
    progress: Progress = False,
) -> BPEModel:
    """Train on words counted earlier (:func:`purebpe.count`); options as :func:`train`."""
    specials = check_arguments(
        vocab_size, counts.special_tokens, variant, initial,
        progress, min_frequency, max_token_length,
        tie_break=tie_break,
        pretokenizer=counts.pretokenizer,
    )
    return merge_counts(
        counts,
        vocab_size,
        specials,
        variant=variant,
        min_frequency=min_frequency,
        max_token_length=max_token_length,
        tie_break=tie_break,
        initial=initial,
        progress=progress,
    )


def merge_counts(
    counts: WordCounts,
    vocab_size: int,
    specials: Tuple[str, ...],
    *,
    variant: str,
    min_frequency: int,
    max_token_length: Optional[int],
    tie_break: str,
    initial: Optional[BPEModel],
    progress: Progress,
) -> BPEModel:
    """The merge phase of :func:`train_from_counts`, on arguments :func:`check_arguments` passed."""
    if initial is not None:
        specials = initial.special_tokens + tuple(
            s for s in specials if s not in initial.special_tokens
        )
    table = WordTable.from_word_counts(
        counts.words,
        initial.merges if initial is not None else (),
        min_frequency=min_frequency,
        max_token_length=max_token_length,
        tie_break=tie_break,
    )
    num_merges = vocab_size - len(specials) - len(table.token_bytes)
    if num_merges < 0:
        raise PureBPEError(
            f"vocab_size {vocab_size} is smaller than the initial model "
            f"({len(table.token_bytes)} tokens + {len(specials)} special tokens)"
        )
    if variant == "auto":
        variant = choose_variant(counts.words)
    trainer = get_trainer(variant)
    bar = progress_bar(progress, "merge", num_merges, "merge")
    done = 0
    try:
        for _ in zip(range(num_merges), trainer(table)):
            bar.update(1)
            done += 1
        if done < num_merges:
            end_early(bar, done)  # stopped early (no pair left): the bar ends where it stopped
    finally:
        bar.close()
    return BPEModel.from_table(table, specials, counts.pretokenizer)


def train_bpe(
    input_path: str, vocab_size: int, special_tokens: Sequence[str], **options: object
) -> Tuple[Dict[int, bytes], List[Tuple[bytes, bytes]]]:
    """The CS336 assignment signature: ``(vocab, merges)`` for one input file."""
    model = train(input_path, vocab_size, special_tokens, **options)  # type: ignore[arg-type]
    return model.vocab, model.merges


def check_arguments(
    vocab_size: int,
    special_tokens: Iterable[str],
    variant: str,
    initial: Optional[BPEModel],
    progress: Progress,
    min_frequency: int = 1,
    max_token_length: Optional[int] = None,
    tie_break: str = "canonical",
    pretokenizer: Optional[Pretokenizer] = None,
) -> Tuple[str, ...]:
    """Check what can be checked before any counting, so bad arguments fail at once.

    ``pretokenizer`` is the one the words are (or will be) counted with: an ``initial``
    model learned with another one is refused, as its merges would not fit the words.
    """
    specials = check_special_tokens(special_tokens)
    check_limits(min_frequency, max_token_length, tie_break)
    resolve_variant(variant)
    check_progress(progress)
    if not isinstance(vocab_size, int) or isinstance(vocab_size, bool):
        raise PureBPEError(f"vocab_size must be an int, not {vocab_size!r}")
    if initial is not None and pretokenizer is not None and initial.pretokenizer != pretokenizer:
        raise PureBPEError(
            f"the initial model was learned with pretokenizer {initial.pretokenizer!r}; "
            f"these words are counted with {pretokenizer!r}"
        )
    initial_size = 256 if initial is None else 256 + len(initial.merges)
    if vocab_size < initial_size + len(specials):
        raise PureBPEError(
            f"vocab_size {vocab_size} is too small: it must hold the {initial_size} "
            f"{'byte' if initial is None else 'initial'} tokens and {len(specials)} special tokens"
        )
    return specials
