"""Mistral's Tekken tokenizer files (``tekken_*.json`` in ``mistral-common``).

A Tekken file is JSON::

    {"config": {"pattern": ..., "num_vocab_tokens": 150000, "default_vocab_size": 131072,
                "default_num_special_tokens": 1000, "version": "v3"},
     "vocab": [{"rank": 0, "token_bytes": "AA==", "token_str": "\\u0000"}, ...],
     "special_tokens": [{"rank": 0, "token_str": "<unk>", "is_control": true}, ...]}

and ``mistral_common``'s ``Tekkenizer`` reads it so (``tekken.py``):

* the special tokens take the first ids, ``0 .. default_num_special_tokens - 1``: those
  the file lists (files of version v7 and before list none and get the twenty
  ``<unk>``, ``<s>``, ``</s>``, ``[INST]`` ... of :data:`DEPRECATED_SPECIAL_TOKENS`),
  then fillers ``<SPECIAL_{id}>`` up to the configured count;
* the ranks follow: only the first ``default_vocab_size - default_num_special_tokens``
  vocab entries are kept, and the token of rank ``r`` has id ``r + num_special``;
* text is split by ``config.pattern`` and merged by tiktoken's rule over those ranks,
  with *no* special token recognised in the text (``special_tokens={}``): ``"<s>"`` in
  a string is three ordinary characters.

:func:`load_tekken` builds that as a :class:`purebpe.Tokenizer` with
:meth:`~purebpe.Tokenizer.from_ranks` (the ranks shifted by the specials' count, which
keeps their order, so merging is unchanged) and makes ordinary text the default
(``allowed_special=set()``, ``disallowed_special=()``).
"""

from __future__ import annotations

import base64
import binascii
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Union

from ..errors import PureBPEError
from ..pretokenize import resolve_pattern

if TYPE_CHECKING:
    from ..tokenizer import Tokenizer

__all__ = ["DEPRECATED_SPECIAL_TOKENS", "is_tekken", "load_tekken", "read_tekken"]

#: The special tokens of Tekken files that list none (versions up to v7), in id order.
DEPRECATED_SPECIAL_TOKENS = (
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[IMG]",
    "<pad>",
    "[IMG_BREAK]",
    "[IMG_END]",
    "[PREFIX]",
    "[MIDDLE]",
    "[SUFFIX]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[TOOL_CONTENT]",
)

_CONFIG_KEYS = ("pattern", "default_vocab_size", "default_num_special_tokens")


def is_tekken(data: object) -> bool:
    """Whether parsed JSON is a Tekken file (a ``config`` with a pattern, a ``vocab`` list)."""
    return (
        isinstance(data, dict)
        and isinstance(data.get("config"), dict)
        and "pattern" in data["config"]
        and isinstance(data.get("vocab"), list)
    )


def read_tekken(path: Union[str, Path], data: Any = None) -> Dict[str, Any]:
    """``{"pattern", "ranks" {bytes: id}, "special_tokens" {str: id}}`` of a Tekken file.

    ``data`` is the file's parsed JSON when the caller has it already.
    """
    path = Path(path)
    if data is None:
        try:
            with open(path, "r", encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise PureBPEError(f"{path}: cannot read a Tekken file: {exc}") from None
    if not is_tekken(data):
        raise PureBPEError(f"{path}: not a Tekken file (no config.pattern and vocab list)")
    config = data["config"]
    for key in _CONFIG_KEYS:
        if key not in config:
            raise PureBPEError(f"{path}: Tekken config has no {key!r}")
    pattern = config["pattern"]
    vocab_size, num_special = config["default_vocab_size"], config["default_num_special_tokens"]
    if not (isinstance(pattern, str) and isinstance(vocab_size, int) and isinstance(num_special, int)):
        raise PureBPEError(f"{path}: Tekken config has a pattern or size of the wrong type")
    listed = data.get("special_tokens")
    names: List[str] = (
        list(DEPRECATED_SPECIAL_TOKENS)
        if listed is None
        else [_special_name(path, i, entry) for i, entry in enumerate(listed)]
    )
    if len(set(names)) != len(names) or len(names) > num_special:
        raise PureBPEError(
            f"{path}: {len(names)} special tokens listed (or some twice) for {num_special} ids"
        )
    names += [f"<SPECIAL_{i}>" for i in range(len(names), num_special)]
    inner = vocab_size - num_special
    vocab = data["vocab"]
    if not 0 <= inner <= len(vocab):
        raise PureBPEError(
            f"{path}: default_vocab_size {vocab_size} needs {inner} of {len(vocab)} vocab tokens"
        )
    ranks: Dict[bytes, int] = {}
    for index, entry in enumerate(vocab[:inner]):
        try:
            if entry["rank"] != index:
                raise ValueError(f"rank {entry['rank']!r}, expected {index}")
            token = base64.b64decode(entry["token_bytes"], validate=True)
        except (KeyError, TypeError, ValueError, binascii.Error) as exc:
            raise PureBPEError(f"{path}: vocab entry {index}: {exc}") from None
        if token in ranks:
            raise PureBPEError(f"{path}: vocab entry {index}: {token!r} is also rank {ranks[token]}")
        ranks[token] = index + num_special
    return {"pattern": pattern, "ranks": ranks, "special_tokens": {name: i for i, name in enumerate(names)}}


def _special_name(path: Path, index: int, entry: object) -> str:
    if isinstance(entry, Mapping) and entry.get("rank") == index and isinstance(entry.get("token_str"), str):
        return str(entry["token_str"])
    raise PureBPEError(f"{path}: special token {index} is not {{'rank': {index}, 'token_str': ...}}")


def load_tekken(path: Union[str, Path], data: Any = None) -> "Tokenizer":
    """A Tekken file as a :class:`purebpe.Tokenizer` with mistral-common's ids (module docstring).

    >>> import json, tempfile, os, base64
    >>> vocab = [{"rank": b, "token_bytes": base64.b64encode(bytes([b])).decode(), "token_str": None}
    ...          for b in range(256)]
    >>> config = {"pattern": r"\\p{L}+|\\s+|.", "num_vocab_tokens": 256,
    ...           "default_vocab_size": 276, "default_num_special_tokens": 20, "version": "v3"}
    >>> path = os.path.join(tempfile.mkdtemp(), "tekken.json")
    >>> with open(path, "w") as f:
    ...     json.dump({"config": config, "vocab": vocab}, f)
    >>> tok = load_tekken(path)
    >>> tok.encode("hi"), tok.special_ids["</s>"], len(tok.encode("<s>"))
    ([124, 125], 2, 3)
    """
    from ..tokenizer import Tokenizer

    tekken = read_tekken(path, data)
    tok = Tokenizer.from_ranks(
        tekken["ranks"],
        tekken["special_tokens"],
        pretokenizer=resolve_pattern(tekken["pattern"]),
        name=Path(path).stem,
    )
    # mistral-common encodes with special_tokens={}: a special token's text is ordinary text.
    tok._specials = tok._specials.with_defaults(frozenset(), ())
    return tok
