"""Word counting: stream text in chunks, split on special tokens, pre-tokenize, count.

Files are read in blocks and cut into chunks at positions where cutting cannot change the
result (:class:`ChunkCutter`), so memory does not grow with the file's size. Each chunk is
decoded, split on special tokens, pre-tokenized and counted into ``{word: count}``; the
per-chunk tables are summed. Summing is order-independent, so the counts are the same for
any number of processes, and for any ``concurrent.futures.Executor`` (a local
``ProcessPoolExecutor``, or a Dask/Ray executor for a cluster, which is handed chunks of
bytes and needs no shared file system).

Counts are Python ints: they never overflow.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from array import array
from concurrent.futures import FIRST_COMPLETED, BrokenExecutor, Executor, Future, wait
from functools import lru_cache
from pathlib import Path
from typing import (
    Any,
    Callable,
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

from ._atomic import PathLike
from ._workers import WorkerPool, scratch_directory, stop_workers, worker_pool
from .errors import PureBPEError
from .pretokenize import Pretokenizer, check_pretokenizer, word_counter
from .pretokenize.chunking import CHUNK_BYTES, ChunkCutter, check_text, decode_chunk, read_chunks
from .progress import Bar, Progress, check_progress, progress_bar
from .specials import check_special_tokens, special_pattern, split_on_specials

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
    counter = word_counter(pretokenizer)
    pattern = _cached_special_pattern(special_tokens)
    texts = [decode_chunk(data, source, offset, line, errors)] if isinstance(data, bytes) else data
    counts: Dict[str, int] = {}
    for text in texts:
        for piece in split_on_specials(text, pattern):
            counter(piece, counts)
    return {word.encode("utf-8"): n for word, n in counts.items()}


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
    path, ranges, special_tokens, pretokenizer, errors, directory = job
    totals: Dict[bytes, int] = {}
    with open(path, "rb") as f:
        for offset, line, length in ranges:
            f.seek(offset)
            chunk = f.read(length)
            chunk_job = Job(chunk, path, offset, line, special_tokens, pretokenizer, errors)
            add_counts(totals, count_job(chunk_job))
    packed = pack_counts(totals)
    return packed if directory is None else save_packed(packed, directory)


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


@lru_cache(maxsize=8)
def _cached_special_pattern(special_tokens: Tuple[str, ...]) -> Optional[Pattern[str]]:
    return special_pattern(special_tokens)


def _check_options(
    special_tokens: Iterable[str], pretokenizer: Pretokenizer, errors: str, processes: Optional[int]
) -> Tuple[str, ...]:
    check_pretokenizer(pretokenizer)
    if errors not in ("strict", "replace"):
        raise PureBPEError(f"errors must be 'strict' or 'replace', not {errors!r}")
    if processes is not None and processes < 1:
        raise PureBPEError(f"processes must be at least 1, not {processes}")
    return check_special_tokens(special_tokens)


def as_paths(files: Files) -> List[Path]:
    """``files`` (one path or a list of them) as checked paths of existing regular files."""
    items = [files] if isinstance(files, (str, os.PathLike)) else list(files)
    paths = [Path(p) for p in items]
    for path in paths:
        if not path.exists():
            raise PureBPEError(f"{path}: no such file")
        if path.is_dir():
            raise PureBPEError(f"{path}: is a directory, not a text file")
    return paths


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
) -> WordCounts:
    """Count the words of text files (one path or a list), streaming them in chunks.

    ``processes=N`` counts chunks in N worker processes; ``executor`` may be any
    ``concurrent.futures.Executor`` instead (e.g. ``distributed.Client(...).get_executor()``
    or :func:`purebpe.ray_executor`), and ``processes`` then says how many workers it has
    (two jobs per worker are kept in flight; default: this machine's CPU count). An
    executor's workers are sent the chunks' bytes, unless ``shared_files=True`` says that
    they see these files at the same paths (one machine, a shared file system): they are
    then sent byte ranges to read, as local processes are. The result is the same whatever
    the parallelism.
    """
    specials = _check_options(special_tokens, pretokenizer, errors, processes)
    check_progress(progress)
    paths = as_paths(files)
    cutter = ChunkCutter(specials, pretokenizer)

    def jobs() -> Iterator[Tuple[Job, int]]:
        for path in paths:
            for chunk, offset, line in read_chunks(path, cutter, chunk_bytes):
                yield Job(chunk, str(path), offset, line, specials, pretokenizer, errors), len(chunk)

    sizes = [p.stat().st_size for p in paths]
    total_bytes = sum(sizes)
    # Workers that see the files read their ranges themselves: RANGES_PER_WORKER each (of
    # equal size, up to RANGE_BYTES), so that the parent merges few tables and the workers
    # end together.
    workers = processes or os.cpu_count() or 1
    range_bytes = max(1, min(RANGE_BYTES, -(-total_bytes // (RANGES_PER_WORKER * workers))))
    piece_bytes = min(chunk_bytes, max(MIN_PIECE_BYTES, range_bytes // 4))

    def range_jobs(directory: Optional[str]) -> Iterator[Tuple[RangeJob, int]]:
        for path, left in zip(paths, sizes):  # left: bytes of the file not in a range yet
            ranges: List[Tuple[int, int, int]] = []
            size = 0
            for chunk, offset, line in read_chunks(path, cutter, piece_bytes):
                ranges.append((offset, line, len(chunk)))
                size += len(chunk)
                left -= len(chunk)
                # End the range at the piece end nearest its size, unless the file's end is
                # nearer: no range of a few bytes at the end.
                if size >= range_bytes - piece_bytes // 2 and left > piece_bytes // 2:
                    yield RangeJob(str(path), ranges, specials, pretokenizer, errors, directory), size
                    ranges, size = [], 0
            if ranges:
                yield RangeJob(str(path), ranges, specials, pretokenizer, errors, directory), size

    bar = progress_bar(progress, "count", total_bytes, "B", unit_scale=True)
    local_pool = executor is None and processes is not None and processes > 1
    # Local workers leave their counts in files here (see count_range_packed); with no
    # temporary directory to be had, they send them back through the pipe.
    directory = None
    if local_pool:
        try:
            directory = scratch_directory()
        except OSError:
            pass
    try:
        if local_pool or (executor is not None and shared_files):
            words = _run_jobs(range_jobs(directory), processes, executor, bar, count_range_packed)
        else:  # serial, or an executor whose workers may not see this file system
            words = _run_jobs(jobs(), processes, executor, bar, count_job_packed)
    finally:
        bar.close()
        if directory is not None:
            shutil.rmtree(directory, ignore_errors=True)
    return WordCounts(words, specials, pretokenizer)


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

    Each string is pre-tokenized on its own (a word never spans two strings).
    """
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
    try:
        words = _run_jobs(jobs(), processes, executor, bar, count_job_packed)
    finally:
        bar.close()
    return WordCounts(words, specials, pretokenizer)


def _run_jobs(
    jobs: Iterator[Tuple[Any, int]],
    processes: Optional[int],
    executor: Optional[Executor],
    bar: Bar,
    work: Callable[[Any], JobResult],
) -> Dict[bytes, int]:
    """Run ``work`` on every job (of ``size`` bytes or characters) and sum the counts.

    Serially when there is no executor and ``processes`` is ``None`` or 1 (``jobs`` are
    then :data:`Job` s, counted in this process), else in worker processes.
    """
    totals: Dict[bytes, int] = {}
    if executor is None and (processes is None or processes == 1):
        for job, size in jobs:
            add_counts(totals, count_job(job))
            bar.update(size)
        return totals
    workers = processes or os.cpu_count() or 1
    own_pool: Optional[WorkerPool] = None
    pool: Executor
    if executor is None:
        pool = own_pool = worker_pool(workers)
    else:
        pool = executor
    # Keep a bounded number of chunks in flight so memory stays flat on huge inputs.
    window = 2 * workers
    pending: Dict["Future[JobResult]", int] = {}
    try:
        for job, size in jobs:
            pending[pool.submit(work, job)] = size
            if len(pending) >= window:
                _collect_some(pending, totals, bar)
        while pending:
            _collect_some(pending, totals, bar)
    except BrokenExecutor:  # from submit() or a result: a local worker died
        if own_pool is not None:
            stop_workers(own_pool)
        raise PureBPEError(
            "a counting worker process died (killed, or out of memory); nothing was counted"
        ) from None
    except BaseException:
        if own_pool is not None:  # an error, Ctrl-C or SIGTERM: the workers' jobs are abandoned
            stop_workers(own_pool)
        raise
    if own_pool is not None:
        own_pool.shutdown(cancel_futures=True)
    return totals


def _collect_some(
    pending: Dict["Future[JobResult]", int], totals: Dict[bytes, int], bar: Bar
) -> None:
    """Wait for at least one job, then add the counts of every finished one."""
    done: Set["Future[JobResult]"]
    done, _ = wait(list(pending), return_when=FIRST_COMPLETED)
    for future in done:
        size = pending.pop(future)
        result = _job_result(future)
        add_packed_counts(totals, load_packed(result) if isinstance(result, str) else result)
        bar.update(size)


def _job_result(future: "Future[JobResult]") -> JobResult:
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
        # The last line: where a message carries a traceback (a task that failed to start
        # on a Ray worker), it ends with the error that caused it.
        last_line = (str(exc).strip().splitlines() or [""])[-1].strip()
        raise PureBPEError(
            f"a counting job failed on its worker ({type(exc).__name__}: {last_line})"
        ) from exc

