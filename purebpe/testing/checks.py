"""Conformance checks any BPE implementation can run on itself.

Five kinds of implementation, one function each::

    from purebpe.testing import (
        check_encoder, check_mask_generator, check_tokenizer, check_trainer,
        check_trainer_from_counts,
    )

    # (input_path, vocab_size, special_tokens) -> (vocab, merges)
    check_trainer(my_module.train_bpe)
    # ({word_bytes: count}, vocab_size, special_tokens) -> (vocab, merges)
    check_trainer_from_counts(my_module.train)
    # (vocab, merges, special_tokens) -> tokenizer
    check_tokenizer(my_module.Tokenizer)
    # (rng, seq_len) -> [(start, length), ...]
    check_mask_generator(my_module.mask_scheme)
    # text -> ids, against purebpe's reading of a tokenizer file
    check_encoder(my_module.encode, "tokenizer.json")

Each runs every property of its kind (:mod:`.trainer_checks`, :mod:`.tokenizer_checks`,
:mod:`.masker_checks`, :mod:`.encoder_checks`) under Hypothesis and raises one ``AssertionError`` naming the
failed properties, each with the minimal counterexample Hypothesis found written as a
runnable snippet. Call them from a test (``def test_conformance(): check_trainer(...)``),
or use the pytest plugin or ``purebpe conformance`` (see ``docs/conformance.md``).

The default settings (:func:`.harness.default_settings`) run 50 examples per property
with a fixed seed; pass ``settings=hypothesis.settings(max_examples=500)`` to search
harder (unset options then come from the active Hypothesis profile).
"""

from __future__ import annotations

from typing import Any, Callable, Collection, Dict, List, Optional

from hypothesis import settings as Settings

from ..errors import PureBPEError
from ..progress import Progress
from ..wakong import MAX_SPAN, PROPOSED_MASK_RATE
from .encoder_checks import Encoder, encoder_checks, load_reference
from .harness import Check, Outcome, raise_failures, run_checks
from .isolation import DEFAULT_TIME_LIMIT
from .masker_checks import MASKED_FRACTION, MaskFn, masker_checks
from .tokenizer_checks import Factory, tokenizer_checks
from .trainer_checks import CountsTrainFn, TrainFn, trainer_checks

#: The kinds of implementation, and what each kind's callable is.
KINDS: Dict[str, str] = {
    "trainer": "train_bpe(input_path, vocab_size, special_tokens) -> (vocab, merges)",
    "counts-trainer": "train_from_counts(word_counts, vocab_size, special_tokens) -> (vocab, merges)",
    "tokenizer": "factory(vocab, merges, special_tokens) -> object with encode, decode, encode_iterable",
    "masker": "mask_scheme(rng, seq_len) -> sorted [(start, length), ...]",
    "encoder": "encode(text) -> ids, against purebpe's reading of a tokenizer file",
}


def checks_for(
    kind: str,
    fn: Callable[..., Any],
    *,
    semantics: str = "cs336",
    properties: Optional[Collection[str]] = None,
    spec: Optional[str] = None,
    time_limit: float = DEFAULT_TIME_LIMIT,
    tokenizer_file: Any = None,
    add_special_tokens: bool = False,
) -> List[Check]:
    """The properties of ``fn`` as an implementation of ``kind`` (one of :data:`KINDS`),
    all of them or those named in ``properties``. ``spec`` (``"module:function"``, found
    when not given) lets a trainer run in worker processes; ``time_limit`` bounds each
    call of a trainer, in seconds; an encoder is checked against ``tokenizer_file``
    (with the post-processor's BOS/EOS when ``add_special_tokens``)."""
    if kind in ("trainer", "counts-trainer"):
        level = "counts" if kind == "counts-trainer" else "text"
        checks = trainer_checks(fn, semantics, level=level, spec=spec, time_limit=time_limit)
    elif kind == "tokenizer":
        checks = tokenizer_checks(fn)
    elif kind == "masker":
        checks = masker_checks(fn)
    elif kind == "encoder":
        if tokenizer_file is None:
            raise PureBPEError("an encoder is checked against a tokenizer file: give tokenizer_file")
        checks = encoder_checks(fn, load_reference(tokenizer_file, add_special_tokens))
    else:
        raise PureBPEError(f"unknown kind {kind!r}; choose one of: {', '.join(KINDS)}")
    return select(checks, properties)


