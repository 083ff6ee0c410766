"""purebpe.gpu: batch and streaming decode on an array namespace, checked against Python.

Every property runs on each backend and each way of copying bytes: NumPy (the shared
``segments`` expression and NumPy's ``windows`` stores) and the CuPy branches of the code
on NumPy arrays (:func:`cupy_stand_in`) always, CuPy (``segments`` and the fused kernel)
when it is installed and sees a GPU, and is skipped with the reason shown otherwise. The expected
values come from plain Python over the same vocab (``reference_decode``) and from the
standard library's incremental UTF-8 decoder (``reference_stream``), never from the code
under test.
"""

from __future__ import annotations

import codecs
import json
import os
import subprocess
import sys
from types import ModuleType
from typing import Any, Dict, List, Mapping, Sequence, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import purebpe
import purebpe.gpu.table as gpu_table
from purebpe.bytemap import BYTE_TO_UNICODE, decode_token
from purebpe.corpus import default_corpus
from purebpe.errors import PureBPEError
from purebpe.gpu import (
    BatchDecodeStream,
    DecodeTable,
    cupy_unavailable_reason,
    decode_batch,
    gather_bytes,
)
from purebpe.gpu.decode import repeat_by_counts, repeat_by_prefix_sum
from purebpe.gpu.stream import utf8_lead_tables
from purebpe.gpu.table import stores_in_order

numpy = pytest.importorskip("numpy")

CUPY_REASON = cupy_unavailable_reason()
_NO_CUPY = pytest.mark.skipif(CUPY_REASON is not None, reason=f"CuPy backend not run: {CUPY_REASON}")
#: (namespace, gather) pairs; every property test runs on each.
BACKENDS = [
    pytest.param(("numpy", "segments"), id="numpy"),
    pytest.param(("numpy", "windows"), id="numpy-windows"),
    pytest.param(("cupy-stand-in", "segments"), id="cupy-branches-on-numpy"),
    pytest.param(("cupy", "segments"), id="cupy", marks=_NO_CUPY),
    pytest.param(("cupy", "fused"), id="cupy-fused", marks=_NO_CUPY),
]
Backend = Tuple[str, str]

SPECIALS = ["<|endoftext|>", "<|pad|>"]
#: Tokens that split characters or are ill-formed UTF-8 on their own.
AWKWARD_TOKENS = [
    b"\xf0\x9f",  # the first half of an emoji
    b"\x98\x80",  # ... and its second half
    b"\x82\xac\xc3",  # the end of "€" and the start of "é"
    b"\xa9 w",  # the end of "é" and ASCII
    b"\x80",  # a lone continuation byte
    b"\xc0\x80",  # overlong NUL
    b"\xe0\x80\xaf",  # overlong "/"
    b"\xed\xa0\x80",  # a surrogate (U+D800)
    b"\xf4\x90\x80\x80",  # above U+10FFFF
    b"\xf8\x88\x80\x80\x80",  # a 5-byte form
    "é".encode(),
    "日本".encode(),
    "😀".encode(),
    b" the",
    b"",  # an empty token: zero bytes in the middle of a row
]


def reference_decode(vocab: Mapping[int, bytes], ids: Sequence[int]) -> str:
    """What ``Tokenizer.decode`` is defined to return, in plain Python."""
    return b"".join(vocab[i] for i in ids).decode("utf-8", "replace")


def reference_stream(chunks: Sequence[bytes]) -> Tuple[List[str], str]:
    """Per-chunk output of the stdlib incremental decoder (``errors="replace"``), then its flush.

    CPython's decoder also holds a truncated surrogate (``ED A0``..``ED BF``) for the sake of
    ``surrogatepass``; that is ill-formed UTF-8, which PyPy and purebpe emit at once. Release
    it here so both interpreters give the same, Unicode-conformant reference.
    """
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    out = []
    for chunk in chunks:
        text = decoder.decode(chunk)
        pending = decoder.getstate()[0]
        if len(pending) == 2 and pending[0] == 0xED and pending[1] >= 0xA0:
            text += decoder.decode(b"", final=True)
            decoder.reset()
        out.append(text)
    return out, decoder.decode(b"", final=True)


