"""Corpus layouts: counting throughput per layout against plain text of the same documents,
and end-to-end ``purebpe encode`` against tiktoken's ``encode_ordinary_batch``.

    python3 bench/bench_corpora.py [--corpus FILE] [--processes 2] [--rounds 3]
    /work/pypy-venv/bin/python bench/bench_corpora.py --part count   # PyPy: no pyarrow, no tiktoken

A plain script (the shared harness, ``bench/_harness.py``, is on the ``bench`` branch and
not merged here yet). The corpus (default: ``en-gcide-18m.txt``, one paragraph per line)
is cut into documents of 8 lines; they are written as text joined by ``<|endoftext|>``
(counted with that special token), JSON lines (plain, gzip, zstd), xz text and Parquet
(zstd, row groups of 1 024: nanochat's layout). Every layout is counted ``--rounds``
times, interleaved, with ``--processes``; MB/s are of the documents' UTF-8 bytes, so the
ratios compare like with like. Wall and CPU time (this process and its reaped workers) are
medians. The machine may be shared: compare the ratios of one run, not absolute figures.

Part ``encode`` times the CLI end to end on the text file (GPT-2's tokenizer, from the
shared corpora) under each interpreter given, with ``--processes``; tiktoken (built
offline from the same files) encodes the same documents with ``encode_ordinary_batch``
and as many threads; and it splits a one-process CLI run into its parts: start-up and
loading the tokenizer (an empty input), the warm API on the same text (second pass in
one process), and writing the ids.
"""

from __future__ import annotations

import argparse
import gzip
import json
import lzma
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import purebpe  # noqa: E402
from purebpe.bytemap import decode_token  # noqa: E402
from purebpe.pretokenize import PATTERNS  # noqa: E402

SHARED = next(
    (p for p in (ROOT.parent / "shared" / "corpora", Path("/work/shared/corpora")) if p.is_dir()), Path(".")
)
EOT = "<|endoftext|>"
PYPY = "/work/pypy-venv/bin/python"


def documents(corpus: Path, lines_per_doc: int = 8) -> List[str]:
    lines = corpus.read_text(encoding="utf-8").splitlines(keepends=True)
    return ["".join(lines[i : i + lines_per_doc]) for i in range(0, len(lines), lines_per_doc)]


def write_layouts(docs: List[str], work: Path) -> Dict[str, Tuple[Path, List[str]]]:
    """layout -> (file, special tokens to count it with)."""
    joined = EOT.join(docs).encode("utf-8")
    lines = "".join(json.dumps({"text": d}) + "\n" for d in docs).encode("utf-8")
    out: Dict[str, Tuple[Path, List[str]]] = {}
    (work / "docs.txt").write_bytes(joined)
    out["text"] = (work / "docs.txt", [EOT])
    (work / "docs.jsonl").write_bytes(lines)
    out["jsonl"] = (work / "docs.jsonl", [])
    (work / "docs.jsonl.gz").write_bytes(gzip.compress(lines, 6))
    out["jsonl.gz"] = (work / "docs.jsonl.gz", [])
    try:
        import zstandard

        (work / "docs.jsonl.zst").write_bytes(zstandard.ZstdCompressor(level=3).compress(lines))
        out["jsonl.zst"] = (work / "docs.jsonl.zst", [])
    except ImportError:
        pass
    (work / "docs.txt.xz").write_bytes(lzma.compress(joined, preset=1))
    out["txt.xz"] = (work / "docs.txt.xz", [EOT])
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq

        pq.write_table(
            pa.table({"text": docs}),
            work / "docs.parquet",
            row_group_size=1024,
            compression="zstd",
            compression_level=3,
        )
        out["parquet"] = (work / "docs.parquet", [])
    except ImportError:
        pass
    return out


def cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(run: Callable[[], Any]) -> Tuple[float, float, Any]:
    wall, cpu = time.perf_counter(), cpu_seconds()
    result = run()
    return time.perf_counter() - wall, cpu_seconds() - cpu, result


