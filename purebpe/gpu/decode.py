"""Batch decoding as array operations: ids to bytes on the device, bytes to text on the host.

Every input form becomes *segments*: a flat array of ids, which of them count (padding does
not), and ``item_offsets``, where each row's ids start. Then, in the table's namespace:

1. gather each id's ``lengths`` (and ``offsets``): one small gather per id;
2. an inclusive prefix sum of the lengths gives every segment's place in the output, and
   the same sum read at ``item_offsets`` gives every row's byte offsets;
3. copy every segment's bytes to its place, one of three ways (``table.gather``), all
   with the same result, which the tests check on every input:

   ``segments`` (the reference; NumPy and CuPy run the same expression)
       one gather of all output bytes: output byte ``j`` of a segment that starts at
       output ``o`` and source ``s`` reads ``source[j + (s - o)]``; the shift ``s - o`` is
       constant within a segment, so it is repeated over the segment (``numpy.repeat``
       on the CPU; a scatter and a prefix sum under CuPy, whose ``repeat`` cannot take an
       array of counts).
   ``windows`` (NumPy, the default there: 2-3x faster)
       the output is viewed as overlapping ``uint64`` windows, one starting at every
       byte, and each token's first 8 bytes (zero-padded, :class:`TokenWindows`) are
       stored whole at its start, in one assignment. A token shorter than 8 bytes spills
       into the next token's place, and the next token's store, which comes later,
       overwrites the spill; so one 8-byte store per id replaces per-byte index arrays.
       Tokens longer than 8 bytes store their remaining windows first, in one earlier
       assignment, at ``start + 8``, ``start + 16``, ...: nothing after them in the
       output is written before them, and what they spill is overwritten by the heads.
       This needs NumPy to store in index order, which it does for a 1-D index but does
       not promise: :func:`~purebpe.gpu.table.stores_in_order` checks it once.
   ``fused`` (CuPy)
       one CUDA kernel, one thread per segment copying its bytes (``_FUSED_SOURCE``).

The bytes and row offsets then cross to the host once, and each row is decoded there with
``bytes.decode("utf-8", "replace")``: exactly what ``Tokenizer.decode`` does, including
the U+FFFD for every maximal ill-formed subsequence, by construction rather than by a
re-implementation of UTF-8 error handling.

Cost: O(ids + output bytes) array work, one scalar read (the total size, to allocate the
output), one bulk device-to-host copy, then one C-level decode per row. The padded and
ragged forms never loop over ids in Python; a list of rows is flattened in Python first.
"""

from __future__ import annotations

from array import array
from types import ModuleType
from typing import Any, List, Optional, Sequence, Tuple

from ..errors import PureBPEError
from .backend import Array, import_backend, is_cupy, to_numpy
from .plan import close_run, run_text, strip_start
from .table import WINDOW, DecodeTable, TokenWindows

#: One CUDA thread per segment copies its bytes: step 3 when ``table.gather == "fused"``.
_FUSED_SOURCE = r"""
extern "C" __global__
void purebpe_gather_segments(const unsigned char* source, const long long* seg_start,
                             const long long* seg_len, const long long* seg_offsets,
                             unsigned char* out, long long n)
{
    long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (k >= n) return;
    const unsigned char* from = source + seg_start[k];
    unsigned char* to = out + seg_offsets[k];
    for (long long j = 0; j < seg_len[k]; ++j) to[j] = from[j];
}
"""
_FUSED_THREADS = 256
_fused_kernel: List[Any] = []  # the compiled RawKernel, once


def gather_bytes(table: DecodeTable, ids: Any, lengths: Any = None) -> Tuple[Array, Array]:
    """The bytes of every row, without leaving the device: ``(buffer, row_offsets)``.

    ``ids`` is a 2-D array of ids (``lengths[r]`` of row ``r`` count, all when ``lengths``
    is ``None``), a ``list`` of rows (lists of ids), or a ``tuple`` ``(flat_ids,
    row_offsets)`` where row ``r`` is ``flat_ids[row_offsets[r]:row_offsets[r + 1]]``.
    Row ``r``'s bytes are ``buffer[row_offsets[r]:row_offsets[r + 1]]``; both are arrays of
    ``table.xp`` (``uint8`` and ``int64``). Bad input raises ``PureBPEError`` first.
    Each row's first token has its first-token form; the table's leading ``strip`` and
    the text of byte runs that are not valid UTF-8 are :func:`decode_batch`'s to apply.
    """
    seg_ids, used, item_offsets = first_token_segments(table, *segments(table, ids, lengths))
    return _gather(table, seg_ids, used, item_offsets)


