"""Conformance properties of a BPE trainer with the CS336 signature.

A trainer here is ``train_fn(input_path, vocab_size, special_tokens) -> (vocab, merges)``
(Stanford CS336's assignment signature): ``vocab`` maps ids to token bytes, ``merges`` is
the list of ``(left_bytes, right_bytes)`` merges in order. Each property writes a
generated case to a temporary UTF-8 file and calls the trainer on it; the reference is
purebpe itself (``purebpe.train(..., variant=ORACLE_VARIANT)``; every variant is proven
identical to the naive one by purebpe's own tests).

``semantics="cs336"`` (the default) accepts any id layout: CS336 puts the special tokens
at id 0, purebpe after the merges. The vocab is compared as a multiset of byte strings
and the merges as a list. ``semantics="purebpe"`` demands purebpe's exact ids: bytes at
0..255, then the merges in order, then the special tokens.

When the merges differ, the report replays purebpe's merges up to the first difference
and gives both pairs' counts at that step, which tells a tie broken the other way (equal
counts) from a counting difference (overlapping pairs, words across special tokens).

Cost per property: ``max_examples`` trainer calls on inputs of at most a few hundred
bytes, plus one purebpe training each; the real-text property trains once on ~40 KB.
"""
from __future__ import annotations

import tempfile
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import attr
from hypothesis import strategies as st

from ..core import WordTable
from ..corpus import default_corpus
from ..counting import count_from_iterator
from ..errors import PureBPEError
from ..model import BPEModel
from ..training import train
from .harness import Check, Code, property_check
from .strategies import corpora, special_tokens, vocab_sizes

#: The purebpe variant the trainer under test is compared with.
ORACLE_VARIANT = "incremental"
#: Semantics :func:`trainer_checks` knows.
SEMANTICS = ("cs336", "purebpe")
#: The real-text case: the first documents of the Python docs, joined by the special token.
REAL_TEXT_DOCUMENTS = 12
REAL_TEXT_VOCAB_SIZE = 500
REAL_TEXT_SPECIAL = "<|endoftext|>"

Vocab = Mapping[int, bytes]
Merges = Sequence[Tuple[bytes, bytes]]
TrainFn = Callable[[str, int, List[str]], Tuple[Vocab, Merges]]


@attr.s(frozen=True, slots=True, auto_attribs=True, repr=False)
class TrainerCase:
    """One training input: the file's text, the vocabulary size, the special tokens."""

    text: str
    vocab_size: int
    special_tokens: Tuple[str, ...]

    def __repr__(self) -> str:  # Hypothesis prints cases; the real-text one is 40 KB
        text = self.text if len(self.text) <= 200 else self.text[:200] + "..."
        return f"TrainerCase(text={text!r}, vocab_size={self.vocab_size}, special_tokens={self.special_tokens!r})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))  # Hypothesis' pretty-printer would list every field


@st.composite
def trainer_cases(draw: st.DrawFn) -> TrainerCase:
    """A small corpus (documents joined by the first special token, CS336 style)."""
    specials = draw(special_tokens())
    documents = draw(corpora(special_tokens=specials))
    text = (specials[0] if specials else "").join(documents)
    smallest = 256 + len(specials)
    return TrainerCase(text, draw(vocab_sizes(smallest, smallest + 60)), tuple(specials))


def describe(case: TrainerCase) -> List[Tuple[str, Any]]:
    """The case as assignments; the real-text case as the code that builds its text."""
    if case is real_text_case():
        text: Any = Code(f"{REAL_TEXT_SPECIAL!r}.join(purebpe.corpus.default_corpus()[:{REAL_TEXT_DOCUMENTS}])")
        return [("text", text), ("vocab_size", case.vocab_size), ("special_tokens", list(case.special_tokens))]
    return [("text", case.text), ("vocab_size", case.vocab_size), ("special_tokens", list(case.special_tokens))]


