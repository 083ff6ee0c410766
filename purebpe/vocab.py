"""Vocabulary checks: what a vocabulary and its merges must satisfy to encode and decode.

A byte-level BPE vocabulary (``{id: token bytes}``) with its merges is usable when every
byte has a token, every merge's halves and result are tokens (:func:`check_model`), and
ids are dense enough for tables indexed by id (:func:`check_dense_ids`). Tokens that are
neither a byte nor made by a merge (:func:`unmerged_tokens`) are special tokens in GPT-2's
files, and must be text (:func:`special_text`). The tokenizer and every file format use
these; they sit beside :class:`purebpe.BPEModel`, below both. Cost: linear in the
vocabulary.
"""

from __future__ import annotations

from typing import Dict, Iterable, List, Sequence, Set, Tuple

from .errors import PureBPEError, excerpt

#: Ids may exceed twice the vocabulary's size by this much (:func:`check_dense_ids`).
ID_SLACK = 1 << 20


def check_dense_ids(ids: Iterable[int], count: int) -> None:
    """Refuse ids so far beyond the vocabulary's size that a table indexed by id would be huge.

    The rule (docs/formats.md): every id is below ``2 * count + 2**20``, where ``count`` is
    the number of tokens. Real vocabularies are dense (GPT-2's, purebpe's) or nearly so
    (cl100k's specials leave a few gaps); the tokenizer keeps tables indexed by id, which
    the rule keeps within twice the vocabulary plus a few megabytes.
    """
    limit = 2 * count + ID_SLACK
    largest = max(ids, default=-1)
    if largest >= limit:
        raise PureBPEError(
            f"id {largest} is far beyond the {count} tokens (ids must be below 2 x tokens + 2**20 "
            f"= {limit}: the tokenizer keeps a table indexed by id)"
        )


#: A merge table may hold this many id pairs beyond four per merge (:func:`check_pair_table`).
PAIR_SLACK = 1 << 20


def check_pair_table(holders: Dict[bytes, int], merges: Sequence[Tuple[bytes, bytes]]) -> None:
    """Refuse merges whose table of id pairs would be huge: tokens held by many ids.

    ``holders`` counts the ids holding each token's bytes. The tokenizer keeps one entry
    per pair of ids spelling a merge, so a token held by ``n`` ids merged with one held by
    ``m`` ids costs ``n x m`` entries: a hostile file whose 20 000 ids all hold ``aa``,
    with the merge ``(aa, aa)``, would cost 4 x 10**8. The rule: at most ``4 x merges +
    2**20`` pairs in all (a real vocabulary holds a few duplicates, if any).
    """
    limit = 4 * len(merges) + PAIR_SLACK
    total = 0
    for rank, (left, right) in enumerate(merges):
        total += holders.get(left, 0) * holders.get(right, 0)
        if total > limit:
            raise PureBPEError(
                f"merge {rank} ({excerpt(left)}, {excerpt(right)}) joins tokens held by "
                f"{holders.get(left, 0)} and {holders.get(right, 0)} ids: the merges would need "
                f"over {limit} id pairs (at most 4 x merges + 2**20; duplicate tokens?)"
            )


def unmerged_tokens(vocab: Dict[int, bytes], merges: Sequence[Tuple[bytes, bytes]]) -> List[int]:
    """Ids of the tokens that are neither a single byte nor made by a merge, in id order."""
    made: Set[bytes] = {left + right for left, right in merges}
    return [tid for tid, token in sorted(vocab.items()) if len(token) > 1 and token not in made]


def check_model(
    vocab: Dict[int, bytes], merges: Sequence[Tuple[bytes, bytes]], special_ids: Iterable[int] = ()
) -> None:
    """Refuse a vocabulary lacking a byte, or merges using or making unknown tokens.

    A merge's halves must be ordinary tokens: a byte, made by a merge, or held by an id
    that is not a special token's (a special token is never part of a word).
    """
    holders: Dict[bytes, int] = {}
    for token in vocab.values():
        holders[token] = holders.get(token, 0) + 1
    check_pair_table(holders, merges)
    known = set(holders)
    missing = [b for b in range(256) if bytes([b]) not in known]
    if missing:
        raise PureBPEError(f"no token for byte 0x{missing[0]:02x} ({len(missing)} of the 256 bytes missing)")
    specials = set(special_ids)
    ordinary = {token for tid, token in vocab.items() if tid not in specials}
    ordinary.update(left + right for left, right in merges)
    for rank, (left, right) in enumerate(merges):
        for part in (left, right, left + right):
            if part not in known:
                raise PureBPEError(
                    f"merge {rank} ({excerpt(left)}, {excerpt(right)}) needs {excerpt(part)}, not "
                    "in the vocab"
                )
        for part in (left, right):
            if len(part) > 1 and part not in ordinary:
                raise PureBPEError(
                    f"merge {rank} ({left!r}, {right!r}) uses {part!r}, which only a special token is"
                )


def special_text(token: bytes, tid: int) -> str:
    """A special token's string from its bytes."""
    try:
        return token.decode("utf-8")
    except UnicodeDecodeError:
        raise PureBPEError(f"token {tid} ({excerpt(token)}) is made by no merge and is not UTF-8") from None
