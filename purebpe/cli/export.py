"""``purebpe export``: write a saved model in another format (GPT-2, HF, tiktoken, purebpe)."""

from __future__ import annotations

import argparse
from typing import Any

from .._atomic import check_output_dir
from ..formats import FORMATS
from ..formats import load as load_model


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "export",
        help="write a tokenizer in another library's format",
        description=(
            "Read a saved model (any format) and write it as GPT-2 vocab.json + merges.txt "
            "(gpt2), a Hugging Face tokenizer.json (hf), a tiktoken ranks file with a JSON "
            "sidecar (tiktoken), or purebpe.json (purebpe)."
        ),
    )
    parser.add_argument("--tokenizer", required=True, metavar="DIR", help="a saved model (any format)")
    parser.add_argument("--format", required=True, choices=list(FORMATS))
    parser.add_argument("-o", "--output", required=True, metavar="DIR", help="directory to write into")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    check_output_dir(args.output)
    model = load_model(args.tokenizer)
    for path in model.save(args.output, args.format):
        print(path)
    return 0
