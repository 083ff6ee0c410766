"""SuperBPE's stage-2 pattern without ``regex``: the scanner of ``purebpe.pretokenize.superwords``.

The definition is ``regex``'s "isolated" split with the pattern (matches and the gaps
between them).  The scanner must give exactly that on every code point, in the contexts
where the pattern looks at a character's class, and on Hypothesis text; a safe cut must
change nothing wherever it is taken.
"""

from __future__ import annotations

import collections
from typing import Dict, List

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_patterns import TRICKY, sweep_code_points

from purebpe.pretokenize import Pattern, count_pretokens, cut_finder, pretokenize, superwords
from purebpe.superbpe import STAGE2_PATTERN, STAGE2_PRETOKENIZER

regex = pytest.importorskip("regex")
COMPILED = regex.compile(f"({superwords.PATTERN})")
#: The scanner, and ``re`` with the classes spelled out (each module picks one per interpreter).
ENGINES = (superwords.scan_split, superwords.re_split)


def definition(text: str) -> List[str]:
    return [piece for piece in COMPILED.split(text) if piece]


def test_the_scanned_pattern_is_stage_two() -> None:
    assert superwords.PATTERN == STAGE2_PATTERN
    assert STAGE2_PRETOKENIZER == Pattern(superwords.PATTERN)


@pytest.mark.parametrize(
    "text",
    [
        "by the way, 2024!!  ok",
        " !!\n\r/x",  # the tail [\r\n/]* takes a "/" after a newline
        "a//b",  # "/" is "other": the run takes it
        "   x  \t !a",  # spaces before a non-space give one back; before \t all stay
        " ! x",  # a space and one "other": no match
        "1234567",
        "\u0663\u00b2\u2167x",  # numbers beyond ASCII
        " ",
        "  ",
        "x ",
    ],
)
def test_hand_checked_cases(text: str) -> None:
    for split in ENGINES:
        assert split(text) == definition(text), split
    assert pretokenize(text, pretokenizer=STAGE2_PRETOKENIZER) == definition(text)


def context(code_points: List[int]) -> str:
    # Each code point after a space, two spaces and a number; doubled; around "other"
    # characters and newlines (the [\r\n/]* tail); before a space and at a gap's end.
    return "".join(
        f" {c}  {c}1{c}{c}!{c}!!{c}\n{c}{c}1234 {c}!!\n/{c}a {c} \n" for c in map(chr, code_points)
    )


@pytest.mark.parametrize("block", range(3))
def test_every_code_point_in_context(block: int) -> None:
    text = context(sweep_code_points()[block])
    expected = definition(text)
    for split in ENGINES:  # (re_split hands the block above U+FFFF to the scanner)
        pieces = split(text)
        if pieces != expected:  # report the first difference, not a 3 MB diff
            first = next(i for i, (a, b) in enumerate(zip(pieces, expected)) if a != b)
            pytest.fail(f"{split}: {pieces[first - 2 : first + 3]} != {expected[first - 2 : first + 3]}")


stage2_tricky = st.lists(
    st.sampled_from(TRICKY + [" /", "!!", "\n/", "//", "  \n", "\u00a0 ", "\u2028"]), max_size=40
).map("".join)
some_text = st.one_of(st.text(st.characters(exclude_categories=())), stage2_tricky)


@given(text=some_text)
@settings(max_examples=600)
def test_the_scanner_equals_the_definition(text: str) -> None:
    expected = definition(text)
    for split in ENGINES:
        assert split(text) == expected, split
    counts: Dict[str, int] = {"before": 1}
    count_pretokens(text, counts, pretokenizer=STAGE2_PRETOKENIZER)
    expected_counts = collections.Counter(expected)
    expected_counts["before"] += 1
    assert counts == dict(expected_counts)


cut_text = st.lists(
    st.sampled_from(TRICKY + ["ab", "12", "+/", "==", "!!", "\n/", " !!", "\u4e2d\uff0c"]), max_size=40
).map("".join)


@given(text=cut_text)
@example("!!\n/!!x")  # a tail takes the "/" after a newline: never a cut before it
@example("  12 ,,a")  # spaces give one back before a non-space: never a cut after them
@example("\x1c+/")  # a control character is "other" (no \s in regex): the run starts before it
@settings(max_examples=400)
def test_every_safe_cut_leaves_the_pieces_unchanged(text: str) -> None:
    data = text.encode("utf-8", "surrogatepass")
    if b"\xed\xa0" in data or b"\xed\xbf" in data:
        return  # lone surrogates never reach the byte level (they are replaced first)
    whole = definition(text)
    safe_cut = cut_finder(STAGE2_PRETOKENIZER)
    for end in range(1, len(data)):
        cut = safe_cut(data, end)
        assert cut == -1 or 0 < cut <= end
        if cut > 0:
            left, right = data[:cut].decode("utf-8"), data[cut:].decode("utf-8")
            assert definition(left) + definition(right) == whole, (cut, left, right)


def test_real_text_has_cuts_and_prose_has_none() -> None:
    safe_cut = cut_finder(STAGE2_PRETOKENIZER)
    code = b"for (i = 0; i < 10; i++) {\n\tx += a[i] /* sum */;\n}\n" * 50
    assert 0 < safe_cut(code, len(code) - 1) < len(code)
    prose = b"and the cat sat on the mat, then it slept\n" * 50
    assert safe_cut(prose, len(prose) - 1) == -1  # gaps run on: no cut is safe
