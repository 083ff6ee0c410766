"""Conformance properties of a BPE tokenizer: round trip, agreement with purebpe, streaming.

A tokenizer is built by ``factory(vocab, merges, special_tokens)`` (the CS336 assignment's
``Tokenizer.__init__`` signature; ``purebpe.Tokenizer`` itself is one) and must offer
``encode(text) -> list[int]``, ``decode(ids) -> str`` and
``encode_iterable(iterable_of_str) -> iterable of int``. Special tokens are always
encoded as their single ids.

Each case trains a small purebpe model on a generated corpus (so the merges apply to the
generated text: same alphabet, same special tokens) and builds both the tokenizer under
test and ``purebpe.Tokenizer`` from it. The real-text property uses one model trained on
Python docs pages and encodes slices of other pages.

Cost per property: ``max_examples`` small trainings and encodings (milliseconds each);
the real-text model is trained once per process (about a second on CPython).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, Dict, Iterable, List, Sequence, Tuple

import attr
from hypothesis import strategies as st

from ..corpus import default_corpus
from ..model import BPEModel
from ..tokenizer import Tokenizer
from ..training import train_from_iterator
from .harness import Check, Code, property_check
from .strategies import ALPHABETS, corpora, special_tokens, texts, vocab_sizes

#: The real-text model: trained on the first Python docs pages, tested on the others.
REAL_TEXT_DOCUMENTS = 12
REAL_TEXT_VOCAB_SIZE = 600
REAL_TEXT_SPECIAL = "<|endoftext|>"

Factory = Callable[[Dict[int, bytes], List[Tuple[bytes, bytes]], List[str]], Any]


@attr.s(frozen=True, slots=True, auto_attribs=True, repr=False)
class TokenizerCase:
    """A model's training input and the text to encode (``cuts`` split it for streaming)."""

    corpus: Tuple[str, ...]
    vocab_size: int
    special_tokens: Tuple[str, ...]
    text: str
    cuts: Tuple[int, ...] = ()
    real_text: bool = False  # the model is :func:`real_text_model`, not trained on corpus

    def model(self) -> BPEModel:
        if self.real_text:
            return real_text_model()
        return _train(self.corpus, self.vocab_size, self.special_tokens)

    def chunks(self) -> List[str]:
        """``text`` cut at ``cuts`` (which may fall inside words and special tokens)."""
        bounds = [0, *sorted(min(cut, len(self.text)) for cut in self.cuts), len(self.text)]
        return [self.text[a:b] for a, b in zip(bounds, bounds[1:])]

    def __repr__(self) -> str:  # Hypothesis prints cases; the real-text one is long
        return f"TokenizerCase(text={self.text[:60]!r}..., vocab_size={self.vocab_size})"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(repr(self))  # Hypothesis' pretty-printer would list every field


@lru_cache(maxsize=64)
def _train(corpus: Tuple[str, ...], vocab_size: int, specials: Tuple[str, ...]) -> BPEModel:
    return train_from_iterator(corpus, vocab_size, specials)


@st.composite
def tokenizer_cases(draw: st.DrawFn) -> TokenizerCase:
    """A small model and a text in the same alphabet, sometimes one of its training texts."""
    specials = tuple(draw(special_tokens()))
    alphabet = draw(st.sampled_from(ALPHABETS))
    corpus = tuple(draw(corpora(alphabet, special_tokens=specials)))
    vocab_size = draw(vocab_sizes(256 + len(specials), 256 + len(specials) + 60))
    # New text in the corpus' alphabet, then some training texts (where every merge applies).
    text = draw(texts(alphabet, special_tokens=specials))
    if corpus:
        text += "".join(draw(st.lists(st.sampled_from(corpus), max_size=3)))
    cuts = tuple(draw(st.lists(st.integers(0, len(text)), min_size=1, max_size=8)))
    return TokenizerCase(corpus, vocab_size, specials, text, cuts)


@lru_cache(maxsize=1)
def real_text_model() -> BPEModel:
    """The model trained on the first pages of the Python docs, vocab 600."""
    pages = default_corpus()[:REAL_TEXT_DOCUMENTS]
    return train_from_iterator(pages, REAL_TEXT_VOCAB_SIZE, [REAL_TEXT_SPECIAL])


@st.composite
def real_text_cases(draw: st.DrawFn) -> TokenizerCase:
    """A slice of a later docs page, sometimes two joined by ``<|endoftext|>``."""
    pages = default_corpus()[REAL_TEXT_DOCUMENTS:]
    pieces = []
    for _ in range(draw(st.integers(1, 2))):
        page = pages[draw(st.integers(0, len(pages) - 1))]
        start = draw(st.integers(0, len(page)))
        pieces.append(page[start : start + draw(st.integers(0, 3000))])
    text = REAL_TEXT_SPECIAL.join(pieces)
    return TokenizerCase((), REAL_TEXT_VOCAB_SIZE, (REAL_TEXT_SPECIAL,), text, real_text=True)


