"""A drop-in stand-in for ``tiktoken``: ``from purebpe.compat import tiktoken``.

The names tiktoken's README uses, with tiktoken's behaviour and ids:

* :func:`get_encoding` (``"cl100k_base"``, ``"o200k_base"``, ``"r50k_base"``/``"gpt2"``,
  ``"p50k_base"``, ``"p50k_edit"``), :func:`list_encoding_names`,
  :func:`encoding_for_model`, :func:`encoding_name_for_model`;
* :class:`Encoding` (``Encoding(name, pat_str=, mergeable_ranks=, special_tokens=,
  explicit_n_vocab=)``), whose ``_pat_str``, ``_mergeable_ranks`` and ``_special_tokens``
  are what tiktoken's "extending tiktoken" recipe reads;
* :mod:`.load` (``load_tiktoken_bpe``, ``dump_tiktoken_bpe``).

Nothing is downloaded: :func:`get_encoding` finds the official rank files offline (see
:mod:`.registry` for where it looks) and says in one line where it looked when it finds
none.  Encoding runs on purebpe (pure Python: PyPy, Pyodide, free-threaded builds).

>>> from purebpe.compat import tiktoken
>>> enc = tiktoken.Encoding("bytes", pat_str=r"\\p{L}+|\\s+|.", special_tokens={"<|end|>": 256},
...                         mergeable_ranks={bytes([b]): b for b in range(256)})
>>> enc.encode("hi<|end|>", allowed_special="all"), enc.n_vocab
([104, 105, 256], 257)
"""

from __future__ import annotations

from . import core, load, model, registry
from .core import Encoding
from .model import encoding_for_model, encoding_name_for_model
from .registry import get_encoding, list_encoding_names

__all__ = [
    "Encoding",
    "core",
    "encoding_for_model",
    "encoding_name_for_model",
    "get_encoding",
    "list_encoding_names",
    "load",
    "model",
    "registry",
]
