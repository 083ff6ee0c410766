r"""Where a text may be cut without changing the matches of a ``tokenizer.json`` pattern.

``Replace`` (normalizer) and ``Split`` (pre-tokenizer) find every match of a pattern, left
to right (:class:`~purebpe.normalizers.pattern.HFPattern`).  A stream encoder wants to
handle the text before a place ``c`` and forget it, then go on from ``c`` as if the text
started there.  :class:`PatternCuts` says where that is exact, from the pattern alone and
the two characters around ``c``:

**The rule.**  Build the pattern's Glushkov automaton: its *positions* are the places in
the pattern that consume one character (a literal, a class, an escape, ``.``), and
``follow(p)`` is the set of positions that can consume the next character after ``p`` in
some run of the pattern (zero-width parts -- lookaheads, ``$`` -- let everything through,
which only adds runs).  :meth:`PatternCuts.spans` says whether some position ``p`` whose
class holds ``x`` is followed by a position whose class holds ``y``; when it does not,
no attempt of the engine -- successful or not, any alternative, any backtracking -- ever
consumes ``x`` at ``c - 1`` and then ``y`` at ``c``.  So:

* every attempt that starts before ``c`` consumes only characters before ``c``; it may
  *read* ``y`` (finding that no follow position takes it) and a lookahead may read up to
  :attr:`PatternCuts.margin` characters past ``c``.  The matches that start before ``c``
  therefore all end by ``c``, and are the same in any text that agrees with this one on
  those characters: in the whole text, and in a buffer that holds ``margin`` characters
  past ``c``;
* after the last of them the search goes on from its end, fails up to ``c`` (the same
  attempts), and from ``c`` on it is the search of ``text[c:]`` alone -- provided
  nothing in the pattern looks *before* where it stands (lookbehind, ``^``, ``\A``,
  ``\G``, ``\b``, ``\B``, backreferences: such patterns get no cuts) and the pattern
  cannot match the empty string (HF skips an empty match where the previous match ended,
  which a search starting afresh at ``c`` would not know: such patterns get no cuts).

A ``String`` pattern is the simplest case: a match holds ``xy`` only if the string does.

:meth:`PatternCuts.never` says that no match can hold a character at all (no position's
class has it): such a character always lies between matches.  A *named* pattern (HF's
regex of GPT-2, cl100k, o200k ...) matches every character (:attr:`PatternCuts.total`),
so where no match holds both ``x`` and ``y`` they lie in two different matches.

Classes are tested with the ``regex`` package that runs the patterns, on each character
met (cached); without ``regex`` (an optional dependency) a regular expression gets no cuts.
"""

from __future__ import annotations

from typing import Any, Dict, FrozenSet, List, Optional, Set, Tuple

from .pattern import HFPattern, _class_end, _escape_end, regex_source

__all__ = ["PatternCuts", "may_match_empty", "pattern_cuts"]

#: A parsed piece of a pattern: (nullable, first positions, last positions, longest match
#: in characters or None for unbounded).
_Node = Tuple[bool, FrozenSet[int], FrozenSet[int], Optional[int]]

#: Escapes that do not stand for one character: zero-width ones that look back or at
#: word boundaries, several characters (``\X``, ``\R``), or the match so far (``\K``).
_REFUSED_ESCAPES = frozenset("AbBGKkmMXRg0123456789")
#: Zero-width escapes that look at the end of the text only.
_END_ESCAPES = {"Z": 1, "z": 0}


class _Unsupported(Exception):
    """The pattern uses something the analysis does not cover: it gets no cuts."""


