"""The preferred-read mirror over a whole trace: its failure, return and resync (mirror.py's model applied to
the trace) as a `MirrorPlan` -- each request's phase, the `mirror` and `resync` blocks, the timeline's events
and the notes -- which simulate.py puts into the result document; and the mirror's device I/Os (`subios`).

Imports numpy, dbtier.core, sim/mirror.py, sim/device/ and sim/trace/ (never simulate.py, which imports it).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from dbtier.core.units import human_bytes, size_text
from dbtier.sim import mirror
from dbtier.sim.device import latency
from dbtier.sim.device.latency import DeviceModel, SubIOs
from dbtier.sim.trace.traces import READ, WRITE, Trace

RESYNC_MODEL = (
    "The copy reads each dirty region whole from the survivor and writes it to the returning side "
    "(sequential on both): with no other load at min(survivor read MB/s, returning write MB/s). It gets the "
    "device time the trace's requests leave: per bucket of time, min(read MB/s x (1 - survivor busy), write "
    "MB/s x (1 - returning busy)), the busy fractions from replaying the trace with the resync's routing "
    "(reads on the survivor, writes to both); full rate after the trace ends. The requests' latency during the "
    "resync is modelled without the copy's I/O (the copy yields, as md's throttle intends): optimistic for "
    "that window. The unprotected window runs from the failure to the end of the copy.")


@dataclass(frozen=True)
class MirrorPlan:
    """The mirror's part of the result document, computed before the replay."""
    phases: np.ndarray | None           # each request's: 0 in sync, 1 one side down, 2 resyncing; None: no failure
    mirror: Mapping[str, Any]           # the `simulation.mirror` block
    resync: Mapping[str, Any] | None    # the contract's `resync` block (None without a failure)
    events: tuple[Mapping[str, Any], ...]   # the timeline's: fail, return, resynced
    notes: tuple[str, ...]
    resync_timing_s: float | None       # wall seconds the resync's foreground replay took (None: none ran)


@dataclass(frozen=True)
class _Copy:
    """The resync's copy under the foreground load: how long it took, the `resync_copy` block, the wall time."""
    seconds: float
    block: Mapping[str, Any]
    timing_s: float


def plan(trace: Trace | None, f: mirror.Failure | None, tracking: str | None, region_size: int | None,
         devices: Mapping[str, DeviceModel], roles: Sequence[str], res: float | None,
         progress: Callable[[str, float], None]) -> MirrorPlan:
    """The failure `f` (None: none) over the whole `trace` (None only without a failure), with the change
    tracking `tracking` / `region_size` (mirror.tracking_of) and the clock tick `res` the ties are spread over."""
    track = mirror.tracking_of(tracking, region_size)
    region = track["region_size"]
    block = {"region_size": region, "tracking": track, "failure": None, "resync_rate_mbps": None,
             "resync_copy": None, "resync_model": None, "requests_degraded": 0, "requests_resyncing": 0}
    if f is None:
        return MirrorPlan(None, block, None, (), (), None)
    assert trace is not None
    down_end = np.inf if f.return_at_s is None else f.return_at_s
    in_window = (trace.op != READ) & (trace.time_s >= f.fail_at_s) & (trace.time_s < down_end)
    regions = mirror.dirty_regions(trace.offset_bytes[in_window], trace.length_bytes[in_window],
                                   trace.volume[in_window], region)
    copy = None if f.return_at_s is None else _copy(trace, f, devices, roles, res, regions * region, progress)
    resync_s = None if copy is None else copy.seconds
    end = float(trace.time_s[-1])
    resync_block = mirror.resync(regions, region, f, end, resync_s)
    ph = mirror.phases(trace.time_s, f, resync_s)
    block.update({
        "failure": {"side": f.side, "fail_at_s": f.fail_at_s, "return_at_s": f.return_at_s, "survivor": f.survivor},
        "resync_rate_mbps": None if copy is None else copy.block["rate_mbps_idle"],
        "resync_copy": None if copy is None else copy.block, "resync_model": None if copy is None else RESYNC_MODEL,
        "requests_degraded": int((ph == 1).sum()), "requests_resyncing": int((ph == 2).sum())})
    notes = _notes(f, track, regions, resync_block, copy, end)
    return MirrorPlan(ph, block, resync_block, _events(f, resync_block), notes,
                      None if copy is None else copy.timing_s)


def _copy(trace: Trace, f: mirror.Failure, devices: Mapping[str, DeviceModel], roles: Sequence[str],
          res: float | None, nbytes: int, progress: Callable[[str, float], None]) -> _Copy:
    """The copy gets the device time the foreground leaves: replay the trace with the resync's routing from
    the return on, take each side's busy time per bucket, and integrate the copy over it."""
    assert f.return_at_s is not None
    progress("resync: foreground load", 0.0)
    t0 = time.perf_counter()
    returning, surviving = devices[f.side], devices[f.survivor]
    times = latency.spread_ties(trace.time_s, res)
    span = float(times[-1] - times[0])
    bucket = span / max(1, math.ceil(span / max(1.0, span / 100_000))) if span > 0 else 1.0
    idx = np.arange(len(trace), dtype=np.int64)
    fg_load = latency.serve(subios(trace, idx, mirror.phases(trace.time_s, f, np.inf), f),
                            [devices[r] for r in roles], times, True, bucket_s=bucket)
    busy = fg_load.busy_by_bucket_s             # kept: bucket_s was given
    assert busy is not None
    surv_i, ret_i = roles.index(f.survivor), roles.index(f.side)
    resync_s = mirror.copy_seconds(nbytes, f.return_at_s, surviving.read_mbps, returning.write_mbps,
                                   busy[surv_i], busy[ret_i], float(times[0]), bucket)
    idle_s = nbytes / mirror.copy_rate_bytes_per_s(surviving.read_mbps, returning.write_mbps)
    elapsed = time.perf_counter() - t0
    block = {"survivor_read_mbps": surviving.read_mbps, "returning_write_mbps": returning.write_mbps,
             "rate_mbps_idle": min(surviving.read_mbps, returning.write_mbps),
             "rate_mbps_mean": nbytes / resync_s / 1e6 if resync_s else None,
             "seconds_idle": idle_s, "bucket_s": bucket,
             "foreground_util": _window_util(busy, bucket, float(times[0]), f.return_at_s,
                                             f.return_at_s + resync_s, {"survivor": surv_i, "returning": ret_i})}
    return _Copy(resync_s, block, elapsed)


