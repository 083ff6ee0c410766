"""Benchmark results, kept in one JSON file that ``bench/plot_results.py`` turns into docs.

Every bench script's tables are recorded (by :class:`bench._harness.Script`) with::

    record("bench_wakong", rows)          # rows: a list of dicts, column -> value

and its latest figures land in ``bench/results/results.json`` under the benchmark's name
and the interpreter that ran it, replacing that interpreter's previous run and leaving
the others' alone. ``python -m bench.plot_results`` then writes the plots
(``docs/img/bench-*.png``) and ``docs/benchmarks.md``.

The file (``"format": "purebpe-bench-results-1"``)::

    {"format": ..., "benchmarks": {NAME: {INTERPRETER: {
        "date": "2026-11-21T10:00:00+00:00", "machine": {...}, "title": ..., "notes": ...,
        "plot": {...} or null, "columns": [...], "rows": [{column: value}, ...]}}}}

Writes are atomic (temporary file, then rename) and serialised by a lock file, so two
scripts finishing at once do not lose each other's results.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence

from purebpe._atomic import write_text

#: Where results are kept (committed, so the docs build needs no benchmark run).
RESULTS = Path(__file__).resolve().parent / "results" / "results.json"
FORMAT = "purebpe-bench-results-1"


def interpreter_name() -> str:
    """``"CPython 3.11.7"``, ``"PyPy 3.9.18"``: the key results are filed under;
    ``"CPython 3.11.7 compiled"`` where purebpe is the mypyc-compiled build
    (``python -m bench.compiled``)."""
    import purebpe.core

    compiled = "" if purebpe.core.__file__.endswith(".py") else " compiled"
    return f"{platform.python_implementation()} {platform.python_version()}{compiled}"


def machine_info() -> Dict[str, Any]:
    """What the figures depend on besides the code (no host name: the file is public)."""
    return {
        "system": platform.system(),
        "release": platform.release(),
        "machine": platform.machine(),
        "processor": platform.processor() or None,
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "implementation": platform.python_implementation(),
    }


def columns_of(rows: Sequence[Mapping[str, Any]]) -> List[str]:
    """Every column of ``rows``, in order of first appearance.

    >>> columns_of([{"a": 1}, {"b": 2, "a": 3}])
    ['a', 'b']
    """
    columns: List[str] = []
    for row in rows:
        columns += [column for column in row if column not in columns]
    return columns


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock beside ``path`` (where ``fcntl`` exists; else no lock)."""
    try:
        import fcntl
    except ImportError:  # Windows: runs are not concurrent there in practice
        yield
        return
    with open(path.with_name(f".{path.name}.lock.tmp"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def load(path: Path = RESULTS) -> Dict[str, Any]:
    """The results file's content (an empty one if it does not exist yet)."""
    if not path.exists():
        return {"format": FORMAT, "benchmarks": {}}
    data: Dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    if data.get("format") != FORMAT:
        raise ValueError(f"{path}: not a {FORMAT} file")
    return data


def record(
    benchmark: str,
    rows: Sequence[Mapping[str, Any]],
    *,
    interpreter: Optional[str] = None,
    title: Optional[str] = None,
    notes: Optional[str] = None,
    plot: Optional[Mapping[str, Any]] = None,
    path: Path = RESULTS,
) -> Path:
    """Save one benchmark run's table into the results file; returns the file's path.

    ``benchmark`` names the benchmark (the script's name, e.g. ``"bench_wakong"``).
    ``rows`` is the table: a list of dicts (column -> value; numbers stay numbers, and
    the plot script reads text like ``"1,234"``, ``"3.1x"`` and ``"0.52 s"`` as numbers). ``interpreter``
    defaults to the running one (``"PyPy 3.9.18"``); pass it when the figures come from another
    (a ``--peer-from`` file). ``title`` and ``notes`` are printed above and below the
    table in ``docs/benchmarks.md`` (corpus, vocab size, repeats...). ``plot`` says what
    to draw: ``{"label": column, "value": column, "log": bool, "xlabel": text}``; by
    default the first column labels the bars and the last column whose name contains
    "ratio" or "speedup" (else the last numeric column) gives their length, one bar per
    interpreter. The run replaces the previous run of the same benchmark on the same
    interpreter; other entries are kept.
    """
    table = [dict(row) for row in rows]
    if not table:
        raise ValueError(f"record({benchmark!r}): no rows")
    entry = {
        "date": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat(),
        "machine": machine_info(),
        "title": title,
        "notes": notes,
        "plot": dict(plot) if plot is not None else None,
        "columns": columns_of(table),
        "rows": table,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    with _locked(path):
        data = load(path)
        data["benchmarks"].setdefault(benchmark, {})[interpreter or interpreter_name()] = entry
        write_text(path, json.dumps(data, indent=1, ensure_ascii=False, sort_keys=True, default=str) + "\n")
    return path
