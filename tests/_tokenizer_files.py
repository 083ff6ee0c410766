"""Locate the real third-party tokenizer files that scripts/fetch_tokenizer_files.py caches.

``tokenizer_file("llama3-tokenizer.model")`` returns the cached file's path, or skips the
calling test with a reason that names the fetch command when the file is not there
(CI runs the fetch first, so CI never skips).  A cached file whose sha256 differs from
the digest the fetch script records fails the test: its recorded answers would not hold.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Dict

import pytest

_SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "fetch_tokenizer_files.py"
_checked: Dict[Path, bool] = {}


def _fetch_script() -> ModuleType:
    name = "_purebpe_fetch_tokenizer_files"
    module = sys.modules.get(name)
    if module is None:
        spec = importlib.util.spec_from_file_location(name, _SCRIPT)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return module


def tokenizer_files_dir() -> Path:
    """The cache directory the fetch script writes to."""
    return Path(_fetch_script().cache_dir())


def tokenizer_file(name: str) -> Path:
    """The cached file `name` (a key of the fetch script's FILES), or skip the test."""
    script = _fetch_script()
    if name not in script.FILES:
        raise KeyError(f"{name!r} is not one of the fetch script's files: {sorted(script.FILES)}")
    path = tokenizer_files_dir() / name
    if not path.is_file():
        pytest.skip(
            f"{name} is not fetched: run `{script.FETCH_COMMAND}` "
            f"(cache: ${script.ENV_VAR} or {script.DEFAULT_DIR})"
        )
    if path not in _checked:
        got = script.sha256_of(path)
        _checked[path] = got == script.FILES[name].sha256
        if not _checked[path]:
            pytest.fail(
                f"{path} has sha256 {got}, not the recorded {script.FILES[name].sha256}: "
                f"delete it and run `{script.FETCH_COMMAND}`"
            )
    elif not _checked[path]:
        pytest.fail(f"{path} does not have the recorded sha256")
    return path
