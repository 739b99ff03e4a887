"""Service times from device figures, and the queueing model.

A device is described by six figures, from the catalog or from a probe run:
random read/write IOPS (small blocks, high queue depth), sequential read/write
MB/s (10^6 bytes/s), and read/write latency at queue depth 1 in µs; and by
whether it has a single actuator (a hard disk: catalog kind `hdd`, or a probe
of a non-virtual rotational device) or internal parallelism (flash, cloud
volumes, arrays).

The model: each device is a FIFO queue in front of `units` servers, with a
rate gate.

- Units. A flash device answers one 4 KiB I/O in its QD1 latency S1 and
  reaches its IOPS only with many I/Os in flight: by Little's law it works on
  N = IOPS x S1 of them at once. It has `units = ceil(N)` servers (the larger
  of the read and write figure), each busy S1 per 4 KiB I/O: at low load an
  I/O takes S1, at depth the device delivers its IOPS. A hard disk has one
  actuator: `units = 1`, and it never overlaps two random I/Os.
- Command queueing on a disk. The disk picks, among the n I/Os it holds
  (the one starting and those queued behind it, counted when it starts), the
  one it can reach first. Of the QD1 service time S1, the part above the
  at-depth time per I/O, S1 - 1/IOPS, is positioning that reordering can
  save; if each queued I/O's saveable time is uniform on [0, 2(S1 - 1/IOPS)],
  the shortest of n has mean 2(S1 - 1/IOPS)/(n + 1), so a random I/O started
  with n outstanding takes `s(n) = 1/IOPS + (S1 - 1/IOPS) x 2/(n + 1)`:
  S1 at depth 1, tending to 1/IOPS (the catalog's at-depth IOPS) as the
  queue grows. The rate mu(n) = 1/s(n) is the load-dependent server's.
  When S1 <= 1/IOPS there is nothing to reorder: s(n) = S1.
- The gate: two I/Os start at least `occ = max(1/IOPS, b / bandwidth)` apart
  (b bytes): the device accepts at most IOPS small I/Os a second and at most
  its bandwidth in bytes. (It binds where units do not: a device whose QD1
  latency is below 1/IOPS, e.g. a SATA SSD's cached writes over its
  steady-state write IOPS.)
- An I/O that starts exactly where one of the device's last 8 I/Os ended
  (same volume) is sequential: it needs no positioning, so only the
  bandwidth limits it, gate `occ = b / bandwidth`, and on a disk it is
  served in b / bandwidth (the track buffer and write cache absorb the
  rotation). (Without this a disk would be charged a seek for each of the
  thousands of 512-byte writes of a log stream; 8 streams, because
  interleaved streams are the rule in a trace.) On flash it still holds a
  unit for its latency.
- It starts when it arrives, when the gate opens and when a unit frees,
  whichever is latest (FIFO, over the trace's own arrival times: Lindley's
  recursion for one unit, a trace-driven G/G/c queue otherwise), and
  completes its service time after it starts: S1 (flash) or s(n) (disk),
  plus `max(0, b - 4096) / bandwidth` (the figures are for 4 KiB I/Os).

With one unit and s(n) constant (S1 = 1/IOPS) this is M/D/1 under Poisson
arrivals, and the tests check it against the closed forms (M/D/1, M/M/1,
M/M/c with explicit service times, and the disk against its embedded Markov
chain). Limits: service is FIFO (a disk's reordering changes the service
time, not the order, so the mean is right and the tail is short of a real
shortest-access-first disk's); the uniform saveable time is an assumption,
not a measured curve; a flash unit is busy for the whole latency (no
pipelining inside a unit); there is no write-cache model beyond the figures.

A request served by several devices (a write to both mirror sides, a read
partly from cache and partly from the backing device) completes when its last
part does. Background I/O (cache fills, write-back destaging) occupies the
device but no request waits on it directly. Busy time: a disk's actuator
time; a parallel device's share of its capacity, max(occ, service / units).
Utilisation is busy time over the span of the replay.

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
MAX_UNITS = 4096             # parallel servers per device, at most (a probe with absurd figures stays bounded)
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
    single_actuator: bool = False    # a hard disk: one I/O at a time, command queueing shortens positioning

    def __post_init__(self) -> None:
        for k in ("read_iops", "write_iops", "read_mbps", "write_mbps", "read_latency_us", "write_latency_us"):
            v = getattr(self, k)
            if v is None or not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise DbtierError(f"device {self.id}: {k} must be a positive number, got {v!r}",
                                  "give the device all six figures (IOPS, MB/s, latency for read and write)")

    @property
    def units(self) -> int:
        """Servers working at once: 1 for a disk; for flash ceil(IOPS x QD1 latency) (Little's law), the larger
        of read and write, at most MAX_UNITS."""
        if self.single_actuator:
            return 1
        n = max(self.read_iops * self.read_latency_us, self.write_iops * self.write_latency_us) * 1e-6
        return int(min(max(1, math.ceil(n - 1e-9)), MAX_UNITS))

    def service_s(self, op: np.ndarray | int, nbytes: np.ndarray | float,
                  outstanding: np.ndarray | int = 1) -> np.ndarray:
        """Seconds a unit serves a random I/O started with `outstanding` I/Os at the device (itself included):
        flash, its QD1 latency; a disk, s(n) = 1/IOPS + (QD1 - 1/IOPS) x 2/(n+1); both plus transfer past 4 KiB."""
        op_a, nb = np.broadcast_arrays(np.asarray(op), np.asarray(nbytes, dtype=np.float64))
        _, _, base, save = self.kernel_inputs(op_a, nb)
        return base + save * 2.0 / (np.asarray(outstanding, dtype=np.float64) + 1.0)

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
        """Seconds from start to completion of a random I/O started alone (QD1 latency plus transfer past 4 KiB)."""
        lat = np.where(np.asarray(op) == 0, self.read_latency_us, self.write_latency_us) * 1e-6
        bw = np.where(np.asarray(op) == 0, self.read_mbps, self.write_mbps) * 1e6
        return lat + np.maximum(np.asarray(nbytes, dtype=np.float64) - SMALL_IO, 0.0) / bw

    def kernel_inputs(self, op: np.ndarray, nbytes: np.ndarray) -> tuple[np.ndarray, ...]:
        """(gate, sequential gate, base, saveable) seconds per I/O, by table look-up on the op: the gate as
        occupancy_s and transfer_s give it; a random I/O started with n outstanding is served in base + saveable
        x 2/(n+1). Flash: (QD1 latency + transfer past 4 KiB, 0). Disk: (min(QD1, 1/IOPS) + transfer past 4 KiB,
        max(QD1 - 1/IOPS, 0))."""
        op = np.asarray(op, dtype=np.intp)
        nb = np.asarray(nbytes, dtype=np.float64)
        bw = np.array([self.read_mbps, self.write_mbps]) * 1e6
        inv_iops = 1.0 / np.array([self.read_iops, self.write_iops])
        lat = np.array([self.read_latency_us, self.write_latency_us]) * 1e-6
        per_byte = (1.0 / bw)[op]
        seq = nb * per_byte
        occ = np.maximum(inv_iops[op], seq)
        extra = np.maximum(nb - SMALL_IO, 0.0) * per_byte
        if self.single_actuator:
            base = np.minimum(lat, inv_iops)[op] + extra
            save = np.maximum(lat - inv_iops, 0.0)[op]
        else:
            base = lat[op] + extra
            save = np.zeros(op.shape)
        return occ, seq, base, save

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "units": self.units}


def from_catalog(device: Any) -> DeviceModel:
    return DeviceModel(device.id, f"catalog: {device.source}", device.read_iops, device.write_iops,
                       device.read_mbps, device.write_mbps, device.read_latency_us, device.write_latency_us,
                       single_actuator=getattr(device, "kind", None) == "hdd")


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
    # A rotating disk has one actuator; a virtual disk's rotational flag is the driver's default (says nothing).
    info = next((m for m in (doc.get("machine") or {}).get("targets") or [] if m.get("path") == t.get("path")), {})
    bd = info.get("block_device") or {}
    single = bd.get("rotational") is True and not bd.get("virtual")
    return DeviceModel(f"probe:{t.get('path')}", f"probe run {where}, target {t.get('path')}",
                       **{k: float(s[v]) for k, v in _PROBE_KEYS.items()}, single_actuator=single)


@numba.njit(nogil=True, cache=True)
def _take_unit(free, head, units, value):
    """Units' free times, kept sorted in the ring free[:units] from `head`: the earliest (the unit an I/O takes)
    is free[head]; replace it by `value` (when that unit frees again) and return the new head. Completions
    mostly come in order, so the insertion from the back rarely moves anything (a heap would sift every time)."""
    tail = head
    head = head + 1 if head + 1 < units else 0
    i = tail
    while i != head:
        j = i - 1 if i > 0 else units - 1
        if free[j] <= value:
            break
        free[i] = free[j]
        i = j
    free[i] = value
    return head


@numba.njit(nogil=True, cache=True)
def _serve(req, dev, fg, occ, occ_seq, base, save, offset, io_end, volume, time_s, timed, units, single,
           ndev, nreq, t0, bucket_s, nbuckets):
    """Replay sub-I/Os (sorted by request) through each device's gate and units (see the module docstring).

    Returns (latency per request, busy seconds per device, last completion, busy seconds per device and bucket
    of start time).
    """
    n_io = req.shape[0]
    done = np.zeros(nreq, dtype=np.float64)
    arrival = np.zeros(nreq, dtype=np.float64)
    gate_free = np.full(ndev, -1e300, dtype=np.float64)
    unit_free = np.full((ndev, units.max()), -1e300, dtype=np.float64)   # sorted rings of free times
    unit_head = np.zeros(ndev, dtype=np.int64)
    busy = np.zeros(ndev, dtype=np.float64)
    busy_b = np.zeros((ndev, nbuckets), dtype=np.float64)
    last_end = np.full((ndev, STREAMS), -1, dtype=np.int64)
    last_vol = np.full((ndev, STREAMS), -1, dtype=np.int64)
    ring = np.zeros(ndev, dtype=np.int64)
    seen = np.zeros(ndev, dtype=np.int64)      # disk: its I/Os arrived by the latest start (scan pointer below)
    scan = np.zeros(ndev, dtype=np.int64)
    started = np.zeros(ndev, dtype=np.int64)   # I/Os started so far, per device
    clock = 0.0               # untimed: when the previous request completed
    cur = -1
    last = 0.0
    for k in range(n_io):
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
        seq = False
        slot = -1
        for s in range(STREAMS):
            if offset[k] == last_end[d, s] and volume[k] == last_vol[d, s]:
                o = occ_seq[k]
                seq = True
                slot = s
                break
        if slot < 0:
            slot = ring[d]
            ring[d] = (slot + 1) % STREAMS
        last_end[d, slot] = io_end[k]
        last_vol[d, slot] = volume[k]
        start = max(a, gate_free[d], unit_free[d, unit_head[d]])
        if seq:
            svc = occ_seq[k] if single[d] else base[k]
        else:
            svc = base[k]
            if save[k] > 0.0:
                # outstanding at start: this I/O and the device's I/Os arrived behind it (FIFO, one unit: those
                # ahead have completed). Starts only grow on one unit, so the scan pointer only moves forward.
                if timed:
                    p = scan[d]
                    while p < n_io and time_s[req[p]] <= start:
                        if dev[p] == d:
                            seen[d] += 1
                        p += 1
                    scan[d] = p
                    n = max(seen[d] - started[d], 1)
                else:       # closed loop: only this request's other I/Os can be queued behind it
                    n = 1
                    j = k + 1
                    while j < n_io and req[j] == r:
                        if dev[j] == d:
                            n += 1
                        j += 1
                svc += save[k] * 2.0 / (n + 1.0)
        end = start + svc
        unit_head[d] = _take_unit(unit_free[d], unit_head[d], units[d], end)
        gate_free[d] = start + o
        started[d] += 1
        b = max(o, svc / units[d])
        busy[d] += b
        bi = int((start - t0) / bucket_s) if bucket_s > 0.0 else 0
        busy_b[d, min(max(bi, 0), nbuckets - 1)] += b
        if fg[k] and end > done[r]:
            done[r] = end
        if end > last:
            last = end
    return done - arrival, busy, last, busy_b


def fifo_units(arrival_s: np.ndarray, service_s: np.ndarray, units: int = 1,
               gate_s: np.ndarray | None = None) -> np.ndarray:
    """Response times of jobs through `units` FIFO servers with explicit service times (and an optional gate):
    the queue core of `serve`, for checks against queueing closed forms."""
    arrival_s = np.ascontiguousarray(arrival_s, dtype=np.float64)
    n = arrival_s.size
    service_s = np.ascontiguousarray(service_s, dtype=np.float64)
    gate = np.zeros(n) if gate_s is None else np.ascontiguousarray(gate_s, dtype=np.float64)
    lat, _, _, _ = _serve(np.arange(n, dtype=np.int64), np.zeros(n, dtype=np.int32), np.ones(n, dtype=np.bool_),
                          gate, gate, service_s, np.zeros(n), np.full(n, -2, dtype=np.int64),
                          np.full(n, -3, dtype=np.int64), np.zeros(n, dtype=np.int64), arrival_s, True,
                          np.array([units], dtype=np.int64), np.zeros(1, dtype=np.bool_), 1, n, 0.0, 0.0, 1)
    return lat


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
    busy_by_bucket_s: np.ndarray | None = None   # per device and bucket of `bucket_s` from the first arrival
    bucket_s: float | None = None

    def utilisation(self) -> np.ndarray:
        return np.minimum(self.busy_s / self.span_s, 1.0) if self.span_s > 0 else np.zeros_like(self.busy_s)


def serve(subs: SubIOs, devices: Sequence[DeviceModel], time_s: np.ndarray, timed: bool,
          bucket_s: float | None = None, consume: bool = False) -> Served:
    """Run the queueing model over the design's device I/Os; latency per request (and, given `bucket_s` on a
    timed trace, each device's busy time per bucket of start time). `consume`: empty `subs`
    once its pieces are joined (the caller has no further use for them; the memory goes back before the model runs)."""
    nreq = int(time_s.shape[0])
    use_buckets = bool(timed and bucket_s and bucket_s > 0 and nreq)
    # buckets tile [first, last arrival]; I/Os starting later (a backlog) count in the last one
    nb = int(max(1, math.ceil((float(time_s[-1]) - float(time_s[0])) / bucket_s - 1e-9))) if use_buckets else 1
    if not subs.req:
        return Served(np.zeros(nreq), np.zeros(len(devices)), 0.0, np.zeros((len(devices), nb)),
                      bucket_s if use_buckets else None)
    req = np.concatenate(subs.req)
    dev = np.concatenate(subs.dev)
    fg = np.concatenate(subs.fg)
    op = np.concatenate(subs.op)
    nb_ = np.concatenate(subs.nbytes)
    off = np.concatenate(subs.offset)
    vol = np.concatenate(subs.volume).astype(np.int32)      # fewer than 2^16 volumes (the readers' cap)
    if consume:     # the pieces are copied into one array each: give them back before the model runs
        for parts in (subs.req, subs.dev, subs.fg, subs.op, subs.nbytes, subs.offset, subs.volume):
            parts.clear()
    if req.size > 1 and not (req[1:] >= req[:-1]).all():
        order = np.argsort(req, kind="stable")
        req, dev, fg, op, nb_, off, vol = (a[order] for a in (req, dev, fg, op, nb_, off, vol))
    if len(devices) == 1:
        occ, occ_seq, base, save = devices[0].kernel_inputs(op, nb_)
    else:
        occ, occ_seq, base, save = (np.empty(req.size) for _ in range(4))
        for d, model in enumerate(devices):
            m = dev == d
            occ[m], occ_seq[m], base[m], save[m] = model.kernel_inputs(op[m], nb_[m])
    end = np.where(off >= 0, off + nb_.astype(np.int64), -3)
    del op, nb_                 # what the model needs of them is in occ, occ_seq, base, save and end now
    units = np.array([m.units for m in devices], dtype=np.int64)
    single = np.array([m.single_actuator for m in devices], dtype=np.bool_)
    first = float(time_s[0]) if timed else 0.0
    lat, busy, last, busy_b = _serve(req, dev, fg, occ, occ_seq, base, save, off, end, vol,
                                     np.ascontiguousarray(time_s, dtype=np.float64), timed, units, single,
                                     len(devices), nreq, first, float(bucket_s) if use_buckets else 0.0, nb)
    span = max(last - first, float(time_s[-1] - time_s[0]) if timed else 0.0)
    return Served(lat, busy, span, busy_b, bucket_s if use_buckets else None)


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


# -- latency histograms: percentiles of several replays together ----------------------------------------------
# Percentiles do not add up (the p99 of two volumes is not the mean of their p99s), counts per bin do: each
# replay keeps its latencies as counts in the same log-spaced bins, the counts are summed, and the merged
# percentiles are read from the sum. 200 bins a decade from 0.01 µs to 10^9 µs (1,000 s): a bin is 1.16% wide,
# and a percentile read at the bin's geometric middle is within 0.58% of the exact one.
HIST_BINS_PER_DECADE = 200
HIST_LO_US, HIST_DECADES = 1e-2, 11
HIST_EDGES_US = HIST_LO_US * 10.0 ** (np.arange(HIST_DECADES * HIST_BINS_PER_DECADE + 1) / HIST_BINS_PER_DECADE)
HIST_RULE = (f"latency percentiles of several replays from their merged histograms ({HIST_BINS_PER_DECADE} "
             "log-spaced bins a decade; each percentile within 0.6% of the exact one), not averaged percentiles")


def histogram_us(lat_s: np.ndarray) -> np.ndarray:
    """Counts of latencies per bin of HIST_EDGES_US (int64; under the first edge counted in the first bin,
    over the last in the last: a replay's every request is counted)."""
    us = np.clip(np.asarray(lat_s, dtype=np.float64) * 1e6, HIST_EDGES_US[0], HIST_EDGES_US[-1])
    i = np.searchsorted(HIST_EDGES_US, us, side="right") - 1
    return np.bincount(np.clip(i, 0, HIST_EDGES_US.size - 2), minlength=HIST_EDGES_US.size - 1).astype(np.int64)


def percentiles_from_histogram_us(counts: np.ndarray) -> dict[str, float | None]:
    """PERCENTILES of merged histogram counts: the geometric middle of the bin holding each rank."""
    n = int(counts.sum())
    if n == 0:
        return {k: None for k, _ in PERCENTILES}
    cum = np.cumsum(counts)
    mids = np.sqrt(HIST_EDGES_US[:-1] * HIST_EDGES_US[1:])
    out = {}
    for k, q in PERCENTILES:
        rank = max(1, math.ceil(q / 100.0 * n))          # the rank-th smallest latency, 1-based
        out[k] = float(mids[int(np.searchsorted(cum, rank, side="left"))])
    return out
