"""The Tokenizer: encoding, special tokens, streaming, decoding, and agreement with training."""

from __future__ import annotations

import json
import pickle
import random
import re
from pathlib import Path
from typing import Dict, List, Sequence, Tuple
from unittest import mock

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import purebpe
import purebpe.core as core
import purebpe.encoding_sink as encoding_sink
import purebpe.tokenizer as tokenizer_module
from purebpe import BPEModel, Tokenizer
from purebpe.core import WordTable, apply_merges, merge_word, pack_pair, pack_rank
from purebpe.corpus import default_corpus
from purebpe.errors import PureBPEError
from purebpe.pretokenize import pretokenize, split_lines
from purebpe.testing.strategies import texts as generated_texts
from purebpe.trainers import get_trainer
from purebpe.word_encoder import WordEncoder

EOT = "<|endoftext|>"
EOT2 = EOT + EOT


@pytest.fixture(scope="module")
def model() -> BPEModel:
    return purebpe.train_from_iterator(default_corpus()[:25], 800, [EOT, EOT2])


@pytest.fixture(scope="module")
def tok(model: BPEModel) -> Tokenizer:
    return model.tokenizer()


@pytest.fixture(scope="module")
def lines_model() -> BPEModel:
    return purebpe.train_from_iterator(default_corpus()[:10], 500, [EOT], pretokenizer="none")


