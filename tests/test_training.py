"""The training API, the model and its native file format."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import purebpe
from purebpe.corpus import default_corpus
from purebpe.errors import PureBPEError

SPECIAL = "<|endoftext|>"


@pytest.fixture(scope="module")
def model() -> purebpe.BPEModel:
    return purebpe.train_from_iterator(default_corpus()[:30], 600, [SPECIAL, "<pad>"])


def test_vocab_layout_is_bytes_then_merges_then_specials(model: purebpe.BPEModel) -> None:
    assert model.vocab_size == 600 and len(model.merges) == 600 - 256 - 2
    assert [model.vocab[i] for i in range(256)] == [bytes([b]) for b in range(256)]
    for i, (left, right) in enumerate(model.merges):
        assert model.vocab[256 + i] == left + right
    assert model.vocab[598] == SPECIAL.encode() and model.vocab[599] == b"<pad>"
    assert model.special_ids() == {SPECIAL: 598, "<pad>": 599}


def test_special_tokens_are_never_merged() -> None:
    text = f"ab{SPECIAL}ab{SPECIAL}ab"
    model = purebpe.train_from_iterator([text], 300, [SPECIAL])
    assert model.merges == [(b"a", b"b")]  # '<|' etc. never counted


def test_files_and_iterators_train_the_same(tmp_path: Path) -> None:
    texts = default_corpus()[:10]
    paths = []
    for i, text in enumerate(texts):
        paths.append(tmp_path / f"{i}.txt")
        paths[-1].write_text(text, encoding="utf-8")
    from_files = purebpe.train(paths, 400)
    assert from_files == purebpe.train_from_iterator(texts, 400)
    vocab, merges = purebpe.train_bpe(str(paths[0]), 300, [SPECIAL])
    one = purebpe.train(paths[0], 300, [SPECIAL])
    assert (vocab, merges) == (one.vocab, one.merges)


def test_training_stops_when_no_pair_is_frequent_enough() -> None:
    model = purebpe.train_from_iterator(["ab ab ab cd"], 1000, min_frequency=2)
    # (a,b) occurs 3x; then (' ', 'ab') occurs 2x; everything else once.
    assert model.merges == [(b"a", b"b"), (b" ", b"ab")]
    assert model.vocab_size == 258
    assert purebpe.train_from_iterator([], 1000).merges == []


def test_truncate_gives_a_prefix_model(model: purebpe.BPEModel) -> None:
    small = model.truncate(400)
    assert small.merges == model.merges[:142] and small.special_tokens == model.special_tokens
    assert small == purebpe.train_from_iterator(default_corpus()[:30], 400, [SPECIAL, "<pad>"])
    with pytest.raises(PureBPEError, match="outside"):
        model.truncate(100)


def test_native_format_round_trips(model: purebpe.BPEModel, tmp_path: Path) -> None:
    paths = model.save(tmp_path / "out")
    assert [p.name for p in paths] == ["purebpe.json"]
    assert purebpe.load(tmp_path / "out") == model
    assert purebpe.load(paths[0]) == model
    # Written atomically: no temporary files left beside it, readable permissions.
    assert sorted(os.listdir(tmp_path / "out")) == ["purebpe.json"]
    assert paths[0].stat().st_mode & 0o044 == 0o044


def test_native_format_is_readable_json(model: purebpe.BPEModel, tmp_path: Path) -> None:
    (path,) = model.save(tmp_path)
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["format"] == "purebpe" and document["pretokenizer"] == "gpt2"
    assert document["vocab"]["32"] == "Ġ" and document["special_tokens"] == {SPECIAL: 598, "<pad>": 599}


@pytest.mark.parametrize(
    "content, message",
    [
        (b"\xff\xfe", "not a purebpe JSON file"),
        (b"[1, 2]", "not a purebpe JSON file"),
        (b'{"format": "purebpe", "version": 99}', "unsupported purebpe file version 99"),
        (b'{"format": "purebpe", "version": 1}', "malformed purebpe file"),
    ],
)
def test_malformed_native_files_give_one_line_errors(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "purebpe.json"
    path.write_bytes(content)
    with pytest.raises(PureBPEError, match=message) as info:
        purebpe.load(tmp_path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_load_explains_what_it_looked_for(tmp_path: Path) -> None:
    with pytest.raises(PureBPEError, match="no tokenizer files found"):
        purebpe.load(tmp_path)
    with pytest.raises(PureBPEError, match="no such file"):
        purebpe.load(tmp_path / "nothing")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"vocab_size": 200}, "vocab_size 200 is too small"),
        ({"vocab_size": 257, "special_tokens": ["a", "b"]}, "too small"),
        ({"vocab_size": 300, "variant": "fastest"}, "unknown variant 'fastest'"),
        ({"vocab_size": 300, "special_tokens": ["x", "x"]}, "given twice"),
        ({"vocab_size": 300, "min_frequency": 0}, "min_frequency must be at least 1"),
        ({"vocab_size": 300, "max_token_length": 0}, "max_token_length must be at least 1"),
        ({"vocab_size": 300, "progress": "yes"}, "progress must be"),
    ],
)
def test_bad_training_arguments_fail_before_counting(kwargs: dict, message: str) -> None:  # type: ignore[type-arg]
    def never_iterated():  # type: ignore[no-untyped-def]
        raise AssertionError("counting started before the arguments were checked")
        yield ""

    with pytest.raises(PureBPEError, match=message):
        purebpe.train_from_iterator(never_iterated(), **kwargs)


def test_a_vocab_size_of_the_wrong_type_is_a_type_error() -> None:
    with pytest.raises(TypeError, match="vocab_size must be an int"):
        purebpe.train_from_iterator(["never counted"], "300")  # type: ignore[arg-type]


def test_progress_jsonl_reports_both_phases(capsys: pytest.CaptureFixture[str]) -> None:
    purebpe.train_from_iterator(default_corpus()[:3], 300, progress="jsonl")
    records = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    finals = {r["phase"]: r for r in records if r["final"]}
    assert finals["merge"]["done"] == 44 and finals["merge"]["total"] == 44
    assert finals["count"]["done"] == sum(len(t) for t in default_corpus()[:3])
