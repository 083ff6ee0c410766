#!/usr/bin/env python3
"""Encode throughput (MB/s of UTF-8 input) of purebpe vs tiktoken and HF tokenizers.

Run from the repository root with CPython (which has the peers)::

    python3 bench/bench_encode.py                     # also runs purebpe on PyPy if found
    python3 bench/bench_encode.py --pypy none         # CPython only

Two vocabularies, the same text, the same ids (checked before timing):

* ``purebpe-10k``: purebpe trains a 10 000-token vocab (``<|endoftext|>`` special) on the
  corpus once (cached in ``--workdir``) and exports it; tiktoken reads the exported
  ``tokenizer.tiktoken`` (+ sidecar), HF ``tokenizers`` the exported ``tokenizer.json``;
* ``gpt2``: GPT-2's own ``vocab.json``/``merges.txt`` (id 0 is ``!``): purebpe via
  ``Tokenizer.from_files``, tiktoken built offline from them (rank = id, tiktoken's
  ``r50k`` pattern), HF via ``models.BPE.from_file`` with a ByteLevel pre-tokenizer.

Each encoder gets the corpus in pieces of about 1 MiB cut at line ends (``encode`` on
each, special tokens allowed). *cold* is the first pass of a fresh tokenizer (empty
word cache; on PyPy, JIT warm-up included); *warm* is the best of ``--repeat`` further
passes. Times are the process's CPU time (``time.process_time``), which other jobs on a
busy machine disturb less than wall time; every encoder here runs on one thread. Peers
run single-threaded (``RAYON_NUM_THREADS=1``; tiktoken's ``encode`` is
single-threaded). The purebpe side is also run on PyPy in a subprocess (no peers there),
and its figures are compared with the CPython peers' figures from this same run.
``--profile`` adds where purebpe's time goes.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple
from unittest import mock

os.environ.setdefault("RAYON_NUM_THREADS", "1")  # before tokenizers is imported
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import purebpe  # noqa: E402
import purebpe.tokenizer as tokenizer_module  # noqa: E402
from purebpe import Tokenizer  # noqa: E402
from purebpe.bytemap import decode_token  # noqa: E402
from purebpe.formats.tiktoken_format import tiktoken_encoding  # noqa: E402
from purebpe.pretokenize import PATTERNS  # noqa: E402
from purebpe.pretokenize import pretokenize  # noqa: E402
from purebpe.specials import split_keep_specials  # noqa: E402
from purebpe.tokenizer import ENGINE  # noqa: E402

sys.path.insert(0, str(ROOT / "bench"))
from bench_pretokenize import chunks_of  # noqa: E402  (~1 MiB pieces at line ends)

CORPORA = ROOT.parent / "shared" / "corpora"
EOT = "<|endoftext|>"
DEFAULT_PYPY = "/tmp/pypyenv/bin/python"
Encode = Callable[[str], List[int]]


def ensure_model(corpus: Path, vocab_size: int, workdir: Path) -> Path:
    """purebpe's model of ``corpus`` (trained once, cached), exported to tiktoken and HF."""
    directory = workdir / f"{corpus.stem}-{vocab_size}"
    if not (directory / "purebpe.json").exists():
        print(f"training a {vocab_size} vocab on {corpus.name} (cached in {directory}) ...", file=sys.stderr)
        model = purebpe.train(corpus, vocab_size, [EOT], progress=True)
        for format in ("tiktoken", "hf", "purebpe"):  # purebpe.json last: it marks completion
            model.save(directory, format)
    return directory


def purebpe_encoder(vocab: str, model_dir: Path) -> Tokenizer:
    if vocab == "gpt2":
        return Tokenizer.from_files(CORPORA / "gpt2-vocab.json", CORPORA / "gpt2-merges.txt")
    return purebpe.load(model_dir / "purebpe.json").tokenizer()


def peer_encoders(vocab: str, model_dir: Path) -> Dict[str, Encode]:
    import tiktoken
    import tokenizers

    if vocab == "gpt2":
        mapping = json.loads((CORPORA / "gpt2-vocab.json").read_text(encoding="utf-8"))
        ranks = {decode_token(key): tid for key, tid in mapping.items() if key != EOT}
        encoding = tiktoken.Encoding(
            name="gpt2-local", pat_str=PATTERNS["gpt2"], mergeable_ranks=ranks, special_tokens={EOT: 50256}
        )
        hf = tokenizers.Tokenizer(
            tokenizers.models.BPE.from_file(str(CORPORA / "gpt2-vocab.json"), str(CORPORA / "gpt2-merges.txt"))
        )
        hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
        hf.add_special_tokens([EOT])
    else:
        encoding = tiktoken_encoding(model_dir, "purebpe-10k")
        hf = tokenizers.Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    return {
        "tiktoken": lambda text: encoding.encode(text, allowed_special="all"),
        "HF tokenizers": lambda text: hf.encode(text, add_special_tokens=False).ids,
    }