def _gather(
    table: DecodeTable, seg_ids: Array, used: Optional[Array], item_offsets: Array
) -> Tuple[Array, Array]:
    xp = table.xp
    seg_len = table.lengths[seg_ids]
    if used is not None:
        seg_len = seg_len * used
    if table.windows is not None:
        buffer, seg_offsets = store_windows(xp, table.windows, seg_ids, seg_len)
    else:
        buffer, seg_offsets = gather_segments(
            xp, table.token_bytes, table.offsets[seg_ids], seg_len, table.gather == "fused"
        )
    return buffer, seg_offsets[item_offsets]


def first_token_segments(
    table: DecodeTable, seg_ids: Array, used: Optional[Array], item_offsets: Array
) -> Tuple[Array, Optional[Array], Array]:
    """The segments with each row's first kept id replaced by its first-token form (id
    ``table.first_shift + id``), when the table has such forms; else unchanged.

    A segment is its row's first when it is kept and the kept count up to it, minus the
    count before the row, is 1: two prefix sums and a ``searchsorted`` for the row of
    each segment, on either backend.
    """
    if not table.first_shift:
        return seg_ids, used, item_offsets
    xp = table.xp
    count = int(seg_ids.shape[0])
    kept = kept_mask(table, seg_ids, used)
    before = exclusive_offsets(xp, kept)  # kept segments before each segment, then the total
    row_of = xp.searchsorted(item_offsets[1:], xp.arange(count), side="right")
    first = kept & (before[1:] - before[item_offsets[:-1]][row_of] == 1)
    return xp.where(first, seg_ids + table.first_shift, seg_ids), used, item_offsets


def kept_mask(table: DecodeTable, ids: Array, used: Optional[Array]) -> Array:
    """Which of ``ids`` count as tokens: used (not padding) and not a skipped special."""
    xp = table.xp
    kept = xp.ones(ids.shape, dtype=bool) if table.kept is None else table.kept[ids]
    return kept if used is None else kept & used


def decode_batch(table: DecodeTable, ids: Any, lengths: Any = None) -> List[str]:
    """Every row decoded: ``[tok.decode(row) for row in rows]``, computed on ``table.xp``.

    Takes the same ``ids``/``lengths`` as :func:`gather_bytes`.
    """
    seg_ids, used, item_offsets = first_token_segments(table, *segments(table, ids, lengths))
    buffer, row_offsets = _gather(table, seg_ids, used, item_offsets)
    data, (offsets,) = to_host(table.xp, buffer, row_offsets)
    texts = [data[a:b].decode("utf-8", "replace") for a, b in zip(offsets, offsets[1:])]
    if table.host_tokens is not None:
        _redo_byte_runs(table, texts, seg_ids, used, item_offsets)
    char, count = table.strip
    if count:
        texts = [strip_start(text, char, count)[0] for text in texts]
    return texts


def _redo_byte_runs(
    table: DecodeTable, texts: List[str], seg_ids: Array, used: Optional[Array], item_offsets: Array
) -> None:
    """Decode again, token by token, the rows where a byte run may not be valid UTF-8.

    Concatenated bytes decode to HF's text unless a run is invalid, which always leaves a
    U+FFFD (:mod:`purebpe.gpu.plan`); an empty text token between byte tokens splits a
    run without a trace, so a table with one redoes every row.
    """
    redo = [r for r, text in enumerate(texts) if table.empty_closers or "\ufffd" in text]
    if not redo:
        return
    xp = table.xp
    ids = to_numpy(xp, seg_ids).tolist()
    kept = to_numpy(xp, kept_mask(table, seg_ids, used)).tolist()
    offsets = to_numpy(xp, item_offsets).tolist()
    host_tokens = table.host_tokens
    assert host_tokens is not None and table.is_byte is not None
    is_byte = to_numpy(xp, table.is_byte).tolist()
    for r in redo:
        row = [
            tid for tid, k in zip(ids[offsets[r] : offsets[r + 1]], kept[offsets[r] : offsets[r + 1]]) if k
        ]
        text, run = run_text([host_tokens[tid] for tid in row], [is_byte[tid] for tid in row])
        texts[r] = text + close_run(run) if run else text


