"""``from purebpe.compat import tiktoken``: tiktoken's README runs unchanged, with tiktoken's ids."""

from __future__ import annotations

import hashlib
import pickle
import shutil
from pathlib import Path
from typing import Iterator

import pytest
from _tokenizer_files import tokenizer_file

from purebpe.compat import tiktoken
from purebpe.compat.tiktoken import registry
from purebpe.errors import PureBPEError

TEXTS = [
    "hello world",
    "It's 2024: \u4f60\u597d\uff0c\u4e16\u754c! \ud55c\uad6d\uc5b4 "
    "\U0001f468\u200d\U0001f469\u200d\U0001f467  \n\n x 1234567",
    "<|im_start|>user\nhi<|im_end|>",
]


@pytest.fixture
def rank_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """$PUREBPE_TIKTOKEN_DIR holding the official files; a fresh registry."""
    for name in ("cl100k_base.tiktoken", "o200k_base.tiktoken", "r50k_base.tiktoken"):
        shutil.copy(tokenizer_file(name), tmp_path / name)
    monkeypatch.setenv("PUREBPE_TIKTOKEN_DIR", str(tmp_path))
    monkeypatch.setattr(registry, "_encodings", {})
    yield tmp_path


def test_readme_recipes_run_verbatim(rank_dir: Path) -> None:
    # tiktoken's README, with only the import changed.
    enc = tiktoken.get_encoding("o200k_base")
    assert enc.decode(enc.encode("hello world")) == "hello world"
    enc = tiktoken.encoding_for_model("gpt-4o")
    assert enc.name == "o200k_base"

    # "Extending tiktoken"
    cl100k_base = tiktoken.get_encoding("cl100k_base")
    enc = tiktoken.Encoding(
        name="cl100k_im",
        pat_str=cl100k_base._pat_str,
        mergeable_ranks=cl100k_base._mergeable_ranks,
        special_tokens={
            **cl100k_base._special_tokens,
            "<|im_start|>": 100264,
            "<|im_end|>": 100265,
        },
    )
    assert enc.encode("<|im_start|>user", allowed_special="all")[0] == 100264
    assert enc.pretokenizer == "cl100k"  # tiktoken's pattern string runs on the scanner


@pytest.mark.peers
def test_ids_equal_tiktoken(rank_dir: Path) -> None:
    real = pytest.importorskip("tiktoken")
    for name in ("cl100k_base", "o200k_base", "r50k_base", "gpt2"):
        ours = tiktoken.get_encoding(name)
        theirs = real.Encoding(
            name,
            pat_str=ours._pat_str,
            mergeable_ranks=ours._mergeable_ranks,
            special_tokens=ours._special_tokens,
        )
        assert ours.n_vocab == theirs.n_vocab and ours.eot_token == theirs.eot_token
        for text in TEXTS:
            assert ours.encode(text, disallowed_special=()) == theirs.encode(text, disallowed_special=())
            assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")
            with pytest.raises(ValueError):
                ours.encode("<|endoftext|>")  # tiktoken's default: special text is refused


@pytest.mark.peers
def test_model_tables_equal_tiktokens() -> None:
    real_model = pytest.importorskip("tiktoken.model")
    assert tiktoken.model.MODEL_TO_ENCODING == real_model.MODEL_TO_ENCODING
    assert tiktoken.model.MODEL_PREFIX_TO_ENCODING == real_model.MODEL_PREFIX_TO_ENCODING
    with pytest.raises(KeyError, match="Could not automatically map"):
        tiktoken.encoding_name_for_model("no-such-model")


@pytest.mark.peers
def test_load_tiktoken_bpe_equals_tiktokens() -> None:
    real_load = pytest.importorskip("tiktoken.load")
    path = tokenizer_file("r50k_base.tiktoken")
    expected = hashlib.sha256(path.read_bytes()).hexdigest()
    assert tiktoken.load.load_tiktoken_bpe(str(path), expected) == real_load.load_tiktoken_bpe(str(path))


def test_load_refuses_urls_and_wrong_hashes(tmp_path: Path) -> None:
    with pytest.raises(PureBPEError, match="offline"):
        tiktoken.load.load_tiktoken_bpe("https://example.com/x.tiktoken")
    path = tmp_path / "t.tiktoken"
    tiktoken.load.dump_tiktoken_bpe({b"a": 0, b"b": 1}, str(path))
    assert tiktoken.load.load_tiktoken_bpe(str(path)) == {b"a": 0, b"b": 1}
    with pytest.raises(PureBPEError, match="sha256"):
        tiktoken.load.load_tiktoken_bpe(str(path), "0" * 64)


def test_get_encoding_reads_tiktokens_cache_layout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = hashlib.sha1(
        b"https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
    ).hexdigest()
    shutil.copy(tokenizer_file("cl100k_base.tiktoken"), tmp_path / key)
    monkeypatch.delenv("PUREBPE_TIKTOKEN_DIR", raising=False)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PUREBPE_TOKENIZER_FILES", str(tmp_path / "none"))
    monkeypatch.setattr(registry, "_package_dir", lambda name: None)
    monkeypatch.setattr(registry, "_encodings", {})
    enc = tiktoken.get_encoding("cl100k_base")
    assert enc.encode("hello world") == [15339, 1917]


def test_get_encoding_says_where_it_looked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PUREBPE_TIKTOKEN_DIR", str(tmp_path))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("PUREBPE_TOKENIZER_FILES", str(tmp_path))
    (tmp_path / "o200k_base.tiktoken").write_bytes(b"IQ== 0\n")  # not the official file
    monkeypatch.setattr(registry, "_package_dir", lambda name: None)
    monkeypatch.setattr(registry, "_encodings", {})
    with pytest.raises(PureBPEError) as info:
        tiktoken.get_encoding("o200k_base")
    message = str(info.value)
    assert "\n" not in message
    assert "$PUREBPE_TIKTOKEN_DIR" in message and "tiktoken's cache" in message and "wrong sha256" in message
    with pytest.raises(ValueError, match="Unknown encoding"):
        tiktoken.get_encoding("nope_base")


def test_list_encoding_names_and_pickling(rank_dir: Path) -> None:
    assert "cl100k_base" in tiktoken.list_encoding_names()
    enc = tiktoken.get_encoding("r50k_base")
    copy = pickle.loads(pickle.dumps(enc))
    assert isinstance(copy, tiktoken.Encoding) and copy.encode(TEXTS[1]) == enc.encode(TEXTS[1])
    assert enc.max_token_value == 50256 and enc.n_vocab == 50257


def test_explicit_n_vocab_is_checked() -> None:
    ranks = {bytes([b]): b for b in range(256)}
    with pytest.raises(PureBPEError, match="explicit_n_vocab"):
        tiktoken.Encoding("x", pat_str=r"\S+", mergeable_ranks=ranks, special_tokens={}, explicit_n_vocab=300)


def test_module_examples_run() -> None:
    import doctest

    for module in (tiktoken, tiktoken.core, tiktoken.load, tiktoken.model, tiktoken.registry):
        assert doctest.testmod(module).failed == 0, module.__name__
