"""What every trainer shares: the word table, the tie-break key, merging a word, the result.

The canonical semantics (every variant, every test):

* a *word* is a tuple of byte tokens with a count; a pair's count is the sum over words of
  ``word count x adjacent occurrences``, overlaps included (``a a a`` holds ``(a, a)`` twice);
* each step merges the pair with the highest count; ties go to the lexicographically
  greatest pair compared as ``(bytes(left), bytes(right))`` (:meth:`WordTable.pair_key`);
  with ``tie_break="hf"``, to the pair of the smallest Hugging Face ids instead (see
  :data:`TIE_BREAKS`: the one rule every variant reads through the table's keys);
* merging rewrites a word left to right, non-overlapping (``a a a`` -> ``aa a``,
  :func:`merge_word`);
* training stops at the vocabulary size, or when no pair has ``count >= min_frequency``;
  a pair whose merged token would be longer than ``max_token_length`` bytes is never merged;
* token ids: ``0..255`` are the raw bytes, then the merges in order, then special tokens.

A trainer variant is a generator ``train(table) -> Iterator[(left, right)]`` over a
:class:`WordTable`. At each step it picks the best pair, calls :meth:`WordTable.add_token`
(which appends the new token's bytes and records the merge), yields the pair, and only when
resumed updates its own structures. The caller pulls as many merges as the vocabulary has
room for, so stopping early costs nothing and every variant can be compared step by step.

Pairs are packed into one int, ``left << PAIR_SHIFT | right``, because dicts keyed by small
ints are what PyPy's JIT handles best (no tuple allocation per lookup).
"""

from __future__ import annotations

import heapq
import platform
from array import array
from typing import Any, Callable, Dict, Final, Iterator, List, Mapping, Optional, Protocol, Sequence, Tuple

import attr

from .bytemap import BYTE_TO_UNICODE
from .errors import PureBPEError

PAIR_SHIFT: Final = 32
PAIR_MASK: Final = (1 << PAIR_SHIFT) - 1

#: The signature every trainer variant implements (see the module docstring).
Trainer = Callable[["WordTable"], Iterator[Tuple[int, int]]]


def pack_pair(left: int, right: int) -> int:
    """Pack a pair of token ids into one int key."""
    return left << PAIR_SHIFT | right


def unpack_pair(pair: int) -> Tuple[int, int]:
    """The ``(left, right)`` token ids of a packed pair."""
    return pair >> PAIR_SHIFT, pair & PAIR_MASK


def merge_word(word: Sequence[int], left: int, right: int, new_id: int) -> List[int]:
    """``word`` with every occurrence of ``(left, right)`` replaced by ``new_id``.

    Left to right and non-overlapping: ``[a, a, a]`` merging ``(a, a)`` gives ``[aa, a]``.
    """
    merged: List[int] = []
    i = 0
    n = len(word)
    while i < n:
        if i + 1 < n and word[i] == left and word[i + 1] == right:
            merged.append(new_id)
            i += 2
        else:
            merged.append(word[i])
            i += 1
    return merged


#: Words longer than this are merged with a heap (:func:`_apply_merges_long`); shorter ones
#: with a plain list, which has less overhead. Measured crossover: ~32 tokens on CPython
#: (``min`` and ``list.index`` run in C), ~200 on PyPy.
LONG_WORD: Final = 200 if platform.python_implementation() == "PyPy" else 32
#: The packed rank of a pair that is no merge: above every real one (ranks stay below
#: 2**30, so packed values fit the small ints of PyPy and the compiled build).
NO_MERGE: Final = 1 << 62


def pack_rank(rank: int, new_id: int) -> int:
    """A merge table's value: ``rank << 32 | new_id``. One int where a tuple would take an
    object, and the smallest packed value is the lowest rank, so packed values compare as
    ranks do (two merges never share a rank)."""
    return rank << PAIR_SHIFT | new_id


def apply_merges(word: Sequence[int], ranks: Mapping[int, int]) -> Sequence[int]:
    """Apply learned merges to ``word``; ``ranks`` maps a packed pair to its packed rank
    (:func:`pack_rank`).

    Repeatedly merges the lowest-ranked pair present, the leftmost first (as HF
    ``tokenizers`` and tiktoken do). This equals replaying the merges one by one in
    training order, each rewriting the word left to right (:func:`merge_word`), because a
    merge only creates pairs that contain its new token, and those rank after it: every
    occurrence of the lowest-ranked pair is merged, left to right, before any other.
    Returns ``word`` itself when no merge applies. O(n) per merge for short words, O(log n)
    for long ones.

    >>> list(apply_merges([1, 2, 3], {pack_pair(1, 2): pack_rank(0, 4), pack_pair(4, 3): pack_rank(1, 5)}))
    [5]
    """
    if len(word) > LONG_WORD:
        return _apply_merges_long(word, ranks)
    parts = list(word)
    pair_ranks = [ranks.get(parts[i] << PAIR_SHIFT | parts[i + 1], NO_MERGE) for i in range(len(parts) - 1)]
    if not pair_ranks or min(pair_ranks) == NO_MERGE:
        return word
    while pair_ranks:
        best = min(pair_ranks)
        if best == NO_MERGE:
            break
        i = pair_ranks.index(best)  # the leftmost pair of that rank
        parts[i] = best & PAIR_MASK
        del parts[i + 1]
        del pair_ranks[i]
        # Only the pairs on either side of the new token changed.
        if i < len(pair_ranks):
            pair_ranks[i] = ranks.get(parts[i] << PAIR_SHIFT | parts[i + 1], NO_MERGE)
        if i > 0:
            pair_ranks[i - 1] = ranks.get(parts[i - 1] << PAIR_SHIFT | parts[i], NO_MERGE)
    return parts


