"""Hypothesis strategies for BPE inputs, with the nasty cases built in.

Each strategy is a function returning a ``SearchStrategy``, as Hypothesis' own are, so it
can take options::

    from hypothesis import given
    from purebpe.testing import corpora, special_tokens

    @given(corpora(special_tokens=["<|endoftext|>"]))
    def test_my_trainer(texts): ...

What "nasty" means here, and why each case is in:

* **ties** -- tiny alphabets (``"a"``, ``"ab"``) and repeated words make many pairs share
  the highest count, so the tie-break rule decides most merges;
* **long runs** -- ``aaaaaaa`` holds ``(a, a)`` six times, overlapping, yet merging it
  rewrites only three of them (left to right): the count and merge rules in one place;
* **multi-byte UTF-8** -- accents, a combining mark, CJK, emoji, a 4-byte Gothic letter:
  one character is several byte tokens, and byte order differs from code point order;
* **the GPT-2 pattern's corners** -- contractions (``'s``, ``'ll``; ``'S`` is *not* one),
  runs of spaces before a word (``\\s+(?!\\S)``), ``\\r\\n``, tabs, U+00A0, U+3000;
* **special tokens** -- glued to text, repeated, one a prefix of another (the longer must
  win), ones made of ordinary characters (``"ab"``, ``" "``), and their fragments
  (``"<|endof"``), which are plain text;
* **emptiness** -- empty corpora, empty texts, texts that are only special tokens.

Strings never hold lone surrogates (they are not text: UTF-8 cannot encode them).

How: a text is drawn as a list of *plans*, three small ints each (the kind of piece and
two indexes), rendered over the alphabet afterwards. Small ints are the cheapest choices
Hypothesis makes and shrink well (towards the first letter, the simplest piece), and the
strategies are built once and cached, since Hypothesis validates a strategy object the
first time it draws from it. Cost: about 3 ms per corpus on CPython, which is still about
half the time of a conformance run on small corpora.
"""

from __future__ import annotations

from functools import lru_cache
from typing import List, Optional, Sequence, Tuple

from hypothesis import strategies as st

__all__ = [
    "ALPHABETS",
    "NASTY_PIECES",
    "SPECIAL_TOKENS",
    "corpora",
    "mask_lengths",
    "special_tokens",
    "texts",
    "vocab_sizes",
]

#: Small alphabets a text is built from: the tiny ones force ties and repeated pairs; the
#: others bring multi-byte characters, whitespace, digits and apostrophes into the same
#: small pool so that they repeat too.
ALPHABETS: Sequence[str] = (
    "a",
    "ab",
    "abc",
    "ab \n",
    "aA1 ",
    "xyz'st \n",
    "\u00e9\u6f22a ",  # 2- and 3-byte characters beside ASCII
    "\U0001f600ab ",  # a 4-byte emoji
    "e\u0301\u00e9 ",  # a combining accent and the precomposed letter
    "\u6f22\u5b57 \u3000",  # CJK with an ideographic space
    "0123 .!",
)

#: Pieces that exercise the GPT-2 pattern and UTF-8: contractions, spaces, scripts, emoji.
NASTY_PIECES: Sequence[str] = (
    " ",
    "  ",
    "   x",
    "\n",
    "\n\n",
    "\r\n",
    "\t",
    "\u00a0",
    "\u3000",
    "'s",
    "'ll",
    "'t",
    "'S",
    "'re",
    " the",
    "ab",
    "ba",
    "abab",
    "aaaa",
    "0",
    "123",
    "\u00e9",
    "\u00df",
    "\u4e2d\u6587",
    "\u65e5\u672c\u8a9e",
    "\U0001f600",
    "\U0001f469\u200d\U0001f4bb",
    "\U00010348",
    "-",
    ".",
    "!?",
    "...",
)

#: Special tokens drawn from: one is a prefix of another (``<|endoftext|>`` inside the
#: doubled one, ``"ab"`` inside ``"abcd"``: the longer must win, and cutting the shorter
#: one out would leave text behind), some hold multi-byte characters, and ``"ab"``,
#: ``"abcd"`` and ``" "`` are made of ordinary text, so cutting them out changes the words
#: around them.
SPECIAL_TOKENS: Sequence[str] = (
    "<|endoftext|>",
    "<|endoftext|><|endoftext|>",
    "<pad>",
    "<s>",
    "</s>",
    "<|\u00e9|>",
    "\U0001f600",
    "ab",
    "abcd",
    " ",
)

