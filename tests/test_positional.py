"""The positional trainer: equal to naive, and its flat-array state right after every merge.

* Hypothesis: ``positional`` learns exactly what ``naive`` learns with both pre-tokenizers
  on corpora with long runs (``"0" * 200``, ``"ab" * 50``), CJK, emoji and special tokens;
* white box: after every merge the flat array decodes to naive's words, and the tracked
  pair counts, the bucket sums of the untracked pairs, the position lists and the stale
  count equal a recount from scratch, also with one bucket for all pairs (every pair a
  candidate), frequent compaction, no compaction, a steep floor and candidates listed one
  bucket per pass;
* huge counts (wider bucket sums);
* 32-bit ids once the vocabulary passes 65 535, initial merges, one long line;
* the real text of ``pydoc_data.topics``.
"""

from __future__ import annotations

from collections import Counter
from typing import Dict, Iterator, List, Optional, Tuple
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import word_counts

import purebpe
from purebpe.core import PAIR_SHIFT, WordTable, unpack_pair
from purebpe.corpus import default_corpus
from purebpe.testing.strategies import corpora, special_tokens
from purebpe.trainers import naive, positional
from purebpe.trainers.positional import HASH_MULTIPLIER, PositionalState

#: Pieces that make long runs and multi-byte sequences: overlapping pairs everywhere.
PIECES = ["0" * 200, "ab" * 50, "a", "0", " ", "\n", "漢字" * 20, "日本語", "😀" * 30, "é", "ab\n"]


@st.composite
def run_corpora(draw: st.DrawFn, specials: List[str]) -> List[str]:
    """Texts glued from :data:`PIECES`, with the generic generated texts mixed in."""
    texts = draw(corpora(special_tokens=specials))
    glued = draw(st.lists(st.lists(st.sampled_from(PIECES), max_size=6).map("".join), max_size=4))
    texts = texts + glued + draw(st.lists(st.sampled_from(glued or [""]), max_size=3))
    if specials:
        texts = [text + draw(st.sampled_from(specials)) + text for text in texts]
    return texts


def train_both(
    texts: List[str], specials: List[str], pretokenizer: str, vocab_size: int, **options: object
) -> None:
    counts = purebpe.count_from_iterator(texts, specials, pretokenizer=pretokenizer)
    expected = purebpe.train_from_counts(counts, vocab_size, variant="naive", **options)  # type: ignore[arg-type]
    got = purebpe.train_from_counts(counts, vocab_size, variant="positional", **options)  # type: ignore[arg-type]
    assert got.merges == expected.merges
    assert got.vocab == expected.vocab


@settings(max_examples=100)
@given(data=st.data())
def test_positional_equals_naive_on_runs_cjk_emoji_and_specials(data: st.DataObject) -> None:
    specials = data.draw(special_tokens())
    texts = data.draw(run_corpora(specials))
    pretokenizer = data.draw(st.sampled_from(["gpt2", "none"]))
    vocab_size = 256 + len(specials) + data.draw(st.integers(0, 300))
    options = data.draw(
        st.fixed_dictionaries(
            {"min_frequency": st.integers(1, 3), "max_token_length": st.none() | st.integers(1, 8)}
        )
    )
    train_both(texts, specials, pretokenizer, vocab_size, **options)


@pytest.mark.parametrize("pretokenizer", ["gpt2", "none"])
def test_runs_merge_left_to_right(pretokenizer: str) -> None:
    model = purebpe.train_from_iterator(
        ["0" * 7, "abababa"], 262, pretokenizer=pretokenizer, variant="positional"
    )
    # "0"*7: (0,0) x6 -> 00 00 00 0: (00,00) x2 -> 0000 00 0 ...; "abababa": (a,b),(b,a) x3.
    assert model.merges[:2] == [(b"0", b"0"), (b"b", b"a")]
    train_both(["0" * 7, "abababa", "0" * 200, "ab" * 50], [], pretokenizer, 400)