def _as_ids(word: Sequence[int]) -> Sequence[int]:
    """``word`` as a compact array of 32-bit ids, unless it is still its ``bytes``."""
    return word if isinstance(word, bytes) else array("I", word)


def _apply_merges_long(word: Sequence[int], ranks: Mapping[int, int]) -> Sequence[int]:
    """:func:`apply_merges` for long words, by :func:`merge_in_place`."""
    tokens = list(word)
    if not merge_in_place(tokens, ranks):
        return word
    return [t for t in tokens if t >= 0]


class RankLookup(Protocol):
    """Where :func:`merge_in_place` reads a pair's packed rank: a dict of them, or anything
    with a dict's ``get`` (None for a pair that does not merge)."""

    def get(self, __pair: int) -> Optional[int]: ...


def merge_in_place(tokens: List[int], ranks: RankLookup) -> bool:
    """:func:`apply_merges`' rule on ``tokens`` in place, with a heap of ``rank << 32 | position``.

    A merged token stays at its left part's position and every token merged into it
    becomes -1, so a caller can tell which original positions each result covers. The
    tokens sit in a linked list over their starting positions (``next_at``, ``prev_at``).
    Entries are not removed when their pair changes; a popped entry is used only if its
    pair still has that rank. Returns False, leaving ``tokens`` as they were, when no
    adjacent pair is a merge.

    >>> tokens = [1, 2, 3]
    >>> merge_in_place(tokens, {pack_pair(1, 2): pack_rank(0, 4), pack_pair(4, 3): pack_rank(1, 5)}), tokens
    (True, [5, -1, -1])
    """
    n = len(tokens)
    next_at = list(range(1, n + 1))
    prev_at = list(range(-1, n - 1))
    heap = []
    rank_bits = ~PAIR_MASK  # a packed rank with its new id cleared: the rank, shifted
    for i in range(n - 1):
        found = ranks.get(tokens[i] << PAIR_SHIFT | tokens[i + 1])
        if found is not None:
            heap.append(found & rank_bits | i)
    if not heap:
        return False
    heapq.heapify(heap)
    while heap:
        entry = heapq.heappop(heap)
        i = entry & PAIR_MASK
        j = next_at[i]
        if tokens[i] < 0 or j >= n:
            continue
        found = ranks.get(tokens[i] << PAIR_SHIFT | tokens[j])
        if found is None or found & rank_bits != entry & rank_bits:
            continue  # stale: the pair at i changed since this entry was pushed
        tokens[i] = found & PAIR_MASK
        tokens[j] = -1
        k = next_at[j]
        next_at[i] = k
        if k < n:
            prev_at[k] = i
            found = ranks.get(tokens[i] << PAIR_SHIFT | tokens[k])
            if found is not None:
                heapq.heappush(heap, found & rank_bits | i)
        h = prev_at[i]
        if h >= 0:
            found = ranks.get(tokens[h] << PAIR_SHIFT | tokens[i])
            if found is not None:
                heapq.heappush(heap, found & rank_bits | h)
    return True


#: Byte ``c`` as a key byte: ``255 - c`` (0..254) for ``c >= 1``; 0 needs a two-byte code.
_INVERT = bytes(range(255, -1, -1))
_ZERO_CODE = b"\xff\x00"
#: Ends every key: greater than every byte's code, so a key ends before a longer one would.
KEY_END = b"\xff\x01"


