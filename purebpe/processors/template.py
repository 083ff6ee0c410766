"""``TemplateProcessing``: the special tokens a model wants around a sequence (BOS, EOS).

The template is a list of pieces, each ``{"SpecialToken": {"id": name, "type_id": t}}``
or ``{"Sequence": {"id": "A"|"B", "type_id": t}}``; ``special_tokens`` maps each name to
its ``ids`` and ``tokens``. Special pieces appear only with ``add_special_tokens``; the
sequences always take their piece's ``type_id`` (``tokenizers/src/processors/template.rs``).
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Tuple

from ..errors import PureBPEError
from .encoding import Encoding

__all__ = ["TemplateProcessing"]

#: A template piece: ``(True, special token name, type_id)`` or ``(False, "A"|"B", type_id)``.
Piece = Tuple[bool, str, int]


def _type_id(value: Any, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise PureBPEError(f"TemplateProcessing {where}: type_id {value!r} is not an int >= 0")
    return value


def _template(obj: Any, where: str) -> List[Piece]:
    if not isinstance(obj, list):
        raise PureBPEError(f"TemplateProcessing {where} is {obj!r}, not a list of pieces")
    pieces: List[Piece] = []
    for item in obj:
        if isinstance(item, dict) and isinstance(item.get("SpecialToken"), dict):
            body = item["SpecialToken"]
            if not isinstance(body.get("id"), str):
                raise PureBPEError(f"TemplateProcessing {where}: special piece {item!r} has no string id")
            pieces.append((True, body["id"], _type_id(body.get("type_id", 0), where)))
        elif isinstance(item, dict) and isinstance(item.get("Sequence"), dict):
            body = item["Sequence"]
            if body.get("id") not in ("A", "B"):
                raise PureBPEError(f"TemplateProcessing {where}: sequence piece {item!r} is not A or B")
            pieces.append((False, body["id"], _type_id(body.get("type_id", 0), where)))
        else:
            raise PureBPEError(f"TemplateProcessing {where}: piece {item!r} is not SpecialToken or Sequence")
    return pieces


class TemplateProcessing:
    """Add a template's special tokens around the sequence(s).

    >>> t = TemplateProcessing([(True, "<s>", 0), (False, "A", 0)], None, {"<s>": ([1], ["<s>"])})
    >>> t.process_encodings([Encoding([7], ["x"], [(0, 1)])], True)[0].ids
    [1]
    """

    def __init__(
        self,
        single: List[Piece],
        pair: Optional[List[Piece]],
        special_tokens: Mapping[str, Tuple[List[int], List[str]]],
    ) -> None:
        for piece in single + (pair or []):
            if piece[0] and piece[1] not in special_tokens:
                raise PureBPEError(
                    f"TemplateProcessing uses special token {piece[1]!r}, which it does not define"
                )
        self.single = single
        self.pair = pair
        self.special_tokens = dict(special_tokens)

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "TemplateProcessing":
        specials: Dict[str, Tuple[List[int], List[str]]] = {}
        raw = obj.get("special_tokens") or {}
        if not isinstance(raw, dict):
            raise PureBPEError("TemplateProcessing special_tokens is not an object")
        for name, body in raw.items():
            ids = body.get("ids") if isinstance(body, dict) else None
            tokens = body.get("tokens") if isinstance(body, dict) else None
            if (
                not isinstance(ids, list)
                or not isinstance(tokens, list)
                or len(ids) != len(tokens)
                or not all(isinstance(i, int) and not isinstance(i, bool) and i >= 0 for i in ids)
                or not all(isinstance(t, str) for t in tokens)
            ):
                raise PureBPEError(
                    f"TemplateProcessing special token {name!r} is not {{ids: [int], tokens: "
                    f"[str]}} of one length"
                )
            specials[name] = (ids, tokens)
        pair = obj.get("pair")
        return cls(
            _template(obj.get("single"), "single"),
            None if pair is None else _template(pair, "pair"),
            specials,
        )

    def process_encodings(self, encodings: List[Encoding], add_special_tokens: bool) -> List[Encoding]:
        template = self.single if len(encodings) == 1 else self.pair
        if template is None:
            raise PureBPEError("TemplateProcessing has no pair template")
        out: List[Encoding] = []
        for is_special, name, type_id in template:
            if is_special:
                if add_special_tokens:
                    ids, tokens = self.special_tokens[name]
                    out.append(Encoding.special(ids, tokens, type_id))
            else:
                part = encodings[0 if name == "A" else 1].copy()
                part.type_ids = [type_id] * len(part.ids)
                out.append(part)
        return out
