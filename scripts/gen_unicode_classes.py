#!/usr/bin/env python3
"""Generate ``purebpe/pretokenize/_unicode_classes.py``: the code-point classes of the patterns.

The named pre-tokenization patterns (gpt2, cl100k, o200k) are defined by what the
third-party ``regex`` package does with them, so the character classes they use --
``\\p{L}``, ``\\p{N}``, ``\\s``, and for o200k ``\\p{Lu}\\p{Lt}``, ``\\p{Ll}`` and ``\\p{M}`` -- are
taken from ``regex`` itself rather than from :mod:`unicodedata` (whose Unicode version
depends on the interpreter, and whose ``str.isspace`` differs from ``regex``'s ``\\s``).

How: one string holding every code point 0..0x10FFFF (lone surrogates included; a Python
``str`` may hold them) is scanned with ``regex.finditer`` for runs of each class, compiled
with the same (default) flags as the patterns.  Each run is one ``(first, last)``
range, so the table is compact (a few thousand ranges) and the output depends only on the
``regex`` version: re-running the script gives byte-identical output.

Usage (from the repository root, with ``regex`` installed)::

    python3 scripts/gen_unicode_classes.py            # rewrite the table
    python3 scripts/gen_unicode_classes.py --check    # exit 1 if the table differs
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Dict, List, Tuple

import regex

MAX_CODE_POINT = 0x10FFFF

# The classes as they appear inside the patterns; compiled with their (default) flags.
# LETTER, NUMBER, WHITESPACE and MARK are disjoint (a scanner gives each code point one
# class); UPPER and LOWER are disjoint parts of LETTER, and what LETTER holds beyond them
# (CASELESS: Lm, Lo) is what o200k lets both begin and end a word. PUNCT_SYMBOL (P, S) is
# part of "other": DeepSeek's Split patterns name it (purebpe.pre_tokenizers.deepseek).
CLASS_PATTERNS: Dict[str, str] = {
    "LETTER": r"\p{L}+",
    "NUMBER": r"\p{N}+",
    "WHITESPACE": r"\s+",
    "MARK": r"\p{M}+",
    "UPPER": r"[\p{Lu}\p{Lt}]+",
    "LOWER": r"\p{Ll}+",
    "CASELESS": r"[\p{Lm}\p{Lo}]+",
    "PUNCT_SYMBOL": r"[\p{P}\p{S}]+",
}
#: The classes that partition the code points with "other" (the rest).
DISJOINT = ("LETTER", "NUMBER", "WHITESPACE", "MARK")

# Scripts first encoded in each Unicode version: ``regex`` accepts a script name only if
# its Unicode data knows it, so the newest accepted set names the version.  15.1 added no
# script, only CJK Extension I, so it is probed by code point (U+2EBF0 is its first).
_NEW_SCRIPTS: List[Tuple[str, List[str]]] = [
    ("17.0", ["Sidetic", "Tolong_Siki", "Beria_Erfe", "Tai_Yo"]),
    ("16.0", ["Garay", "Todhri", "Sunuwar", "Kirat_Rai"]),
    ("15.0", ["Kawi", "Nag_Mundari"]),
    ("14.0", ["Vithkuqi", "Toto", "Tangsa"]),
    ("13.0", ["Chorasmian", "Yezidi"]),
    ("12.0", ["Elymaic", "Nandinagari", "Wancho"]),
]

DEFAULT_OUTPUT = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    "purebpe",
    "pretokenize",
    "_unicode_classes.py",
)


def _knows_script(name: str) -> bool:
    try:
        regex.compile(r"\p{Script=%s}" % name)
    except regex.error:
        return False
    return True


def regex_unicode_version() -> str:
    """The Unicode version of the ``regex`` package's data, or ``"unknown"``."""
    for version, scripts in _NEW_SCRIPTS:
        if all(_knows_script(name) for name in scripts):
            if version == "15.0" and regex.match(r"\P{Cn}", "\U0002ebf0"):
                return "15.1"
            return version
    return "unknown"


