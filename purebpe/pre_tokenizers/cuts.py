"""Where a pre-tokenizer lets a stream be cut: a verdict on the two characters around a place.

A stream encoder that has the text up to a place ``c`` (and a little more) wants to
pre-tokenize the text before ``c``, hand its pieces to the model, forget it, and go on
from ``c`` as if a new piece of text started there (not at the start of the input).
:class:`PairRule` judges a place by ``x`` (the character before it) and ``y`` (after):

``BOUNDARY``
    ``c`` is a boundary between two pieces, and both sides give the same pieces cut
    there as in the whole text: nothing more is needed.
``TRANSPARENT``
    both sides give the same pieces as the whole, except that the piece holding ``x``
    and ``y`` (if there is one) comes out as two pieces, cut at ``c``.  Whether that
    matters is the model's question (:mod:`purebpe.hf.streaming`).
``BLOCK``
    not known to be either: no cut here.

Each pre-tokenizer of a ``Sequence`` only cuts (and rewrites) the pieces of the one
before, each on its own.  So a place is a ``BOUNDARY`` of the sequence as soon as one
step makes it one (the later steps see two separate pieces either way), and
``TRANSPARENT`` if every step leaves it so; each step judges the pair as the steps
before it have rewritten it (``ByteLevel`` turns characters into byte characters,
``Metaspace`` spaces into its replacement).  Per step:

* ``Split`` (and every splitter cutting at matches): HF cuts the text into matches and
  the stretches between them, and the behaviour decides what it keeps and joins.  Where
  no match can hold ``x`` and ``y`` (:mod:`purebpe.normalizers.pattern_cuts`, which also
  says the matches before ``c`` are the same whatever follows the buffer's
  ``margin``), each side's matches are the whole text's, so each side's stretches are the
  whole's with the stretch across ``c`` (a stretch between matches) cut in two: the
  behaviours, which only join neighbours, keep that cut as a cut or join it back
  (``TRANSPARENT``).  It is a ``BOUNDARY`` when ``x`` and ``y`` are in two different
  stretches whose behaviour keeps apart (:func:`behaviour_verdict`), or when either is
  in a stretch that is removed.  For a regular expression that is known when it matches
  every character (the named patterns: ``x`` and ``y`` are then in two matches) and for
  a character that no match can hold (it lies between matches);
* ``Digits``, ``Punctuation``, ``WhitespaceSplit``, ``Metaspace(split=True)``: every
  matching character is a match of its own, so the stretches of ``x`` and ``y`` are
  known from the two characters; ``Whitespace``: runs of one class;
* ``ByteLevel`` with ``add_prefix_space`` puts a space before each piece it is given
  that does not start with one: the piece after ``c`` would get one unless ``y`` is a
  space (``BLOCK`` otherwise); with ``use_regex`` it splits as GPT-2's named pattern;
* ``Metaspace``: spaces become its replacement; ``prepend_scheme="always"`` puts the
  replacement before each piece it is given that does not start with it (``BLOCK``
  unless ``y`` is a space or the replacement); ``"first"`` only before the piece at the
  start of the input, which the part after ``c`` is not.

``margin`` is how many characters past ``c`` the verdicts need the buffer to hold.
"""

from __future__ import annotations

from typing import Callable, Dict, List, Optional, Tuple

from ..normalizers.chars import WHITESPACE, is_numeric, is_punctuation, is_word
from ..normalizers.pattern import HFPattern
from ..normalizers.pattern_cuts import pattern_cuts
from ..pretokenize import PATTERNS
from . import PreTokenizer, Sequence
from .byte_level import ByteLevel, to_byte_alphabet
from .metaspace import Metaspace
from .split import Digits, Punctuation, Split, Whitespace, WhitespaceSplit

__all__ = ["BLOCK", "BOUNDARY", "TRANSPARENT", "PairRule", "behaviour_verdict"]

BLOCK = 0
TRANSPARENT = 1
BOUNDARY = 2

#: ``ByteLevel``'s regex (GPT-2's named pattern), built on first use.
_GPT2: List[HFPattern] = []

#: One step's verdict on ``(x, y)``, and the pair as the next step sees it.
Step = Callable[[str, str], Tuple[int, str, str]]


def behaviour_verdict(behavior: str, same_stretch: bool, left_match: bool, right_match: bool) -> int:
    """The verdict of HF's split ``behavior`` on a place inside one stretch
    (``same_stretch``) or between a stretch flagged ``left_match`` and one flagged
    ``right_match`` (the flags after ``invert``); matches cannot cross the place.

    ``MergedWithPrevious`` joins a match to the non-match before it, ``MergedWithNext``
    to the non-match after it, ``Contiguous`` joins neighbours with the same flag;
    ``Removed`` drops the matches.

    >>> behaviour_verdict("Isolated", False, False, True), behaviour_verdict("Contiguous", False, True, True)
    (2, 1)
    """
    if same_stretch:
        return BOUNDARY if behavior == "Removed" and left_match else TRANSPARENT
    if behavior in ("Isolated", "Removed"):
        return BOUNDARY
    if behavior == "MergedWithPrevious":
        joined = right_match and not left_match
    elif behavior == "MergedWithNext":
        joined = left_match and not right_match
    else:  # Contiguous
        joined = left_match == right_match
    return TRANSPARENT if joined else BOUNDARY


def _character_step(predicate: Callable[[str], bool], behavior: str) -> Step:
    """A splitter whose matches are single characters passing ``predicate``."""

    def step(x: str, y: str) -> Tuple[int, str, str]:
        left, right = predicate(x), predicate(y)
        return behaviour_verdict(behavior, not left and not right, left, right), x, y

    return step


