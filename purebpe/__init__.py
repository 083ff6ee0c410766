"""purebpe: byte-level BPE tokenizers in readable pure Python.

Train::

    import purebpe
    model = purebpe.train("corpus.txt", vocab_size=10_000, special_tokens=["<|endoftext|>"])
    model.save("my-tokenizer")

Every trainer variant in :data:`VARIANTS` gives identical results; ``variant="auto"``
picks the fastest on the running interpreter.

The names are imported on first use: ``import purebpe`` loads nothing else, so that the
``purebpe`` command (a submodule) starts without the trainers, and a restart for PyPy's
nursery (:mod:`purebpe.cli.pypy_nursery`) comes before any of them is loaded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_names

if TYPE_CHECKING:
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

# name -> the submodule defining it
_LAZY = {
    "BPEModel": "model",
    "InputError": "errors",
    "PATTERNS": "pretokenize",
    "Pattern": "pretokenize",
    "PureBPEError": "errors",
    "RayExecutor": "cluster",
    "Tokenizer": "tokenizer",
    "VARIANTS": "trainers",
    "WordCounts": "wordcounts",
    "WordTable": "core",
    "count": "counting",
    "count_from_iterator": "counting",
    "extend_superbpe": "superbpe",
    "load": "formats",
    "ray_executor": "cluster",
    "train": "training",
    "train_bpe": "training",
    "train_from_counts": "training",
    "train_from_iterator": "training",
    "train_superbpe": "superbpe",
}

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

__getattr__, __dir__ = lazy_names(__name__, _LAZY)
