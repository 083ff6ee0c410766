"""Conformance of an encoder (text -> ids) with a tokenizer file, against purebpe's reading of it.

The encoder under test is any callable ``encode(text) -> list of ids``: HF ``tokenizers``
(``lambda t: tok.encode(t, add_special_tokens=False).ids``), ``tiktoken``
(``lambda t: enc.encode(t, allowed_special="all")``), a Rust port, a course project. The
reference is ``purebpe.Tokenizer.from_file(tokenizer_file)`` -- an HF ``tokenizer.json``
with its whole pipeline (normalizer, pre-tokenizer, ``BPE`` options, added tokens), a
tiktoken-format rank file with a named model, Tekken, GPT-2 files -- or a tokenizer the
caller already loaded. Added and special tokens in the text are encoded as their ids (for
an HF file, as HF matches them; for the other kinds, every special token).

Three properties (:func:`encoder_checks`), each over texts built for the file's own added
tokens:

* **corner cases** -- a fixed list, tried in order: each sample text whole
  (:data:`SAMPLES`: German, Russian, Chinese, Japanese, Korean, English, code with
  ``\\r\\n``, emoji and ZWJ sequences, combining marks, whitespace and digit runs), each
  of :data:`PIECES` alone, each added token bare, glued to words, with spaces and
  newlines around it (``lstrip``/``rstrip``), in other letter cases and as a fragment,
  and a 20 KB run without whitespace;
* **pieces** -- Hypothesis joins a few of those: slices and words of the samples, nasty pieces,
  added tokens in their settings, long runs, arbitrary characters;
* **arbitrary text** -- :func:`purebpe.testing.strategies.texts` with the added tokens.

A failing text is shrunk twice: by Hypothesis (on the choices that drew it), then
character by character (:func:`shrink_text`: deleting stretches while the encoder still
disagrees), so the report shows a text of a few characters, both id lists, the first
differing position and the tokens around it in both.

Cost: two encodings (reference and encoder) per example, 50 examples per Hypothesis
property by default, about 100 corner cases (one 20 KB); a failure adds a few hundred
encodings of short texts while shrinking.
"""

from __future__ import annotations

import os
import re
import unicodedata
from typing import Any, Callable, List, Optional, Sequence, Tuple

from hypothesis import settings as Settings
from hypothesis import strategies as st

from ..errors import PureBPEError
from .harness import Check, Counterexample, property_check
from .strategies import NASTY_PIECES, _any_character, texts
from .tokenizer_checks import _ids

__all__ = ["Encoder", "Reference", "SAMPLES", "PIECES", "encoder_checks", "load_reference", "shrink_text"]

Encoder = Callable[[str], Sequence[int]]

#: Real text in the scripts the open models serve, and the text shapes that break encoders.
SAMPLES: Sequence[str] = (
    "The quick brown fox jumps over the lazy dog. It's 2024, isn't it? We'll see: 1234567 items.",
    "Größere Übungen für Straßenbahnfahrer: Änderungen im Fahrplan ab März.",
    "Съешь же ещё этих мягких французских булок, да выпей чаю. Москва, Россия.",
    "我们的模型在中文文本上表现良好。北京是中国的首都，人口超过两千万。",
    "日本語のテキストも正しくトークン化されるべきです。東京は日本の首都です。",
    "한국어 텍스트도 올바르게 토큰화되어야 합니다. 서울은 대한민국의 수도입니다.",
    "def encode(self, text: str) -> List[int]:\r\n    return [ord(c) for c in text]  # TODO\r\n",
    "Emoji: 👍🏽 👨\u200d👩\u200d👧\u200d👦 🏳️\u200d🌈 ❤️ and combining: e\u0301 n\u0303 a\u030a\u0327.",
    "    indented\n\n\n    lines\t\ttabs   and   spaces 0000 12 345 6789 3.14159",
)

#: Short pieces where pipelines differ: the pre-tokenizer regexes' corners (cl100k and
#: Llama 3 part on ``"a\\n "``), digit runs of every length up to 7, ``\\r\\n`` runs,
#: whitespace runs, ZWJ sequences and skin tones, combining marks (NFC/NFKC change them),
#: compatibility characters (NFKC changes them), the strategies' nasty pieces.
PIECES: Sequence[str] = tuple(
    dict.fromkeys(
        (
            "a\n ",
            "a\n\n b",
            " \n ",
            "x  \n\n  y",
            "\r\n\r\n",
            "  \t ",
            "1",
            "12",
            "123",
            "1234",
            "12345",
            "1234567",
            "x2024y",
            "٣٤٥",
            "e\u0301",
            "A\u030a",
            "ﬁ①Ｈ",
            "👨\u200d👩\u200d👧",
            "👍🏽",
            "🏳️\u200d🌈",
            "I'M",
            "don't",
            *NASTY_PIECES,
        )
    )
)

