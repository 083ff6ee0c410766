#!/usr/bin/env python3
"""The positional trainer on text without spaces: HF ``tokenizers``, scaling, one 20 MB line.

    python3 bench/bench_positional.py --pypy /tmp/pypyenv/bin/python            # everything
    python3 bench/bench_positional.py --pypy /tmp/pypyenv/bin/python --parts peer --repeat 3
    python3 bench/bench_positional.py --pypy /tmp/pypyenv/bin/python --tracemalloc  # + CPython

Every measurement runs in a fresh subprocess (the script re-invokes itself with
``--child``), so peak RSS is that run's own; repeated rounds are interleaved so that a noisy
machine slows every contender alike, and the median is reported. Parts:

``peer``
    ``../shared/corpora/zh-fortunes.txt`` (2 MB of Chinese, no spaces; one line = one
    sequence), vocab 5 000, ``pretokenizer="none"``, against HF ``tokenizers``
    ``BpeTrainer`` with *no* pre-tokenizer: ``Tokenizer(models.BPE())`` and
    ``BpeTrainer(vocab_size=5000, initial_alphabet=ByteLevel.alphabet(), special_tokens=[])``.
    HF's ByteLevel pre-tokenizer would split on spaces (the GPT-2 pattern) and its BPE
    model works on characters, so each line (with its ``\\n``, exactly purebpe's words) is
    fed as its UTF-8 bytes mapped through GPT-2's byte-to-unicode alphabet
    (:func:`purebpe.bytemap.encode_token`): HF then sees one word per line made of byte-level
    units, the same units and words purebpe counts. Its merges agree with purebpe's up to
    the first tie that the two break differently (the table says how far). HF runs with
    ``RAYON_NUM_THREADS=1`` (set before ``tokenizers`` is imported) and with all threads.
    Times: ``count`` is reading and counting (HF: reading and mapping the lines), ``merge``
    the training proper, ``total`` both; ``ratio`` is total / HF single-threaded total.
``memory``
    What the trainer's own structures cost, against the corpus's bytes (target: 3x): on
    PyPy the growth of RSS during ``train_from_counts`` (sampled every 2 ms), with the GC
    nursery pinned to 4 MB (``PYPY_GC_NURSERY=4MB``; PyPy sizes it from the CPU's cache,
    which on a server with a 260 MB L3 gives a 130 MB nursery that RSS would be made of);
    on CPython (``--tracemalloc``, slow: about 50x) the ``tracemalloc`` peak of
    ``train_from_counts``. PyPy's figure includes the JIT's code and data (the first
    training in a process compiles it; the table gives a second, warm training too) and
    garbage awaiting the next major collection; freed memory is handed back to the OS
    (``malloc_trim``) before the baseline is taken, so that training cannot hide in memory
    the counting phase freed.
``scaling``
    1x, 2x, 4x, 8x the Chinese corpus (copy ``k`` rotates every line by ``7 k``
    characters, so the lines stay distinct and the characters' statistics stay the same),
    vocab 5 000, on the first interpreter given: time and memory should grow linearly.
``long-line``
    one 20 MB line without any special token (``en-gcide-18m.txt`` and ``zh-fortunes.txt``
    with their newlines turned into spaces), trained with ``purebpe.train(...,
    pretokenizer="none", progress=True)``: counting keeps the line whole, training fits in
    memory, and the tqdm bar moves (the number of distinct bar frames is reported).
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED = ROOT.parent / "shared" / "corpora"
ZH = SHARED / "zh-fortunes.txt"
GCIDE = SHARED / "en-gcide-18m.txt"
VOCAB = 5000
LONG_LINE_BYTES = 20_000_000

Result = Dict[str, Any]


# --------------------------------------------------------------------------------------
# Child side: one run, reported as one JSON line on stdout.
# --------------------------------------------------------------------------------------
def rss_bytes() -> int:
    """This process's resident memory now (Linux ``/proc``; elsewhere its peak so far)."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


