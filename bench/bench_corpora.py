"""Corpus layouts: counting throughput per layout against plain text of the same documents,
and end-to-end ``purebpe encode`` against tiktoken's ``encode_ordinary_batch``.

Run from the repository root with CPython (which has pyarrow, zstandard and tiktoken)::

    python -m bench.bench_corpora --corpus /tmp/corpora/linux-100m.txt --pypy /work/pypy-venv/bin/python

The corpus is cut into documents (at ``<|endoftext|>`` where it has them, as the Linux
corpus of ``make-linux-corpus.sh`` does, one per source file; else 8 lines each). They are
written as text joined by ``<|endoftext|>`` (counted with that special token), JSON lines
(plain, gzip, zstd), xz text and Parquet (zstd, row groups of 1 024: nanochat's layout).

* ``counting``: every layout counted with ``purebpe.count(..., processes=--processes)``,
  interleaved, ``--rounds`` times after a first pass (which also checks that every layout
  gives the text's counts); on the compiled build of this CPython (``--compiled``, on by
  default) and on PyPy in a child (no pyarrow there). MB/s are of the
  documents' UTF-8 bytes, so the ratios compare like with like.
* ``encode``: ``python -m purebpe encode`` of the text file to a ``.bin``, end to end
  (start-up, tokenizer load, reading, writing), with ``--processes`` and with 1, under
  each interpreter and the compiled build (GPT-2's tokenizer from the shared corpora);
  tiktoken built offline from
  the same files encodes the same documents, already in memory, with
  ``encode_ordinary_batch(num_threads=--processes)``; and the warm API
  (``Tokenizer.encode`` of the same text, second pass, in a child process every round) on
  each interpreter.
* ``encode_hf``: the same text file as one document with an HF ``tokenizer.json``
  (GPT-2's, converted by ``purebpe convert``), ``--processes`` and 1, against
  ``tokenizers``' ``encode_batch`` of the documents in memory, on all its threads.

Wall and CPU time (user + system of this process and its reaped children) are medians of
``--rounds``. The machine may be shared: compare the ratios of one run.
"""

from __future__ import annotations

import argparse
import gzip
import json
import lzma
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

import purebpe

from ._harness import (
    Script,
    Table,
    child_environment,
    children_cpu_seconds,
    corpora_dir,
    digest,
    interpreter_label,
    interpreter_name,
    measure,
    measure_each,
    run_child,
)

EOT = "<|endoftext|>"
#: The GC nursery of PyPy children, the one the ``purebpe`` command restarts itself with.
NURSERY = {"PYPY_GC_NURSERY": "4MB"}

script = Script("bench_corpora", __doc__, corpora=["en-gcide-18m.txt"], interpreters=True)
script.option("--processes", type=int, default=2, help="workers (and tiktoken's threads)")


def _zstd_level_3(data: bytes) -> Optional[bytes]:
    """``data`` compressed as nanochat's shards are (zstd level 3), by whichever backend
    purebpe's ``zstd`` extra installed; ``None`` without one."""
    try:
        import pyzstd

        return bytes(pyzstd.compress(data, 3))
    except ImportError:
        pass
    try:
        import zstandard

        return bytes(zstandard.ZstdCompressor(level=3).compress(data))
    except ImportError:
        return None


def documents(corpus: Path, lines_per_doc: int = 8) -> List[str]:
    text = corpus.read_text(encoding="utf-8")
    if EOT in text:
        return [doc for doc in text.split(f"\n{EOT}\n") if doc]
    lines = text.splitlines(keepends=True)
    return ["".join(lines[i : i + lines_per_doc]) for i in range(0, len(lines), lines_per_doc)]


def write_layouts(docs: List[str], work: Path) -> Dict[str, Tuple[str, List[str]]]:
    """layout -> (file, special tokens to count it with)."""
    joined = EOT.join(docs).encode("utf-8")
    lines = "".join(json.dumps({"text": d}) + "\n" for d in docs).encode("utf-8")
    out: Dict[str, Tuple[str, List[str]]] = {}
    (work / "docs.txt").write_bytes(joined)
    out["text"] = (str(work / "docs.txt"), [EOT])
    (work / "docs.jsonl").write_bytes(lines)
    out["jsonl"] = (str(work / "docs.jsonl"), [])
    (work / "docs.jsonl.gz").write_bytes(gzip.compress(lines, 6))
    out["jsonl.gz"] = (str(work / "docs.jsonl.gz"), [])
    compressed = _zstd_level_3(lines)
    if compressed is None:
        print("  no zstd compressor here (pyzstd or zstandard): jsonl.zst not measured", file=sys.stderr)
    else:
        (work / "docs.jsonl.zst").write_bytes(compressed)
        out["jsonl.zst"] = (str(work / "docs.jsonl.zst"), [])
    (work / "docs.txt.xz").write_bytes(lzma.compress(joined, preset=1))
    out["txt.xz"] = (str(work / "docs.txt.xz"), [EOT])
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
        out["parquet"] = (str(work / "docs.parquet"), [])
    except ImportError:
        pass
    return out


