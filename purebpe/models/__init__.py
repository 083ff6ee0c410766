"""Tokenization models of Hugging Face ``tokenizers`` pipelines: today the ``BPE`` model.

:func:`from_json` builds a model from a ``tokenizer.json``'s ``"model"`` object and
refuses every other kind (``WordPiece``, ``Unigram``, ``WordLevel``) in one line.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..errors import PureBPEError
from .bpe import BPE

__all__ = ["BPE", "from_json"]


def from_json(obj: Mapping[str, Any]) -> BPE:
    """The model of a ``tokenizer.json``'s ``"model"`` object.

    >>> from_json({"type": "Unigram", "vocab": []})
    Traceback (most recent call last):
    ...
    purebpe.errors.PureBPEError: model "Unigram" is not supported (purebpe reads BPE models)
    """
    if not isinstance(obj, Mapping):
        raise PureBPEError(f"model is {obj!r}, not an object")
    kind = obj.get("type", "BPE")  # files of tokenizers < 0.9 leave the type out
    if kind != "BPE":
        raise PureBPEError(f'model "{kind}" is not supported (purebpe reads BPE models)')
    return BPE.from_json(obj)
