"""The one harness every benchmark script runs on: options, timing, child runs, tables.

A script is a handful of registered measurements (as in sortedcontainers'
``tests/benchmark.py``)::

    script = Script("bench_wakong", __doc__, rounds=5)
    script.option("--schemes", type=int, default=10_000)

    @script.register
    def schemes_per_second(args):               # the parsed options
        timings = measure_each({"purebpe": ...}, args.rounds)
        return Table(rows=[...], title="...")   # printed, then recorded

    if __name__ == "__main__":
        sys.exit(script.main())

and runs as ``python -m bench.bench_wakong [--quick] [--rounds N] ...``. What the harness
does once for all of them:

* **options** shared by every script: ``--rounds`` (``--repeat``), ``--quick`` (the
  smallest corpus, one round, nothing recorded: to check a script end to end), ``--no-record``, ``--only``;
  where the script asks for them, ``--python``/``--pypy`` (the interpreters its children
  run on), ``--compiled``/``--no-compiled`` (a CPython child on the mypyc-compiled build
  too, see :func:`compiled_build`) and ``--corpus``/``--corpora`` (the texts; bare names are looked up in the
  shared corpora directory, ``pydoc`` is the ``pydoc_data`` text every Python ships);
* **timing**: :func:`measure` and :func:`measure_each` (interleaved) time a cold pass then
  ``rounds`` warm ones, with wall time and CPU time (this process's and its reaped
  children's, user + system) side by side, best and median;
* **children**: :func:`run_child` re-runs a script as ``python -m MODULE --child SPEC``
  under any interpreter, reads its report from the last line of its output, and adds the
  child's wall time, CPU time (``RUSAGE_CHILDREN``) and peak RSS; a child that fails
  raises :class:`ChildFailed`, one line with the tail of its stderr;
* **results**: a :class:`Table` is printed as Markdown and recorded with
  :func:`bench._results.record` into ``bench/results/results.json``.

The section at the end takes ``Tokenizer.encode`` apart into its stages (for profiles),
through the tokenizer's public hooks.
"""

from __future__ import annotations

import argparse
import atexit
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Union

import attrs

from ._results import columns_of, interpreter_name, record

ROOT = Path(__file__).resolve().parent.parent
Result = Dict[str, Any]
#: How much of a corpus ``--quick`` keeps (cut at a line end).
QUICK_BYTES = 256 * 1024


# ------------------------------------------------------------------------------------------
# Corpora
# ------------------------------------------------------------------------------------------
def corpora_dir() -> Path:
    """Where the shared corpora are: ``$PUREBPE_CORPORA``, else ``shared/corpora`` in the
    first folder above the repository that has one (a checkout or a worktree)."""
    if os.environ.get("PUREBPE_CORPORA"):
        return Path(os.environ["PUREBPE_CORPORA"])
    for folder in ROOT.parents:
        if (folder / "shared" / "corpora").is_dir():
            return folder / "shared" / "corpora"
    return ROOT.parent / "shared" / "corpora"


def corpus_path(name: str, corpora: Optional[Path] = None, quick: bool = False) -> Path:
    """The file ``name`` stands for: a path, a file of the corpora directory, or
    ``"pydoc"`` (written to a temporary file). ``quick`` gives its first
    :data:`QUICK_BYTES` instead (a temporary copy cut at a line end)."""
    if name == "pydoc":  # the pydoc_data topics: 466 KB of English every interpreter ships
        from purebpe.corpus import default_corpus

        path = _scratch() / "pydoc_data.topics.txt"
        if not path.exists():
            path.write_text("\n\n".join(default_corpus()), encoding="utf-8")
    else:
        path = Path(name)
        if not path.exists() and not path.is_absolute():
            path = (corpora or corpora_dir()) / name
        if not path.exists():
            raise FileNotFoundError(f"corpus {name!r}: {path} not found")
    if not quick or path.stat().st_size <= QUICK_BYTES:
        return path
    with open(path, "rb") as f:
        head = f.read(QUICK_BYTES)
    short = _scratch() / "quick" / path.name  # the same name: the same table columns
    short.parent.mkdir(exist_ok=True)
    short.write_bytes(head[: head.rfind(b"\n") + 1] or head)
    return short


