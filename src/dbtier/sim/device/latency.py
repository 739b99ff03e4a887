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
  queue grows. The rate mu(n) = 1/s(n) is the load-dependent server's. n counts at most 32 I/Os
  (DISK_QUEUE): a disk holds that many commands (SATA NCQ's depth, the usual SCSI default); more wait in the
  host's queue, where the disk cannot reorder them.
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

A rate-limited device (a cloud volume, `io_size_bytes` set; built in cloudvolume.py) is a fluid
limiter in front of a fixed latency: reads and writes share its one IOPS and one bandwidth limit, an
I/O of b bytes counts as max(1, ceil(b / io_size_bytes)) I/Os (the provider's I/O size accounting), its
gate is max(counted / IOPS, b / bandwidth) whether sequential or not (merging of adjacent small I/Os is
not modelled: conservative), and it completes its QD1 latency after it starts, whatever its size (the
transfer is in the gate). Its units (one spare above IOPS x latency) never bind before the gate does.

A request served by several devices (a write to both mirror sides, a read
partly from cache and partly from the backing device) completes when its last
part does. Background I/O (cache fills, write-back destaging) occupies the
device but no request waits on it directly. Busy time: a disk's actuator
time; a parallel device's share of its capacity, max(occ, service / units).
Utilisation is busy time over the span of the replay; per second of start time (Server.busiest) it shows
the busiest second, which a low average can hide.

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
from dbtier.sim.device import quantiles

SMALL_IO = 4096
STREAMS = 8                  # sequential streams remembered per device
MAX_UNITS = 4096             # parallel servers per device, at most (a probe with absurd figures stays bounded)
DISK_QUEUE = 32              # commands a disk holds and reorders (SATA NCQ's 32, the usual SCSI default)
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
    io_size_bytes: float | None = None  # a rate-limited device's I/O size accounting (see the module docstring)
    limits: Any = None               # a rate-limited device's limits and which binds (cloudvolume.CloudLimits)

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
        spare = 1 if self.io_size_bytes else 0      # a limiter: rounding must never let the units bind first
        return int(min(max(1, math.ceil(n - 1e-9)) + spare, MAX_UNITS))

    def counted(self, nbytes: np.ndarray | float) -> np.ndarray:
        """I/Os each request counts as against the IOPS limit: 1, or ceil(b / io_size_bytes) on a rate-limited
        device."""
        nb = np.asarray(nbytes, dtype=np.float64)
        if not self.io_size_bytes:
            return np.ones_like(nb)
        return np.maximum(1.0, np.ceil(nb / self.io_size_bytes))

    def service_s(self, op: np.ndarray | int, nbytes: np.ndarray | float,
                  outstanding: np.ndarray | int = 1) -> np.ndarray:
        """Seconds a unit serves a random I/O started with `outstanding` I/Os at the device (itself included):
        flash, its QD1 latency; a disk, s(n) = 1/IOPS + (QD1 - 1/IOPS) x 2/(n+1); both plus transfer past 4 KiB."""
        op_a, nb = np.broadcast_arrays(np.asarray(op, dtype=np.intp), np.asarray(nbytes, dtype=np.float64))
        tab = np.array(self.table())[op_a]          # the kernel's own inputs (_inputs), per I/O
        base = tab[..., 2] + np.where(tab[..., 4] > 0, 0.0, np.maximum(nb - SMALL_IO, 0.0) * tab[..., 1])
        return base + tab[..., 3] * 2.0 / (np.asarray(outstanding, dtype=np.float64) + 1.0)

    def occupancy_s(self, op: np.ndarray | int, nbytes: np.ndarray | float) -> np.ndarray:
        """Seconds the device's rate server is busy with each I/O."""
        iops = np.where(np.asarray(op) == 0, self.read_iops, self.write_iops)
        bw = np.where(np.asarray(op) == 0, self.read_mbps, self.write_mbps) * 1e6
        return np.maximum(self.counted(nbytes) / iops, np.asarray(nbytes, dtype=np.float64) / bw)

    def transfer_s(self, op: np.ndarray | int, nbytes: np.ndarray | float) -> np.ndarray:
        """Seconds of bandwidth each I/O needs (a sequential I/O occupies the device this long)."""
        bw = np.where(np.asarray(op) == 0, self.read_mbps, self.write_mbps) * 1e6
        return np.asarray(nbytes, dtype=np.float64) / bw

    def delay_s(self, op: np.ndarray | int, nbytes: np.ndarray | float) -> np.ndarray:
        """Seconds from start to completion of a random I/O started alone (QD1 latency plus transfer past 4 KiB)."""
        lat = np.where(np.asarray(op) == 0, self.read_latency_us, self.write_latency_us) * 1e-6
        bw = np.where(np.asarray(op) == 0, self.read_mbps, self.write_mbps) * 1e6
        if self.io_size_bytes:          # a limiter: the transfer is in its gate
            return lat + np.zeros_like(np.asarray(nbytes, dtype=np.float64))
        return lat + np.maximum(np.asarray(nbytes, dtype=np.float64) - SMALL_IO, 0.0) / bw

    def table(self) -> list[list[float]]:
        """Per op (read, write): [1/IOPS, seconds per byte, base, saveable, accounting bytes], what the queueing
        kernel takes: the gate is max(1/IOPS, b x seconds per byte) (sequential: the transfer alone); a random
        I/O started with n outstanding is served in base + transfer past 4 KiB + saveable x 2/(n+1) (base: the
        QD1 latency, on a disk at most 1/IOPS; saveable: a disk's QD1 latency past 1/IOPS, else 0). Accounting
        bytes > 0 (a rate-limited device): the gate is max(counted / IOPS, b x seconds per byte) for every I/O
        and the service the base alone."""
        bw = np.array([self.read_mbps, self.write_mbps]) * 1e6
        inv_iops = 1.0 / np.array([self.read_iops, self.write_iops])
        lat = np.array([self.read_latency_us, self.write_latency_us]) * 1e-6
        base = np.minimum(lat, inv_iops) if self.single_actuator else lat
        save = np.maximum(lat - inv_iops, 0.0) if self.single_actuator else np.zeros(2)
        acct = float(self.io_size_bytes or 0.0)
        return [[float(inv_iops[o]), float((1.0 / bw)[o]), float(base[o]), float(save[o]), acct] for o in (0, 1)]

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if not self.io_size_bytes:          # the figures of a device that is not a limiter, as before
            d.pop("io_size_bytes")
            d.pop("limits")
        return {**d, "units": self.units}


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
    info: dict[str, Any] = next((m for m in (doc.get("machine") or {}).get("targets") or []
                                 if m.get("path") == t.get("path")), {})
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
def _inputs(dev, op, nbytes, offset, table, occ, occ_seq, base, save, end):
    """Each I/O's gate, sequential gate, base and saveable seconds (DeviceModel.table) in one pass over I/Os
    on several devices (table: DeviceModel.table() per
    device), and where each ends (-3: no offset, never continued)."""
    for k in range(dev.shape[0]):
        row = table[dev[k], op[k]]
        nb = nbytes[k]
        seq = nb * row[1]
        if row[4] > 0.0:        # a rate-limited device: each I/O counts its accounting units, sequential or not
            occ[k] = max(max(1.0, math.ceil(nb / row[4])) * row[0], seq)
            occ_seq[k] = occ[k]
            base[k] = row[2]
        else:
            occ_seq[k] = seq
            occ[k] = max(row[0], seq)
            base[k] = row[2] + max(nb - SMALL_IO, 0.0) * row[1]
        save[k] = row[3]
        end[k] = offset[k] + np.int64(nb) if offset[k] >= 0 else -3


@numba.njit(nogil=True, cache=True)
def _serve(req, dev, fg, occ, occ_seq, base, save, offset, io_end, volume, time_s, arrival, done, n_avail, final,
           timed, units, single, t0, bucket_s, nbuckets, gate_free, unit_free, unit_head, busy, busy_b, last_end,
           last_vol, ring, seen, scan, started, scal, cur_a):
    """Replay sub-I/Os 0 .. n_avail-1 (sorted by request; `req` indexes the per-request arrays time_s, arrival,
    done) through each device's gate and units (see the module docstring), carrying every device's state in
    the arrays passed (so a trace can be fed in pieces: `Server`).

    Returns the index of the first I/O not replayed: n_avail, unless (not `final`) a disk's count of queued
    I/Os needs arrivals past n_avail -- that I/O and the rest wait for the next call, so any cutting gives the
    answers of one call over the whole trace.
    """
    clock = scal[0]           # untimed: when the previous request completed
    last = scal[1]
    cur = cur_a[0]
    k = 0
    while k < n_avail:
        r = req[k]
        if r != cur:
            if not timed and cur >= 0:
                clock = max(clock, done[cur])
            cur = r
            arrival[r] = time_s[r] if timed else clock
            done[r] = arrival[r]
        a = arrival[r]
        d = dev[k]
        seq = False
        slot = -1
        for s in range(STREAMS):
            if offset[k] == last_end[d, s] and volume[k] == last_vol[d, s]:
                seq = True
                slot = s
                break
        start = max(a, gate_free[d], unit_free[d, unit_head[d]])
        o = occ_seq[k] if seq else occ[k]
        if seq:
            svc = occ_seq[k] if single[d] else base[k]
        else:
            svc = base[k]
            if save[k] > 0.0:
                # outstanding at start: this I/O and the device's I/Os arrived behind it (FIFO, one unit: those
                # ahead have completed), at most DISK_QUEUE. Starts only grow on one unit, so the scan pointer
                # only moves forward; it stops once the disk's queue is full.
                if timed:
                    p = scan[d]
                    while p < n_avail and seen[d] - started[d] < DISK_QUEUE and time_s[req[p]] <= start:
                        if dev[p] == d:
                            seen[d] += 1
                        p += 1
                    scan[d] = p
                    if p == n_avail and not final and seen[d] - started[d] < DISK_QUEUE:
                        break               # the count needs I/Os not given yet
                    n = min(max(seen[d] - started[d], 1), DISK_QUEUE)
                else:       # closed loop: only this request's other I/Os can be queued behind it
                    n = 1
                    j = k + 1
                    while j < n_avail and req[j] == r:
                        if dev[j] == d:
                            n += 1
                        j += 1
                    n = min(n, DISK_QUEUE)
                svc += save[k] * 2.0 / (n + 1.0)
        if slot < 0:
            slot = ring[d]
            ring[d] = (slot + 1) % STREAMS
        last_end[d, slot] = io_end[k]
        last_vol[d, slot] = volume[k]
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
        k += 1
    # The I/Os replayed arrived before any still to start: every later scan would count them, so count them
    # now and the caller can drop them.
    for d in range(gate_free.shape[0]):
        p = scan[d]
        while p < k:
            if dev[p] == d:
                seen[d] += 1
            p += 1
        scan[d] = p
    if k == n_avail and cur >= 0:       # the last request is complete: the next call starts a new one
        if not timed:
            clock = max(clock, done[cur])
        cur = -1
    scal[0] = clock
    scal[1] = last
    cur_a[0] = cur
    return k


class Server:
    """The queueing model over `devices`, fed the device I/Os of consecutive requests, whole or piece by
    piece (each device's gate, units, streams and queue carry over), with the same latencies either way.

        srv = Server(devices, timed=True)
        for first, subs, time_s in pieces:           # requests first .. first+len(time_s)-1, in order
            done = srv.feed(subs, first, time_s)     # latency_s of the requests completed so far (in order)
        done = srv.feed(SubIOs.empty(), n, np.zeros(0), final=True)

    `feed` returns a dict: `first` (the first completed request), `latency_s`, and the slices of the
    per-request arrays passed as `extra`. Requests whose I/Os wait on arrivals not yet fed (a disk's queue
    count looks ahead) are held, with their I/Os, until a later call: at most the arrivals within
    DISK_QUEUE I/Os of a disk."""

    def __init__(self, devices: Sequence[DeviceModel], timed: bool, t0: float = 0.0, bucket_s: float = 0.0,
                 nbuckets: int = 1, grow: bool = False):
        self.devices = list(devices)
        nd = len(self.devices)
        self.timed = bool(timed)
        self.t0, self.bucket_s, self.nbuckets = float(t0), float(bucket_s), int(nbuckets)
        # grow: the buckets follow the trace as it is fed (busiest()), doubling their width past MAX_INTERVALS
        self.grow = bool(grow and timed and bucket_s > 0)
        self.req_b = np.zeros(self.nbuckets, dtype=np.int64)       # requests arriving per bucket (grow)
        self.units = np.array([m.units for m in self.devices], dtype=np.int64)
        self.table = np.array([m.table() for m in self.devices], dtype=np.float64).reshape(nd, 2, 5)
        self.single = np.array([m.single_actuator for m in self.devices], dtype=np.bool_)
        self.gate_free = np.full(nd, -1e300)
        self.unit_free = np.full((nd, int(self.units.max())), -1e300)    # sorted rings of free times
        self.unit_head = np.zeros(nd, dtype=np.int64)
        self.busy = np.zeros(nd)
        self.busy_b = np.zeros((nd, self.nbuckets))
        self.last_end = np.full((nd, STREAMS), -1, dtype=np.int64)
        self.last_vol = np.full((nd, STREAMS), -1, dtype=np.int64)
        self.ring = np.zeros(nd, dtype=np.int64)
        self.seen = np.zeros(nd, dtype=np.int64)     # disk: its I/Os arrived by the latest start
        self.scan = np.zeros(nd, dtype=np.int64)
        self.started = np.zeros(nd, dtype=np.int64)
        self.scal = np.array([0.0, 0.0])               # closed-loop clock, last completion
        self.cur = np.array([-1], dtype=np.int64)
        self.first = 0                                 # the held window's first request
        self.io: dict[str, np.ndarray] | None = None    # held I/Os (req: whole-trace request indexes)
        self.req: dict[str, np.ndarray] = {"time_s": np.zeros(0), "arrival": np.zeros(0), "done": np.zeros(0)}
        self.fed = False

    @property
    def last_s(self) -> float:
        """The latest completion so far."""
        return float(self.scal[1]) if self.fed else 0.0

    def _ios(self, subs: SubIOs, consume: bool) -> dict[str, np.ndarray]:
        """The held I/Os, then subs's: each column written once (the held ones first, a few at most)."""
        def joined(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
            if len(parts) == 1:
                return np.asarray(parts[0], dtype=dtype)
            return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype=dtype)

        req, dev, fg = joined(subs.req, np.int64), joined(subs.dev, np.int32), joined(subs.fg, np.bool_)
        op, nb, off = joined(subs.op, np.uint8), joined(subs.nbytes, np.float64), joined(subs.offset, np.int64)
        vol = joined(subs.volume, np.int32)      # fewer than 2^16 volumes (the readers' cap)
        if consume:     # the pieces are copied into one array each: give them back before the model runs
            for parts in (subs.req, subs.dev, subs.fg, subs.op, subs.nbytes, subs.offset, subs.volume):
                parts.clear()
        if req.size > 1 and not (req[1:] >= req[:-1]).all():
            order = np.argsort(req, kind="stable")
            req, dev, fg, op, nb, off, vol = (a[order] for a in (req, dev, fg, op, nb, off, vol))
        held = self.io
        h = 0 if held is None else int(held["req"].shape[0])
        occ, occ_seq, base, save = (np.empty(h + req.size) for _ in range(4))
        end = np.empty(h + req.size, dtype=np.int64)
        _inputs(dev, op, nb, off, self.table, occ[h:], occ_seq[h:], base[h:], save[h:], end[h:])
        given = {"req": req, "dev": dev, "fg": fg, "off": off, "vol": vol}
        made = {"occ": occ, "occ_seq": occ_seq, "base": base, "save": save, "end": end}
        if held is not None:
            given = {k: np.concatenate([held[k], v]) for k, v in given.items()}
            for k, v in made.items():
                v[:h] = held[k]
        io = {**given, **made}
        return io

    def feed(self, subs: SubIOs, first: int, time_s: np.ndarray, extra: dict[str, np.ndarray] | None = None,
             final: bool = False, consume: bool = False) -> dict[str, Any]:
        """The I/Os `subs` of requests first .. first + len(time_s) - 1 (arriving at time_s; `req` in subs
        counts from the trace's first request); `final`: no more requests follow. `consume`: empty `subs`
        once joined."""
        held = self.req["time_s"].shape[0]
        if first != self.first + held:
            raise ValueError(f"requests fed out of order: {first} after {self.first + held}")
        n_new = int(time_s.shape[0])
        io = self._ios(subs, consume)
        if self.grow:
            self._cover(time_s, io)
        reqs = {"time_s": writable(time_s), **(extra or {})}
        was = self.req
        self.req = {k: np.concatenate([was[k], v]) if k in was and held else v for k, v in reqs.items()}
        for k in ("arrival", "done"):       # the model's outputs: the held requests' so far, the new ones' zero
            self.req[k] = np.zeros(held + n_new)
            self.req[k][:held] = was[k]
        local = io["req"] - self.first
        n_io = int(local.shape[0])
        k = _serve(local, io["dev"], io["fg"], io["occ"], io["occ_seq"], io["base"], io["save"], io["off"],
                   io["end"], io["vol"], self.req["time_s"], self.req["arrival"], self.req["done"], n_io, final,
                   self.timed, self.units, self.single, self.t0, self.bucket_s, self.nbuckets, self.gate_free,
                   self.unit_free, self.unit_head, self.busy, self.busy_b, self.last_end, self.last_vol, self.ring,
                   self.seen, self.scan, self.started, self.scal, self.cur)
        self.fed = self.fed or n_io > 0
        nreq = self.req["time_s"].shape[0]
        r = nreq if k == n_io else int(local[k])
        out: dict[str, Any] = {"first": self.first,
                               "latency_s": self.req["done"][:r] - self.req["arrival"][:r]}
        for name, arr in self.req.items():
            if name not in ("time_s", "arrival", "done"):
                out[name] = arr[:r]
        # keep what waits: its I/Os and requests (copies: the replayed ones' memory goes back)
        self.io = {kk: v[k:].copy() for kk, v in io.items()} if k < n_io else None
        self.req = {kk: v[r:].copy() for kk, v in self.req.items()}
        self.scan -= k
        if self.cur[0] >= 0:
            self.cur[0] -= r
        self.first += r
        return out


    def _cover(self, time_s: np.ndarray, io: dict[str, np.ndarray]) -> None:
        """Buckets enough for every I/O given to start in (grow): none starts later than the latest of its
        arrival, the devices' gates and the last completion so far plus the service and gate times of all the
        I/Os fed (a bound, not the answer: a few empty buckets past it cost nothing). Past MAX_INTERVALS the
        width doubles (pairs summed: a bucket never straddles two of the wider grid). Then the requests'
        arrivals are counted."""
        latest = max(float(time_s[-1]) if time_s.size else self.t0, self.last_s,
                     float(self.gate_free.max()))
        work = float(np.maximum(io["occ"], io["base"] + io["save"]).sum()) if io["occ"].size else 0.0
        need = int(math.ceil((latest + work - self.t0) / self.bucket_s)) + 2
        while need > MAX_INTERVALS:
            self._widen()
            need = int(math.ceil((latest + work - self.t0) / self.bucket_s)) + 2
        if need > self.nbuckets:
            n = max(need, 2 * self.nbuckets)
            if n > MAX_INTERVALS:
                n = need
            self.busy_b = np.concatenate([self.busy_b, np.zeros((self.busy_b.shape[0], n - self.nbuckets))], axis=1)
            self.req_b = np.concatenate([self.req_b, np.zeros(n - self.nbuckets, dtype=np.int64)])
            self.nbuckets = n
        if time_s.size:
            k = np.clip(((np.asarray(time_s, dtype=np.float64) - self.t0) / self.bucket_s).astype(np.int64), 0,
                        self.nbuckets - 1)
            self.req_b += np.bincount(k, minlength=self.nbuckets)

    def _widen(self) -> None:
        """Twice as wide buckets: each the sum of a pair."""
        n = self.nbuckets + self.nbuckets % 2
        b = np.zeros((self.busy_b.shape[0], n))
        b[:, :self.nbuckets] = self.busy_b
        r = np.zeros(n, dtype=np.int64)
        r[:self.nbuckets] = self.req_b
        self.busy_b = b.reshape(b.shape[0], n // 2, 2).sum(axis=2)
        self.req_b = r.reshape(n // 2, 2).sum(axis=1)
        self.nbuckets = n // 2
        self.bucket_s *= 2

    def busiest(self) -> list[dict[str, Any] | None]:
        """Per device, its busiest bucket (grow): pct (its busy time over the bucket's width, at most 100),
        at_s (the bucket's start, from the first request), requests (arriving in it) and interval_s (the
        width); None untimed or idle. Of buckets equally busy (a saturated device's run of 100% seconds), the
        one most requests arrive in. An I/O's busy time counts in the bucket it starts in."""
        if not self.grow:
            return [None] * len(self.devices)
        out: list[dict[str, Any] | None] = []
        for d in range(len(self.devices)):
            b = self.busy_b[d]
            if not b.size or b.max() <= 0:
                out.append(None)
                continue
            full = np.minimum(b / self.bucket_s, 1.0)
            k = int(np.lexsort((-self.req_b, -full))[0])      # the busiest; among equals, the most requests
            out.append({"pct": float(min(b[k] / self.bucket_s, 1.0) * 100.0), "at_s": k * self.bucket_s,
                        "requests": int(self.req_b[k]), "interval_s": self.bucket_s})
        return out


MAX_INTERVALS = 1 << 20     # busiest-interval buckets per device, at most (1 s wide: 12 days of trace)


def writable(a: np.ndarray) -> np.ndarray:
    """float64, contiguous and writable: numba compiles a kernel again for a read-only array (pyarrow's
    zero-copy columns are), seconds for the queueing model's."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    return a if a.flags.writeable else a.copy()


def fifo_units(arrival_s: np.ndarray, service_s: np.ndarray, units: int = 1,
               gate_s: np.ndarray | None = None) -> np.ndarray:
    """Response times of jobs through `units` FIFO servers with explicit service times (and an optional gate):
    the queue core of `serve`, for checks against queueing closed forms."""
    arrival_s = np.ascontiguousarray(arrival_s, dtype=np.float64)
    n = arrival_s.size
    service_s = np.ascontiguousarray(service_s, dtype=np.float64)
    gate = np.zeros(n) if gate_s is None else np.ascontiguousarray(gate_s, dtype=np.float64)
    dev = DeviceModel("fifo", "test", 1, 1, 1, 1, 1, 1)
    srv = Server([dev], True)
    srv.units[:] = units
    srv.unit_free = np.full((1, units), -1e300)
    io = {"req": np.arange(n, dtype=np.int64), "dev": np.zeros(n, dtype=np.int32), "fg": np.ones(n, dtype=np.bool_),
          "occ": gate, "occ_seq": gate, "base": service_s, "save": np.zeros(n), "off": np.full(n, -2, dtype=np.int64),
          "end": np.full(n, -3, dtype=np.int64), "vol": np.zeros(n, dtype=np.int32)}
    arrival, done = np.zeros(n), np.zeros(n)
    _serve(io["req"], io["dev"], io["fg"], io["occ"], io["occ_seq"], io["base"], io["save"], io["off"], io["end"],
           io["vol"], arrival_s, arrival, done, n, True, True, srv.units, srv.single, 0.0, 0.0, 1, srv.gate_free,
           srv.unit_free, srv.unit_head, srv.busy, srv.busy_b, srv.last_end, srv.last_vol, srv.ring, srv.seen,
           srv.scan, srv.started, srv.scal, srv.cur)
    return done - arrival


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
    """Run the queueing model over the design's device I/Os of a whole trace; latency per request (and, given
    `bucket_s` on a timed trace, each device's busy time per bucket of start time). `consume`: empty `subs`
    once its pieces are joined (the memory goes back before the model runs)."""
    nreq = int(time_s.shape[0])
    width = float(bucket_s) if (timed and bucket_s and bucket_s > 0 and nreq) else 0.0     # 0.0: no buckets
    use_buckets = width > 0
    # buckets tile [first, last arrival]; I/Os starting later (a backlog) count in the last one
    nb = int(max(1, math.ceil((float(time_s[-1]) - float(time_s[0])) / width - 1e-9))) if use_buckets else 1
    first = float(time_s[0]) if (timed and nreq) else 0.0
    srv = Server(devices, timed, first, width, nb)
    lat = srv.feed(subs, 0, time_s, final=True, consume=consume)["latency_s"]
    span = max(srv.last_s - first, float(time_s[-1] - time_s[0]) if (timed and nreq) else 0.0)
    return Served(lat, srv.busy, span if srv.fed else 0.0, srv.busy_b, bucket_s if use_buckets else None)


def tie_resolution(time_s: np.ndarray, min_resolution_s: float = 1e-3) -> float | None:
    """The clock's tick when requests share timestamps and the clock is `min_resolution_s` or coarser (the
    smallest step between distinct times), else None: nothing to spread."""
    if time_s.size < 2:
        return None
    steps = np.diff(time_s)
    pos = steps[steps > 0]
    if pos.size == 0 or not (steps == 0).any():
        return None
    res = float(pos.min())
    return res if res >= min_resolution_s else None


def spread_ties(time_s: np.ndarray, res: float | None) -> np.ndarray:
    """Spread requests that share a coarse timestamp evenly across its tick `res` (tie_resolution).

    A trace stamped to the second (CloudPhysics, Tencent) shows a second's requests as one burst; replayed
    as such they would queue behind each other. The k requests of a tick t get t + j/k of the tick,
    j = 0..k-1 (the times must hold whole ticks: a tick's requests all present).
    """
    if res is None or time_s.size == 0:
        return time_s
    new_tick = np.concatenate(([True], np.diff(time_s) > 0))
    tick_id = np.cumsum(new_tick) - 1
    starts = np.flatnonzero(new_tick)
    counts = np.diff(np.append(starts, time_s.size))
    j = np.arange(time_s.size) - starts[tick_id]
    return time_s + res * j / counts[tick_id]


_CDF_P = np.unique(np.concatenate([np.linspace(0.0, 0.99, 100), [0.995, 0.999, 0.9995, 0.9999, 1.0]]))


def percentiles_and_cdf_us(lat_s: np.ndarray, overwrite: bool = False) -> tuple[dict[str, float | None],
                                                                             list[list[float]]]:
    """PERCENTILES (µs) and the CDF, [[latency_us, fraction ≤], ...] at ~105 fractions (denser in the tail,
    for charts): np.quantile's, found through the latencies' bits (quantiles.py; `overwrite`: where
    np.quantile answers, it may reorder lat_s in place, no copy)."""
    if lat_s.size == 0:
        return {k: None for k, _ in PERCENTILES}, []
    q = np.array([p / 100.0 for _, p in PERCENTILES])
    vals = quantiles.quantile(lat_s, np.concatenate([q, _CDF_P]), overwrite=overwrite) * 1e6
    pct: dict[str, float | None] = {k: float(v) for (k, _), v in zip(PERCENTILES, vals)}
    return pct, [[float(v), float(p)] for v, p in zip(vals[q.size:], _CDF_P)]


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


def histogram_bins(lat_s: np.ndarray) -> np.ndarray:
    """The bin of HIST_EDGES_US each latency counts in (under the first edge the first bin, over the last the
    last: a replay's every request is counted)."""
    us = np.clip(np.asarray(lat_s, dtype=np.float64) * 1e6, HIST_EDGES_US[0], HIST_EDGES_US[-1])
    return np.clip(np.searchsorted(HIST_EDGES_US, us, side="right") - 1, 0, HIST_EDGES_US.size - 2)


def histogram_us(lat_s: np.ndarray) -> np.ndarray:
    """Counts of latencies per bin of HIST_EDGES_US (int64)."""
    return np.bincount(histogram_bins(lat_s), minlength=HIST_EDGES_US.size - 1).astype(np.int64)


def percentiles_from_histogram_us(counts: np.ndarray) -> dict[str, float | None]:
    """PERCENTILES of merged histogram counts: the geometric middle of the bin holding each rank."""
    n = int(counts.sum())
    if n == 0:
        return {k: None for k, _ in PERCENTILES}
    cum = np.cumsum(counts)
    mids = np.sqrt(HIST_EDGES_US[:-1] * HIST_EDGES_US[1:])
    out: dict[str, float | None] = {}
    for k, q in PERCENTILES:
        rank = max(1, math.ceil(q / 100.0 * n))          # the rank-th smallest latency, 1-based
        out[k] = float(mids[int(np.searchsorted(cum, rank, side="left"))])
    return out