def cupy_stand_in() -> ModuleType:
    """NumPy under the name ``cupy``, refusing what CuPy refuses (``repeat`` by an array).

    purebpe.gpu takes its CuPy branches for it (the scatter-and-prefix-sum repeat, the
    result packed into one transfer, ``asnumpy``), so those run in every environment, on
    the CPU. Only the fused kernel needs the real CuPy.
    """
    module = ModuleType("cupy")
    module.__dict__.update({k: v for k, v in vars(numpy).items() if not k.startswith("__")})

    def repeat(a: Any, repeats: Any, axis: Any = None) -> Any:
        if not isinstance(repeats, int):
            raise TypeError("cupy.repeat takes an int or a list of counts, not an array")
        return numpy.repeat(a, repeats, axis)

    module.repeat = repeat  # type: ignore[attr-defined]
    module.asnumpy = numpy.asarray  # type: ignore[attr-defined]
    return module


_CUPY_STAND_IN = cupy_stand_in()


def namespace(backend: Backend) -> Any:
    """What to pass as ``xp`` for ``backend``."""
    return _CUPY_STAND_IN if backend[0] == "cupy-stand-in" else backend[0]


def make_table(vocab: Mapping[int, bytes], backend: Backend) -> DecodeTable:
    return DecodeTable.from_vocab(vocab, xp=namespace(backend), gather=backend[1])


def byte_vocab() -> Dict[int, bytes]:
    return {b: bytes([b]) for b in range(256)}


@st.composite
def vocabs(draw: st.DrawFn) -> Dict[int, bytes]:
    """Every byte, some awkward and random tokens, the specials; dense or scattered ids.

    Random tokens run to 20 bytes: past one and two 8-byte windows (``gather="windows"``).
    """
    extra = draw(
        st.lists(
            st.sampled_from(AWKWARD_TOKENS) | st.binary(max_size=6) | st.binary(max_size=20), max_size=24
        )
    )
    tokens = [bytes([b]) for b in range(256)] + extra + [s.encode() for s in SPECIALS]
    if draw(st.booleans()):
        ids: Sequence[int] = range(len(tokens))
    else:  # a layout with gaps, as a hand-edited vocab may have
        ids = draw(st.permutations(range(len(tokens) + 8)))[: len(tokens)]
    return dict(zip(ids, tokens))


def draw_batch(data: Any, backend: Backend) -> Tuple[Dict[int, bytes], List[List[int]], DecodeTable]:
    """A vocab, up to 8 rows of up to 12 of its ids (empty rows too), and its table."""
    vocab = data.draw(vocabs())
    rows = data.draw(st.lists(st.lists(st.sampled_from(sorted(vocab)), max_size=12), max_size=8))
    return vocab, rows, make_table(vocab, backend)


@pytest.fixture(scope="module")
def trained() -> purebpe.BPEModel:
    texts = default_corpus()[:30] + ["日本語のテキスト 😀😀 naïve façade Ünïcödé ✓"] * 20
    return purebpe.train_from_iterator(texts, 700, SPECIALS)


def greedy_ids(vocab: Mapping[int, bytes], text: str) -> List[int]:
    """Ids whose bytes spell ``text``: longest vocab token first (any spelling decodes back)."""
    by_bytes = {token: tid for tid, token in vocab.items() if token}
    data = text.encode()
    ids, i = [], 0
    while i < len(data):
        length = min(16, len(data) - i)
        while data[i : i + length] not in by_bytes:
            length -= 1
        ids.append(by_bytes[data[i : i + length]])
        i += length
    return ids


# ---------------------------------------------------------------------------------------
# decode_batch
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
@given(data=st.data())
def test_decode_batch_equals_python_for_every_input_form(backend: Backend, data: Any) -> None:
    vocab, rows, table = draw_batch(data, backend)
    xp = table.xp
    expected = [reference_decode(vocab, row) for row in rows]
    assert decode_batch(table, rows) == expected

    flat = [i for row in rows for i in row]
    offsets = [0]
    for row in rows:
        offsets.append(offsets[-1] + len(row))
    ragged = (xp.asarray(flat, dtype=xp.int64), xp.asarray(offsets, dtype=xp.int64))
    assert decode_batch(table, ragged) == expected

    # Padded: the padding holds ids that are not in the vocab, and must not be read.
    width = max([len(row) for row in rows], default=0) + data.draw(st.integers(0, 2))
    pad = data.draw(st.sampled_from([-1, max(vocab) + 1, 2**40]))
    padded = [row + [pad] * (width - len(row)) for row in rows]
    grid = xp.asarray(numpy.asarray(padded, dtype=numpy.int64).reshape(len(rows), width))
    lengths = xp.asarray([len(row) for row in rows], dtype=xp.int64)
    assert decode_batch(table, grid, lengths) == expected
    assert decode_batch(table, grid, [len(row) for row in rows]) == expected  # host lengths
    # Host arrays work for a device table too (checked on the host, then copied once).
    assert decode_batch(table, xp.asnumpy(grid) if hasattr(xp, "asnumpy") else grid, lengths) == expected