# --------------------------------------------------------------------------------------
# White box: the state after every merge equals a recount from scratch
# --------------------------------------------------------------------------------------
def decode(state: PositionalState) -> Iterator[Tuple[List[int], int]]:
    """The sequences in ``state.tokens`` with their weights, checking the cell layout."""
    tokens, token_len, mark = state.tokens, state.token_len, state.mark
    assert tokens[0] == mark and tokens[len(tokens) - 1] == mark
    group = 0
    p = 1
    while p < len(tokens):
        while state.group_starts[group + 1] <= p:
            group += 1
        sequence = []
        while tokens[p] != mark:
            token = tokens[p]
            n = token_len[token]
            assert tokens[p + n - 1] == token, "a token's last cell holds its id"
            assert all(tokens[i] == mark for i in range(p + 1, p + n - 1)), "inner cells"
            sequence.append(token)
            p += n
        yield sequence, state.group_weights[group]
        p += 1


def check_state(state: PositionalState, expected_words: Counter) -> None:  # type: ignore[type-arg]
    sequences = list(decode(state))
    got: Counter = Counter()  # type: ignore[type-arg]
    for sequence, weight in sequences:
        if len(sequence) > 1:
            got[tuple(sequence)] += weight
    assert got == expected_words
    full: Dict[int, int] = {}
    where: Dict[int, List[int]] = {}
    p = 1
    for sequence, weight in sequences:
        for left, right in zip(sequence, sequence[1:]):
            pair = left << PAIR_SHIFT | right
            full[pair] = full.get(pair, 0) + weight
            where.setdefault(pair, []).append(p)
            p += state.token_len[left]
        p += state.token_len[sequence[-1]] + 1
    sums = [0] * (state.mask + 1)  # of the untracked pairs
    for pair, count in full.items():
        if pair not in state.pair_counts:
            left, right = unpack_pair(pair)
            sums[(left * HASH_MULTIPLIER + right) & state.mask] += count
    assert list(state.sums) == sums
    for pair, count in full.items():
        left, right = unpack_pair(pair)
        if count >= state.floor and state.token_len[left] + state.token_len[right] <= state.max_length:
            assert pair in state.pair_counts, "every pair at the floor is tracked"
    stale = stored = 0
    for pair, count in state.pair_counts.items():
        assert full.get(pair) == count
    for pair, positions in state.pair_positions.items():
        listed = list(positions)
        assert listed == sorted(set(listed)), "position lists increase strictly"
        left, right = unpack_pair(pair)
        live = [
            p for p in listed if state.tokens[p] == left and state.tokens[p + state.token_len[left]] == right
        ]
        if pair in state.pair_counts:
            assert live == where[pair], "a tracked pair lists all its live positions"
        else:
            assert live == [], "a lost pair's list is all stale"
        stored += len(listed)
        stale += len(listed) - len(live)
    assert (state.stored, state.stale) == (stored, stale)
    assert state.stale <= positional.STALE_FRACTION * state.stored or state.stored == 0
    heap_counts = {pair: -negative for negative, _, _, pair in state.heap}
    for pair, count in state.pair_counts.items():
        if count >= state.min_frequency:
            assert heap_counts.get(pair, 0) >= count, "the lazy heap bounds every count"


def run_checked(
    words: Dict[bytes, int], buckets: Optional[int] = None, **options: object
) -> List[Tuple[bytes, bytes]]:
    """Step ``PositionalState`` and naive side by side, checking the state at every step."""
    table = WordTable.from_word_counts(words, **options)  # type: ignore[arg-type]
    oracle = WordTable.from_word_counts(words, **options)  # type: ignore[arg-type]
    state = PositionalState(table, buckets)
    assert table.words == []
    steps = naive.train(oracle)
    while True:
        expected = next(steps, None)  # naive's words now hold every earlier merge
        check_state(state, Counter({tuple(w): c for w, c in zip(oracle.words, oracle.counts) if len(w) > 1}))
        best = state.pop_best()
        if expected is None:
            assert best is None
            return table.merges
        assert best is not None and unpack_pair(best) == expected
        state.merge(best, table.add_token(*expected))


@settings(max_examples=200)
@given(
    words=word_counts(max_length=24),
    buckets=st.sampled_from([None, 1, 2, 8]),
    divisor=st.sampled_from([2, 3, 16]),
    stale_fraction=st.sampled_from([0.0, 0.5, 0.75, 2.0]),
    share=st.sampled_from([1, 16, 1 << 20]),
    min_frequency=st.integers(1, 3),
    max_token_length=st.one_of(st.none(), st.integers(2, 5)),
)
def test_state_equals_recount_after_every_merge(
    words: Dict[bytes, int],
    buckets: Optional[int],
    divisor: int,
    stale_fraction: float,
    share: int,
    min_frequency: int,
    max_token_length: Optional[int],
) -> None:
    with (
        mock.patch.object(positional, "FLOOR_DIVISOR", divisor),
        mock.patch.object(positional, "STALE_FRACTION", stale_fraction),
        mock.patch.object(positional, "PASS_SHARE", share),
    ):
        run_checked(words, buckets, min_frequency=min_frequency, max_token_length=max_token_length)


