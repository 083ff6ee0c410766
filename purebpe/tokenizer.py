"""Encoding text to token ids and back with a trained byte-level BPE model.

What it keeps: the tables of :mod:`purebpe.token_tables` (``ranks``, a dict from a packed
pair of ids (``left << 32 | right``) to ``rank << 32 | new_id``; the id of each of the 256
bytes; the special tokens' ids), built once by :func:`~purebpe.token_tables.merge_tables`
or :func:`~purebpe.token_tables.rank_tables`, in a :class:`~purebpe.word_encoder.WordEncoder`;
a list indexed by id (``None`` in gaps) for decoding; the special-token policy of its
calls (:class:`purebpe.specials.SpecialPolicy`); and a word cache ``{pre-token: ids}``.
The tables are private: they are the engine's.

How it works: the text is split on special tokens (longest match first, like training),
each ordinary piece is pre-tokenized exactly as training did (the model's pattern, or
one word per line for ``pretokenizer="none"``), and each pre-token is looked up in the
cache or encoded by the word encoder: its UTF-8 bytes, then repeatedly the lowest-ranked
adjacent pair merged, leftmost first -- the rule training replays merges by
(:func:`purebpe.core.apply_merges`), so encoding a training word gives the tokens
training ended with. A tokenizer built from tiktoken ranks (:meth:`Tokenizer.from_ranks`)
runs the same rule on a table holding tiktoken's (:mod:`purebpe.tiktoken_compat`), and
takes a pre-token that is a token whole, as tiktoken does.

Cost: one pass of the pre-tokenizer over the text and one dict lookup per pre-token; a
cache miss costs O(merges applied x word length), O(n log n) for long words. The cache
is a plain dict, bounded by ``CACHE_SIZE`` and simply cleared when full: real text repeats a small set of
words, so it refills at once, and clearing keeps the hot loop free of LRU bookkeeping.

Token ids come from the vocabulary, so any id layout works (GPT-2's own files, where
id 0 is ``!``); where a model holds two tokens with the same bytes (possible in
canonical BPE), the k-th merge making those bytes gets the k-th smallest of their ids.
"""

from __future__ import annotations

import bisect
import importlib
import operator
import platform
from array import array
from pathlib import Path
from types import MappingProxyType
from typing import (
    TYPE_CHECKING,
    Any,
    Dict,
    Iterable,
    Iterator,
    List,
    Mapping,
    Optional,
    Pattern,
    Sequence,
    Set,
    Tuple,
    Union,
)

import attr

from .encoding_sink import CACHE_SIZE, EncodingSink, remember
from .errors import PureBPEError, UnknownTokenError, check_ids_argument, check_iterable_of_texts
from .formats.gpt2 import read_vocab_and_merges
from .pretokenize import DEFAULT_ENGINE, Pretokenizer, check_pretokenizer, splitter, utf8_scanner
from .pretokenize.chunking import ChunkCutter, clean_text, cut_stream, decode_stream
from .specials import (
    AllowedSpecial,
    DisallowedSpecial,
    Forbidden,
    SpecialPolicy,
    check_special_tokens,
    refuse_disallowed,
    split_keep_specials,
)
from .tiktoken_compat import (
    all_space,
    last_whitespace_size,
    official_encoding,
    read_ranks,
    recover_merges,
    tokens_starting_with,
)
from .token_tables import TokenTables, merge_tables, rank_tables
from .vocab import check_dense_ids
from .word_encoder import WordEncoder

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

#: Characters :meth:`Tokenizer.encode_iterable` gathers before it looks for a place to cut.
STREAM_CHARS = 1 << 18
#: Long texts are pre-tokenized in pieces of about this many bytes, cut where cutting
#: changes nothing: the pre-token list of a piece dies young (cheap for PyPy's GC), and
#: PyPy indexes an all-ASCII piece faster than a long text holding one non-ASCII character.
#: Measured on 1 MiB inputs of en-gcide: PyPy 8.9 -> 12.1 MB/s; CPython unchanged.
PIECE_BYTES = 1 << 15
#: Whether a long text's ids are made a piece at a time and joined at the end (see
#: :meth:`Tokenizer._encode_text`): on PyPy, where one long list grown in place costs its
#: collector dearly; CPython grows it in place for less than the joining costs (100 MB of
#: Linux source: 13.0 s as one list, 14.2 s joined).
JOIN_PIECES = platform.python_implementation() == "PyPy"

#: The pre-tokenizer engine: the fastest one measured on this interpreter (the scanner on
#: PyPy and in the compiled build, ``re`` on interpreted CPython). All engines give the
#: same pre-tokens.
ENGINE = DEFAULT_ENGINE