@pytest.mark.parametrize("backend", BACKENDS)
@given(data=st.data())
def test_gather_bytes_concatenates_token_bytes(backend: Backend, data: Any) -> None:
    vocab, rows, table = draw_batch(data, backend)
    buffer, offsets = gather_bytes(table, rows)
    host = bytes(numpy.asarray(buffer.get() if hasattr(buffer, "get") else buffer))
    starts = [int(o) for o in (offsets.get() if hasattr(offsets, "get") else offsets)]
    assert [host[a:b] for a, b in zip(starts, starts[1:])] == [
        b"".join(vocab[i] for i in row) for row in rows
    ]


@pytest.mark.parametrize("backend", BACKENDS)
def test_full_rows_without_lengths(backend: Backend, trained: purebpe.BPEModel) -> None:
    table = make_table(trained.vocab, backend)
    ids = numpy.random.default_rng(0).integers(0, trained.vocab_size, size=(64, 50))
    expected = [reference_decode(trained.vocab, row) for row in ids.tolist()]
    assert decode_batch(table, table.xp.asarray(ids)) == expected
    assert decode_batch(table, table.xp.asarray(ids.astype(numpy.int32))) == expected
    assert decode_batch(table, table.xp.zeros((3, 0), dtype=table.xp.int64)) == ["", "", ""]
    assert decode_batch(table, []) == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_real_text_round_trips(backend: Backend, trained: purebpe.BPEModel) -> None:
    texts = [t[:300] for t in default_corpus()[30:60]] + [
        "日本語のテキスト 😀😀 naïve<|endoftext|> façade",
        "",
        "<|pad|><|pad|>",
    ]
    rows = [greedy_ids(trained.vocab, text) for text in texts]
    assert max(len(trained.vocab[i]) for row in rows for i in row) > 1  # merges are used
    table = DecodeTable.from_tokenizer(trained, xp=namespace(backend), gather=backend[1])
    assert decode_batch(table, rows) == texts


@pytest.mark.parametrize("backend", BACKENDS)
def test_split_and_ill_formed_sequences(backend: Backend) -> None:
    vocab = byte_vocab()
    vocab.update({256: b"\xf0\x9f", 257: b"\x98\x80", 258: b"\x82\xac\xc3", 259: b"\xa9!"})
    table = make_table(vocab, backend)
    rows = [
        [0xF0, 0x9F, 0x98, 0x80],  # an emoji as four byte tokens
        [256, 257],  # ... as two halves
        [0xE2, 258, 259],  # "€" then "é" across token boundaries
        [0x80, 0x41],  # a lone continuation byte
        [0xC0, 0x80],  # overlong: each byte is its own error
        [0xED, 0xA0, 0x80],  # a surrogate: three errors
        [0xF4, 0x90, 0x80, 0x80],  # above U+10FFFF: four errors
        [0xF0, 0x9F, 0x98],  # truncated at the end: one error
        [0xF0, 0x9F, 0x41],  # truncated by ASCII: one error, then "A"
        [0xE0, 0x80, 0x41],  # E0 80 is ill-formed at its second byte: two errors
    ]
    assert decode_batch(table, rows) == [
        "😀",
        "😀",
        "€é!",
        "\ufffdA",
        "\ufffd\ufffd",
        "\ufffd\ufffd\ufffd",
        "\ufffd\ufffd\ufffd\ufffd",
        "\ufffd",
        "\ufffdA",
        "\ufffd\ufffdA",
    ]


