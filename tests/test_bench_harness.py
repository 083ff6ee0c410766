"""The benchmark harness (``bench/_harness.py``): its child protocol, failing children
included, its timing statistics, its options, and the tables it records for
``bench/plot_results.py``. Fast, and never reads the shared corpora."""

from __future__ import annotations

import doctest
import os
import sys
import textwrap
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

# bench/ is a package at the repository root, which pytest does not put on sys.path
# (appended, so that an installed purebpe still comes first).
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))

import purebpe  # noqa: E402
from bench import _harness, plot_results  # noqa: E402
from bench._harness import (  # noqa: E402
    QUICK_BYTES,
    ChildFailed,
    Script,
    Table,
    Timing,
    corpus_path,
    measure,
    measure_each,
    run_child,
)
from bench._results import load, record  # noqa: E402

CHILD = """
import os, sys, time
from bench._harness import Script

script = Script("toy", "A toy child.")


@script.child
def child(spec):
    print("chatter before the report")
    if "fail" in spec:
        print("some progress", file=sys.stderr)
        raise SystemExit("toy: " + spec["fail"])
    if "sleep" in spec:
        time.sleep(spec["sleep"])
    if "vanish" in spec:
        sys.stdout.flush()
        os._exit(0)
    return {"double": spec["n"] * 2, "python": sys.executable}


sys.exit(script.main())
"""


@pytest.fixture
def toy(tmp_path: Path) -> Dict[str, str]:
    """The environment under which ``python -m toy_child`` is the child above."""
    (tmp_path / "toy_child.py").write_text(textwrap.dedent(CHILD), encoding="utf-8")
    return {"PYTHONPATH": str(tmp_path)}


def test_child_reports_on_its_last_line(toy: Dict[str, str]) -> None:
    result = run_child("toy_child", {"n": 21}, env=toy)
    assert result["double"] == 42
    assert result["python"] == sys.executable
    assert result["child_wall_s"] > 0 and result["child_cpu_s"] > 0  # an interpreter's start-up
    assert result["peak_rss_mb"] > 1


def test_failing_child_is_one_line_with_its_stderr_tail(toy: Dict[str, str]) -> None:
    with pytest.raises(ChildFailed) as failed:
        run_child("toy_child", {"fail": "the corpus is gone"}, env=toy)
    line = str(failed.value)
    assert "\n" not in line
    assert line.startswith("toy_child child on ")
    assert line.endswith(": exit 1: toy: the corpus is gone")
    assert "some progress" in failed.value.tail
    assert failed.value.row() == {"error": "exit 1: toy: the corpus is gone"}


def built_copy(folder: Path, compiled: bool) -> Path:
    """A stand-in for :func:`bench._harness.compiled_build`'s folder: a copy of purebpe
    whose ``core`` is, when ``compiled``, a sourceless module (not a ``.py``, as an
    extension is) -- the real build takes a minute, too long for the suite."""
    import py_compile
    import shutil

    package = folder / "purebpe"
    shutil.copytree(
        Path(purebpe.__file__).parent, package, ignore=shutil.ignore_patterns("__pycache__", "*.so")
    )
    if compiled:
        py_compile.compile(str(package / "core.py"), cfile=str(package / "core.pyc"), doraise=True)
        (package / "core.py").unlink()
    return folder


def test_child_on_a_compiled_build_imports_it_first(toy: Dict[str, str], tmp_path: Path) -> None:
    build = built_copy(tmp_path / "build", compiled=True)
    result = run_child("toy_child", {"n": 1}, env=toy, compiled=build)
    assert result["compiled"] is True  # the build's purebpe, not the checkout's
    assert run_child("toy_child", {"n": 1}, env=toy)["compiled"] is False


def test_child_that_ran_pure_python_where_a_build_was_asked_for(toy: Dict[str, str], tmp_path: Path) -> None:
    build = built_copy(tmp_path / "pure", compiled=False)
    with pytest.raises(ChildFailed, match="ran pure Python, not the build in"):
        run_child("toy_child", {"n": 1}, env=toy, compiled=build)


def test_children_write_byte_code_as_an_installed_package_has_it(monkeypatch: Any) -> None:
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    env = _harness.child_environment({"PYTHONPATH": "/build"})
    assert "PYTHONDONTWRITEBYTECODE" not in env
    assert env["PYTHONPATH"].split(os.pathsep)[:2] == ["/build", str(ROOT)]


def test_children_of_a_script_on_the_compiled_build_run_on_it(monkeypatch: Any) -> None:
    """``python -m bench.compiled bench.X``: X's own children must not fall back to the
    checkout's pure purebpe, which the repository's place on the path would put first."""
    build = str(_harness.COMPILED_CACHE / "0123456789abcdef-CPython-3.11.7")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([build, "/elsewhere"]))
    paths = _harness.child_environment()["PYTHONPATH"].split(os.pathsep)
    assert paths == [build, str(ROOT), "/elsewhere"]


def test_source_digest_follows_the_package_sources(tmp_path: Path) -> None:
    (tmp_path / "purebpe").mkdir()
    (tmp_path / "setup.py").write_text("setup()")
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "purebpe" / "core.py").write_text("x = 1\n")
    before = _harness.source_digest(tmp_path)
    (tmp_path / "purebpe" / "notes.txt").write_text("not a source")
    assert _harness.source_digest(tmp_path) == before
    (tmp_path / "purebpe" / "core.py").write_text("x = 2\n")
    assert _harness.source_digest(tmp_path) != before


