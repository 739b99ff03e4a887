"""Columnar chunks of a block trace: what a reader yields and the replay consumes, so a trace larger than
memory can be replayed in one streaming pass with the same answers as the in-memory one.

A chunk is one contiguous run of requests in trace order, with the arrays of a `traces.Trace` (same
dtypes and meanings) and the index of its first request in the whole trace.
"""

from __future__ import annotations

import queue
import threading
from dataclasses import dataclass
from typing import Any, Generator, Iterable, Iterator

import numpy as np



@dataclass
class Chunk:
    time_s: np.ndarray           # float64, seconds since the trace's first request
    op: np.ndarray               # uint8: 0 read, 1 write
    offset_bytes: np.ndarray     # int64
    length_bytes: np.ndarray     # int64
    volume: np.ndarray           # int32, index into the trace's volumes
    first_request: int = 0       # this chunk's first request in the whole trace
    timed: bool = True           # False: no timestamps (replayed back to back)
    read_fraction: float | None = None   # how much of the input has been read by the end of this chunk

    def __len__(self) -> int:
        return int(self.op.shape[0])


def chunks_of(trace, requests: int) -> Iterator[Chunk]:
    """An in-memory trace as chunks of at most `requests` requests (views of its arrays, no copy)."""
    if requests <= 0:
        raise ValueError("a chunk holds at least one request")
    n = len(trace)
    for lo in range(0, n, requests):
        hi = min(n, lo + requests)
        yield Chunk(trace.time_s[lo:hi], trace.op[lo:hi], trace.offset_bytes[lo:hi], trace.length_bytes[lo:hi],
                    trace.volume[lo:hi], lo, trace.timed, hi / n)


def joined(a: Chunk, b: Chunk) -> Chunk:
    """Two consecutive chunks as one."""
    if a.first_request + len(a) != b.first_request:
        raise ValueError(f"chunks not consecutive: {a.first_request}+{len(a)} then {b.first_request}")
    return Chunk(np.concatenate([a.time_s, b.time_s]), np.concatenate([a.op, b.op]),
                 np.concatenate([a.offset_bytes, b.offset_bytes]), np.concatenate([a.length_bytes, b.length_bytes]),
                 np.concatenate([a.volume, b.volume]), first_request=a.first_request, timed=a.timed,
                 read_fraction=b.read_fraction)


def part(c: Chunk, lo: int, hi: int) -> Chunk:
    return Chunk(c.time_s[lo:hi], c.op[lo:hi], c.offset_bytes[lo:hi], c.length_bytes[lo:hi], c.volume[lo:hi],
                 first_request=c.first_request + lo, timed=c.timed, read_fraction=c.read_fraction)


def whole_ticks(chunks: Iterable[Chunk]) -> Iterator[Chunk]:
    """The chunks re-cut so that requests sharing a timestamp are in the same chunk (the last time of each is
    held back to the next): what spreading a coarse clock's ticks needs."""
    held: Chunk | None = None
    for c in chunks:
        if held is not None:
            c = joined(held, c)
        n = len(c)
        if n == 0:
            held = c
            continue
        cut = int(np.searchsorted(c.time_s, c.time_s[-1], side="left"))
        if cut > 0:
            yield part(c, 0, cut)
        held = part(c, cut, n)
    if held is not None and len(held):
        yield held


def prefetched(chunks: Iterable[Chunk], depth: int = 1) -> Generator[Chunk, None, None]:
    """The chunks, read `depth` ahead in a thread (the reader parses while the replay works: pyarrow and the
    kernels release the GIL). The reader's exception is raised here, where its chunk would have come; a
    consumer that stops early stops the reader."""
    q: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()
    end = object()

    def put(item: Any) -> bool:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def run() -> None:
        try:
            for c in chunks:
                if not put(c):
                    return
            put(end)
        except BaseException as exc:            # handed to the consumer, raised there
            put(exc)

    t = threading.Thread(target=run, name="dbtier-reader", daemon=True)
    t.start()
    try:
        while True:
            item = q.get()
            if item is end:
                return
            if isinstance(item, BaseException):
                raise item
            yield item
    finally:
        stop.set()
        t.join()
