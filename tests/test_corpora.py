"""Every corpus layout counts as its joined text: JSON lines, Parquet, compressed files,
directories, globs and streams, with 1 and 2 processes; bad input fails in one line."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Callable, Dict, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import purebpe
from purebpe.counting import count
from purebpe.errors import InputError, PureBPEError

SEP = "<|doc|>"

try:
    import pyarrow as pa
    import pyarrow.parquet as pq
except ImportError:  # PyPy: the one-line error is tested instead
    pa = pq = None
try:
    import zstandard
except ImportError:
    zstandard = None

needs_pyarrow = pytest.mark.skipif(
    pq is None, reason="pyarrow is not installed (PyPy): see test_parquet_without_pyarrow"
)
needs_zstd = pytest.mark.skipif(zstandard is None, reason="zstandard is not installed")


def write_layout(path: Path, docs: List[str], layout: str) -> Path:
    """Write ``docs`` to ``path`` (suffix added) in one layout; returns the file."""
    lines = "".join(json.dumps({"text": d}) + "\n" for d in docs).encode("utf-8")
    if layout == "jsonl":
        target = path.with_suffix(".jsonl")
        target.write_bytes(lines)
    elif layout == "jsonl.gz":
        target = path.with_suffix(".jsonl.gz")
        target.write_bytes(gzip.compress(lines))
    elif layout == "jsonl.zst":
        target = path.with_suffix(".jsonl.zst")
        target.write_bytes(zstandard.ZstdCompressor(level=3).compress(lines))
    elif layout == "jsonl.bz2":
        target = path.with_suffix(".jsonl.bz2")
        target.write_bytes(bz2.compress(lines))
    elif layout == "txt.xz":
        target = path.with_suffix(".txt.xz")
        target.write_bytes(lzma.compress(SEP.join(docs).encode("utf-8")))
    elif layout.startswith("parquet"):
        target = path.with_suffix(".parquet")
        compression = layout.split("-")[1] if "-" in layout else "zstd"
        pq.write_table(pa.table({"text": docs}), target, row_group_size=1024, compression=compression)
    else:
        raise AssertionError(layout)
    return target


def joined_counts(tmp_path: Path, docs: List[str], processes: int = 1) -> Dict[bytes, int]:
    text = tmp_path / "joined.txt"
    text.write_bytes(SEP.join(docs).encode("utf-8"))
    return count(text, [SEP], processes=processes).words


LAYOUTS = [
    "jsonl",
    "jsonl.gz",
    "jsonl.bz2",
    pytest.param("jsonl.zst", marks=needs_zstd),
    pytest.param("parquet-zstd", marks=needs_pyarrow),
    pytest.param("parquet-snappy", marks=needs_pyarrow),
]


def sample_docs(n: int = 2500) -> List[str]:
    return [f"Doc {i}: héllo world,\n  it's {i * 7} o'clock {'x' * (i % 13)}" for i in range(n)]


@pytest.mark.parametrize("processes", [1, 2])
@pytest.mark.parametrize("layout", LAYOUTS)
def test_each_layout_counts_as_the_joined_text(tmp_path: Path, layout: str, processes: int) -> None:
    docs = sample_docs()
    path = write_layout(tmp_path / "corpus", docs, layout)
    assert count(path, processes=processes).words == joined_counts(tmp_path, docs)


@needs_pyarrow
def test_parquet_is_read_one_row_group_per_job(tmp_path: Path) -> None:
    """nanochat's layout: row groups of 1 024 documents; 2 500 documents give 3 groups."""
    docs = sample_docs()
    path = write_layout(tmp_path / "shard", docs, "parquet-zstd")
    assert pq.ParquetFile(path).metadata.num_row_groups == 3
    assert count(path, processes=2, chunk_bytes=1 << 16).words == joined_counts(tmp_path, docs)


def test_text_xz_and_a_directory_of_mixed_shards(tmp_path: Path) -> None:
    docs = sample_docs(600)
    shards = tmp_path / "shards"
    (shards / "sub").mkdir(parents=True)
    write_layout(shards / "a", docs[:200], "txt.xz")
    write_layout(shards / "sub" / "b", docs[200:400], "jsonl.gz")
    write_layout(shards / "c", docs[400:], "jsonl")
    (shards / ".hidden.txt").write_text("never counted", encoding="utf-8")
    expected = joined_counts(tmp_path, docs)
    for processes in (1, 2):
        got = count(shards, [SEP], processes=processes).words
        assert got == expected
    # A glob picks the same files.
    assert count([str(shards / "*.*"), str(shards / "sub" / "*")], [SEP], processes=2).words == expected


