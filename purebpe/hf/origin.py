"""Where a normalized text starts: what ``Metaspace(prepend_scheme="first")`` reads.

HF prepends ``▁`` only to a piece whose ``offsets_original().0`` is 0: the original offset
of the piece's first character.  The pieces of a segment are slices of its normalized
text, so after a normalizer that moves where the first character comes from -- ``Strip``
dropping leading whitespace, a ``Replace`` whose match at the start becomes text taking a
later span, ``StripAccents`` dropping a leading mark -- no piece starts at 0 and nothing
is prepended; after one that makes several characters of the first (``Prepend``, an
expanding ``Replace``), a piece starting on any of them is at the origin.  HF's
alignments never go backwards, so the characters from offset 0 are a prefix of the
normalized text: :func:`origin_chars` counts them.  A piece starting at normalized
position ``a`` is at the origin when ``a`` is below that count.

The count is read from a prefix of the segment, normalized with alignments
(:class:`purebpe.normalizers.Normalized`): a character of it is settled once the
normalizer's stream (:mod:`purebpe.normalizers.streaming`) emits it for that prefix,
since then no text after it changes it.  So the work is a few dozen characters' worth
whatever the segment's length, and a stream can decide before it has the whole segment.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple

from ..normalizers import Normalized, Normalizer
from ..normalizers.streaming import normalizer_stream
from ..pre_tokenizers import Metaspace, Sequence

__all__ = ["first_metaspace", "origin_chars"]

#: Characters of the first prefix looked at; each later one is four times longer.
PROBE_CHARS = 64


def first_metaspace(pre_tokenizer: Any) -> Optional[bool]:
    """Whether some step precedes the first ``Metaspace(prepend_scheme="first")`` of a
    pre-tokenizer (a piece it gets may then start anywhere); ``None`` when there is none.

    >>> first_metaspace(Metaspace(prepend_scheme="first")), first_metaspace(Metaspace())
    (False, None)
    """
    steps = [pre_tokenizer]
    flat = []
    while steps:
        step = steps.pop(0)
        if isinstance(step, Sequence):
            steps[:0] = list(step.pretokenizers)
        elif step is not None:
            flat.append(step)
    for index, step in enumerate(flat):
        if isinstance(step, Metaspace) and step.prepend_scheme == "first":
            return index > 0
    return None


def _leading(normalizer: Normalizer, text: str, complete: bool) -> Tuple[int, bool]:
    """The characters from offset 0 in the normalization of ``text``, and whether that is
    final (a settled character from a later offset ends them, or ``text`` is all there is)."""
    starts = normalizer.normalize(Normalized.of(text)).starts
    count = 0
    while count < len(starts) and starts[count] == 0:
        count += 1
    if complete:
        return count, True
    settled = len(normalizer_stream(normalizer).feed(text))
    return count, count < settled


def origin_chars(normalizer: Normalizer, text: str, complete: bool = True) -> Optional[int]:
    """How many characters of a segment's normalized text come from its first original
    character (or were inserted before it), given ``text``, the segment or (``complete``
    false) the part of it read so far; ``None`` when that part does not decide it yet.

    >>> from purebpe.normalizers import Prepend, Strip
    >>> origin_chars(Strip(True, True), " a b"), origin_chars(Prepend("▁"), "a b")
    (0, 2)
    >>> origin_chars(Strip(True, True), "   ", complete=False) is None
    True
    """
    size = PROBE_CHARS
    while True:
        whole = size >= len(text)
        count, final = _leading(normalizer, text[:size], complete and whole)
        if final:
            return count
        if whole:
            return None
        size *= 4
