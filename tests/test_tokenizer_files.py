"""The fetched-file helper: real files come back, absent ones skip naming the fetch command."""

from __future__ import annotations

from pathlib import Path

import _tokenizer_files
import pytest
from _tokenizer_files import tokenizer_file


def test_absent_file_skips_naming_the_fetch_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PUREBPE_TOKENIZER_FILES", str(tmp_path))
    with pytest.raises(pytest.skip.Exception, match="scripts/fetch_tokenizer_files.py"):
        tokenizer_file("qwen.tiktoken")


def test_changed_file_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PUREBPE_TOKENIZER_FILES", str(tmp_path))
    (tmp_path / "qwen3_6.tiktoken").write_bytes(b"IQ== 0\n")
    with pytest.raises(pytest.fail.Exception, match="sha256"):
        tokenizer_file("qwen3_6.tiktoken")


def test_unknown_name_is_a_key_error() -> None:
    with pytest.raises(KeyError, match="not one of"):
        tokenizer_file("no-such-tokenizer.json")


def test_fetched_file_is_returned() -> None:
    path = tokenizer_file("cl100k_base.tiktoken")
    assert path.parent == _tokenizer_files.tokenizer_files_dir()
    assert path.read_bytes().startswith(b"IQ== 0\n")