#: Characters of the long run without whitespace (the issue's "20 KB run").
LONG_RUN_CHARS = 20_000
#: Most encoder calls one shrink may make (the text is already short after Hypothesis).
SHRINK_BUDGET = 4000
#: Ids shown either side of the first difference.
AROUND = 3

_BYTE_TOKEN = re.compile(r"<0x[0-9A-Fa-f]{2}>")
#: How many ``<0xNN>`` added tokens (Llama 2 and Gemma list all 256) the generators use.
BYTE_TOKENS_KEPT = 2


class Reference:
    """purebpe's encoding of a tokenizer file: the ids, and each id's token for reports.

    ``tokenizer`` is an :class:`purebpe.hf.HFTokenizer` or a :class:`purebpe.Tokenizer`.

    >>> from purebpe.hf import loads
    >>> ref = Reference(loads('{"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []}}'))
    >>> ref.encode("ab"), ref.token(1)
    ([0, 1], "'b'")
    """

    def __init__(
        self, tokenizer: Any, add_special_tokens: bool = False, name: str = "", path: Optional[str] = None
    ) -> None:
        self.tokenizer = tokenizer
        self.path = path  # the file it was loaded from, if any
        self.add_special_tokens = add_special_tokens
        self.is_hf = hasattr(tokenizer, "added") and hasattr(tokenizer, "model")
        if add_special_tokens and not self.is_hf:
            raise PureBPEError(
                "add_special_tokens is for HF tokenizer.json files (their post-processor adds "
                f"BOS/EOS); {name or 'this tokenizer'} has none"
            )
        self.name = name or getattr(tokenizer, "name", "") or type(tokenizer).__name__

    def encode(self, text: str) -> List[int]:
        if self.is_hf:
            ids: List[int] = self.tokenizer.encode(text, add_special_tokens=self.add_special_tokens)
            return ids
        return list(self.tokenizer.encode(text, allowed_special="all", disallowed_special=()))

    def added_tokens(self) -> List[str]:
        """The added (HF) or special tokens, at most :data:`BYTE_TOKENS_KEPT` ``<0xNN>`` ones."""
        if self.is_hf:
            contents = [token.content for _, token in sorted(self.tokenizer.added.by_id.items())]
        else:
            contents = sorted(self.tokenizer.special_tokens)
        kept = [c for c in contents if not _BYTE_TOKEN.fullmatch(c)]
        return kept + [c for c in contents if _BYTE_TOKEN.fullmatch(c)][:BYTE_TOKENS_KEPT]

    def token(self, tid: int) -> str:
        """``tid``'s token as the file spells it (its bytes for rank files), for reports."""
        try:
            if self.is_hf:
                token = self.tokenizer.id_to_token(tid)
                return "?" if token is None else repr(token)
            return repr(self.tokenizer.decode_single_token_bytes(tid))
        except (KeyError, IndexError, TypeError, ValueError, PureBPEError):
            return "?"


def load_reference(tokenizer_file: Any, add_special_tokens: bool = False, **load_options: Any) -> Reference:
    """The :class:`Reference` for a tokenizer file (any kind ``Tokenizer.from_file`` reads;
    ``load_options`` such as ``encoding="llama3"`` are for rank files), or for an already
    loaded :class:`purebpe.hf.HFTokenizer` / :class:`purebpe.Tokenizer` (or
    :class:`Reference`)."""
    if isinstance(tokenizer_file, (str, os.PathLike)):
        from ..tokenizer import Tokenizer

        tokenizer = Tokenizer.from_file(tokenizer_file, **load_options)
        path = os.fspath(tokenizer_file)
        return Reference(tokenizer, add_special_tokens, path, path)
    if isinstance(tokenizer_file, Reference) and tokenizer_file.add_special_tokens == add_special_tokens:
        return tokenizer_file
    if load_options:
        raise PureBPEError(
            f"{sorted(load_options)}: options for loading a file, but a loaded tokenizer was given"
        )
    if isinstance(tokenizer_file, Reference):
        tokenizer_file = tokenizer_file.tokenizer
    if not callable(getattr(tokenizer_file, "encode", None)):
        raise TypeError(
            f"tokenizer_file must be a path or a purebpe tokenizer, not {type(tokenizer_file).__name__}"
        )
    return Reference(tokenizer_file, add_special_tokens)


# -- the texts ------------------------------------------------------------------------------


