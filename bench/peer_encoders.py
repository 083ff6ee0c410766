"""Encoders of other libraries: behind ``check_tokenizer``'s factory signature, and GPT-2's.

``factory(vocab, merges, special_tokens)`` returns an object with ``encode(text)``,
``decode(ids)`` and ``encode_iterable(texts)``; each adapter builds the library's own
encoder from the vocab and merges (GPT-2 pattern). Libraries without ``encode_iterable``
get one that encodes the joined text (correct, not streaming). :func:`gpt2_tiktoken` and
:func:`gpt2_hf` build the peers' GPT-2 tokenizers offline from its ``vocab.json`` and
``merges.txt``, for the benchmarks. CPython only.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, Iterator, List, Tuple, Union

from purebpe.bytemap import decode_token, encode_token
from purebpe.pretokenize import GPT2_PATTERN

EOT = "<|endoftext|>"
PathLike = Union[str, "os.PathLike[str]"]


def gpt2_tiktoken(vocab_json: PathLike) -> Any:
    """``tiktoken.Encoding`` of GPT-2 from its ``vocab.json``: rank = id, tiktoken's ``r50k``
    pattern, ``<|endoftext|>`` = 50256."""
    import tiktoken

    with open(vocab_json, encoding="utf-8") as stream:
        ranks = {decode_token(key): tid for key, tid in json.load(stream).items() if key != EOT}
    return tiktoken.Encoding(
        "gpt2-files", pat_str=GPT2_PATTERN, mergeable_ranks=ranks, special_tokens={EOT: 50256}
    )


def gpt2_hf(vocab_json: PathLike, merges_txt: PathLike) -> Any:
    """HF ``tokenizers``' GPT-2 from its files: ``models.BPE.from_file``, the ``ByteLevel``
    pre-tokenizer (no prefix space) and decoder, ``<|endoftext|>`` a special token."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    tokenizer = Tokenizer(models.BPE.from_file(os.fspath(vocab_json), os.fspath(merges_txt)))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens([EOT])
    return tokenizer


class _Joined:
    """``encode_iterable`` as ``encode`` of the joined text."""

    def encode(self, text: str) -> List[int]:
        raise NotImplementedError

    def encode_iterable(self, texts: Iterable[str]) -> Iterator[int]:
        yield from self.encode("".join(texts))


class TiktokenEncoder(_Joined):
    """``tiktoken.Encoding`` from the vocab as ranks (purebpe's ids are merge ranks)."""

    def __init__(
        self, vocab: Dict[int, bytes], merges: List[Tuple[bytes, bytes]], special_tokens: List[str]
    ) -> None:
        import tiktoken

        first_special = len(vocab) - len(special_tokens)  # purebpe's layout: specials last
        ranks = {token: tid for tid, token in vocab.items() if tid < first_special}
        self.encoding = tiktoken.Encoding(
            "conformance",
            pat_str=GPT2_PATTERN,
            mergeable_ranks=ranks,
            special_tokens={s: first_special + i for i, s in enumerate(special_tokens)},
        )

    def encode(self, text: str) -> List[int]:
        return list(self.encoding.encode(text, allowed_special="all"))

    def decode(self, ids: List[int]) -> str:
        return str(self.encoding.decode(ids))


class HFEncoder(_Joined):
    """A ``tokenizers`` ``BPE`` model with the ``ByteLevel`` pre-tokenizer and decoder,
    built from the vocab and merges; special tokens added as special tokens."""

    def __init__(
        self, vocab: Dict[int, bytes], merges: List[Tuple[bytes, bytes]], special_tokens: List[str]
    ) -> None:
        from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

        first_special = len(vocab) - len(special_tokens)  # purebpe's layout: specials last
        # A special token is its own string in the vocab, so that it keeps purebpe's id.
        strings = {encode_token(token): tid for tid, token in vocab.items() if tid < first_special}
        strings.update((s, first_special + i) for i, s in enumerate(special_tokens))
        model = models.BPE(strings, [(encode_token(a), encode_token(b)) for a, b in merges])
        self.tokenizer = Tokenizer(model)
        self.tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        self.tokenizer.decoder = decoders.ByteLevel()
        self.tokenizer.add_special_tokens([AddedToken(s, normalized=False) for s in special_tokens])

    def encode(self, text: str) -> List[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def decode(self, ids: List[int]) -> str:
        return str(self.tokenizer.decode(ids, skip_special_tokens=False))
