#!/usr/bin/env python3
"""Counting on clusters against local processes: overhead, CPU time and memory per worker.

    python3 bench/bench_cluster.py [CORPUS] [--repeat 3]    # CPython

Counts CORPUS (default ``../shared/corpora/en-gcide-18m.txt``) with five engines of two
workers each, every one in a fresh subprocess (the script runs itself with ``--engine``),
so that each parent's peak RSS is its own:

``processes=2``
    ``purebpe.count(corpus, processes=2)``: a local ``ProcessPoolExecutor`` whose workers
    read file ranges themselves.
``dask``
    a Dask ``LocalCluster(n_workers=2, processes=True, threads_per_worker=1)``, through
    ``client.get_executor()``: the parent ships 4 MiB chunks to the worker processes.
``ray``
    a local Ray (``ray.init(num_cpus=2)``), through ``purebpe.ray_executor()``: each chunk
    is a Ray task.
``dask, shared files`` and ``ray, shared files``
    the same with ``shared_files=True``: the workers are sent byte ranges and read the
    file themselves, as the local pool's do.

Each round runs every engine once, one after the other, so that a busy machine slows them
alike; an engine's subprocess starts its workers, counts the first MB of the corpus to warm
up (imports, worker start), then counts the corpus once. The median round of ``--repeat``
is reported per engine, with the CPU time (user + system) of that count: the parent's (with
Dask's scheduler, which a ``LocalCluster`` runs in the parent), the workers' (summed), and
the other services' (Dask's nannies, Ray's raylet, GCS and helpers; Ray's workers are the
``ray::`` processes). Peak RSS is the parent's (``ru_maxrss``) and the largest worker's
(``VmHWM``; for the local pool, ``ru_maxrss`` of its reaped children). Ratios are against
``processes=2``; every engine's counts are checked against one process's (a digest of the
sorted counts). Cluster start-up is reported apart.
CPython only (Ray and Dask need it); ``psutil`` (a Dask dependency) finds the workers.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import purebpe  # noqa: E402

HERE = Path(__file__).resolve().parent
DEFAULT = HERE.parent.parent / "shared" / "corpora" / "en-gcide-18m.txt"
ENGINES = ("processes=2", "dask", "ray", "dask, shared files", "ray, shared files")


def digest(counts: purebpe.WordCounts) -> str:
    """A fingerprint of the counts: equal counts, equal digests."""
    h = hashlib.sha256()
    for word, n in sorted(counts.words.items()):
        h.update(b"%d\t%s\n" % (n, word))
    return h.hexdigest()[:16]


def peak_rss_mb(pid: int) -> float:
    """The peak resident memory of a live process (``VmHWM``), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_seconds(pids: List[int]) -> float:
    import psutil

    total = 0.0
    for pid in pids:
        try:
            times = psutil.Process(pid).cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def descendants() -> List[Any]:
    import psutil

    return psutil.Process().children(recursive=True)


def measure(
    count: Callable[[Path], purebpe.WordCounts],
    corpus: Path,
    warm_up: Path,
    workers: Callable[[], List[int]],
) -> Dict[str, Any]:
    """Count ``warm_up``, then ``corpus``: the second count's figures."""
    count(warm_up)
    worker_pids = workers()
    service_pids = [p.pid for p in descendants() if p.pid not in worker_pids]
    before = (own_cpu(), cpu_seconds(worker_pids), cpu_seconds(service_pids))
    start = time.perf_counter()
    counts = count(corpus)
    wall = time.perf_counter() - start
    worker_pids = workers()  # those started during the count too
    after = (own_cpu(), cpu_seconds(worker_pids), cpu_seconds(service_pids))
    return {
        "wall_s": wall,
        "parent_cpu_s": after[0] - before[0],
        "workers_cpu_s": after[1] - before[1],
        "services_cpu_s": after[2] - before[2],
        "digest": digest(counts),
        "worker_peak_mb": max(peak_rss_mb(pid) for pid in worker_pids),
    }


