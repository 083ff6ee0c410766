"""HF ``tokenizer.json`` pipelines give exactly HF ``tokenizers``' answers.

Two kinds of reference:

* recorded answers (``tests/data/hf_pipelines/*.json``, written by
  ``scripts/record_hf_pipelines.py`` with ``tokenizers``): ids, tokens, offsets, type
  ids, masks and both decodes on multilingual text, code, emoji, ``\\r\\n``, whitespace
  and digit runs, added tokens glued to words and 20 KB runs; they replay on PyPy too;
* where ``tokenizers`` is installed, a live comparison on Hypothesis text, each pipeline
  loaded from the same document by both libraries.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import unicodedata
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import purebpe.hf.streaming as streaming
from purebpe.hf import HFTokenizer, from_document

DATA = Path(__file__).resolve().parent / "data" / "hf_pipelines"
FILES = sorted(DATA.glob("*.json"))
_loaded: Dict[str, Any] = {}


def recorded(name: str) -> Dict[str, Any]:
    if name not in _loaded:
        _loaded[name] = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    data: Dict[str, Any] = _loaded[name]
    return data


def pipeline(name: str) -> HFTokenizer:
    key = f"tok:{name}"
    if key not in _loaded:
        _loaded[key] = from_document(recorded(name)["tokenizer"], f"{name}.json")
    tok: HFTokenizer = _loaded[key]
    return tok


def digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()


def encoding_record(encoding: Any) -> Dict[str, Any]:
    return {
        "ids": list(encoding.ids),
        "tokens": list(encoding.tokens),
        "offsets": [list(o) for o in encoding.offsets],
        "type_ids": list(encoding.type_ids),
        "special_tokens_mask": list(encoding.special_tokens_mask),
        "attention_mask": list(encoding.attention_mask),
    }


NAMES = [path.stem for path in FILES]


def test_fixtures_present() -> None:
    assert len(NAMES) >= 16, "run scripts/record_hf_pipelines.py"


def check_recorded_ids(name: str, encode: Callable[[str], List[int]]) -> None:
    """``encode`` gives HF's recorded ids (or their digest) for every case of ``name``."""
    for case in recorded(name)["cases"]:
        ids = encode(case["text"])
        if "ids" in case:
            assert ids == case["ids"], case["text"][:80]
        else:
            assert digest(ids) == case["ids_sha256"], case["text"][:80]


@pytest.mark.parametrize("name", NAMES)
def test_recorded_ids(name: str) -> None:
    check_recorded_ids(name, pipeline(name).encode)


@pytest.mark.parametrize("name", NAMES)
def test_recorded_encodings(name: str) -> None:
    tok = pipeline(name)
    for case in recorded(name)["cases"]:
        got = encoding_record(tok.encode_with_offsets(case["text"], add_special_tokens=True))
        if "encoding" in case:
            assert got == case["encoding"], case["text"][:80]
            assert tok.encode(case["text"], add_special_tokens=True) == case["encoding"]["ids"]
        else:
            assert digest(got) == case["encoding_sha256"], case["text"][:80]


@pytest.mark.parametrize("name", NAMES)
def test_recorded_decodes(name: str) -> None:
    tok = pipeline(name)
    for case in recorded(name)["cases"]:
        ids = tok.encode(case["text"], add_special_tokens=True)
        for skip, key in ((False, "decode"), (True, "decode_skip")):
            text = tok.decode(ids, skip_special_tokens=skip)
            expected = case[key]
            assert (text if "ids" in case else digest(text)) == expected, (case["text"][:80], skip)


@pytest.mark.parametrize("name", NAMES)
def test_recorded_pair(name: str) -> None:
    pair = recorded(name)["pair"]
    got = pipeline(name).encode_with_offsets(pair["text"], pair["pair"], add_special_tokens=True)
    assert encoding_record(got) == pair["encoding"]


@pytest.mark.parametrize("name", NAMES)
def test_batch_and_stream_equal_encode(name: str) -> None:
    tok = pipeline(name)
    texts = [case["text"] for case in recorded(name)["cases"] if len(case["text"]) < 2000]
    assert tok.encode_batch(texts) == [tok.encode(t) for t in texts]
    whole = "".join(texts)
    assert list(tok.encode_iterable(iter(texts))) == tok.encode(whole)


# -- live comparison with tokenizers --------------------------------------------------------

#: Characters where pipelines differ: scripts, marks, joiners, spaces, digits, specials' parts.
ALPHABET = st.sampled_from(
    list("aAbz Ü\u00e9e\u0301ß我日本語한국ё")
    + [
        "\n",
        "\r\n",
        "\t",
        "  ",
        "\u00a0",
        "\u3000",
        "1",
        "23",
        "'s",
        "'S",
        "!?",
        "..",
        "👍",
        "🏽",
        "\u200d",
        "<s>",
        "<|endoftext|>",
        "[MASK]",
        "Hello",
        "world",
        "fox",
        "ÜBER",
        "<mask>",
        "▁",
        "Ġ",
        "</w>",
    ]
)


