"""The HF pipeline components the differential tests compare, and the texts they use.

Shared by ``scripts/record_hf_components.py`` (which records HF's answers into
``tests/data/hf_components.json`` so that interpreters without ``tokenizers`` replay them)
and the live Hypothesis tests.  Every component is built with ``tokenizers``' own Python
API, alone and in the combinations real models use, and serialized through
``Tokenizer.to_str()`` so what purebpe reads is exactly what HF writes.
"""

from __future__ import annotations

import json
import random
from typing import Any, Dict, List, Tuple

from purebpe.pretokenize import PATTERNS

LLAMA3 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
QWEN2 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)
DEEPSEEK = [
    r"\p{N}{1,3}",
    "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+",
    (
        "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
        "| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+"
    ),
]
CLIP = r"""<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""
BLOOM = " ?[^(\\s|[.,!?…。，、।۔،])]+"
BEHAVIORS = ["removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous"]

#: Texts every component is run on: real multilingual text, emoji and ZWJ sequences,
#: combining marks, CRLF, whitespace and digit runs, code, edge cases.
TEXTS: List[str] = [
    "",
    " ",
    "Hello world",
    " Hello  world ",
    "Hello, world! How's it going? I'm fine; we'll see. THEY'RE HERE'S",
    "Größenwahn: Übermäßig straße Fußgänger über Äpfel — 42 €.",
    "Съешь же ещё этих мягких французских булок, да выпей чаю. ПРИВЕТ Σίσυφος ΟΔΟΣ",
    "我们今天去公园散步，天气很好。北京2024年！",
    "日本語のテキスト：ひらがな、カタカナ、漢字。ｶﾀｶﾅ ＡＢＣ１２３",
    "한국어 텍스트입니다. 안녕하세요! 각 ᄀ ᅡ ᆨ",
    "emoji 😀👍🏽 family 👨\u200d👩\u200d👧\u200d👦 flag 🇩🇪 keycap 1\ufe0f\u20e3",
    "e\u0301 a\u0308 o\u0323\u0302 \u1e69 \u0071\u0307\u0323 ệ \u212b \u2126 ﬁ ǆ İstanbul",
    "line one\r\nline two\n\n\nthree\r\r\n\t tab",
    "spaces    and\u00a0nbsp\u3000ideographic \u2009thin  \u205f",
    "digits 1 12 123 1234 12345 ١٢٣ ½ ① ²",
    "def f(x):\n    return x**2 + 1  # comment\n\tif (a && b) { c[i] = -1; }",
    "   leading and trailing   ",
    "'s 'S 'LL don't WON'T",
    "▁already▁has▁meta ▁space",
    "<0x41>Ġbyte chars ĠĊ",
    "a" * 60,
    "\x00\x01\x1c\x1d\x85 control",
    "ＦＵＬＬ width ｈａｌｆ ㌀ ㍿ ℌ ⅷ",
    "Ǆemo ΣΑΣ ǅ ß ẞ ŉ",
]


def random_texts(count: int, seed: int = 23) -> List[str]:
    """``count`` reproducible random texts from an alphabet dense in the hard cases."""
    alphabet = list(
        "abcAB 12 3\n\r\t.,!?'s-_$€…。，é\u0301\u0308\u0323\u0302ΣσİſﬁǆÅ\u212b日本語한글각각"
        "①½٣\u3000\u00a0\x1c\x85▁\u200d😀👨"
    )
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 16))) for _ in range(count)]


def all_texts() -> List[str]:
    return TEXTS + random_texts(40)


def normalizer_alignment(tokenizers: Any, normalizer: Any, text: str) -> List[List[Any]]:
    """``[char, start, end]`` per character of HF's normalized ``text``: the normalized
    string split into single characters, whose offsets HF maps back to the original."""
    each = tokenizers.pre_tokenizers.Split(tokenizers.Regex(r"[\s\S]"), "isolated")
    pre = tokenizers.PreTokenizedString(text)
    pre.normalize(lambda normalized: normalizer.normalize(normalized))
    each.pre_tokenize(pre)
    return [[piece, start, end] for piece, (start, end), _ in pre.get_splits("original", "char")]


def text_strategy() -> Any:
    """Hypothesis text: the hard-case alphabet, or any assigned character (code points newer
    than the interpreter's Unicode tables are left out: their classes differ by version)."""
    from hypothesis import strategies as st
    from strategies import ASSIGNED_CHARACTERS

    hard = st.sampled_from(
        list(
            "abxAB 1234 \n\r\t\u3000\u00a0.,!?'s'S'll—é\u0301\u0308\u0323\u0302\u0345ΣσİſﬁǆÅ\u212b"
            "日本語中文한국어각Привет①½٣😀\u200d👨_-$€…。，\x1c\x85▁"
        )
    )
    return st.text(hard, max_size=24) | st.text(ASSIGNED_CHARACTERS, max_size=12)


def _dump(tokenizers: Any, **parts: Any) -> Dict[str, Any]:
    tok = tokenizers.Tokenizer(tokenizers.models.BPE())
    for name, value in parts.items():
        setattr(tok, name, value)
    document: Dict[str, Any] = json.loads(tok.to_str())
    return document


def normalizers(tokenizers: Any) -> List[Tuple[Any, Dict[str, Any]]]:
    """``(hf_normalizer, its JSON)`` for every normalizer setup tested."""
    N, Regex = tokenizers.normalizers, tokenizers.Regex
    items = [
        N.NFC(),
        N.NFD(),
        N.NFKC(),
        N.NFKD(),
        N.Lowercase(),
        N.StripAccents(),
        N.Strip(),
        N.Strip(left=True, right=False),
        N.Strip(left=False, right=True),
        N.Replace(" ", "▁"),
        N.Replace("ab", ""),
        N.Replace(Regex(r"\s+"), " "),
        N.Replace(Regex(r" {2,}"), "▁"),
        N.Prepend("▁"),
        N.Sequence([]),
        N.Sequence([N.NFD(), N.StripAccents(), N.Lowercase()]),  # BERT-like uncased
        N.Sequence([N.Prepend("▁"), N.Replace(" ", "▁")]),  # Llama 2, Mistral (legacy)
        N.Sequence([N.NFC(), N.Replace(Regex(r"\s+"), " "), N.Lowercase()]),  # CLIP
        N.Sequence([N.NFKC(), N.Strip(), N.Lowercase()]),
        N.Sequence([N.Strip(left=True, right=False), N.Replace(" ", "▁"), N.Prepend("▁")]),
    ]
    return [(n, _dump(tokenizers, normalizer=n)["normalizer"]) for n in items]


def pre_tokenizers(tokenizers: Any) -> List[Tuple[Any, Dict[str, Any]]]:
    """``(hf_pre_tokenizer, its JSON)`` for every pre-tokenizer setup tested."""
    P, Regex = tokenizers.pre_tokenizers, tokenizers.Regex

    def split_bytes(pattern: str, behavior: str = "isolated", invert: bool = False) -> Any:
        return P.Sequence(
            [
                P.Split(Regex(pattern), behavior, invert=invert),
                P.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )

    items = [
        P.ByteLevel(add_prefix_space=False),  # GPT-2, GPT-NeoX, the old Claude file
        P.ByteLevel(),
        P.ByteLevel(add_prefix_space=True, use_regex=False),
        split_bytes(LLAMA3),  # Llama 3
        split_bytes(QWEN2),  # Qwen 2/3
        split_bytes(PATTERNS["cl100k"]),  # tiktoken's string, possessive quantifiers included
        split_bytes(PATTERNS["o200k"]),  # GPT-4o
        split_bytes(PATTERNS["gpt2"]),  # tiktoken's r50k string: "\s++$" under Ruby's line-anchor "$"
        split_bytes(CLIP, "removed", invert=True),  # CLIP
        split_bytes(BLOOM),  # BLOOM (nested character class)
        P.Sequence(
            [P.Split(Regex(p), "isolated") for p in DEEPSEEK]
            + [P.ByteLevel(add_prefix_space=False, use_regex=False)]
        ),  # DeepSeek V3
        P.Sequence(
            [
                P.Punctuation("contiguous"),
                P.ByteLevel(add_prefix_space=False),
                P.Digits(individual_digits=True),
                P.Split(Regex("[0-9][0-9][0-9]"), "isolated"),
            ]
        ),  # Falcon
        P.Sequence([P.Digits(individual_digits=True), P.ByteLevel(add_prefix_space=False)]),  # StarCoder
        P.Metaspace(),
        P.Metaspace(prepend_scheme="first"),
        P.Metaspace(prepend_scheme="first", split=False),  # Llama 2 / Mistral (non-legacy)
        P.Metaspace(prepend_scheme="never"),
        P.Metaspace(replacement="_", prepend_scheme="always", split=False),
        P.Sequence([P.WhitespaceSplit(), P.Metaspace(prepend_scheme="first")]),
        P.Whitespace(),
        P.WhitespaceSplit(),
        P.Digits(),
        P.Digits(individual_digits=True),
    ]
    items += [P.Punctuation(b) for b in BEHAVIORS]
    items += [
        P.Split(pattern, behavior, invert=invert)
        for pattern in [
            " ",
            "ab",
            Regex(r"\s+"),
            Regex(r"\p{N}{1,3}"),
            Regex("(?=b)"),
            Regex(PATTERNS["o200k"]),
        ]
        for behavior in BEHAVIORS
        for invert in (False, True)
    ]
    # Oniguruma constructs that differ from ``regex``: line anchors, \w, \h, \Z, {,n}.
    items += [
        P.Split(Regex(pattern), "isolated")
        for pattern in [
            r"\s+$",
            r"^\s*\S",
            r"\w+",
            r"\W+",
            r"\h+",
            r"\S\Z",
            r"a{,2}",
            r"[[:alpha:]]+",
            r"[^\s[a-c]]+",
        ]
    ]
    return [(p, _dump(tokenizers, pre_tokenizer=p)["pre_tokenizer"]) for p in items]


def decoders(tokenizers: Any) -> List[Tuple[Any, Dict[str, Any]]]:
    """``(hf_decoder, its JSON)`` for every decoder setup tested."""
    D, Regex = tokenizers.decoders, tokenizers.Regex
    items = [
        D.ByteLevel(),
        D.Metaspace(),
        D.Metaspace(prepend_scheme="first"),
        D.Metaspace(prepend_scheme="never"),
        D.Metaspace(replacement="_", prepend_scheme="always"),
        D.ByteFallback(),
        D.Fuse(),
        D.Strip(" ", 1, 0),
        D.Strip("▁", 2, 1),
        D.Replace("▁", " "),
        D.Replace(Regex("a+"), "-"),
        D.BPEDecoder("</w>"),
        D.Sequence([D.Replace("▁", " "), D.ByteFallback(), D.Fuse(), D.Strip(" ", 1, 0)]),  # Llama 2
        D.Sequence([D.ByteFallback(), D.Metaspace(prepend_scheme="first")]),
        D.Sequence([]),
    ]
    return [(d, _dump(tokenizers, decoder=d)["decoder"]) for d in items]


def token_lists(count: int = 60, seed: int = 23) -> List[List[str]]:
    """Reproducible token lists for the decoders: byte-alphabet tokens, ``<0xNN>`` runs
    (valid and invalid UTF-8), ``▁``, ``</w>``, stray characters."""
    from purebpe.bytemap import BYTE_TO_UNICODE

    rng = random.Random(seed)
    fixed = [
        [],
        ["▁Hello", "▁world", "!"],
        ["<0xE2>", "<0x82>", "<0xAC>", "▁costs", "<0xE2>", "<0x82>"],
        ["<0xF0>", "<0x9F>", "<0x98>", "<0x80>", "<0xFF>", "a", "<0x41>", "<0x+F>", "<0xg1>", "<0x0a>"],
        ["hello</w>", "wor", "ld</w>"],
        ["ĠHello", "Ġw", "orld", "Ċ", "ðŁĺ", "Ģ", "ð", "notbyte€"],
        ["▁▁a", "b▁", "▁"],
    ]
    pool = ["▁", " ", "a", "é", "</w>", "€", "😀", "_"] + BYTE_TO_UNICODE[::7]
    for _ in range(count):
        tokens = []
        for _ in range(rng.randint(0, 6)):
            kind = rng.random()
            if kind < 0.3:
                tokens.append(
                    "<0x%02X>" % rng.choice([0x41, 0xE2, 0x82, 0xAC, 0xC3, 0xA9, 0xF0, 0x9F, 0xFF, 0x20])
                )
            else:
                tokens.append("".join(rng.choice(pool) for _ in range(rng.randint(1, 4))))
        fixed.append(tokens)
    return fixed
