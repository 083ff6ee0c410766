"""The token sink that encodes: a named pattern's scanner hands it each pre-token as it
finds it, and it appends the pre-token's ids to the output at once.

A scanner writes pre-tokens with ``sink[token] = sink.get(token, 0) + 1``, the line that
counts them into a dict when training (:class:`purebpe.pretokenize._tables.TokenSink`).
:class:`purebpe.Tokenizer` passes an :class:`EncodingSink` instead, so encoding builds no
list of pieces: each pre-token's ids come from the word cache, or from the tokenizer's
:class:`~purebpe.word_encoder.WordEncoder` on a miss (which also fills the cache). On
PyPy the JIT inlines both calls into the scanner's loop; in the compiled build
(``setup.py``) this class and the word encoder are native ones, whose methods the
compiled scanners call without an interpreted frame.
"""

from __future__ import annotations

from typing import Dict, List

from .word_encoder import WordEncoder

__all__ = ["CACHE_SIZE", "EncodingSink"]

#: Words kept in a tokenizer's word cache before it is cleared (read on every new word,
#: not inlined by the compiled build, so that a test can lower it).
CACHE_SIZE = 1 << 17


class EncodingSink:
    """Appends the ids of every pre-token written to it to ``out``.

    >>> out = []
    >>> sink = EncodingSink({"a": [1]}, out, WordEncoder({}, list(range(256)), None))
    >>> sink["a"] = sink.get("a", 0) + 1
    >>> sink["bc"] = sink.get("bc", 0) + 1
    >>> out
    [1, 98, 99]
    """

    __slots__ = ("cache", "out", "encoder")

    def __init__(self, cache: Dict[str, List[int]], out: List[int], encoder: WordEncoder) -> None:
        self.cache = cache
        self.out = out
        self.encoder = encoder

    def get(self, token: str, default: int) -> int:
        return 0

    def __setitem__(self, token: str, count: int) -> None:
        ids = self.cache.get(token)
        if ids is None:
            ids = self.new_word(token)
        self.out.extend(ids)

    def new_word(self, token: str) -> List[int]:
        """The ids of a pre-token not in the cache, which then holds them."""
        ids = self.encoder.encode_word(token)
        cache = self.cache
        if len(cache) >= CACHE_SIZE:
            cache.clear()
        cache[token] = ids
        return ids