def digest(ids: List[int]) -> str:
    """A fingerprint of an id sequence that is the same on every interpreter."""
    return hashlib.sha256(" ".join(map(str, ids)).encode("ascii")).hexdigest()


def time_encoder(make: Callable[[], Encode], chunks: List[str], repeat: int) -> Tuple[float, float, List[int]]:
    """(cold seconds, best warm seconds, ids) for one fresh encoder over all chunks."""
    encode = make()
    start = time.process_time()
    ids = [i for chunk in chunks for i in encode(chunk)]
    cold = time.process_time() - start
    warm = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for chunk in chunks:
            encode(chunk)
        warm = min(warm, time.process_time() - start)
    return cold, warm, ids


def profile(tok: Tokenizer, chunks: List[str], repeat: int) -> Dict[str, float]:
    """Seconds per pass (best of ``repeat``) of each stage of a warm ``encode``."""
    pattern = tok._pattern("all")
    pieces = [p for c in chunks for p, special in split_keep_specials(c, pattern) if not special]

    def best(run: Callable[[], object]) -> float:
        seconds = float("inf")
        for _ in range(repeat):
            start = time.process_time()
            run()
            seconds = min(seconds, time.process_time() - start)
        return seconds

    cache = tok._cache
    words = [w for p in pieces for w in pretokenize(p, ENGINE)]

    def lookups() -> None:
        out: List[int] = []
        get = cache.get
        for word in words:
            out += get(word)  # type: ignore[operator]

    for chunk in chunks:
        tok.encode(chunk)  # fill the cache
    return {
        "encode (warm)": best(lambda: [tok.encode(c) for c in chunks]),
        "split on special tokens": best(lambda: [split_keep_specials(c, pattern) for c in chunks]),
        f"pre-tokenize ({ENGINE})": best(lambda: [pretokenize(p, ENGINE) for p in pieces]),
        "word cache lookups + id list": best(lookups),
        "distinct words": float(len(set(words))),
    }


