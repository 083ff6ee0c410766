"""Word counting: streaming chunks, special tokens, parallelism, bad input."""

from __future__ import annotations

import collections
import os
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Dict, List, Optional, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import purebpe
from purebpe import counting
from purebpe.corpus import default_corpus
from purebpe.counting import (
    ChunkCutter,
    PackedCounts,
    add_packed_counts,
    count_job,
    load_packed,
    pack_counts,
    read_chunks,
    save_packed,
)
from purebpe.errors import InputError, PureBPEError
from purebpe.pretokenize import PATTERNS, PRETOKENIZERS, split_lines, utf8_word_counter

SPECIALS = ["<|endoftext|>", "<|endoftext|><|endoftext|>", "<pad>"]

# Text that stresses the chunk cutter: every ASCII whitespace, letters, digits, apostrophes,
# multi-byte characters (including Unicode whitespace), and pieces of special tokens.
# Uppercase, marks, "/" and digit runs for the patterns whose rules involve them.
cutter_alphabet = st.sampled_from(
    list(" \t\n\r\x0b\x0c ab'sSZ9-./")
    + ["\u00a0", "\u3000", "\u2028", "\x85", "\x1c", "é", "中", "😀", "<|", "|>"]
    + ["\r\n", "1234", "\u0301", "\u017f", "Ab"]
)
cutter_text = st.lists(
    st.one_of(cutter_alphabet, st.sampled_from(SPECIALS), st.text(max_size=4)), max_size=60
).map("".join)


def expected_counts(text: str, specials: Sequence[str], pretokenizer: str) -> Dict[bytes, int]:
    """The specification, written independently of purebpe.counting: split, pre-tokenize, count.

    A named pattern is what ``regex`` finds with tiktoken's string for it.
    """
    pieces = [text]
    for special in sorted(specials, key=len, reverse=True):
        pieces = [part for piece in pieces for part in piece.split(special)]
    if pretokenizer == "none":
        split = split_lines
    else:
        regex = pytest.importorskip("regex")
        split = regex.compile(PATTERNS[pretokenizer]).findall
    words = collections.Counter(w.encode("utf-8") for piece in pieces for w in split(piece))
    return dict(words)


def write(tmp_path: Path, text: str, name: str = "corpus.txt") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


@pytest.mark.parametrize("pretokenizer", PRETOKENIZERS)
@given(text=cutter_text, chunk_bytes=st.integers(1, 40), use_specials=st.booleans())
@settings(max_examples=300)
def test_chunked_counting_equals_counting_the_whole_text(
    tmp_path_factory: pytest.TempPathFactory,
    pretokenizer: str,
    text: str,
    chunk_bytes: int,
    use_specials: bool,
) -> None:
    # Specials that are not prefixes of each other: longest-match subtleties are tested below.
    specials = ["<|endoftext|>", "<pad>"] if use_specials else []
    path = write(tmp_path_factory.mktemp("c"), text)
    counts = purebpe.count(path, specials, pretokenizer=pretokenizer, chunk_bytes=chunk_bytes)
    assert counts.words == expected_counts(text, specials, pretokenizer)


@given(text=cutter_text, chunk_bytes=st.integers(1, 40), processes=st.sampled_from([1, 2]), bad=st.booleans())
@settings(max_examples=100)
def test_chunks_counted_as_bytes_count_the_same(
    tmp_path_factory: pytest.TempPathFactory, text: str, chunk_bytes: int, processes: int, bad: bool
) -> None:
    # Where counting runs on the scanner (PyPy), a chunk of valid UTF-8 is counted as bytes
    # (pretokenize.utf8_word_counter) and one of bad UTF-8 as text: here on any interpreter.
    specials = ["<|endoftext|>", "<pad>"]
    data = (text.encode("utf-8") + (b"\xff" if bad else b"")) * processes
    path = tmp_path_factory.mktemp("c") / "corpus.txt"
    path.write_bytes(data)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(counting, "utf8_word_counter", lambda name: utf8_word_counter(name, "scanner"))
        counts = purebpe.count(path, specials, chunk_bytes=chunk_bytes, processes=processes, errors="replace")
    assert counts.words == expected_counts(data.decode("utf-8", "replace"), specials, "gpt2")


@pytest.mark.parametrize("pretokenizer", ["cl100k", "o200k"])
@given(text=cutter_text, chunk_bytes=st.integers(1, 40))
@settings(max_examples=15)
def test_chunked_counting_in_two_processes_equals_the_whole_text(
    tmp_path_factory: pytest.TempPathFactory, pretokenizer: str, text: str, chunk_bytes: int
) -> None:
    # Workers count file ranges of several chunks each; the cuts are the same rule.
    path = write(tmp_path_factory.mktemp("c"), text * 3)
    counts = purebpe.count(path, ["<pad>"], pretokenizer=pretokenizer, chunk_bytes=chunk_bytes, processes=2)
    assert counts.words == expected_counts(text * 3, ["<pad>"], pretokenizer)


