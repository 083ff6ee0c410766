"""Overlapping special tokens give the same ids through every export format, or the export is
refused: purebpe and HF take the longest special token that matches; tiktoken the first of its
alternation, in hash order, so a tiktoken export of specials one of which starts another is refused."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, List

import pytest
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

import purebpe
from purebpe import BPEModel
from purebpe.errors import PureBPEError
from purebpe.formats import FORMATS

MERGES = [(b"a", b"b"), (b"<", b"a")]
ORDINARY = {left + right for left, right in MERGES}


@st.composite
def overlapping_specials(draw: Any) -> List[str]:
    """A special token and others that extend it, start inside it, or share its end."""
    base = draw(st.text(st.sampled_from("<>ab|"), min_size=2, max_size=4))
    extras = draw(st.lists(st.text(st.sampled_from("<>ab|"), min_size=1, max_size=3), min_size=1, max_size=3))
    tokens = [base] + [base + extra for extra in extras] + [base[1:] + extra for extra in extras]
    unique = list(dict.fromkeys(t for t in tokens if len(t) >= 2 and t.encode() not in ORDINARY))
    assume(len(unique) >= 2)
    return draw(st.lists(st.sampled_from(unique), min_size=2, max_size=len(unique), unique=True))


def texts_with(specials: List[str]) -> Any:
    return st.lists(
        st.sampled_from(specials) | st.text(st.sampled_from("<>ab| x"), max_size=4), max_size=8
    ).map("".join)


def event_of_prefixes(specials: List[str]) -> None:
    event(
        "a special token starts another" if has_prefix_pair(specials) else "no special token starts another"
    )


def has_prefix_pair(specials: List[str]) -> bool:
    return any(a != b and b.startswith(a) for a in specials for b in specials)


@settings(max_examples=60)
@given(data=st.data(), specials=overlapping_specials())
def test_every_format_gives_purebpe_ids_on_overlapping_specials(data: Any, specials: List[str]) -> None:
    model = BPEModel.from_merges(MERGES, specials)
    text = data.draw(texts_with(specials))
    expected = model.tokenizer().encode(text)
    for format in FORMATS:
        with tempfile.TemporaryDirectory() as tmp:
            if format == "tiktoken" and has_prefix_pair(specials):
                with pytest.raises(PureBPEError, match="tiktoken may match the shorter one"):
                    model.save(tmp, format)
                continue
            model.save(tmp, format)
            assert purebpe.load(tmp).tokenizer().encode(text) == expected, format


@settings(max_examples=40)
@given(data=st.data(), specials=overlapping_specials())
def test_the_peers_agree_on_overlapping_specials(data: Any, specials: List[str]) -> None:
    tokenizers = pytest.importorskip("tokenizers", reason="HF tokenizers is a CPython-only test peer")
    pytest.importorskip("tiktoken", reason="tiktoken is a CPython-only test peer")
    from purebpe.formats.tiktoken_format import tiktoken_encoding

    model = BPEModel.from_merges(MERGES, specials)
    text = data.draw(texts_with(specials))
    expected = model.tokenizer().encode(text)
    event_of_prefixes(specials)
    with tempfile.TemporaryDirectory() as tmp:
        model.save(Path(tmp) / "hf", "hf")
        hf = tokenizers.Tokenizer.from_file(str(Path(tmp) / "hf" / "tokenizer.json"))
        assert hf.encode(text, add_special_tokens=False).ids == expected
        if not has_prefix_pair(specials):
            model.save(Path(tmp) / "tt", "tiktoken")
            assert tiktoken_encoding(Path(tmp) / "tt").encode(text, allowed_special="all") == expected


def test_the_issue_example(tmp_path: Path) -> None:
    model = BPEModel.from_merges([], ["<a>", "<a><b>"])
    assert model.tokenizer().encode("x<a><b>y") == [120, 257, 121]
    with pytest.raises(PureBPEError, match="special token '<a>' starts '<a><b>'"):
        model.save(tmp_path, "tiktoken")
    assert not list(tmp_path.iterdir())
