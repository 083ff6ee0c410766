"""The named patterns cl100k and o200k (and gpt2 beside them), and custom patterns.

The definition of a named pattern is ``regex.findall(PATTERNS[name], text)`` with
tiktoken's string; every engine must give exactly that, on hand-picked cases, on every
code point, and on Hypothesis text.  A safe cut must change nothing, wherever it is taken.
"""

from __future__ import annotations

import collections
import json
import sys
import unicodedata
from pathlib import Path
from typing import Callable, Dict, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import purebpe
from purebpe import BPEModel
from purebpe.errors import PureBPEError
from purebpe.formats.hf import hf_regex
from purebpe.pretokenize import (
    ENGINES,
    PATTERNS,
    Pattern,
    count_pretokens,
    cut_finder,
    pattern_string,
    pretokenize,
    splitter,
    utf8_word_counter,
)

NAMED = ("gpt2", "cl100k", "o200k", "llama3", "qwen", "qwen3.5", "tekken")
STDLIB_ENGINES = ("scanner", "re")

regex = pytest.importorskip("regex")
COMPILED = {name: regex.compile(pattern) for name, pattern in PATTERNS.items()}


#: A small model per named pattern, for the encoding tests.
TRAINED = {
    name: purebpe.train_from_iterator(
        ["Hello world, it's 2024!\n\tcamelCase HTMLParser \u00e9t\u00e9 \u4e2d\u6587"] * 3,
        300,
        pretokenizer=name,
    )
    for name in NAMED
}


def definition(name: str, text: str) -> List[str]:
    tokens: List[str] = COMPILED[name].findall(text)
    return tokens


