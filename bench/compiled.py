"""Run any benchmark script on the mypyc-compiled build of purebpe (docs/compiled.md).

    python -m bench.compiled bench.bench_counting --corpus en-gcide-18m.txt
    python -m bench.compiled bench.bench_encode --pypy none

builds this checkout's compiled purebpe once per source digest
(:func:`bench._harness.compiled_build`), then runs ``python -m MODULE ARGS...`` with that
build first on the path. The script's tables are recorded under the interpreter
``"CPython 3.11.7 compiled"`` (:func:`bench._results.interpreter_name`), so the benchmark
page shows them as a column of their own beside pure CPython and PyPy. Scripts that run
purebpe in children of their own (``compare_peers``, ``scale``, ``bench_positional``) add
the compiled build as a contender themselves (their ``--compiled``, on by default).
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import List, Optional

from ._harness import ChildFailed, child_environment, compiled_build


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if not args or args[0].startswith("-"):
        print("usage: python -m bench.compiled bench.SCRIPT [its options]", file=sys.stderr)
        return 2
    try:
        build = compiled_build(sys.executable)
    except ChildFailed as failure:
        print(f"{failure.tail}\nbench.compiled: {failure}", file=sys.stderr)
        return 1
    env = child_environment({"PYTHONPATH": str(build)})
    # Run from the build's folder: ``-m`` puts the working directory first on the path,
    # where the checkout's pure purebpe would shadow the build. Relative paths in the
    # options are made absolute against where we were started.
    here = os.getcwd()
    absolute = [
        os.path.join(here, a) if not a.startswith("-") and os.path.exists(os.path.join(here, a)) else a
        for a in args[1:]
    ]
    return subprocess.run([sys.executable, "-m", args[0], *absolute], env=env, cwd=build).returncode


if __name__ == "__main__":
    sys.exit(main())
