"""Service times from device figures, and the queueing model.

A device is described by six figures, from the catalog or from a probe run:
random read/write IOPS (small blocks, high queue depth), sequential read/write
MB/s (10^6 bytes/s), and read/write latency at queue depth 1 in µs.

The model: each device is one FIFO rate server followed by a fixed pipeline.

- An I/O of b bytes occupies the server for `occ = max(1/IOPS, b / bandwidth)`
  seconds: the device accepts at most IOPS small I/Os a second and at most its
  bandwidth in bytes.
- An I/O that starts exactly where one of the device's last 8 I/Os ended
  (same volume) is sequential: it needs no positioning, so only the
  bandwidth limits it, `occ = b / bandwidth`. (Without this a disk would be
  charged a seek for each of the thousands of 512-byte writes of a log
  stream; 8 streams, because interleaved streams are the rule in a trace.)
- It starts when it arrives or when the server frees, whichever is later
  (Lindley's recursion, FIFO, over the trace's own arrival times: a
  trace-driven G/G/1 queue on the occupancy):
  `start_k = max(arrival_k, start_{k-1} + occ_{k-1})`.
- It completes `delay = latency + max(0, b - 4096) / bandwidth` after it
  starts: the figure's QD1 latency is that of a 4 KiB I/O; larger ones add
  their transfer time.

So an idle device answers a 4 KiB read in its QD1 latency, a saturated one
delivers its IOPS (or its bandwidth for large I/Os), and requests that
overlap queue behind each other. A request served by several devices (a
write to both mirror sides, a read partly from cache and partly from the
backing device) completes when its last part does. Background I/O (cache
fills, write-back destaging) occupies the device but no request waits on it
directly. Utilisation is the occupied time over the span of the replay.

Untimed traces (no timestamps) are replayed closed-loop at queue depth 1:
each request arrives when the previous one completes.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numba
import numpy as np

from dbtier.core.errors import DbtierError

SMALL_IO = 4096
STREAMS = 8                  # sequential streams remembered per device
PERCENTILES = (("p50", 50.0), ("p95", 95.0), ("p99", 99.0), ("p999", 99.9))


@dataclass(frozen=True)
class DeviceModel:
    id: str
    source: str                  # where the figures come from ("catalog: ..." or "probe run ...")
    read_iops: float
    write_iops: float
    read_mbps: float
    write_mbps: float
    read_latency_us: float
    write_latency_us: float

    def __post_init__(self) -> None:
        for k in ("read_iops", "write_iops", "read_mbps", "write_mbps", "read_latency_us", "write_latency_us"):
            v = getattr(self, k)
            if v is None or not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise DbtierError(f"device {self.id}: {k} must be a positive number, got {v!r}",
                                  "give the device all six figures (IOPS, MB/s, latency for read and write)")

    def occupancy_s(self, op: np.ndarray | int, nbytes: np.ndarray | float) -> np.ndarray:
        """Seconds the device's rate server is busy with each I/O."""
        iops = np.where(np.asarray(op) == 0, self.read_iops, self.write_iops)
        bw = np.where(np.asarray(op) == 0, self.read_mbps, self.write_mbps) * 1e6
        return np.maximum(1.0 / iops, np.asarray(nbytes, dtype=np.float64) / bw)

    def transfer_s(self, op: np.ndarray | int, nbytes: np.ndarray | float) -> np.ndarray:
        """Seconds of bandwidth each I/O needs (a sequential I/O occupies the device this long)."""
        bw = np.where(np.asarray(op) == 0, self.read_mbps, self.write_mbps) * 1e6
        return np.asarray(nbytes, dtype=np.float64) / bw

    def delay_s(self, op: np.ndarray | int, nbytes: np.ndarray | float) -> np.ndarray:
        """Seconds from start to completion of each I/O (QD1 latency plus transfer past 4 KiB)."""
        lat = np.where(np.asarray(op) == 0, self.read_latency_us, self.write_latency_us) * 1e-6
        bw = np.where(np.asarray(op) == 0, self.read_mbps, self.write_mbps) * 1e6
        return lat + np.maximum(np.asarray(nbytes, dtype=np.float64) - SMALL_IO, 0.0) / bw

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def from_catalog(device: Any) -> DeviceModel:
    return DeviceModel(device.id, f"catalog: {device.source}", device.read_iops, device.write_iops,
                       device.read_mbps, device.write_mbps, device.read_latency_us, device.write_latency_us)


