"""The compiled build (``setup.py``'s ``PUREBPE_COMPILE=1``) compiles all its hot modules,
and what depends on the build follows it.

Run on the pure package these check the pure side; ``tox -e compiled`` runs them on the
compiled build.
"""

from __future__ import annotations

import ast
import importlib
import platform
from pathlib import Path
from typing import List

from purebpe import tokenizer
from purebpe.pretokenize import DEFAULT_ENGINE

SETUP = Path(__file__).resolve().parent.parent / "setup.py"


def hot_modules() -> List[str]:
    """``setup.HOT_MODULES`` as module names, read without running ``setup.py``."""
    for node in ast.parse(SETUP.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", "") == "HOT_MODULES":
            paths = ast.literal_eval(node.value) if node.value is not None else []
            return [path[: -len(".py")].replace("/", ".") for path in paths]
    raise AssertionError("setup.py has no HOT_MODULES")


def is_compiled(module_name: str) -> bool:
    return not str(importlib.import_module(module_name).__file__).endswith(".py")


def test_hot_modules_are_all_compiled_or_none_is() -> None:
    modules = hot_modules()
    assert "purebpe.pretokenize.sinks" in modules and "purebpe.encoding_sink" in modules
    compiled = {name: is_compiled(name) for name in modules}
    assert len(set(compiled.values())) == 1, compiled


def test_the_default_engine_follows_the_build() -> None:
    fast_loops = platform.python_implementation() == "PyPy" or is_compiled("purebpe.pretokenize.gpt2")
    assert DEFAULT_ENGINE == ("scanner" if fast_loops else "re")
    assert tokenizer.ENGINE == DEFAULT_ENGINE
