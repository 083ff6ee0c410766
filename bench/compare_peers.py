"""Train purebpe (each variant, on CPython and PyPy) and HF ``tokenizers`` side by side.

Every contender trains on the same corpus to the same vocabulary size, with the special
token ``<|endoftext|>``, in a fresh subprocess of its own (the script re-invokes itself with
``--child``), so that its peak RSS (``ru_maxrss``) is its own; the runs are interleaved
round by round so that a noisy machine slows every contender alike, and the median wall
time of the rounds is reported, with the median CPU time of the child (its counting
processes included). The contenders:

* ``purebpe VARIANT`` on each interpreter found: counting (``purebpe.count``) and merging
  (``purebpe.train_from_counts``) timed separately. PyPy runs with the GC nursery that the
  ``purebpe`` command gives itself on this machine (:mod:`purebpe.pypy_nursery`: 4 MB
  where PyPy would size it from a large CPU cache), unless ``PYPY_GC_NURSERY`` is set
  here; the table's note says which;
* HF ``tokenizers`` ``BpeTrainer`` in the ByteLevel GPT-2 setup (``ByteLevel`` pre-tokenizer
  without prefix space, the 256-byte initial alphabet), on one thread and on all threads
  (``RAYON_NUM_THREADS``; ``TOKENIZERS_PARALLELISM=false`` for the single thread); on
  CPython only, where it is installed. With ``--pretokenizer cl100k``/``o200k`` its
  pre-tokenizer is what purebpe exports for that pattern: ``Split(Regex, "isolated")``
  then ``ByteLevel(use_regex=False)``;
* ``rustbpe`` (nanochat's trainer), on one thread and on all threads, fed the file's lines:
  its default pattern is GPT-4's (cl100k), so it runs with ``--pretokenizer cl100k``, and
  with the 2019 GPT-2 pattern for ``gpt2``. It has no special tokens;
* ``bpeasy`` (``--pretokenizer gpt2`` only), fed the file's lines with the GPT-2 pattern and
  a 128-byte token limit (it requires one).

The table gives, per corpus, each contender's count, merge and total wall time, peak RSS
and the ratio of its total to HF's single-threaded total. A peer does not time its phases,
so each peer also runs learning no merge: that run's time is its count phase, and the rest
of its full run its merge phase. Where ``incremental`` is among
the variants, a second table gives each variant's merge-phase speed-up over it on the same
interpreter. All purebpe runs on a corpus must learn the same merges (a digest is
compared); the script exits 1 when they do not.

    python -m bench.compare_peers                              # pydoc + the shared *.txt corpora
    python -m bench.compare_peers --corpus en-gcide-18m.txt \\
        --vocab 10000 --rounds 2 --pypy /work/pypy-venv/bin/python
    python -m bench.compare_peers --corpus en-kjv-fortunes-5m.txt \\
        --variants incremental,heap,bucket        # the merge-phase speed-up over incremental
    python -m bench.compare_peers --quick --pypy none           # end to end, in seconds

Corpora: ``pydoc`` (the ``pydoc_data.topics`` text, always there) and every ``*.txt`` of
the shared corpora when present, unless ``--corpus`` names others.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

from ._harness import ChildFailed, Script, Table, digest, fmt, importable, interpreter_label, run_child
from .hf_trainer_adapter import hf_merges, hf_trainer

SPECIAL = "<|endoftext|>"
DEFAULT_VARIANTS = "heap,sorted,bucket"
Result = Dict[str, Any]
PHASES_NOTE = (
    "purebpe's count and merge phases are timed inside its run (`purebpe.count`, then "
    "`purebpe.train_from_counts`); a peer's count phase is a run of it that learns no "
    "merge, and its merge phase the rest of its full run (a difference of two runs: where "
    "the merge phase is short against the noise of counting, it can come out near zero, or "
    "below)."
)

script = Script("compare_peers", __doc__, rounds=1, corpora=["pydoc", "*.txt"], interpreters=True)
script.option("--vocab", type=int, default=10_000)
script.option("--processes", default="1", help="comma-separated counting processes for purebpe (default 1)")
script.option("--bpeasy", action="store_true", help="add bpeasy (gpt2 only)")
script.option(
    "--pretokenizer",
    default="gpt2",
    choices=("gpt2", "cl100k", "o200k"),
    help="the pattern every contender splits with (default gpt2)",
)
script.option("--variants", default=DEFAULT_VARIANTS, help=f"comma-separated (default {DEFAULT_VARIANTS})")
script.option("--timeout", type=float, default=1800, help="seconds per run before it is given up")


# --------------------------------------------------------------------------------------
# Child side: one training run
# --------------------------------------------------------------------------------------
@script.child
def child(spec: Dict[str, Any]) -> Result:
    pretokenizer = spec.get("pretokenizer", "gpt2")
    if spec.get("count_only"):  # a peer's count phase: the same run, learning no merge
        spec = dict(spec, vocab=256 + (spec["tool"] == "tokenizers"))  # (HF: + its special)
    if spec["tool"] in ("tokenizers", "rustbpe"):
        # Must be set before the Rust side starts its thread pool.
        os.environ["RAYON_NUM_THREADS"] = str(spec["threads"])
        if spec["threads"] == 1:
            os.environ["TOKENIZERS_PARALLELISM"] = "false"
        train = train_tokenizers if spec["tool"] == "tokenizers" else train_rustbpe
        return train(spec["corpus"], spec["vocab"], pretokenizer)
    if spec["tool"] == "bpeasy":
        return train_bpeasy(spec["corpus"], spec["vocab"])
    return train_purebpe(spec["corpus"], spec["vocab"], spec["variant"], pretokenizer, spec.get("processes"))


def train_purebpe(
    corpus: str, vocab: int, variant: str, pretokenizer: str, processes: Optional[int]
) -> Result:
    import purebpe

    start = time.perf_counter()
    counts = purebpe.count(corpus, [SPECIAL], pretokenizer=pretokenizer, processes=processes)
    counted = time.perf_counter()
    model = purebpe.train_from_counts(counts, vocab, variant=variant)
    done = time.perf_counter()
    return {
        "count_s": counted - start,
        "merge_s": done - counted,
        "total_s": done - start,
        "merges": len(model.merges),
        "digest": digest(model.merges),
    }


def train_tokenizers(corpus: str, vocab: int, pretokenizer: str) -> Result:
    from purebpe.formats.hf import hf_regex

    start = time.perf_counter()
    split = None if pretokenizer == "gpt2" else hf_regex(pretokenizer)  # what purebpe exports
    tokenizer, trainer = hf_trainer(vocab, [SPECIAL], split=split)
    tokenizer.train([corpus], trainer)
    done = time.perf_counter()
    return {"count_s": None, "merge_s": None, "total_s": done - start, "merges": len(hf_merges(tokenizer))}


def train_rustbpe(corpus: str, vocab: int, pretokenizer: str) -> Result:
    import rustbpe

    from purebpe.pretokenize import GPT2_PATTERN

    pattern = {"gpt2": GPT2_PATTERN, "cl100k": None}[pretokenizer]  # None: its default, GPT-4's
    start = time.perf_counter()
    tokenizer = rustbpe.Tokenizer()
    with open(corpus, encoding="utf-8") as lines:
        tokenizer.train_from_iterator(lines, vocab, pattern=pattern)
    done = time.perf_counter()
    return {"count_s": None, "merge_s": None, "total_s": done - start, "merges": vocab - 256}


def train_bpeasy(corpus: str, vocab: int) -> Result:
    import bpeasy

    from purebpe.pretokenize import GPT2_PATTERN

    start = time.perf_counter()
    with open(corpus, encoding="utf-8") as lines:
        ranks = bpeasy.train_bpe(lines, GPT2_PATTERN, 128, vocab)
    done = time.perf_counter()
    return {"count_s": None, "merge_s": None, "total_s": done - start, "merges": len(ranks) - 256}


# --------------------------------------------------------------------------------------
# Parent side: plan the runs, interleave them, tabulate.
# --------------------------------------------------------------------------------------
def pypy_nursery() -> Optional[str]:
    """The ``PYPY_GC_NURSERY`` that ``purebpe train`` on PyPy would restart itself with on
    this machine (``None``: it would not), so that the PyPy rows are what a user of the
    command gets; a value set in this environment wins, as it does for the command."""
    from purebpe.pypy_nursery import nursery_to_set

    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            cpuinfo = f.read()
    except OSError:
        return None
    return nursery_to_set("PyPy", os.environ, cpuinfo)


def nursery_note(nursery: Optional[str]) -> str:
    """What the PyPy children ran with (``nursery``: :func:`pypy_nursery`'s), for the note."""
    if "PYPY_GC_NURSERY" in os.environ:
        return f"PyPy with PYPY_GC_NURSERY={os.environ['PYPY_GC_NURSERY']} (set for this run)."
    if nursery is None:
        return "PyPy with its own GC nursery (as `purebpe train` runs on this machine)."
    return f"PyPy with PYPY_GC_NURSERY={nursery}, as `purebpe train` sets on this machine."


class Contender(NamedTuple):
    name: str
    interpreter: str
    label: str  # CPython, CPython-compiled or PyPy
    spec: Dict[str, Any]
    compiled: Optional[Path] = None  # the compiled build the child runs on


def purebpe_interpreters(args: argparse.Namespace) -> List[Tuple[str, str, Optional[Path]]]:
    """``(label, interpreter, compiled build)`` for each build purebpe runs on: CPython,
    CPython on the mypyc-compiled build (``--compiled``, the default) and PyPy."""
    return (
        [("CPython", args.python, None)]
        + ([("CPython-compiled", args.python, args.compiled)] if getattr(args, "compiled", None) else [])
        + ([("PyPy", args.pypy, None)] if args.pypy else [])
    )


def contenders(args: argparse.Namespace) -> List[Contender]:
    found = [
        Contender(
            f"purebpe {variant}" + (f", {processes} processes" if processes > 1 else ""),
            python,
            implementation,
            {
                "tool": "purebpe",
                "variant": variant,
                "pretokenizer": args.pretokenizer,
                "processes": processes,
            },
            compiled,
        )
        for implementation, python, compiled in purebpe_interpreters(args)
        for variant in args.variants.split(",")
        for processes in map(int, args.processes.split(","))
    ]
    peers = ["tokenizers"] + (["rustbpe"] if args.pretokenizer in ("gpt2", "cl100k") else [])
    if args.pretokenizer == "gpt2" and args.bpeasy:
        peers.append("bpeasy")
    for tool in peers:
        if not importable(args.python, tool):
            print(f"({tool} not importable by {args.python}: no {tool} rows)", file=sys.stderr)
            continue
        if tool == "bpeasy":
            found.append(Contender("bpeasy", args.python, "CPython", {"tool": "bpeasy"}))
            continue
        for threads in sorted({1, os.cpu_count() or 1}):
            found.append(
                Contender(
                    f"{tool} {threads} thread{'s' if threads > 1 else ''}",
                    args.python,
                    "CPython",
                    {"tool": tool, "threads": threads, "pretokenizer": args.pretokenizer},
                )
            )
    # Each peer again, learning no merge: its count phase (see split_peer_phases).
    return found + [
        c._replace(spec=dict(c.spec, count_only=True)) for c in found if c.spec["tool"] != "purebpe"
    ]


def split_peer_phases(rows: List[Tuple[Contender, Result]]) -> List[Tuple[Contender, Result]]:
    """Fill in each peer's count and merge times from its run that learned no merge.

    A peer reports no phases, so its count phase is taken as the whole of a run with a
    vocabulary of just the bytes (reading, pre-tokenizing, counting words and, for these
    trainers, the first count of the pairs), and its merge phase as the rest of its full
    run. The no-merge rows themselves are dropped.
    """
    count_only = {
        json.dumps(dict(c.spec, count_only=False), sort_keys=True): r
        for c, r in rows
        if c.spec.get("count_only")
    }
    kept = []
    for contender, result in rows:
        if contender.spec.get("count_only"):
            continue
        twin = count_only.get(json.dumps(dict(contender.spec, count_only=False), sort_keys=True))
        if twin is not None and "error" not in twin and "error" not in result:
            result = dict(result, count_s=twin["total_s"], merge_s=result["total_s"] - twin["total_s"])
        kept.append((contender, result))
    return kept


def summarize(runs: List[Result]) -> Result:
    """The medians of a contender's rounds (the first failure's reason if none ran)."""
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return {"error": runs[0]["error"] if runs else "not run"}
    summary: Result = {"rounds": len(ok), "merges": ok[0]["merges"], "digest": ok[0].get("digest")}
    for key in ("count_s", "merge_s", "total_s", "child_cpu_s", "peak_rss_mb"):
        values = [r[key] for r in ok if r.get(key) is not None]
        summary[key] = statistics.median(values) if values else None
    if len({r.get("digest") for r in ok}) > 1:
        summary["digest"] = "varies"
    return summary


def main_rows(rows: List[Tuple[Contender, Result]]) -> List[Dict[str, Any]]:
    """Each contender's phases, CPU time, memory and ratio to HF on one thread."""
    reference = next(
        (
            r
            for c, r in rows
            if c.spec["tool"] == "tokenizers" and c.spec.get("threads") == 1 and "error" not in r
        ),
        None,
    )
    table = []
    for contender, result in rows:
        row = {"contender": contender.name, "interpreter": contender.label}
        if "error" in result:
            table.append(dict(row, **{"total s": f"skipped: {result['error']}"}))
            continue
        table.append(
            dict(
                row,
                **{
                    "count s": fmt(result["count_s"]),
                    "merges s": fmt(result["merge_s"]),
                    "total s": fmt(result["total_s"]),
                    "CPU s": fmt(result["child_cpu_s"]),
                    "peak RSS MB": fmt(result["peak_rss_mb"], 0),
                    "total / HF 1 thread": fmt(result["total_s"] / reference["total_s"]) + "x"
                    if reference
                    else "",
                    "CPU / HF 1 thread": fmt(result["child_cpu_s"] / reference["child_cpu_s"]) + "x"
                    if reference
                    else "",
                },
            )
        )
    return table


def speedup_rows(rows: List[Tuple[Contender, Result]]) -> List[Dict[str, Any]]:
    """Each variant's merge phase against ``incremental``'s on the same interpreter."""
    table = []
    for label in ("CPython", "CPython-compiled", "PyPy"):
        ours = [
            (c, r) for c, r in rows if c.label == label and c.spec["tool"] == "purebpe" and "error" not in r
        ]
        base = next((r for c, r in ours if c.spec["variant"] == "incremental"), None)
        table += [
            {
                "variant": c.name,
                "interpreter": label,
                "merges s": fmt(r["merge_s"]),
                "incremental merges s": fmt(base["merge_s"]),
                "speed-up": fmt(base["merge_s"] / r["merge_s"], 1) + "x",
            }
            for c, r in ours
            if base is not None and c.spec["variant"] != "incremental"
        ]
    return table


@script.register
def compare(args: argparse.Namespace) -> List[Table]:
    """Per corpus: the main table and, where ``incremental`` ran, the speed-up table."""
    vocab = 500 if args.quick else args.vocab
    plan = contenders(args)
    header = "; ".join(
        sorted(
            {
                f"{c.label}: {interpreter_label(c.interpreter)}"
                + (", purebpe compiled with mypyc (docs/compiled.md)" if c.compiled else "")
                for c in plan
            }
        )
    )
    tables = []
    for path in args.corpus:
        label = "pydoc_data.topics" if path.name == "pydoc_data.topics.txt" else path.name
        nursery = pypy_nursery()
        pypy_env = {"PYPY_GC_NURSERY": nursery} if nursery is not None else {}
        runs: Dict[int, List[Result]] = {i: [] for i in range(len(plan))}
        for round_ in range(args.rounds):
            for i, contender in enumerate(plan):
                try:
                    runs[i].append(
                        run_child(
                            "bench.compare_peers",
                            dict(contender.spec, corpus=str(path.resolve()), vocab=vocab),
                            python=contender.interpreter,
                            timeout=args.timeout,
                            compiled=contender.compiled,
                            env=pypy_env if contender.label == "PyPy" else None,
                        )
                    )
                except ChildFailed as failure:
                    print(failure, file=sys.stderr)
                    runs[i].append(failure.row())
                print(
                    f"  {label} round {round_ + 1}: {contender.name} ({contender.label})",
                    file=sys.stderr,
                    flush=True,
                )
        rows = split_peer_phases([(contender, summarize(runs[i])) for i, contender in enumerate(plan)])
        digests = {r["digest"] for c, r in rows if c.spec["tool"] == "purebpe" and "error" not in r}
        agree = len(digests) <= 1 and "varies" not in digests
        name = "_" + Path(label).stem.replace(".", "_").replace("-", "_")
        name += "" if args.pretokenizer == "gpt2" else "_" + args.pretokenizer
        pypy_note = nursery_note(nursery) + " " if any(c.label == "PyPy" for c in plan) else ""
        notes = f"{header}. {pypy_note}Median of {args.rounds} rounds, wall seconds. {PHASES_NOTE} " + (
            "All purebpe runs learned the same merges."
            if agree
            else "**The purebpe runs learned different merges.**"
        )
        title = f"{label}, vocab {vocab}, {args.pretokenizer}: purebpe and its peers"
        tables.append(
            Table(main_rows(rows), suffix=name, interpreter="all", title=title, notes=notes, ok=agree)
        )
        speedups = speedup_rows(rows)
        if speedups:
            tables.append(
                Table(
                    speedups,
                    suffix=name + "_vs_incremental",
                    interpreter="all",
                    notes=notes,
                    title=f"{label}, vocab {vocab}: merge phase vs incremental",
                )
            )
    return tables


if __name__ == "__main__":
    sys.exit(script.main())