#: Text that reaches every corner: all of Unicode but surrogates, whitespace runs,
#: contractions, digits, long runs of one character, and the special tokens.
pieces = st.one_of(
    st.text(max_size=12),
    st.text(" \t\n\r\x0b\x0c\x85\xa0\u2028\u3000", max_size=6),
    st.sampled_from(["'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "123", " 4567", "<|endo", EOT, EOT2]),
    st.from_regex(r"[a-z ]{0,20}", fullmatch=True),
    generated_texts(special_tokens=[EOT, EOT2]),
)
any_text = st.lists(pieces, max_size=12).map("".join)


def split_at(text: str, cuts: List[int]) -> List[str]:
    """``text`` cut at the positions ``cuts`` (taken modulo its length + 1)."""
    bounds = sorted({c % (len(text) + 1) for c in cuts})
    return [text[a:b] for a, b in zip([0] + bounds, bounds + [len(text)])]


# --------------------------------------------------------------------------------------
# A small example worked out by hand
# --------------------------------------------------------------------------------------
def test_hand_checked_example() -> None:
    # Merges: a+b -> 256, ab+c -> 257, ' '+ab -> 258, a+a -> 259.
    merges = [(b"a", b"b"), (b"ab", b"c"), (b" ", b"ab"), (b"a", b"a")]
    tok = BPEModel.from_merges(merges, [EOT]).tokenizer()
    # Pre-tokens "abc", " ab", " c", "aaa", " ", "aaaa".
    #   abc  -> [ab, c] -> [abc]          = [257]
    #   " ab" -> [' ', ab] -> [' ab']     = [258]
    #   " c"                              = [32, 99]
    #   aaa  -> left to right: [aa, a]    = [259, 97]
    #   "aaaa" -> [aa, aa]                = [259, 259]
    assert tok.encode("abc ab caaa aaaa") == [257, 258, 32, 99, 259, 97, 32, 259, 259]
    assert tok.encode(f"ab{EOT}c") == [256, 260, 99]
    assert tok.decode([257, 260, 259]) == f"abc{EOT}aa"
    assert tok.decode_bytes([0xE2, 0x82]) == b"\xe2\x82"


def test_merges_apply_by_rank_not_left_to_right() -> None:
    # b+c ranks before a+b: "abc" becomes [a, bc], and no merge joins a with bc.
    tok = BPEModel.from_merges([(b"b", b"c"), (b"a", b"b")]).tokenizer()
    assert tok.encode("abc") == [97, 256]
    assert tok.encode("abd") == [257, 100]


def test_any_id_layout_gives_the_vocab_ids() -> None:
    model = BPEModel.from_merges([(b"a", b"b"), (b"ab", b"c")])
    rng = random.Random(5)
    new_ids = list(range(model.vocab_size))
    rng.shuffle(new_ids)
    shuffled = {new_ids[tid]: token for tid, token in model.vocab.items()}
    tok = Tokenizer(shuffled, model.merges)
    assert tok.encode("abcab xab") == [new_ids[t] for t in [257, 256, 32, 120, 256]]
    assert tok.decode(tok.encode("abcab xab")) == "abcab xab"


# --------------------------------------------------------------------------------------
# Special tokens
# --------------------------------------------------------------------------------------
def test_overlapping_special_tokens_longest_first(tok: Tokenizer) -> None:
    single, double = tok.special_ids[EOT], tok.special_ids[EOT2]
    ids = tok.encode(f"a{EOT2}b{EOT}{EOT}{EOT}c")
    assert ids.count(double) == 2 and ids.count(single) == 1
    assert ids.index(double) < ids.index(single)
    assert ids[-2:-1] == [single]  # the third EOT is alone after the second pair
    assert tok.decode(ids) == f"a{EOT2}b{EOT}{EOT}{EOT}c"


def test_special_tokens_are_never_split_by_pre_tokenization(tok: Tokenizer) -> None:
    # "x<|" would be one pre-token with the specials treated as text.
    assert tok.encode(f"x{EOT}y") == tok.encode("x") + [tok.special_ids[EOT]] + tok.encode("y")


def test_allowed_special_treats_the_others_as_text(tok: Tokenizer) -> None:
    text = f"a{EOT2} {EOT}"
    plain = tok.encode(text, allowed_special=set())
    assert plain == tok.encode_ordinary(text)
    assert not set(plain) & set(tok.special_ids.values())
    assert tok.decode(plain) == text
    only_single = tok.encode(text, allowed_special={EOT})
    assert tok.special_ids[EOT2] not in only_single
    assert only_single.count(tok.special_ids[EOT]) == 3
    with pytest.raises(PureBPEError, match="not a special token"):
        tok.encode(text, allowed_special={"<nope>"})
    with pytest.raises(PureBPEError, match="allowed_special"):
        tok.encode(text, allowed_special="none")


def test_disallowed_special_tokens_raise_naming_token_and_index(tok: Tokenizer) -> None:
    text = f"ab {EOT2} c"
    # As tiktoken: "all" forbids every special token that is not allowed.
    with pytest.raises(PureBPEError, match=rf"text holds the special token '{re.escape(EOT2)}' at index 3"):
        tok.encode(text, allowed_special=set(), disallowed_special="all")
    # A longer forbidden token is found even where a shorter allowed one is inside it.
    with pytest.raises(PureBPEError, match=re.escape(EOT2)):
        tok.encode(text, allowed_special={EOT}, disallowed_special="all")
    assert tok.encode(text, allowed_special={EOT2}, disallowed_special="all") == tok.encode(text)
    assert tok.encode("ab c", allowed_special=set(), disallowed_special="all") == tok.encode("ab c")
    with pytest.raises(PureBPEError, match=r"texts\[1\] holds the special token"):
        tok.encode_batch(["x", text], allowed_special=set(), disallowed_special=[EOT2])
    with pytest.raises(PureBPEError, match="both allowed and disallowed"):
        tok.encode(text, disallowed_special={EOT})
    with pytest.raises(PureBPEError, match="not a special token"):
        tok.encode(text, allowed_special=set(), disallowed_special={"<nope>"})
    with pytest.raises(PureBPEError, match="disallowed_special must be"):
        tok.encode(text, allowed_special=set(), disallowed_special="none")


@settings(max_examples=60)
@given(any_text, st.lists(st.integers(0, 10_000), max_size=8), st.integers(1, 12))
def test_streams_refuse_a_disallowed_token_even_split_across_items(
    tok: Tokenizer, text: str, cuts: List[int], stream_chars: int
) -> None:
    chunks = split_at(text, cuts)
    options = dict(allowed_special={EOT}, disallowed_special="all")
    with mock.patch.object(tokenizer_module, "STREAM_CHARS", stream_chars):
        try:
            expected = tok.encode(text, **options)  # type: ignore[arg-type]
        except PureBPEError as exc:
            # The same token at the same index, whatever the chunks.
            same = re.escape(str(exc).replace("text holds", "the stream holds", 1))
            with pytest.raises(PureBPEError, match=same):
                list(tok.encode_iterable(chunks, **options))  # type: ignore[arg-type]
        else:
            assert list(tok.encode_iterable(chunks, **options)) == expected  # type: ignore[arg-type]


def test_special_tokens_missing_from_the_vocab_get_new_ids() -> None:
    model = BPEModel.from_merges([(b"a", b"b")])
    tok = Tokenizer(model.vocab, model.merges, ["<s>", "</s>"])
    assert tok.special_ids == {"<s>": 257, "</s>": 258}
    assert tok.encode("<s>ab</s>") == [257, 256, 258]
    # Bytes the vocab holds only as an ordinary token (a byte, a merge) get an id of their own.
    tok = Tokenizer(model.vocab, model.merges, ["ab", " "])
    assert tok.special_ids == {"ab": 257, " ": 258}
    assert tok.encode("xab a b") == [120, 257, 258, 97, 258, 98]
    assert tok.encode_ordinary("xab") == [120, 256]
    # With a second holder (purebpe's layout appends the specials), that one is the special.
    with_specials = BPEModel.from_merges([(b"a", b"b")], ["ab"])
    assert with_specials.tokenizer().special_ids == {"ab": 257}


# --------------------------------------------------------------------------------------
# Round trips, streaming, batches
# --------------------------------------------------------------------------------------
@given(any_text)
def test_decode_inverts_encode(tok: Tokenizer, text: str) -> None:
    assert tok.decode(tok.encode(text)) == text
    assert tok.decode(tok.encode_ordinary(text)) == text


@given(any_text)
def test_encoding_matches_replaying_the_merges_one_by_one(tok: Tokenizer, text: str) -> None:
    assert tok.encode_ordinary(text) == reference_encode(tok, text)


def reference_encode(tok: Tokenizer, text: str) -> List[int]:
    """The definition: each GPT-2 pre-token's bytes, every merge replayed in order."""
    ids = {token: tid for tid, token in tok.vocab.items() if tid not in tok.special_ids.values()}
    out: List[int] = []
    for word in pretokenize(text):
        tokens = [bytes([b]) for b in word.encode("utf-8")]
        for left, right in tok.merges:
            merged: List[bytes] = []
            i = 0
            while i < len(tokens):
                if i + 1 < len(tokens) and tokens[i] == left and tokens[i + 1] == right:
                    merged.append(left + right)
                    i += 2
                else:
                    merged.append(tokens[i])
                    i += 1
            tokens = merged
        out += [ids[t] for t in tokens]
    return out


@settings(max_examples=60)
@given(any_text, st.lists(st.integers(0, 10_000), max_size=8), st.integers(1, 12))
def test_encode_iterable_equals_encode_for_any_chunking(
    tok: Tokenizer, text: str, cuts: List[int], stream_chars: int
) -> None:
    chunks = split_at(text, cuts)
    # Small buffers make every chunk boundary a candidate cut.
    with mock.patch.object(tokenizer_module, "STREAM_CHARS", stream_chars):
        streamed = list(tok.encode_iterable(iter(chunks)))
        streamed_plain = list(tok.encode_iterable(chunks, allowed_special=set()))
    assert streamed == tok.encode(text)
    assert streamed_plain == tok.encode_ordinary(text)


@given(st.lists(st.sampled_from(["a", "\ud83d", "\ude00", "\ud800", " ", "x\n", EOT]), max_size=12))
def test_lone_surrogates_become_replacement_characters_even_across_chunks(
    tok: Tokenizer, parts: List[str]
) -> None:
    text = "".join(parts)
    cleaned = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")  # tiktoken's rule
    assert tok.encode(text) == tok.encode(cleaned)
    with mock.patch.object(tokenizer_module, "STREAM_CHARS", 1):
        assert list(tok.encode_iterable(parts)) == tok.encode(cleaned)


def test_surrogate_pairs_join_and_lone_ones_are_replaced(tok: Tokenizer) -> None:
    assert tok.encode("\ud83d\ude00") == tok.encode("😀")
    assert tok.encode("a\ud800b") == tok.encode("a\ufffdb")


@settings(max_examples=40)
@given(any_text, st.integers(2, 40))
def test_long_texts_are_encoded_in_pieces_without_changing_the_result(
    tok: Tokenizer, text: str, piece_bytes: int
) -> None:
    expected = tok.encode(text)
    fresh = Tokenizer(tok.vocab, tok.merges, tok.special_tokens)
    with mock.patch.object(tokenizer_module, "PIECE_BYTES", piece_bytes):
        assert fresh.encode(text) == expected
        # encode_to_array moves each piece's ids into the array as they are made.
        assert fresh.encode_to_array(text, typecode="H").tolist() == expected


def test_encode_iterable_streams_a_file_object(tok: Tokenizer, tmp_path: Path) -> None:
    text = "\n".join(default_corpus()[25:28]) + EOT + "tail"
    path = tmp_path / "t.txt"
    path.write_text(text, encoding="utf-8")
    with mock.patch.object(tokenizer_module, "STREAM_CHARS", 1000):
        with open(path, encoding="utf-8", newline="") as f:
            assert list(tok.encode_iterable(f)) == tok.encode(text)


def test_encode_iterable_does_not_join_everything(tok: Tokenizer) -> None:
    seen: List[int] = []

    def lines():  # type: ignore[no-untyped-def]
        for i in range(20_000):
            seen.append(i)
            yield "The quick brown fox jumps over the lazy dog.\n"

    stream = tok.encode_iterable(lines())
    first = next(stream)
    assert first == tok.encode("The")[0]
    assert len(seen) < 20_000  # ids come out long before the input ends


def test_encode_batch(tok: Tokenizer) -> None:
    texts = ["hello world", "", f"{EOT}x"]
    assert tok.encode_batch(texts) == [tok.encode(t) for t in texts]
    assert tok.encode_batch(texts, allowed_special=set()) == [tok.encode_ordinary(t) for t in texts]


@pytest.mark.parametrize("engine", ["scanner", "re"])
def test_the_word_cache_is_bounded(tok: Tokenizer, engine: str) -> None:
    with mock.patch.object(tokenizer_module, "ENGINE", engine):
        fresh = Tokenizer(tok.vocab, tok.merges, tok.special_tokens)
    text = " ".join(f"w{i}x" for i in range(50))
    with mock.patch.object(encoding_sink, "CACHE_SIZE", 7):
        ids = fresh.encode(text)
        assert 0 < len(fresh.word_cache) <= 7
    assert ids == tok.encode(text)


@pytest.mark.parametrize("engine", ["scanner", "re"])
def test_the_word_cache_is_a_view_keyed_by_words(model: BPEModel, engine: str) -> None:
    # With the scanner, GPT-2's pattern is scanned as UTF-8 and the cache is keyed by
    # bytes; the view shows words all the same.
    with mock.patch.object(tokenizer_module, "ENGINE", engine):
        tok = model.tokenizer()
    ids = tok.encode("the café, the café")
    cache = tok.word_cache
    assert sorted(cache) == [" café", " the", ",", "the"]
    assert [i for word in ["the", " café", ",", " the", " café"] for i in cache[word]] == ids
    assert cache.get("\ud800") is None and "zzz" not in cache and len(cache) == 4
    tok.encode("a new word")
    assert "new" not in cache and " new" in cache  # a live view


@pytest.mark.parametrize("engine", ["scanner", "re"])
@settings(max_examples=60)
@given(text=any_text, piece_bytes=st.integers(2, 40))
def test_every_engine_encodes_as_the_merges_replayed(
    model: BPEModel, engine: str, text: str, piece_bytes: int
) -> None:
    # The scanner engine encodes GPT-2's pattern from the text's UTF-8 (its twin scanner),
    # in pieces of about PIECE_BYTES: both engines, cold and warm, give the definition.
    with mock.patch.object(tokenizer_module, "ENGINE", engine):
        tok = model.tokenizer()
    expected = reference_encode(tok, text)
    with mock.patch.object(tokenizer_module, "PIECE_BYTES", piece_bytes):
        assert tok.encode_ordinary(text) == expected
        assert tok.encode_ordinary(text) == expected


# --------------------------------------------------------------------------------------
# Agreement with training
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["naive", "incremental"])
def test_encoding_a_training_word_gives_the_tokens_training_ended_with(variant: str) -> None:
    counts = purebpe.count_from_iterator(default_corpus()[:6])
    table = WordTable.from_word_counts(counts.words)
    # A trainer applies a merge to the words when resumed: after pulling merge 301, the
    # words hold the first 300.
    for _ in zip(range(301), get_trainer(variant)(table)):
        pass
    tok = BPEModel.from_merges(table.merges[:300]).tokenizer()
    for word, tokens in zip(counts.words, table.words):
        assert tok.encode(word.decode("utf-8")) == list(tokens)


def test_lines_model_encodes_each_line_as_training_did(lines_model: BPEModel) -> None:
    tok = lines_model.tokenizer()
    text = "first line\n  second   line\n\nno newline at the end"
    ids = tok.encode(text)
    assert ids == [i for line in split_lines(text) for i in tok.encode(line)]
    assert tok.decode(ids) == text
    # A word spans a whole line: spaces join their neighbours across GPT-2 boundaries.
    assert len(tok.encode("the the the\n")) < len(pretokenize("the the the\n")) + 3


@settings(max_examples=30)
@given(st.data())
def test_long_words_merge_like_short_ones(data: st.DataObject) -> None:
    # apply_merges and the tokenizer's WordEncoder switch to a heap above core.LONG_WORD
    # tokens: both ways must replay merges.
    length = data.draw(st.integers(core.LONG_WORD - 3, 3 * core.LONG_WORD), label="length")
    word = data.draw(st.lists(st.integers(0, 3), min_size=length, max_size=length), label="word")
    merges: List[Tuple[int, int, int]] = []
    for new in range(4, 4 + data.draw(st.integers(0, 12), label="number of merges")):
        left, right = data.draw(st.tuples(st.integers(0, new - 1), st.integers(0, new - 1)))
        if all((left, right) != (a, b) for a, b, _ in merges):
            merges.append((left, right, new))
    ranks = {pack_pair(a, b): pack_rank(rank, n) for rank, (a, b, n) in enumerate(merges)}
    expected = list(word)
    for left, right, new in merges:
        expected = merge_word(expected, left, right, new)
    assert list(apply_merges(word, ranks)) == expected
    assert WordEncoder(ranks, list(range(256)), None).merge(bytes(word)) == expected


# --------------------------------------------------------------------------------------
# Decoding and errors
# --------------------------------------------------------------------------------------
@given(st.lists(st.integers(0, 255), max_size=20))
def test_decode_replaces_invalid_utf8_like_bytes_decode(tok: Tokenizer, byte_ids: List[int]) -> None:
    data = bytes(byte_ids)
    assert tok.decode_bytes(byte_ids) == data
    assert tok.decode(byte_ids) == data.decode("utf-8", "replace")


@pytest.mark.parametrize(
    "ids, message",
    [
        ([1, 2, 800], "token id 800 at position 2 is not in the vocabulary"),
        ([5, -1], "token id -1 at position 1"),
        ([1, "7"], "token id '7' at position 1 is not an int"),
        ([1.0], "token id 1.0 at position 0 is not an int"),
    ],
)
def test_decode_rejects_bad_ids_naming_them(tok: Tokenizer, ids: Sequence[object], message: str) -> None:
    with pytest.raises(PureBPEError, match=message):
        tok.decode(ids)  # type: ignore[arg-type]


def test_decode_rejects_ids_in_gaps_of_the_vocab() -> None:
    vocab: Dict[int, bytes] = {i: bytes([i]) for i in range(256)}
    vocab[300] = b"ab"
    tok = Tokenizer(vocab, [(b"a", b"b")])
    assert tok.encode("ab") == [300]
    with pytest.raises(PureBPEError, match="token id 280 at position 0"):
        tok.decode([280])


def test_encode_rejects_non_text(tok: Tokenizer) -> None:
    with pytest.raises(PureBPEError, match="expected text as str, got bytes"):
        tok.encode(b"abc")  # type: ignore[arg-type]
    with pytest.raises(PureBPEError, match="^encode_iterable: item 1 is int, not str or bytes$"):
        list(tok.encode_iterable([b"a", 5]))  # type: ignore[list-item]


@pytest.mark.parametrize(
    "vocab, merges, message",
    [
        ({i: bytes([i]) for i in range(256)}, [(b"a", b"b")], "makes b'ab', which is not in the vocab"),
        ({**{i: bytes([i]) for i in range(256)}, 256: b"xyz"}, [(b"xy", b"z")], "uses a token that is not"),
    ],
)
def test_inconsistent_vocab_and_merges_are_refused(
    vocab: Dict[int, bytes], merges: List[Tuple[bytes, bytes]], message: str
) -> None:
    with pytest.raises(PureBPEError, match=message):
        Tokenizer(vocab, merges)


# Stanford CS336 assignment 1's toy example: a vocab holding only the bytes it needs.
CS336_VOCAB = {
    0: b" ",
    1: b"a",
    2: b"c",
    3: b"e",
    4: b"h",
    5: b"t",
    6: b"th",
    7: b" c",
    8: b" a",
    9: b"the",
    10: b" at",
}
CS336_MERGES = [(b"t", b"h"), (b" ", b"c"), (b" ", b"a"), (b"th", b"e"), (b" a", b"t")]


def test_cs336_toy_vocab_encodes_as_the_handout_says() -> None:
    tok = Tokenizer(CS336_VOCAB, CS336_MERGES)
    assert tok.encode("the cat ate") == [9, 7, 1, 5, 10, 3]
    assert tok.decode([9, 7, 1, 5, 10, 3]) == "the cat ate"


def test_a_byte_missing_from_the_vocab_is_an_error_only_when_text_needs_it() -> None:
    tok = Tokenizer(CS336_VOCAB, CS336_MERGES, ["<|endoftext|>"])
    assert tok.encode("the<|endoftext|> cat") == [9, 11, 7, 1, 5]
    with pytest.raises(PureBPEError, match="no token for byte 0x7a, which b' zeta' needs"):
        tok.encode("the zeta")
    no_ff = Tokenizer({i: bytes([i]) for i in range(255)}, [])
    assert no_ff.encode("\u00ff") == [0xC3, 0xBF]  # UTF-8 text never holds byte 0xff
    with pytest.raises(PureBPEError, match="no token for byte 0xff"):
        no_ff.encode_bytes(b"a\xff")


@pytest.mark.parametrize("engine", ["scanner", "re"])
def test_a_failed_encode_leaves_the_word_cache_sound(engine: str) -> None:
    # The scanner's sink encodes a piece's new words after the scan, holding placeholders
    # in the cache meanwhile: a word that fails must take them out again.
    with mock.patch.object(tokenizer_module, "ENGINE", engine):
        tok = Tokenizer(CS336_VOCAB, CS336_MERGES)
    with pytest.raises(PureBPEError, match="which b' zeta' needs"):
        tok.encode("the cat zeta ate")
    assert all(min(ids) >= 0 for ids in tok.word_cache.values())
    assert tok.encode("the cat ate") == [9, 7, 1, 5, 10, 3]


def test_from_files_reads_gpt2_files_with_any_layout(model: BPEModel, tmp_path: Path) -> None:
    model.save(tmp_path, "gpt2")
    # Re-number the ids as GPT-2's files do: printable bytes first ('!' is 0).
    vocab = json.loads((tmp_path / "vocab.json").read_text(encoding="utf-8"))
    order = sorted(vocab, key=lambda key: (vocab[key] >= 256, key if vocab[key] < 256 else "", vocab[key]))
    renumbered = {key: i for i, key in enumerate(order)}
    (tmp_path / "vocab.json").write_text(json.dumps(renumbered, ensure_ascii=False), encoding="utf-8")
    merges = (tmp_path / "merges.txt").read_text(encoding="utf-8").split("\n")
    merges[0] = "#version: 0.2"  # vocab.json was rewritten by hand: drop the record of the old one
    (tmp_path / "merges.txt").write_text("\n".join(merges), encoding="utf-8")
    tok = Tokenizer.from_files(tmp_path / "vocab.json", tmp_path / "merges.txt")
    assert tok.byte_ids[ord("!")] == 0
    assert tok.special_tokens == (EOT, EOT2)  # found as the entries no merge makes
    original = model.tokenizer()
    text = f"Hello, world! It's 2024.{EOT}\n  done"
    to_new = {tid: renumbered[key] for key, tid in vocab.items()}
    assert tok.encode(text) == [to_new[t] for t in original.encode(text)]
    plain = Tokenizer.from_files(tmp_path / "vocab.json", tmp_path / "merges.txt", special_tokens=[])
    assert plain.special_tokens == () and plain.decode(plain.encode(text)) == text


# --------------------------------------------------------------------------------------
# Binary streams, and tiktoken's Encoding surface on a purebpe-trained tokenizer
# --------------------------------------------------------------------------------------
def chunks_of(data: bytes, size: int) -> List[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


@given(text=generated_texts(), size=st.integers(1, 7))
@settings(max_examples=50)
def test_encode_iterable_reads_bytes_split_anywhere(tok: Tokenizer, text: str, size: int) -> None:
    text = text.encode("utf-8", "replace").decode("utf-8")  # no lone surrogates in a file
    assert list(tok.encode_iterable(chunks_of(text.encode("utf-8"), size))) == tok.encode(text)


def test_encode_iterable_reads_a_binary_file(tok: Tokenizer, tmp_path: Path) -> None:
    text = "naïve café\n你好，世界\n<|endoftext|>👍 done\n" * 50
    path = tmp_path / "corpus.txt"
    path.write_bytes(text.encode("utf-8"))
    with open(path, "rb") as f:
        assert list(tok.encode_iterable(f)) == tok.encode(text)


@pytest.mark.parametrize(
    "chunks, offset",
    [
        ([b"ab\n"] * 10 + [b"\xff"], 30),
        ([b"ok \xe4", b"\xbd"], 3),  # truncated at the end of the stream
        ([b"ok \xe4\xbd", b"x"], 3),  # a sequence broken across items
        ([b"a", b"\xe4\xbd\xa0\xe5", b"\xa5\xbd", b"\x80z"], 7),
    ],
)
def test_encode_iterable_names_the_byte_offset_of_invalid_utf8(
    tok: Tokenizer, chunks: List[bytes], offset: int
) -> None:
    with pytest.raises(purebpe.InputError, match=f"the byte stream, byte offset {offset}: invalid UTF-8"):
        list(tok.encode_iterable(chunks))


def test_tiktoken_attributes_of_a_trained_tokenizer(tok: Tokenizer) -> None:
    eot = tok.special_ids["<|endoftext|>"]
    assert tok.name == "purebpe"
    assert tok.max_token_value == max(tok.vocab) and tok.n_vocab == max(tok.vocab) + 1
    assert tok.eot_token == eot and tok.is_special_token(eot) and not tok.is_special_token(0)
    assert tok.special_tokens_set == {EOT, EOT2}
    assert tok.encode_single_token("<|endoftext|>") == eot
    assert tok.encode_single_token(b"a") == tok.byte_ids[ord("a")]
    assert tok.decode_single_token_bytes(eot) == b"<|endoftext|>"
    assert tok.decode_tokens_bytes([eot, 97]) == [b"<|endoftext|>", b"a"]
    values = tok.token_byte_values()
    assert values == sorted(values) and b"<|endoftext|>" not in values and len(values) == len(tok.vocab) - 2
    # purebpe's defaults: every special token allowed, none disallowed.
    assert tok.encode("x<|endoftext|>") == tok.encode("x") + [eot]
    assert tok.encode_batch(["a", "<|endoftext|>"]) == [tok.encode("a"), [eot]]
    assert tok.decode_batch([[97], [eot]]) == ["a", "<|endoftext|>"]
    assert tok.decode_bytes_batch([[97], []]) == [b"a", b""]
    assert tok.decode(tok.encode_bytes(b"\xe4\xbd"), errors="ignore") == ""


def test_unknown_tokens_are_key_errors_and_purebpe_errors(tok: Tokenizer) -> None:
    for call in (
        lambda: tok.decode_single_token_bytes(tok.n_vocab),
        lambda: tok.decode([0, -1]),
        lambda: tok.encode_single_token("not a token at all"),
    ):
        with pytest.raises(KeyError):
            call()
        with pytest.raises(PureBPEError):
            call()
    with pytest.raises(PureBPEError) as error:
        tok.decode([5, 10**6])
    assert (
        str(error.value)
        == "token id 1000000 at position 1 is not in the vocabulary (ids run 0..%d)" % tok.max_token_value
    )


def test_pickled_tokenizers_encode_the_same(tok: Tokenizer) -> None:
    import pickle

    text = "Hello <|endoftext|> wörld 123"
    again = pickle.loads(pickle.dumps(tok))
    assert again.encode(text) == tok.encode(text) and again.name == tok.name
    toy = pickle.loads(pickle.dumps(Tokenizer(CS336_VOCAB, CS336_MERGES, pretokenizer="none")))
    assert toy.encode("the cat ate") == [9, 7, 1, 5, 10, 3] and toy.pretokenizer == "none"


def test_encode_to_numpy(tok: Tokenizer) -> None:
    numpy = pytest.importorskip("numpy", reason="numpy is not installed")
    ids = tok.encode_to_numpy("hello world")
    assert ids.dtype == numpy.uint32 and ids.tolist() == tok.encode("hello world")


@pytest.mark.parametrize("engine", ["scanner", "re"])
@settings(max_examples=60)
@given(text=any_text, piece_bytes=st.integers(2, 40))
@example(text="lower lowest " * 9 + EOT, piece_bytes=4)
@example(text=EOT + EOT2 + "low " * 30 + EOT + "x" * 90 + EOT2, piece_bytes=8)
def test_ids_joined_from_pieces_are_the_ids_of_the_text_whole(
    model: BPEModel, engine: str, text: str, piece_bytes: int
) -> None:
    # With JOIN_PIECES (PyPy's way) a long text's ids are made a piece at a time and joined:
    # special tokens first, last and between pieces land where one piece puts them.
    with mock.patch.object(tokenizer_module, "ENGINE", engine):
        tok = model.tokenizer()
    whole = tok.encode(text)  # these texts are far below PIECE_BYTES: one piece
    with mock.patch.multiple(tokenizer_module, PIECE_BYTES=piece_bytes, JOIN_PIECES=True):
        assert tok.encode(text) == whole
        assert tok.encode_batch([text, text]) == [whole, whole]
        for typecode in "hHiQ":
            ids = tok.encode_to_array(text, typecode=typecode)
            assert ids.typecode == typecode and ids.tolist() == whole


def test_a_long_text_joined_from_pieces_with_special_tokens(tok: Tokenizer) -> None:
    # Real pieces of PIECE_BYTES: the ids joined from them (PyPy's way) are those of one list.
    text = (EOT + "\n".join(default_corpus()[:40]) + EOT2) * 3
    assert len(text.encode("utf-8")) > 4 * tokenizer_module.PIECE_BYTES
    with mock.patch.object(tokenizer_module, "JOIN_PIECES", False):
        expected = tok.encode(text)
    with mock.patch.object(tokenizer_module, "JOIN_PIECES", True):
        assert tok.encode(text) == expected
        assert tok.encode_to_array(text).tolist() == expected
    with pytest.raises(PureBPEError, match="text holds the special token '<.endoftext.>' at index 0"):
        tok.encode_to_array(text, set(), "all")


@pytest.mark.parametrize("typecode", ["B", "b", "f", "u", "HH", ""])
def test_encode_to_array_refuses_a_typecode_that_cannot_hold_the_ids(tok: Tokenizer, typecode: str) -> None:
    # tok's ids run up to 799: neither a byte nor a float holds them.
    message = f"typecode {typecode!r} cannot hold this tokenizer's ids .up to 799."
    with pytest.raises(PureBPEError, match=message):
        tok.encode_to_array("hi", typecode=typecode)


def test_encode_to_numpy_without_numpy_is_a_clear_error(tok: Tokenizer) -> None:
    with mock.patch.dict("sys.modules", {"numpy": None}):
        with pytest.raises(PureBPEError, match="encode_to_numpy needs the numpy package"):
            tok.encode_to_numpy("x")


def test_from_ranks_refuses_inconsistent_ranks() -> None:
    ranks = {bytes([i]): i for i in range(256)}
    with pytest.raises(PureBPEError, match="rank 3 is given to both"):
        Tokenizer.from_ranks({**ranks, b"ab": 3}, {})
    with pytest.raises(PureBPEError, match="special token '<s>': id 5 is not a free id"):
        Tokenizer.from_ranks(ranks, {"<s>": 5})
    with pytest.raises(PureBPEError, match="unknown tiktoken encoding 'cl200k'; known: gpt2, r50k_base"):
        Tokenizer.from_tiktoken("nowhere.tiktoken", "cl200k")


def test_tiktoken_merge_rule_follows_the_ranks_of_concatenations() -> None:
    """tiktoken merges the adjacent pair whose concatenation has the lowest rank, even
    where no merge list could say so: ``abc`` ranks below ``ab``, so it has no merge."""
    ranks = {bytes([i]): i for i in range(256)}
    tok = Tokenizer.from_ranks({**ranks, b"ab": 258, b"abc": 257}, {})
    assert tok.encode("zabc") == [ord("z"), 257]  # a+b (258), then ab+c (257)
    assert tok.encode("zab") == [ord("z"), 258]
    # A pre-token whose bytes are a token is that token, even one no merge reaches.
    lone = Tokenizer.from_ranks({**ranks, b"abc": 256}, {})
    assert lone.encode("abc") == [256]
    assert lone.encode("zabc") == [ord("z"), ord("a"), ord("b"), ord("c")]


def test_official_rank_files_are_read_plain_or_gzipped(tmp_path: Path) -> None:
    import base64
    import gzip

    lines = (
        b"".join(base64.b64encode(bytes([i])) + b" %d\n" % i for i in range(256))
        + base64.b64encode(b"hi")
        + b" 256\n"
    )
    (tmp_path / "plain.tiktoken").write_bytes(lines)
    (tmp_path / "packed.tiktoken.gz").write_bytes(gzip.compress(lines))
    for name in ("plain.tiktoken", "packed.tiktoken.gz"):
        tok = Tokenizer.from_tiktoken(tmp_path / name, "r50k_base")
        assert tok.encode("hi") == [256] and tok.n_vocab == 50257
    (tmp_path / "broken.tiktoken.gz").write_bytes(gzip.compress(lines)[:100])
    with pytest.raises(
        PureBPEError, match=r"broken.tiktoken.gz, line \d+: cannot read \(Compressed file ended"
    ):
        Tokenizer.from_tiktoken(tmp_path / "broken.tiktoken.gz", "r50k_base")
    (tmp_path / "bad.tiktoken").write_bytes(lines + b"!!! 9\n")
    with pytest.raises(PureBPEError, match="bad.tiktoken, line 258: expected 'base64 rank'"):
        Tokenizer.from_tiktoken(tmp_path / "bad.tiktoken", "r50k_base")


def test_constructor_and_from_files_find_special_tokens_the_same_way(tmp_path: Path) -> None:
    """``special_tokens=None``: the entries neither a single byte nor made by a merge."""
    from purebpe.bytemap import encode_token

    vocab = {**CS336_VOCAB, 11: b"<|endoftext|>"}
    built = Tokenizer(vocab, CS336_MERGES)
    (tmp_path / "vocab.json").write_text(json.dumps({encode_token(t): i for i, t in vocab.items()}))
    (tmp_path / "merges.txt").write_text(
        "#version: 0.2\n" + "".join(f"{encode_token(a)} {encode_token(b)}\n" for a, b in CS336_MERGES)
    )
    read = Tokenizer.from_files(tmp_path / "vocab.json", tmp_path / "merges.txt")
    for tok in (built, read):
        assert tok.special_tokens == ("<|endoftext|>",)
        assert tok.encode("the cat ate<|endoftext|>") == [9, 7, 1, 5, 10, 3, 11]
    plain = Tokenizer(vocab, CS336_MERGES, [])
    assert plain.special_tokens == ()
    with pytest.raises(PureBPEError, match="no token for byte 0x3c"):  # "<" as text
        plain.encode("<|endoftext|>")


def test_with_special_tokens_adds_them_and_keeps_the_rest() -> None:
    ranks = {**{bytes([b]): b for b in range(256)}, b"ab": 256}
    tok = Tokenizer.from_ranks(ranks, {"<|endoftext|>": 257}, name="base")
    more = tok.with_special_tokens({"<s>": 258, "ab": 256}, name="more")  # 256 holds b"ab" too
    assert more.encode("ab<s><|endoftext|>x", allowed_special="all") == [256, 258, 257, 120]
    assert more.encode("ab", allowed_special={"<s>"}, disallowed_special=()) == [256]  # as text
    with pytest.raises(PureBPEError, match="disallowed_special"):
        more.encode("<s>")  # tiktoken's defaults, as the tokenizer it came from
    assert (more.name, tok.name, tok.special_ids) == ("more", "base", {"<|endoftext|>": 257})
    assert more.decode([258, 97]) == "<s>a"
    with pytest.raises(PureBPEError, match=r"special token '<s>': id 97 holds b'a'"):
        tok.with_special_tokens({"<s>": 97})
    with pytest.raises(PureBPEError, match="given twice"):
        tok.with_special_tokens({"<|endoftext|>": 258})


def test_a_tokenizer_pickles_as_it_was_built() -> None:
    # From ranks (tiktoken's rule and defaults), from merges, and from tables given as they
    # are, whose ranks neither of the others rebuilds: each comes back encoding the same.
    ranks = {**{bytes([b]): b for b in range(256)}, b"bc": 256, b"ab": 257}
    from_ranks = Tokenizer.from_ranks(ranks, {"<|endoftext|>": 258})
    from_merges = Tokenizer(
        {**{b: bytes([b]) for b in range(256)}, 256: b"ab", 257: b"bc"}, [(b"a", b"b"), (b"b", b"c")]
    )
    from_tables = from_merges.with_special_tokens({"<s>": 258})
    text = "abc<s><|endoftext|>"
    for tok in (from_ranks, from_merges, from_tables):
        copy = pickle.loads(pickle.dumps(tok))
        assert copy.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")
        assert copy.special_ids == tok.special_ids and copy.name == tok.name
    assert from_ranks.encode("abc") == [97, 256] and from_merges.encode("abc") == [256, 99]
    with pytest.raises(PureBPEError, match="disallowed_special"):
        pickle.loads(pickle.dumps(from_ranks)).encode("<|endoftext|>")
