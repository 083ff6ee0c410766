"""The positional trainer: the corpus as one flat array, each merge visits only its live positions.

For text without spaces (Chinese, Japanese, or any text trained with ``pretokenizer="none"``)
a "word" is a whole line or document, and trainers that rewrite whole words pay for the
whole word at every merge that touches it: O(N^2) on long sequences. This trainer never
rewrites a sequence; it edits the few array cells of each merged occurrence in place.

Keeps:
  ``tokens``          one flat ``array('H')`` (``'I'`` once ids reach 65535) with one cell per
                      byte of every distinct sequence, each sequence followed by ``mark``
                      (and one ``mark`` in front). A live token holds its id in its *first
                      and last* cell and ``mark`` in the cells between: the ``seg_status``
                      array of the issue folded into the ids, since a token's length is
                      ``token_len[id]``. So from a token start ``p`` the next token starts at
                      ``p + token_len[tokens[p]]``, the previous one ends at ``p - 1`` and
                      starts at ``p - token_len[tokens[p - 1]]``, and ``mark`` in either
                      place means the sequence ends there. Two bytes per corpus byte.
  the pivot table     sequences are laid out by decreasing count, so the count of the sequence
                      holding position ``p`` is ``group_weights[g]`` for the group ``g`` with
                      ``group_starts[g] <= p < group_starts[g + 1]`` (one group per distinct
                      count: a handful of entries).
  ``pair_counts``     the weighted live count of every *tracked* pair (see the floor below).
  ``pair_positions``  for each tracked pair, an ``array('I')`` of the positions where its left
                      token started when the occurrence was made, in increasing order (all
                      are written at once, left to right: by the pass that starts tracking
                      the pair, or at the end of the step that makes it). An
                      entry ``p`` of pair ``(l, r)`` is live iff ``tokens[p] == l`` and
                      ``tokens[p + token_len[l]] == r``: once ``l`` at ``p`` is merged away,
                      ``p`` never holds ``l`` again (ids only grow, and a merge creates all
                      of its tokens in its own step), so stale entries cost one check.
  ``heap``            a lazy max-heap of ``(-count, key(left), key(right), pair)`` over tracked
                      pairs; :func:`~purebpe.core.reverse_bytes_key` sends ties to the
                      greatest ``(bytes, bytes)``. Counts of existing pairs only fall, so an
                      entry whose count is out of date is re-pushed with the current count
                      when it reaches the top.

After merge: the merged pair's entries are visited in increasing order, so runs
(``0 0 0 0``, ``A B A B``) merge left to right exactly as :func:`~purebpe.core.merge_word`
does; each live one has its four cells rewritten, nothing else. Then, off ``tokens`` around
the merged occurrences, their weights are summed by neighbour: an occurrence after ``x``
made ``(x, new)`` and took ``(x, left)`` away (``(right, left)`` when ``x`` is ``new``, the
step's previous occurrence), one before ``y`` made ``(new, y)`` and took ``(right, y)``
away. So each neighbour's pairs change once per step, by the sum (on the benchmark corpora,
6 to 12 times fewer updates than one per side of each occurrence), and the new pairs that
are tracked get their positions listed. The step is over, so a pair made and lost again
within it (``(ab, a)`` in ``abab``) is never counted, and the loops have few branches (each
is a trace for PyPy's JIT to compile).

The floor (memory): a corpus holds far more distinct pairs than a vocabulary has merges
(2 MB of Chinese: 10 000 byte pairs at the start, 200 000 pairs after 5 000 merges, most seen
a few times), and storing every position of every pair costs 4 bytes per corpus byte. So
only pairs counted at least ``floor`` times are tracked, and every untracked pair is below
the floor: counts of existing pairs only fall, and a new pair's count is final at the end of
the step that creates it, when it is tracked or forgotten. While the best tracked pair is at
the floor or above, it is the best pair. When it falls below, the floor is halved, the
tracked pairs that fell below it are forgotten, and the pairs that reach it are tracked.
``sums`` holds the counts of the *untracked* pairs summed into hashed buckets, kept exact
through every merge; a bucket's sum bounds the count of every pair in it, so one pass over
``tokens`` lists the positions of just the untracked pairs of the buckets that reach the
floor, and those that do reach it are tracked. The floor changes O(log(largest count))
times.

Compaction: stale entries are counted as they arise (a tracked pair losing an occurrence).
When more than ``STALE_FRACTION`` (half) of all stored entries are stale, every list is
filtered against ``tokens`` in place, so the lists stay within 2x their live entries (the
issue suggested 3/4; on one long line of English, where merges eat their neighbours' pairs
fast, that let stale entries hold 85% of 19 MB of lists).

Cost: O(N) to lay out the N bytes of the distinct sequences, O(live occurrences) per merge,
O(N) per floor change. Memory: 2 bytes per byte of the distinct sequences, 4 bytes per
bucket (one per ``CELLS_PER_BUCKET`` cells), 4 per tracked position, and the small dicts and
heap of the tracked pairs.

The trainer owns the run: once ``tokens`` is built it empties ``table.words`` so that the
word list can be freed; the table's counts, vocabulary and merges are kept up to date.
"""

