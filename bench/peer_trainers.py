"""Every BPE trainer installable here, behind CS336's signature, for the conformance report.

Each adapter is ``train_bpe(input_path, vocab_size, special_tokens) -> (vocab, merges)``
of bytes, written in a few lines over the library's own API, with the GPT-2 pattern where
the library takes one. What each adapter has to do for the library is said in its
docstring; where a library has no special tokens, the adapter cuts the text on them first
(as CS336 does) and puts them in the vocab, so that the report shows the library's
merging, not the adapter's choice. ``bench/conformance_report.py`` runs the suite on each.

Libraries that return only a vocab of ranks (``{token_bytes: rank}``, tiktoken's form)
get their merges recovered by :func:`merges_from_ranks`. CPython only.
"""

from __future__ import annotations

import os
from typing import Callable, Dict, List, Sequence, Tuple, Union

from purebpe.bytemap import decode_token
from purebpe.pretokenize import GPT2_PATTERN
from purebpe.specials import special_pattern, split_on_specials

PathLike = Union[str, "os.PathLike[str]"]
Vocab = Dict[int, bytes]
Merges = List[Tuple[bytes, bytes]]


def read(input_path: PathLike) -> str:
    with open(input_path, "rb") as stream:
        return stream.read().decode("utf-8")


def pieces(input_path: PathLike, special_tokens: Sequence[str]) -> List[str]:
    """The text between the special tokens (the CS336 way), for libraries without them."""
    return split_on_specials(read(input_path), special_pattern(special_tokens))


def merges_from_ranks(ranks: Dict[bytes, int]) -> Merges:
    """The merges a tiktoken-style ``{token: rank}`` stands for: each multi-byte token,
    in rank order, split as BPE with the lower ranks splits it (into two parts, or the
    ranks are not a BPE vocab: ``ValueError``)."""
    merges: Merges = []
    for token, rank in sorted(ranks.items(), key=lambda item: item[1]):
        if len(token) < 2:
            continue
        parts = [bytes([b]) for b in token]
        while len(parts) > 2:
            candidates = [
                (ranks[a + b], i)
                for i, (a, b) in enumerate(zip(parts, parts[1:]))
                if ranks.get(a + b, rank) < rank
            ]
            if not candidates:
                break
            _, i = min(candidates)
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
        if len(parts) != 2:
            raise ValueError(f"token {token!r} (rank {rank}) is not two earlier tokens: {parts!r}")
        merges.append((parts[0], parts[1]))
    return merges


def with_specials(ranks: Dict[bytes, int], special_tokens: Sequence[str]) -> Tuple[Vocab, Merges]:
    """``(vocab, merges)`` from ranks, the special tokens appended to the vocab."""
    tokens = [token for token, _ in sorted(ranks.items(), key=lambda item: item[1])]
    tokens += [s.encode("utf-8") for s in special_tokens]
    return dict(enumerate(tokens)), merges_from_ranks(ranks)


def rustbpe_train_bpe(
    input_path: PathLike, vocab_size: int, special_tokens: Sequence[str]
) -> Tuple[Vocab, Merges]:
    """``rustbpe`` (nanochat's trainer): no special tokens; cut on them first."""
    import rustbpe

    tokenizer = rustbpe.Tokenizer()
    tokenizer.train_from_iterator(
        iter(pieces(input_path, special_tokens)), vocab_size - len(special_tokens), pattern=GPT2_PATTERN
    )
    return with_specials(dict(tokenizer.get_mergeable_ranks()), special_tokens)


def bpeasy_train_bpe(
    input_path: PathLike, vocab_size: int, special_tokens: Sequence[str]
) -> Tuple[Vocab, Merges]:
    """``bpeasy``: no special tokens; cut on them first. ``max_token_length`` is required:
    1000 bytes, more than any case holds."""
    import bpeasy

    ranks = bpeasy.train_bpe(
        iter(pieces(input_path, special_tokens)), GPT2_PATTERN, 1000, vocab_size - len(special_tokens)
    )
    return with_specials(dict(ranks), special_tokens)


def tiktoken_educational_train_bpe(
    input_path: PathLike, vocab_size: int, special_tokens: Sequence[str]
) -> Tuple[Vocab, Merges]:
    """``tiktoken._educational.bpe_train``: it takes one string and no special tokens, so the
    text goes in as it is, special tokens included (joining the pieces between them would
    make words across the boundaries instead)."""
    from tiktoken._educational import bpe_train

    ranks = bpe_train(read(input_path), vocab_size - len(special_tokens), GPT2_PATTERN, visualise=None)
    return with_specials(dict(ranks), special_tokens)


