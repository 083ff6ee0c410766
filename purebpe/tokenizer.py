"""Encoding text to token ids and back with a trained byte-level BPE model.

What it keeps: ``ranks``, a dict from a packed pair of ids (``left << 32 | right``) to
``(rank, new_id)``; ``byte_ids``, the id of each of the 256 bytes; ``id_to_bytes``, a list
indexed by id (``None`` in gaps) for decoding; the special tokens' ids; and a word cache
``{pre-token: ids}``.

How it works: the text is split on special tokens (longest match first, like training),
each ordinary piece is pre-tokenized exactly as training did (the GPT-2 pattern, or one
word per line for ``pretokenizer="none"``), and each pre-token is looked up in the cache
or encoded by :func:`purebpe.core.apply_merges`: its UTF-8 bytes, then repeatedly the
lowest-ranked adjacent pair merged, leftmost first. This is the same routine training
uses to replay merges, so encoding a training word gives the tokens training ended with.

Cost: one pass of the pre-tokenizer over the text and one dict lookup per pre-token; a
cache miss costs O(merges applied x word length), O(n log n) for long words. The cache is a plain dict, bounded by
``CACHE_SIZE`` and simply cleared when full: real text repeats a small set of words, so
it refills at once, and clearing keeps the hot loop free of LRU bookkeeping.

Token ids come from the vocabulary, so any id layout works (GPT-2's own files, where
id 0 is ``!``); where a model holds two tokens with the same bytes (possible in
canonical BPE), the k-th merge making those bytes gets the k-th smallest of their ids.
"""
from __future__ import annotations

import operator
from typing import (
    TYPE_CHECKING,
    AbstractSet,
    Collection,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Pattern,
    Sequence,
    Tuple,
    Union,
)

from .core import apply_merges, pack_pair
from .counting import ChunkCutter, check_text
from .errors import PureBPEError
from .pretokenize import DEFAULT_ENGINE, Pretokenizer, check_pretokenizer, splitter
from .specials import check_special_tokens, special_pattern, split_keep_specials

if TYPE_CHECKING:
    from .model import BPEModel, PathLike

__all__ = [
    "AllowedSpecial",
    "DisallowedSpecial",
    "CACHE_SIZE",
    "PIECE_BYTES",
    "STREAM_CHARS",
    "Tokenizer",
]

#: ``"all"`` or the set of special tokens to treat as special (the rest are plain text).
AllowedSpecial = Union[str, AbstractSet[str]]
#: ``"all"`` (every special token not allowed) or the special tokens whose appearance raises.
DisallowedSpecial = Union[str, Collection[str]]

#: What a call refuses: the pattern of its allowed and forbidden special tokens, and the
#: forbidden ones.
Forbidden = Tuple[Pattern[str], AbstractSet[str]]

#: Words kept in the cache before it is cleared.
CACHE_SIZE = 1 << 17
#: Characters :meth:`Tokenizer.encode_iterable` gathers before it looks for a place to cut.
STREAM_CHARS = 1 << 18
#: Long texts are pre-tokenized in pieces of about this many bytes, cut where cutting
#: changes nothing: the pre-token list of a piece dies young (cheap for PyPy's GC), and
#: PyPy indexes an all-ASCII piece faster than a long text holding one non-ASCII character.
#: Measured on 1 MiB inputs of en-gcide: PyPy 8.9 -> 12.1 MB/s; CPython unchanged.
PIECE_BYTES = 1 << 15


#: The pre-tokenizer engine: the fastest one measured on this interpreter (the scanner on
#: PyPy, ``re`` on CPython). All engines give the same pre-tokens.
ENGINE = DEFAULT_ENGINE


