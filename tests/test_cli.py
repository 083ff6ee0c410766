"""``purebpe train`` end to end: the default corpus, files, and every kind of bad input."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

import purebpe
from purebpe.cli import main


def run_cli(args: List[str], cwd: Path) -> subprocess.CompletedProcess:  # type: ignore[type-arg]
    """Run ``python -m purebpe`` as a user would, in ``cwd``."""
    env = dict(os.environ, PYTHONPATH=str(Path(purebpe.__file__).parent.parent))
    return subprocess.run(
        [sys.executable, "-m", "purebpe", *args], cwd=cwd, env=env, capture_output=True, text=True
    )


def test_train_with_no_input_uses_the_python_docs(tmp_path: Path) -> None:
    result = run_cli(["train", "--vocab-size", "400", "--progress", "none"], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "trained on  pydoc_data.topics" in result.stdout
    assert "bytes per token" in result.stdout and "peak memory" in result.stdout
    model = purebpe.load(tmp_path / "purebpe-model")
    assert model.vocab_size == 400


def test_train_on_files_with_options_matches_the_api(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("low lower lowest<|endoftext|>newer wider\n" * 20, encoding="utf-8")
    status = main(
        [
            "train",
            str(corpus),
            "--vocab-size",
            "270",
            "--special-token",
            "<|endoftext|>",
            "--variant",
            "incremental",
            "--min-frequency",
            "2",
            "--progress",
            "bar",
            "-o",
            str(tmp_path / "out"),
        ]
    )
    assert status == 0
    captured = capsys.readouterr()
    assert "merge" in captured.err  # the tqdm bars went to stderr
    expected = purebpe.train(corpus, 270, ["<|endoftext|>"], variant="naive", min_frequency=2)
    assert purebpe.load(tmp_path / "out") == expected


def test_progress_jsonl_goes_to_stderr(tmp_path: Path) -> None:
    result = run_cli(["train", "--vocab-size", "300", "--progress", "jsonl"], tmp_path)
    assert result.returncode == 0
    assert all(line.startswith("{") for line in result.stderr.splitlines())


@pytest.mark.parametrize(
    "args, message",
    [
        (["missing.txt"], "missing.txt: no such file"),
        (["empty"], "empty: the directory holds no files"),
        (["ok.txt", "--vocab-size", "100"], "vocab_size 100 is too small"),
        (["ok.txt", "--vocab-size", "257", "--special-token", "a", "--special-token", "b"], "too small"),
        (["ok.txt", "--special-token", "<s>", "--special-token", "<s>"], "'<s>' is given twice"),
        (["ok.txt", "--variant", "quantum"], "unknown variant 'quantum'"),
        (["bad.txt"], "bad.txt, line 2, byte offset 9: invalid UTF-8"),
        (["ok.txt", "--initial", "nowhere"], "nowhere: no such file or directory"),
    ],
)
def test_bad_input_exits_2_with_one_line_and_writes_nothing(
    tmp_path: Path, args: List[str], message: str
) -> None:
    (tmp_path / "ok.txt").write_text("some text\n", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    (tmp_path / "bad.txt").write_bytes(b"fine\nnot \xff fine\n")
    result = run_cli(["train", *args, "-o", "out", "--progress", "none"], tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("purebpe: error: ") and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_errors_replace_lets_bad_bytes_through(tmp_path: Path) -> None:
    (tmp_path / "bad.txt").write_bytes(b"fine\nnot \xff fine\n")
    result = run_cli(
        ["train", "bad.txt", "--errors", "replace", "--vocab-size", "260", "--progress", "none"], tmp_path
    )
    assert result.returncode == 0, result.stderr


def test_continue_training_from_a_saved_model(tmp_path: Path) -> None:
    first = run_cli(["train", "--vocab-size", "300", "--progress", "none", "-o", "small"], tmp_path)
    assert first.returncode == 0, first.stderr
    more = run_cli(
        ["train", "--vocab-size", "350", "--initial", "small", "--progress", "none", "-o", "big"], tmp_path
    )
    assert more.returncode == 0, more.stderr
    small, big = purebpe.load(tmp_path / "small"), purebpe.load(tmp_path / "big")
    assert big.merges[: len(small.merges)] == small.merges and big.vocab_size == 350


def test_start_up_loads_no_openssl(tmp_path: Path) -> None:
    # hashlib (and secrets, through hmac) load OpenSSL: on PyPy a fifth of a second of every
    # command's start-up. purebpe imports hashlib only where a digest is computed.
    code = "import sys, purebpe.cli; print(sorted({'hashlib', 'secrets', 'ssl'} & set(sys.modules)))"
    env = dict(os.environ, PYTHONPATH=str(Path(purebpe.__file__).parent.parent))
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