@pytest.mark.parametrize("backend", BACKENDS)
def test_gpt2_mapped_vocab_decodes_raw_bytes(backend: Backend) -> None:
    # A GPT-2 vocab.json writes byte 0xF0 as "ð"; its loader maps every entry back to bytes.
    vocab_json = {BYTE_TO_UNICODE[b]: b for b in range(256)}
    vocab_json["ðŁĺ"] = 256  # F0 9F 98: three quarters of an emoji in one token
    vocab = {tid: decode_token(text) for text, tid in vocab_json.items()}
    table = make_table(vocab, backend)
    emoji = [vocab_json[BYTE_TO_UNICODE[b]] for b in "😀".encode()]
    assert emoji[0] == 0xF0 and vocab[0xF0] == b"\xf0"
    assert decode_batch(table, [emoji, [256, 0x80], [0xF0]]) == ["😀", "😀", "\ufffd"]
    assert decode_batch(table, [[0xC3, 0xB0]]) == ["ð"]  # the real "ð" is two bytes
    with pytest.raises(PureBPEError, match="str"):
        DecodeTable.from_vocab({0: "ð"}, xp=namespace(backend))  # type: ignore[dict-item]


@given(st.lists(st.tuples(st.integers(-(2**31) + 1, 2**31 - 1), st.integers(0, 4)), max_size=30))
def test_both_ways_of_repeating_agree(runs: List[Tuple[int, int]]) -> None:
    # NumPy repeats with numpy.repeat; CuPy (whose repeat takes no array of counts) with a
    # scatter and a prefix sum. Both run here on NumPy, in int32 as the gather uses them.
    values = numpy.asarray([v for v, _ in runs], dtype=numpy.int32)
    counts = numpy.asarray([c for _, c in runs], dtype=numpy.int64)
    expected = [v for v, c in runs for _ in range(c)]
    total = len(expected)
    assert repeat_by_counts(numpy, values, counts, total).tolist() == expected
    if total:
        assert repeat_by_prefix_sum(numpy, values, counts, total).tolist() == expected


@pytest.mark.parametrize("backend", BACKENDS)
def test_decode_batch_equals_tokenizer_decode(backend: Backend, trained: purebpe.BPEModel) -> None:
    tok = purebpe.Tokenizer.from_model(trained)
    texts = [t[:400] for t in default_corpus()[60:90]] + ["😀 naïve<|endoftext|>日本語", ""]
    rows = [tok.encode(text) for text in texts]
    rng = numpy.random.default_rng(2)
    rows += [rng.integers(0, tok.vocab_size, n).tolist() for n in (0, 1, 7, 300)]
    table = DecodeTable.from_tokenizer(tok, xp=namespace(backend), gather=backend[1])
    got = decode_batch(table, rows)
    assert got == [tok.decode(row) for row in rows]
    assert got[: len(texts)] == texts


@pytest.mark.parametrize("backend", BACKENDS)
def test_gpt2_files_decode_to_raw_bytes(backend: Backend, tmp_path: Any) -> None:
    # vocab.json spells byte 0xF0 as "ð" and 0x9F as "Ł"; reading the files maps them back.
    vocab_json = {BYTE_TO_UNICODE[b]: b for b in range(256)}
    vocab_json["ðŁ"] = 256
    vocab_json["<|endoftext|>"] = 257
    (tmp_path / "vocab.json").write_text(json.dumps(vocab_json), encoding="utf-8")
    (tmp_path / "merges.txt").write_text("#version: 0.2\nð Ł\n", encoding="utf-8")
    tok = purebpe.Tokenizer.from_files(tmp_path / "vocab.json", tmp_path / "merges.txt")
    table = DecodeTable.from_tokenizer(tok, xp=namespace(backend), gather=backend[1])
    rows = [[0xF0, 0x9F, 0x98, 0x80], [256, 0x98, 0x80, 257], [0xF0]]
    assert decode_batch(table, rows) == ["😀", "😀<|endoftext|>", "\ufffd"]
    assert decode_batch(table, rows) == [tok.decode(row) for row in rows]
    stream = BatchDecodeStream(table, 1)
    assert [stream.step([[i]])[0] for i in rows[1]] == ["", "", "😀", "<|endoftext|>"]


