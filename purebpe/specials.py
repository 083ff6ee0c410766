"""Special tokens: validate them and split text on them, longest match first.

Special tokens are cut out of the text before pre-tokenization, so they are never part of
a word, never counted and never merged. Where one special token is a prefix of another
(``<|endoftext|>`` and ``<|endoftext|><|endoftext|>``), the longer one wins: the
alternation is ordered longest first, and ``re`` takes the first alternative that matches.

When encoding, which special tokens a call treats as special and which it refuses is
tiktoken's ``allowed_special`` / ``disallowed_special`` policy: :class:`SpecialPolicy`.
"""

from __future__ import annotations

import re
from typing import AbstractSet, AnyStr, Collection, Dict, Iterable, List, Optional, Pattern, Tuple, Union

from .errors import PureBPEError


def check_special_tokens(special_tokens: Iterable[str]) -> Tuple[str, ...]:
    """Return the special tokens as a tuple, refusing empty, non-string or duplicate ones."""
    if isinstance(special_tokens, str):
        raise PureBPEError(f"special_tokens must be a list of strings, not the string {special_tokens!r}")
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


def special_bytes_pattern(special_tokens: Iterable[str]) -> Optional[Pattern[bytes]]:
    """:func:`special_pattern` over the tokens' UTF-8: in the UTF-8 of a text it finds the
    matches :func:`special_pattern` finds in the text (the same alternatives in the same
    order; a token's UTF-8 can only match where a character starts)."""
    tokens = sorted(set(special_tokens), key=lambda t: (-len(t), t))
    if not tokens:
        return None
    return re.compile(b"|".join(re.escape(t.encode("utf-8")) for t in tokens))


def split_on_specials(text: AnyStr, pattern: Optional[Pattern[AnyStr]]) -> List[AnyStr]:
    """The pieces of ``text`` between special tokens (the special tokens themselves dropped);
    ``text`` and ``pattern`` are both ``str`` or both ``bytes``."""
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


#: ``"all"`` or the set of special tokens to treat as special (the rest are plain text).
AllowedSpecial = Union[str, AbstractSet[str]]
#: ``"all"`` (every special token not allowed) or the special tokens whose appearance raises.
DisallowedSpecial = Union[str, Collection[str]]
#: What a call refuses: the pattern of its allowed and forbidden special tokens, and the
#: forbidden ones.
Forbidden = Tuple[Pattern[str], AbstractSet[str]]


class SpecialPolicy:
    """Which special tokens an encode call splits out as special, and which it refuses.

    ``allowed_special`` (``"all"``, or a set naming some) are encoded as their single ids;
    the others are plain text, unless ``disallowed_special`` names them (``"all"``: every
    one not allowed), and then their appearance raises. ``None`` for either takes this
    policy's default: purebpe's (all allowed, none forbidden) or tiktoken's (none allowed,
    all forbidden). Patterns are compiled once per set of allowed tokens.
    """

    def __init__(
        self,
        special_tokens: Tuple[str, ...],
        default_allowed: AllowedSpecial,
        default_disallowed: DisallowedSpecial,
    ) -> None:
        self.special_tokens = special_tokens
        #: The defaults of ``allowed_special`` and ``disallowed_special``.
        self.defaults: Tuple[AllowedSpecial, DisallowedSpecial] = (default_allowed, default_disallowed)
        self._patterns: Dict[AbstractSet[str], Optional[Pattern[str]]] = {}

    def with_defaults(
        self, default_allowed: AllowedSpecial, default_disallowed: DisallowedSpecial
    ) -> "SpecialPolicy":
        """The same special tokens with other defaults."""
        return SpecialPolicy(self.special_tokens, default_allowed, default_disallowed)

    def rules(
        self,
        allowed_special: Optional[AllowedSpecial],
        disallowed_special: Optional[DisallowedSpecial],
    ) -> Tuple[Optional[Pattern[str]], Optional[Forbidden]]:
        """The special-token split pattern of a call and what it forbids (``None``: nothing)."""
        if allowed_special is None:
            allowed_special = self.defaults[0]
        if disallowed_special is None:
            disallowed_special = self.defaults[1]
        return self.pattern(allowed_special), self._forbidden(allowed_special, disallowed_special)

    def allowed(self, allowed_special: Optional[AllowedSpecial]) -> AbstractSet[str]:
        """The special tokens ``allowed_special`` names (``None``: the default), checked."""
        if allowed_special is None:
            allowed_special = self.defaults[0]
        if allowed_special == "all":
            return frozenset(self.special_tokens)
        if isinstance(allowed_special, str) or not isinstance(allowed_special, AbstractSet):
            raise PureBPEError(
                f"allowed_special must be 'all' or a set of special tokens, not {allowed_special!r}"
            )
        unknown = sorted(allowed_special - set(self.special_tokens))
        if unknown:
            raise PureBPEError(f"allowed_special names {unknown[0]!r}, which is not a special token")
        return frozenset(allowed_special)

    def pattern(self, allowed_special: AllowedSpecial) -> Optional[Pattern[str]]:
        """The compiled special-token alternation for ``allowed_special`` (cached)."""
        allowed = self.allowed(allowed_special)
        if allowed not in self._patterns:
            self._patterns[allowed] = special_pattern(allowed)
        return self._patterns[allowed]

    def _forbidden_set(
        self, allowed: AbstractSet[str], disallowed_special: DisallowedSpecial
    ) -> AbstractSet[str]:
        """The special tokens ``disallowed_special`` forbids, checked against ``allowed``."""
        if disallowed_special == "all":
            return frozenset(self.special_tokens) - allowed
        if isinstance(disallowed_special, str) or not isinstance(
            disallowed_special, (AbstractSet, tuple, list)
        ):
            raise PureBPEError(
                "disallowed_special must be 'all' or a collection of special tokens, "
                f"not {disallowed_special!r}"
            )
        forbidden = frozenset(disallowed_special)
        unknown = sorted(forbidden - set(self.special_tokens))
        if unknown:
            raise PureBPEError(f"disallowed_special names {unknown[0]!r}, which is not a special token")
        both = sorted(forbidden & allowed)
        if both:
            raise PureBPEError(f"{both[0]!r} is both allowed and disallowed")
        return forbidden

    def _forbidden(
        self, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial
    ) -> Optional[Forbidden]:
        """What :func:`refuse_disallowed` looks for, or ``None`` when nothing is forbidden.

        The pattern matches allowed and forbidden tokens alike, longest first, as the
        split on special tokens does: a forbidden token inside a longer allowed one is not
        there, and an allowed token inside a longer forbidden one does not hide it.
        """
        if type(disallowed_special) in (tuple, list, set, frozenset) and not disallowed_special:
            return None  # the default, on every encode call: skip the validation (2.5 us)
        allowed = self.allowed(allowed_special)
        forbidden = self._forbidden_set(allowed, disallowed_special)
        if not forbidden:
            return None
        pattern = self.pattern(allowed | forbidden)
        assert pattern is not None
        return pattern, forbidden


def refuse_disallowed(text: str, forbidden: Optional[Forbidden], where: str, start: int = 0) -> None:
    """Raise if ``text`` (from index ``start`` of ``where`` on) holds a forbidden token."""
    if forbidden is None:
        return
    pattern, tokens = forbidden
    for found in pattern.finditer(text):
        if found.group() in tokens:
            raise PureBPEError(
                f"{where} holds the special token {found.group()!r} at index "
                f"{start + found.start()}, which disallowed_special forbids: pass it in "
                "allowed_special to encode it as a special token, or leave it out of "
                "disallowed_special to encode it as text"
            )