_PROBE_KEYS = {"read_iops": "read_iops_4k", "write_iops": "write_iops_4k", "read_mbps": "read_mbps_seq",
               "write_mbps": "write_mbps_seq", "read_latency_us": "read_lat_us_qd1_p50",
               "write_latency_us": "write_lat_us_qd1_p50"}


def from_probe(doc: dict[str, Any], where: str, target: int | None = None) -> DeviceModel:
    """A measured device from a probe result document (`where` names it in messages)."""
    if doc.get("command") != "probe":
        raise DbtierError(f"{where}: a '{doc.get('command')}' run, not a probe run",
                          "pass a run directory written by `dbtier probe`")
    targets = doc.get("targets") or []
    if not targets:
        raise DbtierError(f"{where}: the probe run has no targets", "run `dbtier probe PATH` to completion first")
    if target is None:
        if len(targets) > 1:
            paths = ", ".join(f"#{i} {t.get('path')}" for i, t in enumerate(targets, 1))
            raise DbtierError(f"{where}: the probe run measured {len(targets)} targets ({paths})",
                              f"name one as {where}#N")
        target = 1
    if not 1 <= target <= len(targets):
        raise DbtierError(f"{where}: no target #{target} (the run has {len(targets)})", f"use {where}#1")
    t = targets[target - 1]
    s = t.get("summary") or {}
    missing = [v for v in _PROBE_KEYS.values() if s.get(v) is None]
    if missing:
        raise DbtierError(f"{where}: the probe summary of {t.get('path')} lacks {', '.join(missing)}",
                          "run a probe with the random and sequential tests (the quick profile has them)")
    return DeviceModel(f"probe:{t.get('path')}", f"probe run {where}, target {t.get('path')}",
                       **{k: float(s[v]) for k, v in _PROBE_KEYS.items()})


@numba.njit(nogil=True, cache=True)
def _serve(req, dev, fg, occ, occ_seq, delay, offset, io_end, volume, time_s, timed, ndev, nreq):
    """Replay sub-I/Os (sorted by request) through one rate server per device.

    Returns (completion time per request, busy seconds per device, last completion).
    """
    done = np.zeros(nreq, dtype=np.float64)
    arrival = np.zeros(nreq, dtype=np.float64)
    free_at = np.full(ndev, -1e300, dtype=np.float64)
    busy = np.zeros(ndev, dtype=np.float64)
    last_end = np.full((ndev, STREAMS), -1, dtype=np.int64)
    last_vol = np.full((ndev, STREAMS), -1, dtype=np.int64)
    ring = np.zeros(ndev, dtype=np.int64)
    clock = 0.0               # untimed: when the previous request completed
    cur = -1
    last = 0.0
    for k in range(req.shape[0]):
        r = req[k]
        if r != cur:
            if not timed and cur >= 0:
                clock = max(clock, done[cur])
            cur = r
            arrival[r] = time_s[r] if timed else clock
            done[r] = arrival[r]
        a = arrival[r]
        d = dev[k]
        o = occ[k]
        slot = -1
        for s in range(STREAMS):
            if offset[k] == last_end[d, s] and volume[k] == last_vol[d, s]:
                o = occ_seq[k]
                slot = s
                break
        if slot < 0:
            slot = ring[d]
            ring[d] = (slot + 1) % STREAMS
        last_end[d, slot] = io_end[k]
        last_vol[d, slot] = volume[k]
        start = max(a, free_at[d])
        free_at[d] = start + o
        busy[d] += o
        end = start + delay[k]
        if fg[k] and end > done[r]:
            done[r] = end
        if end > last:
            last = end
    return done - arrival, busy, last


@dataclass
class SubIOs:
    """Device I/Os derived from the requests by a design, before sorting."""
    req: list[np.ndarray]
    dev: list[np.ndarray]
    fg: list[np.ndarray]
    op: list[np.ndarray]
    nbytes: list[np.ndarray]
    offset: list[np.ndarray]
    volume: list[np.ndarray]

    @classmethod
    def empty(cls) -> "SubIOs":
        return cls([], [], [], [], [], [], [])

    def add(self, req: np.ndarray, dev: int, op: np.ndarray | int, nbytes: np.ndarray, fg: bool = True,
            offset: np.ndarray | None = None, volume: np.ndarray | None = None) -> None:
        """I/Os of `nbytes` on device `dev` for requests `req`; `offset`/`volume` (bytes) for the sequential
        rule; without them the I/Os count as random."""
        req = np.asarray(req, dtype=np.int64)
        if req.size == 0:
            return
        self.offset.append(np.full(req.size, -2, dtype=np.int64) if offset is None
                           else np.asarray(offset, dtype=np.int64))
        self.volume.append(np.zeros(req.size, dtype=np.int64) if volume is None
                           else np.asarray(volume, dtype=np.int64))
        self.req.append(req)
        self.dev.append(np.full(req.size, dev, dtype=np.int32))
        self.fg.append(np.full(req.size, fg, dtype=np.bool_))
        self.op.append(np.broadcast_to(np.asarray(op, dtype=np.uint8), req.shape).copy())
        self.nbytes.append(np.asarray(nbytes, dtype=np.float64))


