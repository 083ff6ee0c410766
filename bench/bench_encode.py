"""Encode throughput (MB/s of UTF-8 input) of purebpe vs tiktoken and HF tokenizers.

Run from the repository root with CPython (which has the peers)::

    python -m bench.bench_encode --pypy /work/pypy-venv/bin/python   # purebpe on PyPy too
    python -m bench.bench_encode --pypy none                         # CPython only

Two vocabularies, the same text, the same ids (checked before timing):

* ``purebpe-10k``: purebpe trains a 10 000-token vocab (``<|endoftext|>`` special) on the
  corpus once (cached in ``--workdir``) and exports it; tiktoken reads the exported
  ``tokenizer.tiktoken`` (+ sidecar), HF ``tokenizers`` the exported ``tokenizer.json``;
* ``gpt2``: GPT-2's own ``vocab.json``/``merges.txt`` (id 0 is ``!``): purebpe via
  ``Tokenizer.from_files``, tiktoken built offline from them (rank = id, tiktoken's
  ``r50k`` pattern), HF via ``models.BPE.from_file`` with a ByteLevel pre-tokenizer.

Each encoder gets the corpus in pieces of about 1 MiB cut at line ends (``encode`` on
each, special tokens allowed). *cold* is the first pass of a fresh tokenizer (empty
word cache; on PyPy, JIT warm-up included); *warm* is the best of ``--rounds`` further
passes. Times are the process's CPU time, which other jobs on a busy machine disturb less
than wall time; every encoder here runs on one thread (``RAYON_NUM_THREADS=1``;
tiktoken's ``encode`` is single-threaded). The purebpe side is also run on PyPy in a
child process (no peers there), and its figures are compared with the CPython peers'
figures from this same run. ``--profile`` adds where purebpe's time goes.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable, Dict, List

os.environ.setdefault("RAYON_NUM_THREADS", "1")  # before tokenizers is imported
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import purebpe  # noqa: E402
from purebpe import Tokenizer  # noqa: E402
from purebpe.formats.tiktoken_format import tiktoken_encoding  # noqa: E402
from purebpe.tokenizer import ENGINE  # noqa: E402

from ._harness import (  # noqa: E402
    Script,
    Table,
    chunks_of,
    corpora_dir,
    digest,
    interpreter_label,
    interpreter_name,
    measure,
    pretokenizer_engine,
    pretokenizer_of,
    run_child,
    special_splitter,
    word_cache_of,
)
from .peer_encoders import gpt2_hf, gpt2_tiktoken  # noqa: E402

EOT = "<|endoftext|>"
VOCABS = ("purebpe-10k", "gpt2")
Encode = Callable[[str], List[int]]

script = Script("bench_encode", __doc__, corpora=["en-kjv-fortunes-5m.txt"], interpreters=True)
script.option("--vocab-size", type=int, default=10_000)
script.option("--workdir", default=str(Path(tempfile.gettempdir()) / "purebpe-bench-encode"))
script.option("--profile", action="store_true", help="also time each stage of purebpe's encode")


def ensure_model(corpus: Path, vocab_size: int, workdir: Path) -> Path:
    """purebpe's model of ``corpus`` (trained once, cached), exported to tiktoken and HF."""
    directory = workdir / f"{corpus.stem}-{corpus.stat().st_size}-{vocab_size}"
    if not (directory / "purebpe.json").exists():
        print(f"training a {vocab_size} vocab on {corpus.name} (cached in {directory}) ...", file=sys.stderr)
        model = purebpe.train(corpus, vocab_size, [EOT], progress=True)
        for format in ("tiktoken", "hf", "purebpe"):  # purebpe.json last: it marks completion
            model.save(directory, format)
    return directory


def gpt2_file(name: str) -> Path:
    return corpora_dir() / f"gpt2-{name}"


