"""Differential tests: purebpe's ids equal tiktoken's and HF tokenizers' on exported files.

A tokenizer is trained once per session on part of ``pydoc_data.topics`` (vocab 1000,
``<|endoftext|>`` special), exported with ``purebpe.formats``, and loaded by the peers
exactly as their users would (``tiktoken.load.load_tiktoken_bpe`` + the sidecar,
``tokenizers.Tokenizer.from_file``). The peers are CPython-only: on PyPy these tests are
skipped one by one, with the reason shown.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, List, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import ASSIGNED_CHARACTERS

import purebpe
from purebpe import BPEModel, Tokenizer
from purebpe.corpus import default_corpus

pytestmark = pytest.mark.peers

EOT = "<|endoftext|>"


def peer_modules() -> Tuple[Any, Any]:
    """``(tiktoken, tokenizers)``, or a skip naming the one that is missing."""
    tiktoken = pytest.importorskip("tiktoken", reason="tiktoken is not installed (a CPython-only peer)")
    tokenizers = pytest.importorskip(
        "tokenizers", reason="HF tokenizers is not installed (a CPython-only peer)"
    )
    return tiktoken, tokenizers


Peers = Tuple[Tokenizer, Any, Any]


def load_peers(model: BPEModel, directory: Path) -> Peers:
    tiktoken, tokenizers = peer_modules()
    from tiktoken.load import load_tiktoken_bpe

    model.save(directory, "tiktoken")
    model.save(directory, "hf")
    sidecar = json.loads((directory / "tokenizer.tiktoken.json").read_text(encoding="utf-8"))
    encoding = tiktoken.Encoding(
        name="purebpe-test",
        pat_str=sidecar["pat_str"],
        mergeable_ranks=load_tiktoken_bpe(str(directory / "tokenizer.tiktoken")),
        special_tokens=sidecar["special_tokens"],
        explicit_n_vocab=sidecar["explicit_n_vocab"],
    )
    hf = tokenizers.Tokenizer.from_file(str(directory / "tokenizer.json"))
    return model.tokenizer(), encoding, hf


@pytest.fixture(scope="session")
def peers(tmp_path_factory: pytest.TempPathFactory) -> Peers:
    peer_modules()  # skip before training when the peers are missing
    model = purebpe.train_from_iterator(default_corpus()[:40], 1000, [EOT])
    return load_peers(model, tmp_path_factory.mktemp("peers"))


@pytest.fixture(scope="session")
def lines_peers(tmp_path_factory: pytest.TempPathFactory) -> Peers:
    peer_modules()
    model = purebpe.train_from_iterator(default_corpus()[:20], 700, [EOT], pretokenizer="none")
    return load_peers(model, tmp_path_factory.mktemp("lines-peers"))


#: Every assigned character (:data:`strategies.ASSIGNED_CHARACTERS`), whitespace runs,
#: contractions, digits and the special token, in any mixture.
pieces = st.one_of(
    st.text(ASSIGNED_CHARACTERS, max_size=10),
    st.text(" \t\n\r\x0b\x0c\x85\xa0\u2028\u3000", max_size=6),
    st.sampled_from(["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'x", EOT, "<|endo"]),
    st.from_regex(r"[0-9]{1,7}| [0-9]{1,5}", fullmatch=True),
    st.from_regex(r"[A-Za-z ]{0,24}", fullmatch=True),
)
any_text = st.lists(pieces, max_size=14).map("".join)


def peer_ids(peers: Peers, text: str) -> Tuple[List[int], List[int], List[int]]:
    tok, encoding, hf = peers
    return (
        tok.encode(text),
        encoding.encode(text, allowed_special="all"),
        hf.encode(text, add_special_tokens=False).ids,
    )


@settings(max_examples=300)
@given(any_text)
def test_purebpe_tiktoken_and_hf_give_the_same_ids(peers: Peers, text: str) -> None:
    ours, tiktoken_ids, hf_ids = peer_ids(peers, text)
    assert ours == tiktoken_ids
    assert ours == hf_ids
    assert peers[0].decode(ours) == text == peers[1].decode(ours)


@settings(max_examples=100)
@given(any_text)
def test_special_tokens_as_plain_text_agree_with_encode_ordinary(peers: Peers, text: str) -> None:
    tok, encoding, _ = peers
    assert tok.encode_ordinary(text) == encoding.encode_ordinary(text)


@settings(max_examples=100)
@given(any_text)
def test_lines_models_agree_with_the_peers(lines_peers: Peers, text: str) -> None:
    ours, tiktoken_ids, hf_ids = peer_ids(lines_peers, text)
    assert ours == tiktoken_ids
    assert ours == hf_ids


@settings(max_examples=100)
@given(any_text, st.lists(st.integers(0, 10_000), max_size=10))
def test_encode_iterable_over_any_chunking_equals_tiktoken(peers: Peers, text: str, cuts: List[int]) -> None:
    bounds = sorted({c % (len(text) + 1) for c in cuts})
    chunks = [text[a:b] for a, b in zip([0] + bounds, bounds + [len(text)])]
    assert list(peers[0].encode_iterable(chunks)) == peers[1].encode(text, allowed_special="all")


def test_real_text_agrees(peers: Peers) -> None:
    text = "\n\n".join(default_corpus()[40:])  # text the tokenizer was not trained on
    ours, tiktoken_ids, hf_ids = peer_ids(peers, text)
    assert ours == tiktoken_ids == hf_ids
    assert peers[0].decode(ours) == text


def test_lone_surrogates_are_replaced_as_tiktoken_does(peers: Peers) -> None:
    tok, encoding, _ = peers
    for text in ["a\ud800b", "\ud83d\ude00 x", "\udc00\ud800"]:
        assert tok.encode(text) == encoding.encode(text)


def test_tiktoken_encoding_helper_builds_the_same_encoding(peers: Peers, tmp_path: Path) -> None:
    from purebpe.formats.tiktoken_format import tiktoken_encoding

    tok, encoding, _ = peers
    BPEModel(tok.vocab, tok.merges, tok.special_tokens).save(tmp_path, "tiktoken")
    helper = tiktoken_encoding(tmp_path / "tokenizer.tiktoken")
    text = f"Hello there{EOT} it's 42"
    assert helper.encode(text, allowed_special="all") == encoding.encode(text, allowed_special="all")
    assert helper.n_vocab == encoding.n_vocab == 1000


def test_gpt2_layout_files_agree_with_hf(peers: Peers, tmp_path: Path) -> None:
    """A GPT-2-style id layout (printable bytes first) read by HF's own GPT-2 loader."""
    _, tokenizers = peer_modules()
    model = purebpe.train_from_iterator(default_corpus()[:5], 400, [EOT])
    model.save(tmp_path, "gpt2")
    vocab = json.loads((tmp_path / "vocab.json").read_text(encoding="utf-8"))
    order = sorted(vocab, key=lambda key: (vocab[key] >= 256, key if vocab[key] < 256 else "", vocab[key]))
    (tmp_path / "vocab.json").write_text(
        json.dumps({key: i for i, key in enumerate(order)}, ensure_ascii=False), encoding="utf-8"
    )
    merges = (tmp_path / "merges.txt").read_text(encoding="utf-8").split("\n")
    merges[0] = "#version: 0.2"  # vocab.json was rewritten by hand: drop the record of the old one
    (tmp_path / "merges.txt").write_text("\n".join(merges), encoding="utf-8")
    ours = Tokenizer.from_files(tmp_path / "vocab.json", tmp_path / "merges.txt")
    hf = tokenizers.Tokenizer(
        tokenizers.models.BPE.from_file(str(tmp_path / "vocab.json"), str(tmp_path / "merges.txt"))
    )
    hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    text = "\n".join(default_corpus()[5:8])
    assert ours.encode(text) == hf.encode(text, add_special_tokens=False).ids
    # And the tiktoken export of that layout (ranks = ids) agrees too.
    reloaded = purebpe.load(tmp_path)
    tiktoken_tok, encoding, _ = load_peers(reloaded, tmp_path / "again")
    assert tiktoken_tok.encode(text) == encoding.encode(text) == ours.encode(text)
