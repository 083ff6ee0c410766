"""The build: pure Python by default; ``PUREBPE_COMPILE=1`` compiles the hot modules with mypyc.

Everything else about the package is in ``pyproject.toml``.  The default wheel is pure
Python and needs no compiler.  With ``PUREBPE_COMPILE=1`` in the environment (e.g.
``PUREBPE_COMPILE=1 pip wheel . --no-deps``), mypyc -- which ships with mypy, the
project's type checker -- compiles the modules in :data:`HOT_MODULES` from the very same
source files into C extensions; every other module stays Python in the same wheel, and a
compiled module's ``.py`` file ships beside it (Python prefers the extension on import).
mypy and the runtime dependencies' types are then asked for as build requirements (by
the build backend, ``backend/purebpe_build.py``: setuptools' own, plus those), and a C
compiler and the Python headers must be present.  Only the hot modules are compiled, which
keeps the build to a few minutes.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, List

from setuptools import setup

#: The loops that dominate training and encoding time (docs/performance.md, "Compiled").
HOT_MODULES: List[str] = [
    "purebpe/core.py",  # apply_merges (replaying merges, the HF BPE model), merge_word, WordTable
    "purebpe/pretokenize/gpt2.py",  # the pattern scanners: counting's inner loop
    "purebpe/pretokenize/cl100k.py",
    "purebpe/pretokenize/o200k.py",
    "purebpe/pretokenize/superwords.py",
    "purebpe/pretokenize/utf8.py",  # reading a character of UTF-8 (the scanners' twins)
    "purebpe/pretokenize/sinks.py",  # what the scanners write to: native calls, not by name
    "purebpe/encoding_sink.py",  # what the scanners hand each pre-token to when encoding
    "purebpe/word_encoder.py",  # a new pre-token's ids
    "purebpe/trainers/bucket.py",  # the merge loops of the variants "auto" picks
    "purebpe/trainers/pair_index.py",
    "purebpe/trainers/positional.py",
]


#: The commands setuptools' backend runs for the requirements and the metadata.
METADATA_COMMANDS = {"egg_info", "dist_info"}


def build_options() -> Dict[str, Any]:
    """The arguments to ``setup()`` beyond ``pyproject.toml``: extension modules, if asked."""
    if os.environ.get("PUREBPE_COMPILE", "0") in ("", "0"):
        return {}
    if METADATA_COMMANDS.intersection(sys.argv[1:]):
        # The installer asks for the build requirements or the metadata: no extensions (and
        # no minute of mypyc) needed yet, and mypy may not be installed yet.
        return {}
    try:
        from mypyc.build import mypycify
    except ImportError:
        # The build backend (backend/purebpe_build.py) asks the installer for mypy, so this
        # is a build without isolation, in an environment that lacks it.
        raise SystemExit(
            "PUREBPE_COMPILE=1: mypyc is not installed in the build environment; build with "
            "pip's build isolation, or install mypy>=2.4, attrs and types-tqdm first"
        ) from None
    return {"ext_modules": mypycify(HOT_MODULES, opt_level="3")}


setup(**build_options())
