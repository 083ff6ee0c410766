"""Hugging Face ``tokenizers``' single-file format, ``tokenizer.json``.

Written as GPT-2's tokenizer is on the Hub: a ``BPE`` model (vocab in GPT-2's byte
alphabet, merges as ``"left right"`` strings, which every ``tokenizers`` version reads),
a ``ByteLevel`` pre-tokenizer (``use_regex=true``: the GPT-2 pattern) and decoder, and
the special tokens as ``added_tokens`` (``special: true``), which ``tokenizers`` splits off
before pre-tokenization, longest match first. Load it with
``tokenizers.Tokenizer.from_file("tokenizer.json")`` or
``transformers.PreTrainedTokenizerFast(tokenizer_file=...)``.

A ``pretokenizer="none"`` model gets a ``Sequence`` of ``Split("\\n",
"merged_with_previous")`` (one piece per line, its ``\\n`` included) and
``ByteLevel(use_regex=false)`` (bytes only), which is exactly purebpe's line splitting.
Every other pattern -- ``"cl100k"``, ``"o200k"``, a :class:`purebpe.Pattern` -- is written
the way HF itself writes GPT-4-style tokenizers (Llama 3's ``tokenizer.json``, say): a
``Sequence`` of ``Split(Regex(pattern), "Isolated")`` and ``ByteLevel(use_regex=false)``.
Reading maps a ``Split`` regex to what HF's engine (Oniguruma) reads it as: a named
pattern, or a :class:`purebpe.Pattern` that the ``regex`` package reads alike. A regex the
two engines read otherwise (``\\w``, ``$``, tiktoken's own cl100k string...) is refused, as
writing one is: :meth:`purebpe.Tokenizer.from_file` loads such a file with HF's reading.

Reading accepts the same shapes, merges also as ``[left, right]`` pairs (tokenizers
>= 0.20), and refuses options purebpe does not implement (a normalizer, dropout,
``ignore_merges``, subword prefixes...) with a one-line error naming the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

from .._atomic import write_files
from ..bytemap import decode_token, encode_token
from ..errors import PureBPEError, excerpt, naming_errors
from ..model import BPEModel
from ..normalizers.pattern import named_pattern, regex_source
from ..normalizers.pattern_cuts import may_match_empty
from ..pretokenize import PATTERNS, Pattern, Pretokenizer, check_pretokenizer
from ..pretokenize.resolve import POSSESSIVE_INTERVAL
from .bytelevel import assemble, is_id, json_bytes, read_json, tokens_by_bytes

FILES = ("tokenizer.json",)

_BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
_LINES = {"type": "Split", "pattern": {"String": "\n"}, "behavior": "MergedWithPrevious", "invert": False}
_BYTES_ONLY = dict(_BYTE_LEVEL, use_regex=False)
_PRE_TOKENIZERS: Dict[str, Any] = {
    "gpt2": _BYTE_LEVEL,
    "none": {"type": "Sequence", "pretokenizers": [_LINES, _BYTES_ONLY]},
}


# Oniguruma, HF's regex engine, reads ``X{m,n}+`` as a repeat of ``X{m,n}`` (Ruby syntax),
# where ``regex`` reads a possessive repeat: "0000" would be one piece instead of "000",
# "0".  cl100k's ``\p{N}{1,3}+`` is followed only by the end of its alternative, so the
# greedy ``\p{N}{1,3}`` finds the same pieces in both engines.
_HF_SPELLING = {"cl100k": PATTERNS["cl100k"].replace(r"\p{N}{1,3}+", r"\p{N}{1,3}")}


def hf_regex(pretokenizer: Pretokenizer) -> str:
    """The ``Split`` regex HF's Oniguruma reads as ``regex`` reads ``pretokenizer``'s."""
    if isinstance(pretokenizer, Pattern):
        if POSSESSIVE_INTERVAL.search(pretokenizer.regex):
            raise PureBPEError(
                f"cannot write pattern {pretokenizer.regex!r} for HF tokenizers: its engine "
                "(Oniguruma) reads X{m,n}+ as a repeat of X{m,n}, not as possessive; write "
                "(?>X{m,n}) instead"
            )
        if hf_reading(pretokenizer.regex) != check_pretokenizer(pretokenizer):
            raise PureBPEError(
                f"cannot write pattern {pretokenizer.regex!r} for HF tokenizers: its engine "
                f"(Oniguruma, Ruby syntax) may read it otherwise than the regex package does "
                f"({_ONIGURUMA_READING}); spell it so that both read it alike"
            )
        return pretokenizer.regex
    return _HF_SPELLING.get(pretokenizer, PATTERNS[pretokenizer])


#: What tells the two engines apart, for the errors.
_ONIGURUMA_READING = (
    "\\w, \\b, ^, $, X{m,n}+, POSIX brackets, options inside a pattern and what follows an "
    "empty match differ; a lookbehind is not analysed"
)


def hf_reading(source: str, origin: str = "") -> Optional[Pretokenizer]:
    """What HF reads the ``Split`` regex ``source`` as, in purebpe's terms: a named pattern
    (:func:`purebpe.normalizers.pattern.named_pattern` of Oniguruma's reading), or a
    :class:`Pattern` that ``regex`` reads alike and that cannot match the empty string
    (after an empty match the two engines search on differently); else None."""
    try:
        reading = regex_source(source)
    except PureBPEError:
        return None
    name = named_pattern(reading)
    if name is not None:
        return name
    if reading != source or may_match_empty(source):
        return None  # read otherwise, or matched otherwise after an empty match
    return check_pretokenizer(Pattern(source, origin=origin))


def _regex_split(source: str) -> Dict[str, Any]:
    """HF's spelling of "pieces are the matches of ``source`` and the text between them"."""
    split = {"type": "Split", "pattern": {"Regex": source}, "behavior": "Isolated", "invert": False}
    return {"type": "Sequence", "pretokenizers": [split, _BYTES_ONLY]}


def _pre_tokenizer(pretokenizer: Pretokenizer) -> Dict[str, Any]:
    if isinstance(pretokenizer, str) and pretokenizer in _PRE_TOKENIZERS:
        setup: Dict[str, Any] = _PRE_TOKENIZERS[pretokenizer]
        return setup
    return _regex_split(hf_regex(pretokenizer))


# Model options whose values other than these change the encoding.
_NEUTRAL_OPTIONS: Dict[str, Tuple[Any, ...]] = {
    "dropout": (None, 0, 0.0),
    "unk_token": (None,),
    "continuing_subword_prefix": (None, ""),
    "end_of_word_suffix": (None, ""),
    "fuse_unk": (False, None),
    "byte_fallback": (False, None),
    "ignore_merges": (False, None),
}


def recognises(path: Path) -> bool:
    return path.name.endswith(FILES[0])


def save(model: BPEModel, directory: Path) -> List[Path]:
    by_bytes = tokens_by_bytes(model, "hf")
    document = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [
            {
                "id": tid,
                "content": text,
                "single_word": False,
                "lstrip": False,
                "rstrip": False,
                "normalized": False,
                "special": True,
            }
            for text, tid in sorted(model.special_ids().items(), key=lambda item: item[1])
        ],
        "normalizer": None,
        "pre_tokenizer": _pre_tokenizer(model.pretokenizer),
        "post_processor": None,
        "decoder": dict(_BYTE_LEVEL, add_prefix_space=True),
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": False,
            "vocab": {encode_token(token): tid for token, tid in by_bytes.items()},
            "merges": [f"{encode_token(left)} {encode_token(right)}" for left, right in model.merges],
        },
    }
    # With what transformers.AutoTokenizer reads beside it (the end-of-text token's role),
    # as one unit.
    from .hf_config import transformers_files

    main = (directory / FILES[0], json_bytes(document))
    return write_files([main, *transformers_files(model.special_ids(), directory)])


