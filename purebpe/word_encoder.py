"""One pre-token's ids: tiktoken's whole-token shortcut, then the merges.

:class:`WordEncoder` is what a tokenizer runs on every pre-token its word cache does not
hold. It applies the rule of :func:`purebpe.core.apply_merges` (merge the lowest-ranked
adjacent pair, the leftmost first) on a table whose values are packed ints,
``rank << 32 | new_id``: one int per entry where ``apply_merges``' table holds a tuple
(13 MB less for o200k on CPython), and the rank and the new id in one comparison. A
rank file's pre-token whose bytes are a token is that token (tiktoken's rule, one dict
lookup); any other word starts from its bytes, whose first pairs come from a table of all
65 536 byte pairs (a list index, no hashing). Words longer than
:data:`purebpe.core.LONG_WORD` merge with a heap, as :func:`purebpe.core.merge_in_place`
does. In the compiled build (``setup.py``) this module is native, so the compiled
scanners reach a new word's merges without an interpreted frame.
"""

from __future__ import annotations

import heapq
from typing import Dict, Final, List, Optional

from .core import LONG_WORD, PAIR_MASK, PAIR_SHIFT
from .errors import PureBPEError

__all__ = ["NO_MERGE", "WordEncoder", "pack_rank"]

#: The packed rank of a pair that is no merge: above every real one (ranks stay below
#: 2**30, so packed values fit the small ints of the compiled build).
NO_MERGE: Final = 1 << 62
#: The id of a byte with no token.
_NO_TOKEN: Final = -1


def pack_rank(rank: int, new_id: int) -> int:
    """A table value: ``rank << 32 | new_id``; the smallest packed value is the lowest rank."""
    return rank << PAIR_SHIFT | new_id


class WordEncoder:
    """Encodes one pre-token with ``pairs`` (``{left << 32 | right: rank << 32 | new_id}``),
    ``byte_ids`` (each byte's id, -1 where there is none) and ``whole_tokens``
    (tiktoken's shortcut, or ``None``).

    >>> pairs = {97 << 32 | 98: pack_rank(0, 256), 256 << 32 | 99: pack_rank(1, 257)}
    >>> encoder = WordEncoder(pairs, list(range(256)), None)
    >>> encoder.encode_word("abcab"), encoder.merge(b"cab")
    ([257, 256], [99, 256])
    """

    __slots__ = ("pairs", "byte_ids", "byte_pairs", "whole_tokens")

    def __init__(
        self, pairs: Dict[int, int], byte_ids: List[int], whole_tokens: Optional[Dict[bytes, int]]
    ) -> None:
        self.pairs = pairs
        self.byte_ids = byte_ids
        self.whole_tokens = whole_tokens
        #: ``byte_pairs[a << 8 | b]``: the packed rank of the pair of bytes ``a``, ``b``.
        self.byte_pairs = [NO_MERGE] * 65536
        for left in range(256):
            left_id = byte_ids[left]
            if left_id == _NO_TOKEN:
                continue
            for right in range(256):
                if byte_ids[right] != _NO_TOKEN:
                    found = pairs.get(left_id << PAIR_SHIFT | byte_ids[right])
                    if found is not None:
                        self.byte_pairs[left << 8 | right] = found

    def encode_word(self, word: str) -> List[int]:
        """The ids of one pre-token (a new list)."""
        return self.encode_utf8(word.encode("utf-8"))

    def encode_utf8(self, data: bytes) -> List[int]:
        """The ids of one pre-token given as its UTF-8 bytes (a new list)."""
        if self.whole_tokens is not None:
            whole = self.whole_tokens.get(data)
            if whole is not None:
                return [whole]
        return self.merge(data)

    def merge(self, data: bytes) -> List[int]:
        """The ids of ``data`` merged from its bytes (no whole-token shortcut)."""
        byte_ids = self.byte_ids
        parts = [byte_ids[byte] for byte in data]
        if _NO_TOKEN in parts:
            missing = data[parts.index(_NO_TOKEN)]
            raise PureBPEError(f"the vocab has no token for byte 0x{missing:02x}, which {data!r} needs")
        if len(parts) > LONG_WORD:
            return _merge_long(parts, self.pairs)
        byte_pairs = self.byte_pairs
        pair_ranks = [byte_pairs[data[i] << 8 | data[i + 1]] for i in range(len(data) - 1)]
        _merge(parts, pair_ranks, self.pairs)
        return parts


def _merge(parts: List[int], pair_ranks: List[int], pairs: Dict[int, int]) -> None:
    """Merge ``parts`` in place (``pair_ranks[i]``: the packed rank of parts ``i``, ``i + 1``)."""
    n = len(pair_ranks)
    while n > 0:
        best = pair_ranks[0]
        at = 0
        for i in range(1, n):
            rank = pair_ranks[i]
            if rank < best:  # strictly: the leftmost pair of the lowest rank
                best = rank
                at = i
        if best == NO_MERGE:
            break
        new = best & PAIR_MASK
        parts[at] = new
        del parts[at + 1]
        del pair_ranks[at]
        n -= 1
        # Only the pairs on either side of the new token changed.
        if at < n:
            pair_ranks[at] = pairs.get(new << PAIR_SHIFT | parts[at + 1], NO_MERGE)
        if at > 0:
            pair_ranks[at - 1] = pairs.get(parts[at - 1] << PAIR_SHIFT | new, NO_MERGE)


def _merge_long(tokens: List[int], pairs: Dict[int, int]) -> List[int]:
    """:func:`_merge` for long words, with a heap of ``rank << 32 | position``, as
    :func:`purebpe.core.merge_in_place` does (there the table holds tuples)."""
    n = len(tokens)
    next_at = list(range(1, n + 1))
    prev_at = list(range(-1, n - 1))
    heap: List[int] = []
    for i in range(n - 1):
        found = pairs.get(tokens[i] << PAIR_SHIFT | tokens[i + 1], NO_MERGE)
        if found != NO_MERGE:
            heap.append((found >> PAIR_SHIFT) << PAIR_SHIFT | i)
    heapq.heapify(heap)
    while heap:
        entry = heapq.heappop(heap)
        i = entry & PAIR_MASK
        j = next_at[i]
        if tokens[i] < 0 or j >= n:
            continue
        found = pairs.get(tokens[i] << PAIR_SHIFT | tokens[j], NO_MERGE)
        if found >> PAIR_SHIFT != entry >> PAIR_SHIFT:
            continue  # stale: the pair at i changed since this entry was pushed
        tokens[i] = found & PAIR_MASK
        tokens[j] = -1
        k = next_at[j]
        next_at[i] = k
        if k < n:
            prev_at[k] = i
            found = pairs.get(tokens[i] << PAIR_SHIFT | tokens[k], NO_MERGE)
            if found != NO_MERGE:
                heapq.heappush(heap, (found >> PAIR_SHIFT) << PAIR_SHIFT | i)
        h = prev_at[i]
        if h >= 0:
            found = pairs.get(tokens[h] << PAIR_SHIFT | tokens[i], NO_MERGE)
            if found != NO_MERGE:
                heapq.heappush(heap, (found >> PAIR_SHIFT) << PAIR_SHIFT | h)
    return [t for t in tokens if t >= 0]