@given(text=cutter_text, chunk_bytes=st.integers(1, 40))
@settings(max_examples=200)
def test_chunks_cover_the_file_and_cut_only_at_safe_places(
    tmp_path_factory: pytest.TempPathFactory, text: str, chunk_bytes: int
) -> None:
    data = text.encode("utf-8")
    path = write(tmp_path_factory.mktemp("c"), text)
    chunks = list(read_chunks(path, ChunkCutter(SPECIALS, "gpt2"), chunk_bytes))
    assert b"".join(chunk for chunk, _, _ in chunks) == data
    for chunk, offset, line in chunks:
        assert data[offset : offset + len(chunk)] == chunk
        assert line == data.count(b"\n", 0, offset) + 1


def test_a_huge_line_is_read_in_doubling_blocks(tmp_path: Path) -> None:
    """A line with no safe cut is not re-scanned once per block (which is quadratic)."""
    searched: List[int] = []

    class CountingCutter(ChunkCutter):
        def cut(self, buf: bytes) -> int:
            searched.append(len(buf))
            return super().cut(buf)

    line = "x" * (1 << 20)
    path = write(tmp_path, line + "\n" + "a b\n" * 3000)
    chunks = list(read_chunks(path, CountingCutter([], "gpt2"), 1024))
    assert b"".join(c for c, _, _ in chunks) == (line + "\n" + "a b\n" * 3000).encode()
    assert len(chunks[0][0]) > 1 << 20  # the line is kept whole
    assert sum(searched) < 8 * len(line)  # about 2x the line, not ~1000x
    assert max(len(c) for c, _, _ in chunks[1:]) < 2 * 1024  # back to normal blocks after it


def test_overlapping_special_tokens_longest_match_wins(tmp_path: Path) -> None:
    text = "ab<|endoftext|><|endoftext|>cd<|endoftext|>ef"
    counts = purebpe.count(write(tmp_path, text), SPECIALS)
    assert counts.words == {b"ab": 1, b"cd": 1, b"ef": 1}
    # A special token is never part of a word, even when written without separators.
    assert not any(b"<|" in word for word in counts.words)


def test_pretokenizer_none_makes_each_line_a_word(tmp_path: Path) -> None:
    text = "one line\r\nsame line\x85still\nlast<pad>after"
    counts = purebpe.count(write(tmp_path, text), ["<pad>"], pretokenizer="none")
    assert counts.words == {b"one line\r\n": 1, "same line\x85still\n".encode(): 1, b"last": 1, b"after": 1}


def test_counting_real_text_from_files_and_iterators_agree(tmp_path: Path) -> None:
    texts = default_corpus()[:25]
    paths = [write(tmp_path, t, f"doc{i}.txt") for i, t in enumerate(texts)]
    from_files = purebpe.count(paths, chunk_bytes=4096)
    from_texts = purebpe.count_from_iterator(iter(texts))
    expected: collections.Counter[bytes] = collections.Counter()
    for t in texts:
        expected.update(expected_counts(t, [], "gpt2"))
    assert from_files.words == from_texts.words == dict(expected)
    assert from_files.total() == sum(expected.values())


@pytest.mark.parametrize("processes", [2, 3])
def test_counts_are_identical_for_any_number_of_processes(tmp_path: Path, processes: int) -> None:
    text = "<|endoftext|>".join(default_corpus()[:30])
    path = write(tmp_path, text)
    one = purebpe.count(path, ["<|endoftext|>"], chunk_bytes=8192)
    # Local workers read ranges of several chunks (here a quarter of each one's share).
    many = purebpe.count(path, ["<|endoftext|>"], processes=processes, chunk_bytes=8192)
    assert many.words == one.words
    second = write(tmp_path, "\n".join(default_corpus()[30:40]), "more.txt")
    both = purebpe.count([path, second], ["<|endoftext|>"], processes=processes, chunk_bytes=4096)
    assert both.words == purebpe.count([path, second], ["<|endoftext|>"]).words
    texts = purebpe.count_from_iterator(default_corpus()[:30], processes=processes)
    assert texts.words == purebpe.count_from_iterator(default_corpus()[:30]).words


def test_any_executor_can_count(tmp_path: Path) -> None:
    path = write(tmp_path, "\n".join(default_corpus()[:10]))
    with ProcessPoolExecutor(2) as executor:
        counts = purebpe.count(path, executor=executor, chunk_bytes=4096)
    assert counts.words == purebpe.count(path).words


