"""Counting on real clusters of worker processes: Ray, Dask, a local pool; and killed workers.

Every engine must give the counts of one process, bit for bit; a worker killed mid-job must
make the count retry the job or fail with one line, never return a short count. The docs'
examples for clusters are run here as written (``docs/huge-corpora.md``).
"""

from __future__ import annotations

import multiprocessing
import os
import re
import signal
import sys
import threading
import time
from concurrent.futures import Executor, Future
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List

import pytest

import purebpe
from purebpe import PureBPEError, WordCounts
from purebpe.cli import main
from purebpe.corpus import default_corpus

DOCS = Path(__file__).resolve().parent.parent / "docs" / "huge-corpora.md"
SPECIALS = ["<|endoftext|>"]
NO_RAY = "Ray is not installed (the peers extra brings it on CPython 3.11; PyPy has no wheels)"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> List[Path]:
    directory = tmp_path_factory.mktemp("corpus")
    texts = default_corpus()
    paths = []
    for i in range(2):
        path = directory / f"part-{i:03}.txt"
        path.write_text("<|endoftext|>".join(texts[i * 40 : i * 40 + 40]), encoding="utf-8")
        paths.append(path)
    return paths


@pytest.fixture(scope="module")
def one_process(corpus: List[Path]) -> WordCounts:
    return purebpe.count(corpus, SPECIALS)


def docs_example(needle: str) -> str:
    """The Python block of the huge-corpora page that contains ``needle``."""
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
    matching = [block for block in blocks if needle in block]
    assert len(matching) == 1, f"{DOCS} should have one example with {needle!r}"
    return matching[0]


def run_example(code: str, **names: Any) -> Dict[str, Any]:
    namespace: Dict[str, Any] = dict(names)
    exec(compile(code, str(DOCS), "exec"), namespace)
    return namespace


def test_the_other_examples_of_the_page_run_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, corpus: List[Path]
) -> None:
    """Every Python block of docs/huge-corpora.md but the clusters' (run below), in order."""
    monkeypatch.chdir(tmp_path)
    for path in corpus:  # the page counts part-000.txt and part-001.txt
        (tmp_path / path.name).write_bytes(path.read_bytes())
    shards = [tmp_path / f"shard-{i}.tsv.gz" for i in range(2)]
    for shard, path in zip(shards, corpus):
        purebpe.count(path, SPECIALS).save(shard)
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(encoding="utf-8"), re.S)
    namespace: Dict[str, Any] = {"shard_count_files": shards}
    ran = 0
    for block in blocks:
        if "get_executor" in block or "ray_executor" in block:
            continue
        exec(compile(block, str(DOCS), "exec"), namespace)
        ran += 1
    assert ran == 5
    texts = [row["text"] for row in namespace["rows"]]  # train_from_iterator over a dataset's rows
    assert namespace["model"].merges == purebpe.train_from_iterator(texts, 300, processes=1).merges
    assert (b" ", b"fox") in namespace["model"].merges
    whole = purebpe.count(corpus, SPECIALS)
    assert namespace["total"] == whole == WordCounts.load("all.tsv.gz")
    assert WordCounts.load("counts.tsv.gz") == whole  # counted with processes=16
    assert purebpe.load("tok-8000").vocab_size <= 8000


# --- A worker killed mid-job -----------------------------------------------------------------


