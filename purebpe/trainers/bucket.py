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
    queue = BucketQueue(table, index.pair_counts)
    new_pairs: List[int] = []
    while True:
        pair = queue.pop_best()
        if pair < 0:
            return
        left, right = pair >> PAIR_SHIFT, pair & PAIR_MASK
        new_id = table.add_token(left, right)
        yield left, right
        index.merge(left, right, new_id, new_pairs)
        queue.add_new(new_pairs)
        del new_pairs[:]


class BucketQueue:
    """The buckets, the pointer and ``top`` (see the module docstring).

    A class rather than locals of ``train``: a generator's locals live in a frame object,
    which the compiled build (mypyc) turns into an attribute access per use.
    """

    def __init__(self, table: WordTable, pair_counts: Dict[int, int]) -> None:
        self.table = table
        self.pair_counts = pair_counts
        self.keys = table.tie_keys  # token_bytes itself, unless tie_break="hf"
        self.min_frequency = table.min_frequency
        self.buckets: Dict[int, List[int]] = {}
        for pair, count in pair_counts.items():
            if count >= self.min_frequency and table.mergeable(pair):
                self.buckets.setdefault(count, []).append(pair)
        self.bucket_counts = [-count for count in self.buckets]  # negated: heapq is a min-heap
        heapify(self.bucket_counts)
        self.top: List[RankedPair] = []
        self.top_count = 0

    def pop_best(self) -> int:
        """Remove and return the pair to merge next, or -1 when no pair is eligible."""
        pair_counts, top, keys = self.pair_counts, self.top, self.keys
        while True:
            while top and pair_counts.get(top[-1][2], 0) != self.top_count:
                self._file(top.pop()[2])
            if top:
                pair: int = top.pop()[2]
                return pair
            if not self.bucket_counts:
                return -1
            # Move the pointer down to the next bucket; re-file its stale pairs, sort the rest.
            top_count = self.top_count = -heappop(self.bucket_counts)
            for pair in self.buckets.pop(top_count):
                if pair_counts.get(pair, 0) == top_count:
                    top.append((keys[pair >> PAIR_SHIFT], keys[pair & PAIR_MASK], pair))
                else:
                    self._file(pair)
            top.sort()

    def add_new(self, new_pairs: List[int]) -> None:
        """File the pairs the last merge created."""
        pair_counts, keys, table = self.pair_counts, self.keys, self.table
        for pair in new_pairs:
            count = pair_counts[pair]
            if count < self.min_frequency or not table.mergeable(pair):
                continue
            if count == self.top_count:
                insort(self.top, (keys[pair >> PAIR_SHIFT], keys[pair & PAIR_MASK], pair))
            else:  # count < top_count: the maximum never increases (module docstring)
                self._file(pair)

    def _file(self, pair: int) -> None:
        """File ``pair`` under its live count, creating the bucket if needed; drop it if ineligible."""
        count = self.pair_counts.get(pair, 0)
        if count < self.min_frequency:
            return  # dead, or below min_frequency for good: counts never rise
        bucket = self.buckets.get(count)
        if bucket is None:
            self.buckets[count] = [pair]
            heappush(self.bucket_counts, -count)
        else:
            bucket.append(pair)
