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
0..255, then the merges in order, then the special tokens. ``semantics="hf"`` is Hugging
Face ``tokenizers``' ``BpeTrainer`` as found by experiment: ties to the smallest pair of
its ids (``tie_break="hf"``), special tokens counted as ordinary text, and a vocab that
holds each byte string once (:func:`reference`).

A *counts-level* trainer, ``train_fn(word_counts, vocab_size, special_tokens)`` with
``word_counts = {word_bytes: count}`` (``level="counts"``), gets the same properties on
word counts drawn up to 2**63 (:data:`HUGE_COUNTS`): counts that overflow 32 or 64 bits
need no gigabytes of text. A trainer that takes ``min_frequency`` or
``max_token_length`` keywords gets a property for each; one importable as
``"module:function"`` gets "deterministic across processes" (two worker processes with
different ``PYTHONHASHSEED``). Every call has a time limit (:mod:`.isolation`).

When the merges differ, the report replays purebpe's merges up to the first difference
and gives both pairs' counts at that step, which tells a tie broken the other way (equal
counts) from a counting difference (overlapping pairs, words across special tokens).

Cost per property: ``max_examples`` trainer calls on inputs of at most a few hundred
bytes, plus one purebpe training each; the real-text property trains once on ~40 KB.
"""

from __future__ import annotations

import inspect
import tempfile
import weakref
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple

import attr
from hypothesis import strategies as st

from ..bytemap import BYTE_TO_UNICODE, encode_token
from ..core import WordTable
from ..corpus import default_corpus
from ..counting import count_from_iterator
from ..errors import PureBPEError
from ..trainers import get_trainer
from .harness import Check, Code, property_check
from .isolation import DEFAULT_TIME_LIMIT, Worker, call_with_time_limit, spec_of
from .strategies import NASTY_PIECES, corpora, special_tokens, vocab_sizes

#: The purebpe variant the trainer under test is compared with.
ORACLE_VARIANT = "incremental"
#: Semantics :func:`trainer_checks` knows.
SEMANTICS = ("cs336", "purebpe", "hf")
#: The real-text case: the first documents of the Python docs, joined by the special token.
REAL_TEXT_DOCUMENTS = 12
REAL_TEXT_VOCAB_SIZE = 500
REAL_TEXT_SPECIAL = "<|endoftext|>"

Vocab = Mapping[int, bytes]
Merges = Sequence[Tuple[bytes, bytes]]
TrainFn = Callable[[str, int, List[str]], Tuple[Vocab, Merges]]
#: ``train_from_counts(word_counts, vocab_size, special_tokens) -> (vocab, merges)``.
CountsTrainFn = Callable[[Dict[bytes, int], int, List[str]], Tuple[Vocab, Merges]]


@attr.s(frozen=True, slots=True, auto_attribs=True, repr=False)
class TrainerCase:
    """One training input: the file's text (or the word counts), the vocabulary size, the
    special tokens, and the limits (passed on only when they are not the defaults)."""

    text: str
    vocab_size: int
    special_tokens: Tuple[str, ...]
    min_frequency: int = 1
    max_token_length: Optional[int] = None
    #: For the counts-level checks: ``((word, count), ...)`` instead of ``text``.
    word_counts: Optional[Tuple[Tuple[bytes, int], ...]] = None

    def __repr__(self) -> str:  # Hypothesis prints cases; the real-text one is 40 KB
        return "TrainerCase(" + ", ".join(f"{name}={value!r}" for name, value in describe(self)) + ")"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))  # Hypothesis' pretty-printer would list every field

    def options(self) -> Dict[str, Any]:
        """The keyword arguments of the call: the limits that are not the defaults."""
        options: Dict[str, Any] = {}
        if self.min_frequency != 1:
            options["min_frequency"] = self.min_frequency
        if self.max_token_length is not None:
            options["max_token_length"] = self.max_token_length
        return options


@st.composite
def trainer_cases(draw: st.DrawFn) -> TrainerCase:
    """A small corpus (documents joined by the first special token, CS336 style)."""
    specials = draw(special_tokens())
    documents = draw(corpora(special_tokens=specials))
    text = (specials[0] if specials else "").join(documents)
    smallest = 256 + len(specials)
    return TrainerCase(text, draw(vocab_sizes(smallest, smallest + 60)), tuple(specials))


@st.composite
def corner_cases(draw: st.DrawFn) -> TrainerCase:
    """A few pieces glued together: the GPT-2 pattern's and UTF-8's corners
    (:data:`~purebpe.testing.strategies.NASTY_PIECES`: contractions, ``\r\n``, runs of
    spaces, scripts), special tokens and their fragments, and a letter or two -- each a
    case where a trainer that reads, cuts or pre-tokenizes the text differently shows it
    in its merges (vocab sizes of 1 to 32 merges: all the pairs of a short text)."""
    specials = draw(st.one_of(special_tokens(), st.sampled_from(NESTED_SPECIALS).map(list)))
    fragments = [s[:-1] for s in specials if len(s) > 1]
    around_specials = st.sampled_from(("a", "b") + tuple(specials) + tuple(fragments))
    piece = st.one_of(around_specials, st.sampled_from(NASTY_PIECES))
    text = "".join(draw(st.lists(piece, min_size=1, max_size=5)))
    smallest = 256 + len(specials)
    return TrainerCase(text, draw(st.integers(smallest + 1, smallest + 32)), tuple(specials))


def corner_examples() -> List[TrainerCase]:
    """The explicit corner cases, tried before any drawn one: each nasty piece alone, and
    each pair of nested special tokens (shorter first) with the longer one in the text."""
    cases = [TrainerCase(piece, 257, ()) for piece in NASTY_PIECES]
    for nested in NESTED_SPECIALS:
        cases.append(TrainerCase("a" + nested[-1] + "a", 256 + len(nested) + 1, tuple(nested)))
    # A pair whose count falls as another merge takes its bytes and is still wanted later
    # (here ``(a, a)``): a lazy heap must push its stale entry back with the new count, not
    # drop it (UniqToken #8). Drawn cases found this only now and then.
    cases.append(TrainerCase(" aaa a", 260, ()))
    return cases


#: Special tokens nested in one another, the shorter first (the order that catches a
#: trainer matching them in the order given): the longest match must win.
NESTED_SPECIALS = (("ab", "abcd"), ("<|endoftext|>", "<|endoftext|><|endoftext|>"))


#: Word counts at the edges of the integer types trainers keep counts in: 2**31 and 2**32
#: (32-bit counts, signed or not), 2**63 (64-bit), and a few billion (one 18 GB corpus'
#: worth of a common word). Word counts this large need no large input.
HUGE_COUNTS = (2**31 - 1, 2**31, 2**31 + 1, 3 * 10**9, 2**32 - 1, 2**32, 2**32 + 1, 5 * 10**9, 2**63)
#: Words are drawn over these byte alphabets: ties, runs, bytes above 0x7F, the zero byte.
WORD_ALPHABETS = (b"a", b"ab", b"abc", b"a b", b"\x00\xc3\xa9\xff", b"xyz")


@st.composite
def counts_cases(draw: st.DrawFn) -> TrainerCase:
    """Word counts (``{word_bytes: count}``), small or huge, for counts-level trainers."""
    alphabet = draw(st.sampled_from(WORD_ALPHABETS))
    count = st.one_of(st.integers(1, 5), st.sampled_from(HUGE_COUNTS))
    word = st.lists(st.sampled_from(list(alphabet)), min_size=1, max_size=8).map(bytes)
    words = draw(st.dictionaries(word, count, max_size=6))
    specials = draw(special_tokens(max_size=2))
    smallest = 256 + len(specials)
    return TrainerCase(
        "", draw(vocab_sizes(smallest, smallest + 30)), tuple(specials), word_counts=tuple(words.items())
    )


def with_limits(cases: st.SearchStrategy[TrainerCase], option: str) -> st.SearchStrategy[TrainerCase]:
    """``cases`` with ``min_frequency`` (2..4) or ``max_token_length`` (1..6) set."""
    values = st.integers(2, 4) if option == "min_frequency" else st.integers(1, 6)
    return st.builds(lambda case, value: attr.evolve(case, **{option: value}), cases, values)


def describe(case: TrainerCase) -> List[Tuple[str, Any]]:
    """The case as assignments; the real-text case as the code that builds its text."""
    if case.word_counts is not None:
        values: List[Tuple[str, Any]] = [("word_counts", dict(case.word_counts))]
    elif case is real_text_case():
        values = [
            (
                "text",
                Code(f"{REAL_TEXT_SPECIAL!r}.join(purebpe.corpus.default_corpus()[:{REAL_TEXT_DOCUMENTS}])"),
            )
        ]
    else:
        values = [("text", case.text)]
    values += [("vocab_size", case.vocab_size), ("special_tokens", list(case.special_tokens))]
    return values + sorted(case.options().items())


def reproducer(semantics: str) -> Callable[[TrainerCase], List[str]]:
    """The code lines that rerun a case, for the semantics' reference."""

    def reproduce(case: TrainerCase) -> List[str]:
        options = "".join(f", {name}={name}" for name in case.options())
        reference = REFERENCE_OPTIONS[semantics]
        if case.word_counts is not None:
            return [
                f"vocab, merges = train_from_counts(word_counts, vocab_size, special_tokens{options})",
                "expected = purebpe.testing.trainer_checks.reference(word_counts, vocab_size, "
                f"special_tokens, {semantics!r}{options})",
            ]
        lines = ['open("case.txt", "wb").write(text.encode("utf-8"))']
        lines.append(f"vocab, merges = train_bpe('case.txt', vocab_size, special_tokens{options})")
        if semantics == "hf":  # lines, special tokens as text (see words_of)
            lines.append("from purebpe.testing.trainer_checks import lines_of")
            lines.append(
                f"expected = purebpe.train_from_iterator(lines_of(text), vocab_size - len(special_tokens), ()"
                f"{options}{reference})"
            )
            return lines
        lines.append(f"expected = purebpe.train('case.txt', vocab_size, special_tokens{options}{reference})")
        return lines

    return reproduce


