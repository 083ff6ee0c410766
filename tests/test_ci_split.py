"""CI's split of the suite among the CPythons (``tests/conftest.py``) leaves no test out."""

from __future__ import annotations

from collections import Counter

from conftest import SPLIT_BUCKETS, buckets_of


def test_every_bucket_runs_on_two_cpythons_two_or_three_versions_apart() -> None:
    runs_on = {
        bucket: [minor for minor in range(9, 14) if bucket in buckets_of(minor)] for bucket in range(5)
    }
    assert set(runs_on) == set(range(SPLIT_BUCKETS))
    for minors in runs_on.values():
        assert len(minors) == 2 and 2 <= minors[1] - minors[0] <= 3, runs_on
    assert Counter(b for minor in range(9, 14) for b in buckets_of(minor)) == {b: 2 for b in range(5)}
