"""The command line under bad outputs, ignored options, early stops and malformed inputs:
refused at once with one line and exit 2, or said plainly on stderr."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

import purebpe
from purebpe import BPEModel
from purebpe.counting import COUNTS_FORMAT

SLOW_INPUT_THAT_FAILS_LATE = b"fine text\n" * 1000 + b"\xff"


def run_cli(args: List[str], cwd: Path) -> "subprocess.CompletedProcess[str]":
    env = dict(os.environ, PYTHONPATH=str(Path(purebpe.__file__).parent.parent))
    return subprocess.run(
        [sys.executable, "-m", "purebpe", *args], cwd=cwd, env=env, capture_output=True, text=True
    )


def assert_one_line_error(result: "subprocess.CompletedProcess[str]", message: str) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("purebpe: error: ") and message in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert ".tmp" not in result.stderr


# --------------------------------------------------------------------------------------
# Item 7: the output location is checked before any work, by one rule for every command
# --------------------------------------------------------------------------------------
@pytest.fixture()
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "bad.txt").write_bytes(SLOW_INPUT_THAT_FAILS_LATE)
    (tmp_path / "a_file").write_text("in the way")
    (tmp_path / "a_dir").mkdir()
    BPEModel.from_merges([(b"a", b"b")]).save(tmp_path / "model")
    return tmp_path


# An output that cannot be written, with an input that would fail only after the work:
# the output's error comes first.
BAD_OUTPUTS = [
    (["train", "bad.txt", "-o", "a_file"], "a_file: output path exists and is not a directory"),
    (["train", "bad.txt", "-o", "a_file/model"], "a_file is not a directory"),
    (["count", "bad.txt", "-o", "a_dir"], "a_dir: output path is a directory"),
    (["count", "bad.txt", "-o", "a_file/c.tsv.gz"], "a_file is not a directory"),
    (["encode", "--tokenizer", "model", "bad.txt", "-o", "a_dir"], "a_dir: output path is a directory"),
    (["encode", "--tokenizer", "model", "bad.txt", "-o", "a_file/ids.npy"], "a_file is not a directory"),
    (["decode", "--tokenizer", "model", "bad.txt", "-o", "a_file/x.txt"], "a_file is not a directory"),
    (["export", "--tokenizer", "nowhere", "--format", "hf", "-o", "a_file"], "not a directory"),
]


@pytest.mark.parametrize("args, message", BAD_OUTPUTS)
def test_a_bad_output_is_refused_before_any_work(workspace: Path, args: List[str], message: str) -> None:
    result = run_cli(
        args + ["--progress", "none"] if args[0] in ("train", "count", "encode") else args, workspace
    )
    assert_one_line_error(result, message)


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_a_read_only_directory_is_refused_before_any_work(workspace: Path) -> None:
    locked = workspace / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        result = run_cli(["count", "bad.txt", "-o", "locked/c.tsv.gz", "--progress", "none"], workspace)
    finally:
        locked.chmod(0o755)
    assert_one_line_error(result, "cannot write into")


@pytest.mark.parametrize("command", ["count", "encode", "train"])
def test_missing_output_directories_are_created_by_every_command(tmp_path: Path, command: str) -> None:
    (tmp_path / "text.txt").write_text("some text to count\n", encoding="utf-8")
    BPEModel.from_merges([]).save(tmp_path / "model")
    args = {
        "count": ["count", "text.txt", "-o", "new/dir/c.tsv.gz"],
        "encode": ["encode", "--tokenizer", "model", "text.txt", "-o", "new/dir/ids.txt"],
        "train": ["train", "text.txt", "--vocab-size", "260", "-o", "new/dir/model"],
    }[command]
    result = run_cli(args + ["--progress", "none"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "new" / "dir").is_dir() and len(list((tmp_path / "new" / "dir").iterdir())) == 1


# --------------------------------------------------------------------------------------
# Item 9: an early stop is said once, and the bar ends where training stopped
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, args, reason",
    [
        ("", [], "the input has no pair of bytes to merge (empty, or only special tokens)"),
        (
            "<s><s>",
            ["--special-token", "<s>"],
            "the input has no pair of bytes to merge (empty, or only special tokens)",
        ),
        ("abab cd", ["--min-frequency", "2"], "no pair left that occurs at least 2 times"),
        ("tiny text", [], "no pair left that occurs at least 1 times"),
    ],
)
def test_an_early_stop_says_the_size_reached_and_why(
    tmp_path: Path, text: str, args: List[str], reason: str
) -> None:
    (tmp_path / "in.txt").write_text(text, encoding="utf-8")
    result = run_cli(["train", "in.txt", "--vocab-size", "100000", "--progress", "jsonl", *args], tmp_path)
    assert result.returncode == 0, result.stderr
    model = purebpe.load(tmp_path / "purebpe-model")
    said = [line for line in result.stderr.splitlines() if not line.startswith("{")]
    assert said == [f"purebpe: stopped at vocab size {model.vocab_size:,} of 100,000: {reason}"]
    merge_records = [json.loads(line) for line in result.stderr.splitlines() if '"phase": "merge"' in line]
    final = merge_records[-1]
    assert final["final"] and final["done"] == final["total"] == len(model.merges)


def test_the_tqdm_bar_closes_at_the_size_reached(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    counts = purebpe.count_from_iterator(["ab ab"])
    model = purebpe.train_from_counts(counts, 1000, progress=True)
    bar = capsys.readouterr().err.replace("\r", "\n").strip().splitlines()[-1]
    assert len(model.merges) == 2 and "100%" in bar and "2/2" in bar


# --------------------------------------------------------------------------------------
# Item 10: options that would be ignored are refused
# --------------------------------------------------------------------------------------
def test_counting_options_with_counts_are_refused(tmp_path: Path) -> None:
    purebpe.count_from_iterator(["some text"]).save(tmp_path / "c.tsv.gz")
    for option in (
        ["--pretokenizer", "none"],
        ["--pretokenizer", "gpt2"],
        ["--pattern", "x+"],
        ["--processes", "2"],
    ):
        result = run_cli(["train", "--counts", "c.tsv.gz", *option], tmp_path)
        assert_one_line_error(result, "--pretokenizer, --pattern and --processes apply to counting")


def test_an_initial_model_of_another_pretokenizer_is_refused(tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("some text\nmore text\n", encoding="utf-8")
    BPEModel.from_merges([(b"t", b"e")], pretokenizer="none").save(tmp_path / "lines")
    result = run_cli(["train", "in.txt", "--initial", "lines", "--vocab-size", "300"], tmp_path)
    assert_one_line_error(result, "the initial model was learned with pretokenizer 'none'")
    purebpe.count_from_iterator(["some text"]).save(tmp_path / "c.tsv.gz")
    result = run_cli(["train", "--counts", "c.tsv.gz", "--initial", "lines", "--vocab-size", "300"], tmp_path)
    assert_one_line_error(result, "these words are counted with 'gpt2'")
    with pytest.raises(purebpe.PureBPEError, match="initial model was learned"):
        purebpe.train_from_iterator(["x"], 300, initial=purebpe.load(tmp_path / "lines"))


# --------------------------------------------------------------------------------------
# Item 11: a counts file's header is checked when it is loaded
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "header, message",
    [
        ({"pretokenizer": "bpe", "special_tokens": []}, "line 1: unknown pre-tokenizer 'bpe'"),
        ({"pretokenizer": ["gpt2"], "special_tokens": []}, "line 1: unknown pre-tokenizer ['gpt2']"),
        ({"pretokenizer": "gpt2", "special_tokens": "<s>"}, "special_tokens '<s>' is not a list of strings"),
        ({"pretokenizer": "gpt2", "special_tokens": [1]}, "special token 1 must be a non-empty string"),
        ({"pretokenizer": "gpt2", "special_tokens": {"<s>": 1}}, "is not a list of strings"),
    ],
)
def test_a_counts_header_is_checked_at_load(tmp_path: Path, header: dict, message: str) -> None:  # type: ignore[type-arg]
    path = tmp_path / "c.tsv.gz"
    path.write_bytes(
        gzip.compress(("# " + json.dumps(dict(header, format=COUNTS_FORMAT)) + "\n1\tab\n").encode())
    )
    with pytest.raises(purebpe.PureBPEError, match=message.replace("[", r"\[").replace("]", r"\]")) as caught:
        purebpe.WordCounts.load(path)
    assert str(path) in str(caught.value)
    result = run_cli(["train", "--counts", str(path)], tmp_path)
    assert_one_line_error(result, str(path))


# --------------------------------------------------------------------------------------
# Item 12: the cases the issue lists end in one line, exit 2
# --------------------------------------------------------------------------------------
def test_a_special_token_that_is_not_utf8_is_refused(tmp_path: Path) -> None:
    (tmp_path / "in.txt").write_text("text", encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(Path(purebpe.__file__).parent.parent))
    result = subprocess.run(
        [sys.executable.encode(), b"-m", b"purebpe", b"train", b"in.txt", b"--special-token", b"\xff"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
    )
    assert result.returncode == 2 and b"Traceback" not in result.stderr
    assert b"special token '\\udcff' is not valid Unicode" in result.stderr
    with pytest.raises(purebpe.PureBPEError, match="is not valid Unicode"):
        purebpe.train_from_iterator(["text"], 300, ["\ud800"])


def test_a_truncated_npy_and_a_truncated_counts_file(tmp_path: Path) -> None:
    BPEModel.from_merges([]).save(tmp_path / "model")
    (tmp_path / "text.txt").write_text("some text " * 50, encoding="utf-8")
    assert run_cli(["encode", "--tokenizer", "model", "text.txt", "-o", "ids.npy"], tmp_path).returncode == 0
    for cut in (3, 9, 20, 100):
        (tmp_path / "cut.npy").write_bytes((tmp_path / "ids.npy").read_bytes()[:cut])
        result = run_cli(["decode", "--tokenizer", "model", "cut.npy"], tmp_path)
        assert_one_line_error(result, "cut.npy")
    purebpe.count_from_iterator(["some text " * 1000]).save(tmp_path / "c.tsv.gz")
    data = (tmp_path / "c.tsv.gz").read_bytes()
    (tmp_path / "cut.tsv.gz").write_bytes(data[: len(data) - 10])
    result = run_cli(["train", "--counts", "cut.tsv.gz"], tmp_path)
    assert_one_line_error(result, "cut.tsv.gz: not a purebpe counts file, or a truncated one")
