"""Any regular expression as a pre-tokenizer: :class:`Pattern`, run by the ``regex`` package.

``behavior="isolated"`` is HF ``tokenizers``' ``Split(pattern, "isolated")``: the matches
*and* the stretches of text between them are pieces, in order, so a pattern that does not
cover every character still loses nothing (``"".join(pieces) == text``).  That is how HF
represents the named patterns too (``Split`` + ``ByteLevel(use_regex=False)``), and how
SuperBPE's second stage splits.

No cut inside a text is known to be safe for an arbitrary pattern, so streams are cut only
at special tokens: the text between two special tokens is split whole.

A few patterns have a module of their own (:data:`SCANNED`): a scanner proven equal to
``regex`` and safe cuts, so they need no optional package and stream in bounded pieces.
SuperBPE's stage-2 pattern is one (:mod:`.superwords`).
"""
from __future__ import annotations

import importlib
from typing import Any, Callable, Dict, List, Optional, Protocol

import attr

from ..errors import PureBPEError
from . import superwords

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
            f"pattern behavior {pattern.behavior!r} is not supported; "
            f"choose one of: {', '.join(BEHAVIORS)}"
        )
    if pattern.regex not in SCANNED:
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


def isolated_split(source: str) -> Callable[[str], List[str]]:
    """A function splitting text on ``source`` the way HF's ``Split(..., "isolated")`` does."""
    scanned = SCANNED.get(source)
    if scanned is not None:
        split_scanned: Callable[[str], List[str]] = scanned.split
        return split_scanned
    finditer = compiled(source).finditer

    def split(text: str) -> List[str]:
        pieces: List[str] = []
        done = 0
        for found in finditer(text):
            start, end = found.span()
            if end == start:
                continue  # an empty match cuts nothing
            if start > done:
                pieces.append(text[done:start])
            pieces.append(text[start:end])
            done = end
        if done < len(text):
            pieces.append(text[done:])
        return pieces

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
