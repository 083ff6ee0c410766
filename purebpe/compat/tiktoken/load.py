"""``tiktoken.load``: read and write ``.tiktoken`` rank files (local files only: no download)."""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path
from typing import Dict, Mapping, Optional, Union

from ...errors import PureBPEError
from ...tiktoken_compat import read_ranks

__all__ = ["check_hash", "dump_tiktoken_bpe", "load_tiktoken_bpe"]


def check_hash(data: bytes, expected_hash: str) -> bool:
    """Whether ``data``'s sha256 is ``expected_hash`` (tiktoken's helper)."""
    return hashlib.sha256(data).hexdigest() == expected_hash


def load_tiktoken_bpe(
    tiktoken_bpe_file: Union[str, "os.PathLike[str]"], expected_hash: Optional[str] = None
) -> Dict[bytes, int]:
    """``{token bytes: rank}`` of a local ``.tiktoken`` file (plain or ``.gz``).

    A URL is refused in one line (purebpe never downloads: put the file in a folder and
    give its path).  ``expected_hash`` is checked against the file's sha256 as tiktoken does.

    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "t.tiktoken")
    >>> dump_tiktoken_bpe({b"a": 0, b"b": 1, b"ab": 2}, path)
    >>> load_tiktoken_bpe(path)
    {b'a': 0, b'b': 1, b'ab': 2}
    """
    where = os.fspath(tiktoken_bpe_file)
    if "://" in where:
        raise PureBPEError(f"{where}: purebpe reads rank files offline; download it and pass the local path")
    path = Path(where)
    if expected_hash is not None and not check_hash(path.read_bytes(), expected_hash):
        raise PureBPEError(f"{path}: sha256 is not the expected {expected_hash}")
    return read_ranks(path)


def dump_tiktoken_bpe(
    bpe_ranks: Mapping[bytes, int], tiktoken_bpe_file: Union[str, "os.PathLike[str]"]
) -> None:
    """Write ``bpe_ranks`` as a ``.tiktoken`` file, in rank order (tiktoken's helper)."""
    with open(tiktoken_bpe_file, "wb") as handle:
        for token, rank in sorted(bpe_ranks.items(), key=lambda item: item[1]):
            handle.write(base64.b64encode(token) + b" " + str(rank).encode() + b"\n")
