"""tiktoken's ranks file, ``tokenizer.tiktoken``, with a JSON sidecar for what it lacks.

The ranks file has one line per token, ``base64(token bytes) rank``, in rank order; it is
what ``tiktoken.load.load_tiktoken_bpe`` reads. tiktoken merges inside a pre-token the
adjacent pair whose *concatenation* has the lowest rank, so the ranks must follow the
merge order: rank = id works for purebpe's canonical layout (bytes, then merges in order)
and for GPT-2's. The file has no merges, special tokens or pattern, so
``tokenizer.tiktoken.json`` beside it keeps those::

    {"pretokenizer": "gpt2", "pat_str": "...", "special_tokens": {"<|endoftext|>": 50256},
     "explicit_n_vocab": 50257}

Build a ``tiktoken.Encoding`` from the two files::

    import json, tiktoken
    from tiktoken.load import load_tiktoken_bpe
    sidecar = json.load(open("tok/tokenizer.tiktoken.json"))
    enc = tiktoken.Encoding(
        name="my-tokenizer",
        pat_str=sidecar["pat_str"],
        mergeable_ranks=load_tiktoken_bpe("tok/tokenizer.tiktoken", sidecar["ranks_sha256"]),
        special_tokens=sidecar["special_tokens"],
    )

or simply ``purebpe.formats.tiktoken_format.tiktoken_encoding("tok")``.
``pat_str`` is tiktoken's own string for the model's named pattern (gpt2 is ``r50k_base``'s,
cl100k and o200k theirs), or for a ``pretokenizer="none"`` model a line pattern,
``[^\\n]*\\n|[^\\n]+`` (each line with its ``\\n``).  A custom :class:`purebpe.Pattern`
cannot be written: tiktoken keeps only the matches of its pattern, and drops the text
between them that HF's "isolated" split keeps. Reading recovers the merges: a token's merge is the two tokens
its bytes encode to with the merges of lower rank (exact for files written from a trained BPE
model). Without the sidecar the model has no special tokens and the GPT-2 pattern.

The two files are one output: the sidecar records the SHA-256 of the ranks file saved
with it (``"ranks_sha256"``, which tiktoken does not read), and a save renames the sidecar
into place first. A save interrupted between the two renames, or files mixed by hand,
leave ranks the sidecar does not match, and loading refuses the pair.
"""

from __future__ import annotations

import base64
import importlib
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

from .._atomic import MismatchedFiles, digest, file_digest, read_together, write_files
from ..errors import PureBPEError, excerpt
from ..model import BPEModel
from ..pretokenize import (
    Pattern,
    Pretokenizer,
    pattern_string,
    pretokenizer_from_json,
    pretokenizer_to_json,
)
from ..tiktoken_compat import read_ranks, recover_merges
from ..vocab import unmerged_tokens
from .bytelevel import assemble, is_id, json_bytes, literal_token, parse_json, read_json, tokens_by_bytes

FILES = ("tokenizer.tiktoken", "tokenizer.tiktoken.json")
#: The sidecar's record of the ranks file it belongs with.
_RANKS_DIGEST = "ranks_sha256"


def tiktoken_encoding(path: Union[str, "os.PathLike[str]"], name: str = "purebpe") -> Any:
    """A ``tiktoken.Encoding`` from a saved directory (or its ``tokenizer.tiktoken``).

    Built with tiktoken's own ``load_tiktoken_bpe`` and the sidecar, as the module
    docstring shows; needs the optional ``tiktoken`` package.
    """
    tiktoken = importlib.import_module("tiktoken")
    load_tiktoken_bpe = importlib.import_module("tiktoken.load").load_tiktoken_bpe
    ranks_path = Path(path) / FILES[0] if Path(path).is_dir() else Path(path)
    sidecar_path = ranks_path.with_name(ranks_path.name + ".json")
    sidecar = read_json(sidecar_path, "tiktoken sidecar")
    _check_pair(ranks_path, sidecar_path, sidecar)
    return tiktoken.Encoding(
        name=name,
        pat_str=sidecar["pat_str"],
        # The digest makes tiktoken re-read a file its cache holds an older copy of (it
        # caches what it loads by path).
        mergeable_ranks=load_tiktoken_bpe(str(ranks_path), expected_hash=sidecar[_RANKS_DIGEST]),
        special_tokens=sidecar["special_tokens"],
        explicit_n_vocab=sidecar["explicit_n_vocab"],
    )


