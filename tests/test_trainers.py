"""Every trainer variant learns exactly what the naive trainer (the specification) learns.

* Hypothesis: generated corpora (ties, runs like ``aaaa``, multi-byte UTF-8, special
  tokens, ``min_frequency``, ``max_token_length``, vocab sizes beyond reach, empty input)
  give every variant the same merges and vocab as ``naive``, step by step as well;
* the fine-grained pair index stays equal to a recount from scratch after every merge, and
  the argument the bucket queue rests on (the maximum count never increases) holds;
* the tie-break traps of Stanford CS336 (equal counts, bytes differing only in length or
  only in the second element), which also catch a heap key that mishandles prefixes
  (the key itself is proven in ``test_core.py``);
* the real text of ``pydoc_data.topics``: all variants identical at vocab 2000.
"""

from __future__ import annotations

import platform
from typing import Dict, Iterator, List, Optional, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import word_counts

import purebpe
from purebpe.core import PAIR_SHIFT, WordTable, merge_word, unpack_pair
from purebpe.corpus import default_corpus
from purebpe.testing.strategies import corpora, special_tokens
from purebpe.trainers import AUTO, VARIANTS, get_trainer, interpreter_key, resolve_variant
from purebpe.trainers.pair_index import PairIndex

FAST = [name for name in VARIANTS if name != "naive"]
ALL = list(VARIANTS)
#: The variants that keep merging the words of ``table.words`` in place (others, such as
#: ``positional``, move the corpus into structures of their own).
KEEP_WORDS = ("naive", "incremental", "fine_grained", "heap", "sorted", "bucket")


def train_all(counts: purebpe.WordCounts, vocab_size: int, **options: object) -> Dict[str, purebpe.BPEModel]:
    train = purebpe.train_from_counts
    return {
        variant: train(counts, vocab_size, variant=variant, **options)  # type: ignore[arg-type]
        for variant in ALL
    }


def assert_all_equal(models: Dict[str, purebpe.BPEModel]) -> None:
    expected = models["naive"]
    for variant, model in models.items():
        assert model.merges == expected.merges, variant
        assert model.vocab == expected.vocab, variant


def lockstep(
    words: Dict[bytes, int],
    min_frequency: int = 1,
    max_token_length: Optional[int] = None,
    tie_break: str = "canonical",
) -> List[Tuple[bytes, bytes]]:
    """Pull every variant's generator one merge at a time; each step must agree."""
    tables = {
        variant: WordTable.from_word_counts(
            words, min_frequency=min_frequency, max_token_length=max_token_length, tie_break=tie_break
        )
        for variant in ALL
    }
    trainers = {variant: get_trainer(variant)(table) for variant, table in tables.items()}
    merges: List[Tuple[bytes, bytes]] = []
    while True:
        steps = {variant: next(trainer, None) for variant, trainer in trainers.items()}
        expected = steps["naive"]
        for variant, step in steps.items():
            if expected is None:
                assert step is None, f"{variant} merged past the end: {step}"
            else:
                assert step is not None, f"{variant} stopped after {len(merges)} merges"
                table = tables[variant]
                assert (table.token_bytes[step[0]], table.token_bytes[step[1]]) == table.merges[-1]
                assert table.merges[-1] == tables["naive"].merges[-1], (variant, len(merges))
        if expected is None:
            return merges
        merges.append(tables["naive"].merges[-1])


