"""Convert a tokenizer file to another format, or say in one line what the target cannot hold.

:func:`convert` reads any file :func:`purebpe.files.detect.load_tokenizer` reads (a
tiktoken-format rank file with its encoding named, Tekken, purebpe's own, GPT-2's pair,
and the HF ``tokenizer.json`` files :func:`purebpe.load` reads), and writes it as
``hf``, ``tiktoken``, ``gpt2`` or ``purebpe`` through :func:`purebpe.formats.save`.

What a target cannot hold is refused before anything is written:

* tiktoken's whole-token rule (a pre-token that is a token is that token, even where the
  merges would build it otherwise -- Llama 3 has 695 such tokens) cannot be held by a
  merges list (``gpt2``, ``purebpe``, ``hf`` as purebpe writes it); every token that is
  valid UTF-8 is encoded both ways and the first that differs is named;
* a pre-tokenization pattern that is not a named one cannot be held by ``tiktoken``
  (tiktoken drops text between matches), nor one HF's regex engine reads otherwise by
  ``hf``.

A tokenizer built from ranks goes to ``tiktoken`` as its ranks (:func:`save_ranks`),
exactly; everything else goes through :func:`purebpe.formats.save`.

After writing, the output is read back (``tiktoken`` by tiktoken's rule) and must
encode a probe text exactly as the input does; otherwise the output is removed and the
conversion refused.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, List, Optional, Union

from .._atomic import make_output_dir
from ..errors import PureBPEError
from ..formats import FORMATS, save
from ..model import BPEModel
from .detect import detect, load_tokenizer

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["PROBE_TEXT", "convert", "read_any", "save_ranks"]

PathLike = Union[str, "os.PathLike[str]"]

#: Text every conversion must encode identically before and after.
PROBE_TEXT = (
    "Hello world! It's a test: they'll DO it 12345 3.14159\n\n  \t x\r\n"
    "Der Fu\u00df \u00fcber Stra\u00dfen. \u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440! "
    "\u4f60\u597d\uff0c\u4e16\u754c\u3002\u65e5\u672c\u8a9e\u306e\u30c6\u30ad\u30b9\u30c8 "
    "\ud55c\uad6d\uc5b4 \ud14d\uc2a4\ud2b8 \U0001f468\u200d\U0001f469\u200d\U0001f467 e\u0301 "
    "def f(x):\n    return x ** 2  # done\n   "
)


def read_any(path: PathLike, *, encoding: Optional[str] = None) -> "Tokenizer":
    """The :class:`purebpe.Tokenizer` of any file purebpe converts from."""
    from ..formats import load
    from ..tokenizer import Tokenizer

    if detect(path) == "hf":
        # The HF files purebpe.load reads exactly; it names in one line what it does not.
        if encoding is not None:
            raise PureBPEError(f"{path}: --encoding is for tiktoken-format rank files")
        return Tokenizer.from_model(load(path))
    return load_tokenizer(path, encoding=encoding)


def _model_of(tok: "Tokenizer") -> BPEModel:
    specials = tuple(sorted(tok.special_ids, key=tok.special_ids.__getitem__))
    return BPEModel(dict(tok.vocab), list(tok.merges), specials, tok.pretokenizer)


def _check_whole_tokens(tok: "Tokenizer", merged: "Tokenizer", format: str) -> None:
    """Refuse when tiktoken's whole-token rule gives other ids than replaying the merges."""
    whole = tok._whole_tokens
    if whole is None:
        return
    differ = 0
    example = b""
    for token in whole:
        try:
            text = token.decode("utf-8")
        except UnicodeDecodeError:
            continue
        if tok.encode_ordinary(text) != merged.encode_ordinary(text):
            differ += 1
            example = example or token
    if differ:
        raise PureBPEError(
            f"the {format} format cannot hold tiktoken's whole-token rule: {differ} tokens "
            f"(e.g. {example!r}) are not what replaying the merges builds; convert to tiktoken"
        )


