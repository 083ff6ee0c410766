"""Word counting: stream text in chunks, split on special tokens, pre-tokenize, count.

Files are read in blocks and cut into chunks at positions where cutting cannot change the
result (:class:`ChunkCutter`), so memory does not grow with the file's size. Each chunk is
decoded, split on special tokens, pre-tokenized and counted into ``{word: count}``; the
per-chunk tables are summed. Summing is order-independent, so the counts are the same for
any number of processes: local workers (forked ones through
:func:`purebpe._workers.ordered_map`, where processes are forked; a ``ProcessPoolExecutor``
elsewhere), or any ``concurrent.futures.Executor`` (a Dask/Ray executor for a cluster,
which is handed chunks of bytes and needs no shared file system).

Counts are Python ints: they never overflow.
"""

from __future__ import annotations

import io
import os
import pickle
import tempfile
from array import array
from collections import deque
from concurrent.futures import FIRST_COMPLETED, BrokenExecutor, Executor, Future, wait
from functools import lru_cache
from itertools import chain, islice
from pathlib import Path
from typing import (
    BinaryIO,
    Deque,
    Dict,
    Iterable,
    Iterator,
    List,
    NamedTuple,
    Optional,
    Pattern,
    Sequence,
    Set,
    Tuple,
    Union,
)

from ._atomic import PathLike, remove_temporary_directory
from ._workers import (
    WorkerDied,
    WorkerPool,
    can_fork,
    ordered_map,
    scratch_directory,
    stop_workers,
    worker_pool,
)
from .errors import PureBPEError, check_int, check_iterable_of_texts
from .pretokenize import Pretokenizer, check_pretokenizer, utf8_word_counter, word_counter
from .pretokenize.chunking import CHUNK_BYTES, ChunkCutter, check_text, is_utf8, read_chunks
from .progress import Bar, Progress, check_progress, progress_bar
from .readers import (
    ERRORS,
    Part,
    Piece,
    RawText,
    ReadOptions,
    Source,
    as_text,
    capped,
    check_unchanged,
    checked_stream,
    documents,
    expand,
    open_source,
    read_options,
    source_documents,
    sources,
)
from .readers.inputs import Signature
from .readers.jsonl import line_blocks, line_ranges, records
from .readers.parquet import row_groups as parquet_row_groups
from .specials import check_special_tokens, special_bytes_pattern, special_pattern, split_on_specials

# COUNTS_FORMAT lives in purebpe.wordcounts now; importable from here for older code.
from .wordcounts import COUNTS_FORMAT as COUNTS_FORMAT
from .wordcounts import WordCounts, add_counts

Files = Union[PathLike, Sequence[PathLike]]

#: The most bytes of one file that one local worker process counts in one job...
RANGE_BYTES = 1 << 26
#: ... and the jobs per local worker process when the files are smaller than that.
RANGES_PER_WORKER = 2
#: A range is cut into pieces of a quarter of it, of at least this size (each piece costs
#: a cut search) and at most ``chunk_bytes``.
MIN_PIECE_BYTES = 1 << 16
#: Characters of text items batched into one job by :func:`count_from_iterator`.
CHUNK_CHARS = 1 << 21
#: With ``processes=None``, inputs smaller than this are counted in one process.
SERIAL_BELOW_BYTES = 1 << 22


class Job(NamedTuple):
    """What one worker counts: a chunk of a file, or a batch of texts, and the options."""

    #: The chunk's bytes, or a list of texts.
    data: Union[bytes, List[str]]
    #: Where the data comes from (a path, or ``"<texts>"``), for error messages...
    source: str
    #: ... with the chunk's byte offset and first line number in it.
    offset: int
    line: int
    special_tokens: Tuple[str, ...]
    pretokenizer: Pretokenizer
    errors: str


def count_job(job: Job) -> Dict[bytes, int]:
    """Count the words of one job; runs in worker processes, so it is a top-level function."""
    data, source, offset, line, special_tokens, pretokenizer, errors = job
    pieces = [RawText(data, source, offset, line, errors)] if isinstance(data, bytes) else data
    return count_pieces(pieces, special_tokens, pretokenizer)


def count_pieces(
    pieces: Iterable[Piece], special_tokens: Tuple[str, ...], pretokenizer: Pretokenizer
) -> Dict[bytes, int]:
    """The words of texts, each counted on its own (no word spans two), as bytes.

    A piece of a text file not decoded yet (:class:`~purebpe.readers.RawText`) that is
    valid UTF-8 is counted as the bytes it is, where the pattern has a counter for them
    (:func:`~purebpe.pretokenize.utf8_word_counter`); every other piece is decoded (bad
    UTF-8 is reported or replaced there) and counted as text, whose words are encoded once
    at the end.
    """
    counter = word_counter(pretokenizer)
    bytes_counter = utf8_word_counter(pretokenizer)
    pattern = _cached_special_pattern(special_tokens)
    words: Dict[bytes, int] = {}
    counts: Dict[str, int] = {}
    for piece in pieces:
        if isinstance(piece, RawText) and bytes_counter is not None and is_utf8(piece.data):
            for part in split_on_specials(piece.data, _cached_special_bytes_pattern(special_tokens)):
                bytes_counter(part, words)
            continue
        for text in split_on_specials(as_text(piece), pattern):
            counter(text, counts)
    if not words:
        return {word.encode("utf-8"): n for word, n in counts.items()}
    for text, n in counts.items():
        word = text.encode("utf-8")
        words[word] = words.get(word, 0) + n
    return words