# --------------------------------------------------------------------------------------
# Equivalence with naive on generated corpora
# --------------------------------------------------------------------------------------
@settings(max_examples=100)
@given(
    data=st.data(),
    specials=special_tokens(),
    pretokenizer=st.sampled_from(["gpt2", "none"]),
    extra=st.integers(1, 400),
    min_frequency=st.one_of(st.just(1), st.integers(2, 3)),
    max_token_length=st.one_of(st.none(), st.integers(2, 8)),
)
def test_variants_equal_naive_on_generated_corpora(
    data: st.DataObject,
    specials: List[str],
    pretokenizer: str,
    extra: int,
    min_frequency: int,
    max_token_length: Optional[int],
) -> None:
    # Hypothesis favours tiny corpora, where nothing merges (test_empty_input_learns_nothing
    # covers those): at least a few characters, and half the time a few dozen.
    least = data.draw(st.sampled_from([4, 30]), label="least characters")
    corpus = corpora(special_tokens=specials).filter(lambda texts: len("".join(texts)) >= least)
    texts = data.draw(corpus, label="texts")
    counts = purebpe.count_from_iterator(texts, specials, pretokenizer=pretokenizer)
    vocab_size = 256 + len(specials) + extra  # often more merges than the corpus allows
    models = train_all(counts, vocab_size, min_frequency=min_frequency, max_token_length=max_token_length)
    assert_all_equal(models)
    model = models["naive"]
    # Step by step too, as far as the corpus allows.
    steps = lockstep(counts.words, min_frequency, max_token_length)
    assert model.merges == steps[: vocab_size - 256 - len(specials)]
    assert len(model.vocab) <= vocab_size
    assert [model.vocab[i] for i in range(256)] == [bytes([b]) for b in range(256)]
    tail = [model.vocab[i] for i in range(len(model.vocab) - len(specials), len(model.vocab))]
    assert tail == [s.encode("utf-8") for s in specials]


@settings(max_examples=150)
@given(
    words=word_counts(),
    min_frequency=st.integers(1, 3),
    max_token_length=st.one_of(st.none(), st.integers(2, 5)),
)
def test_variants_agree_step_by_step(
    words: Dict[bytes, int], min_frequency: int, max_token_length: Optional[int]
) -> None:
    merges = lockstep(words, min_frequency, max_token_length)
    if max_token_length is not None:
        assert all(len(left) + len(right) <= max_token_length for left, right in merges)


def test_empty_input_learns_nothing() -> None:
    for texts in ([], [""], ["<s>"]):
        counts = purebpe.count_from_iterator(texts, ["<s>"])
        for variant, model in train_all(counts, 1000).items():
            assert model.merges == [], variant
            assert model.vocab == {**{i: bytes([i]) for i in range(256)}, 256: b"<s>"}


def test_single_byte_words_learn_nothing() -> None:
    words = {b"a": 5, b"b": 3}
    assert lockstep(words) == []


# --------------------------------------------------------------------------------------
# Hand-checked examples: overlapping runs, min_frequency, max_token_length, traps
# --------------------------------------------------------------------------------------
def test_overlapping_runs() -> None:
    # a a a a: (a, a) x3 -> merge, left to right: aa aa; then (aa, aa) x1.
    # a a a (x2): (a, a) x2 each -> aa a; then (aa, a).
    words = {b"aaaa": 1, b"aaa": 2}
    # (a, a): 3 + 2*2 = 7. After: [aa, aa] x1, [aa, a] x2 -> (aa, aa) 1, (aa, a) 2.
    assert lockstep(words) == [(b"a", b"a"), (b"aa", b"a"), (b"aa", b"aa")]


def test_min_frequency_stops_training() -> None:
    # (a, b) x3, (b, c) x3, (x, y) x1: two merges reach 2, (x, y) never does.
    words = {b"abc": 3, b"xy": 1}
    assert lockstep(words, min_frequency=2) == [(b"b", b"c"), (b"a", b"bc")]
    assert lockstep(words, min_frequency=4) == []


def test_max_token_length_skips_long_merges() -> None:
    # abab x5: (a, b) 10 -> ab ab; (ab, ab) would make 4 bytes.
    words = {b"abab": 5}
    assert lockstep(words, max_token_length=3) == [(b"a", b"b")]
    assert lockstep(words, max_token_length=4) == [(b"a", b"b"), (b"ab", b"ab")]


def test_cs336_tie_break_traps() -> None:
    # First elements differ only in length: after (a, b), (ab, b) and (a, c) tie at 3.
    # ("ab", "b") > ("a", "c") because b"ab" > b"a"; comparing the concatenations
    # ("abb" < "ac") or a reversed key without a terminator picks (a, c).
    first = {b"abb": 3, b"ac": 3, b"ab": 5}
    assert lockstep(first) == [(b"a", b"b"), (b"ab", b"b"), (b"a", b"c")]
    # Second elements differ only in length: (x, ab) and (x, a) tie at 3; b"ab" > b"a".
    second = {b"ab": 5, b"xab": 3, b"xa": 3}
    assert lockstep(second) == [(b"a", b"b"), (b"x", b"ab"), (b"x", b"a")]
    # Second elements differ only in value: (x, c) beats (x, b).
    value = {b"xb": 2, b"xc": 2}
    assert lockstep(value) == [(b"x", b"c"), (b"x", b"b")]
    # Bytes, not ids: the merged token aa has id 256 > ord("b"), but b"b" > b"aa".
    ids = {b"aa": 9, b"aax": 3, b"bx": 3}
    assert lockstep(ids) == [(b"a", b"a"), (b"b", b"x"), (b"aa", b"x")]