# ---------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_ids_and_shapes_raise(backend: Backend) -> None:
    vocab = {0: b"a", 1: b"b", 3: b"d"}  # id 2 is missing
    table = make_table(vocab, backend)
    xp = table.xp
    bad_calls = [
        ([[0, 1], [3, 4]], r"flat_ids\[3\] = 4"),
        ([[0, -1]], r"flat_ids\[1\] = -1"),
        ([[0, 2]], r"flat_ids\[1\] = 2 is not in the vocab"),
        ([[0.5]], r"ids\[0\] must hold integers"),
        ([[1], (0, 2**70)], r"ids\[1\] must hold integers within int64"),
        ([5], "sequence of ids"),
        (xp.asarray([0, 1]), "2-D"),
        (xp.asarray([[0.0, 1.0]]), "integers"),
        (xp.asarray([[0, 1], [3, 9]]), r"ids\[1, 1\] = 9"),
        ((xp.asarray([0, 1]), xp.asarray([0, 1])), "from 0 to len"),
        ((xp.asarray([0, 1]), xp.asarray([0, 2, 1, 2])), "decrease at row 1"),
        ((xp.asarray([[0, 1]]), xp.asarray([0, 2])), "1-D"),
        ((xp.asarray([0]),), r"\(flat_ids, row_offsets\)"),
    ]
    for ids, message in bad_calls:
        with pytest.raises(PureBPEError, match=message):
            decode_batch(table, ids)
    grid = xp.asarray([[0, 1, 7], [3, 3, 3]])
    with pytest.raises(PureBPEError, match=r"lengths\[1\] = -1"):
        decode_batch(table, grid, xp.asarray([2, -1]))
    with pytest.raises(PureBPEError, match=r"lengths\[0\] = 4 is outside 0..3"):
        decode_batch(table, grid, xp.asarray([4, 1]))
    with pytest.raises(PureBPEError, match="one entry per row"):
        decode_batch(table, grid, xp.asarray([2, 1, 0]))
    with pytest.raises(PureBPEError, match=r"ids\[0, 2\] = 7"):
        decode_batch(table, grid, xp.asarray([3, 1]))
    with pytest.raises(PureBPEError, match="lengths goes with"):
        decode_batch(table, [[0]], [1])
    assert decode_batch(table, grid, xp.asarray([2, 3])) == ["ab", "ddd"]
    assert issubclass(PureBPEError, ValueError)


def test_bad_vocabs_and_namespaces_raise() -> None:
    with pytest.raises(PureBPEError, match="must be bytes"):
        DecodeTable.from_vocab({0: 5})  # type: ignore[dict-item]
    with pytest.raises(PureBPEError, match="vocab id -1"):
        DecodeTable.from_vocab({-1: b"a"})
    with pytest.raises(PureBPEError, match="mapping"):
        DecodeTable.from_vocab([b"a"])  # type: ignore[arg-type]
    with pytest.raises(PureBPEError, match="no .vocab"):
        DecodeTable.from_tokenizer(object())
    with pytest.raises(PureBPEError, match="unknown array namespace"):
        DecodeTable.from_vocab({0: b"a"}, xp="torch")
    with pytest.raises(PureBPEError, match="gather='fused' needs xp=cupy"):
        DecodeTable.from_vocab({0: b"a"}, gather="fused")
    with pytest.raises(PureBPEError, match="gather must be one of"):
        DecodeTable.from_vocab({0: b"a"}, gather="fast")
    empty = DecodeTable.from_vocab({})
    assert decode_batch(empty, [[], []]) == ["", ""]
    with pytest.raises(PureBPEError, match="not in the vocab"):
        decode_batch(empty, [[0]])


def test_numpy_uses_in_order_window_stores_when_numpy_stores_in_order() -> None:
    assert stores_in_order()  # the NumPy this runs on; "auto" would fall back otherwise
    assert DecodeTable.from_vocab(byte_vocab()).gather == "windows"
    assert DecodeTable.from_vocab(byte_vocab(), gather="segments").windows is None
    with pytest.raises(PureBPEError, match="GPU stores race"):
        DecodeTable.from_vocab(byte_vocab(), xp=_CUPY_STAND_IN, gather="windows")


def test_a_numpy_storing_out_of_order_falls_back_to_segments(monkeypatch: Any) -> None:
    monkeypatch.setattr(gpu_table, "_IN_ORDER", [False])
    assert DecodeTable.from_vocab(byte_vocab()).gather == "segments"
    with pytest.raises(PureBPEError, match="which this NumPy does not"):
        DecodeTable.from_vocab(byte_vocab(), gather="windows")


