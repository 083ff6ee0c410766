"""The naive trainer: recount every pair after every merge. The specification, kept as the oracle.

Keeps:       nothing between steps but the words themselves.
Max pair:    :meth:`WordTable.best_pair`, a full scan of freshly counted pairs.
After merge: every word is rewritten with :func:`merge_word`, then all pairs are recounted.
Cost:        O(total tokens in all distinct words) per merge; too slow for real corpora, but
             short enough to check by eye, which is why every other variant is tested
             against it.
"""

from __future__ import annotations

from typing import Iterator, Tuple

from ..core import WordTable, merge_word, unpack_pair


def train(table: WordTable) -> Iterator[Tuple[int, int]]:
    while True:
        best = table.best_pair(table.count_pairs())
        if best is None:
            return
        left, right = unpack_pair(best)
        new_id = table.add_token(left, right)
        yield left, right
        table.words = [merge_word(word, left, right, new_id) for word in table.words]
