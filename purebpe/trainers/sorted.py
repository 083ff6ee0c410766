"""The sorted trainer: fine-grained updates plus a ``sortedcontainers.SortedList`` of pairs.

Keeps:       a :class:`~purebpe.trainers.pair_index.PairIndex` and a ``SortedList`` holding
             ``(count, key(left), key(right), pair)`` for every eligible pair (count at
             least ``min_frequency``, mergeable under ``max_token_length``), always exact.
Max pair:    the last element: highest count, ties to the greatest bytes, as the tuples
             compare exactly like the tie-break rule (the keys are
             :attr:`~purebpe.core.WordTable.tie_keys`: the tokens' bytes by default).
After merge: eager: :meth:`PairIndex.merge` reports the old count of every pair whose count
             fell; each one's old key is removed and, if still eligible, its new key added.
             New pairs are added.
Cost:        O(occurrences of the merged pair + changed pairs x log(pairs)) per merge; the
             ``SortedList`` operations are cheap but each changed pair pays two of them,
             where the lazy :mod:`~purebpe.trainers.heap` pays nothing for a count that falls.

``sortedcontainers`` is a runtime dependency for this module alone: the design card names
this variant (an exact ordered index of pairs, the textbook alternative to a lazy heap),
and ``SortedList`` is that index in pure Python (so it runs on PyPy as well). It is
imported only when the variant is first used (:mod:`purebpe.trainers`).
"""

from __future__ import annotations

from typing import Dict, Iterator, List, Tuple

from sortedcontainers import SortedList

from ..core import PAIR_MASK, PAIR_SHIFT, WordTable
from .pair_index import PairIndex


def train(table: WordTable) -> Iterator[Tuple[int, int]]:
    index = PairIndex(table)
    pair_counts = index.pair_counts
    keys = table.tie_keys  # token_bytes itself, unless tie_break="hf"
    min_frequency = table.min_frequency
    ranked = SortedList(
        (count, keys[pair >> PAIR_SHIFT], keys[pair & PAIR_MASK], pair)
        for pair, count in pair_counts.items()
        if count >= min_frequency and table.mergeable(pair)
    )
    new_pairs: List[int] = []
    old_counts: Dict[int, int] = {}
    while ranked:
        pair = ranked.pop()[3]
        left, right = pair >> PAIR_SHIFT, pair & PAIR_MASK
        new_id = table.add_token(left, right)
        yield left, right
        index.merge(left, right, new_id, new_pairs, old_counts)
        for pair, old in old_counts.items():
            if old < min_frequency or not table.mergeable(pair):
                continue  # was never listed
            left_key, right_key = keys[pair >> PAIR_SHIFT], keys[pair & PAIR_MASK]
            ranked.remove((old, left_key, right_key, pair))
            count = pair_counts.get(pair, 0)
            if count >= min_frequency:
                ranked.add((count, left_key, right_key, pair))
        for pair in new_pairs:
            count = pair_counts[pair]
            if count >= min_frequency and table.mergeable(pair):
                ranked.add((count, keys[pair >> PAIR_SHIFT], keys[pair & PAIR_MASK], pair))
        del new_pairs[:]
        old_counts.clear()
