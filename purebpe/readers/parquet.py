"""Parquet: the texts of one string column, read one row group at a time through ``pyarrow``.

``pyarrow`` is an optional extra (``pip install 'purebpe[parquet]'``); where it cannot be
installed (PyPy), the error says how to go on: count under CPython, train from the counts.
A file without the column, a column that is not strings, and a null value are bad input
naming the file and row group (a null with ``errors="skip"`` is skipped and counted).
"""

from __future__ import annotations

import platform
from typing import Any, Iterator, List

from ..errors import InputError, PureBPEError


def pyarrow_parquet(name: str) -> Any:
    """``pyarrow.parquet``, or a one-line error saying how to go on without it."""
    try:
        import pyarrow.parquet as pq
    except ImportError:
        where = platform.python_implementation()
        raise PureBPEError(
            f"{name}: reading Parquet needs pyarrow (pip install 'purebpe[parquet]'), not "
            f"installed under {where}; where it cannot be (PyPy), count under CPython "
            "(purebpe count shards/*.parquet -o counts.tsv.gz) and train here from the "
            "counts (purebpe train --counts counts.tsv.gz)"
        ) from None
    return pq


def open_parquet(name: str, column: str) -> Any:
    """A ``pyarrow.parquet.ParquetFile`` whose ``column`` is checked to hold strings."""
    pq = pyarrow_parquet(name)
    import pyarrow as pa

    try:
        parquet = pq.ParquetFile(name)
        schema = parquet.schema_arrow
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"not a readable Parquet file ({_reason(exc)})", name) from None
    if column not in schema.names:
        raise InputError(f"no column {column!r} (columns: {', '.join(schema.names[:10])})", name)
    kind = schema.field(column).type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        raise InputError(f"column {column!r} holds {kind}, not strings", name)
    return parquet


def row_groups(name: str, column: str) -> int:
    """How many row groups the file has (checking its column)."""
    return int(open_parquet(name, column).metadata.num_row_groups)


def row_group_texts(name: str, column: str, group: int, errors: str, skipped: List[int]) -> Iterator[str]:
    """The texts of row group ``group``; one row group in memory at a time."""
    import pyarrow as pa

    parquet = open_parquet(name, column)
    try:
        values = parquet.read_row_group(group, columns=[column]).column(0).to_pylist()
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"row group {group} cannot be read ({_reason(exc)})", name) from None
    for row, text in enumerate(values):
        if text is None:
            if errors == "skip":
                skipped[0] += 1
                continue
            raise InputError(f"row group {group}, row {row}: {column!r} is null, not a string", name)
        if errors == "replace":
            text = text.encode("utf-8", "replace").decode("utf-8")
        yield text


def _reason(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return (lines[-1] if lines else type(exc).__name__)[:120]
