"""The ``purebpe`` commands that read a corpus restart themselves with a small GC nursery on
PyPy where the CPU cache reported would give a huge one (purebpe/pypy_nursery.py).

Each interpreter start is observed from outside: a ``sitecustomize`` on ``PYTHONPATH``
appends the ``PYPY_GC_NURSERY`` and ``PYPY_GC_MAJOR_COLLECT`` it starts with to a log.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
from pathlib import Path
from typing import List, Optional

import pytest

import purebpe

pytestmark = pytest.mark.skipif(
    platform.python_implementation() != "PyPy", reason="the GC nursery is PyPy's (CPython has none)"
)

PACKAGE_ROOT = str(Path(purebpe.__file__).resolve().parent.parent)
MB = 1 << 20


def reported_nursery_bytes() -> Optional[int]:
    """Half the cache /proc/cpuinfo reports: the nursery PyPy picks by default."""
    try:
        cpuinfo = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    found = re.search(r"^cache size\s*:\s*(\d+)\s*KB", cpuinfo, re.MULTILINE)
    return int(found.group(1)) * 1024 // 2 if found else None


def starts(
    tmp_path: Path,
    input_bytes: int,
    nursery: Optional[str] = None,
    command: str = "count",
    major: Optional[str] = None,
) -> List[str]:
    """Run ``purebpe count`` (or ``encode``, or ``mask``) on an input of ``input_bytes`` and
    return the ``nursery/major collection`` settings each interpreter start saw."""
    log = tmp_path / "starts.log"
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import os\n"
        f"with open({str(log)!r}, 'a') as f:\n"
        "    env = os.environ\n"
        "    f.write(env.get('PYPY_GC_NURSERY', '-') + '/' + env.get('PYPY_GC_MAJOR_COLLECT', '-') + '\\n')\n"
    )
    corpus = tmp_path / "corpus.txt"
    line = b"the quick brown fox jumps over the lazy dog 12345\n"
    corpus.write_bytes(line * (input_bytes // len(line) + 1))
    env = {k: v for k, v in os.environ.items() if k not in ("PYPY_GC_NURSERY", "PYPY_GC_MAJOR_COLLECT")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), PACKAGE_ROOT])
    if nursery is not None:
        env["PYPY_GC_NURSERY"] = nursery
    if major is not None:
        env["PYPY_GC_MAJOR_COLLECT"] = major
    out = tmp_path / "out"
    arguments = [str(corpus), "-o", str(out), "--max-chars", "1000", "--progress", "none"]
    if command == "mask":
        arguments = [str(corpus)]  # to stdout
        out = corpus
    if command == "encode":
        model = tmp_path / "model"
        purebpe.train(str(corpus), vocab_size=260).save(str(model))
        arguments += ["--tokenizer", str(model)]
    done = subprocess.run(
        [sys.executable, "-m", "purebpe", command, *arguments],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert out.exists()
    return log.read_text().split()


def restarted(major: str = "-") -> List[str]:
    """The starts of a command that restarts on this machine (``major``: the major
    collection it restarts with)."""
    nursery = reported_nursery_bytes()
    return ["-/-", f"4MB/{major}"] if nursery is not None and nursery > 16 * MB else ["-/-"]


def test_a_command_reading_a_corpus_restarts_once_with_a_small_nursery_where_the_default_is_huge(
    tmp_path: Path,
) -> None:
    for case in ("large", "small", "encode", "mask", "yours"):
        (tmp_path / case).mkdir()
    assert starts(tmp_path / "large", 17 * MB) == restarted()
    assert starts(tmp_path / "small", 1000) == restarted()
    # encode also collects its old generation later; a setting of yours stays.
    assert starts(tmp_path / "encode", 1000, command="encode") == restarted("2.5")
    assert starts(tmp_path / "yours", 1000, command="encode", major="1.5")[-1].endswith("/1.5")
    assert starts(tmp_path / "mask", 1000, command="mask") == restarted()


def test_a_nursery_of_yours_or_another_command_never_restarts(tmp_path: Path) -> None:
    assert starts(tmp_path, 17 * MB, nursery="8MB") == ["8MB/-"]
    log = tmp_path / "starts.log"
    log.unlink()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path / "site"), PACKAGE_ROOT]))
    env.pop("PYPY_GC_NURSERY", None)
    done = subprocess.run(
        [sys.executable, "-m", "purebpe", "--version"], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert log.read_text().split() == ["-/-"]
