"""Every file purebpe reads, corrupted every way: truncated at every length, bytes flipped,
each JSON field given a value of every other type. The load gives a model that encodes, or a
one-line ``PureBPEError`` naming the file; never another exception, in the API or the CLI."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import purebpe
import purebpe.cli as cli
from purebpe import BPEModel
from purebpe.counting import WordCounts
from purebpe.errors import PureBPEError

MODEL = BPEModel.from_merges([(b"a", b"b"), (b"ab", b"c"), (b" ", b"ab")], ["<s>", "<|endoftext|>"])
SAMPLE = "abc ab<s>c \u00e9\U0001f600<|endoftext|>"
#: (format, file to corrupt, whether the pair records of two-file formats are kept)
TARGETS = [
    ("purebpe", "purebpe.json", True),
    ("hf", "tokenizer.json", True),
    ("gpt2", "vocab.json", False),
    ("gpt2", "merges.txt", False),
    ("gpt2", "merges.txt", True),
    ("tiktoken", "tokenizer.tiktoken", False),
    ("tiktoken", "tokenizer.tiktoken.json", False),
    ("tiktoken", "tokenizer.tiktoken.json", True),
]
TARGET_IDS = [f"{name}{'' if keep else ' (no pair record)'}" for _, name, keep in TARGETS]
#: A value of every JSON type, and the values that break naive readers.
ODD_VALUES: List[Any] = [None, True, -1, 10**9, 10**12, 1.5, "", "x", "\ud800", [], [1], {}, {"a": 1}]


def save_valid(directory: Path, format: str, keep_pair_record: bool) -> None:
    MODEL.save(directory, format)
    if keep_pair_record:
        return
    if format == "gpt2":  # as GPT-2's and HF's own files: no record of the vocab.json
        merges = directory / "merges.txt"
        lines = merges.read_text(encoding="utf-8").split("\n")
        merges.write_text("\n".join(["#version: 0.2"] + lines[1:]), encoding="utf-8")
    if format == "tiktoken":
        sidecar = directory / "tokenizer.tiktoken.json"
        document = json.loads(sidecar.read_text(encoding="utf-8"))
        del document["ranks_sha256"]
        sidecar.write_text(json.dumps(document), encoding="utf-8")


def check_load(directory: Path, format: str) -> None:
    """Load ``directory``: a model that encodes, or a PureBPEError naming a file of it."""
    try:
        model = purebpe.load(directory)
        model.tokenizer().encode(SAMPLE)
    except PureBPEError as exc:
        message = str(exc)
        assert "\n" not in message
        assert str(directory) in message, message


@pytest.fixture(scope="module")
def originals(tmp_path_factory: pytest.TempPathFactory) -> Dict[Tuple[str, str, bool], bytes]:
    found = {}
    for format, name, keep in TARGETS:
        directory = tmp_path_factory.mktemp("original")
        save_valid(directory, format, keep)
        found[(format, name, keep)] = (directory / name).read_bytes()
    return found


def corrupted(tmp_path: Path, target: Tuple[str, str, bool], data: bytes) -> Path:
    format, name, keep = target
    directory = tmp_path / "model"
    if not directory.exists():
        directory.mkdir()
        save_valid(directory, format, keep)
    (directory / name).write_bytes(data)
    return directory


@pytest.mark.parametrize("target", TARGETS, ids=TARGET_IDS)
def test_truncated_at_every_length(target: Tuple[str, str, bool], originals: Any, tmp_path: Path) -> None:
    data = originals[target]
    for length in range(len(data)):
        check_load(corrupted(tmp_path, target, data[:length]), target[0])


@pytest.mark.parametrize("target", TARGETS, ids=TARGET_IDS)
@settings(max_examples=60)
@given(
    flips=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)), min_size=1, max_size=4)
)
def test_bytes_flipped(
    target: Tuple[str, str, bool],
    originals: Any,
    tmp_path_factory: pytest.TempPathFactory,
    flips: List[Tuple[float, int]],
) -> None:
    data = bytearray(originals[target])
    for where, value in flips:
        data[int(where * len(data))] = value
    check_load(corrupted(tmp_path_factory.mktemp("flip"), target, bytes(data)), target[0])


def json_paths(value: Any, path: Tuple[Any, ...] = ()) -> Iterator[Tuple[Any, ...]]:
    """Every field of a JSON document (of big objects and lists, the first and last few)."""
    yield path
    if isinstance(value, dict):
        keys = list(value)
        for key in keys[:3] + keys[3:][-3:]:
            yield from json_paths(value[key], path + (key,))
    elif isinstance(value, list):
        indexes = list(range(len(value)))
        for index in indexes[:2] + indexes[2:][-1:]:
            yield from json_paths(value[index], path + (index,))


def replaced(document: Any, path: Tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    copy = json.loads(json.dumps(document))
    parent = copy
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    return copy


JSON_TARGETS = [t for t in TARGETS if t[1].endswith(".json")]


@pytest.mark.parametrize(
    "target", JSON_TARGETS, ids=[f"{t[1]}{'' if t[2] else ' (no pair record)'}" for t in JSON_TARGETS]
)
def test_every_json_field_of_every_type(
    target: Tuple[str, str, bool], originals: Any, tmp_path: Path
) -> None:
    document = json.loads(originals[target])
    for path in json_paths(document):
        for value in ODD_VALUES:
            text = json.dumps(replaced(document, path, value))
            check_load(corrupted(tmp_path, target, text.encode("utf-8")), target[0])
        if isinstance(document, dict):  # and an odd key beside the others
            odd_key = dict(document, **{"\ud800": 1})
            check_load(corrupted(tmp_path, target, json.dumps(odd_key).encode("utf-8")), target[0])


def test_huge_ids_are_refused_naming_the_id(tmp_path: Path) -> None:
    """A vocabulary's ids must be dense: an id of 10**9 would make a table of 10**9 slots."""
    for format, name, edit in [
        ("purebpe", "purebpe.json", lambda d: d["special_tokens"].update({"<s>": 10**9})),
        ("hf", "tokenizer.json", lambda d: d["added_tokens"][0].update({"id": 10**9})),
        ("gpt2", "vocab.json", lambda d: d.update({"<s>": 10**12})),
    ]:
        directory = tmp_path / format
        save_valid(directory, format, keep_pair_record=False)
        document = json.loads((directory / name).read_text(encoding="utf-8"))
        edit(document)
        (directory / name).write_text(json.dumps(document), encoding="utf-8")
        with pytest.raises(PureBPEError, match=r"id 10{9,12} is far beyond the 261 tokens") as caught:
            purebpe.load(directory)
        assert str(directory / name) in str(caught.value)
    directory = tmp_path / "tiktoken"
    save_valid(directory, "tiktoken", keep_pair_record=False)
    with open(directory / "tokenizer.tiktoken", "a") as ranks:
        ranks.write("eHl6 1000000000\n")
    with pytest.raises(PureBPEError, match="id 1000000000 is far beyond"):
        purebpe.load(directory)