def die_on_first_call(claim: str, fn: Callable[[Any], Any], job: Any) -> Any:
    """Run ``fn(job)``, except in the first call of all: it writes its process id to
    ``claim`` and waits to be killed (the job then runs again, or the count fails)."""
    try:
        os.close(os.open(claim + ".lock", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return fn(job)
    Path(claim + ".tmp").write_text(str(os.getpid()))
    os.rename(claim + ".tmp", claim)  # the killer never reads a half-written id
    time.sleep(300)
    raise AssertionError("this worker should have been killed")


class KillOneWorker(Executor):
    """Wraps an executor: the worker that takes the first job is SIGKILLed while it runs it."""

    def __init__(self, inner: Executor, directory: Path) -> None:
        self.inner = inner
        self.claim = str(directory / "claimed")
        self.killed: List[int] = []
        self.killer = threading.Thread(target=self._kill_when_claimed, daemon=True)
        self.killer.start()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> "Future[Any]":
        return self.inner.submit(die_on_first_call, self.claim, fn, *args)

    def _kill_when_claimed(self) -> None:
        deadline = time.monotonic() + 120
        while not os.path.exists(self.claim) and time.monotonic() < deadline:
            time.sleep(0.01)
        pid = int(Path(self.claim).read_text())
        os.kill(pid, signal.SIGKILL)
        self.killed.append(pid)


def pickle_this_module_by_value(cloudpickle: Any) -> None:
    """Workers cannot import this test module: ship ``die_on_first_call`` by value."""
    cloudpickle.register_pickle_by_value(sys.modules[__name__])


# --- The local process pool ----------------------------------------------------------------


def kill_first_child_when_it_appears(killed: List[int]) -> threading.Thread:
    """A thread that SIGKILLs the first new child process of this one as soon as it exists.

    Children alive before (the pool of an earlier test, not yet reaped) are left alone.
    """
    before = {child.pid for child in multiprocessing.active_children()}

    def kill() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            children = [c for c in multiprocessing.active_children() if c.pid not in before]
            if children and children[0].pid is not None:
                os.kill(children[0].pid, signal.SIGKILL)
                killed.append(children[0].pid)
                return
            time.sleep(0.001)

    thread = threading.Thread(target=kill, daemon=True)
    thread.start()
    return thread


@pytest.fixture(scope="module")
def big_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Several MB: long enough to count that a worker is still at work when it is killed."""
    path = tmp_path_factory.mktemp("big") / "big.txt"
    path.write_text("\n".join(default_corpus()) * 3, encoding="utf-8")
    return path


def test_a_killed_local_worker_fails_the_count_with_one_line(big_file: Path) -> None:
    killed: List[int] = []
    with pytest.raises(PureBPEError, match=r"^a counting worker process died \(killed, or out of memory\)"):
        kill_first_child_when_it_appears(killed)
        purebpe.count(big_file, processes=2, chunk_bytes=1 << 16)
    assert killed


def test_a_killed_local_worker_exits_the_cli_with_one_line(
    big_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    killed: List[int] = []
    kill_first_child_when_it_appears(killed)
    output = tmp_path / "counts.tsv.gz"
    status = main(["count", str(big_file), "--processes", "2", "--progress", "none", "-o", str(output)])
    assert killed and status == 2
    err = capsys.readouterr().err
    assert err.startswith("purebpe: error: a counting worker process died") and err.count("\n") == 1
    assert not output.exists()


# --- Dask: a LocalCluster of worker processes -----------------------------------------------


@pytest.fixture(scope="module")
def dask_client() -> Iterator[Any]:
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")
    with distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
    ) as cluster:
        with distributed.Client(cluster) as client:
            yield client


def test_dask_worker_processes_count_like_one_process(
    dask_client: Any, corpus: List[Path], one_process: WordCounts
) -> None:
    code = docs_example("client.get_executor()").replace(
        '"scheduler-address:8786"', repr(dask_client.scheduler.address)
    )
    counts = run_example(code, files=corpus)["counts"]
    assert counts == one_process  # words, counts, special tokens and pre-tokenizer
    assert list(counts.words) != [] and counts.total() == one_process.total()
    small = purebpe.count(corpus, SPECIALS, executor=dask_client.get_executor(), chunk_bytes=4096)
    assert small == one_process
    ranges = purebpe.count(
        corpus, SPECIALS, executor=dask_client.get_executor(), chunk_bytes=4096, shared_files=True
    )
    assert ranges == one_process
    texts = default_corpus()[:30]
    from_texts = purebpe.count_from_iterator(texts, executor=dask_client.get_executor())
    assert from_texts == purebpe.count_from_iterator(texts)


def test_dask_runs_the_job_of_a_killed_worker_again(
    dask_client: Any, corpus: List[Path], one_process: WordCounts, tmp_path: Path
) -> None:
    pickle_this_module_by_value(pytest.importorskip("cloudpickle"))
    executor = KillOneWorker(dask_client.get_executor(), tmp_path)
    counts = purebpe.count(corpus, SPECIALS, executor=executor, chunk_bytes=1 << 14)
    assert executor.killed
    assert counts == one_process


# --- Ray: local workers are processes started by ray.init() ---------------------------------


@pytest.fixture(scope="module")
def ray_running() -> Iterator[Any]:
    ray = pytest.importorskip("ray", reason=NO_RAY)
    with purebpe.ray_executor(num_cpus=2, include_dashboard=False, log_to_driver=False):
        yield ray


def test_ray_workers_count_like_one_process(
    ray_running: Any, corpus: List[Path], one_process: WordCounts
) -> None:
    counts = run_example(docs_example("ray_executor"), files=corpus)["counts"]
    assert counts == one_process
    assert ray_running.is_initialized()  # the example's executor left the running Ray alone
    with purebpe.ray_executor() as executor:
        small = purebpe.count(corpus, SPECIALS, executor=executor, chunk_bytes=4096)
        ranges = purebpe.count(corpus, SPECIALS, executor=executor, chunk_bytes=4096, shared_files=True)
        texts = default_corpus()[:30]
        from_texts = purebpe.count_from_iterator(texts, executor=executor)
    assert small == one_process and ranges == one_process
    assert from_texts == purebpe.count_from_iterator(texts)


def test_ray_runs_the_job_of_a_killed_worker_again(
    ray_running: Any, corpus: List[Path], one_process: WordCounts, tmp_path: Path
) -> None:
    pickle_this_module_by_value(ray_running.cloudpickle)
    executor = KillOneWorker(purebpe.ray_executor(), tmp_path)
    counts = purebpe.count(corpus, SPECIALS, executor=executor, chunk_bytes=1 << 14)
    assert executor.killed
    assert counts == one_process


def test_ray_without_retries_fails_the_count_with_one_line(
    ray_running: Any, corpus: List[Path], tmp_path: Path
) -> None:
    pickle_this_module_by_value(ray_running.cloudpickle)
    executor = KillOneWorker(purebpe.ray_executor(max_retries=0), tmp_path)
    with pytest.raises(PureBPEError, match=r"^a counting job failed on its worker \(\w*Error: ") as info:
        purebpe.count(corpus, SPECIALS, executor=executor, chunk_bytes=1 << 14)
    assert executor.killed and "\n" not in str(info.value)


def test_errors_in_input_come_back_from_ray_workers_as_they_are(ray_running: Any, tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"a" * 100 + b"\n\xff")
    with pytest.raises(purebpe.InputError) as info:
        purebpe.count(bad, executor=purebpe.ray_executor(), chunk_bytes=16)
    assert type(info.value) is purebpe.InputError  # not Ray's wrapper, whose message is a traceback
    assert (info.value.offset, info.value.line) == (101, 2)
    assert str(info.value) == f"{bad}, line 2, byte offset 101: " + info.value.what


def test_ray_executor_refuses_bad_retries() -> None:
    pytest.importorskip("ray", reason=NO_RAY)
    with pytest.raises(PureBPEError, match="max_retries must be at least 0, not -1"):
        purebpe.ray_executor(max_retries=-1)


def test_ray_executor_without_ray_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now fails, as where it is absent
    with pytest.raises(PureBPEError, match=r"^ray_executor needs Ray: pip install ray"):
        purebpe.ray_executor()