# --------------------------------------------------------------------------------------
# Tiktoken's strings, verbatim: the definition must not drift
# --------------------------------------------------------------------------------------
def test_patterns_are_tiktokens_strings() -> None:
    assert PATTERNS["gpt2"] == (
        r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
    )
    assert PATTERNS["cl100k"] == (
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++"""
        r"""[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
    )
    assert PATTERNS["o200k"] == "|".join(O200K_ALTERNATIVES)


@pytest.mark.peers
def test_patterns_equal_the_installed_tiktoken() -> None:
    openai_public = pytest.importorskip("tiktoken_ext.openai_public")
    assert openai_public.r50k_pat_str == PATTERNS["gpt2"]
    # The constructors download their ranks; their pattern strings are code constants.
    assert PATTERNS["cl100k"] in openai_public.cl100k_base.__code__.co_consts
    o200k_constants = [
        item
        for constant in openai_public.o200k_base.__code__.co_consts
        for item in (constant if isinstance(constant, tuple) else (constant,))
    ]
    assert all(alternative in o200k_constants for alternative in O200K_ALTERNATIVES)


O200K_ALTERNATIVES = [
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
    r"""\p{N}{1,3}""",
    r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
    r"""\s*[\r\n]+""",
    r"""\s+(?!\S)""",
    r"""\s+""",
]


# --------------------------------------------------------------------------------------
# Hand-checked cases: what each rule does, written out (and checked against regex)
# --------------------------------------------------------------------------------------
CL100K_CASES = [
    ("", []),
    ("Hello world", ["Hello", " world"]),
    ("it's", ["it", "'s"]),
    ("IT'S 'Ll 'VE 're", ["IT", "'S", " '", "Ll", " '", "VE", " '", "re"]),
    ("'\u017f", ["'\u017f"]),  # regex folds LONG S to s under (?i)
    ("'tis", ["'t", "is"]),
    ("'x", ["'x"]),  # an apostrophe that starts no contraction leads the letters
    ("(word", ["(word"]),  # any one non-letter leads a letter run...
    ("\tword", ["\tword"]),
    ("\nword", ["\n", "word"]),  # ...except \r and \n
    ("1234567", ["123", "456", "7"]),
    ("a1b22c333", ["a", "1", "b", "22", "c", "333"]),
    (" 42", [" ", "42"]),  # no space before numbers
    ("x !!\n\n", ["x", " !!\n\n"]),  # "other" runs take the newlines after them
    ("!!\r\n y", ["!!\r\n", " y"]),
    ("  \n\n  x", ["  \n\n", " ", " x"]),  # whitespace up to its last newline
    ("a \n ", ["a", " \n "]),  # a run at the end is whole
    ("   x", ["  ", " x"]),
    ("x\t\ty", ["x", "\t", "\ty"]),
    ("e\u0301t\u00e9", ["e", "\u0301t\u00e9"]),  # a mark is not a letter: it leads
    ("\u4e2d\u6587 \u5b57\u3002", ["\u4e2d\u6587", " \u5b57", "\u3002"]),
    ("hi \U0001f600\U0001f600!", ["hi", " \U0001f600\U0001f600!"]),
    ("a\ud800b", ["a", "\ud800b"]),
]

O200K_CASES = [
    ("", []),
    ("Hello world", ["Hello", " world"]),
    ("HTMLParser camelCase ABC", ["HTMLParser", " camel", "Case", " ABC"]),
    ("don't DON'T Don'Ll", ["don't", " DON'T", " Don'Ll"]),  # contractions glue on
    ("'s", ["'s"]),  # an apostrophe leading a word
    ("x'\u017f", ["x'\u017f"]),
    ("1234567", ["123", "456", "7"]),
    (" 42", [" ", "42"]),
    ("a/b", ["a", "/b"]),
    ("!!\n/x", ["!!\n/", "x"]),  # "other" runs take \r, \n and / after them
    ("  \n\n  ", ["  \n\n", "  "]),  # no \s++$: the newline still ends a token
    ("   x", ["  ", " x"]),
    ("e\u0301t\u00e9", ["e\u0301t\u00e9"]),  # marks belong to words
    ("\u0301\u0301", ["\u0301\u0301"]),
    (" \u0301x", [" \u0301x"]),
    ("A\u02b0B", ["A\u02b0", "B"]),  # U+02B0 is Lm: upper-or-lower, and ends the word
    ("\u01c5x\u01c5", ["\u01c5x", "\u01c5"]),  # U+01C5 is Lt (title case): upper
    ("\u4e2d\u6587 \u5b57\u3002", ["\u4e2d\u6587", " \u5b57", "\u3002"]),
    ("\u0627\u0644\u0639\u0631\u0628\u064a\u0629", ["\u0627\u0644\u0639\u0631\u0628\u064a\u0629"]),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "name, text, expected",
    [("cl100k", *case) for case in CL100K_CASES] + [("o200k", *case) for case in O200K_CASES],
)
def test_hand_checked_cases(engine: str, name: str, text: str, expected: List[str]) -> None:
    assert definition(name, text) == expected
    assert pretokenize(text, engine, pretokenizer=name) == expected


# --------------------------------------------------------------------------------------
# Every code point, in the contexts where the rules look at a character's class
# --------------------------------------------------------------------------------------
def context(code_points: List[int]) -> str:
    # Each code point after a space, after a capital and a small letter, before an
    # apostrophe-contraction and a digit, doubled, and before a newline.
    return "".join(f" {c}A{c}x{c}'S{c}{c}1{c}\n" for c in map(chr, code_points))


def sweep_code_points() -> List[List[int]]:
    """Every code point below U+10000; above it, both sides of every class boundary and
    every 64th code point (a run of one class is one range of the generated tables, which
    ``test_pretokenize`` checks against ``regex`` on every code point)."""
    from purebpe.pretokenize import _unicode_classes as classes

    astral = set(range(0x10000, 0x110000, 64))
    for name in dir(classes):
        if name.endswith("_RANGES"):
            for first, last in getattr(classes, name):
                astral.update(cp for cp in (first - 1, first, last, last + 1) if 0x10000 <= cp < 0x110000)
    astral_list = sorted(astral)
    return [list(range(0, 0x8000)), list(range(0x8000, 0x10000)), astral_list]


@pytest.mark.parametrize("name", NAMED)
@pytest.mark.parametrize("block", range(3))
def test_every_code_point_in_context(name: str, block: int) -> None:
    text = context(sweep_code_points()[block])
    expected = definition(name, text)
    for engine in STDLIB_ENGINES:
        tokens = pretokenize(text, engine, pretokenizer=name)
        if tokens != expected:  # report the first difference, not a 3 MB diff
            first = next(i for i, (a, b) in enumerate(zip(tokens, expected)) if a != b)
            pytest.fail(
                f"{name}/{engine}: {tokens[first - 2 : first + 3]} != {expected[first - 2 : first + 3]}"
            )


@pytest.mark.parametrize("name", NAMED)
def test_re_engine_on_lines_with_characters_above_the_bmp(name: str) -> None:
    # The re engine runs its slow full form only on the lines around such characters.
    import random

    rng = random.Random(11)
    parts = ["the", "Cat's", "  ", "\n", "\n/", "\n ", "42", "\U0001f600", "\U00020000x", "na\u00efve", "!"]
    text = " ".join(rng.choice(parts) for _ in range(20000))
    assert pretokenize(text, "re", pretokenizer=name) == definition(name, text)


# --------------------------------------------------------------------------------------
# Hypothesis: all engines equal the definition
# --------------------------------------------------------------------------------------
TRICKY = list("aAbZsStTlLvVrReEdDmM' \t\n\r/!.,-(0123456789") + [
    "\r\n",
    "\u017f",
    "\u0301",
    "\u0308",
    "\u4e2d",
    "\u6587",
    "\u02b0",
    "\u01c5",
    "\u00df",
    "\x85",
    "\xa0",
    "\u3000",
    "\u2028",
    "\x1c",
    "\x1f",
    "\x00",
    "\x0b",
    "\x0c",
    "\x7f",
    "\u200b",
    "\u00e9",
    "\u0939\u093e",
    "\u03a9",
    "\u03c9",
    "\u0663",
    "\u00b2",
    "\u2167",
    "\U0001f600",
    "\U00020000",
    "\ud800",
    "\udfff",
    "'s",
    "'LL",
    "1234567",
    "   ",
    "\n\n",
]
tricky_text = st.lists(st.sampled_from(TRICKY), max_size=30).map("".join)
#: ASCII text takes the scanners' ASCII paths (``scan_ascii``), which read bytes.
ascii_text = st.one_of(
    st.lists(st.sampled_from([t for t in TRICKY if t.isascii()] + ["\x0b", "\x0c", "\x1f"]), max_size=30).map(
        "".join
    ),
    st.text(st.characters(max_codepoint=127)),
)
some_text = st.one_of(st.text(st.characters(exclude_categories=())), tricky_text, ascii_text)


@pytest.mark.parametrize("name", NAMED)
@given(text=some_text)
@settings(max_examples=400)
def test_every_engine_equals_the_definition(name: str, text: str) -> None:
    expected = definition(name, text)
    assert "".join(expected) == text
    for engine in ENGINES:
        assert pretokenize(text, engine, pretokenizer=name) == expected, engine


@pytest.mark.parametrize("name", NAMED)
@given(text=st.lists(some_text, min_size=1, max_size=4))
@settings(max_examples=50)
def test_the_scanner_fed_encoder_equals_encoding_the_split(name: str, text: List[str]) -> None:
    # With the scanner engine the tokenizer encodes each pre-token as the scanner's twin
    # on the text's UTF-8 finds it (purebpe.encoding_sink.EncodingSink), with the re
    # engine from the list of pieces.
    tokenizers = engine_tokenizers(name)
    assert tokenizers["scanner"]._scan_utf8 is not None and tokenizers["re"]._scan_utf8 is None
    for piece in text:  # the second and later pieces meet a warm word cache
        assert tokenizers["scanner"].encode(piece) == tokenizers["re"].encode(piece)


def engine_tokenizers(name: str) -> Dict[str, purebpe.Tokenizer]:
    """A small trained model's tokenizer with each standard-library engine."""
    import purebpe.tokenizer

    saved = purebpe.tokenizer.ENGINE
    try:
        found = {}
        for engine in STDLIB_ENGINES:
            purebpe.tokenizer.ENGINE = engine
            found[engine] = TRAINED[name].tokenizer()
        return found
    finally:
        purebpe.tokenizer.ENGINE = saved


@pytest.mark.parametrize("name", NAMED)
@given(text=some_text)
def test_counting_counts_the_pieces(name: str, text: str) -> None:
    for engine in STDLIB_ENGINES:
        counts: Dict[str, int] = {"before": 1}
        count_pretokens(text, counts, engine, pretokenizer=name)
        expected = collections.Counter(definition(name, text))
        expected["before"] += 1
        assert counts == dict(expected), engine


@pytest.mark.parametrize("name", [name for name in NAMED if utf8_word_counter(name, "scanner")])
@given(text=some_text.filter(lambda text: not any("\ud800" <= char <= "\udfff" for char in text)))
def test_counting_utf8_counts_the_pieces_as_bytes(name: str, text: str) -> None:
    count = utf8_word_counter(name, "scanner")
    assert count is not None and utf8_word_counter(name, "re") is None
    counts: Dict[bytes, int] = {b"before": 1}
    count(text.encode("utf-8"), counts)
    expected = collections.Counter(piece.encode("utf-8") for piece in definition(name, text))
    expected[b"before"] += 1
    assert counts == dict(expected)


# --------------------------------------------------------------------------------------
# Safe cuts: cutting there and splitting the halves changes nothing
# --------------------------------------------------------------------------------------
cut_text = st.lists(
    st.sampled_from(TRICKY + ["ab", "AB", "12", "+/", "==", "\u4e2d\uff0c"]), max_size=40
).map("".join)


@pytest.mark.parametrize("name", NAMED + ("none",))
@given(text=cut_text)
@settings(max_examples=300)
def test_every_safe_cut_leaves_the_pieces_unchanged(name: str, text: str) -> None:
    data = text.encode("utf-8", "surrogatepass")
    if b"\xed\xa0" in data or b"\xed\xbf" in data:
        return  # lone surrogates never reach the byte level (they are replaced first)
    split = splitter(name)
    whole = split(text)
    safe_cut = cut_finder(name)
    for end in range(1, len(data)):
        cut = safe_cut(data, end)
        assert cut == -1 or 0 < cut <= end
        if cut > 0:
            left, right = data[:cut].decode("utf-8"), data[cut:].decode("utf-8")
            assert split(left) + split(right) == whole, (cut, left, right)


@pytest.mark.parametrize("name", NAMED)
def test_text_without_whitespace_still_has_cuts(name: str) -> None:
    # base64 and punctuated CJK on one line: the cutter must not need whitespace.
    import base64

    for text in (base64.b64encode(bytes(range(256)) * 40).decode(), "\u4e2d\u6587\uff0c" * 500):
        data = text.encode("utf-8")
        cut = cut_finder(name)(data, len(data) - 1)
        assert len(data) - 300 < cut < len(data)
        split = splitter(name)
        assert split(data[:cut].decode()) + split(data[cut:].decode()) == split(text)


# --------------------------------------------------------------------------------------
# Custom patterns
# --------------------------------------------------------------------------------------
SUPERBPE = r"\p{N}{1,3}| ?[^\s\p{L}\p{N}]{2,}[\r\n/]*| +(?!\S)"


@given(text=some_text, source=st.sampled_from([SUPERBPE, r"\d+", r" ?\p{L}+", "x*", r"\s"]))
def test_isolated_split_keeps_matches_and_gaps(text: str, source: str) -> None:
    pieces = pretokenize(text, pretokenizer=Pattern(source))
    assert "".join(pieces) == text
    assert all(pieces)
    matches = [m.group() for m in regex.finditer(source, text) if m.group()]
    assert [p for p in pieces if regex.fullmatch(source, p)][: len(matches)] or not matches
    # Each match is a piece of its own, in order.
    found = iter(pieces)
    assert all(any(piece == m for piece in found) for m in matches)


def test_custom_pattern_errors_are_one_line() -> None:
    with pytest.raises(PureBPEError, match="does not compile"):
        splitter(Pattern("(unclosed"))
    with pytest.raises(PureBPEError, match="behavior 'removed' is not supported"):
        splitter(Pattern(r"\s", "removed"))
    with pytest.raises(PureBPEError, match="unknown pre-tokenizer"):
        splitter("gpt4")  # type: ignore[arg-type]


def test_custom_pattern_without_regex_package(monkeypatch: pytest.MonkeyPatch) -> None:
    from purebpe.pretokenize import custom

    monkeypatch.setitem(sys.modules, "regex", None)
    monkeypatch.setattr(custom, "_compiled", {})
    with pytest.raises(PureBPEError, match=r"needs the optional 'regex' package \(pip install regex"):
        purebpe.count_from_iterator(["a b"], pretokenizer=Pattern(r"\s"))
    # Named patterns never need it.
    assert purebpe.count_from_iterator(["a b"], pretokenizer="o200k").words == {b"a": 1, b" b": 1}


@pytest.mark.peers
@given(
    text=some_text,
    pretokenizer=st.sampled_from(["gpt2", "cl100k", "o200k", Pattern(SUPERBPE), Pattern(r" ?\p{L}+")]),
)
@settings(max_examples=300)
def test_hf_split_equals_ours(text: str, pretokenizer: object) -> None:
    # What the exported tokenizer.json tells HF to do (its regex engine is Oniguruma).
    pre_tokenizers = pytest.importorskip("tokenizers.pre_tokenizers")
    tokenizers = pytest.importorskip("tokenizers")
    if any("\ud800" <= c <= "\udfff" or unicodedata.category(c) == "Cn" for c in text):
        # HF takes only valid Unicode, and its regex engine (Oniguruma) has older Unicode
        # data than regex: code points assigned since (U+323B0...) have other classes.
        return
    hf = pre_tokenizers.Split(tokenizers.Regex(hf_regex(pretokenizer)), behavior="isolated")  # type: ignore[arg-type]
    assert [piece for piece, _ in hf.pre_tokenize_str(text)] == pretokenize(
        text,
        pretokenizer=pretokenizer,  # type: ignore[arg-type]
    )


def test_hf_export_refuses_what_oniguruma_reads_otherwise() -> None:
    with pytest.raises(PureBPEError, match=r"reads X\{m,n\}\+ as a repeat"):
        hf_regex(Pattern(r"\d{1,3}+"))
    assert hf_regex(Pattern(r"\d{1,3}")) == r"\d{1,3}"
    assert r"{1,3}+" not in hf_regex("cl100k")
    # A line anchor, Oniguruma's word characters, an option setting that takes the
    # alternatives after it, a pattern that can match empty: each would split otherwise
    # in HF.
    for source in (r"\s+$|\S+", r"\w+|\W+", r"'s|(?i)'t|\p{L}+", r"\p{L}+|(?:|00)"):
        with pytest.raises(PureBPEError, match="may read it otherwise than the regex package does"):
            hf_regex(Pattern(source))


def _plain_hf_file(directory: Path, regex: str) -> Path:
    """A ``tokenizer.json`` of the shape purebpe writes, ``regex`` its Split, merging 0 0
    (id 256) and a with the first byte of ``²`` (id 257)."""
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
    split = {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False}
    path = BPEModel.from_merges([(b"0", b"0"), (b"a", b"\xc2")], []).save(directory, "hf")[0]
    document = json.loads(path.read_text(encoding="utf-8"))
    document["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [split, byte_level]}
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


#: HF's ids of "a²b 0000" with each Split regex (recorded from tokenizers 0.22): Oniguruma's
#: \w takes ², tiktoken's own cl100k string takes a whole run of digits in HF.
HF_READS_OTHERWISE = {
    r"\w+|[^\w\s]+|\s+": [257, 178, 98, 32, 256, 256],
    PATTERNS["cl100k"]: [97, 194, 178, 98, 32, 256, 256],
    # regex's finditer takes "00" after each empty match; Oniguruma searches on a
    # character later, where it prefers the empty match again.
    r"(?:|00)": [97, 194, 178, 98, 32, 48, 48, 48, 48],
}


def test_loading_refuses_a_split_hf_reads_otherwise(tmp_path: Path) -> None:
    # Read by regex, these would give other ids than HF's; Tokenizer.from_file reads them
    # as HF does.
    for regex, ids in HF_READS_OTHERWISE.items():
        path = _plain_hf_file(tmp_path, regex)
        with pytest.raises(PureBPEError, match=r"tokenizer.json: Split regex .* purebpe.Tokenizer.from_file"):
            purebpe.load(path)
        assert purebpe.Tokenizer.from_file(path).encode("a\u00b2b 0000") == ids
    assert purebpe.load(_plain_hf_file(tmp_path, hf_regex("cl100k"))).pretokenizer == "cl100k"


@pytest.mark.peers
def test_hf_reads_them_otherwise(tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    for regex, ids in HF_READS_OTHERWISE.items():
        path = _plain_hf_file(tmp_path, regex)
        assert tokenizers.Tokenizer.from_file(str(path)).encode("a\u00b2b 0000").ids == ids


# --------------------------------------------------------------------------------------
# The pattern is part of the model: trained, saved, loaded, encoded with
# --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pydoc_text() -> str:
    import pydoc_data.topics

    return "<|endoftext|>".join(v for _, v in sorted(pydoc_data.topics.topics.items())[:60])


@pytest.mark.parametrize("name", NAMED)
def test_real_text_splits_as_defined(pydoc_text: str, name: str) -> None:
    expected = definition(name, pydoc_text)
    for engine in STDLIB_ENGINES:
        assert pretokenize(pydoc_text, engine, pretokenizer=name) == expected


PRETOKENIZER_CHOICES: List[object] = ["cl100k", "o200k", Pattern(SUPERBPE)]


@pytest.mark.parametrize("pretokenizer", PRETOKENIZER_CHOICES, ids=str)
def test_trained_model_keeps_its_pattern_in_every_format(
    tmp_path,
    pydoc_text: str,
    pretokenizer: object,  # type: ignore[no-untyped-def]
) -> None:
    model = purebpe.train_from_iterator(
        [pydoc_text],
        400,
        ["<|endoftext|>"],
        pretokenizer=pretokenizer,  # type: ignore[arg-type]
    )
    assert model.pretokenizer == pretokenizer
    sample = pydoc_text[:3000]
    ids = model.tokenizer().encode(sample)
    assert model.tokenizer().decode(ids) == sample
    formats = ["purebpe", "hf"] if isinstance(pretokenizer, Pattern) else purebpe.formats.FORMATS
    for fmt in formats:
        directory = tmp_path / fmt
        model.save(directory, format=fmt)
        loaded = purebpe.load(directory)
        assert loaded.pretokenizer == pretokenizer, fmt
        assert loaded.tokenizer().encode(sample) == ids, fmt
    if isinstance(pretokenizer, Pattern):
        for fmt in ("gpt2", "tiktoken"):
            with pytest.raises(PureBPEError, match="custom pre-tokenization pattern"):
                model.save(tmp_path / fmt, format=fmt)


@pytest.mark.parametrize("pretokenizer", PRETOKENIZER_CHOICES, ids=str)
def test_counting_splits_each_piece_between_specials(pretokenizer: object) -> None:
    texts = ["Don't STOP<|endoftext|>  123456 ok!!\n\n", "x<|endoftext|>y"]
    counts = purebpe.count_from_iterator(texts, ["<|endoftext|>"], pretokenizer=pretokenizer)  # type: ignore[arg-type]
    source = pattern_string(pretokenizer)  # type: ignore[arg-type]
    split: Callable[[str], List[str]] = (
        (lambda t: [p for p in regex.split(f"({source})", t) if p])
        if isinstance(pretokenizer, Pattern)
        else regex.compile(source).findall
    )
    expected = collections.Counter(
        piece.encode() for piece in split("Don't STOP") + split("  123456 ok!!\n\nx") + split("y")
    )
    assert counts.words == dict(expected)
    assert counts.pretokenizer == pretokenizer


@pytest.mark.peers
@pytest.mark.parametrize("pretokenizer", PRETOKENIZER_CHOICES, ids=str)
def test_hf_loads_the_exported_file_and_encodes_the_same(
    tmp_path,
    pydoc_text: str,
    pretokenizer: object,  # type: ignore[no-untyped-def]
) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    model = purebpe.train_from_iterator(
        [pydoc_text],
        500,
        ["<|endoftext|>"],
        pretokenizer=pretokenizer,  # type: ignore[arg-type]
    )
    path = model.save(tmp_path, format="hf")[0]  # then transformers' two files
    hf = tokenizers.Tokenizer.from_file(str(path))
    tok = model.tokenizer()
    for text in (pydoc_text[:20000], "Don't  STOP 1234567\r\n\n!!/x<|endoftext|>\u4e2d\u6587 e\u0301"):
        assert hf.encode(text).ids == tok.encode(text)


@pytest.mark.peers
@pytest.mark.parametrize("name", ["cl100k", "o200k"])
def test_tiktoken_loads_the_exported_files_and_encodes_the_same(
    tmp_path,
    pydoc_text: str,
    name: str,  # type: ignore[no-untyped-def]
) -> None:
    pytest.importorskip("tiktoken")
    from purebpe.formats.tiktoken_format import tiktoken_encoding

    model = purebpe.train_from_iterator([pydoc_text], 500, ["<|endoftext|>"], pretokenizer=name)
    model.save(tmp_path, format="tiktoken")
    encoding = tiktoken_encoding(tmp_path)
    tok = model.tokenizer()
    text = pydoc_text[:20000] + "Don't  STOP 1234567\r\n\n!!/x \u4e2d\u6587 e\u0301"
    assert encoding.encode(text, allowed_special="all") == tok.encode(text)


@pytest.mark.parametrize("pretokenizer", ["cl100k", "o200k"])
def test_encode_iterable_equals_encode(pydoc_text: str, pretokenizer: str) -> None:
    model = purebpe.train_from_iterator([pydoc_text], 400, ["<|endoftext|>"], pretokenizer=pretokenizer)
    tok = model.tokenizer()
    text = pydoc_text[:50000]
    pieces = [text[i : i + 97] for i in range(0, len(text), 97)]
    assert list(tok.encode_iterable(pieces)) == tok.encode(text)


@pytest.mark.parametrize("pretokenizer", ["cl100k", "o200k"])
def test_every_variant_trains_the_same_merges_with_the_pattern(pydoc_text: str, pretokenizer: str) -> None:
    text = pydoc_text[:30000]
    expected = purebpe.train_from_iterator([text], 330, pretokenizer=pretokenizer, variant="naive")
    for variant in purebpe.VARIANTS:
        model = purebpe.train_from_iterator([text], 330, pretokenizer=pretokenizer, variant=variant)
        assert model == expected, variant


def test_continuing_keeps_the_pattern(pydoc_text: str) -> None:
    text = pydoc_text[:30000]
    first = purebpe.train_from_iterator([text], 300, pretokenizer="o200k")
    more = purebpe.train_from_iterator([text], 340, pretokenizer="o200k", initial=first)
    assert more.merges[:44] == first.merges
    assert more == purebpe.train_from_iterator([text], 340, pretokenizer="o200k")


def test_cli_trains_counts_and_encodes_with_a_pattern(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from purebpe.cli import main

    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Don't STOP 1234567 now!!\n\n<|endoftext|>HTMLParser's way\n" * 30, encoding="utf-8")
    common = ["--special-token", "<|endoftext|>", "--progress", "none"]
    assert (
        main(
            [
                "train",
                str(corpus),
                "--vocab-size",
                "300",
                "--pretokenizer",
                "o200k",
                "-o",
                str(tmp_path / "m"),
                *common,
            ]
        )
        == 0
    )
    model = purebpe.load(tmp_path / "m")
    assert model.pretokenizer == "o200k"
    assert model == purebpe.train(corpus, 300, ["<|endoftext|>"], pretokenizer="o200k")
    assert main(["count", str(corpus), "--pattern", SUPERBPE, "-o", str(tmp_path / "c.tsv.gz"), *common]) == 0
    counts = purebpe.WordCounts.load(tmp_path / "c.tsv.gz")
    assert counts.pretokenizer == Pattern(SUPERBPE)
    # Letters, spaces and newlines run on across words (only specials split them).
    assert counts.words[b"Don't STOP "] == 1
    assert counts.words[b"HTMLParser's way\nDon't STOP "] == 29
    assert (
        main(
            [
                "encode",
                "--tokenizer",
                str(tmp_path / "m"),
                str(corpus),
                "-o",
                str(tmp_path / "ids.npy"),
                "--progress",
                "none",
            ]
        )
        == 0
    )


@pytest.mark.parametrize("name", NAMED)
def test_a_huge_line_without_whitespace_is_encoded_in_bounded_pieces(
    pydoc_text: str, name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Base64 on one line used to be held and pre-tokenized whole (30 MB -> 788 MB RSS).
    # The pattern's cuts between character classes now bound every buffer and piece, so
    # memory does not depend on the line's length; the size of the line does not matter
    # to the bound checked here, only to how long the test runs.
    import base64
    import random

    from purebpe.counting import ChunkCutter
    from purebpe.tokenizer import PIECE_BYTES, STREAM_CHARS, Tokenizer

    tok = purebpe.train_from_iterator([pydoc_text[:20000]], 300, pretokenizer=name).tokenizer()
    line = base64.b64encode(random.Random(5).randbytes(3 << 18)).decode()  # 1 MiB: 4 buffers
    assert len(line) >= 4 * STREAM_CHARS
    pieces: List[int] = []
    buffers: List[int] = []
    encode_piece, cut = Tokenizer._encode_piece, ChunkCutter.cut
    monkeypatch.setattr(
        Tokenizer,
        "_encode_piece",
        lambda self, text, out: (pieces.append(len(text)), encode_piece(self, text, out))[1],
    )
    monkeypatch.setattr(ChunkCutter, "cut", lambda self, buf: (buffers.append(len(buf)), cut(self, buf))[1])
    streamed = list(tok.encode_iterable(line[i : i + 65536] for i in range(0, len(line), 65536)))
    assert max(buffers) <= STREAM_CHARS + 65536
    assert max(pieces) <= 2 * PIECE_BYTES
    assert streamed == tok.encode(line)
    assert max(pieces) <= 2 * PIECE_BYTES
