"""The chunked reader: a block trace as chunks.Chunk in bounded memory (`read_chunks`), the same requests
and messages as read_trace."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from dbtier.sim.trace.columns import Columns
from dbtier.sim.trace.files import tell
from dbtier.sim.trace.limits import MAX_SPAN_S
from dbtier.sim.trace.reader import FAST_FORMATS, Trace, check_args, fast_start, read_trace, time_scale


class TraceChunks:
    """A trace as chunks.Chunk of at most `requests` requests in file order (iterate once). When the
    vectorised reader vouches for the file it holds one chunk and one block of the file at a time;
    otherwise (or from the first request it cannot vouch for on) the rest comes from read_trace, with its
    answers and messages. Once the chunks are exhausted, `meta` is the Trace without its requests (zero-length
    arrays): volumes, lines, ignored, notes, timed, time_origin, as read_trace gives them. No --sort: a trace
    whose time goes backwards stops with read_trace's message."""

    def __init__(self, path: str | os.PathLike, fmt: str = "auto", columns: str | Columns | None = None, *,
                 requests: int = 1 << 20, skip_bad: bool = False):
        if requests <= 0:
            raise ValueError("a chunk holds at least one request")
        self.path = Path(path)
        self.fmt, self.cols = check_args(fmt, columns)
        self.requests = requests
        self.skip_bad = skip_bad
        self.meta: Trace | None = None

    def __iter__(self) -> Iterator[Any]:
        from dbtier.sim.trace import fastread
        from dbtier.sim.trace.chunks import Chunk, chunks_of
        p, cols, requests = self.path, self.cols, self.requests
        done = 0
        start = fast_start(p, self.fmt, cols) if self.fmt in ("auto", *FAST_FORMATS) else None
        if start is not None:
            fmt2, lay, (state, gen, raw, size) = start
            scale = time_scale(fmt2, cols)
            untimed = fmt2 == "csv" and cols is not None and cols.time is None
            t0 = None
            last = -math.inf
            buf: list[Any] = []
            held = 0
            try:
                for b in gen:
                    if t0 is None:
                        t0 = b.t[0]
                    ts = (b.t - t0).astype(np.float64) * scale if lay.time is not None else np.zeros(len(b.op))
                    if lay.time is not None and (not (np.abs(ts) <= MAX_SPAN_S).all() or ts[0] < last
                                                 or (np.diff(ts) < 0).any()):
                        raise fastread.Reject("time checks")      # the line reader says where
                    if len(ts):
                        last = ts[-1]
                    buf.append((ts, b.op, b.offset, b.length, b.volume))
                    held += len(ts)
                    if held >= requests:
                        arrs = [np.concatenate([x[k] for x in buf]) if len(buf) > 1 else buf[0][k] for k in range(5)]
                        ts_a, op_a, off_a, len_a, vol_a = arrs
                        lo = 0
                        while held - lo >= requests:
                            hi = lo + requests
                            yield Chunk(ts_a[lo:hi], op_a[lo:hi], off_a[lo:hi], len_a[lo:hi], vol_a[lo:hi],
                                        first_request=done, timed=not untimed,
                                        read_fraction=min(1.0, tell(raw) / size) if size else None)
                            done += requests
                            lo += requests
                        held -= lo
                        buf = [tuple(a[lo:] for a in arrs)] if held else []
                if held:
                    ts_a, op_a, off_a, len_a, vol_a = (np.concatenate([x[k] for x in buf]) for k in range(5))
                    yield Chunk(ts_a, op_a, off_a, len_a, vol_a, first_request=done, timed=not untimed,
                                read_fraction=1.0)
                    done += held
                if done:
                    assert t0 is not None       # set by the first batch, and requests came
                    hl = state.header_lines
                    e = np.zeros(0)
                    self.meta = Trace(str(p), fmt2, e, e.astype(np.uint8), e.astype(np.int64), e.astype(np.int64),
                                      e.astype(np.int32), tuple(sorted(state.volumes, key=state.volumes.get)),
                                      not untimed, float(t0) * scale, state.rows + hl, 0, [],
                                      {"header": hl} if hl else {}, False,
                                      ["no time column: untimed, replayed back to back"] if untimed else [])
                    return
            except fastread.Reject:
                gen.close()
        whole = read_trace(p, self.fmt, cols, skip_bad=self.skip_bad)
        for c in chunks_of(whole, requests):
            if c.first_request + len(c) <= done:
                continue
            if c.first_request < done:
                k = done - c.first_request
                c = Chunk(c.time_s[k:], c.op[k:], c.offset_bytes[k:], c.length_bytes[k:], c.volume[k:], done, c.timed,
                          c.read_fraction)
            yield c
        self.meta = whole.select(np.zeros(len(whole), dtype=bool))
        self.meta.time_s = np.zeros(0)


def read_chunks(path: str | os.PathLike, fmt: str = "auto", columns: str | Columns | None = None, *,
                requests: int = 1 << 20, skip_bad: bool = False) -> TraceChunks:
    """The trace as chunks (TraceChunks: iterate it; its `meta` is complete afterwards)."""
    return TraceChunks(path, fmt, columns, requests=requests, skip_bad=skip_bad)
