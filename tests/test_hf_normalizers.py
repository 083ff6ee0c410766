"""HF normalizers: same text and same per-character alignment as HF ``tokenizers``.

Replays HF's recorded answers (``tests/data/hf_components.json``, made by
``scripts/record_hf_components.py``) on every interpreter, and where ``tokenizers`` is
installed also compares live on Hypothesis text.
"""

from __future__ import annotations

from typing import Any, Dict, List

import pytest
from _hf_components import normalizer_alignment, text_strategy
from _hf_components import normalizers as hf_normalizers
from _hf_fixture import component_id, hf_tokenizers, recorded
from hypothesis import given

from purebpe.errors import PureBPEError
from purebpe.normalizers import Normalized, from_json
from purebpe.normalizers.unicode import UnicodeForm

RECORDED = recorded("normalizers")


def alignment(obj: Dict[str, Any], text: str) -> List[List[Any]]:
    n = from_json(obj).normalize(Normalized.of(text))
    assert len(n.starts) == len(n.ends) == len(n.text)
    return [[c, s, e] for c, s, e in zip(n.text, n.starts, n.ends)]


@pytest.mark.parametrize("component", RECORDED, ids=[component_id(c["json"]) for c in RECORDED])
def test_recorded_answers(component: Dict[str, Any]) -> None:
    normalizer = from_json(component["json"])
    for case in component["cases"]:
        assert normalizer.normalize_str(case["text"]) == case["normalized"], case["text"]
        assert alignment(component["json"], case["text"]) == case["alignment"], case["text"]


def test_fixture_covers_every_normalizer_type() -> None:
    def types(obj: Dict[str, Any]) -> List[str]:
        return [obj["type"]] + [t for inner in obj.get("normalizers", []) for t in types(inner)]

    seen = {t for c in RECORDED for t in types(c["json"])}
    assert seen >= {
        "NFC",
        "NFD",
        "NFKC",
        "NFKD",
        "Lowercase",
        "Strip",
        "StripAccents",
        "Replace",
        "Prepend",
        "Sequence",
    }
    assert any(c["json"] == {"type": "Sequence", "normalizers": []} for c in RECORDED)


@pytest.mark.parametrize("component", RECORDED, ids=[component_id(c["json"]) for c in RECORDED])
def test_to_json_gives_back_the_object(component: Dict[str, Any]) -> None:
    assert from_json(component["json"]).to_json() == component["json"]


TOKENIZERS = hf_tokenizers()
LIVE = hf_normalizers(TOKENIZERS) if TOKENIZERS is not None else []


@pytest.mark.skipif(
    TOKENIZERS is None,
    reason="HF tokenizers is not installed (CPython-only peer); recorded answers replayed above",
)
@pytest.mark.parametrize("index", range(len(LIVE)) or [0])
@given(text=text_strategy())
def test_live_against_tokenizers(index: int, text: str) -> None:
    hf, obj = LIVE[index]
    assert from_json(obj).normalize_str(text) == hf.normalize_str(text)
    assert alignment(obj, text) == normalizer_alignment(TOKENIZERS, hf, text)


def test_offset_and_origin_carry_through() -> None:
    seq = from_json(
        {
            "type": "Sequence",
            "normalizers": [{"type": "NFKD"}, {"type": "Strip", "strip_left": True, "strip_right": True}],
        }
    )
    n = seq.normalize(Normalized.of(" ﬁ ", 10))
    assert (n.text, n.starts, n.ends, n.origin) == ("fi", [11, 11], [12, 12], 10)
    assert seq.normalize_str(" ﬁ ") == "fi"


def test_composition_merges_spans_hf_style() -> None:
    # a + combining ring composes; the composite replaces "a" and swallows the mark.
    n = UnicodeForm("NFC").normalize(Normalized.of("xa\u030a"))
    assert (n.text, n.starts, n.ends) == ("x\u00e5", [0, 1], [1, 2])
    # Hangul jamo L + V + T compose into one syllable spanning... the first jamo (HF's rule).
    n = UnicodeForm("NFC").normalize(Normalized.of("\u1100\u1161\u11a8"))
    assert (n.text, n.starts, n.ends) == ("각", [0], [1])


def test_unchanged_text_is_returned_as_is() -> None:
    n = Normalized.of("plain ascii", 3)
    for kind in ("NFC", "NFD", "NFKC", "NFKD", "Lowercase", "StripAccents"):
        assert from_json({"type": kind}).normalize(n) is n


@pytest.mark.parametrize(
    "obj, message",
    [
        ({"type": "Precompiled", "precompiled_charsmap": ""}, "normalizer 'Precompiled' is not supported"),
        ({"type": "BertNormalizer"}, "normalizer 'BertNormalizer' is not supported"),
        ({"normalizers": []}, "normalizer None is not supported"),
        ({"type": "Replace", "pattern": {"Glob": "*"}, "content": ""}, "Replace normalizer"),
        ({"type": "Replace", "pattern": {"String": " "}}, "field 'content' must be a string"),
        (
            {"type": "Strip", "strip_left": "yes", "strip_right": True},
            "field 'strip_left' must be true or false",
        ),
        (
            {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Nmt"}]},
            "normalizer 'Nmt' is not supported",
        ),
        ({"type": "Replace", "pattern": {"Regex": "(unclosed"}, "content": ""}, "does not compile"),
    ],
)
def test_bad_objects_fail_in_one_line(obj: Dict[str, Any], message: str) -> None:
    with pytest.raises(PureBPEError) as error:
        from_json(obj)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_hfs_unicode_9_data_not_the_interpreters() -> None:
    # HF's normalizers know Unicode 9.0: U+10781 (MODIFIER LETTER SUPERSCRIPT TRIANGULAR
    # COLON, Unicode 14) has no compatibility decomposition there, U+1715 (TAGALOG SIGN
    # PAMUDPOD, Unicode 14) is no combining mark; both answers checked against tokenizers.
    assert from_json({"type": "NFKD"}).normalize_str("ﬁ\U00010781") == "fi\U00010781"
    assert from_json({"type": "NFKC"}).normalize_str("ﬁ\U00010781") == "fi\U00010781"
    assert from_json({"type": "StripAccents"}).normalize_str("a\u1715\u0301") == "a\u1715"
    n = from_json({"type": "NFKD"}).normalize(Normalized.of("ﬁ\U00010781"))
    assert (n.text, n.starts, n.ends) == ("fi\U00010781", [0, 0, 1], [1, 1, 2])
