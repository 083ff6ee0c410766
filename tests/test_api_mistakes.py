"""Mistakes a caller makes (issue 24, "Weaker"): a type mistake is a TypeError with one clear
sentence, a value mistake a PureBPEError; the command line refuses adding one counts file
twice and summarises long lists of inputs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import purebpe
from purebpe import BPEModel
from purebpe.cli._common import describe_files
from purebpe.errors import PureBPEError

TOKENIZER = BPEModel.from_merges([(b"h", b"i")]).tokenizer()

TYPE_MISTAKES: Dict[str, Callable[[], Any]] = {
    "train on one str": lambda: purebpe.train_from_iterator("hello", 270),
    "count one str": lambda: purebpe.count_from_iterator("hello"),
    "encode_batch one str": lambda: TOKENIZER.encode_batch("hello"),
    "decode bytes": lambda: TOKENIZER.decode(b"hi"),
    "decode_bytes str": lambda: TOKENIZER.decode_bytes("hi"),  # type: ignore[arg-type]
    "processes str": lambda: purebpe.train_from_iterator(["x y"], 270, processes="2"),  # type: ignore[arg-type]
    "processes float": lambda: purebpe.count_from_iterator(["x y"], processes=2.5),  # type: ignore[arg-type]
    "min_frequency float": lambda: purebpe.train_from_iterator(["x y"], 270, min_frequency=1.5),  # type: ignore[arg-type]
    "max_token_length str": lambda: purebpe.train_from_iterator(["x y"], 270, max_token_length="4"),  # type: ignore[arg-type]
    "initial dict": lambda: purebpe.train_from_iterator(["x y"], 270, initial={}),  # type: ignore[arg-type]
    "initial tokenizer": lambda: purebpe.train_from_iterator(["x y"], 270, initial=TOKENIZER),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("mistake", list(TYPE_MISTAKES))
def test_a_type_mistake_is_a_typeerror_in_one_sentence(mistake: str) -> None:
    with pytest.raises(TypeError) as caught:
        TYPE_MISTAKES[mistake]()
    message = str(caught.value)
    assert "\n" not in message and len(message) < 200 and " must be " in message, message
    assert not isinstance(caught.value, PureBPEError)


@pytest.mark.parametrize("value", [0, -1])
def test_a_value_mistake_is_a_purebpe_error(value: int) -> None:
    with pytest.raises(PureBPEError, match="processes must be at least 1"):
        purebpe.count_from_iterator(["x"], processes=value)
    with pytest.raises(PureBPEError, match="min_frequency must be at least 1"):
        purebpe.train_from_iterator(["x"], 270, min_frequency=value)


@settings(max_examples=40)
@given(st.one_of(st.text(max_size=5), st.binary(max_size=5), st.floats(allow_nan=False), st.booleans()))
def test_no_scalar_is_taken_for_a_count_of_processes(value: Any) -> None:
    with pytest.raises(TypeError, match="processes must be an int"):
        purebpe.count_from_iterator(["x"], processes=value)


# --------------------------------------------------------------------------------------
# The command line: one counts file twice; many input files
# --------------------------------------------------------------------------------------
def cli(args: List[str], cwd: Path) -> "subprocess.CompletedProcess[str]":
    env = dict(os.environ, PYTHONPATH=str(Path(purebpe.__file__).parent.parent))
    return subprocess.run(
        [sys.executable, "-m", "purebpe", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_merging_one_counts_file_twice_is_refused(tmp_path: Path) -> None:
    purebpe.count_from_iterator(["some text"]).save(tmp_path / "a.gz")
    os.link(tmp_path / "a.gz", tmp_path / "hard-link.gz")
    for twice in (["a.gz", "a.gz"], ["a.gz", "./a.gz"], ["a.gz", "hard-link.gz"]):
        result = cli(["count", "--merge", *twice, "-o", "sum.gz"], tmp_path)
        assert result.returncode == 2
        assert "given twice" in result.stderr and "would be added twice" in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "sum.gz").exists()


def test_a_summary_of_two_thousand_inputs_is_one_short_line(tmp_path: Path) -> None:
    names = [f"shard-{i:04d}.txt" for i in range(2000)]
    summary = describe_files(names)
    assert summary == "shard-0000.txt, shard-0001.txt, shard-0002.txt and 1,997 more files (2,000 in all)"
    assert describe_files(names[:4]) == ", ".join(names[:4])
    for name in names[:9]:  # through the command line, a few are enough
        (tmp_path / name).write_text("a few words\n")
    result = cli(["count", *names[:9], "--progress", "none", "-o", "c.gz"], tmp_path)
    assert result.returncode == 0, result.stderr[-500:]
    (line,) = result.stdout.strip().splitlines()
    assert line.startswith(
        "counted shard-0000.txt, shard-0001.txt, shard-0002.txt and 6 more files (9 in all): 36 words"
    )


def test_encode_help_says_what_a_custom_pattern_holds() -> None:
    result = cli(["encode", "--help"], Path.cwd())
    assert "whatever the corpus size, except with a custom-pattern tokenizer" in " ".join(
        result.stdout.split()
    )
