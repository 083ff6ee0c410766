#!/usr/bin/env python3
"""Generate ``purebpe/normalizers/_hf_unicode.py``: the Unicode data HF's normalizers use.

HF ``tokenizers`` normalizes with the ``unicode-normalization-alignments`` crate, whose
tables are Unicode 9.0: a character added since has, for HF, no decomposition and
combining class 0, while :mod:`unicodedata` (Unicode 13 on PyPy 3.9, 14 on CPython 3.11,
15.1 on 3.13) decomposes and reorders it.  So which characters decompose, and which are
combining marks, is taken from HF itself, by probing its NFD/NFKD for every code point:

* ``CANONICAL`` / ``COMPATIBILITY``: the code points HF's NFD / NFKD change.  Their
  decompositions are those of :mod:`unicodedata` (decompositions never change once
  assigned); the script checks that for each of them.
* ``MARK_CLASSES``: combining class -> the code points HF reorders with that class:
  each mark :mod:`unicodedata` knows is put where canonical ordering would move it, and
  kept only if HF moves it too.

The character tests of the pre-tokenizers and of ``StripAccents``/``Lowercase`` come from HF
in the same way (HF's Rust uses several Unicode versions: the std library's for
``is_numeric``/``is_whitespace``/``to_lowercase``, the ``regex`` crate's for ``\\w``, an
old ``unicode_categories`` table for punctuation, the normalization crate's for marks):

* ``NUMERIC`` (``Digits``), ``PUNCTUATION`` (``Punctuation``), ``WHITESPACE``
  (``WhitespaceSplit``), ``WORD`` (``\\w`` of ``Whitespace``), ``COMBINING_MARK``
  (``StripAccents``): every code point between two ``a``s, run through the component;
* ``LOWERCASE``: every code point ``Lowercase`` changes, and what it becomes.

The output depends only on the installed ``tokenizers`` (and the interpreter's Unicode
version being at least HF's).  Usage, from the repository root, with ``tokenizers``::

    python3 scripts/gen_hf_unicode.py            # rewrite the table
    python3 scripts/gen_hf_unicode.py --check    # exit 1 if the table differs
"""

from __future__ import annotations

import argparse
import os
import sys
import unicodedata
from typing import Dict, Iterable, List, Tuple

import tokenizers
from tokenizers import normalizers, pre_tokenizers

TARGET = os.path.join(os.path.dirname(__file__), "..", "purebpe", "normalizers", "_hf_unicode.py")
CODE_POINTS = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]


def ranges(points: Iterable[int]) -> List[Tuple[int, int]]:
    out: List[List[int]] = []
    for point in sorted(points):
        if out and out[-1][1] == point - 1:
            out[-1][1] = point
        else:
            out.append([point, point])
    return [(a, b) for a, b in out]


def changed_by(normalizer: object, form: str) -> List[int]:
    found = []
    for point in CODE_POINTS:
        char = chr(point)
        hf = normalizer.normalize_str(char)  # type: ignore[attr-defined]
        if hf != char:
            if hf != unicodedata.normalize(form, char):
                sys.exit(f"U+{point:04X}: HF {form} {hf!r} differs from unicodedata's")
            found.append(point)
    return found


def mark_classes() -> Dict[int, List[int]]:
    nfd = normalizers.NFD()
    classes: Dict[int, List[int]] = {}
    for point in CODE_POINTS:
        char = chr(point)
        klass = unicodedata.combining(char)
        if not klass:
            continue
        # A probe canonical ordering changes: the mark after one of a higher class, or
        # before one of a lower class.  HF changes it too only if it knows the mark.
        probe = "a\u0301" + char if klass < 230 else "a" + char + "\u0316"
        if nfd.normalize_str(probe) == unicodedata.normalize("NFD", probe):
            classes.setdefault(klass, []).append(point)
    return classes


def probe_pieces(pre_tokenizer: object) -> List[Tuple[str, Tuple[int, int]]]:
    text = "a".join(chr(p) for p in CODE_POINTS)
    pieces: List[Tuple[str, Tuple[int, int]]] = pre_tokenizer.pre_tokenize_str(text)  # type: ignore[attr-defined]
    return pieces


def isolated_by(pre_tokenizer: object) -> List[int]:
    """Code points the pre-tokenizer cuts out as a piece of their own (between two a's)."""
    return [ord(piece) for piece, _ in probe_pieces(pre_tokenizer) if len(piece) == 1 and piece != "a"]