def _case_variants(token: str) -> List[str]:
    """``token`` in other spellings a normalizer may map onto it (or it onto them)."""
    variants = [token.lower(), token.upper(), unicodedata.normalize("NFKD", token)]
    return [v for v in dict.fromkeys(variants) if v != token]


def added_settings(token: str) -> List[str]:
    """``token`` as encoders mishandle it: bare, glued to words, spaces and newlines around
    (``lstrip``/``rstrip``), doubled, in other letter cases, as a fragment (plain text).

    >>> added_settings("<s>")[:4]
    ['<s>', 'ab<s>cd', ' <s> ', 'x  <s>\\n y']
    """
    settings = [token, f"ab{token}cd", f" {token} ", f"x  {token}\n y", f"{token}{token}", f"\t{token}word"]
    settings += _case_variants(token)
    if len(token) > 1:
        settings.append(token[:-1])
    return settings


def corner_texts(added: Sequence[str]) -> List[str]:
    """The fixed texts of the "corner cases" property, short ones first."""
    cases = list(PIECES) + [setting for token in added for setting in added_settings(token)]
    cases += list(SAMPLES)
    joined = " ".join(SAMPLES)
    if added:
        joined = added[0].join(SAMPLES) + " ".join(added)
    cases.append(joined)
    cases.append(_long_run())
    return list(dict.fromkeys(cases))