#: The reference of each semantics, as ``purebpe.train`` options (for the snippets).
REFERENCE_OPTIONS = {
    "cs336": f", variant={ORACLE_VARIANT!r}",
    "purebpe": f", variant={ORACLE_VARIANT!r}",
    "hf": ", tie_break='hf'",
}


@attr.s(frozen=True, slots=True, auto_attribs=True)
class Expected:
    """The reference result of a case: its merges and its vocab's tokens (or exact ids)."""

    merges: List[Tuple[bytes, bytes]]
    vocab: Dict[int, bytes]
    #: Whether the reference reaches ``vocab_size`` (else it ran out of pairs).
    full: bool


def words_of(case: TrainerCase, semantics: str) -> Dict[bytes, int]:
    """The words the semantics trains on: the text cut on the special tokens, pre-tokenized
    with GPT-2's pattern. Under ``"hf"`` the special tokens are ordinary text and the text
    is cut into lines first, each with its ``\n`` (``tokenizers``' ``Tokenizer.train``
    reads a file line by line: no word spans two lines)."""
    if case.word_counts is not None:
        return dict(case.word_counts)
    if semantics == "hf":
        return count_from_iterator(lines_of(case.text)).words
    return count_from_iterator([case.text], case.special_tokens).words


def lines_of(text: str) -> List[str]:
    """``text`` cut after each ``\n`` (only: not ``\r`` or the other line breaks of
    ``str.splitlines``), as ``tokenizers`` reads a training file."""
    pieces = text.split("\n")
    return [piece + "\n" for piece in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])


