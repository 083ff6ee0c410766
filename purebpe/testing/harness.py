"""The machinery under the conformance checks: properties, runs, counterexamples.

What it keeps: a :class:`Check` is one named property of an implementation -- a
Hypothesis strategy of cases and a ``verify(case)`` that raises ``AssertionError`` when
the property does not hold. :func:`run_check` runs it under Hypothesis and returns an
:class:`Outcome`; on failure the outcome holds a :class:`Counterexample`: the minimal
case Hypothesis shrank to, written as Python assignments that can be pasted and run,
followed by what went wrong.

How it works: the property body catches whatever the implementation raises (a wrong
answer's ``AssertionError``, or its own crash) and raises a :class:`Counterexample`
built from the case instead. Hypothesis shrinks the case and replays the minimal one
last, so the counterexample that comes out of the run is the minimal one.

Cost: ``max_examples`` calls of the implementation per property (50 by default), plus
the reference computation and Hypothesis' own work (drawing the cases is about half the
time of a run on small inputs); a failing property adds the few hundred calls Hypothesis
makes while shrinking.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from typing import Any, Callable, Iterable, List, Optional, Sequence, Tuple, TypeVar

import attr
from hypothesis import HealthCheck, Phase, example, given
from hypothesis import settings as Settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException

from ..errors import PureBPEError
from ..progress import Progress, progress_bar

T = TypeVar("T")

#: Hypothesis examples per property unless the caller's settings say otherwise.
DEFAULT_MAX_EXAMPLES = 50


#: Every phase but ``explain``, which reruns variations of a failing case to say which parts
#: of it matter: a third of the time of a failing property, for a note the report omits.
FAST_PHASES = (Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink)

#: Health checks the suite turns off: its cases are slow and large by design.
SUPPRESSED = (HealthCheck.too_slow, HealthCheck.data_too_large)


def default_settings(max_examples: int = DEFAULT_MAX_EXAMPLES) -> Settings:
    """Fast, reproducible settings: fixed seed, no deadline, no example database on disk,
    no ``explain`` phase (:data:`FAST_PHASES`).

    ``derandomize=True`` makes every run try the same examples, so a result in a report
    can be reproduced; ``database=None`` keeps the checks from writing ``.hypothesis/``
    into the caller's working directory.
    """
    return Settings(
        max_examples=max_examples,
        phases=FAST_PHASES,
        deadline=None,
        derandomize=True,
        database=None,
        report_multiple_bugs=False,
        suppress_health_check=list(SUPPRESSED),
    )


def adapt_settings(settings: Settings) -> Settings:
    """The caller's settings, with what the suite cannot run under turned off.

    No deadline (one property trains on 40 KB of text), the slow-and-large health checks
    suppressed, and one counterexample per property (``report_multiple_bugs=False``).
    """
    return Settings(
        settings,
        deadline=None,
        report_multiple_bugs=False,
        suppress_health_check=list(settings.suppress_health_check) + list(SUPPRESSED),
    )


class Code(str):
    """A value that is printed as the code that computes it (its ``repr`` is itself)."""

    def __repr__(self) -> str:
        return str(self)


class Counterexample(AssertionError):
    """A property that does not hold, with the minimal case as a runnable snippet.

    ``values`` are ``(name, value)`` assignments that rebuild the case, ``reason`` says
    in one line what went wrong, ``details`` add lines (both sides of a difference, a
    diagnosis), ``reproduce`` are the lines of code that rerun the failing call.
    """

    def __init__(
        self,
        check: str,
        reason: str,
        values: Sequence[Tuple[str, Any]],
        details: Sequence[str] = (),
        reproduce: Sequence[str] = (),
    ) -> None:
        self.check = check
        self.reason = reason
        self.values = list(values)
        self.details = list(details)
        self.reproduce = list(reproduce)
        super().__init__(self.snippet())

    def __reduce__(self) -> Any:  # rebuilt from its parts, not from the message
        return (type(self), (self.check, self.reason, self.values, self.details, self.reproduce))

    def assignments(self) -> str:
        """The case on one line: ``text = 'ab'; vocab_size = 257; special_tokens = []``."""
        return "; ".join(f"{name} = {value!r}" for name, value in self.values)

    def snippet(self) -> str:
        """The full report: what failed, the case, details, and code that reproduces it."""
        lines = [f"{self.check}: {self.reason}", "minimal counterexample:"]
        lines += [f"    {name} = {value!r}" for name, value in self.values]
        lines += [f"    # {line}" for line in self.details]
        if self.reproduce:
            lines.append("    # reproduce:")
            lines += [f"    {line}" for line in self.reproduce]
        return "\n".join(lines)


class TimeLimitExceeded(BaseException):
    """The implementation did not return within the time limit.

    A ``BaseException``, so that Hypothesis reports it at once instead of shrinking the
    case (each try would wait the whole limit again): the case is reported as found.
    """

    def __init__(self, seconds: float) -> None:
        super().__init__(f"no result within {seconds:g} s: the call hangs, or is far too slow")
        self.seconds = seconds
        self.case: Sequence[Tuple[str, Any]] = ()
        self.reproduce: Sequence[str] = ()


@attr.s(frozen=True, slots=True, auto_attribs=True)
class Check:
    """One property: a name for the report, what it means, and how to run it."""

    name: str
    description: str
    run: Callable[[Settings], None]


@attr.s(frozen=True, slots=True, auto_attribs=True)
class Outcome:
    """The result of running one :class:`Check`."""

    name: str
    passed: bool
    seconds: float
    counterexample: Optional[Counterexample] = None
    error: str = ""

    def summary(self) -> str:
        """One line for a table: the case, or what went wrong."""
        if self.passed:
            return ""
        if self.counterexample is not None:
            return f"{self.counterexample.reason} -- {self.counterexample.assignments()}"
        return self.error

    def report(self) -> str:
        """The full failure report (empty when the check passed)."""
        if self.passed:
            return ""
        if self.counterexample is not None:
            return self.counterexample.snippet() + (f"\n    # {self.error}" if self.error else "")
        return f"{self.name}: {self.error}"


def property_check(
    name: str,
    description: str,
    cases: st.SearchStrategy[T],
    verify: Callable[[T], None],
    describe: Callable[[T], Sequence[Tuple[str, Any]]],
    reproduce: Callable[[T], Sequence[str]] = lambda case: (),
    examples: Sequence[T] = (),
) -> Check:
    """A :class:`Check` that runs ``verify`` on ``examples`` (tried first, as they are),
    then on cases drawn from ``cases``.

    ``verify`` raises ``AssertionError`` (its message is the reason, first line, and the
    details, further lines) when the property fails; any other exception it lets through
    is the implementation crashing, reported with its type. A ``verify`` that narrows the
    case down itself may raise a finished :class:`Counterexample`. ``describe`` turns a case
    into the assignments of the snippet, ``reproduce`` into the code lines that rerun it.
    """

    def run(settings: Settings) -> None:
        def holds(case: T) -> None:
            try:
                verify(case)
            except TimeLimitExceeded as exc:
                exc.case, exc.reproduce = describe(case), reproduce(case)
                raise
            except (HypothesisException, Counterexample):
                raise
            except Exception as exc:  # the implementation's wrong answer, or its crash
                raise counterexample(name, case, exc, describe, reproduce) from exc

        test = given(cases)(holds)
        for case in examples:
            test = example(case)(test)
        Settings(settings)(test)()

    return Check(name, description, run)


def counterexample(
    name: str,
    case: T,
    exc: BaseException,
    describe: Callable[[T], Sequence[Tuple[str, Any]]],
    reproduce: Callable[[T], Sequence[str]] = lambda case: (),
) -> Counterexample:
    """The :class:`Counterexample` for ``case``, which made ``verify`` raise ``exc``."""
    if isinstance(exc, AssertionError) and str(exc):
        reason, *details = str(exc).splitlines()
    else:
        reason, details = f"raised {type(exc).__name__}: {exc}", []
    return Counterexample(name, reason, describe(case), details, reproduce(case))


def run_check(check: Check, settings: Optional[Settings] = None) -> Outcome:
    """Run one check; any failure becomes an :class:`Outcome` with ``passed=False``."""
    chosen = default_settings() if settings is None else adapt_settings(settings)
    start = time.perf_counter()
    try:
        check.run(chosen)
    except TimeLimitExceeded as exc:
        reason = f"{exc} (the first case that hung, not shrunk: each try would wait again)"
        hung = Counterexample(check.name, reason, exc.case, (), exc.reproduce)
        return Outcome(check.name, False, time.perf_counter() - start, hung)
    except Exception as exc:
        seconds = time.perf_counter() - start
        found = _find_counterexample(exc)
        if found is exc:
            return Outcome(check.name, False, seconds, found)
        if found is not None:  # inside Hypothesis' Flaky: the implementation is not deterministic
            note = f"{type(exc).__name__}: the failure did not happen again when the case was replayed"
            return Outcome(check.name, False, seconds, found, error=note)
        return Outcome(check.name, False, seconds, error=f"{type(exc).__name__}: {exc}")
    return Outcome(check.name, True, time.perf_counter() - start)


def run_checks(
    checks: Sequence[Check],
    settings: Optional[Settings] = None,
    progress: Progress = False,
    stop_at_failure: bool = False,
) -> List[Outcome]:
    """Run every check in order (a progress bar per property with ``progress=True``), or
    up to the first that fails with ``stop_at_failure``."""
    bar = progress_bar(progress, "conformance", len(checks), "property")
    outcomes = []
    try:
        for check in checks:
            outcomes.append(run_check(check, settings))
            bar.update(1)
            if stop_at_failure and not outcomes[-1].passed:
                break
    finally:
        bar.close()
    return outcomes


def raise_failures(what: str, outcomes: Iterable[Outcome]) -> None:
    """Raise one ``AssertionError`` listing every failed property's report, if any failed."""
    failed = [outcome for outcome in outcomes if not outcome.passed]
    if failed:
        names = ", ".join(outcome.name for outcome in failed)
        reports = "\n\n".join(outcome.report() for outcome in failed)
        noun = "property" if len(failed) == 1 else "properties"
        raise AssertionError(f"{what} fails {len(failed)} {noun} ({names}):\n\n{reports}")


def _find_counterexample(exc: BaseException) -> Optional[Counterexample]:
    """The counterexample in ``exc``, or inside a group of exceptions (Hypothesis' ``Flaky``)."""
    if isinstance(exc, Counterexample):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = _find_counterexample(inner)
        if found is not None:
            return found
    return None


def load_callable(spec: str) -> Callable[..., Any]:
    """The callable named ``pkg.module:name`` (``name`` may be dotted: ``Class.method``).

    The current directory is put on ``sys.path`` first, as ``python -m`` does, so a
    module beside the caller (``bench.hf_trainer_adapter``) is found.
    """
    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        raise PureBPEError(f"{spec!r} is not MODULE:CALLABLE (e.g. 'mypackage.bpe:train_bpe')")
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        target: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise PureBPEError(f"cannot import {module_name!r} (from {spec!r}): {exc}") from None
    for part in attribute.split("."):
        try:
            target = getattr(target, part)
        except AttributeError:
            raise PureBPEError(f"{spec!r}: {module_name!r} has no attribute {attribute!r}") from None
    if not callable(target):
        raise PureBPEError(f"{spec!r} is a {type(target).__name__}, not a callable")
    result: Callable[..., Any] = target
    return result
