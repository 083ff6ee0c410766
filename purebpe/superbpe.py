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

Stage 2 holds its words in flat arrays from counting to training (peak memory under 4x
the corpus on PyPy, ``docs/superbpe.md``): counting sums into
:class:`~purebpe.counting.CompactCounts`, the replay of stage 1's merges writes
:class:`PackedWords`, and :func:`release_memory` hands what each step dropped back to the
system before the next.
"""

from __future__ import annotations

import gc
import json
import sys
from array import array
from bisect import bisect_right
from concurrent.futures import Executor
from functools import lru_cache
from typing import BinaryIO, Callable, Iterable, Iterator, List, Optional, Sequence, Tuple, cast, overload

import attrs

from . import core
from .core import WordTable, apply_merges
from .counting import CompactCounts, Files, count, count_compact
from .errors import PureBPEError
from .model import BPEModel
from .pretokenize import Pattern, Pretokenizer, check_pretokenizer, superwords
from .progress import Progress
from .training import count_with, merge_counts, merge_table
from .training_options import TrainingOptions
from .wordcounts import WordCounts

__all__ = [
    "STAGE2_PATTERN",
    "STAGE2_PRETOKENIZER",
    "PackedWords",
    "bytes_per_token",
    "extend_superbpe",
    "release_memory",
    "stage2_options",
    "stage2_table",
    "superwords_from_counts",
    "train_stages",
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
    return train_stages(options, *_file_counters(files), transition=transition)


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
    options = TrainingOptions(
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
    )
    return train_stages(options, *_file_counters(files))


#: Counts the corpus with the options it is given (their special tokens, pre-tokenizer,
#: processes...): stage 1's words into :class:`WordCounts`, stage 2's into
#: :class:`~purebpe.counting.CompactCounts`.
WordCounter = Callable[[TrainingOptions], WordCounts]
CompactCounter = Callable[[TrainingOptions], CompactCounts]


def _file_counters(files: Files) -> Tuple[WordCounter, CompactCounter]:
    """The counters of :func:`train_stages` that read ``files``."""
    return (
        lambda stage: count_with(stage, count, files),
        lambda stage: count_with(stage, count_compact, files),
    )


def _nothing(table: WordTable) -> None:
    pass


def train_stages(
    options: TrainingOptions,
    count_words: WordCounter,
    count_superwords: CompactCounter,
    *,
    transition: Optional[int] = None,
    before_merging: Callable[[WordTable], None] = _nothing,
) -> BPEModel:
    """SuperBPE on a corpus that ``count_words`` and ``count_superwords`` count: stage 1 to
    ``transition`` merges, or with no ``transition`` ``options.initial`` as stage 1, then
    stage 2 to ``options.vocab_size``.

    ``before_merging`` is shown stage 2's table (:func:`stage2_table`) before its trainer
    runs, which drops the words (``purebpe train`` keeps them for its summary). Each step
    drops its table, and :func:`release_memory` hands it back, before the next begins.

    >>> from purebpe.counting import CompactCounts, count_from_iterator
    >>> texts = ["by the way, the way it is", "it is by the way"] * 3
    >>> def words(stage):
    ...     return count_from_iterator(texts, stage.special_tokens, pretokenizer=stage.pretokenizer)
    >>> def superwords(stage):
    ...     counts = CompactCounts()
    ...     counts.add_counts(words(stage).words)
    ...     return counts
    >>> model = train_stages(TrainingOptions(vocab_size=268), words, superwords, transition=6)
    >>> [(left + right).decode() for left, right in model.merges[6:]]  # stage 2's
    [' the way', ' i', 'y the way', 't i', 't is', 'by the way']
    """
    assert (transition is None) != (options.initial is None), "stage 1 is trained here or given"
    check_pretokenizer(STAGE2_PRETOKENIZER)  # say what it needs before any counting
    if transition is not None:
        stage1 = _stage1_options(options, transition)
        counts = count_words(stage1)
        initial = merge_counts(counts, stage1)
        words = len(counts)
        del counts
        release_memory(words)  # stage 1's words, before stage 2 counts
        options = attrs.evolve(options, initial=initial)
    assert options.initial is not None
    stage2 = _stage2_variant(
        attrs.evolve(options, special_tokens=options.initial.special_tokens, pretokenizer=STAGE2_PRETOKENIZER)
    )
    superwords = count_superwords(stage2)
    release_memory(len(superwords))  # what counting left behind, before the words are replayed
    table = stage2_table(superwords.pairs(), stage2)
    del superwords  # the table holds the words now
    before_merging(table)
    return merge_stage2(table, stage2)


def _stage1_options(options: TrainingOptions, transition: int) -> TrainingOptions:
    """``options`` for stage 1: ``transition`` merges, which ``options.vocab_size`` must hold."""
    merges = options.vocab_size - 256 - len(options.special_tokens)
    if not 0 <= transition <= merges:
        raise PureBPEError(
            f"transition {transition} must be between 0 and the number of merges "
            f"({merges} for vocab_size {options.vocab_size} with "
            f"{len(options.special_tokens)} special tokens)"
        )
    return attrs.evolve(options, vocab_size=256 + transition + len(options.special_tokens))


def stage2_options(
    vocab_size: int,
    initial: BPEModel,
    *,
    variant: str = "auto",
    min_frequency: int = 1,
    progress: Progress = False,
) -> TrainingOptions:
    """The options of stage 2 after ``initial``, on words counted with :data:`STAGE2_PRETOKENIZER`
    and ``initial``'s special tokens (:func:`purebpe.counting.count_compact`)."""
    return _stage2_variant(
        TrainingOptions(
            vocab_size=vocab_size,
            special_tokens=initial.special_tokens,
            variant=variant,
            pretokenizer=STAGE2_PRETOKENIZER,
            min_frequency=min_frequency,
            initial=initial,
            progress=progress,
        )
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
    options = _stage2_variant(
        TrainingOptions(
            vocab_size=vocab_size,
            special_tokens=counts.special_tokens,
            variant=variant,
            pretokenizer=counts.pretokenizer,
            min_frequency=min_frequency,
            initial=initial,
            progress=progress,
        )
    )
    return merge_stage2(stage2_table(counts.words.items(), options), options)


def _stage2_variant(options: TrainingOptions) -> TrainingOptions:
    """``options`` with stage 2's trainer: ``positional`` unless another variant is named."""
    return attrs.evolve(options, variant=STAGE2_VARIANT) if options.variant == "auto" else options


#: Ids per array of :class:`PackedWords` (a longer word has an array of its own).
CHUNK_IDS = 1 << 20


class PackedWords(Sequence[Sequence[int]]):
    """Word tables' ``words`` back to back in arrays of token ids, with each word's end.

    Stage 2 replays thousands of stage-1 merges over some 10^6 distinct words; as a list of
    one array each they cost an object, an allocation and a list slot a word besides their
    ids, here a 4-byte end.  The ids fill arrays of
    :data:`CHUNK_IDS` one after the other: one array growing to the whole size would be
    copied at every step of its growth, each old buffer a hole the next, larger one does
    not fit in (measured: 75 MiB more at the peak, 100 MB of Linux source).  A word read
    back is a new array slice.  Read-only: the positional trainer only reads a table's
    words (the others rewrite them in place, and get a list).

    >>> words = PackedWords("H")
    >>> words.append(b"ab"); words.append([300])
    >>> len(words), [list(word) for word in words], list(words[1])
    (2, [[97, 98], [300]], [300])
    """

    def __init__(self, typecode: str) -> None:
        self.typecode = typecode
        self.chunks = [array(typecode)]
        #: The index of the first word of each chunk.
        self.first_words = [0]
        #: Word ``i`` ends at ``ends[i]`` in its chunk, and starts where word ``i - 1``
        #: ends, or at 0 for the first word of a chunk.
        self.ends = array("I")

    def append(self, word: Sequence[int]) -> None:
        """Add ``word`` (its ``bytes``, or its ids) at the end."""
        chunk = self.chunks[-1]
        if chunk and len(chunk) + len(word) > CHUNK_IDS:
            chunk = array(self.typecode)
            self.chunks.append(chunk)
            self.first_words.append(len(self.ends))
        chunk.extend(word)
        self.ends.append(len(chunk))

    def write(self, out: BinaryIO) -> None:
        """Write the words to the binary file ``out`` (for :meth:`read`, on this machine)."""
        header = [self.typecode, self.first_words, [len(chunk) for chunk in self.chunks], len(self.ends)]
        out.write(json.dumps(header).encode("ascii") + b"\n")
        for chunk in self.chunks:
            chunk.tofile(out)
        self.ends.tofile(out)

    @classmethod
    def read(cls, data: BinaryIO) -> "PackedWords":
        """The words that :meth:`write` wrote to ``data``, from where ``data`` stands.

        >>> import io
        >>> words, spill = PackedWords("H"), io.BytesIO()
        >>> words.append(b"ab"); words.write(spill); _ = spill.seek(0)
        >>> read = PackedWords.read(spill)
        >>> len(read), tuple(read[0])
        (1, (97, 98))
        """
        typecode, first_words, lengths, count = json.loads(data.readline())
        words = cls(typecode)
        words.first_words, words.chunks = first_words, []
        for length in lengths:
            words.chunks.append(array(typecode))
            words.chunks[-1].fromfile(data, length)
        words.ends.fromfile(data, count)
        return words

    def __len__(self) -> int:
        return len(self.ends)

    @overload
    def __getitem__(self, index: int) -> Sequence[int]: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Sequence[int]]: ...

    def __getitem__(self, index: object) -> object:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        assert isinstance(index, int)
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("word index out of range")
        c = bisect_right(self.first_words, index) - 1
        start = 0 if index == self.first_words[c] else self.ends[index - 1]
        return self.chunks[c][start : self.ends[index]]

    def __iter__(self) -> Iterator[Sequence[int]]:
        ends, firsts = self.ends, self.first_words + [len(self.ends)]
        for c, chunk in enumerate(self.chunks):
            start = 0
            for i in range(firsts[c], firsts[c + 1]):
                yield chunk[start : ends[i]]
                start = ends[i]


