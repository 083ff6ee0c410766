"""One pre-token's ids: tiktoken's whole-token shortcut, then the merges.

:class:`WordEncoder` is what a tokenizer runs on every pre-token its word cache does not
hold. It applies the rule of :func:`purebpe.core.apply_merges` (merge the lowest-ranked
adjacent pair, the leftmost first) on the same table of packed ranks
(:func:`purebpe.core.pack_rank`), inlined for the word cache's misses and able to look a
rank file's pairs up as it meets them (below). A rank file's pre-token whose bytes are a
token is that token (tiktoken's rule, one dict lookup); any other word starts from its
bytes, whose first pairs come from a table of all 65 536 byte pairs (a list index, no
hashing). Words longer than :data:`purebpe.core.LONG_WORD` merge with a heap, by
:func:`purebpe.core.merge_in_place`. In the compiled build (``setup.py``) this
module is native, so the compiled scanners reach a new word's merges without an
interpreted frame.

A rank file's table is not built in advance. By tiktoken's rule a pair of tokens merges
into the token their bytes make together, so an encoder given ``token_bytes`` fills
``pairs`` as it meets pairs: one concatenation and one lookup in ``whole_tokens`` the
first time, an int lookup after. Building every pair of o200k's 200 000 tokens in advance
(446 000 of them) took 1.0 s of its 1.2-1.4 s load on CPython, 0.7 of 1.1 s on PyPy; a
text meets far fewer (the 2 MB of mixed text of ``bench_hf_pipelines``: 88 000 pairs of
cl100k, 77 000 of them merging into nothing, remembered too), and its first pass pays
0.05 s on PyPy and 0.08 s on CPython for looking them up.
"""

from __future__ import annotations

from typing import Dict, Final, List, Optional

from .core import LONG_WORD, NO_MERGE, PAIR_MASK, PAIR_SHIFT, merge_in_place, pack_rank
from .errors import PureBPEError

__all__ = ["PAIRS_REMEMBERED", "WordEncoder"]

#: The id of a byte with no token.
_NO_TOKEN: Final = -1
#: Pairs a rank file's encoder remembers before it forgets them all (read when one is
#: added, so that a test can lower it): about 100 MB on CPython at most.
PAIRS_REMEMBERED = 1 << 20


class WordEncoder:
    """Encodes one pre-token with ``pairs`` (``{left << 32 | right: rank << 32 | new_id}``),
    ``byte_ids`` (each byte's id, -1 where there is none) and ``whole_tokens``
    (tiktoken's shortcut, or ``None``).

    With ``token_bytes`` (each id's bytes), pairs follow tiktoken's rule instead:
    ``whole_tokens`` gives the rank of a pair's concatenated bytes, which is also the id it
    merges into, and ``pairs`` remembers each pair looked up (see the module docstring).

    >>> pairs = {97 << 32 | 98: pack_rank(0, 256), 256 << 32 | 99: pack_rank(1, 257)}
    >>> encoder = WordEncoder(pairs, list(range(256)), None)
    >>> encoder.encode_word("abcab"), encoder.merge(b"cab")
    ([257, 256], [99, 256])
    >>> ranks = {bytes([b]): b for b in range(256)}
    >>> ranks.update({b"ab": 256, b"abc": 257})
    >>> by_rule = WordEncoder({}, list(range(256)), ranks, [*ranks])
    >>> by_rule.merge(b"abcab"), by_rule.encode_word("abc")
    ([257, 256], [257])
    """

    __slots__ = ("pairs", "byte_ids", "byte_pairs", "whole_tokens", "token_bytes", "rule_tokens")

    def __init__(
        self,
        pairs: Dict[int, int],
        byte_ids: List[int],
        whole_tokens: Optional[Dict[bytes, int]],
        token_bytes: Optional[List[Optional[bytes]]] = None,
    ) -> None:
        if token_bytes is not None and whole_tokens is None:
            raise ValueError("tiktoken's rule (token_bytes) needs whole_tokens")
        self.pairs = pairs
        self.byte_ids = byte_ids
        self.whole_tokens = whole_tokens
        #: Each id's bytes, and the tokens a pair's bytes are looked up in, by tiktoken's
        #: rule (``[]`` and ``None`` where ``pairs`` is every pair).
        self.token_bytes: List[Optional[bytes]] = [] if token_bytes is None else token_bytes
        self.rule_tokens = None if token_bytes is None else whole_tokens
        #: ``byte_pairs[a << 8 | b]``: the packed rank of the pair of bytes ``a``, ``b``.
        self.byte_pairs = [NO_MERGE] * 65536
        if self.rule_tokens is not None:
            # By the rule, the pairs of two bytes are the tokens of two bytes.
            for token, rank in self.rule_tokens.items():
                if len(token) == 2 and byte_ids[token[0]] != _NO_TOKEN and byte_ids[token[1]] != _NO_TOKEN:
                    self.byte_pairs[token[0] << 8 | token[1]] = pack_rank(rank, rank)
            return
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
            return _merge_long(parts, self.pairs, self.token_bytes, self.rule_tokens)
        byte_pairs = self.byte_pairs
        pair_ranks = [byte_pairs[data[i] << 8 | data[i + 1]] for i in range(len(data) - 1)]
        _merge(parts, pair_ranks, self.pairs, self.token_bytes, self.rule_tokens)
        return parts


