"""Shards of a corpus counted apart add up: ``WordCounts.sum``, ``a + b``, ``count --merge``."""

from __future__ import annotations

import collections
import gzip
import platform
from pathlib import Path
from typing import Callable, Dict, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_cli import run_cli

import purebpe
from purebpe import PureBPEError, WordCounts
from purebpe.corpus import default_corpus
from purebpe.pretokenize import pretokenize


def spec_counts(texts: List[str]) -> Dict[bytes, int]:
    """The words of every text, pre-tokenized apart and counted by ``collections.Counter``."""
    return dict(collections.Counter(w.encode("utf-8") for t in texts for w in pretokenize(t)))


def save_shards(directory: Path, shards: List[List[str]], **options: object) -> List[Path]:
    paths = []
    for i, texts in enumerate(shards):
        path = directory / f"shard-{i:03}.tsv.gz"
        purebpe.count_from_iterator(texts, **options).save(path)  # type: ignore[arg-type]
        paths.append(path)
    return paths


@given(shards=st.lists(st.lists(st.text(max_size=30), max_size=4), min_size=1, max_size=5))
@settings(max_examples=60)
def test_shards_add_up_to_the_counts_of_the_whole(
    tmp_path_factory: pytest.TempPathFactory, shards: List[List[str]]
) -> None:
    shards = [[t.encode("utf-8", "replace").decode("utf-8", "replace") for t in s] for s in shards]
    paths = save_shards(tmp_path_factory.mktemp("s"), shards)
    everything = [t for s in shards for t in s]
    total = WordCounts.sum(paths)
    assert total.words == spec_counts(everything)
    added = WordCounts({})
    for path in paths:
        added = added + WordCounts.load(path)
    assert added.words == total.words


def test_adding_keeps_both_operands_and_the_options() -> None:
    a = WordCounts({b"the": 3, b" cat": 1}, ("<a>", "<b>"), "none")
    b = WordCounts({b"the": 2**70, b" dog": 5}, ("<b>", "<a>"), "none")  # specials in any order
    total = a + b
    assert total.words == {b"the": 2**70 + 3, b" cat": 1, b" dog": 5}
    assert (total.special_tokens, total.pretokenizer) == (("<a>", "<b>"), "none")
    assert a.words == {b"the": 3, b" cat": 1} and b.words == {b"the": 2**70, b" dog": 5}


def test_real_text_counted_in_shards_equals_counted_at_once(tmp_path: Path) -> None:
    texts = default_corpus()[:40]
    specials = ["<|endoftext|>"]
    paths = save_shards(tmp_path, [texts[i : i + 10] for i in range(0, 40, 10)], special_tokens=specials)
    total = WordCounts.sum(paths)
    assert total == purebpe.count_from_iterator(texts, specials)
    assert total.words == spec_counts(texts)  # no special token occurs in these texts


@pytest.mark.parametrize(
    "options, message",
    [
        (
            {"special_tokens": ["<s>"]},
            r"shard-001.tsv.gz: counted with special tokens \['<s>'\], unlike \[\] in .*shard-000",
        ),
        (
            {"pretokenizer": "none"},
            r"shard-001.tsv.gz: counted with pretokenizer 'none', unlike 'gpt2' in .*shard-000",
        ),
    ],
)
def test_shards_counted_differently_are_refused_naming_the_file(
    tmp_path: Path, options: Dict[str, object], message: str
) -> None:
    first = save_shards(tmp_path, [["a b"]])
    (tmp_path / "odd").mkdir()
    second = save_shards(tmp_path / "odd", [[], ["a b"]], **options)[1]
    with pytest.raises(PureBPEError, match=message) as info:
        WordCounts.sum([first[0], second])
    assert "\n" not in str(info.value)
    with pytest.raises(PureBPEError, match="cannot add word counts: the right ones were counted with"):
        WordCounts.load(first[0]) + WordCounts.load(second)


