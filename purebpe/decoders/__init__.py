"""HF ``tokenizers`` decoders: how a ``tokenizer.json``'s ``"decoder"`` turns tokens into text.

Each decoder has ``decode_chain(tokens) -> tokens`` with HF's semantics (a ``Sequence``
feeds each decoder's output tokens to the next, so a ``Strip`` after ``Fuse`` strips the
whole text once, and before it every token) and ``decode(tokens) -> str``, the
concatenation.  :func:`from_json` builds one from its JSON object; ``to_json`` gives it back.

``ByteLevel``   tokens in GPT-2's byte alphabet back to bytes, then UTF-8 with U+FFFD for
                each invalid stretch (a token with a character outside the alphabet is
                taken as its own UTF-8 bytes, as HF does);
``Metaspace``   ``▁`` back to a space; in the first token, unless ``prepend_scheme`` is
                ``never``, ``▁`` is dropped instead (HF drops every one in that token);
``ByteFallback`` each run of ``<0xNN>`` tokens becomes its UTF-8 text, or one U+FFFD per
                byte when the run is not valid UTF-8;
``Fuse``        all tokens joined into one;
``Strip``       up to ``start`` leading and ``stop`` trailing ``content`` characters cut
                from each token;
``Replace``     a pattern's matches replaced in each token (:mod:`purebpe.normalizers.pattern`);
``BPEDecoder``  a word-end ``suffix`` (CLIP's ``</w>``) becomes a space, nothing at the end;
``Sequence``    each in turn.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Dict, List, Protocol

from ..bytemap import UNICODE_TO_BYTE
from ..errors import PureBPEError
from ..normalizers._json import field
from ..normalizers.pattern import HFPattern
from ..pre_tokenizers import metaspace_from_json

__all__ = [
    "BPEDecoder",
    "ByteFallback",
    "ByteLevel",
    "Decoder",
    "Fuse",
    "Metaspace",
    "Replace",
    "Sequence",
    "Strip",
    "byte_level_bytes",
    "byte_token_value",
    "from_json",
]


class Decoder(Protocol):
    """What every decoder has."""

    def decode_chain(self, tokens: List[str]) -> List[str]:
        """The tokens after this decoder (HF's ``decode_chain``)."""

    def decode(self, tokens: List[str]) -> str:
        """The text of ``tokens``."""

    def to_json(self) -> Dict[str, Any]:
        """The ``tokenizer.json`` object of this decoder."""


class _Base:
    __slots__ = ()

    def decode_chain(self, tokens: List[str]) -> List[str]:
        raise NotImplementedError

    def decode(self, tokens: List[str]) -> str:
        return "".join(self.decode_chain(tokens))


class ByteLevel(_Base):
    """``ByteLevel``.

    >>> ByteLevel().decode(["Hello", "Ġw", "Ã©", "Ġ", "ðŁ"])
    'Hello wé �'
    """

    __slots__ = ()

    def to_json(self) -> Dict[str, Any]:
        return {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}

    def decode_chain(self, tokens: List[str]) -> List[str]:
        return [b"".join([byte_level_bytes(token) for token in tokens]).decode("utf-8", "replace")]


def byte_level_bytes(token: str) -> bytes:
    """The bytes ``ByteLevel`` makes of one token: each character's byte in GPT-2's
    alphabet, or the token's own UTF-8 when a character is outside it (as HF does).

    >>> byte_level_bytes("Ġw"), byte_level_bytes("a b")
    (b' w', b'a b')
    """
    table = UNICODE_TO_BYTE
    try:
        return bytes([table[char] for char in token])
    except KeyError:
        return token.encode("utf-8", "surrogatepass")


class Metaspace(_Base):
    """``Metaspace`` as a decoder.

    >>> Metaspace().decode(["▁Hey", "▁friend", "!"])
    'Hey friend!'
    """

    __slots__ = ("replacement", "prepend_scheme")

    def __init__(self, replacement: str = "▁", prepend_scheme: str = "always") -> None:
        self.replacement = replacement
        self.prepend_scheme = prepend_scheme

    def to_json(self) -> Dict[str, Any]:
        return {
            "type": "Metaspace",
            "replacement": self.replacement,
            "prepend_scheme": self.prepend_scheme,
            "split": True,
        }

    def decode_chain(self, tokens: List[str]) -> List[str]:
        rep = self.replacement
        out = [token.replace(rep, " ") for token in tokens]
        if out and self.prepend_scheme != "never":
            out[0] = tokens[0].replace(rep, "")
        return out


def byte_token_value(token: str) -> int:
    """The byte of a ``<0xNN>`` token (Rust's radix-16 parse: an optional ``+``), or -1.

    >>> byte_token_value("<0xE2>"), byte_token_value("<0x+A>"), byte_token_value("<0xZZ>")
    (226, 10, -1)
    """
    if len(token) != 6 or not token.startswith("<0x") or token[5] != ">":
        return -1
    digits = token[3:5]
    if digits[0] == "+":
        digits = digits[1]
    if all(c in "0123456789abcdefABCDEF" for c in digits):
        return int(digits, 16)
    return -1


class ByteFallback(_Base):
    """``ByteFallback``.

    >>> ByteFallback().decode_chain(["a", "<0xE2>", "<0x82>", "<0xAC>", "b", "<0xE2>", "<0x82>"])
    ['a', '€', 'b', '�', '�']
    """

    __slots__ = ()

    def to_json(self) -> Dict[str, Any]:
        return {"type": "ByteFallback"}

    def decode_chain(self, tokens: List[str]) -> List[str]:
        out: List[str] = []
        run = bytearray()
        for token in tokens:
            byte = byte_token_value(token)
            if byte >= 0:
                run.append(byte)
                continue
            if run:
                _flush(run, out)
            out.append(token)
        if run:
            _flush(run, out)
        return out


def _flush(run: bytearray, out: List[str]) -> None:
    try:
        out.append(run.decode("utf-8"))
    except UnicodeDecodeError:
        out.extend(["\ufffd"] * len(run))
    del run[:]


class Fuse(_Base):
    """``Fuse``.

    >>> Fuse().decode_chain(["a", "b"])
    ['ab']
    """

    __slots__ = ()

    def to_json(self) -> Dict[str, Any]:
        return {"type": "Fuse"}

    def decode_chain(self, tokens: List[str]) -> List[str]:
        return ["".join(tokens)]


class Strip(_Base):
    """``Strip``: at most ``start`` leading and ``stop`` trailing ``content`` characters.

    >>> Strip(" ", 1, 0).decode_chain(["  a", " b "])
    [' a', 'b ']
    """

    __slots__ = ("content", "start", "stop")

    def __init__(self, content: str, start: int, stop: int) -> None:
        self.content = content
        self.start = start
        self.stop = stop

    def to_json(self) -> Dict[str, Any]:
        return {"type": "Strip", "content": self.content, "start": self.start, "stop": self.stop}

    def decode_chain(self, tokens: List[str]) -> List[str]:
        content = self.content
        out: List[str] = []
        for token in tokens:
            begin = 0
            while begin < self.start and begin < len(token) and token[begin] == content:
                begin += 1
            end = len(token)
            while len(token) - end < self.stop and end > begin and token[end - 1] == content:
                end -= 1
            out.append(token[begin:end])
        return out


class Replace(_Base):
    """``Replace`` as a decoder: in each token, matches replaced by ``content``.

    >>> Replace({"String": "▁"}, " ").decode_chain(["▁a▁", "b"])
    [' a ', 'b']
    """

    __slots__ = ("pattern", "content")

    def __init__(self, pattern: Mapping[str, Any], content: str) -> None:
        self.pattern = HFPattern(pattern, "Replace decoder")
        self.content = content

    def to_json(self) -> Dict[str, Any]:
        return {"type": "Replace", "pattern": self.pattern.to_json(), "content": self.content}

    def decode_chain(self, tokens: List[str]) -> List[str]:
        out: List[str] = []
        content = self.content
        for token in tokens:
            parts = [
                content if is_match else token[start:end]
                for start, end, is_match in self.pattern.find_matches(token)
            ]
            out.append("".join(parts))
        return out


class BPEDecoder(_Base):
    """``BPEDecoder``: the word-end suffix is a space, except in the last token.

    >>> BPEDecoder("</w>").decode(["hi</w>", "there</w>"])
    'hi there'
    """

    __slots__ = ("suffix",)

    def __init__(self, suffix: str = "</w>") -> None:
        self.suffix = suffix

    def to_json(self) -> Dict[str, Any]:
        return {"type": "BPEDecoder", "suffix": self.suffix}

    def decode_chain(self, tokens: List[str]) -> List[str]:
        last = len(tokens) - 1
        return [t.replace(self.suffix, "" if i == last else " ") for i, t in enumerate(tokens)]


class Sequence(_Base):
    """``Sequence``: each decoder on the tokens of the one before.

    >>> Sequence([Replace({"String": "▁"}, " "), ByteFallback(), Fuse(), Strip(" ", 1, 0)]).decode(
    ...     ["▁Hi", "<0x21>"])
    'Hi!'
    """

    __slots__ = ("decoders",)

    def __init__(self, decoders: List[Decoder]) -> None:
        self.decoders = decoders

    def to_json(self) -> Dict[str, Any]:
        return {"type": "Sequence", "decoders": [d.to_json() for d in self.decoders]}

    def decode_chain(self, tokens: List[str]) -> List[str]:
        for decoder in self.decoders:
            tokens = decoder.decode_chain(tokens)
        return tokens


def from_json(obj: Mapping[str, Any]) -> Decoder:
    """The decoder a ``tokenizer.json`` object describes, or a one-line error naming it.

    >>> from_json({"type": "Fuse"}).decode(["a", "b"])
    'ab'
    >>> from_json({"type": "WordPiece"})
    Traceback (most recent call last):
    purebpe.errors.PureBPEError: decoder 'WordPiece' is not supported
    """
    if not isinstance(obj, Mapping):
        raise PureBPEError(f"decoder must be a JSON object, got {obj!r}")
    kind = obj.get("type")
    what = f"decoder {kind!r}"
    if kind == "ByteLevel":
        return ByteLevel()
    if kind == "Metaspace":
        # The pre-tokenizer's reading of the fields, legacy add_prefix_space included.
        metaspace = metaspace_from_json(obj)
        return Metaspace(metaspace.replacement, metaspace.prepend_scheme)
    if kind == "ByteFallback":
        return ByteFallback()
    if kind == "Fuse":
        return Fuse()
    if kind == "Strip":
        content = field(obj, "content", str, what)
        if len(content) != 1:
            raise PureBPEError(f"decoder 'Strip': content must be one character, got {content!r}")
        return Strip(content, field(obj, "start", int, what, 0), field(obj, "stop", int, what, 0))
    if kind == "Replace":
        return Replace(field(obj, "pattern", Mapping, what), field(obj, "content", str, what))
    if kind == "BPEDecoder":
        return BPEDecoder(field(obj, "suffix", str, what, "</w>"))
    if kind == "Sequence":
        return Sequence([from_json(item) for item in field(obj, "decoders", list, what)])
    raise PureBPEError(f"decoder {kind!r} is not supported")
