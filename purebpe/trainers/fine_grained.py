"""The fine-grained trainer: only the pairs around each merged occurrence are updated.

Keeps:       a :class:`~purebpe.trainers.pair_index.PairIndex`: ``pair_counts`` and the
             occurrence-counting inverted index ``pair_to_words[pair][word_id]``.
Max pair:    :meth:`WordTable.best_pair`, a full scan of ``pair_counts``: O(pairs) per merge.
After merge: :meth:`PairIndex.merge`: for each word holding the merged pair, subtract the
             pairs around each occurrence and add the new ones; pairs elsewhere in the word
             are never removed and re-added (unlike :mod:`~purebpe.trainers.incremental`).
Cost:        O(pairs + occurrences of the merged pair) per merge. The scan now dominates;
             :mod:`~purebpe.trainers.heap`, :mod:`~purebpe.trainers.sorted` and
             :mod:`~purebpe.trainers.bucket` replace it with a priority structure.
"""

from __future__ import annotations

from typing import Iterator, List, Tuple

from ..core import WordTable, unpack_pair
from .pair_index import PairIndex


def train(table: WordTable) -> Iterator[Tuple[int, int]]:
    index = PairIndex(table)
    new_pairs: List[int] = []  # not needed by a scan, but merge() reports them anyway
    while True:
        best = table.best_pair(index.pair_counts)
        if best is None:
            return
        left, right = unpack_pair(best)
        new_id = table.add_token(left, right)
        yield left, right
        index.merge(left, right, new_id, new_pairs)
        del new_pairs[:]
