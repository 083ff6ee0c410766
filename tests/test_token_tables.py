"""The tokenizer's tables: built once by a function, one setup for every constructor, and
not public mutable state."""

from __future__ import annotations

import pickle
from random import Random
from typing import Dict, List, Optional
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from purebpe import BPEModel, Tokenizer, core, word_encoder
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


def _tiktoken_rule(ranks: Dict[bytes, int], word: bytes, whole: bool = True) -> List[int]:
    """tiktoken's rule written plainly: a word that is a token is that token (``whole``);
    else merge the adjacent pair whose concatenation ranks lowest (the leftmost on a tie)
    until no concatenation is a token."""
    if whole and word in ranks:
        return [ranks[word]]
    parts = [bytes([byte]) for byte in word]
    while True:
        found = [(ranks[a + b], i) for i, (a, b) in enumerate(zip(parts, parts[1:])) if a + b in ranks]
        if not found:
            return [ranks[part] for part in parts]
        _, i = min(found)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]


@settings(max_examples=30)
@given(st.data())
def test_long_words_merge_by_tiktokens_rule_like_short_ones(data: st.DataObject) -> None:
    # A rank file's WordEncoder looks pairs up by their bytes, on both sides of LONG_WORD.
    length = data.draw(st.integers(core.LONG_WORD - 3, 3 * core.LONG_WORD), label="length")
    word = bytes(data.draw(st.lists(st.integers(0, 3), min_size=length, max_size=length), label="word"))
    ranks = {bytes([b]): b for b in range(256)}
    for token in data.draw(
        st.lists(st.binary(min_size=2, max_size=6).map(lambda t: bytes(b % 4 for b in t))), label="tokens"
    ):
        ranks.setdefault(token, len(ranks))
    token_bytes: List[Optional[bytes]] = list(ranks)
    encoder = word_encoder.WordEncoder({}, list(range(256)), ranks, token_bytes)
    assert encoder.merge(word) == _tiktoken_rule(ranks, word, whole=False)


# Rank files over a small alphabet, built by no training: a token may rank below its
# parts or have no pair of tokens that makes it, and single bytes rank anywhere (as in
# cl100k's file).
small = st.binary(max_size=64).map(lambda b: bytes(97 + x % 3 for x in b))


@given(
    st.lists(small.filter(lambda b: len(b) >= 2).map(lambda b: b[:5]), max_size=30),
    st.randoms(use_true_random=False),
    st.lists(small.filter(bool), min_size=1, max_size=8),
    st.sampled_from([1, 4, 1 << 20]),
    st.sampled_from([3, 1000]),
)
def test_rank_tables_merge_by_tiktokens_rule_on_demand(
    tokens: List[bytes], random: Random, texts: List[bytes], remembered: int, long_word: int
) -> None:
    order = [bytes([b]) for b in range(256)] + list(dict.fromkeys(tokens))
    random.shuffle(order)
    ranks = {token: rank for rank, token in enumerate(order)}
    tok = Tokenizer.from_ranks(ranks, {}, pretokenizer="none")
    # Forgetting the pairs met (remembered) and the heap for long words change nothing.
    with mock.patch.multiple(word_encoder, PAIRS_REMEMBERED=remembered, LONG_WORD=long_word):
        for text in texts:
            assert tok.encode(text.decode()) == _tiktoken_rule(ranks, text)
            assert tok._encoder.merge(text) == _tiktoken_rule(ranks, text, whole=False)
        assert len(tok._encoder.pairs) <= remembered


def test_rank_tables_build_no_pair_table_in_advance() -> None:
    ranks = {bytes([b]): b for b in range(256)}
    ranks.update({b"ab": 256, b"bc": 257, b"abc": 258})
    tables = rank_tables(ranks, {})
    assert tables.ranks == {} and tables.pairs_by_rule
    tok = Tokenizer(tables)
    assert tok.encode("abc abcab") == [258, 32, 258, 256]
    # Each pair met is remembered (those that merge into nothing too), and shared with a
    # tokenizer built from the same tables; a pickle leaves them behind.
    assert tables.ranks and set(tables.ranks) <= {a << 32 | b for a in range(259) for b in range(259)}
    extended = tok.with_special_tokens({"<s>": 259})
    assert extended._encoder.pairs is tables.ranks
    copy = pickle.loads(pickle.dumps(extended))
    assert copy._encoder.pairs == {} and copy.encode("abc<s>", allowed_special="all") == [258, 259]
