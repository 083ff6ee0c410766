"""GPT-2's ``vocab.json`` + ``merges.txt``: the files OpenAI published with GPT-2.

``vocab.json`` maps each token, spelled in GPT-2's byte-to-unicode alphabet
(:mod:`purebpe.bytemap`), to its id; ``merges.txt`` has a ``#version: 0.2`` header, then
one merge per line, ``left right``, in rank order. HF ``tokenizers``
(``models.BPE.from_file``), ``transformers.GPT2Tokenizer`` and Stanford CS336's tokenizer
read them.

Ids come from ``vocab.json`` whatever their layout (in GPT-2's own files id 0 is ``!``).
The special tokens are the vocab entries that are neither a single byte nor made by a
merge (``<|endoftext|>`` in GPT-2's files), or entries not spelled in the byte alphabet.
A model trained with ``pretokenizer="none"`` says so in the header line
(``#version: 0.2 pretokenizer=none``), which other readers skip.

The two files are one output: ``merges.txt``'s header records the SHA-256 of the
``vocab.json`` saved with it (``vocab-sha256=...``), and a save renames ``merges.txt``
into place first. A save interrupted between the two renames, or files mixed by hand,
leave a ``vocab.json`` the header does not match, and loading refuses the pair (files
without the field, such as GPT-2's own, are read as they are).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple, Union

from .._atomic import MismatchedFiles, digest, read_together, write_files
from ..bytemap import decode_token, encode_token
from ..errors import PureBPEError, excerpt
from ..model import BPEModel
from ..pretokenize import Pattern, Pretokenizer, pretokenizer_from_json
from ..vocab import special_text, unmerged_tokens
from .bytelevel import (
    MERGES_HEADER,
    assemble,
    json_bytes,
    literal_token,
    parse_json,
    tokens_by_bytes,
)

PathLike = Union[str, "os.PathLike[str]"]

FILES = ("vocab.json", "merges.txt")
_PRETOKENIZER_TAG = "pretokenizer="
_VOCAB_DIGEST_TAG = "vocab-sha256="


def recognises(path: Path) -> bool:
    return path.name.endswith(FILES)


def _pair_paths(path: Path) -> Tuple[Path, Path]:
    """``(vocab.json, merges.txt)`` for either one (``gpt2-vocab.json`` pairs with ``gpt2-merges.txt``)."""
    name = path.name
    if name.endswith(FILES[1]):
        return path.with_name(name[: -len(FILES[1])] + FILES[0]), path
    if name.endswith(FILES[0]):
        return path, path.with_name(name[: -len(FILES[0])] + FILES[1])
    return path / FILES[0], path / FILES[1]


def save(model: BPEModel, directory: Path) -> List[Path]:
    if isinstance(model.pretokenizer, Pattern):
        raise PureBPEError(
            "cannot write the gpt2 format for a custom pre-tokenization pattern: merges.txt "
            "records only a pattern's name (save as 'purebpe' or 'hf')"
        )
    by_bytes = tokens_by_bytes(model, "gpt2")
    vocab = {encode_token(token): tid for token, tid in by_bytes.items()}
    for text, tid in model.special_ids().items():
        vocab[encode_token(text.encode("utf-8"))] = tid
    ordered = dict(sorted(vocab.items(), key=lambda item: item[1]))
    header = MERGES_HEADER
    if model.pretokenizer != "gpt2":
        header += f" {_PRETOKENIZER_TAG}{model.pretokenizer}"  # a name: no spaces
    lines = [header] + [f"{encode_token(left)} {encode_token(right)}" for left, right in model.merges]
    vocab_data = json_bytes(ordered)
    lines[0] += f" {_VOCAB_DIGEST_TAG}{digest(vocab_data)}"
    vocab_path, merges_path = directory / FILES[0], directory / FILES[1]
    # merges.txt first: a crash before vocab.json follows leaves a detectable mismatch.
    write_files([(merges_path, ("\n".join(lines) + "\n").encode("utf-8")), (vocab_path, vocab_data)])
    return [vocab_path, merges_path]


def load(path: Path) -> BPEModel:
    vocab_path, merges_path = _pair_paths(Path(path))
    return read_files(vocab_path, merges_path)


def read_files(vocab_path: PathLike, merges_path: PathLike) -> BPEModel:
    """The model in a ``vocab.json`` and a ``merges.txt``; errors name the bad file."""
    vocab, merges, special_ids, pretokenizer = _read_pair(Path(vocab_path), Path(merges_path))
    try:
        return assemble(vocab, merges, special_ids, pretokenizer)
    except PureBPEError as exc:
        raise PureBPEError(f"{vocab_path} + {Path(merges_path).name}: {exc}") from None


def read_vocab_and_merges(
    vocab_path: PathLike, merges_path: PathLike
) -> Tuple[Dict[int, bytes], List[Tuple[bytes, bytes]], List[str], Pretokenizer]:
    """``(vocab, merges, special tokens, pretokenizer)`` as the files hold them, unchecked
    as a model: a vocab may lack bytes (Stanford CS336's toy vocab), as a Tokenizer's may."""
    vocab, merges, special_ids, pretokenizer = _read_pair(Path(vocab_path), Path(merges_path))
    try:
        specials = [special_text(vocab[tid], tid) for tid in special_ids]
    except PureBPEError as exc:
        raise PureBPEError(f"{vocab_path}: {exc}") from None
    return vocab, merges, specials, pretokenizer


def _read_pair(
    vocab_file: Path, merges_file: Path
) -> Tuple[Dict[int, bytes], List[Tuple[bytes, bytes]], List[int], Pretokenizer]:
    """The files' vocab, merges, special token ids and pretokenizer.

    Each file is read once and the digest is checked on the bytes parsed, so a save
    running beside this load can only make it read again (:func:`read_together`).
    """
    for needed in (vocab_file, merges_file):
        if not needed.is_file():
            raise PureBPEError(f"{needed}: no such file (GPT-2 format needs vocab.json and merges.txt)")

    def parse(
        contents: List[bytes],
    ) -> Tuple[Dict[int, bytes], List[Tuple[bytes, bytes]], List[int], Pretokenizer]:
        vocab_data, merges_data = contents
        vocab, literal_ids = _read_vocab(vocab_file, vocab_data)
        merges, pretokenizer, vocab_digest = _read_merges(merges_file, merges_data)
        if vocab_digest is not None and vocab_digest != digest(vocab_data):
            raise MismatchedFiles(
                f"{vocab_file} and {merges_file}: not saved together ({merges_file.name} records "
                f"another {vocab_file.name}: an interrupted save or files mixed by hand; save the "
                f"model again, or delete the {_VOCAB_DIGEST_TAG} field to pair them anyway)"
            )
        return vocab, merges, sorted(set(unmerged_tokens(vocab, merges)) | literal_ids), pretokenizer

    return read_together([vocab_file, merges_file], parse)


def _read_vocab(path: Path, data: bytes) -> Tuple[Dict[int, bytes], Set[int]]:
    """``{id: bytes}`` and the ids of entries not in the byte alphabet (added tokens)."""
    document = parse_json(data, path, "GPT-2 vocab.json")
    if not isinstance(document, dict):
        raise PureBPEError(f"{path}: not a GPT-2 vocab.json (expected a JSON object of token: id)")
    vocab: Dict[int, bytes] = {}
    literal_ids: Set[int] = set()
    for key, tid in document.items():
        if not isinstance(tid, int) or isinstance(tid, bool) or tid < 0:
            raise PureBPEError(f"{path}: token {excerpt(key)} has id {excerpt(tid)}, not an int >= 0")
        if tid in vocab:
            raise PureBPEError(f"{path}: id {tid} is given to two tokens")
        try:
            vocab[tid] = decode_token(key)
        except PureBPEError:
            vocab[tid] = literal_token(key, path)  # written literally, as HF writes added tokens
            literal_ids.add(tid)
    return vocab, literal_ids


def _read_merges(path: Path, data: bytes) -> Tuple[List[Tuple[bytes, bytes]], Pretokenizer, Optional[str]]:
    """The merges, the pre-tokenizer and the recorded digest of vocab.json (if any)."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PureBPEError(f"{path}: not a GPT-2 merges.txt (not UTF-8: {exc.reason})") from None
    pretokenizer = "gpt2"
    vocab_digest: Optional[str] = None
    merges: List[Tuple[bytes, bytes]] = []
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if number == 1 and line.startswith("#version"):
            for field in line.split()[2:]:
                if field.startswith(_PRETOKENIZER_TAG):
                    pretokenizer = field[len(_PRETOKENIZER_TAG) :]
                elif field.startswith(_VOCAB_DIGEST_TAG):
                    vocab_digest = field[len(_VOCAB_DIGEST_TAG) :]
            continue
        if not line:
            continue
        parts = line.split(" ")
        if len(parts) != 2 or not parts[0] or not parts[1]:
            raise PureBPEError(f"{path}, line {number}: expected 'left right', got {excerpt(line)}")
        try:
            merges.append((decode_token(parts[0]), decode_token(parts[1])))
        except PureBPEError as exc:
            raise PureBPEError(f"{path}, line {number}: {exc}") from None
    return merges, pretokenizer_from_json(pretokenizer, f"{path}, line 1"), vocab_digest
