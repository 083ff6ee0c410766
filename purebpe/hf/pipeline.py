"""A loaded ``tokenizer.json``: normalizer, pre-tokenizer, model, post-processor, decoder.

:class:`HFTokenizer` runs HF's ``encode`` in HF's order: added tokens with
``normalized: false`` are cut out of the raw text; each stretch between them is
normalized, and the ``normalized: true`` added tokens are cut out of that; the rest is
pre-tokenized and each piece goes through the ``BPE`` model; the post-processor adds
special tokens (only with ``add_special_tokens``) and fixes offsets. Offsets are
character offsets into the input, as HF's Python ``Encoding.offsets``.

Two ways through: :meth:`HFTokenizer.encode` wants ids only, so it runs the normalizer
without alignments and, when the file's pre-tokenizer and model map onto purebpe's own
engine (:mod:`purebpe.hf.fast`), encodes through it; :meth:`HFTokenizer.encode_with_offsets`
carries every character's original span (:class:`purebpe.normalizers.Normalized`).
Both give the same ids; the tests check it against HF's answers.
"""

from __future__ import annotations

import json
from typing import Any, Dict, Iterable, List, Optional, Tuple, Union

from ..decoders import Decoder
from ..errors import PureBPEError
from ..models.bpe import BPE
from ..normalizers import Normalized, Normalizer
from ..normalizers import Sequence as NormalizerSequence
from ..pre_tokenizers import PreTokenizer, split_text
from ..processors import Encoding, PostProcessor, process
from ..tokenizer import Tokenizer
from .added import AddedToken, AddedVocabulary
from .origin import first_metaspace, origin_chars
from .streaming import IdStream

__all__ = ["HFTokenizer"]