def purebpe_encoder(vocab: str, model_dir: Path) -> Tokenizer:
    if vocab == "gpt2":
        return Tokenizer.from_files(gpt2_file("vocab.json"), gpt2_file("merges.txt"))
    return purebpe.load(model_dir / "purebpe.json").tokenizer()


def peer_encoders(vocab: str, model_dir: Path) -> Dict[str, Encode]:
    import tokenizers

    if vocab == "gpt2":
        encoding, hf = (
            gpt2_tiktoken(gpt2_file("vocab.json")),
            gpt2_hf(gpt2_file("vocab.json"), gpt2_file("merges.txt")),
        )
    else:
        encoding = tiktoken_encoding(model_dir, "purebpe-10k")
        hf = tokenizers.Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    return {
        "tiktoken": lambda text: encoding.encode(text, allowed_special="all"),
        "HF tokenizers": lambda text: hf.encode(text, add_special_tokens=False).ids,
    }


def time_encoder(encode: Encode, chunks: List[str], rounds: int) -> Dict[str, Any]:
    """CPU seconds of the cold pass and of the best warm one, and the ids' digest."""
    timing = measure(lambda: [i for chunk in chunks for i in encode(chunk)], rounds)
    return {
        "cold": timing.cold_cpu,
        "warm": timing.best_cpu,
        "ids": len(timing.value),
        "digest": digest(timing.value),
    }


def profile(tok: Tokenizer, chunks: List[str], rounds: int) -> Dict[str, float]:
    """CPU seconds per pass (best of ``rounds``) of each stage of a warm ``encode``."""
    split_specials, pretokenize, cache = special_splitter(tok), pretokenizer_of(tok), word_cache_of(tok)
    pieces = [p for c in chunks for p, special in split_specials(c) if not special]
    words = [w for p in pieces for w in pretokenize(p)]
    for chunk in chunks:
        tok.encode(chunk)  # fill the cache

    def lookups() -> None:
        out: List[int] = []
        get = cache.get
        for word in words:
            out += get(word)  # type: ignore[operator]

    runs = {
        "encode (warm)": lambda: [tok.encode(c) for c in chunks],
        "split on special tokens": lambda: [split_specials(c) for c in chunks],
        f"pre-tokenize ({ENGINE})": lambda: [pretokenize(p) for p in pieces],
        "word cache lookups + id list": lookups,
    }
    seconds = {stage: measure(run, rounds, cold=False).best_cpu for stage, run in runs.items()}
    return dict(seconds, **{"distinct words": float(len(set(words)))})


@script.child
def run_purebpe(spec: Dict[str, Any]) -> Dict[str, Any]:
    """purebpe's figures for every vocab, with the default engine and the scanner."""
    chunks = chunks_of(Path(spec["corpus"]).read_text(encoding="utf-8"))
    model_dir, rounds = Path(spec["model_dir"]), spec["rounds"]
    results: Dict[str, Any] = {}
    for vocab in VOCABS:
        results[vocab] = time_encoder(purebpe_encoder(vocab, model_dir).encode, chunks, rounds)
        results[vocab]["engine"] = ENGINE  # this build's (the compiled one's is the scanner)
        if ENGINE != "scanner":  # also the pure-Python scanner, what runs without `regex`
            with pretokenizer_engine("scanner"):
                results[vocab]["scanner"] = time_encoder(
                    purebpe_encoder(vocab, model_dir).encode, chunks, rounds
                )
        if spec["profile"]:
            results[vocab]["profile"] = profile(purebpe_encoder(vocab, model_dir), chunks, rounds)
    return results


