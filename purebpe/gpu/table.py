"""The device-resident token table: every token's bytes in one ``uint8`` buffer.

:class:`DecodeTable` is built once from a vocab (``{id: token_bytes}``) and then serves any
number of decodes. Token ``i``'s bytes are ``token_bytes[offsets[i] : offsets[i] + lengths[i]]``,
so decoding a row of ids is two small gathers (``offsets[ids]``, ``lengths[ids]``) and one
big gather of bytes (:mod:`purebpe.gpu.decode`). Building it costs one pass over the vocab
in Python and one host-to-device copy of about ``sum(len(token))`` bytes plus 12 bytes per
id (``int64`` offsets, ``int32`` lengths; a 50k-token GPT-2 vocab: about 0.9 MB).

Token bytes are raw bytes, exactly as in ``Tokenizer.vocab`` and ``BPEModel.vocab``: a
vocab read from GPT-2-style files has already been mapped back from the byte-to-unicode
alphabet by its loader (``"ð"`` is the byte 0xF0), so decoding never sees the mapped
characters. A vocab whose values are ``str`` is refused rather than guessed at.

On NumPy the table also keeps every token as 8-byte *windows* (:class:`TokenWindows`: 8
bytes per id plus the tails of longer tokens), for the CPU's faster way to copy bytes
(``gather="windows"``, see :mod:`purebpe.gpu.decode`).

It also checks ids (:meth:`DecodeTable.check_ids`) so that bad input fails with a
``PureBPEError`` before any gathering starts.
"""

from __future__ import annotations

from types import ModuleType
from typing import TYPE_CHECKING, Any, Collection, List, Mapping, Optional, Sequence, Tuple

import attr

from ..errors import PureBPEError
from .backend import Array, Namespace, import_backend, is_cupy, resolve_namespace

if TYPE_CHECKING:
    from .plan import DecodePlan

# Ids index int64 arrays on the device; a vocab this large is a mistake, not a tokenizer.
MAX_ID = 2**31 - 1

#: How the bytes of the ids are copied out of the table (:mod:`purebpe.gpu.decode`):
#: ``segments`` is the one array expression both backends run (the reference),
#: ``windows`` NumPy's in-order 8-byte stores, ``fused`` one CUDA kernel under CuPy.
GATHERS = ("auto", "segments", "windows", "fused")

#: Bytes per window: one ``uint64`` store.
WINDOW = 8