def _whitespace_class(char: str) -> int:
    return 0 if char in WHITESPACE else (1 if is_word(char) else 2)


def _whitespace_step(x: str, y: str) -> Tuple[int, str, str]:
    # Runs of one class (space, word, other); the space runs are removed.
    left, right = _whitespace_class(x), _whitespace_class(y)
    return behaviour_verdict("Removed", left == right, left == 0, right == 0), x, y


def _pattern_step(pattern: HFPattern, behavior: str, invert: bool) -> Optional[Step]:
    cuts = pattern_cuts(pattern)
    if not cuts.usable:
        return None

    def step(x: str, y: str) -> Tuple[int, str, str]:
        if cuts.spans(x, y):
            return BLOCK, x, y
        if cuts.total:  # x and y are in two matches
            return behaviour_verdict(behavior, False, not invert, not invert), x, y
        outside_x, outside_y = cuts.never(x), cuts.never(y)
        if outside_x and outside_y:  # one stretch between matches
            return behaviour_verdict(behavior, True, invert, invert), x, y
        if invert and behavior == "Removed" and (outside_x or outside_y):
            return BOUNDARY, x, y  # next to a removed stretch: no piece holds both
        return TRANSPARENT, x, y

    return step


class PairRule:
    """The verdict of a pre-tokenizer (``None``: none) on the place between ``x`` and ``y``.

    :attr:`usable` is False when some step has no rule (every place is then ``BLOCK``);
    :attr:`splits` says whether any step ever cuts a piece (else the model always gets
    the whole text as one piece).

    >>> rule = PairRule(Metaspace())
    >>> rule.verdict("a", " "), rule.verdict("a", "b")[0], PairRule(None).verdict("a", "b")
    ((2, 'a', '▁'), 0, (1, 'a', 'b'))
    """

    __slots__ = ("usable", "splits", "margin", "_steps", "_cache")

    def __init__(self, pre_tokenizer: Optional[PreTokenizer]) -> None:
        self.usable = True
        self.splits = False
        self.margin = 1
        self._steps: List[Step] = []
        self._cache: Dict[str, Tuple[int, str, str]] = {}
        flat = [] if pre_tokenizer is None else _flatten(pre_tokenizer)
        for step in flat:
            self._add(step)

    def _add(self, pre_tokenizer: PreTokenizer) -> None:
        if isinstance(pre_tokenizer, ByteLevel):
            self._add_byte_level(pre_tokenizer)
        elif isinstance(pre_tokenizer, Metaspace):
            self._add_metaspace(pre_tokenizer)
        elif isinstance(pre_tokenizer, Split):
            self._add_pattern(pre_tokenizer.pattern, pre_tokenizer.behavior, pre_tokenizer.invert)
        elif isinstance(pre_tokenizer, Digits):
            self._steps.append(_character_step(is_numeric, pre_tokenizer.behavior))
            self.splits = True
        elif isinstance(pre_tokenizer, Punctuation):
            self._steps.append(_character_step(is_punctuation, pre_tokenizer.behavior))
            self.splits = True
        elif isinstance(pre_tokenizer, WhitespaceSplit):
            self._steps.append(_character_step(WHITESPACE.__contains__, "Removed"))
            self.splits = True
        elif isinstance(pre_tokenizer, Whitespace):
            self._steps.append(_whitespace_step)
            self.splits = True
        else:
            self.usable = False

    def _add_pattern(self, pattern: HFPattern, behavior: str, invert: bool) -> None:
        step = _pattern_step(pattern, behavior, invert)
        if step is None:
            self.usable = False
            return
        self._steps.append(step)
        self.splits = True
        self.margin = max(self.margin, pattern_cuts(pattern).margin)

    def _add_byte_level(self, byte_level: ByteLevel) -> None:
        if byte_level.add_prefix_space:
            self._steps.append(lambda x, y: (TRANSPARENT if y == " " else BLOCK, x, y))
        if byte_level.use_regex:
            if not _GPT2:
                _GPT2.append(HFPattern({"Regex": PATTERNS["gpt2"]}))
            self._add_pattern(_GPT2[0], "Isolated", False)

        def to_bytes(x: str, y: str) -> Tuple[int, str, str]:
            return TRANSPARENT, to_byte_alphabet(x)[-1], to_byte_alphabet(y)[0]

        self._steps.append(to_bytes)

    def _add_metaspace(self, metaspace: Metaspace) -> None:
        rep = metaspace.replacement
        always = metaspace.prepend_scheme == "always"

        def replaced(x: str, y: str) -> Tuple[int, str, str]:
            x, y = (rep if x == " " else x), (rep if y == " " else y)
            return (BLOCK if always and y != rep else TRANSPARENT), x, y

        self._steps.append(replaced)
        if metaspace.split:
            self._steps.append(_character_step(rep.__eq__, "MergedWithNext"))
            self.splits = True

    def verdict(self, x: str, y: str) -> Tuple[int, str, str]:
        """``(BLOCK | TRANSPARENT | BOUNDARY, x, y as the model sees them)``."""
        pair = x + y
        found = self._cache.get(pair)
        if found is None:
            found = (BLOCK, x, y)
            if self.usable:
                found = (TRANSPARENT, x, y)
                for step in self._steps:
                    found = step(found[1], found[2])
                    if found[0] != TRANSPARENT:
                        break
            self._cache[pair] = found
        return found


def _flatten(pre_tokenizer: PreTokenizer) -> List[PreTokenizer]:
    if isinstance(pre_tokenizer, Sequence):
        return [step for inner in pre_tokenizer.pretokenizers for step in _flatten(inner)]
    return [pre_tokenizer]
