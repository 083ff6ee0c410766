"""HF pre-tokenizers: same pieces and offsets as HF ``tokenizers``' ``pre_tokenize_str``,
and the no-offsets path (``split_texts``) gives the same pieces.

Replays HF's recorded answers on every interpreter; live Hypothesis comparison where
``tokenizers`` is installed.
"""

from __future__ import annotations

import re
import subprocess
import sys
from typing import Any, Dict, Iterator, List, Optional

import pytest
from _hf_components import pre_tokenizers as hf_pre_tokenizers
from _hf_components import text_strategy
from _hf_fixture import component_id, hf_tokenizers, recorded
from hypothesis import given
from hypothesis import strategies as st

from purebpe.errors import PureBPEError
from purebpe.formats.hf import hf_reading
from purebpe.normalizers import Normalized
from purebpe.normalizers import from_json as normalizer_from_json
from purebpe.normalizers.pattern import HFPattern, oniguruma_spans, regex_source
from purebpe.pre_tokenizers import Metaspace, from_json, split_text
from purebpe.pretokenize import Pattern
from purebpe.pretokenize.custom import regex_budget

RECORDED = recorded("pre_tokenizers")


def pieces(obj: Dict[str, Any], text: str) -> List[List[Any]]:
    return [[piece, list(offsets)] for piece, offsets in from_json(obj).pre_tokenize_str(text)]


@pytest.mark.parametrize("component", RECORDED, ids=[component_id(c["json"]) for c in RECORDED])
def test_recorded_answers(component: Dict[str, Any]) -> None:
    pre_tokenizer = from_json(component["json"])
    for case in component["cases"]:
        assert pieces(component["json"], case["text"]) == case["pieces"], case["text"]
        assert split_text(pre_tokenizer, case["text"]) == [p for p, _ in case["pieces"]], case["text"]


def test_fixture_covers_every_pre_tokenizer_option() -> None:
    def parts(obj: Dict[str, Any]) -> List[Dict[str, Any]]:
        return [obj] + [p for inner in obj.get("pretokenizers", []) for p in parts(inner)]

    seen = [p for c in RECORDED for p in parts(c["json"])]
    types = {p["type"] for p in seen}
    assert types >= {
        "ByteLevel",
        "Split",
        "Digits",
        "Metaspace",
        "Whitespace",
        "WhitespaceSplit",
        "Punctuation",
        "Sequence",
    }
    assert {p["behavior"] for p in seen if p["type"] == "Split"} >= {
        "Removed",
        "Isolated",
        "MergedWithPrevious",
        "MergedWithNext",
        "Contiguous",
    }
    assert {p["invert"] for p in seen if p["type"] == "Split"} == {False, True}
    assert {p["prepend_scheme"] for p in seen if p["type"] == "Metaspace"} == {"first", "always", "never"}
    assert {(p["add_prefix_space"], p["use_regex"]) for p in seen if p["type"] == "ByteLevel"} >= {
        (False, True),
        (True, True),
        (True, False),
        (False, False),
    }


@pytest.mark.parametrize("component", RECORDED, ids=[component_id(c["json"]) for c in RECORDED])
def test_to_json_gives_back_the_object(component: Dict[str, Any]) -> None:
    assert from_json(component["json"]).to_json() == component["json"]


TOKENIZERS = hf_tokenizers()
LIVE = hf_pre_tokenizers(TOKENIZERS) if TOKENIZERS is not None else []


@pytest.mark.skipif(
    TOKENIZERS is None,
    reason="HF tokenizers is not installed (CPython-only peer); recorded answers replayed above",
)
@pytest.mark.parametrize("index", range(len(LIVE)) or [0])
@given(text=text_strategy())
def test_live_against_tokenizers(index: int, text: str) -> None:
    hf, obj = LIVE[index]
    expected = [[piece, list(offsets)] for piece, offsets in hf.pre_tokenize_str(text)]
    assert pieces(obj, text) == expected
    assert split_text(from_json(obj), text) == [p for p, _ in expected]


