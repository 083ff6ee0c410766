"""The tables a tokenizer encodes and decodes with, built once from merges or from ranks.

:func:`merge_tables` builds them from a vocabulary and the merges that made it (purebpe's
models, GPT-2's and HF's files); :func:`rank_tables` from tiktoken's ranks, merged by
tiktoken's rule (:mod:`purebpe.tiktoken_compat`). Both return one :class:`TokenTables`,
which :class:`purebpe.Tokenizer` sets itself up from: ``ranks``, a dict from a packed pair
of ids (``left << 32 | right``) to ``rank << 32 | new_id``, the table
:class:`purebpe.word_encoder.WordEncoder` merges with (for ranks, filled as pairs are met,
by tiktoken's rule); ``byte_ids``, the id of each byte's token; the vocabulary and the
special tokens' ids. Cost: linear in the vocabulary and the merges.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

import attr

from .core import PAIR_SHIFT, pack_pair, pack_rank
from .errors import PureBPEError
from .specials import AllowedSpecial, DisallowedSpecial, check_special_tokens
from .vocab import check_pair_table, special_text, unmerged_tokens

#: ``byte_ids[b]`` of a byte the vocab has no token for.
NO_TOKEN = -1


@attr.s(frozen=True, slots=True, auto_attribs=True)
class TokenTables:
    """What a tokenizer is built from (the dicts and lists are not copied: do not change them)."""

    #: Every id's bytes, special tokens included.
    vocab: Dict[int, bytes]
    special_tokens: Tuple[str, ...]
    special_ids: Dict[str, int]
    #: The id of each byte's token (:data:`NO_TOKEN` where the vocab has none).
    byte_ids: List[int]
    #: ``{packed (left, right): rank << 32 | new_id}``: what the word encoder merges with.
    ranks: Dict[int, int]
    #: The merges in order; ``None`` for ranks, whose merges are recovered when asked for.
    merges: Optional[List[Tuple[bytes, bytes]]]
    #: tiktoken's shortcut: a pre-token whose bytes are a token is that token (ranks only).
    whole_tokens: Optional[Dict[bytes, int]]
    #: The defaults of ``allowed_special`` and ``disallowed_special``.
    default_special: Tuple[AllowedSpecial, DisallowedSpecial]
    #: tiktoken's rule: a pair of ids merges into the token of ``whole_tokens`` that their
    #: bytes make together, ranked by its id; ``ranks`` holds the pairs looked up so far
    #: (:class:`purebpe.word_encoder.WordEncoder`), not every pair.
    pairs_by_rule: bool = False


def merge_tables(
    vocab: Mapping[int, bytes],
    merges: Sequence[Tuple[bytes, bytes]],
    special_tokens: Optional[Iterable[str]] = None,
) -> TokenTables:
    """The tables of a vocabulary and its merges (:class:`purebpe.Tokenizer`'s arguments).

    ``special_tokens=None`` makes them the vocab entries that are neither a single byte nor
    made by a merge. Each special token's id is the highest id holding its bytes, or a new
    one after the largest (:func:`_assign_special_ids`).
    """
    checked: Dict[int, bytes] = {}
    for tid, token in vocab.items():
        if not isinstance(tid, int) or tid < 0 or not isinstance(token, bytes):
            raise PureBPEError(f"vocab entry {tid!r}: {token!r} is not (id >= 0, bytes)")
        checked[tid] = token
    merge_list = list(merges)
    if special_tokens is None:
        special_tokens = [special_text(checked[t], t) for t in unmerged_tokens(checked, merge_list)]
    specials = check_special_tokens(special_tokens)
    special_ids = _assign_special_ids(checked, merge_list, specials)  # adds new ids to checked
    special_id_set = set(special_ids.values())
    ids_of: Dict[bytes, List[int]] = {}
    for tid in sorted(checked):
        if tid not in special_id_set:
            ids_of.setdefault(checked[tid], []).append(tid)
    byte_ids = [ids_of[bytes([b])][0] if bytes([b]) in ids_of else NO_TOKEN for b in range(256)]
    return TokenTables(
        vocab=checked,
        special_tokens=specials,
        special_ids=special_ids,
        byte_ids=byte_ids,
        ranks=_merge_ranks(merge_list, ids_of),
        merges=merge_list,
        whole_tokens=None,
        default_special=("all", ()),
    )


def rank_tables(mergeable_ranks: Mapping[bytes, int], special_tokens: Mapping[str, int]) -> TokenTables:
    """The tables of tiktoken's ``mergeable_ranks`` and ``special_tokens`` (``{text: id}``).

    Ranks are ids and merge priorities, merged by tiktoken's rule, with tiktoken's defaults
    for special tokens (``allowed_special=set()``, ``disallowed_special="all"``).
    """
    specials = check_special_tokens(list(special_tokens))
    vocab: Dict[int, bytes] = {}
    rank_of: Dict[bytes, int] = {}
    for token, rank in mergeable_ranks.items():
        if not isinstance(token, bytes) or not isinstance(rank, int) or rank < 0:
            raise PureBPEError(f"mergeable rank {token!r}: {rank!r} is not (bytes, rank >= 0)")
        if rank in vocab:
            raise PureBPEError(f"rank {rank} is given to both {vocab[rank]!r} and {token!r}")
        vocab[rank] = token
        rank_of[token] = rank
    for text, tid in special_tokens.items():
        if not isinstance(tid, int) or tid < 0 or tid in vocab:
            raise PureBPEError(f"special token {text!r}: id {tid!r} is not a free id >= 0")
        vocab[tid] = text.encode("utf-8")
    return TokenTables(
        vocab=vocab,
        special_tokens=specials,
        special_ids=dict(special_tokens),
        byte_ids=[rank_of.get(bytes([b]), NO_TOKEN) for b in range(256)],
        ranks={},
        merges=None,
        whole_tokens=rank_of,
        default_special=(frozenset(), "all"),
        pairs_by_rule=True,
    )


def _assign_special_ids(
    vocab: Dict[int, bytes], merges: Sequence[Tuple[bytes, bytes]], special_tokens: Tuple[str, ...]
) -> Dict[str, int]:
    """Each special token's id: the highest id holding its bytes, or a new id (added to
    ``vocab``).

    An id is taken only if the bytes are not also needed as an ordinary token (a single
    byte, or what a merge makes) held by that id alone: special ``"ab"`` beside merged
    ``ab`` needs two ids.
    """
    encoded = {text: text.encode("utf-8") for text in special_tokens}
    wanted = set(encoded.values())
    holders: Dict[bytes, List[int]] = {}
    for tid, token in vocab.items():
        if token in wanted:
            holders.setdefault(token, []).append(tid)
    merge_set = set(merges) if holders else set()
    next_id = max(vocab) + 1 if vocab else 0
    special_ids: Dict[str, int] = {}
    for text in special_tokens:
        data = encoded[text]
        made = any((data[:cut], data[cut:]) in merge_set for cut in range(1, len(data)))
        ordinary = 1 if len(data) == 1 or made else 0
        if len(holders.get(data, ())) > ordinary:
            special_ids[text] = max(holders[data])
        else:
            special_ids[text] = next_id
            vocab[next_id] = data
            next_id += 1
    return special_ids


def _merge_ranks(merges: Sequence[Tuple[bytes, bytes]], ids_of: Dict[bytes, List[int]]) -> Dict[int, int]:
    """``{packed (left, right): rank << 32 | new_id}`` for every id pair spelling each merge.

    Where two ordinary tokens have the same bytes, the k-th merge making those bytes gets
    the k-th smallest of their ids.
    """
    if any(len(ids) > 1 for ids in ids_of.values()):
        return _merge_ranks_with_duplicates(merges, ids_of)
    # Every token has one id (real vocabularies): one entry per merge, no table to check
    # (loading GPT-2's files, 50 000 merges: 0.07 -> 0.03 s on PyPy).
    id_of = {token: ids[0] for token, ids in ids_of.items()}
    ranks: Dict[int, int] = {}
    for rank, (left, right) in enumerate(merges):
        left_id = id_of.get(left)
        right_id = id_of.get(right)
        new_id = id_of.get(left + right)
        if left_id is None or right_id is None or new_id is None:
            raise _unknown_token(rank, left, right, left_id is not None and right_id is not None)
        pair = left_id << PAIR_SHIFT | right_id
        if pair not in ranks:
            ranks[pair] = rank << PAIR_SHIFT | new_id
    return ranks


def _merge_ranks_with_duplicates(
    merges: Sequence[Tuple[bytes, bytes]], ids_of: Dict[bytes, List[int]]
) -> Dict[int, int]:
    """:func:`_merge_ranks` where some token has several ids: every pair of them."""
    check_pair_table({token: len(ids) for token, ids in ids_of.items()}, merges)
    ranks: Dict[int, int] = {}
    made: Dict[bytes, int] = {}  # how many merges so far produced each byte string
    for rank, (left, right) in enumerate(merges):
        merged = left + right
        holders = ids_of.get(merged)
        if left not in ids_of or right not in ids_of or holders is None:
            raise _unknown_token(rank, left, right, left in ids_of and right in ids_of)
        nth = made.get(merged, 0)
        made[merged] = nth + 1
        new_id = holders[min(nth, len(holders) - 1)]
        for left_id in ids_of[left]:
            for right_id in ids_of[right]:
                ranks.setdefault(pack_pair(left_id, right_id), pack_rank(rank, new_id))
    return ranks


def _unknown_token(rank: int, left: bytes, right: bytes, parts_known: bool) -> PureBPEError:
    if parts_known:
        return PureBPEError(
            f"merge {rank} ({left!r}, {right!r}) makes {left + right!r}, which is not in the vocab"
        )
    return PureBPEError(f"merge {rank} ({left!r}, {right!r}) uses a token that is not in the vocab")
