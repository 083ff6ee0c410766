"""HF's added vocabulary: the ``added_tokens`` of a ``tokenizer.json`` and how they are found.

As ``tokenizers/src/tokenizer/added_vocabulary.rs`` does it (read as the spec):

* tokens with ``normalized: false`` are found in the *raw* text first; then each stretch
  between them is normalized, and tokens with ``normalized: true`` are found in the
  normalized text (spelled as the normalizer spells them);
* each search is leftmost-longest and non-overlapping (an Aho-Corasick automaton in HF;
  here :func:`purebpe.specials.special_pattern`, an alternation longest first, which finds
  the same matches);
* a match of a ``single_word`` token with a word character (Rust's ``\\w``) right before
  or after it is dropped, and the search goes on *after* it, as HF's iterator does;
* ``lstrip`` widens a match over the whitespace before it (not into a previous match),
  ``rstrip`` over the whitespace after it; the token's text and offsets include it.

Whitespace and word characters follow Rust's ``regex`` (Unicode ``White_Space``;
``\\w`` = letters, marks, decimal digits, connector punctuation, joiners), not Python's.
"""

from __future__ import annotations

import unicodedata
from typing import Any, Callable, Dict, List, Mapping, Optional, Pattern, Sequence, Tuple

from ..errors import PureBPEError
from ..normalizers.chars import WHITESPACE
from ..specials import special_pattern

__all__ = ["AddedToken", "AddedVocabulary", "Match"]

#: ``(id or None, start, end)``: a found token, or (``None``) the text between tokens.
Match = Tuple[Optional[int], int, int]

