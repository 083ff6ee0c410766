"""``encode_iterable`` of HF pipelines: exactly ``encode`` of the joined text, in bounded memory.

Each step's rule is tested on its own against the step run whole (the pattern analysis,
the pre-tokenizers' verdicts, the streaming normalizers), then the whole stream on every
recorded pipeline shape and the real files: against purebpe's ``encode`` of the joined
text, against HF ``tokenizers`` where it is installed, and against HF's recorded answers
(which PyPy replays).  ``IdStream.most_held`` shows what a long stream holds at once.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from typing import Any, Dict, Iterator, List, Optional, Tuple

import pytest
from _hf_components import text_strategy
from _hf_fixture import component_id, recorded
from hypothesis import given, settings
from hypothesis import strategies as st
from test_hf_pipelines import NAMES, pipeline
from test_hf_pipelines import recorded as recorded_pipeline
from test_hf_real_files import FILES, answers, loaded

import purebpe.hf.streaming as streaming
from purebpe.errors import InputError, PureBPEError
from purebpe.hf import HFTokenizer, from_document
from purebpe.normalizers import Normalized, from_json
from purebpe.normalizers.pattern import HFPattern
from purebpe.normalizers.pattern_cuts import pattern_cuts
from purebpe.normalizers.streaming import normalizer_stream
from purebpe.normalizers.unicode import UnicodeForm, _class_of, _decomposes, second_starters
from purebpe.pre_tokenizers import from_json as pre_tokenizer_from_json
from purebpe.pre_tokenizers.cuts import BLOCK, BOUNDARY, PairRule
from purebpe.pretokenize import PATTERNS

#: Characters and strings where a cut is hard: combining marks (and a mark's first half,
#: ``ǆ``, ``İ`` that lowercases to two), Hangul jamo and an Oriya vowel sign that compose
#: with what precedes them, CR LF, spaces of all kinds, ``▁``, digits, byte-fallback
#: characters, and added tokens whole and in halves (``<|endof``, ``text|>``).
EDGE = [
    "a",
    "b",
    "ab",
    "Hello",
    " world",
    "xworld",
    " ",
    "  ",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "\u3000",
    "\u00a0",
    "1",
    "234",
    "½",
    "'s",
    "'S",
    ".",
    "!?",
    "—",
    "é",
    "e",
    "\u0301",
    "\u0308",
    "\u0323",
    "\u0345",
    "Å",
    "\u212b",
    "ﬁ",
    "İ",
    "Σ",
    "ǆ",
    "\u1100",
    "\u1161",
    "\u11a8",
    "\u0b47",
    "\u0b3e",
    "日本",
    "語",
    "한",
    "😀",
    "👍🏽",
    "\u200d",
    "\x00",
    "\x85",
    "▁",
    "Ġ",
    "<0x41>",
    "<s>",
    "</s>",
    "s>",
    "<",
    "[MASK]",
    " [MASK] ",
    "<mask>",
    "ÜBER",
    "<Norm>",
    "<|endoftext|>",
    "<|endof",
    "text|>",
    "<think>",
    "<｜begin▁of▁sentence｜>",
    "<EOT>",
]


def chunks_of(text: str, cuts: List[int]) -> List[str]:
    cuts = sorted(set(cuts))
    return [text[i:j] for i, j in zip([0] + cuts, cuts + [len(text)])]


def streamed(tok: HFTokenizer, chunks: List[str], stream_chars: int) -> Tuple[List[int], int]:
    saved = streaming.STREAM_CHARS
    streaming.STREAM_CHARS = stream_chars  # look for cuts after every few characters
    try:
        stream = tok.encode_iterable(iter(chunks))
        return list(stream), stream.most_held
    finally:
        streaming.STREAM_CHARS = saved


# -- the rules, step by step ------------------------------------------------------------------

HARD = st.text(st.sampled_from(list("ab1 \t\n\r.'sS-_é\u0301Σ日本😀▁\u3000\u00a0\u0b3e\u1161")), max_size=24)


def _patterns() -> List[HFPattern]:
    found = [HFPattern({"Regex": source}) for source in PATTERNS.values()]
    for component in recorded("pre_tokenizers") + recorded("normalizers"):
        stack = [component["json"]]
        while stack:
            obj = stack.pop()
            stack += obj.get("pretokenizers", []) + obj.get("normalizers", [])
            if "pattern" in obj:
                found.append(HFPattern(obj["pattern"]))
    for source in (r"\s+(?!\S)", r"a(?=bc)|b", r"x\Z|\p{N}{2,}+", "[^(\\s|[.,])]+"):
        found.append(HFPattern({"Regex": source}))
    unique = {json.dumps(pattern.to_json()): pattern for pattern in found}
    return list(unique.values())


PATTERN_LIST = _patterns()


@pytest.mark.parametrize("pattern", PATTERN_LIST, ids=[repr(p.to_json())[:60] for p in PATTERN_LIST])
@settings(max_examples=40)
@given(text=HARD)
def test_pattern_cuts_keep_every_match(pattern: HFPattern, text: str) -> None:
    cuts = pattern_cuts(pattern)
    if not cuts.usable:
        return
    whole = pattern.spans(text)
    for start, end in whole:
        assert not any(cuts.never(char) for char in text[start:end]), (text, start, end)
    for c in range(1, len(text)):
        if any(start < c < end for start, end in whole):
            assert cuts.spans(text[c - 1], text[c]), (text, c, whole)
            continue
        if cuts.spans(text[c - 1], text[c]):
            continue
        before = [(s, e) for s, e in whole if s < c]
        after = [(s - c, e - c) for s, e in whole if s >= c]
        assert after == pattern.spans(text[c:]), (text, c)
        # The matches before the cut need only ``margin`` characters after it.
        assert [(s, e) for s, e in pattern.spans(text[: c + cuts.margin]) if s < c] == before


def test_unreadable_patterns_get_no_cuts() -> None:
    # Look-behind, line starts, empty matches: the analysis declines them.
    for source in (r"(?<=a)b", r"^\s*\S", r"a{,2}", r"(?=b)", r"\bx", r"(a)\1"):
        assert not pattern_cuts(HFPattern({"Regex": source})).usable, source


PRE_TOKENIZERS = recorded("pre_tokenizers")


def _pieces(pre_tokenizer: Any, text: str, offset: int) -> List[Tuple[str, Tuple[int, int]]]:
    pieces = pre_tokenizer.pre_tokenize([Normalized.of(text, offset)] if text else [])
    return [(p.text, (p.starts[0], p.ends[-1])) for p in pieces]


@pytest.mark.parametrize("component", PRE_TOKENIZERS, ids=[component_id(c["json"]) for c in PRE_TOKENIZERS])
@settings(max_examples=15)
@given(text=HARD)
def test_pre_tokenizer_verdicts_hold(component: Dict[str, Any], text: str) -> None:
    pre_tokenizer = pre_tokenizer_from_json(component["json"])
    rule = PairRule(pre_tokenizer)
    whole = _pieces(pre_tokenizer, text, 0)
    for c in range(1, len(text)):
        verdict = rule.verdict(text[c - 1], text[c])[0]
        if verdict == BLOCK:
            continue
        right = _pieces(pre_tokenizer, text[c:], c)  # origin c: not the start of the input
        left = [p for p in whole if p[1][1] <= c]
        # What precedes the cut needs only ``margin`` characters after it; whether the
        # piece ending there is joined to the next may not (TRANSPARENT).
        decided = c if verdict == BOUNDARY else c - 1
        truncated = _pieces(pre_tokenizer, text[: c + rule.margin], 0)
        assert [p for p in truncated if p[1][1] <= decided] == [p for p in left if p[1][1] <= decided]
        if verdict == BOUNDARY or whole[len(left) :] == right:
            assert whole[len(left) :] == right, (text, c, verdict)
        else:  # the piece across the cut is the last piece before it joined to the first after
            across = whole[len(left)]
            assert across[1][0] < c < across[1][1] and across[0].endswith(right[0][0]), (text, c)
            assert across[1][1] == right[0][1][1] and whole[len(left) + 1 :] == right[1:], (text, c)


NORMALIZERS = [c["json"] for c in recorded("normalizers")] + [
    {"type": "Replace", "pattern": {"Regex": r"\s+(?!\S)"}, "content": "_"},
    {"type": "Replace", "pattern": {"String": "aa"}, "content": "b"},
    {"type": "Replace", "pattern": {"Regex": "a|ab"}, "content": "X"},
    {"type": "Replace", "pattern": {"Regex": "(?=b)"}, "content": "x"},
    {"type": "Sequence", "normalizers": [{"type": "Lowercase"}, {"type": "NFKC"}]},
    {"type": "Sequence", "normalizers": [{"type": "NFKD"}, {"type": "StripAccents"}, {"type": "NFC"}]},
]
NORMALIZER_TEXT = text_strategy() | st.lists(
    st.sampled_from(
        ["a", "aa", "b", " ", "  ", "\t", "\u1100", "\u1161", "\u11a8", "가", "ㅏ", "\u0b47", "\u0b3e"]
        + ["e", "\u0301", "\u0323", "İ", "ǆ", "Å", "\u212b", "ﬁ", "\u0f73", "\u0344", "\u0958"]
    ),
    max_size=20,
).map("".join)


@pytest.mark.parametrize("obj", NORMALIZERS, ids=[component_id(n) for n in NORMALIZERS])
@settings(max_examples=40)
@given(text=NORMALIZER_TEXT, cuts=st.lists(st.integers(0, 24), max_size=6))
def test_streaming_normalizers_give_the_whole_text(obj: Dict[str, Any], text: str, cuts: List[int]) -> None:
    normalizer = from_json(obj)
    stream = normalizer_stream(normalizer)
    out = [stream.feed(part) for part in chunks_of(text, [c for c in cuts if c <= len(text)])]
    assert "".join(out) + stream.finish() == normalizer.normalize_str(text)


def test_every_starter_that_composes_is_known() -> None:
    # The NFC rule needs every starter that HF composes with the character before it:
    # the second half of each primary composite HF decomposes (and the Hangul jamo).
    for point in range(0x30000):
        char = chr(point)
        parts = unicodedata.decomposition(char).split()
        if len(parts) != 2 or parts[0].startswith("<") or not _decomposes(char, "NFD"):
            continue
        first, second = chr(int(parts[0], 16)), chr(int(parts[1], 16))
        if unicodedata.normalize("NFC", first + second) == char and _class_of(second, 0) == 0:
            assert second in second_starters(), hex(point)
    nfc = UnicodeForm("NFC")
    assert nfc.normalize_str("\u1100\u1161\u11a8") == "각" and not nfc.safe_before("\u11a8")


# -- whole streams --------------------------------------------------------------------------


def _real(name: str) -> HFTokenizer:
    return loaded(name)


PIPELINES = [(name, pipeline) for name in NAMES] + [(name, _real) for name in FILES]
_hf_cache: Dict[str, Any] = {}


def _hf(name: str) -> Optional[Any]:
    """HF's own tokenizer of ``name``, where ``tokenizers`` (0.23 or newer) is installed."""
    try:
        import tokenizers
    except ImportError:
        return None
    if tuple(int(p) for p in tokenizers.__version__.split(".")[:2]) < (0, 23):
        return None
    if name not in _hf_cache:
        if name in FILES:
            from _tokenizer_files import tokenizer_file

            _hf_cache[name] = tokenizers.Tokenizer.from_file(str(tokenizer_file(name)))
        else:
            _hf_cache[name] = tokenizers.Tokenizer.from_str(json.dumps(recorded_pipeline(name)["tokenizer"]))
    return _hf_cache[name]