def test_state_on_runs_with_one_bucket() -> None:
    words = {b"0" * 200: 1, b"ab" * 50: 3, "漢字漢字".encode(): 2, "😀😀😀".encode(): 4}
    merges = run_checked(words, buckets=1)
    # (0,0) x199; then (a,b) 50x3 beats (00,00) 99x1; then (ab,ab) 49x3 beats it again.
    assert merges[:3] == [(b"0", b"0"), (b"a", b"b"), (b"ab", b"ab")]


@pytest.mark.parametrize("scale", [1 << 31, 1 << 63])
def test_astronomical_counts_use_wider_bucket_sums(scale: int) -> None:
    words = {b"abcab": scale, b"bcbc": scale + 1, b"abab": 3 * scale, b"cc": 1}
    for buckets in (None, 2):
        merges = run_checked(words, buckets)
        # (a,b) 8 x scale; then (ab,ab) 3 x scale beats (b,c) 2 x scale + 2, which is next.
        assert merges[:3] == [(b"a", b"b"), (b"ab", b"ab"), (b"b", b"c")]


def test_trainer_empties_the_word_list_and_yields_before_updating() -> None:
    table = WordTable.from_word_counts({b"abab": 2, b"b": 1})
    steps = positional.train(table)
    assert next(steps) == (ord("a"), ord("b")) and table.words == []
    assert table.merges == [(b"a", b"b")]
    assert next(steps) == (256, 256) and next(steps, None) is None


# --------------------------------------------------------------------------------------
# Wide ids, initial merges, long lines, real text
# --------------------------------------------------------------------------------------
def test_ids_past_65535_switch_to_a_wide_array() -> None:
    words = {b"abcabcabd" * 3: 2, b"xyxyxyxyz": 3}
    tables = [WordTable.from_word_counts(words) for _ in range(2)]
    for table in tables:  # unused tokens push the new ids past the 16-bit mark
        table.token_bytes.extend(b"\xff\xfe" + i.to_bytes(3, "big") for i in range(65530 - 256))
    state = PositionalState(tables[0])
    # (the compiled build's cells are a vec[i32] from the start: nothing to widen)
    typecodes = [getattr(state.tokens, "typecode", "vec")]
    got = []
    while True:
        best = state.pop_best()
        if best is None:
            break
        state.merge(best, tables[0].add_token(*unpack_pair(best)))
        got.append(tables[0].merges[-1])
    typecodes.append(getattr(state.tokens, "typecode", "vec"))
    assert typecodes == (["vec", "vec"] if positional.COMPILED else ["H", "I"])
    assert len(tables[0].token_bytes) > 65536
    for _ in naive.train(tables[1]):
        pass
    assert tables[1].merges == got


@pytest.mark.parametrize("pretokenizer", ["gpt2", "none"])
def test_continuing_from_initial_merges(pretokenizer: str) -> None:
    texts = ["漢字漢字 ab ab 0000\n" * 3, "日本語" * 5 + "\n", "ab" * 30]
    first = purebpe.train_from_iterator(texts, 270, pretokenizer=pretokenizer, variant="naive")
    counts = purebpe.count_from_iterator(texts, pretokenizer=pretokenizer)
    expected = purebpe.train_from_counts(counts, 320, variant="naive", initial=first)
    got = purebpe.train_from_counts(counts, 320, variant="positional", initial=first)
    assert got == expected


def test_one_long_line() -> None:
    text = "".join(default_corpus()[:3]).replace("\n", " ")[:12000] + "漢字" * 500
    train_both([text], [], "none", 400)


@pytest.mark.parametrize("pretokenizer", ["gpt2", "none"])
def test_equals_naive_on_pydoc_topics(pretokenizer: str) -> None:
    texts = default_corpus()
    # naive recounts every pair at every merge: a few dozen merges keep this under 15 s.
    vocab_size = 400 if pretokenizer == "gpt2" else 280
    train_both(texts, ["<|endoftext|>"], pretokenizer, vocab_size)
