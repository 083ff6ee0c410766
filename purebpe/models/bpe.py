"""Hugging Face ``tokenizers``' ``BPE`` model: one pre-token in, token ids (and spans) out.

What it does, as ``tokenizers/src/models/bpe/model.rs`` does it (read as the spec):

* a pre-token that is a vocab entry whole is that one token when ``ignore_merges`` is
  set (Llama 3), before anything else;
* otherwise each character becomes a symbol: the character, with
  ``continuing_subword_prefix`` before it unless it is the first, and
  ``end_of_word_suffix`` after it if it is the last (an empty string is no suffix); a
  symbol missing from the vocab becomes its UTF-8 bytes as ``<0xNN>`` tokens when
  ``byte_fallback`` is set and all of them exist, else ``unk_token`` (runs of unknown
  characters fused into one when ``fuse_unk``), else it is dropped;
* then the merges are applied by **merge rank** (the merge's index in ``merges``; a pair
  listed twice keeps its last index, as HF's map does), lowest first, leftmost among
  equals: :func:`purebpe.core.apply_merges` on the ids, the engine every purebpe
  tokenizer runs. A merge ``(a, b)`` makes the token ``a + b`` without ``b``'s
  continuing-subword prefix.

A token's span is the characters of the pre-token its symbols came from; the ``<0xNN>``
tokens of one character each span that character, as HF's offsets do.

Cost: one dict lookup per character, then :func:`~purebpe.core.apply_merges`; results
are cached per pre-token (a plain dict cleared when full, as :class:`purebpe.Tokenizer`
does).
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping, Optional, Sequence, Set, Tuple, Union

from ..core import PAIR_SHIFT, apply_merges, merge_in_place, pack_rank
from ..errors import PureBPEError

__all__ = ["BPE", "MAX_TOKENS", "Span"]

#: ``(id, start, end)``: a token and the characters of its pre-token it covers.
Span = Tuple[int, int, int]
#: Pre-tokens kept in each cache before it is cleared.
CACHE_SIZE = 1 << 16
#: Longer pre-tokens are not cached (as HF's ``MAX_LENGTH``): a pipeline without a
#: pre-tokenizer hands the model whole texts, which would only fill the cache.
CACHE_MAX_CHARS = 256
#: Where long pieces are cut first (:meth:`BPE._independent_parts`): before SentencePiece's
#: word mark, which Llama 2's normalizer writes for every space.
WORD_MARK = "\u2581"
#: Parts longer than this are also tried for cuts between every two characters.
LONG_PART = 32
#: The most tokens (vocab entries) a model may hold: bounds what an untrusted file costs.
MAX_TOKENS = 1 << 24
#: Ids must stay below this (HF's ids are u32; a table indexed by id must stay small).
MAX_ID = 1 << 31
#: The most merges a model may list (a rank must stay below 2**30 to pack).
MAX_MERGES = 1 << 26

_OPTIONS = {
    "type",
    "dropout",
    "unk_token",
    "continuing_subword_prefix",
    "end_of_word_suffix",
    "fuse_unk",
    "byte_fallback",
    "ignore_merges",
    "vocab",
    "merges",
}


def _check_str(value: Any, what: str) -> Optional[str]:
    if value is not None and not isinstance(value, str):
        raise PureBPEError(f"BPE model option {what} is {value!r}, not a string or null")
    return value


def _check_bool(value: Any, what: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise PureBPEError(f"BPE model option {what} is {value!r}, not true or false")
    return value


def merge_pair(merge: Any, rank: int) -> Tuple[str, str]:
    """A merge as ``(left, right)``: from HF's ``"left right"`` string, its ``[left, right]``
    list, or a pair; a one-line error naming the merge otherwise.

    >>> merge_pair("a b", 0), merge_pair(["a b", "c"], 1)
    (('a', 'b'), ('a b', 'c'))
    """
    parts = merge.split(" ") if type(merge) is str else merge
    if (
        type(parts) not in (list, tuple)
        or len(parts) != 2
        or type(parts[0]) is not str
        or type(parts[1]) is not str
    ):
        raise PureBPEError(f"merge {rank} is {merge!r}, not 'left right' or [left, right]")
    return parts[0], parts[1]


class BPE:
    """HF's ``BPE`` model over string tokens (see the module docstring).

    >>> bpe = BPE({"a": 0, "b": 1, "ab": 2, "<unk>": 3}, [("a", "b")], unk_token="<unk>")
    >>> bpe.encode_piece("abcab")
    [2, 3, 2]
    >>> bpe.tokenize("abcab")
    [(2, 0, 2), (3, 2, 3), (2, 3, 5)]
    """

    def __init__(
        self,
        vocab: Mapping[str, int],
        merges: Sequence[Union[Tuple[str, str], List[str], str]],
        *,
        unk_token: Optional[str] = None,
        continuing_subword_prefix: Optional[str] = None,
        end_of_word_suffix: Optional[str] = None,
        fuse_unk: bool = False,
        byte_fallback: bool = False,
        ignore_merges: bool = False,
    ) -> None:
        if len(vocab) > MAX_TOKENS:
            raise PureBPEError(f"BPE vocab has {len(vocab)} tokens, more than the {MAX_TOKENS} allowed")
        self.vocab: Dict[str, int] = dict(vocab)
        self.id_to_token: Dict[int, str] = {tid: token for token, tid in self.vocab.items()}
        for token, tid in self.vocab.items():
            if type(tid) is not int or not 0 <= tid < MAX_ID or type(token) is not str:
                if not isinstance(token, str):
                    raise PureBPEError(f"BPE vocab key {token!r} is not a string")
                raise PureBPEError(f"BPE vocab gives {token!r} the id {tid!r} (not an int in 0..2**31)")
        if len(self.id_to_token) != len(self.vocab):
            seen: Dict[int, str] = {}
            for token, tid in self.vocab.items():
                if tid in seen:
                    raise PureBPEError(f"BPE vocab gives id {tid} to both {seen[tid]!r} and {token!r}")
                seen[tid] = token
        self.unk_token = unk_token
        self.continuing_subword_prefix = continuing_subword_prefix or None
        self.end_of_word_suffix = end_of_word_suffix or None
        self.fuse_unk = fuse_unk
        self.byte_fallback = byte_fallback
        self.ignore_merges = ignore_merges
        # Kept as given (a file's ``"a b"`` strings, or pairs): split on demand by
        # :attr:`merges`, so a loaded model holds no second copy of every token string.
        self._merges: Sequence[Any] = merges if isinstance(merges, list) else list(merges)
        if len(self._merges) > MAX_MERGES:
            raise PureBPEError(
                f"BPE model has {len(self._merges)} merges, more than the {MAX_MERGES} allowed"
            )
        #: ``{packed (left id, right id): packed (rank, new id)}`` (:func:`purebpe.core.pack_rank`),
        #: the table :func:`purebpe.core.apply_merges` reads; the fast engine
        #: (:mod:`purebpe.hf.fast`) merges on this same table.
        self.ranks: Dict[int, int] = self._build_ranks()  # checks the merges
        self.unk_id: Optional[int] = None
        if unk_token is not None:
            self.unk_id = self.vocab.get(unk_token)
        # Symbols of each character in the common case, filled on first sight.
        self._byte_tokens: List[Optional[int]] = [self.vocab.get(f"<0x{b:02X}>") for b in range(256)]
        self._ids_cache: Dict[str, List[int]] = {}
        self._parts_cache: Dict[str, List[int]] = {}
        self._bigrams: Optional[Tuple[Set[str], Set[str]]] = None
        self._spans_cache: Dict[str, List[Span]] = {}

    def _build_ranks(self) -> Dict[int, int]:
        """The table of :attr:`ranks`, from the merges as given."""
        vocab = self.vocab
        prefix_bytes = len((self.continuing_subword_prefix or "").encode("utf-8"))
        ranks: Dict[int, int] = {}
        for rank, merge in enumerate(self._merges):
            if type(merge) is str:  # a file's "left right", split here without a call
                left, space, right = merge.partition(" ")
                if not space or " " in right:
                    left, right = merge_pair(merge, rank)  # raises, naming the merge
            else:
                left, right = merge_pair(merge, rank)
            left_id = vocab.get(left)
            right_id = vocab.get(right)
            if prefix_bytes:
                # HF drops the prefix's length in bytes from the right half, whatever it starts with.
                right_bytes = right.encode("utf-8")
                if len(right_bytes) < prefix_bytes:
                    raise PureBPEError(
                        f"merge {rank} ({left!r}, {right!r}): {right!r} is shorter than the "
                        "continuing_subword_prefix"
                    )
                right_rest = right_bytes[prefix_bytes:].decode("utf-8", "replace")
            else:
                right_rest = right
            new_id = vocab.get(left + right_rest)
            if left_id is None or right_id is None or new_id is None:
                missing = left if left_id is None else right if right_id is None else left + right_rest
                raise PureBPEError(f"merge {rank} ({left!r}, {right!r}) needs {missing!r}, not in the vocab")
            ranks[left_id << PAIR_SHIFT | right_id] = pack_rank(rank, new_id)  # a later duplicate wins
        return ranks

    @classmethod
    def from_json(cls, obj: Mapping[str, Any]) -> "BPE":
        """The model a ``tokenizer.json``'s ``"model"`` object describes.

        >>> model = BPE.from_json({"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]})
        >>> model.encode_piece("ab")
        [2]
        """
        unknown = sorted(set(obj) - _OPTIONS)
        if unknown:
            raise PureBPEError(f"BPE model option {unknown[0]!r} is not supported")
        dropout = obj.get("dropout")
        if dropout not in (None, 0, 0.0):
            raise PureBPEError(
                f"BPE model option dropout={dropout!r} is not supported (it makes encoding random)"
            )
        vocab = obj.get("vocab")
        if not isinstance(vocab, dict):
            raise PureBPEError('BPE model has no "vocab" object')
        raw_merges = obj.get("merges", [])
        if not isinstance(raw_merges, list):
            raise PureBPEError('BPE model "merges" is not a list')
        return cls(
            vocab,
            raw_merges,  # checked and split one by one as the ranks are built
            unk_token=_check_str(obj.get("unk_token"), "unk_token"),
            continuing_subword_prefix=_check_str(
                obj.get("continuing_subword_prefix"), "continuing_subword_prefix"
            ),
            end_of_word_suffix=_check_str(obj.get("end_of_word_suffix"), "end_of_word_suffix"),
            fuse_unk=_check_bool(obj.get("fuse_unk"), "fuse_unk"),
            byte_fallback=_check_bool(obj.get("byte_fallback"), "byte_fallback"),
            ignore_merges=_check_bool(obj.get("ignore_merges"), "ignore_merges"),
        )

    @property
    def merges(self) -> List[Tuple[str, str]]:
        """The merges as ``(left, right)`` pairs, in rank order."""
        return [merge_pair(merge, rank) for rank, merge in enumerate(self._merges)]

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    def _symbols(self, piece: str) -> List[Tuple[int, int]]:
        """The initial symbols of ``piece`` as ``(id, length in UTF-8 bytes)``, in HF's order.

        HF places each symbol right after the previous one it kept, so a dropped character
        (no ``unk_token``, no byte fallback) shifts the spans after it, and a pending
        unknown run is placed after the byte-fallback tokens that followed it: the spans
        this gives are HF's, artefacts included.
        """
        vocab = self.vocab
        prefix = self.continuing_subword_prefix
        suffix = self.end_of_word_suffix
        last = len(piece) - 1
        symbols: List[Tuple[int, int]] = []
        unk_size = 0  # bytes of the pending unknown run (0: none pending)
        for i, char in enumerate(piece):
            size = 1 if char < "\x80" else len(char.encode("utf-8"))
            symbol = char
            if prefix is not None and i > 0:
                symbol = prefix + symbol
            if suffix is not None and i == last:
                symbol = symbol + suffix
            tid = vocab.get(symbol)
            if tid is not None:
                if unk_size:
                    symbols.append((self._unk(), unk_size))
                    unk_size = 0
                symbols.append((tid, size))
                continue
            if self.byte_fallback:
                fallback = [self._byte_tokens[b] for b in symbol.encode("utf-8")]
                if None not in fallback:
                    for byte_id in fallback:
                        symbols.append((byte_id, 1))  # type: ignore[arg-type]
                    continue
            if self.unk_token is None:
                continue  # HF drops a character it has no symbol for
            if unk_size and not self.fuse_unk:
                symbols.append((self._unk(), unk_size))
                unk_size = 0
            unk_size += size
        if unk_size:
            symbols.append((self._unk(), unk_size))
        return symbols

    def _unk(self) -> int:
        if self.unk_id is None:
            raise PureBPEError(f"BPE unk_token {self.unk_token!r} is not in the vocab")
        return self.unk_id

    def encode_piece(self, piece: str) -> List[int]:
        """The token ids of one pre-token (cached)."""
        ids = self._ids_cache.get(piece)
        if ids is None:
            ids = self._encode_uncached(piece)
            if len(piece) > CACHE_MAX_CHARS:
                return ids
            if len(self._ids_cache) >= CACHE_SIZE:
                self._ids_cache.clear()
            self._ids_cache[piece] = ids
        return ids

    def _encode_uncached(self, piece: str) -> List[int]:
        if not piece:
            return []
        if self.ignore_merges:
            whole = self.vocab.get(piece)
            if whole is not None:
                return [whole]
        if len(piece) <= CACHE_MAX_CHARS or self.continuing_subword_prefix or self.end_of_word_suffix:
            return self._merge(piece)
        ids: List[int] = []
        cache = self._parts_cache
        for part in self._independent_parts(piece):
            part_ids = cache.get(part)
            if part_ids is None:
                part_ids = self._merge(part)
                if len(part) <= CACHE_MAX_CHARS:
                    if len(cache) >= CACHE_SIZE:
                        cache.clear()
                    cache[part] = part_ids
            ids += part_ids
        return ids

    def _merge(self, piece: str) -> List[int]:
        """The merges applied to ``piece``'s symbols (no whole-token shortcut)."""
        return list(apply_merges(self._symbol_ids(piece), self.ranks))

    def _symbol_ids(self, piece: str) -> List[int]:
        """The ids of :meth:`_symbols`: in the common case (every character a token, no
        prefix or suffix) one dict lookup per character and no tuple."""
        if self.continuing_subword_prefix is None and self.end_of_word_suffix is None:
            get = self.vocab.get
            ids: List[int] = []
            for char in piece:
                tid = get(char)
                if tid is None:
                    break  # byte fallback, unk, or a dropped character: the full rules
                ids.append(tid)
            else:
                return ids
        return [symbol[0] for symbol in self._symbols(piece)]

    def _independent_parts(self, piece: str) -> List[str]:
        """``piece`` cut where no merge can ever join the two sides.

        Between two characters that are tokens themselves, ``x`` then ``y``: a token made
        across that boundary would hold ``xy``, so if no vocab entry holds ``xy`` no merge
        joins the sides, and merging each side alone gives the same tokens (the merges of
        one side never look at the other). A pipeline without a pre-tokenizer (Llama 2's)
        hands the model whole texts; this cuts them into words (``o▁`` is in no token), so
        long texts cost what their words cost and the words are cached.

        Any set of such cuts gives the same ids, so which ones are tried is only a matter
        of speed: first the places before each :data:`WORD_MARK` (found by ``str.find``,
        not a loop over characters), then every place inside a part still longer than
        :data:`LONG_PART` characters (a run of Chinese or Japanese has no word mark).
        """
        bigrams, before_mark = self._cut_tables()
        vocab = self.vocab
        parts: List[str] = []
        start = 0  # where the current part starts
        mark = piece.find(WORD_MARK, 1) if WORD_MARK in vocab else -1
        while mark > 0:
            before = piece[mark - 1]
            if before not in before_mark and before in vocab:
                self._add_part(piece[start:mark], parts, bigrams)
                start = mark
            mark = piece.find(WORD_MARK, mark + 1)
        self._add_part(piece[start:], parts, bigrams)
        return parts

    def separable(self, left: str, right: str) -> bool:
        """Whether a pre-token ``a + left + right + b`` always gets the ids of ``a + left``
        followed by those of ``right + b`` (without :attr:`ignore_merges`' whole-token
        shortcut, see :meth:`encode_fragment`): the rule of :meth:`_independent_parts`.

        Both characters are tokens (so neither falls back to bytes or joins a run of
        unknowns), and no token holds the two side by side, so no merge ever joins the
        sides; the merges of each side never look at the other. Symbols that depend on
        their place in the piece (a subword prefix, a word suffix) rule it out.

        >>> bpe = BPE({"a": 0, "b": 1, "c": 2, "ab": 3}, [("a", "b")])
        >>> bpe.separable("a", "b"), bpe.separable("b", "c"), bpe.separable("c", "x")
        (False, True, False)
        """
        if self.continuing_subword_prefix is not None or self.end_of_word_suffix is not None:
            return False
        vocab = self.vocab
        return left in vocab and right in vocab and left + right not in self._cut_tables()[0]

    def encode_fragment(self, piece: str) -> List[int]:
        """The ids of ``piece`` as part of a longer pre-token cut where :meth:`separable`
        allows: :meth:`encode_piece` without the whole-token shortcut, which applies to a
        whole pre-token only (a longer one holding the cut's pair is no token).

        >>> bpe = BPE({"a": 0, "b": 1, "ab": 2, "abb": 3}, [], ignore_merges=True)
        >>> bpe.encode_piece("abb"), bpe.encode_fragment("abb")
        ([3], [0, 1, 1])
        """
        if self.ignore_merges and piece in self.vocab:
            return self._merge(piece)
        return self.encode_piece(piece)

    def _cut_tables(self) -> Tuple[Set[str], Set[str]]:
        """Every two characters some token holds; the characters some token holds just
        before a :data:`WORD_MARK` (built on first use)."""
        tables = self._bigrams
        if tables is None:
            bigrams = {token[i : i + 2] for token in self.vocab for i in range(len(token) - 1)}
            before_mark = {pair[0] for pair in bigrams if pair[1] == WORD_MARK}
            tables = self._bigrams = (bigrams, before_mark)
        return tables

    def _add_part(self, part: str, parts: List[str], bigrams: Set[str]) -> None:
        """Append ``part``, cut at every place the rule allows when it is long."""
        if len(part) <= LONG_PART:
            parts.append(part)
            return
        vocab = self.vocab
        start = 0
        before_known = part[0] in vocab
        for i in range(1, len(part)):
            known = part[i] in vocab
            if known and before_known and part[i - 1 : i + 1] not in bigrams:
                parts.append(part[start:i])
                start = i
            before_known = known
        parts.append(part[start:])

    def tokenize(self, piece: str) -> List[Span]:
        """``(id, start, end)`` of each token of one pre-token, spans in its characters (cached)."""
        spans = self._spans_cache.get(piece)
        if spans is None:
            spans = self._tokenize_uncached(piece)
            if len(piece) > CACHE_MAX_CHARS:
                return spans
            if len(self._spans_cache) >= CACHE_SIZE:
                self._spans_cache.clear()
            self._spans_cache[piece] = spans
        return spans

    def _tokenize_uncached(self, piece: str) -> List[Span]:
        if not piece:
            return []
        if self.ignore_merges:
            whole = self.vocab.get(piece)
            if whole is not None:
                return [(whole, 0, len(piece))]
        if (
            len(piece) > CACHE_MAX_CHARS
            and not self.continuing_subword_prefix
            and not self.end_of_word_suffix
            and self._never_drops()
        ):
            # As in _encode_uncached; every character keeps a symbol, so HF's spans are
            # true positions and each part's spans only shift by where the part starts.
            out: List[Span] = []
            offset = 0
            for part in self._independent_parts(piece):
                out += [(tid, offset + i, offset + j) for tid, i, j in self._merge_spans(part)]
                offset += len(part)
            return out
        return self._merge_spans(piece)

    def _never_drops(self) -> bool:
        """Whether every character gets a symbol (an unk token, or all 256 byte tokens)."""
        return self.unk_id is not None or (self.byte_fallback and None not in self._byte_tokens)

    def _merge_spans(self, piece: str) -> List[Span]:
        """The spans of ``piece``'s tokens as HF computes them (no whole-token shortcut)."""
        spans: List[Span] = []
        position = 0
        for tid, size in self._symbols(piece):
            spans.append((tid, position, position + size))
            position += size
        merged = merge_spans(spans, self.ranks)
        if piece.isascii():
            return merged  # one byte per character: byte spans are character spans
        # Byte spans to character spans as HF's offsets come out: a span starting inside a
        # character starts at it, one ending inside a character includes it.
        char_at: List[int] = []
        for index, char in enumerate(piece):
            char_at += [index] * len(char.encode("utf-8"))
        return [(tid, char_at[start], char_at[end - 1] + 1) for tid, start, end in merged]

    def token_to_id(self, token: str) -> Optional[int]:
        return self.vocab.get(token)

    def id_to_str(self, tid: int) -> Optional[str]:
        return self.id_to_token.get(tid)


def merge_spans(symbols: List[Span], ranks: Mapping[int, int]) -> List[Span]:
    """:func:`purebpe.core.apply_merges` carrying each symbol's span along.

    The same rule (lowest rank first, leftmost among equals), by
    :func:`purebpe.core.merge_in_place`; a merged token spans from its left symbol's start
    to the end of the last symbol merged into it (the one before the next survivor).

    >>> merge_spans([(0, 0, 1), (1, 1, 2)], {0 << 32 | 1: pack_rank(0, 2)})
    [(2, 0, 2)]
    """
    tokens = [s[0] for s in symbols]
    merge_in_place(tokens, ranks)
    merged: List[Span] = []
    end_at = len(symbols)  # the position of the survivor after this one
    for i in range(len(symbols) - 1, -1, -1):
        if tokens[i] >= 0:
            merged.append((tokens[i], symbols[i][1], symbols[end_at - 1][2]))
            end_at = i
    merged.reverse()
    return merged
