"""The bucket trainer: fine-grained updates plus pairs filed in buckets by count.

Why a bucket queue works here: **in BPE no count ever rises above the count of the pair
just merged, so the maximum never increases.** A merge of ``(A, B)`` into ``C`` only lowers
the counts of existing pairs; the only pairs that gain are new ones containing ``C`` (see
:mod:`~purebpe.trainers.pair_index`), and every occurrence of a new pair ``(x, C)`` or
``(C, y)`` sits next to a distinct ``C``, i.e. a distinct merged occurrence of ``(A, B)``,
so its count is at most the count of ``(A, B)``, which was the maximum. Hence the pointer
to the highest non-empty bucket only ever moves down, and a pair is never filed above it.

Keeps:       a :class:`~purebpe.trainers.pair_index.PairIndex`; ``buckets[count]``, a list
             of pairs filed under that count; a max-heap ``bucket_counts`` of the counts
             that have a bucket (each count is pushed once: a bucket is only created below
             the pointer, and a count above the pointer never comes back); and ``top``, the
             bucket under the pointer, ``top_count``, as a list sorted by
             ``(key(left), key(right), pair)``, greatest last (the keys are
             :attr:`~purebpe.core.WordTable.tie_keys`: the tokens' bytes by default).
Max pair:    the last pair of ``top`` whose live count is still ``top_count``. Entries are
             lazy, as in :mod:`~purebpe.trainers.heap`: a pair whose count fell keeps its
             entry in a higher bucket until the pointer reaches it, and is then re-filed
             under its live count (below the pointer). When ``top`` runs out, the pointer
             moves down to the next count in ``bucket_counts``, whose bucket is checked,
             re-filed where stale and sorted.
After merge: :meth:`PairIndex.merge`, then each new pair is appended to its count's bucket
             (inserted in order into ``top`` when its count equals ``top_count``).
Cost:        O(occurrences of the merged pair + new pairs) per merge, plus, over the whole
             run, O(b log b) to sort each bucket of ``b`` pairs the pointer reaches and
             O(log buckets) per move of the pointer. No per-pair heap operation: filing is
             a list append.
"""
from __future__ import annotations

from bisect import insort
from heapq import heapify, heappop, heappush
from typing import Any, Dict, Iterator, List, Tuple

from ..core import PAIR_MASK, PAIR_SHIFT, WordTable
from .pair_index import PairIndex

RankedPair = Tuple[Any, Any, int]


def train(table: WordTable) -> Iterator[Tuple[int, int]]:
    index = PairIndex(table)
    pair_counts = index.pair_counts
    keys = table.tie_keys  # token_bytes itself, unless tie_break="hf"
    min_frequency = table.min_frequency
    buckets: Dict[int, List[int]] = {}
    for pair, count in pair_counts.items():
        if count >= min_frequency and table.mergeable(pair):
            buckets.setdefault(count, []).append(pair)
    bucket_counts = [-count for count in buckets]  # negated: heapq is a min-heap
    heapify(bucket_counts)
    top: List[RankedPair] = []
    top_count = 0
    new_pairs: List[int] = []
    while True:
        while top and pair_counts.get(top[-1][2], 0) != top_count:
            _file(top.pop()[2], pair_counts, min_frequency, buckets, bucket_counts)
        if not top:
            if not bucket_counts:
                return
            # Move the pointer down to the next bucket; re-file its stale pairs, sort the rest.
            top_count = -heappop(bucket_counts)
            for pair in buckets.pop(top_count):
                if pair_counts.get(pair, 0) == top_count:
                    top.append(
                        (keys[pair >> PAIR_SHIFT], keys[pair & PAIR_MASK], pair)
                    )
                else:
                    _file(pair, pair_counts, min_frequency, buckets, bucket_counts)
            top.sort()
            continue
        pair = top.pop()[2]
        left, right = pair >> PAIR_SHIFT, pair & PAIR_MASK
        new_id = table.add_token(left, right)
        yield left, right
        index.merge(left, right, new_id, new_pairs)
        for pair in new_pairs:
            count = pair_counts[pair]
            if count < min_frequency or not table.mergeable(pair):
                continue
            if count == top_count:
                insort(top, (keys[pair >> PAIR_SHIFT], keys[pair & PAIR_MASK], pair))
            else:  # count < top_count: the maximum never increases (module docstring)
                _file(pair, pair_counts, min_frequency, buckets, bucket_counts)
        del new_pairs[:]


def _file(
    pair: int,
    pair_counts: Dict[int, int],
    min_frequency: int,
    buckets: Dict[int, List[int]],
    bucket_counts: List[int],
) -> None:
    """File ``pair`` under its live count, creating the bucket if needed; drop it if ineligible."""
    count = pair_counts.get(pair, 0)
    if count < min_frequency:
        return  # dead, or below min_frequency for good: counts never rise
    bucket = buckets.get(count)
    if bucket is None:
        buckets[count] = [pair]
        heappush(bucket_counts, -count)
    else:
        bucket.append(pair)
