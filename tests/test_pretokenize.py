"""GPT-2 pre-tokenization: every engine against ``regex.findall(GPT2_PATTERN, text)``.

(The other named patterns, cl100k and o200k, and custom patterns: ``test_patterns.py``.)

The ``regex`` package's behaviour is the definition of truth.  Where it is missing, the
comparisons with it are skipped, but the ``re`` and ``scanner`` engines -- built very
differently from the same generated table -- are still checked against each other and
against hand-written expectations.
"""

from __future__ import annotations

import collections
import importlib.util
import os
import random
import sys
from types import ModuleType
from typing import Dict, List

import pytest
from hypothesis import given
from hypothesis import strategies as st

from purebpe.errors import PureBPEError
from purebpe.pretokenize import (
    DEFAULT_ENGINE,
    ENGINES,
    GPT2_PATTERN,
    PRETOKENIZERS,
    _tables,
    _unicode_classes,
    count_lines,
    count_pretokens,
    custom,
    pretokenize,
    split_lines,
    word_counter,
)

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STDLIB_ENGINES = ("scanner", "re")


def regex_findall(text: str) -> List[str]:
    regex = pytest.importorskip("regex")
    tokens: List[str] = regex.findall(GPT2_PATTERN, text)
    return tokens


# --------------------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------------------
# Every code point, surrogates included (Hypothesis leaves out "Cs" unless asked).
any_text = st.text(st.characters(exclude_categories=()))

# Characters where the pattern's rules meet: the apostrophe and the contraction letters,
# every kind of whitespace (and near-whitespace that is NOT \s for regex: \x1c-\x1f),
# letters, numbers of other scripts (Arabic-Indic three, superscript two, Roman numeral),
# combining marks (neither L nor N), punctuation, emoji (above U+FFFF), CJK, surrogates.
TRICKY_CHARACTERS = list(
    "' sdmtlvreSDLV\n\r\t\x0b\x0c\x1c\x1d\x1e\x1f\x85\xa0\u1680\u2028\u2029\u3000\u200b"
    'aZ\u00e9\u03a9\u0416x09\u0663\u00b2\u2167\u0301\u0308.,!?-\u2019"\U0001f600\U0001f44d'
    "\u4e2d\u6587\U00020000\ud800\udfff\x00"
)
tricky_text = st.text(st.sampled_from(TRICKY_CHARACTERS), max_size=40)
# Mostly runs of one character, to exercise run ends and long whitespace runs.
runs_text = st.lists(st.tuples(st.sampled_from(TRICKY_CHARACTERS), st.integers(1, 6)), max_size=12).map(
    lambda runs: "".join(char * count for char, count in runs)
)
some_text = st.one_of(any_text, tricky_text, runs_text)


