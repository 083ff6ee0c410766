"""Hugging Face ``tokenizers``' BPE trainer behind the CS336 signature, for the conformance suite.

    purebpe conformance bench.hf_trainer_adapter:train_bpe
    purebpe conformance bench.hf_trainer_adapter:train_bpe_split_specials

``train_bpe`` is the plain way to train a byte-level BPE with ``tokenizers``: a ``BPE``
model, the ``ByteLevel`` pre-tokenizer (the GPT-2 pattern, no prefix space), and
``BpeTrainer(vocab_size, special_tokens, initial_alphabet=ByteLevel.alphabet())`` fed
the file. ``train_bpe_split_specials`` first cuts the text on the special tokens (as
CS336 and purebpe do) and feeds the pieces, which separates ``tokenizers``' handling of
special tokens in the training text from its other differences. Both convert the result
to ``(vocab, merges)`` of bytes through GPT-2's byte alphabet
(:func:`purebpe.bytemap.decode_token`); special tokens are kept as their UTF-8 bytes.

CPython only (``tokenizers`` has no PyPy wheels). What the suite finds, and why, is in
``docs/conformance.md``.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from purebpe.bytemap import decode_token
from purebpe.specials import special_pattern, split_on_specials

PathLike = Union[str, "os.PathLike[str]"]
Vocab = Dict[int, bytes]
Merges = List[Tuple[bytes, bytes]]


def hf_trainer(
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    *,
    split: Optional[str] = None,
    byte_level: bool = True,
) -> Tuple[Any, Any]:
    """A ``tokenizers`` ``BPE`` tokenizer and its ``BpeTrainer`` (the full byte alphabet, no
    progress bar), set up the byte-level way: the ``ByteLevel`` pre-tokenizer (GPT-2's
    pattern, no prefix space); with ``split``, ``Split(Regex(split), "isolated")`` first
    and ``ByteLevel`` without its own pattern; with ``byte_level=False`` no pre-tokenizer at
    all (each text is one word, already in GPT-2's byte alphabet). Every benchmark and
    adapter trains ``tokenizers`` through this."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    tokenizer = Tokenizer(models.BPE())
    if split is not None:
        tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(split), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    elif byte_level:
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(special_tokens),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    return tokenizer, trainer


def hf_merges(tokenizer: Any) -> Merges:
    """A trained ``tokenizers`` BPE model's merges, as bytes."""
    merges: Merges = []
    for merge in json.loads(tokenizer.to_str())["model"]["merges"]:
        left, right = merge.split(" ") if isinstance(merge, str) else merge  # "a b" before 0.20
        merges.append((decode_token(left), decode_token(right)))
    return merges


def _as_bytes(tokenizer: Any, special_tokens: Sequence[str]) -> Tuple[Vocab, Merges]:
    """The trained model's vocab and merges as bytes (special tokens as their UTF-8)."""
    specials = set(special_tokens)

    def to_bytes(token: str) -> bytes:
        return token.encode("utf-8") if token in specials else decode_token(token)

    vocab = {tid: to_bytes(token) for token, tid in tokenizer.get_vocab(with_added_tokens=True).items()}
    return vocab, hf_merges(tokenizer)


def train_bpe(input_path: PathLike, vocab_size: int, special_tokens: Sequence[str]) -> Tuple[Vocab, Merges]:
    """Train with ``tokenizers`` on the file as it is (its usual use)."""
    tokenizer, trainer = hf_trainer(vocab_size, special_tokens)
    tokenizer.train([os.fspath(input_path)], trainer)
    return _as_bytes(tokenizer, special_tokens)


def train_bpe_split_specials(
    input_path: PathLike, vocab_size: int, special_tokens: Sequence[str]
) -> Tuple[Vocab, Merges]:
    """Train with ``tokenizers`` on the pieces of the text between special tokens."""
    tokenizer, trainer = hf_trainer(vocab_size, special_tokens)
    with open(input_path, "rb") as stream:
        text = stream.read().decode("utf-8")
    pieces: Iterable[str] = split_on_specials(text, special_pattern(special_tokens))
    tokenizer.train_from_iterator(pieces, trainer)
    return _as_bytes(tokenizer, special_tokens)
