"""``purebpe convert`` from an HF ``tokenizer.json``: ``hf`` keeps the whole pipeline; the
other formats take only what they hold exactly, or say in one line what they cannot.

The pipelines are the recorded ones in ``tests/data/hf_pipelines`` (built with
``tokenizers``' own API); the reference ids are purebpe's HF pipeline, itself checked
against HF's recorded ids elsewhere.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Dict

import pytest

from purebpe.cli import main
from purebpe.files.detect import load_tokenizer
from purebpe.hf import load as load_hf

DATA = Path(__file__).resolve().parent / "data" / "hf_pipelines"
TEXTS = [
    "한국어 텍스트도 올바르게 토큰화되어야 합니다. 日本語のテキスト、カタカナ。",
    "Größere Übungen für Straßenbahnfahrer. Съешь же ещё этих булок! 我们的模型",
    "Emoji 👍🏽 👨\u200d👩\u200d👧 e\u0301  \r\n\tdigits 12345 it's DON'T  ",
]


def document(name: str) -> Dict[str, Any]:
    data: Dict[str, Any] = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))["tokenizer"]
    return data


def write(folder: Path, doc: Dict[str, Any], name: str = "model.json") -> Path:
    """A ``tokenizer.json`` under another name: recognised by its content."""
    path = folder / name
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


@pytest.mark.parametrize("name", ["llama2", "mistral", "gemma", "qwen", "llama3", "clip", "added_zoo"])
def test_to_hf_keeps_the_whole_pipeline(tmp_path: Path, name: str) -> None:
    source = write(tmp_path, document(name))
    assert main(["convert", str(source), str(tmp_path / "out"), "--format", "hf"]) == 0
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == ["special_tokens_map.json", "tokenizer.json", "tokenizer_config.json"]
    original, again = load_hf(source), load_hf(tmp_path / "out" / "tokenizer.json")
    assert json.loads(again.to_str()) == document(name)
    for text in TEXTS:
        for add in (False, True):
            assert again.encode(text, add_special_tokens=add) == original.encode(text, add_special_tokens=add)
        ids = original.encode(text, add_special_tokens=True)
        assert again.decode(ids) == original.decode(ids)


@pytest.mark.parametrize("name", ["llama3", "gpt2"])
@pytest.mark.parametrize("format", ["tiktoken", "gpt2", "purebpe"])
def test_byte_level_pipelines_with_named_patterns_convert_exactly(
    tmp_path: Path, name: str, format: str
) -> None:
    """Llama 3's ``ignore_merges`` is tiktoken's own rule; for the merges formats it is
    shown not to matter (every token's text encodes alike)."""
    source = write(tmp_path, document(name))
    assert main(["convert", str(source), str(tmp_path / "out"), "--format", format]) == 0
    original, again = load_hf(source), load_tokenizer(tmp_path / "out")
    for text in TEXTS + ["<|begin_of_text|>hi<|eot_id|>", "<|endoftext|> x"]:
        assert again.encode(text, allowed_special="all") == original.encode(text)


def refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], source: Path, format: str) -> str:
    """Convert, expecting a refusal: exit 2, one line, no traceback, nothing written."""
    capsys.readouterr()
    out = tmp_path / f"out-{format}"
    assert main(["convert", str(source), str(out), "--format", format]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and err.startswith("purebpe: error: ")
    assert not out.exists() or not any(out.iterdir())
    return err


@pytest.mark.parametrize(
    "name, reason",
    [
        ("llama2", "the normalizer 'Sequence'"),
        ("qwen", "the normalizer 'NFC'"),
        ("mistral", "byte fallback"),
        ("roberta", "the pre-tokenizer 'ByteLevel'"),
        ("subword_prefix", "a subword prefix"),
    ],
)
def test_what_the_plain_formats_cannot_hold_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, reason: str
) -> None:
    source = write(tmp_path, document(name))
    for format in ("tiktoken", "gpt2", "purebpe"):
        err = refused(tmp_path, capsys, source, format)
        assert f"the {format} format cannot hold {reason}" in err, err