def recognises(path: Path) -> bool:
    return path.name.endswith((".tiktoken", ".tiktoken.json"))


def save(model: BPEModel, directory: Path) -> List[Path]:
    if isinstance(model.pretokenizer, Pattern):
        raise PureBPEError(
            "cannot write the tiktoken format for a custom pre-tokenization pattern: tiktoken "
            "drops the text between matches that the pattern's 'isolated' split keeps "
            "(save as 'purebpe' or 'hf')"
        )
    by_bytes = tokens_by_bytes(model, "tiktoken")
    _check_rank_order(model, by_bytes)
    _check_no_special_prefixes(model.special_tokens)
    ranks = sorted(by_bytes.items(), key=lambda item: item[1])
    return write_rank_files(directory, ranks, model.special_ids(), model.pretokenizer, max(model.vocab) + 1)


def write_rank_files(
    directory: Path,
    ranks: List[Tuple[bytes, int]],
    special_ids: Dict[str, int],
    pretokenizer: Pretokenizer,
    explicit_n_vocab: Optional[int],
) -> List[Path]:
    """Write ``ranks`` (``(token, rank)`` in rank order) and the sidecar as one unit.

    The sidecar records the ranks' digest, so that ranks from another save are refused.
    An empty token (Whisper's multilingual file has one) is written ``=``, as Whisper does.
    """
    ranks_data = "".join(
        f"{base64.b64encode(token).decode('ascii') or '='} {rank}\n" for token, rank in ranks
    ).encode("ascii")
    sidecar: Dict[str, Any] = {
        "pretokenizer": pretokenizer_to_json(pretokenizer),
        "pat_str": pattern_string(pretokenizer),
        "special_tokens": dict(sorted(special_ids.items(), key=lambda item: item[1])),
        "explicit_n_vocab": explicit_n_vocab,
        _RANKS_DIGEST: digest(ranks_data),
    }
    ranks_path, sidecar_path = directory / FILES[0], directory / FILES[1]
    # The sidecar first: a crash before the ranks follow leaves a detectable mismatch.
    write_files([(sidecar_path, json_bytes(sidecar)), (ranks_path, ranks_data)])
    return [ranks_path, sidecar_path]


def _check_pair(ranks_path: Path, sidecar_path: Path, sidecar: Any) -> None:
    """Refuse ranks that are not the ones the sidecar was saved with."""
    recorded = sidecar.get(_RANKS_DIGEST) if isinstance(sidecar, dict) else None
    if recorded is not None and ranks_path.is_file() and recorded != file_digest(ranks_path):
        raise PureBPEError(_mismatch(ranks_path, sidecar_path))


def _mismatch(ranks_path: Path, sidecar_path: Path) -> str:
    return (
        f"{ranks_path} and {sidecar_path}: not saved together ({sidecar_path.name} records "
        f"another {ranks_path.name}: an interrupted save or files mixed by hand; save the "
        f'model again, or delete "{_RANKS_DIGEST}" to pair them anyway)'
    )


def _check_no_special_prefixes(special_tokens: Tuple[str, ...]) -> None:
    """Refuse special tokens one of which starts another (``<a>`` and ``<a><b>``).

    purebpe, like HF, takes the longest special token that matches; tiktoken takes the first
    of its alternation, whose order is that of its hash table, so either may win and no
    order written in the sidecar can fix it. Only a prefix matters: a special token that
    merely overlaps another starts elsewhere, and both take the leftmost.
    """
    ordered = sorted(special_tokens)
    for shorter, longer in zip(ordered, ordered[1:]):  # a prefix sorts just before its extensions
        if longer.startswith(shorter):
            raise PureBPEError(
                f"cannot write the tiktoken format: special token {shorter!r} starts {longer!r}, "
                "and tiktoken may match the shorter one where purebpe matches the longer one"
            )


