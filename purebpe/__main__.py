"""``python -m purebpe`` and the ``purebpe`` command: :func:`entry`.

PyPy's restart for a small GC nursery (:mod:`purebpe.pypy_nursery`) comes first, before
the command's modules (:mod:`purebpe.cli`) are loaded, so that it costs one bare start.
"""

from __future__ import annotations

import sys

from .pypy_nursery import restart_for_nursery


def entry() -> None:
    """Run the ``purebpe`` command given by ``sys.argv`` and exit with its status."""
    restart_for_nursery(sys.argv)
    from .cli import entry as run_command

    run_command()


if __name__ == "__main__":
    entry()
