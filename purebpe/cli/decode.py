"""``purebpe decode``: token ids (text, ``.npy`` or raw ``uint16``/``uint32``) back to text."""

from __future__ import annotations

import argparse
from typing import Any, Iterator, List, Optional, Set

from ..errors import PureBPEError
from ..hf import HFTokenizer
from ..hf.decoding import decoded
from ..tokenizer import Tokenizer
from ._ids_output import read_sidecar, sidecar_path
from ._io import (
    add_format_arguments,
    add_tokenizer_arguments,
    atomic_output,
    check_output,
    dtype_for,
    ids_format,
    is_std,
    open_input,
    open_tokenizer,
    read_ids,
    write_text_stream,
)


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "decode",
        help="decode token ids to text",
        description=(
            "Decode token ids (whitespace-separated text, .npy, or raw uint16/uint32 .bin) from "
            "FILE or stdin back to UTF-8 text. Bytes that do not form valid UTF-8 become U+FFFD. "
            "With an HF tokenizer.json the text is HF's decode(ids) (its decoder; unknown ids "
            "left out, as HF does)."
        ),
    )
    add_tokenizer_arguments(parser)
    parser.add_argument("file", nargs="?", default="-", metavar="FILE", help="ids to decode (default: stdin)")
    parser.add_argument("-o", "--output", default="-", metavar="OUTPUT", help="(default: stdout)")
    parser.add_argument(
        "--skip-special-tokens",
        action="store_true",
        help="leave special tokens out of the text (a document separator, say): HF's "
        "decode(ids, skip_special_tokens=True); by default they are kept",
    )
    add_format_arguments(parser, "the input")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_output(args.output)
    tokenizer = open_tokenizer(args.tokenizer, args.encoding)
    format = ids_format(args.file, args.format)
    if format == "bin":
        dtype = raw_dtype(args.file, args.dtype)
    elif isinstance(tokenizer, HFTokenizer):
        dtype = dtype_for(args.dtype, max(tokenizer.get_vocab().values(), default=0))
    else:
        dtype = dtype_for(args.dtype, max(tokenizer.vocab))
    with open_input(args.file) as (stream, source, _size):
        batches = read_ids(stream, source, format, dtype)
        with atomic_output(args.output) as out:
            if isinstance(tokenizer, HFTokenizer):
                for text in decoded(tokenizer, batches, args.skip_special_tokens):
                    out.write(text.encode("utf-8", "replace"))
            else:
                skipped = set(tokenizer.special_ids.values()) if args.skip_special_tokens else set()
                write_text_stream(out, _decoded(tokenizer, batches, source, skipped))
    return 0


def raw_dtype(path: str, chosen: Optional[str]) -> str:
    """The dtype of a raw ``.bin`` file: from its sidecar (``--dtype`` must agree), else
    ``--dtype``; neither is refused, since the wrong width decodes to garbage."""
    record = None if is_std(path) else read_sidecar(path)
    if record is not None:
        recorded = str(record["dtype"])
        if chosen is not None and chosen != recorded:
            raise PureBPEError(f"{path}: its sidecar records {recorded}, not --dtype {chosen}")
        return recorded
    if chosen is None:
        name = "<stdin>" if is_std(path) else path
        raise PureBPEError(
            f"{name}: raw ids of unknown width (no {sidecar_path(name)}); pass --dtype uint16 or uint32"
        )
    return chosen


def _decoded(
    tokenizer: Tokenizer, batches: Iterator[List[int]], source: str, skipped: Set[int]
) -> Iterator[bytes]:
    """The bytes of each batch, the ids in ``skipped`` left out; a bad id is reported with
    its position in the whole input."""
    position = 0
    for batch in batches:
        try:
            yield tokenizer.decode_bytes([tid for tid in batch if tid not in skipped] if skipped else batch)
        except PureBPEError:
            for index, tid in enumerate(batch):
                try:
                    tokenizer.decode_bytes([tid])
                except PureBPEError as exc:
                    where = str(exc).replace("position 0", f"position {position + index}")
                    raise PureBPEError(f"{source}: {where}") from None
            raise
        position += len(batch)
