"""A drop-in for the inference side of Hugging Face ``tokenizers``: change one import.

>>> from purebpe.compat import tokenizers
>>> tok = tokenizers.Tokenizer.from_str(
...     '{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}}'
... )
>>> tok.encode("abba").ids
[2, 1, 0]

What inference scripts call, with ``tokenizers``' defaults (``add_special_tokens=True``
when encoding, ``skip_special_tokens=True`` when decoding): ``Tokenizer.from_file``,
``from_str``, ``encode`` (an :class:`Encoding` with ``ids``, ``tokens``, ``offsets``,
``attention_mask``, ``type_ids``, ``special_tokens_mask``), ``encode_batch``, ``decode``,
``decode_batch``, ``get_vocab``, ``get_vocab_size``, ``token_to_id``, ``id_to_token``,
``add_tokens``, ``add_special_tokens`` (with :class:`AddedToken`), ``to_str`` and
``save``. Training, truncation and padding are not offered: they raise one clear line.
The pipeline itself is :class:`purebpe.hf.HFTokenizer`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple, Union

from .._atomic import write_text
from ..errors import PureBPEError
from ..hf import HFTokenizer, load, loads
from ..hf.added import AddedToken as _Added
from ..processors import Encoding as _Encoding

__all__ = ["AddedToken", "Encoding", "Tokenizer"]

InputSequence = Union[str, Tuple[str, str], List[str]]


class AddedToken:
    """``tokenizers.AddedToken``: a token to add, and how it is matched in text.

    ``normalized`` defaults to ``not special`` as in ``tokenizers``.

    >>> AddedToken("<x>", special=True).normalized
    False
    """

    def __init__(
        self,
        content: str,
        single_word: bool = False,
        lstrip: bool = False,
        rstrip: bool = False,
        normalized: Optional[bool] = None,
        special: bool = False,
    ) -> None:
        if not isinstance(content, str):
            raise TypeError(f"AddedToken content must be a str, not {type(content).__name__}")
        self.content = content
        self.single_word = single_word
        self.lstrip = lstrip
        self.rstrip = rstrip
        self._normalized = normalized
        self.special = special

    @property
    def normalized(self) -> bool:
        return (not self.special) if self._normalized is None else self._normalized

    def __str__(self) -> str:
        return self.content

    def __repr__(self) -> str:
        return (
            f'AddedToken("{self.content}", rstrip={self.rstrip}, lstrip={self.lstrip}, '
            f"single_word={self.single_word}, normalized={self.normalized}, special={self.special})"
        )


class Encoding:
    """``tokenizers.Encoding``: the result of :meth:`Tokenizer.encode`."""

    def __init__(self, encoding: _Encoding) -> None:
        self._encoding = encoding

    @property
    def ids(self) -> List[int]:
        return self._encoding.ids

    @property
    def tokens(self) -> List[str]:
        return self._encoding.tokens

    @property
    def offsets(self) -> List[Tuple[int, int]]:
        return self._encoding.offsets

    @property
    def type_ids(self) -> List[int]:
        return self._encoding.type_ids

    @property
    def attention_mask(self) -> List[int]:
        return self._encoding.attention_mask

    @property
    def special_tokens_mask(self) -> List[int]:
        return self._encoding.special_tokens_mask

    @property
    def overflowing(self) -> List["Encoding"]:
        return []  # no truncation, so nothing overflows

    def __len__(self) -> int:
        return len(self._encoding.ids)

    def __repr__(self) -> str:
        return (
            f"Encoding(num_tokens={len(self)}, attributes=[ids, type_ids, tokens, offsets, "
            "attention_mask, special_tokens_mask, overflowing])"
        )


def _added(token: Union[str, AddedToken], special: bool) -> _Added:
    if isinstance(token, str):
        return _Added(-1, token, special=special, normalized=not special)
    if isinstance(token, AddedToken):
        is_special = special or token.special
        normalized = token._normalized
        return _Added(
            -1,
            token.content,
            special=is_special,
            normalized=(not is_special) if normalized is None else normalized,
            lstrip=token.lstrip,
            rstrip=token.rstrip,
            single_word=token.single_word,
        )
    raise TypeError(f"tokens must be str or AddedToken, not {type(token).__name__}")


class Tokenizer:
    """``tokenizers.Tokenizer`` for inference (see the module docstring)."""

    def __init__(self, pipeline: HFTokenizer) -> None:
        if not isinstance(pipeline, HFTokenizer):
            raise TypeError(
                "purebpe.compat.tokenizers.Tokenizer is built with Tokenizer.from_file or "
                "Tokenizer.from_str (building pipelines from parts is not supported)"
            )
        self._pipeline = pipeline

    @classmethod
    def from_file(cls, path: Union[str, "os.PathLike[str]"]) -> "Tokenizer":
        return cls(load(path))

    @classmethod
    def from_str(cls, json_text: str) -> "Tokenizer":
        return cls(loads(json_text))

    @classmethod
    def from_buffer(cls, buffer: bytes) -> "Tokenizer":
        return cls(loads(buffer.decode("utf-8"), "<tokenizer.json buffer>"))

    @property
    def pipeline(self) -> HFTokenizer:
        """The purebpe pipeline behind this facade."""
        return self._pipeline

    # -- encoding -------------------------------------------------------------------

    def encode(
        self,
        sequence: InputSequence,
        pair: Optional[InputSequence] = None,
        is_pretokenized: bool = False,
        add_special_tokens: bool = True,
    ) -> Encoding:
        if is_pretokenized:
            raise PureBPEError("is_pretokenized=True is not supported by purebpe's tokenizers facade")
        if not isinstance(sequence, str) or (pair is not None and not isinstance(pair, str)):
            raise TypeError("encode takes a str (and optionally a str pair)")
        return Encoding(self._pipeline.encode_with_offsets(sequence, pair, add_special_tokens))

    def encode_batch(
        self, input: Sequence[InputSequence], is_pretokenized: bool = False, add_special_tokens: bool = True
    ) -> List[Encoding]:
        out: List[Encoding] = []
        for item in input:
            if isinstance(item, (tuple, list)) and len(item) == 2:
                out.append(self.encode(item[0], item[1], is_pretokenized, add_special_tokens))
            else:
                out.append(self.encode(item, None, is_pretokenized, add_special_tokens))
        return out

    def encode_batch_fast(
        self, input: Sequence[InputSequence], is_pretokenized: bool = False, add_special_tokens: bool = True
    ) -> List[Encoding]:
        return self.encode_batch(input, is_pretokenized, add_special_tokens)

    # -- decoding -------------------------------------------------------------------

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = True) -> str:
        return self._pipeline.decode(ids, skip_special_tokens)

    def decode_batch(self, sequences: Sequence[Sequence[int]], skip_special_tokens: bool = True) -> List[str]:
        return [self._pipeline.decode(ids, skip_special_tokens) for ids in sequences]

    # -- vocabulary -----------------------------------------------------------------

    def get_vocab(self, with_added_tokens: bool = True) -> Dict[str, int]:
        return self._pipeline.get_vocab(with_added_tokens)

    def get_vocab_size(self, with_added_tokens: bool = True) -> int:
        return len(self._pipeline.get_vocab(with_added_tokens))

    def token_to_id(self, token: str) -> Optional[int]:
        return self._pipeline.token_to_id(token)

    def id_to_token(self, id: int) -> Optional[str]:
        return self._pipeline.id_to_token(id)

    def get_added_tokens_decoder(self) -> Dict[int, AddedToken]:
        return {
            tid: AddedToken(t.content, t.single_word, t.lstrip, t.rstrip, t.normalized, t.special)
            for tid, t in sorted(self._pipeline.added.by_id.items())
        }

    def add_tokens(self, tokens: Iterable[Union[str, AddedToken]]) -> int:
        return self._pipeline.add_tokens([_added(t, False) for t in tokens])

    def add_special_tokens(self, tokens: Iterable[Union[str, AddedToken]]) -> int:
        return self._pipeline.add_tokens([_added(t, True) for t in tokens])

    # -- what purebpe does not do ----------------------------------------------------

    @property
    def truncation(self) -> None:
        return None

    @property
    def padding(self) -> None:
        return None

    def no_truncation(self) -> None:
        """Nothing to turn off: purebpe never truncates."""

    def no_padding(self) -> None:
        """Nothing to turn off: purebpe never pads."""

    def enable_truncation(self, *args: Any, **kwargs: Any) -> None:
        raise PureBPEError("truncation is not supported by purebpe's tokenizers facade")

    def enable_padding(self, *args: Any, **kwargs: Any) -> None:
        raise PureBPEError("padding is not supported by purebpe's tokenizers facade")

    def train(self, *args: Any, **kwargs: Any) -> None:
        raise PureBPEError("train with purebpe.train (the tokenizers facade is for inference)")

    train_from_iterator = train

    # -- saving ---------------------------------------------------------------------

    def to_str(self, pretty: bool = False) -> str:
        document = self._pipeline.document
        if document is None:
            raise PureBPEError("this tokenizer has no tokenizer.json document")
        return json.dumps(document, ensure_ascii=False, indent=2 if pretty else None)

    def save(self, path: Union[str, "os.PathLike[str]"], pretty: bool = True) -> None:
        write_text(Path(path), self.to_str(pretty) + ("\n" if pretty else ""))

    def __repr__(self) -> str:
        return f"Tokenizer({self._pipeline!r})"