#: A chunk's counts as they travel back from a worker: every word's bytes back to back,
#: each word's length, each word's count. Three objects pickle and unpickle far faster than
#: a dict of 10^5 small ``bytes`` keys (4x on PyPy, whose pickle is written in Python).
PackedCounts = Tuple[bytes, "array[int]", "array[int]"]


def count_job_packed(job: Job) -> PackedCounts:
    """:func:`count_job` for a worker process: the counts packed for the trip back."""
    return pack_counts(count_job(job))


class RangeJob(NamedTuple):
    """A job for a local worker process, which reads the file itself: the path, then
    ``(byte offset, first line, length)`` of each chunk to count, in order, the options, and
    the directory to leave the counts in (``None``: send them back).

    The parent still reads the file to find the cuts, but sends no text through a pipe and
    merges one table per range instead of one per chunk: on PyPy both cost the parent
    more than counting itself (measured: 4-5 s of parent CPU for 72 MB sent as chunks, 2
    workers; serial counting takes 5.8 s).
    """

    path: str
    #: ``(byte offset, first line, length)`` of each chunk, in order.
    ranges: List[Tuple[int, int, int]]
    special_tokens: Tuple[str, ...]
    pretokenizer: Pretokenizer
    errors: str
    #: Where to leave the counts (``None``: send them back).
    directory: Optional[str]
    #: The file's size, mtime, inode and device when the ranges were planned: a file
    #: changed since fails the job (:func:`purebpe.readers.check_unchanged`).
    signature: Optional[Signature] = None


class PartJob(NamedTuple):
    """A job for a worker that reads a part of any layout itself (a JSON lines range, a
    compressed file, a Parquet row group: :class:`purebpe.readers.Part`)."""

    part: Part
    options: ReadOptions
    special_tokens: Tuple[str, ...]
    pretokenizer: Pretokenizer
    #: Where to leave the counts (``None``: send them back).
    directory: Optional[str]


class SpilledJob(NamedTuple):
    """A job that carried its data (a :class:`Job` or :class:`LinesJob`), pickled by this
    process into a file of ``directory``, where the worker reads it (then deletes it) and
    leaves its counts (:func:`spill`)."""

    path: str
    directory: str


#: Any job :func:`count_any` counts.
AnyJob = Union[Job, RangeJob, PartJob, "LinesJob", SpilledJob]

#: What a job sends back: its counts, or the path of the file they were saved to.
JobResult = Union[PackedCounts, str]


def count_range_packed(job: RangeJob) -> JobResult:
    """Count the chunks of one file range (reading them one at a time), packed; or, when
    the job names a directory, save them to a new file there and return its path.

    Local workers leave their counts in files: a pipe holds 64 KiB, so a worker sending
    megabytes waits until the parent reads them, and the parent reads only when it is not
    busy adding up other tables (measured on PyPy, 2 workers, 18 MB: 40-95 ms lost per job;
    the whole count 14% faster through files).
    """
    path, ranges, special_tokens, pretokenizer, errors, directory, signature = job
    source = Source(path, "text", None, signature)

    def pieces(f: BinaryIO) -> Iterator[RawText]:
        for offset, line, length in ranges:
            f.seek(offset)
            yield RawText(f.read(length), path, offset, line, errors)

    with open(path, "rb") as f:
        check_unchanged(source, f.fileno())
        totals = count_pieces(pieces(f), special_tokens, pretokenizer)
        check_unchanged(source, f.fileno())
    packed = pack_counts(totals)
    return packed if directory is None else save_packed(packed, directory)


class LinesJob(NamedTuple):
    """Whole lines of JSON lines decompressed (or read from a stream) by the parent: the
    worker parses and counts them."""

    data: bytes
    source: str
    #: The number of the first line.
    line: int
    options: ReadOptions
    special_tokens: Tuple[str, ...]
    pretokenizer: Pretokenizer


def count_part(job: PartJob) -> Tuple[Dict[bytes, int], int]:
    """The counts of one :class:`PartJob`, and how many bad records it skipped."""
    part, options, special_tokens, pretokenizer, _ = job
    cutter = ChunkCutter(special_tokens, pretokenizer)
    skipped = [0]
    pieces = (piece for piece, _starts in documents(part, options, cutter, skipped, None, True))
    return count_pieces(pieces, special_tokens, pretokenizer), skipped[0]