def run_engine(engine: str, corpus: Path, warm_up: Path) -> Dict[str, Any]:
    """Count ``corpus`` with one engine in this process; the figures as a dict."""
    start = time.perf_counter()
    shared = engine.endswith(", shared files")
    engine = engine.split(",")[0]
    if engine == "processes=2":
        # The pool lives for one count; its workers' CPU is known once they are reaped.
        purebpe.count(warm_up, processes=2)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = own_cpu()
        t0 = time.perf_counter()
        counts = purebpe.count(corpus, processes=2)
        wall = time.perf_counter() - t0
        reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
        result = {
            "wall_s": wall,
            "parent_cpu_s": own_cpu() - cpu,
            "workers_cpu_s": reaped.ru_utime + reaped.ru_stime - children.ru_utime - children.ru_stime,
            "services_cpu_s": 0.0,
            "digest": digest(counts),
            "worker_peak_mb": reaped.ru_maxrss / 1024,
            "startup_s": 0.0,
        }
    elif engine == "dask":
        from distributed import Client, LocalCluster

        with LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
        ) as cluster, Client(cluster) as client:
            startup = time.perf_counter() - start
            pids = sorted(client.run(os.getpid).values())
            executor = client.get_executor()
            result = measure(
                lambda path: purebpe.count(path, executor=executor, shared_files=shared),
                corpus, warm_up, lambda: pids,
            )
            result["startup_s"] = startup
    elif engine == "ray":
        with purebpe.ray_executor(num_cpus=2, include_dashboard=False, log_to_driver=False) as executor:
            startup = time.perf_counter() - start

            def ray_workers() -> List[int]:
                return sorted(p.pid for p in descendants() if p.name().startswith("ray::"))

            result = measure(
                lambda path: purebpe.count(path, executor=executor, shared_files=shared),
                corpus, warm_up, ray_workers,
            )
            result["startup_s"] = startup
    else:
        raise SystemExit(f"unknown engine {engine!r}")
    result["parent_peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("corpus", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--engine", choices=ENGINES, help=argparse.SUPPRESS)
    parser.add_argument("--warm-up", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.engine:
        print(json.dumps(run_engine(args.engine, args.corpus, args.warm_up)))
        return
    load = os.getloadavg()
    reference = digest(purebpe.count(args.corpus))
    warm_up = Path(tempfile.mkdtemp()) / "warm-up.txt"
    with open(args.corpus, "rb") as f:
        warm_up.write_bytes(f.read(1 << 20).rsplit(b"\n", 1)[0])
    rounds: Dict[str, List[Dict[str, Any]]] = {engine: [] for engine in ENGINES}
    for _ in range(args.repeat):
        for engine in ENGINES:
            child = subprocess.run(
                [sys.executable, __file__, str(args.corpus), "--engine", engine,
                 "--warm-up", str(warm_up)],
                capture_output=True, text=True, check=True,
            )
            rounds[engine].append(json.loads(child.stdout.strip().splitlines()[-1]))
    results = {
        engine: sorted(runs, key=lambda r: r["wall_s"])[len(runs) // 2]
        for engine, runs in rounds.items()
    }
    base = results["processes=2"]
    megabytes = args.corpus.stat().st_size / 1e6
    rows = []
    for engine, r in results.items():
        cpu = r["parent_cpu_s"] + r["workers_cpu_s"] + r["services_cpu_s"]
        rows.append({
            "engine (2 workers)": engine,
            "wall s": round(r["wall_s"], 2),
            "wall ratio": round(r["wall_s"] / base["wall_s"], 2),
            "MB/s": round(megabytes / r["wall_s"], 1),
            "parent CPU s": round(r["parent_cpu_s"], 2),
            "workers CPU s": round(r["workers_cpu_s"], 2),
            "services CPU s": round(r["services_cpu_s"], 2),
            "CPU ratio": round(cpu / (base["parent_cpu_s"] + base["workers_cpu_s"]), 2),
            "parent peak MB": round(r["parent_peak_mb"]),
            "worker peak MB": round(r["worker_peak_mb"]),
            "start-up s": round(r["startup_s"], 1),
            "same counts": "yes" if r["digest"] == reference else "NO",
        })
    title = f"counting {args.corpus.name} ({megabytes:.0f} MB) on 2 workers: local processes, Dask, Ray"
    columns = list(rows[0])
    print(f"## {title}\n")
    print("| " + " | ".join(columns) + " |\n|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(str(row[c]) for c in columns) + " |")
    end_load = os.getloadavg()
    notes = (f"median of {args.repeat} interleaved rounds, each after a warm-up; load average "
             f"{load[0]:.2f} before the run, {end_load[0]:.2f} after (2 cores, shared)")
    print(f"\n{notes}")
    from _results import record

    record("bench_cluster", rows, title=title, notes=notes,
           plot={"label": "engine (2 workers)", "value": "wall ratio", "log": False,
                 "xlabel": "wall time / processes=2"})


if __name__ == "__main__":
    main()
