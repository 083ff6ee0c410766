"""The token sink that encodes: a named pattern's scanner hands it each pre-token as it
finds it, and it appends the pre-token's ids to the output at once.

A scanner writes pre-tokens with ``sink[token] = sink.get(token, 0) + 1``, the line that
counts them into a dict when training (:class:`purebpe.pretokenize._tables.TokenSink`).
:class:`purebpe.Tokenizer` passes an :class:`EncodingSink` instead, so encoding builds no
list of pieces: each pre-token's ids come from the word cache, or from the tokenizer's
``encode_new_word`` on a miss (which also fills the cache). On PyPy the JIT inlines both
calls into the scanner's loop; in the compiled build (``setup.py``) this class is a native
one, whose methods the compiled scanners call without an interpreted frame.
"""

from __future__ import annotations

from typing import Callable, Dict, List

__all__ = ["EncodingSink"]


class EncodingSink:
    """Appends the ids of every pre-token written to it to ``out``.

    >>> out = []
    >>> sink = EncodingSink({"a": [1]}, out, lambda word: [len(word)])
    >>> sink["a"] = sink.get("a", 0) + 1
    >>> sink["bcd"] = sink.get("bcd", 0) + 1
    >>> out
    [1, 3]
    """

    __slots__ = ("cache", "out", "encode_new_word")

    def __init__(
        self, cache: Dict[str, List[int]], out: List[int], encode_new_word: Callable[[str], List[int]]
    ) -> None:
        self.cache = cache
        self.out = out
        self.encode_new_word = encode_new_word

    def get(self, token: str, default: int) -> int:
        return 0

    def __setitem__(self, token: str, count: int) -> None:
        ids = self.cache.get(token)
        if ids is None:
            ids = self.encode_new_word(token)
        self.out.extend(ids)
