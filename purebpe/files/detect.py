"""What a tokenizer file is, by its content, and the :class:`purebpe.Tokenizer` it holds.

:func:`detect` names the kind of a path:

``"hf"``        an HF ``tokenizer.json`` (a JSON object with a ``model`` object), whatever
                its file name -- loaded by :mod:`purebpe.hf` (``Tokenizer.from_file``);
``"tekken"``    Mistral's Tekken JSON (``config.pattern`` and a ``vocab`` list,
                :mod:`.tekken`);
``"purebpe"``   purebpe's own ``purebpe.json``, or a ``.tiktoken`` file with purebpe's
                sidecar (``<name>.json`` beside it): :func:`purebpe.load`;
``"tiktoken"``  a tiktoken-format rank file (``base64 rank`` lines, plain or gzipped,
                whatever its name: Llama's ``tokenizer.model``, ``qwen.tiktoken``);
``"gpt2"``      a folder with GPT-2's ``vocab.json`` and ``merges.txt`` (or either file).

A folder is looked into for ``purebpe.json``, ``tokenizer.json``, ``tekken.json``,
``vocab.json`` + ``merges.txt``, then ``tokenizer.model`` / ``*.tiktoken``; a folder of
purebpe's own model (``purebpe.json``, or a ``.tiktoken`` file with its sidecar) is read
by :func:`purebpe.load`, which checks every format saved in it against the others.

:func:`load_tokenizer` builds every kind but ``"hf"`` (which ``Tokenizer.from_file`` hands
to :mod:`purebpe.hf`).  A rank file holds no pattern: name its encoding (``"llama3"``,
``"cl100k_base"`` ...; an official file name such as ``cl100k_base.tiktoken`` names
itself) or give ``pattern=`` and ``special_tokens=``.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping, Optional, Tuple, Union

from ..errors import PureBPEError
from ..pretokenize import Pretokenizer

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["KINDS", "detect", "load_tokenizer"]

KINDS = ("hf", "tekken", "purebpe", "tiktoken", "gpt2")

PathLike = Union[str, "os.PathLike[str]"]


def _json_kind(data: Any) -> Optional[str]:
    from .tekken import is_tekken

    if not isinstance(data, dict):
        return None
    if is_tekken(data):
        return "tekken"
    if data.get("format") == "purebpe":
        return "purebpe"
    if isinstance(data.get("model"), dict):
        return "hf"
    return None


def _first_line(path: Path) -> bytes:
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
        if head[:2] == b"\x1f\x8b":
            with gzip.open(path, "rb") as zipped:
                head = zipped.read(4096)
    except (OSError, EOFError, ValueError):
        return b""
    return head.split(b"\n", 1)[0].strip()


def _is_rank_line(line: bytes) -> bool:
    fields = line.split()
    if len(fields) != 2 or not fields[1].isdigit():
        return False
    try:
        base64.b64decode(fields[0], validate=True)
    except (ValueError, binascii.Error):
        return fields[0] == b"="  # Whisper writes the empty token so
    return True


def _read_json(path: Path) -> Tuple[Optional[str], Any]:
    """``(kind, parsed JSON)`` of a JSON file, ``(None, None)`` when it is not JSON."""
    try:
        with open(path, "rb") as handle:
            if handle.read(1).lstrip() not in (b"{", b""):
                return None, None
            handle.seek(0)
            data = json.loads(handle.read().decode("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None, None
    return _json_kind(data), data


def _detect_file(path: Path) -> Tuple[str, Any]:
    if path.name.endswith("vocab.json") and (path.parent / "merges.txt").is_file():
        return "gpt2", None  # GPT-2's pair: not parsed twice (0.02-0.04 s of its load on PyPy)
    kind, data = _read_json(path)
    if kind is not None:
        return kind, data
    if path.name.endswith((".tiktoken", ".tiktoken.gz")) and (path.parent / (path.name + ".json")).exists():
        return "purebpe", None  # purebpe's tiktoken export: ranks plus a sidecar
    if path.name.endswith(("vocab.json", "merges.txt")):
        return "gpt2", None
    if _is_rank_line(_first_line(path)):
        return "tiktoken", None
    raise PureBPEError(
        f"{path}: not a tokenizer file purebpe knows (an HF tokenizer.json, Tekken JSON, "
        f"purebpe.json, a tiktoken-format rank file, or GPT-2's vocab.json + merges.txt)"
    )


def _in_folder(folder: Path) -> Path:
    for name in ("purebpe.json", "tokenizer.json", "tekken.json", "vocab.json"):
        if (folder / name).is_file():
            return folder / name
    ranks = sorted(folder.glob("*.tiktoken")) + sorted(folder.glob("tokenizer.model"))
    if ranks:
        return ranks[0]
    raise PureBPEError(
        f"{folder}: no tokenizer file in this folder (looked for purebpe.json, tokenizer.json, "
        f"tekken.json, vocab.json + merges.txt, *.tiktoken, tokenizer.model)"
    )


def _tokenizer_file(path: PathLike) -> Path:
    """``path``, or the tokenizer file in it if it is a folder (:func:`_in_folder`)."""
    target = Path(path)
    if not target.exists():
        raise PureBPEError(f"{target}: no such file or directory")
    return _in_folder(target) if target.is_dir() else target


def detect(path: PathLike) -> str:
    """The kind of tokenizer file (or folder) ``path`` is: one of :data:`KINDS`.

    >>> import tempfile, os, json
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "my-tokenizer.json"), "w") as f:
    ...     json.dump({"version": "1.0", "model": {"type": "BPE", "vocab": {}, "merges": []}}, f)
    >>> detect(os.path.join(folder, "my-tokenizer.json"))
    'hf'
    >>> with open(os.path.join(folder, "tokenizer.model"), "w") as f:
    ...     _ = f.write("IQ== 0\\nIg== 1\\n")
    >>> detect(os.path.join(folder, "tokenizer.model"))
    'tiktoken'
    """
    return _detect_file(_tokenizer_file(path))[0]


def _load_with_sidecar(ranks_path: Path) -> "Tokenizer":
    """purebpe's tiktoken export, by tiktoken's rule: the sidecar gives pattern and specials."""
    from .._atomic import file_digest
    from ..formats.bytelevel import read_json
    from ..formats.tiktoken_format import _RANKS_DIGEST
    from ..pretokenize import pretokenizer_from_json
    from .tiktoken_models import load_tiktoken_model

    sidecar_path = ranks_path.with_name(ranks_path.name + ".json")
    sidecar = read_json(sidecar_path, "tiktoken sidecar")
    if not isinstance(sidecar, dict) or not isinstance(sidecar.get("special_tokens", {}), dict):
        raise PureBPEError(f"{sidecar_path}: malformed tiktoken sidecar")
    recorded = sidecar.get(_RANKS_DIGEST)
    if recorded is not None and recorded != file_digest(ranks_path):
        raise PureBPEError(f"{ranks_path} and {sidecar_path}: not saved together (the ranks changed)")
    pretokenizer = pretokenizer_from_json(sidecar.get("pretokenizer", "gpt2"), str(sidecar_path))
    return load_tiktoken_model(
        ranks_path, pattern=pretokenizer, special_tokens=sidecar.get("special_tokens", {})
    )


def load_tokenizer(
    path: PathLike,
    *,
    encoding: Optional[str] = None,
    pattern: Optional[Union[str, Pretokenizer]] = None,
    special_tokens: Optional[Mapping[str, int]] = None,
) -> "Tokenizer":
    """The :class:`purebpe.Tokenizer` of a Tekken, purebpe, tiktoken-format or GPT-2 file.

    ``encoding``, ``pattern`` and ``special_tokens`` are for rank files (see
    :func:`purebpe.files.tiktoken_models.load_tiktoken_model`); an HF ``tokenizer.json``
    gives a :class:`purebpe.hf.HFTokenizer`, which has the tokenizer's encode/decode surface.
    """
    from ..tokenizer import Tokenizer

    target = _tokenizer_file(path)
    kind, data = _detect_file(target)
    if kind != "tiktoken" and (encoding is not None or pattern is not None or special_tokens is not None):
        raise PureBPEError(
            f"{target}: encoding=, pattern= and special_tokens= are for rank files, not {kind} files"
        )
    if kind == "hf":
        from ..hf.loader import from_document

        # The document recognised is the one built: a 200k-token file is not parsed twice.
        return from_document(data, str(target))  # type: ignore[return-value]  # Tokenizer's surface
    if kind == "tekken":
        from .tekken import load_tekken

        return load_tekken(target, data)
    if kind == "purebpe" and Path(path).is_dir():
        from ..formats import load

        # purebpe's folder: every format saved in it is read, checked and held to the others.
        return Tokenizer.from_model(load(path))
    if kind == "purebpe" and target.name.endswith((".tiktoken", ".tiktoken.gz")):
        return _load_with_sidecar(target)
    if kind == "purebpe":
        from ..formats import load

        return Tokenizer.from_model(load(target))
    if kind == "gpt2":
        from ..formats.gpt2 import _pair_paths

        vocab, merges = _pair_paths(target)
        return Tokenizer.from_files(vocab, merges)
    from ..tiktoken_compat import ENCODINGS
    from .tiktoken_models import load_tiktoken_model

    if encoding is None and pattern is None:
        official = target.name.split(".")[0]
        if official in ENCODINGS and ENCODINGS[official].rank_file.split(".")[0] == official:
            encoding = official
    return load_tiktoken_model(target, encoding, pattern=pattern, special_tokens=special_tokens)