def count_layouts(layouts: Dict[str, Tuple[str, List[str]]], processes: int, rounds: int) -> Dict[str, Any]:
    """Median wall and CPU seconds of counting each layout this interpreter can read."""
    readable = {}
    reference = None
    for name, (path, specials) in layouts.items():
        try:
            words = purebpe.count(path, specials, processes=processes).words
        except purebpe.PureBPEError as exc:  # no pyarrow or no zstd here
            print(f"(skipping {name}: {exc})", file=sys.stderr)
            continue
        reference = reference or digest(sorted(words.items()))
        if digest(sorted(words.items())) != reference:
            raise AssertionError(f"{name} counts differ from text")
        readable[name] = (path, specials)
    runs = {
        name: (lambda path=path, specials=specials: purebpe.count(path, specials, processes=processes))
        for name, (path, specials) in readable.items()
    }
    timings = measure_each(runs, rounds, cold=False)
    return {name: {"wall": t.median, "cpu": t.median_cpu} for name, t in timings.items()}


def warm_api(model: str, text_path: str) -> Dict[str, float]:
    """CPU seconds of ``Tokenizer.encode`` on the text: the first pass and a warm one."""
    tokenizer = purebpe.load(model).tokenizer()
    text = Path(text_path).read_text(encoding="utf-8")
    timing = measure(lambda: tokenizer.encode(text), 1)
    return {"cold": timing.cold_cpu or 0.0, "warm": timing.median_cpu, "warm_wall": timing.median}


@script.child
def child(spec: Dict[str, Any]) -> Dict[str, Any]:
    if spec["part"] == "count":
        return count_layouts(spec["layouts"], spec["processes"], spec["rounds"])
    return warm_api(spec["model"], spec["text"])


def gpt2_model(work: Path) -> Path:
    model = work / "gpt2"
    model.mkdir(exist_ok=True)
    shutil.copy(corpora_dir() / "gpt2-vocab.json", model / "vocab.json")
    shutil.copy(corpora_dir() / "gpt2-merges.txt", model / "merges.txt")
    return model


def contenders(args: argparse.Namespace) -> List[Tuple[str, str, Optional[Path]]]:
    """(label, interpreter, compiled build or ``None``) of every purebpe that runs: this
    CPython, its compiled build (``--compiled``) and PyPy (``--pypy``)."""
    here = interpreter_label(sys.executable)
    found: List[Tuple[str, str, Optional[Path]]] = [(here, sys.executable, None)]
    if args.compiled:
        found.append((f"{here} compiled", sys.executable, args.compiled))
    if args.pypy:
        found.append((interpreter_label(args.pypy), args.pypy, None))
    return found


