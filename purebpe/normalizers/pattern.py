"""The patterns of ``tokenizer.json`` files: ``{"String": ...}`` or ``{"Regex": ...}``.

``Replace`` (normalizer and decoder) and the ``Split`` pre-tokenizer share HF's
``find_matches``: the text cut into stretches, each flagged as a match or not, covering the
whole text in order.  Offsets here are character offsets.

A ``String`` pattern is found with ``str.find`` (HF escapes it into a regular expression,
which finds the same leftmost non-overlapping occurrences).  A ``Regex`` pattern goes through
:mod:`purebpe.pretokenize`: a string that is one of the named patterns runs on that pattern's
fast splitter (every one of their pieces is a match: the named patterns match every
character), anything else is compiled by the optional ``regex`` package and searched
within a time budget (:func:`purebpe.pretokenize.custom.bounded_finditer`: a pattern from a
file is untrusted input); one that gives up names the file being read when the pattern was
built (:func:`patterns_from`, which :mod:`purebpe.hf.loader` sets).

HF compiles its regexes with Oniguruma in Ruby syntax.  :func:`regex_source` rewrites
one into ``regex`` syntax with the same meaning (the named-pattern check is made on the
rewritten string): the constructs real files use (``\\p{L}``, ``\\p{N}``, ``(?i:...)``,
``\\s+(?!\\S)``, character ranges, ``[\\r\\n]``, POSIX brackets) mean the same in both; an
interval followed by ``+``, a class in a class, ``^``/``$``, ``\\w`` and its spellings
(``\\p{Word}``, ``[[:word:]]``, in a class too), ``\\b``/``\\B``, ``\\h``, ``\\Z``, ``{,n}``
do not and are rewritten.  Matches are found as Oniguruma's iterator (the ``onig`` crate's
``find_iter``) finds them, not as ``regex``'s ``finditer`` does (:func:`oniguruma_spans`).
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from .. import pretokenize
from ..errors import PureBPEError
from ..pretokenize import custom
from ..pretokenize.re_forms import re_finditer

#: A stretch of text ``(start, end, is_match)``.
Match = Tuple[int, int, bool]

#: The file the patterns built now come from (:func:`patterns_from`).
_ORIGIN: "ContextVar[str]" = ContextVar("purebpe_pattern_origin", default="")


@contextmanager
def patterns_from(origin: str) -> Iterator[None]:
    """Patterns built inside this block name ``origin`` when their search gives up."""
    token = _ORIGIN.set(origin)
    try:
        yield
    finally:
        _ORIGIN.reset(token)


def named_pattern(source: str) -> Optional[str]:
    """The name of the named pattern ``source`` (``regex`` syntax) is, for
    :mod:`purebpe.pretokenize`, or None."""
    if source.startswith("(?m)"):
        body = source[4:]
        # "\s++$" can only end where the text ends: the possessive run eats every newline,
        # so a line anchor there is an end anchor (tiktoken's gpt2 string has one).
        if "^" not in body.replace("[^", "[") and body.count("$") == body.count("\\s++$"):
            source = body
    resolved: object = next((name for name, pat in pretokenize.PATTERNS.items() if pat == source), None)
    if resolved is None:
        try:
            # The pattern machinery also knows variants of the named patterns.
            resolved = pretokenize.check_pretokenizer(pretokenize.Pattern(source))
        except PureBPEError:
            resolved = None
    if not isinstance(resolved, str) or resolved == "none":
        return None
    return resolved


#: Oniguruma's word characters, as the body of a ``regex`` class: letters, marks, decimal
#: digits and connector punctuation (``regex``'s ``\\w`` adds ZWJ and ZWNJ); outside a
#: class ²³¹¼½¾ too, inside one not (HF's answers on "a²b ½c_d").
_CLASS_WORD = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}"
_WORD = _CLASS_WORD + "\\xb2\\xb3\\xb9\\xbc-\\xbe"
#: Escapes outside classes whose Oniguruma (Ruby syntax, Unicode) meaning ``regex`` spells
#: differently: ``\h`` is a hex digit, ``\w`` and ``\b`` go by the word characters above,
#: ``\Z`` allows a final newline, ``\z`` is the very end, ``\N`` is no newline.
_ESCAPES: Dict[str, str] = {
    "\\h": "[0-9a-fA-F]",
    "\\H": "[^0-9a-fA-F]",
    "\\w": f"[{_WORD}]",
    "\\W": f"[^{_WORD}]",
    "\\p{Word}": f"[{_WORD}]",
    "\\P{Word}": f"[^{_WORD}]",
    # Word boundaries by Oniguruma's word characters, not ``regex``'s.
    "\\b": f"(?:(?<=[{_WORD}])(?![{_WORD}])|(?<![{_WORD}])(?=[{_WORD}]))",
    "\\B": f"(?:(?<=[{_WORD}])(?=[{_WORD}])|(?<![{_WORD}])(?![{_WORD}]))",
    "\\Z": "(?=\\n?\\Z)",
    "\\z": "\\Z",
    "\\N": "[^\\n]",
}
#: Escapes with no ``regex`` spelling of the same meaning: refused in one line.
_UNSUPPORTED_ESCAPES = {
    "\\G": "\\G (where the search started)",
    # Oniguruma's iterator goes on a character past a match that \K left empty.
    "\\K": "\\K (keep what was matched out of the match)",
}
#: An inline option group: Ruby's ``m`` is ``regex``'s ``s`` (a dot takes a newline), and
#: Ruby has no ``s``.
_OPTIONS = re.compile(r"\(\?([imx]*)(?:-([imx]*))?([:)])")
#: Any other group that starts with a letter: an option Ruby syntax does not have (HF
#: refuses ``(?s)``, ``(?P<name>...)``) or one of Oniguruma's own (``(?W)``: ASCII
#: ``\\w``, ``(?L)``: the longest match...), which ``regex`` reads otherwise or not at all.
_OTHER_OPTIONS = re.compile(r"\(\?[A-Za-z][^:)]*[:)]?")
#: Letters that fold differently in Oniguruma, outside classes where case is ignored:
#: ``regex`` also takes the dotted and dotless I of Turkish for i and I.
_CASELESS_LETTERS = {
    "i": "(?-i:[iI])",
    "I": "(?-i:[iI])",
    "\u0131": "(?-i:\u0131)",
    "\u0130": "(?-i:\u0130|[iI]\u0307)",
}
#: The same inside a class: ``\w`` and its spellings add the word characters; ``\W`` a
#: nested negated class (``regex`` reads it in VERSION1 mode).
_CLASS_ESCAPES: Dict[str, str] = {
    "\\w": _CLASS_WORD,
    "\\p{Word}": _CLASS_WORD,
    "[:word:]": _CLASS_WORD,
    "\\W": f"[^{_CLASS_WORD}]",
    "\\P{Word}": f"[^{_CLASS_WORD}]",
    # POSIX digits are every decimal digit in Oniguruma (Unicode), ASCII ones in ``regex``.
    "[:digit:]": "\\p{Nd}",
    "[:^digit:]": "[^\\p{Nd}]",
    "[:alnum:]": "[:alpha:]\\p{Nd}",
    "[:^alnum:]": "[^[:alpha:]\\p{Nd}]",
    # POSIX punctuation is every punctuation and symbol character in Oniguruma; ``regex``
    # leaves out symbols that are also letters (the circled letters, U+24B6...).
    "[:punct:]": "\\p{P}\\p{S}",
    "[:^punct:]": "[^\\p{P}\\p{S}]",
}

#: ``{m,n}`` and its forms, in ASCII digits only: Oniguruma reads ``{,١}`` as text.
_INTERVAL = re.compile(r"\{([0-9]*)(,[0-9]*)?\}")


#: The most hexadecimal digits of ``\\xHH``, ``\\uHHHH`` and (``regex``) ``\\UHHHHHHHH``.
_HEX_DIGITS = {"x": 2, "u": 4, "U": 8}


def _escape_end(source: str, i: int) -> int:
    """The end of the escape sequence starting with the backslash at ``i``."""
    if i + 1 >= len(source):
        return len(source)
    kind = source[i + 1]
    if kind in "pPxokgN" and i + 2 < len(source) and source[i + 2] in "{<":
        close = source.find("}" if source[i + 2] == "{" else ">", i + 3)
        return close + 1 if close >= 0 else len(source)
    digits = _HEX_DIGITS.get(kind)
    if digits is not None:
        end = i + 2
        while end < len(source) and end < i + 2 + digits and source[end] in "0123456789abcdefABCDEF":
            end += 1
        return end
    if kind in "pPc":
        return min(i + 3, len(source))
    if kind == "C" and source.startswith("-", i + 2):
        return min(i + 4, len(source))
    return i + 2


def _char_escape(escape: str, source: str) -> Optional[str]:
    """``regex``'s spelling of a character escape that Ruby syntax spells its own way
    (``\\x{e9}``, ``\\o{351}``, ``\\e``, ``\\cA``, ``\\C-a``), or None for any other escape."""
    if escape.startswith(("\\x{", "\\o{")) and escape.endswith("}"):
        try:
            code = int(escape[3:-1], 16 if escape[1] == "x" else 8)
        except ValueError:
            return None
        if code > 0x10FFFF or 0xD800 <= code < 0xE000:
            raise PureBPEError(f"pattern {source!r}: {escape} is no character")
        return f"\\U{code:08x}"
    if escape == "\\e":
        return "\\x1b"
    if (len(escape) == 3 and escape[1] == "c") or (len(escape) == 4 and escape.startswith("\\C-")):
        control = escape[-1]
        return "\\x7f" if control == "?" else f"\\x{ord(control) & 0x1F:02x}"
    return None


def _class_item_end(source: str, j: int) -> int:
    """The end of the escape or POSIX bracket (``[:alpha:]``) at ``j`` inside a class, or
    ``j`` itself where neither starts there."""
    if source[j] == "\\":
        return _escape_end(source, j)
    if source.startswith("[:", j):
        close = source.find(":]", j + 2)
        return close + 2 if close >= 0 else len(source)
    return j


def _class_end(source: str, i: int) -> Tuple[int, bool]:
    """The end of the character class opening at ``i``, and whether it nests a class or
    intersects (``&&``), which ``regex`` reads only in VERSION1 mode."""
    n = len(source)
    j = i + 1
    if source.startswith("^", j):
        j += 1
    if source.startswith("]", j):
        j += 1  # a "]" first in a class is a literal
    depth = 1
    nested = False
    while j < n:
        end = _class_item_end(source, j)
        if end > j:
            j = end
            continue
        char = source[j]
        if char == "[":
            nested = True
            depth += 1
        elif source.startswith("&&", j):
            nested = True
        elif char == "]":
            depth -= 1
            if depth == 0:
                return j + 1, nested
        j += 1
    return n, nested


def _class_source(text: str, source: str) -> Tuple[str, bool]:
    """A class's text (in the pattern ``source``, which errors name) with Oniguruma's word
    characters and Ruby's character escapes spelled as ``regex`` spells them
    (``_CLASS_ESCAPES``, :func:`_char_escape`), and whether it now nests a negated class."""
    out: List[str] = []
    nested = False
    j = 0
    while j < len(text):
        end = max(_class_item_end(text, j), j + 1)
        piece = text[j:end]
        spelled = _CLASS_ESCAPES.get(piece) or _char_escape(piece, source) or piece
        nested = nested or spelled.startswith("[^")
        out.append(spelled)
        j = end
    return "".join(out), nested


def regex_source(source: str) -> str:
    r"""``source`` (Oniguruma, Ruby syntax, as HF compiles it) as ``regex`` reads it the same way.

    Two constructs real files can hold mean something else in ``regex``:

    * an interval followed by ``+``: possessive in ``regex``, but in Oniguruma's Ruby
      syntax a repetition of the interval (``\p{N}{1,3}+`` is ``(?:\p{N}{1,3})+``: any
      run of digits).  tiktoken's own cl100k string has one, so that string in a
      ``tokenizer.json`` is *not* cl100k for HF;
    * a class inside a class (``[^(\s|[.,!?])]``, BLOOM's pattern) and ``&&``: read only
      in ``regex``'s VERSION1 mode, so such a pattern gets ``(?V1)``.

    ``{,n}`` becomes ``{0,n}``; ``^``/``$`` are line anchors in Ruby syntax (``(?m)``),
    and ``^`` is none after a newline that ends the text; ``\h``, ``\w``, ``\b``, ``\Z``,
    ``\z`` outside classes and ``\w`` inside them are spelled out (``_ESCAPES``,
    ``_CLASS_ESCAPES``). An option setting (``a(?i)b|c``) lasts to the end of its group,
    alternatives included (``a(?i:b|c)``); where case is ignored, a property (``\p{Lu}``)
    still heeds it and i is not Turkish (``_CASELESS_LETTERS``). Ruby's character escapes
    (``\x{e9}``, ``\e``, ``\cA``...) become ``regex``'s; an option group Ruby syntax lacks
    (``(?s)``) or Oniguruma reads its own way (``(?W)``) is refused. Not followed:
    Oniguruma's full case folding (``(?i)ss`` also matches ``ß``), and Turkish i inside
    classes.

    >>> print(regex_source(r"[^(\s|[.,])]+"))
    (?V1)[^(\s|[.,])]+
    >>> print(regex_source(r"\p{N}{1,3}+|(ab){2}+|x{,2}"))
    (?:\p{N}{1,3})+|(?:(ab){2})+|x{0,2}
    >>> print(regex_source(r"[[:alpha:]\]]+ ?[^\s]++"))
    [[:alpha:]\]]+ ?[^\s]++
    """
    out: List[str] = []
    groups: List[int] = []  # where each open group starts in ``out``
    atom = -1  # where the last complete atom starts in ``out``
    # Whether case is ignored here; for each open group, whether it was ignored before the
    # group, and the option settings without a group (``a(?i)b``) met in it, each the
    # start of a group up to the group's end (Ruby syntax: ``ab(?i)c|d`` is ``ab(?i:c|d)``).
    caseless = False
    scopes: List[Tuple[bool, int]] = []
    settings = 0  # option settings met at the top level, outside any group
    nested = False
    anchors = False
    i = 0
    n = len(source)
    while i < n:
        char = source[i]
        if char == "\\":
            end = _escape_end(source, i)
            atom = len(out)
            escape = source[i:end]
            if escape in _UNSUPPORTED_ESCAPES:
                raise PureBPEError(f"pattern {source!r}: {_UNSUPPORTED_ESCAPES[escape]} is not supported")
            spelled = _ESCAPES.get(escape) or _char_escape(escape, source) or escape
            if caseless and spelled[1:2] in ("p", "P"):
                spelled = "(?-i:" + spelled + ")"  # Oniguruma ignores case in no property
            out.append(spelled)
            i = end
            continue
        if char in "^$":
            anchors = True
        if char == "[":
            end, inner = _class_end(source, i)
            body, negated_word = _class_source(source[i:end], source)
            nested = nested or inner or negated_word
            atom = len(out)
            out.append(body)
            i = end
            continue
        if char == "^":
            # A line start, but not after a newline that ends the text (Oniguruma).
            atom = len(out)
            out.append("(?:\\A|^(?!\\Z))")
            i += 1
            continue
        if char == "(":
            options = _OPTIONS.match(source, i)
            other = None if options is not None else _OTHER_OPTIONS.match(source, i)
            if other is not None:
                raise PureBPEError(
                    f"pattern {source!r}: the option group {other.group()} is not supported "
                    "(Oniguruma's Ruby syntax, which HF reads, has the options i, m and x)"
                )
            if options is None:
                groups.append(len(out))
                scopes.append((caseless, 0))
                out.append(char)
                i += 1
                continue
            on, off, close = options.group(1), options.group(2), options.group(3)
            spelled = "(?" + on.replace("m", "s")
            spelled += "" if off is None else "-" + off.replace("m", "s")
            if close == ":":
                groups.append(len(out))
                scopes.append((caseless, 0))
            elif scopes:  # a setting: a group up to the end of the one it stands in
                before, count = scopes[-1]
                scopes[-1] = (before, count + 1)
            else:
                settings += 1
            caseless = ("i" in on or caseless) and "i" not in (off or "")
            out.append(spelled + ":")
            i = options.end()
            continue
        if char == ")":
            if scopes:
                caseless, count = scopes.pop()
                out.append(")" * count)
            atom = groups.pop() if groups else len(out)
            out.append(char)
            i += 1
            continue
        if char == "{":
            interval = _INTERVAL.match(source, i)
            if interval is not None and atom >= 0:
                low, high = interval.group(1), interval.group(2)
                if low == "" and high is not None:
                    out.append("{0" + high + "}")
                else:
                    out.append(interval.group())
                i = interval.end()
                # Ruby syntax: X{m,n}+ repeats X{m,n}, and X{n}? (a fixed count) is optional.
                if source.startswith("+", i) or (source.startswith("?", i) and high is None):
                    out.insert(atom, "(?:")
                    out.append(")" + source[i])
                    i += 1
                continue
        if char in "*+?":
            out.append(char)
            i += 1
            continue
        atom = len(out)
        if caseless:
            char = _CASELESS_LETTERS.get(char, char)
        out.append(char)
        i += 1
    out.append(")" * settings)  # the groups of the settings at the top level
    translated = "".join(out)
    if anchors:
        translated = "(?m)" + translated  # Ruby syntax: ^ and $ are line anchors
    return "(?V1)" + translated if nested else translated


def oniguruma_spans(finditer: Callable[..., Iterator[Any]], text: str) -> List[Tuple[int, int]]:
    """The ``(start, end)`` of the matches Oniguruma's iterator finds in ``text``, given a
    ``finditer(text, pos, timeout)`` of the pattern (:func:`.custom.bounded_finditer`).

    Both iterators search again where a non-empty match ended. After an empty match they
    differ: ``regex`` looks for a non-empty match at the same place (``a*?`` on ``"aa"``:
    ``(0, 0), (0, 1), (1, 1), ...``), Oniguruma searches again one character on (``(0, 0),
    (1, 1), (2, 2)``) and skips an empty match where the previous match ended. So
    ``regex``'s ``finditer`` is followed up to its first empty match, and started again a
    character after each empty match; every search shares the text's time budget.

    >>> from purebpe.pretokenize.custom import bounded_finditer
    >>> oniguruma_spans(bounded_finditer("a*?"), "aa")    # doctest: +SKIP
    [(0, 0), (1, 1), (2, 2)]
    >>> oniguruma_spans(bounded_finditer("x*"), "axxb")    # doctest: +SKIP
    [(0, 0), (1, 3), (4, 4)]
    """
    found: List[Tuple[int, int]] = []
    deadline = time.monotonic() + custom.regex_budget(len(text))
    pos = 0
    last_end = -1
    timeout = None
    while True:
        for match in finditer(text, pos, timeout):
            start, end = match.span()
            if start == end:
                if end != last_end:
                    found.append((start, end))
                last_end = end
                pos = end + 1
                break
            found.append((start, end))
            last_end = end
        else:
            return found
        if pos > len(text):
            return found
        # What is left of the text's budget (a search given no time would not start).
        timeout = max(deadline - time.monotonic(), 1e-3)


class HFPattern:
    """A ``tokenizer.json`` pattern, able to give HF's ``find_matches``.

    >>> HFPattern({"String": "ab"}).find_matches("xabyab")
    [(0, 1, False), (1, 3, True), (3, 4, False), (4, 6, True)]
    """

    __slots__ = ("kind", "source", "name", "_split", "_finditer", "_search", "cuts")

    def __init__(self, obj: Mapping[str, Any], where: str = "pattern") -> None:
        if not isinstance(obj, Mapping) or len(obj) != 1:
            raise PureBPEError(f'{where}: expected {{"String": ...}} or {{"Regex": ...}}, got {obj!r}')
        ((kind, source),) = obj.items()
        if kind not in ("String", "Regex") or not isinstance(source, str):
            raise PureBPEError(f'{where}: expected {{"String": ...}} or {{"Regex": ...}}, got {obj!r}')
        self.kind: str = kind
        self.source: str = source
        #: The named pattern (``"gpt2"``, ``"cl100k"``, ``"o200k"``) this regex is, or None.
        self.name: Optional[str] = None
        self._split: Optional[Callable[[str], List[str]]] = None
        #: The ``re`` form's ``finditer(text)`` (a known pattern, which never matches
        #: empty), or else ``regex``'s bounded ``finditer(text, pos, timeout)``.
        self._finditer: Any = None
        self._search: Any = None
        #: Where its matches may be cut (:func:`.pattern_cuts.pattern_cuts`, on first use).
        self.cuts: Any = None
        if kind == "Regex" or source == "":
            translated = regex_source(source) if kind == "Regex" else ""
            self.name = named_pattern(translated) if kind == "Regex" else None
            if self.name is not None:
                self._split = pretokenize.splitter(self.name)
            else:
                # A regex real files use may have an ``re`` form: the same matches, faster.
                self._finditer = re_finditer(source)
                if self._finditer is None:
                    self._search = custom.bounded_finditer(translated, _ORIGIN.get(), source)

    @property
    def named_split(self) -> Optional[Callable[[str], List[str]]]:
        """The fast splitter when this is a named pattern (every piece a match), else None."""
        return self._split

    def to_json(self) -> Dict[str, Any]:
        """The JSON object this pattern was read from."""
        return {self.kind: self.source}

    def spans(self, text: str) -> List[Tuple[int, int]]:
        """The ``(start, end)`` of each match, in order (empty matches included, as HF's;
        an empty text has none, as HF's ``find_matches`` has none there)."""
        found: List[Tuple[int, int]] = []
        if not text:
            return found
        if self._split is not None:
            at = 0
            for piece in self._split(text):
                found.append((at, at + len(piece)))
                at += len(piece)
            return found
        if self._finditer is not None:
            return [match.span() for match in self._finditer(text)]
        if self._search is not None:
            return oniguruma_spans(self._search, text)
        source = self.source
        width = len(source)
        at = text.find(source)
        while at >= 0:
            found.append((at, at + width))
            at = text.find(source, at + width)
        return found

    def find_matches(self, text: str) -> List[Match]:
        """HF's ``find_matches``: stretches covering ``text``, each flagged match or not.

        An empty text is one empty non-match, as in HF.
        """
        if not text:
            return [(0, 0, False)]
        out: List[Match] = []
        prev = 0
        for start, end in self.spans(text):
            if prev != start:
                out.append((prev, start, False))
            out.append((start, end, True))
            prev = end
        if prev != len(text):
            out.append((prev, len(text), False))
        return out