class RssPeak:
    """Samples RSS every 2 ms in a thread between ``start`` and ``stop`` (which returns it)."""

    def __init__(self) -> None:
        self.peak = rss_bytes()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._done.wait(0.002):
            self.peak = max(self.peak, rss_bytes())

    def start(self) -> "RssPeak":
        self._thread.start()
        return self

    def stop(self) -> int:
        self._done.set()
        self._thread.join()
        return max(self.peak, rss_bytes())


def release_free_memory() -> None:
    """Collect garbage and hand freed heap pages back to the OS (glibc), so that memory the
    counting phase freed is not silently reused by training and hidden from RSS growth."""
    gc.collect()
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def child(spec: Dict[str, Any]) -> None:
    result = child_tokenizers(spec) if spec["tool"] == "tokenizers" else child_purebpe(spec)
    import resource

    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))


def child_purebpe(spec: Dict[str, Any]) -> Result:
    sys.path.insert(0, str(ROOT))
    import purebpe

    progress = spec.get("progress", False)
    start = time.perf_counter()
    counts = purebpe.count(spec["corpus"], pretokenizer="none", progress=progress)
    counted = time.perf_counter()
    if spec.get("warm"):  # train once first: the JIT's code is then in place already
        purebpe.train_from_counts(counts, spec["vocab"], variant="positional")
    release_free_memory()
    before = rss_bytes()
    if spec.get("tracemalloc"):
        import tracemalloc

        tracemalloc.start()
    sampler = RssPeak().start()
    merge_start = time.perf_counter()
    model = purebpe.train_from_counts(
        counts, spec["vocab"], variant="positional", progress=progress
    )
    done = time.perf_counter()
    peak = sampler.stop()
    traced = output = None
    if spec.get("tracemalloc"):
        traced = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        output = table_growth(model.merges)
    return {
        "count_s": counted - start,
        "merge_s": done - merge_start,
        "total_s": done - start,
        "train_rss_growth_mb": (peak - before) / 1e6,
        "tracemalloc_mb": traced / 1e6 if traced is not None else None,
        "output_mb": output / 1e6 if output is not None else None,
        "distinct_bytes": sum(len(word) for word in counts.words),
        "merges": [[left.hex(), right.hex()] for left, right in model.merges],
    }


def table_growth(merges: List[Any]) -> int:
    """Bytes ``WordTable.add_token`` allocates for ``merges``: the output, in the traced peak."""
    import tracemalloc

    from purebpe.core import WordTable

    ids = {bytes([b]): b for b in range(256)}
    for left, right in merges:
        ids[left + right] = len(ids)
    pairs = [(ids[left], ids[right]) for left, right in merges]
    table = WordTable([], [])
    tracemalloc.start()
    for left, right in pairs:
        table.add_token(left, right)
    grown = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return grown