def _long_run() -> str:
    """:data:`LONG_RUN_CHARS` characters without whitespace, of several scripts."""
    seed = "".join("".join(sample.split()) for sample in SAMPLES)
    return (seed * (LONG_RUN_CHARS // len(seed) + 1))[:LONG_RUN_CHARS]


_SAMPLE, _WORDS, _PIECE, _ADDED, _RUN, _ANY = range(6)
#: Each sample cut into words, each with the whitespace before it (``" quick"``).
_SAMPLE_WORDS = [re.findall(r"\s*\S+|\s+$", sample) for sample in SAMPLES]
_SMALL = st.integers(0, 15)


def _render(added: Sequence[str], plans: Sequence[Tuple[int, int, int, int]]) -> str:
    """The text the plans stand for: each plan is ``(kind, a, b, c)``, small ints."""
    out = []
    for kind, a, b, c in plans:
        if kind == _SAMPLE:
            sample = SAMPLES[a % len(SAMPLES)]
            start = (b * 7) % len(sample)
            out.append(sample[start : start + 1 + c * 5])
        elif kind == _WORDS:
            words = _SAMPLE_WORDS[a % len(SAMPLES)]
            first = b % len(words)
            out.append("".join(words[first : first + 1 + c % 3]))
        elif kind == _PIECE:
            out.append(PIECES[(16 * a + b) % len(PIECES)])
        elif kind == _ADDED and added:
            settings = added_settings(added[a % len(added)])
            out.append(settings[b % len(settings)])
        elif kind == _RUN:
            sample = "".join(SAMPLES[a % len(SAMPLES)].split())
            start = (b * 7) % len(sample)
            out.append((sample[start : start + 1 + c % 4] * 400)[: 20 + 60 * c])
        else:
            out.append(_any_character(a, b))
    return "".join(out)


def piece_texts(added: Sequence[str]) -> "st.SearchStrategy[str]":
    """A few pieces joined: sample slices, a few words of a sample, :data:`PIECES`, added
    tokens in their settings (:func:`added_settings`), runs without whitespace (up to 920
    characters), any character."""
    kinds = [_SAMPLE, _WORDS, _PIECE, _RUN, _ANY] + ([_ADDED, _ADDED] if added else [])
    plan = st.tuples(st.sampled_from(kinds), _SMALL, _SMALL, _SMALL)
    return st.lists(plan, min_size=1, max_size=6).map(lambda plans: _render(tuple(added), plans))


# -- comparing and shrinking ------------------------------------------------------------------


def shrink_text(text: str, fails: Callable[[str], bool], budget: int = SHRINK_BUDGET) -> str:
    """A shorter text that still ``fails``: stretches deleted, halves first, then single
    characters, while the budget of calls lasts (every character of the result is needed
    unless the budget ran out).

    >>> shrink_text("xxabxx", lambda t: "ab" in t)
    'ab'
    """
    size = max(1, len(text) // 2)
    while size >= 1 and budget > 0:
        start = 0
        while start < len(text) and budget > 0:
            candidate = text[:start] + text[start + size :]
            budget -= 1
            if fails(candidate):
                text = candidate
            else:
                start += size
        size //= 2
    return text


class Comparison:
    """Runs the encoder and the reference on a text and says how they differ."""

    def __init__(self, encode: Encoder, reference: Reference) -> None:
        self.encode = encode
        self.reference = reference

    def fails(self, text: str) -> bool:
        try:
            return self.problem(text) is not None
        except Exception:  # the encoder crashed: a failure too
            return True

    def problem(self, text: str) -> Optional[Tuple[str, List[str]]]:
        """``None`` when the encoder agrees on ``text``; else the reason and detail lines.
        Exceptions the encoder raises pass through."""
        expected = self.reference.encode(text)
        got = _ids(self.encode(text), "encode")
        if got == expected:
            return None
        return self.describe(expected, got)

    def describe(self, expected: List[int], got: List[int]) -> Tuple[str, List[str]]:
        position = next((i for i, (a, b) in enumerate(zip(expected, got)) if a != b), None)
        if position is None:
            position = min(len(expected), len(got))
            reason = (
                f"the encoder gives {len(got)} ids, the reference {len(expected)} (the same up to {position})"
            )
        else:
            reason = (
                f"the ids differ from position {position}: expected {expected[position]}, got {got[position]}"
            )
        details = [f"expected ids: {expected}", f"got ids:      {got}"]
        details.append(f"expected tokens around {position}: {self._around(expected, position)}")
        details.append(f"got tokens around {position}:      {self._around(got, position)}")
        return reason, details

    def _around(self, ids: List[int], position: int) -> str:
        start = max(0, position - AROUND)
        shown = [
            f"{'>' if i == position else ''}{ids[i]}={self.reference.token(ids[i])}"
            for i in range(start, min(len(ids), position + AROUND + 1))
        ]
        return " ".join(shown) or "(none)"


def _reproduce(reference: Reference) -> List[str]:
    if reference.path is None:
        return ["encode(text) == purebpe.testing.encoder_checks.Reference(tokenizer).encode(text)"]
    flag = ", add_special_tokens=True" if reference.add_special_tokens else ""
    return [
        "from purebpe.testing.encoder_checks import load_reference",
        f"encode(text) == load_reference({reference.path!r}{flag}).encode(text)",
    ]


def _shrunk(check: str, comparison: Comparison, text: str, exc: BaseException) -> Counterexample:
    """The :class:`Counterexample` of ``text`` shrunk by :func:`shrink_text`."""
    small = shrink_text(text, comparison.fails)
    try:
        found = comparison.problem(small)
    except Exception as crash:  # the encoder raised on the shrunk text
        found = (f"the encoder raised {type(crash).__name__}: {crash}", [])
    if found is None:  # pragma: no cover - the encoder is not deterministic
        found = (str(exc).splitlines()[0] if str(exc) else type(exc).__name__, [])
    reason, details = found
    values: List[Tuple[str, Any]] = [("text", small)]
    if small != text:
        details = details + [f"shrunk from a text of {len(text)} characters"]
    return Counterexample(check, reason, values, details, _reproduce(comparison.reference))


def encoder_checks(encode: Encoder, reference: Reference) -> List[Check]:
    """The properties of ``encode`` against ``reference``, in report order."""
    comparison = Comparison(encode, reference)
    added = reference.added_tokens()

    def verify(text: str) -> None:
        found = comparison.problem(text)
        if found is not None:
            raise AssertionError("\n".join([found[0], *found[1]]))

    def describe(text: str) -> List[Tuple[str, Any]]:
        return [("text", text)]

    def shrinking(check: Check) -> Check:
        """``check`` with its counterexample's text shrunk further by :func:`shrink_text`."""

        def run(settings: Settings) -> None:
            try:
                check.run(settings)
            except Counterexample as exc:
                text = dict(exc.values).get("text")
                if not isinstance(text, str):  # pragma: no cover - every case has a text
                    raise
                raise _shrunk(check.name, comparison, text, exc) from None

        return Check(check.name, check.description, run)

    def corners(settings: Settings) -> None:
        for text in corner_texts(added):
            if comparison.fails(text):
                raise _shrunk("corner cases", comparison, text, AssertionError("differs"))

    corner_description = (
        "the reference's ids on each sample text (5 scripts, code, emoji, combining marks), "
        "nasty pieces, each added token in every setting, a 20 KB run without whitespace"
    )
    return [
        Check("corner cases", corner_description, corners),
        shrinking(
            property_check(
                "pieces",
                "the reference's ids on pieces joined: sample slices, nasty pieces, added tokens, long runs",
                piece_texts(added),
                verify,
                describe,
                lambda text: _reproduce(reference),
            )
        ),
        shrinking(
            property_check(
                "arbitrary text",
                "the reference's ids on purebpe.testing.texts() with the added tokens",
                texts(special_tokens=added),
                verify,
                describe,
                lambda text: _reproduce(reference),
            )
        ),
    ]
