"""Streams and files that change: a FIFO, ``/dev/stdin`` or ``<(...)`` with two processes is
read by the parent (no hang), and a file replaced or rewritten during a count fails it."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import threading
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any, Callable, List

import pytest

import purebpe
from purebpe.counting import count
from purebpe.errors import InputError
from purebpe.wordcounts import WordCounts

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="FIFOs and /dev/fd are Linux's")

ENV = dict(os.environ, PYTHONPATH=str(Path(purebpe.__file__).parent.parent))
TIMEOUT = 60  # a hang fails the test instead of the suite


def corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.jsonl"
    path.write_text(
        "".join(json.dumps({"text": f"line {i} of the stream, word{i % 97}"}) + "\n" for i in range(30000)),
        encoding="utf-8",
    )
    return path


def cli(args: List[str], cwd: Path, **kwargs: Any) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(
        [sys.executable, "-m", "purebpe", *args],
        cwd=cwd,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        **kwargs,
    )


def test_a_fifo_with_two_processes_is_read_by_the_parent(tmp_path: Path) -> None:
    source = corpus(tmp_path)
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as f:
            f.write(gzip.compress(source.read_bytes()))  # compressed, recognised by its magic

    writer = threading.Thread(target=feed)
    writer.start()
    result = cli(["count", str(fifo), "--processes", "2", "-o", "c.tsv.gz", "--progress", "none"], tmp_path)
    writer.join(TIMEOUT)
    assert result.returncode == 0, result.stderr
    assert WordCounts.load(tmp_path / "c.tsv.gz").words == count(source, processes=1).words


def test_dev_stdin_and_process_substitution_with_two_processes(tmp_path: Path) -> None:
    source = corpus(tmp_path)
    expected = count(source, processes=1).words
    with open(source, "rb") as stdin:
        result = cli(
            [
                "count",
                "/dev/stdin",
                "--format",
                "jsonl",
                "--processes",
                "2",
                "-o",
                "a.tsv.gz",
                "--progress",
                "none",
            ],
            tmp_path,
            stdin=stdin,
        )
    assert result.returncode == 0, result.stderr
    assert WordCounts.load(tmp_path / "a.tsv.gz").words == expected
    with open(source, "rb") as stdin:
        result = cli(
            ["count", "-", "--format", "jsonl", "--processes", "2", "-o", "b.tsv.gz", "--progress", "none"],
            tmp_path,
            stdin=stdin,
        )
    assert result.returncode == 0, result.stderr
    assert WordCounts.load(tmp_path / "b.tsv.gz").words == expected
    command = (
        f"{sys.executable} -m purebpe count <(cat {source}) --format jsonl --processes 2 -o "
        "c.tsv.gz --progress none"
    )
    result = subprocess.run(
        ["bash", "-c", command], cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=TIMEOUT
    )
    assert result.returncode == 0, result.stderr
    assert WordCounts.load(tmp_path / "c.tsv.gz").words == expected


def test_train_from_a_pipe_with_two_processes(tmp_path: Path) -> None:
    source = corpus(tmp_path)
    with open(source, "rb") as stdin:
        result = cli(
            [
                "train",
                "-",
                "--format",
                "jsonl",
                "--processes",
                "2",
                "--vocab-size",
                "300",
                "-o",
                "m",
                "--progress",
                "none",
            ],
            tmp_path,
            stdin=stdin,
        )
    assert result.returncode == 0, result.stderr
    assert purebpe.load(tmp_path / "m").merges == purebpe.train(source, 300, processes=1).merges


class ChangingExecutor(Executor):
    """Real worker processes; the file is changed once the first job is submitted, as
    another program might do in the middle of a count."""

    def __init__(self, change: Callable[[], None]) -> None:
        self.pool = ProcessPoolExecutor(2)
        self.change: Any = change

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> "Future[Any]":
        if self.change is not None:
            self.change()
            self.change = None
        return self.pool.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self.pool.shutdown(wait, cancel_futures=cancel_futures)


def _truncate(path: Path) -> Callable[[], None]:
    def change() -> None:
        with open(path, "r+b") as f:
            f.truncate(path.stat().st_size // 2)

    return change


def _replace(path: Path) -> Callable[[], None]:
    def change() -> None:
        other = path.with_name("other")
        other.write_bytes(path.read_bytes()[::-1].replace(b"\n", b" ") + b"\n")
        os.replace(other, path)

    return change


def _rewrite_same_size(path: Path) -> Callable[[], None]:
    def change() -> None:
        data = path.read_bytes()
        with open(path, "r+b") as f:
            f.write(data.upper())
        st = path.stat()
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))

    return change


@pytest.mark.parametrize("change", [_truncate, _replace, _rewrite_same_size])
@pytest.mark.parametrize("name", ["corpus.txt", "corpus.jsonl"])
def test_a_file_changed_during_a_count_fails_it(
    tmp_path: Path, change: Callable[[Path], Callable[[], None]], name: str
) -> None:
    path = tmp_path / name
    line = json.dumps({"text": "words of a file that will change under the count"})
    path.write_text((line + "\n") * 40000, encoding="utf-8")
    executor = ChangingExecutor(change(path))
    try:
        with pytest.raises(InputError, match=rf"{name}: the file was (replaced|rewritten) while it was read"):
            count(path, processes=2, executor=executor, shared_files=True, chunk_bytes=1 << 16)
    finally:
        executor.shutdown()


def test_a_file_changed_during_a_cli_count_writes_nothing(tmp_path: Path) -> None:
    """Real processes racing: a writer rewrites the file over and over while ``count
    --processes 2`` reads it; the count either sees one version throughout or fails in one
    line, and never saves counts of a mixture."""
    path = tmp_path / "corpus.txt"
    versions = [b"alpha beta gamma\n" * 400000, b"delta epsilon\n" * 300000]
    path.write_bytes(versions[0])
    stop = threading.Event()

    def rewrite() -> None:
        i = 0
        while not stop.is_set():
            i += 1
            tmp = tmp_path / "next"
            tmp.write_bytes(versions[i % 2])
            os.replace(tmp, path)

    writer = threading.Thread(target=rewrite)
    writer.start()
    try:
        outcomes = []
        for round in range(4):
            out = tmp_path / f"c{round}.tsv.gz"
            result = cli(
                ["count", str(path), "--processes", "2", "-o", str(out), "--progress", "none"], tmp_path
            )
            if result.returncode == 0:
                words = WordCounts.load(out).words
                assert words in (
                    {b"alpha": 400000, b" beta": 400000, b" gamma": 400000, b"\n": 400000},
                    {b"delta": 300000, b" epsilon": 300000, b"\n": 300000},
                ), "mixed counts"
            else:
                assert result.returncode == 2 and "while it was read" in result.stderr, result.stderr
                assert len(result.stderr.strip().splitlines()) == 1 and not out.exists()
            outcomes.append(result.returncode)
    finally:
        stop.set()
        writer.join()
    assert 2 in outcomes  # the race was seen at least once


def test_superbpe_refuses_a_stream_it_would_read_twice(tmp_path: Path) -> None:
    result = cli(
        [
            "train",
            "-",
            "--superbpe",
            "--transition",
            "10",
            "--vocab-size",
            "300",
            "-o",
            "m",
            "--progress",
            "none",
        ],
        tmp_path,
        input="some text\n",
    )
    assert result.returncode == 2 and "-: --superbpe reads the corpus twice" in result.stderr
    assert not (tmp_path / "m").exists()
