"""The encoder bug zoo: purebpe's own HF pipeline with one realistic bug each.

Each mutant is the reference pipeline of a ``tokenizer.json`` with one piece changed --
the file's document edited before loading (a flag dropped, a regex changed, the merges
reordered), or a loaded part swapped -- so that it carries a bug real encoders of open
models' tokenizers have had. :func:`check_encoder <purebpe.testing.checks.check_encoder>`
must catch every one (``tests/test_encoder_conformance.py`` asserts it, each on a small
file where the bug shows, and that the counterexample is a few characters)::

    from purebpe.testing import check_encoder
    from purebpe.testing.encoder_zoo import mutant_encoder

    check_encoder(mutant_encoder("ignore_merges ignored", "llama3/tokenizer.json"),
                  "llama3/tokenizer.json")   # AssertionError, a text of a few characters

:data:`MUTANTS` names them; each one's ``description`` says which files can show it.
"""

from __future__ import annotations

import copy
import json
import os
from typing import Any, Callable, Dict, List, Optional, Union

import attr

from ..errors import PureBPEError
from ..hf.added import AddedVocabulary
from ..hf.loader import from_document
from ..hf.pipeline import HFTokenizer
from ..models.bpe import BPE
from ..pretokenize import PATTERNS

__all__ = ["MUTANTS", "Mutant", "mutant_encoder", "mutant_tokenizer"]

Document = Dict[str, Any]


@attr.s(frozen=True, slots=True, auto_attribs=True)
class Mutant:
    """One bug: how the document is edited before loading, or the loaded pipeline after."""

    description: str
    edit_document: Optional[Callable[[Document], None]] = None
    edit_pipeline: Optional[Callable[[HFTokenizer], None]] = None


def _merges_by_token_id(document: Document) -> None:
    """The merges reordered by the id of the token each makes: priority by id, not rank."""
    model = document["model"]
    vocab = model["vocab"]
    merges = BPE.from_json(model).merges
    model["merges"] = [list(pair) for pair in sorted(merges, key=lambda pair: vocab["".join(pair)])]


def _model_flag(flag: str) -> Callable[[Document], None]:
    def edit(document: Document) -> None:
        document["model"][flag] = False

    return edit


def _added_flags(**flags: bool) -> Callable[[Document], None]:
    def edit(document: Document) -> None:
        for token in document.get("added_tokens") or []:
            token.update(flags)

    return edit


def _no_normalizer(document: Document) -> None:
    document["normalizer"] = None


def _split_regexes(document: Document) -> List[Dict[str, Any]]:
    """The ``Split`` pre-tokenizers' regex objects of the document."""
    found: List[Dict[str, Any]] = []
    stack = [document.get("pre_tokenizer")]
    while stack:
        part = stack.pop()
        if isinstance(part, dict):
            if part.get("type") == "Split" and isinstance(part.get("pattern"), dict):
                if "Regex" in part["pattern"]:
                    found.append(part["pattern"])
            stack += part.get("pretokenizers") or []
    if not found:
        raise PureBPEError("this mutant needs a tokenizer.json with a Split regex pre-tokenizer")
    return found


def _cl100k_regex(document: Document) -> None:
    """Llama 3's Split regex swapped for tiktoken's cl100k string, its near twin: they part
    on a newline followed by spaces (``"a\\n "``)."""
    for pattern in _split_regexes(document):
        pattern["Regex"] = PATTERNS["cl100k"]


def _digit_groups(size: int) -> Callable[[Document], None]:
    def edit(document: Document) -> None:
        for pattern in _split_regexes(document):
            if "\\p{N}{1,3}" not in pattern["Regex"]:
                raise PureBPEError("this mutant needs a Split regex that groups digits by three")
            pattern["Regex"] = pattern["Regex"].replace("\\p{N}{1,3}", f"\\p{{N}}{{1,{size}}}")

    return edit


