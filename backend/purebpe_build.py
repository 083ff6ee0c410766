"""purebpe's build backend: setuptools', asking for mypyc when ``PUREBPE_COMPILE=1``.

Every hook is setuptools' own (``setuptools.build_meta``); only the build requirements
change. With ``PUREBPE_COMPILE=1`` in the environment, a wheel needs mypy (which ships
mypyc) and the types of the runtime dependencies, as mypyc type-checks the whole package to
compile it (``setup.py`` does the compiling). Asking for them here, whether or not they are
installed yet, is what makes every build the same: the installer (pip, tox, ``build``)
installs them into the build environment before ``build_wheel`` runs.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403  (every other hook, unchanged)

#: What compiling needs in the build environment.
COMPILE_REQUIREMENTS: List[str] = [
    "mypy>=2.4",  # mypyc (librt.vecs.vec: the positional trainer's cells)
    "attrs>=22.2",  # attrs ships its own types
    "types-tqdm",
]


def compiling() -> bool:
    """Whether this build compiles the hot modules (``PUREBPE_COMPILE=1``)."""
    return os.environ.get("PUREBPE_COMPILE", "0") not in ("", "0")


def get_requires_for_build_wheel(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    extra = COMPILE_REQUIREMENTS if compiling() else []
    return [*_setuptools.get_requires_for_build_wheel(config_settings), *extra]


def get_requires_for_build_editable(config_settings: Optional[Dict[str, Any]] = None) -> List[str]:
    extra = COMPILE_REQUIREMENTS if compiling() else []
    return [*_setuptools.get_requires_for_build_editable(config_settings), *extra]
