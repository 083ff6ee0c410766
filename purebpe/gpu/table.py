"""The device-resident token table: every token's bytes in one ``uint8`` buffer.

:class:`DecodeTable` is built once from a vocab (``{id: token_bytes}``) and then serves any
number of decodes. Token ``i``'s bytes are ``token_bytes[offsets[i] : offsets[i] + lengths[i]]``,
so decoding a row of ids is two small gathers (``offsets[ids]``, ``lengths[ids]``) and one
big gather of bytes (:mod:`purebpe.gpu.decode`). Building it costs one pass over the vocab
in Python and one host-to-device copy of about ``sum(len(token))`` bytes plus 16 bytes per
id (a 50k-token GPT-2 vocab: about 1.1 MB).

Token bytes are raw bytes, exactly as in ``Tokenizer.vocab`` and ``BPEModel.vocab``: a
vocab read from GPT-2-style files has already been mapped back from the byte-to-unicode
alphabet by its loader (``"ð"`` is the byte 0xF0), so decoding never sees the mapped
characters. A vocab whose values are ``str`` is refused rather than guessed at.

It also checks ids (:meth:`DecodeTable.check_ids`) so that bad input fails with a
``PureBPEError`` before any gathering starts.
"""
from __future__ import annotations

from types import ModuleType
from typing import Any, Mapping, Optional

import attr

from ..errors import PureBPEError
from .backend import Array, Namespace, import_backend, is_cupy, resolve_namespace

# Ids index int64 arrays on the device; a vocab this large is a mistake, not a tokenizer.
MAX_ID = 2**31 - 1


@attr.s(frozen=True, slots=True, auto_attribs=True, eq=False)  # arrays: identity, not ==
class DecodeTable:
    """Every token's bytes back to back in ``token_bytes``, located by ``offsets``/``lengths``.

    ``xp`` is the array module the arrays live in (NumPy or CuPy). ``vocab_size`` is one
    more than the highest id; ``known`` (on ``xp``) and ``known_host`` (NumPy) mark which
    ids below it exist, or are ``None`` when all do (the usual, dense case). ``fused``
    selects the single-kernel CUDA gather under CuPy (see :mod:`purebpe.gpu.decode`).
    """

    xp: ModuleType
    token_bytes: Array
    offsets: Array
    lengths: Array
    vocab_size: int
    known: Optional[Array] = None
    known_host: Optional[Any] = None
    fused: bool = False

    @classmethod
    def from_vocab(
        cls, vocab: Mapping[int, bytes], xp: Namespace = None, *, fused: bool = False
    ) -> "DecodeTable":
        """The table of ``vocab`` (``{id: raw token bytes}``) on ``xp`` (default NumPy).

        ``xp`` is ``numpy``, ``cupy`` (or their names). ``fused=True`` uses one CUDA kernel
        for the byte gather under CuPy instead of the array expression (same result).
        """
        if not isinstance(vocab, Mapping):
            raise PureBPEError(f"vocab must be a mapping of ids to bytes, not {type(vocab).__name__}")
        module = resolve_namespace(xp)
        if fused and not is_cupy(module):
            raise PureBPEError("fused=True needs xp=cupy (the fused gather is a CUDA kernel)")
        numpy = import_backend("numpy")
        ids = sorted(_check_entry(tid, token) for tid, token in vocab.items())
        vocab_size = ids[-1] + 1 if ids else 0
        lengths = [0] * vocab_size
        offsets = [0] * vocab_size
        position = 0
        for tid in ids:
            offsets[tid] = position
            lengths[tid] = len(vocab[tid])
            position += lengths[tid]
        blob = b"".join([bytes(vocab[tid]) for tid in ids])
        known_host = None
        if len(ids) != vocab_size:
            known_host = numpy.zeros(vocab_size, dtype=bool)
            known_host[ids] = True
        return cls(
            xp=module,
            token_bytes=module.asarray(numpy.frombuffer(blob, dtype=numpy.uint8)),
            offsets=module.asarray(offsets, dtype=module.int64),
            lengths=module.asarray(lengths, dtype=module.int64),
            vocab_size=vocab_size,
            known=None if known_host is None else module.asarray(known_host),
            known_host=known_host,
            fused=fused,
        )

    @classmethod
    def from_tokenizer(
        cls, tokenizer: Any, xp: Namespace = None, *, fused: bool = False
    ) -> "DecodeTable":
        """The table of anything with a ``.vocab`` mapping ids to bytes.

        That is a ``purebpe.Tokenizer`` or a ``purebpe.BPEModel``.
        """
        vocab = getattr(tokenizer, "vocab", None)
        if not isinstance(vocab, Mapping):
            raise PureBPEError(
                f"{type(tokenizer).__name__} has no .vocab mapping ids to bytes; "
                "pass a purebpe.Tokenizer, a purebpe.BPEModel or use DecodeTable.from_vocab"
            )
        return cls.from_vocab(vocab, xp, fused=fused)

    @property
    def num_bytes(self) -> int:
        """How many bytes all tokens hold together (the length of ``token_bytes``)."""
        return int(self.token_bytes.shape[0])

    def namespace_of(self, array: Array) -> ModuleType:
        """The module ``array`` lives in: NumPy for host arrays, else the table's ``xp``."""
        numpy = import_backend("numpy")
        return numpy if isinstance(array, numpy.ndarray) else self.xp

    def check_ids(self, ids: Array, where: Optional[Array] = None, name: str = "ids") -> None:
        """Raise ``PureBPEError`` unless every id of ``ids`` (where ``where`` holds) exists.

        Runs in the namespace ``ids`` lives in (host ids are checked on the host): a min and
        a max read back; only a failing check looks further, to name the first bad id.
        """
        xp = self.namespace_of(ids)
        if ids.dtype.kind not in "iu":
            raise PureBPEError(f"{name} must hold integers, not {ids.dtype}")
        if ids.size == 0:
            return
        known = self.known if xp is self.xp else self.known_host
        values = ids if where is None else xp.where(where, ids, 0)
        if known is None and int(values.min()) >= 0 and int(values.max()) < self.vocab_size:
            return  # the usual case: two reductions, no temporary mask
        bad = (ids < 0) | (ids >= self.vocab_size)
        if known is not None and self.vocab_size > 0:
            bad |= ~known[xp.clip(ids, 0, self.vocab_size - 1)]
        if where is not None:
            bad &= where
        if not bool(bad.any()):
            return
        first = int(xp.argmax(bad.reshape(-1)))
        index = import_backend("numpy").unravel_index(first, ids.shape)
        value = int(ids.reshape(-1)[first])
        shown = ", ".join(str(int(i)) for i in index)
        raise PureBPEError(
            f"{name}[{shown}] = {value} is not in the vocab "
            f"({self.vocab_size} ids{'' if self.known is None else ', some missing'})"
        )


def _check_entry(tid: Any, token: Any) -> int:
    """``tid`` after checking that ``(tid, token)`` is a valid vocab entry."""
    if not isinstance(tid, int) or isinstance(tid, bool) or not 0 <= tid <= MAX_ID:
        raise PureBPEError(f"vocab id {tid!r} must be an int in 0..{MAX_ID}")
    if isinstance(token, str):
        raise PureBPEError(
            f"vocab[{tid}] is the str {token!r}; DecodeTable wants raw token bytes "
            "(map GPT-2 vocab.json strings with purebpe.bytemap.decode_token, or load the "
            "files with purebpe.load)"
        )
    if not isinstance(token, (bytes, bytearray)):
        raise PureBPEError(f"vocab[{tid}] must be bytes, not {type(token).__name__}")
    return tid

