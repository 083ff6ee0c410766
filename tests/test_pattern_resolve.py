"""A pattern string is its named pattern everywhere; known variants are proven equal first.

The proof of each entry of ``KNOWN_VARIANTS``: ``regex`` splits every string of up to
four characters over one representative of every character class the patterns tell
apart identically with the variant and with the named pattern's definition, and
Hypothesis text agrees too.  (Both patterns look at a character only through those
classes, so the representatives stand for every code point.)
"""

from __future__ import annotations

import itertools
from typing import List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import purebpe
from purebpe.errors import PureBPEError
from purebpe.pretokenize import PATTERNS, Pattern, check_pretokenizer, pretokenize, resolve_pattern
from purebpe.pretokenize.resolve import KNOWN_VARIANTS, R50K_ORIGINAL_PATTERN, named_pattern

regex = pytest.importorskip("regex")

#: One character per class: letters by case (Lu, Ll, Lt, Lm, Lo), a mark, the contraction
#: letters in both cases and U+017F (folds to s), a digit and another number, the
#: apostrophe, \r, \n, U+0020, other whitespace, "/" (o200k's), and other punctuation.
CLASSES = "aAǅʰא\u0301sStTdDmMlLvVrReEſ1½'\r\n \t\u00a0/.("
#: A smaller alphabet for the four-character strings (each class still there once).
CLASSES_4 = "aAǅʰ\u0301sSlvr1½'\r\n \t/."

VARIANTS = sorted((source, name) for source, name in KNOWN_VARIANTS.items() if PATTERNS[name] != source)


def all_strings(alphabet: str, length: int) -> List[str]:
    return ["".join(chars) for chars in itertools.product(alphabet, repeat=length)]


@pytest.mark.parametrize("source,name", VARIANTS)
def test_variant_equals_its_named_pattern_on_every_class_string(source: str, name: str) -> None:
    variant, definition = regex.compile(source), regex.compile(PATTERNS[name])
    texts = [t for n in (1, 2, 3) for t in all_strings(CLASSES, n)] + all_strings(CLASSES_4, 4)
    differ = [t for t in texts if variant.findall(t) != definition.findall(t)]
    assert not differ, differ[:5]


text_strategy = st.one_of(
    st.text(st.characters(exclude_categories=())),
    st.lists(st.sampled_from(list(CLASSES) + ["'s", "'LL", "12345", "  \n ", "\r\n"]), max_size=30).map(
        "".join
    ),
)


@pytest.mark.parametrize("source,name", VARIANTS)
@given(text=text_strategy)
@settings(max_examples=300)
def test_variant_equals_its_named_pattern_on_hypothesis_text(source: str, name: str, text: str) -> None:
    assert regex.findall(source, text) == regex.findall(PATTERNS[name], text)


def test_llama3_is_not_cl100k_at_a_final_whitespace_run() -> None:
    # Why Llama 3's (older cl100k) string is a named pattern of its own, not cl100k.
    assert regex.findall(PATTERNS["llama3"], "a\n ") == ["a", "\n", " "]
    assert regex.findall(PATTERNS["cl100k"], "a\n ") == ["a", "\n "]
    assert pretokenize("a\n ", "scanner", pretokenizer="llama3") == ["a", "\n", " "]
    assert pretokenize("a 12345", "scanner", pretokenizer="qwen") == ["a", " ", "1", "2", "3", "4", "5"]


@pytest.mark.parametrize("source", sorted(KNOWN_VARIANTS))
def test_every_known_string_resolves_to_its_name_everywhere(source: str) -> None:
    name = KNOWN_VARIANTS[source]
    assert named_pattern(source) == name
    assert resolve_pattern(source) == name
    assert resolve_pattern(Pattern(source)) == name
    assert check_pretokenizer(source) == name
    assert check_pretokenizer(Pattern(source)) == name


def test_other_strings_resolve_to_regex_patterns() -> None:
    assert resolve_pattern(r"\p{N}{1,3}") == Pattern(r"\p{N}{1,3}")
    assert named_pattern(PATTERNS["cl100k"] + "|x") is None
    with pytest.raises(PureBPEError, match="unknown pre-tokenizer"):
        check_pretokenizer(r"\p{L}+")  # a bare string must be a known pattern (typos stay errors)
    with pytest.raises(TypeError):
        resolve_pattern(3)  # type: ignore[arg-type]


def test_from_ranks_takes_tiktokens_own_pattern_string() -> None:
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"ab"] = 256
    for name in ("gpt2", "cl100k", "o200k"):
        tok = purebpe.Tokenizer.from_ranks(ranks, {"<|endoftext|>": 257}, pretokenizer=PATTERNS[name])
        assert tok.pretokenizer == name
    tok = purebpe.Tokenizer.from_ranks(ranks, {}, pretokenizer=R50K_ORIGINAL_PATTERN)
    assert tok.pretokenizer == "gpt2"
    assert tok.encode("ab ab") == [256, 32, 256]


@pytest.mark.peers
def test_tiktoken_peer_agrees_on_llama3_and_qwen_splits() -> None:
    tiktoken = pytest.importorskip("tiktoken")
    ranks = {bytes([b]): b for b in range(256)}
    for name in ("llama3", "qwen", "qwen3.5"):
        enc = tiktoken.Encoding(name, pat_str=PATTERNS[name], mergeable_ranks=ranks, special_tokens={})
        tok = purebpe.Tokenizer.from_ranks(ranks, {}, pretokenizer=PATTERNS[name])
        assert tok.pretokenizer == name
        marks = "e\u0301t\u00e9 !\u0301 \u0301\u0939\u093e?"  # in Qwen 3.5's words, not its "other" runs
        for text in ("a\n ", "x 1234567\r\n\t y  ", "it's  \n\n  OK'LL", marks):
            assert tok.encode(text) == enc.encode(text)


def test_hf_patterns_with_a_possessive_interval_are_refused() -> None:
    from purebpe.formats.hf import hf_reading
    from purebpe.pretokenize.resolve import CL100K_HF_PATTERN

    assert hf_reading(CL100K_HF_PATTERN) == "cl100k"  # purebpe's own HF spelling
    assert hf_reading(PATTERNS["llama3"]) == "llama3"
    assert hf_reading(PATTERNS["cl100k"]) is None  # \p{N}{1,3}+ is a digit run in Oniguruma
