"""HF's ``decode`` of a long stream of ids, exactly, a part at a time.

HF decodes a list of ids as one: each id's token, then the decoder chain over the whole
list, and some decoders read more than one token (:mod:`purebpe.decoders`): ``ByteLevel``
and ``ByteFallback`` join bytes across tokens, ``Fuse`` joins everything (a ``Strip``
after it then strips the whole text's two ends once), ``Metaspace`` drops ``▁`` in the
first token only, ``BPEDecoder`` treats the last token apart.  :func:`decoded` decodes the
ids held so far up to the last place ``c`` where decoding the two sides apart gives the
text of the whole (:func:`_separable`), and keeps the rest:

* ``ByteLevel``: the token after ``c`` starts a character (its first byte is no UTF-8
  continuation byte), so both sides' bytes decode as they do joined;
* ``ByteFallback``: the tokens on both sides of ``c`` are no ``<0xNN>`` tokens;
* ``Metaspace`` (a prepend scheme): the token after ``c`` holds no ``▁``, so being first
  changes nothing; ``BPEDecoder``: the token before ``c`` holds no suffix;
* after a decoder that joined the tokens (``ByteLevel``, ``Fuse``), the sides are two
  texts where the whole is one: a ``Strip`` must find nothing to strip at ``c`` (the
  right side does not start, the left does not end, with its character), a ``Replace``
  must be of one character, and ``Metaspace`` or ``BPEDecoder`` never allow a cut;
* with no decoder, HF joins the tokens with spaces: any place, a space between parts.

Each rule reads the few tokens around ``c`` (:data:`WINDOW` on each side, which holds any
UTF-8 character whole) after the decoders before it.  A chain of other decoders is decoded
whole at the end.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Iterator, List

from ..decoders import (
    BPEDecoder,
    ByteFallback,
    ByteLevel,
    Decoder,
    Fuse,
    Metaspace,
    Replace,
    Sequence,
    Strip,
    byte_level_bytes,
    byte_token_value,
)

if TYPE_CHECKING:
    from .pipeline import HFTokenizer

__all__ = ["decoded"]

#: Tokens read on each side of a cut.
WINDOW = 4
#: Tokens held before a cut is looked for (a decode call per part costs little then).
HOLD_TOKENS = 1 << 12


def _steps(decoder: Decoder) -> List[Decoder]:
    if isinstance(decoder, Sequence):
        return [step for inner in decoder.decoders for step in _steps(inner)]
    return [decoder]


def _separable(steps: List[Decoder], left: List[str], right: List[str]) -> bool:
    """Whether the tokens before ``left``'s end and from ``right``'s start decode apart
    into the text they decode to together (see the module docstring)."""
    joined = False
    for step in steps:
        if isinstance(step, ByteFallback):
            if byte_token_value(left[-1]) >= 0 or byte_token_value(right[0]) >= 0:
                return False
        elif isinstance(step, ByteLevel):
            data = byte_level_bytes(right[0])
            if not data or 0x80 <= data[0] < 0xC0:
                return False
            joined = True
        elif isinstance(step, Fuse):
            joined = True
        elif isinstance(step, Metaspace):
            if step.prepend_scheme != "never" and (joined or step.replacement in right[0]):
                return False
        elif isinstance(step, BPEDecoder):
            if joined or step.suffix in left[-1]:
                return False
        elif isinstance(step, Strip):
            content = step.content
            if joined and (
                (step.start and right[0][:1] == content) or (step.stop and left[-1][-1:] == content)
            ):
                return False
        elif isinstance(step, Replace):
            if joined and not (step.pattern.kind == "String" and len(step.pattern.source) == 1):
                return False
        else:
            return False
        left, right = step.decode_chain(left), step.decode_chain(right)
        if not left or not right or not left[-1] or not right[0]:
            return False
    return True


def decoded(
    tok: "HFTokenizer", batches: Iterable[List[int]], skip_special_tokens: bool = False
) -> Iterator[str]:
    """The text of all the ids of ``batches``, as ``tok.decode`` of their concatenation
    gives it (with ``skip_special_tokens``), in parts: the ids held are those since the
    last place the decoder can be cut (see the module docstring).

    >>> from purebpe.hf.loader import from_document
    >>> tok = from_document({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []}})
    >>> "".join(decoded(tok, [[0, 1], [1]])) == tok.decode([0, 1, 1])
    True
    """
    decoder = tok.decoder
    steps = None if decoder is None else _steps(decoder)
    held: List[str] = []
    checked = 0  # places before this one were found unsafe
    between = ""  # what goes before the next part
    for batch in batches:
        held += tok.tokens_of(batch, skip_special_tokens)
        if len(held) < HOLD_TOKENS:
            continue
        cut = len(held) - WINDOW
        low = max(WINDOW, checked)
        while (
            cut >= low
            and steps is not None
            and not _separable(steps, held[cut - WINDOW : cut], held[cut : cut + WINDOW])
        ):
            cut -= 1
        if cut < low:
            checked = len(held) - WINDOW
            continue
        yield between + tok.decode_tokens(held[:cut])
        if decoder is None:
            between = " "
        held = held[cut:]
        checked = 0
    if held:
        yield between + tok.decode_tokens(held)