@lru_cache(maxsize=None)
def _scratch() -> Path:
    """A temporary folder for this run's corpus copies, removed when the run ends."""
    path = tempfile.mkdtemp(prefix="purebpe-bench-")
    atexit.register(shutil.rmtree, path, True)
    return Path(path)


def digest(items: Iterable[Any]) -> str:
    """A fingerprint of a sequence (ids, merges, counts), the same on every interpreter.

    >>> digest([1, 2]) == digest(iter([1, 2])) != digest([12])
    True
    """
    h = hashlib.sha256()
    for item in items:
        h.update(repr(item).encode("utf-8") + b"\n")
    return h.hexdigest()[:16]


def fmt(value: Optional[float], digits: int = 2) -> str:
    """A table cell: ``value`` with ``digits`` decimals, or empty for ``None``.

    >>> fmt(1.234), fmt(None), fmt(2, 0)
    ('1.23', '', '2')
    """
    return "" if value is None else f"{value:.{digits}f}"


def chunks_of(text: str, size: int = 1 << 20) -> List[str]:
    """Pieces of about ``size`` characters, each ending at a newline where possible.

    >>> chunks_of("ab\\ncd\\nef", 1)
    ['ab\\n', 'cd\\n', 'ef']
    """
    pieces = []
    start = 0
    while start < len(text):
        end = text.find("\n", start + size)
        end = len(text) if end < 0 else end + 1
        pieces.append(text[start:end])
        start = end
    return pieces


# ------------------------------------------------------------------------------------------
# Clocks and timing
# ------------------------------------------------------------------------------------------
def children_cpu_seconds() -> float:
    """CPU time (user + system) of the children this process has reaped (0 on Windows)."""
    try:
        import resource
    except ImportError:
        return 0.0
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return children.ru_utime + children.ru_stime