def load(path: Path) -> BPEModel:
    document = read_json(path, "HF tokenizer.json")
    return naming_errors(str(path), "HF tokenizer.json", lambda: _read(document, str(path)))


def _read(document: Any, origin: str = "") -> BPEModel:
    if not isinstance(document, dict) or not isinstance(document.get("model"), dict):
        raise PureBPEError('not an HF tokenizer.json (no "model" object)')
    model = document["model"]
    if model.get("type", "BPE") != "BPE":
        raise PureBPEError(f"model type {excerpt(model.get('type'))} is not BPE")
    for option, neutral in _NEUTRAL_OPTIONS.items():
        if model.get(option) not in neutral:
            raise PureBPEError(f"model option {option}={excerpt(model[option])} is not supported by purebpe")
    if document.get("normalizer") is not None:
        kind = excerpt(document["normalizer"].get("type"))
        raise PureBPEError(f"normalizer {kind} is not supported by purebpe")
    pretokenizer = _pretokenizer_name(document.get("pre_tokenizer"), origin)

    vocab: Dict[int, bytes] = {}
    for key, tid in model["vocab"].items():
        if not is_id(tid) or tid in vocab:
            raise PureBPEError(
                f"model vocab gives token {excerpt(key)} the id {excerpt(tid)} (not a new int >= 0)"
            )
        vocab[tid] = decode_token(key)
    merges: List[Tuple[bytes, bytes]] = []
    for rank, merge in enumerate(model["merges"]):
        parts = merge.split(" ") if isinstance(merge, str) else merge
        if not isinstance(parts, list) or len(parts) != 2:
            raise PureBPEError(f"merge {rank} is {excerpt(merge)}, not 'left right' or [left, right]")
        merges.append((decode_token(parts[0]), decode_token(parts[1])))

    special_ids = []
    for added in document.get("added_tokens") or []:
        tid, content = added["id"], added["content"]
        if not is_id(tid) or not isinstance(content, str):
            raise PureBPEError(f'added token {excerpt(added)} is not {{"id": int >= 0, "content": str}}')
        if tid in vocab and vocab[tid] != content.encode("utf-8"):
            raise PureBPEError(
                f"added token {excerpt(content)} has id {tid}, which the model vocab gives to "
                f"{excerpt(vocab[tid])}"
            )
        vocab[tid] = content.encode("utf-8")
        special_ids.append(tid)
    return assemble(vocab, merges, special_ids, pretokenizer)