def reproduce(case: TrainerCase) -> List[str]:
    return [
        'open("case.txt", "wb").write(text.encode("utf-8"))',
        "vocab, merges = train_bpe('case.txt', vocab_size, special_tokens)",
        f"expected = purebpe.train('case.txt', vocab_size, special_tokens, variant={ORACLE_VARIANT!r})",
    ]


def run_on_text(
    train_fn: TrainFn, case: TrainerCase, directory: str
) -> Tuple[Tuple[Vocab, Merges], BPEModel]:
    """The trainer's result and purebpe's on the case, written to ``directory/case.txt``."""
    path = Path(directory) / "case.txt"
    path.write_bytes(case.text.encode("utf-8"))
    result = train_fn(str(path), case.vocab_size, list(case.special_tokens))
    expected = train(path, case.vocab_size, case.special_tokens, variant=ORACLE_VARIANT)
    return check_shape(result), expected


def check_shape(result: Any) -> Tuple[Vocab, Merges]:
    """``result`` if it is ``(dict of int -> bytes, list of (bytes, bytes))``, else fail."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise AssertionError(f"returned {type(result).__name__}, not a (vocab, merges) pair")
    vocab, merges = result
    if not isinstance(vocab, Mapping):
        raise AssertionError(f"vocab is a {type(vocab).__name__}, not a dict")
    for tid, token in vocab.items():
        if not isinstance(tid, int) or isinstance(tid, bool):
            raise AssertionError(f"vocab key {tid!r} is not an int")
        if not isinstance(token, bytes):
            raise AssertionError(f"vocab[{tid}] = {token!r} is not bytes")
    if not isinstance(merges, Sequence):
        raise AssertionError(f"merges is a {type(merges).__name__}, not a list")
    for index, merge in enumerate(merges):
        if not (isinstance(merge, tuple) and len(merge) == 2 and all(isinstance(part, bytes) for part in merge)):
            raise AssertionError(f"merge {index} is {merge!r}, not a (bytes, bytes) tuple")
    return vocab, merges


def first_difference(expected: Sequence[Any], got: Sequence[Any]) -> int:
    """The first index where the sequences differ (the shorter length if one is a prefix)."""
    for index, (a, b) in enumerate(zip(expected, got)):
        if a != b:
            return index
    return min(len(expected), len(got))


def diagnose_merge(case: TrainerCase, expected: Merges, got: Merges, index: int) -> List[str]:
    """Both sides of the first differing merge, with their counts after ``index`` merges."""
    counts = count_from_iterator([case.text], case.special_tokens)
    table = WordTable.from_word_counts(counts.words, expected[:index])
    pair_counts: Dict[Tuple[bytes, bytes], int] = {}
    for pair, count in table.count_pairs().items():
        key = table.pair_key(pair)
        pair_counts[key] = pair_counts.get(key, 0) + count
    mine = expected[index] if index < len(expected) else None
    theirs = got[index] if index < len(got) else None
    lines = [
        f"purebpe: {_describe_pair(mine, pair_counts)}",
        f"yours:   {_describe_pair(theirs, pair_counts)}",
    ]
    if mine is not None and theirs is not None:
        mine_count, their_count = pair_counts.get(mine, 0), pair_counts.get(theirs, 0)
        if mine_count == their_count:
            lines.append("a tie: purebpe (and CS336) take the lexicographically greatest pair")
        elif their_count == 0:
            lines.append("yours merged a pair that does not occur in the words at this step")
        else:
            lines.append(
                "yours merged a less frequent pair: it counts pairs differently (text of special "
                "tokens, overlapping pairs, pre-tokenization...)"
            )
    elif theirs is None:
        lines.append("yours stopped early")
    else:
        lines.append("yours merged past the end: purebpe has no pair left to merge")
    return lines


def check_most_frequent(case: TrainerCase, merges: Merges) -> None:
    """Fail unless each merge joins a pair with the highest count at its step.

    The definition, written out in bytes as CS336 states it (a word is a list of byte
    strings; merging rewrites it left to right): a second, tie-agnostic reference that
    shares no code with purebpe's trainers.
    """
    counts = count_from_iterator([case.text], case.special_tokens)
    words = [([bytes([b]) for b in word], count) for word, count in counts.words.items()]
    for index, (left, right) in enumerate(merges):
        pair_counts: Dict[Tuple[bytes, bytes], int] = {}
        for word, count in words:
            for pair in zip(word, word[1:]):
                pair_counts[pair] = pair_counts.get(pair, 0) + count
        best = max(pair_counts.values(), default=0)
        found = pair_counts.get((left, right), 0)
        if found == 0 and best == 0:
            raise AssertionError(
                f"merge {index} {(left, right)!r} is one too many: no pair is left in the words\n"
                "(text inside special tokens, or across words, is not counted)"
            )
        if found < best or found == 0:
            leaders = sorted((pair for pair, count in pair_counts.items() if count == best), reverse=True)
            raise AssertionError(
                f"merge {index} {(left, right)!r} has count {found}, but the highest is {best}\n"
                f"pairs with count {best}: {leaders[:4]!r}{' ...' if len(leaders) > 4 else ''}"
            )
        for word, _ in words:
            i = 0
            while i < len(word) - 1:
                if word[i] == left and word[i + 1] == right:
                    word[i : i + 2] = [left + right]
                i += 1


def _describe_pair(pair: Optional[Tuple[bytes, bytes]], pair_counts: Mapping[Tuple[bytes, bytes], int]) -> str:
    if pair is None:
        return "(no merge)"
    return f"{pair!r} (count {pair_counts.get(pair, 0)})"


def _multiset_difference(expected: Sequence[bytes], got: Sequence[bytes]) -> List[str]:
    missing = sorted((Counter(expected) - Counter(got)).elements())
    extra = sorted((Counter(got) - Counter(expected)).elements())
    return [
        f"missing from yours: {missing[:8]!r}{' ...' if len(missing) > 8 else ''}",
        f"extra in yours:     {extra[:8]!r}{' ...' if len(extra) > 8 else ''}",
    ]


def trainer_checks(train_fn: TrainFn, semantics: str = "cs336") -> List[Check]:
    """The conformance properties of ``train_fn`` under ``semantics``, in report order."""
    if semantics not in SEMANTICS:
        raise PureBPEError(f"unknown semantics {semantics!r}; choose one of: {', '.join(SEMANTICS)}")
    cases = trainer_cases()
    # One directory for the checks' case files (rewritten per example; creating and
    # removing a directory per example costs more than a small training run). It is
    # removed when the checks are garbage collected, or at exit.
    workspace = tempfile.TemporaryDirectory(prefix="purebpe-conformance-")

    def run(case: TrainerCase) -> Tuple[Tuple[Vocab, Merges], BPEModel]:
        return run_on_text(train_fn, case, workspace.name)

    def check(name: str, description: str, verify: Callable[[TrainerCase], None]) -> Check:
        return property_check(name, description, cases, verify, describe, reproduce)

    def well_formed(case: TrainerCase) -> None:
        (vocab, _), _ = run(case)
        ids = sorted(vocab)
        if ids != list(range(len(vocab))):
            raise AssertionError(
                f"vocab ids are not 0..{len(vocab) - 1}\n"
                f"missing: {sorted(set(range(len(vocab))) - set(ids))[:8]}, out of range: {[i for i in ids if not 0 <= i < len(vocab)][:8]}"
            )

    def size(case: TrainerCase) -> None:
        (vocab, _), expected = run(case)
        if len(vocab) > case.vocab_size:
            raise AssertionError(f"{len(vocab)} tokens, more than vocab_size {case.vocab_size}")
        if expected.vocab_size == case.vocab_size and len(vocab) != case.vocab_size:
            raise AssertionError(f"{len(vocab)} tokens, fewer than vocab_size {case.vocab_size}, which purebpe reaches")

    def composition(case: TrainerCase) -> None:
        (vocab, merges), _ = run(case)
        wanted = [bytes([b]) for b in range(256)] + [s.encode("utf-8") for s in case.special_tokens]
        wanted += [left + right for left, right in merges]
        if Counter(vocab.values()) != Counter(wanted):
            raise AssertionError(
                "the vocab is not the 256 bytes + the special tokens + one token per merge\n"
                + "\n".join(_multiset_difference(wanted, list(vocab.values())))
            )

    def merge_order(case: TrainerCase) -> None:
        (_, merges), _ = run(case)
        known = {bytes([b]) for b in range(256)}
        for index, (left, right) in enumerate(merges):
            for part in (left, right):
                if part not in known:
                    raise AssertionError(f"merge {index} {(left, right)!r} uses {part!r}, which no earlier merge made")
            known.add(left + right)

    def most_frequent(case: TrainerCase) -> None:
        (_, merges), _ = run(case)
        check_most_frequent(case, merges)

    def same_merges(case: TrainerCase) -> None:
        (_, merges), expected = run(case)
        if list(merges) != expected.merges:
            index = first_difference(expected.merges, list(merges))
            raise AssertionError(
                f"merge {index} differs ({len(merges)} merges, purebpe {len(expected.merges)})\n"
                + "\n".join(diagnose_merge(case, expected.merges, merges, index))
            )

    def same_vocab(case: TrainerCase) -> None:
        (vocab, _), expected = run(case)
        if semantics == "purebpe":
            if dict(vocab) != expected.vocab:
                index = first_difference(
                    [expected.vocab.get(i) for i in range(max(len(expected.vocab), len(vocab)))],
                    [vocab.get(i) for i in range(max(len(expected.vocab), len(vocab)))],
                )
                raise AssertionError(
                    f"vocab[{index}] differs\n"
                    f"purebpe: {expected.vocab.get(index)!r}\nyours:   {vocab.get(index)!r}"
                )
        elif Counter(vocab.values()) != Counter(expected.vocab.values()):
            raise AssertionError(
                "the vocab's tokens differ (compared as a multiset of bytes)\n"
                + "\n".join(_multiset_difference(list(expected.vocab.values()), list(vocab.values())))
            )

    def deterministic(case: TrainerCase) -> None:
        (first, _) = run(case)
        (second, _) = run(case)
        if (dict(first[0]), list(first[1])) != (dict(second[0]), list(second[1])):
            raise AssertionError("two runs on the same input give different results")

    def real_text(case: TrainerCase) -> None:
        same_merges(case)
        same_vocab(case)

    return [
        check("well-formed", "returns (vocab, merges); vocab ids are 0..n-1, tokens bytes", well_formed),
        check("vocab size", "at most vocab_size tokens, exactly vocab_size when purebpe reaches it", size),
        check(
            "vocab = bytes + specials + merges",
            "every byte, special token and merge result is in the vocab, and nothing else",
            composition,
        ),
        check("merges use earlier tokens", "each merge joins bytes or tokens made by earlier merges", merge_order),
        check(
            "each merge is a most frequent pair",
            "replaying your merges on the corpus, each joins a pair of the highest count (any tie-break)",
            most_frequent,
        ),
        check("merges match purebpe", "the same merges in the same order as purebpe (CS336's reference)", same_merges),
        check(
            "vocab matches purebpe",
            "the same tokens " + ("with the same ids" if semantics == "purebpe" else "(as a multiset of bytes)"),
            same_vocab,
        ),
        check("deterministic", "two runs on the same input agree", deterministic),
        property_check(
            "real text",
            f"merges and vocab match purebpe on {REAL_TEXT_DOCUMENTS} Python docs pages, vocab {REAL_TEXT_VOCAB_SIZE}",
            st.builds(real_text_case),
            real_text,
            describe,
            reproduce,
        ),
    ]


@lru_cache(maxsize=1)
def real_text_case() -> TrainerCase:
    """The first pages of the Python docs joined by ``<|endoftext|>``, vocab 500."""
    text = REAL_TEXT_SPECIAL.join(default_corpus()[:REAL_TEXT_DOCUMENTS])
    return TrainerCase(text, REAL_TEXT_VOCAB_SIZE, (REAL_TEXT_SPECIAL,))
