"""``purebpe encode``: a corpus to token ids, in parallel and in order, as text, ``.npy``,
raw ``uint16``/``uint32`` (``.bin``) or ``.bin`` shards."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Optional, Union

from ..corpus_encoding import AnyTokenizer, corpus_texts, encode_corpus
from ..counting import check_processes, default_processes
from ..document_encoding import CharacterCutter
from ..errors import PureBPEError
from ..hf import HFTokenizer
from ..pretokenize.chunking import ChunkCutter
from ..progress import progress_bar
from ..readers import read_options, sources
from ..tokenizer import AllowedSpecial
from ._common import (
    add_errors_and_progress_arguments,
    add_layout_arguments,
    add_processes_argument,
    progress_option,
    skipped_note,
)
from ._ids_output import IdsWriter, ShardWriter, write_sidecar
from ._io import (
    add_format_arguments,
    add_tokenizer_arguments,
    atomic_output,
    check_output,
    check_stdin_open,
    dtype_for,
    ids_format,
    is_std,
    open_tokenizer,
)


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "encode",
        help="encode text to token ids",
        description=(
            "Encode a corpus (text, JSON lines or Parquet files, compressed or not, "
            "directories, globs, or stdin) to token ids with a trained tokenizer or any model's "
            "tokenizer file (an HF tokenizer.json gives each document the ids of HF's "
            "encode(document)), in parallel and in input order. Ids go to stdout as text, or to "
            "OUTPUT as text, .npy or raw "
            "uint16/uint32 (.bin, its dtype recorded in OUTPUT.json), or with --shard-tokens "
            "to .bin shards in the directory OUTPUT. Inputs are streamed: memory holds a few "
            "batches per process, whatever the corpus size, except with a custom-pattern "
            "tokenizer (trained with --pattern): no cut is known to be safe for an arbitrary "
            "pattern, so the text between two special tokens is held whole (about 30 bytes of "
            "memory per input byte)."
        ),
    )
    add_tokenizer_arguments(parser)
    parser.add_argument(
        "files", nargs="*", default=["-"], metavar="FILE", help="what to encode (default: stdin)"
    )
    parser.add_argument("-o", "--output", default="-", metavar="OUTPUT", help="(default: stdout)")
    add_format_arguments(parser, "the written")
    add_layout_arguments(parser, format_flag=False)
    parser.add_argument(
        "--doc-separator",
        metavar="TOKEN",
        help="a token (e.g. '<|endoftext|>') whose id follows every document (default: none)",
    )
    parser.add_argument(
        "--shard-tokens",
        type=int,
        metavar="N",
        help="write OUTPUT as a directory of shards of N ids each (shard_000000.bin, ...)",
    )
    parser.add_argument(
        "--ordinary",
        action="store_true",
        help="encode special tokens in the text as plain text, not as their ids (not for an "
        "HF tokenizer.json, whose added tokens HF always splits off)",
    )
    add_processes_argument(parser, "encode")
    add_errors_and_progress_arguments(parser, records=True)
    parser.set_defaults(func=run)


def separator_id(tokenizer: AnyTokenizer, token: Optional[str]) -> Optional[int]:
    """The id of ``--doc-separator`` (a special token, or any text that is one token)."""
    if token is None:
        return None
    try:
        if isinstance(tokenizer, HFTokenizer):
            found = tokenizer.token_to_id(token)
            ids = [found] if found is not None else tokenizer.encode(token)
            if len(ids) == 1:
                return ids[0]
            raise KeyError(token)
        return tokenizer.encode_single_token(token)
    except (PureBPEError, KeyError):
        raise PureBPEError(f"--doc-separator {token[:40]!r} is not a single token of the tokenizer") from None


def run(args: argparse.Namespace) -> int:
    check_processes(args.processes)
    sharded = args.shard_tokens is not None
    if sharded:
        if args.shard_tokens < 1:
            raise PureBPEError(f"--shard-tokens must be at least 1, not {args.shard_tokens}")
        if is_std(args.output):
            raise PureBPEError("--shard-tokens needs -o DIRECTORY for the shards")
    else:
        check_output(args.output)
    options = read_options(args.text_key, args.column, args.errors)
    check_stdin_open(args.files)
    found = sources(args.files, args.input_format)
    tokenizer = open_tokenizer(args.tokenizer, args.encoding)
    format = (args.format or "bin") if sharded else ids_format(args.output, args.format)
    separator = separator_id(tokenizer, args.doc_separator)
    allowed: AllowedSpecial = frozenset() if args.ordinary else "all"
    cutter: ChunkCutter
    if isinstance(tokenizer, HFTokenizer):
        if args.ordinary:
            raise PureBPEError(
                f"--ordinary: {tokenizer.name} is an HF pipeline, which always splits off its added tokens"
            )
        # A pipeline that is a plain Tokenizer (GPT-2's, Llama 3's) runs as one, so that a
        # long document is cut where its pattern allows and spread over the processes.
        tokenizer = tokenizer.as_tokenizer() or tokenizer
    if isinstance(tokenizer, HFTokenizer):
        # A document is the pipeline's unit: its pieces may be cut anywhere.
        dtype = dtype_for(args.dtype, max(tokenizer.get_vocab().values(), default=0))
        cutter = CharacterCutter()
    else:
        dtype = dtype_for(args.dtype, max(tokenizer.vocab))
        specials = [] if args.ordinary else sorted(tokenizer.special_tokens_set)
        longest = max((len(t.encode("utf-8")) for t in tokenizer.special_tokens_set), default=0)
        cutter = ChunkCutter(specials, tokenizer.pretokenizer, reserve=longest)
    streams = any(not source.seekable for source in found)
    total = None if streams else sum(source.size for source in found)
    processes = default_processes(args.processes, total)
    skipped = [0]
    texts = corpus_texts(found, options, cutter, skipped, args.doc_cap, args.max_chars)
    ids = encode_corpus(
        tokenizer, texts, allowed_special=allowed, separator=separator, dtype=dtype, processes=processes
    )
    bar = progress_bar(progress_option(args), "encode", None, "id", unit_scale=True)
    writer: Union[IdsWriter, ShardWriter]
    try:
        if sharded:
            writer = ShardWriter(args.output, args.shard_tokens, format, dtype)
            try:
                for batch in ids:
                    writer.write(batch)
                    bar.update(len(batch))
                count = writer.finish()
            except BaseException:
                writer.abandon()
                raise
        else:
            with atomic_output(args.output) as out:
                writer = IdsWriter(out, format, dtype, args.output or "standard output")
                for batch in ids:
                    writer.write(batch)
                    bar.update(len(batch))
                count = writer.finish()
                if format == "bin" and not is_std(args.output) and os.path.isfile(args.output):
                    _drop_stale_sidecar(args.output)
            if format == "bin" and not is_std(args.output) and os.path.isfile(args.output):
                write_sidecar(args.output, dtype, count)
    finally:
        # Closing the generator now stops its workers (a signal or an error in this loop
        # leaves it suspended; left to the garbage collector, it would close after the
        # interpreter's exit had begun waiting for those workers).
        ids.close()
        bar.close()
    if not is_std(args.output):
        what = f"{format}, {dtype}" if format != "text" else "text"
        where = (
            f"{args.output} ({len(writer.names)} shards)" if isinstance(writer, ShardWriter) else args.output
        )
        print(f"wrote {count:,} ids to {where} ({what}){skipped_note(skipped[0])}", file=sys.stderr)
    elif skipped[0]:
        print(f"purebpe: {skipped_note(skipped[0]).strip(' ()')}", file=sys.stderr)
    return 0


def _drop_stale_sidecar(path: str) -> None:
    """The old sidecar of a file about to be replaced (so that it never describes the new one)."""
    try:
        os.unlink(path + ".json")
    except FileNotFoundError:
        pass