def reference(
    word_counts: Mapping[bytes, int],
    vocab_size: int,
    special_tokens: Sequence[str],
    semantics: str = "cs336",
    min_frequency: int = 1,
    max_token_length: Optional[int] = None,
) -> Expected:
    """What a trainer following ``semantics`` learns from ``word_counts``.

    ``"cs336"`` and ``"purebpe"``: canonical BPE, ids laid out as purebpe does (bytes,
    merges, specials). ``"hf"`` (on the words of :func:`words_of`, which cut lines and keep
    special tokens as text): ties to the smallest Hugging Face ids, and the vocab
    holds each byte string once (``tokenizers`` gives a merge whose string is already a
    token, a special token say, that token's id), so merging goes on until ``vocab_size``
    distinct strings are reached.
    """
    tie_break = "hf" if semantics == "hf" else "canonical"
    table = WordTable.from_word_counts(
        word_counts, min_frequency=min_frequency, max_token_length=max_token_length, tie_break=tie_break
    )
    specials = [s.encode("utf-8") for s in special_tokens]
    merges = table.merges  # empty
    if semantics != "hf":
        budget = max(0, vocab_size - 256 - len(specials))
        for _ in zip(range(budget), get_trainer(ORACLE_VARIANT)(table)):
            pass
        merges = table.merges
        tokens = [bytes([b]) for b in range(256)] + [left + right for left, right in merges] + specials
        return Expected(merges, dict(enumerate(tokens)), len(tokens) == vocab_size)
    # tokenizers names a token by its string: a special token by itself, bytes by their
    # GPT-2 characters. A token whose string is already taken gets that token's id, which
    # both its tie-breaks and the vocab's size see.
    hf_ids = {special: -(i - len(special_tokens)) for i, special in enumerate(special_tokens)}
    for byte in range(256):
        table.tie_keys[byte] = hf_ids.setdefault(BYTE_TO_UNICODE[byte], table.tie_keys[byte])
    trainer = get_trainer(ORACLE_VARIANT)(table)
    while len(hf_ids) < vocab_size and next(trainer, None) is not None:
        new_id = len(table.token_bytes) - 1
        table.tie_keys[new_id] = hf_ids.setdefault(
            encode_token(table.token_bytes[new_id]), table.tie_keys[new_id]
        )
    return Expected(
        table.merges, dict(enumerate(hf_vocab(special_tokens, table.merges))), len(hf_ids) >= vocab_size
    )