def describe(case: TokenizerCase) -> List[Tuple[str, Any]]:
    if case.real_text:
        return [
            ("model", Code("purebpe.testing.tokenizer_checks.real_text_model()")),
            ("special_tokens", list(case.special_tokens)),
            ("text", case.text),
        ]
    values: List[Tuple[str, Any]] = [
        ("corpus", list(case.corpus)),
        ("vocab_size", case.vocab_size),
        ("special_tokens", list(case.special_tokens)),
        ("text", case.text),
    ]
    if case.cuts:
        values.append(("chunks", case.chunks()))
    return values


def reproduce(case: TokenizerCase) -> List[str]:
    lines = (
        [] if case.real_text else ["model = purebpe.train_from_iterator(corpus, vocab_size, special_tokens)"]
    )
    return lines + ["tokenizer = factory(model.vocab, model.merges, special_tokens)"]


def _ids(values: Iterable[Any], what: str) -> List[int]:
    ids = list(values)
    for position, tid in enumerate(ids):
        if not isinstance(tid, int) or isinstance(tid, bool):
            raise AssertionError(f"{what} returned {tid!r} at position {position}, not an int")
    return ids


def _first_difference(
    expected: Sequence[int], got: Sequence[int], names: Tuple[str, str] = ("purebpe", "yours")
) -> str:
    for index, (a, b) in enumerate(zip(expected, got)):
        if a != b:
            return f"first difference at position {index}: {names[0]} {a}, {names[1]} {b}"
    return f"{names[0]} gives {len(expected)} ids, {names[1]} {len(got)}"


def tokenizer_checks(factory: Factory) -> List[Check]:
    """The conformance properties of the tokenizers ``factory`` builds, in report order."""

    def build(case: TokenizerCase) -> Tuple[Any, Tokenizer, BPEModel]:
        model = case.model()
        theirs = factory(dict(model.vocab), list(model.merges), list(case.special_tokens))
        return theirs, Tokenizer(model.vocab, model.merges, case.special_tokens), model

    def round_trip(case: TokenizerCase) -> None:
        tokenizer, _, _ = build(case)
        ids = _ids(tokenizer.encode(case.text), "encode")
        decoded = tokenizer.decode(ids)
        if decoded != case.text:
            raise AssertionError(f"decode(encode(text)) is {decoded!r}\nids: {ids}")

    def matches(case: TokenizerCase) -> None:
        tokenizer, reference, _ = build(case)
        ids = _ids(tokenizer.encode(case.text), "encode")
        expected = reference.encode(case.text)
        if ids != expected:
            raise AssertionError(
                f"encode(text) differs from purebpe's\n{_first_difference(expected, ids)}\n"
                f"purebpe: {expected}\nyours:   {ids}"
            )

    def streaming(case: TokenizerCase) -> None:
        tokenizer, _, _ = build(case)
        whole = _ids(tokenizer.encode(case.text), "encode")
        streamed = _ids(tokenizer.encode_iterable(iter(case.chunks())), "encode_iterable")
        if streamed != whole:
            raise AssertionError(
                f"encode_iterable(chunks) differs from encode(text)\n"
                f"{_first_difference(whole, streamed, ('encode', 'encode_iterable'))}"
            )

    def decoding(case: TokenizerCase) -> None:
        tokenizer, _, model = build(case)
        ids = _ids(tokenizer.encode(case.text), "encode")
        # Arbitrary id sequences too: every id in the vocab, in an order that cuts
        # multi-byte characters, so invalid UTF-8 must become U+FFFD like purebpe's.
        for sequence in (ids, sorted(model.vocab)[::-1], sorted(model.vocab)[250:260]):
            expected = b"".join(model.vocab[i] for i in sequence).decode("utf-8", "replace")
            decoded = tokenizer.decode(sequence)
            if decoded != expected:
                raise AssertionError(
                    f"decode({sequence[:20]}{'...' if len(sequence) > 20 else ''}) is not the vocab's bytes "
                    f"decoded with errors='replace'\nexpected: {expected[:200]!r}\n"
                    f"yours:    {decoded[:200]!r}"
                )

    def real_text(case: TokenizerCase) -> None:
        matches(case)
        round_trip(case)

    cases = tokenizer_cases()

    def check(name: str, description: str, verify: Callable[[TokenizerCase], None]) -> Check:
        return property_check(name, description, cases, verify, describe, reproduce)

    return [
        check("round trip", "decode(encode(text)) == text", round_trip),
        check(
            "encode matches purebpe",
            "the same ids as purebpe.Tokenizer on the same vocab and merges",
            matches,
        ),
        check(
            "encode_iterable = encode",
            "encode_iterable(chunks) == encode(''.join(chunks)), cut anywhere",
            streaming,
        ),
        check(
            "decode = vocab bytes",
            "decode(ids) is the ids' bytes decoded as UTF-8 with errors='replace'",
            decoding,
        ),
        property_check(
            "real text",
            f"encode matches purebpe and round-trips on Python docs pages (vocab {REAL_TEXT_VOCAB_SIZE})",
            real_text_cases(),
            real_text,
            describe,
            reproduce,
        ),
    ]