def count_lines(job: LinesJob) -> Tuple[Dict[bytes, int], int]:
    """The counts of one :class:`LinesJob`, and how many bad records it skipped."""
    data, source, line, options, special_tokens, pretokenizer = job
    skipped = [0]
    texts = records(io.BytesIO(data), source, options.keys, options.errors, skipped, first_line=line)
    return count_pieces(texts, special_tokens, pretokenizer), skipped[0]


def count_any(job: AnyJob) -> Tuple[Dict[bytes, int], int]:
    """The counts of any job, and the bad records it skipped (in this process)."""
    if isinstance(job, SpilledJob):
        return count_any(unspill(job))
    if isinstance(job, PartJob):
        return count_part(job)
    if isinstance(job, LinesJob):
        return count_lines(job)
    if isinstance(job, RangeJob):
        return unpack_counts(_packed(count_range_packed(job._replace(directory=None)))), 0
    return count_job(job), 0


def count_any_packed(job: AnyJob) -> Tuple[JobResult, int]:
    """:func:`count_any` for a worker process: the counts packed (or left in the job's
    directory), and the bad records skipped."""
    if isinstance(job, SpilledJob):
        result, skipped = count_any_packed(unspill(job))
        return (result if isinstance(result, str) else save_packed(result, job.directory)), skipped
    if isinstance(job, RangeJob):
        return count_range_packed(job), 0
    if isinstance(job, PartJob):
        counts, skipped = count_part(job)
        packed = pack_counts(counts)
        return (packed if job.directory is None else save_packed(packed, job.directory)), skipped
    if isinstance(job, LinesJob):
        counts, skipped = count_lines(job)
        return pack_counts(counts), skipped
    return count_job_packed(job), 0


def spill(job: AnyJob, directory: Optional[str]) -> AnyJob:
    """``job``, or where it carries its data (a chunk this process decompressed, a batch of
    texts) and ``directory`` is given, a :class:`SpilledJob` naming a file of ``directory``
    that holds it.

    A worker then reads its job at once, where through a pipe (1 MiB at most) it would
    wait for this process to write the rest of it, which this process does only between
    reading and decompressing the next jobs: measured on PyPy, 30 MB of gzip counted by 2
    workers, 3.5-4.5 s against 1.7 s for the same text uncompressed, the workers idle most
    of the time. Where the file cannot be written, the job goes through the pipe as before.
    """
    if directory is None or not isinstance(job, (Job, LinesJob)):
        return job
    try:
        handle, path = tempfile.mkstemp(dir=directory, suffix=".job")
    except OSError:
        return job
    try:
        with os.fdopen(handle, "wb") as out:
            pickle.dump(job, out, pickle.HIGHEST_PROTOCOL)
    except OSError:
        try:
            os.unlink(path)
        except OSError:
            pass  # the directory is removed after the run anyway
        return job
    return SpilledJob(path, directory)


def unspill(job: SpilledJob) -> AnyJob:
    """The job :func:`spill` wrote (its file deleted)."""
    with open(job.path, "rb") as f:
        original: AnyJob = pickle.load(f)  # a file of this process's own scratch directory
    os.unlink(job.path)
    return original


def _packed(result: JobResult) -> PackedCounts:
    return load_packed(result) if isinstance(result, str) else result


def unpack_counts(packed: PackedCounts) -> Dict[bytes, int]:
    """The dict that :func:`pack_counts` packed."""
    totals: Dict[bytes, int] = {}
    add_packed_counts(totals, packed)
    return totals


def save_packed(packed: PackedCounts, directory: str) -> str:
    """Write ``packed`` to a new file in ``directory`` (for this machine only: native byte
    order); returns its path, for :func:`load_packed`."""
    blob, lengths, counts = packed
    handle, name = tempfile.mkstemp(dir=directory, suffix=".counts")
    with os.fdopen(handle, "wb") as out:
        out.write(array("Q", [len(blob), len(lengths)]).tobytes())
        out.write(blob)
        lengths.tofile(out)
        counts.tofile(out)
    return name


def load_packed(name: str) -> PackedCounts:
    """Read back and delete a file of :func:`save_packed`."""
    with open(name, "rb") as f:
        sizes = array("Q")
        sizes.fromfile(f, 2)
        blob = f.read(sizes[0])
        lengths, counts = array("Q"), array("q")
        lengths.fromfile(f, sizes[1])
        counts.fromfile(f, sizes[1])
    os.unlink(name)
    return blob, lengths, counts


def pack_counts(counts: Dict[bytes, int]) -> PackedCounts:
    """``counts`` as :data:`PackedCounts`."""
    return (
        b"".join(counts),
        array("Q", [len(word) for word in counts]),
        array("q", counts.values()),
    )


def add_packed_counts(totals: Dict[bytes, int], packed: PackedCounts) -> None:
    """Add the counts that :func:`pack_counts` packed to ``totals``."""
    blob, lengths, counts = packed
    get = totals.get
    start = 0
    for length, n in zip(lengths, counts):
        word = blob[start : start + length]
        totals[word] = get(word, 0) + n
        start += length


