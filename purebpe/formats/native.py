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

import json
from pathlib import Path
from typing import Any, Dict, List, Tuple

from .._atomic import write_text
from ..bytemap import decode_token, encode_token
from ..errors import PureBPEError
from ..model import BPEModel
from ..pretokenize import pretokenizer_from_json, pretokenizer_to_json

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
    write_text(path, json.dumps(document, ensure_ascii=False, indent=1) + "\n")
    return [path]


def load(path: Path) -> BPEModel:
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PureBPEError(f"{path}: not a purebpe JSON file ({exc})") from None
    if not isinstance(document, dict) or document.get("format") != "purebpe":
        raise PureBPEError(f"{path}: not a purebpe JSON file (no \"format\": \"purebpe\")")
    if document.get("version") != VERSION:
        raise PureBPEError(f"{path}: unsupported purebpe file version {document.get('version')!r}")
    try:
        vocab: Dict[int, bytes] = {int(k): decode_token(v) for k, v in document["vocab"].items()}
        merges: List[Tuple[bytes, bytes]] = [
            (decode_token(left), decode_token(right)) for left, right in document["merges"]
        ]
        specials: Dict[str, int] = dict(document["special_tokens"])
        recorded = document["pretokenizer"]
    except (KeyError, TypeError, ValueError) as exc:
        raise PureBPEError(f"{path}: malformed purebpe file ({exc})") from None
    pretokenizer = pretokenizer_from_json(recorded, str(path))
    for text, tid in specials.items():
        if tid in vocab:
            raise PureBPEError(f"{path}: id {tid} is used by a token and by special {text!r}")
        vocab[int(tid)] = text.encode("utf-8")
    known = set(vocab.values())
    for left, right in merges:
        if left + right not in known:
            raise PureBPEError(f"{path}: merge ({left!r}, {right!r}) makes a token not in the vocab")
    return BPEModel(dict(sorted(vocab.items())), merges, tuple(specials), pretokenizer)
