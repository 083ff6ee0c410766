"""The tokenizer's tables: built once by a function, one setup for every constructor, and
not public mutable state."""

from __future__ import annotations

import pickle

import pytest

from purebpe import BPEModel, Tokenizer
from purebpe.specials import SpecialPolicy
from purebpe.token_tables import NO_TOKEN, TokenTables, merge_tables, rank_tables

MERGES = [(b"a", b"b"), (b"ab", b"c")]
MODEL = BPEModel.from_merges(MERGES, ["<|end|>"])
RANKS = {bytes([b]): b for b in range(256)}
RANKS.update({b"ab": 256, b"abc": 257})


def test_every_constructor_gives_the_same_tokenizer_as_its_tables() -> None:
    from_tables = Tokenizer(merge_tables(MODEL.vocab, MODEL.merges, MODEL.special_tokens))
    direct = Tokenizer(MODEL.vocab, MODEL.merges, MODEL.special_tokens)
    assert from_tables.encode("abcab<|end|>") == direct.encode("abcab<|end|>") == [257, 256, 258]
    ranked = Tokenizer(rank_tables(RANKS, {"<|end|>": 300}))
    assert ranked.encode("abcab") == Tokenizer.from_ranks(RANKS, {"<|end|>": 300}).encode("abcab")
    assert ranked.encode("abcab") == [257, 256]
    with pytest.raises(ValueError, match="disallowed_special forbids"):
        ranked.encode("<|end|>")  # tiktoken's defaults come with rank tables
    assert pickle.loads(pickle.dumps(ranked)).encode("abcab") == [257, 256]


def test_tables_hold_what_the_engine_needs() -> None:
    tables = merge_tables({0: b"a", 1: b"b", 2: b"ab"}, [(b"a", b"b")], [])
    assert isinstance(tables, TokenTables)
    assert tables.byte_ids[ord("a")] == 0 and tables.byte_ids[ord("z")] == NO_TOKEN
    assert tables.merges == [(b"a", b"b")] and tables.whole_tokens is None
    assert tables.default_special == ("all", ())
    ranked = rank_tables(RANKS, {})
    assert ranked.merges is None and ranked.whole_tokens == RANKS


def test_wrong_arguments_are_type_errors() -> None:
    tables = merge_tables(MODEL.vocab, MODEL.merges)
    with pytest.raises(TypeError, match="needs the merges"):
        Tokenizer(MODEL.vocab)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="takes no merges"):
        Tokenizer(tables, MODEL.merges)


def test_working_tables_are_private_and_read_only() -> None:
    tok = MODEL.tokenizer()
    assert not hasattr(tok, "ranks") and not hasattr(tok, "id_to_bytes")
    assert tok.byte_ids == tuple(range(256))
    with pytest.raises(AttributeError):
        tok.byte_ids = [0] * 256  # type: ignore[misc]


def test_special_policy_defaults_and_checks() -> None:
    policy = SpecialPolicy(("<a>", "<a><b>"), "all", ())
    pattern, forbidden = policy.rules(None, None)
    assert pattern is not None and pattern.findall("<a><b><a>") == ["<a><b>", "<a>"]
    assert forbidden is None
    tiktoken_like = policy.with_defaults(frozenset(), "all")
    pattern, forbidden = tiktoken_like.rules(None, None)
    assert pattern is None and forbidden is not None and forbidden[1] == {"<a>", "<a><b>"}
    with pytest.raises(ValueError, match="which is not a special token"):
        policy.allowed({"<c>"})
    with pytest.raises(ValueError, match="both allowed and disallowed"):
        policy.rules({"<a>"}, {"<a>"})