def gather_segments(
    xp: ModuleType, source: Array, seg_start: Array, seg_len: Array, fused: bool = False
) -> Tuple[Array, Array]:
    """Concatenate ``source[seg_start[k] : seg_start[k] + seg_len[k]]`` over all ``k``.

    Returns the bytes and ``seg_offsets`` (``n + 1`` values: where each segment starts in
    them, then the total). Zero-length segments are allowed.
    """
    seg_offsets = exclusive_offsets(xp, seg_len)
    total = int(seg_offsets[-1])
    if total == 0:
        return xp.zeros(0, dtype=xp.uint8), seg_offsets
    if fused:
        return _fused_gather(xp, source, seg_start, seg_len, seg_offsets, total), seg_offsets
    # Per-byte index arrays are the bulk of the memory traffic: int32 whenever it fits.
    index_type = xp.int32 if total + int(source.shape[0]) < 2**31 else xp.int64
    shift = (seg_start - seg_offsets[:-1]).astype(index_type)  # source minus output index
    spread = repeat_by_counts if not is_cupy(xp) else repeat_by_prefix_sum
    source_index = spread(xp, shift, seg_len, total)
    source_index += xp.arange(total, dtype=index_type)
    return source[source_index], seg_offsets


def exclusive_offsets(xp: ModuleType, lengths: Array) -> Array:
    """``[0, l0, l0 + l1, ...]``: where each of ``lengths`` starts, then the total (int64).

    The prefix sum is written straight after the 0, with no concatenation: each copy of a
    per-id array is one more large temporary, and large temporaries page-fault afresh.
    """
    offsets = xp.empty(int(lengths.shape[0]) + 1, dtype=xp.int64)
    offsets[0] = 0
    xp.cumsum(lengths, dtype=xp.int64, out=offsets[1:])
    return offsets


def store_windows(
    xp: ModuleType, windows: TokenWindows, seg_ids: Array, seg_len: Array
) -> Tuple[Array, Array]:
    """NumPy: the bytes of tokens ``seg_ids`` (``seg_len`` of each), by 8-byte stores.

    Returns what :func:`gather_segments` returns (bytes and ``n + 1`` segment offsets);
    the module docstring says why the overlapping stores leave exactly those bytes.
    """
    seg_offsets = exclusive_offsets(xp, seg_len)
    total = int(seg_offsets[-1])
    starts = seg_offsets[:-1]
    out = xp.empty(total + WINDOW, dtype=xp.uint8)  # the last store spills up to 7 bytes
    at = xp.ndarray((total + 1,), dtype=xp.uint64, buffer=out, strides=(1,))  # window at byte i
    long = xp.flatnonzero(seg_len > WINDOW)  # padding has length 0, whatever its id
    if long.size:
        long_ids = seg_ids[long]
        count = windows.tail_count[long_ids]
        # Tail window w of a long token: stored at start + 8 * (w + 1) from tails[first + w].
        run_starts = xp.cumsum(count) - count
        within = xp.arange(int(count.sum())) - xp.repeat(run_starts, count)
        at[xp.repeat(starts[long] + WINDOW, count) + WINDOW * within] = windows.tails[
            xp.repeat(windows.tail_first[long_ids], count) + within
        ]
    at[starts] = windows.heads[seg_ids]
    return out[:total], seg_offsets


def repeat_by_counts(xp: ModuleType, values: Array, counts: Array, total: int) -> Array:
    """``values[k]`` repeated ``counts[k]`` times (``total`` in all), by ``xp.repeat``.

    NumPy's ``repeat`` takes an array of counts and is the fastest way on the CPU.
    """
    return xp.repeat(values, counts)


def repeat_by_prefix_sum(xp: ModuleType, values: Array, counts: Array, total: int) -> Array:
    """The same as :func:`repeat_by_counts` with a scatter and a prefix sum.

    CuPy's ``repeat`` cannot take an array of counts. Each run's first slot gets the step
    from the previous run's value, and a prefix sum carries it along the run; runs of
    length 0 are dropped first so no two runs share a first slot.
    """
    nonempty = counts > 0
    run_values = values[nonempty]
    run_starts = (xp.cumsum(counts, dtype=xp.int64) - counts)[nonempty]
    steps = run_values.copy()
    steps[1:] -= run_values[:-1]
    spread = xp.zeros(total, dtype=values.dtype)
    spread[run_starts] = steps
    return xp.cumsum(spread, dtype=values.dtype)