def save_ranks(tok: "Tokenizer", directory: Path) -> List[Path]:
    """Write a tokenizer built from ranks as purebpe's tiktoken files (ranks + sidecar).

    The ranks are written as they are -- ids and priorities, tiktoken's whole-token rule
    included -- where :func:`purebpe.formats.save` would go through merges.
    """
    from .._atomic import digest, write_files
    from ..formats.tiktoken_format import _RANKS_DIGEST
    from ..formats.tiktoken_format import FILES as TIKTOKEN_FILES
    from ..pretokenize import Pattern, pattern_string, pretokenizer_to_json

    assert tok._whole_tokens is not None
    if isinstance(tok.pretokenizer, Pattern):
        raise PureBPEError(
            "the tiktoken format cannot hold a pattern purebpe cannot prove splits every text "
            "into matches alone (tiktoken drops text between matches); convert to hf or purebpe"
        )
    ranks = sorted(tok._whole_tokens.items(), key=lambda item: item[1])
    # An empty token (Whisper's multilingual file has one) is written "=", as Whisper does.
    ranks_data = "".join(
        f"{base64.b64encode(token).decode('ascii') or '='} {rank}\n" for token, rank in ranks
    ).encode()
    specials = dict(sorted(tok.special_ids.items(), key=lambda item: item[1]))
    ids = [rank for _, rank in ranks] + list(specials.values())
    sidecar = {
        "pretokenizer": pretokenizer_to_json(tok.pretokenizer),
        "pat_str": pattern_string(tok.pretokenizer),
        "special_tokens": specials,
        "explicit_n_vocab": max(ids) + 1 if len(set(ids)) == max(ids) + 1 else None,
        _RANKS_DIGEST: digest(ranks_data),
    }
    paths = [directory / TIKTOKEN_FILES[0], directory / TIKTOKEN_FILES[1]]
    sidecar_data = (json.dumps(sidecar, ensure_ascii=False, indent=1) + "\n").encode("utf-8")
    write_files([(paths[1], sidecar_data), (paths[0], ranks_data)])
    return paths


def _read_back(paths: List[Path], format: str) -> "Tokenizer":
    from ..formats import load
    from ..tokenizer import Tokenizer

    if format == "hf":
        return Tokenizer.from_model(load(paths[0]))
    return load_tokenizer(paths[0])  # tiktoken files by tiktoken's rule


def convert(source: PathLike, output: PathLike, format: str, *, encoding: Optional[str] = None) -> List[Path]:
    """Write the tokenizer in ``source`` into the folder ``output`` as ``format``; the paths.

    >>> import tempfile, os, purebpe
    >>> folder = tempfile.mkdtemp()
    >>> model = purebpe.train_from_iterator(["low lower lowest"] * 5, 262, ["<|endoftext|>"])
    >>> _ = model.save(os.path.join(folder, "in"))
    >>> [p.name for p in convert(os.path.join(folder, "in"), os.path.join(folder, "out"), "gpt2")]
    ['vocab.json', 'merges.txt']
    """
    if format not in FORMATS:
        raise PureBPEError(f"unknown format {format!r}; choose one of: {', '.join(FORMATS)}")
    from ..tokenizer import Tokenizer

    tok = read_any(source, encoding=encoding)
    model = _model_of(tok) if format != "tiktoken" or tok._whole_tokens is None else None
    if model is not None:
        _check_whole_tokens(tok, Tokenizer.from_model(model), format)
    expected = tok.encode(PROBE_TEXT, allowed_special="all")
    if format == "tiktoken" and tok._whole_tokens is not None:
        paths = save_ranks(tok, make_output_dir(output))
    else:
        assert model is not None
        paths = save(model, make_output_dir(output), format)
    try:
        again = _read_back(paths, format)
        if again.encode(PROBE_TEXT, allowed_special="all") != expected:
            raise PureBPEError(f"{paths[0]}: reads back with other ids than {source}")
    except PureBPEError:
        for path in paths:
            path.unlink()
        raise
    return paths