def test_nested_text_key(tmp_path: Path) -> None:
    path = tmp_path / "nested.jsonl"
    path.write_text('{"meta": {"body": "hello there"}}\n\n{"meta": {"body": "hello"}}\n', encoding="utf-8")
    assert count(path, text_key="meta.body").words == {b"hello": 2, b" there": 1}


docs_strategy = st.lists(
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="<"), max_size=40),
    min_size=1,
    max_size=25,
)


@settings(max_examples=25)
@given(docs=docs_strategy, processes=st.sampled_from([1, 2]))
def test_random_documents_count_the_same_in_every_layout(
    tmp_path_factory: Any, docs: List[str], processes: int
) -> None:
    tmp = tmp_path_factory.mktemp("h")
    expected = joined_counts(tmp, docs)
    layouts = (
        ["jsonl", "jsonl.gz", "txt.xz"]
        + (["jsonl.zst"] if zstandard else [])
        + (["parquet-zstd"] if pq else [])
    )
    for layout in layouts:
        path = write_layout(tmp / "c", docs, layout)
        specials = [SEP] if layout.startswith("txt") else []
        got = count(path, specials, processes=processes, chunk_bytes=1 << 16).words
        assert got == expected, layout


@given(docs=docs_strategy, cap=st.integers(1, 30), limit=st.integers(1, 300))
@settings(max_examples=25)
def test_caps_are_the_same_as_capping_by_hand(
    tmp_path_factory: Any, docs: List[str], cap: int, limit: int
) -> None:
    tmp = tmp_path_factory.mktemp("caps")
    capped, total = [], 0
    for doc in docs:
        doc = doc[:cap][: limit - total]
        capped.append(doc)
        total += len(doc)
        if total >= limit:
            break
    expected = joined_counts(tmp, capped)
    path = write_layout(tmp / "c", docs, "jsonl")
    for processes in (1, 2):
        assert count(path, processes=processes, doc_cap=cap, max_chars=limit).words == expected


# --- bad input: one line naming the file and the line, record or row group ---------------