def probe_ranges() -> Dict[str, List[Tuple[int, int]]]:
    """Inclusive ``(first, last)`` code-point ranges of each class, as ``regex`` matches them."""
    every_code_point = "".join(map(chr, range(MAX_CODE_POINT + 1)))
    ranges = {
        name: [(match.start(), match.end() - 1) for match in regex.finditer(pattern, every_code_point)]
        for name, pattern in CLASS_PATTERNS.items()
    }
    # A scanner gives each code point exactly one class: these must not overlap, and the
    # letter cases must lie inside LETTER without overlapping each other.
    for group, inside in ((DISJOINT, None), (("UPPER", "LOWER", "CASELESS"), "LETTER")):
        seen = bytearray(MAX_CODE_POINT + 1)
        for name in group:
            for first, last in ranges[name]:
                if any(seen[first : last + 1]):
                    raise SystemExit(f"{name} overlaps another class in {first:#x}..{last:#x}")
                seen[first : last + 1] = b"\x01" * (last - first + 1)
        if inside is not None:
            allowed = bytearray(MAX_CODE_POINT + 1)
            for first, last in ranges[inside]:
                allowed[first : last + 1] = b"\x01" * (last - first + 1)
            if any(s and not a for s, a in zip(seen, allowed)):
                raise SystemExit(f"{', '.join(group)} reach outside {inside}")
    return ranges


def _format_ranges(spans: List[Tuple[int, int]]) -> str:
    """The ranges as tuple items, as many to a line as fit in 99 columns."""
    lines: List[str] = []
    line = "   "
    for first, last in spans:
        item = f" (0x{first:04X}, 0x{last:04X}),"
        if len(line) + len(item) > 99:
            lines.append(line)
            line = "   "
        line += item
    lines.append(line)
    return "\n".join(lines)


HEADER = '''r"""Code-point classes of the pre-tokenization patterns, as ``regex`` sees them.

GENERATED by ``scripts/gen_unicode_classes.py`` -- do not edit; re-run the script instead.

Unicode version: {unicode_version} (the ``regex`` package's own Unicode data)
regex version:   {regex_version}

Each class is a tuple of inclusive ``(first, last)`` code-point ranges, sorted and
disjoint.  ``LETTER`` is ``\\p{{L}}``, ``NUMBER`` is ``\\p{{N}}``, ``WHITESPACE`` is ``\\s``,
``MARK`` is ``\\p{{M}}`` (all with the patterns' default flags); every other code point --
punctuation, symbols, controls such as U+0000, surrogates, unassigned -- is "other".
``UPPER`` (``\\p{{Lu}}\\p{{Lt}}``), ``LOWER`` (``\\p{{Ll}}``) and ``CASELESS``
(``\\p{{Lm}}\\p{{Lo}}``) split ``LETTER`` further for o200k; ``PUNCT_SYMBOL``
(``\\p{{P}}\\p{{S}}``) is the part of "other" DeepSeek's patterns name.
"""
from __future__ import annotations

UNICODE_VERSION = "{unicode_version}"
REGEX_VERSION = "{regex_version}"
'''


def render_module() -> str:
    """The text of ``purebpe/_unicode_classes.py`` for the installed ``regex``."""
    parts = [HEADER.format(unicode_version=regex_unicode_version(), regex_version=regex.__version__)]
    for name, spans in probe_ranges().items():
        parts.append(f"\n{name}_RANGES: tuple[tuple[int, int], ...] = (\n{_format_ranges(spans)}\n)\n")
    return "".join(parts)


def _without_regex_version(module_text: str) -> str:
    return "\n".join(
        line
        for line in module_text.splitlines()
        if not line.startswith(("regex version:", "REGEX_VERSION ="))
    )


def main(argv: List[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--output", default=DEFAULT_OUTPUT, help="file to write (default: %(default)s)")
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 if the table differs")
    args = parser.parse_args(argv)
    text = render_module()
    if args.check:
        try:
            with open(args.output, encoding="utf-8") as existing:
                current = existing.read()
        except FileNotFoundError:
            current = ""
        if _without_regex_version(current) != _without_regex_version(text):
            print(f"{args.output} is out of date; re-run {sys.argv[0]}", file=sys.stderr)
            return 1
        # Another regex release with the same Unicode data gives the same table.
        print(f"{args.output} is up to date with regex {regex.__version__}")
        return 0
    with open(args.output, "w", encoding="utf-8", newline="\n") as out:
        out.write(text)
    print(f"wrote {args.output}: Unicode {regex_unicode_version()}, regex {regex.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