def test_ids_with_small_gaps_still_load(tmp_path: Path) -> None:
    """cl100k's layout: a few unused ids below its special tokens."""
    vocab = dict(MODEL.vocab)
    vocab[1000] = vocab.pop(max(vocab))
    gapped = BPEModel(vocab, MODEL.merges, MODEL.special_tokens)
    for format in ("purebpe", "hf", "gpt2", "tiktoken"):
        gapped.save(tmp_path / format, format)
        assert purebpe.load(tmp_path / format) == gapped


# --------------------------------------------------------------------------------------
# Counts files and ids files, through the API and the CLI
# --------------------------------------------------------------------------------------
def counts_file_bytes() -> bytes:
    counts = WordCounts({b"ab": 3, b" abc": 2, "\u00e9".encode(): 1}, ("<s>",))
    return gzip.compress(gzip.decompress(_saved(counts)), mtime=0)


def _saved(counts: WordCounts) -> bytes:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        return counts.save(Path(tmp) / "c.tsv.gz").read_bytes()


def check_counts(path: Path) -> None:
    try:
        WordCounts.load(path)
    except PureBPEError as exc:
        assert str(path) in str(exc) and "\n" not in str(exc)


def test_counts_file_truncated_at_every_length_and_its_text_too(tmp_path: Path) -> None:
    data = counts_file_bytes()
    path = tmp_path / "c.tsv.gz"
    for length in range(len(data)):
        path.write_bytes(data[:length])
        check_counts(path)
    text = gzip.decompress(data)
    for length in range(len(text)):
        path.write_bytes(gzip.compress(text[:length]))
        check_counts(path)


@settings(max_examples=100)
@given(
    flips=st.lists(st.tuples(st.floats(0, 1, exclude_max=True), st.integers(0, 255)), min_size=1, max_size=3),
    compressed=st.booleans(),
)
def test_counts_file_bytes_flipped(
    tmp_path_factory: pytest.TempPathFactory, flips: List[Tuple[float, int]], compressed: bool
) -> None:
    data = bytearray(counts_file_bytes() if compressed else gzip.decompress(counts_file_bytes()))
    for where, value in flips:
        data[int(where * len(data))] = value
    path = tmp_path_factory.mktemp("counts") / "c.tsv.gz"
    path.write_bytes(bytes(data) if compressed else gzip.compress(bytes(data)))
    check_counts(path)