@given(text=st.text(st.sampled_from(list("ab ▁\n12")), max_size=12), offset=st.integers(0, 3))
def test_metaspace_first_prepends_only_at_the_input_start(text: str, offset: int) -> None:
    # HF's rule: prepend_scheme="first" prepends where the piece's original_shift is 0.
    meta = Metaspace(prepend_scheme="first", split=False)
    out = meta.pre_tokenize([Normalized.of(text, offset)])
    prepended = bool(text) and not text.startswith(("▁", " ")) and offset == 0
    assert [p.text for p in out] == ([("▁" if prepended else "") + text.replace(" ", "▁")] if text else [])
    assert split_text(meta, text, at_origin=offset == 0) == [p.text for p in out]


def test_character_tests_are_hfs_not_pythons() -> None:
    # Python's predicates differ: U+001C is str.isspace, 一 is str.isnumeric, U+1E95E (Adlam,
    # Unicode 9) is punctuation for unicodedata but not in HF's Unicode 8 table.
    assert from_json({"type": "WhitespaceSplit"}).pre_tokenize_str("a\x1cb c") == [
        ("a\x1cb", (0, 3)),
        ("c", (4, 5)),
    ]
    assert from_json({"type": "Digits", "individual_digits": False}).pre_tokenize_str("一2") == [
        ("一", (0, 1)),
        ("2", (1, 2)),
    ]
    assert from_json({"type": "Punctuation", "behavior": "Removed"}).pre_tokenize_str("a\U0001e95e!") == [
        ("a\U0001e95e", (0, 2))
    ]


def test_byte_level_maps_every_byte_to_its_character_span() -> None:
    bl = from_json({"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": False})
    (piece,) = bl.pre_tokenize([Normalized.of("é😀", 5)])
    assert piece.text == "ĠÃ©ðŁĺĢ"
    assert list(zip(piece.starts, piece.ends)) == [(5, 6)] * 3 + [(6, 7)] * 4


def test_regex_source_reads_oniguruma_nested_classes() -> None:
    assert regex_source(r"[a-z]+|\s+") == r"[a-z]+|\s+"
    assert regex_source(r"[^(\s|[.,])]+").startswith("(?V1)")
    assert regex_source(r"[a-z&&[^aeiou]]").startswith("(?V1)")
    assert regex_source(r"[[:alpha:]]+") == r"[[:alpha:]]+"
    assert regex_source(r"\[[a]") == r"\[[a]"
    assert HFPattern({"Regex": r" ?[^(\s|[.,!?])]+"}).spans("ab, cd.") == [(0, 2), (3, 6)]


