"""Shared inputs for the pytest-benchmark suites (``pytest bench --benchmark-only``)."""
from __future__ import annotations

from pathlib import Path
from typing import List

import pytest

from purebpe.corpus import default_corpus

#: The larger corpora live beside the repository in ``../shared/corpora`` when present.
SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "corpora"


@pytest.fixture(scope="session")
def pydoc_texts() -> List[str]:
    return default_corpus()


@pytest.fixture(scope="session")
def pydoc_file(tmp_path_factory: pytest.TempPathFactory, pydoc_texts: List[str]) -> Path:
    path = tmp_path_factory.mktemp("corpus") / "pydoc.txt"
    path.write_text("\n\n".join(pydoc_texts), encoding="utf-8")
    return path
