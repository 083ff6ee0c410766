"""A sane GC nursery for long ``purebpe`` commands on PyPy.

PyPy's garbage collector sizes its nursery (the young generation) once, at start-up, as
half the CPU cache that ``/proc/cpuinfo`` reports. Virtual machines often report the host's
whole last-level cache: 480 MB on the machine the benchmarks ran on, hence a 240 MB
nursery. There every young object is written into fresh pages, and forked workers copy the
pages they share with their parent. Measured with 2 processes: training on 18 MB of gcide
took 3.34 s and 493 MB against 2.34 s and 164 MB with ``PYPY_GC_NURSERY=4MB``; encoding
it, 3.54 s of CPU and 354 000 page faults against 2.87 s and 124 000.

The nursery cannot change once PyPy runs, so a ``train``, ``count`` or ``encode`` of a
large input restarts the command (``exec``: the same process id, arguments and open
files) with ``PYPY_GC_NURSERY`` set, before it has read or written anything. It does so
only on PyPy, only where the variable is unset (yours wins, and the restart happens once),
only for a nursery above :data:`NURSERY_CAP_BYTES`, and only for inputs of at least
:data:`RESTART_FROM_BYTES` (starting PyPy and importing purebpe twice costs about 0.3 s).
Below that the restart costs more than it saves: ``purebpe train`` of the 2 MB of Chinese
of the positional benchmark (``--pretokenizer none --variant positional``, vocab 5 000),
4 runs each, took 1.33 s of CPU and 365 MB on the 240 MB nursery, 1.21 s and 119 MB with
``PYPY_GC_NURSERY=4MB`` set from the start, and 1.45 s (and 187 MB, the first process's
peak) restarting to get it.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import sys
from typing import List, Mapping, Optional, Sequence

from ..errors import PureBPEError
from ..readers.inputs import expand

#: The nursery a restarted command gets: the fastest of 4, 16 MB and the default measured
#: on 100 MB of Linux source (and the smallest).
NURSERY = "4MB"

#: A nursery above this (half the reported cache) is worth a restart.
NURSERY_CAP_BYTES = 16 << 20

#: Inputs smaller than this are not worth a second start-up.
RESTART_FROM_BYTES = 16 << 20

#: The commands that read a corpus.
COMMANDS = ("train", "count", "encode")


def nursery_to_set(
    implementation: str, environ: Mapping[str, str], cpuinfo: str, input_bytes: int
) -> Optional[str]:
    """The ``PYPY_GC_NURSERY`` to restart with, or ``None`` to go on as is.

    >>> big = 100 << 20
    >>> nursery_to_set("PyPy", {}, "cache size\\t: 491520 KB\\n", big)
    '4MB'
    >>> nursery_to_set("PyPy", {}, "cache size\\t: 1024 KB\\n", big) is None  # a desktop's
    True
    >>> nursery_to_set("PyPy", {"PYPY_GC_NURSERY": "16MB"}, "cache size: 491520 KB", big) is None
    True
    >>> nursery_to_set("CPython", {}, "cache size: 491520 KB", big) is None
    True
    """
    if implementation != "PyPy" or "PYPY_GC_NURSERY" in environ or input_bytes < RESTART_FROM_BYTES:
        return None
    found = re.search(r"^cache size\s*:\s*(\d+)\s*KB", cpuinfo, re.MULTILINE)
    if found is None or int(found.group(1)) * 1024 // 2 <= NURSERY_CAP_BYTES:
        return None
    return NURSERY


def restart_arguments(argv: Sequence[str], main_module_name: Optional[str]) -> Optional[List[str]]:
    """The interpreter's arguments that run this command again: ``-m purebpe ...`` where it
    ran as a module, the script and its arguments where it ran as one (the ``purebpe``
    console script), ``None`` where it cannot tell (``-c``, an embedding).

    >>> restart_arguments(["/x/purebpe/__main__.py", "train"], "purebpe.__main__")
    ['-m', 'purebpe', 'train']
    >>> script = os.__file__  # stands for the console script, a file
    >>> restart_arguments([script, "train"], None) == [script, "train"]
    True
    >>> restart_arguments(["-c", "train"], None) is None
    True
    """
    if main_module_name == "purebpe.__main__":
        return ["-m", "purebpe", *argv[1:]]
    if argv and os.path.isfile(argv[0]):
        return list(argv)
    return None


def input_bytes(files: Sequence[str]) -> int:
    """The size of the regular files among ``files``, found as the command finds them
    (directories walked, globs expanded); streams count nothing, and inputs the command
    will refuse count nothing at all (it reports them itself)."""
    try:
        paths = expand(files)
    except PureBPEError:
        return 0
    total = 0
    for path in paths:
        try:
            if os.path.isfile(path):
                total += os.path.getsize(path)
        except OSError:
            pass
    return total


def restart_for_nursery(args: argparse.Namespace) -> None:
    """Restart this ``purebpe`` command with a small nursery where :func:`nursery_to_set` says
    so; otherwise (or where ``exec`` fails) return and go on."""
    if platform.python_implementation() != "PyPy" or getattr(args, "command", None) not in COMMANDS:
        return
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            cpuinfo = f.read()
    except OSError:
        return
    files = [f for f in getattr(args, "files", None) or [] if isinstance(f, str)]
    value = nursery_to_set("PyPy", os.environ, cpuinfo, input_bytes(files))
    main_spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    arguments = restart_arguments(sys.argv, getattr(main_spec, "name", None))
    if value is None or arguments is None:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(sys.executable, [sys.executable, *arguments], dict(os.environ, PYPY_GC_NURSERY=value))
    except OSError:
        return
