"""Preferred-read mirror: failure, change tracking, resync.

Two sides, fast and slow. Every read is served by the fast side and every
write goes to both (it completes when both have it), as Oracle ASM normal
redundancy with the fast failure group as the preferred read failure group,
or md RAID1 with the slow member `write-mostly`.

While a side is down, from `fail_at_s` until `return_at_s`, the other side
serves everything, and each write marks the regions it touches, regions of
`region_size` bytes, the unit the design tracks changes in (TRACKING):
- `asm-au`: Oracle ASM fast mirror resync tracks the extents written while a
  disk is offline and resyncs only those when it returns; a file's first
  20,000 extents are one allocation unit each (AU_SIZE: 1 MB by default, 1 to
  64 MB). A 1 MiB region per AU; a file's later extents are 4 and 16 AUs (not
  modelled: a block trace has no files), so past 20 GB of one file the real
  resync copies more than this.
- `md-bitmap`: md's write-intent bitmap marks chunks (mdadm's internal bitmap:
  64 MiB by default) and the returning member gets every marked chunk whole.
When the side returns, only the marked regions are copied to it, whole: the
resync volume is regions x region size. The copy reads the survivor and writes
the returning side, region by region (whole regions: sequential on both), so
with no other load it runs at min(survivor's sequential read MB/s, returning
side's sequential write MB/s). The trace keeps sending its requests meanwhile
(reads stay on the survivor, writes go to both), and the copy gets the device
time they leave: over each bucket of time (1 s, or the trace's span / 100,000
when longer) it runs at
    min(read MB/s x (1 - u_survivor), write MB/s x (1 - u_returning)),
u being each device's busy fraction from the foreground in that bucket under
the resync's routing (md throttles resync to leave room for requests; this is
the ideal throttle, which uses every idle moment). Past the trace's end the
copy runs at the full rate. The foreground's latency during the resync is
modelled without the copy's I/O (the copy yields): optimistic for that window.
Until the copy is done the design still has a single copy: the unprotected
window runs from the failure to the end of the resync (or to the end of the
trace when the side never returns).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from dbtier.core.errors import DbtierError
from dbtier.sim.names import SIDES

MIB = 1024 * 1024
DEFAULT_REGION = 64 * MIB          # md's bitmap chunk
DEFAULT_TRACKING = "asm-au"        # the study's mirror is ASM's (a preferred read failure group)

# Each change-tracking model: its region (the unit a write dirties) and where that comes from.
TRACKING: dict[str, dict[str, Any]] = {
    "asm-au": {
        "region_size": 1 * MIB, "unit": "ASM allocation unit (AU_SIZE default 1 MB)",
        "basis": "Oracle ASM fast mirror resync keeps track of the extents changed while a disk is offline and "
                 "resyncs only those when it is back online (Oracle ASM Administrator's Guide, 'Oracle ASM Fast "
                 "Mirror Resync'); an extent is one allocation unit for a file's first 20,000 extents, then 4 and "
                 "16 AUs ('Understanding Oracle ASM Extents'); AU_SIZE is 1, 2, 4, 8, 16, 32 or 64 MB, 1 MB by "
                 "default (Grid Infrastructure Installation Guide 11.2). Modelled as one region per AU: later, "
                 "larger extents of files over 20 GB are not (a block trace has no files)."},
    "md-bitmap": {
        "region_size": DEFAULT_REGION, "unit": "md write-intent bitmap chunk (64 MiB, mdadm's default)",
        "basis": "Linux md RAID1 marks the chunks a write touches in its write-intent bitmap (mdadm --bitmap-chunk; "
                 "64 MiB by default for an internal bitmap) and resyncs every marked chunk whole when the "
                 "member returns."},
}


def tracking_of(model: str | None, region_size: int | None) -> dict[str, Any]:
    """The change tracking a run uses: {model, unit, region_size, region_size_from, basis}; `region_size` (from
    --region-size) overrides the model's own unit."""
    name = model or DEFAULT_TRACKING
    if name not in TRACKING:
        raise DbtierError(f"--tracking: unknown model '{name}' (known: {', '.join(TRACKING)})",
                          "asm-au for an Oracle ASM mirror, md-bitmap for Linux md RAID1")
    t = TRACKING[name]
    why = "--tracking" if model else "the default, as the study's mirror is Oracle ASM's"
    return {"model": name, "model_from": why, "unit": t["unit"], "region_size": int(region_size or t["region_size"]),
            "region_size_from": "--region-size" if region_size else "the tracking's unit", "basis": t["basis"]}


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