#: HF's replacements (tokenizers 0.23.3, ``normalizers.Replace(Regex(pattern), "|")``) where
#: Oniguruma reads a pattern otherwise than ``regex``: word boundaries skip ZWJ and take ²½
#: as letters; inside a class ``\w`` does not take ²½; ``^`` is no line start after a
#: newline that ends the text; an empty text has no match at all.
ONIGURUMA_READINGS = {
    ("\\b", "a²b ½c_d"): "|a²b| |½c_d|",
    ("\\b", "x\u200dy"): "|x|\u200d|y|",
    ("\\B", "a²b ½c"): "a|²|b ½|c",
    ("\\B", ""): "",
    ("[\\w]+", "a²b ½c_d"): "|²| ½|",
    ("[^\\w]+", "a²b x\u200dy"): "a|b|x|y",
    ("[\\W\\d]+", "a²b 1"): "a|b|",
    ("[[:word:]]+", "a²b ½c_d"): "|²| ½|",
    ("\\p{Word}+", "a²b ½c_d"): "| |",
    ("\\P{Word}+", "a²b ½c_d"): "a²b|½c_d",
    ("^", "a\n\nb\n"): "|a\n|\n|b\n",
    ("^", ""): "",
    ("$", ""): "",
    ("\\A", ""): "",
    # An interval's digits are ASCII, so {,١} is text; {,2} is Ruby's {0,2}.
    ("a{,\u0661}", "a{,\u0661}b"): "|b",
    ("ab{,2}", "abbb"): "|b",
    ("a{\u0661}+", "a{\u0661}}}"): "|",
    # \N is any character but a newline; X{n}? is an optional X{n} in Ruby syntax (X{m,n}?
    # is lazy); Ruby's (?m) lets a dot take a newline, as regex's (?s) does.
    ("\\N", "a\nb"): "|\n|",
    ("a{2}?", "aab"): "|b|",
    ("(?:ab){2}?", "ababx"): "|x|",
    ("(?m)a.b", "a\nb"): "|",
    ("(?-m)a.b", "a\nb"): "a\nb",
    ("(?m:a.)b", "a\nb"): "|",
    ("x(?m).", "x\ny"): "|y",
    # A POSIX digit is any decimal digit (regex's own [[:digit:]] takes ASCII ones only).
    ("[[:digit:]]+", "\u0661\u0662 3 x"): "| | x",
    ("[[:alnum:]]+", "\u0661\u0662 3 ABC"): "| | |",
    ("[^[:alnum:]]+", "\u0661\u0662 3 ABC"): "\u0661\u0662|3|ABC",
    ("[[:^digit:]]+", "a\u06612"): "|\u06612",
    # Ruby syntax's own spellings of characters.
    ("\\x{e9}+", "caf\u00e9\u00e9"): "caf|",
    ("[\\x{e9}-\\x{ff}]+", "\u00e9\u00f0a"): "|a",
    ("\\o{351}", "\u00e9"): "|",
    ("[\\cA\\e]+", "\x01\x1ba"): "|a",
    ("\\C-a\\c?", "a\x01\x7fb"): "a|b",
    # POSIX punctuation takes every symbol, the circled letters too.
    ("[[:punct:]]+", "a\u24b6!\u20acx"): "a|x",
    ("[[:^punct:]]+", "a\u24b6!\u20acx"): "|\u24b6!\u20ac|",
    # After an empty match Oniguruma searches again a character on, where regex's finditer
    # looks for a non-empty match at the same place; an empty match where the previous
    # match ended is skipped, one further on is not.
    ("a*?", "aab"): "|a|a|b|",
    ("(?:|a)", "aa"): "|a|a|",
    ("a{0,2}?", "  a"): "| | |a|",
    ("a|b??", "abb"): "|b|b|",
    ("\\bb*|[ab]+?", "aax x"): "|a|x| |x|",
    ("x|(?=c)", "axbc"): "a|b|c",
    # An option setting lasts to the end of its group, alternatives included (Ruby
    # syntax); where case is ignored, properties still heed it, and i is not Turkish.
    ("ab(?i)c|def", "ABC abC DEF def"): "ABC | DEF def",
    ("(?i)a(?-i)b|c", "AB Ab aC C"): "AB | aC C",
    ("((?i)a|b)c", "Ac Bc BC"): "| | BC",
    ("(?i)\\p{Lu}", "a A"): "a |",
    ("(?i)\\P{Lu}", "a A"): "||A",
    ("(?i)i", "I i \u0131 \u0130"): "| | \u0131 \u0130",
    ("(?i)\u0131", "I i \u0131 \u0130"): "I i | \u0130",
    ("(?i)\u0130", "\u0130 i\u0307 I\u0307 i"): "| | | i",
}


def test_patterns_read_as_oniguruma_reads_them() -> None:
    for (pattern, text), replaced in ONIGURUMA_READINGS.items():
        replace = {"type": "Replace", "pattern": {"Regex": pattern}, "content": "|"}
        assert normalizer_from_json(replace).normalize_str(text) == replaced, (pattern, text)


@pytest.mark.peers
def test_oniguruma_readings_recorded_are_hfs() -> None:
    tokenizers = pytest.importorskip("tokenizers")
    for (pattern, text), replaced in ONIGURUMA_READINGS.items():
        normalizer = tokenizers.normalizers.Replace(tokenizers.Regex(pattern), "|")
        assert normalizer.normalize_str(text) == replaced, (pattern, text)