def _rank_by_rule(
    pairs: Dict[int, int], pair: int, token_bytes: List[Optional[bytes]], rule_tokens: Dict[bytes, int]
) -> int:
    """The packed rank of ``pair`` by tiktoken's rule, remembered in ``pairs``."""
    left = token_bytes[pair >> PAIR_SHIFT]
    right = token_bytes[pair & PAIR_MASK]
    rank = None if left is None or right is None else rule_tokens.get(left + right)
    found = NO_MERGE if rank is None else pack_rank(rank, rank)
    if len(pairs) >= PAIRS_REMEMBERED:
        pairs.clear()
    pairs[pair] = found
    return found


def _merge(
    parts: List[int],
    pair_ranks: List[int],
    pairs: Dict[int, int],
    token_bytes: List[Optional[bytes]],
    rule_tokens: Optional[Dict[bytes, int]],
) -> None:
    """Merge ``parts`` in place (``pair_ranks[i]``: the packed rank of parts ``i``, ``i + 1``).

    The table lookups are written out here rather than calling a function for each, which
    made each lookup about a fifth slower on CPython 3.11 (100 -> 120 ns)."""
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
            pair = new << PAIR_SHIFT | parts[at + 1]
            found = pairs.get(pair)
            if found is None:
                found = NO_MERGE
                if rule_tokens is not None:
                    found = _rank_by_rule(pairs, pair, token_bytes, rule_tokens)
            pair_ranks[at] = found
        if at > 0:
            pair = parts[at - 1] << PAIR_SHIFT | new
            found = pairs.get(pair)
            if found is None:
                found = NO_MERGE
                if rule_tokens is not None:
                    found = _rank_by_rule(pairs, pair, token_bytes, rule_tokens)
            pair_ranks[at - 1] = found


def _merge_long(
    tokens: List[int],
    pairs: Dict[int, int],
    token_bytes: List[Optional[bytes]],
    rule_tokens: Optional[Dict[bytes, int]],
) -> List[int]:
    """:func:`_merge` for long words, by :func:`purebpe.core.merge_in_place` (a heap)."""
    merge_in_place(tokens, pairs if rule_tokens is None else _RankByRule(pairs, token_bytes, rule_tokens))
    return [t for t in tokens if t >= 0]


class _RankByRule:
    """The packed ranks of pairs by tiktoken's rule, looked up as a table's ``get`` is."""

    __slots__ = ("pairs", "token_bytes", "rule_tokens")

    def __init__(
        self, pairs: Dict[int, int], token_bytes: List[Optional[bytes]], rule_tokens: Dict[bytes, int]
    ) -> None:
        self.pairs = pairs
        self.token_bytes = token_bytes
        self.rule_tokens = rule_tokens

    def get(self, pair: int) -> Optional[int]:
        found = self.pairs.get(pair)
        if found is None:
            found = _rank_by_rule(self.pairs, pair, self.token_bytes, self.rule_tokens)
        return None if found == NO_MERGE else found
