"""purebpe's own format: one JSON file, ``purebpe.json``, that says everything.

Token bytes are written through GPT-2's byte-to-unicode alphabet (:mod:`purebpe.bytemap`)
so the file is readable text; special tokens are stored as their own strings::

    {"format": "purebpe", "version": 1, "semantics": "...", "pretokenizer": "gpt2",
     "vocab": {"0": "Ā", ..., "256": "Ġt"}, "merges": [["Ġ", "t"], ...],
     "special_tokens": {"<|endoftext|>": 257}}

``"pretokenizer"`` is a name (``"gpt2"``, ``"cl100k"``, ``"o200k"``, ``"none"``) or, for a
custom pattern, ``{"pattern": "<regex>", "behavior": "isolated"}``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Tuple

from .._atomic import write_bytes
from ..bytemap import decode_token, encode_token
from ..errors import PureBPEError, excerpt, naming_errors
from ..model import BPEModel
from ..pretokenize import pretokenizer_from_json, pretokenizer_to_json
from ..vocab import check_dense_ids, check_model
from .bytelevel import is_id, json_bytes, literal_token, read_json

FILES = ("purebpe.json",)
VERSION = 1
SEMANTICS = (
    "byte-level BPE; ties to the greatest (bytes(left), bytes(right)); "
    "left-to-right non-overlapping merges; ids: bytes, merges, specials"
)


def recognises(path: Path) -> bool:
    return path.name.endswith(".json") and _peek_format(path) == "purebpe"


def _peek_format(path: Path) -> Any:
    try:
        with open(path, encoding="utf-8") as f:
            head = f.read(64)
    except (OSError, UnicodeDecodeError):
        return None
    return "purebpe" if '"format": "purebpe"' in head else None


def save(model: BPEModel, directory: Path) -> List[Path]:
    special_ids = {tid: text for text, tid in model.special_ids().items()}
    document = {
        "format": "purebpe",
        "version": VERSION,
        "semantics": SEMANTICS,
        "pretokenizer": pretokenizer_to_json(model.pretokenizer),
        "vocab": {
            str(tid): encode_token(token)
            for tid, token in sorted(model.vocab.items())
            if tid not in special_ids
        },
        "merges": [[encode_token(left), encode_token(right)] for left, right in model.merges],
        "special_tokens": {text: tid for tid, text in sorted(special_ids.items())},
    }
    path = directory / FILES[0]
    write_bytes(path, json_bytes(document))
    return [path]


def load(path: Path) -> BPEModel:
    document = read_json(Path(path), "purebpe JSON file")
    if not isinstance(document, dict) or document.get("format") != "purebpe":
        raise PureBPEError(f'{path}: not a purebpe JSON file (no "format": "purebpe")')
    if document.get("version") != VERSION:
        raise PureBPEError(f"{path}: unsupported purebpe file version {excerpt(document.get('version'))}")
    return naming_errors(str(path), "purebpe file", lambda: _read(document, str(path)))


def _read(document: Dict[str, Any], origin: str = "") -> BPEModel:
    vocab_field, merges_field, specials = document["vocab"], document["merges"], document["special_tokens"]
    if not isinstance(vocab_field, dict) or not isinstance(specials, dict):
        raise PureBPEError('"vocab" and "special_tokens" must be JSON objects')
    if not isinstance(merges_field, list):
        raise PureBPEError('"merges" must be a list of [left, right] pairs')
    vocab: Dict[int, bytes] = {}
    for key, token in vocab_field.items():
        tid = int(key)
        if tid < 0 or str(tid) != key:
            raise PureBPEError(f"vocab key {excerpt(key)} is not an id (an int >= 0)")
        vocab[tid] = decode_token(token)
    merges: List[Tuple[bytes, bytes]] = []
    for merge in merges_field:
        if not isinstance(merge, list) or len(merge) != 2:
            raise PureBPEError(f"merge {excerpt(merge)} is not a [left, right] pair")
        merges.append((decode_token(merge[0]), decode_token(merge[1])))
    pretokenizer = pretokenizer_from_json(document["pretokenizer"], "pretokenizer", origin)
    for text, tid in specials.items():
        if not is_id(tid):
            raise PureBPEError(f"special token {excerpt(text)} has id {excerpt(tid)}, not an int >= 0")
        if tid in vocab:
            raise PureBPEError(f"id {tid} is used by a token and by special {excerpt(text)}")
        vocab[tid] = literal_token(text, Path("special_tokens"))
    check_dense_ids(vocab, len(vocab))
    check_model(vocab, merges, specials.values())
    return BPEModel(dict(sorted(vocab.items())), merges, tuple(specials), pretokenizer)
