#!/usr/bin/env python3
"""Train purebpe (each variant, on CPython and PyPy) and HF ``tokenizers`` side by side.

Every contender trains on the same corpus to the same vocabulary size, with the special
token ``<|endoftext|>``, in a fresh subprocess of its own (the script re-invokes itself with
``--child``), so that its peak RSS (``ru_maxrss``) is its own; the runs are interleaved
round by round so that a noisy machine slows every contender alike, and the median wall
time of the rounds is reported. The contenders:

* ``purebpe VARIANT`` on each interpreter found: counting (``purebpe.count``) and merging
  (``purebpe.train_from_counts``) timed separately;
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

    python3 bench/compare_peers.py                              # pydoc + ../shared/corpora/*.txt
    python3 bench/compare_peers.py --corpus ../shared/corpora/en-gcide-18m.txt \\
        --vocab 10000 --repeat 2 --pypy /tmp/pypyenv/bin/python --markdown /tmp/table.md
    python3 bench/compare_peers.py --corpus ../shared/corpora/en-kjv-fortunes-5m.txt \\
        --variants incremental,heap,bucket        # the merge-phase speed-up over incremental

Corpora: ``pydoc`` (the ``pydoc_data.topics`` text, always there) and every ``*.txt`` of
``../shared/corpora`` when present, unless ``--corpus`` names others.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SHARED = ROOT.parent / "shared" / "corpora"
SPECIAL = "<|endoftext|>"
DEFAULT_VARIANTS = "heap,sorted,bucket"

Result = Dict[str, Any]
PHASES_NOTE = (
    "purebpe's count and merge phases are timed inside its run (`purebpe.count`, then "
    "`purebpe.train_from_counts`); a peer's count phase is a run of it that learns no "
    "merge, and its merge phase the rest of its full run (a difference of two runs: where "
    "the merge phase is short against the noise of counting, it can come out near zero, or "
    "below).\n\n"
)


# --------------------------------------------------------------------------------------
# Child side: one training run, reported as one JSON line on stdout.
# --------------------------------------------------------------------------------------
def child(spec: Dict[str, Any]) -> None:
    pretokenizer = spec.get("pretokenizer", "gpt2")
    if spec.get("count_only"):  # a peer's count phase: the same run, learning no merge
        spec = dict(spec, vocab=256 + (spec["tool"] == "tokenizers"))  # (HF: + its special)
    if spec["tool"] in ("tokenizers", "rustbpe"):
        # Must be set before the Rust side starts its thread pool.
        os.environ["RAYON_NUM_THREADS"] = str(spec["threads"])
        if spec["threads"] == 1:
            os.environ["TOKENIZERS_PARALLELISM"] = "false"
        train = _train_tokenizers if spec["tool"] == "tokenizers" else _train_rustbpe
        result = train(spec["corpus"], spec["vocab"], pretokenizer)
    elif spec["tool"] == "bpeasy":
        result = _train_bpeasy(spec["corpus"], spec["vocab"])
    else:
        result = _train_purebpe(
            spec["corpus"], spec["vocab"], spec["variant"], pretokenizer, spec.get("processes")
        )
    import resource

    result["peak_rss_mb"] = _peak_rss_mb()
    # The whole child, start-up and reading included, and its counting processes.
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    result["cpu_s"] = time.process_time() + children.ru_utime + children.ru_stime
    print(json.dumps(result))


def _train_purebpe(
    corpus: str, vocab: int, variant: str, pretokenizer: str, processes: Optional[int]
) -> Result:
    sys.path.insert(0, str(ROOT))
    import purebpe

    start = time.perf_counter()
    counts = purebpe.count(corpus, [SPECIAL], pretokenizer=pretokenizer, processes=processes)
    counted = time.perf_counter()
    model = purebpe.train_from_counts(counts, vocab, variant=variant)
    done = time.perf_counter()
    digest = hashlib.sha256(repr(model.merges).encode("utf-8")).hexdigest()[:16]
    return {
        "count_s": counted - start,
        "merge_s": done - counted,
        "total_s": done - start,
        "merges": len(model.merges),
        "digest": digest,
    }


def _train_tokenizers(corpus: str, vocab: int, pretokenizer: str) -> Result:
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    start = time.perf_counter()
    tokenizer = Tokenizer(models.BPE())
    if pretokenizer == "gpt2":
        tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    else:
        sys.path.insert(0, str(ROOT))
        from purebpe.formats.hf import hf_regex

        tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(hf_regex(pretokenizer)), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    trainer = trainers.BpeTrainer(
        vocab_size=vocab,
        special_tokens=[SPECIAL],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train([corpus], trainer)
    done = time.perf_counter()
    merges = len(json.loads(tokenizer.to_str())["model"]["merges"])
    return {"count_s": None, "merge_s": None, "total_s": done - start, "merges": merges}


def _train_rustbpe(corpus: str, vocab: int, pretokenizer: str) -> Result:
    import rustbpe

    sys.path.insert(0, str(ROOT))
    from purebpe.pretokenize import GPT2_PATTERN

    pattern = {"gpt2": GPT2_PATTERN, "cl100k": None}[pretokenizer]  # None: its default, GPT-4's
    start = time.perf_counter()
    tokenizer = rustbpe.Tokenizer()
    with open(corpus, encoding="utf-8") as lines:
        tokenizer.train_from_iterator(lines, vocab, pattern=pattern)
    done = time.perf_counter()
    return {"count_s": None, "merge_s": None, "total_s": done - start, "merges": vocab - 256}


def _train_bpeasy(corpus: str, vocab: int) -> Result:
    import bpeasy

    sys.path.insert(0, str(ROOT))
    from purebpe.pretokenize import GPT2_PATTERN

    start = time.perf_counter()
    with open(corpus, encoding="utf-8") as lines:
        ranks = bpeasy.train_bpe(lines, GPT2_PATTERN, 128, vocab)
    done = time.perf_counter()
    return {"count_s": None, "merge_s": None, "total_s": done - start, "merges": len(ranks) - 256}


def _peak_rss_mb() -> float:
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20) if sys.platform == "darwin" else peak / 1024  # bytes vs KiB


# --------------------------------------------------------------------------------------
# Parent side: plan the runs, interleave them, tabulate.
# --------------------------------------------------------------------------------------
class Contender:
    def __init__(self, name: str, interpreter: str, label: str, spec: Dict[str, Any]) -> None:
        self.name, self.interpreter, self.label, self.spec = name, interpreter, label, spec

    def run(self, corpus: str, vocab: int, timeout: float) -> Result:
        spec = dict(self.spec, corpus=corpus, vocab=vocab)
        env = dict(
            os.environ,
            PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        )
        try:
            proc = subprocess.run(
                [self.interpreter, str(Path(__file__).resolve()), "--child", json.dumps(spec)],
                capture_output=True,
                text=True,
                env=env,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            return {"error": f"over {timeout:.0f} s"}
        if proc.returncode != 0:
            lines = proc.stderr.strip().splitlines() or ["no output"]
            return {"error": lines[-1][:80]}
        result: Result = json.loads(proc.stdout.strip().splitlines()[-1])
        return result


def find_pypy(given: Optional[str]) -> Optional[str]:
    if given:
        return given if given != "none" else None
    return os.environ.get("PUREBPE_PYPY") or shutil.which("pypy3")


def importable(python: str, module: str) -> bool:
    probe = subprocess.run([python, "-c", f"import {module}"], capture_output=True)
    return probe.returncode == 0


def interpreter_name(python: str) -> str:
    probe = subprocess.run(
        [
            python,
            "-c",
            "import platform; print(platform.python_implementation(), platform.python_version())",
        ],
        capture_output=True,
        text=True,
    )
    return probe.stdout.strip() or python


def contenders(args: argparse.Namespace) -> List[Contender]:
    pythons = [("CPython", args.python)]
    pypy = find_pypy(args.pypy)
    if pypy:
        pythons.append(("PyPy", pypy))
    found: List[Contender] = []
    for implementation, python in pythons:
        for variant in args.variants.split(","):
            for processes in map(int, args.processes.split(",")):
                found.append(
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
                    )
                )
    peers = [("tokenizers", "tokenizers")]
    if args.pretokenizer in ("gpt2", "cl100k"):
        peers.append(("rustbpe", "rustbpe"))
    if args.pretokenizer == "gpt2" and args.bpeasy:
        if importable(args.python, "bpeasy"):
            found.append(Contender("bpeasy", args.python, "CPython", {"tool": "bpeasy"}))
        else:
            print(f"(bpeasy not importable by {args.python}: no bpeasy row)", file=sys.stderr)
    for tool, module in peers:
        if not importable(args.python, module):
            print(f"({module} not importable by {args.python}: no {tool} rows)", file=sys.stderr)
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
    found += [
        Contender(c.name, c.interpreter, c.label, dict(c.spec, count_only=True))
        for c in found
        if c.spec["tool"] != "purebpe"
    ]
    return found


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


def corpora(names: Sequence[str], scratch: Path) -> List[Tuple[str, str]]:
    """``(label, path)`` of each corpus; ``pydoc`` is written to a file first."""
    if not names:
        names = ["pydoc"] + sorted(str(p) for p in SHARED.glob("*.txt"))
    found = []
    for name in names:
        if name == "pydoc":
            sys.path.insert(0, str(ROOT))
            from purebpe.corpus import default_corpus

            path = scratch / "pydoc_data.topics.txt"
            path.write_text("\n\n".join(default_corpus()), encoding="utf-8")
            found.append(("pydoc_data.topics", str(path)))
        elif Path(name).is_file():
            found.append((Path(name).name, name))
        else:
            print(f"(skipping {name}: not found)", file=sys.stderr)
    return found


def median(values: List[float]) -> float:
    return statistics.median(values)


def fmt(value: Optional[float], digits: int = 2) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def summarize(runs: List[Result]) -> Result:
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return {"error": runs[0]["error"] if runs else "not run"}
    summary: Result = {"rounds": len(ok), "merges": ok[0]["merges"], "digest": ok[0].get("digest")}
    for key in ("count_s", "merge_s", "total_s", "cpu_s", "peak_rss_mb"):
        values = [r[key] for r in ok if r.get(key) is not None]
        summary[key] = median(values) if values else None
    if len({r.get("digest") for r in ok}) > 1:
        summary["digest"] = "varies"
    return summary


def tables(
    corpus: str, vocab: int, rows: List[Tuple[Contender, Result]]
) -> Tuple[str, Optional[str], bool]:
    """For one corpus: the main table, the speed-up table (or None), whether purebpe agreed."""
    reference = next(
        (
            r
            for c, r in rows
            if c.spec["tool"] == "tokenizers" and c.spec.get("threads") == 1 and "error" not in r
        ),
        None,
    )
    lines = [
        "| contender | interpreter | count s | merges s | total s | CPU s | peak RSS MB "
        "| total / HF 1 thread |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for contender, result in rows:
        if "error" in result:
            lines.append(f"| {contender.name} | {contender.label} | | | skipped: {result['error']} | | | |")
            continue
        ratio = fmt(result["total_s"] / reference["total_s"]) + "x" if reference else ""
        lines.append(
            f"| {contender.name} | {contender.label} | {fmt(result['count_s'])} | "
            f"{fmt(result['merge_s'])} | {fmt(result['total_s'])} | {fmt(result['cpu_s'])} | "
            f"{fmt(result['peak_rss_mb'], 0)} | {ratio} |"
        )
    digests = {r["digest"] for c, r in rows if c.spec["tool"] == "purebpe" and "error" not in r}
    agree = len(digests) <= 1 and "varies" not in digests
    speedups = []
    for label in ("CPython", "PyPy"):
        ours = [(c, r) for c, r in rows if c.label == label and c.spec["tool"] == "purebpe"]
        ours = [(c, r) for c, r in ours if "error" not in r]
        base = next((r for c, r in ours if c.spec["variant"] == "incremental"), None)
        if base is None:
            continue
        for contender, result in ours:
            if contender.spec["variant"] != "incremental":
                speedups.append(
                    f"| {contender.name} | {label} | {fmt(result['merge_s'])} | "
                    f"{fmt(base['merge_s'])} | {fmt(base['merge_s'] / result['merge_s'], 1)}x |"
                )
    speedup_table = None
    if speedups:
        speedup_table = "\n".join(
            [
                "| variant | interpreter | merges s | incremental merges s | speed-up |",
                "|---|---|---:|---:|---:|",
            ]
            + speedups
        )
    return "\n".join(lines), speedup_table, agree


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the comparison; returns 1 when the purebpe runs learned different merges."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument(
        "--corpus", action="append", default=[], help="a text file, or 'pydoc' (repeatable)"
    )
    parser.add_argument("--vocab", type=int, default=10_000)
    parser.add_argument(
        "--processes", default="1", help="comma-separated counting processes for purebpe (default 1)"
    )
    parser.add_argument("--bpeasy", action="store_true", help="add bpeasy (gpt2 only)")
    parser.add_argument(
        "--pretokenizer", default="gpt2", choices=("gpt2", "cl100k", "o200k"),
        help="the pattern every contender splits with (default gpt2)",
    )
    parser.add_argument(
        "--variants", default=DEFAULT_VARIANTS, help=f"comma-separated (default {DEFAULT_VARIANTS})"
    )
    parser.add_argument(
        "--python",
        default=sys.executable if platform.python_implementation() == "CPython" else "python3",
    )
    parser.add_argument(
        "--pypy", help="PyPy interpreter (default: $PUREBPE_PYPY or pypy3 on PATH; 'none' to skip)"
    )
    parser.add_argument("--repeat", type=int, default=1, help="rounds; the median is reported")
    parser.add_argument(
        "--timeout", type=float, default=1800, help="seconds per run before it is given up"
    )
    parser.add_argument("--markdown", help="also write the tables to this file (atomically)")
    parser.add_argument(
        "--no-record",
        dest="record",
        action="store_false",
        help="do not save the tables into bench/results/results.json",
    )
    args = parser.parse_args(argv)
    if args.child:
        child(json.loads(args.child))
        return 0

    from tqdm import tqdm

    with tempfile.TemporaryDirectory() as scratch:
        plan = contenders(args)
        found = corpora(args.corpus, Path(scratch))
        header = (
            f"Measured {time.strftime('%Y-%m-%d')} on {os.cpu_count()} CPUs "
            f"(load average {os.getloadavg()[0]:.1f} at the start); "
            + ", ".join(sorted({f"{c.label}: {interpreter_name(c.interpreter)}" for c in plan}))
            + "\n\n"
        )
        out = [header]
        all_agree = True
        bar = tqdm(
            total=len(found) * len(plan) * args.repeat, desc="runs", unit="run", file=sys.stderr
        )
        for label, path in found:
            runs: Dict[int, List[Result]] = {i: [] for i in range(len(plan))}
            for _ in range(args.repeat):
                for i, contender in enumerate(plan):
                    bar.set_postfix_str(f"{label}: {contender.name} ({contender.label})")
                    runs[i].append(contender.run(path, args.vocab, args.timeout))
                    bar.update(1)
            rows = split_peer_phases(
                [(contender, summarize(runs[i])) for i, contender in enumerate(plan)]
            )
            main_table, speedup_table, agree = tables(label, args.vocab, rows)
            all_agree &= agree
            title = f"{label}, vocab {args.vocab}, {args.pretokenizer}: purebpe and its peers"
            text = f"**{title}** (median of {args.repeat} rounds, wall seconds)\n\n{main_table}\n\n"
            text += PHASES_NOTE
            text += (
                "All purebpe runs learned the same merges.\n"
                if agree
                else "**The purebpe runs learned different merges.**\n"
            )
            if speedup_table:
                text += f"\nMerge phase, speed-up over `incremental`:\n\n{speedup_table}\n"
            out.append(text + "\n")
            tqdm.write(text, file=sys.stdout)
            if args.record:
                from _results import record

                notes = header.strip() + " " + PHASES_NOTE.strip()
                notes += " One run per contender." if args.repeat == 1 else ""
                name = "compare_peers_" + Path(label).stem.replace(".", "_").replace("-", "_")
                if args.pretokenizer != "gpt2":
                    name += "_" + args.pretokenizer
                record(name, main_table, interpreter="all", title=title, notes=notes)
                if speedup_table:
                    record(
                        name + "_vs_incremental",
                        speedup_table,
                        interpreter="all",
                        title=f"{label}, vocab {args.vocab}: merge phase vs incremental",
                        notes=notes,
                    )
        bar.close()
    if args.markdown:
        sys.path.insert(0, str(ROOT))
        from purebpe._atomic import write_text

        write_text(args.markdown, "".join(out))
    return 0 if all_agree else 1


if __name__ == "__main__":
    sys.exit(main())
