"""The ``"none"`` pre-tokenizer: each line with its ``"\\n"`` is one word, nothing else splits.

Only ``"\\n"`` ends a line (unlike ``str.splitlines``, which also splits on ``"\\r"``,
``"\\x85"``, ``"\\u2028"``...); a last line without ``"\\n"`` is a word too.  A cut just
after any ``"\\n"`` changes nothing.
"""

from __future__ import annotations

from typing import Dict, List


def split_lines(text: str) -> List[str]:
    """Each line of ``text`` with its ``"\\n"``, in order."""
    lines = text.split("\n")
    last = lines.pop()  # the text after the final "\n": "" when text ends with one
    words = [line + "\n" for line in lines]
    if last:
        words.append(last)
    return words


def count_lines(text: str, counts: Dict[str, int]) -> None:
    """Add 1 to ``counts[line]`` for every word of :func:`split_lines`."""
    for word in split_lines(text):
        counts[word] = counts.get(word, 0) + 1


def safe_cut(buf: bytes, end: int) -> int:
    """The last cut at or before byte ``end``: just after a newline, or -1."""
    return buf.rfind(b"\n", 0, end) + 1 or -1
