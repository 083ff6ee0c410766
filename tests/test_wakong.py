"""Wakong span masking: construction properties, the law of the schemes, seed-for-seed
agreement with the stdlib calls (every interpreter) and with the ``wakong`` package
(CPython >= 3.10 where it is installed), the helpers, and ``purebpe mask``.
"""

from __future__ import annotations

import io
import math
import struct
import sys
from functools import lru_cache
from pathlib import Path
from random import Random
from typing import Any, Dict, List, Sequence, Tuple

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from purebpe import cli
from purebpe.errors import PureBPEError
from purebpe.wakong import (
    CUMULATIVE_WEIGHTS,
    DEFAULT_CONFIG,
    MAX_SPAN,
    POISSON_RATE,
    PROPOSED_MASK_RATE,
    PUBLISHED_CONFIG,
    PUBLISHED_CUMULATIVE_WEIGHTS,
    MaskConfig,
    MaskScheme,
    Wakong,
    apply_mask,
    cumulative_weights,
    mask_batch,
    mask_scheme,
    show,
    span_corruption,
)

seeds = st.integers(min_value=0, max_value=2**64)
# The issue's constants, written out so that the expected laws below do not take them
# from the module under test.
SPEC_RATE, SPEC_POISSON_RATE, SPEC_MAX_SPAN = 0.188, 4.2, 10
CONFIGS = [DEFAULT_CONFIG, PUBLISHED_CONFIG]