@attr.s(frozen=True, slots=True, auto_attribs=True, eq=False)
class TokenWindows:
    """Every token as whole 8-byte windows (NumPy ``uint64``), zero-padded.

    ``heads[i]`` is token ``i``'s first 8 bytes; a longer token's remaining bytes are
    ``tail_count[i]`` windows from ``tails[tail_first[i]]`` on.
    """

    heads: Any
    tails: Any
    tail_first: Any
    tail_count: Any

    @classmethod
    def from_tokens(cls, tokens: Sequence[bytes]) -> "TokenWindows":
        """The windows of ``tokens[i]`` for every id ``i`` (missing ids: ``b""``)."""
        numpy = import_backend("numpy")
        heads: List[bytes] = []
        tails: List[bytes] = [bytes(WINDOW)]  # never read: keeps the array non-empty
        tail_windows = 1
        tail_first = [0] * len(tokens)
        tail_count = [0] * len(tokens)
        for tid, token in enumerate(tokens):
            heads.append(token[:WINDOW].ljust(WINDOW, b"\0"))
            rest = token[WINDOW:]
            if rest:
                count = -(-len(rest) // WINDOW)
                tail_first[tid], tail_count[tid] = tail_windows, count
                tails.append(rest.ljust(count * WINDOW, b"\0"))
                tail_windows += count
        return cls(
            heads=numpy.frombuffer(b"".join(heads), dtype=numpy.uint64),
            tails=numpy.frombuffer(b"".join(tails), dtype=numpy.uint64),
            tail_first=numpy.asarray(tail_first, dtype=numpy.int64),
            tail_count=numpy.asarray(tail_count, dtype=numpy.int64),
        )


@attr.s(frozen=True, slots=True, auto_attribs=True, eq=False)  # arrays: identity, not ==
class DecodeTable:
    """Every token's bytes back to back in ``token_bytes``, located by ``offsets``/``lengths``.

    ``xp`` is the array module the arrays live in (NumPy or CuPy). ``vocab_size`` is one
    more than the highest id; ``known`` (on ``xp``) and ``known_host`` (NumPy) mark which
    ids below it exist, or are ``None`` when all do (the usual, dense case). ``gather``
    says how bytes are copied (one of ``GATHERS`` but ``auto``); ``windows`` holds the
    8-byte windows that ``gather="windows"`` stores, else ``None``.
    """

    xp: ModuleType
    token_bytes: Array
    offsets: Array
    lengths: Array
    vocab_size: int
    known: Optional[Array] = None
    known_host: Optional[Any] = None
    gather: str = "segments"
    windows: Optional[TokenWindows] = None
    #: Start-of-sequence rules and byte runs of a decoder pipeline (:mod:`purebpe.gpu.plan`):
    #: ids ``first_shift + i`` hold id ``i``'s bytes as the first token decoded (0: no
    #: such ids); ``kept`` marks ids that count as tokens (not skipped specials) and
    #: ``is_byte`` ``ByteFallback``'s byte tokens, both over all of the table's ids (``None``:
    #: all kept, none bytes); ``host_tokens`` every id's bytes on the host, for the rows whose
    #: byte runs are not valid UTF-8; ``empty_closers``: some kept text token is empty (it
    #: ends a byte run without a byte to show it); ``strip``: the leading character the
    #: whole text loses, and how many at most.
    first_shift: int = 0
    kept: Optional[Array] = None
    kept_host: Optional[Any] = None
    is_byte: Optional[Array] = None
    host_tokens: Optional[List[bytes]] = None
    empty_closers: bool = False
    strip: Tuple[str, int] = ("", 0)

    @classmethod
    def from_vocab(
        cls, vocab: Mapping[int, bytes], xp: Namespace = None, *, gather: str = "auto"
    ) -> "DecodeTable":
        """The table of ``vocab`` (``{id: raw token bytes}``) on ``xp`` (default NumPy).

        ``xp`` is ``numpy``, ``cupy`` (or their names). ``gather`` picks how bytes are
        copied, all with the same result: ``"auto"`` (``windows`` on NumPy, ``segments``
        on CuPy), ``"segments"``, ``"windows"`` (NumPy only) or ``"fused"`` (CuPy only).
        """
        if not isinstance(vocab, Mapping):
            raise PureBPEError(f"vocab must be a mapping of ids to bytes, not {type(vocab).__name__}")
        module = resolve_namespace(xp)
        gather = _resolve_gather(gather, module)
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
            lengths=module.asarray(lengths, dtype=module.int32),  # half the traffic of int64
            vocab_size=vocab_size,
            known=None if known_host is None else module.asarray(known_host),
            known_host=known_host,
            gather=gather,
            windows=None
            if gather != "windows"
            else TokenWindows.from_tokens([bytes(vocab.get(tid, b"")) for tid in range(vocab_size)]),
        )

    @classmethod
    def from_tokenizer(
        cls,
        tokenizer: Any,
        xp: Namespace = None,
        *,
        gather: str = "auto",
        skip_special_tokens: bool = False,
    ) -> "DecodeTable":
        """The table of any loaded tokenizer, decoding as ``tokenizer.decode`` does.

        A ``purebpe.Tokenizer`` (trained, tiktoken rank files, Tekken, GPT-2 files), a
        ``purebpe.BPEModel``, or an HF ``tokenizer.json`` loaded by
        ``purebpe.Tokenizer.from_file`` (or the ``tokenizers`` facade), whose decoder
        pipeline (``ByteFallback``, ``Metaspace``, ``Replace``, ``Strip``, ``Fuse``,
        ``ByteLevel``) is worked out per id (:mod:`purebpe.gpu.plan`); one it cannot
        express is refused in one line naming the component. ``skip_special_tokens``
        leaves the special tokens out, as ``decode(ids, skip_special_tokens=True)``.

        >>> import purebpe.hf
        >>> from purebpe.gpu import decode_batch
        >>> tok = purebpe.hf.loads('{"model": {"type": "BPE", "vocab": {"▁a": 0, "<0xC3>": 1,'
        ...     ' "<0xA9>": 2}, "merges": []}, "decoder": {"type": "Sequence", "decoders": ['
        ...     '{"type": "Metaspace", "prepend_scheme": "first"}, {"type": "ByteFallback"}]}}')
        >>> decode_batch(DecodeTable.from_tokenizer(tok), [[0, 1, 2, 0], [1, 0]])
        ['aé a', '\ufffd a']
        """
        from .plan import plan_for

        return cls.from_plan(plan_for(tokenizer, skip_special_tokens), xp, gather=gather)

    @classmethod
    def from_plan(cls, plan: "DecodePlan", xp: Namespace = None, *, gather: str = "auto") -> "DecodeTable":
        """The table of a :class:`~purebpe.gpu.plan.DecodePlan` (ids, first-token forms,
        skipped ids, byte tokens, leading strip)."""
        size = len(plan.tokens)
        vocab = {tid: token for tid, token in enumerate(plan.tokens) if token is not None}
        shift = size if plan.first else 0
        virtual = dict(vocab)
        if shift:
            virtual.update({shift + tid: plan.first.get(tid, token) for tid, token in vocab.items()})
        table = cls.from_vocab(virtual, xp, gather=gather)
        if not (shift or plan.skipped or plan.byte_ids or plan.strip[1]):
            return table
        numpy = import_backend("numpy")
        module = table.xp
        known_host = table.known_host
        if shift and known_host is not None:
            known_host = known_host[:size]
        kept_host = None
        if plan.skipped:
            kept_host = _flags(numpy, table.vocab_size, plan.skipped, shift, False)
        is_byte = None
        host_tokens = None
        empty_closers = False
        if plan.byte_ids:
            is_byte = module.asarray(_flags(numpy, table.vocab_size, plan.byte_ids, shift, True))
            host_tokens = [virtual.get(tid, b"") for tid in range(table.vocab_size)]
            empty_closers = any(
                not token and tid % size not in plan.skipped and tid % size not in plan.byte_ids
                for tid, token in virtual.items()
            )
        return attr.evolve(
            table,
            vocab_size=size,
            known=None if known_host is None else module.asarray(known_host),
            known_host=known_host,
            first_shift=shift,
            kept=None if kept_host is None else module.asarray(kept_host),
            kept_host=kept_host,
            is_byte=is_byte,
            host_tokens=host_tokens,
            empty_closers=empty_closers,
            strip=plan.strip,
        )

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