class Tokenizer:
    """Encode text to ids and decode ids to text with a byte-level BPE vocabulary.

    ``vocab`` maps ids to token bytes, ``merges`` lists the learned merges in order as byte
    pairs, ``special_tokens`` are strings encoded as single ids (their ids come from the
    vocab when it holds their bytes, the highest such id; otherwise they get new ids after
    the largest one); ``None`` makes them the vocab entries that are neither a single byte
    nor made by a merge, as :meth:`from_files` does (``<|endoftext|>`` in GPT-2's vocab),
    and ``[]`` means none. ``pretokenizer`` is how the merges were learned: ``"gpt2"``,
    ``"cl100k"``, ``"o200k"``, a :class:`purebpe.Pattern`, or ``"none"`` (one word per
    line). The vocab need not hold all 256 bytes (Stanford CS336's toy vocab does not):
    text needing a byte it lacks raises :class:`PureBPEError` naming the byte.

    ``vocab`` may instead be :class:`purebpe.token_tables.TokenTables` built already (by
    :func:`~purebpe.token_tables.rank_tables`, as :meth:`from_ranks` does), with no
    ``merges`` or ``special_tokens``: every constructor ends here.

    The tokenizer also answers to every name of ``tiktoken.Encoding`` (``n_vocab``,
    ``encode_single_token``, ``decode_with_offsets`` ...; see ``docs/tiktoken.md``).
    :meth:`from_tiktoken` and :meth:`from_ranks` build one from tiktoken's ranks, with
    tiktoken's merge rule and tiktoken's defaults for special tokens.
    """

    def __init__(
        self,
        vocab: Union[Mapping[int, bytes], TokenTables],
        merges: Optional[Sequence[Tuple[bytes, bytes]]] = None,
        special_tokens: Optional[Iterable[str]] = None,
        *,
        pretokenizer: Pretokenizer = "gpt2",
        name: str = "purebpe",
    ) -> None:
        #: What a pickle rebuilds this tokenizer from: ``"merges"``, ``"ranks"`` (set by
        #: :meth:`from_ranks`), or ``"tables"``, as they are (:meth:`__reduce__`).
        self._rebuilt_from = "merges"
        if isinstance(vocab, TokenTables):
            if merges is not None or special_tokens is not None:
                raise TypeError("Tokenizer(tables) takes no merges or special_tokens")
            tables = vocab
            self._rebuilt_from = "tables"
        elif merges is None:
            raise TypeError("Tokenizer() needs the merges with a vocab")
        else:
            tables = merge_tables(vocab, merges, special_tokens)
        # The one guard of every constructor: the tables below are indexed by id.
        check_dense_ids(tables.vocab, len(tables.vocab))
        self.pretokenizer = check_pretokenizer(pretokenizer)
        if not isinstance(name, str):
            raise PureBPEError(f"name must be a str, not {name!r}")
        self.name = name
        self.special_tokens = tables.special_tokens
        self.vocab = tables.vocab
        self.special_ids = tables.special_ids
        self._merges = tables.merges
        self._byte_ids = tables.byte_ids
        #: tiktoken's shortcut: a pre-token whose bytes are a token is that token.
        self._whole_tokens = tables.whole_tokens
        size = max(self.vocab) + 1 if self.vocab else 0
        self._id_to_bytes: List[Optional[bytes]] = [None] * size
        for tid, token in self.vocab.items():
            self._id_to_bytes[tid] = token
        #: The engine: a new pre-token's ids (private: it holds the tables).
        self._encoder = WordEncoder(
            tables.ranks,
            tables.byte_ids,
            tables.whole_tokens,
            self._id_to_bytes if tables.pairs_by_rule else None,
        )
        self._specials = SpecialPolicy(self.special_tokens, *tables.default_special)
        self._split = splitter(self.pretokenizer, ENGINE)
        #: The named pattern's scanner of UTF-8 where ``ENGINE`` is the scanner: it then
        #: feeds each pre-token's bytes straight to the encoder
        #: (:class:`~purebpe.encoding_sink.EncodingSink`), with no list of pieces, and the
        #: word cache is ``_utf8_cache``, keyed by bytes; elsewhere ``_split`` makes the
        #: list, and ``_cache`` is keyed by words.
        self._scan_utf8 = utf8_scanner(self.pretokenizer, ENGINE)
        self._cache: Dict[str, List[int]] = {}
        self._utf8_cache: Dict[bytes, List[int]] = {}
        self._cutter = ChunkCutter((), self.pretokenizer)
        self._sorted_tokens: Optional[Tuple[List[bytes], List[int]]] = None

    @classmethod
    def from_ranks(
        cls,
        mergeable_ranks: Mapping[bytes, int],
        special_tokens: Mapping[str, int],
        *,
        pretokenizer: Pretokenizer = "gpt2",
        name: str = "purebpe",
    ) -> "Tokenizer":
        """The tokenizer ``tiktoken.Encoding(name, pat_str=..., mergeable_ranks=...,
        special_tokens=...)`` is, with the pattern given by purebpe's name for it.

        Ranks are ids and merge priorities, merged by tiktoken's rule
        (:mod:`purebpe.tiktoken_compat`), and :meth:`encode` takes tiktoken's defaults
        (``allowed_special=set()``, ``disallowed_special="all"``). ``merges`` is
        recovered from the ranks when first asked for.
        """
        check_pretokenizer(pretokenizer)
        tokenizer = cls(rank_tables(mergeable_ranks, special_tokens), pretokenizer=pretokenizer, name=name)
        tokenizer._rebuilt_from = "ranks"
        return tokenizer

    @classmethod
    def from_tiktoken(
        cls, path: "PathLike", name: str, *, pretokenizer: Optional[Pretokenizer] = None
    ) -> "Tokenizer":
        """One of OpenAI's encodings from its official rank file (plain or ``.gz``).

        ``name`` is tiktoken's: ``"cl100k_base"``, ``"o200k_base"``, ``"r50k_base"`` (=
        ``"gpt2"``), ``"p50k_base"`` or ``"p50k_edit"``; it chooses the pattern and the
        special tokens (tiktoken's own table, :data:`purebpe.tiktoken_compat.ENCODINGS`).
        The result encodes like ``tiktoken.get_encoding(name)``, defaults included.
        """
        official = official_encoding(name)
        ranks = read_ranks(Path(path))
        try:
            return cls.from_ranks(
                ranks,
                official.special_tokens,
                pretokenizer=official.pretokenizer if pretokenizer is None else pretokenizer,
                name=name,
            )
        except PureBPEError as exc:
            raise PureBPEError(f"{path}: {exc}") from None

    @property
    def merges(self) -> List[Tuple[bytes, bytes]]:
        """The merges in order, as byte pairs (recovered from the ranks for :meth:`from_ranks`)."""
        if self._merges is None:
            assert self._whole_tokens is not None
            self._merges = recover_merges(self._whole_tokens)
        return self._merges

    def __reduce__(self) -> Tuple[Any, Tuple[Any, ...]]:
        # Pickle what builds the tokenizer, not its tables (rebuilt on loading), where that
        # rebuilds exactly this one: not for tables given as they are (an HF file's engine,
        # whose ranks are neither its ids nor the merges' order of its vocab).
        if self._rebuilt_from == "ranks":
            assert self._whole_tokens is not None
            return _from_ranks, (self._whole_tokens, self.special_ids, self.pretokenizer, self.name)
        if self._rebuilt_from == "merges":
            return _from_merges, (self.vocab, self.merges, self.special_tokens, self.pretokenizer, self.name)
        tables = self._tables()
        if tables.pairs_by_rule:  # the pairs met so far: rebuilt on demand
            tables = attr.evolve(tables, ranks={})
        return _from_tables, (tables, self.pretokenizer, self.name)

    def _tables(self) -> TokenTables:
        """The tables this tokenizer was built from (shared, not copied)."""
        return TokenTables(
            vocab=self.vocab,
            special_tokens=self.special_tokens,
            special_ids=self.special_ids,
            byte_ids=self._byte_ids,
            ranks=self._encoder.pairs,
            merges=self._merges,
            whole_tokens=self._whole_tokens,
            default_special=self._specials.defaults,
            pairs_by_rule=self._encoder.rule_tokens is not None,
        )

    def with_special_tokens(
        self, special_tokens: Mapping[str, int], *, name: Optional[str] = None
    ) -> "Tokenizer":
        """This tokenizer with more special tokens (``{text: id}``), each at a new id or at
        one that holds its bytes; the rest of its tables are shared. The defaults of
        ``allowed_special`` and ``disallowed_special`` stay this tokenizer's.

        >>> tok = Tokenizer.from_ranks({bytes([b]): b for b in range(256)}, {})
        >>> tok.with_special_tokens({"<s>": 256}).encode("a<s>", allowed_special="all")
        [97, 256]
        """
        tables = self._tables()
        vocab = dict(tables.vocab)
        for text, tid in special_tokens.items():
            data = text.encode("utf-8")
            if vocab.setdefault(tid, data) != data:
                raise PureBPEError(f"special token {text!r}: id {tid} holds {vocab[tid]!r}")
        added = attr.evolve(
            tables,
            vocab=vocab,
            special_tokens=check_special_tokens([*tables.special_tokens, *special_tokens]),
            special_ids={**tables.special_ids, **special_tokens},
        )
        return Tokenizer(added, pretokenizer=self.pretokenizer, name=self.name if name is None else name)

    def __repr__(self) -> str:
        return f"<Tokenizer {self.name!r}: {len(self.vocab)} tokens, pretokenizer {self.pretokenizer!r}>"

    @classmethod
    def from_file(cls, path: "PathLike", **options: Any) -> Any:
        """The tokenizer a file (or folder) holds, recognised by content whatever its name
        (:func:`purebpe.files.detect.detect`): an HF ``tokenizer.json`` gives a
        :class:`purebpe.hf.HFTokenizer`, which has this class's ``encode``/``decode``;
        the other kinds are built by :func:`purebpe.files.detect.load_tokenizer`, which
        takes ``options`` (``encoding=``, ``pattern=``, ``special_tokens=`` for rank files)."""
        # Imported here: the loaders build on this module (their tokenizers are this class).
        from .files.detect import load_tokenizer

        return load_tokenizer(path, **options)

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
        """Read GPT-2's ``vocab.json`` and ``merges.txt`` (any id layout, any bytes held).

        With ``special_tokens=None`` the special tokens are the vocab entries that are
        neither a single byte nor made by a merge (``<|endoftext|>`` in GPT-2's files), as
        for the constructor, and the entries written outside GPT-2's byte alphabet (added
        tokens); a list gives them explicitly (those missing from ``vocab.json`` get new ids).
        """
        vocab, merges, specials, pretokenizer = read_vocab_and_merges(vocab_path, merges_path)
        try:
            return cls(
                vocab,
                merges,
                specials if special_tokens is None else special_tokens,
                pretokenizer=pretokenizer,
            )
        except PureBPEError as exc:
            raise PureBPEError(f"{vocab_path} + {Path(merges_path).name}: {exc}") from None

    @property
    def vocab_size(self) -> int:
        """The number of ids in use, special tokens included."""
        return len(self.vocab)

    @property
    def byte_ids(self) -> Tuple[int, ...]:
        """The id of each byte's token, by byte value (``-1`` where the vocab has none)."""
        return tuple(self._byte_ids)

    # ----------------------------------------------------------------------------------
    # tiktoken's ``Encoding`` attributes
    # ----------------------------------------------------------------------------------
    @property
    def max_token_value(self) -> int:
        """The largest id, special tokens included."""
        return len(self._id_to_bytes) - 1

    @property
    def n_vocab(self) -> int:
        """``max_token_value + 1`` (tiktoken's name; :attr:`vocab_size` counts ids in use)."""
        return len(self._id_to_bytes)

    @property
    def eot_token(self) -> int:
        """The id of ``<|endoftext|>`` (``KeyError`` when it is not a special token)."""
        return self.special_ids["<|endoftext|>"]

    @property
    def special_tokens_set(self) -> Set[str]:
        """The special tokens, as a new ``set``."""
        return set(self.special_tokens)

    def is_special_token(self, token: int) -> bool:
        """Whether ``token`` is the id of a special token."""
        return token in self.special_ids.values()

    def token_byte_values(self) -> List[bytes]:
        """The bytes of every ordinary (not special) token, sorted."""
        return list(self._sorted_token_bytes()[0])

    # ----------------------------------------------------------------------------------
    # Encoding
    # ----------------------------------------------------------------------------------
    def encode(
        self,
        text: str,
        allowed_special: Optional[AllowedSpecial] = None,
        disallowed_special: Optional[DisallowedSpecial] = None,
    ) -> List[int]:
        """The token ids of ``text``.

        Special tokens in ``allowed_special`` (``"all"``, a set naming some, or ``set()``
        for none) are encoded as their single ids; others are plain text, unless they are
        in ``disallowed_special`` (``"all"`` means every special token not allowed, as in
        tiktoken), whose appearance in ``text`` raises ``PureBPEError`` (a ``ValueError``).
        The defaults differ by origin: a purebpe-trained tokenizer allows all its special
        tokens and forbids none; one built by :meth:`from_tiktoken` or :meth:`from_ranks`
        takes tiktoken's ``allowed_special=set()``, ``disallowed_special="all"``. Lone
        surrogates are replaced by U+FFFD first, as tiktoken does (a high surrogate
        followed by a low one becomes the character they encode).

        >>> import purebpe
        >>> tok = purebpe.train_from_iterator(["low lower lowest"] * 3, 262, ["<|endoftext|>"]).tokenizer()
        >>> tok.encode("lowest<|endoftext|>")
        [258, 260, 261]
        >>> pieces = [tok.decode([i]) for i in _]
        >>> pieces
        ['lowe', 'st', '<|endoftext|>']
        """
        text, pattern = self._checked(text, allowed_special, disallowed_special)
        return self._encode_text(text, pattern)

    def _checked(
        self,
        text: str,
        allowed_special: Optional[AllowedSpecial],
        disallowed_special: Optional[DisallowedSpecial],
    ) -> Tuple[str, Optional[Pattern[str]]]:
        """``text`` with lone surrogates replaced, and the pattern of the special tokens
        it may hold; a special token it must not hold raises."""
        pattern, forbidden = self._specials.rules(allowed_special, disallowed_special)
        text = clean_text(text)
        refuse_disallowed(text, forbidden, "text")
        return text, pattern

    def pretokenize(self, text: str) -> List[str]:
        """The pre-tokens ``encode`` splits ordinary text into (no special tokens cut).

        >>> import purebpe
        >>> purebpe.train_from_iterator(["a b"], 256).tokenizer().pretokenize("lower, lowest")
        ['lower', ',', ' lowest']
        """
        return self._split(text)

    @property
    def word_cache(self) -> Mapping[str, List[int]]:
        """The ids of the pre-tokens encoded so far (a read-only view of the encode cache).

        >>> import purebpe
        >>> tok = purebpe.train_from_iterator(["ab ab"], 257).tokenizer()
        >>> tok.encode("ab ab"), dict(tok.word_cache)
        ([256, 32, 256], {'ab': [256], ' ab': [32, 256]})
        """
        if self._scan_utf8 is not None:
            return _DecodedKeys(self._utf8_cache)
        return MappingProxyType(self._cache)

    def encode_ordinary(self, text: str) -> List[int]:
        """The token ids of ``text`` with special tokens treated as plain text."""
        return self.encode(text, allowed_special=frozenset(), disallowed_special=())

    def encode_batch(
        self,
        texts: Iterable[str],
        allowed_special: Optional[AllowedSpecial] = None,
        disallowed_special: Optional[DisallowedSpecial] = None,
        *,
        num_threads: int = 1,
    ) -> List[List[int]]:
        """:meth:`encode` of each text, in order (``num_threads`` is accepted and unused:
        pure Python encodes on one thread)."""
        check_iterable_of_texts(texts)
        pattern, forbidden = self._specials.rules(allowed_special, disallowed_special)
        batch: List[List[int]] = []
        for index, text in enumerate(texts):
            text = clean_text(text)
            refuse_disallowed(text, forbidden, f"texts[{index}]")
            batch.append(self._encode_text(text, pattern))
        return batch

    def encode_ordinary_batch(self, texts: Iterable[str], *, num_threads: int = 1) -> List[List[int]]:
        """:meth:`encode_ordinary` of each text, in order."""
        return self.encode_batch(texts, frozenset(), (), num_threads=num_threads)

    def encode_to_array(
        self,
        text: str,
        allowed_special: Optional[AllowedSpecial] = None,
        disallowed_special: Optional[DisallowedSpecial] = None,
        *,
        typecode: str = "I",
    ) -> "array[int]":
        """:meth:`encode` as an ``array.array`` of ``typecode``, which must hold every id:
        ``"H"`` (``uint16``) takes half the memory of ``"I"`` for a vocabulary below 65 536.

        >>> import purebpe
        >>> tok = purebpe.train_from_iterator(["low lower lowest"] * 3, 262).tokenizer()
        >>> tok.encode_to_array("lowest", typecode="H")
        array('H', [258, 260])
        """
        bits = 8 * array(typecode).itemsize - typecode.islower() if typecode in _ID_TYPECODES else 0
        if self.max_token_value >= 1 << bits:
            raise PureBPEError(
                f"typecode {typecode!r} cannot hold this tokenizer's ids (up to {self.max_token_value}); "
                "use one of 'H', 'I', 'L', 'Q'"
            )
        text, pattern = self._checked(text, allowed_special, disallowed_special)
        # Each piece's ids go into the array as soon as they are made: lists that lived
        # for a whole text were garbage in PyPy's old generation, and made its collector
        # run major collections (11% of `purebpe encode` on 100 MB of Linux source).
        ids = array(typecode)
        self._encode_into(text, pattern, [], ids)
        return ids

    def encode_to_numpy(
        self,
        text: str,
        allowed_special: Optional[AllowedSpecial] = None,
        disallowed_special: Optional[DisallowedSpecial] = None,
    ) -> Any:
        """:meth:`encode` as a ``numpy`` array of ``uint32`` (needs numpy)."""
        try:
            numpy = importlib.import_module("numpy")
        except ImportError:
            raise PureBPEError("encode_to_numpy needs the numpy package (pip install numpy)") from None
        ids = self.encode_to_array(text, allowed_special, disallowed_special, typecode="I")
        # The array's memory as is (no copy where a C unsigned int is 4 bytes, as it is
        # nearly everywhere).
        return numpy.frombuffer(ids, dtype=f"=u{ids.itemsize}").astype(numpy.uint32, copy=False)

    def encode_single_token(self, text_or_bytes: Union[str, bytes]) -> int:
        """The id of the token whose text or bytes are given, special tokens included.

        Raises :class:`UnknownTokenError` (a ``KeyError``, as in tiktoken) when no
        single token has them.
        """
        data = text_or_bytes.encode("utf-8") if isinstance(text_or_bytes, str) else text_or_bytes
        tokens, ids = self._sorted_token_bytes()
        index = bisect.bisect_left(tokens, data)
        if index < len(tokens) and tokens[index] == data:
            return ids[index]
        special = self.special_ids.get(data.decode("utf-8", "replace"))
        if special is not None and self.vocab[special] == data:
            return special
        raise UnknownTokenError(f"no single token is {text_or_bytes!r}")

    def encode_bytes(self, data: bytes) -> List[int]:
        """The ids of raw bytes that need not be UTF-8, as tiktoken's ``_encode_bytes``.

        Valid UTF-8 is :meth:`encode_ordinary`. Otherwise the valid prefix is encoded so,
        and its last pre-token (widened over trailing whitespace tokens) joins the bytes
        from the first invalid one to the end, which are encoded as one piece.
        """
        if not isinstance(data, (bytes, bytearray)):
            raise PureBPEError(f"encode_bytes expects bytes, got {type(data).__name__}")
        data = bytes(data)
        try:
            return self.encode_ordinary(data.decode("utf-8"))
        except UnicodeDecodeError as exc:
            valid = exc.start
        stable, last = self._encode_last_apart(data[:valid].decode("utf-8"), None)
        return stable + self._bpe(self.decode_bytes(last) + data[valid:])

    _encode_bytes = encode_bytes  # tiktoken's (private) name

    def encode_with_unstable(
        self,
        text: str,
        allowed_special: Optional[AllowedSpecial] = None,
        disallowed_special: Optional[DisallowedSpecial] = None,
    ) -> Tuple[List[int], List[List[int]]]:
        """The stable ids of ``text`` and the id sequences that may complete it, as tiktoken.

        The last pre-token (widened over trailing whitespace tokens) could merge with text
        still to come, so it is left out of the stable ids; the completions are the
        sequences of ids that can follow them and spell a continuation of those bytes:
        every token starting with them, every re-encoding of a prefix of them followed
        by a token starting with the rest, and the last character split off when it is
        whitespace. Returned sorted (tiktoken returns them in hash order).
        """
        text, pattern = self._checked(text, allowed_special, disallowed_special)
        stable, last = self._encode_last_apart(text, pattern)
        unstable = self.decode_bytes(last)
        if not unstable:
            return stable, []
        tokens, ids = self._sorted_token_bytes()
        completions: Set[Tuple[int, ...]] = set()
        for index in tokens_starting_with(tokens, unstable):
            completions.add((ids[index],))
        for cut in range(1, len(unstable)):
            prefix, suffix = unstable[:cut], unstable[cut:]
            for index in tokens_starting_with(tokens, suffix):
                possibility = prefix + tokens[index]
                try:
                    encoded = self.encode_ordinary(possibility.decode("utf-8"))
                except UnicodeDecodeError:
                    encoded = self._bpe(possibility)
                sequence: List[int] = []
                covered = 0
                for tid in encoded:
                    sequence.append(tid)
                    covered += len(self._id_to_bytes[tid] or b"")
                    if covered >= len(unstable):
                        break
                completions.add(tuple(sequence))
        if len(unstable) > 1:
            char_size = last_whitespace_size(unstable)
            if 0 < char_size < len(unstable):
                head, tail = unstable[:-char_size], unstable[-char_size:]
                completions.add(tuple(self._bpe(head) + self._bpe(tail)))
        return stable, [list(c) for c in sorted(completions)]

    def encode_iterable(
        self,
        texts: Iterable[Union[str, bytes]],
        allowed_special: Optional[AllowedSpecial] = None,
        disallowed_special: Optional[DisallowedSpecial] = None,
    ) -> Iterator[int]:
        """The ids of the concatenation of ``texts`` (e.g. a file's lines), streamed.

        ``texts`` yields ``str``, or ``bytes`` (a file opened in binary mode), decoded as
        UTF-8 incrementally: a sequence split across items is joined, and invalid UTF-8
        raises :class:`purebpe.InputError` with its byte offset in the stream.
        Text is gathered into buffers of about ``STREAM_CHARS`` characters and each is
        cut where cutting cannot change the result (:class:`purebpe.pretokenize.chunking.ChunkCutter`:
        before a special token, or before a space or newline that precedes a
        non-space), so the ids equal ``encode("".join(texts))`` while memory stays flat.
        A stretch of text with no such place (one enormous word) is held until it ends.
        A disallowed special token raises when the stream reaches it, even if it arrives
        split across items.
        """
        pattern, forbidden = self._specials.rules(allowed_special, disallowed_special)
        allowed = self._specials.allowed(allowed_special)
        longest = max((len(t.encode("utf-8")) for t in forbidden[1]), default=0) if forbidden else 0
        cutter = ChunkCutter(sorted(allowed), self.pretokenizer, reserve=longest)
        return self._stream(decode_stream(texts), pattern, cutter, forbidden)

    def _stream(
        self,
        texts: Iterable[str],
        pattern: Optional[Pattern[str]],
        cutter: ChunkCutter,
        forbidden: Optional[Forbidden],
    ) -> Iterator[int]:
        def check(text: str, start: int) -> None:
            refuse_disallowed(text, forbidden, "the stream", start)

        for piece in cut_stream(texts, cutter, check, STREAM_CHARS):
            yield from self._encode_text(piece, pattern)

    def _encode_text(self, text: str, pattern: Optional[Pattern[str]]) -> List[int]:
        """The ids of ``text`` (already free of lone surrogates).

        With :data:`JOIN_PIECES` (PyPy), a long text's ids are made a piece at a time, each
        piece's in a list of its own, and joined at the end in a list made at its final
        size. A list grown over the whole text is copied out of PyPy's young generation
        again and again as it grows, and the garbage makes the collector run: ``encode``
        of the 100 MB of Linux source of ``bench_corpora`` took 6.4-7.2 s of CPU as one
        list and 5.2-5.9 s joined, and ``purebpe encode`` of it (then in jobs of 256 Ki
        characters) 8.0 -> 7.0 s with 2 processes.
        """
        ids: List[int] = []
        if not JOIN_PIECES or len(text) <= 2 * PIECE_BYTES:
            self._encode_into(text, pattern, ids)
            return ids
        stretches: List[List[int]] = []
        self._encode_into(text, pattern, ids, stretches)
        return _joined(stretches)

    def _encode_into(
        self,
        text: str,
        pattern: Optional[Pattern[str]],
        out: List[int],
        stretches: Optional[Stretches] = None,
    ) -> None:
        """Append the ids of ``text`` (already free of lone surrogates) to ``out``; with
        ``stretches``, move them on to it after each piece (:func:`_move_ids`), leaving
        ``out`` empty."""
        if pattern is None:
            self._encode_ordinary(text, out, stretches)
            return
        special_ids = self.special_ids
        for piece, is_special in split_keep_specials(text, pattern):
            if is_special:
                out.append(special_ids[piece])
            else:
                self._encode_ordinary(piece, out, stretches)
        if stretches is not None:
            _move_ids(out, stretches)  # a special token at the end

    def _encode_ordinary(self, text: str, out: List[int], stretches: Optional[Stretches] = None) -> None:
        """Append the ids of a text holding no special token, in pieces of ~``PIECE_BYTES``
        (moved on to ``stretches`` after each, where given)."""
        if len(text) <= 2 * PIECE_BYTES:
            self._encode_piece(text, out)
        else:
            data = text.encode("utf-8")
            start = 0
            while len(data) - start > 2 * PIECE_BYTES:
                cut = self._cutter.cut(data[start : start + PIECE_BYTES])
                if cut <= 0:
                    break  # no safe place in this stretch: encode the rest whole
                self._encode_utf8(data[start : start + cut], out)
                if stretches is not None:
                    _move_ids(out, stretches)
                start += cut
            self._encode_utf8(data[start:], out)
        if stretches is not None:
            _move_ids(out, stretches)

    def _encode_utf8(self, data: bytes, out: List[int]) -> None:
        """Append the ids of valid UTF-8 holding no special token: by the UTF-8 scanner
        where it runs, else as :meth:`_encode_piece` does with the decoded text."""
        scan = self._scan_utf8
        if scan is None:
            self._encode_words(self._split(data.decode("utf-8")), out)
            return
        sink = EncodingSink(self._utf8_cache, out, self._encoder)
        try:
            scan(data, sink)
            sink.finish()
        except BaseException:
            sink.abandon()  # the cache must not keep a placeholder
            raise

    def _encode_piece(self, text: str, out: List[int]) -> None:
        """Append the ids of a text holding no special token: pre-tokenize, then each word."""
        if self._scan_utf8 is not None:
            self._encode_utf8(text.encode("utf-8"), out)
        else:
            self._encode_words(self._split(text), out)

    def _encode_words(self, words: List[str], out: List[int]) -> None:
        """Append the ids of pre-tokens, through the word cache."""
        cache = self._cache
        encode_word = self._encoder.encode_word
        for word in words:
            ids = cache.get(word)
            if ids is None:
                ids = encode_word(word)
                remember(cache, word, ids)
            out += ids

    def _encode_word(self, word: str) -> List[int]:
        """The ids of one pre-token: its UTF-8 bytes with the learned merges applied."""
        return self._encoder.encode_word(word)

    def _bpe(self, data: bytes) -> List[int]:
        """The ids of ``data`` as one piece: its bytes with the merges applied."""
        return self._encoder.merge(data)

    def _encode_last_apart(self, text: str, pattern: Optional[Pattern[str]]) -> Tuple[List[int], List[int]]:
        """The ids of ``text`` as ``(stable, last)``: ``last`` are those of its last
        pre-token, widened back over the all-whitespace tokens before it, as tiktoken's
        ``_increase_last_piece_token_len`` (empty when ``text`` ends with a special token)."""
        parts = split_keep_specials(text, pattern)
        stable: List[int] = []
        if not parts or parts[-1][1]:
            self._encode_into(text, pattern, stable)
            return stable, []
        for piece, is_special in parts[:-1]:
            if is_special:
                stable.append(self.special_ids[piece])
            else:
                self._encode_ordinary(piece, stable)
        words = self._split(parts[-1][0])
        self._encode_words(words[:-1], stable)
        last = self._encode_word(words[-1])
        cut = len(stable)
        if all_space(self._id_to_bytes[last[0]]):
            while cut > 0 and all_space(self._id_to_bytes[stable[cut - 1]]):
                cut -= 1
        return stable[:cut], stable[cut:] + last

    def _sorted_token_bytes(self) -> Tuple[List[bytes], List[int]]:
        """The ordinary tokens' bytes, sorted, and their ids (built on first use)."""
        if self._sorted_tokens is None:
            special = set(self.special_ids.values())
            pairs = sorted((token, tid) for tid, token in self.vocab.items() if tid not in special)
            self._sorted_tokens = ([token for token, _ in pairs], [tid for _, tid in pairs])
        return self._sorted_tokens

    # ----------------------------------------------------------------------------------
    # Decoding
    # ----------------------------------------------------------------------------------
    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes the ids stand for; an id not in the vocab raises
        :class:`UnknownTokenError` (a ``PureBPEError`` and a ``KeyError``, as tiktoken)."""
        if not isinstance(ids, list):
            check_ids_argument(ids)
            ids = list(ids)
        id_list = ids
        table = self._id_to_bytes
        try:
            data = b"".join([table[i] for i in id_list])  # type: ignore[misc]
        except (IndexError, TypeError):
            raise self._bad_id(id_list) from None
        if id_list and min(id_list) < 0:  # negative indexes would silently count from the end
            raise self._bad_id(id_list)
        return data

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """The text the ids stand for; invalid UTF-8 is handled by ``errors`` (U+FFFD).

        >>> import purebpe
        >>> tok = purebpe.train_from_iterator(["low lower lowest"] * 3, 262).tokenizer()
        >>> tok.decode([258, 260]), tok.decode([0xE4, 0xB8])
        ('lowest', '\ufffd')
        """
        return self.decode_bytes(ids).decode("utf-8", errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token, special tokens included (``UnknownTokenError``, a
        ``KeyError``, for an id not in the vocab)."""
        return self.decode_bytes([token])

    def decode_tokens_bytes(self, ids: Iterable[int]) -> List[bytes]:
        """The bytes of each token, in order."""
        return [self.decode_single_token_bytes(tid) for tid in ids]

    def decode_with_offsets(self, ids: Iterable[int]) -> Tuple[str, List[int]]:
        """The text and, for each token, the index of the character where it starts.

        A token starting inside a character (a UTF-8 continuation byte) gets that
        character's index. Tokens that do not decode to valid UTF-8 raise
        ``UnicodeDecodeError``, as in tiktoken.
        """
        pieces = self.decode_tokens_bytes(ids)
        offsets: List[int] = []
        chars = 0
        for piece in pieces:
            inside = 1 if 0x80 <= piece[0] < 0xC0 else 0
            offsets.append(max(0, chars - inside))
            # Each byte that does not continue a character starts one.
            chars += sum(1 for byte in piece if not 0x80 <= byte < 0xC0)
        return b"".join(pieces).decode("utf-8", "strict"), offsets

    def decode_batch(
        self, batch: Iterable[Iterable[int]], *, errors: str = "replace", num_threads: int = 1
    ) -> List[str]:
        """:meth:`decode` of each id sequence (``num_threads`` is accepted and unused)."""
        return [self.decode(ids, errors) for ids in batch]

    def decode_bytes_batch(self, batch: Iterable[Iterable[int]], *, num_threads: int = 1) -> List[bytes]:
        """:meth:`decode_bytes` of each id sequence (``num_threads`` is accepted and unused)."""
        return [self.decode_bytes(ids) for ids in batch]

    def _bad_id(self, ids: List[int]) -> PureBPEError:
        table = self._id_to_bytes
        for position, tid in enumerate(ids):
            try:
                index = operator.index(tid)
            except TypeError:
                return PureBPEError(f"token id {tid!r} at position {position} is not an int")
            if not 0 <= index < len(table) or table[index] is None:
                return UnknownTokenError(
                    f"token id {tid} at position {position} is not in the vocabulary "
                    f"(ids run 0..{len(table) - 1})"
                )
        return PureBPEError("bad token id")  # pragma: no cover - callers found one