def test_windows_of_long_tokens_and_zero_length_padding() -> None:
    """Tokens of 0..25 bytes next to each other, with padding between: every spill covered."""
    tokens = [bytes(range(65, 65 + n)) for n in range(26)]
    vocab = {i: t for i, t in enumerate(tokens)}
    ids = list(range(26)) + list(range(25, -1, -1)) + [25, 0, 17, 1, 9, 8, 16, 24, 7]
    grid = numpy.asarray([ids, ids[::-1]], dtype=numpy.int64)
    expected = [reference_decode(vocab, row.tolist()) for row in grid]
    for gather in ("segments", "windows"):
        table = DecodeTable.from_vocab(vocab, gather=gather)
        assert decode_batch(table, grid) == expected
        assert decode_batch(table, grid, numpy.asarray([len(ids), 3])) == [
            expected[0],
            reference_decode(vocab, ids[::-1][:3]),
        ]


def _run_without(modules: Sequence[str], code: str) -> str:
    """Run ``code`` in a fresh interpreter where importing ``modules`` fails."""
    blocker = "import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in modules)
    root = os.path.dirname(os.path.dirname(os.path.abspath(purebpe.__file__)))  # the one tested
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        [sys.executable, "-c", blocker + code], capture_output=True, text=True, env=env, check=True
    )
    return done.stdout


def test_imports_without_numpy_or_cupy_and_says_what_is_missing() -> None:
    code = (
        "import purebpe.gpu as pg\n"
        "from purebpe.errors import PureBPEError\n"
        "print(pg.cupy_unavailable_reason())\n"
        "for xp in (None, 'cupy'):\n"
        "    try:\n"
        "        pg.DecodeTable.from_vocab({0: b'a'}, xp=xp)\n"
        "    except PureBPEError as exc:\n"
        "        print(exc)\n"
    )
    lines = _run_without(["numpy", "cupy"], code).splitlines()
    assert lines[0].startswith("cupy is not installed")
    assert lines[1].startswith("purebpe.gpu needs numpy") and "pip install numpy" in lines[1]
    assert lines[2].startswith("purebpe.gpu needs cupy")


# ---------------------------------------------------------------------------------------
# BatchDecodeStream
# ---------------------------------------------------------------------------------------


def _check_stream(stream: BatchDecodeStream, steps: Sequence[Any], chunks: Sequence[Sequence[bytes]]) -> None:
    """Feed ``steps``; row r's output must match the reference fed ``chunks[r]``."""
    expected = [reference_stream(row_chunks) for row_chunks in chunks]
    for t, step in enumerate(steps):
        assert stream.step(step) == [row_steps[t] for row_steps, _ in expected]
    assert stream.flush() == [tail for _, tail in expected]
    assert stream.pending() == [b""] * stream.batch_size


@st.composite
def byte_streams(draw: st.DrawFn) -> bytes:
    parts = draw(
        st.lists(
            st.binary(max_size=8)
            | st.text(max_size=6).map(lambda s: s.encode())
            | st.sampled_from(AWKWARD_TOKENS),
            max_size=6,
        )
    )
    return b"".join(parts)


@pytest.mark.parametrize("backend", BACKENDS)
@given(data=st.data())
def test_stream_equals_incremental_decoder_over_arbitrary_byte_splits(backend: Backend, data: Any) -> None:
    rows = data.draw(st.lists(byte_streams(), min_size=1, max_size=6))
    chunks = []
    for row in rows:
        cuts = sorted(data.draw(st.lists(st.integers(0, len(row)), max_size=len(row) + 2)))
        bounds = [0] + cuts + [len(row)]
        chunks.append([row[a:b] for a, b in zip(bounds, bounds[1:])])
    num_steps = max(len(c) for c in chunks)
    chunks = [c + [b""] * (num_steps - len(c)) for c in chunks]
    steps = [[list(c[t]) for c in chunks] for t in range(num_steps)]  # byte ids = bytes
    stream = BatchDecodeStream(make_table(byte_vocab(), backend), len(rows))
    _check_stream(stream, steps, chunks)
    assert all(
        "".join(reference_stream(c)[0]) + reference_stream(c)[1] == row.decode("utf-8", "replace")
        for c, row in zip(chunks, rows)
    )