# --------------------------------------------------------------------------------------
# Hand-checked cases: the rules of the pattern, one by one
# --------------------------------------------------------------------------------------
CASES = [
    ("", []),
    ("hello world", ["hello", " world"]),
    ("  a", [" ", " a"]),  # a whitespace run gives its last space to the word after it
    (" \n a", [" \n", " a"]),
    ("a  ", ["a", "  "]),  # ...but keeps all of it at the end of the text
    ("     ", ["     "]),
    ("   \n\nx", ["   \n", "\n", "x"]),  # the given-back "\n" is not a space: its own token
    ("\t\t x", ["\t\t", " x"]),
    ("x\t\tx", ["x", "\t", "\t", "x"]),
    ("\r\n", ["\r\n"]),
    ("a\r\nb", ["a", "\r", "\n", "b"]),
    ("'s", ["'s"]),
    ("'S", ["'", "S"]),  # contractions are lower case only
    ("it's", ["it", "'s"]),
    ("we'll've", ["we", "'ll", "'ve"]),
    ("'ll've", ["'ll", "'ve"]),
    ("''s", ["''", "s"]),  # an "other" run takes the second apostrophe first
    ("!'s", ["!'", "s"]),
    (" 's", [" '", "s"]),  # after a leading space the apostrophe is just "other"
    ("\n's", ["\n", "'s"]),
    ("'x", ["'", "x"]),
    ("'", ["'"]),
    ("'l", ["'", "l"]),
    ("a1b2", ["a", "1", "b", "2"]),
    (" 123 ab", [" 123", " ab"]),
    ("\u0663\u0664 \u00b2", ["\u0663\u0664", " \u00b2"]),  # other scripts' digits and ² are \p{N}
    ("\u2167x", ["\u2167", "x"]),  # Ⅷ is \p{Nl}: a number, not a letter
    ("e\u0301t\u00e9", ["e", "\u0301", "t\u00e9"]),  # a combining mark is neither L nor N
    (" \u0301", [" \u0301"]),
    ("a\ud800b", ["a", "\ud800", "b"]),  # a lone surrogate is "other"
    ("a\x1cb", ["a", "\x1c", "b"]),  # \x1c..\x1f are not \s for regex (str.isspace says yes)
    (" \x1c", [" \x1c"]),
    ("a\x85b", ["a", "\x85", "b"]),  # NEL is whitespace
    ("\u00a0a", ["\u00a0", "a"]),  # so is NO-BREAK SPACE, but only U+0020 leads a word
    (" \u3000a", [" ", "\u3000", "a"]),
    ("a\u2028 b", ["a", "\u2028", " b"]),
    ("\u200b", ["\u200b"]),  # ZERO WIDTH SPACE is Cf: "other"
    ("hi \U0001f600\U0001f600!", ["hi", " \U0001f600\U0001f600!"]),
    ("\u4e2d\u6587 \u5b57\u3002", ["\u4e2d\u6587", " \u5b57", "\u3002"]),
    ("x" * 5000, ["x" * 5000]),
    (" " * 5000 + "x", [" " * 4999, " x"]),
    ("\n" * 5000 + "x", ["\n" * 4999, "\n", "x"]),
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("text, expected", CASES)
def test_hand_checked_cases(engine: str, text: str, expected: List[str]) -> None:
    if engine == "regex":
        pytest.importorskip("regex")
    assert pretokenize(text, engine) == expected


@pytest.mark.parametrize("text, expected", CASES)
def test_hand_checked_cases_agree_with_regex(text: str, expected: List[str]) -> None:
    assert regex_findall(text) == expected


# --------------------------------------------------------------------------------------
# Property tests
# --------------------------------------------------------------------------------------
@given(some_text)
def test_every_engine_equals_regex_findall(text: str) -> None:
    expected = regex_findall(text)
    for engine in ENGINES:
        assert pretokenize(text, engine) == expected, engine


@given(some_text)
def test_stdlib_engines_agree_without_regex(text: str) -> None:
    tokens = pretokenize(text, "scanner")
    assert pretokenize(text, "re") == tokens
    assert "".join(tokens) == text
    assert all(tokens)


@given(some_text, st.sampled_from(ENGINES))
def test_count_pretokens_counts_the_tokens(text: str, engine: str) -> None:
    if engine == "regex":
        pytest.importorskip("regex")
    counts: Dict[str, int] = {"already here": 2, " a": 1}
    count_pretokens(text, counts, engine)
    expected = collections.Counter(pretokenize(text, engine))
    expected.update({"already here": 2, " a": 1})
    assert counts == dict(expected)


@given(st.lists(st.sampled_from(["a", " ", "\U0001f600", "\n", "b1", "'s", "\u00e9"]), max_size=200))
def test_re_engine_splits_around_characters_above_the_bmp(pieces: List[str]) -> None:
    # The "re" engine tokenizes segments around characters above U+FFFF separately.
    text = "".join(pieces)
    assert pretokenize(text, "re") == pretokenize(text, "scanner") == regex_findall(text)


def test_long_text_with_scattered_emoji() -> None:
    rng = random.Random(7)
    words = ["the", "cat's", "  ", "\n", "42", "\U0001f600", "\U0001f44d\U0001f44d", "naïve", "!"]
    text = " ".join(rng.choice(words) for _ in range(5000))
    tokens = pretokenize(text, "scanner")
    assert pretokenize(text, "re") == tokens
    assert "".join(tokens) == text
    assert regex_findall(text) == tokens


# --------------------------------------------------------------------------------------
# Real text
# --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def pydoc_corpus() -> str:
    import pydoc_data.topics

    return "\n\n".join(v for k, v in sorted(pydoc_data.topics.topics.items()))


def test_pydoc_corpus_tokenizes_identically(pydoc_corpus: str) -> None:
    tokens = pretokenize(pydoc_corpus, "scanner")
    assert len(tokens) > 50_000
    assert "".join(tokens) == pydoc_corpus
    assert pretokenize(pydoc_corpus, "re") == tokens
    assert regex_findall(pydoc_corpus) == tokens
    assert pretokenize(pydoc_corpus, "regex") == tokens
    counts: Dict[str, int] = {}
    count_pretokens(pydoc_corpus, counts)
    assert counts == collections.Counter(tokens)
    assert counts[" the"] > 1000


# --------------------------------------------------------------------------------------
# The generated class table
# --------------------------------------------------------------------------------------
def load_generator() -> ModuleType:
    path = os.path.join(REPO_ROOT, "scripts", "gen_unicode_classes.py")
    spec = importlib.util.spec_from_file_location("gen_unicode_classes", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# The classes that partition the code points (with "other"), and the letter cases.
TABLE = {
    "LETTER": _unicode_classes.LETTER_RANGES,
    "NUMBER": _unicode_classes.NUMBER_RANGES,
    "WHITESPACE": _unicode_classes.WHITESPACE_RANGES,
    "MARK": _unicode_classes.MARK_RANGES,
}
CASES_OF_LETTERS = {
    "UPPER": _unicode_classes.UPPER_RANGES,
    "LOWER": _unicode_classes.LOWER_RANGES,
    "CASELESS": _unicode_classes.CASELESS_RANGES,
}
#: Part of "other" that real files' regexes name (purebpe.pretokenize.re_forms).
PUNCTUATION_AND_SYMBOLS = {"PUNCT_SYMBOL": _unicode_classes.PUNCT_SYMBOL_RANGES}


def test_table_ranges_are_sorted_disjoint_and_compact() -> None:
    every = sorted(span for spans in TABLE.values() for span in spans)
    for (_, last), (first, _) in zip(every, every[1:]):
        assert last < first
    for spans in TABLE.values():
        # Adjacent ranges of one class would have been one run of the probe.
        assert all(a_last + 1 < b_first for (_, a_last), (b_first, _) in zip(spans, spans[1:]))
    assert len(every) < 2000


def test_letter_cases_split_the_letters() -> None:
    def points(spans: object) -> set:  # type: ignore[type-arg]
        return {cp for first, last in spans for cp in range(first, last + 1)}  # type: ignore[attr-defined]

    parts = [points(spans) for spans in CASES_OF_LETTERS.values()]
    assert sum(len(part) for part in parts) == len(set().union(*parts))
    assert set().union(*parts) == points(TABLE["LETTER"])


def test_class_table_matches_installed_regex_on_sampled_code_points() -> None:
    # The scanner's per-code-point table, built from the ranges, against regex itself: all
    # of U+0000..U+2FFF, random code points, and both sides of every range end.
    regex = pytest.importorskip("regex")
    letter, number, space = (regex.compile(p) for p in (r"\p{L}", r"\p{N}", r"\s"))
    rng = random.Random(2024)
    sample = set(range(0x3000)) | {rng.randrange(0x110000) for _ in range(20_000)}
    sample |= {
        cp for spans in TABLE.values() for first, last in spans for cp in (first - 1, first, last, last + 1)
    }
    names = {
        _tables.OTHER: "other",
        _tables.LETTER: "letter",
        _tables.NUMBER: "number",
        _tables.WHITESPACE: "whitespace",
    }
    for cp in sorted(cp for cp in sample if 0 <= cp <= 0x10FFFF):
        char = chr(cp)
        expected = (
            "letter"
            if letter.match(char)
            else "number"
            if number.match(char)
            else "whitespace"
            if space.match(char)
            else "other"
        )
        assert names[_tables.CLASS_OF[cp]] == expected, hex(cp)


def test_table_matches_installed_regex_on_every_code_point() -> None:
    # The generator's own probe over 0..0x10FFFF takes well under a second.
    pytest.importorskip("regex")
    generator = load_generator()
    probed = generator.probe_ranges()
    assert {name: tuple(spans) for name, spans in probed.items()} == {
        **TABLE,
        **CASES_OF_LETTERS,
        **PUNCTUATION_AND_SYMBOLS,
    }
    assert generator.regex_unicode_version() == _unicode_classes.UNICODE_VERSION


def test_generator_output_is_deterministic() -> None:
    pytest.importorskip("regex")
    generator = load_generator()
    text = generator.render_module()
    assert text == generator.render_module()
    namespace: Dict[str, object] = {}
    exec(compile(text, "<generated>", "exec"), namespace)
    for name, spans in {**TABLE, **CASES_OF_LETTERS, **PUNCTUATION_AND_SYMBOLS}.items():
        assert namespace[f"{name}_RANGES"] == spans


# --------------------------------------------------------------------------------------
# The "none" pre-tokenizer
# --------------------------------------------------------------------------------------
line_text = st.text(st.sampled_from(list("ab \n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029")), max_size=40)


@given(line_text)
def test_split_lines_splits_on_newline_only(text: str) -> None:
    words = split_lines(text)
    assert "".join(words) == text
    assert all(words)
    assert all(word.endswith("\n") for word in words[:-1])
    assert all("\n" not in word[:-1] for word in words)
    assert len(words) == text.count("\n") + (0 if text.endswith("\n") or not text else 1)


@given(line_text)
def test_count_lines_counts_split_lines(text: str) -> None:
    counts: Dict[str, int] = {"x\n": 5}
    count_lines(text, counts)
    expected = collections.Counter(split_lines(text))
    expected["x\n"] += 5
    assert counts == dict(expected)


def test_split_lines_examples() -> None:
    assert split_lines("") == []
    assert split_lines("\n") == ["\n"]
    assert split_lines("a\r\nb\rc\x85d\u2028e") == ["a\r\n", "b\rc\x85d\u2028e"]
    assert split_lines("a\n\nb\n") == ["a\n", "\n", "b\n"]


# --------------------------------------------------------------------------------------
# Interface and errors
# --------------------------------------------------------------------------------------
def test_public_constants() -> None:
    assert GPT2_PATTERN == r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
    assert ENGINES == ("scanner", "re", "regex")
    assert PRETOKENIZERS == ("gpt2", "cl100k", "o200k", "llama3", "qwen", "qwen3.5", "tekken", "none")
    assert DEFAULT_ENGINE in STDLIB_ENGINES  # the default never needs the optional package


@pytest.mark.parametrize("bad", ["Scanner", "", "tiktoken", None])
def test_unknown_engine_raises(bad: str) -> None:
    for call in (
        lambda: pretokenize("a b", bad),
        lambda: count_pretokens("a b", {}, bad),
        lambda: word_counter("gpt2", bad),
    ):
        with pytest.raises(PureBPEError, match="scanner, re, regex"):
            call()


def test_unknown_pretokenizer_raises() -> None:
    with pytest.raises(PureBPEError, match=r"gpt2, cl100k, o200k, llama3, qwen, qwen3\.5, tekken, none"):
        word_counter("gpt4")


@pytest.mark.parametrize("engine", STDLIB_ENGINES)
def test_word_counter(engine: str) -> None:
    counts: Dict[str, int] = {}
    word_counter("gpt2", engine)("it's  a test\na test", counts)
    assert counts == {"it": 1, "'s": 1, " ": 1, " a": 1, " test": 2, "\n": 1, "a": 1}
    lines: Dict[str, int] = {}
    word_counter("none")("a\nb\r\na\n", lines)
    assert lines == {"a\n": 2, "b\r\n": 1}


def test_regex_engine_without_regex_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "regex", None)  # makes "import regex" fail
    monkeypatch.setattr(custom, "_compiled", {})  # nothing compiled before
    for call in (lambda: pretokenize("a", "regex"), lambda: word_counter("gpt2", "regex")):
        with pytest.raises(PureBPEError, match="regex"):
            call()
    assert pretokenize("a b", "scanner") == pretokenize("a b", "re") == ["a", " b"]