#: Whether :class:`WordTable` is the compiled build's (``setup.py``): its attributes then
#: hold only their declared types.
WORD_TABLE_COMPILED = not core.__file__.endswith(".py")


def stage2_table(counts: Iterable[Tuple[bytes, int]], options: TrainingOptions) -> WordTable:
    """The word table of stage 2: the words of ``(word, count)`` pairs through
    ``options.initial``'s merges.

    The words are replayed one by one into :class:`PackedWords` (for the positional trainer;
    a list of their arrays for the others), so that stage 2 never holds a second copy of
    the corpus's distinct words as small objects: once the caller drops the counts, the
    table is all that is left of them.
    """
    assert options.initial is not None
    table = WordTable.from_word_counts(
        {},
        min_frequency=options.min_frequency,
        max_token_length=options.max_token_length,
        tie_break=options.tie_break,
    )
    ranks = table.add_merges(options.initial.merges)
    words = PackedWords("H" if len(table.token_bytes) <= 1 << 16 else "I")
    word_counts: List[int] = []
    for word, n in counts:
        words.append(apply_merges(word, ranks))
        word_counts.append(n)
    table.counts = word_counts
    # Only the positional trainer reads the words without rewriting them (see PackedWords);
    # the compiled build's WordTable holds a list (mypyc checks the type), so there it gets one.
    packed = options.variant == STAGE2_VARIANT and not WORD_TABLE_COMPILED
    table.words = cast(List[Sequence[int]], words) if packed else list(words)
    return table