class Tokenizer:
    """Encode text to ids and decode ids to text with a byte-level BPE vocabulary.

    ``vocab`` maps ids to token bytes, ``merges`` lists the learned merges in order as byte
    pairs, ``special_tokens`` are strings encoded as single ids (their ids come from the
    vocab when it holds their bytes, the highest such id; otherwise they get new ids after
    the largest one). ``pretokenizer`` is how the merges were learned: ``"gpt2"`` or
    ``"none"`` (one word per line).
    """

    def __init__(
        self,
        vocab: Mapping[int, bytes],
        merges: Sequence[Tuple[bytes, bytes]],
        special_tokens: Optional[Iterable[str]] = None,
        *,
        pretokenizer: Pretokenizer = "gpt2",
    ) -> None:
        self.pretokenizer = check_pretokenizer(pretokenizer)
        self._split = splitter(self.pretokenizer, ENGINE)
        self.special_tokens: Tuple[str, ...] = check_special_tokens(special_tokens or ())
        self.vocab: Dict[int, bytes] = {}
        for tid, token in vocab.items():
            if not isinstance(tid, int) or tid < 0 or not isinstance(token, bytes):
                raise PureBPEError(f"vocab entry {tid!r}: {token!r} is not (id >= 0, bytes)")
            self.vocab[tid] = token
        self.merges: List[Tuple[bytes, bytes]] = list(merges)
        self.special_ids: Dict[str, int] = self._assign_special_ids()

        special_id_set = set(self.special_ids.values())
        ids_of: Dict[bytes, List[int]] = {}
        for tid in sorted(self.vocab):
            if tid not in special_id_set:
                ids_of.setdefault(self.vocab[tid], []).append(tid)
        missing = [b for b in range(256) if bytes([b]) not in ids_of]
        if missing:
            raise PureBPEError(
                f"the vocab has no token for byte 0x{missing[0]:02x} "
                f"({len(missing)} of the 256 bytes are missing); byte-level BPE needs all"
            )
        self.byte_ids: List[int] = [ids_of[bytes([b])][0] for b in range(256)]
        # With the canonical layout (id b is byte b) a word's UTF-8 bytes are its ids already.
        self._canonical_bytes = self.byte_ids == list(range(256))
        self.ranks: Dict[int, Tuple[int, int]] = self._build_ranks(ids_of)

        size = max(self.vocab) + 1 if self.vocab else 0
        self.id_to_bytes: List[Optional[bytes]] = [None] * size
        for tid, token in self.vocab.items():
            self.id_to_bytes[tid] = token
        self._patterns: Dict[AbstractSet[str], Optional[Pattern[str]]] = {}
        self._cache: Dict[str, List[int]] = {}
        self._cutter = ChunkCutter((), pretokenizer)

    def _assign_special_ids(self) -> Dict[str, int]:
        """Each special token's id: the highest id holding its bytes, or a new id.

        An id is taken only if the bytes are not also needed as an ordinary token (a single
        byte, or what a merge makes) held by that id alone: special ``"ab"`` beside merged
        ``ab`` needs two ids.
        """
        holders: Dict[bytes, List[int]] = {}
        for tid, token in self.vocab.items():
            holders.setdefault(token, []).append(tid)
        made = {left + right for left, right in self.merges}
        next_id = max(self.vocab) + 1 if self.vocab else 0
        special_ids: Dict[str, int] = {}
        for text in self.special_tokens:
            encoded = text.encode("utf-8")
            ordinary = 1 if len(encoded) == 1 or encoded in made else 0
            if len(holders.get(encoded, ())) > ordinary:
                special_ids[text] = max(holders[encoded])
            else:
                special_ids[text] = next_id
                self.vocab[next_id] = encoded
                next_id += 1
        return special_ids

    def _build_ranks(self, ids_of: Dict[bytes, List[int]]) -> Dict[int, Tuple[int, int]]:
        """``{packed (left, right): (rank, new_id)}`` for every id pair spelling each merge."""
        ranks: Dict[int, Tuple[int, int]] = {}
        made: Dict[bytes, int] = {}  # how many merges so far produced each byte string
        for rank, (left, right) in enumerate(self.merges):
            if left not in ids_of or right not in ids_of:
                raise PureBPEError(
                    f"merge {rank} ({left!r}, {right!r}) uses a token that is not in the vocab"
                )
            merged = left + right
            holders = ids_of.get(merged)
            if holders is None:
                raise PureBPEError(
                    f"merge {rank} ({left!r}, {right!r}) makes {merged!r}, which is not in the vocab"
                )
            nth = made.get(merged, 0)
            made[merged] = nth + 1
            new_id = holders[min(nth, len(holders) - 1)]
            for left_id in ids_of[left]:
                for right_id in ids_of[right]:
                    ranks.setdefault(pack_pair(left_id, right_id), (rank, new_id))
        return ranks

    @classmethod
    def from_model(cls, model: "BPEModel") -> "Tokenizer":
        """The tokenizer of a :class:`purebpe.BPEModel` (its vocab, merges and specials)."""
        return cls(model.vocab, model.merges, model.special_tokens, pretokenizer=model.pretokenizer)

    @classmethod
    def from_files(
        cls,
        vocab_path: "PathLike",
        merges_path: "PathLike",
        special_tokens: Optional[Iterable[str]] = None,
    ) -> "Tokenizer":
        """Read GPT-2's ``vocab.json`` and ``merges.txt`` (any id layout).

        With ``special_tokens=None`` the special tokens are the vocab entries that are
        neither a single byte nor made by a merge (``<|endoftext|>`` in GPT-2's files);
        a list gives them explicitly (those missing from ``vocab.json`` get new ids).
        """
        from .formats.gpt2 import read_files

        model = read_files(vocab_path, merges_path)
        specials = model.special_tokens if special_tokens is None else special_tokens
        return cls(model.vocab, model.merges, specials, pretokenizer=model.pretokenizer)

    @property
    def vocab_size(self) -> int:
        """The number of ids in use, special tokens included."""
        return len(self.vocab)

    # ----------------------------------------------------------------------------------
    # Encoding
    # ----------------------------------------------------------------------------------
    def encode(
        self,
        text: str,
        allowed_special: AllowedSpecial = "all",
        disallowed_special: DisallowedSpecial = (),
    ) -> List[int]:
        """The token ids of ``text``.

        Special tokens in ``allowed_special`` (``"all"`` by default; a set names some,
        ``set()`` none) are encoded as their single ids; others are plain text, unless
        they are in ``disallowed_special`` (none by default; ``"all"`` means every special
        token not allowed, as in tiktoken), whose appearance in ``text`` raises
        ``PureBPEError``. Lone surrogates are replaced by U+FFFD first, as tiktoken does (a
        high surrogate followed by a low one becomes the character they encode).
        """
        pattern = self._pattern(allowed_special)
        forbidden = self._forbidden(allowed_special, disallowed_special)
        text = _clean_text(text)
        _refuse_disallowed(text, forbidden, "text")
        ids: List[int] = []
        self._encode_into(text, pattern, ids)
        return ids

    def encode_ordinary(self, text: str) -> List[int]:
        """The token ids of ``text`` with special tokens treated as plain text."""
        return self.encode(text, allowed_special=frozenset())

    def encode_batch(
        self,
        texts: Iterable[str],
        allowed_special: AllowedSpecial = "all",
        disallowed_special: DisallowedSpecial = (),
    ) -> List[List[int]]:
        """:meth:`encode` of each text, in order."""
        pattern = self._pattern(allowed_special)
        forbidden = self._forbidden(allowed_special, disallowed_special)
        batch: List[List[int]] = []
        for index, text in enumerate(texts):
            text = _clean_text(text)
            _refuse_disallowed(text, forbidden, f"texts[{index}]")
            ids: List[int] = []
            self._encode_into(text, pattern, ids)
            batch.append(ids)
        return batch

    def encode_iterable(
        self,
        texts: Iterable[str],
        allowed_special: AllowedSpecial = "all",
        disallowed_special: DisallowedSpecial = (),
    ) -> Iterator[int]:
        """The ids of the concatenation of ``texts`` (e.g. a file's lines), streamed.

        Text is gathered into buffers of about ``STREAM_CHARS`` characters and each is
        cut where cutting cannot change the result (:class:`purebpe.counting.ChunkCutter`:
        before a special token, or before a space or newline that precedes a
        non-space), so the ids equal ``encode("".join(texts))`` while memory stays flat.
        A stretch of text with no such place (one enormous word) is held until it ends.
        A disallowed special token raises when the stream reaches it, even if it arrives
        split across items.
        """
        pattern = self._pattern(allowed_special)
        allowed = self._allowed(allowed_special)
        forbidden = self._forbidden(allowed_special, disallowed_special)
        longest = max((len(t.encode("utf-8")) for t in forbidden[1]), default=0) if forbidden else 0
        cutter = ChunkCutter(sorted(allowed), self.pretokenizer, reserve=longest)
        return self._stream(texts, pattern, cutter, forbidden)

    def _stream(
        self,
        texts: Iterable[str],
        pattern: Optional[Pattern[str]],
        cutter: ChunkCutter,
        forbidden: Optional[Forbidden],
    ) -> Iterator[int]:
        pending: List[str] = []
        size = 0
        done = 0  # characters of the stream already encoded: where ``pending`` starts
        threshold = STREAM_CHARS
        for index, chunk in enumerate(texts):
            if not isinstance(chunk, str):
                raise PureBPEError(f"encode_iterable: item {index} is {type(chunk).__name__}, not str")
            pending.append(chunk)
            size += len(chunk)
            if size < threshold:
                continue
            text = "".join(pending)
            # A high surrogate at the end may pair with a low one in the next chunk: hold it.
            held = text[-1] if "\ud800" <= text[-1] <= "\udbff" else ""
            clean = _clean_text(text[: len(text) - len(held)])
            # Cuts stay a disallowed token's length before the end: one that starts before
            # the cut is whole in ``clean``.
            _refuse_disallowed(clean, forbidden, "the stream", done)
            data = clean.encode("utf-8")
            cut = cutter.cut(data)
            if cut <= 0:
                pending, size = [data.decode("utf-8"), held], size
                threshold = 2 * size  # look again when twice as much text has come
                continue
            ids: List[int] = []
            head = data[:cut].decode("utf-8")
            self._encode_into(head, pattern, ids)
            yield from ids
            done += len(head)
            rest = data[cut:].decode("utf-8") + held
            pending, size, threshold = [rest], len(rest), STREAM_CHARS
        text = _clean_text("".join(pending))
        _refuse_disallowed(text, forbidden, "the stream", done)
        ids = []
        self._encode_into(text, pattern, ids)
        yield from ids

    def _encode_into(self, text: str, pattern: Optional[Pattern[str]], out: List[int]) -> None:
        """Append the ids of ``text`` (already free of lone surrogates) to ``out``."""
        if pattern is None:
            self._encode_ordinary(text, out)
            return
        special_ids = self.special_ids
        for piece, is_special in split_keep_specials(text, pattern):
            if is_special:
                out.append(special_ids[piece])
            else:
                self._encode_ordinary(piece, out)

    def _encode_ordinary(self, text: str, out: List[int]) -> None:
        """Append the ids of a text holding no special token, in pieces of ~``PIECE_BYTES``."""
        if len(text) <= 2 * PIECE_BYTES:
            self._encode_piece(text, out)
            return
        data = text.encode("utf-8")
        start = 0
        while len(data) - start > 2 * PIECE_BYTES:
            cut = self._cutter.cut(data[start : start + PIECE_BYTES])
            if cut <= 0:
                break  # no safe place in this stretch: encode the rest whole
            self._encode_piece(data[start : start + cut].decode("utf-8"), out)
            start += cut
        self._encode_piece(data[start:].decode("utf-8"), out)

    def _encode_piece(self, text: str, out: List[int]) -> None:
        """Append the ids of a text holding no special token: pre-tokenize, then each word."""
        words = self._split(text)
        cache = self._cache
        get = cache.get
        for word in words:
            ids = get(word)
            if ids is None:
                ids = self._encode_word(word)
                if len(cache) >= CACHE_SIZE:
                    cache.clear()
                cache[word] = ids
            out += ids

    def _encode_word(self, word: str) -> List[int]:
        """The ids of one pre-token: its UTF-8 bytes with the learned merges applied."""
        data = word.encode("utf-8")
        start: Sequence[int] = data if self._canonical_bytes else [self.byte_ids[b] for b in data]
        return list(apply_merges(start, self.ranks))

    def _allowed(self, allowed_special: AllowedSpecial) -> AbstractSet[str]:
        if allowed_special == "all":
            return frozenset(self.special_tokens)
        if isinstance(allowed_special, str) or not isinstance(allowed_special, AbstractSet):
            raise PureBPEError(
                f"allowed_special must be 'all' or a set of special tokens, not {allowed_special!r}"
            )
        unknown = sorted(allowed_special - set(self.special_tokens))
        if unknown:
            raise PureBPEError(f"allowed_special names {unknown[0]!r}, which is not a special token")
        return frozenset(allowed_special)

    def _forbidden_set(
        self, allowed: AbstractSet[str], disallowed_special: DisallowedSpecial
    ) -> AbstractSet[str]:
        """The special tokens ``disallowed_special`` forbids, checked against ``allowed``."""
        if disallowed_special == "all":
            return frozenset(self.special_tokens) - allowed
        if isinstance(disallowed_special, str) or not isinstance(
            disallowed_special, (AbstractSet, tuple, list)
        ):
            raise PureBPEError(
                "disallowed_special must be 'all' or a collection of special tokens, "
                f"not {disallowed_special!r}"
            )
        forbidden = frozenset(disallowed_special)
        unknown = sorted(forbidden - set(self.special_tokens))
        if unknown:
            raise PureBPEError(
                f"disallowed_special names {unknown[0]!r}, which is not a special token"
            )
        both = sorted(forbidden & allowed)
        if both:
            raise PureBPEError(f"{both[0]!r} is both allowed and disallowed")
        return forbidden

    def _forbidden(
        self, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial
    ) -> Optional[Forbidden]:
        """What :func:`_refuse_disallowed` looks for, or ``None`` when nothing is forbidden.

        The pattern matches allowed and forbidden tokens alike, longest first, as the
        split on special tokens does: a forbidden token inside a longer allowed one is not
        there, and an allowed token inside a longer forbidden one does not hide it.
        """
        if type(disallowed_special) in (tuple, list, set, frozenset) and not disallowed_special:
            return None  # the default, on every encode call: skip the validation (2.5 us)
        allowed = self._allowed(allowed_special)
        forbidden = self._forbidden_set(allowed, disallowed_special)
        if not forbidden:
            return None
        pattern = self._pattern(allowed | forbidden)
        assert pattern is not None
        return pattern, forbidden

    def _pattern(self, allowed_special: AllowedSpecial) -> Optional[Pattern[str]]:
        """The compiled special-token alternation for ``allowed_special`` (cached)."""
        allowed = self._allowed(allowed_special)
        if allowed not in self._patterns:
            self._patterns[allowed] = special_pattern(allowed)
        return self._patterns[allowed]

    # ----------------------------------------------------------------------------------
    # Decoding
    # ----------------------------------------------------------------------------------
    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes the ids stand for; an id not in the vocab raises ``PureBPEError``."""
        id_list = ids if isinstance(ids, list) else list(ids)
        table = self.id_to_bytes
        try:
            data = b"".join([table[i] for i in id_list])  # type: ignore[misc]
        except (IndexError, TypeError):
            raise self._bad_id(id_list) from None
        if id_list and min(id_list) < 0:  # negative indexes would silently count from the end
            raise self._bad_id(id_list)
        return data

    def decode(self, ids: Iterable[int]) -> str:
        """The text the ids stand for; invalid UTF-8 becomes U+FFFD (``errors="replace"``)."""
        return self.decode_bytes(ids).decode("utf-8", "replace")

    def _bad_id(self, ids: List[int]) -> PureBPEError:
        table = self.id_to_bytes
        for position, tid in enumerate(ids):
            try:
                index = operator.index(tid)
            except TypeError:
                return PureBPEError(f"token id {tid!r} at position {position} is not an int")
            if not 0 <= index < len(table) or table[index] is None:
                return PureBPEError(
                    f"token id {tid} at position {position} is not in the vocabulary "
                    f"(ids run 0..{len(table) - 1})"
                )
        return PureBPEError("bad token id")  # pragma: no cover - callers found one


def _refuse_disallowed(
    text: str, forbidden: Optional[Forbidden], where: str, start: int = 0
) -> None:
    """Raise if ``text`` (from index ``start`` of ``where`` on) holds a forbidden token."""
    if forbidden is None:
        return
    pattern, tokens = forbidden
    for found in pattern.finditer(text):
        if found.group() in tokens:
            raise PureBPEError(
                f"{where} holds the special token {found.group()!r} at index "
                f"{start + found.start()}, which disallowed_special forbids: pass it in "
                "allowed_special to encode it as a special token, or leave it out of "
                "disallowed_special to encode it as text"
            )


def _clean_text(text: object) -> str:
    """``text`` checked to be a ``str``, with lone surrogates replaced by U+FFFD."""
    if not isinstance(text, str):
        raise PureBPEError(f"expected text as str, got {type(text).__name__}")
    return check_text(text, 0, "replace")