def _check_rank_order(model: BPEModel, by_bytes: Dict[bytes, int]) -> None:
    """Refuse models whose ids, read as tiktoken ranks, would merge in another order."""
    ordinary = {tid: token for token, tid in by_bytes.items()}
    stray = unmerged_tokens(ordinary, model.merges)
    if stray:
        raise PureBPEError(
            f"cannot write the tiktoken format: token {stray[0]} ({ordinary[stray[0]]!r}) is "
            "made by no merge, and tiktoken would produce it wherever its bytes meet"
        )
    previous = -1
    for rank, (left, right) in enumerate(model.merges):
        tid = by_bytes[left + right]
        if tid <= previous:
            raise PureBPEError(
                f"cannot write the tiktoken format: merge {rank} makes id {tid}, not above the "
                f"id {previous} of the merge before it (tiktoken ranks are ids, in merge order)"
            )
        previous = tid


def load(path: Path) -> BPEModel:
    path = Path(path)
    if path.name.endswith(".json"):
        ranks_path, sidecar_path = path.with_name(path.name[: -len(".json")]), path
    else:
        ranks_path, sidecar_path = path, path.with_name(path.name + ".json")
    pretokenizer, specials = "gpt2", {}  # type: Tuple[Pretokenizer, Dict[str, int]]
    if sidecar_path.exists() and ranks_path.is_file():
        ranks, pretokenizer, specials = _read_pair(ranks_path, sidecar_path)
    else:
        ranks = read_ranks(ranks_path)
    vocab = {rank: token for token, rank in ranks.items()}
    for text, tid in specials.items():
        if tid in vocab:
            raise PureBPEError(
                f"{sidecar_path}: special token {excerpt(text)} has id {tid}, a rank in {ranks_path.name}"
            )
        vocab[tid] = literal_token(text, sidecar_path)
    try:
        merges = recover_merges(ranks)
        return assemble(vocab, merges, list(specials.values()), pretokenizer)
    except PureBPEError as exc:
        raise PureBPEError(f"{ranks_path}: {exc}") from None


def _read_pair(ranks_path: Path, sidecar_path: Path) -> Tuple[Dict[bytes, int], Pretokenizer, Dict[str, int]]:
    """The ranks, pre-tokenizer and special tokens of a ranks file and its sidecar.

    Each file is read once and the sidecar's digest is checked on the ranks parsed, so a
    save running beside this load can only make it read again (:func:`read_together`).
    """

    def parse(contents: List[bytes]) -> Tuple[Dict[bytes, int], Pretokenizer, Dict[str, int]]:
        sidecar_data, ranks_data = contents
        document = parse_json(sidecar_data, sidecar_path, "tiktoken sidecar")
        if not isinstance(document, dict):
            raise PureBPEError(f"{sidecar_path}: malformed tiktoken sidecar (not a JSON object)")
        recorded = document.get(_RANKS_DIGEST)
        if recorded is not None and recorded != digest(ranks_data):
            raise MismatchedFiles(_mismatch(ranks_path, sidecar_path))
        specials = document.get("special_tokens", {})
        if not isinstance(specials, dict) or not all(is_id(tid) for tid in specials.values()):
            raise PureBPEError(
                f"{sidecar_path}: malformed tiktoken sidecar (special_tokens is not {{text: id}})"
            )
        pretokenizer = pretokenizer_from_json(document.get("pretokenizer", "gpt2"), str(sidecar_path))
        return read_ranks(ranks_path, ranks_data), pretokenizer, specials

    return read_together([sidecar_path, ranks_path], parse)
