"""What the fast readers of the CSV-like traces share (fastread.py's pyarrow path and csvscan.py's compiled
one): the batches they yield, the file's state, the layouts' columns, the stream with its hex check, and
limits.py's values (kept here, not imported: tests/parsers/test_traces_fast.py checks they agree)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

READ, WRITE, SECTOR = 0, 1, 512
MAX_REQUEST_BYTES = 1 << 30
MAX_ADDRESS_BYTES = 1 << 55
T_LIM_TICKS = 1 << 62
MAX_VOLUMES = 1 << 16


class Reject(Exception):
    """The fast path cannot vouch for this file: read it line by line."""


@dataclass
class Batch:
    t: np.ndarray          # raw time in the format's unit: int64 (float64 for a csv with fractional times)
    op: np.ndarray         # uint8
    offset: np.ndarray     # int64 bytes
    length: np.ndarray     # int64 bytes
    volume: np.ndarray     # int32 index into State.volumes


@dataclass
class State:
    """What the whole file says besides its requests, complete once the batches are exhausted."""
    volumes: dict[str, int] = field(default_factory=dict)
    header_lines: int = 0
    rows: int = 0
    max_volumes: int = MAX_VOLUMES        # limits.MAX_VOLUMES at the call (tests lower it)
    # blocks read by csvscan's kernel and handed to pyarrow (what the tests look at; not the file's answer)
    kernel_blocks: int = field(default=0, compare=False)
    arrow_blocks: int = field(default=0, compare=False)

    def number(self, name: str) -> int:
        """The volume's index: in the order volumes first appear in the file, as the line reader numbers them."""
        g = self.volumes.get(name)
        if g is None:
            if len(self.volumes) >= self.max_volumes:
                raise Reject("too many volumes")
            g = self.volumes[name] = len(self.volumes)
        return g


@dataclass
class Layout:
    ncols: int
    time: int | None
    op: int
    offset: int
    length: int
    volume: tuple[int, ...]               # columns joined with '_' after strip() (msr: host, disk)
    op_of: Callable[[str], int | None]    # a dictionary value -> READ, WRITE or None (not a request)
    offset_scale: int = 1
    length_scale: int = 1
    float_time: bool = False
    delimiter: str = ","
    tokens: tuple[str, ...] = ()          # op spellings csvscan's kernel matches byte for byte (via op_of)


class Scan:
    """The (decompressed) byte stream as pyarrow reads it, refused where Python's int() and pyarrow's int64
    parse differ ('0x10' is 16 to pyarrow, malformed to the line reader)."""

    def __init__(self, stream: Any):
        self.stream = stream
        self.tail = b""
        self.closed = False

    def read(self, n: int = -1) -> bytes:
        data = self.stream.read(n)
        # one byte first (memchr): most traces have no x at all; the two-byte search is slower
        if (b"x" in data or b"X" in data) and (b"0x" in data or b"0X" in data
                                               or self.tail + data[:1] in (b"0x", b"0X")):
            raise Reject("hex-looking number")
        if data:
            self.tail = data[-1:]
        return data

    def close(self) -> None:
        self.closed = True