def merge_stage2(table: WordTable, options: TrainingOptions) -> BPEModel:
    """Merge the words of :func:`stage2_table`.

    Stage 2 is the one place where ``initial`` was learned with another pre-tokenizer on
    purpose (so :meth:`TrainingOptions.check_initial_fits` is not called): its words hold
    stage 1's words whole.
    """
    release_memory(len(table.counts))  # the counts the caller dropped, before the trainer lays out its arrays
    return merge_table(table, options, options.variant, STAGE2_PRETOKENIZER)


#: Tables of fewer distinct words than this are not worth a full collection: it costs time
#: in proportion to the whole live heap (0.2 s and more in a process that holds much else,
#: such as a test run or a notebook), and they leave little behind.
RELEASE_FROM_WORDS = 100_000


def release_memory(words: int) -> None:
    """Collect garbage, then give the C allocator's free pages back to the system (glibc's
    ``malloc_trim``; elsewhere only the collection), after a step that dropped a table of
    ``words`` distinct words (below :data:`RELEASE_FROM_WORDS`, nothing).

    Between SuperBPE's steps -- stage 1, stage 2's counting, its replay, its trainer -- what
    one step dropped would otherwise stay resident under the next: PyPy's collector frees
    lazily (when the heap has grown by 82 % since the last collection), and glibc keeps
    freed memory for the process. Measured on 100 MB of Linux source on PyPy: 112 MiB handed
    back before stage 2's trainer, whose 124 MB array then fits where the counts were.
    """
    if words < RELEASE_FROM_WORDS:
        return
    gc.collect()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@lru_cache(maxsize=None)
def _malloc_trim() -> Optional[Callable[[int], int]]:
    """glibc's ``malloc_trim``, or ``None`` where the C library has none (macOS, musl)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return cast(Callable[[int], int], ctypes.CDLL(None).malloc_trim)
    except (ImportError, OSError, AttributeError):
        return None


def bytes_per_token(words: Sequence[Sequence[int]], counts: Sequence[int], model: BPEModel) -> float:
    """UTF-8 bytes per token of the words of a table of ``model`` (token ids, each occurring
    ``counts`` times, e.g. :func:`stage2_table`'s) once all of ``model``'s merges apply.

    Merges already applied to a word apply no more, and the rest apply as they would to
    its bytes: the pairs of a token made by a merge rank after it.
    """
    table = WordTable.from_word_counts({})
    ranks = table.add_merges(model.merges)
    lengths = [len(token) for token in table.token_bytes]
    n_bytes = n_tokens = 0
    for word, n in zip(words, counts):
        n_bytes += sum([lengths[t] for t in word]) * n
        n_tokens += len(apply_merges(word, ranks)) * n
    return n_bytes / n_tokens if n_tokens else 0.0
