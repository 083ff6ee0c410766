"""purebpe.testing: Hypothesis strategies and a conformance suite for any BPE implementation.

Needs ``hypothesis`` (``pip install purebpe[test]``).

* Strategies (:mod:`purebpe.testing.strategies`): :func:`corpora`, :func:`texts`,
  :func:`special_tokens`, :func:`vocab_sizes`, :func:`mask_lengths`, with the nasty
  cases built in.
* Checks (:mod:`purebpe.testing.checks`): :func:`check_trainer`,
  :func:`check_trainer_from_counts`, :func:`check_tokenizer`,
  :func:`check_mask_generator`, :func:`check_encoder` take your callable, run every property under Hypothesis
  and raise an ``AssertionError`` with the minimal counterexample as a runnable snippet.
* A pytest plugin (:mod:`purebpe.testing.plugin`), inert unless asked:
  ``pytest --bpe-trainer mypackage.bpe:train_bpe`` (or ``pytest -p purebpe.testing ...``
  where plugins are not auto-loaded), and the command ``purebpe conformance``.

The names are imported on first use, so that pytest, which loads the plugin in every
run, pays nothing for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    import pytest

    from .checks import (
        check_encoder,
        check_mask_generator,
        check_tokenizer,
        check_trainer,
        check_trainer_from_counts,
        conformance,
    )
    from .strategies import corpora, mask_lengths, special_tokens, texts, vocab_sizes

__all__ = [
    "check_encoder",
    "check_mask_generator",
    "check_tokenizer",
    "check_trainer",
    "check_trainer_from_counts",
    "conformance",
    "corpora",
    "mask_lengths",
    "special_tokens",
    "texts",
    "vocab_sizes",
]

# name -> the submodule defining it
_LAZY = {
    "check_encoder": "checks",
    "check_mask_generator": "checks",
    "check_tokenizer": "checks",
    "check_trainer": "checks",
    "check_trainer_from_counts": "checks",
    "conformance": "checks",
    "corpora": "strategies",
    "mask_lengths": "strategies",
    "special_tokens": "strategies",
    "texts": "strategies",
    "vocab_sizes": "strategies",
}


__getattr__, __dir__ = lazy_names(__name__, _LAZY)


def pytest_addoption(parser: "pytest.Parser", pluginmanager: "pytest.PytestPluginManager") -> None:
    """``pytest -p purebpe.testing``: register the plugin, unless its entry point already did.

    The hooks live in :mod:`purebpe.testing.plugin`, which the ``pytest11`` entry point
    registers as ``purebpe``; registering that module a second time (or copies of its
    hooks here) would add its options twice. ``pytest_addoption`` is a historic hook, so
    the plugin registered here still gets its own call.
    """
    from . import plugin

    if pluginmanager.get_plugin("purebpe") is None and not pluginmanager.is_registered(plugin):
        pluginmanager.register(plugin, "purebpe")