def reverse_bytes_key(token: bytes) -> bytes:
    """A ``bytes`` key that sorts in the *reverse* order of ``token`` among all byte strings.

    Python's ``heapq`` is a min-heap, but ties must go to the greatest bytes. Each byte ``c``
    becomes one code: ``255 - c`` for ``c >= 1`` and ``FF 00`` for 0, and ``KEY_END``
    (``FF 01``) is appended. The codes are prefix-free and ordered ``KEY_END > FF 00 > FE
    > ... > 00``, so keys compare code by code in the reverse order of the bytes, and a
    prefix's ``KEY_END`` sorts it *after* its extensions (``b"ab" > b"a"`` but
    ``key(b"ab") < key(b"a")``). Concatenating the keys of ``left`` and ``right`` reverses
    the order of ``(left, right)`` pairs, because ``KEY_END`` settles every comparison
    before the right halves are reached unless the left halves are equal. A ``bytes`` key
    costs half a ``str`` key of characters above U+00FF (the first form of this key):
    trainers hold one per token.
    """
    if 0 in token:
        return b"".join([_ZERO_CODE if c == 0 else _INVERT[c : c + 1] for c in token]) + KEY_END
    return token.translate(_INVERT) + KEY_END


#: How ties between pairs of the same count are broken:
#:
#: * ``"canonical"``: the greatest ``(bytes(left), bytes(right))`` wins (CS336, purebpe);
#: * ``"hf"``: the smallest ``(id(left), id(right))`` in Hugging Face ``tokenizers``' ids
#:   wins (its ``BpeTrainer`` with the ``ByteLevel`` alphabet: the 256 bytes ordered by
#:   their GPT-2 characters, :data:`HF_BYTE_RANKS`, then each merge's token in order).
#:
#: Every variant reads the rule through :attr:`WordTable.tie_keys` (greatest wins) or
#: :meth:`WordTable.reverse_key` (smallest wins, for min-heaps); nothing else changes.
TIE_BREAKS = ("canonical", "hf")

#: ``HF_BYTE_RANKS[b]``: the id ``tokenizers`` gives byte ``b`` among the bytes (its alphabet
#: is sorted by character, and byte ``b`` is the character ``BYTE_TO_UNICODE[b]``).
HF_BYTE_RANKS: List[int] = [0] * 256
for _rank, _byte in enumerate(sorted(range(256), key=lambda b: BYTE_TO_UNICODE[b])):
    HF_BYTE_RANKS[_byte] = _rank


def check_limits(min_frequency: int, max_token_length: Optional[int], tie_break: str = "canonical") -> None:
    """Refuse limits that make no sense (a merge needs a count of at least 1 and 2 bytes)."""
    if tie_break not in TIE_BREAKS:
        raise PureBPEError(f"unknown tie_break {tie_break!r}; choose one of: {', '.join(TIE_BREAKS)}")
    if min_frequency < 1:
        raise PureBPEError(f"min_frequency must be at least 1, not {min_frequency}")
    if max_token_length is not None and max_token_length < 1:
        raise PureBPEError(f"max_token_length must be at least 1, not {max_token_length}")


