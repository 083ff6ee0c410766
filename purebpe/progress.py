"""Progress reporting: a tqdm bar on a terminal, JSON lines for schedulers, or nothing.

``progress=True`` shows tqdm bars on stderr (bytes/s and ETA while counting, merges/s while
merging); ``progress="jsonl"`` writes one JSON object per line to stderr at most every
``JSONL_INTERVAL`` seconds (and at the end), for runs without a terminal; ``False`` is silent.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any, Optional, Protocol, Union

from .errors import PureBPEError

Progress = Union[bool, str]
JSONL_INTERVAL = 1.0


class Bar(Protocol):
    """What :func:`progress_bar` returns: a tqdm bar or one of the stand-ins below."""

    def update(self, n: int = 1) -> Optional[bool]: ...

    def close(self) -> None: ...


class _Silent:
    def update(self, n: int = 1) -> Optional[bool]:
        return None

    def close(self) -> None:
        pass


class _JsonLines:
    def __init__(self, phase: str, total: Optional[int], unit: str) -> None:
        self.phase, self.total, self.unit = phase, total, unit
        self.done = 0
        self.start = self.last = time.perf_counter()

    def update(self, n: int = 1) -> Optional[bool]:
        self.done += n
        now = time.perf_counter()
        if now - self.last >= JSONL_INTERVAL:
            self.last = now
            self._emit(now, final=False)
        return None

    def close(self) -> None:
        self._emit(time.perf_counter(), final=True)

    def _emit(self, now: float, final: bool) -> None:
        elapsed = now - self.start
        rate = self.done / elapsed if elapsed > 0 else 0.0
        record: dict[str, Any] = {
            "phase": self.phase,
            "done": self.done,
            "total": self.total,
            "unit": self.unit,
            "elapsed_s": round(elapsed, 3),
            "rate_per_s": round(rate, 1),
            "final": final,
        }
        if self.total and rate > 0 and not final:
            record["eta_s"] = round((self.total - self.done) / rate, 1)
        print(json.dumps(record), file=sys.stderr, flush=True)


def end_early(bar: Bar, done: int) -> None:
    """Make a bar whose work stopped short of its total end at ``done`` (before ``close``)."""
    if getattr(bar, "total", None) is not None:
        setattr(bar, "total", done)  # noqa: B010  (Bar, a protocol, has no total: tqdm's)
        refresh = getattr(bar, "refresh", None)
        if refresh is not None:
            refresh()


def check_progress(progress: Progress) -> Progress:
    if progress not in (True, False, "jsonl"):
        raise PureBPEError(f"progress must be True, False or 'jsonl', not {progress!r}")
    return progress


def progress_bar(
    progress: Progress, phase: str, total: Optional[int], unit: str, unit_scale: bool = False
) -> Bar:
    """An object with ``update(n)`` and ``close()`` for one phase of the work."""
    if progress is True:
        from tqdm import tqdm

        class _Tqdm(tqdm):  # type: ignore[type-arg]
            # No monitor thread: workers are forked while a bar shows, and a fork from a
            # process with threads may deadlock in the child (Python 3.12 warns of it).
            monitor_interval = 0

        bar: Bar = _Tqdm(total=total, desc=phase, unit=unit, unit_scale=unit_scale, file=sys.stderr)
        return bar
    if progress == "jsonl":
        return _JsonLines(phase, total, unit)
    return _Silent()
