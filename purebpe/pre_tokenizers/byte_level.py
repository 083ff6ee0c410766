"""The ``ByteLevel`` pre-tokenizer: optional prefix space, optional GPT-2 split, then every
character written as its UTF-8 bytes in GPT-2's byte alphabet (:mod:`purebpe.bytemap`).

As HF: the prefix space is added to each piece that does not start with one (so after a
``Split`` every piece gets it), and takes the span of the piece's first character; the
GPT-2 split is the named ``"gpt2"`` pattern of :mod:`purebpe.pretokenize` (HF's regex is
that very pattern); every byte character of a character takes that character's span, so a
token covering part of a character maps to the whole character.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

from ..bytemap import BYTE_TO_UNICODE
from ..normalizers.normalized import Normalized
from ..pretokenize import splitter

#: ``str.translate`` table from a Latin-1 decoded byte string to the byte alphabet.
_BYTES_TABLE: Dict[int, str] = {byte: char for byte, char in enumerate(BYTE_TO_UNICODE)}
_gpt2_split: Optional[Callable[[str], List[str]]] = None


def _split_gpt2(text: str) -> List[str]:
    global _gpt2_split
    if _gpt2_split is None:
        _gpt2_split = splitter("gpt2")
    return _gpt2_split(text)


#: Pieces already converted: words repeat, and a dict lookup is 3-4x cheaper than the
#: conversion on both interpreters (bounded: cleared when full).
_converted: Dict[str, str] = {}
_CACHE_LIMIT = 1 << 17


def to_byte_alphabet(text: str) -> str:
    """``text``'s UTF-8 bytes as GPT-2's byte characters.

    >>> to_byte_alphabet(" é")
    'ĠÃ©'
    """
    found = _converted.get(text)
    if found is None:
        found = text.encode("utf-8", "surrogatepass").decode("latin-1").translate(_BYTES_TABLE)
        if len(_converted) >= _CACHE_LIMIT:
            _converted.clear()
        _converted[text] = found
    return found


class ByteLevel:
    """``ByteLevel`` (as a pre-tokenizer; its ``trim_offsets`` belongs to the post-processor).

    >>> ByteLevel(add_prefix_space=True).pre_tokenize_str("Hi there")
    [('ĠHi', (0, 2)), ('Ġthere', (2, 8))]
    """

    __slots__ = ("add_prefix_space", "trim_offsets", "use_regex")

    def __init__(
        self, add_prefix_space: bool = True, trim_offsets: bool = True, use_regex: bool = True
    ) -> None:
        self.add_prefix_space = add_prefix_space
        self.trim_offsets = trim_offsets
        self.use_regex = use_regex

    def to_json(self) -> Dict[str, Any]:
        return {
            "type": "ByteLevel",
            "add_prefix_space": self.add_prefix_space,
            "trim_offsets": self.trim_offsets,
            "use_regex": self.use_regex,
        }

    def pre_tokenize(self, pieces: List[Normalized]) -> List[Normalized]:
        out: List[Normalized] = []
        for piece in pieces:
            if self.add_prefix_space and piece.text and not piece.text.startswith(" "):
                piece = Normalized(
                    " " + piece.text,
                    [piece.starts[0]] + piece.starts,
                    [piece.ends[0]] + piece.ends,
                    piece.origin,
                )
            if self.use_regex:
                starts, ends = piece.starts, piece.ends
                at = 0
                for part in _split_gpt2(piece.text):
                    end = at + len(part)
                    if part.isascii():
                        # One byte character per character: the spans are the slice's.
                        out.append(
                            Normalized(to_byte_alphabet(part), starts[at:end], ends[at:end], starts[at])
                        )
                    else:
                        out.append(_to_bytes(Normalized(part, starts[at:end], ends[at:end], starts[at])))
                    at = end
            elif piece.text:
                out.append(_to_bytes(piece))
        return out

    def split_texts(self, pieces: List[str], at_origin: bool = False) -> Tuple[List[str], bool]:
        out: List[str] = []
        for piece in pieces:
            if self.add_prefix_space and piece and not piece.startswith(" "):
                piece = " " + piece
            if self.use_regex:
                out.extend([to_byte_alphabet(part) for part in _split_gpt2(piece)])
            elif piece:
                out.append(to_byte_alphabet(piece))
        return out, at_origin

    def pre_tokenize_str(self, text: str) -> List[Tuple[str, Tuple[int, int]]]:
        return [(p.text, p.original_span()) for p in self.pre_tokenize([Normalized.of(text)])]


def _to_bytes(piece: Normalized) -> Normalized:
    text = piece.text
    if text.isascii():
        return Normalized(to_byte_alphabet(text), piece.starts, piece.ends, piece.origin)
    starts: List[int] = []
    ends: List[int] = []
    for char, start, end in zip(text, piece.starts, piece.ends):
        if char < "\x80":
            starts.append(start)
            ends.append(end)
        else:
            width = len(char.encode("utf-8", "surrogatepass"))
            starts.extend([start] * width)
            ends.extend([end] * width)
    return Normalized(to_byte_alphabet(text), starts, ends, piece.origin)
