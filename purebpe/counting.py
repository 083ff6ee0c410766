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

import gzip
import json
from array import array
import os
import re
import shutil
import tempfile
import zlib
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
    Optional,
    Pattern,
    Sequence,
    Set,
    Tuple,
    Union,
)

import attr

from ._atomic import write_bytes
from ._workers import scratch_directory, stop_workers, worker_pool
from .bytemap import decode_token, encode_token
from .errors import InputError, PureBPEError
from .pretokenize import (
    Pretokenizer,
    check_pretokenizer,
    cut_finder,
    pretokenizer_from_json,
    pretokenizer_to_json,
    word_counter,
)
from .progress import Bar, Progress, check_progress, progress_bar
from .specials import check_special_tokens, special_pattern, split_on_specials

PathLike = Union[str, "os.PathLike[str]"]
Files = Union[PathLike, Sequence[PathLike]]

#: Bytes read per chunk. Large enough that per-chunk overhead vanishes, small enough that
#: a pool of workers stays busy and memory stays flat.
CHUNK_BYTES = 1 << 22
#: The header's format tag in files written by :meth:`WordCounts.save`.
COUNTS_FORMAT = "purebpe-word-counts-1"
#: The most bytes of one file that one local worker process counts in one job...
RANGE_BYTES = 1 << 26
#: ... and the jobs per local worker process when the files are smaller than that.
RANGES_PER_WORKER = 2
#: A range is cut into pieces of a quarter of it, of at least this size (each piece costs
#: a cut search) and at most ``chunk_bytes``.
MIN_PIECE_BYTES = 1 << 16
#: Characters of text items batched into one job by :func:`count_from_iterator`.
CHUNK_CHARS = 1 << 21



@attr.s(slots=True, auto_attribs=True)
class WordCounts:
    """The pre-tokenized words of a corpus (UTF-8 bytes) and how often each occurs."""

    words: Dict[bytes, int]
    special_tokens: Tuple[str, ...] = ()
    pretokenizer: Pretokenizer = "gpt2"

    def __len__(self) -> int:
        return len(self.words)

    def total(self) -> int:
        """The number of word occurrences counted."""
        return sum(self.words.values())

    def save(self, path: PathLike) -> Path:
        """Write the counts as gzipped TSV (atomically), most frequent words first.

        The file starts with a ``#`` header line of JSON (format, special tokens,
        pre-tokenizer); then one ``count<TAB>word`` line per word, the word written in
        GPT-2's byte-to-unicode alphabet so that any bytes fit on one line.
        """
        header = {
            "format": COUNTS_FORMAT,
            "special_tokens": list(self.special_tokens),
            "pretokenizer": pretokenizer_to_json(self.pretokenizer),
        }
        lines = ["# " + json.dumps(header)]
        ranked = sorted(self.words.items(), key=lambda item: (-item[1], item[0]))
        lines.extend(f"{n}\t{encode_token(word)}" for word, n in ranked)
        data = gzip.compress(("\n".join(lines) + "\n").encode("utf-8"), mtime=0)
        return write_bytes(path, data)

    @classmethod
    def load(cls, path: PathLike) -> "WordCounts":
        """Read counts written by :meth:`save`; a malformed file names the bad line."""
        special_tokens, pretokenizer = _read_header(path)
        return cls(dict(_read_words(path)), special_tokens, pretokenizer)

    @classmethod
    def sum(cls, paths: Iterable[PathLike]) -> "WordCounts":
        """Add up counts files (the shards of one corpus) into one ``WordCounts``.

        Every file's header is read first, so shards counted with other special tokens or
        another pre-tokenizer are refused before any adding (naming the file). Then each
        file's lines are streamed into the running total: memory holds the total and one
        line, never a whole shard.
        """
        headers = [(path, _read_header(path)) for path in paths]
        if not headers:
            raise PureBPEError("no counts files to add up")
        first, (special_tokens, pretokenizer) = headers[0]
        for path, (other_specials, other_pretokenizer) in headers[1:]:
            mismatch = _mismatch(other_specials, other_pretokenizer, special_tokens, pretokenizer)
            if mismatch:
                raise PureBPEError(f"{path}: {mismatch} {first}; shards must be counted alike")
        totals: Dict[bytes, int] = {}
        get = totals.get
        for path, _ in headers:
            for word, n in _read_words(path):
                totals[word] = get(word, 0) + n
        return cls(totals, special_tokens, pretokenizer)

    def __add__(self, other: "WordCounts") -> "WordCounts":
        """The counts of both (neither is changed); they must be counted alike."""
        if not isinstance(other, WordCounts):
            return NotImplemented
        mismatch = _mismatch(
            other.special_tokens, other.pretokenizer, self.special_tokens, self.pretokenizer
        )
        if mismatch:
            raise PureBPEError(f"cannot add word counts: the right ones were {mismatch} the left")
        totals = dict(self.words)
        _add_counts(totals, other.words)
        return WordCounts(totals, self.special_tokens, self.pretokenizer)


