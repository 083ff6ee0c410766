"""Hypothesis strategies shared by the tests: the characters a peer may be compared on,
and, for the trainer tests that work below the text level, word counts.

Text corpora come from the public :mod:`purebpe.testing.strategies` (``corpora``,
``special_tokens``, ``vocab_sizes``). What is here feeds a :class:`~purebpe.core.WordTable`
directly: words as bytes with counts, from tiny byte alphabets, so that every example is
dense with ties, repeated pairs and overlapping runs (``aaaa``), and carries the bytes of a
multi-byte character; no pre-tokenizer spreads them out.
"""

from __future__ import annotations

from typing import Dict

from hypothesis import strategies as st

#: The characters this Python's Unicode assigns (no surrogates, no unassigned code points),
#: for tests that compare with a peer. The peers' regex engines (tiktoken's Rust regex,
#: HF's Oniguruma) carry other Unicode versions than the ``regex`` package, whose classes
#: purebpe's patterns follow: a code point assigned since (U+323B0, CJK Extension J in
#: Unicode 17) is a letter to one and unassigned to the other, and splits differently.
ASSIGNED_CHARACTERS = st.characters(blacklist_categories=("Cs", "Cn"))

#: Byte alphabets: one letter (runs only), two or three letters (ties everywhere), and
#: the two bytes of "é" beside ASCII (the token ids above 127).
BYTE_ALPHABETS = (b"a", b"ab", b"abc", "ab\u00e9".encode("utf-8"), b"xyz")


@st.composite
def word_counts(draw: st.DrawFn, max_words: int = 8, max_length: int = 12) -> Dict[bytes, int]:
    """``{word_bytes: count}``: up to ``max_words`` words of 1..``max_length`` bytes."""
    alphabet = list(draw(st.sampled_from(BYTE_ALPHABETS)))
    words: Dict[bytes, int] = draw(
        st.dictionaries(
            st.lists(st.sampled_from(alphabet), min_size=1, max_size=max_length).map(bytes),
            st.integers(1, 5),
            max_size=max_words,
        )
    )
    return words
