"""The registry of trainer variants: one module each, all with the same semantics.

Every module here defines ``train(table: WordTable) -> Iterator[(left, right)]`` (see
:mod:`purebpe.core`). :data:`VARIANTS` names them; each is the module of that name here,
imported on first use so that importing purebpe stays cheap.
"""

from __future__ import annotations

import importlib
import platform
from typing import Iterable, Tuple

from ..core import Trainer
from ..errors import PureBPEError

#: The variants, in rough order of sophistication; each is the module ``purebpe.trainers.<name>``.
VARIANTS: Tuple[str, ...] = (
    "naive",
    "incremental",
    "fine_grained",
    "heap",
    "sorted",
    "bucket",
    "positional",
)

#: What ``variant="auto"`` picks on each interpreter for words of ordinary length
#: (``bench/bench_auto.py``): on PyPy ``positional`` is as fast as ``bucket`` on short words
#: (kjv-5m) and 2-3x faster on the rest; on CPython ``bucket`` is up to 1.5x faster there.
#: The compiled build (``PUREBPE_COMPILE=1``, see ``setup.py``) counts as an interpreter of its
#: own: compiled, ``positional`` runs gcide-18m's merges in 0.6x the time of ``bucket``
#: (pure or compiled: ``bucket``'s time is dict lookups, which compiling does not shorten).
AUTO = {"PyPy": "positional", "CPython": "bucket", "CPython-compiled": "positional"}


def interpreter_key() -> str:
    """The key of :data:`AUTO` for this process: the interpreter, and whether it runs the
    compiled trainers (an extension module's file is not a ``.py``)."""
    name = platform.python_implementation()
    trainer = importlib.import_module(".positional", __name__)
    return name + "-compiled" if not str(trainer.__file__).endswith(".py") else name


#: A word longer than this is "long": the word-rewriting trainers (``bucket`` and the rest)
#: rewrite all of it at every merge that touches it, so their time grows with its square.
LONG_WORD_BYTES = 256
#: ``auto`` picks ``positional`` when more than this share of the distinct words' bytes
#: lies in long words. Measured on CPython (``bench/bench_auto.py``): lines of Chinese
#: (words up to 274 bytes, 0.05% of the bytes long) tie; joined 8 lines a word (1 KB words,
#: all long) ``positional`` is 1.2x faster, 64 lines 1.6x (one line: 200x on PyPy). ``bucket``'s loss
#: grows with the square of a word's length, ``positional``'s is at most 1.5x: hence a low share.
LONG_WORD_SHARE = 0.05


def choose_variant(words: Iterable[bytes]) -> str:
    """What ``variant="auto"`` trains ``words`` (the distinct words) with: by their shape.

    ``positional`` when long words hold more than :data:`LONG_WORD_SHARE` of the bytes,
    else the interpreter's default (:data:`AUTO`). One pass over the words' lengths.
    """
    default = resolve_variant("auto")
    if default == "positional":
        return default
    total = long = 0
    for word in words:
        size = len(word)
        total += size
        if size > LONG_WORD_BYTES:
            long += size
    return "positional" if long > LONG_WORD_SHARE * total else default


def resolve_variant(name: str) -> str:
    """The registered variant ``name`` stands for (``"auto"`` picks per interpreter)."""
    if name == "auto":
        return AUTO.get(interpreter_key(), AUTO["CPython"])
    if name not in VARIANTS:
        raise PureBPEError(f"unknown variant {name!r}; choose one of: auto, {', '.join(VARIANTS)}")
    return name


def get_trainer(name: str) -> Trainer:
    """The ``train`` function of variant ``name``."""
    module = importlib.import_module(f"{__name__}.{resolve_variant(name)}")
    trainer: Trainer = module.train
    return trainer
