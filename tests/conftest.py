"""Hypothesis profiles: ``ci`` (the default under CI=true or tox) never flakes; ``dev`` hunts bugs.

Select one with ``HYPOTHESIS_PROFILE=dev pytest`` (random seeds, more examples).

Under ``PUREBPE_SPLIT_CPYTHONS=1`` (set by ``.ci/run``) each pure-Python CPython runs a fifth
of the suite (:func:`_split_bucket`).
"""

from __future__ import annotations

import os
import platform
import sys
import zlib
from typing import List, Optional

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    deadline=None,
    derandomize=True,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "dev",
    deadline=None,
    max_examples=500,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


#: Under ``PUREBPE_SPLIT_CPYTHONS=1``, CPython 3.(9 + k) runs the tests of bucket k.
SPLIT_BUCKETS = 5


def _split_bucket() -> Optional[int]:
    """The bucket of tests this interpreter runs under ``PUREBPE_SPLIT_CPYTHONS=1``, or
    ``None`` for the whole suite.

    CI (``.ci/run``) sets it to keep the tox matrix within its time budget. A test's bucket
    is a hash of its id modulo 5, and CPython 3.9 ... 3.13 each run one bucket, so that
    every test runs on one pure-Python CPython, on the compiled build (CPython 3.11, where
    every module but the ten compiled ones is the same Python) and on PyPy, which run the
    whole suite. A plain ``tox`` runs everything everywhere.
    """
    if os.environ.get("PUREBPE_SPLIT_CPYTHONS", "") in ("", "0"):
        return None
    if platform.python_implementation() != "CPython" or not 9 <= sys.version_info[1] <= 13:
        return None
    import purebpe.core

    if not purebpe.core.__file__.endswith(".py"):  # the compiled build
        return None
    return bucket_of(sys.version_info[1])


def bucket_of(minor: int) -> int:
    """The bucket CPython 3.``minor`` runs under ``PUREBPE_SPLIT_CPYTHONS=1``."""
    return minor - 9


def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    bucket = _split_bucket()
    if bucket is None:
        return
    kept: List[pytest.Item] = []
    left: List[pytest.Item] = []
    for item in items:
        (kept if zlib.crc32(item.nodeid.encode("utf-8")) % SPLIT_BUCKETS == bucket else left).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept


def pytest_report_header(config: pytest.Config) -> Optional[str]:
    bucket = _split_bucket()
    if bucket is None:
        return None
    return f"PUREBPE_SPLIT_CPYTHONS: bucket {bucket} of {SPLIT_BUCKETS} runs here (tests/conftest.py)"
