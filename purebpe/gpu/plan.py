"""What a tokenizer's decoding means as a per-id byte table plus start-of-sequence rules.

:class:`DecodeTable` copies bytes; this module says which bytes. For purebpe's own
tokenizers (and tiktoken rank files, Tekken, GPT-2 files) every id simply stands for its
vocab bytes. An HF ``tokenizer.json`` decodes through its ``decoder`` pipeline instead,
and :func:`plan_for` walks that pipeline once per id, keeping what it means:

* each id's bytes (``▁`` made a space by ``Replace`` or ``Metaspace``, a ``ByteLevel``
  token mapped back from GPT-2's alphabet, per-token ``Strip``...);
* ``first``: the bytes of an id when it is the first token decoded (``Metaspace`` drops
  ``▁`` there instead of making it a space; without a decoder HF joins tokens with a
  space, so every token but the first has one in front);
* ``skipped``: ids decode leaves out (special tokens under ``skip_special_tokens``), which
  neither produce bytes nor count as the first token;
* ``byte_ids``: ``<0xNN>`` tokens of a ``ByteFallback`` decoder. HF turns each *run* of
  them into its UTF-8 text, or, when the run is not valid UTF-8, into one U+FFFD per byte
  (even the run's valid bytes). Concatenating the bytes and decoding with
  ``errors="replace"`` gives exactly that whenever the result has no U+FFFD (text tokens
  are whole characters, so a run neither completes nor is completed by them), and the
  decoders fall back to :func:`run_text` for the rare row that has one;
* ``strip``: leading characters cut from the whole text (``Strip`` after ``Fuse`` or
  ``ByteLevel``, Llama 2's ``Strip(" ", 1, 0)``).

A pipeline that cannot be written this way is refused in one line naming the component:
a ``Strip`` cutting the *end* of the whole text, ``BPEDecoder`` (its last token differs),
a per-token decoder after ``ByteFallback`` (it would act on each run's decoded text) or
after ``Fuse``/``ByteLevel`` (on the whole text), ``ByteLevel`` and ``ByteFallback``
together. Nothing is ever decoded differently from ``tok.decode``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Dict, List, Optional, Sequence, Set, Tuple

import attr

from .. import decoders as dec
from ..errors import PureBPEError

#: A decoding's tokens: each id's bytes (``None``: not an id of the tokenizer).
Tokens = List[Optional[bytes]]


@attr.s(frozen=True, slots=True, auto_attribs=True)
class DecodePlan:
    """Each id's bytes and the rules that depend on where it stands (module docstring)."""

    tokens: Tokens
    first: Dict[int, bytes] = attr.Factory(dict)
    skipped: Set[int] = attr.Factory(set)
    byte_ids: Set[int] = attr.Factory(set)
    strip: Tuple[str, int] = ("", 0)


def plan_for(tokenizer: Any, skip_special_tokens: bool = False) -> DecodePlan:
    """The plan of any loaded tokenizer: an ``HFTokenizer`` (or the ``tokenizers`` facade
    around one), or anything with a ``.vocab`` of ids to bytes (``Tokenizer``, ``BPEModel``).

    >>> import purebpe.hf
    >>> tok = purebpe.hf.loads('{"model": {"type": "BPE", "vocab": {"▁a": 0, "<0x21>": 1},'
    ...     ' "merges": []}, "decoder": {"type": "Metaspace", "prepend_scheme": "first"}}')
    >>> plan = plan_for(tok)
    >>> plan.tokens, plan.first
    ([b' a', b'<0x21>'], {0: b'a'})
    """
    from ..hf import HFTokenizer  # the layer above the decoders; imported lazily with hf

    pipeline = getattr(tokenizer, "_pipeline", tokenizer)  # purebpe.compat.tokenizers
    if isinstance(pipeline, HFTokenizer):
        return _hf_plan(pipeline, skip_special_tokens)
    vocab = getattr(tokenizer, "vocab", None)
    if not isinstance(vocab, Mapping):
        raise PureBPEError(
            f"{type(tokenizer).__name__} has no .vocab mapping ids to bytes; pass a loaded "
            "tokenizer (purebpe.Tokenizer.from_file), a purebpe.BPEModel or use DecodeTable.from_vocab"
        )
    skipped: Set[int] = set()
    if skip_special_tokens:
        special = getattr(tokenizer, "special_ids", None)
        if isinstance(special, Mapping):
            skipped = set(special.values())
        else:  # a BPEModel: its specials are vocab entries spelling them
            names = {s.encode("utf-8") for s in getattr(tokenizer, "special_tokens", ())}
            skipped = {tid for tid, token in vocab.items() if token in names}
    size = max(vocab) + 1 if vocab else 0
    tokens: Tokens = [None] * size
    for tid, token in vocab.items():
        tokens[tid] = b"" if tid in skipped else token
    return DecodePlan(tokens, skipped=skipped)