def run_main(args: List[str], capsys: pytest.CaptureFixture[str]) -> Tuple[int, str]:
    status = cli.main(args)
    return status, capsys.readouterr().err


def assert_cli_outcome(status: int, err: str, named: Path) -> None:
    assert status in (0, 2), err
    if status == 2:
        assert err.startswith("purebpe: error: ") and err.count("\n") == 1 and str(named) in err, err


@pytest.mark.parametrize("suffix", [".npy", ".bin", ".txt"])
def test_cli_decode_of_truncated_and_flipped_ids(
    suffix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    MODEL.save(tmp_path / "model")
    (tmp_path / "text.txt").write_text(SAMPLE * 3, encoding="utf-8")
    ids = tmp_path / f"ids{suffix}"
    status, err = run_main(
        [
            "encode",
            "--tokenizer",
            str(tmp_path / "model"),
            str(tmp_path / "text.txt"),
            "-o",
            str(ids),
            "--progress",
            "none",
        ],
        capsys,
    )
    assert status == 0, err
    data = ids.read_bytes()
    bad = tmp_path / f"bad{suffix}"
    variants = [data[:length] for length in range(len(data))]
    variants += [data[:i] + bytes([(data[i] + 97) % 256]) + data[i + 1 :] for i in range(0, len(data), 3)]
    for variant in variants:
        bad.write_bytes(variant)
        status, err = run_main(
            ["decode", "--tokenizer", str(tmp_path / "model"), str(bad), "-o", str(tmp_path / "out.txt")],
            capsys,
        )
        assert_cli_outcome(status, err, bad)


@pytest.mark.parametrize("target", TARGETS, ids=TARGET_IDS)
def test_cli_encode_with_a_truncated_model(
    target: Tuple[str, str, bool], originals: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "text.txt").write_text(SAMPLE, encoding="utf-8")
    data = originals[target]
    for length in range(0, len(data), max(1, len(data) // 60)):  # the API test takes every length
        directory = corrupted(tmp_path, target, data[:length])
        status, err = run_main(
            [
                "encode",
                "--tokenizer",
                str(directory),
                str(tmp_path / "text.txt"),
                "-o",
                str(tmp_path / "ids.txt"),
                "--progress",
                "none",
            ],
            capsys,
        )
        assert_cli_outcome(status, err, directory)


def test_cli_train_with_a_corrupt_counts_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = counts_file_bytes()
    path = tmp_path / "c.tsv.gz"
    for length in range(len(data)):
        path.write_bytes(data[:length])
        status, err = run_main(
            ["train", "--counts", str(path), "--progress", "none", "-o", str(tmp_path / "m")], capsys
        )
        assert_cli_outcome(status, err, path)


def test_a_merge_of_a_token_no_merge_makes_is_refused_at_load(tmp_path: Path) -> None:
    """merges.txt lost its first line: ``ab`` is made by no merge, so it reads as a special
    token, and the merge ``(ab, c)`` would join a special token into a word."""
    save_valid(tmp_path, "gpt2", keep_pair_record=False)
    lines = (tmp_path / "merges.txt").read_text(encoding="utf-8").split("\n")
    (tmp_path / "merges.txt").write_text("\n".join(lines[:1] + lines[2:]), encoding="utf-8")
    with pytest.raises(
        PureBPEError, match=r"merge 0 \(b'ab', b'c'\) uses b'ab', which only a special token is"
    ):
        purebpe.load(tmp_path)


@pytest.mark.parametrize(
    "format, name, edit, message",
    [
        (
            "purebpe",
            "purebpe.json",
            lambda d: d.update(vocab=[]),
            '"vocab" and "special_tokens" must be JSON objects',
        ),
        (
            "purebpe",
            "purebpe.json",
            lambda d: d.update(special_tokens={"<s>": "259"}),
            "has id '259', not an int",
        ),
        (
            "purebpe",
            "purebpe.json",
            lambda d: d.update(special_tokens={"\ud800": 259}),
            "is not valid Unicode",
        ),
        ("gpt2", "vocab.json", lambda d: d.update({"\ud800": 261}), "is not valid Unicode"),
    ],
)
def test_the_cases_the_issue_lists(
    tmp_path: Path, format: str, name: str, edit: Callable[[Any], None], message: str
) -> None:
    save_valid(tmp_path, format, keep_pair_record=False)
    document = json.loads((tmp_path / name).read_text(encoding="utf-8"))
    edit(document)
    (tmp_path / name).write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(PureBPEError, match=message) as caught:
        purebpe.load(tmp_path)
    assert str(tmp_path / name) in str(caught.value)