def _no_post_processor(document: Document) -> None:
    document["post_processor"] = None


def _specials_as_text(tok: HFTokenizer) -> None:
    """The special added tokens forgotten: their text goes through the model like any other."""
    kept = [token for token in tok.added.by_id.values() if not token.special]
    tok.added = AddedVocabulary(kept, None if tok.normalizer is None else tok.normalizer.normalize_str)


MUTANTS: Dict[str, Mutant] = {
    "merge priority by token id": Mutant(
        "merges applied by the id of the token they make, not by their rank (they differ in Gemma's files)",
        edit_document=_merges_by_token_id,
    ),
    "ignore_merges ignored": Mutant(
        "a word that is a vocab entry is merged up from its characters (Llama 3 sets ignore_merges)",
        edit_document=_model_flag("ignore_merges"),
    ),
    "added tokens matched after normalization": Mutant(
        "normalized: false added tokens looked for in the normalized text, not the raw one",
        edit_document=_added_flags(normalized=True),
    ),
    "lstrip/rstrip ignored": Mutant(
        "added tokens with lstrip/rstrip leave the whitespace around them to the model",
        edit_document=_added_flags(lstrip=False, rstrip=False),
    ),
    "byte fallback missing": Mutant(
        "a character outside the vocab becomes unk_token, not its <0xNN> byte tokens (Llama 2, Gemma)",
        edit_document=_model_flag("byte_fallback"),
    ),
    "normalizer skipped": Mutant(
        "the normalizer (NFC, Lowercase, Llama 2's Replace...) never runs",
        edit_document=_no_normalizer,
    ),
    "cl100k regex for Llama 3's": Mutant(
        "the pre-tokenizer regex is cl100k's string, not Llama 3's variant", edit_document=_cl100k_regex
    ),
    "digits split by two": Mutant(
        "digit runs cut into groups of up to 2, not 3 (\\p{N}{1,2})", edit_document=_digit_groups(2)
    ),
    "special tokens encoded as text": Mutant(
        "special added tokens in the text go through the model as text", edit_pipeline=_specials_as_text
    ),
    "post-processor skipped": Mutant(
        "add_special_tokens=True adds no BOS/EOS (the TemplateProcessing never runs)",
        edit_document=_no_post_processor,
    ),
}


def _document(tokenizer_file: Union[str, "os.PathLike[str]", Document]) -> Document:
    if isinstance(tokenizer_file, dict):
        return copy.deepcopy(tokenizer_file)
    with open(tokenizer_file, encoding="utf-8") as f:
        document: Document = json.load(f)
    return document


def mutant_tokenizer(name: str, tokenizer_file: Union[str, "os.PathLike[str]", Document]) -> HFTokenizer:
    """The pipeline of ``tokenizer_file`` (a path or a parsed document) with the bug ``name``.

    >>> doc = {"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"],
    ...        "ignore_merges": True}}
    >>> mutant_tokenizer("ignore_merges ignored", doc).model.ignore_merges
    False
    """
    if name not in MUTANTS:
        raise PureBPEError(f"no mutant {name!r}; choose one of: {', '.join(MUTANTS)}")
    mutant = MUTANTS[name]
    document = _document(tokenizer_file)
    if mutant.edit_document is not None:
        mutant.edit_document(document)
    tok = from_document(document, f"{name} mutant")
    if mutant.edit_pipeline is not None:
        mutant.edit_pipeline(tok)
    return tok


def mutant_encoder(
    name: str, tokenizer_file: Union[str, "os.PathLike[str]", Document], add_special_tokens: bool = False
) -> Callable[[str], List[int]]:
    """``encode(text) -> ids`` of :func:`mutant_tokenizer` (with its BOS/EOS if asked)."""
    tok = mutant_tokenizer(name, tokenizer_file)

    def encode(text: str) -> List[int]:
        return tok.encode(text, add_special_tokens=add_special_tokens)

    return encode