def hf_vocab(special_tokens: Sequence[str], merges: Merges) -> List[bytes]:
    """The tokens of a ``tokenizers`` vocab as bytes: the special tokens, the bytes and the
    merges' results, each string once (a special token is its own string, bytes are
    their GPT-2 characters)."""
    tokens = {special: special.encode("utf-8") for special in special_tokens}
    for token in [bytes([b]) for b in range(256)] + [left + right for left, right in merges]:
        tokens.setdefault(encode_token(token), token)
    return list(tokens.values())


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
        if not (
            isinstance(merge, tuple) and len(merge) == 2 and all(isinstance(part, bytes) for part in merge)
        ):
            raise AssertionError(f"merge {index} is {merge!r}, not a (bytes, bytes) tuple")
    return vocab, merges


def first_difference(expected: Sequence[Any], got: Sequence[Any]) -> int:
    """The first index where the sequences differ (the shorter length if one is a prefix)."""
    for index, (a, b) in enumerate(zip(expected, got)):
        if a != b:
            return index
    return min(len(expected), len(got))


def diagnose_merge(
    words: Mapping[bytes, int], semantics: str, expected: Merges, got: Merges, index: int
) -> List[str]:
    """Both sides of the first differing merge, with their counts after ``index`` merges."""
    table = WordTable.from_word_counts(words, expected[:index])
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
            lines.append(TIE_RULES[semantics])
        elif their_count == 0:
            lines.append("yours merged a pair that does not occur in the words at this step")
        else:
            lines.append(
                "yours merged a less frequent pair: it counts pairs differently (text of special "
                "tokens, overlapping pairs, pre-tokenization, count overflow...)"
            )
    elif theirs is None:
        lines.append("yours stopped early")
    else:
        lines.append("yours merged past the end: purebpe has no pair left to merge")
    return lines


#: What the reference does on a tie, for the diagnosis.
TIE_RULES = {
    "cs336": "a tie: purebpe (and CS336) take the lexicographically greatest pair",
    "purebpe": "a tie: purebpe (and CS336) take the lexicographically greatest pair",
    "hf": (
        "a tie: Hugging Face takes the pair of the smallest ids (bytes in GPT-2 character order, then merges)"
    ),
}