def test_errors_name_file_and_line_and_skip_counts(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"text": "fine"}\nnot json\n{"body": "x"}\n{"text": 3}\n{"text": "ok"}\n', encoding="utf-8"
    )
    for processes in (1, 2):
        with pytest.raises(InputError, match=r"bad.jsonl, line 2: not JSON"):
            count(path, processes=processes)
    counts = count(path, errors="skip")
    assert counts.words == {b"fine": 1, b"ok": 1} and counts.skipped == 3
    missing = tmp_path / "m.jsonl"
    missing.write_text('{"text": "a"}\n{"body": "x"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"m.jsonl, line 2: the record has no key 'text'"):
        count(missing)
    wrong = tmp_path / "w.jsonl"
    wrong.write_text('{"text": "a"}\n{"text": ["x"]}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"w.jsonl, line 2: 'text' holds list, not a string"):
        count(wrong)


def test_line_numbers_are_right_in_a_later_range(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    lines = [json.dumps({"text": f"document number {i} " * 20}) for i in range(20000)]
    lines[15000] = "{broken"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"big.jsonl, line 15001: not JSON"):
        count(path, processes=2)


@pytest.mark.parametrize(
    "suffix, compress",
    [
        (".jsonl.gz", gzip.compress),
        pytest.param(".jsonl.zst", lambda b: zstandard.ZstdCompressor().compress(b), marks=needs_zstd),
        (".txt.xz", lzma.compress),
    ],
)
def test_truncated_streams_fail_in_one_line(
    tmp_path: Path, suffix: str, compress: Callable[[bytes], bytes]
) -> None:
    data = compress(("".join(json.dumps({"text": f"doc {i}"}) + "\n" for i in range(5000))).encode())
    path = tmp_path / ("t" + suffix)
    path.write_bytes(data[: len(data) // 2])
    for processes in (1, 2):
        with pytest.raises(InputError, match=r"t\.(jsonl|txt)\.\w+: the \w+ stream is truncated or corrupt"):
            count(path, processes=processes)
    assert count(path, errors="skip").skipped == 1


def test_a_file_that_is_not_what_its_suffix_says(tmp_path: Path) -> None:
    fake = tmp_path / "fake.jsonl.gz"
    fake.write_text('{"text": "plain"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"fake.jsonl.gz: named .gz but is not gzip-compressed"):
        count(fake)
    not_parquet = tmp_path / "x.parquet"
    not_parquet.write_text("hello", encoding="utf-8")
    with pytest.raises(InputError, match=r"x.parquet: not a Parquet file"):
        count(not_parquet)
    # A compressed file named as plain is read by its magic bytes.
    quiet = tmp_path / "quiet.jsonl"
    quiet.write_bytes(gzip.compress(b'{"text": "hello"}\n'))
    assert count(quiet).words == {b"hello": 1}


@needs_pyarrow
def test_parquet_bad_column(tmp_path: Path) -> None:
    path = tmp_path / "p.parquet"
    pq.write_table(pa.table({"body": ["a"], "n": [1]}), path)
    with pytest.raises(InputError, match=r"p.parquet: no column 'text'"):
        count(path)
    with pytest.raises(InputError, match=r"p.parquet: column 'n' holds int64, not strings"):
        count(path, column="n")
    nulls = tmp_path / "nulls.parquet"
    pq.write_table(pa.table({"text": ["a", None] * 700}), nulls, row_group_size=1024)
    with pytest.raises(InputError, match=r"nulls.parquet: row group 0, row 1: 'text' is null"):
        count(nulls, processes=2)
    assert count(nulls, errors="skip").skipped == 700


def test_parquet_without_pyarrow(tmp_path: Path) -> None:
    """Under PyPy pyarrow cannot be installed: the error says how to go on."""
    path = tmp_path / "shard.parquet"
    path.write_bytes(b"PAR1" + b"\0" * 20 + b"PAR1")
    script = (
        "import sys; sys.modules['pyarrow'] = None; sys.modules['pyarrow.parquet'] = None\n"
        "from purebpe.cli import main; sys.exit(main(['count', sys.argv[1], '-o', 'c.tsv.gz', "
        "'--progress', 'none']))"
    )
    env = dict(os.environ, PYTHONPATH=str(Path(purebpe.__file__).parent.parent))
    result = subprocess.run(
        [sys.executable, "-c", script, str(path)], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert result.returncode == 2
    line = result.stderr.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in line
    assert "shard.parquet: reading Parquet needs pyarrow (pip install 'purebpe[parquet]')" in line
    assert (
        "purebpe count shards/*.parquet -o counts.tsv.gz" in line
        and "purebpe train --counts counts.tsv.gz" in line
    )
    assert not (tmp_path / "c.tsv.gz").exists()


def test_zstd_without_a_backend(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl.zst"
    path.write_bytes(b"\x28\xb5\x2f\xfd" + b"\0" * 20)
    script = (
        "import sys\n"
        "for m in ('compression', 'compression.zstd', 'pyzstd', 'zstandard'): sys.modules[m] = None\n"
        "from purebpe.cli import main; sys.exit(main(['count', sys.argv[1], '-o', 'c.tsv.gz', "
        "'--progress', 'none']))"
    )
    env = dict(os.environ, PYTHONPATH=str(Path(purebpe.__file__).parent.parent))
    result = subprocess.run(
        [sys.executable, "-c", script, str(path)], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert result.returncode == 2, result.stderr
    assert (
        "d.jsonl.zst: is zstd-compressed and no zstd module is installed; pip install 'purebpe[zstd]'"
        in result.stderr
    )
    assert len(result.stderr.strip().splitlines()) == 1


def test_inputs_that_do_not_exist(tmp_path: Path) -> None:
    with pytest.raises(PureBPEError, match="nothing-\\*.txt: no file matches"):
        count(str(tmp_path / "nothing-*.txt"))
    with pytest.raises(PureBPEError, match="format must be one of"):
        count(str(tmp_path), format="csv")


def test_an_executor_without_shared_files_gets_the_text(tmp_path: Path) -> None:
    docs = sample_docs(800)
    path = write_layout(tmp_path / "c", docs, "jsonl.gz")
    with ProcessPoolExecutor(2) as executor:
        assert count(path, executor=executor, processes=2).words == joined_counts(tmp_path, docs)


def test_train_api_reads_layouts_and_checks_its_new_options(tmp_path: Path) -> None:
    docs = sample_docs(800)
    shards = tmp_path / "shards"
    shards.mkdir()
    write_layout(shards / "a", docs[:400], "jsonl")
    write_layout(shards / "b", docs[400:], "jsonl.gz")
    joined = tmp_path / "joined.txt"
    joined.write_text(SEP.join(docs), encoding="utf-8")
    expected = purebpe.train(joined, 300, [SEP], processes=1)
    model = purebpe.train(shards, 300 - 1, format="jsonl", processes=2)
    assert model.merges == expected.merges
    with pytest.raises(TypeError, match="processes must be an int"):
        count(joined, processes="2")  # type: ignore[arg-type]
    with pytest.raises(PureBPEError, match="doc_cap must be at least 1"):
        count(joined, doc_cap=0)
    with pytest.raises(PureBPEError, match="errors must be one of strict, replace, skip"):
        count(joined, errors="ignore")
