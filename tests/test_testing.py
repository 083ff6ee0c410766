"""purebpe.testing: the strategies, the conformance checks, the pytest plugin and the CLI.

The checks must pass on purebpe's own trainer, tokenizer and masker and on an
independent CS336-style trainer written out below, and must fail -- with a runnable
counterexample -- on deliberately broken ones.
"""

from __future__ import annotations

import functools
import itertools
import random
import re
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
import regex
from hypothesis import Phase, find, given, settings

import purebpe
from purebpe.cli import main
from purebpe.testing import (
    check_mask_generator,
    check_tokenizer,
    check_trainer,
    corpora,
    mask_lengths,
    special_tokens,
    texts,
    vocab_sizes,
)
from purebpe.testing.checks import conformance
from purebpe.testing.harness import load_callable
from purebpe.testing.strategies import SPECIAL_TOKENS
from purebpe.wakong import PUBLISHED_CONFIG, mask_scheme

pytest_plugins = ["pytester"]

# Few examples: each property still runs on the nasty cases Hypothesis tries first, and
# the whole file stays well under a minute on both interpreters.
FEW = settings(max_examples=12)
# Without shrinking, for tests about *whether* a check fails: Hypothesis' shrinker makes
# hundreds of calls, and one test below is about shrinking.
UNSHRUNK = settings(max_examples=12, phases=[Phase.explicit, Phase.reuse, Phase.generate])
# For a check expected to fail: up to 300 examples (it stops at the first failure), so that
# random runs (HYPOTHESIS_PROFILE=dev) find the bug as surely as the fixed-seed ones.
HUNT = settings(max_examples=300, phases=[Phase.explicit, Phase.reuse, Phase.generate])
TIES = ["each merge is a most frequent pair", "merges match purebpe"]
# The trainer properties without "real text", where the naive trainers below take seconds.
GENERATED = [
    "well-formed",
    "vocab size",
    "vocab = bytes + specials + merges",
    "merges use earlier tokens",
    "each merge is a most frequent pair",
    "merges match purebpe",
    "vocab matches purebpe",
    "deterministic",
]
ROOT = Path(purebpe.__file__).resolve().parent.parent
# The GPT-2 pattern as CS336 states it, for the independent trainer below (``regex``).
GPT2 = regex.compile(r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")


# --------------------------------------------------------------------------------------
# An independent trainer (CS336's definition, in bytes, no purebpe code), and broken ones
# --------------------------------------------------------------------------------------
def cs336_train_bpe(
    input_path: str,
    vocab_size: int,
    special_tokens: List[str],
    *,
    ties: str = "greatest",
    overlaps: bool = True,
) -> Tuple[Dict[int, bytes], List[Tuple[bytes, bytes]]]:
    """Naive BPE as the CS336 handout defines it; specials take ids 0.. (CS336's layout).

    ``ties="least"`` breaks ties the other way; ``overlaps=False`` counts ``aaa`` as one
    ``(a, a)`` instead of two: the two classic mistakes.
    """
    text = Path(input_path).read_bytes().decode("utf-8")
    if special_tokens:
        alternation = "|".join(re.escape(s) for s in sorted(special_tokens, key=len, reverse=True))
        pieces = re.split(alternation, text)
    else:
        pieces = [text]
    words: Counter[Tuple[bytes, ...]] = Counter()
    for piece in pieces:
        for match in GPT2.finditer(piece):
            words[tuple(bytes([b]) for b in match.group().encode("utf-8"))] += 1
    vocab = [s.encode("utf-8") for s in special_tokens] + [bytes([b]) for b in range(256)]
    merges: List[Tuple[bytes, bytes]] = []
    table = [(list(word), count) for word, count in words.items()]
    while len(vocab) < vocab_size:
        pair_counts: Counter[Tuple[bytes, bytes]] = Counter()
        for word, count in table:
            i = 0
            while i < len(word) - 1:
                pair_counts[word[i], word[i + 1]] += count
                # Without overlaps, a pair of equal tokens also consumes its right token.
                i += 2 if not overlaps and word[i] == word[i + 1] else 1
        if not pair_counts:
            break
        if ties == "greatest":
            best = max(pair_counts, key=lambda pair: (pair_counts[pair], pair))
        else:
            top = max(pair_counts.values())
            best = min(pair for pair, count in pair_counts.items() if count == top)
        merges.append(best)
        vocab.append(best[0] + best[1])
        for word, _ in table:
            i = 0
            while i < len(word) - 1:
                if (word[i], word[i + 1]) == best:
                    word[i : i + 2] = [best[0] + best[1]]
                i += 1
    return dict(enumerate(vocab)), merges


ties_the_other_way = functools.partial(cs336_train_bpe, ties="least")
no_overlaps = functools.partial(cs336_train_bpe, overlaps=False)


def crashes_on_empty_input(input_path: str, vocab_size: int, special_tokens: List[str]) -> Any:
    if not Path(input_path).read_bytes():
        raise ZeroDivisionError("empty corpus")
    return purebpe.train_bpe(input_path, vocab_size, special_tokens)


def crashes_on_b(input_path: str, vocab_size: int, special_tokens: List[str]) -> Any:
    if b"b" in Path(input_path).read_bytes():
        raise KeyError("b")
    return purebpe.train_bpe(input_path, vocab_size, special_tokens)


def run_snippet(message: str) -> Dict[str, Any]:
    """Execute the counterexample's assignments (``    name = value`` lines) and return them."""
    namespace: Dict[str, Any] = {"purebpe": purebpe}
    block = message.split("minimal counterexample:\n", 1)[1]
    for line in block.splitlines():
        if not line.startswith("    ") or line.startswith("    #"):
            break
        exec(line.strip(), namespace)
    return namespace


# --------------------------------------------------------------------------------------
# Strategies
# --------------------------------------------------------------------------------------
@given(
    corpus=corpora(special_tokens=["<|endoftext|>"]), specials=special_tokens(), size=vocab_sizes(257, 330)
)
@settings(max_examples=60)
def test_strategies_give_valid_inputs(corpus: List[str], specials: List[str], size: int) -> None:
    for text in corpus:
        text.encode("utf-8")  # no lone surrogates
    assert len(set(specials)) == len(specials) <= 3 and set(specials) <= set(SPECIAL_TOKENS)
    assert 257 <= size <= 330


@given(corpus=corpora(alphabet="ab", nasty=False), length=mask_lengths(100))
def test_alphabet_without_nasty_pieces_is_just_the_alphabet(corpus: List[str], length: int) -> None:
    assert set("".join(corpus)) <= {"a", "b"}
    assert 0 <= length <= 100


@pytest.mark.parametrize(
    "what, strategy, condition",
    [
        ("a long run", texts(), lambda t: "aaaaaaaa" in t),
        ("a 4-byte character", texts(), lambda t: any(ord(c) > 0xFFFF for c in t)),
        ("a contraction after a letter", texts(), lambda t: regex.search(r"\p{L}'(s|ll)", t) is not None),
        (
            "a special glued to text",
            texts(special_tokens=["<s>"]),
            lambda t: regex.search(r"\w<s>\w", t) is not None,
        ),
        (
            "a fragment of a special",
            texts(special_tokens=["<|endoftext|>"]),
            lambda t: "<|endof" in t.replace("<|endoftext|>", ""),
        ),
        ("a repeated text", corpora(), lambda c: len(c) > len(set(c)) > 1),
        ("an empty corpus", corpora(), lambda c: c == []),
        (
            "nested special tokens",
            special_tokens(),
            lambda s: {"<|endoftext|>", "<|endoftext|><|endoftext|>"} <= set(s),
        ),
        ("a budget edge", mask_lengths(), lambda n: n in (1, 53, 54)),
    ],
)
def test_the_nasty_cases_are_built_in(what: str, strategy: Any, condition: Any) -> None:
    found = find(
        strategy, condition, settings=settings(max_examples=2000, database=None, phases=[Phase.generate])
    )
    assert condition(found)


# --------------------------------------------------------------------------------------
# Trainers
# --------------------------------------------------------------------------------------
def test_purebpe_trainer_conforms_under_both_semantics() -> None:
    check_trainer(purebpe.train_bpe, settings=FEW)
    check_trainer(functools.partial(purebpe.train_bpe, variant="heap"), semantics="purebpe", settings=FEW)


def test_an_independent_cs336_trainer_conforms() -> None:
    # Written from the definition, specials at ids 0..: the suite compares the vocab as a
    # multiset, so the other layout passes under the CS336 semantics...
    check_trainer(cs336_train_bpe, settings=FEW)
    # ...and only its ids fail under purebpe's.
    outcomes = conformance(
        "trainer", cs336_train_bpe, semantics="purebpe", properties=GENERATED, settings=FEW
    )
    assert [o.name for o in outcomes if not o.passed] == ["vocab matches purebpe"]


def test_ties_broken_the_other_way_fail_with_a_runnable_counterexample(tmp_path: Path) -> None:
    with pytest.raises(AssertionError) as failure:
        check_trainer(ties_the_other_way, properties=["merges match purebpe"], settings=HUNT)
    message = str(failure.value)
    assert "merges match purebpe" in message and "a tie: purebpe (and CS336) take" in message
    # The tie-agnostic property holds: only the tie-break differs.
    outcomes = {o.name: o for o in conformance("trainer", ties_the_other_way, properties=TIES, settings=HUNT)}
    assert outcomes["each merge is a most frequent pair"].passed
    assert not outcomes["merges match purebpe"].passed
    # The snippet's assignments rebuild a case on which the two really differ.
    case = run_snippet(outcomes["merges match purebpe"].report())
    path = tmp_path / "case.txt"
    path.write_bytes(case["text"].encode("utf-8"))
    theirs = ties_the_other_way(str(path), case["vocab_size"], case["special_tokens"])[1]
    assert theirs != purebpe.train(path, case["vocab_size"], case["special_tokens"]).merges


def test_counting_without_overlaps_fails_on_a_run() -> None:
    outcomes = {o.name: o for o in conformance("trainer", no_overlaps, properties=TIES, settings=HUNT)}
    failure = outcomes["each merge is a most frequent pair"]
    assert not failure.passed and failure.counterexample is not None
    assert "but the highest is" in failure.report()
    # Overlaps only matter in a run of three or more equal tokens: some string three times
    # in a row (not always one character: HUNT does not shrink, and a random run can fail
    # on "ababab" with "ab" merged first).
    text = dict(failure.counterexample.values)["text"]
    assert re.search(r"(.+)\1\1", text, re.DOTALL), text


def test_a_crash_is_reported_with_its_exception_and_shrunk_to_the_minimal_case() -> None:
    [failure] = conformance("trainer", crashes_on_empty_input, properties=["well-formed"], settings=HUNT)
    assert failure.counterexample is not None
    assert failure.counterexample.reason == "raised ZeroDivisionError: empty corpus"
    assert dict(failure.counterexample.values)["text"] == ""
    # Whatever text first hits a "b", Hypothesis shrinks it to the smallest case there is.
    [failure] = conformance(
        "trainer", crashes_on_b, properties=["vocab size"], settings=settings(max_examples=300)
    )
    assert failure.counterexample is not None
    # 'b' with the fixed seed; random runs can stop at a local minimum such as 'ab', or
    # 'aaba' = 'a' + special 'ab' + 'a' (the documents are joined by the first special).
    values = dict(failure.counterexample.values)
    assert "b" in values["text"] and len(values["text"]) <= 4
    assert values["vocab_size"] == 256 + len(values["special_tokens"]) and len(values["special_tokens"]) <= 1
    assert failure.report().startswith(
        "vocab size: raised KeyError: 'b'\nminimal counterexample:\n    text = '"
    )


def test_a_nondeterministic_trainer_fails_determinism() -> None:
    calls = itertools.count()

    def sometimes_reversed(input_path: str, vocab_size: int, special_tokens: List[str]) -> Any:
        vocab, merges = purebpe.train_bpe(input_path, vocab_size, special_tokens)
        return vocab, merges[::-1] if next(calls) % 2 else merges

    [outcome] = conformance("trainer", sometimes_reversed, properties=["deterministic"], settings=HUNT)
    assert not outcome.passed and "two runs on the same input give different results" in outcome.report()


def test_a_trainer_that_returns_nonsense_is_not_well_formed() -> None:
    nonsense = conformance("trainer", lambda path, size, specials: ({"0": b"a"}, []), settings=UNSHRUNK)
    assert "vocab key '0' is not an int" in nonsense[0].summary()
    assert all(not o.passed for o in nonsense)
    with pytest.raises(purebpe.PureBPEError, match="unknown property"):
        conformance("trainer", purebpe.train_bpe, properties=["speed"])


# --------------------------------------------------------------------------------------
# Tokenizers
# --------------------------------------------------------------------------------------
class DropsLastId(purebpe.Tokenizer):
    """Loses the last token of longer texts: a byte (or more) goes missing."""

    def encode(self, text: str, allowed_special: Any = "all") -> List[int]:
        ids = super().encode(text, allowed_special)
        return ids[:-1] if len(ids) > 2 else ids


class ChunkByChunk(purebpe.Tokenizer):
    """Encodes each chunk of ``encode_iterable`` on its own: words cut at chunk borders."""

    def encode_iterable(self, texts: Any, allowed_special: Any = "all") -> Any:
        for text in texts:
            yield from self.encode(text, allowed_special)


def test_purebpe_tokenizer_conforms() -> None:
    check_tokenizer(purebpe.Tokenizer, settings=FEW)


def test_a_tokenizer_that_drops_a_byte_fails() -> None:
    with pytest.raises(AssertionError) as failure:
        check_tokenizer(DropsLastId, properties=["round trip", "encode matches purebpe"], settings=HUNT)
    message = str(failure.value)
    assert "round trip" in message and "encode matches purebpe" in message
    assert "minimal counterexample:" in message and "tokenizer = factory(model.vocab" in message


def test_a_tokenizer_that_streams_chunk_by_chunk_fails_only_streaming() -> None:
    [streaming] = conformance(
        "tokenizer", ChunkByChunk, properties=["encode_iterable = encode"], settings=HUNT
    )
    assert not streaming.passed and "chunks = [" in streaming.report()
    others = ["round trip", "encode matches purebpe", "decode = vocab bytes", "real text"]
    assert all(o.passed for o in conformance("tokenizer", ChunkByChunk, properties=others, settings=FEW))


# --------------------------------------------------------------------------------------
# Mask generators
# --------------------------------------------------------------------------------------
def touching(rng: random.Random, seq_len: int) -> List[Tuple[int, int]]:
    """Wakong's spans, each moved left against the previous one: the masks touch."""
    moved: List[Tuple[int, int]] = []
    for start, length in mask_scheme(rng, seq_len):
        moved.append((moved[-1][0] + moved[-1][1] if moved else start, length))
    return moved


def global_random(rng: random.Random, seq_len: int) -> List[Tuple[int, int]]:
    return mask_scheme(random.Random(random.random()), seq_len)


def test_purebpe_maskers_conform() -> None:
    check_mask_generator(mask_scheme, settings=FEW)
    check_mask_generator(lambda rng, n: mask_scheme(rng, n, PUBLISHED_CONFIG), settings=FEW)


@pytest.mark.parametrize(
    "masker, property_name, reason",
    [
        (touching, "masks never touch", "touch: their masks would be adjacent"),
        (global_random, "deterministic", "the same seed gave two schemes"),
        (lambda rng, n: mask_scheme(rng, n * 2)[:1], "spans in range", "is outside 0.."),
        (lambda rng, n: [(0, 0)], "mask budget", "budget"),
    ],
)
def test_broken_maskers_fail(masker: Any, property_name: str, reason: str) -> None:
    outcomes = {o.name: o for o in conformance("masker", masker, properties=[property_name], settings=HUNT)}
    assert not outcomes[property_name].passed
    assert reason in outcomes[property_name].report()
    assert "scheme = fn(random.Random(seed), seq_len)" in outcomes[property_name].report()


# --------------------------------------------------------------------------------------
# Resolving MODULE:CALLABLE, the pytest plugin, the CLI
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "spec, message",
    [
        ("purebpe", "is not MODULE:CALLABLE"),
        ("no_such_module_x:f", "cannot import 'no_such_module_x'"),
        ("purebpe:no_such_name", "has no attribute 'no_such_name'"),
        ("purebpe:__version__", "is a str, not a callable"),
    ],
)
def test_bad_callable_names_are_one_line_errors(spec: str, message: str) -> None:
    with pytest.raises(purebpe.PureBPEError, match=message):
        load_callable(spec)
    assert load_callable("purebpe:Tokenizer.from_model") == purebpe.Tokenizer.from_model