def run_purebpe(vocabs: List[str], model_dir: Path, chunks: List[str], repeat: int, want_profile: bool) -> Dict[str, Any]:
    results: Dict[str, Any] = {}
    for vocab in vocabs:
        cold, warm, ids = time_encoder(lambda: purebpe_encoder(vocab, model_dir).encode, chunks, repeat)
        results[vocab] = {"cold": cold, "warm": warm, "ids": len(ids), "digest": digest(ids)}
        if ENGINE != "scanner":  # also the pure-Python scanner, what runs without `regex`
            with mock.patch.object(tokenizer_module, "ENGINE", "scanner"):
                cold, warm, _ = time_encoder(lambda: purebpe_encoder(vocab, model_dir).encode, chunks, repeat)
            results[vocab]["scanner"] = {"cold": cold, "warm": warm}
        if want_profile:
            results[vocab]["profile"] = profile(purebpe_encoder(vocab, model_dir), chunks, repeat)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", default=str(CORPORA / "en-kjv-fortunes-5m.txt"))
    parser.add_argument("--vocab-size", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", default=str(Path(tempfile.gettempdir()) / "purebpe-bench-encode"))
    parser.add_argument("--pypy", default=DEFAULT_PYPY, help="PyPy to run the purebpe side on, or 'none'")
    parser.add_argument("--profile", action="store_true", help="also time each stage of purebpe's encode")
    parser.add_argument("--purebpe-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    corpus = Path(args.corpus)
    text = corpus.read_text(encoding="utf-8")
    size_mb = len(text.encode("utf-8")) / 1e6
    chunks = chunks_of(text)
    vocabs = ["purebpe-10k", "gpt2"]
    model_dir = ensure_model(corpus, args.vocab_size, Path(args.workdir))
    if args.purebpe_only:  # the PyPy subprocess: report purebpe's figures as JSON
        print(json.dumps(run_purebpe(vocabs, model_dir, chunks, args.repeat, args.profile)))
        return

    interpreter = f"{platform.python_implementation()} {platform.python_version()}"
    rows: List[Tuple[str, str, str, float, float, Optional[float]]] = []
    notes: List[str] = []
    ours = run_purebpe(vocabs, model_dir, chunks, args.repeat, args.profile)
    theirs: Dict[str, Any] = {}
    if args.pypy != "none" and Path(args.pypy).exists():
        print(f"running the purebpe side on {args.pypy} ...", file=sys.stderr)
        command = [args.pypy, __file__, "--purebpe-only", "--corpus", str(corpus), "--repeat", str(args.repeat),
                   "--vocab-size", str(args.vocab_size), "--workdir", args.workdir]
        command += ["--profile"] if args.profile else []
        done = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        if done.returncode != 0:
            print(done.stderr, file=sys.stderr)
            raise SystemExit("the PyPy run failed")
        theirs = json.loads(done.stdout.strip().splitlines()[-1])
        pypy_version = subprocess.run([args.pypy, "-c", "import platform; print(platform.python_version())"],
                                      capture_output=True, text=True).stdout.strip()
    for vocab in vocabs:
        peers = {}
        for name, encode in peer_encoders(vocab, model_dir).items():
            cold, warm, ids = time_encoder(lambda: encode, chunks, args.repeat)
            peers[name] = (cold, warm)
            if digest(ids) != ours[vocab]["digest"]:
                notes.append(f"**{vocab}: {name} ids differ from purebpe's!**")
        if vocab in theirs and theirs[vocab]["digest"] != ours[vocab]["digest"]:
            notes.append(f"**{vocab}: purebpe's ids on PyPy differ from CPython's!**")
        base = peers["tiktoken"][1]
        for name, (cold, warm) in peers.items():
            rows.append((vocab, name, interpreter, size_mb / cold, size_mb / warm, base / warm))
        rows.append((vocab, f"purebpe ({ENGINE})", interpreter, size_mb / ours[vocab]["cold"],
                     size_mb / ours[vocab]["warm"], base / ours[vocab]["warm"]))
        if "scanner" in ours[vocab]:
            scanner = ours[vocab]["scanner"]
            rows.append((vocab, "purebpe (scanner)", interpreter, size_mb / scanner["cold"],
                         size_mb / scanner["warm"], base / scanner["warm"]))
        if vocab in theirs:
            rows.append((vocab, "purebpe (scanner)", f"PyPy {pypy_version}", size_mb / theirs[vocab]["cold"],
                         size_mb / theirs[vocab]["warm"], base / theirs[vocab]["warm"]))

    print(f"\n{corpus.name} ({size_mb:.1f} MB), encode in ~1 MiB pieces, MB/s of UTF-8 input; "
          f"warm = best of {args.repeat}; ratio = warm throughput / tiktoken's warm throughput "
          f"(CPython, this run); purebpe (engine) names the pre-tokenizer engine\n")
    print("| vocab | encoder | interpreter | cold MB/s | warm MB/s | vs tiktoken |")
    print("|---|---|---|---:|---:|---:|")
    for vocab, name, where, cold_rate, warm_rate, ratio in rows:
        print(f"| {vocab} | {name} | {where} | {cold_rate:.1f} | {warm_rate:.1f} | {ratio:.0%} |")
    print("\nids identical across encoders: " + ("yes" if not notes else "NO"))
    for note in notes:
        print(note)
    from _results import record  # bench/ is on sys.path (see above)

    record(
        "bench_encode",
        [
            {"vocab / encoder / interpreter": f"{vocab} / {name} / {where}", "cold MB/s": round(cold_rate, 1),
             "warm MB/s": round(warm_rate, 1), "warm vs tiktoken (ratio)": round(ratio, 2)}
            for vocab, name, where, cold_rate, warm_rate, ratio in rows
        ],
        interpreter="all" if theirs else None,  # PyPy's figures come from this same run
        title=f"Encode throughput on {corpus.name} ({size_mb:.1f} MB), purebpe vs tiktoken and HF tokenizers",
        notes=f"~1 MiB pieces, process CPU time, warm = best of {args.repeat}; ratio = warm throughput / "
        "tiktoken's on CPython in the same run. ids identical across encoders: " + ("yes" if not notes else "NO"),
    )
    if args.profile:
        for label, results in (("CPython", ours), ("PyPy", theirs)):
            for vocab, figures in results.items():
                stages = figures["profile"]
                print(f"\npurebpe on {label}, {vocab}: seconds per pass (distinct words: {int(stages.pop('distinct words')):,})")
                for stage, seconds in stages.items():
                    print(f"  {stage:32} {seconds:7.3f} s")


if __name__ == "__main__":
    main()