# "Any character" is one of 256 drawn from 16 blocks: every UTF-8 length, every class the
# GPT-2 pattern tells apart (letters and numbers of many scripts, the odd whitespace it
# counts as \s, marks, symbols, private use, the last planes). Two small ints pick one,
# which Hypothesis draws and shrinks far faster than arbitrary code points.
_BLOCKS = (
    (0x21, 1),
    (0xA0, 1),
    (0x300, 1),
    (0x391, 1),
    (0x5D0, 1),
    (0x660, 1),
    (0x1680, 0x111),
    (0x2000, 1),
    (0x2028, 1),
    (0x3040, 1),
    (0x4E00, 97),
    (0xAC00, 101),
    (0xE000, 1),
    (0xFFF0, 1),
    (0x1F600, 1),
    (0x10FFF0, 1),
)
_SMALL = st.integers(0, 15)


def _any_character(block: int, offset: int) -> str:
    base, step = _BLOCKS[block]
    return chr(base + offset * step)


# A random alphabet one time in four: the fixed alphabets hold the ties and the GPT-2
# pattern's corners, which random characters rarely hit.
_RANDOM_ALPHABET = st.lists(st.tuples(_SMALL, _SMALL), min_size=1, max_size=4).map(
    lambda picks: "".join(_any_character(block, offset) for block, offset in picks)
)
_ALPHABETS = st.integers(0, len(ALPHABETS) + len(ALPHABETS) // 3 - 1).flatmap(
    lambda i: st.just(ALPHABETS[i]) if i < len(ALPHABETS) else _RANDOM_ALPHABET
)

# A piece is drawn as a plan, three small ints ``(kind, a, b)``, and rendered once the
# alphabet is known: the plans' strategies are then the same objects for every alphabet
# (Hypothesis validates a strategy the first time it draws from it), a flat tuple of ints
# is the cheapest thing Hypothesis draws, and ``a``, ``b`` shrink towards the first letter.
Plan = Tuple[int, int, int]
_LETTER, _RUN, _SYLLABLE, _NASTY, _ANY, _SPECIAL, _FRAGMENT = range(7)


@lru_cache(maxsize=64)
def _plans(specials: Tuple[str, ...], nasty: bool) -> st.SearchStrategy[Plan]:
    """One piece's plan: a letter, a run, a repeated syllable, a nasty piece, a special."""
    kinds = [_LETTER, _RUN, _SYLLABLE]
    kinds += [_NASTY, _ANY] if nasty else []
    kinds += [_SPECIAL, _FRAGMENT] if specials else []
    return st.tuples(st.sampled_from(kinds), _SMALL, _SMALL)


@lru_cache(maxsize=64)
def _text_plans(
    max_size: int, specials: Tuple[str, ...], nasty: bool, min_size: int = 0
) -> st.SearchStrategy[List[Plan]]:
    return st.lists(_plans(specials, nasty), min_size=min(min_size, max_size), max_size=max_size)


def _render(letters: str, specials: Sequence[str], plans: Sequence[Plan]) -> str:
    """The text the plans stand for over ``letters`` and ``specials``."""
    out = []
    for kind, a, b in plans:
        if kind == _LETTER:
            out.append(letters[a % len(letters)])
        elif kind == _RUN:
            # Long runs: odd and even lengths merge differently (``aaa`` -> ``aa a``).
            out.append(letters[a % len(letters)] * (2 + b))
        elif kind == _SYLLABLE:
            # A syllable repeated (``abab``, ``ab ab ab``): overlapping pairs of two tokens.
            out.append((letters[a % len(letters)] + letters[b % len(letters)]) * (2 + (a ^ b) % 3))
        elif kind == _NASTY:
            out.append(NASTY_PIECES[(16 * a + b) % len(NASTY_PIECES)])
        elif kind == _ANY:
            out.append(_any_character(a, b))
        elif kind == _SPECIAL:
            out.append(specials[a % len(specials)])
        else:
            # A fragment of a special token is plain text, and may end where a special starts.
            special = specials[a % len(specials)]
            out.append(special[: max(1, len(special) - 1 - b % 4)])
    return "".join(out)


_EMPTY_ONE_IN_16 = st.integers(0, 15)


