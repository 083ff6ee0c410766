"""Counting on clusters against local processes: overhead, CPU time and memory per worker.

    python -m bench.bench_cluster [--corpus CORPUS] [--rounds 3]    # CPython

Counts CORPUS (default ``en-gcide-18m.txt`` of the shared corpora) with five engines of two
workers each, every one in a child process (the script re-run with ``--child``), so that
each parent's peak RSS is its own:

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
up (imports, worker start), then counts the corpus once. The median round of ``--rounds``
is reported per engine, with the CPU time (user + system) of that count: the parent's (with
Dask's scheduler, which a ``LocalCluster`` runs in the parent), the workers' (summed), and
the other services' (Dask's nannies, Ray's raylet, GCS and helpers; Ray's workers are the
``ray::`` processes). Peak RSS is the parent's (``ru_maxrss``) and the largest worker's
(``VmHWM``; for the local pool, ``ru_maxrss`` of its reaped children). Ratios are against
``processes=2``; every engine's counts are checked against one process's (a digest of the
sorted counts). Cluster start-up is reported apart. An engine that fails (not installed)
shows why in its row; ``--engines`` picks some (``--quick``: ``processes=2`` alone).
CPython only (Ray and Dask need it); ``psutil`` (a Dask dependency) finds the workers.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List

import purebpe

from ._harness import ChildFailed, Script, Table, digest, run_child

ENGINES = ("processes=2", "dask", "ray", "dask, shared files", "ray, shared files")

script = Script("bench_cluster", __doc__, corpora=["en-gcide-18m.txt"])
script.option(
    "--engines", help="comma-separated, of: " + ", ".join(ENGINES) + " (default all; --quick: the first)"
)


def peak_rss_of(pid: int) -> float:
    """The peak resident memory of a live process (``VmHWM``), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_of(pids: List[int]) -> float:
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


def measure_cluster(
    count: Callable[[Path], purebpe.WordCounts], corpus: Path, warm_up: Path, workers: Callable[[], List[int]]
) -> Dict[str, Any]:
    """Count ``warm_up``, then ``corpus``: the second count's figures."""
    count(warm_up)
    worker_pids = workers()
    service_pids = [p.pid for p in descendants() if p.pid not in worker_pids]
    before = (own_cpu(), cpu_of(worker_pids), cpu_of(service_pids))
    start = time.perf_counter()
    counts = count(corpus)
    wall = time.perf_counter() - start
    worker_pids = workers()  # those started during the count too
    after = (own_cpu(), cpu_of(worker_pids), cpu_of(service_pids))
    return {
        "wall_s": wall,
        "parent_cpu_s": after[0] - before[0],
        "workers_cpu_s": after[1] - before[1],
        "services_cpu_s": after[2] - before[2],
        "digest": digest(sorted(counts.words.items())),
        "worker_peak_mb": max(peak_rss_of(pid) for pid in worker_pids),
    }


@script.child
def run_engine(spec: Dict[str, Any]) -> Dict[str, Any]:
    """Count the corpus with one engine in this process; the figures as a dict."""
    start = time.perf_counter()
    corpus, warm_up = Path(spec["corpus"]), Path(spec["warm_up"])
    shared = spec["engine"].endswith(", shared files")
    engine = spec["engine"].split(",")[0]
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
            "digest": digest(sorted(counts.words.items())),
            "worker_peak_mb": reaped.ru_maxrss / 1024,
            "startup_s": 0.0,
        }
    elif engine == "dask":
        from distributed import Client, LocalCluster

        with (
            LocalCluster(
                n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
            ) as cluster,
            Client(cluster) as client,
        ):
            startup = time.perf_counter() - start
            pids = sorted(client.run(os.getpid).values())
            executor = client.get_executor()
            result = measure_cluster(
                lambda path: purebpe.count(path, executor=executor, shared_files=shared),
                corpus,
                warm_up,
                lambda: pids,
            )
            result["startup_s"] = startup
    else:
        with purebpe.ray_executor(num_cpus=2, include_dashboard=False, log_to_driver=False) as executor:
            startup = time.perf_counter() - start

            def ray_workers() -> List[int]:
                return sorted(p.pid for p in descendants() if p.name().startswith("ray::"))

            result = measure_cluster(
                lambda path: purebpe.count(path, executor=executor, shared_files=shared),
                corpus,
                warm_up,
                ray_workers,
            )
            result["startup_s"] = startup
    return result


@script.register
def engines(args: argparse.Namespace) -> Table:
    corpus = args.corpus[0]
    engines = args.engines.split(",") if args.engines else list(ENGINES[: 1 if args.quick else None])
    reference = digest(sorted(purebpe.count(corpus).words.items()))
    warm_up = Path(tempfile.mkdtemp()) / "warm-up.txt"
    with open(corpus, "rb") as f:
        warm_up.write_bytes(f.read(1 << 20).rsplit(b"\n", 1)[0])
    rounds: Dict[str, List[Dict[str, Any]]] = {engine: [] for engine in engines}
    for _ in range(args.rounds):
        for engine in engines:
            spec = {"corpus": str(corpus), "warm_up": str(warm_up), "engine": engine}
            try:
                rounds[engine].append(run_child("bench.bench_cluster", spec))
            except ChildFailed as failure:
                print(failure, file=sys.stderr)
                rounds[engine].append(failure.row())
    results = {
        engine: sorted(runs, key=lambda r: r.get("wall_s", 0))[len(runs) // 2]
        for engine, runs in rounds.items()
    }
    base = results[engines[0]]
    megabytes = corpus.stat().st_size / 1e6
    rows: List[Dict[str, Any]] = []
    for engine, r in results.items():
        if "error" in r:
            rows.append({"engine (2 workers)": engine, "wall s": f"skipped: {r['error']}"})
            continue
        cpu = r["parent_cpu_s"] + r["workers_cpu_s"] + r["services_cpu_s"]
        rows.append(
            {
                "engine (2 workers)": engine,
                "wall s": round(r["wall_s"], 2),
                "wall ratio": round(r["wall_s"] / base["wall_s"], 2),
                "MB/s": round(megabytes / r["wall_s"], 1),
                "parent CPU s": round(r["parent_cpu_s"], 2),
                "workers CPU s": round(r["workers_cpu_s"], 2),
                "services CPU s": round(r["services_cpu_s"], 2),
                "CPU ratio": round(cpu / (base["parent_cpu_s"] + base["workers_cpu_s"]), 2),
                "parent peak MB": round(r["peak_rss_mb"]),
                "worker peak MB": round(r["worker_peak_mb"]),
                "start-up s": round(r["startup_s"], 1),
                "same counts": "yes" if r["digest"] == reference else "NO",
            }
        )
    return Table(
        rows,
        title=f"counting {corpus.name} ({megabytes:.0f} MB) on 2 workers: local processes, Dask, Ray",
        notes=f"median of {args.rounds} interleaved rounds, each after a warm-up",
        plot={
            "label": "engine (2 workers)",
            "value": "wall ratio",
            "log": False,
            "xlabel": "wall time / processes=2",
        },
    )


if __name__ == "__main__":
    sys.exit(script.main())