def child_tokenizers(spec: Dict[str, Any]) -> Result:
    os.environ["RAYON_NUM_THREADS"] = str(spec["threads"])  # before tokenizers starts its pool
    sys.path.insert(0, str(ROOT))
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    from purebpe.bytemap import decode_token, encode_token

    start = time.perf_counter()
    with open(spec["corpus"], "rb") as f:
        pieces = f.read().split(b"\n")
    # purebpe's "none" words: each line with its "\n" (only "\n" ends a line).
    lines = [encode_token(piece + b"\n") for piece in pieces[:-1]]
    if pieces[-1]:
        lines.append(encode_token(pieces[-1]))
    del pieces
    prepared = time.perf_counter()
    release_free_memory()
    before = rss_bytes()
    sampler = RssPeak().start()
    tokenizer = Tokenizer(models.BPE())  # no pre-tokenizer: each line is one word
    trainer = trainers.BpeTrainer(
        vocab_size=spec["vocab"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        special_tokens=[],
        show_progress=False,
    )
    tokenizer.train_from_iterator(lines, trainer, length=len(lines))
    done = time.perf_counter()
    peak = sampler.stop()
    merges = json.loads(tokenizer.to_str())["model"]["merges"]
    pairs = [merge.split(" ") if isinstance(merge, str) else merge for merge in merges]
    return {
        "count_s": prepared - start,
        "merge_s": done - prepared,
        "total_s": done - start,
        "train_rss_growth_mb": (peak - before) / 1e6,
        "merges": [[decode_token(left).hex(), decode_token(right).hex()] for left, right in pairs],
    }


# --------------------------------------------------------------------------------------
# Parent side
# --------------------------------------------------------------------------------------
def run_child(
    interpreter: str, spec: Dict[str, Any], env: Optional[Dict[str, str]] = None
) -> Result:
    environment = dict(os.environ, PYTHONPATH=str(ROOT), **(env or {}))
    command = [interpreter, str(Path(__file__).resolve()), "--child", json.dumps(spec)]
    done = subprocess.run(command, capture_output=True, text=True, env=environment)
    if done.returncode != 0:
        raise SystemExit(f"child failed: {' '.join(command)}\n{done.stderr[-3000:]}")
    result: Result = json.loads(done.stdout.strip().splitlines()[-1])
    result["stderr"] = done.stderr
    return result


def interpreter_label(interpreter: str) -> str:
    code = "import platform; print(platform.python_implementation(), platform.python_version())"
    return subprocess.run([interpreter, "-c", code], capture_output=True, text=True).stdout.strip()


def has_tokenizers(interpreter: str) -> bool:
    return (
        subprocess.run([interpreter, "-c", "import tokenizers"], capture_output=True).returncode
        == 0
    )


def digest(merges: List[List[str]]) -> str:
    return hashlib.sha256(json.dumps(merges).encode()).hexdigest()[:12]


def common_prefix(a: List[List[str]], b: List[List[str]]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


def table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def part_peer(interpreters: List[str], hf_python: Optional[str], repeat: int) -> str:
    contenders: List[Any] = []  # (label, interpreter, spec)
    if hf_python:
        for threads in (1, os.cpu_count() or 1):
            label = f"HF tokenizers, {threads} thread{'s' if threads > 1 else ''}"
            contenders.append((label, hf_python, {"tool": "tokenizers", "threads": threads}))
    for interpreter in interpreters:
        contenders.append(
            (
                f"purebpe positional, {interpreter_label(interpreter)}",
                interpreter,
                {"tool": "purebpe"},
            )
        )
    runs: Dict[str, List[Result]] = {label: [] for label, _, _ in contenders}
    for round_ in range(repeat):
        for label, interpreter, spec in contenders:
            spec = dict(spec, corpus=str(ZH), vocab=VOCAB)
            runs[label].append(run_child(interpreter, spec))
            print(
                f"  round {round_ + 1}: {label}: {runs[label][-1]['total_s']:.2f} s",
                file=sys.stderr,
            )
    median = {
        label: {
            key: statistics.median(r[key] for r in rs)
            for key in ("count_s", "merge_s", "total_s", "peak_rss_mb", "train_rss_growth_mb")
        }
        for label, rs in runs.items()
    }
    reference_label = contenders[0][0] if hf_python else None
    reference = median[reference_label]["total_s"] if reference_label else None
    purebpe_merges = [
        runs[label][0]["merges"] for label, _, spec in contenders if spec["tool"] == "purebpe"
    ]
    rows = []
    for label, _, spec in contenders:
        m = median[label]
        merges = runs[label][0]["merges"]
        agree = common_prefix(merges, purebpe_merges[0]) if purebpe_merges else "-"
        rows.append(
            [
                label,
                f"{m['count_s']:.2f}",
                f"{m['merge_s']:.2f}",
                f"{m['total_s']:.2f}",
                f"{m['total_s'] / reference:.2f}" if reference else "-",
                f"{m['peak_rss_mb']:.0f}",
                f"{m['train_rss_growth_mb']:.1f}",
                f"{len(merges)} ({digest(merges)}, {agree} same as purebpe)",
            ]
        )
    if len({digest(m) for m in purebpe_merges}) > 1:
        raise SystemExit("purebpe runs on different interpreters learned different merges")
    return table(
        [
            "contender",
            "count s",
            "merge s",
            "total s",
            "ratio",
            "peak RSS MB",
            "RSS growth in training MB",
            "merges",
        ],
        rows,
    )


def part_memory(pypy: Optional[str], cpython: Optional[str], tracemalloc: bool) -> str:
    corpus_bytes = ZH.stat().st_size
    rows: List[Sequence[Any]] = []

    def row(interpreter: str, what: str, megabytes: float) -> None:
        label = interpreter_label(interpreter)
        rows.append([label, what, f"{megabytes:.2f}", f"{megabytes * 1e6 / corpus_bytes:.2f}x"])

    spec = {"tool": "purebpe", "corpus": str(ZH), "vocab": VOCAB}
    if pypy:
        for warm in (False, True):
            result = run_child(pypy, dict(spec, warm=warm), env={"PYPY_GC_NURSERY": "4MB"})
            what = "second training in the process (JIT warm)" if warm else "first training"
            row(pypy, f"RSS growth, {what}", result["train_rss_growth_mb"])
    if cpython and tracemalloc:
        result = run_child(cpython, dict(spec, tracemalloc=True))
        traced, output = result["tracemalloc_mb"], result["output_mb"]
        row(cpython, "tracemalloc peak of train_from_counts", traced)
        row(cpython, "of which the table's new tokens and merges (the output)", output)
        row(cpython, "the trainer's own (peak minus output)", traced - output)
        row(cpython, "RSS growth in training", result["train_rss_growth_mb"])
    header = ["interpreter", f"measure (corpus {corpus_bytes / 1e6:.2f} MB)", "MB", "x corpus"]
    return table(header, rows)


def rotated_corpus(k: int, directory: Path) -> Path:
    """``k`` copies of the Chinese corpus; copy ``i`` has its lines rotated by ``7 i`` chars."""
    lines = ZH.read_text(encoding="utf-8").split("\n")
    path = directory / f"zh-x{k}.txt"
    with open(path, "w", encoding="utf-8") as out:
        for i in range(k):
            shift = 7 * i
            out.write(
                "\n".join(
                    line[shift % len(line) :] + line[: shift % len(line)] if line else line
                    for line in lines
                )
            )
    return path


def part_scaling(interpreter: str, directory: Path) -> str:
    rows = []
    first: Optional[Result] = None
    for k in (1, 2, 4, 8):
        path = rotated_corpus(k, directory)
        result = run_child(
            interpreter,
            {"tool": "purebpe", "corpus": str(path), "vocab": VOCAB},
            env={"PYPY_GC_NURSERY": "4MB"},
        )
        first = first or result
        size = path.stat().st_size
        rows.append(
            [
                f"{k}x",
                f"{size / 1e6:.1f}",
                f"{result['distinct_bytes'] / 1e6:.1f}",
                f"{result['count_s']:.2f}",
                f"{result['merge_s']:.2f}",
                f"{result['merge_s'] / first['merge_s']:.2f}",
                f"{result['train_rss_growth_mb']:.1f}",
                f"{result['train_rss_growth_mb'] / first['train_rss_growth_mb']:.2f}",
            ]
        )
        print(f"  scaling {k}x: {result['total_s']:.2f} s", file=sys.stderr)
    return f"{interpreter_label(interpreter)}, vocab {VOCAB}, GC nursery 4 MB\n\n" + table(
        [
            "corpus",
            "MB",
            "distinct MB",
            "count s",
            "merge s",
            "merge vs 1x",
            "RSS growth MB",
            "growth vs 1x",
        ],
        rows,
    )


def part_long_line(interpreter: str, directory: Path) -> str:
    path = directory / "one-line.txt"
    with open(path, "wb") as out:
        written = 0
        for source in (ZH, GCIDE):
            data = source.read_bytes().replace(b"\n", b" ")[: LONG_LINE_BYTES - written]
            out.write(data)
            written += len(data)
    result = run_child(
        interpreter,
        {"tool": "purebpe", "corpus": str(path), "vocab": VOCAB, "progress": True},
        env={"PYPY_GC_NURSERY": "4MB"},
    )
    frames = [frame for frame in re.split(r"[\r\n]", result["stderr"]) if frame.startswith("merge")]
    size = path.stat().st_size
    rows = [
        [
            f"{size / 1e6:.1f}",
            f"{result['count_s']:.2f}",
            f"{result['merge_s']:.2f}",
            f"{result['peak_rss_mb']:.0f}",
            f"{result['train_rss_growth_mb']:.1f}",
            f"{result['train_rss_growth_mb'] * 1e6 / size:.2f}x",
            f"{len(set(frames))}",
            len(result["merges"]),
        ]
    ]
    last = frames[-1].strip() if frames else "(no bar)"
    label = interpreter_label(interpreter)
    return f"{label}, vocab {VOCAB}, GC nursery 4 MB; last bar frame: `{last}`\n\n" + table(
        [
            "line MB",
            "count s",
            "merge s",
            "peak RSS MB",
            "RSS growth in training MB",
            "x line bytes",
            "bar frames",
            "merges",
        ],
        rows,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--pypy", help="a PyPy interpreter to run purebpe on")
    parser.add_argument(
        "--cpython", default=sys.executable if sys.implementation.name == "cpython" else None
    )
    parser.add_argument("--parts", default="peer,memory,scaling,long-line")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument(
        "--tracemalloc", action="store_true", help="also measure CPython with tracemalloc (slow)"
    )
    args = parser.parse_args()
    if args.child:
        child(json.loads(args.child))
        return 0
    if not ZH.exists():
        print(f"skipped: {ZH} not found")
        return 0
    interpreters = [i for i in (args.pypy, args.cpython) if i]
    first_interpreter = interpreters[0]
    hf_python = next((i for i in (args.cpython, "python3") if i and has_tokenizers(i)), None)
    parts = args.parts.split(",")
    sys.path.insert(0, str(HERE))
    from _results import record

    everything = " + ".join(map(interpreter_label, interpreters))
    first = interpreter_label(interpreters[0])
    with tempfile.TemporaryDirectory() as tmp:
        # (part, heading and title, interpreter the figures come from, how to run it)
        plan: List[Tuple[str, str, str, Callable[[], str]]] = [
            (
                "peer",
                f"Positional vs HF tokenizers, zh-fortunes.txt, vocab {VOCAB}, "
                f"no pre-tokenization (median of {args.repeat})",
                everything,
                lambda: part_peer(interpreters, hf_python, args.repeat),
            ),
            (
                "memory",
                "Positional trainer memory, zh-fortunes.txt (target: 3x corpus bytes)",
                everything,
                lambda: part_memory(args.pypy, args.cpython, args.tracemalloc),
            ),
            (
                "scaling",
                "Positional trainer scaling",
                first,
                lambda: part_scaling(first_interpreter, Path(tmp)),
            ),
            (
                "long-line",
                "Positional trainer on one 20 MB line",
                first,
                lambda: part_long_line(first_interpreter, Path(tmp)),
            ),
        ]
        for part, title, interpreter, run in plan:
            if part not in parts or (part == "long-line" and not GCIDE.exists()):
                continue
            markdown = run()
            print(f"\n### {title}\n\n{markdown}")
            record(
                f"bench_positional_{part.replace('-', '_')}",
                markdown,
                interpreter=interpreter,
                title=title,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