def _fused_gather(
    xp: ModuleType, source: Array, seg_start: Array, seg_len: Array, seg_offsets: Array, total: int
) -> Array:
    if not _fused_kernel:
        _fused_kernel.append(xp.RawKernel(_FUSED_SOURCE, "purebpe_gather_segments"))
    out = xp.empty(total, dtype=xp.uint8)
    n = int(seg_len.shape[0])
    blocks = (n + _FUSED_THREADS - 1) // _FUSED_THREADS
    args = (
        xp.ascontiguousarray(source),
        xp.ascontiguousarray(seg_start, dtype=xp.int64),
        xp.ascontiguousarray(seg_len, dtype=xp.int64),
        seg_offsets,
        out,
        import_backend("numpy").int64(n),
    )
    _fused_kernel[0]((blocks,), (_FUSED_THREADS,), args)
    return out


def to_host(xp: ModuleType, buffer: Array, *index_arrays: Array) -> Tuple[bytes, List[List[int]]]:
    """``buffer`` as ``bytes`` and each index array as a list, in one device-to-host copy.

    Under CuPy the index arrays travel in front of the bytes in one ``uint8`` array, so the
    whole result is one transfer (each transfer is a synchronisation).
    """
    numpy = import_backend("numpy")
    if not is_cupy(xp):
        return buffer.tobytes(), [index.tolist() for index in index_arrays]
    parts = [xp.ascontiguousarray(a, dtype=xp.int64).view(xp.uint8) for a in index_arrays]
    host = to_numpy(xp, xp.concatenate(parts + [buffer]))
    lists: List[List[int]] = []
    start = 0
    for index in index_arrays:
        end = start + 8 * int(index.size)
        lists.append(host[start:end].view(numpy.int64).tolist())
        start = end
    return host[start:].tobytes(), lists


def segments(table: DecodeTable, ids: Any, lengths: Any = None) -> Tuple[Array, Optional[Array], Array]:
    """Any input form as ``(seg_ids, used, item_offsets)`` on ``table.xp``, all checked.

    ``used`` is ``None`` when every id counts, else a boolean array beside ``seg_ids``
    (padding is ``False`` and may hold anything, even ids outside the vocab).
    """
    xp = table.xp
    if isinstance(ids, tuple):
        if len(ids) != 2:
            raise PureBPEError(f"a tuple of ids must be (flat_ids, row_offsets), not {len(ids)} items")
        _no_lengths(lengths, "(flat_ids, row_offsets)")
        flat = host_or_device(table, ids[0], "flat_ids")
        row_offsets = host_or_device(table, ids[1], "row_offsets")
        return _ragged(table, flat, row_offsets)
    if isinstance(ids, list):
        _no_lengths(lengths, "a list of rows")
        flat, offsets = flatten_rows(ids)
        numpy = import_backend("numpy")
        return _ragged(table, flat, numpy.asarray(offsets, dtype=numpy.int64))
    array = host_or_device(table, ids, "ids")
    if array.ndim != 2:
        raise PureBPEError(
            f"ids must be a 2-D array (rows x ids), a list of rows or a (flat_ids, row_offsets) "
            f"tuple, not a {array.ndim}-D array"
        )
    rows, cols = (int(n) for n in array.shape)
    used = None if lengths is None else _used_mask(table, lengths, rows, cols)
    if used is not None and table.namespace_of(used) is not table.namespace_of(array):
        array, used = xp.asarray(array), xp.asarray(used)  # one on the host, one on the device
    table.check_ids(array, used)
    seg_ids = xp.asarray(array).reshape(-1)
    if used is not None:
        used = xp.asarray(used).reshape(-1)
        seg_ids = xp.where(used, seg_ids, 0)  # padding may hold anything: read id 0 instead
    return seg_ids, used, xp.arange(rows + 1, dtype=xp.int64) * cols


