"""Word counts: the pre-tokenized words of a corpus with how often each occurs, and their file.

:class:`WordCounts` is what :func:`purebpe.count` returns and what every trainer starts
from. Its file (:meth:`WordCounts.save`) is gzipped TSV with a one-line JSON header that
names the special tokens and the pre-tokenizer the words were counted with, so that shards
counted apart are only added up when they were counted alike (:meth:`WordCounts.sum`).
"""

from __future__ import annotations

import gzip
import json
import zlib
from pathlib import Path
from typing import Any, Dict, Iterable, Iterator, Tuple

import attr

from ._atomic import PathLike, write_bytes
from .bytemap import decode_token, encode_token
from .errors import PureBPEError, excerpt
from .pretokenize import Pretokenizer, pretokenizer_from_json, pretokenizer_to_json
from .specials import check_special_tokens

#: The header's format tag in files written by :meth:`WordCounts.save`.
COUNTS_FORMAT = "purebpe-word-counts-1"


@attr.s(slots=True, auto_attribs=True)
class WordCounts:
    """The pre-tokenized words of a corpus (UTF-8 bytes) and how often each occurs."""

    words: Dict[bytes, int]
    special_tokens: Tuple[str, ...] = ()
    pretokenizer: Pretokenizer = "gpt2"
    #: Bad records left out with ``errors="skip"`` (not saved: a fact about one run).
    skipped: int = attr.ib(default=0, eq=False)

    def __len__(self) -> int:
        return len(self.words)

    def total(self) -> int:
        """The number of word occurrences counted."""
        return sum(self.words.values())

    def save(self, path: PathLike) -> Path:
        """Write the counts as gzipped TSV (atomically), most frequent words first.

        The file starts with a ``#`` header line of JSON (format, special tokens,
        pre-tokenizer); then one ``count<TAB>word`` line per word, the word written in
        GPT-2's byte-to-unicode alphabet so that any bytes fit on one line.
        """
        header = {
            "format": COUNTS_FORMAT,
            "special_tokens": list(self.special_tokens),
            "pretokenizer": pretokenizer_to_json(self.pretokenizer),
        }
        lines = ["# " + json.dumps(header)]
        ranked = sorted(self.words.items(), key=lambda item: (-item[1], item[0]))
        lines.extend(f"{n}\t{encode_token(word)}" for word, n in ranked)
        data = gzip.compress(("\n".join(lines) + "\n").encode("utf-8"), mtime=0)
        return write_bytes(path, data)

    @classmethod
    def load(cls, path: PathLike) -> "WordCounts":
        """Read counts written by :meth:`save`; a malformed file names the bad line."""
        special_tokens, pretokenizer = _read_header(path)
        return cls(dict(_read_words(path)), special_tokens, pretokenizer)

    @classmethod
    def sum(cls, paths: Iterable[PathLike]) -> "WordCounts":
        """Add up counts files (the shards of one corpus) into one ``WordCounts``.

        Every file's header is read first, so shards counted with other special tokens or
        another pre-tokenizer are refused before any adding (naming the file). Then each
        file's lines are streamed into the running total: memory holds the total and one
        line, never a whole shard.
        """
        headers = [(path, _read_header(path)) for path in paths]
        if not headers:
            raise PureBPEError("no counts files to add up")
        first, (special_tokens, pretokenizer) = headers[0]
        for path, (other_specials, other_pretokenizer) in headers[1:]:
            mismatch = _mismatch(other_specials, other_pretokenizer, special_tokens, pretokenizer)
            if mismatch:
                raise PureBPEError(f"{path}: {mismatch} {first}; shards must be counted alike")
        totals: Dict[bytes, int] = {}
        get = totals.get
        for path, _ in headers:
            for word, n in _read_words(path):
                totals[word] = get(word, 0) + n
        return cls(totals, special_tokens, pretokenizer)

    def __add__(self, other: "WordCounts") -> "WordCounts":
        """The counts of both (neither is changed); they must be counted alike."""
        if not isinstance(other, WordCounts):
            return NotImplemented
        mismatch = _mismatch(other.special_tokens, other.pretokenizer, self.special_tokens, self.pretokenizer)
        if mismatch:
            raise PureBPEError(f"cannot add word counts: the right ones were {mismatch} the left")
        totals = dict(self.words)
        add_counts(totals, other.words)
        return WordCounts(totals, self.special_tokens, self.pretokenizer)


def _mismatch(
    special_tokens: Tuple[str, ...],
    pretokenizer: Pretokenizer,
    other_special_tokens: Tuple[str, ...],
    other_pretokenizer: Pretokenizer,
) -> str:
    """How two counts' options differ (``"counted with ... unlike"``), or ``""`` if alike.

    The order of special tokens does not matter (the longest match wins whatever it is).
    """
    if set(special_tokens) != set(other_special_tokens):
        return f"counted with special tokens {list(special_tokens)}, unlike {list(other_special_tokens)} in"
    if pretokenizer != other_pretokenizer:
        return f"counted with pretokenizer {pretokenizer!r}, unlike {other_pretokenizer!r} in"
    return ""


def _read_header(path: PathLike) -> Tuple[Tuple[str, ...], Pretokenizer]:
    """The special tokens and pre-tokenizer in the header line of a counts file."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            first = f.readline()
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as exc:
        raise _unreadable(path, exc) from None
    header = _read_counts_header(path, first)
    return header["special_tokens"], header["pretokenizer"]


def _read_words(path: PathLike) -> Iterator[Tuple[bytes, int]]:
    """``(word, count)`` for each line after the header, read one line at a time."""
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            f.readline()  # the header
            for line_no, line in enumerate(f, start=2):
                n, tab, word = line.rstrip("\n").partition("\t")
                try:
                    if not (tab and n.isascii() and n.isdigit()):
                        raise PureBPEError("expected 'count<TAB>word'")
                    yield decode_token(word), int(n)
                except PureBPEError as exc:
                    raise PureBPEError(f"{path}, line {line_no}: {exc}") from None
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as exc:
        raise _unreadable(path, exc) from None


def _unreadable(path: PathLike, exc: Exception) -> PureBPEError:
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
    return PureBPEError(f"{path}: not a purebpe counts file, or a truncated one ({reason})")


def _read_counts_header(path: PathLike, first: str) -> Dict[str, Any]:
    """The checked header of a counts file: its special tokens and pre-tokenizer."""
    try:
        header = json.loads(first[2:]) if first.startswith("# ") else None
    except (json.JSONDecodeError, RecursionError):  # RecursionError: nested absurdly deep
        header = None
    if (
        not isinstance(header, dict)
        or header.get("format") != COUNTS_FORMAT
        or not {"special_tokens", "pretokenizer"} <= header.keys()
    ):
        raise PureBPEError(f"{path}: not a purebpe counts file (bad header line)")
    specials = header["special_tokens"]
    if not isinstance(specials, list):
        raise PureBPEError(f"{path}, line 1: special_tokens {excerpt(specials)} is not a list of strings")
    try:
        header["special_tokens"] = check_special_tokens(specials)
    except PureBPEError as exc:
        raise PureBPEError(f"{path}, line 1: {exc}") from None
    header["pretokenizer"] = pretokenizer_from_json(header["pretokenizer"], f"{path}, line 1")
    return header


def add_counts(totals: Dict[bytes, int], counts: Dict[bytes, int]) -> None:
    """Add ``counts`` to ``totals`` in place (Python ints: no overflow)."""
    if not totals:
        totals.update(counts)
        return
    get = totals.get
    for word, n in counts.items():
        totals[word] = get(word, 0) + n
