"""Normalizers over a stream: a text given in parts, normalized as it comes, exactly.

:func:`normalizer_stream` gives, for one normalizer and one text (an HF *segment*: the
text between two added tokens, which HF normalizes as a whole), an object whose
``feed(part)`` returns the normalized text that is already certain and keeps the rest,
and whose ``finish()`` returns what is left once the text is complete (and makes it ready
for the next text).  For every way of
cutting a text into parts, the outputs joined are ``normalize_str(text)``; what is kept
is only the stretch since the last place the normalizer's own rule says is safe:

* ``Lowercase`` and ``StripAccents`` act on each character alone: nothing is kept;
* ``NFC``, ``NFD``, ``NFKC``, ``NFKD``: the text is kept from the last character before
  which the form may be cut (:meth:`.UnicodeForm.safe_before`: most characters; in a
  run of combining marks, none);
* ``Strip``: the left side strips until the first non-space character; the right side
  keeps the trailing whitespace, which is dropped if the text ends there;
* ``Prepend``: its text goes before the first non-empty part (it prepends to a
  non-empty text);
* ``Replace`` with a string of ``m`` characters: matches are found left to right,
  without overlap; every match found in what has come is final, and the last ``m - 1``
  characters after the last match are kept (a match may start there);
* ``Replace`` with a regular expression: the text is kept from the last place where no
  match can hold the two characters around it and enough characters follow
  (:mod:`.pattern_cuts`); the matches before it are taken from the whole buffer, so a
  lookahead sees what follows.  A pattern that analysis cannot read keeps everything;
* ``Sequence``: each normalizer's output is fed to the next.

>>> stream = normalizer_stream(Sequence([UnicodeForm("NFC"), Strip(True, True)]))
>>> [stream.feed(part) for part in ["  e", "\\u0301 a ", " "]] + [stream.finish()]
['', 'é a', '', '']
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional

from . import Normalizer, Sequence
from .chars import WHITESPACE
from .pattern_cuts import pattern_cuts
from .replace import Prepend, Replace
from .unicode import Lowercase, Strip, StripAccents, UnicodeForm

__all__ = ["NormalizerStream", "normalizer_stream"]


class NormalizerStream:
    """One text normalized in parts (see the module docstring); this base class is the
    fallback for a normalizer without a rule: it keeps everything until the end."""

    __slots__ = ("_normalize", "_held")

    def __init__(self, normalize: Callable[[str], str]) -> None:
        self._normalize = normalize
        self._held = ""

    def feed(self, text: str) -> str:
        """The normalized text that ``text`` (after what came before) makes certain."""
        self._held += text
        return ""

    def finish(self) -> str:
        """The rest of the normalized text, once nothing more comes (the stream is then
        ready for a new text)."""
        rest, self._held = self._held, ""
        return self._normalize(rest)

    def held(self) -> int:
        """Characters kept for now."""
        return len(self._held)


class _PerCharacter(NormalizerStream):
    """A normalizer acting on each character alone: nothing is kept."""

    __slots__ = ()

    def feed(self, text: str) -> str:
        return self._normalize(text)


class _UnicodeFormStream(NormalizerStream):
    __slots__ = ("_form",)

    def __init__(self, form: UnicodeForm) -> None:
        NormalizerStream.__init__(self, form.normalize_str)
        self._form = form

    def feed(self, text: str) -> str:
        if not text:
            return ""
        buf = self._held + text
        safe_before = self._form.safe_before
        # The kept text starts at a safe place and has none after its first character;
        # whether a place is safe depends only on the character after it.
        low = max(1, len(self._held))
        i = len(buf) - 1
        while i >= low and not safe_before(buf[i]):
            i -= 1
        if i < low:
            self._held = buf
            return ""
        self._held = buf[i:]
        return self._normalize(buf[:i])


class _StripStream(NormalizerStream):
    __slots__ = ("_left", "_right", "_started")

    def __init__(self, strip: Strip) -> None:
        NormalizerStream.__init__(self, strip.normalize_str)
        self._left = strip.left
        self._right = strip.right
        self._started = not strip.left

    def feed(self, text: str) -> str:
        if not self._started:
            start = 0
            while start < len(text) and text[start] in WHITESPACE:
                start += 1
            text = text[start:]
            self._started = bool(text)
        if not self._right:
            return text
        buf = self._held + text
        end = len(buf)
        while end > 0 and buf[end - 1] in WHITESPACE:
            end -= 1
        self._held = buf[end:]
        return buf[:end]

    def finish(self) -> str:
        self._held = ""  # trailing whitespace, stripped (only held when stripping right)
        self._started = not self._left
        return ""


class _PrependStream(NormalizerStream):
    __slots__ = ("_prepend", "_started")

    def __init__(self, prepend: Prepend) -> None:
        NormalizerStream.__init__(self, prepend.normalize_str)
        self._prepend = prepend.prepend
        self._started = False

    def feed(self, text: str) -> str:
        if text and not self._started:
            self._started = True
            return self._prepend + text
        return text

    def finish(self) -> str:
        self._started = False
        return ""


class _StringReplaceStream(NormalizerStream):
    __slots__ = ("_source", "_content")

    def __init__(self, replace: Replace) -> None:
        NormalizerStream.__init__(self, replace.normalize_str)
        self._source = replace.pattern.source
        self._content = replace.content

    def feed(self, text: str) -> str:
        buf = self._held + text
        source = self._source
        width = len(source)
        keep = len(buf) - width + 1  # a match starting here or later may need more text
        if width > 1:
            at = buf.find(source)
            while 0 <= at < keep:
                keep = max(keep, at + width)  # a match found is final: keep none of it
                at = buf.find(source, at + width)
        keep = max(keep, 0)
        self._held = buf[keep:]
        return buf[:keep].replace(source, self._content)


class _RegexReplaceStream(NormalizerStream):
    __slots__ = ("_replace", "_checked")

    def __init__(self, replace: Replace) -> None:
        NormalizerStream.__init__(self, replace.normalize_str)
        self._replace = replace
        self._checked = 0  # places up to here were found unsafe (a property of the pair)

    def feed(self, text: str) -> str:
        buf = self._held + text
        cuts = pattern_cuts(self._replace.pattern)
        spans = cuts.spans
        low = max(1, self._checked + 1)
        cut = len(buf) - cuts.margin
        while cut >= low and spans(buf[cut - 1], buf[cut]):
            cut -= 1
        if cut < low:
            self._held = buf
            self._checked = max(self._checked, len(buf) - cuts.margin)
            return ""
        parts: List[str] = []
        done = 0
        content = self._replace.content
        for start, end in self._replace.pattern.spans(buf):
            if start >= cut:
                break
            parts.append(buf[done:start])
            parts.append(content)
            done = end
        parts.append(buf[done:cut])
        self._held = buf[cut:]
        self._checked = 0
        return "".join(parts)

    def finish(self) -> str:
        self._checked = 0
        return NormalizerStream.finish(self)


class _SequenceStream(NormalizerStream):
    __slots__ = ("_streams",)

    def __init__(self, streams: List[NormalizerStream]) -> None:
        NormalizerStream.__init__(self, str)
        self._streams = streams

    def feed(self, text: str) -> str:
        for stream in self._streams:
            text = stream.feed(text)
        return text

    def finish(self) -> str:
        text = ""
        for stream in self._streams:
            text = stream.feed(text) + stream.finish() if text else stream.finish()
        return text

    def held(self) -> int:
        return sum(stream.held() for stream in self._streams)


def normalizer_stream(normalizer: Optional[Normalizer]) -> NormalizerStream:
    """A fresh :class:`NormalizerStream` of ``normalizer`` (``None``: the identity).

    >>> stream = normalizer_stream(Replace({"String": "ab"}, "X"))
    >>> stream.feed("xa"), stream.feed("bab"), stream.finish()
    ('x', 'XX', '')
    """
    if normalizer is None:
        return _PerCharacter(str)
    if isinstance(normalizer, Sequence):
        return _SequenceStream([normalizer_stream(n) for n in normalizer.normalizers])
    if isinstance(normalizer, (Lowercase, StripAccents)):
        return _PerCharacter(normalizer.normalize_str)
    if isinstance(normalizer, UnicodeForm):
        return _UnicodeFormStream(normalizer)
    if isinstance(normalizer, Strip):
        return _StripStream(normalizer)
    if isinstance(normalizer, Prepend):
        return _PrependStream(normalizer)
    if isinstance(normalizer, Replace):
        pattern = normalizer.pattern
        if pattern.kind == "String" and pattern.source:
            return _StringReplaceStream(normalizer)
        if pattern_cuts(pattern).usable:
            return _RegexReplaceStream(normalizer)
    normalize: Any = normalizer.normalize_str
    return NormalizerStream(normalize)