def _ragged(table: DecodeTable, flat: Array, row_offsets: Array) -> Tuple[Array, None, Array]:
    xp = table.namespace_of(row_offsets)
    if flat.ndim != 1:
        raise PureBPEError(f"flat_ids must be 1-D, not {flat.ndim}-D")
    if row_offsets.ndim != 1 or row_offsets.shape[0] < 1 or row_offsets.dtype.kind not in "iu":
        raise PureBPEError("row_offsets must be a 1-D integer array of rows + 1 offsets")
    first, last = int(row_offsets[0]), int(row_offsets[-1])
    if first != 0 or last != flat.shape[0]:
        raise PureBPEError(
            f"row_offsets must run from 0 to len(flat_ids) = {flat.shape[0]}, not from {first} to {last}"
        )
    steps = row_offsets[1:].astype(xp.int64) - row_offsets[:-1]
    if bool((steps < 0).any()):
        row = int(xp.argmax(steps < 0))
        raise PureBPEError(
            f"row_offsets decrease at row {row}: {int(row_offsets[row])} then {int(row_offsets[row + 1])}"
        )
    table.check_ids(flat, name="flat_ids")
    return table.xp.asarray(flat), None, table.xp.asarray(row_offsets, dtype=table.xp.int64)


def _used_mask(table: DecodeTable, lengths: Any, rows: int, cols: int) -> Array:
    """``used[r, c] = c < lengths[r]`` after checking that ``lengths`` fits the ids."""
    array = host_or_device(table, lengths, "lengths")
    xp = table.namespace_of(array)
    if array.shape != (rows,):
        raise PureBPEError(f"lengths must have one entry per row ({rows}), not shape {array.shape}")
    if array.dtype.kind not in "iu":
        raise PureBPEError(f"lengths must hold integers, not {array.dtype}")
    bad = (array < 0) | (array > cols)
    if rows and bool(bad.any()):
        row = int(xp.argmax(bad))
        raise PureBPEError(f"lengths[{row}] = {int(array[row])} is outside 0..{cols} (the row width)")
    return xp.arange(cols)[None, :] < array[:, None]


def flatten_rows(rows: Sequence[Any]) -> Tuple[Array, List[int]]:
    """A list of id sequences as one flat host ``int64`` array and ``len(rows) + 1`` offsets.

    Built in an ``array('q')`` row by row: the cheapest way from Python ints to an array
    on both interpreters (``numpy.asarray`` of a list is 15x slower on PyPy), and as strict:
    non-integers and values outside int64 raise.
    """
    flat = array("q")
    offsets = [0]
    for r, row in enumerate(rows):
        try:
            values = row if isinstance(row, list) else list(row)
        except TypeError:
            raise PureBPEError(f"ids[{r}] must be a sequence of ids, not {type(row).__name__}") from None
        try:
            flat.fromlist(values)
        except (OverflowError, TypeError) as exc:
            raise PureBPEError(f"ids[{r}] must hold integers within int64 ({exc})") from None
        offsets.append(len(flat))
    return host_ids(flat), offsets


def host_ids(flat: "array[int]") -> Array:
    """An ``array('q')`` of ids as a host ``int64`` array, sharing its memory."""
    numpy = import_backend("numpy")
    return numpy.frombuffer(flat, dtype=numpy.int64)


def host_or_device(table: DecodeTable, value: Any, name: str) -> Array:
    """``value`` as an array where it already lives: the table's device, else the host.

    Lists and host arrays stay on the host (checked there, then copied once); CuPy arrays
    and anything else with ``__cuda_array_interface__`` stay on the GPU under CuPy.
    """
    numpy = import_backend("numpy")
    if isinstance(value, numpy.ndarray):
        return value
    if is_cupy(table.xp) and (
        isinstance(value, table.xp.ndarray) or hasattr(value, "__cuda_array_interface__")
    ):
        return table.xp.asarray(value)
    try:
        array = numpy.asarray(value)
    except (TypeError, ValueError, OverflowError) as exc:
        raise PureBPEError(
            f"{name} cannot be read as an array for a table on {table.xp.__name__} ({exc})"
        ) from None
    if array.size == 0 and array.dtype.kind == "f":  # what numpy makes of an empty list
        array = array.astype(numpy.int64)
    return array


def _no_lengths(lengths: Any, form: str) -> None:
    if lengths is not None:
        raise PureBPEError(f"lengths goes with a 2-D padded array, not with {form}")
