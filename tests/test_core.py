"""The shared core: merging a word, replaying merges, the tie-break and reverse keys."""

from __future__ import annotations

from typing import List, Sequence, Tuple

import pytest
from hypothesis import given
from hypothesis import strategies as st

from purebpe.core import (
    WordTable,
    apply_merges,
    merge_word,
    pack_pair,
    pack_rank,
    reverse_bytes_key,
    unpack_pair,
)
from purebpe.errors import PureBPEError


def test_merge_word_is_left_to_right_and_non_overlapping() -> None:
    a, b, new = 97, 98, 300
    assert merge_word([a, a, a], a, a, new) == [new, a]
    assert merge_word([a, a, a, a], a, a, new) == [new, new]
    assert merge_word([a, b, a, b, a], a, b, new) == [new, new, a]
    assert merge_word(b"ba", a, b, new) == [b, a]
    assert merge_word([], a, b, new) == []


@given(st.integers(0, 2**31), st.integers(0, 2**31))
def test_pairs_pack_into_one_int_and_back(left: int, right: int) -> None:
    assert unpack_pair(pack_pair(left, right)) == (left, right)


#: Byte strings rich in the bytes where the key's codes change shape (0 takes two bytes).
edge_bytes = st.binary(max_size=6) | st.lists(st.sampled_from([0, 1, 0xFE, 0xFF]), max_size=6).map(bytes)


@given(edge_bytes, edge_bytes)
def test_reverse_bytes_key_reverses_the_order_of_byte_strings(x: bytes, y: bytes) -> None:
    assert (reverse_bytes_key(x) < reverse_bytes_key(y)) == (x > y)
    assert (reverse_bytes_key(x) == reverse_bytes_key(y)) == (x == y)


nonempty_edge_bytes = edge_bytes.filter(bool)
pair = st.tuples(nonempty_edge_bytes, nonempty_edge_bytes)


@given(pair, pair)
def test_concatenated_reverse_keys_reverse_the_order_of_pairs(
    p: Tuple[bytes, bytes], q: Tuple[bytes, bytes]
) -> None:
    key_p = reverse_bytes_key(p[0]) + reverse_bytes_key(p[1])
    key_q = reverse_bytes_key(q[0]) + reverse_bytes_key(q[1])
    assert (key_p < key_q) == (p > q)


def test_reverse_key_on_prefixes() -> None:
    # b"ab" < b"abc" as bytes, so the heap key of b"abc" must come first in a min-heap.
    assert reverse_bytes_key(b"abc") < reverse_bytes_key(b"ab")
    assert reverse_bytes_key(b"a\x00") < reverse_bytes_key(b"a")
    assert reverse_bytes_key(b"\xff") < reverse_bytes_key(b"\xfe\xff")
    assert reverse_bytes_key(b"\x00\x00") < reverse_bytes_key(b"\x00") < reverse_bytes_key(b"")
    assert reverse_bytes_key(b"\x01") < reverse_bytes_key(b"\x00\xff")


def replay_one_by_one(word: Sequence[int], merges: List[Tuple[int, int, int]]) -> List[int]:
    out = list(word)
    for left, right, new in merges:
        out = merge_word(out, left, right, new)
    return out


@given(st.data())
def test_apply_merges_equals_replaying_the_merges_in_order(data: st.DataObject) -> None:
    word = data.draw(st.lists(st.integers(0, 3), max_size=30), label="word")
    merges: List[Tuple[int, int, int]] = []
    for new in range(4, 4 + data.draw(st.integers(0, 8), label="number of merges")):
        # Merge i makes token 4 + i from tokens that exist by then; each pair merges once.
        left, right = data.draw(st.tuples(st.integers(0, new - 1), st.integers(0, new - 1)))
        if all((left, right) != (a, b) for a, b, _ in merges):
            merges.append((left, right, new))
    ranks = {pack_pair(a, b): pack_rank(rank, n) for rank, (a, b, n) in enumerate(merges)}
    assert list(apply_merges(word, ranks)) == replay_one_by_one(word, merges)


def test_best_pair_breaks_ties_by_the_greatest_bytes_pair() -> None:
    table = WordTable.from_word_counts({b"xy": 1})
    ab, abc = table.add_token(97, 98), 0
    abc = table.add_token(ab, 99)
    # Equal counts: (b"ab", b"c") vs (b"abc", b"c"): the longer left wins.
    counts = {pack_pair(ab, 99): 5, pack_pair(abc, 99): 5}
    assert table.best_pair(counts) == pack_pair(abc, 99)
    # Equal left, right differs only in the second element.
    counts = {pack_pair(97, 98): 5, pack_pair(97, 99): 5}
    assert table.best_pair(counts) == pack_pair(97, 99)
    # A higher count beats any bytes.
    counts = {pack_pair(97, 98): 6, pack_pair(122, 122): 5}
    assert table.best_pair(counts) == pack_pair(97, 98)


def test_best_pair_respects_min_frequency_and_max_token_length() -> None:
    table = WordTable.from_word_counts({b"xy": 1}, min_frequency=3, max_token_length=2)
    aa = table.add_token(97, 97)
    assert table.best_pair({pack_pair(97, 98): 2}) is None
    assert table.best_pair({pack_pair(aa, 98): 9, pack_pair(97, 98): 3}) == pack_pair(97, 98)


def test_replay_rejects_merges_of_unknown_tokens() -> None:
    with pytest.raises(PureBPEError, match="merge 0"):
        WordTable.from_word_counts({b"ab": 1}, [(b"ab", b"c")])


@pytest.mark.parametrize("options", [{"min_frequency": 0}, {"max_token_length": 0}])
def test_limits_are_validated(options: dict) -> None:  # type: ignore[type-arg]
    with pytest.raises(PureBPEError):
        WordTable.from_word_counts({b"ab": 1}, **options)