class CompactCounts:
    """Word counts in four flat arrays: the words back to back, their ends, their counts,
    and an open-addressing hash table of their indexes.

    What :func:`count_compact` sums into instead of a ``dict``: some 70 bytes a word besides
    its bytes (PyPy) and no objects for the collector to trace, so a corpus of 10^6 distinct
    long words (SuperBPE's stage 2) costs about half as much at its peak. Counts are 64-bit.

    >>> counts = CompactCounts()
    >>> counts.add_counts({b"ab": 2, b"c": 1}); counts.add_counts({b"ab": 3})
    >>> len(counts), counts.total(), list(counts.pairs())
    (2, 6, [(b'ab', 5), (b'c', 1)])
    """

    def __init__(self) -> None:
        # An array, not a bytearray: the buffers it leaves behind as it grows are freed at
        # once, where PyPy's collector let a bytearray's pile up (its peak doubled).
        self.blob = array("B")
        #: ``blob[ends[i]:ends[i + 1]]`` is word ``i``.
        self.ends = array("Q", [0])
        self.counts = array("q")
        #: ``slots[h]``: 0 (empty) or a word's index + 1; never more than half full.
        self.slots = array("I", [0]) * 1024
        #: Bad records left out with ``errors="skip"``.
        self.skipped = 0

    def __len__(self) -> int:
        return len(self.counts)

    def total(self) -> int:
        """The number of word occurrences counted."""
        return sum(self.counts)

    def add(self, word: bytes, n: int) -> None:
        """Count ``word`` ``n`` more times."""
        blob, ends, slots = self.blob, self.ends, self.slots
        mask = len(slots) - 1
        i = hash(word) & mask
        while True:
            k = slots[i]
            if k == 0:
                break
            if blob[ends[k - 1] : ends[k]].tobytes() == word:
                self.counts[k - 1] += n
                return
            i = (i + 1) & mask
        slots[i] = len(self.counts) + 1
        blob.frombytes(word)
        ends.append(len(blob))
        self.counts.append(n)
        if 2 * len(self.counts) > len(slots):
            self._grow()

    def _grow(self) -> None:
        """Double the hash table (rehashing every word from its bytes)."""
        slots = array("I", [0]) * (2 * len(self.slots))
        mask = len(slots) - 1
        blob, ends = self.blob, self.ends
        for k in range(1, len(ends)):
            i = hash(blob[ends[k - 1] : ends[k]].tobytes()) & mask
            while slots[i]:
                i = (i + 1) & mask
            slots[i] = k
        self.slots = slots

    def add_counts(self, counts: Dict[bytes, int]) -> None:
        """Add a ``{word: count}`` table."""
        for word, n in counts.items():
            self.add(word, n)

    def add_packed(self, packed: PackedCounts) -> None:
        """Add the counts that :func:`pack_counts` packed."""
        blob, lengths, counts = packed
        start = 0
        for length, n in zip(lengths, counts):
            self.add(blob[start : start + length], n)
            start += length

    def pairs(self) -> Iterator[Tuple[bytes, int]]:
        """Every ``(word, count)``, in the order first counted."""
        blob, ends, counts = self.blob, self.ends, self.counts
        for k in range(len(counts)):
            yield blob[ends[k] : ends[k + 1]].tobytes(), counts[k]


#: What :func:`_run_jobs` sums counts into.
Totals = Union[Dict[bytes, int], CompactCounts]


def _add_into(totals: Totals, counts: Dict[bytes, int]) -> None:
    if isinstance(totals, CompactCounts):
        totals.add_counts(counts)
    else:
        add_counts(totals, counts)


def _add_packed_into(totals: Totals, packed: PackedCounts) -> None:
    if isinstance(totals, CompactCounts):
        totals.add_packed(packed)
    else:
        add_packed_counts(totals, packed)


@lru_cache(maxsize=8)
def _cached_special_pattern(special_tokens: Tuple[str, ...]) -> Optional[Pattern[str]]:
    return special_pattern(special_tokens)


@lru_cache(maxsize=8)
def _cached_special_bytes_pattern(special_tokens: Tuple[str, ...]) -> Optional[Pattern[bytes]]:
    return special_bytes_pattern(special_tokens)


def _check_options(
    special_tokens: Iterable[str], pretokenizer: Pretokenizer, errors: str, processes: Optional[int]
) -> Tuple[str, ...]:
    check_pretokenizer(pretokenizer)
    if errors not in ERRORS:
        raise PureBPEError(f"errors must be one of {', '.join(ERRORS)}, not {errors!r}")
    check_processes(processes)
    return check_special_tokens(special_tokens)


def check_processes(processes: Optional[int]) -> None:
    """``processes`` must be ``None`` (this machine's cores) or a positive int."""
    if processes is not None:
        check_int(processes, "processes", 1)


