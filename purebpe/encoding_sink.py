"""The token sink that encodes: a named pattern's scanner hands it each pre-token as it
finds it, and it appends the pre-token's ids to the output at once.

A scanner writes pre-tokens with ``sink[token] = sink.get(token, 0) + 1``, the line that
counts them into a dict when training (:mod:`purebpe.pretokenize.sinks`).
:class:`purebpe.Tokenizer` passes an :class:`EncodingSink` instead, so encoding builds no
list of pieces: each pre-token's ids come from the word cache. A pre-token the cache does
not hold gets a placeholder there and in the output, and :meth:`EncodingSink.finish`
encodes all of a scan's new pre-tokens with the tokenizer's
:class:`~purebpe.word_encoder.WordEncoder` in one loop of their own, then puts their ids
in place. On PyPy that loop is what makes a cold encode fast: merges run inside the
scanner's loop took 7.5 us a new word of the 2 MB mixed text of ``bench_hf_pipelines``
(o200k), 4.3 us in a loop apart, where the JIT compiles them on their own (cold encode
0.33 -> 0.27 s). On PyPy the JIT inlines the sink's calls into the scanner's loop; in the
compiled build (``setup.py``) this class and the word encoder are native ones, and the
compiled scanners call this :class:`~purebpe.pretokenize.sinks.Sink`'s methods in C.
"""

from __future__ import annotations

from typing import Dict, List

from .pretokenize.sinks import Sink
from .word_encoder import WordEncoder

__all__ = ["CACHE_SIZE", "EncodingSink"]

#: Words kept in a tokenizer's word cache before it is cleared (read on every new word,
#: not inlined by the compiled build, so that a test can lower it).
CACHE_SIZE = 1 << 17


class EncodingSink(Sink):
    """Appends the ids of every pre-token written to it to ``out`` (new pre-tokens' once
    :meth:`finish` has run).

    >>> out = []
    >>> sink = EncodingSink({"a": [1]}, out, WordEncoder({}, list(range(256)), None))
    >>> sink["a"] = sink.get("a", 0) + 1
    >>> sink["bc"] = sink.get("bc", 0) + 1
    >>> sink.finish()
    >>> out
    [1, 98, 99]
    """

    __slots__ = ("cache", "out", "encoder", "start", "pending", "placeholders")

    def __init__(self, cache: Dict[str, List[int]], out: List[int], encoder: WordEncoder) -> None:
        self.cache = cache
        self.out = out
        self.encoder = encoder
        #: Where this sink's ids start in ``out``.
        self.start = len(out)
        #: The new pre-tokens, and their placeholders (``[-1 - k]`` for the ``k``-th: a
        #: list the cache holds too, given the ids in place by :meth:`finish`).
        self.pending: List[str] = []
        self.placeholders: List[List[int]] = []

    def __setitem__(self, token: str, count: int) -> None:
        ids = self.cache.get(token)
        if ids is None:
            ids = self._placeholder(token)
        self.out.extend(ids)

    def _placeholder(self, token: str) -> List[int]:
        cache = self.cache
        if len(cache) >= CACHE_SIZE:
            cache.clear()
        ids = [-1 - len(self.pending)]
        self.pending.append(token)
        self.placeholders.append(ids)
        cache[token] = ids
        return ids

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
            placeholders[k][:] = encoder.encode_word(pending[k])
        out = self.out
        tail = out[self.start :]
        del out[self.start :]
        for tid in tail:
            if tid >= 0:
                out.append(tid)
            else:
                out.extend(placeholders[-1 - tid])
        self.pending = []
        self.placeholders = []

    def abandon(self) -> None:
        """Take the placeholders not yet given their ids out of the cache."""
        cache = self.cache
        for token, ids in zip(self.pending, self.placeholders):
            if ids[0] < 0 and cache.get(token) is ids:
                del cache[token]
        self.pending = []
        self.placeholders = []

    def new_word(self, token: str) -> List[int]:
        """The ids of a pre-token not in the cache, encoded now; the cache then holds them."""
        ids = self.encoder.encode_word(token)
        cache = self.cache
        if len(cache) >= CACHE_SIZE:
            cache.clear()
        cache[token] = ids
        return ids
