"""A sane GC nursery for the ``purebpe`` commands that read a corpus, on PyPy.

PyPy's garbage collector sizes its nursery (the young generation) once, at start-up, as
half the CPU cache that ``/proc/cpuinfo`` reports. Virtual machines often report the host's
whole last-level cache: 480 MB on the machine the benchmarks ran on, hence a 240 MB
nursery. There every young object is written into fresh pages, and forked workers copy the
pages they share with their parent. Measured with 2 processes: training on 18 MB of gcide
took 3.34 s and 493 MB against 2.34 s and 164 MB with ``PYPY_GC_NURSERY=4MB``; encoding
it, 3.54 s of CPU and 354 000 page faults against 2.87 s and 124 000. Small inputs gain
too: ``purebpe train`` of its default corpus (``pydoc_data.topics``) took 0.83-1.05 s and
333 MB against 0.57-0.60 s and 95 MB.

Decoding and masking gain as much: ``purebpe decode`` of 44 million ids (100 MB of
text) took 3.5-3.9 s and 1.65 GB against 2.7-2.8 s and 220 MB, ``purebpe mask`` of 20 MB
1.52 s and 329 MB against 1.07 s and 92 MB.

The nursery cannot change once PyPy runs, so ``train``, ``count``, ``encode``, ``decode``
and ``mask`` restart (``exec``: the same process id, arguments and open files) with
``PYPY_GC_NURSERY`` set. ``encode`` also gets ``PYPY_GC_MAJOR_COLLECT=2.5`` (PyPy's
default is 1.82): each job's text, its UTF-8 and its ids are large objects that outlive
the nursery and die in the old generation, so the old generation grows fast while what
lives in it stays small (about 50 MB: the tables and the word cache). Encoding 100 MB of
Linux source with GPT-2's files ran 30 major collections, 11% of the time; with 2
processes it took 4.01-4.17 s (6.9-7.1 CPU s) and 182-186 MB against 3.75-3.88 s (6.3-6.7
CPU s) and 217-227 MB with 2.5, and 3.73-3.93 s and 241-243 MB with 3. Counting and
training keep the default: what lives there is the counts, so a later collection would
cost more memory (a larger share of it) for no measured gain.
:func:`restart_for_nursery` runs first thing, from :mod:`purebpe.__main__`, before the
command's modules are loaded: the restart costs one bare start of PyPy (~0.05 s), where
one made after parsing the arguments had loaded the package twice (~0.3 s, which made it
worth it only for inputs of 16 MB and more). It restarts only on PyPy, only where the
variable is unset (yours wins, and the restart happens once), and only where the nursery
would be above :data:`NURSERY_CAP_BYTES`. This module imports nothing of purebpe.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Dict, List, Mapping, Optional, Sequence

#: The nursery a restarted command gets: the fastest of 4, 16 MB and the default measured
#: on 100 MB of Linux source (and the smallest).
NURSERY = "4MB"

#: A nursery above this (half the reported cache) is worth a restart.
NURSERY_CAP_BYTES = 16 << 20

#: The commands that read a corpus, or ids.
COMMANDS = ("train", "count", "encode", "decode", "mask")

#: ``PYPY_GC_MAJOR_COLLECT`` for the commands whose garbage outgrows what they keep (see
#: the module docstring).
MAJOR_COLLECT = {"encode": "2.5"}


def nursery_to_set(implementation: str, environ: Mapping[str, str], cpuinfo: str) -> Optional[str]:
    """The ``PYPY_GC_NURSERY`` to restart with, or ``None`` to go on as is.

    >>> nursery_to_set("PyPy", {}, "cache size\\t: 491520 KB\\n")
    '4MB'
    >>> nursery_to_set("PyPy", {}, "cache size\\t: 1024 KB\\n") is None  # a desktop's
    True
    >>> nursery_to_set("PyPy", {"PYPY_GC_NURSERY": "16MB"}, "cache size: 491520 KB") is None
    True
    >>> nursery_to_set("CPython", {}, "cache size: 491520 KB") is None
    True
    """
    if implementation != "PyPy" or "PYPY_GC_NURSERY" in environ:
        return None
    found = re.search(r"^cache size\s*:\s*(\d+)\s*KB", cpuinfo, re.MULTILINE)
    if found is None or int(found.group(1)) * 1024 // 2 <= NURSERY_CAP_BYTES:
        return None
    return NURSERY


def restart_environment(command: str, environ: Mapping[str, str], nursery: str) -> Dict[str, str]:
    """The environment the command restarts with: ``environ`` with the nursery, and the
    command's :data:`MAJOR_COLLECT` unless ``environ`` sets one.

    >>> restart_environment("encode", {}, "4MB")
    {'PYPY_GC_NURSERY': '4MB', 'PYPY_GC_MAJOR_COLLECT': '2.5'}
    >>> restart_environment("count", {}, "4MB")
    {'PYPY_GC_NURSERY': '4MB'}
    >>> restart_environment("encode", {"PYPY_GC_MAJOR_COLLECT": "1.5"}, "4MB")["PYPY_GC_MAJOR_COLLECT"]
    '1.5'
    """
    environment = dict(environ, PYPY_GC_NURSERY=nursery)
    major = MAJOR_COLLECT.get(command)
    if major is not None and "PYPY_GC_MAJOR_COLLECT" not in environ:
        environment["PYPY_GC_MAJOR_COLLECT"] = major
    return environment


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


def restart_for_nursery(argv: Sequence[str]) -> None:
    """Restart the ``purebpe`` command ``argv`` (``sys.argv``) with a small nursery where
    :func:`nursery_to_set` says so and the command reads a corpus; otherwise (or where
    ``exec`` fails) return and go on."""
    # sys.implementation, not the platform module, whose import costs PyPy 25-45 ms here.
    if sys.implementation.name != "pypy" or len(argv) < 2 or argv[1] not in COMMANDS:
        return
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            cpuinfo = f.read()
    except OSError:
        return
    value = nursery_to_set("PyPy", os.environ, cpuinfo)
    main_spec = getattr(sys.modules.get("__main__"), "__spec__", None)
    arguments = restart_arguments(argv, getattr(main_spec, "name", None))
    if value is None or arguments is None:
        return
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:  # None where the command was started with it closed
            stream.flush()
    try:
        os.execve(
            sys.executable, [sys.executable, *arguments], restart_environment(argv[1], os.environ, value)
        )
    except OSError:
        return
