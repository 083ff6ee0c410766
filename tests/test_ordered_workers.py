"""``purebpe._workers.ordered_map``: jobs computed in forked workers, handed back in order;
a failing job raises in its turn, a dead worker fails the run in one line, and no worker
outlives the map."""

from __future__ import annotations

import os
import signal
import time
from array import array
from typing import Iterator, List, Union

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from purebpe._workers import can_fork, ordered_map
from purebpe.errors import InputError, PureBPEError

pytestmark = pytest.mark.skipif(not can_fork(), reason="ordered_map forks its workers")


def _reversed(job: bytes) -> Union[bytes, "array[int]"]:
    """The job reversed: as bytes, or (jobs of even length) as an array, which goes back
    as its raw bytes, not pickled."""
    return array("H", job[::-1]) if len(job) % 2 == 0 else job[::-1]


def _fail_on_seven(job: int) -> int:
    if job == 7:
        raise InputError("job 7 is bad", "jobs.txt", line=7)
    return job * 2


def _pid(job: int) -> int:
    time.sleep(0.01)  # long enough for every worker to be sent its share
    return os.getpid()


def _die_on_three(job: int) -> int:
    if job == 3:
        os.kill(os.getpid(), signal.SIGKILL)
    return job


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@settings(max_examples=15)
@given(sizes=st.lists(st.integers(0, 300_000), max_size=12), processes=st.integers(1, 3), share=st.booleans())
def test_results_come_back_in_job_order(sizes: List[int], processes: int, share: bool) -> None:
    # Jobs and results larger than a pipe's buffer: neither side may wait on the other.
    jobs = [bytes([i % 251]) * size + bytes(range(i % 7)) for i, size in enumerate(sizes)]
    results = list(ordered_map(_reversed, jobs, processes, share=share))
    assert results == [_reversed(job) for job in jobs]
    assert [type(r) for r in results] == [bytes if len(job) % 2 else array for job in jobs]


@pytest.mark.parametrize("share", [False, True])
def test_a_failed_job_raises_in_its_turn_after_the_results_before_it(share: bool) -> None:
    results: List[int] = []
    with pytest.raises(InputError, match="jobs.txt, line 7: job 7 is bad"):
        for result in ordered_map(_fail_on_seven, range(20), 2, share=share):
            results.append(result)
    assert results == [2 * i for i in range(7)]


def test_a_shared_map_computes_here_and_in_one_worker_fewer() -> None:
    pids = list(ordered_map(_pid, range(40), 3, share=True))
    assert os.getpid() in pids and len(set(pids)) == 3


def test_a_dead_worker_fails_the_map_in_one_line() -> None:
    with pytest.raises(PureBPEError, match="a worker process died"):
        list(ordered_map(_die_on_three, range(10), 2))


def test_closing_the_map_early_ends_its_workers() -> None:
    pids: List[int] = []

    def jobs() -> Iterator[int]:
        yield 1
        import multiprocessing

        pids.extend(child.pid for child in multiprocessing.active_children() if child.pid)
        yield from range(100)

    results = ordered_map(abs, jobs(), 2)
    assert next(results) == 1
    results.close()
    assert pids and not any(_alive(pid) for pid in pids)
