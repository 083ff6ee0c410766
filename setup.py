"""The build: pure Python by default; ``PUREBPE_COMPILE=1`` compiles the hot modules with mypyc.

Everything else about the package is in ``pyproject.toml``.  The default wheel is pure
Python and needs no compiler.  With ``PUREBPE_COMPILE=1`` in the environment (e.g.
``PUREBPE_COMPILE=1 pip wheel . --no-deps``), mypyc -- which ships with mypy, the
project's type checker -- compiles the modules in :data:`HOT_MODULES` from the very same
source files into C extensions; every other module stays Python in the same wheel, and a
compiled module's ``.py`` file ships beside it (Python prefers the extension on import).
mypy and the runtime dependencies' types are then asked for as build requirements
(``setup_requires``, which setuptools' PEP 517 backend reports to the installer), and a C
compiler and the Python headers must be present.  Only the hot modules are compiled, which
keeps the build to about a minute.
"""

from __future__ import annotations

import os
from importlib.util import find_spec
from typing import Any, Dict, List

from setuptools import setup

#: The loops that dominate training and encoding time (docs/performance.md, "Compiled").
HOT_MODULES: List[str] = [
    "purebpe/core.py",  # apply_merges (replaying merges, the HF BPE model), merge_word, WordTable
    "purebpe/pretokenize/gpt2.py",  # the pattern scanners: counting's inner loop
    "purebpe/pretokenize/cl100k.py",
    "purebpe/pretokenize/o200k.py",
    "purebpe/pretokenize/superwords.py",
    "purebpe/encoding_sink.py",  # what the scanners hand each pre-token to when encoding
    "purebpe/word_encoder.py",  # a new pre-token's ids
    "purebpe/trainers/bucket.py",  # the merge loops of the variants "auto" picks
    "purebpe/trainers/pair_index.py",
    "purebpe/trainers/positional.py",
]

#: What compiling needs, by the module that shows it is installed: mypyc ships with mypy,
#: which type-checks the whole package to compile it, so it also needs the types of the
#: runtime dependencies (attrs ships its own; tqdm's are a stub package).
COMPILE_REQUIREMENTS: Dict[str, str] = {
    "mypyc": "mypy>=2.4",  # (librt.vecs.vec: the positional trainer's cells)
    "attr": "attrs>=22.2",
    "tqdm-stubs": "types-tqdm",
}


def build_options() -> Dict[str, Any]:
    """The arguments to ``setup()`` beyond ``pyproject.toml``: extension modules, if asked."""
    if os.environ.get("PUREBPE_COMPILE", "0") in ("", "0"):
        return {}
    missing = [req for module, req in COMPILE_REQUIREMENTS.items() if find_spec(module) is None]
    if missing:
        # First pass of the PEP 517 backend: report the build requirements; the installer
        # installs them and runs this file again.
        return {"setup_requires": missing}
    from mypyc.build import mypycify

    return {"ext_modules": mypycify(HOT_MODULES, opt_level="3")}


setup(**build_options())
