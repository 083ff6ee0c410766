"""GPT-2's byte-to-unicode mapping, used by every text file format that stores token bytes.

GPT-2 files store each byte as a printable character so that vocab and merges are valid
JSON/text: the 188 printable Latin-1 bytes map to themselves, the other 68 to U+0100 and up
(byte 0x20, the space, becomes ``Ġ``; 0xF0 becomes ``ð``).
"""

from __future__ import annotations

from typing import Dict, List, Optional

from .errors import PureBPEError


def _build() -> List[str]:
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    table = [""] * 256
    extra = 0
    for byte in range(256):
        if byte in printable:
            table[byte] = chr(byte)
        else:
            table[byte] = chr(256 + extra)
            extra += 1
    return table


#: ``BYTE_TO_UNICODE[b]`` is the character that stands for byte ``b``.
BYTE_TO_UNICODE: List[str] = _build()
#: The inverse of :data:`BYTE_TO_UNICODE`.
UNICODE_TO_BYTE: Dict[str, int] = {char: byte for byte, char in enumerate(BYTE_TO_UNICODE)}
#: A ``str.translate`` table: each alphabet character to the Latin-1 character of its byte,
#: every other character below U+0100 to U+FFFF, which Latin-1 cannot encode (as it cannot
#: the characters above U+00FF left as they are).
_TO_LATIN1: Dict[int, int] = {
    **{code: 0xFFFF for code in range(256)},
    **{ord(char): byte for char, byte in UNICODE_TO_BYTE.items()},
}


def encode_token(token: bytes) -> str:
    """The GPT-2 string form of a token's bytes."""
    return "".join([BYTE_TO_UNICODE[b] for b in token])


def token_bytes(text: str) -> Optional[bytes]:
    """The bytes a GPT-2 string form stands for; ``None`` if a character is not in the
    alphabet.

    >>> token_bytes("Ġhello"), token_bytes("a b")
    (b' hello', None)
    """
    try:
        # One call in C where a character at a time cost 3.5x as long (150 000 tokens of
        # GPT-2's files: 0.06 -> 0.017 s on PyPy, a sixth of loading them).
        return text.translate(_TO_LATIN1).encode("latin-1")
    except UnicodeEncodeError:
        return None


def decode_token(text: str) -> bytes:
    """The bytes a GPT-2 string form stands for; other characters raise ``PureBPEError``.

    >>> decode_token("Ġhello"), encode_token(b" hello")
    (b' hello', 'Ġhello')
    """
    data = token_bytes(text)
    if data is None:
        wrong = next(char for char in text if char not in UNICODE_TO_BYTE)
        raise PureBPEError(f"{text!r} is not in GPT-2's byte-to-unicode alphabet (character {wrong!r})")
    return data