def with_split(regex: str) -> Dict[str, Any]:
    """GPT-2's pipeline with a ``Split`` regex, then bytes, as its pre-tokenizer."""
    doc = document("gpt2")
    doc["pre_tokenizer"] = {
        "type": "Sequence",
        "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": regex}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False},
        ],
    }
    return doc


def test_a_split_regex_that_is_no_named_pattern_goes_to_purebpe_and_hf_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = write(tmp_path, with_split("\\p{L}+|\\p{N}|[^\\p{L}\\p{N}]+"))
    for format in ("gpt2", "tiktoken"):
        err = refused(tmp_path, capsys, source, format)
        assert f"the {format} format cannot hold a Split regex that is no named pattern" in err
    reference = [load_hf(source).encode(t) for t in TEXTS]
    assert main(["convert", str(source), str(tmp_path / "hf"), "--format", "hf"]) == 0
    assert [load_hf(tmp_path / "hf" / "tokenizer.json").encode(t) for t in TEXTS] == reference
    assert main(["convert", str(source), str(tmp_path / "pb"), "--format", "purebpe"]) == 0
    assert [load_tokenizer(tmp_path / "pb").encode(t) for t in TEXTS] == reference


def test_a_split_regex_the_engines_read_otherwise_goes_to_hf_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # \w is Oniguruma's word characters in HF: a regex Pattern would split otherwise.
    source = write(tmp_path, with_split("\\w+|[^\\w\\s]+|\\s+"))
    assert "the purebpe format cannot hold the pre-tokenizer 'Sequence'" in refused(
        tmp_path, capsys, source, "purebpe"
    )


def test_ignore_merges_goes_where_it_can_be_held(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A token no merge builds ("xyz"): with ``ignore_merges`` HF takes it whole, which a
    merges list cannot say (and tiktoken, which would also build it inside other words,
    cannot either); without, tiktoken's whole-token rule is what the file does not do."""
    for ignore in (True, False):
        doc = copy.deepcopy(document("gpt2"))
        vocab = doc["model"]["vocab"]
        vocab["xyz"] = 1 + max(list(vocab.values()) + [t["id"] for t in doc["added_tokens"]])
        doc["model"]["ignore_merges"] = ignore
        source = write(tmp_path, doc, f"ignore-{ignore}.json")
        original = load_hf(source)
        assert (original.encode("xyz") == [vocab["xyz"]]) == ignore
        err = refused(tmp_path, capsys, source, "gpt2" if ignore else "tiktoken")
        assert f"ignore_merges={str(ignore).lower()}" in err and "'xyz'" in err, err
        if ignore:
            assert "made by no merge" in refused(tmp_path, capsys, source, "tiktoken")
            continue
        # GPT-2's files would read "xyz" back as a special token; purebpe's hold it.
        assert "no merge builds (e.g. 'xyz')" in refused(tmp_path, capsys, source, "gpt2")
        out = tmp_path / "ok"
        assert main(["convert", str(source), str(out), "--format", "purebpe"]) == 0
        again = load_tokenizer(out)
        assert set(again.special_ids) == {"<|endoftext|>"}
        for text in TEXTS + ["xyz axyz xyzxyz"]:
            assert again.encode(text, allowed_special="all") == original.encode(text)


def test_an_empty_normalizer_sequence_is_no_normalizer(tmp_path: Path) -> None:
    """DeepSeek V3 writes ``Sequence([])``: nothing to hold."""
    doc = dict(document("llama3"), normalizer={"type": "Sequence", "normalizers": []})
    source = write(tmp_path, doc)
    assert main(["convert", str(source), str(tmp_path / "out"), "--format", "tiktoken"]) == 0
    again, original = load_tokenizer(tmp_path / "out"), load_hf(source)
    assert [again.encode(t) for t in TEXTS] == [original.encode(t) for t in TEXTS]