def check_most_frequent(words: Mapping[bytes, int], merges: Merges) -> None:
    """Fail unless each merge joins a pair with the highest count at its step.

    The definition, written out in bytes as CS336 states it (a word is a list of byte
    strings; merging rewrites it left to right): a second, tie-agnostic reference that
    shares no code with purebpe's trainers.
    """
    table = [([bytes([b]) for b in word], count) for word, count in words.items()]
    for index, (left, right) in enumerate(merges):
        pair_counts: Dict[Tuple[bytes, bytes], int] = {}
        for word, count in table:
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
        for word, _ in table:
            i = 0
            while i < len(word) - 1:
                if word[i] == left and word[i + 1] == right:
                    word[i : i + 2] = [left + right]
                i += 1


def _describe_pair(
    pair: Optional[Tuple[bytes, bytes]], pair_counts: Mapping[Tuple[bytes, bytes], int]
) -> str:
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


def accepts(fn: Callable[..., Any], option: str) -> bool:
    """Whether ``fn`` takes the keyword argument ``option`` (by name, or ``**kwargs``)."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # builtins without a signature
        return False
    return any(
        (p.name == option and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)) or p.kind == p.VAR_KEYWORD
        for p in parameters
    )


class Subject:
    """The callable under test and how to call it: on a case file (``train_bpe``) or on
    word counts (``train_from_counts``), in this process with a time limit, or in a
    :class:`~purebpe.testing.isolation.Worker` process."""

    def __init__(self, fn: Callable[..., Any], level: str, time_limit: float) -> None:
        self.fn = fn
        self.level = level
        self.time_limit = time_limit
        # One directory for the checks' case files (rewritten per example; creating and
        # removing a directory per example costs more than a small training run). It is
        # removed when the checks are garbage collected, or at exit.
        self.workspace = tempfile.TemporaryDirectory(prefix="purebpe-conformance-")

    def arguments(self, case: TrainerCase) -> Tuple[List[Any], Dict[str, Any]]:
        if self.level == "counts":
            first: Any = dict(case.word_counts or ())
        else:
            path = Path(self.workspace.name) / "case.txt"
            path.write_bytes(case.text.encode("utf-8"))
            first = str(path)
        return [first, case.vocab_size, list(case.special_tokens)], case.options()

    def call(self, case: TrainerCase, worker: Optional[Worker] = None) -> Tuple[Vocab, Merges]:
        args, kwargs = self.arguments(case)
        if worker is not None:
            return check_shape(worker.call(args, kwargs, self.time_limit))
        return check_shape(call_with_time_limit(self.fn, args, kwargs, self.time_limit))


def trainer_checks(
    train_fn: Callable[..., Any],
    semantics: str = "cs336",
    *,
    level: str = "text",
    spec: Optional[str] = None,
    time_limit: float = DEFAULT_TIME_LIMIT,
) -> List[Check]:
    """The conformance properties of ``train_fn`` under ``semantics``, in report order.

    ``level="text"``: ``train_fn(input_path, vocab_size, special_tokens)``;
    ``level="counts"``: ``train_fn(word_counts, vocab_size, special_tokens)``. The
    ``min_frequency`` and ``max_token_length`` properties are added when ``train_fn``
    takes those keywords, the cross-process one when it can be imported by ``spec``
    (found by :func:`~purebpe.testing.isolation.spec_of` when not given).
    """
    if semantics not in SEMANTICS:
        raise PureBPEError(f"unknown semantics {semantics!r}; choose one of: {', '.join(SEMANTICS)}")
    subject = Subject(train_fn, level, time_limit)
    cases = counts_cases() if level == "counts" else trainer_cases()
    reproduce = reproducer(semantics)
    oracle = "purebpe" if semantics != "hf" else "Hugging Face's rules"

    def expected(case: TrainerCase) -> Expected:
        return reference(
            words_of(case, semantics),
            case.vocab_size,
            case.special_tokens,
            semantics,
            case.min_frequency,
            case.max_token_length,
        )

    def check(
        name: str,
        description: str,
        verify: Callable[[TrainerCase], None],
        drawn: st.SearchStrategy[TrainerCase] = cases,
        examples: Sequence[TrainerCase] = (),
    ) -> Check:
        return property_check(name, description, drawn, verify, describe, reproduce, examples)

    def well_formed(case: TrainerCase) -> None:
        vocab, _ = subject.call(case)
        ids = sorted(vocab)
        if ids != list(range(len(vocab))):
            raise AssertionError(
                f"vocab ids are not 0..{len(vocab) - 1}\n"
                f"missing: {sorted(set(range(len(vocab))) - set(ids))[:8]}, out of range: "
                f"{[i for i in ids if not 0 <= i < len(vocab)][:8]}"
            )

    def size(case: TrainerCase) -> None:
        vocab, _ = subject.call(case)
        if len(vocab) > case.vocab_size:
            raise AssertionError(f"{len(vocab)} tokens, more than vocab_size {case.vocab_size}")
        if expected(case).full and len(vocab) != case.vocab_size:
            raise AssertionError(
                f"{len(vocab)} tokens, fewer than vocab_size {case.vocab_size}, which {oracle} reach"
            )

    def composition(case: TrainerCase) -> None:
        vocab, merges = subject.call(case)
        wanted = [bytes([b]) for b in range(256)] + [s.encode("utf-8") for s in case.special_tokens]
        wanted += [left + right for left, right in merges]
        if semantics == "hf":  # one id per distinct string
            wanted = hf_vocab(case.special_tokens, merges)
        if Counter(vocab.values()) != Counter(wanted):
            raise AssertionError(
                "the vocab is not the 256 bytes + the special tokens + one token per merge"
                + (" (each string once)" if semantics == "hf" else "")
                + "\n"
                + "\n".join(_multiset_difference(wanted, list(vocab.values())))
            )

    def merge_order(case: TrainerCase) -> None:
        _, merges = subject.call(case)
        known = {bytes([b]) for b in range(256)}
        for index, (left, right) in enumerate(merges):
            for part in (left, right):
                if part not in known:
                    raise AssertionError(
                        f"merge {index} {(left, right)!r} uses {part!r}, which no earlier merge made"
                    )
            known.add(left + right)

    def most_frequent(case: TrainerCase) -> None:
        _, merges = subject.call(case)
        check_most_frequent(words_of(case, semantics), merges)

    def same_merges(case: TrainerCase) -> None:
        _, merges = subject.call(case)
        wanted = expected(case).merges
        if list(merges) != wanted:
            index = first_difference(wanted, list(merges))
            raise AssertionError(
                f"merge {index} differs ({len(merges)} merges, {oracle} {len(wanted)})\n"
                + "\n".join(diagnose_merge(words_of(case, semantics), semantics, wanted, merges, index))
            )

    def same_vocab(case: TrainerCase) -> None:
        vocab, _ = subject.call(case)
        wanted = expected(case).vocab
        if semantics == "purebpe":
            if dict(vocab) != wanted:
                size = max(len(wanted), len(vocab))
                index = first_difference(
                    [wanted.get(i) for i in range(size)], [vocab.get(i) for i in range(size)]
                )
                raise AssertionError(
                    f"vocab[{index}] differs\npurebpe: {wanted.get(index)!r}\nyours:   {vocab.get(index)!r}"
                )
        elif Counter(vocab.values()) != Counter(wanted.values()):
            raise AssertionError(
                "the vocab's tokens differ (compared as a multiset of bytes)\n"
                + "\n".join(_multiset_difference(list(wanted.values()), list(vocab.values())))
            )

    def deterministic(case: TrainerCase) -> None:
        first = subject.call(case)
        second = subject.call(case)
        if (dict(first[0]), list(first[1])) != (dict(second[0]), list(second[1])):
            raise AssertionError("two runs on the same input give different results")

    spec = spec if spec is not None else spec_of(train_fn)
    workers = [Worker(spec, seed) for seed in HASH_SEEDS] if spec is not None else []
    # The workers live as long as the checks; they stop when their stdin closes.
    weakref.finalize(subject, close_all, workers)

    def across_processes(case: TrainerCase) -> None:
        results = [subject.call(case, worker) for worker in workers]
        first = (dict(results[0][0]), list(results[0][1]))
        for worker, result in zip(workers[1:], results[1:]):
            if (dict(result[0]), list(result[1])) != first:
                merges = first[1], list(result[1])
                index = first_difference(*merges)
                raise AssertionError(
                    f"PYTHONHASHSEED={workers[0].hash_seed} and {worker.hash_seed} give different results "
                    f"(merge {index}: {_at(merges[0], index)} and {_at(merges[1], index)})\n"
                    "the result depends on hash order: ties broken by the iteration order of a dict or set?"
                )

    def limited(case: TrainerCase) -> None:
        same_merges(case)
        if case.max_token_length is not None:
            _, merges = subject.call(case)
            for index, (left, right) in enumerate(merges):
                if len(left) + len(right) > case.max_token_length:
                    raise AssertionError(
                        f"merge {index} {(left, right)!r} makes {len(left + right)} bytes, "
                        f"over max_token_length {case.max_token_length}"
                    )

    def real_text(case: TrainerCase) -> None:
        same_merges(case)
        same_vocab(case)

    vocab_kind = "with the same ids" if semantics == "purebpe" else "(as a multiset of bytes)"
    checks = [
        check("well-formed", "returns (vocab, merges); vocab ids are 0..n-1, tokens bytes", well_formed),
        check("vocab size", f"at most vocab_size tokens, exactly vocab_size when {oracle} reach it", size),
        check(
            "vocab = bytes + specials + merges",
            "every byte, special token and merge result is in the vocab, and nothing else",
            composition,
        ),
        check(
            "merges use earlier tokens",
            "each merge joins bytes or tokens made by earlier merges",
            merge_order,
        ),
        check(
            "each merge is a most frequent pair",
            "replaying your merges on the words, each joins a pair of the highest count (any tie-break)",
            most_frequent,
        ),
        check(
            "merges match purebpe",
            f"the same merges in the same order as {oracle} ({semantics} semantics)",
            same_merges,
        ),
        check("vocab matches purebpe", f"the same tokens {vocab_kind}", same_vocab),
        check("deterministic", "two runs on the same input agree", deterministic),
    ]
    if workers:
        checks.append(
            check(
                "deterministic across processes",
                f"runs in processes with PYTHONHASHSEED={' and '.join(str(s) for s in HASH_SEEDS)} agree",
                across_processes,
            )
        )
    for option in ("min_frequency", "max_token_length"):
        if accepts(train_fn, option):
            checks.append(
                check(
                    option,
                    f"with {option} set, the merges match {oracle} (and respect it)",
                    limited,
                    with_limits(cases, option),
                )
            )
    if level == "text":
        checks.append(
            check(
                "corner cases",
                f"merges and vocab match {oracle} on a few pieces: contractions, \\r\\n, spaces, "
                "scripts, specials",
                real_text,
                corner_cases(),
            )
        )
        checks.append(
            check(
                "each nasty piece",
                f"merges and vocab match {oracle} on each nasty piece alone, and on nested special tokens",
                real_text,
                st.sampled_from(corner_examples()),
                corner_examples(),
            )
        )
        checks.append(
            property_check(
                "real text",
                f"merges and vocab match {oracle} on {REAL_TEXT_DOCUMENTS} Python docs pages, vocab "
                f"{REAL_TEXT_VOCAB_SIZE}",
                st.builds(real_text_case),
                real_text,
                describe,
                reproduce,
            )
        )
    return checks


def close_all(workers: Sequence[Worker]) -> None:
    for worker in workers:
        worker.close()


#: The hash seeds of the two worker processes of "deterministic across processes".
HASH_SEEDS = (1, 2)


def _at(merges: Merges, index: int) -> str:
    return repr(merges[index]) if index < len(merges) else "(none)"


@lru_cache(maxsize=1)
def real_text_case() -> TrainerCase:
    """The first pages of the Python docs joined by ``<|endoftext|>``, vocab 500."""
    text = REAL_TEXT_SPECIAL.join(default_corpus()[:REAL_TEXT_DOCUMENTS])
    return TrainerCase(text, REAL_TEXT_VOCAB_SIZE, (REAL_TEXT_SPECIAL,))