from __future__ import annotations

import heapq
import platform
import sys
from array import array
from bisect import bisect_right
from typing import TYPE_CHECKING, Dict, Final, Iterator, List, MutableSequence, Optional, Tuple, cast

from ..core import PAIR_SHIFT, WordTable, unpack_pair
from ..errors import PureBPEError

# The next three are read once per step or floor change, not in the loops, and stay plain
# globals (not ``Final``, which the compiled build inlines) so that the tests can vary them.
#: The floor is divided by this when the best tracked pair falls below it.
FLOOR_DIVISOR = 2
#: Compact the position lists when more than this fraction of their entries is stale.
STALE_FRACTION = 0.5
#: A pass over ``tokens`` lists the candidate pairs of at most one bucket in this many
#: (a sixteenth of the untracked occurrences, about: few passes, little held at once).
PASS_SHARE = 16
#: Bucket sums use about one bucket per this many cells of ``tokens`` (at least 1024)...
CELLS_PER_BUCKET: Final = 32
#: ... and at most this many: distinct pairs grow more slowly than the corpus.
MAX_BUCKETS: Final = 1 << 19
#: The bucket of pair ``(x, y)`` is ``(x * HASH_MULTIPLIER + y) & mask``: odd, so distinct
#: left ids spread over the buckets, and small enough that the product stays a machine int.
HASH_MULTIPLIER: Final = 1000003

#: Cells that the warm-up pass reads on PyPy (see ``PositionalState.__init__``).
WARM_UP_CELLS: Final = 1 << 16
#: Bytes of words copied into ``tokens`` at a time (bounds the temporary buffers).
LAYOUT_SLICE: Final = 1 << 16

#: Separator and inner-cell value of each ``tokens`` typecode: larger than every token id.
MARKS = {"H": 0xFFFF, "I": 0xFFFFFFFF}

if TYPE_CHECKING:
    from librt.vecs import vec  # type: ignore[import-not-found,unused-ignore]  # (mypy < 2)
    from mypy_extensions import i32

    Positions = array[int]
    #: The cells of ``tokens``: what the compiled build holds them in (a ``vec[i32]``, which
    #: mypyc indexes natively, where an ``array`` read costs it two int objects: the
    #: passes over the cells run 3x faster). Interpreted, they are an ``array('H')`` or
    #: ``array('I')`` (2 bytes a cell, and PyPy's JIT indexes it natively); the type
    #: checker sees the compiled build's type, which the array's indexing matches.
    Cells = vec[i32]

#: Whether this module runs compiled (mypyc): its cells are then a ``vec[i32]``.
COMPILED: Final = not __file__.endswith(".py")
#: The compiled build's separator and inner-cell value: the largest ``i32``.
VEC_MARK: Final = 0x7FFFFFFF
HeapEntry = Tuple[int, bytes, bytes, int]


def train(table: WordTable) -> Iterator[Tuple[int, int]]:
    """Yield the merges of ``table`` one by one (the trainer protocol of :mod:`purebpe.core`)."""
    state = PositionalState(table)
    while True:
        best = state.pop_best()
        if best is None:
            return
        left, right = unpack_pair(best)
        new_id = table.add_token(left, right)
        yield left, right
        state.merge(best, new_id)