def _assigned(text: str) -> str:
    """``text`` without code points unassigned in this Python's Unicode: regex engines of
    different Unicode versions (HF's Oniguruma, the ``regex`` package) class those apart,
    so neither side's answer is "the" reference for them."""
    return "".join(c for c in text if unicodedata.category(c) != "Cn")


TEXT = (st.lists(ALPHABET, max_size=24).map("".join) | st.text(max_size=40)).map(_assigned)


def _hf(name: str) -> Any:
    tokenizers = pytest.importorskip(
        "tokenizers",
        minversion="0.23",  # older releases (the newest for Python 3.9) differ in added tokens
        reason="the live comparison needs tokenizers 0.23 or newer (CPython 3.10+); the "
        "recorded answers are replayed instead",
    )
    key = f"hf:{name}"
    if key not in _loaded:
        _loaded[key] = tokenizers.Tokenizer.from_str(json.dumps(recorded(name)["tokenizer"]))
    return _loaded[key]


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=150)
@given(text=TEXT)
def test_live_against_tokenizers(name: str, text: str) -> None:
    hf = _hf(name)
    tok = pipeline(name)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return  # tokenizers cannot take a lone surrogate either
    expected = hf.encode(text)
    assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids
    assert encoding_record(tok.encode_with_offsets(text, add_special_tokens=True)) == encoding_record(
        expected
    )
    for skip in (False, True):
        assert tok.decode(expected.ids, skip) == hf.decode(expected.ids, skip_special_tokens=skip)


# -- a pipeline that is a plain Tokenizer -------------------------------------------------

#: The recorded pipelines that run as a purebpe.Tokenizer (HFTokenizer.as_tokenizer).
PLAIN = ["gpt2", "llama3"]


def test_which_pipelines_run_as_a_plain_tokenizer() -> None:
    assert [name for name in NAMES if pipeline(name).as_tokenizer() is not None] == PLAIN


@pytest.mark.parametrize("name", PLAIN)
def test_a_model_and_its_engine_merge_on_one_table(name: str) -> None:
    tok = from_document(recorded(name)["tokenizer"], f"{name}.json")
    assert tok.fast is not None and tok.fast._encoder.pairs is tok.model.ranks
    check_recorded_ids(name, tok.encode)  # the engine
    case = next(case for case in recorded(name)["cases"] if "encoding" in case and case["text"])
    got = encoding_record(tok.encode_with_offsets(case["text"], add_special_tokens=True))
    assert got == case["encoding"]  # the model's own merging, for offsets


@pytest.mark.parametrize("name", PLAIN)
def test_a_plain_tokenizer_gives_hfs_recorded_ids(name: str) -> None:
    plain = pipeline(name).as_tokenizer()
    assert plain is not None
    check_recorded_ids(name, plain.encode)


@pytest.mark.parametrize("name", PLAIN)
@settings(max_examples=300)
@given(texts=st.lists(TEXT, min_size=1, max_size=4))
def test_a_plain_tokenizer_and_its_cuts_give_the_pipelines_ids(name: str, texts: List[str]) -> None:
    tok = pipeline(name)
    plain = tok.as_tokenizer()
    assert plain is not None
    text = "".join(texts)
    assert plain.encode(text) == tok.encode(text)
    # Cut where the Tokenizer's cutter allows (what purebpe encode does to a long
    # document), each part encoded apart: the ids of the whole.
    from purebpe.pretokenize.chunking import ChunkCutter

    specials = sorted(plain.special_tokens_set)
    cutter = ChunkCutter(specials, plain.pretokenizer, reserve=max(len(t.encode()) for t in specials))
    data = text.encode("utf-8", "surrogatepass")
    cut = cutter.cut(data)
    if cut > 0:
        head = data[:cut].decode("utf-8", "surrogatepass")
        tail = data[cut:].decode("utf-8", "surrogatepass")
        assert plain.encode(head) + plain.encode(tail) == tok.encode(text)


@pytest.mark.parametrize("name", NAMES)
def test_a_pipeline_and_its_plain_tokenizer_survive_pickling(name: str) -> None:
    # What a worker that is spawned, not forked, receives (macOS, Windows; datasets' map).
    tok = pipeline(name)
    check_recorded_ids(name, pickle.loads(pickle.dumps(tok)).encode)
    plain = tok.as_tokenizer()
    if plain is not None:
        copy = pickle.loads(pickle.dumps(plain))
        check_recorded_ids(name, copy.encode)
        assert copy.special_ids == plain.special_ids and copy.name == plain.name


