"""``purebpe encode`` over every layout: in parallel, in order, byte-identical to one
process; document separators; .npy, .bin with its dtype recorded, and .bin shards."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from array import array
from pathlib import Path
from typing import Any, List

import pytest

import purebpe

SEP = "<|endoftext|>"
ENV = dict(os.environ, PYTHONPATH=str(Path(purebpe.__file__).parent.parent))

try:
    import pyarrow as pa
    import pyarrow.parquet as pq
except ImportError:
    pq = None


def cli(args: List[str], cwd: Path, **kwargs: Any) -> "subprocess.CompletedProcess[str]":
    return subprocess.run(
        [sys.executable, "-m", "purebpe", *args],
        cwd=cwd,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
        **kwargs,
    )


@pytest.fixture(scope="module")
def setup(tmp_path_factory: Any) -> Path:
    tmp = tmp_path_factory.mktemp("enc")
    docs = [
        f"Document {i}: the quick brown fox {'jumps ' * (i % 7)}over {i} lazy dogs.\n" for i in range(3000)
    ]
    (tmp / "joined.txt").write_text(SEP.join(docs), encoding="utf-8")
    lines = "".join(json.dumps({"text": d}) + "\n" for d in docs).encode("utf-8")
    (tmp / "docs.jsonl").write_bytes(lines)
    (tmp / "docs.jsonl.gz").write_bytes(gzip.compress(lines))
    if pq is not None:
        pq.write_table(
            pa.table({"text": docs}), tmp / "docs.parquet", row_group_size=1024, compression="zstd"
        )
    purebpe.train(tmp / "joined.txt", 400, [SEP], processes=1).save(tmp / "tok")
    return tmp


def ids_of(path: Path, typecode: str = "H") -> List[int]:
    values = array(typecode)
    values.frombytes(path.read_bytes())
    return values.tolist()


@pytest.mark.parametrize("layout", ["docs.jsonl", "docs.jsonl.gz", "docs.parquet"])
def test_every_layout_encodes_as_the_joined_text_in_any_number_of_processes(setup: Path, layout: str) -> None:
    if layout.endswith("parquet") and pq is None:
        pytest.skip("pyarrow is not installed (PyPy): the Parquet error path is tested in test_corpora")
    tokenizer = purebpe.load(setup / "tok").tokenizer()
    expected = tokenizer.encode((setup / "joined.txt").read_text(encoding="utf-8")) + [
        tokenizer.encode_single_token(SEP)
    ]
    outputs = []
    for processes in ("1", "2", "3"):
        out = setup / f"{layout}.{processes}.bin"
        result = cli(
            [
                "encode",
                "--tokenizer",
                "tok",
                layout,
                "-o",
                out.name,
                "--doc-separator",
                SEP,
                "--processes",
                processes,
                "--progress",
                "none",
            ],
            setup,
        )
        assert result.returncode == 0, result.stderr
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1] == outputs[2]
    assert ids_of(setup / f"{layout}.1.bin") == expected


def test_text_in_parallel_is_byte_identical(setup: Path) -> None:
    big = setup / "big.txt"
    big.write_text((setup / "joined.txt").read_text(encoding="utf-8") * 3, encoding="utf-8")
    one = cli(
        [
            "encode",
            "--tokenizer",
            "tok",
            "big.txt",
            "-o",
            "one.npy",
            "--processes",
            "1",
            "--progress",
            "none",
        ],
        setup,
    )
    two = cli(
        [
            "encode",
            "--tokenizer",
            "tok",
            "big.txt",
            "-o",
            "two.npy",
            "--processes",
            "2",
            "--progress",
            "none",
        ],
        setup,
    )
    assert one.returncode == two.returncode == 0, one.stderr + two.stderr
    assert (setup / "one.npy").read_bytes() == (setup / "two.npy").read_bytes()
    numpy = pytest.importorskip("numpy")
    tokenizer = purebpe.load(setup / "tok").tokenizer()
    assert numpy.load(setup / "two.npy").tolist() == tokenizer.encode(big.read_text(encoding="utf-8"))


def test_shards_hold_the_ids_in_order(setup: Path) -> None:
    whole = cli(
        [
            "encode",
            "--tokenizer",
            "tok",
            "docs.jsonl",
            "-o",
            "whole.bin",
            "--doc-separator",
            SEP,
            "--progress",
            "none",
        ],
        setup,
    )
    assert whole.returncode == 0, whole.stderr
    result = cli(
        [
            "encode",
            "--tokenizer",
            "tok",
            "docs.jsonl",
            "-o",
            "shards",
            "--shard-tokens",
            "10000",
            "--doc-separator",
            SEP,
            "--processes",
            "2",
            "--progress",
            "none",
        ],
        setup,
    )
    assert result.returncode == 0, result.stderr
    names = sorted(os.listdir(setup / "shards"))
    bins = [n for n in names if n.endswith(".bin")]
    assert bins[0] == "shard_000000.bin" and all(n + ".json" in names for n in bins)
    assert all(len(ids_of(setup / "shards" / n)) == 10000 for n in bins[:-1])
    assert b"".join((setup / "shards" / n).read_bytes() for n in bins) == (setup / "whole.bin").read_bytes()
    again = cli(
        [
            "encode",
            "--tokenizer",
            "tok",
            "docs.jsonl",
            "-o",
            "shards",
            "--shard-tokens",
            "10000",
            "--progress",
            "none",
        ],
        setup,
    )
    assert again.returncode == 2 and "shards go into a new or empty directory" in again.stderr


def test_a_raw_bin_is_never_decoded_with_the_wrong_width(setup: Path) -> None:
    result = cli(
        [
            "encode",
            "--tokenizer",
            "tok",
            "joined.txt",
            "-o",
            "w.bin",
            "--dtype",
            "uint32",
            "--progress",
            "none",
        ],
        setup,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads((setup / "w.bin.json").read_text())["dtype"] == "uint32"
    decoded = cli(["decode", "--tokenizer", "tok", "w.bin"], setup)
    assert decoded.returncode == 0 and decoded.stdout == (setup / "joined.txt").read_text(encoding="utf-8")
    wrong = cli(["decode", "--tokenizer", "tok", "w.bin", "--dtype", "uint16"], setup)
    assert wrong.returncode == 2 and "its sidecar records uint32, not --dtype uint16" in wrong.stderr
    (setup / "raw.bin").write_bytes((setup / "w.bin").read_bytes())
    raw = cli(["decode", "--tokenizer", "tok", "raw.bin"], setup)
    assert raw.returncode == 2 and "raw ids of unknown width" in raw.stderr and raw.stdout == ""
    given = cli(["decode", "--tokenizer", "tok", "raw.bin", "--dtype", "uint32"], setup)
    assert given.returncode == 0 and given.stdout == decoded.stdout


def test_a_failed_encode_writes_nothing(setup: Path) -> None:
    bad = setup / "bad.jsonl"
    bad.write_text(
        "".join(json.dumps({"text": f"doc {i}"}) + "\n" for i in range(50000)) + "{oops\n", encoding="utf-8"
    )
    for args in (["-o", "bad.bin"], ["-o", "badshards", "--shard-tokens", "1000"]):
        result = cli(
            ["encode", "--tokenizer", "tok", "bad.jsonl", *args, "--processes", "2", "--progress", "none"],
            setup,
        )
        assert result.returncode == 2
        line = result.stderr.strip()
        assert (
            line.startswith("purebpe: error: bad.jsonl, line 50001: not JSON (")
            and len(line.splitlines()) == 1
        )
    assert not (setup / "bad.bin").exists() and not (setup / "badshards").exists()
    assert not [n for n in os.listdir(setup) if n.startswith(".")]
    skipped = cli(
        [
            "encode",
            "--tokenizer",
            "tok",
            "bad.jsonl",
            "-o",
            "skip.bin",
            "--errors",
            "skip",
            "--progress",
            "none",
        ],
        setup,
    )
    assert skipped.returncode == 0 and "(skipped 1 bad record)" in skipped.stderr


def test_stdin_and_a_fifo_encode_with_two_processes(setup: Path) -> None:
    expected = cli(["encode", "--tokenizer", "tok", "docs.jsonl.gz", "--progress", "none"], setup).stdout
    with open(setup / "docs.jsonl.gz", "rb") as stdin:
        piped = cli(
            [
                "encode",
                "--tokenizer",
                "tok",
                "--input-format",
                "jsonl",
                "--processes",
                "2",
                "--progress",
                "none",
            ],
            setup,
            stdin=stdin,
        )
    assert piped.returncode == 0, piped.stderr
    assert piped.stdout == expected and expected.strip()


def test_many_jobs_in_workers_give_the_ids_of_one_process(setup: Path, monkeypatch: Any) -> None:
    # Small pieces and jobs, so that these small files make many jobs for the workers
    # (the first one encoded by this process, the rest in forked workers).
    from purebpe import corpus_encoding
    from purebpe.corpus_encoding import corpus_texts, encode_corpus
    from purebpe.pretokenize.chunking import ChunkCutter
    from purebpe.readers import read_options, sources

    monkeypatch.setattr(corpus_encoding, "PIECE_BYTES", 2048)
    monkeypatch.setattr(corpus_encoding, "FIRST_JOB_CHARS", 4096)
    monkeypatch.setattr(corpus_encoding, "JOB_CHARS", 8192)
    tokenizer = purebpe.load(setup / "tok").tokenizer()
    separator = tokenizer.encode_single_token(SEP)
    expected = tokenizer.encode((setup / "joined.txt").read_text(encoding="utf-8")) + [separator]
    cutter = ChunkCutter([SEP], tokenizer.pretokenizer, reserve=len(SEP))
    for name in ("joined.txt", "docs.jsonl"):
        for processes in (1, 2, 3):
            texts = corpus_texts(sources([str(setup / name)]), read_options(), cutter, [0])
            arrays = list(encode_corpus(tokenizer, texts, separator=separator, processes=processes))
            assert len(arrays) > 10
            # The text file holds the separator between documents; the JSON lines records
            # are separated by --doc-separator: the same ids.
            assert [i for a in arrays for i in a] == expected, (name, processes)
    # Bad UTF-8 met by a worker (pieces are decoded there) is named by its file and offset.
    bad = setup / "bad-late.txt"
    good = (setup / "joined.txt").read_bytes()
    bad.write_bytes(good + b"\xff tail")
    texts = corpus_texts(sources([str(bad)]), read_options(), cutter, [0])
    with pytest.raises(purebpe.InputError, match=f"bad-late.txt.*offset {len(good)}"):
        list(encode_corpus(tokenizer, texts, processes=2))


def test_a_text_file_rewritten_before_a_worker_reads_a_piece_fails(setup: Path, tmp_path: Path) -> None:
    # Workers are sent a text file's pieces as where they are, and read them themselves: a
    # file rewritten since this process cut it is refused in one line, never encoded as a
    # mix of two versions.
    from purebpe.corpus_encoding import corpus_texts
    from purebpe.pretokenize.chunking import ChunkCutter
    from purebpe.readers import FileText, read_options, shipped, sources

    path = tmp_path / "changing.txt"
    path.write_text("some words to encode\n" * 2000, encoding="utf-8")
    cutter = ChunkCutter([], purebpe.load(setup / "tok").tokenizer().pretokenizer)
    items = list(corpus_texts(sources([str(path)]), read_options(), cutter, [0]))
    pieces = [shipped(piece) for piece, _ in items]
    files = [piece for piece in pieces if isinstance(piece, FileText)]
    assert len(files) == len(items) > 1
    assert "".join(piece.text() for piece in files) == path.read_text(encoding="utf-8")
    with open(path, "r+b") as f:
        f.write(b"SOME")
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
    with pytest.raises(purebpe.InputError, match="changing.txt: the file was rewritten while it was read"):
        files[-1].text()