class PositionalState:
    """The flat token array, the tracked pairs and their positions (see the module docstring)."""

    def __init__(self, table: WordTable, buckets: Optional[int] = None) -> None:
        """Lay out ``table`` (whose words it then drops); ``buckets``: a power of two, for tests."""
        self.min_frequency = table.min_frequency
        self.max_length = table.max_token_length or 1 << 62
        self.token_len = [len(token) for token in table.token_bytes]
        self.reverse_key = table.reverse_key  # the tie-break's key of a token, for the heap
        self.token_keys = [table.reverse_key(token) for token in range(len(table.token_bytes))]
        typecode = "H" if len(table.token_bytes) < MARKS["H"] else "I"
        self.mark = VEC_MARK if COMPILED else MARKS[typecode]
        self.tokens: Cells
        self.tokens, self.group_starts, self.group_weights = lay_out(
            table, self.token_len, self.mark, typecode
        )
        table.words = []  # the flat array replaces them (see the module docstring)
        self.position_type = "I" if len(self.tokens) < 1 << 32 else "Q"
        # Bucket sums of the untracked pairs' counts (all of them, for now), kept exact.
        if buckets is None:
            cells: int = len(self.tokens)
            wanted = min(MAX_BUCKETS, max(1024, cells // CELLS_PER_BUCKET))
            buckets = 1 << (wanted - 1).bit_length()
        self.mask = buckets - 1
        self.per_pass = max(1, buckets // PASS_SHARE)  # heavy buckets listed per pass
        starts, weights = self.group_starts, self.group_weights
        total = sum(weights[g] * (starts[g + 1] - starts[g]) for g in range(len(weights)))
        self.sums = bucket_sums(self, self.mask, total)
        self.floor = total + 1  # above every count: nothing is tracked until pop_best
        self.pair_counts: Dict[int, int] = {}
        self.pair_positions: Dict[int, Positions] = {}
        self.heap: List[HeapEntry] = []
        self.stored = 0  # entries in all position lists
        self.stale = 0  # of which no longer live
        # _settle()'s weights and numbers of a step's occurrences by the id after which and
        # the id before which they are (all 0 between steps).
        self.by_neighbour = [[0] * len(self.token_len) for _ in range(4)]
        if platform.python_implementation() == "PyPy":
            # Let the JIT compile the walk of list_candidates on its common path (a pair
            # whose bucket is light) first: its loop is the path of the iteration it was
            # traced on, and every other path leaves it for a bridge. (Traced in the first
            # real pass, it ran 3-4x slower for the whole run; traced on a pass over no
            # bucket, with the range test first, every pair of every later pass left it
            # for a bridge: 26% of the run's instructions.) The sequences of the first
            # WARM_UP_CELLS cells are enough for that.
            list_candidates(self, total + 1, 0, buckets, min(len(self.tokens), WARM_UP_CELLS))

    # -- choosing the next merge --------------------------------------------------------

    def pop_best(self) -> Optional[int]:
        """Remove and return the pair to merge next, or ``None`` when no pair is eligible."""
        while True:
            best = self._valid_top()
            if best is not None and self.pair_counts[best] >= self.floor:
                heapq.heappop(self.heap)
                return best
            # Untracked pairs (all below the floor) may beat the best tracked one.
            if self.floor <= self.min_frequency:
                return None
            self._lower_floor()

    def _valid_top(self) -> Optional[int]:
        """The pair on top of the heap, after dropping or refreshing out-of-date entries."""
        heap, pair_counts, min_frequency = self.heap, self.pair_counts, self.min_frequency
        while heap:
            negative_count, left_key, right_key, pair = heap[0]
            count = pair_counts.get(pair, 0)
            if count == -negative_count:
                return pair
            if count >= min_frequency:
                heapq.heapreplace(heap, (-count, left_key, right_key, pair))
            else:
                heapq.heappop(heap)
        return None

    def _lower_floor(self) -> None:
        """Divide the floor and track every pair that now reaches it (with its positions)."""
        self.floor = floor = max(self.min_frequency, min(self.floor, max(self.sums)) // FLOOR_DIVISOR)
        self._untrack_below(floor)
        sums, token_len, keys = self.sums, self.token_len, self.token_keys
        max_length = self.max_length
        bounds = [0]  # bucket ranges of at most per_pass heavy buckets each
        heavy, per_pass = 0, self.per_pass
        for bucket in range(len(sums)):
            if sums[bucket] >= floor:
                if heavy == per_pass:
                    bounds.append(bucket)
                    heavy = 0
                heavy += 1
        bounds.append(len(sums))
        for low, high in zip(bounds, bounds[1:]):
            pairs, counts, lists = list_candidates(self, floor, low, high)
            for pair, count, positions in zip(pairs, counts, lists):
                left, right = unpack_pair(pair)
                if count >= floor and token_len[left] + token_len[right] <= max_length:
                    self.pair_counts[pair] = count
                    self.pair_positions[pair] = positions
                    self.stored += len(positions)
                    heapq.heappush(self.heap, (-count, keys[left], keys[right], pair))
                    sums[(left * HASH_MULTIPLIER + right) & self.mask] -= count  # now tracked

    def _untrack_below(self, floor: int) -> None:
        """Stop tracking the pairs that fell below ``floor`` (their counts go back to ``sums``)."""
        tokens, token_len, pair_counts = self.tokens, self.token_len, self.pair_counts
        for pair in list(self.pair_positions):
            count = pair_counts.get(pair, 0)
            if count >= floor:
                continue
            positions = self.pair_positions.pop(pair)
            left, right = unpack_pair(pair)
            n = token_len[left]
            live = 0
            if count:
                del pair_counts[pair]
                self.sums[(left * HASH_MULTIPLIER + right) & self.mask] += count
                for p in positions:  # (a plain loop: PyPy traced the generator's paths apart)
                    if tokens[p] == left and tokens[p + n] == right:
                        live += 1
            self.stored -= len(positions)
            self.stale -= len(positions) - live

    # -- applying a merge ---------------------------------------------------------------

    def merge(self, best: int, new_id: int) -> None:
        """Rewrite every live occurrence of ``best`` as ``new_id`` and update the pairs."""
        left, right = unpack_pair(best)
        len_left, len_right = self.token_len[left], self.token_len[right]
        self.token_len.append(len_left + len_right)
        self.token_keys.append(self.reverse_key(new_id))
        for by_neighbour in self.by_neighbour:
            by_neighbour.append(0)
        if new_id >= self.mark:
            self._widen()
        tokens, mark = self.tokens, self.mark
        positions = self.pair_positions.pop(best)
        merged = 0
        for p in positions:  # increasing, so runs merge left to right
            q = p + len_left
            if tokens[p] != left or tokens[q] != right:
                continue  # stale (counted when its occurrence was destroyed)
            end = q + len_right  # the cell after the occurrence
            # The old inner ends become inner cells, then both outer ends hold the new id
            # (in this order: a one-cell part is an inner end and an outer end at once).
            tokens[q - 1] = mark
            tokens[q] = mark
            tokens[p] = new_id
            tokens[end - 1] = new_id
            positions[merged] = p  # keep the merged positions, in place (merged <= index)
            merged += 1
        self.stored -= len(positions)
        self.stale -= len(positions) - merged
        del positions[merged:]
        self._settle(left, right, new_id, positions)
        self.pair_counts.pop(best, None)
        if self.stale > STALE_FRACTION * self.stored:
            self._compact()

    def _settle(self, left: int, right: int, new_id: int, merged_at: Positions) -> None:
        """Update the pairs around ``merged_at`` (every token ``new_id``, made of ``left`` and
        ``right``, in increasing order): the neighbours' old pairs lose the occurrences, the
        new pairs that reach the floor are tracked, with their positions; the others forgotten.

        A forgotten pair stays below the floor: no step after this one can add to it.
        """
        tokens, mark, token_len = self.tokens, self.mark, self.token_len
        new_len = token_len[new_id]
        group_starts, group_weights = self.group_starts, self.group_weights
        # The occurrences summed by their neighbour x before and y after (see the module
        # docstring) in lists indexed by the neighbour, cheaper than a dict: their weights
        # and their number (for the stale count), with the ids met. (new_id, new_id) is
        # counted from its right half.
        weight_after, seen_after, weight_before, seen_before = self.by_neighbour
        met_after: List[int] = []
        met_before: List[int] = []
        group_end = weight = 0
        for p in merged_at:
            if p >= group_end:  # positions increase, so the group only moves forward
                group = bisect_right(group_starts, p) - 1
                group_end, weight = group_starts[group + 1], group_weights[group]
            before: int = tokens[p - 1]
            if before != mark:
                if not seen_after[before]:
                    met_after.append(before)
                weight_after[before] += weight
                seen_after[before] += 1
            after: int = tokens[p + new_len]
            if after != mark and after != new_id:
                if not seen_before[after]:
                    met_before.append(after)
                weight_before[after] += weight
                seen_before[after] += 1
        pair_counts, sums, mask = self.pair_counts, self.sums, self.mask
        stale = 0
        new_lists: Dict[int, Positions] = {}
        for x in met_after:
            count = weight_after[x]
            taken = right if x == new_id else x
            stale += lose(pair_counts, sums, mask, taken, left, count, seen_after[x])
            self._keep_or_forget(x, new_id, count, new_lists)
            weight_after[x] = seen_after[x] = 0
        for y in met_before:
            count = weight_before[y]
            stale += lose(pair_counts, sums, mask, right, y, count, seen_before[y])
            self._keep_or_forget(new_id, y, count, new_lists)
            weight_before[y] = seen_before[y] = 0
        self.stale += stale
        if not new_lists:
            return
        # Every token new_id is one of merged_at: its pairs are the pairs of its two
        # neighbours, read off the array.
        listed = 0
        for p in merged_at:
            before = tokens[p - 1]
            if before != mark:
                positions = new_lists.get(before << PAIR_SHIFT | new_id)
                if positions is not None:
                    positions.append(p - token_len[before])
                    listed += 1
            after = tokens[p + new_len]
            if after != mark and after != new_id:  # (new, new) is added from its right half
                positions = new_lists.get(new_id << PAIR_SHIFT | after)
                if positions is not None:
                    positions.append(p)
                    listed += 1
        self.pair_positions.update(new_lists)
        self.stored += listed

    def _keep_or_forget(self, left: int, right: int, count: int, new_lists: Dict[int, Positions]) -> None:
        """Track the new pair ``(left, right)`` of ``count`` if it reaches the floor, with an
        empty position list in ``new_lists`` for _settle to fill; else add it to its bucket's sum."""
        if count >= self.floor and self.token_len[left] + self.token_len[right] <= self.max_length:
            pair = left << PAIR_SHIFT | right
            self.pair_counts[pair] = count
            new_lists[pair] = array(self.position_type)
            heapq.heappush(self.heap, (-count, self.token_keys[left], self.token_keys[right], pair))
        else:
            self.sums[(left * HASH_MULTIPLIER + right) & self.mask] += count

    def _compact(self) -> None:
        """Filter every position list against ``tokens``, in place; drop the lists of lost pairs."""
        tokens, token_len, pair_counts = self.tokens, self.token_len, self.pair_counts
        for pair in [pair for pair in self.pair_positions if pair not in pair_counts]:
            del self.pair_positions[pair]
        stored = 0
        for pair, positions in self.pair_positions.items():
            left, right = unpack_pair(pair)
            n = token_len[left]
            kept = 0
            for p in positions:  # (a list comprehension would hold them all twice)
                if tokens[p] == left and tokens[p + n] == right:
                    positions[kept] = p
                    kept += 1
            del positions[kept:]
            stored += kept
        self.stored, self.stale = stored, 0

    def _widen(self) -> None:
        """Switch ``tokens`` to 32-bit ids: the vocabulary reached the 16-bit ``mark``."""
        if COMPILED:  # (an i32 holds 2**31 - 1 ids: unreachable)
            raise PureBPEError("the compiled positional trainer holds at most 2**31 - 2 tokens")
        narrow_mark, self.mark = self.mark, MARKS["I"]
        wide: Cells = array("I", self.tokens)  # type: ignore[assignment]
        for i in range(len(wide)):
            if wide[i] == narrow_mark:
                wide[i] = self.mark
        self.tokens = wide


def lose(
    pair_counts: Dict[int, int],
    sums: MutableSequence[int],
    mask: int,
    left: int,
    right: int,
    count: int,
    occurrences: int,
) -> int:
    """Take ``occurrences`` of ``(left, right)``, of total ``count``, away: from its count if
    it is tracked (then its entries are stale: returns ``occurrences``), else from its
    bucket's sum (returns 0).

    A tracked pair that loses its last occurrence leaves ``pair_counts``; its position list
    stays until the next compaction (all of it counted stale).
    """
    pair = left << PAIR_SHIFT | right
    tracked = pair_counts.get(pair)
    if tracked is None:
        sums[(left * HASH_MULTIPLIER + right) & mask] -= count
        return 0
    if tracked > count:
        pair_counts[pair] = tracked - count
    else:
        del pair_counts[pair]
    return occurrences


def lay_out(
    table: WordTable, token_len: List[int], mark: int, typecode: str
) -> Tuple[Cells, List[int], List[int]]:
    """``tokens`` for the table's words (those with a pair), by decreasing count, and the pivots."""
    words, counts = table.words, table.counts
    # The words of each count, in table order: one group per distinct count, without a
    # comparison sort of all the words (a third of the layout's time when it had one).
    by_count: Dict[int, List[int]] = {}
    for i, word in enumerate(words):
        if counts[i] > 0 and len(word) > 1:
            same = by_count.get(counts[i])
            if same is None:
                by_count[counts[i]] = [i]
            else:
                same.append(i)
    group_weights = sorted(by_count, reverse=True)
    size = 1 + sum(
        1 + (len(words[i]) if isinstance(words[i], bytes) else sum(token_len[t] for t in words[i]))
        for same in by_count.values()
        for i in same
    )
    # One allocation of the final size: a growing array would leave its old copies behind.
    tokens = new_cells(size, mark, typecode)
    group_starts: List[int] = []
    batch: List[bytes] = []  # byte words not copied yet, from batch_start on
    batch_start = p = 1
    for weight in group_weights:
        group_starts.append(p)
        for i in by_count[weight]:
            word = words[i]
            if isinstance(word, bytes) and len(word) <= LAYOUT_SLICE:
                batch.append(word)
                p += len(word) + 1
                if p - batch_start >= LAYOUT_SLICE:
                    copy_bytes(tokens, batch_start, batch, mark)
                    batch, batch_start = [], p
                continue
            copy_bytes(tokens, batch_start, batch, mark)
            batch = []
            if isinstance(word, bytes):  # a long word, a slice at a time (the separator
                # each copy writes after its slice is the next slice's first cell)
                for start in range(0, len(word), LAYOUT_SLICE):
                    copy_bytes(tokens, p + start, [word[start : start + LAYOUT_SLICE]], mark)
                p += len(word)
            else:  # merged by replayed initial merges: a token's id in its first and last cell
                for token in word:
                    tokens[p] = token
                    p += token_len[token]
                    tokens[p - 1] = token
            p += 1  # the separator
            batch_start = p
    copy_bytes(tokens, batch_start, batch, mark)
    group_starts.append(p)
    return tokens, group_starts, group_weights


def new_cells(size: int, mark: int, typecode: str) -> Cells:
    """``size`` cells holding ``mark``: a ``vec[i32]`` compiled, else an ``array(typecode)``."""
    filled = array(typecode if not COMPILED else "i", [mark]) * size
    if COMPILED:
        from librt.vecs import vec
        from mypy_extensions import i32

        return vec[i32](filled)
    return filled  # type: ignore[return-value]


def copy_bytes(tokens: Cells, start: int, words: List[bytes], mark: int) -> None:
    """Write ``words`` into ``tokens`` from ``start`` on, one cell per byte (a byte's token id
    is its value), each word followed by a separator cell."""
    if not words:
        return
    blob = b"\0".join(words)
    if COMPILED:  # a vec takes no slices, and its loop is native
        for i in range(len(blob)):
            tokens[start + i] = blob[i]
    else:
        array_ = cast("array[int]", tokens)
        itemsize = array_.itemsize
        cells = bytearray(itemsize * len(blob))
        cells[0 if sys.byteorder == "little" else itemsize - 1 :: itemsize] = blob  # widened in C
        array_[start : start + len(blob)] = array(array_.typecode, cells)
    for word in words:  # the separators: between the words, and after the last one
        start += len(word)
        tokens[start] = mark
        start += 1


def bucket_sums(state: PositionalState, mask: int, total: int) -> MutableSequence[int]:
    """For each bucket, the total count of the pairs hashed to it (an upper bound of each).

    ``total`` bounds every sum (it counts every cell as a pair): 4-byte ints mostly,
    Python ints for astronomical counts (a hand-made table).
    """
    tokens, token_len, mark = state.tokens, state.token_len, state.mark
    starts, weights = state.group_starts, state.group_weights
    sums: MutableSequence[int]
    if total < 1 << 31:
        sums = array("i", [0]) * (mask + 1)
    else:
        sums = array("q", [0]) * (mask + 1) if total < 1 << 63 else [0] * (mask + 1)
    for group, weight in enumerate(weights):
        p, end = starts[group], starts[group + 1]
        x: int = tokens[p]  # (a group holds at least one sequence)
        while p < end:  # p: a token start, x its token; one flat loop over the group's sequences
            q = p + token_len[x]
            y: int = tokens[q]
            if y == mark:  # the sequence ends; the next one starts after the separator
                p = q + 1
                x = tokens[p] if p < end else mark
                continue
            sums[(x * HASH_MULTIPLIER + y) & mask] += weight
            p, x = q, y  # y is the next token: each cell is read once (in the compiled
            # build, a read of an array cell costs two int objects)
    return sums


def list_candidates(
    state: PositionalState, floor: int, low: int, high: int, end: int = -1
) -> Tuple[List[int], List[int], List[Positions]]:
    """The untracked pairs in the buckets ``low <= b < high`` that may reach ``floor``, with
    their counts and their positions: three lists, one entry per pair.

    These are all the untracked pairs of those buckets that may reach the floor (a bucket's
    sum bounds its pairs' counts), and a few that do not. ``low`` and ``high`` bound how
    many are held at once: a pass handles at most ``state.per_pass`` heavy buckets. The
    tokens starting before ``end`` are read (all of them by default).
    """
    tokens, token_len, mark = state.tokens, state.token_len, state.mark
    sums, mask, position_type = state.sums, state.mask, state.position_type
    starts, weights = state.group_starts, state.group_weights
    # The pairs met map to their entry in the three lists, the tracked pairs all to -1: a
    # single lookup tells a tracked pair, a new candidate and a listed one apart.
    entries: Dict[int, int] = dict.fromkeys(state.pair_counts, -1)
    pairs: List[int] = []
    counts: List[int] = []
    lists: List[Positions] = []
    end = len(tokens) if end < 0 else end
    if not weights:
        return pairs, counts, lists
    p, group = 1, 0
    group_end, weight = starts[1], weights[0]
    x: int = tokens[p]
    while p < end:  # as in bucket_sums, one flat loop over the groups' sequences
        q = p + token_len[x]
        y: int = tokens[q]
        if y == mark:  # the sequence ends; the next one starts after the separator
            p = q + 1
            if p >= end:
                break
            if p == group_end:  # (a group holds at least one sequence)
                group += 1
                group_end, weight = starts[group + 1], weights[group]
            x = tokens[p]
            continue
        bucket = (x * HASH_MULTIPLIER + y) & mask
        if sums[bucket] >= floor and low <= bucket < high:  # (false, light: the common path)
            pair = x << PAIR_SHIFT | y
            entry = entries.get(pair)
            if entry is None:
                entries[pair] = len(pairs)
                pairs.append(pair)
                counts.append(weight)
                lists.append(array(position_type, [p]))
            elif entry >= 0:
                counts[entry] += weight
                lists[entry].append(p)
        p, x = q, y
    return pairs, counts, lists