def ffbpe_train_bpe(
    input_path: PathLike, vocab_size: int, special_tokens: Sequence[str]
) -> Tuple[Vocab, Merges]:
    """``ffbpe.train_bpe`` with its special tokens, fed the file's text as one record."""
    import tempfile

    import ffbpe

    model = ffbpe.train_bpe([read(input_path)], vocab_size=vocab_size, special_tokens=list(special_tokens))
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "merges.txt")
        model.save_merges_txt(path)
        with open(path, encoding="utf-8") as stream:
            lines = [
                line.split(" => ")[0]
                for line in stream.read().splitlines()
                if line and not line.startswith("#")
            ]
    merges = [
        (decode_token(left), decode_token(right)) for left, right in (line.split(" ") for line in lines)
    ]
    return {tid: token for token, tid in model.vocab.items()}, merges


def fast_bpe_rs_train_bpe(
    input_path: PathLike, vocab_size: int, special_tokens: Sequence[str]
) -> Tuple[Vocab, Merges]:
    """``fast_bpe_rs.BPE``: no special tokens (cut on them first); its vocab is read back by
    decoding each id, its merges recovered from that order."""
    import fast_bpe_rs

    bpe = fast_bpe_rs.BPE(GPT2_PATTERN)
    size = vocab_size - len(special_tokens)
    bpe.train(size, pieces(input_path, special_tokens))
    ranks: Dict[bytes, int] = {}
    for tid in range(size):
        try:
            token = bytes(bpe.decode([tid]))
        except Exception:  # fewer tokens than asked for
            break
        if not token:  # an id it did not make decodes to nothing
            break
        ranks.setdefault(token, tid)
    return with_specials(ranks, special_tokens)


def bpetokenizer_train_bpe(
    input_path: PathLike, vocab_size: int, special_tokens: Sequence[str]
) -> Tuple[Vocab, Merges]:
    """``bpetokenizer.BPETokenizer`` (minbpe's design) with the GPT-2 pattern and its special
    tokens (given ids after the vocab)."""
    from bpetokenizer import BPETokenizer

    size = vocab_size - len(special_tokens)
    tokenizer = BPETokenizer(
        pattern=GPT2_PATTERN, special_tokens={s: size + i for i, s in enumerate(special_tokens)}
    )
    tokenizer.train(read(input_path), size)
    vocab = {tid: bytes(token) for tid, token in tokenizer.vocab.items()}
    merges = [
        (vocab[a], vocab[b]) for (a, b), _ in sorted(tokenizer.merges.items(), key=lambda item: item[1])
    ]
    for i, special in enumerate(special_tokens):
        vocab[size + i] = special.encode("utf-8")
    return vocab, merges


def purebpe_train_bpe(
    input_path: PathLike, vocab_size: int, special_tokens: Sequence[str]
) -> Tuple[Vocab, Merges]:
    """purebpe itself (``variant="auto"``), the control."""
    import purebpe

    return purebpe.train_bpe(str(input_path), vocab_size, special_tokens)


def guarded(
    train_bpe: Callable[[PathLike, int, Sequence[str]], Tuple[Vocab, Merges]],
) -> Callable[..., Tuple[Vocab, Merges]]:
    """``train_bpe`` with the trivial cases answered by the adapter (no merge asked for, or an
    empty file: the bytes and the special tokens), for libraries that crash on them, so
    that the report shows what else the suite finds (with the workarounds below for
    what the unguarded rows show)."""

    def train(input_path: PathLike, vocab_size: int, special_tokens: Sequence[str]) -> Tuple[Vocab, Merges]:
        if vocab_size <= 256 + len(special_tokens) or not read(input_path):
            return with_specials({bytes([b]): b for b in range(256)}, special_tokens)
        return train_bpe(input_path, vocab_size, special_tokens)

    return train


def as_far_as_it_goes(
    train_bpe: Callable[[PathLike, int, Sequence[str]], Tuple[Vocab, Merges]],
) -> Callable[[PathLike, int, Sequence[str]], Tuple[Vocab, Merges]]:
    """For trainers that crash (``max()`` of no pairs) when no pair is left before
    ``vocab_size``: ask for one token fewer until they do not -- the vocab they would have
    stopped at."""

    def train(input_path: PathLike, vocab_size: int, special_tokens: Sequence[str]) -> Tuple[Vocab, Merges]:
        for size in range(vocab_size, 256 + len(special_tokens), -1):
            try:
                return train_bpe(input_path, size, special_tokens)
            except ValueError:
                continue
        return with_specials({bytes([b]): b for b in range(256)}, special_tokens)

    return train


def _ffbpe_without_specials(
    input_path: PathLike, vocab_size: int, special_tokens: Sequence[str]
) -> Tuple[Vocab, Merges]:
    """ffbpe refuses a special token that equals a byte: cut the text on the special tokens
    here instead, train without them, and append them to the vocab."""
    import ffbpe

    model = ffbpe.train_bpe(pieces(input_path, special_tokens), vocab_size=vocab_size - len(special_tokens))
    return with_specials(dict(model.vocab), special_tokens)


guarded_tiktoken_educational_train_bpe = guarded(as_far_as_it_goes(tiktoken_educational_train_bpe))
guarded_ffbpe_train_bpe = guarded(_ffbpe_without_specials)
guarded_bpetokenizer_train_bpe = guarded(as_far_as_it_goes(bpetokenizer_train_bpe))