def default_processes(processes: Optional[int], input_bytes: Optional[int]) -> int:
    """How many processes to use: ``processes``, or by default this machine's cores, but one
    for an input smaller than :data:`SERIAL_BELOW_BYTES` (a pool costs more than it saves).

    >>> default_processes(3, 10), default_processes(None, 10)
    (3, 1)
    """
    if processes is not None:
        return processes
    if input_bytes is not None and input_bytes < SERIAL_BELOW_BYTES:
        return 1
    return os.cpu_count() or 1


def as_paths(files: Files) -> List[Path]:
    """``files`` (one path or a list; directories walked, globs expanded) as paths."""
    items = [files] if isinstance(files, (str, os.PathLike)) else list(files)
    return [Path(p) for p in expand(items)]


def count(
    files: Files,
    special_tokens: Iterable[str] = (),
    *,
    pretokenizer: Pretokenizer = "gpt2",
    processes: Optional[int] = None,
    executor: Optional[Executor] = None,
    errors: str = "strict",
    progress: Progress = False,
    chunk_bytes: int = CHUNK_BYTES,
    shared_files: bool = False,
    format: str = "auto",
    text_key: str = "text",
    column: str = "text",
    max_chars: Optional[int] = None,
    doc_cap: Optional[int] = None,
) -> WordCounts:
    """Count the words of a corpus: files, directories (recursive), globs or ``-`` (stdin)
    of plain text, JSON lines (the text at ``text_key``, a dotted path for nested records)
    or Parquet (the ``column``), compressed or not (gzip, bzip2, xz, zstd), streamed.

    ``format`` is ``"auto"`` (by suffix and content), ``"text"``, ``"jsonl"`` or
    ``"parquet"``. Every record is a document, and so is every text file: no word spans
    two. ``doc_cap`` keeps the first N characters of each document, ``max_chars`` the
    first N characters of them all, in input order. ``errors="skip"`` leaves bad records
    out and counts them (``WordCounts.skipped``); ``"replace"`` substitutes U+FFFD for bad
    UTF-8; ``"strict"`` (default) fails in one line naming the file and line, record or
    row group.

    ``processes=N`` counts in N worker processes (default: this machine's cores; one for
    an input under 4 MiB). Jobs are byte ranges of whole lines (text, JSON lines), row
    groups (Parquet) or whole files (compressed streams); a stream (stdin, a FIFO) is read
    by this process, which sends its text to the workers. ``executor`` may be any
    ``concurrent.futures.Executor`` instead (e.g. ``distributed.Client(...).get_executor()``
    or :func:`purebpe.ray_executor`), and ``processes`` then says how many workers it has
    (two jobs per worker are kept in flight). An executor's workers are sent the text,
    unless ``shared_files=True`` says that they see these files at the same paths. The
    result is the same whatever the parallelism. A file changed while it is counted fails
    the count.

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "docs.jsonl")
    >>> with open(path, "w") as f:  # closed, so the text is on disk (PyPy has no refcounts)
    ...     _ = f.write('{"text": "hello world"}\\n{"text": "hello"}\\n')
    >>> sorted(count(path).words.items())
    [(b' world', 1), (b'hello', 2)]
    """
    words: Dict[bytes, int] = {}
    specials, skipped = _count_into(
        words,
        files,
        special_tokens,
        pretokenizer=pretokenizer,
        processes=processes,
        executor=executor,
        errors=errors,
        progress=progress,
        chunk_bytes=chunk_bytes,
        shared_files=shared_files,
        format=format,
        text_key=text_key,
        column=column,
        max_chars=max_chars,
        doc_cap=doc_cap,
    )
    return WordCounts(words, specials, pretokenizer, skipped=skipped)


def count_compact(
    files: Files,
    special_tokens: Iterable[str] = (),
    *,
    pretokenizer: Pretokenizer = "gpt2",
    processes: Optional[int] = None,
    executor: Optional[Executor] = None,
    errors: str = "strict",
    progress: Progress = False,
    format: str = "auto",
    text_key: str = "text",
    column: str = "text",
    max_chars: Optional[int] = None,
    doc_cap: Optional[int] = None,
) -> CompactCounts:
    """:func:`count` into :class:`CompactCounts` (for 10^6 distinct words and more)."""
    totals = CompactCounts()
    _, totals.skipped = _count_into(
        totals,
        files,
        special_tokens,
        pretokenizer=pretokenizer,
        processes=processes,
        executor=executor,
        errors=errors,
        progress=progress,
        format=format,
        text_key=text_key,
        column=column,
        max_chars=max_chars,
        doc_cap=doc_cap,
    )
    return totals