def test_child_over_its_time_limit(toy: Dict[str, str]) -> None:
    with pytest.raises(ChildFailed, match=r": over 1 s$"):
        run_child("toy_child", {"sleep": 60}, env=toy, timeout=1)


def test_child_without_a_report(toy: Dict[str, str]) -> None:
    with pytest.raises(ChildFailed, match="no JSON report on its last line"):
        run_child("toy_child", {"vanish": True}, env=toy)


def test_script_turns_a_failed_child_into_one_last_line(toy: Dict[str, str], capsys: Any) -> None:
    script = Script("parent", "A parent.")
    script.register(lambda args: Table([run_child("toy_child", {"fail": "no"}, env=toy)]))
    assert script.main(["--no-record"]) == 1
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("parent: toy_child child on ") and last.endswith("exit 1: toy: no")


class Clock:
    """A fake clock: runs advance it by the seconds they are given, CPU at half speed."""

    def __init__(self) -> None:
        self.now = 0.0

    def wall(self) -> float:
        return self.now

    def cpu(self) -> float:
        return self.now / 2


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(_harness.time, "perf_counter", fake.wall)
    monkeypatch.setattr(_harness, "cpu_seconds", fake.cpu)
    return fake


def runner(clock: Clock, name: str, seconds: List[float], log: List[str]) -> Any:
    steps: Iterator[float] = iter(seconds)

    def run() -> str:
        log.append(name)
        clock.now += next(steps)
        return name

    return run


def test_cold_pass_then_best_and_median_of_rounds(clock: Clock) -> None:
    log: List[str] = []
    timing = measure(runner(clock, "a", [5.0, 3.0, 1.0, 2.0], log), rounds=3)
    assert (timing.cold, timing.cold_cpu, timing.value) == (5.0, 2.5, "a")
    assert timing.walls == [3.0, 1.0, 2.0] and timing.cpus == [1.5, 0.5, 1.0]
    assert (timing.best, timing.median, timing.best_cpu, timing.median_cpu) == (1.0, 2.0, 0.5, 1.0)


def test_rounds_are_interleaved(clock: Clock) -> None:
    log: List[str] = []
    runs = {name: runner(clock, name, [1.0, 4.0, 2.0], log) for name in "ab"}
    timings = measure_each(runs, rounds=2)
    assert log == ["a", "b", "a", "b", "a", "b"]  # cold passes, then round by round
    assert timings["a"].walls == timings["b"].walls == [4.0, 2.0]


def test_without_a_cold_pass(clock: Clock) -> None:
    log: List[str] = []
    timing = measure(runner(clock, "a", [7.0, 3.0], log), rounds=2, cold=False)
    assert timing.cold is None and timing.value is None and timing.walls == [7.0, 3.0]


def test_median_of_an_even_number_of_rounds() -> None:
    assert Timing(walls=[4.0, 1.0, 3.0, 2.0], cpus=[1.0] * 4).median == 2.5


def test_shared_options() -> None:
    script = Script("opts", "Options.", rounds=5)
    assert script.parse([]).rounds == 5
    assert script.parse(["--repeat", "2"]).rounds == 2
    quick = script.parse(["--quick"])
    assert (quick.rounds, quick.record) == (1, False)  # quick figures are never recorded
    assert script.parse(["--quick", "--rounds", "3"]).rounds == 3


def test_quick_corpus_is_its_head_cut_at_a_line_end(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_text("a line of text\n" * (QUICK_BYTES // 10), encoding="utf-8")
    short = corpus_path(str(big), quick=True)
    data = short.read_bytes()
    assert short.name == big.name and short != big
    assert 0 < len(data) <= QUICK_BYTES and data.endswith(b"\n")
    assert big.read_bytes().startswith(data)
    assert corpus_path(str(big)) == big
    with pytest.raises(FileNotFoundError, match="corpus 'nothing-here.txt'"):
        corpus_path("nothing-here.txt", corpora=tmp_path)


def test_recorded_tables_are_what_plot_results_reads(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    table = Table([{"method": "x", "speed-up": 2.5}, {"method": "y", "speed-up": "1.25x"}], title="T")
    record("bench_toy", table.rows, title=table.title, path=results, interpreter="CPython 3.11.7")
    entry = load(results)["benchmarks"]["bench_toy"]["CPython 3.11.7"]
    assert entry["columns"] == ["method", "speed-up"]
    assert plot_results.plot_choice(entry) == ("method", "speed-up")
    assert plot_results.markdown_table(entry).splitlines()[2:] == ["| x | 2.5 |", "| y | 1.25x |"]


def test_docstring_examples() -> None:
    assert doctest.testmod(_harness).failed == 0


def test_tokenizer_adapter_matches_encode() -> None:
    model = purebpe.train_from_iterator(["hello world, hello there<|x|>"] * 20, 300, ["<|x|>"])
    tok = model.tokenizer()
    split_specials = _harness.special_splitter(tok)
    assert split_specials("hi<|x|>there") == [("hi", False), ("<|x|>", True), ("there", False)]
    words = _harness.pretokenizer_of(tok)("hello world")
    assert words == ["hello", " world"]
    ids = tok.encode("hello world")
    assert [i for w in words for i in _harness.word_cache_of(tok)[w]] == ids
    with _harness.pretokenizer_engine("scanner"):
        scanning = model.tokenizer()
    assert scanning.encode("hello world") == ids


def test_a_script_that_finds_no_corpus_stops_in_one_line(tmp_path: Path) -> None:
    script = _harness.Script("toy", "A toy script.", corpora=["missing.txt"])
    with pytest.raises(SystemExit, match="toy: no corpus to run on"):
        script.parse(["--corpora", str(tmp_path)])