def _hf_plan(tok: Any, skip_special_tokens: bool) -> DecodePlan:
    """Walk ``tok.decoder`` over every id's token (see the module docstring)."""
    size = 1 + max(max(tok.model.id_to_token, default=-1), max(tok.added.by_id, default=-1))
    special = tok.added.special_contents
    texts: List[Optional[str]] = [tok.id_to_token(tid) for tid in range(size)]
    skipped = {tid for tid, t in enumerate(texts) if t is not None and skip_special_tokens and t in special}
    live = [tid for tid, t in enumerate(texts) if t is not None and tid not in skipped]
    where = f"{tok.name}: decoder"
    if tok.decoder is None:  # HF joins the tokens with spaces
        normal = {tid: " " + str(texts[tid]) for tid in live}
        first_text = {tid: str(texts[tid]) for tid in live}
        return _finish(size, skipped, _encode(normal), _encode(first_text), set(), ("", 0))
    stages = _flatten(tok.decoder)
    normal_str: Dict[int, str] = {tid: str(texts[tid]) for tid in live}
    first_str: Optional[Dict[int, str]] = None  # first-token forms, once some differ
    as_bytes: Optional[Tuple[Dict[int, bytes], Dict[int, bytes]]] = None  # after ByteLevel
    byte_ids: Set[int] = set()
    fused = ""  # the component after which the tokens are one whole text
    fallback = False
    strip_char, strip_count = "", 0
    for stage in stages:
        name = type(stage).__name__
        if isinstance(stage, dec.Fuse):
            fused = fused or "Fuse"
        elif fused:
            if not isinstance(stage, dec.Strip):
                raise PureBPEError(
                    f"{where} {name} after {fused} works on the whole decoded text, which a "
                    "per-id table cannot express"
                )
            if stage.stop:
                raise PureBPEError(
                    f"{where} Strip(stop={stage.stop}) after {fused} cuts the end of the whole "
                    "text, which is not known while tokens still come"
                )
            if stage.start and strip_count and stage.content != strip_char:
                raise PureBPEError(f"{where} two Strip decoders with different characters at the start")
            if stage.start:
                strip_char, strip_count = stage.content, strip_count + stage.start
        elif isinstance(stage, dec.ByteLevel):
            if fallback:
                raise PureBPEError(f"{where} ByteLevel after ByteFallback is not supported on the GPU")
            level = dec.byte_level_bytes
            normal_level = {tid: level(t) for tid, t in normal_str.items()}
            first_level = normal_level
            if first_str is not None:
                first_level = {tid: level(t) for tid, t in first_str.items()}
            as_bytes = (normal_level, first_level)
            fused = "ByteLevel"
        elif fallback and not isinstance(stage, dec.ByteFallback):
            raise PureBPEError(
                f"{where} {name} after ByteFallback acts on each byte run's decoded text, "
                "which a per-id table cannot express"
            )
        elif isinstance(stage, dec.ByteFallback):
            if fallback:
                raise PureBPEError(f"{where} ByteFallback twice is not supported on the GPU")
            fallback = True
            for tid, text in normal_str.items():
                value = dec.byte_token_value(text)
                if first_str is not None and value != dec.byte_token_value(first_str[tid]):
                    raise PureBPEError(f"{where} makes token {tid} a byte token only when it is first")
                if value >= 0:
                    byte_ids.add(tid)
                    normal_str[tid] = chr(value)  # latin-1: the byte itself
                    if first_str is not None:
                        first_str[tid] = chr(value)
        elif isinstance(stage, dec.Metaspace):
            rep = stage.replacement
            keep = " " if stage.prepend_scheme == "never" else ""
            first_str = {tid: t.replace(rep, keep) for tid, t in (first_str or normal_str).items()}
            normal_str = {tid: t.replace(rep, " ") for tid, t in normal_str.items()}
        elif isinstance(stage, (dec.Replace, dec.Strip)):
            apply = stage.decode_chain
            if first_str is not None:
                first_str = {tid: apply([t])[0] for tid, t in first_str.items()}
            normal_str = {tid: apply([t])[0] for tid, t in normal_str.items()}
        elif isinstance(stage, dec.BPEDecoder):
            raise PureBPEError(
                f"{where} BPEDecoder writes the last token differently, which is not known "
                "while tokens still come"
            )
        else:
            raise PureBPEError(f"{where} {name} is not supported on the GPU")
    if as_bytes is None:
        normal_bytes = _encode(normal_str, byte_ids)
        first_bytes = normal_bytes if first_str is None else _encode(first_str, byte_ids)
    else:
        normal_bytes, first_bytes = as_bytes
    return _finish(size, skipped, normal_bytes, first_bytes, byte_ids, (strip_char, strip_count))


