"""Columnar chunks of a block trace: what a reader yields and the replay consumes, so a trace larger than
memory can be replayed in one streaming pass with the same answers as the in-memory one.

A chunk is one contiguous run of requests in trace order, with the arrays of a `traces.Trace` (same
dtypes and meanings) and the index of its first request in the whole trace.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np


@dataclass
class Chunk:
    time_s: np.ndarray           # float64, seconds since the trace's first request
    op: np.ndarray               # uint8: 0 read, 1 write
    offset_bytes: np.ndarray     # int64
    length_bytes: np.ndarray     # int64
    volume: np.ndarray           # int32, index into the trace's volumes
    first_request: int = 0       # this chunk's first request in the whole trace

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
                    trace.volume[lo:hi], lo)