@lru_cache(maxsize=64)
def _corpus_plans(
    max_texts: int, max_size: int, specials: Tuple[str, ...], nasty: bool
) -> st.SearchStrategy[List[Optional[List[Plan]]]]:
    """Plans of up to ``max_texts`` non-empty texts; ``None`` repeats the text before it
    (one time in three), so words recur across texts. A flat list shrinks well: deleting
    a text deletes one element."""
    plans = _text_plans(max_size, specials, nasty, min_size=1)
    return st.lists(st.one_of(st.none(), plans, plans), min_size=1, max_size=max_texts)


def _letters(alphabet: Optional[str]) -> st.SearchStrategy[str]:
    if alphabet is None:
        return _ALPHABETS
    if not alphabet:
        raise ValueError("alphabet must hold at least one character")
    return st.just(alphabet)


def texts(
    alphabet: Optional[str] = None,
    max_size: int = 40,
    special_tokens: Sequence[str] = (),
    nasty: bool = True,
) -> st.SearchStrategy[str]:
    """One string of up to ``max_size`` pieces (see the module docstring for the pieces).

    ``alphabet`` is the pool of ordinary characters; by default one of :data:`ALPHABETS`
    (or a few arbitrary characters) is drawn for the text. With ``nasty=True`` (the
    default) pieces from :data:`NASTY_PIECES` and arbitrary characters are mixed in; with
    ``nasty=False`` the text uses only ``alphabet`` (and the special tokens).
    ``special_tokens`` are placed whole and as fragments (which are plain text).
    """
    specials = tuple(special_tokens)
    return st.builds(_render, _letters(alphabet), st.just(specials), _text_plans(max_size, specials, nasty))


@st.composite
def corpora(
    draw: st.DrawFn,
    alphabet: Optional[str] = None,
    max_texts: int = 6,
    max_size: int = 40,
    special_tokens: Sequence[str] = (),
    nasty: bool = True,
) -> List[str]:
    """A corpus: a list of up to ``max_texts`` non-empty :func:`texts`; empty one time in 16.

    One alphabet is drawn for the whole corpus (unless given), and a third of the texts
    repeat the one before them, so the same words recur and word counts above 1 are
    common. Options as :func:`texts`.
    """
    if max_texts == 0 or draw(_EMPTY_ONE_IN_16) == 0:
        return []
    letters = draw(_letters(alphabet))
    specials = tuple(special_tokens)
    corpus: List[str] = []
    for plans in draw(_corpus_plans(max_texts, max_size, specials, nasty)):
        if plans is None:
            corpus.append(corpus[-1] if corpus else letters[0])
        else:
            corpus.append(_render(letters, specials, plans))
    return corpus


@lru_cache(maxsize=16)
def special_tokens(max_size: int = 3) -> st.SearchStrategy[List[str]]:
    """A list of distinct special tokens from :data:`SPECIAL_TOKENS` (possibly empty)."""
    return st.lists(st.sampled_from(SPECIAL_TOKENS), unique=True, max_size=max_size)


@lru_cache(maxsize=256)
def vocab_sizes(min_value: int = 256, max_value: int = 400) -> st.SearchStrategy[int]:
    """Vocabulary sizes in ``min_value..max_value``, often beyond what a small corpus reaches.

    The smallest sizes (no merge, one merge, a few) are drawn often: they are where the
    first tie-breaks and off-by-one errors in counting the specials show.
    """
    if max_value < min_value:
        raise ValueError(f"vocab_sizes: max_value {max_value} < min_value {min_value}")
    return st.one_of(
        st.integers(min_value, min(max_value, min_value + 3)),
        st.integers(min_value, max_value),
    )


def mask_lengths(max_value: int = 5000) -> st.SearchStrategy[int]:
    """Sequence lengths for span masking in ``0..max_value``, weighted towards the edges.

    0, 1 and 2 (nothing, or hardly anything, to mask) and the lengths where
    ``length * 0.188`` (Wakong's proposed rate) crosses a whole number or the maximum
    span of 10, where a budget computed off by one shows.
    """
    edges = [n for n in (0, 1, 2, 3, 5, 6, 10, 11, 53, 54, 58, 59) if n <= max_value]
    return st.one_of(st.integers(0, min(3, max_value)), st.sampled_from(edges), st.integers(0, max_value))
