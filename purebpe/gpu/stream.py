"""Streaming detokenization of a batch: per generation step, only complete UTF-8 characters.

Byte-level tokens split characters (an emoji may arrive as four tokens), so the text of a
step cannot simply be decoded on its own. :class:`BatchDecodeStream` keeps, per row, the
up to 3 trailing bytes that are a *valid but incomplete* UTF-8 sequence and prepends them
to the row's next bytes, like ``codecs.getincrementaldecoder("utf-8")(errors="replace")``
per row. Whatever a row emits, concatenated with its :meth:`~BatchDecodeStream.flush`,
equals ``tok.decode(all_its_ids)``.

How one step works, on the table's namespace: the held bytes sit after the token table in
one source buffer, so they are just one more segment in front of each row's new ids, and a
single segment gather (:func:`purebpe.gpu.decode.gather_segments`) yields every row's
held-plus-new bytes. The last 3 bytes of each row form a ``(rows, 3)`` window, and
:func:`incomplete_tail_length` decides for all rows at once how many of them to hold back,
with Unicode's table of well-formed byte sequences (Table 3-7). What is not held crosses
to the host, in one copy, and is decoded there with ``errors="replace"``.

Why decoding the emitted part on its own is exact: it ends either at the end of everything
received so far, after bytes that no later byte can complete (complete characters, or an
ill-formed sequence that is already ill-formed), or just before a held lead byte, which
ends any sequence before it just as it would in one-shot decoding.

The one place this differs from CPython's incremental decoder is by design: CPython also
holds a truncated *surrogate* (``ED A0``..``ED BF``, for the ``surrogatepass`` handler),
which is ill-formed UTF-8 and can never decode; here it is emitted at once as U+FFFD
U+FFFD, as PyPy does. The total text is the same either way.

Cost per step: O(rows + new ids + new bytes) array work and one transfer, then one C-level
decode per row on the host.
"""

from __future__ import annotations

import operator
from array import array
from typing import Any, List, Optional, Sequence, Set, Tuple

from ..errors import PureBPEError
from .backend import Array, import_backend, to_numpy
from .decode import gather_segments, host_ids, host_or_device, kept_mask, to_host
from .plan import close_run, run_text, strip_start
from .table import DecodeTable

#: A character is at most 4 bytes, so an incomplete one is at most 3.
MAX_HELD = 3


def utf8_lead_tables() -> Tuple[List[int], List[int], List[int]]:
    """For each byte as a lead byte: its sequence length, and the range of its second byte.

    Unicode Table 3-7 (well-formed UTF-8): C2..DF lead 2 bytes, E0..EF 3, F0..F4 4; the
    second byte is 80..BF except after E0 (A0..BF, no overlongs), ED (80..9F, no
    surrogates), F0 (90..BF, no overlongs) and F4 (80..8F, nothing above U+10FFFF). Bytes
    that cannot lead (ASCII, continuation bytes, C0, C1, F5..FF) have length 0 and an
    empty range.
    """
    need = [0] * 256
    second_lo = [1] * 256
    second_hi = [0] * 256
    for lead in range(0xC2, 0xF5):
        need[lead] = 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
        second_lo[lead], second_hi[lead] = 0x80, 0xBF
    second_lo[0xE0] = 0xA0
    second_hi[0xED] = 0x9F
    second_lo[0xF0] = 0x90
    second_hi[0xF4] = 0x8F
    return need, second_lo, second_hi


def incomplete_tail_length(xp: Any, tail: Array, tables: Sequence[Array]) -> Array:
    """How many of each row's last 3 bytes (``tail``, ``(rows, 3)``) to hold back: 0..3.

    The held bytes are the longest suffix that is a proper prefix of a well-formed
    character: a lead byte followed by valid continuation bytes, fewer than it needs. Only
    the last lead byte can start it (continuation bytes never lead), so: a lead byte last
    holds 1; one before last holds 2 if it needs 3 or 4 bytes and the last byte is a valid
    second byte for it; two before last holds 3 if it needs 4 and both followers fit.
    ``tail`` is padded on the left with 0 for short rows (0 neither leads nor continues).
    """
    need, second_lo, second_hi = tables
    tail = tail.astype(xp.int64)  # index the tables with a plain integer type
    b0, b1, b2 = tail[:, 0], tail[:, 1], tail[:, 2]
    n0, n1 = need[b0], need[b1]
    b1_second_of_b0 = (second_lo[b0] <= b1) & (b1 <= second_hi[b0])
    b2_second_of_b1 = (second_lo[b1] <= b2) & (b2 <= second_hi[b1])
    b2_continues = (b2 & 0xC0) == 0x80
    hold_3 = xp.where((n0 == 4) & b1_second_of_b0 & b2_continues, 3, 0)
    hold_2 = xp.where((n1 >= 3) & b2_second_of_b1, 2, 0)
    return xp.where(need[b2] > 0, 1, xp.where(n1 > 0, hold_2, hold_3)).astype(xp.int64)


