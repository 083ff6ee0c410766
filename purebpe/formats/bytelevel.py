"""What the formats of other tokenizer libraries (GPT-2, HF, tiktoken) share.

Those formats key each token by its bytes (a JSON object ``{token: id}``, or one line
per token), so a model can be written only if no two of its ordinary tokens have the
same bytes; :func:`tokens_by_bytes` checks that. Reading, :func:`check_model` makes sure
the merges and the vocabulary agree, so a malformed file fails at load time with one
line naming it, not later inside the tokenizer. Cost: linear in the vocabulary.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, Iterable, List, Sequence, Set, Tuple

from ..errors import PureBPEError
from ..model import BPEModel
from ..pretokenize import Pretokenizer

#: Ids may exceed twice the vocabulary's size by this much (:func:`check_dense_ids`).
ID_SLACK = 1 << 20
#: The merges file header GPT-2 and HF write (and skip when reading).
MERGES_HEADER = "#version: 0.2"


def read_json(path: Path, what: str) -> Any:
    """The parsed JSON of ``path``; a file that is not JSON raises a one-line error."""
    with open(path, "rb") as f:
        return parse_json(f.read(), path, what)


def parse_json(data: bytes, path: Path, what: str) -> Any:
    """The parsed JSON of ``data`` read from ``path``; not JSON (or nested absurdly deep,
    which the parser cannot follow) raises a one-line error naming ``path``."""
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PureBPEError(f"{path}: not a {what} (invalid JSON: {exc})") from None
    except RecursionError:
        raise PureBPEError(f"{path}: not a {what} (JSON nested too deeply to read)") from None


def is_id(value: Any) -> bool:
    """Whether a JSON value is a token id: an int >= 0 (not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def literal_token(text: Any, path: Path) -> bytes:
    """The UTF-8 bytes of a token written as plain text (a special or added token)."""
    if not isinstance(text, str):
        raise PureBPEError(f"{path}: token {text!r} is not a string")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise PureBPEError(f"{path}: token {text!r} is not valid Unicode ({exc.reason})") from None


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


def tokens_by_bytes(model: BPEModel, format: str) -> Dict[bytes, int]:
    """``{token bytes: id}`` of the ordinary (non-special) tokens, refusing duplicates."""
    special_ids = set(model.special_ids().values())
    by_bytes: Dict[bytes, int] = {}
    for tid, token in sorted(model.vocab.items()):
        if tid in special_ids:
            continue
        if token in by_bytes:
            raise PureBPEError(
                f"cannot write the {format} format: ids {by_bytes[token]} and {tid} are both "
                f"{token!r}, and {format} files key tokens by their bytes"
            )
        by_bytes[token] = tid
    for text, tid in model.special_ids().items():
        if text.encode("utf-8") in by_bytes:
            raise PureBPEError(
                f"cannot write the {format} format: special token {text!r} has the bytes of "
                f"ordinary token {by_bytes[text.encode('utf-8')]}"
            )
    return by_bytes


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
    known = set(vocab.values())
    missing = [b for b in range(256) if bytes([b]) not in known]
    if missing:
        raise PureBPEError(
            f"no token for byte 0x{missing[0]:02x} ({len(missing)} of the 256 bytes missing)"
        )
    specials = set(special_ids)
    ordinary = {token for tid, token in vocab.items() if tid not in specials}
    ordinary.update(left + right for left, right in merges)
    for rank, (left, right) in enumerate(merges):
        for part in (left, right, left + right):
            if part not in known:
                raise PureBPEError(f"merge {rank} ({left!r}, {right!r}) needs {part!r}, not in the vocab")
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
        raise PureBPEError(f"token {tid} ({token!r}) is made by no merge and is not UTF-8") from None


def assemble(
    vocab: Dict[int, bytes],
    merges: List[Tuple[bytes, bytes]],
    special_ids: Sequence[int],
    pretokenizer: Pretokenizer,
) -> BPEModel:
    """The checked model; ``special_ids`` name the vocab entries that are special tokens."""
    check_dense_ids(vocab, len(vocab))
    check_model(vocab, merges, special_ids)
    specials = tuple(special_text(vocab[tid], tid) for tid in sorted(special_ids))
    return BPEModel(dict(sorted(vocab.items())), merges, specials, pretokenizer)
