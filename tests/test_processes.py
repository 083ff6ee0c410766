"""Real processes and real signals: workers die with their parent, SIGTERM and Ctrl-C end a
run cleanly and truthfully, a closed pipe ends it quietly, a full device is named."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List

import pytest

import purebpe
from purebpe import BPEModel
from purebpe.corpus import default_corpus

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def env() -> dict:  # type: ignore[type-arg]
    return dict(os.environ, PYTHONPATH=str(Path(purebpe.__file__).parent.parent))


def children_of(pid: int) -> List[int]:
    """The pids whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry))
    return found


def alive(pid: int) -> bool:
    """Running (a zombie, waiting to be reaped by init, counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def start_counting(tmp_path: Path) -> "tuple[subprocess.Popen[bytes], List[int]]":
    """``purebpe count --processes 2`` on a corpus big enough to keep it busy; its workers.

    Its temporary files go to ``tmp_path / "scratch"``.
    """
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("some words to count, over and over again\n" * 1_500_000, encoding="utf-8")
    (tmp_path / "scratch").mkdir()
    parent = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "purebpe",
            "count",
            str(corpus),
            "--processes",
            "2",
            "--progress",
            "none",
            "-o",
            str(tmp_path / "c.tsv.gz"),
        ],
        env=dict(env(), TMPDIR=str(tmp_path / "scratch")),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    workers: List[int] = []
    while len(workers) < 2 and time.monotonic() < deadline and parent.poll() is None:
        time.sleep(0.05)
        workers = children_of(parent.pid)
    assert len(workers) >= 2, "the workers did not start"
    time.sleep(0.1)  # let them take jobs
    return parent, workers


def wait_gone(pids: List[int], seconds: float) -> List[int]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = [pid for pid in pids if alive(pid)]
        if not left:
            return []
        time.sleep(0.05)
    return [pid for pid in pids if alive(pid)]


def test_workers_die_within_seconds_when_the_parent_is_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent, workers = start_counting(tmp_path)
    parent.kill()
    parent.wait()
    parent.stdout.close()  # type: ignore[union-attr]
    parent.stderr.close()  # type: ignore[union-attr]
    assert wait_gone(workers, 5) == []
    # The killed count's scratch directory is left behind; the next count removes it.
    scratch = tmp_path / "scratch"
    left = [p.name for p in scratch.iterdir()]
    assert left and all(name.startswith(f"purebpe-scratch-{parent.pid}-") for name in left)
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    purebpe.count_from_iterator(["a b"])  # (serial: no scratch directory)
    assert list(scratch.iterdir()) != []
    purebpe.count(tmp_path / "corpus.txt", processes=2, chunk_bytes=1 << 16)
    assert list(scratch.iterdir()) == []


def death_signal() -> int:
    """The signal this process gets when its parent dies (``prctl(PR_GET_PDEATHSIG)``)."""
    import ctypes

    signal_number = ctypes.c_int()
    ctypes.CDLL(None).prctl(2, ctypes.byref(signal_number), 0, 0, 0)
    return signal_number.value


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_workers_ask_linux_for_sigkill_when_their_parent_dies() -> None:
    import signal

    from purebpe._workers import worker_pool

    pool = worker_pool(1)
    try:
        assert pool.submit(death_signal).result(timeout=60) == signal.SIGKILL
    finally:
        pool.shutdown()


def test_stop_workers_kills_workers_still_busy_with_their_first_job() -> None:
    from purebpe._workers import stop_workers, worker_pool

    pool = worker_pool(2)
    for _ in range(2):
        pool.submit(time.sleep, 60)
    deadline = time.monotonic() + 30
    while len(pool.worker_pids()) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    workers = pool.worker_pids()
    assert len(workers) == 2 and all(alive(pid) for pid in workers)
    started = time.monotonic()
    stop_workers(pool)
    assert wait_gone(workers, 5) == []
    assert time.monotonic() - started < 5  # killed, not waited for: their jobs take 60 s


WATCHDOG_ONLY = """
import sys, time
import purebpe._workers as workers
workers._request_death_signal = lambda: None  # no prctl: the portable watchdog alone
pool = workers.worker_pool(2)
futures = [pool.submit(time.sleep, 60) for _ in range(2)]
time.sleep(0.5)
print(" ".join(str(pid) for pid in pool._processes), flush=True)
time.sleep(60)
"""


def test_the_watchdog_alone_ends_orphaned_workers() -> None:
    parent = subprocess.Popen([sys.executable, "-c", WATCHDOG_ONLY], env=env(), stdout=subprocess.PIPE)
    assert parent.stdout is not None
    workers = [int(pid) for pid in parent.stdout.readline().split()]
    assert len(workers) == 2 and all(alive(pid) for pid in workers)
    parent.kill()
    parent.wait()
    parent.stdout.close()
    assert wait_gone(workers, 5) == []


FORKS_WITH_A_PROGRESS_BAR = """
import os, sys, threading
import purebpe
threads_at_fork = []
os.register_at_fork(before=lambda: threads_at_fork.append(threading.active_count()))
purebpe.train([sys.argv[1]], 400, processes=2, progress=True)
print(threads_at_fork)
"""


def test_workers_are_forked_from_a_process_with_one_thread_while_a_bar_shows(tmp_path: Path) -> None:
    # A fork from a process that runs threads may deadlock in the child (3.12 warns of it):
    # tqdm's monitor thread must not be running when the counting workers are forked.
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("".join(default_corpus()), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-W", "error", "-c", FORKS_WITH_A_PROGRESS_BAR, str(corpus)],
        env=env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    threads_at_fork = ast.literal_eval(result.stdout)
    assert threads_at_fork and set(threads_at_fork) == {1}, threads_at_fork


def test_sigterm_ends_the_run_with_143_and_no_traceback(tmp_path: Path) -> None:
    parent, workers = start_counting(tmp_path)
    parent.terminate()
    _, err = parent.communicate(timeout=30)
    assert parent.returncode == 143
    assert err.decode().strip() == "purebpe: terminated; no output file was written"
    assert wait_gone(workers, 5) == []
    assert not (tmp_path / "c.tsv.gz").exists()


def test_ctrl_c_after_the_model_was_saved_says_what_was_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import purebpe.cli.train as train_command
    from purebpe.cli import main

    def interrupted_summary(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(train_command, "_print_summary", interrupted_summary)
    status = main(["train", "--vocab-size", "260", "--progress", "none", "-o", str(tmp_path / "m")])
    assert status == 130
    err = capsys.readouterr().err.strip()
    assert err == f"purebpe: interrupted; it had written {tmp_path / 'm' / 'purebpe.json'} (complete)"
    assert purebpe.load(tmp_path / "m").vocab_size == 260


@pytest.fixture()
def model_dir(tmp_path: Path) -> Path:
    BPEModel.from_merges([(b"a", b"b")]).save(tmp_path / "m")
    return tmp_path / "m"


def test_a_closed_pipe_ends_quietly(model_dir: Path, tmp_path: Path) -> None:
    text = tmp_path / "text.txt"
    text.write_text("ab cd\n" * 300_000, encoding="utf-8")
    shell = f"{sys.executable} -m purebpe encode --tokenizer {model_dir} {text} --progress none | head -c 10"
    result = subprocess.run(["bash", "-c", f"set -o pipefail; {shell}"], env=env(), capture_output=True)
    assert result.stdout == b"256 32 99 "  # "ab", " ", "c", ...: the first 10 bytes
    assert result.stderr == b""
    assert result.returncode in (0, 141)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize("how", ["stdout", "-o"])
def test_a_full_device_is_named(model_dir: Path, tmp_path: Path, how: str) -> None:
    text = tmp_path / "text.txt"
    text.write_text("ab cd\n" * 10_000, encoding="utf-8")
    args = [
        sys.executable,
        "-m",
        "purebpe",
        "encode",
        "--tokenizer",
        str(model_dir),
        str(text),
        "--progress",
        "none",
    ]
    if how == "-o":
        result = subprocess.run(args + ["-o", "/dev/full"], env=env(), capture_output=True, text=True)
        name = "/dev/full"
    else:
        with open("/dev/full", "wb") as full:
            result = subprocess.run(args, env=env(), stdout=full, stderr=subprocess.PIPE, text=True)
        name = "<stdout>"
    assert result.returncode == 2
    assert result.stderr == f"purebpe: error: {name}: cannot write (No space left on device)\n"