@settings(max_examples=150)
@given(
    words=word_counts(),
    min_frequency=st.integers(1, 3),
    max_token_length=st.one_of(st.none(), st.integers(2, 5)),
)
def test_variants_agree_step_by_step_under_hf_ties(
    words: Dict[bytes, int], min_frequency: int, max_token_length: Optional[int]
) -> None:
    lockstep(words, min_frequency, max_token_length, tie_break="hf")


def test_hf_tie_break_takes_the_smallest_hf_ids() -> None:
    # (!, a) and (a, !) tie: canonical takes the greatest bytes, (a, !); Hugging Face the
    # smallest ids, and "!" is its first byte (id 0), "a" its 65th.
    words = {b"!a": 1, b"a!": 1}
    assert lockstep(words)[0] == (b"a", b"!")
    assert lockstep(words, tie_break="hf")[0] == (b"!", b"a")
    # The space is "\u0120" in GPT-2's alphabet: after every printable ASCII byte.
    assert lockstep({b" z": 1, b"z~": 1}, tie_break="hf")[0] == (b"z", b"~")
    # A merged token's id (256 for aa) follows every byte's: (b, aa) beats (aa, b).
    assert lockstep({b"aa": 5, b"aab": 2, b"baa": 2}, tie_break="hf")[:2] == [(b"a", b"a"), (b"b", b"aa")]
    with pytest.raises(purebpe.PureBPEError, match="unknown tie_break 'least'"):
        purebpe.train_from_iterator(["ab"], 300, tie_break="least")


# --------------------------------------------------------------------------------------
# The fine-grained index and the bucket argument
# --------------------------------------------------------------------------------------
def recount(words: List[List[int]], counts: List[int]) -> Tuple[Dict[int, int], Dict[int, Dict[int, int]]]:
    """Pair counts and the occurrence index from scratch, independently of PairIndex."""
    pair_counts: Dict[int, int] = {}
    pair_to_words: Dict[int, Dict[int, int]] = {}
    for word_id, word in enumerate(words):
        for left, right in zip(word, word[1:]):
            pair = left << PAIR_SHIFT | right
            pair_counts[pair] = pair_counts.get(pair, 0) + counts[word_id]
            in_words = pair_to_words.setdefault(pair, {})
            in_words[word_id] = in_words.get(word_id, 0) + 1
    return pair_counts, pair_to_words


@settings(max_examples=150)
@given(words=word_counts(max_length=16))
def test_pair_index_equals_recount_after_every_merge(words: Dict[bytes, int]) -> None:
    table = WordTable.from_word_counts(words)
    expected_words = [list(word) for word in table.words]
    index = PairIndex(table)
    while True:
        assert (index.pair_counts, index.pair_to_words) == recount(expected_words, table.counts)
        best = table.best_pair(index.pair_counts)
        if best is None:
            break
        left, right = unpack_pair(best)
        new_id = table.add_token(left, right)
        before = dict(index.pair_counts)
        new_pairs: List[int] = []
        old_counts: Dict[int, int] = {}
        index.merge(left, right, new_id, new_pairs, old_counts)
        expected_words = [merge_word(word, left, right, new_id) for word in expected_words]
        assert [list(word) for word in table.words] == expected_words
        # New pairs are exactly the pairs with the new token, each reported once.
        assert sorted(new_pairs) == sorted(p for p in index.pair_counts if new_id in unpack_pair(p))
        # old_counts holds the earlier count of exactly the pairs that fell.
        fell = {p: c for p, c in before.items() if p != best and index.pair_counts.get(p, 0) < c}
        assert old_counts == fell
        # The bucket queue's argument: nothing rises above the merged pair's count.
        assert all(count <= before[best] for count in index.pair_counts.values())
        assert all(index.pair_counts.get(p, 0) <= c for p, c in before.items())


