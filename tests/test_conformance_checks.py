"""The checks issue 17 added to purebpe.testing: the time limit, worker processes with
other hash seeds, the counts-level entry point, the limits found by signature, and the
Hugging Face semantics (with ``tokenizers`` itself where it is installed)."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

import purebpe
from purebpe.testing import check_trainer, check_trainer_from_counts
from purebpe.testing.checks import conformance
from purebpe.testing.harness import TimeLimitExceeded
from purebpe.testing.isolation import Worker, call_with_time_limit, spec_of
from purebpe.testing.trainer_checks import accepts, lines_of

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))


def counts_trainer(
    word_counts: Dict[bytes, int],
    vocab_size: int,
    special_tokens: List[str],
    min_frequency: int = 1,
    max_token_length: Optional[int] = None,
) -> Any:
    counts = purebpe.WordCounts(word_counts, tuple(special_tokens))
    model = purebpe.train_from_counts(
        counts, vocab_size, min_frequency=min_frequency, max_token_length=max_token_length
    )
    return model.vocab, model.merges


def sleeps(input_path: str, vocab_size: int, special_tokens: List[str]) -> Any:
    # Far past every time limit here, yet over soon: the thread left behind in this process
    # must not outlive the tests that fork workers later (a fork beside a thread warns).
    time.sleep(10)


def spins(input_path: str, vocab_size: int, special_tokens: List[str]) -> Any:
    while True:
        pass


def test_a_hanging_trainer_is_reported_not_waited_for() -> None:
    start = time.perf_counter()
    [outcome] = conformance("trainer", sleeps, properties=["well-formed"], time_limit=0.3)
    assert time.perf_counter() - start < 5
    assert not outcome.passed and "no result within 0.3 s" in outcome.report()
    assert "text = " in outcome.report()  # the case that hung


@pytest.mark.skipif(sys.implementation.name != "cpython", reason="only CPython can interrupt a thread")
def test_a_spinning_call_is_stopped_on_cpython() -> None:
    before = set(threading.enumerate())  # (the sleeping call of the test above may remain)
    with pytest.raises(TimeLimitExceeded):
        call_with_time_limit(spins, ("x", 256, []), {}, 0.2)
    time.sleep(0.2)
    assert set(threading.enumerate()) <= before


def test_a_hanging_worker_is_killed(tmp_path: Path) -> None:
    worker = Worker("test_conformance_checks:sleeps", 1)
    with pytest.raises(TimeLimitExceeded):
        worker.call(["x", 256, []], {}, 0.5)
    assert worker.process is None  # killed and forgotten; the next call starts a fresh one
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(b"abab")
    working = Worker("purebpe:train_bpe", 2)
    assert working.call([str(corpus), 257, []], {}, 60)[1] == [(b"a", b"b")]
    working.close()


def test_specs_are_found_for_importable_functions_only() -> None:
    assert spec_of(purebpe.train_bpe) == "purebpe.training:train_bpe"
    assert spec_of(counts_trainer) == "test_conformance_checks:counts_trainer"
    assert spec_of(lambda path, size, specials: None) is None
    names = [
        o.name for o in conformance("trainer", lambda p, v, s: purebpe.train_bpe(p, v, s), properties=None)
    ]
    assert "deterministic across processes" not in names and "min_frequency" not in names


def test_limits_are_checked_where_the_signature_takes_them() -> None:
    assert accepts(counts_trainer, "min_frequency") and accepts(counts_trainer, "max_token_length")
    assert accepts(purebpe.train_bpe, "max_token_length")  # **options
    assert not accepts(sleeps, "min_frequency")


def test_purebpe_passes_the_counts_level_checks_with_huge_counts() -> None:
    check_trainer_from_counts(counts_trainer)


def test_lines_are_cut_as_tokenizers_reads_a_file() -> None:
    assert lines_of("a\r\nb\n\nc") == ["a\r\n", "b\n", "\n", "c"]
    assert lines_of("x\u2028y\n") == ["x\u2028y\n"]


def test_canonical_purebpe_fails_hf_semantics_on_a_tie() -> None:
    outcomes = {
        o.name: o
        for o in conformance("trainer", purebpe.train_bpe, semantics="hf", properties=["corner cases"])
    }
    report = outcomes["corner cases"].report()
    assert "a tie: Hugging Face takes the pair of the smallest ids" in report, report
    assert "tie_break='hf'" in report


def test_hf_tokenizers_passes_hf_semantics_and_fails_canonical() -> None:
    pytest.importorskip("tokenizers", reason="tokenizers (a CPython-only peer) is not installed")
    import hf_trainer_adapter

    check_trainer(hf_trainer_adapter.train_bpe, semantics="hf")
    failed = [
        o.name
        for o in conformance("trainer", hf_trainer_adapter.train_bpe, properties=["corner cases"])
        if not o.passed
    ]
    assert failed == ["corner cases"]


def test_cli_trains_with_hf_ties(tmp_path: Path) -> None:
    from purebpe.cli import main

    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(b"ab ba")  # (a, b), (b, a), ( , b) tie: hf takes the smallest ids
    for tie_break, first in (("hf", (b"a", b"b")), ("canonical", (b"b", b"a"))):
        out = tmp_path / tie_break
        assert (
            main(
                [
                    "train",
                    str(corpus),
                    "--vocab-size",
                    "257",
                    "--tie-break",
                    tie_break,
                    "-o",
                    str(out),
                    "--progress",
                    "none",
                ]
            )
            == 0
        )
        assert purebpe.load(out).merges == [first]