@attr.s(slots=True, auto_attribs=True)
class WordTable:
    """The distinct words of a corpus with their counts, and the growing vocabulary.

    ``words[i]`` is the token-id sequence of word ``i`` and ``counts[i]`` how often it
    occurs. A word starts as its ``bytes`` (indexing bytes gives the byte values, which are
    the ids of the byte tokens: one byte per token instead of an 8-byte list slot); trainers
    replace it by a list of ids once they merge inside it. ``token_bytes[t]`` is the byte
    string of token ``t``; ``merged_pairs`` the merges so far as packed id pairs (8 bytes
    each, where a tuple of two ``bytes`` costs 64), read as byte pairs through
    :attr:`merges`. Trainers rewrite ``words`` in place: a table serves one training run.
    """

    words: List[Sequence[int]]
    counts: List[int]
    token_bytes: List[bytes] = attr.Factory(lambda: [bytes([b]) for b in range(256)])
    merged_pairs: "array[int]" = attr.Factory(lambda: array("Q"))
    min_frequency: int = 1
    max_token_length: Optional[int] = None
    tie_break: str = "canonical"
    #: ``tie_keys[t]``: token ``t``'s key in the tie-break; the pair of the greatest
    #: ``(tie_keys[left], tie_keys[right])`` wins. Under ``"canonical"`` it *is*
    #: ``token_bytes`` (the same list); under ``"hf"`` minus the token's Hugging Face rank.
    tie_keys: List[Any] = attr.Factory(lambda self: _initial_tie_keys(self), takes_self=True)

    @property
    def merges(self) -> List[Tuple[bytes, bytes]]:
        """The merges so far, in order, as ``(left bytes, right bytes)`` (a new list)."""
        tb = self.token_bytes
        return [(tb[left], tb[right]) for left, right in map(unpack_pair, self.merged_pairs)]

    @classmethod
    def from_word_counts(
        cls,
        word_counts: Mapping[bytes, int],
        initial_merges: Sequence[Tuple[bytes, bytes]] = (),
        *,
        min_frequency: int = 1,
        max_token_length: Optional[int] = None,
        tie_break: str = "canonical",
    ) -> "WordTable":
        """Build the table from ``{word_bytes: count}``, replaying ``initial_merges`` first."""
        check_limits(min_frequency, max_token_length, tie_break)
        table = cls(
            words=list(word_counts),
            counts=list(word_counts.values()),
            min_frequency=min_frequency,
            max_token_length=max_token_length,
            tie_break=tie_break,
        )
        if initial_merges:
            table.replay(initial_merges)
        return table

    def replay(self, merges: Sequence[Tuple[bytes, bytes]]) -> None:
        """Add ``merges`` (learned earlier) to the vocabulary and apply them to every word."""
        ranks = self.add_merges(merges)
        # A word the merges changed is kept as 4-byte ids: a list costs 8 bytes a slot (on
        # CPython also an int object per id above 256), and SuperBPE's stage 2 replays
        # thousands of merges over words that are whole paragraphs.
        self.words = [_as_ids(apply_merges(word, ranks)) for word in self.words]

    def add_merges(self, merges: Sequence[Tuple[bytes, bytes]]) -> Dict[int, int]:
        """Add ``merges`` (learned earlier) to the vocabulary, leaving the words as they are;
        returns their packed ranks for :func:`apply_merges`."""
        ids = {token: i for i, token in enumerate(self.token_bytes)}
        ranks: Dict[int, int] = {}
        for rank, (left, right) in enumerate(merges):
            if left not in ids or right not in ids:
                raise PureBPEError(
                    f"merge {rank} ({left!r}, {right!r}) uses a token that no earlier merge made"
                )
            new_id = self.add_token(ids[left], ids[right])
            ids.setdefault(self.token_bytes[new_id], new_id)
            ranks[pack_pair(ids[left], ids[right])] = pack_rank(rank, new_id)
        return ranks

    def add_token(self, left: int, right: int) -> int:
        """Record the merge of ``(left, right)`` and return the id of the new token."""
        self.token_bytes.append(self.token_bytes[left] + self.token_bytes[right])
        self.merged_pairs.append(pack_pair(left, right))
        new_id = len(self.token_bytes) - 1
        if self.tie_keys is not self.token_bytes:  # "hf": a merge's rank is its id
            self.tie_keys.append(-new_id)
        return new_id

    def pair_key(self, pair: int) -> Tuple[Any, Any]:
        """The tie-break key of a packed pair (``(bytes(left), bytes(right))`` under the
        canonical rule); greatest wins."""
        return self.tie_keys[pair >> PAIR_SHIFT], self.tie_keys[pair & PAIR_MASK]

    def reverse_key(self, token: int) -> bytes:
        """Token ``token``'s tie-break key for min-heaps: the smallest concatenation of a
        pair's two keys wins the tie (:func:`reverse_bytes_key`; under ``"hf"``, the rank
        in 4 fixed-width bytes, so that two keys concatenated compare as a tuple)."""
        if self.tie_keys is self.token_bytes:
            return reverse_bytes_key(self.token_bytes[token])
        rank: int = -self.tie_keys[token]
        return rank.to_bytes(4, "big")

    def mergeable(self, pair: int) -> bool:
        """Whether the merged token would respect ``max_token_length``."""
        if self.max_token_length is None:
            return True
        tb = self.token_bytes
        return len(tb[pair >> PAIR_SHIFT]) + len(tb[pair & PAIR_MASK]) <= self.max_token_length

    def best_pair(self, pair_counts: Mapping[int, int]) -> Optional[int]:
        """The pair to merge next by a full scan of ``pair_counts``, or ``None`` to stop.

        Highest count first, ties to the greatest :meth:`pair_key`; pairs below
        ``min_frequency`` or over ``max_token_length`` are not eligible.
        """
        best: Optional[int] = None
        best_count = self.min_frequency - 1
        best_key: Tuple[Any, Any] = (b"", b"")
        for pair, count in pair_counts.items():
            if count < best_count:
                continue
            if count == best_count and (best is None or self.pair_key(pair) <= best_key):
                continue
            if not self.mergeable(pair):
                continue
            best, best_count, best_key = pair, count, self.pair_key(pair)
        return best

    def count_pairs(self) -> Dict[int, int]:
        """Every pair's count over all words, from scratch (overlaps included)."""
        pair_counts: Dict[int, int] = {}
        for word, count in zip(self.words, self.counts):
            for i in range(len(word) - 1):
                pair = word[i] << PAIR_SHIFT | word[i + 1]
                pair_counts[pair] = pair_counts.get(pair, 0) + count
        return pair_counts


def _initial_tie_keys(table: WordTable) -> List[Any]:
    """The tie keys of the table's first tokens (see :attr:`WordTable.tie_keys`)."""
    if table.tie_break == "canonical":
        return table.token_bytes
    keys: List[Any] = [-HF_BYTE_RANKS[b] for b in range(256)]
    return keys + [-t for t in range(256, len(table.token_bytes))]
