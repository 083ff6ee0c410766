"""OpenAI's rank files and official encodings, and the rule tiktoken merges by.

Everything purebpe knows about ``.tiktoken`` rank files is here, below the file formats
and the tokenizer, which both use it: reading them (:func:`read_ranks`), the merges behind
them (:func:`recover_merges`) and tiktoken's table of encodings (:data:`ENCODINGS`).

An official ``.tiktoken`` file (``cl100k_base.tiktoken``, ``o200k_base.tiktoken``, ...)
holds one line per token, ``base64(token bytes) rank``; the rank is both the token's id
and its merge priority. It holds no merges, no pattern and no special tokens: tiktoken
keeps those in code (``tiktoken_ext/openai_public.py``), and so does :data:`ENCODINGS`.

tiktoken's rule inside a pre-token: start from single bytes, and repeatedly merge the
adjacent pair whose *concatenated bytes* form the token of lowest rank (the leftmost
such pair on a tie); a pre-token whose bytes are a token is that token at once. The
tokenizer's merge loop (:mod:`purebpe.word_encoder`) runs the first half of that rule
with the rank of each pair it meets looked up once by its concatenated bytes, the second
half is its whole-token shortcut (:attr:`purebpe.token_tables.TokenTables.whole_tokens`).
For rank files made by BPE training (the official ones) this equals replaying the merges
recovered from the ranks (:func:`recover_merges`): a token forms in context only from
pieces that formed as in isolation. It is exact for any rank file, though (a token may
rank below its parts, or be reachable only whole), and needs nothing built in advance.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import gzip
import os
import zlib
from pathlib import Path
from typing import Dict, Iterator, List, Mapping, Optional, Tuple, Union

import attr

from .core import apply_merges, pack_pair, pack_rank
from .errors import PureBPEError, excerpt

__all__ = [
    "ENCODINGS",
    "OfficialEncoding",
    "all_space",
    "last_whitespace_size",
    "official_encoding",
    "read_ranks",
    "recover_merges",
    "tokens_starting_with",
]

ENDOFTEXT = "<|endoftext|>"
FIM_PREFIX = "<|fim_prefix|>"
FIM_MIDDLE = "<|fim_middle|>"
FIM_SUFFIX = "<|fim_suffix|>"
ENDOFPROMPT = "<|endofprompt|>"


@attr.s(frozen=True, slots=True, auto_attribs=True)
class OfficialEncoding:
    """What tiktoken knows about an encoding besides its rank file."""

    pretokenizer: str
    special_tokens: Mapping[str, int]
    rank_file: str  # the rank file tiktoken downloads for it


#: tiktoken's own table (``tiktoken_ext/openai_public.py``): each encoding's pattern, by
#: purebpe's name for it, and its special tokens with their ids.
ENCODINGS: Dict[str, OfficialEncoding] = {
    "gpt2": OfficialEncoding("gpt2", {ENDOFTEXT: 50256}, "r50k_base.tiktoken"),
    "r50k_base": OfficialEncoding("gpt2", {ENDOFTEXT: 50256}, "r50k_base.tiktoken"),
    "p50k_base": OfficialEncoding("gpt2", {ENDOFTEXT: 50256}, "p50k_base.tiktoken"),
    "p50k_edit": OfficialEncoding(
        "gpt2",
        {ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283},
        "p50k_base.tiktoken",
    ),
    "cl100k_base": OfficialEncoding(
        "cl100k",
        {
            ENDOFTEXT: 100257,
            FIM_PREFIX: 100258,
            FIM_MIDDLE: 100259,
            FIM_SUFFIX: 100260,
            ENDOFPROMPT: 100276,
        },
        "cl100k_base.tiktoken",
    ),
    "o200k_base": OfficialEncoding("o200k", {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}, "o200k_base.tiktoken"),
}


def official_encoding(name: str) -> OfficialEncoding:
    """The entry of :data:`ENCODINGS` called ``name``, or a clear error."""
    try:
        return ENCODINGS[name]
    except (KeyError, TypeError):
        raise PureBPEError(f"unknown tiktoken encoding {name!r}; known: {', '.join(ENCODINGS)}") from None


def read_ranks(path: Union[str, "os.PathLike[str]"], data: Optional[bytes] = None) -> Dict[bytes, int]:
    """``{token bytes: rank}`` from a ``.tiktoken`` file, plain or gzip-compressed (``.gz``).

    Reads what ``tiktoken.load.load_tiktoken_bpe`` reads; a malformed line raises
    :class:`PureBPEError` naming the file and line. ``data``, if given, is the file's
    contents, already read (a loader that checks a digest of the very bytes it parses).
    """
    path = Path(path)
    if data is None and not path.is_file():
        raise PureBPEError(f"{path}: no such file")
    ranks: Dict[bytes, int] = {}
    number = 0
    try:
        if data is None:
            data = path.read_bytes()
        if path.name.endswith(".gz"):
            data = gzip.decompress(data)
        for number, line in enumerate(data.splitlines(), start=1):
            _add_rank_line(ranks, line, path, number)
    except (OSError, EOFError, zlib.error) as exc:
        raise PureBPEError(f"{path}, line {number + 1}: cannot read ({exc})") from None
    if len(set(ranks.values())) != len(ranks):
        raise PureBPEError(f"{path}: two tokens share a rank")
    return ranks


def _add_rank_line(ranks: Dict[bytes, int], line: bytes, path: Path, number: int) -> None:
    if not line.strip():
        return
    fields = line.split()
    try:
        if len(fields) != 2:
            raise ValueError("expected 2 fields")
        # Whisper's multilingual.tiktoken writes an empty token as "=" (tiktoken reads b"").
        token = b"" if fields[0] == b"=" else base64.b64decode(fields[0], validate=True)
        rank = int(fields[1])
    except (ValueError, binascii.Error) as exc:
        raise PureBPEError(
            f"{path}, line {number}: expected 'base64 rank', got {line[:60]!r} ({exc})"
        ) from None
    if token in ranks or rank < 0:
        raise PureBPEError(f"{path}, line {number}: token {excerpt(token)} repeated or rank < 0")
    ranks[token] = rank


def recover_merges(ranks: Dict[bytes, int]) -> List[Tuple[bytes, bytes]]:
    """The merges behind ``ranks``: each multi-byte token, in rank order, split in two.

    A token's two halves are what its bytes encode to with the merges found so far
    (:func:`purebpe.core.apply_merges`); a token they do not bring down to two pieces
    is made by no merge and is left out of the merges.
    """
    ordered = sorted(ranks.items(), key=lambda item: item[1])
    byte_ids = {token[0]: rank for token, rank in ordered if len(token) == 1}
    if len(byte_ids) != 256:
        missing = min(set(range(256)) - set(byte_ids))
        raise PureBPEError(f"no token for byte 0x{missing:02x}")
    token_of = {rank: token for token, rank in ordered}
    merge_ranks: Dict[int, int] = {}
    merges: List[Tuple[bytes, bytes]] = []
    for token, rank in ordered:
        if len(token) == 1:
            continue
        pieces = apply_merges([byte_ids[b] for b in token], merge_ranks)
        if len(pieces) != 2:
            continue
        merge_ranks[pack_pair(pieces[0], pieces[1])] = pack_rank(len(merges), rank)
        merges.append((token_of[pieces[0]], token_of[pieces[1]]))
    return merges


# What tiktoken's encode_with_unstable and _encode_bytes look at.
def all_space(token: Optional[bytes]) -> bool:
    """Whether a token is all spaces, newlines and tabs (tiktoken's ``token_is_all_space``)."""
    return bool(token) and not token.strip(b" \n\t")  # type: ignore[union-attr]


#: Rust's ``char::is_whitespace`` (Unicode White_Space), which tiktoken's completions use;
#: ``str.isspace`` also counts U+001C..U+001F.
_WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)


def last_whitespace_size(data: bytes) -> int:
    """The byte length of ``data``'s last character if it is whitespace, else 0."""
    for size in range(1, min(4, len(data)) + 1):
        if not 0x80 <= data[-size] < 0xC0:  # the last character starts here
            try:
                char = data[-size:].decode("utf-8")
            except UnicodeDecodeError:
                return 0
            return size if char in _WHITE_SPACE else 0
    return 0


def tokens_starting_with(tokens: List[bytes], prefix: bytes) -> Iterator[int]:
    """The indexes in the sorted ``tokens`` of those that start with ``prefix``."""
    index = bisect.bisect_left(tokens, prefix)
    while index < len(tokens) and tokens[index].startswith(prefix):
        yield index
        index += 1
