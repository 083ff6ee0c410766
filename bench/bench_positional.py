"""The positional trainer on text without spaces: HF ``tokenizers``, scaling, one 20 MB line.

    python -m bench.bench_positional --pypy /work/pypy-venv/bin/python            # everything
    python -m bench.bench_positional --pypy /work/pypy-venv/bin/python --only peer --rounds 3
    python -m bench.bench_positional --pypy /work/pypy-venv/bin/python --tracemalloc  # + CPython

Every measurement runs in a child process (the script re-run with ``--child``), so peak
RSS is that run's own; repeated rounds are interleaved so that a noisy machine slows every
contender alike, and the median is reported. Parts (``--only`` picks some; ``--quick``
runs them on the first 256 KB of the corpus, vocab 500, one round):

``peer``
    ``zh-fortunes.txt`` of the shared corpora (2 MB of Chinese, no spaces; one line = one
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
    the training proper, ``total`` both (each child imports its library before the clock
    starts); ``CPU`` is the whole child's user + system time (start-up and imports
    included, for every contender). ``ratio`` is total / the total of HF's faster thread
    count, ``CPU ratio`` CPU / the CPU of HF's thriftier one (the notes say which). PyPy
    runs with ``PYPY_GC_NURSERY=4MB``, as the ``purebpe`` command gives big inputs. The
    timed rounds run without the RSS sampler (a thread waking every 2 ms: on PyPy it cost
    0.15 to 0.3 s of CPU, 20% of the run, against 0.05 s for HF, whose training releases
    the GIL); one more, untimed round per contender gives ``RSS growth in training``.
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
``long_line``
    one 20 MB line without any special token (``en-gcide-18m.txt`` and ``zh-fortunes.txt``
    with their newlines turned into spaces), trained with ``purebpe.train(...,
    pretokenizer="none", progress=True)``: counting keeps the line whole, training fits in
    memory, and the tqdm bar moves (the number of distinct bar frames is reported).
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, Iterator, List, Optional, Tuple

from ._harness import (
    RssPeak,
    Script,
    Table,
    corpus_path,
    digest,
    importable,
    interpreter_label,
    rss_bytes,
    run_child,
)
from .hf_trainer_adapter import hf_merges, hf_trainer

LONG_LINE_BYTES = 20_000_000
Result = Dict[str, Any]

script = Script("bench_positional", __doc__, rounds=2, interpreters=True)
script.option("--vocab", type=int, default=5000)
script.option("--tracemalloc", action="store_true", help="also measure CPython with tracemalloc (slow)")


# --------------------------------------------------------------------------------------
# Child side: one run
# --------------------------------------------------------------------------------------
def release_free_memory() -> None:
    """Collect garbage and hand freed heap pages back to the OS (glibc), so that memory the
    counting phase freed is not silently reused by training and hidden from RSS growth."""
    gc.collect()
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


@script.child
def child(spec: Dict[str, Any]) -> Result:
    return child_tokenizers(spec) if spec["tool"] == "tokenizers" else child_purebpe(spec)


def child_purebpe(spec: Dict[str, Any]) -> Result:
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
    sampler = RssPeak().start() if spec.get("rss", True) else None
    merge_start = time.perf_counter()
    model = purebpe.train_from_counts(counts, spec["vocab"], variant="positional", progress=progress)
    done = time.perf_counter()
    peak = sampler.stop() if sampler else None
    traced = output = None
    if spec.get("tracemalloc"):
        traced = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        output = table_growth(model.merges)
    return {
        "count_s": counted - start,
        "merge_s": done - merge_start,
        "total_s": done - start,
        "train_rss_growth_mb": (peak - before) / 1e6 if peak is not None else None,
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
    import tokenizers  # noqa: F401  (imported before the clock starts, as purebpe is)

    from purebpe.bytemap import encode_token

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
    sampler = RssPeak().start() if spec.get("rss", True) else None
    tokenizer, trainer = hf_trainer(spec["vocab"], byte_level=False)  # each line is one word
    tokenizer.train_from_iterator(lines, trainer, length=len(lines))
    done = time.perf_counter()
    peak = sampler.stop() if sampler else None
    return {
        "count_s": prepared - start,
        "merge_s": done - prepared,
        "total_s": done - start,
        "train_rss_growth_mb": (peak - before) / 1e6 if peak is not None else None,
        "merges": [[left.hex(), right.hex()] for left, right in hf_merges(tokenizer)],
    }


# --------------------------------------------------------------------------------------
# Parent side: the parts
# --------------------------------------------------------------------------------------
NURSERY = {"PYPY_GC_NURSERY": "4MB"}


def interpreters(args: argparse.Namespace) -> List[str]:
    """The interpreters purebpe runs on, PyPy first."""
    return [i for i in (args.pypy, args.python) if i]


def builds(args: argparse.Namespace) -> List[Tuple[str, str, Optional[Path]]]:
    """``(label, interpreter, compiled build or None)`` of the parts that measure purebpe
    alone: the first interpreter (PyPy when given), then the compiled build unless
    ``--no-compiled``."""
    python = interpreters(args)[0]
    runs: List[Tuple[str, str, Optional[Path]]] = [(interpreter_label(python), python, None)]
    if args.python and args.compiled:
        runs.append((interpreter_label(args.python) + " compiled", args.python, args.compiled))
    return runs


def zh(args: argparse.Namespace) -> Path:
    return corpus_path("zh-fortunes.txt", quick=args.quick)


def vocab(args: argparse.Namespace) -> int:
    return 500 if args.quick else args.vocab


def common_prefix(a: List[List[str]], b: List[List[str]]) -> int:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return n


@script.register
def peer(args: argparse.Namespace) -> Table:
    # (label, interpreter, spec, the compiled build it runs on or None)
    contenders: List[Tuple[str, str, Dict[str, Any], Optional[Path]]] = []
    hf_python = next((i for i in (args.python, "python3") if importable(i, "tokenizers")), None)
    if hf_python:
        for threads in (1, os.cpu_count() or 1):
            label = f"HF tokenizers, {threads} thread{'s' if threads > 1 else ''}"
            contenders.append((label, hf_python, {"tool": "tokenizers", "threads": threads}, None))
    for python in interpreters(args):
        label = f"purebpe positional, {interpreter_label(python)}"
        contenders.append((label, python, {"tool": "purebpe"}, None))
        if python == args.python and args.compiled:
            contenders.append((label + " compiled", python, {"tool": "purebpe"}, args.compiled))

    def run(python: str, spec: Dict[str, Any], compiled: Optional[Path], rss: bool) -> Result:
        return run_child(
            "bench.bench_positional",
            dict(spec, corpus=str(zh(args).resolve()), vocab=vocab(args), rss=rss),
            python=python,
            compiled=compiled,
            env=NURSERY if python == args.pypy else None,
        )

    runs: Dict[str, List[Result]] = {label: [] for label, _, _, _ in contenders}
    for round_ in range(args.rounds):  # timed: no RSS sampler thread in the child
        for label, python, spec, compiled in contenders:
            runs[label].append(run(python, spec, compiled, rss=False))
            print(f"  round {round_ + 1}: {label}: {runs[label][-1]['total_s']:.2f} s", file=sys.stderr)
    growth = {label: run(python, spec, compiled, rss=True) for label, python, spec, compiled in contenders}
    keys = ("count_s", "merge_s", "total_s", "child_cpu_s", "peak_rss_mb")
    median = {
        label: {key: statistics.median(r[key] for r in rs) for key in keys} for label, rs in runs.items()
    }
    hf_labels = [label for label, _, spec, _ in contenders if spec["tool"] == "tokenizers"]
    # HF's best configuration: the faster (by total) and the thriftier (by CPU) of its thread counts.
    fastest = min(hf_labels, key=lambda label: median[label]["total_s"]) if hf_labels else None
    thriftiest = min(hf_labels, key=lambda label: median[label]["child_cpu_s"]) if hf_labels else None
    ours = [runs[label][0]["merges"] for label, _, spec, _ in contenders if spec["tool"] == "purebpe"]
    if len({digest(m) for m in ours}) > 1:
        raise SystemExit("purebpe runs on different interpreters learned different merges")
    rows = []
    for label, _, _spec, _ in contenders:
        m, merges = median[label], runs[label][0]["merges"]
        rows.append(
            {
                "contender": label,
                "count s": f"{m['count_s']:.2f}",
                "merge s": f"{m['merge_s']:.2f}",
                "total s": f"{m['total_s']:.2f}",
                "ratio": f"{m['total_s'] / median[fastest]['total_s']:.2f}" if fastest else "-",
                "CPU s": f"{m['child_cpu_s']:.2f}",
                "CPU ratio": (
                    f"{m['child_cpu_s'] / median[thriftiest]['child_cpu_s']:.2f}" if thriftiest else "-"
                ),
                "peak RSS MB": f"{m['peak_rss_mb']:.0f}",
                "RSS growth in training MB": f"{growth[label]['train_rss_growth_mb']:.1f}",
                "merges": (
                    f"{len(merges)} ({digest(merges)}, "
                    f"{common_prefix(merges, ours[0]) if ours else '-'} same as purebpe)"
                ),
            }
        )
    return Table(
        rows,
        suffix="_peer",
        interpreter=" + ".join(map(interpreter_label, interpreters(args))),
        title=f"Positional vs HF tokenizers, zh-fortunes.txt, vocab {vocab(args)}, "
        f"no pre-tokenization (median of {args.rounds})",
        notes=(
            f"ratio: total s against {fastest} (HF's faster), CPU ratio: CPU s against {thriftiest} "
            "(HF's thriftier); PyPy with a 4 MB GC nursery"
            if fastest
            else "PyPy with a 4 MB GC nursery"
        ),
    )


@script.register
def memory(args: argparse.Namespace) -> Table:
    corpus_bytes = zh(args).stat().st_size
    rows: List[Dict[str, Any]] = []

    def row(label: str, what: str, megabytes: float) -> None:
        rows.append(
            {
                "interpreter": label,
                f"measure (corpus {corpus_bytes / 1e6:.2f} MB)": what,
                "MB": f"{megabytes:.2f}",
                "x corpus": f"{megabytes * 1e6 / corpus_bytes:.2f}x",
            }
        )

    spec = {"tool": "purebpe", "corpus": str(zh(args).resolve()), "vocab": vocab(args)}
    if args.pypy:
        for warm in (False, True):
            result = run_child("bench.bench_positional", dict(spec, warm=warm), python=args.pypy, env=NURSERY)
            what = "second training in the process (JIT warm)" if warm else "first training"
            row(interpreter_label(args.pypy), f"RSS growth, {what}", result["train_rss_growth_mb"])
    if args.python and args.compiled:
        result = run_child("bench.bench_positional", spec, python=args.python, compiled=args.compiled)
        label = interpreter_label(args.python) + " compiled"
        row(label, "RSS growth, first training", result["train_rss_growth_mb"])
    if args.python and args.tracemalloc:
        result = run_child("bench.bench_positional", dict(spec, tracemalloc=True), python=args.python)
        traced, output = result["tracemalloc_mb"], result["output_mb"]
        here = interpreter_label(args.python)
        row(here, "tracemalloc peak of train_from_counts", traced)
        row(here, "of which the table's new tokens and merges (the output)", output)
        row(here, "the trainer's own (peak minus output)", traced - output)
        row(here, "RSS growth in training", result["train_rss_growth_mb"])
    return Table(
        rows,
        suffix="_memory",
        interpreter=" + ".join(map(interpreter_label, interpreters(args))),
        title="Positional trainer memory, zh-fortunes.txt (target: 3x corpus bytes)",
    )


def rotated_corpus(source: Path, k: int, directory: Path) -> Path:
    """``k`` copies of the Chinese corpus; copy ``i`` has its lines rotated by ``7 i`` chars."""
    lines = source.read_text(encoding="utf-8").split("\n")
    path = directory / f"zh-x{k}.txt"
    with open(path, "w", encoding="utf-8") as out:
        for i in range(k):
            shift = 7 * i
            out.write(
                "\n".join(
                    line[shift % len(line) :] + line[: shift % len(line)] if line else line for line in lines
                )
            )
    return path


@script.register
def scaling(args: argparse.Namespace) -> Iterator[Table]:
    for label, python, compiled in builds(args):
        yield scaling_on(args, label, python, compiled)


def scaling_on(args: argparse.Namespace, label: str, python: str, compiled: Optional[Path]) -> Table:
    rows = []
    first: Optional[Result] = None
    with tempfile.TemporaryDirectory() as tmp:
        for k in (1, 2) if args.quick else (1, 2, 4, 8):
            path = rotated_corpus(zh(args), k, Path(tmp))
            result = run_child(
                "bench.bench_positional",
                {"tool": "purebpe", "corpus": str(path), "vocab": vocab(args)},
                python=python,
                env=NURSERY,
                compiled=compiled,
            )
            first = first or result
            rows.append(
                {
                    "corpus": f"{k}x",
                    "MB": f"{path.stat().st_size / 1e6:.1f}",
                    "distinct MB": f"{result['distinct_bytes'] / 1e6:.1f}",
                    "count s": f"{result['count_s']:.2f}",
                    "merge s": f"{result['merge_s']:.2f}",
                    "merge vs 1x": f"{result['merge_s'] / first['merge_s']:.2f}",
                    "RSS growth MB": f"{result['train_rss_growth_mb']:.1f}",
                    "growth vs 1x": f"{result['train_rss_growth_mb'] / first['train_rss_growth_mb']:.2f}",
                }
            )
            print(f"  scaling {k}x on {label}: {result['total_s']:.2f} s", file=sys.stderr)
    return Table(
        rows,
        suffix="_scaling",
        interpreter=label,
        title="Positional trainer scaling",
        notes=f"{label}, vocab {vocab(args)}" + (", GC nursery 4 MB" if python == args.pypy else ""),
    )


@script.register
def long_line(args: argparse.Namespace) -> Iterator[Table]:
    for label, python, compiled in builds(args):
        yield long_line_on(args, label, python, compiled)


def long_line_on(args: argparse.Namespace, label: str, python: str, compiled: Optional[Path]) -> Table:
    limit = 1_000_000 if args.quick else LONG_LINE_BYTES
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "one-line.txt"
        with open(path, "wb") as out:
            written = 0
            for name in ("zh-fortunes.txt", "en-gcide-18m.txt"):
                data = corpus_path(name).read_bytes().replace(b"\n", b" ")[: limit - written]
                out.write(data)
                written += len(data)
        result = run_child(
            "bench.bench_positional",
            {"tool": "purebpe", "corpus": str(path), "vocab": vocab(args), "progress": True},
            python=python,
            env=NURSERY,
            compiled=compiled,
        )
        size = path.stat().st_size
    frames = [frame for frame in re.split(r"[\r\n]", result["stderr"]) if frame.startswith("merge")]
    row = {
        "line MB": f"{size / 1e6:.1f}",
        "count s": f"{result['count_s']:.2f}",
        "merge s": f"{result['merge_s']:.2f}",
        "peak RSS MB": f"{result['peak_rss_mb']:.0f}",
        "RSS growth in training MB": f"{result['train_rss_growth_mb']:.1f}",
        "x line bytes": f"{result['train_rss_growth_mb'] * 1e6 / size:.2f}x",
        "bar frames": f"{len(set(frames))}",
        "merges": len(result["merges"]),
    }
    last = frames[-1].strip() if frames else "(no bar)"
    return Table(
        [row],
        suffix="_long_line",
        interpreter=label,
        title=f"Positional trainer on one {size / 1e6:.0f} MB line",
        notes=f"{label}, vocab {vocab(args)}"
        + (", GC nursery 4 MB" if python == args.pypy else "")
        + f"; last bar frame: `{last}`",
    )


if __name__ == "__main__":
    sys.exit(script.main())