def part_count(docs: List[str], work: Path, processes: int, rounds: int) -> None:
    layouts = write_layouts(docs, work)
    megabytes = sum(len(d.encode("utf-8")) for d in docs) / 1e6
    times: Dict[str, List[Tuple[float, float]]] = {name: [] for name in layouts}
    reference = None
    for name, (path, specials) in layouts.items():  # warm-up (JIT, page cache), and a check
        words = purebpe.count(path, specials, processes=processes).words
        reference = reference or words
        assert words == reference, f"{name} counts differ from text"
    for _ in range(rounds):
        for name, (path, specials) in layouts.items():
            wall, cpu, _ = timed(
                lambda path=path, specials=specials: purebpe.count(path, specials, processes=processes)
            )
            times[name].append((wall, cpu))
    base = statistics.median(w for w, _ in times["text"])
    print(
        f"\n## Counting {megabytes:.1f} MB of {len(docs):,} documents, {processes} processes, "
        f"{platform.python_implementation()} {platform.python_version()}, median of {rounds} "
        "(shared machine)\n"
    )
    print("| layout | file MB | wall s | CPU s | MB/s (wall) | vs text |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, samples in times.items():
        wall = statistics.median(w for w, _ in samples)
        cpu = statistics.median(c for _, c in samples)
        size = layouts[name][0].stat().st_size / 1e6
        print(
            f"| {name} | {size:.1f} | {wall:.2f} | {cpu:.2f} | {megabytes / wall:.1f} | {base / wall:.2f}x |"
        )


def gpt2_model(work: Path) -> Path:
    model = work / "gpt2"
    model.mkdir(exist_ok=True)
    shutil.copy(SHARED / "gpt2-vocab.json", model / "vocab.json")
    shutil.copy(SHARED / "gpt2-merges.txt", model / "merges.txt")
    return model


def run_cli(python: str, args: List[str]) -> Tuple[float, float]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [python, "-m", "purebpe", *args],
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def part_encode(docs: List[str], work: Path, processes: int, rounds: int, interpreters: List[str]) -> None:
    model = gpt2_model(work)
    text = work / "docs.txt"
    text.write_text("".join(docs), encoding="utf-8")  # no separators: encode_ordinary's input
    (work / "empty.txt").write_bytes(b"")
    megabytes = text.stat().st_size / 1e6
    encode_args = [
        "encode",
        "--tokenizer",
        str(model),
        str(text),
        "-o",
        str(work / "ids.bin"),
        "--progress",
        "none",
    ]
    results: Dict[str, List[Tuple[float, float]]] = {}
    tiktoken_times: List[Tuple[float, float]] = []
    encoding = None
    try:
        import tiktoken

        mapping = json.loads((SHARED / "gpt2-vocab.json").read_text(encoding="utf-8"))
        ranks = {decode_token(key): tid for key, tid in mapping.items() if key != EOT}
        encoding = tiktoken.Encoding(
            name="gpt2-local", pat_str=PATTERNS["gpt2"], mergeable_ranks=ranks, special_tokens={EOT: 50256}
        )
    except ImportError:
        pass
    for _ in range(rounds):
        for python in interpreters:
            name = Path(python).name if "pypy" not in python else "pypy"
            for label, extra in (
                (f"{name} CLI encode, {processes} processes", ["--processes", str(processes)]),
                (f"{name} CLI encode, 1 process", ["--processes", "1"]),
                (f"{name} CLI start-up + tokenizer load (empty input)", ["--processes", "1"]),
            ):
                args = (
                    encode_args
                    if "empty" not in label
                    else encode_args[:3] + [str(work / "empty.txt")] + encode_args[4:]
                )
                results.setdefault(label, []).append(run_cli(python, args + extra))
        if encoding is not None:
            wall, cpu, _ = timed(lambda: encoding.encode_ordinary_batch(docs, num_threads=processes))
            tiktoken_times.append((wall, cpu))
    # The warm API and the writer, in this process.
    tokenizer = purebpe.load(model).tokenizer()
    body = text.read_text(encoding="utf-8")
    first, _, ids = timed(lambda: tokenizer.encode(body))
    warm, _, ids = timed(lambda: tokenizer.encode(body))
    from array import array

    from purebpe.cli._ids_output import IdsWriter

    def write() -> None:
        with open(work / "w.bin", "wb") as out:
            writer = IdsWriter(out, "bin", "uint16")
            for start in range(0, len(ids), 1 << 16):
                writer.write(array("H", ids[start : start + (1 << 16)]))
            writer.finish()

    writer_s, _, _ = timed(write)
    print(
        f"\n## End-to-end encode of {megabytes:.1f} MB ({len(docs):,} documents, GPT-2), median of "
        f"{rounds} (shared machine)\n"
    )
    print("| run | wall s | CPU s | MB/s (wall) |")
    print("|---|---:|---:|---:|")
    for label, samples in results.items():
        wall = statistics.median(w for w, _ in samples)
        cpu = statistics.median(c for _, c in samples)
        print(f"| {label} | {wall:.2f} | {cpu:.2f} | {megabytes / wall:.1f} |")
    if tiktoken_times:
        wall = statistics.median(w for w, _ in tiktoken_times)
        cpu = statistics.median(c for _, c in tiktoken_times)
        print(
            f"| tiktoken encode_ordinary_batch, {processes} threads (in memory) | {wall:.2f} | "
            f"{cpu:.2f} | {megabytes / wall:.1f} |"
        )
    here = platform.python_implementation()
    print(
        f"| {here} API encode, first pass (cold word cache), 1 process | {first:.2f} | | "
        f"{megabytes / first:.1f} |"
    )
    print(f"| {here} API encode, second pass (warm), 1 process | {warm:.2f} | | {megabytes / warm:.1f} |")
    print(f"| {here} writing the {len(ids):,} ids (.bin) | {writer_s:.2f} | | |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, default=SHARED / "en-gcide-18m.txt")
    parser.add_argument(
        "--megabytes", type=float, default=0, help="use only the first MB of the corpus (0: all)"
    )
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--part", choices=("count", "encode", "both"), default="both")
    parser.add_argument(
        "--interpreters", nargs="*", default=[sys.executable] + ([PYPY] if os.path.exists(PYPY) else [])
    )
    args = parser.parse_args()
    docs = documents(args.corpus)
    if args.megabytes:
        keep, size = [], 0
        for doc in docs:
            keep.append(doc)
            size += len(doc)
            if size >= args.megabytes * 1e6:
                break
        docs = keep
    work = Path(tempfile.mkdtemp(prefix="bench-corpora-"))
    try:
        if args.part in ("count", "both"):
            part_count(docs, work, args.processes, args.rounds)
        if args.part in ("encode", "both"):
            part_encode(docs, work, args.processes, args.rounds, args.interpreters)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