def cpu_seconds() -> float:
    """CPU time of this process and of the children it has reaped (counting pools)."""
    return time.process_time() + children_cpu_seconds()


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MB."""
    try:
        import resource
    except ImportError:
        return float("nan")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20) if sys.platform == "darwin" else peak / 1024  # bytes vs KiB


@attrs.frozen
class Timing:
    """The seconds of a cold pass (``None`` when there was none) and of each warm round,
    in wall time and in CPU time; ``value`` is what the cold pass returned.

    >>> t = Timing(walls=[3.0, 1.0, 2.0], cpus=[2.5, 1.0, 1.5])
    >>> t.best, t.median, t.best_cpu, t.median_cpu
    (1.0, 2.0, 1.0, 1.5)
    """

    walls: List[float]
    cpus: List[float]
    cold: Optional[float] = None
    cold_cpu: Optional[float] = None
    value: Any = None

    @property
    def best(self) -> float:
        return min(self.walls)

    @property
    def median(self) -> float:
        return statistics.median(self.walls)

    @property
    def best_cpu(self) -> float:
        return min(self.cpus)

    @property
    def median_cpu(self) -> float:
        return statistics.median(self.cpus)


def timed(run: Callable[..., Any], *args: Any, **kwargs: Any) -> "tuple[Any, float, float]":
    """``(run(*args, **kwargs), wall seconds, CPU seconds)``.

    >>> value, wall, cpu = timed(sum, [1, 2])
    >>> value, wall >= 0, cpu >= 0
    (3, True, True)
    """
    wall, cpu = time.perf_counter(), cpu_seconds()
    value = run(*args, **kwargs)
    return value, time.perf_counter() - wall, cpu_seconds() - cpu


def measure_each(
    runs: Mapping[str, Callable[[], Any]], rounds: int, *, cold: bool = True
) -> Dict[str, Timing]:
    """Time each run: one cold pass (the first: JIT warm-up, empty caches; what it returns
    is kept as the timing's ``value``), then ``rounds`` warm passes. The rounds are interleaved, every run
    once per round, so that a change in a shared machine's load hits every run alike.

    >>> timings = measure_each({"a": lambda: None, "b": lambda: None}, rounds=2)
    >>> sorted(timings), len(timings["a"].walls), timings["a"].cold is not None
    (['a', 'b'], 2, True)
    """
    walls: Dict[str, List[float]] = {name: [] for name in runs}
    cpus: Dict[str, List[float]] = {name: [] for name in runs}
    first: Dict[str, "tuple[Any, float, float]"] = {}
    if cold:
        first = {name: timed(run) for name, run in runs.items()}
    for _ in range(max(rounds, 1)):
        for name, run in runs.items():
            _, wall, cpu = timed(run)
            walls[name].append(wall)
            cpus[name].append(cpu)
    return {
        name: Timing(walls[name], cpus[name], first[name][1], first[name][2], first[name][0])
        if cold
        else Timing(walls[name], cpus[name])
        for name in runs
    }


def measure(run: Callable[[], Any], rounds: int, *, cold: bool = True) -> Timing:
    """:func:`measure_each` of one run.

    >>> len(measure(lambda: None, rounds=3).walls)
    3
    """
    return measure_each({"run": run}, rounds, cold=cold)["run"]


class RssPeak:
    """Samples this process's resident memory every 2 ms in a thread, between ``start()``
    and ``stop()``, which returns the peak in bytes (for the growth during one call, where
    ``ru_maxrss`` would give the whole process's peak)."""

    def __init__(self) -> None:
        self.peak = rss_bytes()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.sample, daemon=True)

    def sample(self) -> None:
        while not self.done.wait(0.002):
            self.peak = max(self.peak, rss_bytes())

    def start(self) -> "RssPeak":
        self.thread.start()
        return self

    def stop(self) -> int:
        self.done.set()
        self.thread.join()
        return max(self.peak, rss_bytes())


def rss_bytes() -> int:
    """This process's resident memory now (Linux ``/proc``; elsewhere its peak so far)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return int(peak_rss_mb() * 1024 * 1024)


# ------------------------------------------------------------------------------------------
# Children: ``python -m MODULE --child SPEC``, the report on the last line of stdout
# ------------------------------------------------------------------------------------------
class ChildFailed(RuntimeError):
    """A child run that failed: ``str()`` is one line (what ran, and why: the last line of
    its stderr, or the time limit it ran over); ``tail`` is the end of its stderr."""

    def __init__(self, what: str, reason: str, tail: str = "") -> None:
        super().__init__(f"{what}: {reason}")
        self.reason = reason
        self.tail = tail

    def row(self) -> Result:
        """What a table shows in place of the run's figures: ``{"error": reason}``."""
        return {"error": self.reason[:100]}


def run_child(
    module: str,
    spec: Mapping[str, Any],
    *,
    python: str = sys.executable,
    env: Optional[Mapping[str, str]] = None,
    timeout: Optional[float] = None,
    compiled: Optional[Path] = None,
) -> Result:
    """Run ``python -m module --child JSON(spec)`` and return the dict its last line holds,
    with what the parent measured added: ``child_wall_s``, ``child_cpu_s`` (user + system
    of the child and every process it reaped) and ``stderr``; the child adds its own
    ``peak_rss_mb``. The child's environment is :func:`child_environment`'s, so this
    checkout's purebpe and ``bench`` are what run.
    ``compiled`` (a :func:`compiled_build` folder) puts that build of purebpe first on the
    child's path (and runs the child there: paths in ``spec`` must be absolute), and
    checks that the child ran on its extensions.
    Raises :class:`ChildFailed` when the child exits non-zero, runs over ``timeout``
    seconds, prints no JSON last line, or ran pure Python where ``compiled`` was asked for.
    """
    command = [python, "-m", module, "--child", json.dumps(spec)]
    what = (
        f"{module} child on {Path(python).name}{' (compiled)' if compiled else ''} ({json.dumps(spec)[:120]})"
    )
    if compiled is not None:
        env = dict(
            env or {},
            PYTHONPATH=os.pathsep.join(p for p in (str(compiled), (env or {}).get("PYTHONPATH")) if p),
        )
    wall, cpu = time.perf_counter(), children_cpu_seconds()
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            text=True,
            env=child_environment(env),
            timeout=timeout,
            # ``-m`` puts the working directory first on the path: in the checkout, its
            # pure purebpe would shadow the build (which holds no ``bench``).
            cwd=compiled,
        )
    except subprocess.TimeoutExpired as expired:
        stderr = expired.stderr.decode("utf-8", "replace") if isinstance(expired.stderr, bytes) else ""
        raise ChildFailed(what, f"over {timeout:.0f} s", stderr[-3000:]) from None
    wall, cpu = time.perf_counter() - wall, children_cpu_seconds() - cpu
    last = (done.stderr.strip().splitlines() or ["no output on stderr"])[-1]
    if done.returncode != 0:
        raise ChildFailed(what, f"exit {done.returncode}: {last}", done.stderr[-3000:])
    try:
        result: Result = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise ChildFailed(what, f"no JSON report on its last line: {last}", done.stderr[-3000:]) from None
    if compiled is not None and not result.get("compiled"):
        raise ChildFailed(what, f"ran pure Python, not the build in {compiled}", done.stderr[-3000:])
    result.update(child_wall_s=wall, child_cpu_s=cpu, stderr=done.stderr)
    return result


