"""The byte-level post-processors: ``ByteLevel`` (offset trimming) and ``RobertaProcessing``.

``trim_offsets`` moves a token's offsets past its leading and trailing spaces (``Ġ`` or
any whitespace character), keeping the one space ``add_prefix_space`` put before the first
token (``tokenizers/src/pre_tokenizers/byte_level.rs``, ``process_offsets``).
``RobertaProcessing`` trims the same way, sets every type id to 0 and, with
``add_special_tokens``, writes ``<s> A </s>`` (``</s> B </s>`` for a pair's second text).
"""

from __future__ import annotations

from typing import Any, List, Mapping, Tuple

from ..errors import PureBPEError
from ..normalizers.chars import WHITESPACE
from .encoding import Encoding

__all__ = ["ByteLevelProcessing", "RobertaProcessing", "trim_offsets"]

_SPACE = "\u0120"  # the byte-level character of the space byte


def _is_space(char: str) -> bool:
    """``Ġ`` or Rust's ``char::is_whitespace`` (not ``str.isspace``, which also takes
    U+001C..U+001F: an added token holding one keeps it in its offsets, as in HF)."""
    return char == _SPACE or char in WHITESPACE


def trim_offsets(encoding: Encoding, add_prefix_space: bool) -> None:
    """Trim each token's offsets in place (see the module docstring).

    >>> e = Encoding([1], ["\u0120a"], [(0, 2)])
    >>> trim_offsets(e, False); e.offsets
    [(1, 2)]
    """
    offsets = encoding.offsets
    for i, token in enumerate(encoding.tokens):
        leading = 0
        while leading < len(token) and _is_space(token[leading]):
            leading += 1
        if leading == 0 and not (token and _is_space(token[-1])):
            continue
        trailing = 0
        while trailing < len(token) and _is_space(token[-1 - trailing]):
            trailing += 1
        start, end = offsets[i]
        if leading:
            if (i == 0 or start == 0) and add_prefix_space and leading == 1:
                leading = 0  # the space add_prefix_space put there stays
            start = min(start + leading, end)
        if trailing and end >= trailing:
            end = max(end - trailing, start)
        offsets[i] = (start, end)


def _flag(obj: Mapping[str, Any], key: str, default: bool) -> bool:
    value = obj.get(key, default)
    if not isinstance(value, bool):
        raise PureBPEError(f"post-processor {obj.get('type')!r}: {key} is {value!r}, not true or false")
    return value


class ByteLevelProcessing:
    """HF's ``ByteLevel`` post-processor: trims offsets when ``trim_offsets`` is set."""

    def __init__(self, trim: bool, add_prefix_space: bool) -> None:
        self.trim = trim
        self.add_prefix_space = add_prefix_space

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "ByteLevelProcessing":
        return cls(_flag(obj, "trim_offsets", True), _flag(obj, "add_prefix_space", True))

    def process_encodings(self, encodings: List[Encoding], add_special_tokens: bool) -> List[Encoding]:
        if self.trim:
            for encoding in encodings:
                trim_offsets(encoding, self.add_prefix_space)
        return encodings


def _token(value: Any, what: str) -> Tuple[str, int]:
    if (
        not isinstance(value, list)
        or len(value) != 2
        or not isinstance(value[0], str)
        or not isinstance(value[1], int)
        or isinstance(value[1], bool)
        or value[1] < 0
    ):
        raise PureBPEError(f"RobertaProcessing {what} is {value!r}, not [token, id]")
    return value[0], value[1]


class RobertaProcessing:
    """HF's ``RobertaProcessing``: ``<s> A </s>`` (``</s> B </s>`` for a pair's second)."""

    def __init__(
        self, sep: Tuple[str, int], cls: Tuple[str, int], trim: bool, add_prefix_space: bool
    ) -> None:
        self.sep = sep
        self.cls = cls
        self.trim = trim
        self.add_prefix_space = add_prefix_space

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "RobertaProcessing":
        return cls(
            _token(obj.get("sep"), "sep"),
            _token(obj.get("cls"), "cls"),
            _flag(obj, "trim_offsets", True),
            _flag(obj, "add_prefix_space", True),
        )

    def process_encodings(self, encodings: List[Encoding], add_special_tokens: bool) -> List[Encoding]:
        for encoding in encodings:
            if self.trim:
                trim_offsets(encoding, self.add_prefix_space)
            encoding.type_ids = [0] * len(encoding.ids)
        if not add_special_tokens:
            return encodings
        out: List[Encoding] = []
        for index, encoding in enumerate(encodings):
            first = self.cls if index == 0 else self.sep
            out.append(Encoding.special([first[1]], [first[0]], 0))
            out.append(encoding)
            out.append(Encoding.special([self.sep[1]], [self.sep[0]], 0))
        return out