def removed_by(pre_tokenizer: object) -> List[int]:
    """Code points the pre-tokenizer drops (no piece covers them)."""
    covered = bytearray(len(CODE_POINTS) * 2)
    for _, (start, end) in probe_pieces(pre_tokenizer):
        covered[start:end] = b"\x01" * (end - start)
    return [point for i, point in enumerate(CODE_POINTS) if not covered[2 * i]]


def word_characters() -> List[int]:
    """``\\w`` of HF's Whitespace: a word character joins the a's around it."""
    joined = set()
    for piece, (start, end) in probe_pieces(pre_tokenizers.Whitespace()):
        if len(piece) > 1:
            joined.update(range(start, end))
    return [point for i, point in enumerate(CODE_POINTS) if 2 * i in joined and point != ord("a")] + [
        ord("a")
    ]


def stripped_marks() -> List[int]:
    strip = normalizers.StripAccents()
    return [p for p in CODE_POINTS if strip.normalize_str("a" + chr(p) + "a") == "aa"]


def lowercase() -> Dict[int, str]:
    lower = normalizers.Lowercase()
    return {p: low for p in CODE_POINTS for low in [lower.normalize_str(chr(p))] if low != chr(p)}


def render() -> str:
    canonical = ranges(changed_by(normalizers.NFD(), "NFD"))
    compatibility = ranges(changed_by(normalizers.NFKD(), "NFKD"))
    marks = {klass: ranges(points) for klass, points in sorted(mark_classes().items())}
    lines = [
        '"""The Unicode data of HF ``tokenizers``\' normalizers (Unicode 9.0, its crate\'s tables).',
        "",
        "GENERATED by ``scripts/gen_hf_unicode.py`` -- do not edit; re-run the script instead.",
        "",
        f"tokenizers version: {tokenizers.__version__}",
        f"probed against unicodedata {unicodedata.unidata_version}",
        "",
        "Inclusive ``(first, last)`` code-point ranges.  ``CANONICAL``/``COMPATIBILITY``: what",
        "HF's NFD/NFKD change; ``MARK_CLASSES``: canonical combining class -> the marks HF knows.",
        '"""',
        "from __future__ import annotations",
        "",
        "from typing import Dict, Tuple",
        "",
        "Ranges = Tuple[Tuple[int, int], ...]",
        "",
    ]

    def emit(name: str, value: List[Tuple[int, int]], indent: str = "") -> List[str]:
        body = [f"{indent}{name}("]
        row = ""
        for a, b in value:
            item = f"(0x{a:X}, 0x{b:X}), "
            if len(row) + len(item) > 88:
                body.append(indent + "    " + row.rstrip())
                row = ""
            row += item
        if row:
            body.append(indent + "    " + row.rstrip())
        body.append(f"{indent})")
        return body

    lines += emit("CANONICAL: Ranges = ", canonical)
    lines.append("")
    lines += emit("COMPATIBILITY: Ranges = ", compatibility)
    lines.append("")
    lines.append("MARK_CLASSES: Dict[int, Ranges] = {")
    for klass, value in marks.items():
        lines += emit(f"{klass}: ", value, "    ")
        lines[-1] += ","
    lines.append("}")
    lines.append("")
    for name, points in (
        ("NUMERIC", isolated_by(pre_tokenizers.Digits(individual_digits=True))),
        ("PUNCTUATION", isolated_by(pre_tokenizers.Punctuation())),
        ("WHITESPACE", removed_by(pre_tokenizers.WhitespaceSplit())),
        ("WORD", word_characters()),
        ("COMBINING_MARK", stripped_marks()),
    ):
        lines += emit(f"{name}: Ranges = ", ranges(points))
        lines.append("")
    lines.append("LOWERCASE: Dict[int, str] = {")
    row = ""
    for point, low in sorted(lowercase().items()):
        item = f"0x{point:X}: {low!r}, "
        if len(row) + len(item) > 88:
            lines.append("    " + row.rstrip())
            row = ""
        row += item
    lines.append("    " + row.rstrip())
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the table is out of date")
    text = render()
    if parser.parse_args().check:
        with open(TARGET, encoding="utf-8") as handle:
            sys.exit(0 if handle.read() == text else 1)
    with open(TARGET, "w", encoding="utf-8") as handle:
        handle.write(text)
    print(f"wrote {os.path.normpath(TARGET)}")


if __name__ == "__main__":
    main()
