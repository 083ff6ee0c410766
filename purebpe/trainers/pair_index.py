"""The fine-grained pair index every fast variant shares: counts, an inverted index, merge updates.

Keeps:   ``pair_counts[pair]``, the weighted count of every live pair, and
         ``pair_to_words[pair][word_id]``, how many times ``pair`` occurs in word ``word_id``
         (a dict of dicts). Because the index counts occurrences, a pair that still occurs
         elsewhere in a word after one occurrence is merged away stays indexed for that word:
         no "unaffected pairs" bookkeeping is needed.

:meth:`PairIndex.merge` applies the merge of ``(A, B)`` into ``C``. Only the words in
``pair_to_words[(A, B)]`` can change, and in each only the pairs that touch a merged
occurrence. For an occurrence ``x A B y`` the old pairs ``(x, A)`` and ``(B, y)`` lose one
occurrence and the new pairs ``(x', C)`` and ``(C, y')`` gain one (``x'`` is ``C`` when the
previous occurrence ended just before, and ``(C, y')`` is left to the next occurrence when
``y`` starts one, so ``C C`` is counted once). Pairs elsewhere in the word are never
touched. ``(A, B)`` itself is dropped whole: after merging every occurrence left to right it
cannot remain anywhere (a leftover ``A B`` would need its ``A`` to be the ``B`` of the
previous occurrence, i.e. ``A == B``, and a run ``A A A`` leaves ``C A``, not ``A A``).

Two facts the priority structures rely on:

* every pair whose count *rises* during a merge contains ``C``, so it is brand new; the
  caller gets these in ``new_pairs``, each once, with its final count in ``pair_counts``;
* every other pair's count only falls (or stays). Lazy structures (heap, buckets) may
  keep a stale, too-high entry for such a pair and fix it when it surfaces; eager ones
  (sorted list) ask for ``old_counts``: ``{pair: count before this merge}`` for each pair
  that fell.

Dead pairs (count 0) are deleted from both dicts; a dead pair never comes back, because a
merge only creates pairs containing its new token.

Cost per merge: O(occurrences of ``(A, B)``) Python-level steps of a few dict operations
each, independent of the number of pairs; words are rewritten in place, ``list.index``
finding each occurrence and ``del`` closing the gap (C loops over the affected word).
Building the index is one pass over all distinct words. The dict operations are the cost:
on PyPy most of the merge phase is spent inside the runtime's dicts and its GC, so the
index stores the constant ``1`` (a shared object) for a single occurrence rather than a
freshly computed int (measured: a third less GC time).
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence

from ..core import PAIR_SHIFT, WordTable

PairCounts = Dict[int, int]
PairToWords = Dict[int, Dict[int, int]]


class PairIndex:
    """Pair counts and the occurrence-counting inverted index over a :class:`WordTable`."""

    __slots__ = ("words", "counts", "pair_counts", "pair_to_words")

    def __init__(self, table: WordTable) -> None:
        self.words: List[Sequence[int]] = table.words
        self.counts: List[int] = table.counts
        pair_counts: PairCounts = {}
        pair_to_words: PairToWords = {}
        for word_id, word in enumerate(self.words):
            count = self.counts[word_id]
            for i in range(len(word) - 1):
                pair = word[i] << PAIR_SHIFT | word[i + 1]
                pair_counts[pair] = pair_counts.get(pair, 0) + count
                in_words = pair_to_words.get(pair)
                if in_words is None:
                    pair_to_words[pair] = {word_id: 1}
                elif word_id in in_words:
                    in_words[word_id] += 1
                else:
                    in_words[word_id] = 1
        self.pair_counts = pair_counts
        self.pair_to_words = pair_to_words

    def merge(
        self,
        left: int,
        right: int,
        new_id: int,
        new_pairs: List[int],
        old_counts: Optional[Dict[int, int]] = None,
    ) -> None:
        """Merge ``(left, right)`` into ``new_id`` in every word holding it; update the index.

        Appends each pair created by the merge to ``new_pairs`` (once); when ``old_counts`` is
        given, records there the count before this merge of each pair whose count fell.
        """
        words, counts = self.words, self.counts
        pair_counts, pair_to_words = self.pair_counts, self.pair_to_words
        merged_pair = left << PAIR_SHIFT | right
        holders = pair_to_words.pop(merged_pair, {})
        pair_counts.pop(merged_pair, None)
        for word_id, occurrences in holders.items():
            stored = words[word_id]
            # A word is still the bytes it started as until its first merge.
            word: List[int] = stored if type(stored) is list else list(stored)
            words[word_id] = word
            count = counts[word_id]
            # Rewrite the word in place, left to right. With left != right the index says how
            # many occurrences there are and list.index (a C loop) finds each; a run of
            # left == right overlaps (a a a holds (a, a) twice but merges once), so scan.
            i = 0
            n = len(word)
            while True:
                if left != right:
                    if not occurrences:
                        break
                    occurrences -= 1
                    i = word.index(left, i)
                    while word[i + 1] != right:
                        i = word.index(left, i + 1)
                else:
                    while i < n - 1 and (word[i] != left or word[i + 1] != left):
                        i += 1
                    if i >= n - 1:
                        break
                if i:
                    before = word[i - 1]
                    if before != new_id:  # else (B, A) went as the previous occurrence's (B, y)
                        self._lose(before << PAIR_SHIFT | left, word_id, count, old_counts)
                    self._gain(before << PAIR_SHIFT | new_id, word_id, count, new_pairs)
                word[i] = new_id
                del word[i + 1]
                n -= 1
                i += 1
                if i < n:
                    after = word[i]
                    pair = right << PAIR_SHIFT | after
                    if pair != merged_pair:  # dropped whole above
                        self._lose(pair, word_id, count, old_counts)
                    if after != left or i + 1 == n or word[i + 1] != right:
                        self._gain(new_id << PAIR_SHIFT | after, word_id, count, new_pairs)
                    # else the next occurrence adds (C, C) as its left pair

    def _lose(self, pair: int, word_id: int, count: int, old_counts: Optional[Dict[int, int]]) -> None:
        """One occurrence of ``pair`` in word ``word_id`` (weighing ``count``) is gone."""
        pair_counts = self.pair_counts
        remaining = pair_counts[pair] - count
        if old_counts is not None and pair not in old_counts:
            old_counts[pair] = remaining + count
        if remaining:
            pair_counts[pair] = remaining
        else:
            del pair_counts[pair]
        in_words = self.pair_to_words[pair]
        left_in_word = in_words[word_id] - 1
        if left_in_word:
            in_words[word_id] = left_in_word
        elif len(in_words) == 1:
            del self.pair_to_words[pair]
        else:
            del in_words[word_id]

    def _gain(self, pair: int, word_id: int, count: int, new_pairs: List[int]) -> None:
        """One occurrence of ``pair`` appeared in word ``word_id``; a pair seen first is new."""
        total = self.pair_counts.get(pair)
        if total is None:
            new_pairs.append(pair)
            self.pair_counts[pair] = count
            self.pair_to_words[pair] = {word_id: 1}  # the constant 1: no new int to allocate
        else:
            self.pair_counts[pair] = total + count
            in_words = self.pair_to_words[pair]
            if word_id in in_words:
                in_words[word_id] += 1
            else:
                in_words[word_id] = 1
