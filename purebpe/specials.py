"""Special tokens: validate them and split text on them, longest match first.

Special tokens are cut out of the text before pre-tokenization, so they are never part of
a word, never counted and never merged. Where one special token is a prefix of another
(``<|endoftext|>`` and ``<|endoftext|><|endoftext|>``), the longer one wins: the
alternation is ordered longest first, and ``re`` takes the first alternative that matches.
"""
from __future__ import annotations

import re
from typing import Iterable, List, Optional, Pattern, Tuple

from .errors import PureBPEError


def check_special_tokens(special_tokens: Iterable[str]) -> Tuple[str, ...]:
    """Return the special tokens as a tuple, refusing empty, non-string or duplicate ones."""
    if isinstance(special_tokens, str):
        raise PureBPEError(
            f"special_tokens must be a list of strings, not the string {special_tokens!r}"
        )
    tokens = tuple(special_tokens)
    seen = set()
    for token in tokens:
        if not isinstance(token, str) or not token:
            raise PureBPEError(f"special token {token!r} must be a non-empty string")
        try:
            token.encode("utf-8")
        except UnicodeEncodeError:
            raise PureBPEError(
                f"special token {token!r} is not valid Unicode (a lone surrogate; on the "
                "command line, bytes that are not UTF-8)"
            ) from None
        if token in seen:
            raise PureBPEError(f"special token {token!r} is given twice")
        seen.add(token)
    return tokens


def special_pattern(special_tokens: Iterable[str]) -> Optional[Pattern[str]]:
    """A compiled alternation of the special tokens, longest first; ``None`` when there are none."""
    tokens = sorted(set(special_tokens), key=lambda t: (-len(t), t))
    if not tokens:
        return None
    return re.compile("|".join(re.escape(t) for t in tokens))


def split_on_specials(text: str, pattern: Optional[Pattern[str]]) -> List[str]:
    """The pieces of ``text`` between special tokens (the special tokens themselves dropped)."""
    if pattern is None:
        return [text]
    return pattern.split(text)


def split_keep_specials(text: str, pattern: Optional[Pattern[str]]) -> List[Tuple[str, bool]]:
    """``text`` as ``(piece, is_special)`` pairs in order, empty ordinary pieces left out."""
    if pattern is None:
        return [(text, False)] if text else []
    parts: List[Tuple[str, bool]] = []
    start = 0
    for match in pattern.finditer(text):
        if match.start() > start:
            parts.append((text[start : match.start()], False))
        parts.append((match.group(), True))
        start = match.end()
    if start < len(text):
        parts.append((text[start:], False))
    return parts