def test_bad_shards_name_the_file(tmp_path: Path) -> None:
    good = save_shards(tmp_path, [default_corpus()[:3]])[0]
    truncated = tmp_path / "truncated.tsv.gz"
    truncated.write_bytes(good.read_bytes()[:-40])
    with pytest.raises(
        PureBPEError, match=r"truncated.tsv.gz: not a purebpe counts file, or a truncated one"
    ):
        WordCounts.sum([good, truncated])
    bad_line = tmp_path / "bad-line.tsv.gz"
    bad_line.write_bytes(gzip.compress(gzip.decompress(good.read_bytes()) + b"12 oops\n"))
    with pytest.raises(PureBPEError, match=r"bad-line.tsv.gz, line \d+: expected 'count<TAB>word'"):
        WordCounts.sum([bad_line])
    with pytest.raises(PureBPEError, match="no counts files"):
        WordCounts.sum([])


def traced_peak(call: Callable[[], object]) -> int:
    """The most memory ``call`` held at once above what was held before it (tracemalloc)."""
    import tracemalloc  # CPython only: PyPy has the module but not its machinery

    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        call()
        return tracemalloc.get_traced_memory()[1] - start
    finally:
        tracemalloc.stop()


@pytest.mark.skipif(
    platform.python_implementation() != "CPython", reason="tracemalloc exists only on CPython"
)
def test_adding_100_shards_holds_the_total_and_one_line_not_the_shards(tmp_path: Path) -> None:
    # Every shard has the same 3000 words, so the total is as big as one shard.
    words = {f"w{i}".encode(): 1 for i in range(3000)}
    shard = tmp_path / "shard.tsv.gz"
    WordCounts(words).save(shard)
    one_shard = traced_peak(lambda: WordCounts.load(shard).words)
    hundred_sum = traced_peak(lambda: WordCounts.sum([shard] * 100))
    assert WordCounts.sum([shard] * 100).words == {w: 100 for w in words}
    # Adding 100 shards costs what loading one costs (measured: 1.04x); holding even one
    # whole shard beside the running total would cost 1.7x, holding them all 100x.
    assert hundred_sum < 1.25 * one_shard, (hundred_sum, one_shard)


def test_cli_merges_shards_in_one_command(tmp_path: Path) -> None:
    for i, text in enumerate(["low lower lowest<|endoftext|>new\n", "newer lower<|endoftext|>x\n"]):
        (tmp_path / f"part{i}.txt").write_text(text * 5, encoding="utf-8")
        counted = run_cli(
            [
                "count",
                f"part{i}.txt",
                "--special-token",
                "<|endoftext|>",
                "-o",
                f"c{i}.tsv.gz",
                "--progress",
                "none",
            ],
            tmp_path,
        )
        assert counted.returncode == 0, counted.stderr
    merged = run_cli(["count", "--merge", "c0.tsv.gz", "c1.tsv.gz", "-o", "all.tsv.gz"], tmp_path)
    assert merged.returncode == 0, merged.stderr
    assert "added 2 counts files" in merged.stdout
    expected = purebpe.count([tmp_path / "part0.txt", tmp_path / "part1.txt"], ["<|endoftext|>"])
    assert WordCounts.load(tmp_path / "all.tsv.gz") == expected


@pytest.mark.parametrize(
    "args, message",
    [
        (["--merge", "c0.tsv.gz", "c1.tsv.gz"], "c1.tsv.gz: counted with pretokenizer 'none', unlike 'gpt2'"),
        (["--merge"], "--merge needs the counts files"),
        (
            ["--merge", "c0.tsv.gz", "--special-token", "<s>"],
            "--special-token, --pretokenizer, --pattern and --processes do not apply",
        ),
        (["--merge", "c0.tsv.gz", "text.txt"], "text.txt: not a purebpe counts file"),
    ],
)
def test_cli_merge_refuses_bad_shards_with_one_line(tmp_path: Path, args: List[str], message: str) -> None:
    (tmp_path / "text.txt").write_text("plain text\n", encoding="utf-8")
    WordCounts({b"a": 1}).save(tmp_path / "c0.tsv.gz")
    WordCounts({b"a": 1}, (), "none").save(tmp_path / "c1.tsv.gz")
    result = run_cli(["count", *args, "-o", "all.tsv.gz"], tmp_path)
    assert result.returncode == 2
    assert result.stderr.startswith("purebpe: error: ") and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "all.tsv.gz").exists()