def _flags(numpy: ModuleType, size: int, ids: Collection[int], shift: int, value: bool) -> Any:
    """``size`` host flags: ``value`` at ``ids`` and, with a ``shift``, at their first-token
    twins ``shift`` above; the opposite elsewhere."""
    flags = numpy.full(size, not value, dtype=bool)
    marked = sorted(ids)
    flags[marked] = value
    if shift:
        flags[[shift + tid for tid in marked]] = value
    return flags


def _resolve_gather(gather: str, xp: ModuleType) -> str:
    """``gather`` checked against ``xp``, with ``"auto"`` made concrete."""
    if gather not in GATHERS:
        raise PureBPEError(f"gather must be one of {', '.join(GATHERS)}, not {gather!r}")
    on_cupy = is_cupy(xp)
    if gather == "fused" and not on_cupy:
        raise PureBPEError("gather='fused' needs xp=cupy (the fused gather is a CUDA kernel)")
    if gather == "windows" and (on_cupy or not stores_in_order()):
        raise PureBPEError(
            "gather='windows' needs xp=numpy storing overlapping windows in index order"
            + (" (GPU stores race)" if on_cupy else ", which this NumPy does not: use 'segments'")
        )
    if gather == "auto":
        return "segments" if on_cupy or not stores_in_order() else "windows"
    return gather


_IN_ORDER: List[bool] = []


def stores_in_order() -> bool:
    """Whether NumPy's ``a[index] = values`` writes overlapping windows in index order.

    ``gather="windows"`` relies on it; NumPy has always done so for a 1-D integer index,
    but does not promise it, so ``"auto"`` checks once per process and otherwise falls
    back to ``"segments"``.
    """
    if not _IN_ORDER:
        numpy = import_backend("numpy")
        # Window k is 8 copies of byte k % 251 + 1; each overwrites 7 bytes of the one before,
        # so in order, byte k of the result is window k's. Long enough to cross NumPy's buffers.
        n = 20_000
        marks = (numpy.arange(n) % 251 + 1).astype(numpy.uint8)
        out = numpy.zeros(n + WINDOW - 1, dtype=numpy.uint8)
        windows = numpy.ndarray((n,), dtype=numpy.uint64, buffer=out, strides=(1,))
        windows[numpy.arange(n)] = numpy.repeat(marks, WINDOW).view(numpy.uint64)
        _IN_ORDER.append(bool((out[:n] == marks).all()))
    return _IN_ORDER[0]


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