def select(checks: List[Check], properties: Optional[Collection[str]]) -> List[Check]:
    """The checks named in ``properties`` (all when ``None``); an unknown name is an error."""
    if properties is None:
        return checks
    names = [check.name for check in checks]
    unknown = [name for name in properties if name not in names]
    if unknown:
        raise PureBPEError(
            f"unknown propert{'y' if len(unknown) == 1 else 'ies'} {unknown}; choose from {names}"
        )
    return [check for check in checks if check.name in properties]


def conformance(
    kind: str,
    fn: Callable[..., Any],
    *,
    semantics: str = "cs336",
    properties: Optional[Collection[str]] = None,
    settings: Optional[Settings] = None,
    progress: Progress = False,
    spec: Optional[str] = None,
    time_limit: float = DEFAULT_TIME_LIMIT,
) -> List[Outcome]:
    """Run the properties of ``kind`` (all, or those named in ``properties``) on ``fn``
    and return the outcomes; a failed property does not raise (``purebpe conformance``
    prints the outcomes as a table)."""
    checks = checks_for(
        kind, fn, semantics=semantics, properties=properties, spec=spec, time_limit=time_limit
    )
    return run_checks(checks, settings, progress)


def check_trainer(
    train_fn: TrainFn,
    *,
    semantics: str = "cs336",
    properties: Optional[Collection[str]] = None,
    settings: Optional[Settings] = None,
    spec: Optional[str] = None,
    time_limit: float = DEFAULT_TIME_LIMIT,
) -> None:
    """Check a trainer with the CS336 signature against purebpe's canonical BPE.

    ``train_fn(input_path, vocab_size, special_tokens)`` returns ``(vocab, merges)``:
    ``{id: token_bytes}`` and ``[(left_bytes, right_bytes), ...]``. With
    ``semantics="cs336"`` the merges must equal purebpe's as a list and the vocab as a
    multiset of byte strings (ids may be laid out differently); ``"purebpe"`` demands
    the exact ids too; ``"hf"`` compares with Hugging Face ``tokenizers``' rules (ties to
    the smallest ids, special tokens counted as text). Also checked: ids ``0..n-1``, the
    vocab size, that the vocab is exactly the bytes, the special tokens and the merge
    results, merge order, determinism (across processes with different
    ``PYTHONHASHSEED`` too, when ``train_fn`` is importable as ``spec``), and
    ``min_frequency`` and ``max_token_length`` when ``train_fn`` takes them. A call that
    takes longer than ``time_limit`` seconds fails its property. Raises
    ``AssertionError`` with a counterexample per failed property. ``properties`` names
    the ones to run (default: all).
    """
    checks = checks_for(
        "trainer", train_fn, semantics=semantics, properties=properties, spec=spec, time_limit=time_limit
    )
    raise_failures("the trainer", run_checks(checks, settings))


def check_trainer_from_counts(
    train_fn: CountsTrainFn,
    *,
    semantics: str = "cs336",
    properties: Optional[Collection[str]] = None,
    settings: Optional[Settings] = None,
    spec: Optional[str] = None,
    time_limit: float = DEFAULT_TIME_LIMIT,
) -> None:
    """Check a trainer that takes word counts: ``train_fn(word_counts, vocab_size,
    special_tokens) -> (vocab, merges)`` with ``word_counts = {word_bytes: count}``.

    The properties of :func:`check_trainer` but "real text", on word counts drawn up to
    2**63, so that pair counts past 2**31, 2**32 and 2**63 are checked without
    gigabytes of text. Options as :func:`check_trainer`.
    """
    checks = checks_for(
        "counts-trainer",
        train_fn,
        semantics=semantics,
        properties=properties,
        spec=spec,
        time_limit=time_limit,
    )
    raise_failures("the trainer", run_checks(checks, settings))