def run_cli(python: str, args: List[str], compiled: Optional[Path] = None) -> Tuple[float, float]:
    """Wall and CPU seconds (the child and its workers) of one CLI run (on a compiled build:
    run from its folder, so that ``-m`` finds it before the checkout's sources)."""
    before, start = children_cpu_seconds(), time.perf_counter()
    subprocess.run(
        [python, "-m", "purebpe", *args],
        check=True,
        env=child_environment({"PYTHONPATH": str(compiled)} if compiled else None),
        cwd=compiled,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - start, children_cpu_seconds() - before


def _work(args: argparse.Namespace) -> Tuple[Path, List[str], float]:
    work = Path(tempfile.mkdtemp(prefix="bench-corpora-"))
    docs = documents(args.corpus[0])
    return work, docs, sum(len(d.encode("utf-8")) for d in docs) / 1e6


@script.register
def counting(args: argparse.Namespace) -> Table:
    work, docs, megabytes = _work(args)
    try:
        layouts = write_layouts(docs, work)
        results = {interpreter_name(): count_layouts(layouts, args.processes, args.rounds)}
        spec = {"part": "count", "layouts": layouts, "processes": args.processes, "rounds": args.rounds}
        for where, python, compiled in contenders(args)[1:]:
            report = run_child("bench.bench_corpora", spec, python=python, compiled=compiled)
            results[where] = {k: v for k, v in report.items() if k in layouts}
        rows = []
        for where, figures in results.items():
            base = figures["text"]["wall"]
            for name, t in figures.items():
                rows.append(
                    {
                        "layout / interpreter": f"{name} / {where}",
                        "file MB": round(Path(layouts[name][0]).stat().st_size / 1e6, 1),
                        "wall s": round(t["wall"], 2),
                        "CPU s": round(t["cpu"], 2),
                        "MB/s (wall)": round(megabytes / t["wall"], 1),
                        "vs text (ratio)": round(base / t["wall"], 2),
                    }
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return Table(
        rows,
        suffix="_counting",
        interpreter="all" if len(results) > 1 else None,
        title=f"Counting {megabytes:.0f} MB of {len(docs):,} documents ({args.corpus[0].name}) per layout, "
        f"{args.processes} processes",
        notes=f"median of {args.rounds} interleaved rounds; ratio = text's wall time / the layout's, "
        "same interpreter, same run; counts identical across layouts (checked). Shared machine",
    )


@script.register
def encode(args: argparse.Namespace) -> Table:
    work, docs, megabytes = _work(args)
    try:
        model = gpt2_model(work)
        text = work / "docs.txt"
        text.write_text(f"\n{EOT}\n".join(docs), encoding="utf-8")
        megabytes = text.stat().st_size / 1e6
        base = [
            "encode",
            "--tokenizer",
            str(model),
            str(text),
            "-o",
            str(work / "ids.bin"),
            "--progress",
            "none",
        ]
        runners = contenders(args)
        runs: Dict[str, List[Tuple[float, float]]] = {}
        warm_runs: Dict[str, List[Dict[str, float]]] = {}
        tiktoken_runs: List[Tuple[float, float]] = []
        encoding = _tiktoken_gpt2()
        for _ in range(args.rounds):
            for where, python, compiled in runners:
                for processes in sorted({args.processes, 1}, reverse=True):
                    label = f"purebpe encode CLI, {processes} process{'es' if processes > 1 else ''}"
                    runs.setdefault(f"{label} / {where}", []).append(
                        run_cli(python, base + ["--processes", str(processes)], compiled)
                    )
                # The warm API in every round too, so that its ratios compare runs that
                # met the same load (a shared machine's changes by the minute).
                spec = {"part": "api", "model": str(model), "text": str(text)}
                warm_runs.setdefault(where, []).append(
                    run_child("bench.bench_corpora", spec, python=python, env=NURSERY, compiled=compiled)
                )
            if encoding is not None:
                timing = measure(
                    lambda: encoding.encode_ordinary_batch(docs, num_threads=args.processes), 1, cold=False
                )
                tiktoken_runs.append((timing.walls[0], timing.cpus[0]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    warm = {
        where: {key: statistics.median(r[key] for r in results) for key in ("warm", "warm_wall")}
        for where, results in warm_runs.items()
    }
    peer_label = f"tiktoken encode_ordinary_batch, {args.processes} threads, in memory"
    rows = peer_rows("tiktoken", peer_label, tiktoken_runs, runs, megabytes)
    for row in rows[1 if tiktoken_runs else 0 :]:
        api = warm.get(str(row["run / interpreter"]).rsplit(" / ", 1)[1])
        if api:
            row["vs warm API (wall)"] = round(api["warm_wall"] / row["wall s"], 2)
            row["vs warm API (CPU)"] = round(api["warm"] / row["CPU s"], 2)
    for where, figures in warm.items():
        rows.append(
            {
                "run / interpreter": f"warm API Tokenizer.encode, 1 process / {where}",
                "wall s": round(figures["warm_wall"], 2),
                "CPU s": round(figures["warm"], 2),
                "MB/s (wall)": round(megabytes / figures["warm_wall"], 1),
            }
        )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return Table(
        rows,
        suffix="_encode",
        interpreter="all" if len(runners) > 1 else None,
        title=f"End-to-end encode of {megabytes:.0f} MB ({len(docs):,} documents, GPT-2's tokenizer), "
        f"purebpe CLI vs tiktoken",
        notes=f"median of {args.rounds} rounds, interleaved; CLI: start-up, load, read, encode, "
        "write a .bin (on PyPy the command restarts itself with PYPY_GC_NURSERY=4MB, as a user's "
        "does); CPU s include the workers; warm API: a second Tokenizer.encode pass over the same "
        "text in a child process, every round (PyPy: PYPY_GC_NURSERY=4MB). Ratios are the peer's "
        "seconds over the run's, by wall time (what a user of idle cores would compare; these "
        "cores were shared: see the load) and by CPU time (what a shared machine can compare); "
        f"load average {load:.2f} at the end. Shared machine",
    )


@script.register
def encode_hf(args: argparse.Namespace) -> Table:
    """One long document through an HF ``tokenizer.json`` (GPT-2's files converted by
    ``purebpe convert``: a pipeline that is a plain tokenizer, cut where its pattern
    allows), against ``tokenizers``' ``encode_batch`` of the documents in memory."""
    work, docs, _ = _work(args)
    try:
        text = work / "docs.txt"
        text.write_text(f"\n{EOT}\n".join(docs), encoding="utf-8")
        megabytes = text.stat().st_size / 1e6
        run_cli(sys.executable, ["convert", str(gpt2_model(work)), str(work / "hf"), "--format", "hf"])
        tokenizer_json = work / "hf" / "tokenizer.json"
        base = ["encode", "--tokenizer", str(tokenizer_json), str(text), "-o", str(work / "ids.bin")]
        runners = contenders(args)
        runs: Dict[str, List[Tuple[float, float]]] = {}
        peer_runs: List[Tuple[float, float]] = []
        peer = _hf_tokenizer(tokenizer_json)
        for _ in range(args.rounds):
            for where, python, compiled in runners:
                for processes in sorted({args.processes, 1}, reverse=True):
                    label = f"purebpe encode CLI, {processes} process{'es' if processes > 1 else ''}"
                    runs.setdefault(f"{label} / {where}", []).append(
                        run_cli(
                            python, base + ["--processes", str(processes), "--progress", "none"], compiled
                        )
                    )
            if peer is not None:
                timing = measure(lambda: peer.encode_batch(docs, add_special_tokens=False), 1, cold=False)
                peer_runs.append((timing.walls[0], timing.cpus[0]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = peer_rows(
        "tokenizers", "tokenizers encode_batch, all threads, in memory", peer_runs, runs, megabytes
    )
    return Table(
        rows,
        suffix="_encode_hf",
        interpreter="all" if len(runners) > 1 else None,
        title=f"End-to-end encode of {megabytes:.0f} MB as one text file with an HF tokenizer.json "
        "(GPT-2's, converted), purebpe CLI vs tokenizers",
        notes=f"median of {args.rounds} rounds, interleaved; CLI: start-up, load, read, encode, write "
        "a .bin; the file is one document, which purebpe cuts where GPT-2's pattern allows (the "
        "pipeline is a plain tokenizer: HFTokenizer.as_tokenizer), so it spreads over the "
        "processes; tokenizers encodes the documents (split at <|endoftext|>) already in memory "
        "with encode_batch on all its threads. Ratios are the peer's seconds over the run's. "
        "Shared machine",
    )


def peer_rows(
    peer: str,
    peer_label: str,
    peer_runs: List[Tuple[float, float]],
    runs: Dict[str, List[Tuple[float, float]]],
    megabytes: float,
) -> List[Dict[str, Any]]:
    """The peer's row (if it ran) and each CLI run's, medians of (wall, CPU) seconds, with
    the ratios against the peer."""
    peer_wall = statistics.median(w for w, _ in peer_runs) if peer_runs else None
    peer_cpu = statistics.median(c for _, c in peer_runs) if peer_runs else None
    rows: List[Dict[str, Any]] = []
    if peer_wall is not None and peer_cpu is not None:
        rows.append(
            {
                "run / interpreter": f"{peer_label} / {interpreter_name()}",
                "wall s": peer_wall,
                "CPU s": peer_cpu,
            }
        )
    rows += [
        {
            "run / interpreter": label,
            "wall s": statistics.median(w for w, _ in samples),
            "CPU s": statistics.median(c for _, c in samples),
        }
        for label, samples in runs.items()
    ]
    for row in rows:
        wall, cpu = row["wall s"], row["CPU s"]
        row.update(
            {"wall s": round(wall, 2), "CPU s": round(cpu, 2), "MB/s (wall)": round(megabytes / wall, 1)}
        )
        row[f"vs {peer} (wall)"] = round(peer_wall / wall, 2) if peer_wall else None
        row[f"vs {peer} (CPU)"] = round(peer_cpu / cpu, 2) if peer_cpu else None
    return rows


def _hf_tokenizer(path: Path) -> Any:
    try:
        import tokenizers
    except ImportError:
        return None
    return tokenizers.Tokenizer.from_file(str(path))


def _tiktoken_gpt2() -> Any:
    try:
        from .peer_encoders import gpt2_tiktoken

        return gpt2_tiktoken(corpora_dir() / "gpt2-vocab.json")
    except ImportError:
        return None


if __name__ == "__main__":
    sys.exit(script.main())
