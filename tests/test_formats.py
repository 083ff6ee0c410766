"""File formats (purebpe, GPT-2, HF, tiktoken) and the encode/decode/export commands."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import sys
from array import array
from pathlib import Path
from typing import List

import pytest

import purebpe
import purebpe.cli as cli
from purebpe import BPEModel
from purebpe.corpus import default_corpus
from purebpe.errors import PureBPEError
from purebpe.formats import FORMATS

EOT = "<|endoftext|>"
ALL_FORMATS = list(FORMATS)
MAIN_FILE = {
    "purebpe": "purebpe.json",
    "gpt2": "vocab.json",
    "hf": "tokenizer.json",
    "tiktoken": "tokenizer.tiktoken",
}


@pytest.fixture(scope="module")
def model() -> BPEModel:
    return purebpe.train_from_iterator(default_corpus()[:20], 600, [EOT, "<pad> x"])


@pytest.fixture(scope="module")
def lines_model() -> BPEModel:
    return purebpe.train_from_iterator(default_corpus()[:10], 450, [EOT], pretokenizer="none")


# --------------------------------------------------------------------------------------
# Round trips
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("format", ALL_FORMATS)
def test_round_trip_with_special_tokens(model: BPEModel, format: str, tmp_path: Path) -> None:
    paths = model.save(tmp_path, format)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths)
    assert purebpe.load(tmp_path) == model
    assert purebpe.load(tmp_path / MAIN_FILE[format]) == model


@pytest.mark.parametrize("format", ALL_FORMATS)
def test_round_trip_of_a_lines_model(lines_model: BPEModel, format: str, tmp_path: Path) -> None:
    lines_model.save(tmp_path, format)
    loaded = purebpe.load(tmp_path)
    assert loaded == lines_model and loaded.pretokenizer == "none"
    text = "one line here\n  and   another\n"
    assert loaded.tokenizer().encode(text) == lines_model.tokenizer().encode(text)


@pytest.mark.parametrize("format", ALL_FORMATS)
def test_round_trip_of_a_model_without_merges(format: str, tmp_path: Path) -> None:
    bare = BPEModel.from_merges([])
    bare.save(tmp_path, format)
    assert purebpe.load(tmp_path) == bare


def test_gpt2_files_hold_the_byte_alphabet_and_the_header(model: BPEModel, tmp_path: Path) -> None:
    model.save(tmp_path, "gpt2")
    vocab = json.loads((tmp_path / "vocab.json").read_text(encoding="utf-8"))
    assert vocab["Ġ"] == 32 and vocab["!"] == 33 and vocab[EOT] == 598
    lines = (tmp_path / "merges.txt").read_text(encoding="utf-8").splitlines()
    vocab_digest = hashlib.sha256((tmp_path / "vocab.json").read_bytes()).hexdigest()
    assert lines[0] == f"#version: 0.2 vocab-sha256={vocab_digest}" and len(lines) == 1 + len(model.merges)
    left, right = model.merges[0]
    assert lines[1] == f"{left.decode().replace(' ', 'Ġ')} {right.decode().replace(' ', 'Ġ')}"


def test_gpt2_style_file_names_pair_up(model: BPEModel, tmp_path: Path) -> None:
    model.save(tmp_path, "gpt2")
    (tmp_path / "vocab.json").rename(tmp_path / "gpt2-vocab.json")
    (tmp_path / "merges.txt").rename(tmp_path / "gpt2-merges.txt")
    assert purebpe.load(tmp_path / "gpt2-vocab.json") == model
    assert purebpe.load(tmp_path / "gpt2-merges.txt") == model


def test_tiktoken_file_is_base64_and_rank(model: BPEModel, tmp_path: Path) -> None:
    model.save(tmp_path, "tiktoken")
    lines = (tmp_path / "tokenizer.tiktoken").read_text(encoding="ascii").splitlines()
    assert lines[0] == "AA== 0"  # base64 of byte 0, rank 0
    assert lines[256] == f"{base64.b64encode(model.vocab[256]).decode()} 256"
    assert len(lines) == 256 + len(model.merges)
    sidecar = json.loads((tmp_path / "tokenizer.tiktoken.json").read_text(encoding="utf-8"))
    assert sidecar["special_tokens"] == {EOT: 598, "<pad> x": 599}
    assert sidecar["explicit_n_vocab"] == 600 and sidecar["pretokenizer"] == "gpt2"


def test_tiktoken_file_without_sidecar_loads_as_gpt2_without_specials(
    model: BPEModel, tmp_path: Path
) -> None:
    model.save(tmp_path, "tiktoken")
    (tmp_path / "tokenizer.tiktoken.json").unlink()
    loaded = purebpe.load(tmp_path)
    assert loaded.special_tokens == () and loaded.merges == model.merges
    assert loaded.pretokenizer == "gpt2"


def test_hf_file_shape(model: BPEModel, tmp_path: Path) -> None:
    model.save(tmp_path, "hf")
    document = json.loads((tmp_path / "tokenizer.json").read_text(encoding="utf-8"))
    assert document["model"]["type"] == "BPE" and document["pre_tokenizer"]["type"] == "ByteLevel"
    assert [(t["content"], t["id"], t["special"]) for t in document["added_tokens"]] == [
        (EOT, 598, True),
        ("<pad> x", 599, True),
    ]
    assert len(document["model"]["merges"]) == len(model.merges)


# --------------------------------------------------------------------------------------
# What other formats cannot hold
# --------------------------------------------------------------------------------------
def duplicate_model() -> BPEModel:
    # Both merges make b"abc": possible in canonical BPE, impossible in files keyed by bytes.
    return BPEModel.from_merges([(b"a", b"b"), (b"b", b"c"), (b"ab", b"c"), (b"a", b"bc")])


@pytest.mark.parametrize("format", ["gpt2", "hf", "tiktoken"])
def test_duplicate_tokens_are_refused_by_byte_keyed_formats(format: str, tmp_path: Path) -> None:
    with pytest.raises(PureBPEError, match=f"cannot write the {format} format: ids 258 and 259"):
        duplicate_model().save(tmp_path, format)
    assert list(tmp_path.iterdir()) == []


def test_duplicate_tokens_round_trip_in_the_native_format(tmp_path: Path) -> None:
    duplicate_model().save(tmp_path)
    loaded = purebpe.load(tmp_path)
    assert loaded == duplicate_model()
    tok = loaded.tokenizer()
    assert tok.encode("abc") == [258]  # b+c ranks after a+b, then (ab, c) is merge 2: id 258
    assert tok.encode("xbc abc") == [120, 257, 32, 258]


def test_tiktoken_refuses_ids_out_of_merge_order(tmp_path: Path) -> None:
    model = BPEModel.from_merges([(b"a", b"b"), (b"c", b"d")])
    swapped = dict(model.vocab)
    swapped[256], swapped[257] = swapped[257], swapped[256]
    with pytest.raises(PureBPEError, match="merge 1 makes id 256, not above the id 257"):
        BPEModel(swapped, model.merges).save(tmp_path, "tiktoken")


def test_tiktoken_refuses_tokens_no_merge_makes(tmp_path: Path) -> None:
    model = BPEModel.from_merges([(b"a", b"b")])
    extra = dict(model.vocab)
    extra[257] = b"xyz"
    with pytest.raises(PureBPEError, match=r"token 257 \(b'xyz'\) is made by no merge"):
        BPEModel(extra, model.merges).save(tmp_path, "tiktoken")


# --------------------------------------------------------------------------------------
# Atomic writes and malformed files
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("format", ALL_FORMATS)
def test_interrupted_writes_leave_no_temporary_files(
    model: BPEModel, format: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def fail(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(PureBPEError, match="No space left") as caught:
        model.save(tmp_path, format)
    assert str(caught.value).startswith(str(tmp_path)) and ".tmp" not in str(caught.value)
    assert list(tmp_path.iterdir()) == []


MALFORMED = [
    # (format, file to corrupt, new content, expected message part)
    ("gpt2", "vocab.json", "{not json", "not a GPT-2 vocab.json"),
    ("gpt2", "vocab.json", '["a"]', "expected a JSON object"),
    ("gpt2", "vocab.json", '{"a": -3}', "has id -3"),
    ("gpt2", "merges.txt", "#version: 0.2\nĠ t h\n", "line 2: expected 'left right'"),
    ("gpt2", "merges.txt", "#version: 0.2\nĠ \x07\n", "line 2: '\\x07' is not in GPT-2's byte-to-unicode"),
    ("gpt2", "merges.txt", "#version: 0.2\nĠ ĠĠĠĠĠĠĠĠĠĠĠĠĠĠĠĠĠĠĠĠĠĠĠĠĠĠĠĠĠ\n", "needs"),
    ("gpt2", "merges.txt", "#version: 0.2 pretokenizer=bpe\n", "unknown pre-tokenizer 'bpe'"),
    ("hf", "tokenizer.json", "[1, 2", "not a HF tokenizer.json"),
    ("hf", "tokenizer.json", '{"model": {"type": "WordPiece"}}', "model type 'WordPiece' is not BPE"),
    ("hf", "tokenizer.json", '{"model": {"type": "BPE", "vocab": {}, "merges": []}}', "pre_tokenizer None"),
    (
        "hf",
        "tokenizer.json",
        '{"model": {"type": "BPE", "vocab": {}, "merges": []},'
        ' "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false}}',
        "no token for byte 0x00",
    ),
    (
        "hf",
        "tokenizer.json",
        '{"model": {"type": "BPE"}, "pre_tokenizer": {"type": "ByteLevel"}}',
        "malformed",
    ),
    ("tiktoken", "tokenizer.tiktoken", "AA== 0\nnot-base64! 1\n", "line 2: expected 'base64 rank'"),
    ("tiktoken", "tokenizer.tiktoken", "AA== 0\nAQ== 0\n", "two tokens share a rank"),
    ("tiktoken", "tokenizer.tiktoken", "AA== 0\n", "no token for byte 0x01"),
    ("tiktoken", "tokenizer.tiktoken.json", '{"pretokenizer": "bpe"}', "unknown pre-tokenizer"),
    ("tiktoken", "tokenizer.tiktoken.json", '{"special_tokens": {"x": 0}}', "has id 0, a rank"),
    ("purebpe", "purebpe.json", "{", "not a purebpe JSON file"),
]


@pytest.mark.parametrize("format, name, content, message", MALFORMED)
def test_malformed_files_give_one_line_errors_naming_the_file(
    model: BPEModel, format: str, name: str, content: str, message: str, tmp_path: Path
) -> None:
    model.save(tmp_path, format)
    (tmp_path / name).write_text(content, encoding="utf-8")
    if name == "tokenizer.tiktoken":  # as if written by hand: no record of the old ranks
        sidecar = json.loads((tmp_path / "tokenizer.tiktoken.json").read_text(encoding="utf-8"))
        del sidecar["ranks_sha256"]
        (tmp_path / "tokenizer.tiktoken.json").write_text(json.dumps(sidecar), encoding="utf-8")
    with pytest.raises(PureBPEError) as caught:
        purebpe.load(tmp_path)
    text = str(caught.value)
    assert message in text
    assert str(tmp_path / name) in text or str(tmp_path / MAIN_FILE[format]) in text
    assert "\n" not in text


@pytest.mark.parametrize(
    "change, message",
    [
        ({"normalizer": {"type": "NFC"}}, "normalizer 'NFC' is not supported"),
        ({"pre_tokenizer": {"type": "Whitespace"}}, "pre_tokenizer 'Whitespace' is not supported"),
        ({"pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": True}}, "pre_tokenizer 'ByteLevel'"),
        ({"model.ignore_merges": True}, "ignore_merges=True is not supported"),
        ({"model.continuing_subword_prefix": "##"}, "continuing_subword_prefix='##'"),
    ],
)
def test_hf_options_purebpe_does_not_implement_are_refused(
    model: BPEModel,
    change: dict,
    message: str,
    tmp_path: Path,  # type: ignore[type-arg]
) -> None:
    model.save(tmp_path, "hf")
    path = tmp_path / "tokenizer.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    for key, value in change.items():
        if key.startswith("model."):
            document["model"][key[len("model.") :]] = value
        else:
            document[key] = value
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(PureBPEError, match=message):
        purebpe.load(path)


def test_hf_reads_merges_as_pairs_and_added_tokens_in_the_vocab(model: BPEModel, tmp_path: Path) -> None:
    model.save(tmp_path, "hf")
    path = tmp_path / "tokenizer.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    document["model"]["merges"] = [m.split(" ") for m in document["model"]["merges"]]
    document["model"]["vocab"][EOT] = 598  # as GPT-2's tokenizer.json has it
    del document["pre_tokenizer"]["use_regex"]  # older files leave the default out
    path.write_text(json.dumps(document), encoding="utf-8")
    assert purebpe.load(path) == model


def test_gpt2_vocab_entries_outside_the_byte_alphabet_are_special(model: BPEModel, tmp_path: Path) -> None:
    model.save(tmp_path, "gpt2")
    vocab = json.loads((tmp_path / "vocab.json").read_text(encoding="utf-8"))
    assert "<pad>Ġx" in vocab  # written in the byte alphabet ...
    vocab["<pad> x"] = vocab.pop("<pad>Ġx")  # ... but read literally too, as HF writes it
    (tmp_path / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    merges = (tmp_path / "merges.txt").read_text(encoding="utf-8").split("\n")
    merges[0] = "#version: 0.2"  # as HF writes it: no record of the vocab.json
    (tmp_path / "merges.txt").write_text("\n".join(merges), encoding="utf-8")
    assert purebpe.load(tmp_path) == model


def test_load_names_what_it_looked_for(tmp_path: Path) -> None:
    with pytest.raises(PureBPEError, match="no tokenizer files found.*vocab.json.*tokenizer.tiktoken"):
        purebpe.load(tmp_path)
    (tmp_path / "vocab.json").write_text("{}", encoding="utf-8")
    with pytest.raises(PureBPEError, match="merges.txt: no such file"):
        purebpe.load(tmp_path)


# --------------------------------------------------------------------------------------
# The encode, decode and export commands
# --------------------------------------------------------------------------------------
@pytest.fixture()
def run_cli(monkeypatch: pytest.MonkeyPatch, capsysbinary: pytest.CaptureFixture[bytes]):  # type: ignore[no-untyped-def]
    """Run ``purebpe ARGS`` in-process with ``stdin`` bytes; returns (status, stdout, stderr)."""
    monkeypatch.setattr(cli, "COMMANDS", ("encode", "decode", "export"))

    def run(args: List[str], stdin: bytes = b""):  # type: ignore[no-untyped-def]
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
        status = cli.main(args)
        out, err = capsysbinary.readouterr()
        return status, out, err.decode("utf-8")

    return run


@pytest.fixture()
def saved(model: BPEModel, tmp_path: Path) -> Path:
    model.save(tmp_path / "model")
    return tmp_path / "model"


SAMPLE = f"Hello, world! It's 2024.{EOT}\n  Ünïcödé — 漢字 😀\n"


def test_encode_to_stdout_and_decode_back(model: BPEModel, saved: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    status, out, _ = run_cli(["encode", "--tokenizer", str(saved), "--progress", "none"], SAMPLE.encode())
    assert status == 0
    ids = [int(x) for x in out.split()]
    assert ids == model.tokenizer().encode(SAMPLE)
    status, text, _ = run_cli(["decode", "--tokenizer", str(saved)], out)
    assert status == 0 and text.decode("utf-8") == SAMPLE


@pytest.mark.parametrize(
    "suffix, dtype", [(".npy", None), (".npy", "uint32"), (".bin", "uint16"), (".bin", "uint32")]
)
def test_encode_to_binary_files_and_back(  # type: ignore[no-untyped-def]
    model: BPEModel, saved: Path, tmp_path: Path, run_cli, suffix: str, dtype: str
) -> None:
    source = tmp_path / "in.txt"
    source.write_text(SAMPLE * 50, encoding="utf-8")
    target = tmp_path / f"ids{suffix}"
    args = ["encode", "--tokenizer", str(saved), str(source), "-o", str(target), "--progress", "none"]
    status, _, err = run_cli(args + (["--dtype", dtype] if dtype else []))
    assert status == 0 and f"ids to {target}" in err
    expected = model.tokenizer().encode(SAMPLE * 50)
    data = target.read_bytes()
    if suffix == ".bin":
        values = array("H" if dtype == "uint16" else "I")
        values.frombytes(data)
        if sys.byteorder == "big":
            values.byteswap()
        assert values.tolist() == expected
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    decode_args = ["decode", "--tokenizer", str(saved), str(target), "-o", str(tmp_path / "out.txt")]
    status, _, _ = run_cli(decode_args + (["--dtype", dtype] if dtype else []))
    assert status == 0 and (tmp_path / "out.txt").read_text(encoding="utf-8") == SAMPLE * 50


@pytest.mark.parametrize("dtype", [None, "uint32"])
def test_npy_output_loads_in_numpy(model: BPEModel, saved: Path, tmp_path: Path, run_cli, dtype: str) -> None:  # type: ignore[no-untyped-def]
    np = pytest.importorskip("numpy")
    source = tmp_path / "in.txt"
    source.write_text(SAMPLE, encoding="utf-8")
    target = tmp_path / "ids.npy"
    args = ["encode", "--tokenizer", str(saved), str(source), "-o", str(target), "--progress", "none"]
    assert run_cli(args + (["--dtype", dtype] if dtype else []))[0] == 0
    loaded = np.load(target)
    assert loaded.dtype == np.dtype(dtype or "uint16") and loaded.shape == (len(loaded),)
    assert loaded.tolist() == model.tokenizer().encode(SAMPLE)
    # And numpy's own files decode.
    np.save(tmp_path / "np.npy", np.array(loaded, dtype=np.int64))
    status, text, _ = run_cli(["decode", "--tokenizer", str(saved), str(tmp_path / "np.npy")])
    assert status == 0 and text.decode("utf-8") == SAMPLE


def test_encode_ordinary_keeps_special_tokens_as_text(model: BPEModel, saved: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    status, out, _ = run_cli(
        ["encode", "--tokenizer", str(saved), "--ordinary", "--progress", "none"], SAMPLE.encode()
    )
    assert [int(x) for x in out.split()] == model.tokenizer().encode_ordinary(SAMPLE)


def test_encode_reports_invalid_utf8_with_its_place(saved: Path, run_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    source = tmp_path / "bad.txt"
    source.write_bytes(b"fine\nline two \xff here\n")
    target = tmp_path / "ids.npy"
    status, _, err = run_cli(
        ["encode", "--tokenizer", str(saved), str(source), "-o", str(target), "--progress", "none"]
    )
    assert status == 2 and not target.exists()
    assert f"{source}, line 2, byte offset 14: invalid UTF-8" in err and err.count("\n") == 1
    status, out, _ = run_cli(
        ["encode", "--tokenizer", str(saved), str(source), "--errors", "replace", "--progress", "none"]
    )
    assert status == 0


def test_decode_reports_bad_ids(saved: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    status, _, err = run_cli(["decode", "--tokenizer", str(saved)], b"1 2\n 3 70000")
    assert status == 2 and "<stdin>: token id 70000 at position 3 is not in the vocabulary" in err
    status, _, err = run_cli(["decode", "--tokenizer", str(saved)], b"1 two")
    assert status == 2 and "b'two' is not a token id" in err


def test_dtype_too_small_for_the_vocab_is_refused(tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    vocab = {i: bytes([i]) for i in range(256)}
    vocab[70_000] = EOT.encode()
    BPEModel(vocab, [], (EOT,)).save(tmp_path / "big")
    args = [
        "encode",
        "--tokenizer",
        str(tmp_path / "big"),
        "-o",
        str(tmp_path / "x.bin"),
        "--progress",
        "none",
    ]
    status, _, err = run_cli(args + ["--dtype", "uint16"], b"abc")
    assert status == 2 and "cannot hold ids up to 70000" in err
    status, _, _ = run_cli(args, EOT.encode())
    assert status == 0 and array("I", (tmp_path / "x.bin").read_bytes()).tolist() == [70_000]


@pytest.mark.parametrize("format", ["gpt2", "hf", "tiktoken"])
def test_export_then_encode_with_the_export(  # type: ignore[no-untyped-def]
    model: BPEModel, saved: Path, tmp_path: Path, run_cli, format: str
) -> None:
    out_dir = tmp_path / f"as-{format}"
    status, out, _ = run_cli(["export", "--tokenizer", str(saved), "--format", format, "-o", str(out_dir)])
    assert status == 0 and sorted(out.decode().split()) == [str(p) for p in sorted(out_dir.iterdir())]
    status, out, _ = run_cli(["encode", "--tokenizer", str(out_dir), "--progress", "none"], SAMPLE.encode())
    assert [int(x) for x in out.split()] == model.tokenizer().encode(SAMPLE)


def test_encode_streams_large_inputs(model: BPEModel, saved: Path, tmp_path: Path, run_cli) -> None:  # type: ignore[no-untyped-def]
    text = "\n".join(default_corpus()[20:30])
    source = tmp_path / "big.txt"
    source.write_text(text, encoding="utf-8")
    target = tmp_path / "ids.bin"
    assert (
        run_cli(["encode", "--tokenizer", str(saved), str(source), "-o", str(target), "--progress", "none"])[
            0
        ]
        == 0
    )
    assert array("H", target.read_bytes()).tolist() == model.tokenizer().encode(text)