class HFTokenizer:
    """An HF ``tokenizer.json`` pipeline (build it with :func:`purebpe.hf.load`).

    ``encode`` and ``decode`` default to HF's ``add_special_tokens=False`` and
    ``skip_special_tokens=False``: the ids of the text itself, like
    :meth:`purebpe.Tokenizer.encode`.
    """

    def __init__(
        self,
        model: BPE,
        added: AddedVocabulary,
        normalizer: Optional[Normalizer] = None,
        pre_tokenizer: Optional[PreTokenizer] = None,
        post_processor: Optional[PostProcessor] = None,
        decoder: Optional[Decoder] = None,
        *,
        fast: Optional[Tokenizer] = None,
        document: Optional[Dict[str, Any]] = None,
        name: str = "tokenizer.json",
    ) -> None:
        self.model = model
        self.added = added
        self.normalizer = normalizer
        self.pre_tokenizer = pre_tokenizer
        self.post_processor = post_processor
        self.decoder = decoder
        self.fast = fast
        self.document = document
        self.name = name
        # first_metaspace of the pre-tokenizer, kept with the pre-tokenizer it was found in.
        self._placed: Tuple[Optional[PreTokenizer], Optional[bool]] = (None, None)

    def __repr__(self) -> str:
        return f"<HFTokenizer {self.name} vocab_size={self.vocab_size}{' fast' if self.fast else ''}>"

    # -- vocabulary -------------------------------------------------------------------

    @property
    def vocab_size(self) -> int:
        """HF's ``get_vocab_size(with_added_tokens=True)``: model tokens and added ones."""
        return len(self.get_vocab())

    def get_vocab(self, with_added_tokens: bool = True) -> Dict[str, int]:
        vocab = dict(self.model.vocab)
        if with_added_tokens:
            vocab.update(self.added.by_content)
        return vocab

    def token_to_id(self, token: str) -> Optional[int]:
        tid = self.added.by_content.get(token)
        return self.model.vocab.get(token) if tid is None else tid

    def id_to_token(self, tid: int) -> Optional[str]:
        """The token of ``tid``; a normalized added token as the normalizer spells it (as HF)."""
        form = self.added.decode_form.get(tid)
        if form is not None:
            return form
        added = self.added.by_id.get(tid)
        return self.model.id_to_token.get(tid) if added is None else added.content

    def add_tokens(self, tokens: Iterable[AddedToken]) -> int:
        """Add tokens to the added vocabulary as HF's ``add_tokens`` does; returns how many
        were new or changed. A token keeps the id its content already has (added or in the
        model), else takes the next free id after the model's and the added ones.

        >>> from purebpe.hf.loader import from_document
        >>> tok = from_document({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []}})
        >>> tok.add_tokens([AddedToken(-1, "<x>", special=True, normalized=False)]), tok.encode("a<x>b")
        (1, [0, 2, 1])
        """
        by_id = dict(self.added.by_id)
        by_content = dict(self.added.by_content)
        model_size = len(self.model.vocab)
        largest = max(by_id, default=-1)
        next_id = largest + 1 if largest >= model_size else model_size
        count = 0
        for token in tokens:
            if not token.content:
                continue
            known = by_content.get(token.content)
            if known is not None and by_id[known].to_json() == dict(token.to_json(), id=known):
                continue
            tid = known if known is not None else self.model.vocab.get(token.content)
            if tid is None:
                tid = next_id
                next_id += 1
            by_content[token.content] = tid
            by_id[tid] = AddedToken(
                tid,
                token.content,
                token.special,
                token.normalized,
                token.lstrip,
                token.rstrip,
                token.single_word,
            )
            count += 1
        normalize_str = None if self.normalizer is None else self.normalizer.normalize_str
        self.added = AddedVocabulary([by_id[tid] for tid in sorted(by_id)], normalize_str)
        if self.document is not None:
            self.document["added_tokens"] = [by_id[tid].to_json() for tid in sorted(by_id)]
        return count

    # -- encoding ids -----------------------------------------------------------------

    def encode(self, text: str, add_special_tokens: bool = False) -> List[int]:
        """The ids of ``text`` (with the post-processor's special tokens if asked).

        >>> from purebpe.hf.loader import from_document
        >>> tok = from_document(
        ...     {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}}
        ... )
        >>> tok.encode("abba")
        [2, 1, 0]
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, not {type(text).__name__}")
        ids: List[int] = []
        self._encode_ids(text, ids)
        if add_special_tokens and self.post_processor is not None:
            n = len(ids)
            return process(self.post_processor, Encoding(ids, [""] * n, [(0, 0)] * n), None, True).ids
        return ids

    def as_tokenizer(self) -> Optional[Tokenizer]:
        """A :class:`purebpe.Tokenizer` giving every text this pipeline's :meth:`encode`
        (``add_special_tokens=False``), or ``None`` where the pipeline is more than that.

        It is one where the pre-tokenizer and model run on purebpe's engine (:attr:`fast`),
        nothing normalizes, and the added tokens, all looked for in the same text (all
        ``normalized`` or none) and none stripping whitespace or needing a word boundary,
        are found as a Tokenizer finds its special tokens (leftmost, then longest: the
        same alternation, :func:`purebpe.specials.special_pattern`), which become them:
        GPT-2's and Llama 3's files.
        Such a Tokenizer may cut a long text where its pattern allows, each part encoded on
        its own (:class:`purebpe.pretokenize.chunking.ChunkCutter`), which is how
        ``purebpe encode`` spreads one long document over its processes.

        >>> from purebpe.bytemap import BYTE_TO_UNICODE
        >>> from purebpe.hf.loader import from_document
        >>> vocab = {char: byte for byte, char in enumerate(BYTE_TO_UNICODE)}
        >>> hf = from_document({
        ...     "model": {"type": "BPE", "vocab": {**vocab, "ab": 256}, "merges": ["a b"]},
        ...     "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False},
        ...     "added_tokens": [{"id": 257, "content": "<s>", "special": True}],
        ... })
        >>> hf.as_tokenizer().encode("ab<s>b") == hf.encode("ab<s>b") == [256, 257, 98]
        True
        """
        if self.fast is None or not _identity(self.normalizer):
            return None
        tokens = list(self.added.by_id.values())
        if any(t.lstrip or t.rstrip or t.single_word for t in tokens):
            return None
        if len({t.normalized for t in tokens}) > 1:
            return None  # two passes: raw tokens first, then the others between them
        try:
            return self.fast.with_special_tokens(self.added.by_content, name=self.name)
        except PureBPEError:
            return None  # an added token's id holds another token's bytes

    def encode_batch(self, texts: Iterable[str], add_special_tokens: bool = False) -> List[List[int]]:
        """:meth:`encode` of each text."""
        return [self.encode(text, add_special_tokens) for text in texts]

    def encode_iterable(self, chunks: Iterable[Union[str, bytes]]) -> IdStream:
        """The ids of the concatenated chunks (``add_special_tokens=False``), as they come:
        exactly :meth:`encode` of the joined text, holding only the text since the last
        place every step of the pipeline can be cut (:mod:`purebpe.hf.streaming`).
        ``bytes`` chunks are decoded as one UTF-8 stream, as by
        :meth:`purebpe.Tokenizer.encode_iterable`.

        >>> from purebpe.hf.loader import from_document
        >>> tok = from_document(
        ...     {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}}
        ... )
        >>> list(tok.encode_iterable(["a", "bba"])) == tok.encode("abba")
        True
        """
        return IdStream(self, chunks)

    def _encode_ids(self, text: str, out: List[int]) -> None:
        added = self.added
        segments = added.find(text, raw=True) if added.has_raw else [(None, 0, len(text))]
        for tid, start, end in segments:
            if tid is not None:
                out.append(tid)
            else:
                self._encode_segment(text[start:end], start == 0, out)

    def _encode_segment(self, segment: str, first: bool, out: List[int]) -> None:
        """Ids of a stretch between raw added tokens; ``first``: it starts the input."""
        normalizer = self.normalizer
        added = self.added
        # The pieces starting on the first ``origin`` normalized characters start the input
        # (HF: original offset 0), what Metaspace("first") asks (:mod:`purebpe.hf.origin`).
        origin = 1 if first else 0
        if first and normalizer is not None and self.pre_tokenizer is not None:
            placed = self.metaspace_placed()
            if placed is not None:
                counted = origin_chars(normalizer, segment)
                assert counted is not None  # the whole segment decides
                origin = counted
                if origin > 1 and placed:
                    # Some step before Metaspace may cut those characters apart: the
                    # pieces' own offsets say which start the input.
                    self._encode_aligned(segment, out)
                    return
        if normalizer is not None:
            segment = normalizer.normalize_str(segment)
        if added.has_normalized:
            for tid, a, b in added.find(segment, raw=False):
                if tid is not None:
                    out.append(tid)
                else:
                    self._encode_plain(segment[a:b], a < origin, out)
        elif segment:
            self._encode_plain(segment, origin > 0, out)

    def metaspace_placed(self) -> Optional[bool]:
        """:func:`purebpe.hf.origin.first_metaspace` of the pre-tokenizer (kept while it stays)."""
        pre_tokenizer, placed = self._placed
        if pre_tokenizer is not self.pre_tokenizer:
            placed = first_metaspace(self.pre_tokenizer)
            self._placed = (self.pre_tokenizer, placed)
        return placed

    def _encode_aligned(self, segment: str, out: List[int]) -> None:
        """Ids of the first segment through the aligned pipeline (:meth:`_encode_offsets`'s)."""
        normalized = Normalized.of(segment)
        if self.normalizer is not None:
            normalized = self.normalizer.normalize(normalized)
        text = normalized.text
        parts = self.added.find(text, raw=False) if self.added.has_normalized else [(None, 0, len(text))]
        encode_piece = self.model.encode_piece
        for tid, a, b in parts:
            if tid is not None:
                out.append(tid)
                continue
            pieces = [normalized.slice(a, b)] if a < b else []
            if self.pre_tokenizer is not None:
                pieces = self.pre_tokenizer.pre_tokenize(pieces)
            for piece in pieces:
                if piece.text:
                    out += encode_piece(piece.text)

    def _encode_plain(self, text: str, at_origin: bool, out: List[int]) -> None:
        """Ids of normalized text holding no added token: pre-tokenizer, then the model."""
        if self.fast is not None:
            out += self.fast.encode_ordinary(text)
            return
        encode_piece = self.model.encode_piece
        if self.pre_tokenizer is None:
            out += encode_piece(text)
            return
        for piece in split_text(self.pre_tokenizer, text, at_origin):
            out += encode_piece(piece)

    # -- encoding with offsets ----------------------------------------------------------

    def encode_with_offsets(
        self, text: str, pair: Optional[str] = None, add_special_tokens: bool = False
    ) -> Encoding:
        """HF's ``Encoding`` of ``text`` (and ``pair``): ids, tokens, character offsets,
        type ids, special-token mask, attention mask.

        >>> from purebpe.hf.loader import from_document
        >>> tok = from_document(
        ...     {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}}
        ... )
        >>> tok.encode_with_offsets("abba").offsets
        [(0, 2), (2, 3), (3, 4)]
        """
        if not isinstance(text, str) or (pair is not None and not isinstance(pair, str)):
            raise TypeError("text (and pair) must be str")
        first = self._encode_offsets(text, 0)
        second = None if pair is None else self._encode_offsets(pair, 1)
        return process(self.post_processor, first, second, add_special_tokens)

    def _encode_offsets(self, text: str, type_id: int) -> Encoding:
        ids: List[int] = []
        tokens: List[str] = []
        offsets: List[Tuple[int, int]] = []
        added = self.added
        segments = added.find(text, raw=True) if added.has_raw else [(None, 0, len(text))]
        for tid, start, end in segments:
            if tid is not None:
                ids.append(tid)
                tokens.append(text[start:end])
                offsets.append((start, end))
                continue
            normalized = Normalized.of(text[start:end], start)
            if self.normalizer is not None:
                normalized = self.normalizer.normalize(normalized)
            parts = (
                added.find(normalized.text, raw=False)
                if added.has_normalized
                else [(None, 0, len(normalized.text))]
            )
            for tid2, a, b in parts:
                if tid2 is not None:
                    ids.append(tid2)
                    tokens.append(normalized.text[a:b])
                    offsets.append(normalized.span(a, b))
                elif a < b:
                    self._tokenize_plain(normalized.slice(a, b), ids, tokens, offsets)
        return Encoding(ids, tokens, offsets, [type_id] * len(ids))

    def _tokenize_plain(
        self, text: Normalized, ids: List[int], tokens: List[str], offsets: List[Tuple[int, int]]
    ) -> None:
        pieces = [text] if self.pre_tokenizer is None else self.pre_tokenizer.pre_tokenize([text])
        id_to_token = self.model.id_to_token
        for piece in pieces:
            if not piece.text:
                continue
            for tid, i, j in self.model.tokenize(piece.text):
                ids.append(tid)
                tokens.append(id_to_token[tid])
                offsets.append(piece.span(i, j))

    # -- decoding ---------------------------------------------------------------------

    def decode(self, ids: Iterable[int], skip_special_tokens: bool = False) -> str:
        """HF's ``decode``: each id's token (ids it does not know are skipped, as HF does),
        special tokens left out if asked, then the decoder (no decoder: joined by spaces).

        >>> from purebpe.hf.loader import from_document
        >>> from_document({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []}}).decode([0, 1])
        'a b'
        """
        return self.decode_tokens(self.tokens_of(ids, skip_special_tokens))

    def tokens_of(self, ids: Iterable[int], skip_special_tokens: bool = False) -> List[str]:
        """The token of each id, as :meth:`decode` reads them (unknown ids left out)."""
        tokens: List[str] = []
        added = self.added
        model_tokens = self.model.id_to_token
        for tid in ids:
            if not isinstance(tid, int):
                raise TypeError(f"token ids must be ints, not {type(tid).__name__}")
            token = added.decode_form.get(tid)
            if token is None:
                entry = added.by_id.get(tid)
                token = model_tokens.get(tid) if entry is None else entry.content
            if token is None:
                continue
            if skip_special_tokens and token in added.special_contents:
                continue
            tokens.append(token)
        return tokens

    def decode_tokens(self, tokens: List[str]) -> str:
        """The text of ``tokens``: the decoder's, or (no decoder) the tokens joined by spaces."""
        if self.decoder is None:
            return " ".join(tokens)
        return self.decoder.decode(tokens)

    def decode_batch(self, batch: Iterable[Iterable[int]], skip_special_tokens: bool = False) -> List[str]:
        return [self.decode(ids, skip_special_tokens) for ids in batch]

    def to_str(self) -> str:
        """The ``tokenizer.json`` text this tokenizer was loaded from (HF's ``to_str``)."""
        if self.document is None:
            raise PureBPEError("this tokenizer was not loaded from a tokenizer.json document")
        return json.dumps(self.document, ensure_ascii=False)


def _identity(normalizer: Optional[Normalizer]) -> bool:
    """Whether ``normalizer`` changes nothing: none, or a ``Sequence`` of such."""
    if normalizer is None:
        return True
    return isinstance(normalizer, NormalizerSequence) and all(map(_identity, normalizer.normalizers))
