"""The token sink that encodes: a named pattern's scanner hands it each pre-token as it
finds it, and it appends the pre-token's ids to the output at once.

A scanner writes pre-tokens with ``sink[token] = sink.get(token, 0) + 1``, the line that
counts them into a dict when training (:mod:`purebpe.pretokenize.sinks`).
:class:`purebpe.Tokenizer` runs the scanner's twin on the text's UTF-8
(:func:`purebpe.pretokenize.utf8_scanner`) and passes an :class:`EncodingSink`, so
encoding builds no list of pieces: each pre-token's ids come from the word cache, keyed by
the pre-token's bytes. Scanning the bytes skips a string per character, and a new word
needs no encoding (PyPy, 20 MB of Linux source, warm: GPT-2's pattern 0.91 -> 0.80 s,
o200k's 0.95 -> 0.87 s against the scanners of ``str`` with a cache keyed by words).

A pre-token the cache does not hold gets a placeholder there and in the output, and
:meth:`EncodingSink.finish` encodes all of a scan's new pre-tokens with the tokenizer's
:class:`~purebpe.word_encoder.WordEncoder` in one loop of their own, then puts their ids
in place. On PyPy that loop is what makes a cold encode fast: merges run inside the
scanner's loop took 7.5 us a new word of the 2 MB mixed text of ``bench_hf_pipelines``
(o200k), 4.3 us in a loop apart, where the JIT compiles them on their own (cold encode
0.33 -> 0.27 s). On PyPy the JIT inlines the sink's calls into the scanner's loop; in the
compiled build (``setup.py``) this class and the word encoder are native ones, and the
compiled scanners call this :class:`~purebpe.pretokenize.sinks.BytesSink`'s methods in C.
"""

from __future__ import annotations

from typing import Any, Dict, List

from .pretokenize.sinks import BytesSink
from .word_encoder import WordEncoder

__all__ = ["CACHE_SIZE", "EncodingSink", "remember"]

#: Words kept in a tokenizer's word cache before it is cleared (read on every new word,
#: not inlined by the compiled build, so that a test can lower it).
CACHE_SIZE = 1 << 17


def remember(cache: Dict[Any, List[int]], word: Any, ids: List[int]) -> None:
    """Put a new word's ids in a word cache, which is cleared first when it is full: real
    text repeats a small set of words, which come back at once.

    >>> cache = {}
    >>> remember(cache, "ab", [256])
    >>> cache
    {'ab': [256]}
    """
    if len(cache) >= CACHE_SIZE:
        cache.clear()
    cache[word] = ids


class EncodingSink(BytesSink):
    """Appends the ids of every pre-token written to it, as its UTF-8 bytes, to ``out``
    (new pre-tokens' once :meth:`finish` has run).

    >>> out = []
    >>> sink = EncodingSink({b"a": [1]}, out, WordEncoder({}, list(range(256)), None))
    >>> sink[b"a"] = sink.get(b"a", 0) + 1
    >>> sink[b"bc"] = sink.get(b"bc", 0) + 1
    >>> sink.finish()
    >>> out
    [1, 98, 99]
    """

    __slots__ = ("cache", "out", "encoder", "pending", "placeholders", "holes")

    def __init__(self, cache: Dict[bytes, List[int]], out: List[int], encoder: WordEncoder) -> None:
        self.cache = cache
        self.out = out
        self.encoder = encoder
        #: The new pre-tokens, and their placeholders (``[-1 - k]`` for the ``k``-th: a
        #: list the cache holds too, given the ids in place by :meth:`finish`).
        self.pending: List[bytes] = []
        self.placeholders: List[List[int]] = []
        #: Where in ``out`` a placeholder's id stands, in order.
        self.holes: List[int] = []

    def __setitem__(self, token: bytes, count: int) -> None:
        ids = self.cache.get(token)
        if ids is None:
            ids = [-1 - len(self.pending)]
            self.pending.append(token)
            self.placeholders.append(ids)
            remember(self.cache, token, ids)
        out = self.out
        if ids[0] < 0:  # a placeholder (cache values are never empty)
            self.holes.append(len(out))
        out.extend(ids)

    def finish(self) -> None:
        """Encode the new pre-tokens, and put their ids where their placeholders are (in
        ``out`` and in the cache). Call :meth:`abandon` instead if the scan failed, and
        if this raises."""
        pending = self.pending
        if not pending:
            return
        encoder = self.encoder
        placeholders = self.placeholders
        for k in range(len(pending)):
            placeholders[k][:] = encoder.encode_utf8(pending[k])
        _fill_holes(self.out, self.holes, placeholders)
        self.pending = []
        self.placeholders = []
        self.holes = []

    def abandon(self) -> None:
        """Take the placeholders not yet given their ids out of the cache."""
        cache = self.cache
        for token, ids in zip(self.pending, self.placeholders):
            if ids[0] < 0 and cache.get(token) is ids:
                del cache[token]
        self.pending = []
        self.placeholders = []
        self.holes = []


def _fill_holes(out: List[int], holes: List[int], placeholders: List[List[int]]) -> None:
    """Put the ids of each placeholder where it stands in ``out`` (``holes``, in order).

    ``out`` is rebuilt from the first hole on, the stretches between holes copied as
    slices: copied an id at a time, the rebuild took 0.2 s of a 5.5 s PyPy encode of 100
    MB of Linux source, where nearly every 32 KB piece has a new word.
    """
    first = holes[0]
    tail = out[first:]
    del out[first:]
    done = 0  # tail[:done] is back in out
    for hole in holes:
        at = hole - first
        out += tail[done:at]
        out += placeholders[-1 - tail[at]]
        done = at + 1
    out += tail[done:]