@pytest.mark.parametrize(
    "change",
    [
        {"normalizer": {"type": "Lowercase"}},
        {"added": {"lstrip": True}},
        {"added": {"rstrip": True}},
        {"added": {"single_word": True}},
        {"added": {"normalized": True}},  # the first token only: two passes
        {"pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"}},
    ],
)
def test_a_pipeline_that_is_more_is_no_plain_tokenizer(change: Dict[str, Any]) -> None:
    document = json.loads(json.dumps(recorded("llama3")["tokenizer"]))
    assert from_document(document).as_tokenizer() is not None
    document["added_tokens"][0].update(change.get("added", {}))
    for key in ("normalizer", "pre_tokenizer"):
        if key in change:
            document[key] = change[key]
    assert from_document(document).as_tokenizer() is None


def test_long_run_without_whitespace_matches_live() -> None:
    hf = _hf("llama3")
    tok = pipeline("llama3")
    text = "漢字かなカナ" * 4000  # 24 K characters, no whitespace
    assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids


@pytest.mark.parametrize("name", ["llama2", "gemma", "bpe_plain", "bpe_byte_fallback_unk"])
@settings(max_examples=40)
@given(
    words=st.lists(
        st.sampled_from(
            [
                "the",
                " ",
                "  ",
                "quick",
                "Übung",
                "日本語",
                "한국어",
                "▁",
                "x",
                "\n",
                "12",
                "👍🏽",
                "ё",
                "e\u0301",
                "'s",
            ]
        ),
        min_size=60,
        max_size=200,
    )
)
def test_long_pieces_cut_where_no_merge_joins(name: str, words: List[str]) -> None:
    # Pipelines without a pre-tokenizer hand the model whole texts, which it cuts where no
    # token holds the two characters around the cut: the ids must be those of merging whole.
    tok = pipeline(name)
    text = "".join(words)
    text = text * (300 // len(text) + 1)  # long enough to be cut
    piece = text if tok.normalizer is None else tok.normalizer.normalize_str(text)
    assert len(piece) > 256
    assert tok.model.encode_piece(piece) == tok.model._merge(piece)
    assert tok.model.tokenize(piece) == tok.model._merge_spans(piece)


def test_long_pieces_are_cut_into_words() -> None:
    model = pipeline("llama2").model
    piece = "▁the▁quick▁Übung▁日本語" * 30
    parts = model._independent_parts(piece)
    assert "".join(parts) == piece and len(parts) >= 30
    bigrams, _ = model._cut_tables()
    for left, right in zip(parts, parts[1:]):
        # Each cut is one the rule allows: both characters tokens, no token holding both.
        assert left[-1] in model.vocab and right[0] in model.vocab
        assert left[-1] + right[0] not in bigrams


# -- Metaspace("first") after a normalizer ------------------------------------------------------

#: Normalizers that move where the first character comes from (dropping it, replacing it
#: with text taking a later span) or make several characters of it.
_ORIGIN_NORMALIZERS = [
    ("Strip", lambda N: N.Strip()),
    ("Strip left", lambda N: N.Strip(left=True, right=False)),
    ("Replace ab->x", lambda N: N.Replace("ab", "x")),
    ("Replace ab->''", lambda N: N.Replace("ab", "")),
    ("Replace ' '->''", lambda N: N.Replace(" ", "")),
    ("Replace a->'x y'", lambda N: N.Replace("a", "x y")),
    ("StripAccents", lambda N: N.StripAccents()),
    ("NFD", lambda N: N.NFD()),
    ("NFKC", lambda N: N.NFKC()),
    ("Lowercase", lambda N: N.Lowercase()),
    ("Prepend ▁", lambda N: N.Prepend("▁")),
    ("Prepend 'xy z'", lambda N: N.Prepend("xy z")),
    ("Strip, Prepend x", lambda N: N.Sequence([N.Strip(), N.Prepend("x")])),
    (
        "Strip left, Replace, Prepend",
        lambda N: N.Sequence([N.Strip(True, False), N.Replace(" ", "▁"), N.Prepend("▁")]),
    ),
    ("NFKD, StripAccents", lambda N: N.Sequence([N.NFKD(), N.StripAccents()])),
]
_METASPACES = [
    ("first", lambda P: P.Metaspace(prepend_scheme="first")),
    ("first, no split", lambda P: P.Metaspace(prepend_scheme="first", split=False)),
    ("always", lambda P: P.Metaspace()),
    (
        "WhitespaceSplit, first",
        lambda P: P.Sequence([P.WhitespaceSplit(), P.Metaspace(prepend_scheme="first")]),
    ),
    ("Digits, first", lambda P: P.Sequence([P.Digits(), P.Metaspace(prepend_scheme="first")])),
]
_ORIGIN_TEXT = st.lists(
    st.sampled_from(
        [" ", "  ", "\t", "a", "ab", "b", "x", "1", "é", "\u0301", "\u0327", "ﬁ", "İ", "▁", "<n>", "<r>"]
    ),
    max_size=10,
).map("".join)


def _metaspace_pipeline(normalizer: int, metaspace: int) -> Any:
    """HF's tokenizer of one combination (with a normalized and a raw added token), built
    with ``tokenizers``' Python API, and purebpe's of the document it writes."""
    key = f"metaspace:{normalizer}:{metaspace}"
    if key not in _loaded:
        tokenizers = pytest.importorskip(
            "tokenizers", minversion="0.23", reason="the live comparison needs tokenizers"
        )
        alphabet = sorted(set("▁ \tabxyz1é\u0301\u0327fiİi\u0307"))
        vocab = {"<unk>": 0, **{c: i + 1 for i, c in enumerate(alphabet)}}
        merges = [("▁", "a"), ("a", "b"), ("▁a", "b")]
        for left, right in merges:
            vocab[left + right] = len(vocab)
        hf = tokenizers.Tokenizer(tokenizers.models.BPE(vocab, merges, unk_token="<unk>"))
        hf.normalizer = _ORIGIN_NORMALIZERS[normalizer][1](tokenizers.normalizers)
        hf.pre_tokenizer = _METASPACES[metaspace][1](tokenizers.pre_tokenizers)
        hf.add_tokens(
            [tokenizers.AddedToken("<n>", normalized=True), tokenizers.AddedToken("y z", normalized=True)]
        )
        hf.add_special_tokens([tokenizers.AddedToken("<r>", normalized=False)])
        _loaded[key] = (hf, from_document(json.loads(hf.to_str())))
    return _loaded[key]


@settings(max_examples=300)
@given(
    normalizer=st.integers(0, len(_ORIGIN_NORMALIZERS) - 1),
    metaspace=st.integers(0, len(_METASPACES) - 1),
    text=_ORIGIN_TEXT,
    cut=st.integers(0, 30),
)
def test_metaspace_first_after_any_normalizer(normalizer: int, metaspace: int, text: str, cut: int) -> None:
    # HF prepends only to a piece whose first character comes from offset 0: after Strip
    # on " a b", none does (['a', '▁', 'b']).
    hf, tok = _metaspace_pipeline(normalizer, metaspace)
    expected = hf.encode(text, add_special_tokens=False)
    assert tok.encode(text) == expected.ids
    saved = streaming.STREAM_CHARS
    streaming.STREAM_CHARS = 1  # every step looks for a cut after each character
    try:
        assert list(tok.encode_iterable([text[:cut], text[cut:]])) == expected.ids
    finally:
        streaming.STREAM_CHARS = saved
    assert tok.encode_with_offsets(text).tokens == expected.tokens


def test_metaspace_first_after_strip() -> None:
    hf, tok = _metaspace_pipeline(0, 0)
    assert [tok.id_to_token(i) for i in tok.encode(" a b")] == ["a", "▁", "b"] == hf.encode(" a b").tokens


# -- ByteLevel's trim_offsets: Rust's whitespace, not Python's ----------------------------
BYTE_LEVEL_TRIM = {"trim_offsets": True, "use_regex": True}
PLAIN_ADDED = {"special": False, "normalized": False, "single_word": False, "lstrip": False, "rstrip": False}
TRIMMED = {
    "version": "1.0",
    "added_tokens": [
        {"id": 3, "content": "\x1cab\x1c", **PLAIN_ADDED},
        {"id": 4, "content": " ab ", **PLAIN_ADDED},
    ],
    "normalizer": None,
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, **BYTE_LEVEL_TRIM},
    "post_processor": {"type": "ByteLevel", "add_prefix_space": True, **BYTE_LEVEL_TRIM},
    "decoder": None,
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "\u0120": 2}, "merges": []},
}
#: HF's offsets (tokenizers 0.23.3): U+001C is no whitespace to Rust's ``char::is_whitespace``,
#: so the added token holding it keeps it; ``str.isspace`` would have trimmed it.
TRIMMED_OFFSETS = {"a\x1cab\x1cb": [(0, 1), (1, 5), (5, 6)], "a ab b": [(0, 1), (2, 4), (5, 6)]}


def test_trim_offsets_trims_what_rust_calls_whitespace() -> None:
    tok = from_document(TRIMMED, "trimmed.json")
    for text, offsets in TRIMMED_OFFSETS.items():
        assert tok.encode_with_offsets(text).offsets == offsets


@pytest.mark.peers
def test_trim_offsets_recorded_answers_are_hfs() -> None:
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.Tokenizer.from_str(json.dumps(TRIMMED))
    assert {text: hf.encode(text).offsets for text in TRIMMED_OFFSETS} == TRIMMED_OFFSETS
