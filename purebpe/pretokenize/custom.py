"""Any regular expression as a pre-tokenizer: :class:`Pattern`, run by the ``regex`` package.

``behavior="isolated"`` is HF ``tokenizers``' ``Split(pattern, "isolated")``: the matches
*and* the stretches of text between them are pieces, in order, so a pattern that does not
cover every character still loses nothing (``"".join(pieces) == text``).  That is how HF
represents the named patterns too (``Split`` + ``ByteLevel(use_regex=False)``), and how
SuperBPE's second stage splits.

No cut inside a text is known to be safe for an arbitrary pattern, so streams are cut only
at special tokens: the text between two special tokens is split whole.

A pattern read from a tokenizer file is untrusted input: ``(a|a)+$`` on forty ``a`` takes
minutes (catastrophic backtracking). Every match of a stored or given pattern therefore runs
under :func:`bounded_finditer`, which gives the ``regex`` engine a time budget
(:func:`regex_budget`: a base plus an allowance per character, far above what any sane
pattern needs) and turns a timeout into one line naming the file the pattern came from.
Loaders of other formats' regexes (HF ``Split``) reuse it through :class:`Pattern`'s
``origin`` or by calling :func:`bounded_finditer` themselves.

A few patterns have a module of their own (:data:`SCANNED`): a scanner proven equal to
``regex`` and safe cuts, so they need no optional package and stream in bounded pieces.
SuperBPE's stage-2 pattern is one (:mod:`.superwords`).
A few others that real files carry have a standard-library ``re`` form proven equal to
``regex`` (:mod:`.re_forms`: Qwen 3.5's pattern, DeepSeek V3's): they run on it, faster
(much faster on PyPy) and without the optional package.  Those forms are known patterns
without catastrophic backtracking, so they need no time budget.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Dict, Iterator, List, Optional, Protocol

import attr

from ..errors import PureBPEError, excerpt
from . import superwords
from ._tables import split_at_matches
from .re_forms import re_finditer

BEHAVIORS = ("isolated",)


class ScannedPattern(Protocol):
    """What a module running one pattern "isolated" without ``regex`` provides."""

    def count(self, text: str, counts: Dict[str, int]) -> None: ...

    def split(self, text: str) -> List[str]: ...

    def safe_cut(self, buf: bytes, end: int) -> int: ...


#: Patterns (``regex`` syntax, split "isolated") that run on a scanner of their own.
SCANNED: Dict[str, ScannedPattern] = {superwords.PATTERN: superwords}


@attr.s(frozen=True, slots=True, auto_attribs=True)
class Pattern:
    """A pre-tokenizer given by a regular expression (``regex`` syntax).

    >>> Pattern(r"\\p{N}{1,3}| ?\\p{L}+")    # doctest: +SKIP
    """

    regex: str = attr.ib(validator=attr.validators.instance_of(str))
    behavior: str = "isolated"
    #: Where the pattern came from (a file), for errors; not part of its identity.
    origin: str = attr.ib(default="", eq=False, repr=False)


def regex_module() -> Any:
    """The optional ``regex`` package, or a one-line error saying how to get it."""
    try:
        # import_module rather than ``import regex``: the package ships no type stubs.
        return importlib.import_module("regex")
    except ImportError:
        raise PureBPEError(
            "a custom pre-tokenization pattern needs the optional 'regex' package "
            "(pip install regex, or pip install 'purebpe[regex]')"
        ) from None


def check_pattern(pattern: Pattern) -> Pattern:
    """``pattern`` if ``regex`` compiles it and its behaviour is supported; else a clear error."""
    if pattern.behavior not in BEHAVIORS:
        raise PureBPEError(
            f"pattern behavior {pattern.behavior!r} is not supported; choose one of: {', '.join(BEHAVIORS)}"
        )
    if pattern.regex not in SCANNED and re_finditer(pattern.regex) is None:
        compiled(pattern.regex)
    return pattern


_compiled: Dict[str, Any] = {}


def compiled(source: str) -> Any:
    """``source`` compiled by ``regex`` (cached); a bad pattern is a one-line error."""
    found = _compiled.get(source)
    if found is None:
        regex = regex_module()
        try:
            found = _compiled[source] = regex.compile(source)
        except regex.error as exc:
            raise PureBPEError(f"pre-tokenization pattern {source!r} does not compile: {exc}") from None
    return found


#: The time budget of one search of a text: this base, in seconds ...
REGEX_BASE_SECONDS = 0.5
#: ... plus this much per character of the text (a sane pattern needs well under 1 µs).
REGEX_SECONDS_PER_CHAR = 2e-5


def regex_budget(length: int) -> float:
    """Seconds a pattern may spend searching a text of ``length`` characters.

    >>> regex_budget(0)
    0.5
    """
    return REGEX_BASE_SECONDS + length * REGEX_SECONDS_PER_CHAR


def bounded_finditer(source: str, origin: str = "", shown: str = "") -> Callable[..., Iterator[Any]]:
    """``finditer(text, pos=0, timeout=None)`` of ``source`` that gives up after
    :func:`regex_budget` seconds of the text (or after ``timeout``: what is left of that
    budget, where one text is searched from several positions).

    A pattern that backtracks catastrophically raises :class:`PureBPEError`, one line
    naming ``origin`` (the file the pattern was read from) and the pattern as the file
    spells it (``shown``, if ``source`` is a rewriting of it), instead of running for hours.

    >>> [m.group() for m in bounded_finditer(r"\\d+")("a1b22")]    # doctest: +SKIP
    ['1', '22']
    """
    finditer = compiled(source).finditer

    def search(text: str, pos: int = 0, timeout: Optional[float] = None) -> Iterator[Any]:
        budget = regex_budget(len(text))
        try:
            yield from finditer(text, pos, timeout=budget if timeout is None else timeout)
        except TimeoutError:
            where = f"{origin}: " if origin else ""
            raise PureBPEError(
                f"{where}pre-tokenization pattern {excerpt(shown or source)} gave up after {budget:.1f} s "
                f"on a text of {len(text):,} characters (catastrophic backtracking; a pattern "
                "from a file is untrusted input)"
            ) from None

    return search


def isolated_split(source: str, origin: str = "") -> Callable[[str], List[str]]:
    """A function splitting text on ``source`` the way HF's ``Split(..., "isolated")`` does.

    Matching is bounded in time (:func:`bounded_finditer`); errors name ``origin``. A
    pattern of :data:`SCANNED` runs on its own scanner instead (no regex work to bound),
    and one with an ``re`` form (:mod:`.re_forms`) on that form.

    >>> isolated_split(r"\\p{N}{1,3}")("ab12345")
    ['ab', '123', '45']
    """
    scanned = SCANNED.get(source)
    if scanned is not None:
        split_scanned: Callable[[str], List[str]] = scanned.split
        return split_scanned
    finditer = re_finditer(source) or bounded_finditer(source, origin)

    def split(text: str) -> List[str]:
        return split_at_matches(text, finditer(text))

    return split


def safe_cut(buf: bytes, end: int) -> int:
    """No cut is known to be safe for an arbitrary pattern."""
    return -1


def cut_finder(source: str) -> Callable[[bytes, int], int]:
    """``safe_cut`` for the pattern ``source``: its module's if it has one (:data:`SCANNED`)."""
    scanned = SCANNED.get(source)
    cut: Callable[[bytes, int], int] = safe_cut if scanned is None else scanned.safe_cut
    return cut


def word_counter(source: str) -> Optional[Callable[[str, Dict[str, int]], None]]:
    """The scanner counting ``source``'s pieces straight into a dict, if it has one."""
    scanned = SCANNED.get(source)
    return None if scanned is None else scanned.count
