"""``Normalized``: text with per-character original offsets, and HF's ``transform`` rule."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from purebpe.normalizers import Normalized


def test_of_is_identity_shifted() -> None:
    n = Normalized.of("héllo", 3)
    assert n.text == "héllo"
    assert n.starts == [3, 4, 5, 6, 7]
    assert n.ends == [4, 5, 6, 7, 8]
    assert n.span(0, 5) == (3, 8)
    assert n.original_span() == (3, 8)


def test_span_takes_first_start_and_last_end() -> None:
    # As HF's expand_alignments: not min/max, the first and the last character's.
    n = Normalized("abc", [5, 2, 7], [6, 3, 9])
    assert n.span(0, 3) == (5, 9)
    assert n.span(1, 2) == (2, 3)


def test_empty_spans() -> None:
    n = Normalized.of("ab", 4)
    assert n.span(0, 0) == (4, 4)
    assert n.span(1, 1) == (5, 5)
    assert n.span(2, 2) == (6, 6)
    assert Normalized.of("").span(0, 0) == (0, 0)


def test_slice_keeps_absolute_offsets() -> None:
    n = Normalized.of("abcdef", 10).slice(2, 4)
    assert n == Normalized("cd", [12, 13], [13, 14])
    assert n.span(0, 2) == (12, 14)


def test_transform_replace_insert_remove() -> None:
    n = Normalized.of("abcd")
    # 'x' replaces 'a', 'y' is inserted after it, 'z' replaces 'b' and drops 'c', 'w' replaces 'd'.
    out = n.transform([("x", 0), ("y", 1), ("z", -1), ("w", 0)])
    assert out.text == "xyzw"
    assert list(zip(out.starts, out.ends)) == [(0, 1), (0, 1), (1, 2), (3, 4)]


def test_transform_initial_offset_and_insert_at_start() -> None:
    n = Normalized.of("abc")
    out = n.transform([("q", 1), ("c", 0)], initial_offset=2)
    # An inserted char after the dropped prefix takes the span of the last dropped char.
    assert list(zip(out.text, out.starts, out.ends)) == [("q", 1, 2), ("c", 2, 3)]
    out = Normalized.of("").transform([("q", 1)])
    assert (out.text, out.starts, out.ends) == ("q", [0], [0])
    out = Normalized.of("", 7).transform([("q", 1)])
    assert (out.starts, out.ends, out.origin) == ([7], [7], 7)


@given(st.text(max_size=30), st.integers(0, 100))
def test_identity_transform_changes_nothing(text: str, offset: int) -> None:
    n = Normalized.of(text, offset)
    assert n.transform([(c, 0) for c in text]) == n
    for i in range(len(text) + 1):
        for j in range(i, len(text) + 1):
            assert n.slice(i, j).text == text[i:j]
            if i < j:
                assert n.span(i, j) == (offset + i, offset + j)


def test_docstring_examples_run() -> None:
    import doctest
    import importlib

    for name in [
        "purebpe.normalizers",
        "purebpe.normalizers._json",
        "purebpe.normalizers.chars",
        "purebpe.normalizers.normalized",
        "purebpe.normalizers.pattern",
        "purebpe.normalizers.replace",
        "purebpe.normalizers.unicode",
        "purebpe.pre_tokenizers",
        "purebpe.pre_tokenizers.byte_level",
        "purebpe.pre_tokenizers.metaspace",
        "purebpe.pre_tokenizers.split",
        "purebpe.decoders",
    ]:
        result = doctest.testmod(importlib.import_module(name))
        assert result.failed == 0, name
        assert result.attempted > 0, name


def test_docs_page_examples_run() -> None:
    import doctest
    from pathlib import Path

    page = Path(__file__).resolve().parent.parent / "docs" / "hf-pipeline.md"
    result = doctest.testfile(str(page), module_relative=False)
    assert result.failed == 0
    assert result.attempted > 5