def test_a_non_ascii_interval_is_no_possessive_interval() -> None:
    assert hf_reading("a{\u0661}+") == Pattern("a{\u0661}+")


@pytest.mark.parametrize("pattern", ["(?s).", "(?i-s:a)", "(?P<n>a)", "(?W)\\w", "(?L)a|ab"])
def test_an_option_ruby_syntax_lacks_or_regex_reads_otherwise_is_refused(pattern: str) -> None:
    # HF refuses the first three too; the others are Oniguruma's own options.
    with pytest.raises(PureBPEError, match=r"the option group \(\?[A-Z]?[a-z-]*.* is not supported"):
        HFPattern({"Regex": pattern})


@pytest.mark.peers
def test_hf_refuses_the_options_ruby_syntax_lacks() -> None:
    tokenizers = pytest.importorskip("tokenizers")
    for pattern in ("(?s).", "(?i-s:a)", "(?P<n>a)"):
        with pytest.raises(Exception, match="undefined group option"):
            tokenizers.normalizers.Replace(tokenizers.Regex(pattern), "|")


def test_a_search_anchor_is_refused() -> None:
    with pytest.raises(PureBPEError, match=r"\\G \(where the search started\) is not supported"):
        HFPattern({"Regex": "\\Ga"})


@pytest.mark.parametrize("pattern", ["ab\\x{110000}", "ab[\\x{110000}]", "[\\o{154000}]"])
def test_an_escape_of_no_character_is_refused_naming_the_pattern(pattern: str) -> None:
    with pytest.raises(
        PureBPEError, match=rf"^pattern {re.escape(repr(pattern))}: \\[xo]\{{\d+\}} is no character"
    ):
        HFPattern({"Regex": pattern})


def test_keep_is_refused() -> None:
    with pytest.raises(PureBPEError, match=r"\\K \(keep what was matched out of the match\) is not"):
        HFPattern({"Regex": "a\\K"})


def test_a_unicode_escape_is_one_atom() -> None:
    # \u00e9{2} repeats the é, which the interval's rewriting must not cut in two.
    assert HFPattern({"Regex": "\\u00e9{1,2}+"}).spans("\u00e9\u00e9\u00e9x") == [(0, 3)]


def test_empty_matches_follow_oniguruma() -> None:
    # After a match ending at i, an empty match at i is skipped (HF's onig iterator).
    assert HFPattern({"Regex": "x*"}).spans("axxb") == [(0, 0), (1, 3), (4, 4)]
    assert HFPattern({"Regex": "(?=b)"}).spans("abab") == [(1, 1), (3, 3)]
    assert HFPattern({"Regex": "a*?"}).spans("aa") == [(0, 0), (1, 1), (2, 2)]


def test_searches_after_an_empty_match_share_the_texts_budget() -> None:
    timeouts: List[Optional[float]] = []

    def finditer(text: str, pos: int, timeout: Optional[float]) -> Iterator["re.Match[str]"]:
        timeouts.append(timeout)
        return re.compile("a*?").finditer(text, pos)

    assert oniguruma_spans(finditer, "aaa") == [(0, 0), (1, 1), (2, 2), (3, 3)]
    budget = regex_budget(3)
    assert timeouts[0] is None  # the first search takes the whole budget itself
    assert all(t is not None and 0 < t <= budget for t in timeouts[1:]) and len(timeouts) == 4


def test_named_patterns_run_on_the_scanner() -> None:
    from purebpe.pretokenize import PATTERNS

    for name in ("gpt2", "o200k"):
        pattern = HFPattern({"Regex": PATTERNS[name]})
        assert pattern._finditer is None and pattern._split is not None, name
    assert HFPattern({"Regex": PATTERNS["o200k"]}).spans("Hello  world1234") == [
        (0, 5),
        (5, 6),
        (6, 12),
        (12, 15),
        (15, 16),
    ]


