"""The training API: count words, build the word table, run a trainer variant, assemble.

``train`` (files) and ``train_from_iterator`` (strings) count words with
:mod:`purebpe.counting`; ``train_from_counts`` does the rest, so a corpus can be counted
once and trained many times. ``train_bpe`` is the CS336 assignment's signature. Each turns
its arguments into one :class:`~purebpe.training_options.TrainingOptions` first, so bad
arguments fail before any counting.
"""

from __future__ import annotations

from concurrent.futures import Executor
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Tuple, TypeVar

from .core import WordTable
from .counting import Files, count, count_from_iterator
from .errors import PureBPEError
from .model import BPEModel
from .pretokenize import Pretokenizer
from .progress import Progress, end_early, progress_bar
from .trainers import choose_variant, get_trainer
from .training_options import TrainingOptions
from .wordcounts import WordCounts

#: What a counter of :func:`count_with` returns.
Counts = TypeVar("Counts")


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
    format: str = "auto",
    text_key: str = "text",
    column: str = "text",
    max_chars: Optional[int] = None,
    doc_cap: Optional[int] = None,
) -> BPEModel:
    """Train a byte-level BPE model on a corpus: files, directories, globs or ``-``, of
    text, JSON lines or Parquet, compressed or not (read as :func:`purebpe.count` does,
    with its ``format``, ``text_key``, ``column``, ``max_chars``, ``doc_cap`` and
    ``errors``; ``processes`` defaults to this machine's cores).

    ``vocab_size`` counts the 256 byte tokens, the merges and the special tokens. Training
    stops early when no pair occurs at least ``min_frequency`` times; a pair whose merged
    token would exceed ``max_token_length`` bytes is never merged. ``tie_break="hf"`` breaks
    ties as Hugging Face ``tokenizers`` does (:data:`purebpe.core.TIE_BREAKS`). ``initial`` continues
    training from an earlier model: its merges come first, with their ids.

    >>> from pydoc_data.topics import topics
    >>> import pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp(), "corpus.txt")
    >>> _ = path.write_text(topics["assert"], encoding="utf-8")
    >>> model = train(path, 300, ["<|endoftext|>"])
    >>> model.vocab_size, model.merges[0]
    (300, (b's', b's'))
    """
    options = TrainingOptions(
        vocab_size=vocab_size,
        special_tokens=special_tokens,
        variant=variant,
        pretokenizer=pretokenizer,
        processes=processes,
        executor=executor,
        min_frequency=min_frequency,
        max_token_length=max_token_length,
        tie_break=tie_break,
        initial=initial,
        errors=errors,
        progress=progress,
    )
    options.check_initial_fits()
    counts = count_with(
        options,
        count,
        files,
        format=format,
        text_key=text_key,
        column=column,
        max_chars=max_chars,
        doc_cap=doc_cap,
    )
    return merge_counts(counts, options)


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

    >>> model = train_from_iterator(["low lower lowest", "new newer newest"], 260)
    >>> merged = [left + right for left, right in model.merges]
    >>> merged
    [b'we', b'ne', b'lo', b'wes']
    """
    options = TrainingOptions(
        vocab_size=vocab_size,
        special_tokens=special_tokens,
        variant=variant,
        pretokenizer=pretokenizer,
        processes=processes,
        executor=executor,
        min_frequency=min_frequency,
        max_token_length=max_token_length,
        tie_break=tie_break,
        initial=initial,
        errors=errors,
        progress=progress,
    )
    options.check_initial_fits()
    counts = count_with(options, count_from_iterator, texts)
    return merge_counts(counts, options)


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
    """Train on words counted earlier (:func:`purebpe.count`); options as :func:`train`.

    The special tokens and the pre-tokenizer are the ones the words were counted with.
    """
    options = TrainingOptions(
        vocab_size=vocab_size,
        special_tokens=counts.special_tokens,
        variant=variant,
        pretokenizer=counts.pretokenizer,
        min_frequency=min_frequency,
        max_token_length=max_token_length,
        tie_break=tie_break,
        initial=initial,
        progress=progress,
    )
    options.check_initial_fits()
    return merge_counts(counts, options)


def count_with(
    options: TrainingOptions, counter: Callable[..., Counts], source: object, **reading: object
) -> Counts:
    """Count ``source`` with ``counter`` (:func:`count`, :func:`count_from_iterator` or
    :func:`~purebpe.counting.count_compact`); ``reading`` are :func:`count`'s options of how
    to read files (``format``...)."""
    return counter(
        source,
        options.special_tokens,
        **reading,
        pretokenizer=options.pretokenizer,
        processes=options.processes,
        executor=options.executor,
        errors=options.errors,
        progress=options.progress,
    )


def merge_counts(counts: WordCounts, options: TrainingOptions) -> BPEModel:
    """The merge phase: train ``counts`` with ``options``, which were checked when built."""
    initial = options.initial
    table = WordTable.from_word_counts(
        counts.words,
        initial.merges if initial is not None else (),
        min_frequency=options.min_frequency,
        max_token_length=options.max_token_length,
        tie_break=options.tie_break,
    )
    variant = options.variant
    if variant == "auto":
        variant = choose_variant(counts.words)
    return merge_table(table, options, variant, counts.pretokenizer)


def merge_table(
    table: WordTable, options: TrainingOptions, variant: str, pretokenizer: Pretokenizer
) -> BPEModel:
    """The merge phase on a table built already, with the trainer ``variant`` (not "auto");
    the model's pre-tokenizer is ``pretokenizer``, the one its words were counted with."""
    num_merges = options.merges_wanted(len(table.token_bytes))
    specials = options.all_special_tokens()
    if num_merges < 0:
        raise PureBPEError(
            f"vocab_size {options.vocab_size} is smaller than the initial model "
            f"({len(table.token_bytes)} tokens + {len(specials)} special tokens)"
        )
    trainer = get_trainer(variant)
    bar = progress_bar(options.progress, "merge", num_merges, "merge")
    done = 0
    try:
        for _ in zip(range(num_merges), trainer(table)):
            bar.update(1)
            done += 1
        if done < num_merges:
            end_early(bar, done)  # stopped early (no pair left): the bar ends where it stopped
    finally:
        bar.close()
    return BPEModel.from_table(table, specials, pretokenizer)


def train_bpe(
    input_path: str, vocab_size: int, special_tokens: Sequence[str], **options: object
) -> Tuple[Dict[int, bytes], List[Tuple[bytes, bytes]]]:
    """The CS336 assignment signature: ``(vocab, merges)`` for one input file."""
    model = train(input_path, vocab_size, special_tokens, **options)  # type: ignore[arg-type]
    return model.vocab, model.merges