def _pretokenizer_name(pre_tokenizer: Any, origin: str = "") -> Pretokenizer:
    """The pre-tokenizer of the setups purebpe writes (see the module docstring)."""
    for name, expected in _PRE_TOKENIZERS.items():
        if _same_setup(pre_tokenizer, expected):
            return name
    source = _split_regex(pre_tokenizer)
    if source is not None:
        reading = hf_reading(source, origin)  # origin: named if it runs too long
        if reading is None:
            # Read as a Pattern, it would split otherwise than HF (tiktoken's own cl100k
            # string among them: HF takes a whole run of digits where "cl100k" takes three).
            raise PureBPEError(
                f"Split regex {excerpt(source)}: HF's engine (Oniguruma) may read it otherwise "
                f"than the regex package does ({_ONIGURUMA_READING}); load this file with "
                "purebpe.Tokenizer.from_file, which runs HF's whole pipeline"
            )
        return reading
    kind = pre_tokenizer.get("type") if isinstance(pre_tokenizer, dict) else pre_tokenizer
    raise PureBPEError(
        f"pre_tokenizer {kind!r} is not supported (purebpe reads ByteLevel with "
        "add_prefix_space=false; Split on '\\n', or Split(Regex, Isolated), then ByteLevel "
        "without regex)"
    )


def _split_regex(pre_tokenizer: Any) -> Any:
    """The regex of a ``Sequence[Split(Regex, Isolated), ByteLevel(use_regex=false)]``."""
    try:
        split = pre_tokenizer["pretokenizers"][0]
        source = split["pattern"]["Regex"]
    except (KeyError, IndexError, TypeError):
        return None
    if isinstance(source, str) and _same_setup(pre_tokenizer, _regex_split(source)):
        return source
    return None


def _same_setup(found: Any, expected: Any) -> bool:
    """Whether ``found`` matches ``expected``, ignoring ``trim_offsets`` (offsets only)."""
    if isinstance(expected, dict):
        if not isinstance(found, dict):
            return False
        if found.get("type") == "ByteLevel":
            found = dict({"use_regex": True}, **found)  # older files leave the default out
        keys = (set(found) | set(expected)) - {"trim_offsets"}
        return all(_same_setup(found.get(key), expected.get(key)) for key in keys)
    if isinstance(expected, list):
        return (
            isinstance(found, list)
            and len(found) == len(expected)
            and all(_same_setup(f, e) for f, e in zip(found, expected))
        )
    return bool(found == expected)