class _Parser:
    """A recursive-descent reading of a ``regex``-syntax pattern into Glushkov sets."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.i = 0
        self.atoms: List[str] = []  # one compilable pattern per position
        self.follow: List[Set[int]] = []
        self.lookahead = 0  # the longest lookahead body (characters)
        self.prefix = ""  # a version flag the whole pattern carries: (?V1)

    def parse(self) -> _Node:
        flags = self._global_flags()
        node = self._alternation(flags)
        if self.i != len(self.source):
            raise _Unsupported("unbalanced parenthesis")
        return node

    def _global_flags(self) -> str:
        flags = ""
        source = self.source
        while source.startswith("(?", self.i):
            end = source.find(")", self.i)
            letters = source[self.i + 2 : end] if end > 0 else ""
            if not letters or not all(c in "imsV01" for c in letters):
                break
            if "V1" in letters:
                self.prefix = "(?V1)"
            flags += "".join(c for c in letters if c in "is")
            self.i = end + 1
        if "i" in flags and self.prefix:
            raise _Unsupported("VERSION1 folds case fully: a character may match two")
        return flags

    def _alternation(self, flags: str) -> _Node:
        nodes = [self._sequence(flags)]
        while self.i < len(self.source) and self.source[self.i] == "|":
            self.i += 1
            nodes.append(self._sequence(flags))
        nullable = any(n[0] for n in nodes)
        first = frozenset().union(*(n[1] for n in nodes))
        last = frozenset().union(*(n[2] for n in nodes))
        lengths = [n[3] for n in nodes]
        longest = None if None in lengths else max(x for x in lengths if x is not None)
        return nullable, first, last, longest

    def _sequence(self, flags: str) -> _Node:
        node: _Node = (True, frozenset(), frozenset(), 0)
        while self.i < len(self.source) and self.source[self.i] not in "|)":
            item = self._quantified(flags)
            node = self._concat(node, item)
        return node

    def _concat(self, left: _Node, right: _Node) -> _Node:
        for p in left[2]:
            self.follow[p].update(right[1])
        first = left[1] | right[1] if left[0] else left[1]
        last = right[2] | left[2] if right[0] else right[2]
        longest = None if left[3] is None or right[3] is None else left[3] + right[3]
        return left[0] and right[0], first, last, longest

    def _quantified(self, flags: str) -> _Node:
        node = self._atom(flags)
        source = self.source
        if self.i >= len(source):
            return node
        char = source[self.i]
        low, high = 1, 1
        if char in "?*+":
            low, high = {"?": (0, 1), "*": (0, -1), "+": (1, -1)}[char]
            self.i += 1
        elif char == "{":
            close = source.find("}", self.i)
            body = source[self.i + 1 : close] if close > 0 else ""
            parts = body.split(",")
            if not body or len(parts) > 2 or not all(p.isdigit() or p == "" for p in parts) or not parts[0]:
                return node  # not an interval: a literal "{" follows (read as an atom next)
            low = int(parts[0])
            high = low if len(parts) == 1 else (int(parts[1]) if parts[1] else -1)
            self.i = close + 1
        else:
            return node
        if self.i < len(source) and source[self.i] in "?+":
            self.i += 1  # lazy or possessive: fewer runs, the same characters
        if high == -1 or high >= 2:
            for p in node[2]:
                self.follow[p].update(node[1])
        longest = None if node[3] is None or high == -1 else node[3] * high
        if node[3] == 0:
            longest = 0
        return node[0] or low == 0, node[1], node[2], longest

    def _position(self, atom: str, flags: str) -> _Node:
        index = len(self.atoms)
        scoped = f"(?{flags}:{atom})" if flags else f"(?:{atom})"
        self.atoms.append(self.prefix + scoped)
        self.follow.append(set())
        one = frozenset([index])
        return False, one, one, 1

    def _atom(self, flags: str) -> _Node:
        source = self.source
        char = source[self.i]
        if char == "(":
            return self._group(flags)
        if char == "[":
            end, _ = _class_end(source, self.i)
            atom = source[self.i : end]
            self.i = end
            return self._position(atom, flags)
        if char == "\\":
            end = _escape_end(source, self.i)
            atom = source[self.i : end]
            self.i = end
            kind = atom[1:2]
            if kind in _END_ESCAPES:
                self.lookahead = max(self.lookahead, _END_ESCAPES[kind])
                return True, frozenset(), frozenset(), 0
            if kind in _REFUSED_ESCAPES or not kind:
                raise _Unsupported(f"escape {atom!r}")
            return self._position(atom, flags)
        if char == "$":
            self.i += 1
            return True, frozenset(), frozenset(), 0
        if char in "^*+?":
            raise _Unsupported(f"{char!r} where an atom was expected")
        self.i += 1
        return self._position(source[self.i - 1 : self.i] if char != "." else ".", flags)

    def _group(self, flags: str) -> _Node:
        source = self.source
        self.i += 1
        inner = flags
        lookahead = False
        if source.startswith("?", self.i):
            head = source[self.i + 1 : self.i + 3]
            if head[:1] in (":", ">"):
                self.i += 2
            elif head[:1] in ("=", "!"):
                lookahead = True
                self.i += 2
            elif head.startswith("P<") or (head[:1] == "<" and head[1:2] not in ("=", "!")):
                close = source.find(">", self.i)
                if close < 0:
                    raise _Unsupported("unterminated group name")
                self.i = close + 1
            else:
                colon = source.find(":", self.i)
                letters = source[self.i + 1 : colon] if colon > 0 else ""
                on, _, off = letters.partition("-")
                if not letters or not all(c in "is" for c in on + off):
                    raise _Unsupported(f"group {source[self.i - 1 : self.i + 4]!r}")
                inner = "".join(c for c in "is" if (c in flags or c in on) and c not in off)
                if "i" in inner and self.prefix:
                    raise _Unsupported("VERSION1 folds case fully: a character may match two")
                self.i = colon + 1
        if lookahead:
            # A lookahead consumes nothing: its characters are only read. Its own run is
            # parsed apart (its positions do not join the pattern's), for its length.
            body = _Parser(source)
            body.i, body.prefix = self.i, self.prefix
            node = body._alternation(inner)
            self.i = body.i
            if node[3] is None:
                raise _Unsupported("a lookahead of unbounded length")
            self.lookahead = max(self.lookahead, node[3], body.lookahead)
            result: _Node = (True, frozenset(), frozenset(), 0)
        else:
            result = self._alternation(inner)
        if not source.startswith(")", self.i):
            raise _Unsupported("unbalanced parenthesis")
        self.i += 1
        return result


class PatternCuts:
    """What :mod:`this module <purebpe.normalizers.pattern_cuts>` knows of one pattern.

    >>> cuts = pattern_cuts(HFPattern({"Regex": r"\\s+"}))
    >>> cuts.usable, cuts.spans(" ", "\\t"), cuts.spans("a", " "), cuts.never("a")
    (True, True, False, True)
    """

    __slots__ = ("usable", "margin", "total", "_string", "_atoms", "_follow", "_positions", "_pairs")

    def __init__(self, pattern: HFPattern) -> None:
        self.usable = False
        #: Characters past a cut that the matches before it may depend on.
        self.margin = 0
        #: Every character is in some match (the named patterns).
        self.total = pattern.named_split is not None
        self._string: Optional[str] = None
        self._atoms: List[Any] = []
        self._follow: List[int] = []
        self._positions: Dict[str, int] = {}
        self._pairs: Dict[str, bool] = {}
        if pattern.kind == "String" and pattern.source:
            self._string = pattern.source
            self.usable = True
            self.margin = len(pattern.source) + 1
            return
        try:
            import regex
        except ImportError:  # pragma: no cover - regex is a test dependency
            return
        parser = _Parser(regex_source(pattern.source) if pattern.kind == "Regex" else pattern.source)
        try:
            nullable, _, _, _ = parser.parse()
            if nullable:
                return
            self._atoms = [regex.compile(atom) for atom in parser.atoms]
        except (_Unsupported, regex.error, IndexError):
            return
        self._follow = [sum(1 << q for q in follow) for follow in parser.follow]
        self.margin = parser.lookahead + 2
        self.usable = True

    def _mask(self, char: str) -> int:
        """The positions whose class holds ``char``, as bits."""
        mask = self._positions.get(char)
        if mask is None:
            mask = 0
            for index, atom in enumerate(self._atoms):
                if atom.fullmatch(char) is not None:
                    mask |= 1 << index
            self._positions[char] = mask
        return mask

    def spans(self, x: str, y: str) -> bool:
        """Whether a run of the pattern may consume ``x`` then ``y`` (True when unusable)."""
        if not self.usable:
            return True
        pair = x + y
        found = self._pairs.get(pair)
        if found is None:
            if self._string is not None:
                found = pair in self._string
            else:
                after = self._mask(y)
                mask = self._mask(x)
                follow = self._follow
                found = False
                index = 0
                while mask:
                    if mask & 1 and follow[index] & after:
                        found = True
                        break
                    mask >>= 1
                    index += 1
            self._pairs[pair] = found
        return found

    def never(self, char: str) -> bool:
        """Whether no match can hold ``char`` (False when unusable)."""
        if not self.usable:
            return False
        if self._string is not None:
            return char not in self._string
        return self._mask(char) == 0


def may_match_empty(source: str) -> bool:
    """Whether a ``regex``-syntax pattern may match the empty string somewhere (True where
    the analysis cannot tell: a lookbehind, a backreference...). There Oniguruma's iterator
    and ``regex``'s ``finditer`` can find other matches
    (:func:`~purebpe.normalizers.pattern.oniguruma_spans`).

    >>> may_match_empty(r" ?\\p{L}+"), may_match_empty(r"\\p{L}+|(?=x)"), may_match_empty("a*?")
    (False, True, True)
    """
    try:
        return _Parser(source).parse()[0]
    except (_Unsupported, IndexError):
        return True


def pattern_cuts(pattern: HFPattern) -> PatternCuts:
    """The :class:`PatternCuts` of ``pattern`` (made once, kept on the pattern)."""
    found = pattern.cuts
    if not isinstance(found, PatternCuts):
        found = pattern.cuts = PatternCuts(pattern)
    return found