def test_dask_executor_can_count(tmp_path: Path) -> None:
    distributed = pytest.importorskip("distributed")
    path = write(tmp_path, "\n".join(default_corpus()[:5]))
    with distributed.LocalCluster(n_workers=1, processes=False, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as client:
            counts = purebpe.count(path, executor=client.get_executor(), chunk_bytes=4096)
    assert counts.words == purebpe.count(path).words


def test_word_counts_do_not_overflow() -> None:
    merged: Dict[bytes, int] = {}
    from purebpe.wordcounts import add_counts as _add_counts

    _add_counts(merged, {b"the": 3 * 2**32})
    _add_counts(merged, {b"the": 2**40, b"a": 1})
    assert merged == {b"the": 3 * 2**32 + 2**40, b"a": 1}


def test_invalid_utf8_names_file_offset_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    data = b"good line\nsecond \xe4\xb8 line\n" + b"x" * 50
    path.write_bytes(data)
    with pytest.raises(InputError) as info:
        purebpe.count(path, chunk_bytes=7)
    error = info.value
    assert (error.source, error.offset, error.line) == (str(path), data.index(b"\xe4"), 2)
    assert str(path) in str(error) and "byte offset 17" in str(error) and "line 2" in str(error)


def test_invalid_utf8_can_be_replaced(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes(b"caf\xe9 ok")
    counts = purebpe.count(path, errors="replace")
    assert counts.words == expected_counts("caf\ufffd ok", [], "gpt2")


def test_lone_surrogates_in_texts_are_an_error_or_replaced() -> None:
    with pytest.raises(InputError, match=r"<text 1>, index 2: lone surrogate"):
        purebpe.count_from_iterator(["fine", "ab\ud800cd"])
    counts = purebpe.count_from_iterator(["ab\ud800cd"], errors="replace")
    assert counts.words == expected_counts("ab\ufffdcd", [], "gpt2")


def test_local_workers_send_their_counts_through_files_that_are_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    loaded: List[str] = []

    def spy(name: str) -> PackedCounts:
        loaded.append(name)
        return load_packed(name)

    monkeypatch.setattr(counting, "load_packed", spy)
    path = write(tmp_path, "\n".join(default_corpus()[:20]))
    assert purebpe.count(path, processes=2, chunk_bytes=4096).words == purebpe.count(path).words
    assert len(loaded) >= 2 and all(Path(name).parent.parent == scratch for name in loaded)
    assert list(scratch.iterdir()) == []
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"a b c\n" * 2000 + b"\xff")
    with pytest.raises(InputError):
        purebpe.count(bad, processes=2, chunk_bytes=1024)
    assert list(scratch.iterdir()) == []


def test_without_a_scratch_directory_counts_come_back_through_the_pipe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_directory() -> str:
        raise FileNotFoundError("No usable temporary directory found")

    monkeypatch.setattr(counting, "scratch_directory", no_directory)
    path = write(tmp_path, "\n".join(default_corpus()[:20]))
    assert purebpe.count(path, processes=2, chunk_bytes=4096).words == purebpe.count(path).words


def test_a_full_scratch_disk_fails_the_count_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(packed: PackedCounts, directory: str) -> str:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(counting, "save_packed", full)  # (the workers fork with it)
    path = write(tmp_path, "\n".join(default_corpus()[:20]))
    expected = r"^a counting job failed on its worker \(OSError: .*No space left on device\)$"
    with pytest.raises(PureBPEError, match=expected):
        purebpe.count(path, processes=2, chunk_bytes=4096)


@pytest.mark.parametrize("forked", [True, False])
def test_streamed_jobs_reach_local_workers_through_files_that_are_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forked: bool
) -> None:
    """A compressed file is decompressed here and its chunks are spilled to the scratch
    directory, and so are the batches of count_from_iterator: same counts, nothing left
    (forked workers, or a process pool where fork is not the start method)."""
    import gzip

    can_fork = counting.can_fork
    monkeypatch.setattr(counting, "can_fork", lambda: forked and can_fork())
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    spilled: List[str] = []
    spill = counting.spill

    def spy(job: counting.AnyJob, directory: Optional[str]) -> counting.AnyJob:
        shipped = spill(job, directory)
        if isinstance(shipped, counting.SpilledJob):
            assert Path(shipped.path).is_file() and Path(shipped.path).parent == Path(directory or "")
            spilled.append(shipped.path)
        return shipped

    monkeypatch.setattr(counting, "spill", spy)  # (the workers fork after it)
    text = "\n".join(default_corpus()[:40])
    plain = write(tmp_path, text)
    packed = tmp_path / "corpus.txt.gz"
    packed.write_bytes(gzip.compress(text.encode("utf-8")))
    expected = purebpe.count(plain).words
    assert purebpe.count(packed, processes=2, chunk_bytes=4096).words == expected
    assert len(spilled) >= 2 and not any(Path(name).exists() for name in spilled)
    lines = text.splitlines(True)
    assert purebpe.count_from_iterator(lines, processes=2).words == purebpe.count_from_iterator(lines).words
    assert list(scratch.iterdir()) == []