_WORD_CATEGORIES = frozenset(["Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "Pc"])


def is_word_char(char: str) -> bool:
    """Whether Rust's ``\\w`` matches ``char``.

    >>> is_word_char("a"), is_word_char("\u0301"), is_word_char("-")
    (True, True, False)
    """
    return char in "\u200c\u200d" or unicodedata.category(char) in _WORD_CATEGORIES


class AddedToken:
    """One entry of ``added_tokens``.

    >>> AddedToken.from_json({"id": 3, "content": "<s>", "special": True}).normalized
    True
    """

    __slots__ = ("id", "content", "special", "normalized", "lstrip", "rstrip", "single_word")

    def __init__(
        self,
        id: int,
        content: str,
        special: bool = False,
        normalized: bool = True,
        lstrip: bool = False,
        rstrip: bool = False,
        single_word: bool = False,
    ) -> None:
        self.id = id
        self.content = content
        self.special = special
        self.normalized = normalized
        self.lstrip = lstrip
        self.rstrip = rstrip
        self.single_word = single_word

    @classmethod
    def from_json(cls, obj: Any) -> "AddedToken":
        if not isinstance(obj, dict):
            raise PureBPEError(f"added token {obj!r} is not an object")
        tid, content = obj.get("id"), obj.get("content")
        if not isinstance(tid, int) or isinstance(tid, bool) or not 0 <= tid < 1 << 31:
            raise PureBPEError(f"added token {content!r} has the id {tid!r}, not an int in 0..2**31")
        if not isinstance(content, str):
            raise PureBPEError(f"added token {tid} has the content {content!r}, not a string")
        flags: Dict[str, bool] = {}
        for key, default in (
            ("special", False),
            ("normalized", True),
            ("lstrip", False),
            ("rstrip", False),
            ("single_word", False),
        ):
            value = obj.get(key, default)
            if not isinstance(value, bool):
                raise PureBPEError(f"added token {content!r}: {key} is {value!r}, not true or false")
            flags[key] = value
        return cls(tid, content, **flags)

    def to_json(self) -> Dict[str, Any]:
        return {
            "id": self.id,
            "content": self.content,
            "single_word": self.single_word,
            "lstrip": self.lstrip,
            "rstrip": self.rstrip,
            "normalized": self.normalized,
            "special": self.special,
        }


class AddedVocabulary:
    """The added tokens and their two matchers (raw text, normalized text).

    ``normalize_str`` is the pipeline's normalizer (``None`` for none): a normalized token
    is looked for as the normalizer spells it.

    >>> vocab = AddedVocabulary([AddedToken(9, "<s>", special=True, normalized=False)], None)
    >>> vocab.find(" <s>x", raw=True)
    [(None, 0, 1), (9, 1, 4), (None, 4, 5)]
    """

    def __init__(self, tokens: Sequence[AddedToken], normalize_str: Optional[Callable[[str], str]]) -> None:
        self.by_content: Dict[str, int] = {}
        self.by_id: Dict[int, AddedToken] = {}
        self.special_contents = set()
        for token in tokens:
            if not token.content:
                continue  # HF ignores an empty added token
            self.by_content[token.content] = token.id
            self.by_id[token.id] = token
            if token.special:
                self.special_contents.add(token.content)
        # The string HF hands the decoder for a normalized token (its normalized form).
        self.decode_form: Dict[int, str] = {}
        raw: Dict[str, AddedToken] = {}
        normalized: Dict[str, AddedToken] = {}
        for tid, token in self.by_id.items():
            if token.normalized:
                form = token.content if normalize_str is None else normalize_str(token.content)
                if form != token.content:
                    self.decode_form[tid] = form
                if form:
                    normalized[form] = token
            else:
                raw[token.content] = token
        self._raw = raw
        self._normalized = normalized
        self._raw_pattern = special_pattern(raw)
        self._normalized_pattern = special_pattern(normalized)
        self._shapes: Dict[bool, Tuple[int, bool]] = {}

    def __len__(self) -> int:
        return len(self.by_id)

    @property
    def has_raw(self) -> bool:
        return self._raw_pattern is not None

    @property
    def has_normalized(self) -> bool:
        return self._normalized_pattern is not None

    def find(self, text: str, raw: bool) -> List[Match]:
        """``text`` cut into found tokens and the stretches between them (empty ones left out)."""
        pattern = self._raw_pattern if raw else self._normalized_pattern
        tokens = self._raw if raw else self._normalized
        return find_tokens(text, pattern, tokens)

    def stream(self, raw: bool) -> Optional["TokenStream"]:
        """A :class:`TokenStream` over the raw (``raw``) or normalized tokens; ``None`` if none."""
        pattern = self._raw_pattern if raw else self._normalized_pattern
        if pattern is None:
            return None
        tokens = self._raw if raw else self._normalized
        shape = self._shapes.get(raw)
        if shape is None:
            # The longest token, and whether one strips on its left: computed once.
            shape = self._shapes[raw] = (max(map(len, tokens)), any(t.lstrip for t in tokens.values()))
        return TokenStream(pattern, tokens, *shape)


def _stands_alone(text: str, start: int, stop: int, before: str) -> bool:
    """Whether the match ``text[start:stop]`` touches no word character on either side
    (``single_word``); ``before`` is the character before ``text``, if it continues one.

    >>> _stands_alone("a <s>", 2, 5, ""), _stands_alone("a<s>", 1, 4, "")
    (True, False)
    """
    previous = text[start - 1] if start > 0 else before
    if previous and is_word_char(previous):
        return False
    return stop >= len(text) or not is_word_char(text[stop])


def _stripped(token: AddedToken, text: str, start: int, stop: int, done: int) -> Tuple[int, int]:
    """The match ``text[start:stop]`` widened over the whitespace its token strips
    (``lstrip``, not back past ``done``, where the previous token ended; ``rstrip``).

    >>> _stripped(AddedToken(0, "<s>", lstrip=True, rstrip=True), "a  <s> b", 3, 6, 0)
    (1, 7)
    """
    if token.lstrip:
        while start > done and text[start - 1] in WHITESPACE:
            start -= 1
    if token.rstrip:
        while stop < len(text) and text[stop] in WHITESPACE:
            stop += 1
    return start, stop


def find_tokens(
    text: str, pattern: Optional[Pattern[str]], tokens: Mapping[str, AddedToken], before: str = ""
) -> List[Match]:
    """HF's ``find_matches`` (see the module docstring), in character offsets; ``before``
    is the character before ``text`` (for ``single_word``), if ``text`` continues one."""
    if pattern is None:
        return [(None, 0, len(text))] if text else []
    out: List[Match] = []
    done = 0  # where the previous token ended
    for match in pattern.finditer(text):
        start, stop = match.span()
        token = tokens[match.group()]
        if token.single_word and not _stands_alone(text, start, stop, before):
            continue
        start, stop = _stripped(token, text, start, stop, done)
        if done < start:
            out.append((None, done, start))
        out.append((token.id, start, stop))
        done = stop
    if done < len(text):
        out.append((None, done, len(text)))
    return out


#: An event of :class:`TokenStream`: ``(token id, its text)``, or ``(None, text)`` between tokens.
Found = Tuple[Optional[int], str]


class TokenStream:
    """:func:`find_tokens` over a text given in parts: ``feed(part)`` returns what is
    certain, in order, and keeps the rest; ``finish()`` the rest once the text ends.

    A match starting at ``p`` is certain once the text holds the ``L + 1`` characters
    from ``p`` (``L``: the longest token): the leftmost-longest choice at ``p`` reads
    ``L`` of them, ``single_word`` the one after (and the one before, kept as context),
    and every earlier place was already decided.  ``rstrip`` then needs the whitespace
    after the token to end before the buffer does.  Text before the next place a match
    may start is certain plain text, except a whitespace run right before it when some
    token strips on its left (that run may join the token), and except inside a dropped
    ``single_word`` match (the search skips past it: it is kept whole and found again).
    So at most ``L + 1`` characters are kept, plus such whitespace.

    >>> vocab = AddedVocabulary([AddedToken(9, "<s>", special=True, normalized=False)], None)
    >>> stream = vocab.stream(raw=True)
    >>> stream.feed("ab<"), stream.feed("s>cdefgh"), stream.finish()
    ([], [(None, 'ab'), (9, '<s>'), (None, 'cde')], [(None, 'fgh')])
    """

    __slots__ = ("_pattern", "_tokens", "_longest", "_lstrip", "_held", "_before")

    def __init__(
        self, pattern: Pattern[str], tokens: Mapping[str, AddedToken], longest: int, lstrip: bool
    ) -> None:
        self._pattern = pattern
        self._tokens = tokens
        self._longest = longest  # the longest token's length
        self._lstrip = lstrip  # whether some token strips whitespace on its left
        self._held = ""
        self._before = ""  # the character before the kept text

    def held(self) -> int:
        return len(self._held)

    def feed(self, text: str) -> List[Found]:
        buf = self._held + text
        tokens = self._tokens
        limit = len(buf) - self._longest - 1  # matches starting up to here are certain
        out: List[Found] = []
        done = 0
        certain = limit + 1  # where plain text stops being certain
        dropped = (0, 0)
        for match in self._pattern.finditer(buf):
            start, stop = match.span()
            if start > limit:
                break
            token = tokens[match.group()]
            if token.single_word and not _stands_alone(buf, start, stop, self._before):
                dropped = (start, stop)
                continue
            start, stop = _stripped(token, buf, start, stop, done)
            if token.rstrip and stop == len(buf):
                certain = start  # more whitespace may follow
                break
            if done < start:
                out.append((None, buf[done:start]))
            out.append((token.id, buf[start:stop]))
            done = stop
        if dropped[0] < certain < dropped[1]:
            certain = dropped[0]
        if self._lstrip:
            while certain > done and buf[certain - 1] in WHITESPACE:
                certain -= 1
        if certain > done:
            out.append((None, buf[done:certain]))
            done = certain
        if done > 0:
            self._before = buf[done - 1]
        self._held = buf[done:]
        return out

    def finish(self) -> List[Found]:
        """The rest, once the text ends (the stream is then ready for a new text)."""
        text, self._held = self._held, ""
        found = find_tokens(text, self._pattern, self._tokens, self._before)
        self._before = ""
        return [(tid, text[start:end]) for tid, start, end in found]
