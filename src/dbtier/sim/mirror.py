"""Preferred-read mirror: failure, write-intent bitmap, resync.

Two sides, fast and slow. Every read is served by the fast side and every
write goes to both (it completes when both have it), as md RAID1 with the
slow member `write-mostly`.

While a side is down, from `fail_at_s` until `return_at_s`, the other side
serves everything, and each write marks the regions it touches in a bitmap
of `region_size` bytes (md's write-intent bitmap: 64 MiB chunks by default).
When the side returns, only the marked regions are copied to it, whole: the
resync volume is regions x region size, and it takes volume / the returning
device's sequential write rate. Until the copy is done the design still has a
single copy: the unprotected window runs from the failure to the end of the
resync (or to the end of the trace when the side never returns). During the
resync reads stay on the surviving side and writes go to both.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dbtier.core.errors import DbtierError
from dbtier.sim.names import SIDES

DEFAULT_REGION = 64 * 1024 * 1024


@dataclass(frozen=True)
class Failure:
    side: str
    fail_at_s: float
    return_at_s: float | None = None

    def __post_init__(self) -> None:
        if self.side not in SIDES:
            raise DbtierError(f"--fail: unknown side '{self.side}' (fast or slow)", "e.g. --fail fast@600")
        if self.fail_at_s < 0:
            raise DbtierError(f"--fail: time {self.fail_at_s} s is negative", "times count from the first request")
        if self.return_at_s is not None and self.return_at_s <= self.fail_at_s:
            raise DbtierError(f"--return at {self.return_at_s:g} s is not after --fail at {self.fail_at_s:g} s",
                              "the side must fail before it returns")

    @property
    def survivor(self) -> str:
        return "slow" if self.side == "fast" else "fast"


def dirty_regions(offset: np.ndarray, length: np.ndarray, volume: np.ndarray, region_size: int) -> int:
    """Distinct (volume, region) pairs touched by these writes."""
    if offset.size == 0:
        return 0
    first = offset // region_size
    last = (offset + length - 1) // region_size
    n = (last - first + 1).astype(np.int64)
    starts = np.cumsum(n) - n
    regions = np.repeat(first - starts, n) + np.arange(int(n.sum()), dtype=np.int64)
    keys = (np.repeat(volume.astype(np.int64), n) << 40) | regions
    return int(np.unique(keys).size)


def resync(regions: int, region_size: int, write_mbps: float, failure: Failure,
           trace_end_s: float) -> dict[str, Any]:
    """The contract's `resync` block: {regions, bytes, seconds, unprotected_seconds}."""
    nbytes = regions * region_size
    if failure.return_at_s is None:
        return {"regions": regions, "bytes": nbytes, "seconds": None,
                "unprotected_seconds": max(trace_end_s - failure.fail_at_s, 0.0)}
    seconds = nbytes / (write_mbps * 1e6)
    return {"regions": regions, "bytes": nbytes, "seconds": seconds,
            "unprotected_seconds": failure.return_at_s - failure.fail_at_s + seconds}


def phases(time_s: np.ndarray, failure: Failure | None, resync_s: float | None) -> np.ndarray:
    """Per request: 0 both sides in sync, 1 one side down, 2 resyncing."""
    ph = np.zeros(time_s.size, dtype=np.int8)
    if failure is None:
        return ph
    down_end = np.inf if failure.return_at_s is None else failure.return_at_s
    ph[(time_s >= failure.fail_at_s) & (time_s < down_end)] = 1
    if failure.return_at_s is not None and resync_s:
        ph[(time_s >= failure.return_at_s) & (time_s < failure.return_at_s + resync_s)] = 2
    return ph