def failure_from(fail: tuple[str, float] | None, return_: tuple[str, float] | None) -> Failure | None:
    """--fail SIDE@T and --return SIDE@T as one Failure (None without --fail): only the failed side returns."""
    if fail is None:
        if return_ is not None:
            raise DbtierError("--return without --fail", "name the failure first: --fail SIDE@T")
        return None
    side, t1 = fail
    t2 = None
    if return_ is not None:
        side2, t2 = return_
        if side2 != side:
            raise DbtierError(f"--return {side2} but --fail {side}: only the failed side can return",
                              f"write --return {side}@T")
    return Failure(side, t1, t2)


def dirty_regions(offset: np.ndarray, length: np.ndarray, volume: np.ndarray, region_size: int) -> int:
    """Distinct (volume, region) pairs touched by these writes.

    Each write covers the region span [first, last]; the spans of a volume are sorted and merged and
    their lengths added. No per-region expansion: a 1 GiB write over 4 KiB regions costs one span, not
    262,144 keys, and no key packs volume and region into one int64 (which overflowed for small
    regions on large offsets)."""
    if offset.size == 0:
        return 0
    first = offset // region_size
    last = (offset + length - 1) // region_size
    order = np.lexsort((first, volume))
    vol, lo, hi = volume[order], first[order], last[order]
    # Within a volume, the running max of `last` over the earlier spans tells whether a span starts a new run.
    new_vol = np.empty(vol.size, dtype=bool)
    new_vol[0] = True
    new_vol[1:] = vol[1:] != vol[:-1]
    total = 0
    bounds = np.flatnonzero(new_vol).tolist() + [vol.size]
    for a, b in zip(bounds[:-1], bounds[1:]):
        l, h = lo[a:b], hi[a:b]
        reach = np.maximum.accumulate(h)
        starts_run = np.empty(l.size, dtype=bool)
        starts_run[0] = True
        starts_run[1:] = l[1:] > reach[:-1]
        run_lo = l[starts_run]
        run_hi = np.maximum.reduceat(h, np.flatnonzero(starts_run))
        total += int((run_hi - run_lo + 1).sum())
    return total


def copy_rate_bytes_per_s(survivor_read_mbps: float, returning_write_mbps: float) -> float:
    """The copy's rate with no other load: the slower of reading the survivor and writing the returning side."""
    return min(survivor_read_mbps, returning_write_mbps) * 1e6


def copy_seconds(nbytes: float, start_s: float, survivor_read_mbps: float, returning_write_mbps: float,
                 survivor_busy: np.ndarray | None = None, returning_busy: np.ndarray | None = None,
                 t0_s: float = 0.0, bucket_s: float = 1.0) -> float:
    """Seconds to copy `nbytes` from `start_s` on, with the device time the foreground leaves.

    `survivor_busy`/`returning_busy`: each device's foreground busy seconds per bucket of `bucket_s` from
    `t0_s` (None: no foreground). In bucket i the copy runs at min(read x (1 - u_s,i), write x (1 - u_r,i)),
    u = busy / bucket_s capped at 1; after the last bucket at the full rate."""
    read_bps, write_bps = survivor_read_mbps * 1e6, returning_write_mbps * 1e6
    full = min(read_bps, write_bps)
    left = float(nbytes)
    if left <= 0:
        return 0.0
    t = start_s
    if survivor_busy is not None and returning_busy is not None and bucket_s > 0:
        u_s = np.minimum(np.asarray(survivor_busy, dtype=np.float64) / bucket_s, 1.0)
        u_r = np.minimum(np.asarray(returning_busy, dtype=np.float64) / bucket_s, 1.0)
        rate = np.minimum(read_bps * (1.0 - u_s), write_bps * (1.0 - u_r))
        i = max(int((start_s - t0_s) // bucket_s), 0)
        while i < rate.size:
            end = t0_s + (i + 1) * bucket_s
            if end > t:
                can = rate[i] * (end - t)
                if can >= left:
                    return float(t + left / rate[i] - start_s)
                left -= can
                t = end
            i += 1
    return float(t + left / full - start_s)


def resync(regions: int, region_size: int, failure: Failure, trace_end_s: float,
           seconds: float | None) -> dict[str, Any]:
    """The contract's `resync` block: {regions, bytes, seconds, unprotected_seconds} (`seconds` from
    copy_seconds; None when the side never returns)."""
    nbytes = regions * region_size
    if failure.return_at_s is None:
        return {"regions": regions, "bytes": nbytes, "seconds": None,
                "unprotected_seconds": max(trace_end_s - failure.fail_at_s, 0.0)}
    assert seconds is not None          # the side returns, so the copy was timed
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
