"""Hypothesis profiles: ``ci`` (the default under CI=true or tox) never flakes; ``dev`` hunts bugs.

Select one with ``HYPOTHESIS_PROFILE=dev pytest`` (random seeds, more examples).
"""

from __future__ import annotations

import os
import platform
import sys
import zlib
from typing import List, Optional, Tuple

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


#: Under ``PUREBPE_SPLIT_CPYTHONS=1``, CPython 3.(9 + k) runs the tests of buckets k and k + 3.
SPLIT_BUCKETS = 5


def _split_buckets() -> Optional[Tuple[int, int]]:
    """The buckets of tests this interpreter runs under ``PUREBPE_SPLIT_CPYTHONS=1``, or
    ``None`` for the whole suite.

    CI (``.ci/run``) sets it to keep the tox matrix within its time budget. A test's bucket
    is a hash of its id modulo 5, and CPython 3.9 ... 3.13 each run two buckets, so that
    every test runs on two pure-Python CPythons two or three minor versions apart (3.9 and
    3.11, 3.10 and 3.12, 3.11 and 3.13, 3.9 and 3.12, 3.10 and 3.13), while PyPy and the
    compiled build (CPython 3.11) run the whole suite. A plain ``tox`` runs everything
    everywhere.
    """
    if os.environ.get("PUREBPE_SPLIT_CPYTHONS", "") in ("", "0"):
        return None
    if platform.python_implementation() != "CPython" or not 9 <= sys.version_info[1] <= 13:
        return None
    import purebpe.core

    if not purebpe.core.__file__.endswith(".py"):  # the compiled build
        return None
    return buckets_of(sys.version_info[1])


def buckets_of(minor: int) -> Tuple[int, int]:
    """The two buckets CPython 3.``minor`` runs under ``PUREBPE_SPLIT_CPYTHONS=1``."""
    k = minor - 9
    return k, (k + 3) % SPLIT_BUCKETS


def pytest_collection_modifyitems(config: pytest.Config, items: List[pytest.Item]) -> None:
    buckets = _split_buckets()
    if buckets is None:
        return
    kept: List[pytest.Item] = []
    left: List[pytest.Item] = []
    for item in items:
        (kept if zlib.crc32(item.nodeid.encode("utf-8")) % SPLIT_BUCKETS in buckets else left).append(item)
    if left:
        config.hook.pytest_deselected(items=left)
        items[:] = kept


def pytest_report_header(config: pytest.Config) -> Optional[str]:
    buckets = _split_buckets()
    if buckets is None:
        return None
    return f"PUREBPE_SPLIT_CPYTHONS: buckets {buckets} of {SPLIT_BUCKETS} run here (tests/conftest.py)"