#: Where a long text's ids are moved to a piece at a time: lists joined at the end, or an
#: array (:func:`_move_ids`).
Stretches = Union[List[List[int]], "array[int]"]
#: The typecodes of ``array.array`` that hold ints (the lower-case ones signed).
_ID_TYPECODES = frozenset("bBhHiIlLqQ")


def _move_ids(ids: List[int], stretches: Stretches) -> None:
    """Move ``ids`` to the end of ``stretches``: a list of their own, or into an array."""
    if ids:
        if isinstance(stretches, array):
            stretches.fromlist(ids)
        else:
            stretches.append(ids[:])
        del ids[:]


def _joined(stretches: List[List[int]]) -> List[int]:
    """The lists one after the other, in one list made at its final size.

    >>> _joined([[1, 2], [3]])
    [1, 2, 3]
    """
    if len(stretches) == 1:
        return stretches[0]
    total = 0
    for stretch in stretches:
        total += len(stretch)
    ids = [0] * total
    at = 0
    for stretch in stretches:
        ids[at : at + len(stretch)] = stretch
        at += len(stretch)
    return ids


def _from_ranks(
    ranks: Mapping[bytes, int], special_ids: Mapping[str, int], pretokenizer: Pretokenizer, name: str
) -> Tokenizer:
    """Unpickle a tokenizer built by :meth:`Tokenizer.from_ranks`."""
    return Tokenizer.from_ranks(ranks, special_ids, pretokenizer=pretokenizer, name=name)