def test_a_job_that_cannot_be_spilled_goes_as_it_is(tmp_path: Path) -> None:
    job = counting.Job(b"a b", "<x>", 0, 1, (), "gpt2", "strict")
    assert counting.spill(job, str(tmp_path / "missing")) is job  # (no such directory)
    assert counting.spill(job, None) is job
    spilled = counting.spill(job, str(tmp_path))
    assert isinstance(spilled, counting.SpilledJob)
    assert counting.count_any(spilled) == ({b"a": 1, b" b": 1}, 0)
    assert list(tmp_path.iterdir()) == []  # read, then deleted


@given(st.dictionaries(st.binary(min_size=1, max_size=40), st.integers(1, 2**63 - 1)))
def test_saved_counts_load_back_the_same(words: Dict[bytes, int]) -> None:
    with tempfile.TemporaryDirectory() as directory:
        name = save_packed(pack_counts(words), directory)
        loaded: Dict[bytes, int] = {}
        add_packed_counts(loaded, load_packed(name))
        assert loaded == words and not os.listdir(directory)


@pytest.mark.parametrize("forked", [True, False])
def test_local_workers_count_the_same_and_report_the_first_bad_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, forked: bool
) -> None:
    # Forked workers (ordered_map) where the start method is fork, else a process pool.
    can_fork = counting.can_fork
    monkeypatch.setattr(counting, "can_fork", lambda: forked and can_fork())
    path = write(tmp_path, "\n".join(default_corpus()[:20]))
    assert purebpe.count(path, processes=2, chunk_bytes=4096).words == purebpe.count(path).words
    bad = tmp_path / "bad.txt"
    # Two bad bytes, in different jobs: the first in input order is reported, whichever
    # job ends first.
    bad.write_bytes(b"a b c\n" * 3000 + b"\xff\n" + b"d e f\n" * 3000 + b"\xfe\n")
    with pytest.raises(InputError) as info:
        purebpe.count(bad, processes=2, chunk_bytes=1024)
    assert info.value.offset == 6 * 3000 and info.value.line == 3001


def test_input_errors_survive_worker_processes(tmp_path: Path) -> None:
    path = tmp_path / "bad.txt"
    path.write_bytes(b"a" * 100 + b"\n\xff")
    with pytest.raises(InputError) as info:
        purebpe.count(path, processes=2, chunk_bytes=16)
    assert info.value.offset == 101 and info.value.line == 2


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda p: purebpe.count(p / "missing.txt"), "no such file"),
        (lambda p: purebpe.count(p), "the directory holds no files"),
        (lambda p: purebpe.count([], pretokenizer="words"), "unknown pre-tokenizer 'words'"),
        (lambda p: purebpe.count([], errors="ignore"), "errors must be"),
        (lambda p: purebpe.count([], processes=0), "processes must be at least 1"),
        (lambda p: purebpe.count([], ["<a>", "<a>"]), "given twice"),
        (lambda p: purebpe.count([], [""]), "non-empty string"),
        (lambda p: purebpe.count([], "<a>"), "must be a list"),
        (lambda p: purebpe.count_from_iterator([b"bytes"]), "expected str"),
    ],
)
def test_bad_arguments_give_clear_errors(tmp_path: Path, call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(PureBPEError, match=message):
        call(tmp_path)


def test_count_job_is_the_unit_of_parallel_work() -> None:
    text = "hello world<|endoftext|>hello"
    job = (text.encode(), "x", 0, 1, ("<|endoftext|>",), "gpt2", "strict")
    assert count_job(job) == {b"hello": 2, b" world": 1}


def test_train_from_iterator_uses_every_core_by_default_with_the_same_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    used: List[object] = []
    run_jobs = counting._run_jobs

    def noting(jobs, processes, *args, **kwargs):  # type: ignore[no-untyped-def]
        used.append(processes)
        return run_jobs(jobs, processes, *args, **kwargs)

    monkeypatch.setattr(counting, "_run_jobs", noting)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    texts = [f"doc {i}: ab cd abcd ab{i % 97} " * 40 for i in range(3_000)]  # > 2 Mi characters
    default = purebpe.train_from_iterator(iter(texts), 300)
    serial = purebpe.train_from_iterator(iter(texts), 300, processes=1)
    assert used == [2, 1]
    assert default.merges == serial.merges
    purebpe.train_from_iterator(iter(["a short text"]), 260)
    assert used[-1] == 1  # one batch: no pool