@settings(max_examples=100)
@given(words=word_counts())
def test_merged_counts_never_increase(words: Dict[bytes, int]) -> None:
    table = WordTable.from_word_counts(words)
    merged_counts = []
    for left, right in get_trainer("naive")(table):
        merged_counts.append(
            sum(
                count * sum(1 for i in range(len(word) - 1) if (word[i], word[i + 1]) == (left, right))
                for word, count in zip(table.words, table.counts)
            )
        )
    assert merged_counts == sorted(merged_counts, reverse=True)


# --------------------------------------------------------------------------------------
# The trainer protocol and the registry
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", ALL)
def test_trainer_updates_only_when_resumed(variant: str) -> None:
    table = WordTable.from_word_counts({b"abab": 2, b"ab": 1})
    trainer: Iterator[Tuple[int, int]] = get_trainer(variant)(table)
    assert next(trainer) == (ord("a"), ord("b"))
    assert table.merges == [(b"a", b"b")]
    if variant in KEEP_WORDS:
        assert [bytes(word) for word in table.words] == [b"abab", b"ab"]  # not merged yet
    assert next(trainer) == (256, 256)
    if variant in KEEP_WORDS:
        assert [list(word) for word in table.words] == [[256, 256], [256]]
    assert next(trainer, None) is None
    assert table.merges == [(b"a", b"b"), (b"ab", b"ab")]


def test_registry() -> None:
    assert set(VARIANTS) >= {"naive", "incremental", "fine_grained", "heap", "sorted", "bucket"}
    for implementation in ("CPython", "PyPy", "CPython-compiled"):
        assert AUTO[implementation] in VARIANTS and AUTO[implementation] != "naive"
    assert resolve_variant("auto") == AUTO[interpreter_key()]
    # The compiled build (setup.py's PUREBPE_COMPILE=1) is told apart by its trainers' files.
    import purebpe.trainers.positional as positional

    compiled = not str(positional.__file__).endswith(".py")
    assert interpreter_key() == platform.python_implementation() + ("-compiled" if compiled else "")
    with pytest.raises(purebpe.PureBPEError, match="unknown variant 'fast'"):
        resolve_variant("fast")


def test_auto_trains_long_words_with_positional(monkeypatch: pytest.MonkeyPatch) -> None:
    """bucket rewrites a whole word at every merge in it: quadratic on one long word."""
    from purebpe.trainers import LONG_WORD_BYTES, choose_variant

    default = AUTO[interpreter_key()]
    short_words = [b"word%d" % i for i in range(1000)]
    assert choose_variant(short_words) == default
    assert choose_variant(short_words + [b"a" * 10**6]) == "positional"
    assert choose_variant([b"a" * (LONG_WORD_BYTES + 1)]) == "positional"
    chosen: List[str] = []
    real_get_trainer = purebpe.training.get_trainer
    monkeypatch.setattr(
        purebpe.training, "get_trainer", lambda name: chosen.append(name) or real_get_trainer(name)
    )
    counts = purebpe.count_from_iterator(["ab" * 5000], pretokenizer="none")
    assert purebpe.train_from_counts(counts, 300) == purebpe.train_from_counts(counts, 300, variant="bucket")
    assert chosen == ["positional", "bucket"]


# --------------------------------------------------------------------------------------
# Real text
# --------------------------------------------------------------------------------------
def test_all_variants_identical_on_pydoc_topics() -> None:
    counts = purebpe.count_from_iterator(default_corpus(), ["<|endoftext|>"])
    # naive (minutes at vocab 2000) is the oracle at vocab 400; at 2000 the fast variants
    # are compared with incremental, itself proven equal to naive above.
    small = {variant: purebpe.train_from_counts(counts, 400, variant=variant) for variant in ALL}
    assert_all_equal(small)
    assert len(small["naive"].merges) == 400 - 256 - 1
    large = {variant: purebpe.train_from_counts(counts, 2000, variant=variant) for variant in FAST}
    expected = large["incremental"]
    assert len(expected.merges) == 2000 - 256 - 1
    assert expected.merges[: 400 - 257] == small["naive"].merges
    for variant, model in large.items():
        assert model.merges == expected.merges, variant
        assert model.vocab == expected.vocab, variant