def _from_tables(tables: TokenTables, pretokenizer: Pretokenizer, name: str) -> Tokenizer:
    """Unpickle a tokenizer built from its tables as they are."""
    return Tokenizer(tables, pretokenizer=pretokenizer, name=name)


def _from_merges(
    vocab: Mapping[int, bytes],
    merges: Sequence[Tuple[bytes, bytes]],
    special_tokens: Sequence[str],
    pretokenizer: Pretokenizer,
    name: str,
) -> Tokenizer:
    """Unpickle a tokenizer built from a vocab and merges."""
    return Tokenizer(vocab, merges, special_tokens, pretokenizer=pretokenizer, name=name)


class _DecodedKeys(Mapping[str, List[int]]):
    """A read-only view of a word cache keyed by UTF-8 bytes, with ``str`` keys."""

    def __init__(self, cache: Dict[bytes, List[int]]) -> None:
        self._cache = cache

    def __getitem__(self, word: str) -> List[int]:
        if isinstance(word, str):
            try:
                found = self._cache.get(word.encode("utf-8"))
            except UnicodeEncodeError:  # a lone surrogate: never a cached word
                found = None
            if found is not None:
                return found
        raise KeyError(word)

    def __iter__(self) -> Iterator[str]:
        return (key.decode("utf-8") for key in self._cache)

    def __len__(self) -> int:
        return len(self._cache)
