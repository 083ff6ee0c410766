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

An HF ``tokenizer.json`` (any file name) goes to ``hf`` whole, every pipeline part as
loaded, and must give the same ids when read back (with and without
``add_special_tokens``); to the other formats only when :func:`plain_engine` shows they
hold it exactly (a byte-level pipeline with a named pattern, no normalizer or byte
fallback, ``ignore_merges`` where the target takes pre-tokens whole or where it changes
no token's ids), else one line names the part.

A tokenizer built from ranks goes to ``tiktoken`` as its ranks (:func:`save_ranks`),
exactly; everything else goes through :func:`purebpe.formats.save`.

The output is first written to a scratch folder and read back from there (``tiktoken``
by tiktoken's rule): it must encode a probe text exactly as the input does, else the
conversion is refused and the output folder is left as it was. Only then are the files
written into it, as one unit (:func:`purebpe._atomic.write_files`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, List, Optional, Tuple, Union

from .._atomic import check_output_dir, make_output_dir, remove_temporary_directory, write_files
from .._workers import scratch_directory
from ..errors import PureBPEError
from ..formats import FORMATS, save
from ..model import BPEModel
from .detect import detect, load_tokenizer

if TYPE_CHECKING:
    from ..hf import HFTokenizer
    from ..tokenizer import Tokenizer

__all__ = ["PROBE_TEXT", "convert", "plain_engine", "read_any", "save_ranks"]

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
    """The :class:`purebpe.Tokenizer` of any file purebpe converts from (an HF
    ``tokenizer.json`` only where its whole pipeline is one: :func:`plain_engine`)."""
    if detect(path) == "hf":
        if encoding is not None:
            raise PureBPEError(f"{path}: --encoding is for tiktoken-format rank files")
        return plain_engine(_load_hf(path), "purebpe")[0]
    return load_tokenizer(path, encoding=encoding)


def _load_hf(path: PathLike) -> "HFTokenizer":
    """The pipeline of an HF ``tokenizer.json`` (a file of any name, or a folder holding one)."""
    from ..hf import HFTokenizer

    tok: Any = load_tokenizer(path)
    assert isinstance(tok, HFTokenizer)
    return tok


def plain_engine(hf: "HFTokenizer", format: str) -> Tuple["Tokenizer", BPEModel]:
    """A byte-level BPE tokenizer (and its model) giving the ids ``hf.encode`` gives, as
    ``format`` reads it: ``tiktoken`` always takes a pre-token that is a token whole
    (HF's ``ignore_merges``), the merges formats never do.

    Refused in one line naming the part when the pipeline needs more than a vocab, merges,
    a named pre-tokenization pattern (for ``purebpe``, also a ``Split`` regex HF and
    ``regex`` read alike: :func:`_custom_split`) and special tokens: a normalizer, byte
    fallback, another pre-tokenizer (``Metaspace``, any other ``Split`` regex), a
    subword prefix or word suffix, a decoder other than ``ByteLevel``, an added token that
    strips whitespace or needs word boundaries. A post-processor's BOS/EOS are not held:
    these formats have no ``add_special_tokens`` (the ids kept are HF's
    ``encode(text, add_special_tokens=False)``), and every added token becomes a special
    token. Then every model token's text, and :data:`PROBE_TEXT`, must encode to
    ``hf``'s ids, or the first that does not is named (that is how ``ignore_merges``
    either way is shown to matter or not).
    """
    from ..formats.hf import _read
    from ..tokenizer import Tokenizer

    document = hf.document or {}
    model_json = document.get("model") or {}
    where = f"{hf.name}: the {format} format cannot hold"

    def kind(part: Any) -> str:
        return repr(part.get("type")) if isinstance(part, dict) else repr(part)

    normalizer = document.get("normalizer")
    if normalizer is not None and normalizer != {"type": "Sequence", "normalizers": []}:  # that one: none
        raise PureBPEError(f"{where} the normalizer {kind(normalizer)}; convert to hf")
    for option, what in (
        ("byte_fallback", "byte fallback (<0xNN> tokens)"),
        ("continuing_subword_prefix", "a subword prefix"),
        ("end_of_word_suffix", "a word suffix"),
    ):
        if model_json.get(option):
            raise PureBPEError(f"{where} {what} (model option {option}); convert to hf")
    if hf.fast is None:
        if not _custom_split(document):
            raise PureBPEError(
                f"{where} the pre-tokenizer {kind(document.get('pre_tokenizer'))} (not a named "
                "pattern with ByteLevel) or a model without a token for every byte; convert to hf"
            )
        if format != "purebpe":
            raise PureBPEError(f"{where} a Split regex that is no named pattern; convert to purebpe or hf")
    decoder = document.get("decoder")
    if decoder is not None and not (isinstance(decoder, dict) and decoder.get("type") == "ByteLevel"):
        raise PureBPEError(f"{where} the decoder {kind(decoder)}; convert to hf")
    for token in hf.added.by_id.values():
        for flag in ("lstrip", "rstrip", "single_word"):
            if getattr(token, flag):
                raise PureBPEError(f"{where} added token {token.content!r} with {flag}; convert to hf")
    # Every byte has a token (the fast engine exists), so unk never fires; the rest is
    # what formats.hf reads.
    plain = dict(document, normalizer=None, post_processor=None, decoder=None)
    plain["model"] = dict(model_json, ignore_merges=False, unk_token=None, fuse_unk=False, dropout=None)
    model = _read(plain, hf.name)
    engine = Tokenizer.from_model(model)
    if format == "tiktoken":
        specials = set(engine.special_ids.values())
        whole = {token: tid for tid, token in model.vocab.items() if tid not in specials}
        engine._whole_tokens = engine._encoder.whole_tokens = whole
    texts = [PROBE_TEXT]
    for _, data in sorted(model.vocab.items()):
        try:
            texts.append(data.decode("utf-8"))
        except UnicodeDecodeError:
            continue
    for text in texts:
        want = hf.encode(text)
        if engine.encode(text, allowed_special="all") != want:
            ignore = bool(model_json.get("ignore_merges"))
            if ignore != (format == "tiktoken"):
                rule = "takes" if format == "tiktoken" else "cannot take"
                raise PureBPEError(
                    f"{where} ignore_merges={str(ignore).lower()}: {format} {rule} a pre-token "
                    f"that is a token whole, and {text[:40]!r} then encodes to other ids"
                )
            raise PureBPEError(f"{where} this pipeline: {text[:40]!r} encodes to other ids; convert to hf")
    return engine, model


def _custom_split(document: Any) -> bool:
    """Whether the pre-tokenizer is a ``Split`` regex that HF and ``regex`` read alike (a
    :class:`purebpe.Pattern`, which the purebpe format holds:
    :func:`purebpe.formats.hf.hf_reading`), then bytes, and every byte has a token (so
    HF's unknown-token rules never apply)."""
    from ..bytemap import token_bytes
    from ..formats.hf import _split_regex, hf_reading

    source = _split_regex(document.get("pre_tokenizer"))
    if source is None or hf_reading(source) is None:
        return False
    vocab = (document.get("model") or {}).get("vocab") or {}
    single_bytes = {data for data in map(token_bytes, vocab) if data is not None and len(data) == 1}
    return len(single_bytes) == 256


def _write_hf_document(hf: "HFTokenizer", directory: Path) -> List[Path]:
    """The whole ``tokenizer.json`` as loaded (every pipeline part), and transformers' files."""
    from ..formats.hf_config import transformers_files

    specials = {t.content: tid for tid, t in hf.added.by_id.items() if t.special}
    data = (hf.to_str() + "\n").encode("utf-8")
    return write_files([(directory / "tokenizer.json", data), *transformers_files(specials, directory)])


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
    from ..formats.tiktoken_format import write_rank_files
    from ..pretokenize import Pattern

    assert tok._whole_tokens is not None
    if isinstance(tok.pretokenizer, Pattern):
        raise PureBPEError(
            "the tiktoken format cannot hold a pattern purebpe cannot prove splits every text "
            "into matches alone (tiktoken drops text between matches); convert to hf or purebpe"
        )
    ranks = sorted(tok._whole_tokens.items(), key=lambda item: item[1])
    ids = [rank for _, rank in ranks] + list(tok.special_ids.values())
    explicit_n_vocab = max(ids) + 1 if len(set(ids)) == max(ids) + 1 else None
    return write_rank_files(directory, ranks, tok.special_ids, tok.pretokenizer, explicit_n_vocab)


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
    if detect(source) == "hf":
        if encoding is not None:
            raise PureBPEError(f"{source}: --encoding is for tiktoken-format rank files")
        return _convert_hf(_load_hf(source), output, format)
    from ..tokenizer import Tokenizer

    tok = read_any(source, encoding=encoding)
    model = _model_of(tok) if format != "tiktoken" or tok._whole_tokens is None else None
    if model is not None:
        _check_whole_tokens(tok, Tokenizer.from_model(model), format)
    expected = tok.encode(PROBE_TEXT, allowed_special="all")

    def write(directory: Path) -> List[Path]:
        if format == "tiktoken" and tok._whole_tokens is not None:
            return save_ranks(tok, directory)
        assert model is not None
        return save(model, directory, format)

    def check(paths: List[Path]) -> None:
        if _read_back(paths, format).encode(PROBE_TEXT, allowed_special="all") != expected:
            raise PureBPEError(f"{Path(output) / paths[0].name}: reads back with other ids than {source}")

    return _write_checked(output, write, check)


def _write_checked(
    output: PathLike, write: Callable[[Path], List[Path]], check: Callable[[List[Path]], None]
) -> List[Path]:
    """``write`` (which writes the files into a folder and returns their paths) into a
    scratch folder, ``check`` them there (it raises to refuse), and only then ``write``
    them into ``output``: a refused conversion leaves ``output`` as it was, and the
    format's own save puts the files in place as one unit, in its order."""
    check_output_dir(output)
    scratch = scratch_directory()
    try:
        check(write(Path(scratch)))
    finally:
        remove_temporary_directory(scratch)
    return write(make_output_dir(output))


def _convert_hf(hf: "HFTokenizer", output: PathLike, format: str) -> List[Path]:
    """An HF ``tokenizer.json``: to ``hf`` its whole pipeline as it is; to the other formats
    only what :func:`plain_engine` proves equal. Read back, it must give ``hf``'s ids on
    :data:`PROBE_TEXT` (and, as ``hf``, with ``add_special_tokens`` too), else nothing stays."""
    from ..hf import load as load_hf

    model = None if format == "hf" else plain_engine(hf, format)[1]

    def write(directory: Path) -> List[Path]:
        if model is None:
            return _write_hf_document(hf, directory)
        return save(model, directory, format)

    def check(paths: List[Path]) -> None:
        for add in (False, True) if format == "hf" else (False,):
            expected = hf.encode(PROBE_TEXT, add_special_tokens=add)
            if format == "hf":
                got = load_hf(paths[0]).encode(PROBE_TEXT, add_special_tokens=add)
            else:
                again = load_tokenizer(paths[0])
                added = {token.content for token in hf.added.by_id.values()}
                extra = sorted(set(again.special_ids) - added)
                if extra:  # GPT-2's files: a token no merge builds reads back as special
                    raise PureBPEError(
                        f"{hf.name}: the {format} format cannot hold {len(extra)} tokens no merge "
                        f"builds (e.g. {extra[0]!r}): they read back as special tokens; convert to hf"
                    )
                got = again.encode(PROBE_TEXT, allowed_special="all")
            if got != expected:
                where = Path(output) / paths[0].name
                raise PureBPEError(f"{where}: reads back with other ids than {hf.name}")

    return _write_checked(output, write, check)