def check_construction(seq_len: int, scheme: MaskScheme, config: MaskConfig = DEFAULT_CONFIG) -> None:
    """Everything the construction guarantees about one scheme."""
    if seq_len < 2:
        assert scheme == []
        return
    for start, length in scheme:
        assert 0 <= length <= config.max_span
        assert 0 <= start and start + length <= seq_len
    # Sorted, and at least two unmasked words between consecutive spans (one guard slot
    # per span plus distinct insert slots), which is more than the one the issue states.
    for (start, length), (next_start, _) in zip(scheme, scheme[1:]):
        assert next_start - (start + length) >= 2
    if scheme:
        # Unshifted schemes end before the last word, shifted ones start after the first.
        last_start, last_length = scheme[-1]
        assert scheme[0][0] >= 1 or last_start + last_length <= seq_len - 1
    # The spans and their masks spend the budget, overshooting by at most one; the budget
    # is floor or ceil of seq_len * rate, capped at seq_len // 2.
    exact = seq_len * config.rate
    low = min(math.floor(exact), seq_len // 2)
    high = min(math.ceil(exact), seq_len // 2)
    spent = sum(length + 1 for _, length in scheme)
    assert low <= spent <= high + 1
    if high == 0:
        assert scheme == []


def stdlib_scheme(rng: Random, seq_len: int, config: MaskConfig = DEFAULT_CONFIG) -> MaskScheme:
    """The algorithm as the issue states it, through Random's own choices/shuffle/sample."""
    if seq_len < 2:
        return []
    exact = seq_len * config.rate
    budget = int(exact) + (rng.random() < exact - int(exact))
    budget = min(budget, seq_len // 2)
    spans: List[int] = []
    while budget > 0:
        cap = min(config.max_span, budget)
        span = rng.choices(range(cap + 1), cum_weights=config.weights[cap - 1])[0]
        spans.append(span)
        budget -= span + 1
    rng.shuffle(spans)
    n_slots = seq_len - sum(spans) - len(spans) + 1
    slots = sorted(rng.sample(range(n_slots), len(spans)))
    shift = int(rng.random() < 0.5)
    scheme, room = [], 0
    for slot, span in zip(slots, spans):
        scheme.append((slot + room + shift, span))
        room += span + 1
    return scheme


# ---------------------------------------------------------------------------------------
# The span-length tables
# ---------------------------------------------------------------------------------------


def test_constants_and_defaults_are_the_issues() -> None:
    assert (PROPOSED_MASK_RATE, POISSON_RATE, MAX_SPAN) == (SPEC_RATE, SPEC_POISSON_RATE, SPEC_MAX_SPAN)
    assert (DEFAULT_CONFIG.rate, DEFAULT_CONFIG.poisson_rate, DEFAULT_CONFIG.max_span) == (
        SPEC_RATE,
        SPEC_POISSON_RATE,
        SPEC_MAX_SPAN,
    )


@pytest.mark.parametrize("table", [CUMULATIVE_WEIGHTS, PUBLISHED_CUMULATIVE_WEIGHTS])
def test_tables_have_one_cumulative_row_per_cap(table: Sequence[Sequence[float]]) -> None:
    assert len(table) == MAX_SPAN
    for cap, row in enumerate(table, 1):
        assert len(row) == cap + 1
        assert all(a <= b for a, b in zip(row, row[1:]))
        assert row[0] > 0 and 0.9999999 <= row[-1] <= 1.0


def test_float64_table_is_the_renormalised_poisson_law() -> None:
    # Independent of how the module computes it: consecutive pmf terms of Poisson(rate)
    # have ratio rate / k, and row ``cap - 1`` must end at exactly 1.
    for cap, row in enumerate(CUMULATIVE_WEIGHTS, 1):
        assert row[-1] == 1.0
        pmf = [row[0]] + [b - a for a, b in zip(row, row[1:])]
        for k in range(1, cap + 1):
            assert pmf[k] / pmf[k - 1] == pytest.approx(SPEC_POISSON_RATE / k, rel=1e-12)


def test_published_table_is_float32_close_to_the_exact_law() -> None:
    for exact_row, published_row in zip(CUMULATIVE_WEIGHTS, PUBLISHED_CUMULATIVE_WEIGHTS):
        for exact, published in zip(exact_row, published_row):
            assert struct.unpack("f", struct.pack("f", published))[0] == published
            # float32 has a 2**-24 relative step; JAX's float32 arithmetic adds a few.
            assert abs(exact - published) < 8 * 2**-24


def test_other_parameters_build_their_own_table() -> None:
    table = cumulative_weights(2.0, 3)
    assert [len(row) for row in table] == [2, 3, 4]
    assert table[0][0] == pytest.approx(1 / 3)  # weights 1 : 2 for lengths 0, 1
    huge = cumulative_weights(900.0, 5)  # exp(-900) underflows; renormalising must not
    assert all(row[-1] == 1.0 and all(map(math.isfinite, row)) for row in huge)


# ---------------------------------------------------------------------------------------
# Properties of single schemes
# ---------------------------------------------------------------------------------------


@given(seq_len=st.integers(0, 5000), seed=seeds)
@example(seq_len=0, seed=0)
@example(seq_len=1, seed=0)
@example(seq_len=2, seed=0)
@example(seq_len=5000, seed=2**64)
def test_scheme_properties(seq_len: int, seed: int) -> None:
    scheme = mask_scheme(Random(seed), seq_len)
    check_construction(seq_len, scheme)
    assert mask_scheme(Random(seed), seq_len) == scheme
    words = [f"w{i}" for i in range(seq_len)]
    masked = sum(length for _, length in scheme)
    assert len(apply_mask(words, scheme)) == seq_len - masked + len(scheme)


def test_every_length_up_to_5000() -> None:
    schemes = mask_batch(Random(5000), range(5001))
    for seq_len, scheme in enumerate(schemes):
        check_construction(seq_len, scheme)


def test_short_sequences_are_left_alone_and_draw_nothing() -> None:
    rng = Random(3)
    before = rng.getstate()
    assert mask_scheme(rng, 0) == [] and mask_scheme(rng, 1) == []
    assert rng.getstate() == before
    assert Wakong(3)(["only"]) == ["only"]


def test_a_million_words() -> None:
    seq_len = 10**6
    scheme = mask_scheme(Random(6), seq_len)
    check_construction(seq_len, scheme)
    # The budget is 188,000 words, of which one per span is the mask itself; the number of
    # spans (steps of mean ~5.19 and variance ~4.1 through the budget) has a standard
    # deviation of about sqrt(188000 * 4.1 / 5.19**3) = 74, so the rate is 0.1518 give or
    # take 0.0001: the issue's 15 % +- 0.5 pp is met with a huge margin.
    assert abs(sum(length for _, length in scheme) / seq_len - 0.15) < 0.005


@given(
    seq_len=st.integers(0, 400),
    seed=seeds,
    rate=st.floats(0, 1, exclude_min=True, exclude_max=True),
    poisson_rate=st.floats(0.01, 50),
    max_span=st.integers(1, 25),
)
@example(seq_len=3, seed=0, rate=0.999, poisson_rate=0.01, max_span=1)
def test_any_valid_parameters_give_valid_schemes(
    seq_len: int, seed: int, rate: float, poisson_rate: float, max_span: int
) -> None:
    # Rates near 1 included: the budget cap keeps every layout feasible.
    config = MaskConfig(rate, poisson_rate, max_span)
    rng, peer = Random(seed), Random(seed)
    scheme = mask_scheme(rng, seq_len, config)
    check_construction(seq_len, scheme, config)
    assert scheme == stdlib_scheme(peer, seq_len, config)
    assert rng.getstate() == peer.getstate()


# ---------------------------------------------------------------------------------------
# Same random stream as Random's own methods (so on PyPy and 3.9 too)
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("config", CONFIGS, ids=["float64", "published"])
def test_same_draws_as_the_stdlib_methods(config: MaskConfig) -> None:
    # Lengths 0..700 cover sample's pool branch (short) and set branch (long), and both
    # span loops; the rng states must agree afterwards too (same number of draws).
    for seq_len in list(range(701)) + [1000, 2048, 4999]:
        rng, peer = Random(seq_len), Random(seq_len)
        assert mask_scheme(rng, seq_len, config) == stdlib_scheme(peer, seq_len, config)
        assert rng.getstate() == peer.getstate()


def sample_set_size(k: int) -> int:
    """Where CPython's Random.sample switches from a pool to a set of taken slots."""
    return 21 + (4 ** math.ceil(math.log(k * 3, 4)) if k > 5 else 0)


@pytest.mark.parametrize(
    "config, lengths, threshold",
    [
        (DEFAULT_CONFIG, range(22, 30), 21),
        (DEFAULT_CONFIG, range(100, 108), 85),
        (MaskConfig(0.3, 0.5, 2), range(390, 400), 277),  # many short spans: k >= 22
    ],
)
def test_sample_branch_boundaries_draw_like_the_stdlib(
    config: MaskConfig, lengths: range, threshold: int
) -> None:
    # Lengths where the number of insert slots often equals the switch-over point (the
    # pool branch still), where an off-by-one in the threshold would change the draws.
    rng, peer = Random(threshold), Random(threshold)
    on_boundary = 0
    for _ in range(300):
        for seq_len in lengths:
            scheme = mask_scheme(rng, seq_len, config)
            assert scheme == stdlib_scheme(peer, seq_len, config)
            n_slots = seq_len - sum(length + 1 for _, length in scheme) + 1
            on_boundary += n_slots == sample_set_size(len(scheme)) == threshold
    assert rng.getstate() == peer.getstate()
    assert on_boundary >= 10


class ScriptedRandom(Random):
    """A Random whose ``random()`` first returns scripted values (then its own)."""

    def __new__(cls, seed: int, script: List[float]) -> "ScriptedRandom":
        # Before Python 3.11, Random.__new__ takes (and checks) the constructor's arguments.
        return super().__new__(cls, seed)

    def __init__(self, seed: int, script: List[float]) -> None:
        super().__init__(seed)
        self.script = script[::-1]

    def random(self) -> float:
        return self.script.pop() if self.script else super().random()

    def getrandbits(self, k: int) -> int:  # defined, so shuffle and sample still use it
        return super().getrandbits(k)


@pytest.mark.parametrize("k", range(MAX_SPAN))
def test_draws_on_a_table_entry_resolve_like_bisect_right(k: int) -> None:
    # random() exactly equal to the cumulative weight of length k means length k + 1, as
    # Random.choices decides; the float64 rows end in 1.0, so u is random() itself.
    tie = CUMULATIVE_WEIGHTS[MAX_SPAN - 1][k]
    script = [0.0] + [tie] * 100  # 0.0 < the fraction: the budget is ceil(75.2) = 76
    scheme = mask_scheme(ScriptedRandom(1, script), 400)
    assert scheme == stdlib_scheme(ScriptedRandom(1, script), 400)
    # Each draw from the full row (while >= 10 of the 76 is left) spends k + 2.
    full_row_draws = (76 - MAX_SPAN) // (k + 2) + 1
    assert [length for _, length in scheme].count(k + 1) >= full_row_draws


@given(seed=seeds, lengths=st.lists(st.integers(0, 3000), max_size=20))
def test_batch_is_successive_schemes(seed: int, lengths: List[int]) -> None:
    rng, peer = Random(seed), Random(seed)
    assert mask_batch(rng, lengths) == [stdlib_scheme(peer, n) for n in lengths]
    assert rng.getstate() == peer.getstate()


def test_wakong_class_continues_one_stream() -> None:
    masker, rng = Wakong("seed"), Random("seed")
    for seq_len in (12, 0, 1, 40, 2, 300):
        words = [str(i) for i in range(seq_len)]
        assert masker(words) == apply_mask(words, mask_scheme(rng, seq_len))
    assert masker([7, 8, 9, 10, 11], mask=-1) == apply_mask([7, 8, 9, 10, 11], mask_scheme(rng, 5), -1)


# ---------------------------------------------------------------------------------------
# The law of the schemes
# ---------------------------------------------------------------------------------------

STAT_LENGTHS = range(2, 257)
STAT_REPEATS = 400  # 102,000 schemes, ~540,000 spans


@pytest.fixture(scope="module")
def uniform_batch() -> Tuple[List[int], List[MaskScheme]]:
    lengths = [n for n in STAT_LENGTHS for _ in range(STAT_REPEATS)]
    return lengths, mask_batch(Random(20240601), lengths)


def poisson_row(cap: int) -> List[float]:
    weights = [SPEC_POISSON_RATE**k / math.factorial(k) for k in range(cap + 1)]
    return [w / sum(weights) for w in weights]


@lru_cache(maxsize=None)
def expected_from_budget(left: int) -> Tuple[float, Tuple[float, ...]]:
    """Exact E[masked words] and E[spans of each length] once ``left`` budget remains."""
    if left <= 0:
        return 0.0, (0.0,) * (SPEC_MAX_SPAN + 1)
    masked, counts = 0.0, [0.0] * (SPEC_MAX_SPAN + 1)
    for span, p in enumerate(poisson_row(min(SPEC_MAX_SPAN, left))):
        rest_masked, rest_counts = expected_from_budget(left - span - 1)
        masked += p * (span + rest_masked)
        for k in range(SPEC_MAX_SPAN + 1):
            counts[k] += p * (rest_counts[k] + (k == span))
    return masked, tuple(counts)


def expected_for_length(seq_len: int) -> Tuple[float, Tuple[float, ...]]:
    exact = seq_len * SPEC_RATE
    floor = math.floor(exact)
    masked, counts = 0.0, [0.0] * (SPEC_MAX_SPAN + 1)
    for budget, p in ((floor, 1 - (exact - floor)), (floor + 1, exact - floor)):
        m, c = expected_from_budget(min(budget, seq_len // 2))
        masked += p * m
        counts = [a + p * b for a, b in zip(counts, c)]
    return masked, tuple(counts)


def test_mask_rate_is_15_percent(uniform_batch: Tuple[List[int], List[MaskScheme]]) -> None:
    lengths, schemes = uniform_batch
    words = sum(lengths)
    rate = sum(length for scheme in schemes for _, length in scheme) / words
    expected = STAT_REPEATS * sum(expected_for_length(n)[0] for n in STAT_LENGTHS) / words
    assert 0.15 - 0.005 < expected < 0.15 + 0.005  # the design target (exactly 0.15170)
    # Hoeffding: each scheme masks between 0 and ceil(0.188 n) words, independently, so
    # P(|rate - expected| >= tol) <= 2 exp(-2 (tol * words)^2 / sum(range^2)) = 1e-9 for
    # tol = sqrt(ln(2e9) / 2 * sum(range^2)) / words (about 0.0022 here).
    sum_range_sq = STAT_REPEATS * sum(math.ceil(n * SPEC_RATE) ** 2 for n in STAT_LENGTHS)
    tol = math.sqrt(math.log(2e9) / 2 * sum_range_sq) / words
    assert abs(rate - expected) < tol
    assert abs(rate - 0.15) < 0.005


def test_span_lengths_follow_the_capped_poisson_law_with_mode_3(
    uniform_batch: Tuple[List[int], List[MaskScheme]],
) -> None:
    lengths, schemes = uniform_batch
    means = {n: expected_for_length(n)[1] for n in STAT_LENGTHS}
    totals = [0] * (SPEC_MAX_SPAN + 1)
    sq_residuals = [0.0] * (SPEC_MAX_SPAN + 1)
    mode_margin, sq_margin_residual = 0, 0.0
    for seq_len, scheme in zip(lengths, schemes):
        counts = [0] * (SPEC_MAX_SPAN + 1)
        for _, length in scheme:
            counts[length] += 1
        mean = means[seq_len]
        for k in range(SPEC_MAX_SPAN + 1):
            totals[k] += counts[k]
            sq_residuals[k] += (counts[k] - mean[k]) ** 2
        mode_margin += counts[3] - counts[4]
        sq_margin_residual += (counts[3] - counts[4] - (mean[3] - mean[4])) ** 2
    # Schemes are independent: the standard error of a total is the root of the summed
    # squared per-scheme residuals around the exact means; 5 standard errors, 11 times,
    # fail by chance with probability under 1e-5.
    for k in range(SPEC_MAX_SPAN + 1):
        expected = sum(means[n][k] for n in STAT_LENGTHS) * STAT_REPEATS
        assert abs(totals[k] - expected) < 5 * math.sqrt(sq_residuals[k]), k
    assert max(range(SPEC_MAX_SPAN + 1), key=totals.__getitem__) == 3
    # Length 3 beats 4 (the raw Poisson(4.2) mode) by ~8 standard errors in expectation.
    assert mode_margin > 5 * math.sqrt(sq_margin_residual)


def test_first_and_last_word_are_masked_alike(uniform_batch: Tuple[List[int], List[MaskScheme]]) -> None:
    lengths, schemes = uniform_batch
    first = last = inserted_first = inserted_last = 0
    for seq_len, scheme in zip(lengths, schemes):
        if not scheme:
            continue
        (start, length), (last_start, last_length) = scheme[0], scheme[-1]
        first += start == 0 and length > 0
        inserted_first += start == 0 and length == 0
        last += last_start + last_length == seq_len and last_length > 0
        inserted_last += last_start == seq_len and last_length == 0
    # The law is symmetric under reversal, and the two events exclude each other (the
    # shift decides), so first - last sums independent -1/0/+1 terms of mean 0 and
    # variance P(first) + P(last): 5 standard errors is 5 * sqrt(first + last). The
    # inequality is strict, so a side that never happens (no shift, or always) fails.
    assert abs(first - last) < 5 * math.sqrt(first + last)
    assert abs(inserted_first - inserted_last) < 5 * math.sqrt(inserted_first + inserted_last)


# ---------------------------------------------------------------------------------------
# apply_mask, span_corruption, show
# ---------------------------------------------------------------------------------------


def test_apply_mask_examples() -> None:
    words = list("abcdefgh")
    scheme = [(0, 0), (1, 3), (6, 1), (8, 0)]
    assert apply_mask(words, scheme) == ["<mask>", "a", "<mask>", "e", "f", "<mask>", "h", "<mask>"]
    assert apply_mask([1, 2, 3], [(1, 1)], 0) == [1, 0, 3]
    assert apply_mask(words, []) == words and apply_mask(words, []) is not words


@given(seq_len=st.integers(0, 600), seed=seeds)
def test_span_corruption_round_trips(seq_len: int, seed: int) -> None:
    ids = list(range(1000, 1000 + seq_len))
    scheme = mask_scheme(Random(seed), seq_len)
    sentinels = [-1 - i for i in range(len(scheme) + 1)]
    inputs, targets = span_corruption(ids, scheme, sentinels)
    masked = sum(length for _, length in scheme)
    assert len(inputs) == seq_len - masked + len(scheme)
    assert len(targets) == masked + len(scheme) + 1
    assert [i for i in inputs if i < 0] == sentinels[:-1]
    assert [t for t in targets if t < 0] == sentinels and targets[-1] == sentinels[-1]
    # Every sentinel in the inputs, replaced by what follows it in the targets up to the
    # next sentinel, gives back the original ids.
    pieces: Dict[int, List[int]] = {}
    current = -1
    for t in targets:
        if t < 0:
            current = t
            pieces[current] = []
        else:
            pieces[current].append(t)
    restored = [x for i in inputs for x in (pieces[i] if i < 0 else [i])]
    assert restored == ids
    assert apply_mask(ids, scheme, 0) == [0 if i < 0 else i for i in inputs]


def test_span_corruption_needs_enough_distinct_sentinels() -> None:
    with pytest.raises(PureBPEError, match="needs 3 sentinels"):
        span_corruption([1, 2, 3, 4], [(0, 1), (3, 1)], [-1, -2])
    with pytest.raises(PureBPEError, match="distinct"):
        span_corruption([1, 2, 3, 4], [(0, 1), (3, 1)], [-1, -2, -1])


@given(seq_len=st.integers(0, 300), seed=seeds)
def test_show_draws_the_scheme(seq_len: int, seed: int) -> None:
    scheme = mask_scheme(Random(seed), seq_len)
    picture = show(seq_len, scheme)
    assert len(picture) == seq_len + 2 * len(scheme)
    bare = picture.replace("(", "").replace(")", "")
    assert [i for i, c in enumerate(bare) if c == "x"] == [
        i for start, length in scheme for i in range(start, start + length)
    ]
    # No two masks closer than two kept words.
    assert set(bare) <= {".", "x"} and ")(" not in picture and ").(" not in picture


def test_show_example() -> None:
    assert show(8, [(0, 0), (1, 3), (6, 1), (8, 0)]) == "().(xxx)..(x).()"


@pytest.mark.parametrize(
    "scheme",
    [[(5, 1)], [(-1, 0)], [(0, -1)], [(2, 1), (1, 1)], [(0, 3), (2, 1)], [(3, 0), (3, 0)]],
)
def test_bad_schemes_are_rejected(scheme: List[Tuple[int, int]]) -> None:
    for use in (
        lambda: apply_mask(list("abcde"), scheme),
        lambda: show(5, scheme),
        lambda: span_corruption(list(range(5)), scheme, [-1, -2, -3]),
    ):
        with pytest.raises(PureBPEError, match="bad mask scheme"):
            use()


def test_examples_in_the_docs_and_docstrings_hold() -> None:
    import doctest

    import purebpe.wakong

    page = Path(__file__).resolve().parent.parent / "docs" / "wakong.md"
    assert doctest.testfile(str(page), module_relative=False).failed == 0
    assert doctest.testmod(purebpe.wakong).failed == 0


# ---------------------------------------------------------------------------------------
# Bad parameters
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"rate": 0.0}, "mask rate must be in"),
        ({"rate": 1.0}, "mask rate must be in"),
        ({"rate": -0.1}, "mask rate must be in"),
        ({"rate": float("nan")}, "mask rate must be in"),
        ({"rate": "0.2"}, "mask rate must be in"),
        ({"poisson_rate": 0.0}, "Poisson rate"),
        ({"poisson_rate": float("inf")}, "Poisson rate"),
        ({"max_span": 0}, "maximum span must be in"),
        ({"max_span": -3}, "maximum span must be in"),
        ({"max_span": 2.5}, "maximum span must be an integer"),
        ({"table": "float32"}, "table must be one of"),
        ({"table": "published", "max_span": 9}, "published table exists only"),
        ({"table": "published", "poisson_rate": 3.0}, "published table exists only"),
    ],
)
def test_bad_parameters_raise(kwargs: Any, message: str) -> None:
    with pytest.raises(PureBPEError, match=message) as caught:
        MaskConfig(**kwargs)
    assert isinstance(caught.value, ValueError) and "\n" not in str(caught.value)


def test_bad_lengths_raise() -> None:
    for bad in (-1, 2.0, True):
        with pytest.raises(PureBPEError, match="sequence length"):
            mask_scheme(Random(0), bad)  # type: ignore[arg-type]
    with pytest.raises(PureBPEError, match="sequence length"):
        mask_batch(Random(0), [3, -2])


def test_configs_are_values() -> None:
    assert MaskConfig() == DEFAULT_CONFIG and hash(MaskConfig()) == hash(DEFAULT_CONFIG)
    assert MaskConfig(table="published") == PUBLISHED_CONFIG != DEFAULT_CONFIG
    assert "rows_by_cap" not in repr(DEFAULT_CONFIG)


# ---------------------------------------------------------------------------------------
# Against the published package (CPython >= 3.10 with ``wakong`` installed)
# ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def wakong_package() -> Any:
    return pytest.importorskip("wakong", reason="the wakong package (CPython >= 3.10 only) is not installed")


def differential_cases() -> List[Tuple[int, int]]:
    lengths = Random(99)
    return [(seed, lengths.randrange(2, 513 if seed % 2 else 5001)) for seed in range(2000)]


@pytest.mark.peers
def test_float64_table_matches_the_package_on_999_in_1000(wakong_package: Any) -> None:
    # Both sides get a random.Random with the same seed: the package draws from Python's
    # Mersenne Twister too. Draws differ only when random() falls between a float32
    # figure of the package's table and the exact value, ~1e-6 per span.
    same = 0
    cases = differential_cases()
    for seed, seq_len in cases:
        ours, theirs = Random(seed), Random(seed)
        same += mask_scheme(ours, seq_len) == wakong_package.generate_mask_scheme(theirs, seq_len)
    assert same >= 0.999 * len(cases)


@pytest.mark.peers
def test_published_table_matches_the_package_always(wakong_package: Any) -> None:
    for seed, seq_len in differential_cases():
        ours, theirs = Random(seed), Random(seed)
        expected = wakong_package.generate_mask_scheme(theirs, seq_len)
        assert mask_scheme(ours, seq_len, PUBLISHED_CONFIG) == expected, (seed, seq_len)
        assert ours.getstate() == theirs.getstate()


@pytest.mark.peers
def test_wakong_class_and_helpers_match_the_package(
    wakong_package: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    ours, theirs = Wakong(42, PUBLISHED_CONFIG), wakong_package.Wakong(42)
    sentences = Random(1)
    for _ in range(300):
        words = [f"w{i}" for i in range(sentences.choice([0, 1, 2, 3, 9, 40, 200]))]
        assert ours(words, "<m>") == theirs(words, mask_token="<m>")
    assert ours.rng.getstate() == theirs.rng.getstate()
    for seed in range(200):
        scheme = mask_scheme(Random(seed), 60)
        words = [str(i) for i in range(60)]
        assert apply_mask(words, scheme) == wakong_package.apply_mask_scheme(words, scheme)
        wakong_package.pretty_print_mask_scheme(60, scheme)
        assert capsys.readouterr().out == show(60, scheme) + "\n"


# ---------------------------------------------------------------------------------------
# purebpe mask
# ---------------------------------------------------------------------------------------

LINES = [
    "I can eat glass , it does not hurt me .",
    "",
    "the quick brown fox jumps over the lazy dog " * 5,
    "one",
    "ünïcödé wörds ärë wörds töö",
]


def test_mask_is_a_registered_subcommand() -> None:
    assert "mask" in cli.COMMANDS


def test_cli_masks_each_line_like_the_api(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "in.txt"
    path.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    assert cli.main(["mask", str(path), "--seed", "7"]) == 0
    masker = Wakong(7)
    expected = [" ".join(masker(line.split())) for line in LINES]
    assert capsys.readouterr().out.splitlines() == expected
    assert cli.main(["mask", str(path), "--seed", "8", "--mask", "[M]", "--table", "published"]) == 0
    masker = Wakong(8, PUBLISHED_CONFIG)
    expected = [" ".join(masker(line.split(), "[M]")) for line in LINES]
    assert capsys.readouterr().out.splitlines() == expected


def test_cli_show_and_stdin(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    data = ("\n".join(LINES) + "\n").encode("utf-8")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))
    assert cli.main(["mask", "--seed", "3", "--show"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 2 * len(LINES)
    rng = Random(3)
    for line, masked, picture in zip(LINES, out[::2], out[1::2]):
        scheme = mask_scheme(rng, len(line.split()))
        assert masked == " ".join(apply_mask(line.split(), scheme))
        assert picture == show(len(line.split()), scheme)


def test_cli_rejects_invalid_utf8_with_its_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = "fine line\n".encode("utf-8") + b"broken \xff here\n"
    path = tmp_path / "bad.txt"
    path.write_bytes(data)
    assert cli.main(["mask", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("purebpe: error: ")
    bad_byte = data.index(b"\xff")
    assert f"line 2, byte offset {bad_byte}" in err and "invalid UTF-8" in err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--rate", "1.5"], "mask rate must be in (0, 1)"),
        (["--rate", "0"], "mask rate must be in (0, 1)"),
        (["no-such-file.txt"], "no-such-file.txt"),
    ],
)
def test_cli_bad_arguments_exit_2_with_one_line(
    args: List[str],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main(["mask", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and message in captured.err
