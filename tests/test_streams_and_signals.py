"""Odd standard streams, hang-ups and exhausted resources (issue 24, "Weaker"): one clear line,
the right exit status, nothing lost or left behind. Real shells close the descriptors, real
signals are sent, real limits are set."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

import purebpe
from purebpe import BPEModel

TEXT = "some words to count, over and over again\n"


def env() -> Dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(Path(purebpe.__file__).parent.parent))


def shell(command: str, cwd: Path, **kwargs: Any) -> "subprocess.CompletedProcess[bytes]":
    """``command`` run by sh, with ``$PY`` the interpreter under test."""
    return subprocess.run(
        ["sh", "-c", command],
        cwd=cwd,
        env=dict(env(), PY=sys.executable),
        capture_output=True,
        timeout=120,
        **kwargs,
    )


def assert_one_line(err: bytes, message: str) -> None:
    text = err.decode("utf-8", "replace")
    assert text.startswith("purebpe: error: ") and message in text, text
    assert len(text.strip().splitlines()) == 1 and "Traceback" not in text


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("streams")
    (work / "t.txt").write_text(TEXT * 50, encoding="utf-8")
    BPEModel.from_merges([(b"o", b"v"), (b"ov", b"e")]).save(work / "model")
    return work


# --------------------------------------------------------------------------------------
# Closed standard streams
# --------------------------------------------------------------------------------------
def test_a_closed_stdin_is_one_line(work: Path) -> None:
    result = shell('"$PY" -m purebpe encode --tokenizer model <&-', work)
    assert result.returncode == 2
    assert_one_line(result.stderr, "<stdin>: standard input is closed")


def test_a_closed_stdout_after_a_save_loses_nothing(work: Path) -> None:
    result = shell('"$PY" -m purebpe count t.txt -o closed-out.gz --progress none >&-', work)
    assert result.returncode == 0, result.stderr
    assert purebpe.WordCounts.load(work / "closed-out.gz").total() == 50 * 10
    for command in (
        '"$PY" -m purebpe encode --tokenizer model t.txt >&-',
        '"$PY" -m purebpe count t.txt -o - >&-',
    ):
        result = shell(command, work)
        assert result.returncode == 2
        assert_one_line(result.stderr, "<stdout>: standard output is closed")


def test_a_closed_stderr_with_the_default_progress_bar_still_saves(work: Path) -> None:
    result = shell('"$PY" -m purebpe count t.txt -o closed-err.gz 2>&-', work)
    assert result.returncode == 0
    assert purebpe.WordCounts.load(work / "closed-err.gz").total() == 50 * 10
    result = shell('"$PY" -m purebpe train t.txt --vocab-size 270 -o closed-err-model 2>&- >&-', work)
    assert result.returncode == 0 and purebpe.load(work / "closed-err-model").vocab_size > 256


def test_a_file_name_that_is_not_utf8_is_printed_as_it_is(work: Path) -> None:
    name = b"\xff\xfe-corpus.txt"
    with open(os.path.join(os.fsencode(work), name), "wb") as f:
        f.write(TEXT.encode())
    result = subprocess.run(
        [sys.executable, "-m", "purebpe", "count", os.fsdecode(name), "-o", "bytes.gz", "--progress", "none"],
        cwd=work,
        env=dict(env(), PYTHONIOENCODING="utf-8"),
        capture_output=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(b"counted " + name + b": 10 words")
    assert (work / "bytes.gz").is_file()


# --------------------------------------------------------------------------------------
# SIGHUP ends a run as SIGTERM does: workers stopped, temporaries and scratch removed
# --------------------------------------------------------------------------------------
def test_sighup_ends_a_count_leaving_nothing_behind(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.txt"
    # 67 MB: counting its 9 distinct words takes PyPy's two processes about 1 s.
    corpus.write_text(TEXT * 1_600_000, encoding="utf-8")
    (tmp_path / "scratch").mkdir()
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "purebpe",
            "count",
            str(corpus),
            "--processes",
            "2",
            "--progress",
            "none",
            "-o",
            str(tmp_path / "c.tsv.gz"),
        ],
        env=dict(env(), TMPDIR=str(tmp_path / "scratch")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    # Once the scratch directory exists the workers are counting. (Not merely any file:
    # Python's tempfile probes the directory with a file of its own first.)
    while (
        not list((tmp_path / "scratch").glob("purebpe-scratch-*"))
        and time.monotonic() < deadline
        and run.poll() is None
    ):
        time.sleep(0.02)
    time.sleep(0.2)
    run.send_signal(signal.SIGHUP)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 128 + signal.SIGHUP, err
    assert err.decode().strip() == "purebpe: hung up; no output file was written"
    assert list((tmp_path / "scratch").iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.txt", "scratch"]


def test_sighup_during_an_encode_to_a_file_removes_its_temporary(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text(TEXT * 200_000, encoding="utf-8")
    BPEModel.from_merges([(b"o", b"v")]).save(tmp_path / "model")
    run = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "purebpe",
            "encode",
            "--tokenizer",
            "model",
            "big.txt",
            "-o",
            "ids.npy",
            "--progress",
            "none",
        ],
        cwd=tmp_path,
        env=env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while (
        not [p for p in tmp_path.iterdir() if p.name.startswith(".ids.npy.")] and time.monotonic() < deadline
    ):
        time.sleep(0.02)
    run.send_signal(signal.SIGHUP)
    _, err = run.communicate(timeout=60)
    assert run.returncode == 128 + signal.SIGHUP, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.txt", "model"]


# --------------------------------------------------------------------------------------
# Resources that run out: one line saying which
# --------------------------------------------------------------------------------------
def limited(kind: int, soft: int) -> Any:
    def set_limit() -> None:
        resource.setrlimit(kind, (soft, resource.getrlimit(kind)[1]))

    return set_limit


@pytest.mark.skipif(sys.platform != "linux", reason="address-space limits as Linux sets them")
def test_counting_dev_zero_under_a_memory_limit_is_one_line(work: Path) -> None:
    limit = 512 << 20  # enough to start either interpreter, soon exhausted by the zeros
    result = subprocess.run(
        [sys.executable, "-m", "purebpe", "count", "/dev/zero", "--progress", "none", "-o", "zero.gz"],
        cwd=work,
        env=env(),
        capture_output=True,
        timeout=300,
        preexec_fn=limited(resource.RLIMIT_AS, limit),
    )
    assert result.returncode == 2
    assert_one_line(result.stderr, "out of memory")
    assert not (work / "zero.gz").exists()


# 10: the pool cannot start; 14-16: it starts one worker, then fails to spawn the second
# (the worker spawned first must be stopped, or exit waits for it forever).
@pytest.mark.parametrize("descriptors", [10, 14, 16])
def test_too_few_file_descriptors_for_two_processes_is_one_line(work: Path, descriptors: int) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "purebpe",
            "count",
            "t.txt",
            "--processes",
            "2",
            "--progress",
            "none",
            "-o",
            "fds.gz",
        ],
        cwd=work,
        env=env(),
        capture_output=True,
        timeout=60,
        preexec_fn=limited(resource.RLIMIT_NOFILE, descriptors),
    )
    if result.returncode == 0:  # it fitted in so few descriptors after all: fine, but then whole
        assert purebpe.WordCounts.load(work / "fds.gz").total() == 50 * 10
        return
    assert result.returncode == 2
    assert_one_line(result.stderr, "too many open files")


@pytest.mark.parametrize("depth", [100_000])
def test_json_nested_absurdly_deep_is_one_line_in_every_loader(tmp_path: Path, depth: int) -> None:
    deep = "[" * depth + "]" * depth
    files: List[str] = ["purebpe.json", "tokenizer.json", "vocab.json", "tokenizer.tiktoken.json"]
    for name in files:
        directory = tmp_path / name
        BPEModel.from_merges([(b"a", b"b")]).save(
            directory,
            {
                "purebpe.json": "purebpe",
                "tokenizer.json": "hf",
                "vocab.json": "gpt2",
                "tokenizer.tiktoken.json": "tiktoken",
            }[name],
        )
        text = '{"format": "purebpe", "x": ' + deep + "}" if name == "purebpe.json" else deep
        (directory / name).write_text(text)
        with pytest.raises(purebpe.PureBPEError, match="nested too deeply|not a"):
            purebpe.load(directory)
        result = subprocess.run(
            [sys.executable, "-m", "purebpe", "encode", "--tokenizer", str(directory)],
            input=b"ab",
            env=env(),
            capture_output=True,
            timeout=60,
        )
        assert result.returncode == 2
        assert_one_line(result.stderr, name)
    counts = tmp_path / "c.tsv.gz"
    import gzip

    counts.write_bytes(gzip.compress(("# " + deep + "\n1\tab\n").encode()))
    with pytest.raises(purebpe.PureBPEError, match="not a purebpe counts file"):
        purebpe.WordCounts.load(counts)


def test_an_error_about_a_huge_line_quotes_a_few_dozen_characters(tmp_path: Path) -> None:
    BPEModel.from_merges([(b"a", b"b")]).save(tmp_path, "gpt2")
    with open(tmp_path / "merges.txt", "a") as f:
        f.write("x" * 2_000_000 + "\n")
    (tmp_path / "merges.txt").write_text(
        (tmp_path / "merges.txt")
        .read_text()
        .replace((tmp_path / "merges.txt").read_text().splitlines()[0], "#version: 0.2")
    )
    result = subprocess.run(
        [sys.executable, "-m", "purebpe", "encode", "--tokenizer", str(tmp_path)],
        input=b"ab",
        env=env(),
        capture_output=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert_one_line(result.stderr, "merges.txt, line 3: expected 'left right'")
    assert len(result.stderr) < 300
    (tmp_path / "ids.txt").write_bytes(b"1 2 " + b"9" * 3_000_000 + b"x")
    result = subprocess.run(
        [sys.executable, "-m", "purebpe", "decode", "--tokenizer", str(tmp_path), "ids.txt"],
        cwd=tmp_path,
        env=env(),
        capture_output=True,
        timeout=60,
    )
    assert result.returncode == 2 and len(result.stderr) < 300, result.stderr[:300]
