"""Wakong: span masking for BART-style text infilling, exact and fast in pure Python.

Text infilling hides spans of a sentence behind mask tokens and asks a model to restore
them. Wakong (Ayaka, ARP 1, https://arp.shn.hk/1/) decides *which* spans to hide so that
about 15 % of the words are masked, span lengths follow a capped Poisson law (length 3
is the most frequent), zero-length spans insert a mask without hiding anything, and no
two masks ever touch. A *mask scheme* is a sorted list of ``(start, length)`` pairs: the
mask replaces ``items[start:start + length]``. Every span satisfies
``0 <= start <= start + length <= seq_len``; ``start == seq_len`` (with length 0) puts a
mask after the last word.

The algorithm, for a sequence of ``seq_len`` words:

1. **Budget.** ``x = seq_len * rate`` (rate 0.188); the budget is ``floor(x)``, plus one
   with probability equal to the fractional part of ``x`` (one ``random()`` call, made
   even when the fractional part is zero).
2. **Span lengths.** While budget is left, draw a length from the Poisson(4.2) law
   restricted to ``0..cap`` with ``cap = min(10, budget left)`` and spend ``length + 1``
   (the mask token itself counts). One ``random()`` call per span, looked up in a table
   of cumulative weights, one row per cap, exactly as ``Random.choices(range(cap + 1),
   cum_weights=row)`` looks it up. The spans together cover ``budget`` or ``budget + 1``.
3. **Shuffle** the lengths (Fisher-Yates, as ``Random.shuffle``), so the short spans
   forced by a small cap do not pile up at the end.
4. **Positions.** Remove the masked words and one *guard* word per span: ``n_slots =
   seq_len - sum(lengths) - n_spans + 1`` candidate insert positions remain. Pick
   ``n_spans`` distinct ones (as ``Random.sample(range(n_slots), n_spans)``) and sort.
5. **Layout.** Walk the spans in order: span ``i`` starts at its slot plus the room taken
   by the spans before it (their lengths plus one guard word each). Consecutive spans
   are therefore at least *two* unmasked words apart, and the last span ends at
   ``seq_len - 1`` at the latest.
6. **Shift.** With probability 1/2 (one last ``random()`` call) move every span right by
   one, so the last word can be masked too (and the first word cannot). This makes the
   scheme's law symmetric under reversing the sequence.

**Same seed, same scheme.** The published ``wakong`` package (1.1.1, Python >= 3.10
only) draws everything from a ``random.Random`` -- not NumPy: JAX and NumPyro only built
its table, which it ships as float32 figures. This module consumes the *same* random
stream: the ``random()`` calls above, and for steps 3 and 4 the ``getrandbits`` calls that
CPython's ``shuffle`` and ``sample`` make (the rejection sampler ``_randbelow`` and the
pool-or-set choice inside ``sample``, unchanged from CPython 3.9 to 3.13 and shared by
PyPy). They are written out inline because the method calls cost more than the work on
CPython. So ``mask_scheme(random.Random(s), n)`` equals the package's
``generate_mask_scheme(random.Random(s), n)``: always with ``table="published"`` (the
package's float32 cumulative weights, shipped here as data, which lets PyPy and Python
3.9 reproduce its masks seed for seed), and on all but about one call in 10^5 with the
default ``table="float64"``, computed at import from the Poisson law with :mod:`math`
(a draw differs only when ``random()`` lands between a float32 figure and its exact
value). Any ``random.Random`` (or subclass with consistent ``random`` and ``getrandbits``,
such as ``SystemRandom``) can be passed.

**Short and degenerate sequences.** A sequence of 0 or 1 words is never masked and
consumes no randomness, like the package's ``Wakong`` class (its ``generate_mask_scheme``
fails on one word about 15 % of the time). The budget is capped at ``seq_len // 2``, the
most that always fits (worst case: every span has length 0 and needs its own slot);
with the default rate the cap never binds, but it keeps rates near 1 from failing.
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import accumulate
from random import Random
from typing import (
    Any,
    Callable,
    Iterable,
    List,
    Sequence,
    Tuple,
    TypeVar,
    Union,
    overload,
)

import attrs

from .errors import PureBPEError

__all__ = [
    "PROPOSED_MASK_RATE",
    "POISSON_RATE",
    "MAX_SPAN",
    "TABLES",
    "MaskScheme",
    "MaskConfig",
    "DEFAULT_CONFIG",
    "PUBLISHED_CONFIG",
    "CUMULATIVE_WEIGHTS",
    "PUBLISHED_CUMULATIVE_WEIGHTS",
    "cumulative_weights",
    "mask_scheme",
    "mask_batch",
    "apply_mask",
    "span_corruption",
    "show",
    "Wakong",
]

PROPOSED_MASK_RATE = 0.188
"""Fraction of words budgeted for masking; the guard slots bring the real rate to ~15 %."""
POISSON_RATE = 4.2
"""Rate of the span-length law; after capping, length 3 is the most frequent."""
MAX_SPAN = 10
"""Longest span a single mask may hide."""

TABLES = ("float64", "published")
"""Names of the span-length tables :class:`MaskConfig` accepts."""

# Largest accepted ``max_span``: the table has one row per cap, so it grows quadratically.
_MAX_SPAN_LIMIT = 1000

MaskScheme = List[Tuple[int, int]]
"""Sorted ``(start, length)`` pairs; the mask replaces ``items[start:start + length]``."""

T = TypeVar("T")
CumulativeWeights = Tuple[Tuple[float, ...], ...]

# The cumulative weights the ``wakong`` 1.1.1 package ships (its ``probs_list``): float32
# results of a JAX computation, printed as the float64 numbers they are. Row ``cap - 1``
# lists the cumulative probabilities of lengths ``0..cap``. Only with these figures does
# every draw agree with the package; they differ from the exact law by up to ~2e-7.
PUBLISHED_CUMULATIVE_WEIGHTS: CumulativeWeights = (
    (0.19230762124061584, 1.0),
    (0.07132665812969208, 0.3708987236022949, 0.9999999403953552),
    (0.037924762815237045, 0.19720882177352905, 0.5317052602767944, 0.9999999403953552),
    (0.025423694401979446, 0.13220325112342834, 0.3564402461051941, 0.6703718900680542, 1.0),
    (
        0.019910676404833794,
        0.10353554785251617,
        0.279147744178772,
        0.5250046253204346,
        0.783154308795929,
        1.0,
    ),
    (
        0.017286695539951324,
        0.08989083766937256,
        0.24235950410366058,
        0.45581549406051636,
        0.6799442768096924,
        0.8682123422622681,
        1.0,
    ),
    (
        0.016019955277442932,
        0.0833037942647934,
        0.22459982335567474,
        0.4224141240119934,
        0.6301190853118896,
        0.8045912981033325,
        0.9267217516899109,
        1.0,
    ),
    (
        0.015426481142640114,
        0.08021772652864456,
        0.2162792980670929,
        0.4067654013633728,
        0.6067757606506348,
        0.7747844457626343,
        0.8923904895782471,
        0.9629541039466858,
        1.0,
    ),
    (
        0.015164319425821304,
        0.07885448634624481,
        0.21260379254817963,
        0.3998526930809021,
        0.5964640378952026,
        0.7616174817085266,
        0.8772249221801758,
        0.9465893507003784,
        0.983005702495575,
        1.0,
    ),
    (
        0.015056849457323551,
        0.07829564064741135,
        0.21109706163406372,
        0.3970189690589905,
        0.5922368764877319,
        0.7562199234962463,
        0.871008038520813,
        0.939880907535553,
        0.9760392308235168,
        0.992913007736206,
        1.0,
    ),
)


# ---------------------------------------------------------------------------------------
# Parameters and the span-length table
# ---------------------------------------------------------------------------------------


def _check_poisson_rate(poisson_rate: float) -> None:
    if not (isinstance(poisson_rate, (int, float)) and 0.0 < poisson_rate < math.inf):
        raise PureBPEError(f"Poisson rate must be a finite number > 0, got {poisson_rate!r}")


def _check_max_span(max_span: int) -> None:
    if isinstance(max_span, bool) or not isinstance(max_span, int):
        raise PureBPEError(f"maximum span must be an integer, got {max_span!r}")
    if not 1 <= max_span <= _MAX_SPAN_LIMIT:
        raise PureBPEError(f"maximum span must be in 1..{_MAX_SPAN_LIMIT}, got {max_span}")


@lru_cache(maxsize=64)
def cumulative_weights(poisson_rate: float = POISSON_RATE, max_span: int = MAX_SPAN) -> CumulativeWeights:
    """The span-length table: row ``cap - 1`` (cap = 1..max_span) holds the cumulative
    probabilities of lengths ``0..cap`` under Poisson(``poisson_rate``) conditioned on
    ``length <= cap``; each row ends in exactly 1.0.
    """
    _check_poisson_rate(poisson_rate)
    _check_max_span(max_span)
    # log(rate^k / k!): the common factor exp(-rate) cancels in every row. Each row is
    # exponentiated relative to its own largest term, so no rate underflows or overflows.
    log_rate = math.log(poisson_rate)
    log_weights = [k * log_rate - math.lgamma(k + 1) for k in range(max_span + 1)]
    rows = []
    for cap in range(1, max_span + 1):
        top = max(log_weights[: cap + 1])
        running = list(accumulate(math.exp(w - top) for w in log_weights[: cap + 1]))
        total = running[-1]
        rows.append(tuple(r / total for r in running))
    return tuple(rows)


CUMULATIVE_WEIGHTS: CumulativeWeights = cumulative_weights()
"""The default (float64) table for Poisson rate 4.2 and spans up to 10, built at import."""


@attrs.frozen
class MaskConfig:
    """Parameters of the masking scheme; invalid values raise :class:`PureBPEError`.

    ``table="published"`` uses the ``wakong`` package's float32 figures (only for the
    default Poisson rate and maximum span) to reproduce its schemes seed for seed.
    """

    rate: float = PROPOSED_MASK_RATE
    poisson_rate: float = POISSON_RATE
    max_span: int = MAX_SPAN
    table: str = "float64"
    # The table indexed by cap itself (row 0 empty), which saves a subtraction per draw;
    # derived from the fields above, so left out of init, repr and comparisons.
    rows_by_cap: CumulativeWeights = attrs.field(init=False, repr=False, eq=False)

    def __attrs_post_init__(self) -> None:
        if not (isinstance(self.rate, (int, float)) and 0.0 < self.rate < 1.0):
            raise PureBPEError(f"mask rate must be in (0, 1), got {self.rate!r}")
        _check_poisson_rate(self.poisson_rate)
        _check_max_span(self.max_span)
        if self.table not in TABLES:
            raise PureBPEError(f"table must be one of {', '.join(TABLES)}, got {self.table!r}")
        if self.table == "published" and (self.poisson_rate != POISSON_RATE or self.max_span != MAX_SPAN):
            raise PureBPEError(
                f"the published table exists only for Poisson rate {POISSON_RATE} and maximum span {MAX_SPAN}"
            )
        # attrs' documented way to set a derived field on a frozen instance.
        object.__setattr__(self, "rows_by_cap", ((),) + self.weights)

    @property
    def weights(self) -> CumulativeWeights:
        """The span-length table this configuration draws from (row ``cap - 1``)."""
        if self.table == "published":
            return PUBLISHED_CUMULATIVE_WEIGHTS
        return cumulative_weights(self.poisson_rate, self.max_span)


DEFAULT_CONFIG = MaskConfig()
PUBLISHED_CONFIG = MaskConfig(table="published")


# ---------------------------------------------------------------------------------------
# Drawing schemes
# ---------------------------------------------------------------------------------------


def _draw(
    random: Callable[[], float],
    getrandbits: Callable[[int], int],
    seq_len: int,
    rate: float,
    max_span: int,
    rows: CumulativeWeights,
) -> MaskScheme:
    """One scheme; the steps and the random calls are those of the module docstring."""
    if seq_len < 2:
        return []

    # 1. Budget: floor or ceil of seq_len * rate.
    exact = seq_len * rate
    budget = int(exact)
    if random() < exact - budget:
        budget += 1
    if budget > seq_len >> 1:
        budget = seq_len >> 1

    # 2. Span lengths, from the full row while the budget left is at least the maximum
    # span, then from the row capped at what is left. ``random() * row[cap]`` is what
    # ``Random.choices`` computes (the published rows end in 0.99999994, not 1), and the
    # scan returns what its ``bisect_right(row, u, 0, cap)`` returns: the first index
    # whose cumulative weight exceeds u, else cap. A linear scan, because rows are short
    # and most draws stop within five steps: a little slower than C bisect on CPython,
    # over twice as fast on PyPy, where bisect is a pure-Python function the JIT traces
    # poorly.
    spans: List[int] = []
    masked = 0
    left = budget
    while left > 0:
        cap = max_span if left >= max_span else left
        row = rows[cap]
        u = random() * row[cap]
        span = 0
        while span < cap and row[span] <= u:
            span += 1
        spans.append(span)
        masked += span
        left -= span + 1
    n_spans = len(spans)

    # 3. Shuffle, as Random.shuffle: j uniform in 0..i by rejection on bit_length bits.
    for i in range(n_spans - 1, 0, -1):
        bound = i + 1
        bits = bound.bit_length()
        j = getrandbits(bits)
        while j >= bound:
            j = getrandbits(bits)
        spans[i], spans[j] = spans[j], spans[i]

    # 4. Distinct insert slots, as sorted(Random.sample(range(n_slots), n_spans)): a
    # partial Fisher-Yates over a pool for small populations, else rejection of repeats,
    # switching at CPython's threshold so that the same draws are made. A bytearray
    # stands in for sample's set of taken slots: same answers, cheaper to build.
    # The budget cap guarantees n_slots >= n_spans, so every bound below is >= 1.
    n_slots = seq_len - masked - n_spans + 1
    set_size = 21
    if n_spans > 5:
        set_size += 4 ** math.ceil(math.log(n_spans * 3, 4))
    if n_slots <= set_size:
        pool = list(range(n_slots))
        slots = []
        for i in range(n_spans):
            bound = n_slots - i
            bits = bound.bit_length()
            j = getrandbits(bits)
            while j >= bound:
                j = getrandbits(bits)
            slots.append(pool[j])
            pool[j] = pool[bound - 1]
        slots.sort()
    else:
        taken = bytearray(n_slots)
        slots = []
        bits = n_slots.bit_length()
        for _ in range(n_spans):
            j = getrandbits(bits)
            while j >= n_slots or taken[j]:
                j = getrandbits(bits)
            taken[j] = 1
            slots.append(j)
        slots.sort()

    # 5 and 6. Layout: each span takes its slot plus the room of the spans before it,
    # everything shifted right by one on a coin flip (the last draw of the scheme).
    offset = 1 if random() < 0.5 else 0
    scheme = []
    for i in range(n_spans):
        span = spans[i]
        scheme.append((slots[i] + offset, span))
        offset += span + 1
    return scheme


def _check_length(seq_len: int) -> None:
    if isinstance(seq_len, bool) or not isinstance(seq_len, int) or seq_len < 0:
        raise PureBPEError(f"sequence length must be an integer >= 0, got {seq_len!r}")


def mask_scheme(rng: Random, seq_len: int, config: MaskConfig = DEFAULT_CONFIG) -> MaskScheme:
    """Draw a mask scheme for ``seq_len`` words: sorted ``(start, length)`` spans.

    Lengths 0 and 1 give ``[]`` and draw nothing from ``rng``.

    >>> mask_scheme(Random(42), 12)
    [(1, 1), (4, 0)]
    """
    _check_length(seq_len)
    return _draw(rng.random, rng.getrandbits, seq_len, config.rate, config.max_span, config.rows_by_cap)


def mask_batch(rng: Random, lengths: Iterable[int], config: MaskConfig = DEFAULT_CONFIG) -> List[MaskScheme]:
    """One scheme per length, in order: the same as calling :func:`mask_scheme` in a loop."""
    random, getrandbits = rng.random, rng.getrandbits
    rate, max_span, rows = config.rate, config.max_span, config.rows_by_cap
    schemes = []
    for seq_len in lengths:
        _check_length(seq_len)
        schemes.append(_draw(random, getrandbits, seq_len, rate, max_span, rows))
    return schemes


# ---------------------------------------------------------------------------------------
# Using schemes
# ---------------------------------------------------------------------------------------


def _check_scheme(seq_len: int, scheme: Sequence[Tuple[int, int]]) -> None:
    """Spans must lie in ``[0, seq_len]``, in order, and not overlap (touching is fine)."""
    end = 0
    previous_start = -1
    for start, length in scheme:
        if length < 0 or start < end or start <= previous_start or start + length > seq_len:
            raise PureBPEError(
                f"bad mask scheme for {seq_len} items: span ({start}, {length}) is negative, "
                "out of order, overlapping or out of range"
            )
        previous_start = start
        end = start + length


@overload
def apply_mask(items: Sequence[str], scheme: Sequence[Tuple[int, int]], mask: str = ...) -> List[str]: ...
@overload
def apply_mask(items: Sequence[T], scheme: Sequence[Tuple[int, int]], mask: T) -> List[T]: ...
def apply_mask(items: Sequence[Any], scheme: Sequence[Tuple[int, int]], mask: Any = "<mask>") -> List[Any]:
    """Replace every span with one ``mask`` (words or token ids alike); a zero-length span
    inserts a mask without removing anything. The result has ``len(items) - masked +
    len(scheme)`` items.

    >>> apply_mask(list("abcdefgh"), [(0, 0), (1, 3), (6, 1), (8, 0)])
    ['<mask>', 'a', '<mask>', 'e', 'f', '<mask>', 'h', '<mask>']
    """
    _check_scheme(len(items), scheme)
    out: List[Any] = []
    position = 0
    for start, length in scheme:
        out.extend(items[position:start])
        out.append(mask)
        position = start + length
    out.extend(items[position:])
    return out


def span_corruption(
    ids: Sequence[T], scheme: Sequence[Tuple[int, int]], sentinel_ids: Sequence[T]
) -> Tuple[List[T], List[T]]:
    """T5-style ``(inputs, targets)``: span ``i`` becomes ``sentinel_ids[i]`` in the inputs,
    and the targets list each sentinel followed by the items it hid, closed by
    ``sentinel_ids[len(scheme)]`` (as in the T5 paper). Needs ``len(scheme) + 1`` distinct
    sentinels.

    >>> span_corruption([1, 2, 3, 4, 5], [(1, 2), (4, 0)], [-1, -2, -3])
    ([1, -1, 4, -2, 5], [-1, 2, 3, -2, -3])
    """
    _check_scheme(len(ids), scheme)
    n_spans = len(scheme)
    if len(sentinel_ids) < n_spans + 1:
        raise PureBPEError(
            f"span corruption of {n_spans} spans needs {n_spans + 1} sentinels, got {len(sentinel_ids)}"
        )
    used = sentinel_ids[: n_spans + 1]
    if len(set(used)) != n_spans + 1:
        raise PureBPEError("sentinel ids must be distinct")
    inputs: List[T] = []
    targets: List[T] = []
    position = 0
    for i, (start, length) in enumerate(scheme):
        inputs.extend(ids[position:start])
        inputs.append(used[i])
        position = start + length
        targets.append(used[i])
        targets.extend(ids[start:position])
    inputs.extend(ids[position:])
    targets.append(used[n_spans])
    return inputs, targets


def show(seq_len: int, scheme: Sequence[Tuple[int, int]]) -> str:
    """The scheme as a picture: ``.`` a kept word, ``x`` a masked one, ``( )`` a mask.

    >>> show(8, [(0, 0), (1, 3), (6, 1), (8, 0)])
    '().(xxx)..(x).()'
    """
    _check_scheme(seq_len, scheme)
    pieces = []
    position = 0
    for start, length in scheme:
        pieces.append("." * (start - position))
        pieces.append("(" + "x" * length + ")")
        position = start + length
    pieces.append("." * (seq_len - position))
    return "".join(pieces)


class Wakong:
    """A seeded masker: ``Wakong(seed)(words)`` returns the words with spans masked.

    Successive calls continue one random stream, so ``Wakong(s)`` masks a corpus exactly
    as the ``wakong`` package's ``Wakong(s)`` does (with ``PUBLISHED_CONFIG``).

    >>> Wakong(42)("I can eat glass , it does not hurt me .".split())
    ['I', '<mask>', 'eat', 'glass', '<mask>', ',', 'it', 'does', 'not', 'hurt', 'me', '.']
    """

    def __init__(
        self,
        seed: Union[int, float, str, bytes, bytearray, None] = None,
        config: MaskConfig = DEFAULT_CONFIG,
    ) -> None:
        self.rng = Random(seed)
        self.config = config

    def scheme(self, seq_len: int) -> MaskScheme:
        """The next scheme for ``seq_len`` words."""
        return mask_scheme(self.rng, seq_len, self.config)

    @overload
    def __call__(self, items: Sequence[str], mask: str = ...) -> List[str]: ...
    @overload
    def __call__(self, items: Sequence[T], mask: T) -> List[T]: ...
    def __call__(self, items: Sequence[Any], mask: Any = "<mask>") -> List[Any]:
        return apply_mask(items, self.scheme(len(items)), mask)
