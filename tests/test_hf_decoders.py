"""HF decoders: ``decode`` equals HF ``tokenizers``' on the same tokens.

Replays HF's recorded answers on every interpreter; live Hypothesis comparison where
``tokenizers`` is installed.
"""

from __future__ import annotations

from typing import Any, Dict, List

import pytest
from _hf_components import decoders as hf_decoders
from _hf_fixture import component_id, hf_tokenizers, recorded
from hypothesis import assume, given
from hypothesis import strategies as st

from purebpe.bytemap import BYTE_TO_UNICODE
from purebpe.decoders import from_json
from purebpe.errors import PureBPEError

RECORDED = recorded("decoders")


@pytest.mark.parametrize("component", RECORDED, ids=[component_id(c["json"]) for c in RECORDED])
def test_recorded_answers(component: Dict[str, Any]) -> None:
    decoder = from_json(component["json"])
    assert len(component["cases"]) > 30
    for case in component["cases"]:
        assert decoder.decode(case["tokens"]) == case["text"], case["tokens"]


def test_fixture_covers_every_decoder_type() -> None:
    def types(obj: Dict[str, Any]) -> List[str]:
        return [obj["type"]] + [t for inner in obj.get("decoders", []) for t in types(inner)]

    seen = {t for c in RECORDED for t in types(c["json"])}
    assert seen >= {
        "ByteLevel",
        "Metaspace",
        "ByteFallback",
        "Fuse",
        "Strip",
        "Replace",
        "Sequence",
        "BPEDecoder",
    }


@pytest.mark.parametrize("component", RECORDED, ids=[component_id(c["json"]) for c in RECORDED])
def test_to_json_reads_back_the_same(component: Dict[str, Any]) -> None:
    again = from_json(from_json(component["json"]).to_json())
    for case in component["cases"]:
        assert again.decode(case["tokens"]) == case["text"]


TOKENIZERS = hf_tokenizers()
LIVE = hf_decoders(TOKENIZERS) if TOKENIZERS is not None else []

TOKEN = (
    st.lists(st.sampled_from(["a", "b", "▁", " ", "_", "é", "€", "😀", "</w>", "Ġ"]), max_size=5).map("".join)
    | st.text(st.sampled_from(BYTE_TO_UNICODE), max_size=4)
    | st.integers(0, 255).map(lambda b: "<0x%02X>" % b)
    | st.sampled_from(["<0xE2>", "<0x82>", "<0xAC>", "<0xF0>", "<0x9F>", "<0x+F>", "<0xg1>", "<0x0a>"])
    | st.text(st.characters(blacklist_categories=("Cs",)), max_size=3)
)


@pytest.mark.skipif(
    TOKENIZERS is None,
    reason="HF tokenizers is not installed (CPython-only peer); recorded answers replayed above",
)
@pytest.mark.parametrize("index", range(len(LIVE)) or [0])
@given(tokens=st.lists(TOKEN, max_size=8))
def test_live_against_tokenizers(index: int, tokens: List[str]) -> None:
    hf, obj = LIVE[index]
    try:
        expected = hf.decode(tokens)
    except BaseException:  # noqa: B036 - HF's Strip panics on tokens shorter than `stop`
        assume(False)
    assert from_json(obj).decode(tokens) == expected


def test_decode_chain_keeps_token_boundaries_until_fuse() -> None:
    seq = from_json(
        {
            "type": "Sequence",
            "decoders": [
                {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
                {"type": "ByteFallback"},
                {"type": "Strip", "content": " ", "start": 1, "stop": 0},
            ],
        }
    )
    # Before Fuse, Strip cuts the leading space of every token.
    assert seq.decode_chain(["▁a", "▁b", "<0x41>"]) == ["a", "b", "A"]


def test_strip_on_short_tokens_does_not_fail() -> None:
    # HF panics here (index out of bounds); purebpe strips what there is.
    strip = from_json({"type": "Strip", "content": "▁", "start": 2, "stop": 3})
    assert strip.decode_chain(["", "▁", "▁▁", "a▁"]) == ["", "", "", "a"]


@pytest.mark.parametrize(
    "obj, message",
    [
        ({"type": "WordPiece", "prefix": "##"}, "decoder 'WordPiece' is not supported"),
        ({"type": "CTC"}, "decoder 'CTC' is not supported"),
        ({"type": "Strip", "content": "ab", "start": 1, "stop": 0}, "content must be one character"),
        (
            {"type": "Strip", "content": " ", "start": -1, "stop": 0},
            "field 'start' must be a non-negative integer",
        ),
        ({"type": "Replace", "pattern": {"String": "▁"}}, "field 'content' must be a string"),
        (
            {"type": "Sequence", "decoders": [{"type": "Fuse"}, {"type": "Nope"}]},
            "decoder 'Nope' is not supported",
        ),
    ],
)
def test_bad_objects_fail_in_one_line(obj: Dict[str, Any], message: str) -> None:
    with pytest.raises(PureBPEError) as error:
        from_json(obj)
    assert message in str(error.value)
    assert "\n" not in str(error.value)