def _events(f: mirror.Failure, resync_block: Mapping[str, Any]) -> tuple[Mapping[str, Any], ...]:
    """The timeline's events: the failure, and the return and the end of the resync when the side returns."""
    events: list[Mapping[str, Any]] = [{"t_s": f.fail_at_s, "event": "fail", "label": f"{f.side} side fails"}]
    if f.return_at_s is not None:
        events.append({"t_s": f.return_at_s, "event": "return", "label": f"{f.side} side returns"})
        events.append({"t_s": f.return_at_s + resync_block["seconds"], "event": "resynced",
                       "label": f"resync done ({size_text(resync_block['bytes'])})"})
    return tuple(events)


def _notes(f: mirror.Failure, track: Mapping[str, Any], regions: int, resync_block: Mapping[str, Any],
           copy: _Copy | None, end: float) -> tuple[str, ...]:
    """What the failure dirtied, whether the side returns and the resync ends within the trace, the copy's rate."""
    notes = [f"change tracking: {track['model']} ({track['model_from']}), {human_bytes(track['region_size'])} "
             f"regions ({track['region_size_from']}): the writes while the {f.side} side was down dirtied "
             f"{regions:,} of them, {size_text(resync_block['bytes'])} to copy. {track['basis']}"]
    if copy is None:
        notes.append(f"the {f.side} side never returns within the trace: no resync; the design ran without "
                     "redundancy to the end")
        return tuple(notes)
    assert f.return_at_s is not None
    if f.return_at_s + copy.seconds > end:
        notes.append("the resync ends after the trace does (it runs at the full copy rate from then on)")
    c, fu = copy.block, copy.block["foreground_util"]
    notes.append(
        f"resync: {size_text(resync_block['bytes'])} read from the {f.survivor} side "
        f"({c['survivor_read_mbps']:g} MB/s) and written to the {f.side} side "
        f"({c['returning_write_mbps']:g} MB/s): {c['seconds_idle']:,.1f} s at "
        f"{c['rate_mbps_idle']:g} MB/s on idle devices; the foreground kept the survivor "
        f"{_pct(fu['survivor'])} and the returning side {_pct(fu['returning'])} busy meanwhile, so it took "
        f"{copy.seconds:,.1f} s (mean {c['rate_mbps_mean']:,.1f} MB/s). " + RESYNC_MODEL)
    return tuple(notes)


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.0%}"


def _window_util(b: np.ndarray, bucket_s: float, t0: float, start_s: float, end_s: float,
                 which: dict[str, int]) -> dict[str, float | None]:
    """Each device's mean foreground busy fraction over [start_s, end_s) (`b`: each device's busy seconds per
    bucket from `t0`; buckets overlapping the window, weighted by overlap; None when it lies past the trace)."""
    lo = np.arange(b.shape[1]) * bucket_s + t0
    w = np.clip(np.minimum(lo + bucket_s, end_s) - np.maximum(lo, start_s), 0.0, None)
    if not w.sum() > 0:
        return {k: None for k in which}
    return {k: float((np.minimum(b[i] / bucket_s, 1.0) * w).sum() / w.sum()) for k, i in which.items()}


def subios(tr: Any, idx: np.ndarray, ph: np.ndarray, f: mirror.Failure | None) -> SubIOs:
    """Device I/Os of the preferred-read mirror for requests `idx` of `tr` (a Trace or a Chunk) in phases `ph`
    (0 in sync, 1 one side down, 2 resyncing): reads from the fast side in sync, else from the survivor;
    writes to both, or to the survivor while down."""
    subs = SubIOs.empty()
    is_read = tr.op == READ
    fast, slow = 0, 1
    survivor = None if f is None else (fast if f.survivor == "fast" else slow)
    normal = ph == 0
    r = is_read
    w = ~is_read
    subs.add(idx[r & normal], fast, READ, tr.length_bytes[r & normal],
             offset=tr.offset_bytes[r & normal], volume=tr.volume[r & normal])
    if survivor is not None:
        degraded_r = r & ~normal
        subs.add(idx[degraded_r], survivor, READ, tr.length_bytes[degraded_r],
                 offset=tr.offset_bytes[degraded_r], volume=tr.volume[degraded_r])
        down_w = w & (ph == 1)
        subs.add(idx[down_w], survivor, WRITE, tr.length_bytes[down_w],
                 offset=tr.offset_bytes[down_w], volume=tr.volume[down_w])
    both_w = w & (ph != 1)
    subs.add(idx[both_w], fast, WRITE, tr.length_bytes[both_w],
             offset=tr.offset_bytes[both_w], volume=tr.volume[both_w])
    subs.add(idx[both_w], slow, WRITE, tr.length_bytes[both_w],
             offset=tr.offset_bytes[both_w], volume=tr.volume[both_w])
    return subs
