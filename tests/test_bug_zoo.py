"""The bug zoo (``tests/bug_zoo.py``): the conformance suite's default checks catch every
mutant, each with a small counterexample.

Each mutant is checked as purebpe's users would check it -- ``check_trainer`` on its
``train_bpe`` and ``check_trainer_from_counts`` on its ``train_from_counts``, default
settings (50 examples, fixed seed) -- with the properties in :data:`ORDER` and stopping
at the first that fails (the others would only add shrinking time). The correct trainer
they are mutated from passes every property, so each failure is the mutated lines' doing.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import bug_zoo
from hypothesis import settings

from purebpe.testing.checks import checks_for, conformance
from purebpe.testing.harness import Outcome, run_check

#: The order the properties are tried in: the ones that catch most come first.
ORDER = [
    "corner cases",
    "each nasty piece",
    "merges match purebpe",
    "vocab size",
    "vocab = bytes + specials + merges",
    "min_frequency",
    "max_token_length",
    "each merge is a most frequent pair",
    "vocab matches purebpe",
    "merges use earlier tokens",
    "well-formed",
    "deterministic",
    "deterministic across processes",
    "real text",
]
LEVELS = (("trainer", "train_bpe"), ("counts-trainer", "train_from_counts"))
CONTROL = settings(max_examples=12)


def first_failure(name: str) -> Optional[Tuple[str, Outcome]]:
    """The first property (level, outcome) the mutant ``name`` fails, or ``None``."""
    module = bug_zoo.MODULES[name]
    checks = [
        (kind, check) for kind, function in LEVELS for check in checks_for(kind, getattr(module, function))
    ]
    checks.sort(key=lambda kind_check: ORDER.index(kind_check[1].name))  # stable: text level first
    for kind, check in checks:
        outcome = run_check(check)
        if not outcome.passed:
            return kind, outcome
    return None


def case_size(outcome: Outcome) -> int:
    """The size of a counterexample: characters of text (a special token counts as one),
    or words of the counts."""
    assert outcome.counterexample is not None, outcome.report()
    values = dict(outcome.counterexample.values)
    if "word_counts" in values:
        return len(values["word_counts"])
    text = values["text"]
    for special in sorted(values["special_tokens"], key=len, reverse=True):
        text = text.replace(special, "S")
    return len(text)


def test_the_correct_trainer_passes_everything() -> None:
    # The control, at a quarter of the budget (the mutants get the full default budget).
    for kind, function in LEVELS:
        outcomes = conformance(kind, getattr(bug_zoo.correct, function), settings=CONTROL)
        assert {o.name for o in outcomes} >= {
            "deterministic across processes",
            "min_frequency",
            "max_token_length",
        }
        assert all(o.passed for o in outcomes), [o.report() for o in outcomes if not o.passed]


def test_every_mutant_is_caught_with_a_small_counterexample() -> None:
    table: List[str] = []
    missed: List[str] = []
    sizes: Dict[str, int] = {}
    for mutant in bug_zoo.MUTANTS:
        found = first_failure(mutant.name)
        if found is None:
            missed.append(mutant.name)
            table.append(f"{mutant.name}: NOT CAUGHT")
            continue
        kind, outcome = found
        sizes[mutant.name] = case_size(outcome)
        assert outcome.counterexample is not None
        table.append(f"{mutant.name}: {kind} '{outcome.name}': {outcome.counterexample.assignments()}")
    report = "\n".join(table)
    print(report)
    assert len(bug_zoo.MUTANTS) >= 15
    assert not missed, f"caught {len(sizes)} of {len(bug_zoo.MUTANTS)}:\n{report}"
    big = {name: size for name, size in sizes.items() if size > 24}
    assert not big, f"counterexamples too large to be minimal: {big}\n{report}"


def test_hash_order_is_caught_across_processes() -> None:
    # In one process the hash order is fixed; two processes with other PYTHONHASHSEED differ.
    fn = bug_zoo.MODULES["hash_order_ties"].train_bpe
    [outcome] = conformance("trainer", fn, properties=["deterministic across processes"])
    assert not outcome.passed and "PYTHONHASHSEED=1 and 2 give different results" in outcome.report()
    assert conformance("trainer", fn, properties=["deterministic"])[0].passed


def test_a_count_driven_below_zero_is_caught_by_max_token_length() -> None:
    fn = bug_zoo.MODULES["negative_count_under_max_length"].train_bpe
    [outcome] = conformance("trainer", fn, properties=["max_token_length"])
    assert not outcome.passed
    assert dict(outcome.counterexample.values)["max_token_length"] is not None  # type: ignore[union-attr]


def test_count_overflow_is_caught_only_from_counts() -> None:
    module = bug_zoo.MODULES["counts_int32"]
    assert all(
        o.passed for o in conformance("trainer", module.train_bpe, properties=["merges match purebpe"])
    )
    [outcome] = conformance("counts-trainer", module.train_from_counts, properties=["merges match purebpe"])
    assert not outcome.passed
    counts = dict(outcome.counterexample.values)["word_counts"]  # type: ignore[union-attr]
    assert max(counts.values()) >= 2**30  # a pair of it counts past 2**31
