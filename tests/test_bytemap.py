"""GPT-2's byte-to-unicode alphabet: every byte string round-trips, and a string with any
character outside the alphabet is refused, naming its first such character."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from purebpe.bytemap import BYTE_TO_UNICODE, UNICODE_TO_BYTE, decode_token, encode_token
from purebpe.errors import PureBPEError


def test_the_alphabet_is_256_distinct_printable_characters() -> None:
    assert len(set(BYTE_TO_UNICODE)) == 256
    assert all(char.isprintable() and not char.isspace() for char in BYTE_TO_UNICODE)
    assert BYTE_TO_UNICODE[ord(" ")] == "Ġ" and BYTE_TO_UNICODE[ord("a")] == "a"


@given(st.binary())
def test_every_byte_string_round_trips(token: bytes) -> None:
    assert decode_token(encode_token(token)) == token


@given(st.lists(st.sampled_from(BYTE_TO_UNICODE) | st.characters(), max_size=12).map("".join))
@example("a b")  # the space, below U+0100 but not in the alphabet
@example("\u00ad")  # the soft hyphen, likewise
@example("x\uffff")  # what the translation marks other Latin-1 characters with
@example("ĠĀ\u4e00")
def test_a_string_decodes_character_by_character_or_names_its_first_stranger(text: str) -> None:
    strangers = [char for char in text if char not in UNICODE_TO_BYTE]
    if not strangers:
        assert decode_token(text) == bytes(UNICODE_TO_BYTE[char] for char in text)
        return
    with pytest.raises(PureBPEError) as raised:
        decode_token(text)
    assert str(raised.value).endswith(f"(character {strangers[0]!r})")