def child_environment(env: Optional[Mapping[str, str]] = None) -> Dict[str, str]:
    """This process's environment updated with ``env``, the repository on ``PYTHONPATH``
    after ``env``'s (a compiled build, which holds only ``purebpe``) and before this
    process's, except a compiled build this process runs on (:mod:`bench.compiled`): its
    children run on it too. Byte code is written (``PYTHONDONTWRITEBYTECODE`` is dropped)."""
    inherited = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    builds = [p for p in inherited if Path(p).parent == COMPILED_CACHE]
    rest = [p for p in inherited if p not in builds]
    paths = [(env or {}).get("PYTHONPATH"), *builds, str(ROOT), *rest]
    merged = dict(os.environ, **dict(env or {}, PYTHONPATH=os.pathsep.join(p for p in paths if p)))
    # Children write and reuse byte code, as an installed package has it: without, each
    # child compiles purebpe's sources again (0.06 s of CPython's start-up, 0.07 s of
    # PyPy's), which its peers, installed, never pay.
    merged.pop("PYTHONDONTWRITEBYTECODE", None)
    return merged


#: Where :func:`compiled_build` keeps its builds, one folder per source digest.
COMPILED_CACHE = Path(
    os.environ.get("PUREBPE_COMPILED_CACHE", Path.home() / ".cache" / "purebpe-bench" / "compiled")
)


def source_digest(root: Path = ROOT) -> str:
    """A digest of what the compiled build is made from: ``setup.py``, ``pyproject.toml``
    and every ``.py`` file of the package (changed code, a new build)."""
    h = hashlib.sha256()
    for path in [root / "setup.py", root / "pyproject.toml"] + sorted((root / "purebpe").rglob("*.py")):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:16]


