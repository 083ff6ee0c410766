"""Outputs that are not plain files (pipes, FIFOs, devices, descriptors, symbolic links) and
ids files that lie about themselves: written as streams or refused in one line, never
renamed over, never a silently wrong file (issue 24, items 1, 2, 9 and the output paths)."""

from __future__ import annotations

import ast
import os
import stat
import struct
import subprocess
import sys
import threading
from io import BytesIO
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import purebpe
import purebpe._atomic as atomic
from purebpe import BPEModel
from purebpe.cli import _io
from purebpe.errors import PureBPEError

TEXT = "some text to encode, and some more text\n" * 20


def cli(args: List[str], cwd: Path, **kwargs: Any) -> "subprocess.CompletedProcess[bytes]":
    env = dict(os.environ, PYTHONPATH=str(Path(purebpe.__file__).parent.parent))
    options: Dict[str, Any] = dict(cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    options.update(kwargs)
    return subprocess.run([sys.executable, "-m", "purebpe", *args], **options)


def one_line_error(result: "subprocess.CompletedProcess[bytes]", message: str) -> None:
    err = result.stderr.decode()
    assert result.returncode == 2, err
    assert err.startswith("purebpe: error: ") and message in err, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def npy_length(data: bytes) -> int:
    """The length a .npy header records, read independently of purebpe's reader."""
    assert data[:6] == b"\x93NUMPY", data[:20]
    (size,) = struct.unpack("<H", data[8:10])
    header = ast.literal_eval(data[10 : 10 + size].decode("latin-1"))
    (length,) = header["shape"]
    assert len(data) - 10 - size == length * int(header["descr"][-1])
    return int(length)


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("streams")
    BPEModel.from_merges([(b"t", b"e"), (b"te", b"x"), (b" ", b"s")]).save(work / "model")
    (work / "text.txt").write_text(TEXT, encoding="utf-8")
    return work


ENCODE_NPY = ["encode", "--tokenizer", "model", "text.txt", "--format", "npy", "--progress", "none"]


# --------------------------------------------------------------------------------------
# Item 1: .npy to a pipe is refused before any id is written; to a file it is whole
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("output", [[], ["-o", "-"], ["-o", "/dev/stdout"]])
def test_npy_to_a_pipe_is_refused_before_any_id_is_written(work: Path, output: List[str]) -> None:
    result = cli(ENCODE_NPY + output, work)  # stdout is a pipe
    one_line_error(result, "a .npy output must be a file")
    assert result.stdout == b""


def test_npy_to_a_fifo_is_refused_and_to_a_redirected_stdout_is_whole(work: Path) -> None:
    fifo = work / "ids.fifo"
    os.mkfifo(fifo)
    received: List[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    result = cli(ENCODE_NPY + ["-o", str(fifo)], work)
    reader.join(30)
    one_line_error(result, "a .npy output must be a file")
    assert received == [b""] and stat.S_ISFIFO(os.stat(fifo).st_mode)
    for output in (["-o", "/dev/stdout"], []):
        with open(work / "redirected.npy", "wb") as redirected:
            result = cli(ENCODE_NPY + output, work, stdout=redirected)
        assert result.returncode == 0, result.stderr
        assert npy_length((work / "redirected.npy").read_bytes()) == len(
            purebpe.load(work / "model").tokenizer().encode(TEXT)
        )
    with open(work / "redirected.npy", "ab") as appended:  # >>: the header could not be rewritten
        one_line_error(cli(ENCODE_NPY, work, stdout=appended), "a .npy output must be a file")


# --------------------------------------------------------------------------------------
# Item 9: a .npy whose data does not match its header's length is refused
# --------------------------------------------------------------------------------------
def test_a_truncated_or_extended_npy_is_refused(work: Path) -> None:
    assert cli(ENCODE_NPY + ["-o", "ids.npy"], work).returncode == 0
    data = (work / "ids.npy").read_bytes()
    length = npy_length(data)
    for name, changed in (
        ("cut.npy", data[: len(data) - 2 * (length // 2)]),
        ("cut1.npy", data[:-2]),
        ("long.npy", data + b"\x01\x00"),
    ):
        (work / name).write_bytes(changed)
        result = cli(["decode", "--tokenizer", "model", name], work)
        one_line_error(result, f"{name}: the .npy header records {length} ids but the file holds")
    assert cli(["decode", "--tokenizer", "model", "ids.npy"], work).stdout.decode() == TEXT


# --------------------------------------------------------------------------------------
# Item 2: devices, FIFOs and descriptors are written in place, never renamed over
# --------------------------------------------------------------------------------------
COMMANDS = {
    "count": ["count", "text.txt", "--progress", "none"],
    "encode": ["encode", "--tokenizer", "model", "text.txt", "--progress", "none"],
    "decode": ["decode", "--tokenizer", "model", "ids.txt"],
}


# Through /dev/fd/1 rather than /dev/stdout: should this regress, a rename into /proc fails
# instead of replacing the machine's /dev/stdout (as root it would).
@pytest.mark.parametrize("command", list(COMMANDS))
def test_stdout_by_name_redirected_to_a_file_is_written_not_replaced(work: Path, command: str) -> None:
    (work / "ids.txt").write_text(" ".join(map(str, purebpe.load(work / "model").tokenizer().encode(TEXT))))
    with open(work / f"{command}.out", "wb") as redirected:
        result = cli(COMMANDS[command] + ["-o", "/dev/fd/1"], work, stdout=redirected)
    assert result.returncode == 0, result.stderr
    written = (work / f"{command}.out").read_bytes()
    if command == "count":
        assert purebpe.WordCounts.load(work / "count.out") == purebpe.count([work / "text.txt"])
    elif command == "decode":
        assert written.decode() == TEXT
    else:
        assert written.split() == (work / "ids.txt").read_bytes().split()


def test_stdout_by_name_appended_to_keeps_what_the_file_held(work: Path) -> None:
    """``-o /dev/stdout >> log`` writes through the descriptor: reopening it would truncate."""
    (work / "log.txt").write_text("what was there\n")
    for output in ("/dev/stdout", "/dev/fd/1"):
        with open(work / "log.txt", "ab") as appended:
            result = cli(COMMANDS["encode"] + ["-o", output], work, stdout=appended)
        assert result.returncode == 0, result.stderr
    lines = (work / "log.txt").read_text().splitlines()
    assert lines[0] == "what was there" and len(lines) == 3 and lines[1] == lines[2]


@pytest.mark.parametrize("path", ["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/fd/1", "/proc/self/fd/2"])
def test_devices_and_descriptors_are_written_in_place(path: str) -> None:
    assert atomic.resolve_output(path) == (Path(path), True)
    assert atomic.check_output_file(path) == Path(path)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_fifo_is_written_as_a_stream(work: Path, command: str) -> None:
    (work / "ids.txt").write_text(" ".join(map(str, purebpe.load(work / "model").tokenizer().encode(TEXT))))
    fifo = work / f"{command}.fifo"
    os.mkfifo(fifo)
    received: List[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    result = cli(COMMANDS[command] + ["-o", str(fifo)], work)
    reader.join(30)
    assert result.returncode == 0, result.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and received and received[0]
    assert [name for name in os.listdir(work) if ".purebpe-" in name] == []


def test_count_to_stdout_streams_the_counts_and_says_its_summary_on_stderr(work: Path) -> None:
    result = cli(["count", "text.txt", "--progress", "none", "-o", "-"], work)
    assert result.returncode == 0, result.stderr
    (work / "piped.tsv.gz").write_bytes(result.stdout)
    assert purebpe.WordCounts.load(work / "piped.tsv.gz") == purebpe.count([work / "text.txt"])
    assert b"counted text.txt" in result.stderr


# --------------------------------------------------------------------------------------
# Output paths: symbolic links, modes, the umask
# --------------------------------------------------------------------------------------
def test_an_output_through_a_symlink_replaces_its_target_and_keeps_the_link(work: Path) -> None:
    (work / "real.tsv.gz").write_bytes(b"old")
    os.symlink("real.tsv.gz", work / "link.tsv.gz")
    result = cli(["count", "text.txt", "--progress", "none", "-o", "link.tsv.gz"], work)
    assert result.returncode == 0, result.stderr
    assert os.readlink(work / "link.tsv.gz") == "real.tsv.gz"
    assert purebpe.WordCounts.load(work / "real.tsv.gz") == purebpe.count([work / "text.txt"])


def test_a_symlink_loop_is_refused_before_any_work(work: Path) -> None:
    (work / "bad.txt").write_bytes(b"fine text\n" * 1000 + b"\xff")
    os.symlink("loop-b", work / "loop-a")
    os.symlink("loop-a", work / "loop-b")
    for args in (
        ["count", "bad.txt", "-o", "loop-a"],
        ["train", "bad.txt", "-o", "loop-a"],
        ["encode", "--tokenizer", "model", "bad.txt", "-o", "loop-a"],
    ):
        one_line_error(cli(args + ["--progress", "none"], work), "loop-a: a loop of symbolic links")
    one_line_error(
        cli(["export", "--tokenizer", "model", "--format", "hf", "-o", "loop-a"], work),
        "loop-a: a loop of symbolic links",
    )


def test_a_dangling_symlink_output_directory_creates_its_target(work: Path) -> None:
    os.symlink("made/by/train", work / "dangling")
    result = cli(["train", "text.txt", "--vocab-size", "270", "--progress", "none", "-o", "dangling"], work)
    assert result.returncode == 0, result.stderr
    assert os.path.islink(work / "dangling") and (work / "made" / "by" / "train" / "purebpe.json").is_file()
    (work / "a_file").write_text("x")
    os.symlink("a_file/below", work / "dangling_below_a_file")
    (work / "bad.txt").write_bytes(b"fine text\n" * 1000 + b"\xff")
    one_line_error(
        cli(["train", "bad.txt", "--progress", "none", "-o", "dangling_below_a_file"], work),
        "a_file is not a directory",
    )


def test_an_overwritten_file_keeps_its_mode(tmp_path: Path) -> None:
    for mode in (0o600, 0o640, 0o664):
        target = tmp_path / f"model-{mode:o}"
        BPEModel.from_merges([]).save(target, "gpt2")
        for name in ("vocab.json", "merges.txt"):
            (target / name).chmod(mode)
        BPEModel.from_merges([(b"a", b"b")]).save(target, "gpt2")
        assert {stat.S_IMODE((target / name).stat().st_mode) for name in ("vocab.json", "merges.txt")} == {
            mode
        }


def test_a_save_never_changes_the_umask(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another thread creating files meanwhile must get the umask it set."""

    def forbidden(mask: Optional[int] = None) -> int:
        raise AssertionError("os.umask called: another thread's files would get the wrong mode")

    monkeypatch.setattr(os, "umask", forbidden)
    BPEModel.from_merges([]).save(tmp_path / "model")
    monkeypatch.undo()
    previous = os.umask(0o027)
    try:
        BPEModel.from_merges([]).save(tmp_path / "model027", "gpt2")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "model027" / "vocab.json").stat().st_mode) == 0o640


# --------------------------------------------------------------------------------------
# Text ids: plain ASCII digits only, the first bad word named
# --------------------------------------------------------------------------------------
BAD_WORDS = [b"+104", b"1_05", b"-0", b"0x1f", b"1e3", b"\xd9\xa1", b"12a", b"--"]


@settings(max_examples=60)
@given(
    ids=st.lists(st.integers(0, 300), max_size=30),
    bad=st.lists(st.sampled_from(BAD_WORDS), min_size=1, max_size=3),
    at=st.integers(0, 30),
)
def test_text_ids_are_plain_digits_and_the_first_bad_word_is_blamed(
    ids: List[int], bad: List[bytes], at: int
) -> None:
    words = [str(i).encode() for i in ids]
    at = min(at, len(words))
    data = b" ".join(words[:at] + bad + words[at:])
    with pytest.raises(PureBPEError) as caught:
        for _ in _io.read_ids(BytesIO(data), "ids.txt", "text", "uint16"):
            pass
    assert str(caught.value).startswith(f"ids.txt: {bad[0]!r} is not a token id")
    assert [
        i for batch in _io.read_ids(BytesIO(b" ".join(words)), "ids.txt", "text", "uint16") for i in batch
    ] == ids