def last_bytes(xp: Any, buffer: Array, row_offsets: Array) -> Array:
    """Each row's last 3 bytes as a ``(rows, 3)`` ``uint8`` array, 0-padded on the left."""
    rows = int(row_offsets.shape[0]) - 1
    if buffer.shape[0] == 0:
        return xp.zeros((rows, MAX_HELD), dtype=xp.uint8)
    position = row_offsets[1:, None] - MAX_HELD + xp.arange(MAX_HELD)[None, :]
    inside = position >= row_offsets[:-1, None]
    return xp.where(inside, buffer[xp.where(inside, position, 0)], 0).astype(xp.uint8)


def _replace(data: bytes) -> str:
    return data.decode("utf-8", "replace")


class BatchDecodeStream:
    """Incremental decoding of ``batch_size`` rows, one generation step at a time.

    ``step(new_ids)`` returns, per row, the text its new ids complete; ``flush()`` returns
    what is still held (as U+FFFD) and starts the stream afresh; ``flush(rows)`` does that
    for some rows only.
    """

    def __init__(self, table: DecodeTable, batch_size: int) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise PureBPEError(f"batch_size must be a positive int, not {batch_size!r}")
        xp = table.xp
        self.table = table
        self.batch_size = batch_size
        # The held bytes live after the token table, so they are gathered like tokens.
        self._source = xp.concatenate([table.token_bytes, xp.zeros(MAX_HELD * batch_size, dtype=xp.uint8)])
        self._held = xp.zeros((batch_size, MAX_HELD), dtype=xp.uint8)  # right-aligned
        self._held_len = xp.zeros(batch_size, dtype=xp.int64)
        self._tables = [xp.asarray(t, dtype=xp.int64) for t in utf8_lead_tables()]
        self._rows = xp.arange(batch_size, dtype=xp.int64)
        # Rules of a decoder pipeline (purebpe.gpu.plan), per row: whether a token was
        # decoded yet (the first one has its first-token form), how many leading strip
        # characters may still go, and, with byte fallback, the byte run not yet closed.
        self._started = xp.zeros(batch_size, dtype=bool)
        self._strip_left = [table.strip[1]] * batch_size
        self._runs = [b""] * batch_size
        self._byte_flags: List[bool] = [] if table.is_byte is None else to_numpy(xp, table.is_byte).tolist()

    def step(self, new_ids: Any) -> List[str]:
        """The text each row's ``new_ids`` complete, with any bytes they still lack held.

        ``new_ids`` is a list with one entry per row (a list of ids, possibly empty, or one
        id), or an array: 1-D with one id per row, or 2-D with the same number per row.
        Bad input raises ``PureBPEError`` and leaves the stream as it was.
        """
        grid, used = self._grid(new_ids)
        table, xp = self.table, self.table.xp
        rows, width = int(grid.shape[0]), int(grid.shape[1])
        if table.first_shift and width:
            grid = self._first_forms(grid, used)
        if table.is_byte is not None:
            return self._step_runs(grid, used)
        # Segment grid (rows, 1 + width): the held bytes, then the new tokens.
        held_start = table.num_bytes + MAX_HELD * (self._rows + 1) - self._held_len
        token_len = table.lengths[grid]
        if used is not None:
            token_len = token_len * used
        seg_start = xp.concatenate([held_start[:, None], table.offsets[grid]], axis=1)
        seg_len = xp.concatenate([self._held_len[:, None], token_len], axis=1)
        self._source[table.num_bytes :] = self._held.reshape(-1)
        buffer, seg_offsets = gather_segments(
            xp, self._source, seg_start.reshape(-1), seg_len.reshape(-1), table.gather == "fused"
        )
        row_offsets = seg_offsets[xp.arange(rows + 1, dtype=xp.int64) * (width + 1)]
        tail = last_bytes(xp, buffer, row_offsets)
        hold = incomplete_tail_length(xp, tail, self._tables)
        keep = xp.arange(MAX_HELD)[None, :] >= MAX_HELD - hold[:, None]
        self._held = xp.where(keep, tail, 0).astype(xp.uint8)
        self._held_len = hold
        data, (offsets, held) = to_host(xp, buffer, row_offsets, hold)
        return self._stripped(
            [data[offsets[r] : offsets[r + 1] - held[r]].decode("utf-8", "replace") for r in range(rows)]
        )

    def _first_forms(self, grid: Array, used: Optional[Array]) -> Array:
        """``grid`` with the first kept id of each row not started yet in its first form."""
        table, xp = self.table, self.table.xp
        kept = kept_mask(table, grid, used)
        first = kept & (xp.cumsum(kept, axis=1) == 1) & ~self._started[:, None]
        self._started = self._started | kept.any(axis=1)
        return xp.where(first, grid + table.first_shift, grid)

    def _step_runs(self, grid: Array, used: Optional[Array]) -> List[str]:
        """A step with ``ByteFallback``: the text up to each row's last text token.

        HF decodes a run of byte tokens only once it ends (an invalid byte anywhere makes
        the whole run U+FFFD), so a row holds its open run, whatever its length, on the
        host, and emits it with the first text token after it. The bytes of the closed
        part decode as one unless they show a U+FFFD; then that row is decoded again token
        by token (:func:`purebpe.gpu.plan.run_text`).
        """
        table, xp = self.table, self.table.xp
        assert table.is_byte is not None and table.host_tokens is not None
        rows, width = int(grid.shape[0]), int(grid.shape[1])
        if width == 0:
            return [""] * rows
        token_len = table.lengths[grid]
        if used is not None:
            token_len = token_len * used
        buffer, seg_offsets = gather_segments(
            xp,
            table.token_bytes,
            table.offsets[grid].reshape(-1),
            token_len.reshape(-1),
            table.gather == "fused",
        )
        kept = kept_mask(table, grid, used)
        closes = kept & ~table.is_byte[grid]
        last = xp.where(closes, xp.arange(width)[None, :], -1).max(axis=1)  # last text token
        row_starts = xp.arange(rows + 1, dtype=xp.int64) * width
        run_start = seg_offsets[row_starts[:-1] + last + 1]
        data, (offsets, run_starts, lasts) = to_host(xp, buffer, seg_offsets[row_starts], run_start, last)
        out: List[str] = []
        host: List[Any] = []  # the row's ids and kept flags, fetched once if a row needs them
        for r in range(rows):
            a, t, b = offsets[r], run_starts[r], offsets[r + 1]
            if lasts[r] < 0:
                self._runs[r] += data[a:b]
                out.append("")
                continue
            text = (self._runs[r] + data[a:t]).decode("utf-8", "replace")
            if table.empty_closers or "\ufffd" in text:
                if not host:
                    host += [to_numpy(xp, grid).tolist(), to_numpy(xp, kept).tolist()]
                ids = [tid for tid, k in zip(host[0][r][: lasts[r] + 1], host[1][r]) if k]
                pieces = [table.host_tokens[tid] for tid in ids]
                text, _ = run_text(pieces, [self._byte_flags[tid] for tid in ids], self._runs[r])
            self._runs[r] = data[t:b]
            out.append(text)
        return self._stripped(out)

    def _stripped(self, texts: List[str], rows: Optional[Sequence[int]] = None) -> List[str]:
        """``texts`` (of ``rows``, default all) without the leading characters the table
        strips from the whole text, as far as each row has not emitted other text yet."""
        char, count = self.table.strip
        if not count:
            return texts
        left = self._strip_left
        for i, text in enumerate(texts):
            r = i if rows is None else rows[i]
            if left[r] and text:
                texts[i], cut = strip_start(text, char, left[r])
                left[r] = left[r] - cut if not texts[i] else 0
        return texts

    def pending(self) -> List[bytes]:
        """The bytes each row holds back (0 to 3: a valid start of a character; with byte
        fallback, the open run of byte tokens)."""
        if self.table.is_byte is not None:
            return list(self._runs)
        held, (lengths,) = to_host(self.table.xp, self._held.reshape(-1), self._held_len)
        return [held[MAX_HELD * (r + 1) - n : MAX_HELD * (r + 1)] for r, n in enumerate(lengths)]

    def flush(self, rows: Optional[Sequence[int]] = None) -> List[str]:
        """What rows still hold, decoded with U+FFFD; those rows then start afresh.

        ``rows=None`` flushes every row (the end of a batch); a list of row indices flushes
        only those, in that order, as when a serving loop hands a finished row's slot to a
        new request while the other rows go on.
        """
        xp = self.table.xp
        held = self.pending()
        end = close_run if self.table.is_byte is not None else _replace
        if rows is None:
            self._held = xp.zeros((self.batch_size, MAX_HELD), dtype=xp.uint8)
            self._held_len = xp.zeros(self.batch_size, dtype=xp.int64)
            texts = self._stripped([end(h) for h in held])
            self._started = xp.zeros(self.batch_size, dtype=bool)
            self._strip_left = [self.table.strip[1]] * self.batch_size
            self._runs = [b""] * self.batch_size
            return texts
        chosen: List[int] = []
        seen: Set[int] = set()
        for row in rows:
            if isinstance(row, bool) or not isinstance(row, int) or not 0 <= row < self.batch_size:
                raise PureBPEError(
                    f"rows to flush must be row indices in 0..{self.batch_size - 1}, not {row!r}"
                )
            if row in seen:  # its held bytes would be emitted twice
                raise PureBPEError(f"rows to flush must be distinct: row {row} appears twice")
            seen.add(row)
            chosen.append(row)
        texts = self._stripped([end(held[row]) for row in chosen], chosen)
        if chosen:
            index = xp.asarray(chosen, dtype=xp.int64)
            self._held[index] = 0
            self._held_len[index] = 0
            self._started[index] = False
        for row in chosen:
            self._strip_left[row] = self.table.strip[1]
            self._runs[row] = b""
        return texts

    def _grid(self, new_ids: Any) -> Tuple[Array, Optional[Array]]:
        """``new_ids`` as a ``(rows, width)`` id array on the device and its used mask."""
        table, xp = self.table, self.table.xp
        if isinstance(new_ids, (list, tuple)):
            grid, used = self._grid_from_lists(new_ids)
        else:
            grid = host_or_device(table, new_ids, "new_ids")
            if grid.ndim == 1:
                grid = grid.reshape(-1, 1)
            if grid.ndim != 2 or grid.shape[0] != self.batch_size:
                raise PureBPEError(
                    f"new_ids must have one entry per row ({self.batch_size}), not shape {tuple(grid.shape)}"
                )
            used = None
        table.check_ids(grid, used, name="new_ids")
        return xp.asarray(grid), None if used is None else xp.asarray(used)

    def _grid_from_lists(self, new_ids: Sequence[Any]) -> Tuple[Array, Optional[Array]]:
        """Rows given as Python values, padded on the host to one width (plain Python)."""
        if len(new_ids) != self.batch_size:
            raise PureBPEError(f"new_ids must have one entry per row ({self.batch_size}), not {len(new_ids)}")
        rows: List[List[int]] = []
        for r, row in enumerate(new_ids):
            try:
                rows.append([operator.index(row)])
            except TypeError:
                try:
                    rows.append([operator.index(i) for i in row])
                except TypeError:
                    raise PureBPEError(f"new_ids[{r}] must be an id or a list of ids, not {row!r}") from None
        width = max(len(row) for row in rows)
        numpy = import_backend("numpy")
        counts = numpy.asarray([len(row) for row in rows], dtype=numpy.int64)
        padded = array("q")
        for r, row in enumerate(rows):
            try:
                padded.fromlist(row + [0] * (width - len(row)))
            except OverflowError as exc:
                raise PureBPEError(f"new_ids[{r}] must hold integers within int64 ({exc})") from None
        grid = host_ids(padded).reshape(self.batch_size, width)
        if bool((counts == width).all()):
            return grid, None
        return grid, numpy.arange(width)[None, :] < counts[:, None]