@script.register
def encode_throughput(args: argparse.Namespace) -> Table:
    corpus = args.corpus[0]
    text = corpus.read_text(encoding="utf-8")
    size_mb = len(text.encode("utf-8")) / 1e6
    chunks = chunks_of(text)
    vocab_size = 1000 if args.quick else args.vocab_size
    spec = {
        "corpus": str(corpus.resolve()),
        "model_dir": str(ensure_model(corpus, vocab_size, Path(args.workdir)).resolve()),
        "rounds": args.rounds,
        "profile": args.profile,
    }
    ours = run_purebpe(spec)
    theirs: Dict[str, Any] = {}
    if args.pypy:
        print(f"running the purebpe side on {args.pypy} ...", file=sys.stderr)
        theirs = run_child("bench.bench_encode", spec, python=args.pypy)
    compiled: Dict[str, Any] = {}
    if args.compiled:
        print("running the purebpe side on the compiled build ...", file=sys.stderr)
        compiled = run_child("bench.bench_encode", spec, python=args.python, compiled=args.compiled)
    here, notes = interpreter_name(), []
    rows = []

    def row(vocab: str, name: str, where: str, figures: Dict[str, Any], base: float) -> None:
        rows.append(
            {
                "vocab / encoder / interpreter": f"{vocab} / {name} / {where}",
                "cold MB/s": round(size_mb / figures["cold"], 1),
                "warm MB/s": round(size_mb / figures["warm"], 1),
                "warm vs tiktoken (ratio)": round(base / figures["warm"], 2),
            }
        )

    for vocab in VOCABS:
        peers = {
            name: time_encoder(encode, chunks, args.rounds)
            for name, encode in peer_encoders(vocab, Path(spec["model_dir"])).items()
        }
        notes += [
            f"**{vocab}: {name} ids differ from purebpe's!**"
            for name, figures in peers.items()
            if figures["digest"] != ours[vocab]["digest"]
        ]
        if vocab in theirs and theirs[vocab]["digest"] != ours[vocab]["digest"]:
            notes.append(f"**{vocab}: purebpe's ids on PyPy differ from CPython's!**")
        if vocab in compiled and compiled[vocab]["digest"] != ours[vocab]["digest"]:
            notes.append(f"**{vocab}: purebpe's ids on the compiled build differ from pure CPython's!**")
        base = peers["tiktoken"]["warm"]
        for name, figures in peers.items():
            row(vocab, name, here, figures, base)
        row(vocab, f"purebpe ({ENGINE})", here, ours[vocab], base)
        if "scanner" in ours[vocab]:
            row(vocab, "purebpe (scanner)", here, ours[vocab]["scanner"], base)
        if vocab in compiled:
            row(vocab, f"purebpe ({compiled[vocab]['engine']})", here + " compiled", compiled[vocab], base)
            if "scanner" in compiled[vocab]:
                row(vocab, "purebpe (scanner)", here + " compiled", compiled[vocab]["scanner"], base)
        if vocab in theirs:
            row(vocab, "purebpe (scanner)", interpreter_label(args.pypy), theirs[vocab], base)
    if args.profile:
        for label, results in ((here, ours), ("PyPy", theirs)):
            for vocab, figures in results.items():
                if isinstance(figures, dict) and "profile" in figures:
                    stages = figures["profile"]
                    print(
                        f"\npurebpe on {label}, {vocab}: CPU seconds per pass "
                        f"(distinct words: {int(stages.pop('distinct words')):,})",
                        file=sys.stderr,
                    )
                    for stage, seconds in stages.items():
                        print(f"  {stage:32} {seconds:7.3f} s", file=sys.stderr)
    return Table(
        rows,
        interpreter="all" if theirs or compiled else None,  # the children's figures: this same run
        title=f"Encode throughput on {corpus.name} ({size_mb:.1f} MB), purebpe vs tiktoken and HF tokenizers",
        notes=f"~1 MiB pieces, process CPU time, warm = best of {args.rounds}; ratio = warm throughput / "
        "tiktoken's on CPython in the same run. ids identical across encoders: "
        + ("yes" if not notes else "NO")
        + "".join(" " + note for note in notes),
        ok=not notes,
    )


if __name__ == "__main__":
    sys.exit(script.main())
