"""Hugging Face ``tokenizer.json`` files: load one and encode/decode exactly as HF does.

>>> import purebpe.hf
>>> tok = purebpe.hf.loads(
...     '{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}}'
... )
>>> tok.encode("aab")
[0, 2]

:func:`load` reads a file (recognised by content, :func:`is_hf_document`), :func:`loads`
a string; both give an :class:`HFTokenizer`. The parts live in their own packages:
:mod:`purebpe.models` (BPE), :mod:`purebpe.processors`, and the normalizers,
pre-tokenizers and decoders; this package holds the added vocabulary
(:mod:`.added`), the pipeline (:mod:`.pipeline`), the fast path onto purebpe's engine
(:mod:`.fast`) and the loader (:mod:`.loader`).
"""

from __future__ import annotations

from .added import AddedToken, AddedVocabulary
from .loader import from_document, is_hf_document, load, loads, looks_like_hf_file
from .pipeline import HFTokenizer

__all__ = [
    "AddedToken",
    "AddedVocabulary",
    "HFTokenizer",
    "from_document",
    "is_hf_document",
    "load",
    "loads",
    "looks_like_hf_file",
]