def test_tiktoken_cl100k_string_is_not_cl100k_for_hf() -> None:
    # Oniguruma (Ruby syntax) reads "\p{N}{1,3}+" as "(?:\p{N}{1,3})+": any digit run.
    from purebpe.pretokenize import PATTERNS

    pattern = HFPattern({"Regex": PATTERNS["cl100k"]})
    assert pattern._split is None
    assert pattern.spans("year 20245") == [(0, 4), (4, 5), (5, 10)]


@pytest.mark.parametrize(
    "obj, message",
    [
        ({"type": "BertPreTokenizer"}, "pre-tokenizer 'BertPreTokenizer' is not supported"),
        ({"type": "UnicodeScripts"}, "pre-tokenizer 'UnicodeScripts' is not supported"),
        (
            {"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Sideways", "invert": False},
            "behavior 'Sideways'",
        ),
        (
            {"type": "Split", "pattern": {"Regex": "(a"}, "behavior": "Isolated", "invert": False},
            "does not compile",
        ),
        (
            {"type": "Split", "pattern": "a", "behavior": "Isolated", "invert": False},
            "field 'pattern' must be",
        ),
        (
            {"type": "Metaspace", "replacement": "▁", "add_prefix_space": False, "prepend_scheme": "first"},
            "contradicts",
        ),
        ({"type": "Metaspace", "replacement": "ab"}, "replacement must be one character"),
        (
            {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "sometimes"},
            "prepend_scheme 'sometimes'",
        ),
        (
            {"type": "Sequence", "pretokenizers": [{"type": "Whitespace"}, {"type": "CharDelimiterSplit"}]},
            "'CharDelimiterSplit'",
        ),
    ],
)
def test_bad_objects_fail_in_one_line(obj: Dict[str, Any], message: str) -> None:
    with pytest.raises(PureBPEError) as error:
        from_json(obj)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_legacy_metaspace_add_prefix_space() -> None:
    never = from_json({"type": "Metaspace", "replacement": "▁", "add_prefix_space": False})
    always = from_json({"type": "Metaspace", "replacement": "▁", "add_prefix_space": True})
    assert never.pre_tokenize_str("a b") == [("a", (0, 1)), ("▁b", (1, 3))]
    assert always.pre_tokenize_str("a b") == [("▁a", (0, 1)), ("▁b", (1, 3))]


def test_custom_regex_without_the_regex_package_is_one_line() -> None:
    code = (
        "import sys; sys.modules['regex'] = None\n"
        "from purebpe.pre_tokenizers import from_json\n"
        "from purebpe.errors import PureBPEError\n"
        "ok = from_json({'type': 'Split', 'pattern': {'String': ' '}, 'behavior': 'Removed', "
        "'invert': False})\n"
        "assert ok.pre_tokenize_str('a b') == [('a', (0, 1)), ('b', (2, 3))]\n"
        "try:\n"
        "    from_json({'type': 'Split', 'pattern': {'Regex': 'a+'}, 'behavior': 'Isolated', "
        "'invert': False})\n"
        "except PureBPEError as e:\n"
        "    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "needs the optional 'regex' package" in out
    assert out.count("\n") == 1


SOME = [c for i, c in enumerate(RECORDED) if i % 3 == 0 or "Metaspace" in component_id(c["json"])]


@pytest.mark.parametrize("component", SOME, ids=[component_id(c["json"]) for c in SOME])
@given(text=text_strategy(), offset=st.integers(0, 2))
def test_text_path_equals_alignment_path_at_any_origin(
    component: Dict[str, Any], text: str, offset: int
) -> None:
    # A stretch after an added token starts at a later offset: only Metaspace "first" cares.
    pre_tokenizer = from_json(component["json"])
    expected = [p.text for p in pre_tokenizer.pre_tokenize([Normalized.of(text, offset)])]
    assert split_text(pre_tokenizer, text, at_origin=offset == 0) == expected


def test_named_pretokenizer_names_the_engine_pipelines() -> None:
    from purebpe.pre_tokenizers import named_pretokenizer
    from purebpe.pre_tokenizers.byte_level import to_byte_alphabet
    from purebpe.pretokenize import PATTERNS, splitter

    names = {}
    for component in RECORDED:
        name = named_pretokenizer(from_json(component["json"]))
        if name is not None:
            names[component_id(component["json"])] = name
            split = splitter(name)
            for case in component["cases"]:
                assert [to_byte_alphabet(p) for p in split(case["text"])] == [p for p, _ in case["pieces"]]
    assert sorted(set(names.values())) == ["gpt2", "o200k", "qwen"]
    cl100k_split = {
        "type": "Split",
        "pattern": {"Regex": PATTERNS["cl100k"]},
        "behavior": "Isolated",
        "invert": False,
    }
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}
    assert (
        named_pretokenizer(from_json({"type": "Sequence", "pretokenizers": [cl100k_split, byte_level]}))
        is None
    )


