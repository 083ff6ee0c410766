"""The incremental trainer: pair counts and an inverted index, whole affected words redone.

Keeps:       ``pair_counts[pair]`` (weighted counts) and ``pair_to_words[pair]``, the set of
             ids of words that contain the pair.
Max pair:    :meth:`WordTable.best_pair`, a full scan of ``pair_counts``: O(pairs) per merge.
After merge: only the words in ``pair_to_words[best]`` can change. For each, all its old
             pairs are subtracted (and the word dropped from their index entries), the word
             is rewritten, and all its new pairs are added back.
Cost:        O(pairs + total length of the affected words) per merge. The scan dominates;
             :mod:`~purebpe.trainers.fine_grained` and its successors remove it.
"""

from __future__ import annotations

from typing import Dict, Iterator, Sequence, Set, Tuple

from ..core import PAIR_SHIFT, WordTable, merge_word, unpack_pair


def train(table: WordTable) -> Iterator[Tuple[int, int]]:
    words, counts = table.words, table.counts
    pair_counts: Dict[int, int] = {}
    pair_to_words: Dict[int, Set[int]] = {}
    for word_id, word in enumerate(words):
        _add_pairs(word_id, word, counts[word_id], pair_counts, pair_to_words)

    while True:
        best = table.best_pair(pair_counts)
        if best is None:
            return
        left, right = unpack_pair(best)
        new_id = table.add_token(left, right)
        yield left, right
        for word_id in sorted(pair_to_words.get(best, ())):
            old = words[word_id]
            _remove_pairs(word_id, old, counts[word_id], pair_counts, pair_to_words)
            words[word_id] = merge_word(old, left, right, new_id)
            _add_pairs(word_id, words[word_id], counts[word_id], pair_counts, pair_to_words)


def _add_pairs(
    word_id: int,
    word: Sequence[int],
    count: int,
    pair_counts: Dict[int, int],
    pair_to_words: Dict[int, Set[int]],
) -> None:
    for i in range(len(word) - 1):
        pair = word[i] << PAIR_SHIFT | word[i + 1]
        pair_counts[pair] = pair_counts.get(pair, 0) + count
        pair_to_words.setdefault(pair, set()).add(word_id)


def _remove_pairs(
    word_id: int,
    word: Sequence[int],
    count: int,
    pair_counts: Dict[int, int],
    pair_to_words: Dict[int, Set[int]],
) -> None:
    for i in range(len(word) - 1):
        pair = word[i] << PAIR_SHIFT | word[i + 1]
        remaining = pair_counts[pair] - count
        if remaining:
            pair_counts[pair] = remaining
        else:
            # Dropping dead pairs keeps the O(pairs) scan in best_pair from growing.
            del pair_counts[pair]
        holders = pair_to_words.get(pair)
        if holders is not None:  # None when the pair occurred earlier in this same word
            holders.discard(word_id)
            if not holders:
                del pair_to_words[pair]
