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

from typing import Any, Dict, List, Optional, Tuple

from ..bytemap import UNICODE_TO_BYTE
from ..formats.hf import _pretokenizer_name
from ..errors import PureBPEError
from ..pretokenize import Pattern, Pretokenizer
from ..tokenizer import Tokenizer
from ..models.bpe import BPE

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


def _as_bytes(token: str) -> Optional[bytes]:
    try:
        return bytes([UNICODE_TO_BYTE[c] for c in token])
    except KeyError:
        return None


def fast_engine(model: BPE, pre_tokenizer: Any) -> Optional[Tokenizer]:
    """A :class:`purebpe.Tokenizer` equal to ``pre_tokenizer`` + ``model``, or ``None``.

    >>> vocab = {chr(c): i for i, c in enumerate(range(33, 127))}
    >>> fast_engine(BPE(vocab, []), None) is None
    True
    """
    name = fast_pretokenizer(pre_tokenizer)
    if name is None or model.continuing_subword_prefix or model.end_of_word_suffix:
        return None
    vocab: Dict[int, bytes] = {}
    for token, tid in model.vocab.items():
        data = _as_bytes(token)
        if data is not None:
            vocab[tid] = data
    if len({data for data in vocab.values() if len(data) == 1}) < 256:
        return None  # some byte has no token: the model's unk/byte-fallback rules apply
    # HF keeps a pair's last rank; purebpe's engine its first: drop the earlier copies.
    last_rank: Dict[Tuple[str, str], int] = {}
    for rank, merge in enumerate(model.merges):
        last_rank[merge] = rank  # type: ignore[index]
    merges: List[Tuple[bytes, bytes]] = []
    for rank, (left, right) in enumerate(model.merges):
        if last_rank[(left, right)] != rank:
            continue
        left_bytes, right_bytes = _as_bytes(left), _as_bytes(right)
        if left_bytes is None or right_bytes is None:
            continue  # a merge of tokens outside the byte alphabet never fires on byte-level text
        merges.append((left_bytes, right_bytes))
    tokenizer = Tokenizer(vocab, merges, [], pretokenizer=name, name="hf-bpe")
    if model.ignore_merges:
        # The engine's whole-token shortcut (tiktoken's rule) is HF's ignore_merges.
        tokenizer._whole_tokens = {data: tid for tid, data in vocab.items()}
    return tokenizer
