"""The formats' private shared helpers: what the format modules of this package share.

Reading JSON with a one-line error (:func:`read_json`) and writing it as every format
does (:func:`json_bytes`), ids and literal tokens as files
write them (:func:`is_id`, :func:`literal_token`), and the two ends of the byte-keyed
formats (GPT-2, HF, tiktoken): those key each token by its bytes (a JSON object
``{token: id}``, or one line per token), so a model can be written only if no two of its
ordinary tokens have the same bytes (:func:`tokens_by_bytes`); read, a vocabulary is
checked against its merges (:func:`purebpe.vocab.check_model`) and assembled into a
:class:`purebpe.BPEModel` (:func:`assemble`), so a malformed file fails at load time with
one line naming it, not later inside the tokenizer. Cost: linear in the vocabulary.
Nothing outside :mod:`purebpe.formats` imports this module.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Sequence, Tuple

from ..errors import PureBPEError, excerpt
from ..model import BPEModel
from ..pretokenize import Pretokenizer
from ..vocab import check_dense_ids, check_model, special_text

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


def json_bytes(document: Any) -> bytes:
    """``document`` as the formats write JSON: UTF-8, one-space indent, a final newline.

    >>> json_bytes({"a": "é"})
    b'{\\n "a": "\\xc3\\xa9"\\n}\\n'
    """
    return (json.dumps(document, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


def is_id(value: Any) -> bool:
    """Whether a JSON value is a token id: an int >= 0 (not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def literal_token(text: Any, path: Path) -> bytes:
    """The UTF-8 bytes of a token written as plain text (a special or added token)."""
    if not isinstance(text, str):
        raise PureBPEError(f"{path}: token {excerpt(text)} is not a string")
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise PureBPEError(f"{path}: token {excerpt(text)} is not valid Unicode ({exc.reason})") from None


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
    for text in model.special_ids():
        if text.encode("utf-8") in by_bytes:
            raise PureBPEError(
                f"cannot write the {format} format: special token {text!r} has the bytes of "
                f"ordinary token {by_bytes[text.encode('utf-8')]}"
            )
    return by_bytes


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
