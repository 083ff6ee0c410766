"""``encode_iterable`` of an HF pipeline: the ids of a stream, exactly, in bounded memory.

:meth:`HFTokenizer.encode <purebpe.hf.HFTokenizer.encode>` of the joined text runs, in
order: the raw added tokens found in the whole text; the normalizer on each stretch
between two of them (a *segment*); the normalized added tokens found in each normalized
segment; the pre-tokenizer on each stretch between tokens, at the start of the input or
not (``Metaspace(prepend_scheme="first")`` reads it); the model on each piece.
:class:`IdStream` runs the same steps as the text comes, each keeping only what it cannot
decide yet, and gives the ids of what is certain:

1. raw added tokens: :class:`purebpe.hf.added.TokenStream` (a token found is final once
   the text holds its longest competitor and the character after; the text before the
   next place a token may start is plain text); a token ends the segment;
2. the normalizer: :func:`purebpe.normalizers.streaming.normalizer_stream`, fresh for each
   segment (its rules per normalizer are in that module), fed the segment's plain text;
3. normalized added tokens: a ``TokenStream`` again, fresh for each segment;
4. pre-tokenizer and model: the normalized text between tokens is gathered and encoded
   up to the last place ``c`` where encoding the two sides apart gives the ids of the
   whole.  For the byte-level pipelines purebpe's engine runs (:mod:`purebpe.hf.fast`),
   that is the named pattern's own safe cut (:func:`purebpe.pretokenize.cut_finder`).
   Otherwise the pre-tokenizer's verdict on the two characters around ``c``
   (:class:`purebpe.pre_tokenizers.cuts.PairRule`) is ``BOUNDARY`` -- done -- or
   ``TRANSPARENT``: the sides give the whole's pieces except that the piece across ``c``
   may come out cut at ``c``, which changes no id when the model cannot join the two
   characters (:meth:`purebpe.models.bpe.BPE.separable`) -- with ``ignore_merges``, only
   when the piece is certainly cut (a pre-tokenizer that never splits), so that both
   sides are known to be fragments of one piece (:meth:`~purebpe.models.bpe.BPE.encode_fragment`).
   The pieces before ``c`` are taken from the pre-tokenization of the whole buffer (a
   lookahead sees what follows ``c``): they are its pieces minus those of the text from
   ``c``, the piece across ``c`` cut there.  The text after ``c`` is encoded later as
   not starting the input.

Each step keeps the text since its last safe place, so what is held at once is bounded by
the longest stretch without one, plus a buffer of about ``STREAM_CHARS`` characters; a
stretch where some step knows no safe place (a normalizer or ``Split`` regex the analysis
cannot read, a model whose symbols depend on their place) is held until a step ends it:
an added token, or the end of the stream.  :attr:`IdStream.most_held` records the most
characters held at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Dict, Iterable, Iterator, List, Optional, Union
from weakref import WeakKeyDictionary

from ..normalizers.streaming import normalizer_stream
from ..pre_tokenizers import PreTokenizer
from ..pre_tokenizers.cuts import BOUNDARY, TRANSPARENT, PairRule
from ..pretokenize import cut_finder
from ..pretokenize.chunking import decode_stream
from ..tokenizer import STREAM_CHARS
from .added import Found
from .origin import origin_chars

if TYPE_CHECKING:
    from .pipeline import HFTokenizer

__all__ = ["IdStream"]

#: What is done with a stretch of text, and with a token, found by a TokenStream.
_TextStep = Callable[[str, List[int]], None]
_TokenStep = Callable[[int, List[int]], None]


class _CutPlan:
    """Where a pipeline's step 4 may cut: the pre-tokenizer's :class:`PairRule` and the
    verdicts met so far, kept per tokenizer while its pre-tokenizer and model stay."""

    __slots__ = ("pre_tokenizer", "model", "rule", "safe")

    def __init__(self, tok: "HFTokenizer") -> None:
        self.pre_tokenizer = tok.pre_tokenizer
        self.model = tok.model
        self.rule = PairRule(tok.pre_tokenizer)
        self.safe: Dict[str, bool] = {}  # pair -> whether a cut between them is safe


_plans: "WeakKeyDictionary[HFTokenizer, _CutPlan]" = WeakKeyDictionary()


def _plan(tok: "HFTokenizer") -> _CutPlan:
    plan = _plans.get(tok)
    if plan is None or plan.pre_tokenizer is not tok.pre_tokenizer or plan.model is not tok.model:
        plan = _plans[tok] = _CutPlan(tok)
    return plan


class _PlainStream:
    """Step 4: normalized text without added tokens to ids, cut where it is safe."""

    __slots__ = (
        "_tok",
        "_plan",
        "_fast_cut",
        "buf",
        "_at_origin",
        "_continuing",
        "_checked",
        "_threshold",
    )

    def __init__(self, tok: "HFTokenizer") -> None:
        self._tok = tok
        self._plan: Optional[_CutPlan] = None  # made at the first cut looked for
        self._fast_cut: Optional[Callable[[bytes, int], int]] = None
        self.buf = ""
        self._at_origin = True  # the text starts the input
        self._continuing = False  # its first piece continues a piece cut before it
        self._checked = 0  # places up to here were found unsafe (a property of the pair)
        self._threshold = STREAM_CHARS

    def feed(self, text: str, out: List[int]) -> None:
        if not text:
            return
        self.buf += text
        if len(self.buf) < self._threshold:
            return
        cut = self._fast_cut_at() if self._tok.fast is not None else self._cut_at()
        if cut <= 0:
            self._threshold = 2 * len(self.buf)  # look again when twice as much has come
            return
        buf = self.buf
        if self._tok.fast is not None:
            out += self._tok.fast.encode_ordinary(buf[:cut])
        elif not self._encode_left(buf, cut, out):
            self._threshold = 2 * len(buf)
            return
        self._threshold = STREAM_CHARS
        self.buf = buf[cut:]
        self._at_origin = False
        self._checked = 0

    def finish(self, out: List[int]) -> None:
        """Encode the rest: the stretch between tokens ends here."""
        text = self.buf
        if text:
            if self._tok.fast is not None:
                out += self._tok.fast.encode_ordinary(text)
            else:
                self._encode_pieces(self._pieces(text, self._at_origin), self._continuing, False, out)
        self.buf = ""
        self._at_origin = False
        self._continuing = False
        self._checked = 0
        self._threshold = STREAM_CHARS

    def _fast_cut_at(self) -> int:
        assert self._tok.fast is not None
        if self._fast_cut is None:
            self._fast_cut = cut_finder(self._tok.fast.pretokenizer)
        data = self.buf.encode("utf-8", "surrogatepass")
        cut = self._fast_cut(data, len(data) - 1)
        if not 0 < cut < len(data):
            return -1
        return len(data[:cut].decode("utf-8", "surrogatepass"))

    def _safe(self, pair: str) -> bool:
        plan = self._plan
        assert plan is not None
        found = plan.safe.get(pair)
        if found is None:
            rule = plan.rule
            verdict, left, right = rule.verdict(pair[0], pair[1])
            model = self._tok.model
            found = verdict == BOUNDARY or (
                verdict == TRANSPARENT
                and model.separable(left, right)
                and not (model.ignore_merges and rule.splits)
            )
            plan.safe[pair] = found
        return found

    def _cut_at(self) -> int:
        if self._plan is None:
            self._plan = _plan(self._tok)
        rule = self._plan.rule
        if not rule.usable:
            return -1
        buf = self.buf
        low = max(1, self._checked + 1)
        cut = len(buf) - rule.margin
        safe = self._safe
        while cut >= low and not safe(buf[cut - 1 : cut + 1]):
            cut -= 1
        if cut < low:
            self._checked = max(self._checked, len(buf) - rule.margin)
            return -1
        return cut

    def _pieces(self, text: str, at_origin: bool) -> List[str]:
        pre_tokenizer: Optional[PreTokenizer] = self._tok.pre_tokenizer
        if pre_tokenizer is None:
            return [text] if text else []
        return pre_tokenizer.split_texts([text] if text else [], at_origin)[0]

    def _encode_left(self, buf: str, cut: int, out: List[int]) -> bool:
        """The ids of the pieces before ``cut``, from the pieces of the whole buffer
        (False, and nothing done, if they do not decompose as a cut there must)."""
        whole = self._pieces(buf, self._at_origin)
        right = self._pieces(buf[cut:], False)
        count = len(whole) - len(right)
        if count >= 0 and whole[count:] == right:
            left, joined = whole[:count], False
        else:
            # The piece across the cut: the whole's piece ``count`` is its two sides joined.
            across = whole[count] if 0 <= count < len(whole) else ""
            if (
                whole[count + 1 :] != right[1:]
                or len(across) <= len(right[0])
                or not across.endswith(right[0])
            ):
                return False  # not the shape the verdict promised: no cut here
            left, joined = whole[: count + 1], True
            left[-1] = across[: len(across) - len(right[0])]
        self._encode_pieces(left, self._continuing, joined, out)
        self._continuing = joined
        return True

    def _encode_pieces(self, pieces: List[str], first_cut: bool, last_cut: bool, out: List[int]) -> None:
        """Each piece through the model; a first (last) piece that is one side of a cut
        piece is a fragment (no whole-token shortcut)."""
        model = self._tok.model
        encode_piece = model.encode_piece
        last = len(pieces) - 1
        for index, piece in enumerate(pieces):
            if (index == 0 and first_cut) or (index == last and last_cut):
                out += model.encode_fragment(piece)
            else:
                out += encode_piece(piece)


class IdStream:
    """The ids of the concatenated ``chunks`` as :meth:`HFTokenizer.encode` gives them for
    the joined text (``add_special_tokens=False``), as the text comes (see the module
    docstring); :attr:`most_held` is the most characters held at once.

    >>> from purebpe.hf.loader import from_document
    >>> tok = from_document({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}})
    >>> list(IdStream(tok, ["ab", "ba", "b"]))
    [2, 1, 2]
    """

    def __init__(self, tok: "HFTokenizer", chunks: Iterable[Union[str, bytes]]) -> None:
        self._tok = tok
        self._raw = tok.added.stream(raw=True)
        self._normalized = tok.added.stream(raw=False)
        self._normalizer = normalizer_stream(tok.normalizer)
        self._plain = _PlainStream(tok)
        # Where the first segment's pieces start the input (Metaspace("first") after a
        # normalizer, :mod:`purebpe.hf.origin`): its raw text and normalized text are kept
        # (``_probe``, ``_pending``) until the prefix read decides how many normalized
        # characters come from offset 0; ``_origin_left`` then counts those not yet passed
        # on, and ``_whole`` holds the segment when a step before Metaspace could cut them
        # apart (encoded whole at its end, as ``encode`` does).
        self._placed = None if tok.normalizer is None else tok.metaspace_placed()
        self._probe: Optional[List[str]] = None if self._placed is None else []
        self._pending = ""
        self._origin_left = 0
        self._whole: Optional[List[str]] = None
        #: The most characters of the input held at once, not yet turned into ids.
        self.most_held = 0
        self._ids = self._run(decode_stream(chunks))

    def __iter__(self) -> Iterator[int]:
        return self._ids  # the generator itself: a loop over it pays no call per id

    def __next__(self) -> int:
        return next(self._ids)

    def held(self) -> int:
        """Characters held now by the steps (not counting input not yet handed to them)."""
        held = self._normalizer.held() + len(self._plain.buf) + len(self._pending)
        for part in self._whole or self._probe or ():
            held += len(part)
        for stream in (self._raw, self._normalized):
            if stream is not None:
                held += stream.held()
        return held

    def _run(self, chunks: Iterable[str]) -> Iterator[int]:
        pending: List[str] = []
        size = 0
        for chunk in chunks:
            pending.append(chunk)
            size += len(chunk)
            if size < STREAM_CHARS:
                continue
            self.most_held = max(self.most_held, size + self.held())
            out: List[int] = []
            self._raw_text("".join(pending), out)
            pending, size = [], 0
            yield from out
        out = []
        self._raw_text("".join(pending), out)
        if self._raw is not None:
            self._events(self._raw.finish(), self._segment_text, self._raw_token, out)
        self._end_segment(out)
        yield from out

    def _raw_text(self, text: str, out: List[int]) -> None:
        if self._raw is None:
            self._segment_text(text, out)
            return
        self._events(self._raw.feed(text), self._segment_text, self._raw_token, out)

    def _raw_token(self, tid: int, out: List[int]) -> None:
        self._end_segment(out)
        out.append(tid)

    def _segment_text(self, text: str, out: List[int]) -> None:
        if self._whole is not None:
            self._whole.append(text)
            return
        normalized = self._normalizer.feed(text)
        if self._probe is None:
            self._normalized_text(normalized, out)
            return
        self._probe.append(text)
        self._pending += normalized
        if self._pending:
            self._settle(False, out)

    def _settle(self, complete: bool, out: List[int]) -> None:
        """Decide where the first segment's pieces start the input, if its text read so
        far (all of it: ``complete``) tells, and pass on the normalized text kept meanwhile."""
        assert self._probe is not None and self._tok.normalizer is not None
        raw = "".join(self._probe)
        origin = origin_chars(self._tok.normalizer, raw, complete)
        if origin is None:
            self._probe = [raw]
            return
        self._probe = None
        pending, self._pending = self._pending, ""
        if origin > 1 and self._placed:
            self._whole = [raw]
            self._normalizer = normalizer_stream(self._tok.normalizer)  # what it held is in raw
            return
        self._origin_left = origin
        self._plain._at_origin = origin > 0
        self._normalized_text(pending, out)

    def _normalized_text(self, text: str, out: List[int]) -> None:
        if self._normalized is None:
            self._plain.feed(text, out)
            return
        self._normalized_events(self._normalized.feed(text), out)

    def _normalized_events(self, events: List[Found], out: List[int]) -> None:
        if self._origin_left <= 1:
            self._events(events, self._plain.feed, self._normalized_token, out)
            return
        # A token inside the characters made of the first: what follows it may still
        # start the input.
        for tid, text in events:
            if tid is None:
                self._plain.feed(text, out)
            else:
                self._normalized_token(tid, out)
            self._origin_left = max(0, self._origin_left - len(text))
            if tid is not None:
                self._plain._at_origin = self._origin_left > 0

    def _normalized_token(self, tid: int, out: List[int]) -> None:
        self._plain.finish(out)
        out.append(tid)

    def _end_segment(self, out: List[int]) -> None:
        """The segment ends (a raw token follows, or the stream ends): every step finishes."""
        if self._whole is not None:
            self._tok._encode_segment("".join(self._whole), True, out)
            self._whole = None
            self._plain._at_origin = False
            return
        rest = self._normalizer.finish()
        if self._probe is not None:
            self._pending += rest
            self._settle(True, out)
            if self._whole is not None:
                self._end_segment(out)
                return
        else:
            self._normalized_text(rest, out)
        if self._normalized is not None:
            self._normalized_events(self._normalized.finish(), out)
        self._plain.finish(out)
        self._origin_left = 0

    @staticmethod
    def _events(events: List[Found], text_step: _TextStep, token_step: _TokenStep, out: List[int]) -> None:
        for tid, text in events:
            if tid is None:
                text_step(text, out)
            else:
                token_step(tid, out)
