"""The heap trainer: fine-grained updates plus a lazy max-heap of pairs.

Keeps:       a :class:`~purebpe.trainers.pair_index.PairIndex` and a ``heapq`` list with one
             entry ``(-count, tie_key, pair)`` per eligible pair (mergeable under
             ``max_token_length``). ``heapq`` is a min-heap, so the count is negated and
             ``tie_key`` is :meth:`~purebpe.core.WordTable.reverse_key` of the left token
             followed by that of the right token (by default
             :func:`~purebpe.core.reverse_bytes_key`): it sorts in the *reverse* order of
             ``(bytes(left), bytes(right))``, so the smallest entry is the highest count with
             the greatest bytes (the terminator in each key makes a prefix such as ``b"ab"``
             sort after ``b"abc"``, which is what reversing ``b"ab" < b"abc"`` needs).
Max pair:    the top entry, if its count is still the pair's live count. Entries go stale
             because counts only fall after they are pushed (every pair whose count rises
             in a merge is brand new, see :mod:`~purebpe.trainers.pair_index`): a stale top
             is re-pushed with the live count (or dropped when the pair is dead or below
             ``min_frequency``) and the next top is tried. A fresh top is the true maximum:
             every other pair has an entry at least as high as its live count.
After merge: :meth:`PairIndex.merge`, then one push per new pair. Pairs whose counts fell
             are not touched now; they are fixed lazily when they surface.
Cost:        O(occurrences of the merged pair + (new pairs + stale pops) x log(pairs)) per
             merge. Each pair has exactly one entry, so the heap never outgrows the pairs.
"""

from __future__ import annotations

from heapq import heapify, heappop, heappush, heapreplace
from typing import Iterator, List, Tuple

from ..core import PAIR_MASK, PAIR_SHIFT, WordTable
from .pair_index import PairIndex

HeapEntry = Tuple[int, bytes, int]


def train(table: WordTable) -> Iterator[Tuple[int, int]]:
    index = PairIndex(table)
    pair_counts = index.pair_counts
    min_frequency = table.min_frequency
    # reversed_keys[token] is table.reverse_key(token), grown with each new token.
    reversed_keys = [table.reverse_key(token) for token in range(len(table.token_bytes))]
    heap: List[HeapEntry] = [
        (-count, reversed_keys[pair >> PAIR_SHIFT] + reversed_keys[pair & PAIR_MASK], pair)
        for pair, count in pair_counts.items()
        if count >= min_frequency and table.mergeable(pair)
    ]
    heapify(heap)
    new_pairs: List[int] = []
    while heap:
        negative_count, tie_key, pair = heap[0]
        live = pair_counts.get(pair, 0)
        if live != -negative_count:  # stale: counts only fall, so live < the entry's count
            if live >= min_frequency:
                heapreplace(heap, (-live, tie_key, pair))
            else:
                heappop(heap)  # dead or below min_frequency for good
            continue
        if live < min_frequency:
            return
        heappop(heap)
        left, right = pair >> PAIR_SHIFT, pair & PAIR_MASK
        new_id = table.add_token(left, right)
        yield left, right
        reversed_keys.append(table.reverse_key(new_id))
        index.merge(left, right, new_id, new_pairs)
        for pair in new_pairs:
            count = pair_counts[pair]
            if count >= min_frequency and table.mergeable(pair):
                tie_key = reversed_keys[pair >> PAIR_SHIFT] + reversed_keys[pair & PAIR_MASK]
                heappush(heap, (-count, tie_key, pair))
        del new_pairs[:]