def test_checks_still_check_under_python_dash_o() -> None:
    # The checks raise AssertionError themselves: ``python -O`` drops assert statements.
    code = (
        "from purebpe.testing.checks import conformance; "
        "print(conformance('masker', lambda rng, n: [(0, 0)], properties=['mask budget'])[0].passed)"
    )
    result = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.stdout.strip() == "False", result.stderr


def test_loading_the_plugin_imports_nothing_heavy() -> None:
    code = (
        "import sys, purebpe.testing.plugin; print(sorted(m for m in ('hypothesis', "
        "'purebpe.testing.checks') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert result.stdout.strip() == "[]", result.stderr


# Fails fast: the first example Hypothesis tries is the empty file, which needs no shrinking.
BROKEN_TRAINER = """
    import purebpe

    def train_bpe(input_path, vocab_size, special_tokens):
        if not open(input_path, "rb").read():
            raise ZeroDivisionError("empty corpus")
        return purebpe.train_bpe(input_path, vocab_size, special_tokens)
"""


def test_plugin_is_inert_without_its_options(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    result = pytester.runpytest("-p", "purebpe.testing")
    result.assert_outcomes(passed=1)
    assert "bpe_" not in result.stdout.str()
    result = pytester.runpytest("-p", "purebpe.testing", "--help")
    result.stdout.fnmatch_lines(["*--bpe-trainer=MODULE:CALLABLE*"])


def test_plugin_runs_the_suite_on_a_trainer(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        "-p", "purebpe.testing", "--bpe-trainer", "purebpe:train_bpe", "--bpe-max-examples", "4", "-v"
    )
    # The nine properties of every trainer, the cross-process one (purebpe:train_bpe is
    # importable), min_frequency and max_token_length (it takes them), the two corner ones.
    result.assert_outcomes(passed=14)
    result.stdout.fnmatch_lines(["*bpe_trainer?merges match purebpe? PASSED*"])


def test_plugin_fails_a_broken_trainer_with_counterexamples(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(broken_trainer=textwrap.dedent(BROKEN_TRAINER))
    pytester.makepyfile(test_plain="def test_plain():\n    assert True\n")
    result = pytester.runpytest(
        "-p",
        "purebpe.testing",
        "--bpe-trainer",
        "broken_trainer:train_bpe",
        "--bpe-max-examples",
        "6",
        "-m",
        "bpe_conformance",
    )
    outcomes = result.parseoutcomes()
    outcomes.pop("warnings", None)  # in-process runs re-import the plugin: a rewrite warning
    # Fails wherever the empty file is drawn (in worker processes too); the real text and
    # the corner cases are never empty.
    assert outcomes == {"failed": 9, "passed": 3, "deselected": 1}
    result.stdout.fnmatch_lines(
        [
            "*broken_trainer:train_bpe fails 'merges match purebpe'*",
            "merges match purebpe: raised ZeroDivisionError: empty corpus",
            "minimal counterexample:",
            "    text = ''",
        ]
    )


def _entry_point_installed() -> bool:
    try:
        from importlib.metadata import entry_points

        found = entry_points()
        group = found.select(group="pytest11") if hasattr(found, "select") else found.get("pytest11", [])
    except Exception:  # pragma: no cover - metadata unreadable
        return False
    return any(ep.value == "purebpe.testing.plugin" for ep in group)


@pytest.mark.skipif(
    not _entry_point_installed(), reason="purebpe is not installed here (run from PYTHONPATH)"
)
def test_installed_plugin_loads_itself_and_tolerates_dash_p(pytester: pytest.Pytester) -> None:
    # Auto-loaded through the pytest11 entry point: no -p needed...
    result = pytester.runpytest("--bpe-masker", "purebpe.wakong:mask_scheme", "--bpe-max-examples", "3")
    result.assert_outcomes(passed=5)
    # ...and -p purebpe.testing on top registers nothing twice (no duplicate options).
    result = pytester.runpytest(
        "-p", "purebpe.testing", "--bpe-masker", "purebpe.wakong:mask_scheme", "--bpe-max-examples", "3"
    )
    result.assert_outcomes(passed=5)
    # -p no:purebpe switches it off.
    result = pytester.runpytest("-p", "no:purebpe", "--bpe-masker", "purebpe.wakong:mask_scheme")
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_plugin_masker_and_bad_spec(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        "-p", "purebpe.testing", "--bpe-masker", "purebpe.wakong:mask_scheme", "--bpe-max-examples", "5"
    )
    result.assert_outcomes(passed=5)
    result = pytester.runpytest("-p", "purebpe.testing", "--bpe-tokenizer", "nowhere:Tokenizer")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--bpe-tokenizer nowhere:Tokenizer: cannot import 'nowhere'*"])


def test_cli_prints_a_table_and_exits_by_the_outcome(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(
        [
            "conformance",
            "purebpe.wakong:mask_scheme",
            "--kind",
            "masker",
            "--max-examples",
            "5",
            "--progress",
            "none",
        ]
    )
    out = capsys.readouterr().out
    assert status == 0
    assert "| masks never touch | pass |  |" in out and "5 of 5 properties pass" in out

    (tmp_path / "broken_trainer.py").write_text(textwrap.dedent(BROKEN_TRAINER), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    status = main(["conformance", "broken_trainer:train_bpe", "--max-examples", "6", "--progress", "none"])
    out = capsys.readouterr().out
    assert status == 1
    assert (
        "| merges match purebpe | FAIL | raised ZeroDivisionError: empty corpus -- text = ''; "
        "vocab_size = 256;" in out
    )
    assert "### merges match purebpe" in out and "minimal counterexample:" in out

    status = main(["conformance", "broken_trainer:nothing", "--progress", "none"])
    err = capsys.readouterr().err
    assert status == 2 and err.startswith("purebpe: error: 'broken_trainer:nothing'") and err.count("\n") == 1
