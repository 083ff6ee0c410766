"""Hypothesis strategies for BPE corpora, with the nasty cases built in.

Each strategy is a function returning a ``SearchStrategy`` so it can take options, as
Hypothesis' own strategies do::

    from hypothesis import given
    from purebpe.testing import corpora, special_tokens

    @given(corpora(special_tokens=["<|endoftext|>"]))
    def test_my_trainer(texts): ...

What "nasty" means here: tiny alphabets that force ties and repeated pairs, long runs of one
character (``aaaa`` overlaps), multi-byte UTF-8 (accents, CJK, emoji, 4-byte characters),
whitespace of every kind (``\\r\\n``, tabs, U+00A0, U+3000), contractions, digits, the special
tokens themselves glued to text, and empty strings.
"""
from __future__ import annotations

from typing import List, Optional, Sequence

from hypothesis import strategies as st

#: Pieces that exercise the GPT-2 pattern and UTF-8: contractions, spaces, scripts, emoji.
NASTY_PIECES = (
    " ", "  ", "\n", "\r\n", "\t", "\u00a0", "\u3000", "'s", "'ll", "'t", " the", "ab", "ba",
    "aaaa", "0", "123", "é", "ß", "中文", "日本語", "😀", "👩‍💻", "\U00010348", "-", ".", "!?",
)


def texts(
    alphabet: Optional[str] = None,
    max_size: int = 40,
    special_tokens: Sequence[str] = (),
) -> st.SearchStrategy[str]:
    """One string: pieces from a small alphabet, nasty pieces, runs, and special tokens.

    ``alphabet`` defaults to ``"ab "`` plus a few multi-byte characters, small enough that
    pairs repeat and counts tie.
    """
    letters = alphabet if alphabet is not None else "ab \u00e9\u4e2d"
    piece = st.one_of(
        st.sampled_from(list(letters)),
        st.sampled_from(NASTY_PIECES),
        st.builds(lambda c, n: c * n, st.sampled_from(list(letters) or ["a"]), st.integers(2, 12)),
        st.text(max_size=3),
        *([st.sampled_from(list(special_tokens))] if special_tokens else []),
    )
    return st.lists(piece, max_size=max_size).map("".join)


def corpora(
    alphabet: Optional[str] = None,
    max_texts: int = 6,
    max_size: int = 40,
    special_tokens: Sequence[str] = (),
) -> st.SearchStrategy[List[str]]:
    """A corpus: a list of :func:`texts` (possibly empty, possibly with empty strings)."""
    return st.lists(texts(alphabet, max_size, special_tokens), max_size=max_texts)


def special_tokens(max_size: int = 3) -> st.SearchStrategy[List[str]]:
    """Distinct special tokens, including ones that are prefixes of each other."""
    base = st.sampled_from(["<|endoftext|>", "<|endoftext|><|endoftext|>", "<pad>", "<s>", "</s>"])
    return st.lists(base, unique=True, max_size=max_size)


def vocab_sizes(min_value: int = 256, max_value: int = 400) -> st.SearchStrategy[int]:
    """Vocabulary sizes, often beyond what a small corpus can reach."""
    return st.integers(min_value, max_value)


def mask_lengths(max_value: int = 5000) -> st.SearchStrategy[int]:
    """Sequence lengths for span masking, weighted towards the edge cases 0, 1 and 2."""
    return st.one_of(st.sampled_from([0, 1, 2, 3]), st.integers(0, max_value))