#: Pieces of Oniguruma patterns for the differential test below: atoms (zero-width ones
#: take no quantifier, which Oniguruma refuses) and quantifiers, Ruby's spellings included.
_PATTERN_ATOMS = [
    "a", "b", "A", "1", " ", "\\n", ".", "\\s", "\\S", "\\d", "\\D", "\\w", "\\W", "\\h",
    "\\p{L}", "\\p{N}", "\\P{L}", "\\p{Lu}", "[ab]", "[^a]", "[a-c1]", "[\\s\\d]",
    "[^\\s\\p{L}]", "[[:alpha:]]", "[[:space:]]", "[[:punct:]]", "[[:digit:]]", "é", "ß",
    "\\u00e9", "\\x41", "\\x{e9}", "[^\\r\\n]", "i", "I",
]  # fmt: skip
_ZERO_WIDTH = ["\\b", "\\B", "^", "$", "\\A", "\\z", "\\Z", "(?=a)", "(?!\\S)", "(?<=a)", "(?<!\\s)"]
_QUANTIFIERS = [
    "",
    "*",
    "+",
    "?",
    "*?",
    "+?",
    "??",
    "{2}",
    "{1,2}",
    "{,2}",
    "{2,}",
    "++",
    "?+",
    "{1,3}+",
    "{2}?",
]
_SETTINGS = ["(?i)", "(?-i)", "(?m)"]


@st.composite
def oniguruma_patterns(draw: Any) -> str:
    """Alternatives of atoms, settings and one level of groups."""

    def sequence(depth: int) -> str:
        out = []
        for _ in range(draw(st.integers(1, 3))):
            kind = draw(st.sampled_from(["atom", "atom", "atom", "zero", "setting", "group"]))
            if kind == "atom":
                out.append(draw(st.sampled_from(_PATTERN_ATOMS)) + draw(st.sampled_from(_QUANTIFIERS)))
            elif kind == "zero":
                out.append(draw(st.sampled_from(_ZERO_WIDTH)))
            elif kind == "setting":
                out.append(draw(st.sampled_from(_SETTINGS)))
            elif depth == 0:
                opening = draw(st.sampled_from(["(", "(?:", "(?i:", "(?>"]))
                out.append(opening + alternatives(1) + ")" + draw(st.sampled_from(_QUANTIFIERS[:4])))
        return "".join(out)

    def alternatives(depth: int) -> str:
        return "|".join(sequence(depth) for _ in range(draw(st.integers(1, 3))))

    return alternatives(0)


@pytest.mark.peers
@given(
    oniguruma_patterns(),
    st.lists(
        st.text(alphabet="abAB1 \n\t\u00e9.\u00dfx\u00a0\u0663\r_-\u03a3iI\u0131\u0130", max_size=8),
        min_size=1,
        max_size=4,
    ),
)
def test_patterns_match_where_oniguruma_matches(pattern: str, texts: List[str]) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    try:
        reference = tokenizers.normalizers.Replace(tokenizers.Regex(pattern), "|")
    except Exception:
        return  # Oniguruma refuses the pattern (a repeat of nothing, say)
    mine = normalizer_from_json({"type": "Replace", "pattern": {"Regex": pattern}, "content": "|"})
    for text in texts:
        assert mine.normalize_str(text) == reference.normalize_str(text), (pattern, text)
