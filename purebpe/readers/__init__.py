"""Corpus readers: every common layout of a training corpus as a stream of documents.

Plain text, JSON lines and Parquet, compressed with gzip, bzip2, xz or zstd (recognised
by their magic bytes), given as files, directories, globs or ``-``; see
:mod:`purebpe.readers.documents` for the documents they yield and
:mod:`purebpe.readers.inputs` for how inputs are found and recognised.
"""

from __future__ import annotations

from .documents import (
    ERRORS,
    FileText,
    Part,
    Piece,
    RawText,
    ReadOptions,
    ShippedPiece,
    as_text,
    capped,
    checked_stream,
    documents,
    open_source,
    open_stream,
    read_options,
    shipped,
    source_documents,
    sources,
)
from .inputs import LAYOUTS, Source, check_unchanged, expand, recognise

__all__ = [
    "ERRORS",
    "LAYOUTS",
    "FileText",
    "Part",
    "Piece",
    "RawText",
    "as_text",
    "ReadOptions",
    "ShippedPiece",
    "Source",
    "capped",
    "checked_stream",
    "check_unchanged",
    "documents",
    "expand",
    "open_source",
    "open_stream",
    "read_options",
    "recognise",
    "shipped",
    "source_documents",
    "sources",
]
