"""``tiktoken.core.Encoding``: a :class:`purebpe.Tokenizer` built from tiktoken's arguments.

The pattern string goes through :func:`purebpe.pretokenize.resolve_pattern`: tiktoken's
own strings (and proven variants of them, Llama 3's and Qwen's) run on purebpe's
scanners, any other pattern on the ``regex`` package.
"""

from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Tuple

from ...errors import PureBPEError
from ...pretokenize import resolve_pattern
from ...tokenizer import Tokenizer

__all__ = ["Encoding"]


class Encoding(Tokenizer):
    """``tiktoken.Encoding(name, *, pat_str, mergeable_ranks, special_tokens, explicit_n_vocab=None)``.

    >>> enc = Encoding("tiny", pat_str=r"\\S+|\\s+", mergeable_ranks={bytes([b]): b for b in range(256)},
    ...                special_tokens={"<|endoftext|>": 256}, explicit_n_vocab=257)
    >>> enc.encode("a b"), enc.eot_token, sorted(enc._special_tokens)
    ([97, 32, 98], 256, ['<|endoftext|>'])
    """

    _pat_str: str
    _mergeable_ranks: Dict[bytes, int]
    _special_tokens: Dict[str, int]

    def __init__(
        self,
        name: str,
        *,
        pat_str: str,
        mergeable_ranks: Mapping[bytes, int],
        special_tokens: Mapping[str, int],
        explicit_n_vocab: Optional[int] = None,
    ) -> None:
        if not isinstance(pat_str, str):
            raise TypeError(f"pat_str must be a str, not {type(pat_str).__name__}")
        built = Tokenizer.from_ranks(
            mergeable_ranks, special_tokens, pretokenizer=resolve_pattern(pat_str), name=name
        )
        # from_ranks builds the tables on a new object; adopt them (Tokenizer has no slots).
        self.__dict__.update(vars(built))
        self._pat_str = pat_str
        self._mergeable_ranks = dict(mergeable_ranks)
        self._special_tokens = dict(special_tokens)
        if explicit_n_vocab:
            if len(mergeable_ranks) + len(special_tokens) != explicit_n_vocab:
                raise PureBPEError(
                    f"explicit_n_vocab is {explicit_n_vocab} but there are {len(mergeable_ranks)} "
                    f"ranks and {len(special_tokens)} special tokens"
                )
            if self.max_token_value != explicit_n_vocab - 1:
                raise PureBPEError(
                    f"explicit_n_vocab is {explicit_n_vocab} but the largest id is {self.max_token_value}"
                )

    def __reduce__(self) -> Tuple[Any, Tuple[Any, ...]]:
        return _encoding, (self.name, self._pat_str, self._mergeable_ranks, self._special_tokens)

    def __repr__(self) -> str:
        return f"<Encoding {self.name!r}>"


def _encoding(
    name: str, pat_str: str, mergeable_ranks: Dict[bytes, int], special_tokens: Dict[str, int]
) -> Encoding:
    return Encoding(name, pat_str=pat_str, mergeable_ranks=mergeable_ranks, special_tokens=special_tokens)
