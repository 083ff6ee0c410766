"""What a pattern scanner writes its pre-tokens to: a ``dict`` of counts, or a :class:`Sink`.

A scanner writes each pre-token with ``sink[token] = sink.get(token, 0) + 1``, the line
that counts pre-tokens into a ``dict`` when training. Whatever else a scanner fills is a
:class:`Sink` with those two methods, such as :class:`TokenList` when splitting. Each
scanner's twin on UTF-8 (``count_utf8``, ``scan_utf8``) writes ``bytes`` pre-tokens in the
same way, to a ``dict`` or a :class:`BytesSink`: :class:`purebpe.encoding_sink.EncodingSink`
when encoding.

The scanners' parameter, :data:`TokenSink`, is the union of the two rather than a
protocol for the compiled build (``setup.py``, where this module is native): mypyc calls
a union's native class by a type check and a C call, and a protocol's methods by name
through Python (docs/compiled.md has the figures); counting into a ``dict`` is unchanged.
"""

from __future__ import annotations

from typing import Dict, List, Union

__all__ = ["BytesSink", "BytesTokenSink", "Sink", "TokenList", "TokenSink"]


class Sink:
    """A scanner's target that is not a ``dict``: subclasses say what a pre-token does.

    >>> sink = TokenList()
    >>> sink["ab"] = sink.get("ab", 0) + 1
    >>> sink.tokens
    ['ab']
    """

    __slots__ = ()

    def get(self, token: str, default: int) -> int:
        """What the scanner adds 1 to, and writes back (nothing counts here)."""
        return 0

    def __setitem__(self, token: str, count: int) -> None:
        raise NotImplementedError


#: A scanner's ``counts``: ``dict`` (training counts) or a :class:`Sink`.
TokenSink = Union[Dict[str, int], Sink]


class TokenList(Sink):
    """Records each pre-token in order, in :attr:`tokens`: one scanner loop serves both
    splitting and the hot counting path, which gets a real ``dict``."""

    __slots__ = ("tokens",)

    def __init__(self) -> None:
        self.tokens: List[str] = []

    def __setitem__(self, token: str, count: int) -> None:
        self.tokens.append(token)


class BytesSink:
    """:class:`Sink` for the scanners of UTF-8 bytes, whose pre-tokens are ``bytes``."""

    __slots__ = ()

    def get(self, token: bytes, default: int) -> int:
        """What the scanner adds 1 to, and writes back (nothing counts here)."""
        return 0

    def __setitem__(self, token: bytes, count: int) -> None:
        raise NotImplementedError


#: A UTF-8 scanner's ``counts``: ``dict`` (training counts) or a :class:`BytesSink`.
BytesTokenSink = Union[Dict[bytes, int], BytesSink]