def _mismatch(
    special_tokens: Tuple[str, ...],
    pretokenizer: Pretokenizer,
    other_special_tokens: Tuple[str, ...],
    other_pretokenizer: Pretokenizer,
) -> str:
    """How two counts' options differ (``"counted with ... unlike"``), or ``""`` if alike.

    The order of special tokens does not matter (the longest match wins whatever it is).
    """
    if set(special_tokens) != set(other_special_tokens):
        return (
            f"counted with special tokens {list(special_tokens)}, "
            f"unlike {list(other_special_tokens)} in"
        )
    if pretokenizer != other_pretokenizer:
        return f"counted with pretokenizer {pretokenizer!r}, unlike {other_pretokenizer!r} in"
    return ""


def _read_header(path: PathLike) -> Tuple[Tuple[str, ...], Pretokenizer]:
    """The special tokens and pre-tokenizer in the header line of a counts file."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            first = f.readline()
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as exc:
        raise _unreadable(path, exc) from None
    header = _read_counts_header(path, first)
    return header["special_tokens"], header["pretokenizer"]


def _read_words(path: PathLike) -> Iterator[Tuple[bytes, int]]:
    """``(word, count)`` for each line after the header, read one line at a time."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            f.readline()  # the header
            for line_no, line in enumerate(f, start=2):
                n, tab, word = line.rstrip("\n").partition("\t")
                try:
                    if not (tab and n.isascii() and n.isdigit()):
                        raise PureBPEError("expected 'count<TAB>word'")
                    yield decode_token(word), int(n)
                except PureBPEError as exc:
                    raise PureBPEError(f"{path}, line {line_no}: {exc}") from None
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as exc:
        raise _unreadable(path, exc) from None


def _unreadable(path: PathLike, exc: Exception) -> PureBPEError:
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
    return PureBPEError(f"{path}: not a purebpe counts file, or a truncated one ({reason})")


def _read_counts_header(path: PathLike, first: str) -> Dict[str, Any]:
    """The checked header of a counts file: its special tokens and pre-tokenizer."""
    try:
        header = json.loads(first[2:]) if first.startswith("# ") else None
    except json.JSONDecodeError:
        header = None
    if (
        not isinstance(header, dict)
        or header.get("format") != COUNTS_FORMAT
        or not {"special_tokens", "pretokenizer"} <= header.keys()
    ):
        raise PureBPEError(f"{path}: not a purebpe counts file (bad header line)")
    specials = header["special_tokens"]
    if not isinstance(specials, list):
        raise PureBPEError(f"{path}, line 1: special_tokens {specials!r} is not a list of strings")
    try:
        header["special_tokens"] = check_special_tokens(specials)
    except PureBPEError as exc:
        raise PureBPEError(f"{path}, line 1: {exc}") from None
    header["pretokenizer"] = pretokenizer_from_json(header["pretokenizer"], f"{path}, line 1")
    return header


class ChunkCutter:
    """Finds the last position in a buffer where a chunk may end without changing the counts.

    Two kinds of safe cut, tried in this order:

    * just before a special token whose match is final (no longer special token could
      start there with more text): pieces between special tokens are counted separately
      anyway;
    * where the pre-tokenizer's own rule allows (``safe_cut`` in each module of
      :mod:`purebpe.pretokenize`, with the argument for the rule): after a newline for
      ``"none"``; around whitespace, or between characters of different classes, for the
      named patterns; nowhere for an arbitrary :class:`purebpe.Pattern`.

    A pre-tokenizer cut is only taken where no special-token match spans it. Every cut stays
    at least ``reserve`` bytes before the end of the buffer (and as far as the longest
    special token), so a string of that length that starts before the cut ends inside the
    buffer: a caller can look for it in the whole buffer before cutting.
    """

    def __init__(
        self, special_tokens: Sequence[str], pretokenizer: Pretokenizer, reserve: int = 0
    ) -> None:
        self.pretokenizer = pretokenizer
        self._text_cut = cut_finder(pretokenizer)
        encoded = sorted({t.encode("utf-8") for t in special_tokens}, key=lambda t: (-len(t), t))
        self.special: Optional[Pattern[bytes]] = (
            re.compile(b"|".join(re.escape(t) for t in encoded)) if encoded else None
        )
        # Bytes kept after every cut: the longest special token, or more if asked.
        self.lookahead = max(len(encoded[0]) if encoded else 0, reserve)

    def cut(self, buf: bytes) -> int:
        """The last safe cut in ``buf`` (``0 < cut < len(buf)``), or -1 if there is none."""
        limit = len(buf) - self.lookahead  # matches starting later are not final yet
        spans: List[Tuple[int, int]] = []
        if self.special is not None:
            spans = [m.span() for m in self.special.finditer(buf) if m.start() <= limit]
            starts = [s for s, _ in spans if s > 0]
            if starts:
                return starts[-1]
        end = min(len(buf) - 1, limit)
        while end > 0:
            cut = self._text_cut(buf, end)
            if cut <= 0:
                return -1
            if not any(s < cut < e for s, e in spans):
                return cut
            end = cut - 1
        return -1


