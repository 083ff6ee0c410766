"""A package's public names imported on first use (PEP 562's module ``__getattr__``).

``import purebpe`` then loads nothing else, so that the ``purebpe`` command starts light,
and pytest, which loads :mod:`purebpe.testing`'s plugin in every run, pays nothing for
the suite's names.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any, Callable, List, Mapping, Tuple


def lazy_names(
    package: str, names: Mapping[str, str]
) -> Tuple[Callable[[str], Any], Callable[[], List[str]]]:
    """``(__getattr__, __dir__)`` for ``package``, whose ``names`` (``{name: submodule}``)
    are imported from their submodules when first asked for, then kept.

    >>> getattr_, dir_ = lazy_names("purebpe", {"Tokenizer": "tokenizer"})
    >>> getattr_("Tokenizer").__name__, "Tokenizer" in dir_()
    ('Tokenizer', True)
    """
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        if name in names:
            value = getattr(importlib.import_module(f"{package}.{names[name]}"), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> List[str]:
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__