@dataclass
class Served:
    latency_s: np.ndarray        # per request
    busy_s: np.ndarray           # per device
    span_s: float                # first arrival to last completion (or the trace's duration, if longer)

    def utilisation(self) -> np.ndarray:
        return np.minimum(self.busy_s / self.span_s, 1.0) if self.span_s > 0 else np.zeros_like(self.busy_s)


def serve(subs: SubIOs, devices: Sequence[DeviceModel], time_s: np.ndarray, timed: bool) -> Served:
    """Run the queueing model over the design's device I/Os; latency per request."""
    nreq = int(time_s.shape[0])
    if not subs.req:
        return Served(np.zeros(nreq), np.zeros(len(devices)), 0.0)
    req = np.concatenate(subs.req)
    dev = np.concatenate(subs.dev)
    fg = np.concatenate(subs.fg)
    op = np.concatenate(subs.op)
    nb = np.concatenate(subs.nbytes)
    off = np.concatenate(subs.offset)
    vol = np.concatenate(subs.volume)
    order = np.argsort(req, kind="stable")
    req, dev, fg, op, nb, off, vol = (a[order] for a in (req, dev, fg, op, nb, off, vol))
    occ = np.empty(req.size)
    occ_seq = np.empty(req.size)
    delay = np.empty(req.size)
    for d, model in enumerate(devices):
        m = dev == d
        occ[m] = model.occupancy_s(op[m], nb[m])
        occ_seq[m] = model.transfer_s(op[m], nb[m])
        delay[m] = model.delay_s(op[m], nb[m])
    end = np.where(off >= 0, off + nb.astype(np.int64), -3)
    lat, busy, last = _serve(req, dev, fg, occ, occ_seq, delay, off, end, vol,
                             np.ascontiguousarray(time_s, dtype=np.float64), timed, len(devices), nreq)
    first = float(time_s[0]) if timed else 0.0
    span = max(last - first, float(time_s[-1] - time_s[0]) if timed else 0.0)
    return Served(lat, busy, span)


def spread_ties(time_s: np.ndarray, min_resolution_s: float = 1e-3) -> tuple[np.ndarray, float | None]:
    """Spread requests that share a coarse timestamp evenly across its tick.

    A trace stamped to the second (CloudPhysics, Tencent) shows a second's
    requests as one burst; replayed as such they would queue behind each
    other. When the clock's resolution (the smallest step between distinct
    times) is `min_resolution_s` or coarser, the k requests of a tick t get
    t + j/k of the tick, j = 0..k-1. Returns (times, resolution or None when
    nothing was spread).
    """
    if time_s.size < 2:
        return time_s, None
    steps = np.diff(time_s)
    pos = steps[steps > 0]
    if pos.size == 0 or not (steps == 0).any():
        return time_s, None
    res = float(pos.min())
    if res < min_resolution_s:
        return time_s, None
    new_tick = np.concatenate(([True], steps > 0))
    tick_id = np.cumsum(new_tick) - 1
    starts = np.flatnonzero(new_tick)
    counts = np.diff(np.append(starts, time_s.size))
    j = np.arange(time_s.size) - starts[tick_id]
    return time_s + res * j / counts[tick_id], res


def percentiles_us(lat_s: np.ndarray) -> dict[str, float | None]:
    if lat_s.size == 0:
        return {k: None for k, _ in PERCENTILES}
    vals = np.percentile(lat_s * 1e6, [p for _, p in PERCENTILES])
    return {k: float(v) for (k, _), v in zip(PERCENTILES, vals)}


_CDF_P = np.unique(np.concatenate([np.linspace(0.0, 0.99, 100), [0.995, 0.999, 0.9995, 0.9999, 1.0]]))


def cdf_points(lat_s: np.ndarray) -> list[list[float]]:
    """[[latency_us, fraction ≤], ...] at ~105 fractions (denser in the tail), for charts."""
    if lat_s.size == 0:
        return []
    vals = np.quantile(lat_s * 1e6, _CDF_P)
    return [[float(v), float(p)] for v, p in zip(vals, _CDF_P)]
