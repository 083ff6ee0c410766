"""Read a ``tokenizer.json`` into an :class:`~purebpe.hf.pipeline.HFTokenizer`.

A file is recognised by its content, whatever its name (:func:`is_hf_document`): a JSON
object with a ``"model"`` object and HF's other top-level keys. Each part is built by its
package's ``from_json`` (:mod:`purebpe.normalizers`, :mod:`purebpe.pre_tokenizers`,
:mod:`purebpe.models`, :mod:`purebpe.processors`, :mod:`purebpe.decoders`); anything
unsupported (a ``WordPiece`` or ``Unigram`` model, an unknown component, truncation or
padding) is refused in one line naming the file and the component.

Untrusted files: ids must stay below ``2 x tokens + 2**20`` (tables are indexed by id),
a vocab holds at most :data:`purebpe.models.bpe.MAX_TOKENS` entries, an id belongs to one
token; the regexes a file brings run in the pre-tokenizers, which bound their own work.
"""

from __future__ import annotations

import copyreg
import json
import os
from pathlib import Path
from typing import Any, List, Mapping, Union

from .. import decoders, models, normalizers, pre_tokenizers, processors
from ..errors import MALFORMED, PureBPEError, naming_errors
from ..normalizers.pattern import patterns_from
from ..vocab import check_dense_ids
from .added import AddedToken, AddedVocabulary
from .fast import fast_engine
from .pipeline import HFTokenizer

__all__ = ["from_document", "is_hf_document", "load", "loads"]

_TOP_LEVEL = {
    "version",
    "truncation",
    "padding",
    "added_tokens",
    "normalizer",
    "pre_tokenizer",
    "post_processor",
    "decoder",
    "model",
}


def is_hf_document(document: Any) -> bool:
    """Whether parsed JSON is an HF ``tokenizer.json`` (a ``"model"`` object, HF's keys only).

    >>> is_hf_document({"version": "1.0", "model": {"type": "BPE"}}), is_hf_document({"model": 1})
    (True, False)
    """
    return (
        isinstance(document, dict) and isinstance(document.get("model"), dict) and set(document) <= _TOP_LEVEL
    )


def looks_like_hf_file(path: Union[str, "os.PathLike[str]"]) -> bool:
    """Whether the file at ``path`` starts like a ``tokenizer.json`` (cheap: its first bytes)."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return False
    text = head.lstrip()
    return text.startswith(b"{") and any(
        key in head
        for key in (b'"model"', b'"added_tokens"', b'"normalizer"', b'"pre_tokenizer"', b'"truncation"')
    )


def load(path: Union[str, "os.PathLike[str]"]) -> HFTokenizer:
    """The pipeline of the ``tokenizer.json`` at ``path`` (any file name)."""
    path = Path(path)
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PureBPEError(f"{path}: not an HF tokenizer.json (invalid JSON: {exc})") from None
    except OSError as exc:
        raise PureBPEError(f"{path}: cannot read it ({exc.strerror})") from None
    return from_document(document, str(path))


def loads(text: str, name: str = "<tokenizer.json string>") -> HFTokenizer:
    """The pipeline of a ``tokenizer.json`` given as a string (HF's ``from_str``)."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise PureBPEError(f"{name}: not an HF tokenizer.json (invalid JSON: {exc})") from None
    return from_document(document, name)


def from_document(document: Any, name: str = "tokenizer.json") -> HFTokenizer:
    """The pipeline of a parsed ``tokenizer.json``; errors name ``name``."""
    # IndexError and RecursionError too: a pipeline's parts index lists and nest.
    malformed = MALFORMED + (IndexError, RecursionError)
    with patterns_from(name):  # a regex that gives up while encoding names the file
        return naming_errors(name, "HF tokenizer.json", lambda: _build(document, name), malformed)


def _pickled(tok: HFTokenizer) -> Any:
    """How an :class:`HFTokenizer` pickles (for a spawned worker, or ``datasets``' ``map``):
    as the document it was built from, built again when unpickled. Its parts hold compiled
    patterns and closures, and its engine tables that only the document rebuilds exactly."""
    if tok.document is None:
        return object.__reduce_ex__(tok, 2)  # built by hand: its attributes as they are
    return from_document, (tok.document, tok.name)


copyreg.pickle(HFTokenizer, _pickled)


def _part(document: Mapping[str, Any], key: str, build: Any) -> Any:
    obj = document.get(key)
    if obj is None:
        return None
    if not isinstance(obj, dict):
        raise PureBPEError(f"{key} is {obj!r}, not an object or null")
    return build(obj)


def _build(document: Any, name: str) -> HFTokenizer:
    if not isinstance(document, dict) or not isinstance(document.get("model"), dict):
        raise PureBPEError('not an HF tokenizer.json (no "model" object)')
    unknown = sorted(set(document) - _TOP_LEVEL)
    if unknown:
        raise PureBPEError(f"top-level key {unknown[0]!r} is not part of HF's tokenizer.json")
    for key in ("truncation", "padding"):
        if document.get(key) is not None:
            raise PureBPEError(f"{key} is set; purebpe encodes without {key} (set it to null)")
    model = models.from_json(document["model"])
    raw_added = document.get("added_tokens") or []
    if not isinstance(raw_added, list):
        raise PureBPEError("added_tokens is not a list")
    added_tokens: List[AddedToken] = [AddedToken.from_json(obj) for obj in raw_added]
    check_dense_ids(
        list(model.id_to_token) + [t.id for t in added_tokens], len(model.vocab) + len(added_tokens)
    )
    normalizer = _part(document, "normalizer", normalizers.from_json)
    pre_tokenizer = _part(document, "pre_tokenizer", pre_tokenizers.from_json)
    post_processor = _part(document, "post_processor", processors.from_json)
    decoder = _part(document, "decoder", decoders.from_json)
    added = AddedVocabulary(added_tokens, None if normalizer is None else normalizer.normalize_str)
    fast = fast_engine(model, document.get("pre_tokenizer"), pre_tokenizer)
    return HFTokenizer(
        model,
        added,
        normalizer,
        pre_tokenizer,
        post_processor,
        decoder,
        fast=fast,
        document=document,
        name=name,
    )