@pytest.mark.parametrize("name, load", PIPELINES, ids=[name for name, _ in PIPELINES])
@settings(max_examples=60)
@given(data=st.data())
def test_any_split_of_a_stream_gives_the_ids_of_the_whole(name: str, load: Any, data: st.DataObject) -> None:
    tok = load(name)
    text = "".join(data.draw(st.lists(st.sampled_from(EDGE), max_size=30), label="words"))
    cuts = data.draw(st.lists(st.integers(0, len(text)), max_size=8), label="cuts")
    stream_chars = data.draw(st.sampled_from([1, 2, 3, 7, 64]), label="stream_chars")
    ids, _ = streamed(tok, chunks_of(text, cuts), stream_chars)
    expected = tok.encode(text)
    assert ids == expected
    hf = _hf(name)
    if hf is not None:
        assert ids == hf.encode(text, add_special_tokens=False).ids


def _digest(ids: List[int]) -> str:
    return hashlib.sha256(json.dumps(ids, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()


@pytest.mark.parametrize("name, load", PIPELINES, ids=[name for name, _ in PIPELINES])
def test_recorded_texts_streamed_give_hfs_ids(name: str, load: Any) -> None:
    # HF's recorded answers (replayed on PyPy): each text in pieces of 1, 5 and 97 characters.
    tok = load(name)
    cases = answers(name)["cases"] if name in FILES else recorded_pipeline(name)["cases"]
    for case in cases:
        text = case["text"]
        for size in (1, 5, 97):
            if size < 5 and len(text) > 2000:
                continue
            chunks = [text[i : i + size] for i in range(0, len(text), size)]
            ids, _ = streamed(tok, chunks, 16)
            if "ids" in case:
                assert ids == case["ids"], (text[:80], size)
            else:
                assert _digest(ids) == case["ids_sha256"], (text[:80], size)


LINES = [
    "The quick brown fox jumps over the lazy dog, 1234 times.\n",
    "  Grüße, 世界! e\u0301 naïve — “quoted” <s> [MASK] text\r\n",
    "\tcode(x) = y[0] + 42;  // ÜBER ▁ <|endoftext|>\n",
    "日本語のテキストです。한국어 텍스트 \u1100\u1161\u11a8 😀👍🏽\n",
]


def _lines(count: int) -> Iterator[str]:
    for i in range(count):
        yield LINES[i % len(LINES)]


@pytest.mark.parametrize("name, load", PIPELINES, ids=[name for name, _ in PIPELINES])
def test_a_long_stream_is_held_a_little_at_a_time(name: str, load: Any) -> None:
    tok = load(name)
    stream_chars = 256
    ids, held = streamed(tok, list(_lines(2000)), stream_chars)  # 124 000 characters
    assert ids == tok.encode("".join(_lines(2000)))
    # A buffer of about stream_chars, what the steps have not decided, the next line.
    assert held <= 4 * stream_chars + 100, held


def test_a_stream_without_safe_places_is_cut_at_added_tokens() -> None:
    # Split with a look-ahead only: no place is provably safe inside the text, so the
    # text is held until an added token (or the end) ends it.
    document = {
        "added_tokens": [{"id": 9, "content": "<s>", "special": True, "normalized": False}],
        "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "(?=b)"}, "behavior": "Isolated"},
        "model": {"type": "BPE", "vocab": {c: i for i, c in enumerate("ab \n")}, "merges": []},
    }
    tok = from_document(document)
    plain = ["ab ab\n"] * 500
    ids, held = streamed(tok, plain, 64)
    assert ids == tok.encode("".join(plain)) and held >= 3000 - 64  # all but the last buffer
    marked = ["ab ab<s>\n"] * 500
    ids, held = streamed(tok, marked, 64)
    assert ids == tok.encode("".join(marked)) and held <= 200


def test_chunks_are_text_or_utf8_as_in_the_native_tokenizer() -> None:
    tok = pipeline("llama2")
    text = "héllo wörld"
    assert list(tok.encode_iterable(["hé", b"llo w\xc3", b"\xb6rld"])) == tok.encode(text)
    with pytest.raises(InputError, match="invalid UTF-8"):
        list(tok.encode_iterable([b"ok \xff"]))
    with pytest.raises(PureBPEError, match="^encode_iterable: item 1 is int, not str or bytes$"):
        list(tok.encode_iterable(["a", 3]))  # type: ignore[list-item]
