"""The ``purebpe`` command restarts itself with a small GC nursery on PyPy where the CPU cache
reported would give a huge one, for large inputs only (purebpe/cli/pypy_nursery.py).

Each interpreter start is observed from outside: a ``sitecustomize`` on ``PYTHONPATH``
appends the ``PYPY_GC_NURSERY`` it starts with to a log.
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


def starts(tmp_path: Path, input_bytes: int, nursery: Optional[str] = None) -> List[str]:
    """Run ``purebpe count`` on an input of ``input_bytes`` and return the nursery setting
    each interpreter start saw."""
    log = tmp_path / "starts.log"
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import os\n"
        f"with open({str(log)!r}, 'a') as f:\n"
        "    f.write(os.environ.get('PYPY_GC_NURSERY', '-') + '\\n')\n"
    )
    corpus = tmp_path / "corpus.txt"
    line = b"the quick brown fox jumps over the lazy dog 12345\n"
    corpus.write_bytes(line * (input_bytes // len(line) + 1))
    env = {k: v for k, v in os.environ.items() if k != "PYPY_GC_NURSERY"}
    env["PYTHONPATH"] = os.pathsep.join([str(site), PACKAGE_ROOT])
    if nursery is not None:
        env["PYPY_GC_NURSERY"] = nursery
    out = tmp_path / "counts.tsv"
    command = [sys.executable, "-m", "purebpe", "count", str(corpus), "-o", str(out)]
    done = subprocess.run(
        command + ["--max-chars", "1000", "--progress", "none"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("counted "), (done.stdout, done.stderr)
    assert out.exists()
    return log.read_text().split()


def test_a_large_input_restarts_once_with_a_small_nursery_where_the_default_is_huge(tmp_path: Path) -> None:
    nursery = reported_nursery_bytes()
    expected = ["-", "4MB"] if nursery is not None and nursery > 16 * MB else ["-"]
    assert starts(tmp_path, 17 * MB) == expected


def test_a_small_input_or_a_nursery_of_yours_never_restarts(tmp_path: Path) -> None:
    for case in ("small", "yours"):
        (tmp_path / case).mkdir()
    assert starts(tmp_path / "small", 1 * MB) == ["-"]
    assert starts(tmp_path / "yours", 17 * MB, nursery="8MB") == ["8MB"]
