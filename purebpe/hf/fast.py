"""The fast path: run a byte-level ``tokenizer.json`` on purebpe's own engine.

When a file's pre-tokenizer is one purebpe has a scanner for (``ByteLevel`` with its
GPT-2 regex, or ``Split`` with a named pattern's regex then ``ByteLevel`` without regex,
no prefix space) and its ``BPE`` model needs no option the engine lacks (no subword
prefix or word suffix; every byte has its own token, so ``unk_token`` and
``byte_fallback`` never fire), then pre-tokenizing plus the model is exactly
:class:`purebpe.Tokenizer` on the same merges: ids by merge rank through
:func:`purebpe.core.apply_merges`, the named-pattern scanners, and for
``ignore_merges`` the engine's whole-token shortcut. :func:`fast_engine` builds that
tokenizer, or says ``None`` when the file is outside this case (the pipeline then runs
its own components). It covers the ids of text without added tokens and after the
normalizer; added tokens, normalizers, offsets and post-processing stay with the pipeline.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from ..bytemap import token_bytes
from ..errors import PureBPEError
from ..formats.hf import _pretokenizer_name
from ..models.bpe import BPE
from ..pre_tokenizers import named_pretokenizer
from ..pretokenize import Pattern, Pretokenizer
from ..token_tables import TokenTables
from ..tokenizer import Tokenizer

__all__ = ["fast_engine", "fast_pretokenizer"]


def fast_pretokenizer(pre_tokenizer: Any) -> Optional[Pretokenizer]:
    """The purebpe pre-tokenizer name equal to an HF ``pre_tokenizer`` object, or ``None``.

    >>> fast_pretokenizer({"type": "ByteLevel", "add_prefix_space": False, "use_regex": True})
    'gpt2'
    """
    if pre_tokenizer is None:
        return None
    try:
        name = _pretokenizer_name(pre_tokenizer)
    except PureBPEError:
        return None
    if isinstance(name, Pattern):
        # Another regex: HF's engine (Oniguruma) and purebpe's (``regex``) may read it
        # differently, so only the pipeline's own Split runs it.
        return None
    return name


def fast_engine(model: BPE, pre_tokenizer: Any, built: Any = None) -> Optional[Tokenizer]:
    """A :class:`purebpe.Tokenizer` equal to ``pre_tokenizer`` + ``model``, or ``None``;
    ``built`` is the pre-tokenizer object :mod:`purebpe.pre_tokenizers` made of it.

    >>> vocab = {chr(c): i for i, c in enumerate(range(33, 127))}
    >>> fast_engine(BPE(vocab, []), None) is None
    True
    """
    # The pre-tokenizers' own reading of a Split regex is HF's dialect (Oniguruma), which
    # can differ from the regex package's for the same string: it decides where it exists.
    name = named_pretokenizer(built) if built is not None else fast_pretokenizer(pre_tokenizer)
    if name is None or model.continuing_subword_prefix or model.end_of_word_suffix:
        return None
    vocab: Dict[int, bytes] = {}
    byte_ids = [-1] * 256
    for token, tid in model.vocab.items():
        data = token_bytes(token)
        if data is not None:
            vocab[tid] = data
            if len(data) == 1:
                byte_ids[data[0]] = tid
    if -1 in byte_ids:
        return None  # some byte has no token: the model's unk/byte-fallback rules apply
    tables = TokenTables(
        vocab=vocab,  # made here for the engine: not copied (10 MB for o200k's)
        special_tokens=(),
        special_ids={},
        byte_ids=byte_ids,
        # The ids are HF's, so the model's table of packed ranks (HF's duplicate rule
        # included) is the engine's: one table for both, nothing searched twice. The
        # merges of tokens outside the byte alphabet never fire.
        ranks=model.ranks,
        merges=None,
        # HF's ignore_merges is the engine's whole-token rule.
        whole_tokens={data: tid for tid, data in vocab.items()} if model.ignore_merges else None,
        default_special=("all", ()),
    )
    return Tokenizer(tables, pretokenizer=name, name="hf-bpe")