def _count_into(
    totals: Totals,
    files: Files,
    special_tokens: Iterable[str] = (),
    *,
    pretokenizer: Pretokenizer = "gpt2",
    processes: Optional[int] = None,
    executor: Optional[Executor] = None,
    errors: str = "strict",
    progress: Progress = False,
    chunk_bytes: int = CHUNK_BYTES,
    shared_files: bool = False,
    format: str = "auto",
    text_key: str = "text",
    column: str = "text",
    max_chars: Optional[int] = None,
    doc_cap: Optional[int] = None,
) -> Tuple[Tuple[str, ...], int]:
    """:func:`count`'s work, summing into ``totals``; returns the special tokens and how
    many bad records were skipped."""
    specials = _check_options(special_tokens, pretokenizer, errors, processes)
    check_progress(progress)
    _check_cap("max_chars", max_chars)
    _check_cap("doc_cap", doc_cap)
    options = read_options(text_key, column, errors)
    items = [files] if isinstance(files, (str, os.PathLike)) else list(files)
    found = sources([os.fspath(p) for p in items], format)
    streams = any(not source.seekable for source in found)
    total_bytes = sum(source.size for source in found)
    workers = default_processes(processes, None if executor is not None else total_bytes)
    parallel = executor is not None or workers > 1
    # Caps are applied in input order, by this process; so is every stream.
    ordered = max_chars is not None or doc_cap is not None
    cutter = ChunkCutter(specials, pretokenizer)
    # Workers that see the files read their ranges themselves: RANGES_PER_WORKER each (of
    # equal size, up to RANGE_BYTES), so that the parent merges few tables and the workers
    # end together.
    range_bytes = max(1, min(RANGE_BYTES, -(-total_bytes // (RANGES_PER_WORKER * workers))))
    piece_bytes = min(chunk_bytes, max(MIN_PIECE_BYTES, range_bytes // 4))
    text_errors = "replace" if errors == "replace" else "strict"

    def text_jobs(texts: Iterable[Tuple[str, bool]]) -> Iterator[Tuple[AnyJob, int]]:
        """Texts read by this process, in batches for the workers."""
        batch: List[str] = []
        size = 0
        for text, _starts in texts:
            batch.append(text)
            size += len(text)
            if size >= CHUNK_CHARS:
                yield Job(batch, "<texts>", 0, 1, specials, pretokenizer, text_errors), size
                batch, size = [], 0
        if batch:
            yield Job(batch, "<texts>", 0, 1, specials, pretokenizer, text_errors), size

    def stream_jobs(source: Source) -> Iterator[Tuple[AnyJob, int]]:
        """A source read (and decompressed) by this process, sent to the workers as blocks
        of whole lines (JSON lines) or chunks cut where they may be (text)."""
        with open_source(source) as (known, raw):
            data = checked_stream(raw, known, errors, skipped)
            if known.layout == "jsonl":
                for block, line in line_blocks(data, chunk_bytes):
                    yield LinesJob(block, known.name, line, options, specials, pretokenizer), len(block)
            elif known.layout == "parquet":  # only where an executor's workers see no files
                yield from text_jobs(source_documents(known, options, cutter, skipped))
            else:
                for chunk, offset, line in read_chunks(data, cutter, chunk_bytes):
                    yield (
                        Job(chunk, known.name, offset, line, specials, pretokenizer, text_errors),
                        len(chunk),
                    )
            if known.signature is not None:
                check_unchanged(known, raw.fileno())

    def range_jobs(source: Source, directory: Optional[str]) -> Iterator[Tuple[AnyJob, int]]:
        path, left = source.path, source.size  # left: bytes of the file not in a range yet
        ranges: List[Tuple[int, int, int]] = []
        size = 0
        for chunk, offset, line in read_chunks(path, cutter, piece_bytes):
            ranges.append((offset, line, len(chunk)))
            size += len(chunk)
            left -= len(chunk)
            # End the range at the piece end nearest its size, unless the file's end is
            # nearer: no range of a few bytes at the end.
            if size >= range_bytes - piece_bytes // 2 and left > piece_bytes // 2:
                yield (
                    RangeJob(path, ranges, specials, pretokenizer, text_errors, directory, source.signature),
                    size,
                )
                ranges, size = [], 0
        if ranges:
            yield (
                RangeJob(path, ranges, specials, pretokenizer, text_errors, directory, source.signature),
                size,
            )

    def part_jobs(source: Source, directory: Optional[str]) -> Iterator[Tuple[AnyJob, int]]:
        def job(part: Part) -> PartJob:
            return PartJob(part, options, specials, pretokenizer, directory)

        if source.layout == "text" and source.compression is None:
            yield from range_jobs(source, directory)
        elif source.layout == "jsonl" and source.compression is None:
            for start, length in line_ranges(source.path, source.size, range_bytes):
                yield job(Part(source, start, length, 1 if start == 0 else None)), length
        elif source.layout == "parquet":
            groups = parquet_row_groups(source.path, column)
            for group in range(groups):
                yield job(Part(source, row_group=group)), source.size // max(1, groups)
        else:
            yield job(Part(source)), source.size

    def jobs(directory: Optional[str]) -> Iterator[Tuple[AnyJob, int]]:
        if ordered:
            everything = (
                item for source in found for item in source_documents(source, options, cutter, skipped)
            )
            yield from text_jobs(capped(everything, doc_cap, max_chars))
            return
        # A compressed file cannot be cut: with fewer of them than workers, this process
        # decompresses them and the workers parse and count.
        compressed = sum(1 for source in found if source.seekable and source.compression)
        for source in found:
            if not source.seekable:
                yield from stream_jobs(source)
            elif not parallel:
                yield PartJob(Part(source), options, specials, pretokenizer, None), source.size
            elif executor is not None and not shared_files:
                yield from stream_jobs(source)
            elif source.compression is not None and compressed < workers:
                yield from stream_jobs(source)
            else:
                yield from part_jobs(source, directory)

    skipped = [0]
    bar = progress_bar(progress, "count", None if streams else total_bytes, "B", unit_scale=True)
    directory = _scratch(executor is None and workers > 1)
    try:
        _run_jobs(jobs(directory), workers if parallel else 1, executor, bar, skipped, totals, directory)
    finally:
        bar.close()
        if directory is not None:
            remove_temporary_directory(directory)
    return specials, skipped[0]


def _scratch(local_pool: bool) -> Optional[str]:
    """A scratch directory for local workers: they leave their counts in files there (see
    :func:`count_range_packed`) and get the jobs that carry data there (:func:`spill`).
    ``None`` without local workers, or with no temporary directory to be had: everything
    then goes through the pipes."""
    if not local_pool:
        return None
    try:
        return scratch_directory()
    except OSError:
        return None


def _check_cap(name: str, value: Optional[int]) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int or None, not {type(value).__name__}")
    if value < 1:
        raise PureBPEError(f"{name} must be at least 1, not {value}")


def count_from_iterator(
    texts: Iterable[str],
    special_tokens: Iterable[str] = (),
    *,
    pretokenizer: Pretokenizer = "gpt2",
    processes: Optional[int] = None,
    executor: Optional[Executor] = None,
    errors: str = "strict",
    progress: Progress = False,
) -> WordCounts:
    """Count the words of an iterable of strings, consumed once and streamed.

    Each string is pre-tokenized on its own (a word never spans two strings). This process
    iterates and sends the strings to ``processes`` workers (default: this machine's cores,
    once the texts fill more than one batch of 2 Mi characters); the counts do not depend
    on it.
    """
    check_iterable_of_texts(texts)
    specials = _check_options(special_tokens, pretokenizer, errors, processes)
    check_progress(progress)

    def jobs() -> Iterator[Tuple[Job, int]]:
        batch: List[str] = []
        size = 0
        for index, text in enumerate(texts):
            text = check_text(text, index, errors)
            batch.append(text)
            size += len(text)
            if size >= CHUNK_CHARS:
                yield Job(batch, "<texts>", 0, 1, specials, pretokenizer, errors), size
                batch, size = [], 0
        if batch:
            yield Job(batch, "<texts>", 0, 1, specials, pretokenizer, errors), size

    bar = progress_bar(progress, "count", None, "char", unit_scale=True)
    batches = jobs()
    if processes is None and executor is None:
        # By default this machine's cores, once the texts fill more than one job (a pool
        # costs more than it saves on less).
        ahead = list(islice(batches, 2))
        processes = default_processes(None, None) if len(ahead) > 1 else 1
        batches = chain(ahead, batches)
    directory = _scratch(executor is None and processes is not None and processes > 1)
    try:
        words: Dict[bytes, int] = {}
        _run_jobs(batches, processes, executor, bar, into=words, directory=directory)
    finally:
        bar.close()
        if directory is not None:
            remove_temporary_directory(directory)
    return WordCounts(words, specials, pretokenizer)


def _run_jobs(
    jobs: Iterator[Tuple[AnyJob, int]],
    processes: Optional[int],
    executor: Optional[Executor],
    bar: Bar,
    skipped: Optional[List[int]] = None,
    into: Optional[Totals] = None,
    directory: Optional[str] = None,
) -> Totals:
    """Count every job (of ``size`` bytes or characters) and sum the counts (into ``into``,
    else a new dict, which is returned); the bad records skipped are added to ``skipped[0]``.

    Serially when there is no executor and ``processes`` is ``None`` or 1, else in worker
    processes, which get the jobs that carry their data through files of ``directory``
    (:func:`spill`), when it is given (local workers only). In a process pool that also
    spares PyPy a slow path: the pool pickles a job into a memoryview, which PyPy's
    ``os.write`` copies whole at every call, so sending 100 MB cost the sender 2.8 s of
    CPU against 0.14 s as ``bytes``.
    """
    totals: Totals = {} if into is None else into
    skips = skipped if skipped is not None else [0]
    if executor is None and (processes is None or processes == 1):
        for job, size in jobs:
            counts, n = count_any(job)
            _add_into(totals, counts)
            skips[0] += n
            bar.update(size)
        return totals
    workers = processes or os.cpu_count() or 1
    if executor is None and can_fork():
        _run_forked(jobs, workers, bar, skips, totals, directory)
        return totals
    own_pool: Optional[WorkerPool] = None
    pool: Executor
    if executor is None:
        pool = own_pool = worker_pool(workers)
    else:
        pool = executor
    # Keep a bounded number of chunks in flight so memory stays flat on huge inputs.
    window = 2 * workers
    pending: Dict["Future[Tuple[JobResult, int]]", Tuple[int, int]] = {}
    failures: List[Tuple[int, BaseException]] = []
    try:
        for index, (job, size) in enumerate(jobs):
            pending[pool.submit(count_any_packed, spill(job, directory))] = (index, size)
            if len(pending) >= window:
                _collect_some(pending, totals, bar, skips, failures)
            if failures:
                break
        while pending:
            _collect_some(pending, totals, bar, skips, failures)
        if failures:
            # The first bad input in input order, whichever worker finished first: every
            # job before it was submitted, and has now finished.
            raise min(failures, key=lambda failure: failure[0])[1]
    except BrokenExecutor:  # from submit() or a result: a local worker died
        if own_pool is not None:
            stop_workers(own_pool)
        raise _worker_died() from None
    except BaseException:
        if own_pool is not None:  # an error, Ctrl-C or SIGTERM: the workers' jobs are abandoned
            stop_workers(own_pool)
        raise
    if own_pool is not None:
        own_pool.shutdown(cancel_futures=True)
    return totals


def _collect_some(
    pending: Dict["Future[Tuple[JobResult, int]]", Tuple[int, int]],
    totals: Totals,
    bar: Bar,
    skipped: List[int],
    failures: List[Tuple[int, BaseException]],
) -> None:
    """Wait for at least one job, then add the counts of every finished one; a job that
    failed on bad input is noted in ``failures`` with its index."""
    done: Set["Future[Tuple[JobResult, int]]"]
    done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
    for future in done:
        index, size = pending.pop(future)
        try:
            result, n = _job_result(future)
        except BrokenExecutor:
            raise
        except PureBPEError as exc:
            failures.append((index, exc))
            continue
        _add_packed_into(totals, _packed(result))
        skipped[0] += n
        bar.update(size)


def _job_result(future: "Future[Tuple[JobResult, int]]") -> Tuple[JobResult, int]:
    """A finished job's counts; a job that failed fails the whole count with one line.

    A worker that dies takes its job's counts with it: the local pool then reports itself
    broken (:func:`_run_jobs` says so), and a cluster (Dask, Ray) runs the job again
    elsewhere and raises once its retries are spent. Either way the count fails rather
    than come back short.
    """
    try:
        return future.result()
    except (PureBPEError, BrokenExecutor):
        raise
    except Exception as exc:
        raise _job_failed(exc) from exc


def _job_failed(exc: Exception) -> PureBPEError:
    """What a job that failed on its worker other than on bad input fails the count with."""
    # The last line: where a message carries a traceback (a task that failed to start on a
    # Ray worker), it ends with the error that caused it.
    last_line = (str(exc).strip().splitlines() or [""])[-1].strip()
    return PureBPEError(f"a counting job failed on its worker ({type(exc).__name__}: {last_line})")


def _worker_died() -> PureBPEError:
    return PureBPEError("a counting worker process died (killed, or out of memory); nothing was counted")


def _run_forked(
    jobs: Iterator[Tuple[AnyJob, int]],
    workers: int,
    bar: Bar,
    skipped: List[int],
    totals: Totals,
    directory: Optional[str],
) -> None:
    """:func:`_run_jobs` in forked workers (:func:`ordered_map`): they move jobs and counts
    without threads, which on PyPy cost a ``ProcessPoolExecutor`` about 80 ms per MB (a
    compressed file, decompressed here and sent in blocks, counted at 0.6x the speed of
    plain text). The counts come back in job order, so the bad input reported is the first
    in input order, as with a pool; any error or signal here kills the workers."""
    sizes: Deque[int] = deque()

    def sized() -> Iterator[AnyJob]:
        for job, size in jobs:
            sizes.append(size)
            yield job

    results = ordered_map(_count_in_worker, sized(), workers, ship=lambda job: spill(job, directory))
    try:
        for result, n in results:
            _add_packed_into(totals, _packed(result))
            skipped[0] += n
            bar.update(sizes.popleft())
    except WorkerDied:
        raise _worker_died() from None
    finally:
        results.close()  # (an error here, or a signal: the workers are killed)


def _count_in_worker(job: AnyJob) -> Tuple[JobResult, int]:
    """:func:`count_any_packed` in a forked worker; an error other than bad input becomes
    one line saying what failed there (an error of this process is then never taken for
    one of a worker's)."""
    try:
        return count_any_packed(job)
    except PureBPEError:
        raise
    except Exception as exc:
        raise _job_failed(exc) from None
