"""``purebpe convert IN OUT --format F``: a tokenizer file in another format, or a one-line refusal."""

from __future__ import annotations

import argparse
from typing import Any

from .._atomic import check_output_dir
from ..formats import FORMATS


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "convert",
        help="convert a tokenizer file (tiktoken ranks, Tekken, HF, GPT-2, purebpe) to another format",
        description=(
            "Read a tokenizer file -- a tiktoken-format rank file (name its --encoding: llama3, "
            "llama4, qwen, qwen3.5, whisper, whisper-v3, cl100k_base ...), Mistral's Tekken JSON, "
            "an HF tokenizer.json, GPT-2's vocab.json + merges.txt, purebpe.json -- and write it "
            "into OUT as FORMAT. What the target cannot hold is refused in one line, and the "
            "output is read back and checked before the command succeeds."
        ),
    )
    parser.add_argument("source", metavar="IN", help="a tokenizer file or folder")
    parser.add_argument("output", metavar="OUT", help="directory to write into")
    parser.add_argument("--format", required=True, choices=list(FORMATS))
    parser.add_argument(
        "--encoding",
        default=None,
        help="for a tiktoken-format rank file: the model or OpenAI encoding it belongs to",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..files.convert import convert

    check_output_dir(args.output)
    for path in convert(args.source, args.output, args.format, encoding=args.encoding):
        print(path)
    return 0
