"""purebpe: byte-level BPE tokenizers in readable pure Python.

Train::

    import purebpe
    model = purebpe.train("corpus.txt", vocab_size=10_000, special_tokens=["<|endoftext|>"])
    model.save("my-tokenizer")

Every trainer variant in :data:`VARIANTS` gives identical results; ``variant="auto"``
picks the fastest on the running interpreter.
"""

from __future__ import annotations

from .cluster import RayExecutor, ray_executor
from .core import WordTable
from .counting import count, count_from_iterator
from .errors import InputError, PureBPEError
from .formats import load
from .model import BPEModel
from .pretokenize import PATTERNS, Pattern
from .superbpe import extend_superbpe, train_superbpe
from .tokenizer import Tokenizer
from .trainers import VARIANTS
from .training import train, train_bpe, train_from_counts, train_from_iterator
from .wordcounts import WordCounts

__version__ = "0.1.0"

__all__ = [
    "BPEModel",
    "InputError",
    "PATTERNS",
    "Pattern",
    "PureBPEError",
    "RayExecutor",
    "Tokenizer",
    "VARIANTS",
    "WordCounts",
    "WordTable",
    "count",
    "count_from_iterator",
    "extend_superbpe",
    "load",
    "ray_executor",
    "train",
    "train_bpe",
    "train_from_counts",
    "train_from_iterator",
    "train_superbpe",
]