@pytest.mark.parametrize("backend", BACKENDS)
@given(data=st.data())
def test_stream_of_token_ids_concatenates_to_one_shot_decode(backend: Backend, data: Any) -> None:
    vocab = data.draw(vocabs())
    batch = data.draw(st.integers(1, 5))
    steps = data.draw(
        st.lists(
            st.lists(st.lists(st.sampled_from(sorted(vocab)), max_size=3), min_size=batch, max_size=batch),
            max_size=6,
        )
    )
    stream = BatchDecodeStream(make_table(vocab, backend), batch)
    emitted = [""] * batch
    for step in steps:
        for r, text in enumerate(stream.step(step)):
            emitted[r] += text
    for r, text in enumerate(stream.flush()):
        all_ids = [i for step in steps for i in step[r]]
        assert emitted[r] + text == reference_decode(vocab, all_ids)
    chunks = [[b"".join(vocab[i] for i in step[r]) for step in steps] for r in range(batch)]
    _check_stream(stream, steps, chunks)  # the same stream again, step by step


@pytest.mark.parametrize("backend", BACKENDS)
@settings(max_examples=40)
@given(data=st.data())
def test_flushing_some_rows_starts_just_those_afresh(backend: Backend, data: Any) -> None:
    """A serving loop: finished rows are flushed and get new requests, the others go on.

    Each row's requests are decoded independently; every request's text is its one-shot
    decode, however its ids were spread over steps and whatever the other rows did.
    """
    vocab = data.draw(vocabs())
    batch = data.draw(st.integers(1, 4))
    ids = st.lists(st.sampled_from(sorted(vocab)), max_size=3)
    stream = BatchDecodeStream(make_table(vocab, backend), batch)
    current: List[List[int]] = [[] for _ in range(batch)]  # ids of each row's open request
    emitted = [""] * batch
    for _ in range(data.draw(st.integers(1, 8))):
        step = [data.draw(ids) for _ in range(batch)]
        for r, text in enumerate(stream.step(step)):
            current[r] += step[r]
            emitted[r] += text
        finished = data.draw(st.lists(st.integers(0, batch - 1), unique=True))
        for r, tail in zip(finished, stream.flush(finished)):
            assert emitted[r] + tail == reference_decode(vocab, current[r])
            current[r], emitted[r] = [], ""
    for r, tail in enumerate(stream.flush()):
        assert emitted[r] + tail == reference_decode(vocab, current[r])
    with pytest.raises(PureBPEError, match=f"row indices in 0..{batch - 1}"):
        stream.flush([batch])
    with pytest.raises(PureBPEError, match="row 0 appears twice"):
        stream.flush([0, 0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_stream_with_one_id_per_row_as_an_array(backend: Backend, trained: purebpe.BPEModel) -> None:
    table = make_table(trained.vocab, backend)
    rng = numpy.random.default_rng(1)
    # Mostly byte tokens, so characters are split across steps all the time.
    ids = numpy.where(
        rng.random((16, 40)) < 0.7,
        rng.integers(0x80, 0x100, (16, 40)),
        rng.integers(0, trained.vocab_size, (16, 40)),
    )
    texts = [[t.encode() for t in "日本語 😀 é"] for _ in range(3)]
    ids[:3, :] = [[b for t in row for b in t][:40] + [32] * (40 - len(b"".join(row))) for row in texts]
    stream = BatchDecodeStream(table, 16)
    steps = [table.xp.asarray(ids[:, t]) for t in range(40)]
    chunks = [[trained.vocab[i] for i in row] for row in ids.tolist()]
    _check_stream(stream, steps, chunks)
    # Then three ids per row per step, as a 2-D array.
    _check_stream(
        stream, [steps[0], table.xp.asarray(ids[:, 1:4])], [[c[0], b"".join(c[1:4])] for c in chunks]
    )
    # All a row emits, with its flush, is the tokenizer's one-shot decode of all its ids.
    tok = purebpe.Tokenizer.from_model(trained)
    emitted = [""] * 16
    for step in steps:
        emitted = [a + b for a, b in zip(emitted, stream.step(step))]
    emitted = [a + b for a, b in zip(emitted, stream.flush())]
    assert emitted == [tok.decode(row) for row in ids.tolist()]


@pytest.mark.parametrize("backend", BACKENDS)
def test_stream_holds_exactly_what_the_incremental_decoder_holds(backend: Backend) -> None:
    # Every tail of up to 3 bytes over the bytes where UTF-8's rules change, split anywhere.
    edges = [
        0x00,
        0x41,
        0x7F,
        0x80,
        0x8F,
        0x90,
        0x9F,
        0xA0,
        0xBF,
        0xC0,
        0xC1,
        0xC2,
        0xDF,
        0xE0,
        0xE1,
        0xEC,
        0xED,
        0xEE,
        0xEF,
        0xF0,
        0xF1,
        0xF3,
        0xF4,
        0xF5,
        0xFF,
    ]
    tails = [bytes([a, b, c]) for a in edges for b in edges for c in edges]
    tails += [bytes([a, b]) for a in edges for b in edges] + [bytes([a]) for a in edges]
    cases = [(tail[:k], tail[k:]) for tail in tails for k in range(len(tail) + 1)]
    stream = BatchDecodeStream(make_table(byte_vocab(), backend), len(cases))
    _check_stream(
        stream, [[list(c[0]) for c in cases], [list(c[1]) for c in cases]], [list(c) for c in cases]
    )
    stream.step([list(a + b) for a, b in cases])
    held = []
    for a, b in cases:
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        decoder.decode(a + b)
        pending = decoder.getstate()[0]
        surrogate = len(pending) == 2 and pending[0] == 0xED and pending[1] >= 0xA0
        held.append(b"" if surrogate else pending)
    assert stream.pending() == held


def test_utf8_lead_tables_follow_python_codec() -> None:
    need, lo, hi = utf8_lead_tables()
    for lead in range(256):
        for second in range(256):
            # Two bytes are a valid start of a character exactly when the codec holds them.
            decoder = codecs.getincrementaldecoder("utf-8")("strict")
            try:
                decoder.decode(bytes([lead, second]))
                held = decoder.getstate()[0] == bytes([lead, second])
            except UnicodeDecodeError:
                held = False
            ours = need[lead] >= 3 and lo[lead] <= second <= hi[lead]
            assert ours == held or (lead == 0xED and second >= 0xA0 and held), (lead, second)
        assert (need[lead] > 0) == (0xC2 <= lead <= 0xF4)


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_stream_input_raises_and_keeps_state(backend: Backend) -> None:
    table = make_table(byte_vocab(), backend)
    xp = table.xp
    stream = BatchDecodeStream(table, 2)
    assert stream.step([0xF0, [0x41]]) == ["", "A"]
    for new_ids, message in [
        ([1], r"one entry per row \(2\), not 1"),
        ([[1], [2], [3]], "one entry per row"),
        ([[0x9F], [256]], r"new_ids\[1, 0\] = 256"),
        ([[0x9F], -3], r"new_ids\[1, 0\] = -3"),
        ([[0x9F], "a"], "an id or a list of ids"),
        ([[0x9F], [2**64]], "within int64"),
        ([[0x9F], [1.5]], "an id or a list of ids"),
        (xp.asarray([1, 2, 3]), "one entry per row"),
        (xp.asarray([[0x9F], [300]]), r"new_ids\[1, 0\] = 300"),
        (xp.asarray([0.5, 1.5]), "integers"),
    ]:
        with pytest.raises(PureBPEError, match=message):
            stream.step(new_ids)
    assert stream.pending() == [b"\xf0", b""]
    assert stream.step([[0x9F, 0x98, 0x80], []]) == ["😀", ""]
    for size in (0, -1, 1.5, True):
        with pytest.raises(PureBPEError, match="batch_size"):
            BatchDecodeStream(table, size)  # type: ignore[arg-type]


@settings(max_examples=20)
@given(st.lists(st.integers(0, 255), min_size=1, max_size=64))
def test_stream_of_bytes_one_at_a_time(data: List[int]) -> None:
    stream = BatchDecodeStream(DecodeTable.from_vocab(byte_vocab()), 1)
    text = "".join(stream.step([b])[0] for b in data) + stream.flush()[0]
    assert text == bytes(data).decode("utf-8", "replace")