@lru_cache(maxsize=None)
def compiled_build(python: str = sys.executable) -> Path:
    """A folder holding this checkout's ``purebpe`` as the mypyc-compiled build for
    ``python`` (``PUREBPE_COMPILE=1``, docs/compiled.md), to put first on a child's
    ``PYTHONPATH``. Built once per source digest (a minute or two) into
    :data:`COMPILED_CACHE`, from a copy of the sources (the checkout gets no ``build/``),
    with the mypy installed for ``python``; raises :class:`ChildFailed` when the build
    fails (no mypy or no C compiler)."""
    target = COMPILED_CACHE / f"{source_digest()}-{interpreter_label(python).replace(' ', '-')}"
    if (target / "purebpe").is_dir():
        return target
    with tempfile.TemporaryDirectory(prefix="purebpe-compile-") as scratch:
        source = Path(scratch) / "src"
        source.mkdir()
        for name in ("setup.py", "pyproject.toml", "README.md", "LICENSE"):
            if (ROOT / name).exists():
                shutil.copy2(ROOT / name, source / name)
        shutil.copytree(
            ROOT / "purebpe", source / "purebpe", ignore=shutil.ignore_patterns("__pycache__", "*.so")
        )
        print(f"building the compiled purebpe for {python} (once per source digest) ...", file=sys.stderr)
        # build_ext --inplace: the extensions land beside their sources (and mypyc's shared
        # runtime library beside the package), which is what a child imports.
        command = [python, "setup.py", "-q", "build_ext", "--inplace", "-j", str(os.cpu_count() or 1)]
        built = subprocess.run(
            command, cwd=source, capture_output=True, text=True, env=dict(os.environ, PUREBPE_COMPILE="1")
        )
        if built.returncode != 0 or not list((source / "purebpe").glob("core.*.so")):
            raise ChildFailed(
                "the compiled build", f"setup.py build_ext exit {built.returncode}", built.stderr[-3000:]
            )
        shutil.rmtree(source / "build", ignore_errors=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(target, ignore_errors=True)
        shutil.move(str(source), str(target))
    return target


def running_compiled() -> bool:
    """Whether this process's purebpe is the compiled build (its ``core`` an extension)."""
    import purebpe.core

    return not purebpe.core.__file__.endswith(".py")


@lru_cache(maxsize=None)
def interpreter_label(python: str) -> str:
    """``"PyPy 3.9.16"`` for an interpreter's path (the path itself if it does not run)."""
    if python == sys.executable:
        return interpreter_name()
    code = "import platform; print(platform.python_implementation(), platform.python_version())"
    try:
        probe = subprocess.run([python, "-c", code], capture_output=True, text=True)
    except OSError:
        return python
    return probe.stdout.strip() or python


@lru_cache(maxsize=None)
def importable(python: str, module: str) -> bool:
    """Whether ``python`` can import ``module`` (with this repository on its path)."""
    try:
        return (
            subprocess.run(
                [python, "-c", f"import {module}"], capture_output=True, env=child_environment()
            ).returncode
            == 0
        )
    except OSError:
        return False


def find_compiled(python: str) -> Optional[Path]:
    """The compiled build for ``python`` (see :func:`compiled_build`), or ``None`` (said on
    stderr) where it cannot be built: no mypyc there, or the build failed."""
    if not importable(python, "mypyc"):
        print(f"(no mypyc for {python}: no compiled rows)", file=sys.stderr)
        return None
    try:
        return compiled_build(python)
    except ChildFailed as failure:
        print(f"{failure.tail}\n({failure}: no compiled rows)", file=sys.stderr)
        return None


def find_pypy(given: Optional[str]) -> Optional[str]:
    """The PyPy to run on: ``given`` (``"none"``: none), else ``$PUREBPE_PYPY``, else
    ``pypy3`` on the ``PATH`` if it can import purebpe."""
    if given:
        return None if given == "none" else given
    found = os.environ.get("PUREBPE_PYPY") or shutil.which("pypy3")
    return found if found and importable(found, "purebpe") else None


# ------------------------------------------------------------------------------------------
# Tables and scripts
# ------------------------------------------------------------------------------------------
@attrs.define
class Table:
    """One result table: printed as Markdown under its title, then recorded under
    ``Script.name`` + ``suffix`` (see :func:`bench._results.record` for ``plot`` and
    ``interpreter``; ``"all"`` when the rows come from several interpreters). ``ok=False``
    makes the script exit 1 (a check that failed); ``record=False`` only prints it."""

    rows: List[Mapping[str, Any]]
    title: Optional[str] = None
    notes: Optional[str] = None
    suffix: str = ""
    plot: Optional[Mapping[str, Any]] = None
    interpreter: Optional[str] = None
    ok: bool = True
    record: bool = True

    def markdown(self) -> str:
        """The rows as a Markdown table (columns in order of first appearance).

        >>> print(Table([{"a": 1, "b": "x"}, {"a": 2.5}]).markdown())
        | a | b |
        |---|---|
        | 1 | x |
        | 2.5 |  |
        """
        columns = columns_of(self.rows)
        lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        for row in self.rows:
            cells = ("" if row.get(c) is None else str(row[c]).replace("|", "\\|") for c in columns)
            lines.append("| " + " | ".join(cells) + " |")
        return "\n".join(lines)


Measurement = Callable[[argparse.Namespace], Union[Table, Iterable[Table], None]]


class Script:
    """A benchmark script: its options, its measurements and its child side.

    ``rounds`` is the default of ``--rounds``; ``corpora`` (names, see
    :func:`corpus_path`, or patterns like ``"*.txt"`` in the corpora directory) the
    default of ``--corpus``, which only scripts that give it get,
    as ``--python``/``--pypy`` only those with ``interpreters=True``.
    """

    def __init__(
        self,
        name: str,
        doc: Optional[str],
        *,
        rounds: int = 3,
        corpora: Sequence[str] = (),
        interpreters: bool = False,
    ) -> None:
        self.name = name
        self.measurements: List[Measurement] = []
        self.child_side: Optional[Callable[[Result], Result]] = None
        self.corpora = list(corpora)
        self.load = float("nan")
        self.parser = parser = argparse.ArgumentParser(
            description=(doc or name).strip().split("\n")[0],
            epilog="shared options: see bench/_harness.py",
        )
        parser.add_argument(
            "--rounds",
            "--repeat",
            type=int,
            default=None,
            help=f"timed rounds; best and median are reported (default {rounds}; --quick: 1)",
        )
        parser.add_argument(
            "--quick",
            action="store_true",
            help="smallest corpus and fewest rounds, nothing recorded: check the script end to end",
        )
        parser.add_argument(
            "--no-record",
            dest="record",
            action="store_false",
            help="print the tables, do not save them into bench/results/results.json",
        )
        parser.add_argument(
            "--only", action="append", default=[], help="run only this measurement (repeatable)"
        )
        parser.add_argument("--child", help=argparse.SUPPRESS)
        parser.set_defaults(default_rounds=rounds)
        if corpora:
            parser.add_argument(
                "--corpus",
                action="append",
                default=[],
                help=(
                    f"a text file, a name in --corpora, or 'pydoc' (repeatable; default {', '.join(corpora)})"
                ),
            )
            parser.add_argument("--corpora", type=Path, default=None, help="the shared corpora directory")
        if interpreters:
            parser.add_argument(
                "--python",
                default=sys.executable if platform.python_implementation() == "CPython" else "python3",
                help="the CPython that runs the peers (default: this one, else python3)",
            )
            parser.add_argument(
                "--pypy", help="a PyPy to run purebpe on too ('none': none; default $PUREBPE_PYPY or pypy3)"
            )
            parser.add_argument(
                "--compiled",
                action=argparse.BooleanOptionalAction,
                default=True,
                help="run purebpe on the mypyc-compiled build of --python too (built once per "
                "source digest into $PUREBPE_COMPILED_CACHE; default on; --no-compiled: not)",
            )

    def option(self, *names: str, **kwargs: Any) -> None:
        """Add a script's own option (``argparse.add_argument``'s arguments)."""
        self.parser.add_argument(*names, **kwargs)

    def register(self, measurement: Measurement) -> Measurement:
        """Add a measurement: called with the parsed options, it returns its table(s)."""
        self.measurements.append(measurement)
        return measurement

    def child(self, side: Callable[[Result], Result]) -> Callable[[Result], Result]:
        """Set what ``--child SPEC`` runs: ``side(spec)`` returns the dict to report."""
        self.child_side = side
        return side

    def parse(self, argv: Optional[Sequence[str]] = None) -> argparse.Namespace:
        """The options, with ``--rounds``, ``--corpus`` and ``--pypy`` resolved (not for a child)."""
        args = self.parser.parse_args(argv)
        if args.child is not None:
            return args
        if args.rounds is None:
            args.rounds = 1 if args.quick else args.default_rounds
        args.record &= not args.quick  # quick figures must not replace real ones
        if hasattr(args, "corpus"):
            names = [
                str(p)
                for n in args.corpus or self.corpora
                for p in ([n] if "*" not in n else sorted((args.corpora or corpora_dir()).glob(n)))
            ]
            args.corpus = [corpus_path(n, args.corpora, args.quick) for n in names if _found(n, args.corpora)]
            if not args.corpus:
                raise SystemExit(f"{self.name}: no corpus to run on (--corpus, or --corpora for the folder)")
        if hasattr(args, "pypy"):
            args.pypy = find_pypy(args.pypy)
        if hasattr(args, "compiled"):
            args.compiled = find_compiled(args.python) if args.compiled else None
        return args

    def main(self, argv: Optional[Sequence[str]] = None) -> int:
        """Run the child side (``--child SPEC``) or every measurement; the exit status."""
        args = self.parse(argv)
        if args.child is not None:
            assert self.child_side is not None, f"{self.name} has no child side"
            result = self.child_side(json.loads(args.child))
            result.setdefault("peak_rss_mb", peak_rss_mb())
            result.setdefault("compiled", running_compiled())
            print(json.dumps(result))  # the report: the last line of stdout
            return 0
        self.load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(
            f"{self.name} on {interpreter_name()}, {os.cpu_count()} CPUs, load average {self.load:.2f}",
            file=sys.stderr,
        )
        status = 0
        try:
            for measurement in self.measurements:
                if args.only and measurement.__name__ not in args.only:
                    continue
                produced = measurement(args)
                for table in [produced] if isinstance(produced, Table) else produced or []:
                    self.show(table, args.record)
                    status |= not table.ok
        except ChildFailed as failure:
            print(f"{failure.tail}\n{self.name}: {failure}", file=sys.stderr)
            return 1
        except FileNotFoundError as missing:  # a corpus or a peer's file
            print(f"{self.name}: {missing}", file=sys.stderr)
            return 1
        return status

    def show(self, table: Table, save: bool) -> None:
        """Print ``table``; record it unless ``save`` is false or the table says not to.
        The notes get the load average at the start: a busy machine slows wall time."""
        load = f"Load average {self.load:.2f} at the start, {os.cpu_count()} CPUs (a shared machine)."
        table.notes = f"{table.notes.rstrip('.')}. {load}" if table.notes else load
        print(
            f"\n### {table.title or self.name}\n\n{table.markdown()}\n"
            + (f"\n{table.notes}\n" if table.notes else "")
        )
        if save and table.record and table.rows:
            record(
                self.name + table.suffix,
                table.rows,
                interpreter=table.interpreter,
                title=table.title,
                notes=table.notes,
                plot=table.plot,
            )


def _found(name: str, corpora: Optional[Path]) -> bool:
    """Whether a corpus exists (``pydoc`` always does); says so on stderr when not."""
    if name == "pydoc" or Path(name).exists() or (corpora or corpora_dir()).joinpath(name).exists():
        return True
    print(f"(skipping corpus {name}: not found)", file=sys.stderr)
    return False


# ------------------------------------------------------------------------------------------
# The stages of ``purebpe.Tokenizer.encode``, through its public hooks (for profiles).
# ------------------------------------------------------------------------------------------
def special_splitter(tok: Any) -> Callable[[str], List["tuple[str, bool]"]]:
    """``text -> [(piece, is_special)]``, every special token of ``tok`` allowed: the first
    stage of ``encode`` (public already, through :mod:`purebpe.specials`)."""
    from purebpe.specials import special_pattern, split_keep_specials

    pattern = special_pattern(frozenset(tok.special_tokens))
    return lambda text: split_keep_specials(text, pattern)


def pretokenizer_of(tok: Any) -> Callable[[str], List[str]]:
    """The pre-tokenizer ``tok.encode`` uses, engine included."""
    return tok.pretokenize  # type: ignore[no-any-return]


def word_cache_of(tok: Any) -> Mapping[str, List[int]]:
    """The pre-token -> ids cache ``tok.encode`` fills."""
    return tok.word_cache  # type: ignore[no-any-return]


@contextmanager
def pretokenizer_engine(engine: str) -> Iterator[None]:
    """Tokenizers built inside use the pre-tokenizer ``engine`` (``"scanner"``, ``"re"``,
    ``"regex"``): the module default :data:`purebpe.tokenizer.ENGINE` is swapped."""
    import purebpe.tokenizer as module

    saved, module.ENGINE = module.ENGINE, engine
    try:
        yield
    finally:
        module.ENGINE = saved