def read_chunks(
    path: PathLike, cutter: ChunkCutter, chunk_bytes: int = CHUNK_BYTES
) -> Iterator[Tuple[bytes, int, int]]:
    """Yield ``(chunk, byte_offset, first_line_number)`` covering the whole file, in order.

    Where a buffer has no safe cut (a huge line), the next read is twice as large, so a
    chunk of ``n`` bytes costs O(n) copying and cut searching, not O(n^2 / chunk_bytes).
    """
    offset, line = 0, 1
    carry = b""
    read_size = chunk_bytes
    with open(path, "rb") as f:
        while True:
            block = f.read(read_size)
            buf = carry + block if carry else block
            if not block:
                if buf:
                    yield buf, offset, line
                return
            cut = cutter.cut(buf)
            if cut <= 0:
                carry = buf  # no safe cut yet: read on (a huge line is kept whole)
                read_size = 2 * read_size
                continue
            read_size = chunk_bytes
            chunk, carry = buf[:cut], buf[cut:]
            yield chunk, offset, line
            offset += len(chunk)
            line += chunk.count(b"\n")


# A job is what one worker counts: (bytes of a file chunk or a list of texts, source name,
# byte offset, first line, special tokens, pretokenizer, errors).
Job = Tuple[Union[bytes, List[str]], str, int, int, Tuple[str, ...], Pretokenizer, str]


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


#: A job for a local worker process, which reads the file itself: the path, then
#: ``(byte offset, first line, length)`` of each chunk to count, in order, the options, and
#: the directory to leave the counts in (``None``: send them back).
#: The parent still reads the file to find the cuts, but sends no text through a pipe and
#: merges one table per range instead of one per chunk: on PyPy both cost the parent
#: more than counting itself (measured: 4-5 s of parent CPU for 72 MB sent as chunks, 2
#: workers; serial counting takes 5.8 s).
RangeJob = Tuple[
    str, List[Tuple[int, int, int]], Tuple[str, ...], Pretokenizer, str, Optional[str]
]


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
            chunk_job: Job = (chunk, path, offset, line, special_tokens, pretokenizer, errors)
            _add_counts(totals, count_job(chunk_job))
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


def decode_chunk(data: bytes, source: str, offset: int, line: int, errors: str) -> str:
    """Decode a chunk as UTF-8; invalid bytes raise :class:`InputError` with their location."""
    try:
        return data.decode("utf-8", errors)
    except UnicodeDecodeError as exc:
        raise InputError(
            f"invalid UTF-8 (byte 0x{data[exc.start]:02x}: {exc.reason}); "
            "pass errors='replace' (--errors replace) to substitute U+FFFD",
            source,
            offset=offset + exc.start,
            line=line + data.count(b"\n", 0, exc.start),
        ) from None


def check_text(text: object, index: int, errors: str) -> str:
    """Validate one item of a text iterable: a ``str`` that UTF-8 can encode."""
    if not isinstance(text, str):
        raise PureBPEError(f"<text {index}>: expected str, got {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        if errors == "replace":
            # One U+FFFD per lone surrogate, as tiktoken does.
            return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        raise InputError(
            f"lone surrogate {text[exc.start]!r} cannot be encoded as UTF-8; "
            "pass errors='replace' to substitute U+FFFD",
            f"<text {index}>",
            offset=exc.start,
        ) from None
    return text


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
                yield (chunk, str(path), offset, line, specials, pretokenizer, errors), len(chunk)

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
                    yield (str(path), ranges, specials, pretokenizer, errors, directory), size
                    ranges, size = [], 0
            if ranges:
                yield (str(path), ranges, specials, pretokenizer, errors, directory), size

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
                yield (batch, "<texts>", 0, 1, specials, pretokenizer, errors), size
                batch, size = [], 0
        if batch:
            yield (batch, "<texts>", 0, 1, specials, pretokenizer, errors), size

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
            _add_counts(totals, count_job(job))
            bar.update(size)
        return totals
    own_pool = executor is None
    workers = processes or os.cpu_count() or 1
    pool: Executor = executor if executor is not None else worker_pool(workers)
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
        if own_pool:
            stop_workers(pool)
        raise PureBPEError(
            "a counting worker process died (killed, or out of memory); nothing was counted"
        ) from None
    except BaseException:
        if own_pool:  # an error, Ctrl-C or SIGTERM: the workers' jobs are abandoned
            stop_workers(pool)
        raise
    if own_pool:
        pool.shutdown(cancel_futures=True)
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


def _add_counts(totals: Dict[bytes, int], counts: Dict[bytes, int]) -> None:
    if not totals:
        totals.update(counts)
        return
    get = totals.get
    for word, n in counts.items():
        totals[word] = get(word, 0) + n