def _flatten(decoder: Any) -> List[Any]:
    if isinstance(decoder, dec.Sequence):
        return [stage for inner in decoder.decoders for stage in _flatten(inner)]
    return [decoder]


def _encode(texts: Dict[int, str], byte_ids: Optional[Set[int]] = None) -> Dict[int, bytes]:
    """Text tokens as UTF-8; byte tokens (held as one latin-1 character) as their byte."""
    byte_ids = byte_ids or set()
    return {
        tid: t.encode("latin-1") if tid in byte_ids else t.encode("utf-8", "surrogatepass")
        for tid, t in texts.items()
    }


def _finish(
    size: int,
    skipped: Set[int],
    normal: Dict[int, bytes],
    first: Dict[int, bytes],
    byte_ids: Set[int],
    strip: Tuple[str, int],
) -> DecodePlan:
    tokens: Tokens = [None] * size
    for tid in skipped:
        tokens[tid] = b""
    for tid, data in normal.items():
        tokens[tid] = data
    differ = {} if first is normal else {tid: data for tid, data in first.items() if data != normal[tid]}
    return DecodePlan(tokens, differ, skipped, byte_ids, strip)


def run_text(pieces: Sequence[bytes], is_byte: Sequence[bool], run: bytes = b"") -> Tuple[str, bytes]:
    """HF's ``ByteFallback`` text of ``pieces``, after a run of byte tokens ``run`` not yet
    closed; returns the text and the run still open at the end (not decoded).

    >>> run_text([b"a", b"\\xe2", b"\\x82", b"b"], [False, True, True, False])
    ('a\\ufffd\\ufffdb', b'')
    >>> run_text([b"\\x82", b"\\xac", b"b", b"\\xe2"], [True, True, False, True], b"\\xe2")
    ('\\u20acb', b'\\xe2')
    """
    out: List[str] = []
    held = bytearray(run)
    for piece, byte in zip(pieces, is_byte):
        if byte:
            held += piece
            continue
        if held:
            out.append(close_run(bytes(held)))
            del held[:]
        out.append(piece.decode("utf-8", "replace"))
    return "".join(out), bytes(held)


def close_run(run: bytes) -> str:
    """A finished run of byte tokens: its text, or one U+FFFD per byte if not valid UTF-8.

    >>> close_run("€".encode()), close_run(b"A\\xe2")
    ('€', '\\ufffd\\ufffd')
    """
    try:
        return run.decode("utf-8")
    except UnicodeDecodeError:
        return "\ufffd" * len(run)


def strip_start(text: str, char: str, count: int) -> Tuple[str, int]:
    """``text`` without up to ``count`` leading ``char``; also how many were cut.

    >>> strip_start("  a ", " ", 1), strip_start("  ", " ", 5)
    ((' a ', 1), ('', 2))
    """
    cut = 0
    while cut < count and cut < len(text) and text[cut] == char:
        cut += 1
    return text[cut:], cut
