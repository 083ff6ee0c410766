"""CI's split of the suite among the CPythons (``tests/conftest.py``) leaves no test out."""

from __future__ import annotations

from conftest import SPLIT_BUCKETS, bucket_of


def test_every_bucket_runs_on_one_cpython() -> None:
    assert sorted(bucket_of(minor) for minor in range(9, 14)) == list(range(SPLIT_BUCKETS))