def check_tokenizer(
    factory: Factory, *, properties: Optional[Collection[str]] = None, settings: Optional[Settings] = None
) -> None:
    """Check the tokenizers ``factory(vocab, merges, special_tokens)`` builds.

    Round trip, the same ids as ``purebpe.Tokenizer`` on the same vocab and merges,
    ``encode_iterable`` equal to ``encode`` however the text is cut, ``decode`` equal to
    the vocab's bytes (invalid UTF-8 replaced), and agreement on real text. Raises
    ``AssertionError`` with a counterexample per failed property. ``properties`` names
    the ones to run (default: all).
    """
    checks = checks_for("tokenizer", factory, properties=properties)
    raise_failures("the tokenizer", run_checks(checks, settings))


def check_mask_generator(
    fn: MaskFn,
    *,
    rate: float = PROPOSED_MASK_RATE,
    max_span: int = MAX_SPAN,
    masked_fraction: Optional[float] = MASKED_FRACTION,
    properties: Optional[Collection[str]] = None,
    settings: Optional[Settings] = None,
) -> None:
    """Check a Wakong mask generator ``fn(rng, seq_len) -> [(start, length), ...]``.

    The invariants of Wakong's construction for the given ``rate`` and ``max_span``
    (spans in range and sorted, masks never touching, the budget, determinism) and,
    unless ``masked_fraction`` is ``None``, the masked fraction of long sequences.
    Raises ``AssertionError`` with a counterexample per failed property. ``properties``
    names the ones to run (default: all).
    """
    checks = select(
        masker_checks(fn, rate=rate, max_span=max_span, masked_fraction=masked_fraction), properties
    )
    raise_failures("the mask generator", run_checks(checks, settings))


def check_encoder(
    encode: Encoder,
    tokenizer_file: Any,
    *,
    add_special_tokens: bool = False,
    properties: Optional[Collection[str]] = None,
    settings: Optional[Settings] = None,
    **load_options: Any,
) -> None:
    """Check an encoder ``encode(text) -> ids`` against purebpe's reading of a tokenizer file.

    ``tokenizer_file`` is any file ``purebpe.Tokenizer.from_file`` reads (an HF
    ``tokenizer.json`` with its whole pipeline, a tiktoken-format rank file with
    ``encoding="llama3"`` or another of ``load_options``, Tekken, GPT-2 files), or a
    tokenizer already loaded by purebpe. Added and special tokens in the text must come
    out as their ids; with ``add_special_tokens=True`` (HF files) the post-processor's
    BOS/EOS too. The texts (:mod:`.encoder_checks`): sample text in five scripts, code,
    emoji and ZWJ sequences, combining marks, ``\\r\\n``, whitespace and digit runs, the
    file's added tokens glued to words and with spaces around, a 20 KB run without
    whitespace, and Hypothesis text. Raises ``AssertionError`` with the failing text
    shrunk to a few characters, both id lists, the first differing position and the
    tokens around it.

    The properties run in order and the first that fails ends the run (its
    counterexample is the report; the others would add time, not news).

    >>> import purebpe, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> paths = purebpe.train_from_iterator(["low lower lowest"] * 3, 262, ["<|endoftext|>"]).save(folder)
    >>> tok = purebpe.Tokenizer.from_file(folder)
    >>> check_encoder(tok.encode, folder)  # purebpe against itself: passes
    >>> check_encoder(tok.encode_ordinary, folder)  # special tokens as text: caught
    Traceback (most recent call last):
    ...
    AssertionError: the encoder fails 1 property (corner cases):
    <BLANKLINE>
    corner cases: the ids differ from position 0: expected 261, got 60
    minimal counterexample:
        text = '<|endoftext|>'
    ...
    """
    raise_failures(
        "the encoder",
        encoder_conformance(
            encode,
            tokenizer_file,
            add_special_tokens=add_special_tokens,
            properties=properties,
            settings=settings,
            **load_options,
        ),
    )


def encoder_conformance(
    encode: Encoder,
    tokenizer_file: Any,
    *,
    add_special_tokens: bool = False,
    properties: Optional[Collection[str]] = None,
    settings: Optional[Settings] = None,
    progress: Progress = False,
    **load_options: Any,
) -> List[Outcome]:
    """:func:`check_encoder`'s outcomes, up to the first failing property, without raising
    (``purebpe conformance --encoder`` prints them as a table)."""
    reference = load_reference(tokenizer_file, add_special_tokens, **load_options)
    checks = select(encoder_checks(encode, reference), properties)
    return run_checks(checks, settings, progress, stop_at_failure=True)
