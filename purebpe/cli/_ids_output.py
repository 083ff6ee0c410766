"""Where ``purebpe encode`` puts ids: one file (text, ``.npy``, ``.bin``) or ``.bin``/``.npy``
shards of a fixed number of ids in a directory, each with its dtype recorded.

A raw ``.bin`` file carries no header (training pipelines memory-map it), so its dtype is
recorded beside it in a sidecar, ``NAME.bin.json`` (``{"format": "purebpe-ids-1",
"dtype": "uint16", "count": N}``), which ``purebpe decode`` reads: a raw file is never
decoded with the wrong width. Shards are written into a hidden directory beside the
target and moved into it only when every shard is complete: a failed run writes nothing.
"""

from __future__ import annotations

import json
import os
import sys
from array import array
from pathlib import Path
from typing import BinaryIO, Dict, List, Optional

from .._atomic import make_temporary_directory, remove_temporary_directory, write_text
from ..errors import PureBPEError
from ._io import DTYPES, _npy_header, check_npy_output

#: The sidecar's format tag.
SIDECAR_FORMAT = "purebpe-ids-1"


def sidecar_path(path: str) -> str:
    """The dtype record of a raw ids file.

    >>> sidecar_path("ids/train.bin")
    'ids/train.bin.json'
    """
    return path + ".json"


def write_sidecar(path: str, dtype: str, count: int) -> None:
    write_text(
        sidecar_path(path), json.dumps({"format": SIDECAR_FORMAT, "dtype": dtype, "count": count}) + "\n"
    )


def read_sidecar(path: str) -> Optional[Dict[str, object]]:
    """The sidecar of ``path`` (checked), or ``None`` where there is none."""
    side = sidecar_path(path)
    try:
        with open(side, encoding="utf-8") as f:
            record = json.loads(f.read(1 << 16))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise PureBPEError(f"{side}: not a readable ids sidecar ({exc})") from None
    if (
        not isinstance(record, dict)
        or record.get("format") != SIDECAR_FORMAT
        or record.get("dtype") not in DTYPES
        or not isinstance(record.get("count"), int)
    ):
        raise PureBPEError(f"{side}: not a purebpe ids sidecar")
    size = os.path.getsize(path)
    itemsize = array(DTYPES[str(record["dtype"])][0]).itemsize
    if size != record["count"] * itemsize:
        raise PureBPEError(
            f"{path}: holds {size} bytes, but its sidecar records {record['count']} ids of "
            f"{record['dtype']}; the two files do not belong together"
        )
    return record


class IdsWriter:
    """Ids written to one open stream as text, ``.npy`` or raw ``.bin``."""

    def __init__(self, out: BinaryIO, format: str, dtype: str, name: str = "output") -> None:
        if format == "npy":
            check_npy_output(out, name)
        self.out = out
        #: Where the ``.npy`` header starts (an output given as a descriptor may hold bytes).
        self.start = out.tell() if format == "npy" else 0
        self.format = format
        self.dtype = dtype
        self.count = 0
        self._text_started = False
        if format == "npy":
            out.write(_npy_header(DTYPES[dtype][1], 0))

    def write(self, ids: "array[int]") -> None:
        if not ids:
            return
        if self.format == "text":
            if self._text_started:
                self.out.write(b" ")
            self.out.write(" ".join(map(str, ids)).encode("ascii"))
            self._text_started = True
        else:
            if sys.byteorder == "big":
                ids = array(ids.typecode, ids)
                ids.byteswap()
            # The array's own memory, not a copy of it (garbage for PyPy's collector).
            self.out.write(memoryview(ids).cast("B"))
        self.count += len(ids)

    def finish(self) -> int:
        if self.format == "text":
            self.out.write(b"\n")
        elif self.format == "npy":
            self.out.seek(self.start)
            self.out.write(_npy_header(DTYPES[self.dtype][1], self.count))
            self.out.seek(0, os.SEEK_END)
        return self.count


class ShardWriter:
    """Ids in files of ``shard_ids`` ids each (the last holds the rest) in ``directory``:
    ``shard_000000.bin`` (or ``.npy``), ... with their sidecars, put in place at the end."""

    def __init__(self, directory: str, shard_ids: int, format: str, dtype: str) -> None:
        if format not in ("bin", "npy"):
            raise PureBPEError("--shard-tokens writes .bin or .npy shards, not text")
        target = Path(directory)
        if target.exists() and (not target.is_dir() or any(target.iterdir())):
            raise PureBPEError(f"{target}: shards go into a new or empty directory")
        parent = target.parent
        parent.mkdir(parents=True, exist_ok=True)
        self.target = target
        self.staging = make_temporary_directory(parent, f".{target.name}.purebpe-{os.getpid()}-")
        self.shard_ids = shard_ids
        self.format = format
        self.dtype = dtype
        self.names: List[str] = []
        self.count = 0
        self._file: Optional[BinaryIO] = None
        self._writer: Optional[IdsWriter] = None

    def _open(self) -> IdsWriter:
        name = f"shard_{len(self.names):06d}.{self.format}"
        self.names.append(name)
        self._file = open(os.path.join(self.staging, name), "w+b")
        self._writer = IdsWriter(self._file, self.format, self.dtype)
        return self._writer

    def _close(self) -> None:
        if self._writer is not None and self._file is not None:
            count = self._writer.finish()
            self._file.close()
            if self.format == "bin":
                write_sidecar(os.path.join(self.staging, self.names[-1]), self.dtype, count)
        self._writer = self._file = None

    def write(self, ids: "array[int]") -> None:
        start = 0
        while start < len(ids):
            writer = self._writer or self._open()
            room = self.shard_ids - writer.count
            piece = ids[start : start + room]
            writer.write(piece)
            self.count += len(piece)
            start += len(piece)
            if writer.count >= self.shard_ids:
                self._close()

    def finish(self) -> int:
        self._close()
        self.target.mkdir(exist_ok=True)
        for name in sorted(os.listdir(self.staging)):
            os.replace(os.path.join(self.staging, name), self.target / name)
        remove_temporary_directory(self.staging)
        return self.count

    def abandon(self) -> None:
        if self._file is not None:
            self._file.close()
        remove_temporary_directory(self.staging)
