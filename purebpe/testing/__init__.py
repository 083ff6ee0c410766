"""purebpe.testing: Hypothesis strategies and conformance checks for any BPE implementation.

Needs ``hypothesis`` (``pip install purebpe[test]``). The strategies are in
:mod:`purebpe.testing.strategies`.
"""
from __future__ import annotations

from .strategies import corpora, mask_lengths, special_tokens, texts, vocab_sizes

__all__ = ["corpora", "mask_lengths", "special_tokens", "texts", "vocab_sizes"]
