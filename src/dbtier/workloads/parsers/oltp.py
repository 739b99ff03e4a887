"""Pure OLTP maths: pgbench output, latency percentiles, the knee, the bottleneck.

Nothing here touches the machine; the inputs are pgbench's text and the
samplers' figures, so every rule is tested on saved output and hand-made numbers.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from dbtier.core.errors import DbtierError
from dbtier.core.stats import median, percentile, representative, spread
from dbtier.core.units import pct_below

WORKLOADS = ("tpcc", "tpcb", "select-only", "readmix")


def redact(dsn: str) -> str:
    """A DSN fit to print: any password removed (key=value and URI forms)."""
    dsn = re.sub(r"(password\s*=\s*)('[^']*'|\S+)", r"\1***", dsn, flags=re.I)
    return re.sub(r"(postgres(?:ql)?://[^:/@]+):[^@]*@", r"\1:***@", dsn)


def parse_pgbench_summary(text: str) -> dict[str, Any]:
    """pgbench's closing report (PostgreSQL 15) -> figures."""
    def num(pattern: str) -> float | None:
        m = re.search(pattern, text, re.M)
        return float(m.group(1)) if m else None

    tps = num(r"^tps = ([\d.]+) \(without initial connection time\)")
    if tps is None:
        tps = num(r"^tps = ([\d.]+)")
    n = num(r"^number of transactions actually processed: (\d+)")
    return {
        "transactions": n,
        # pgbench's measured time: it prints tps = transactions / that time, not the time itself
        "elapsed_s": n / tps if n and tps else None,
        "duration_s": num(r"^duration: (\d+) s"),   # -T as pgbench ran it (whole seconds)
        "failed": num(r"^number of failed transactions: (\d+)") or 0.0,
        "tps": tps,
        "latency_avg_ms": num(r"^latency average = ([\d.]+) ms"),
        "initial_connection_ms": num(r"^initial connection time = ([\d.]+) ms"),
        "clients": num(r"^number of clients: (\d+)"),
        "threads": num(r"^number of threads: (\d+)"),
        # the scale pgbench ran at: a custom script's :scale (-s), a built-in's count of pgbench_branches
        "scaling_factor": num(r"^scaling factor: (\d+)"),
    }


def check_scale(scaling_factor: float | None, loaded_scale: int | None, workload: str, clients: int) -> None:
    """pgbench's "scaling factor" line against the scale the database was loaded at: a DbtierError naming
    both when they differ (the point would measure another data set: readmix at scale 1 over a scale-40
    database reads 1/40 of it). Nothing to check without a loaded scale (tpcc)."""
    if loaded_scale is None:
        return
    if scaling_factor is None:
        raise DbtierError(f"pgbench printed no \"scaling factor\" line at {clients} clients ({workload}): the scale "
                          f"it ran at cannot be checked against the loaded scale {loaded_scale}",
                          "see the raw pgbench output in the run directory")
    if int(scaling_factor) != int(loaded_scale):
        raise DbtierError(f"pgbench ran {workload} at {clients} clients at scaling factor {int(scaling_factor)}, but "
                          f"the database was loaded at scale {int(loaded_scale)}: the point would measure another "
                          "data set than the one loaded",
                          "see the raw pgbench output in the run directory; a custom script needs -s (the loaded "
                          "scale)")


def parse_pgbench_log(lines: Iterable[str], with_lag: bool = False) -> tuple[list[float], int]:
    """Per-transaction log lines -> (latencies in ms, failed count).

    Format: client_id transaction_no time script_no time_epoch time_us [schedule_lag].
    With a rate (open loop) the latency is measured from the scheduled start:
    time + schedule_lag, so a server that falls behind shows it.
    """
    lat: list[float] = []
    failed = 0
    for line in lines:
        f = line.split()
        if len(f) < 6:
            continue
        if f[2] in ("failed", "skipped"):
            failed += 1
            continue
        us = float(f[2])
        if with_lag and len(f) >= 7:
            us += float(f[6])
        lat.append(us / 1000.0)
    return lat, failed


def pgbench_seconds(requested_s: float) -> int:
    """pgbench -T takes whole seconds: a fractional duration rounds up (0.4 -> 1, 2.5 -> 3), never down to 0."""
    return max(1, math.ceil(requested_s))


def measured_window(summary: dict[str, Any], wall_s: float | None) -> tuple[float | None, str]:
    """The seconds the point's rates divide by -> (seconds, where from).

    pgbench's own window: it reports tps = transactions / its measured time (without the initial
    connection time), so the time is transactions / tps (2608 transactions at 522.862399 TPS:
    4.988 s of a `-T 5` run). Without a transaction to divide by, the wall time measured around
    pgbench; never the duration asked for (`--duration 0.4` runs `-T 1`: dividing by 0.4 gave 2.5x)."""
    n, tps = summary.get("transactions"), summary.get("tps")
    if isinstance(n, (int, float)) and isinstance(tps, (int, float)) and n > 0 and tps > 0:
        return n / tps, "pgbench"
    if isinstance(wall_s, (int, float)) and wall_s > 0 and math.isfinite(wall_s):
        return float(wall_s), "wall clock"
    return None, "none"


def rates(transactions: float, new_orders: float | None, seconds: float | None) -> dict[str, float | None]:
    """TPS, TPM and NOPM over the measured seconds (None when nothing was measured)."""
    if not (isinstance(seconds, (int, float)) and seconds > 0):
        return {"tps": None, "tpm": None, "nopm": None}
    tps = transactions / seconds
    return {"tps": tps, "tpm": tps * 60.0, "nopm": None if new_orders is None else new_orders / (seconds / 60.0)}


def combine_repeats(reps: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Runs of one point -> the point: true medians of the headline figures, the spread kept.

    TPS, TPM, NOPM and each latency percentile (p50, p95, p99, mean) are the medians over the runs
    (an even count: the mean of the two middle values; 100 and 140 TPS give 120); latency max is the
    largest of the runs. CPU, devices, waits, counters and the bottleneck are those of the middle run by
    TPS (an even count: the lower of the two middle runs; `shown_run`, 1-based).
    `tps_spread` = {median, min, max, n, spread_pct}; one run: n=1 and no spread (spread_pct None),
    never an implied 0%."""
    if not reps:
        raise ValueError("no runs")
    tps = [r["tps"] for r in reps]
    k = representative(tps)
    point = dict(reps[k])
    sp = spread(tps)
    point["tps"] = sp["median"]
    point["tpm"] = None if sp["median"] is None else sp["median"] * 60.0
    nopm = [r["nopm"] for r in reps if isinstance(r.get("nopm"), (int, float))]
    point["nopm"] = median(nopm) if nopm else None
    lats = [r.get("lat_ms") or {} for r in reps]
    lat: dict[str, float | None] = {}
    for key in ("p50", "p95", "p99", "mean"):
        xs = [x[key] for x in lats if isinstance(x.get(key), (int, float))]
        lat[key] = median(xs) if xs else None
    maxes = [x["max"] for x in lats if isinstance(x.get("max"), (int, float))]
    lat["max"] = max(maxes) if maxes else None
    point["lat_ms"] = lat
    point["repeats"] = len(reps)
    point["tps_runs"] = tps
    point["tps_spread"] = sp
    point["tps_spread_pct"] = sp["spread_pct"]
    point["shown_run"] = k + 1
    if len(reps) > 1:
        point["runs"] = [{"tps": r["tps"], "nopm": r.get("nopm"), "p95_ms": (r.get("lat_ms") or {}).get("p95"),
                          "bottleneck": r.get("bottleneck"), "duration_s": r.get("duration_s"), "raw": r.get("raw")}
                         for r in reps]
    return point


def latency_summary(lat_ms: Sequence[float]) -> dict[str, float | None]:
    if not lat_ms:
        return {"p50": None, "p95": None, "p99": None, "max": None, "mean": None}
    return {"p50": percentile(lat_ms, 50), "p95": percentile(lat_ms, 95), "p99": percentile(lat_ms, 99),
            "max": max(lat_ms), "mean": sum(lat_ms) / len(lat_ms)}


KNEE_MIN_GAIN = 0.10      # throughput gained per doubling of clients, at least, for a point to count as progress
KNEE_PATIENCE = 2         # points after the knee, all short of it, that confirm it
KNEE_RULE = (f"saturation at the last client count whose throughput gained {100 * KNEE_MIN_GAIN:.0f}% or more per "
             "doubling of clients over the knee before it, every later count gaining less over it (confirmed by "
             f"{KNEE_PATIENCE} or more such counts; a dip then recovery does not end the sweep); a step from c1 "
             "to c2 clients counts as log2(c2/c1) doublings, its gain per doubling (TPS2/TPS1)^(1/log2(c2/c1)) - 1 "
             "(8 to 12 clients at +10% TPS: +17.7% per doubling); latency does not decide it; no such pair: still "
             "rising at the largest load measured")


def gain_per_doubling(c1: float, tps1: float, c2: float, tps2: float) -> float:
    """Throughput gained from (c1, tps1) to (c2, tps2) clients, per doubling of clients (`KNEE_RULE`):
    (tps2/tps1)^(1/log2(c2/c1)) - 1. 1 -> 4 clients at 2x TPS: +41.4% per doubling (sqrt 2 - 1)."""
    if not (c2 > c1 > 0):
        raise ValueError(f"client counts must rise: {c1} -> {c2}")
    if tps1 <= 0:
        return math.inf if tps2 > 0 else 0.0
    if tps2 <= 0:
        return -1.0
    return float((tps2 / tps1) ** (1.0 / math.log2(c2 / c1))) - 1.0


def _step_words(a: dict[str, Any], b: dict[str, Any]) -> str:
    """Why point b is no progress over point a, in words."""
    ratio = b["tps"] / a["tps"] if a["tps"] else math.inf
    g = gain_per_doubling(a["clients"], a["tps"], b["clients"], b["tps"])
    change = f"rose {100 * (ratio - 1):.1f}%" if ratio >= 1 else f"fell {100 * (1 - ratio):.1f}%"
    return (f"throughput {change} from {a['clients']} to {b['clients']} clients "
            f"({100 * g:+.1f}% per doubling)")


def knee(points: Sequence[dict[str, Any]], min_gain: float = KNEE_MIN_GAIN,
         patience: int = KNEE_PATIENCE) -> dict[str, Any] | None:
    """Where more clients stop paying (`KNEE_RULE`), over the whole sweep.

    A point is progress when its throughput gained `min_gain` or more per doubling of clients over the
    knee so far (`gain_per_doubling`); the knee is the last point of progress, read over the whole sweep,
    and `patience` or more points after it confirm it. A dip followed by a point that beats the knee does
    not end the sweep (TPS 100, 190, 170, 260, 265, 262 at 1..32 clients: the knee is 8 clients, 260 TPS,
    not 2). A rising curve whose latency grows
    faster than its throughput is still rising: latency does not decide the knee. -> {clients, tps,
    reason, confirmed, still_rising}; None for no points."""
    pts = sorted((p for p in points if isinstance(p.get("tps"), (int, float))), key=lambda p: p["clients"])
    if not pts:
        return None
    best, misses = 0, 0
    for i in range(1, len(pts)):     # the whole sweep: a later point that gains the rate resumes it
        a, b = pts[best], pts[i]
        if b["clients"] > a["clients"] and gain_per_doubling(a["clients"], a["tps"], b["clients"],
                                                             b["tps"]) >= min_gain:
            best, misses = i, 0
        else:
            misses += 1
    kp = pts[best]
    if misses == 0:
        return {"clients": kp["clients"], "tps": kp["tps"], "confirmed": False, "still_rising": True,
                "reason": (f"throughput still rising at the largest load measured ({kp['clients']} clients): "
                           f"no step gained under {100 * min_gain:.0f}% per doubling of clients")}
    words = "; ".join(_step_words(kp, b) for b in pts[best + 1:best + 1 + misses])
    if misses >= patience:
        reason = (f"the {misses} client counts after it gained under "
                  f"{100 * min_gain:.0f}% per doubling of clients: {words}")
    else:
        reason = (f"only the last point gained under {100 * min_gain:.0f}% per doubling ({words}); the sweep ended "
                  "before a second point could confirm the knee")
    return {"clients": kp["clients"], "tps": kp["tps"], "confirmed": misses >= patience, "still_rising": False,
            "reason": reason}


# PostgreSQL wait events (pg_stat_activity) grouped by what they mean for a bottleneck, per the
# PostgreSQL 15 wait event table (monitoring.sgml, "wait_event Description"):
#   commit  - the commit's WAL reaching the device: IO:WALWrite (a write to a WAL file), IO:WALSync (a
#             WAL file reaching durable storage), IO:WALInitWrite/WALInitSync (a new WAL segment being
#             written and synced), LWLock:WALWrite (waiting for WAL buffers to be written to disk by
#             another backend: group commit), IPC:SyncRep (a synchronous standby confirming the commit).
#   lock    - contention in memory, not the device: every Lock, and LWLocks including WALInsert (waiting
#             to insert WAL data into a memory buffer: many backends writing WAL at once, a CPU-side
#             limit) and WALBufMapping (waiting to replace a page in WAL buffers: wal_buffers too small).
#   storage - IO:DataFile*, BufFile* (temp), SLRU*, WALRead ...: waiting for the data device; and
#             IPC:BufferIO (waiting for another backend's I/O on the same buffer to complete; an LWLock
#             before PostgreSQL 14).
#   client  - Client:ClientRead/ClientWrite, or an idle backend: waiting for pgbench.
#   cpu     - active with no wait event: running (or runnable) on a CPU.
#   other   - Activity, BufferPin, Extension, Timeout and the rest of IPC: none of the above; it can win.
COMMIT_IO = {"WALWrite", "WALSync", "WALInitWrite", "WALInitSync"}
COMMIT_LWLOCK = {"WALWrite", "WALWriteLock"}            # WALWriteLock: the name before PostgreSQL 13
WAIT_CLASSES = ("storage", "commit", "lock", "cpu", "client", "other")


def classify_wait(state: str | None, wait_type: str | None, wait_event: str | None) -> str:
    """One backend's state -> cpu | storage | commit | lock | client | other."""
    if state == "idle" or wait_type == "Client":
        return "client"
    if wait_type is None:
        return "cpu"
    if wait_type == "IO":
        return "commit" if wait_event in COMMIT_IO else "storage"
    if wait_type == "LWLock":
        if wait_event in COMMIT_LWLOCK:
            return "commit"
        if wait_event == "BufferIO":
            return "storage"
        return "lock"
    if wait_type == "Lock":
        return "lock"
    if wait_type == "IPC":
        if wait_event == "SyncRep":
            return "commit"
        if wait_event == "BufferIO":
            return "storage"
    return "other"


def wait_shares(counts: dict[str, int]) -> dict[str, float]:
    total = sum(counts.values())
    return {k: (v / total if total else 0.0) for k, v in sorted(counts.items())}


NOT_MEASURED_REMOTE = ("server_cpu", "server_devices")


# A throttled device whose measured rate is at least this share of its limit is at the throttle.
THROTTLE_AT = 0.90
# The CPU is near busy at this share of what the point's backends can use: min(clients, cores) of the cores
# (1 client on 2 cores: 50% of the machine is all it can use, so 35% busy is near busy).
CPU_NEAR_BUSY = 0.70
CPU_SATURATED = 90.0    # % of all cores, user + system: a point at it is CPU-bound, whatever the backends wait on


@dataclass(frozen=True)
class Throttle:
    """A device behind an I/O throttle (an emulated tier), its rates measured during the point against the limits."""
    device: str
    read_iops: float
    write_iops: float
    read_limit_iops: int
    write_limit_iops: int

    def at_limit(self) -> list[tuple[str, float, int]]:
        """[(reads|writes, measured, limit)] for each direction at THROTTLE_AT of its limit or more."""
        return [(d, got, lim) for d, got, lim in (("reads", self.read_iops, self.read_limit_iops),
                                                  ("writes", self.write_iops, self.write_limit_iops))
                if lim > 0 and got >= THROTTLE_AT * lim]

    def words(self) -> str:
        return (f"emulated {self.device}: reads {self.read_iops:,.0f} of {self.read_limit_iops:,} IOPS, writes "
                f"{self.write_iops:,.0f} of {self.write_limit_iops:,} IOPS (submitted: completed plus merged)")


def throttles_of(devices: Sequence[dict[str, Any]], limits: dict[str, dict[str, int]] | None) -> tuple[Throttle, ...]:
    """The point's device figures against the emulated tier's limits ({device: {read_iops, write_iops}}): one
    Throttle per limited device that was sampled. The rate set against a limit is the I/Os submitted, those
    completed (read_iops) plus those merged into them (read_merged_iops), as the throttle counts them: a
    throttled MariaDB tier completed 351 writes a second and merged 152 more at a 500-write limit."""
    if not limits:
        return ()
    by_name = {d.get("device"): d for d in devices}

    def rate(d: dict[str, Any], way: str) -> float:
        return float(d.get(f"{way}_iops") or 0.0) + float(d.get(f"{way}_merged_iops") or 0.0)
    return tuple(Throttle(name, rate(by_name[name], "read"), rate(by_name[name], "write"),
                          int(lim.get("read_iops") or 0), int(lim.get("write_iops") or 0))
                 for name, lim in sorted(limits.items()) if name in by_name)


@dataclass(frozen=True)
class Evidence:
    cpu_busy_pct: float            # this machine's CPU, user + system, % of all cores
    iowait_pct: float
    client_cpu_cores: float        # pgbench's own CPU use
    client_threads: int            # min(clients, cores): the cores the point's clients (and backends) can use
    waits: dict[str, float]        # share of sampled backend states per class
    device_await_ms: float         # the worst placement device
    device_busy_pct: float
    device_queue: float
    wait_samples: int = -1         # backend states counted (-1: not said; then the shares decide)
    wait_error: str | None = None  # the sampling query's error, if it failed
    remote: bool = False           # --dsn: this machine's CPU and devices are not the server's
    devices_measured: bool = True  # any placement device sampled
    cpus: int = 0                  # this machine's cores (0: not said; the CPU is then near busy at 70%)
    throttles: tuple[Throttle, ...] = ()   # placement devices behind an emulated tier's throttle

    def cpu_near_busy(self) -> bool:
        """This machine's CPU at CPU_NEAR_BUSY of what the point's clients can use (never for --dsn)."""
        usable = 100.0 * min(1.0, self.client_threads / self.cpus) if self.cpus > 0 else 100.0
        return not self.remote and self.cpu_busy_pct >= CPU_NEAR_BUSY * usable


def bottleneck(ev: Evidence) -> tuple[str, str]:
    """-> (cpu|storage|commit|client|lock|other|unknown, the evidence in words, starting with the verdict).

    Judged by where backends spend their time and by the CPU, not by device busy %
    alone: a pegged CPU stretches every I/O's completion and makes a fast device
    look 100% busy while its queue and wait stay short. A device behind an I/O throttle (an emulated
    tier) is judged by its rate against the throttle's limit: the throttle delays I/O before the device
    sees it, so the device's busy % and await show nothing; reads or writes at THROTTLE_AT of the limit
    are storage, said as the throttle. The CPU is named only when it is near busy (`cpu_near_busy`);
    backends on CPU or on I/O with neither the CPU near busy nor a device queue is unknown (not
    determined), with the figures. Without wait samples (none taken, or the sampling query failed) the
    backends' time is unknown and so is the verdict, unless this machine's CPU, measured, is saturated.
    A remote server (--dsn) is never judged by this machine's CPU or devices.
    """
    w = {k: v for k, v in ev.waits.items() if v >= 0.005}
    backends = ", ".join(f"{k} {100 * v:.0f}%" for k, v in sorted(w.items(), key=lambda kv: (-kv[1], kv[0])))
    parts = []
    if ev.remote:
        parts.append("the server's CPU and devices were not measured (--dsn: this machine only runs pgbench)")
    else:
        parts.append(f"CPU {pct_below(ev.cpu_busy_pct, CPU_SATURATED)}% busy, iowait {ev.iowait_pct:.0f}%")
    parts.append(f"backends: {backends}" if backends else "backends: no wait samples")
    if not ev.remote:
        parts.append(f"device await {ev.device_await_ms:.2f} ms, queue {ev.device_queue:.1f}, "
                     f"busy {ev.device_busy_pct:.0f}%" if ev.devices_measured else "no placement device sampled")
        parts += [t.words() for t in ev.throttles]
    parts.append(f"pgbench {ev.client_cpu_cores:.2f} cores")
    said = "; ".join(parts)

    if ev.client_threads and ev.client_cpu_cores / ev.client_threads >= 0.9:
        return "client", "client: pgbench's threads are saturated; " + said
    at = [(t, d, got, lim) for t in ev.throttles for d, got, lim in t.at_limit()] if not ev.remote else []
    if at:
        limits = " and ".join(f"{d} at {got:,.0f} IOPS against the emulated tier's {lim:,} "
                              f"{d.removesuffix('s')} IOPS throttle ({t.device})" for t, d, got, lim in at)
        return "storage", (f"storage: {limits}; a throttle delays I/O before the device sees it, so the device's "
                           "busy % and await do not show it; " + said)
    if not ev.remote and ev.cpu_busy_pct >= CPU_SATURATED:
        return "cpu", f"cpu: the CPU is saturated ({ev.cpu_busy_pct:.0f}% busy); " + said
    if ev.wait_error:
        return "unknown", f"unknown: the wait-event sampling query failed ({ev.wait_error}); " + said
    if ev.wait_samples == 0 or not any(v > 0 for v in ev.waits.values()):
        return "unknown", "unknown: no backend wait samples were taken during the point; " + said
    # Highest share wins; a tie goes to the first in WAIT_CLASSES (never to the alphabet).
    ranked = sorted(WAIT_CLASSES, key=lambda k: (-ev.waits.get(k, 0.0), WAIT_CLASSES.index(k)))
    kind = ranked[0]
    share = ev.waits.get(kind, 0.0)
    top = f"most backend time is {kind} ({100 * share:.0f}%)"
    idle_cpu = f"the CPU is {ev.cpu_busy_pct:.0f}% busy, not near busy"
    undetermined = "unknown: not determined, no resource measured is near its limit: "
    if kind == "client" and not ev.remote and ev.cpu_busy_pct >= 70:
        return "cpu", (f"cpu: {top}, waiting for pgbench, but the machine's CPU is {ev.cpu_busy_pct:.0f}% busy: "
                       "server and pgbench share it; " + said)
    if (kind == "storage" and not ev.remote and ev.devices_measured and ev.device_queue < 0.5
            and ev.device_await_ms < 0.5):
        if ev.cpu_near_busy():
            # I/O waits without a device queue, the CPU near busy: the wait is CPU scheduling, not the device
            return "cpu", (f"cpu: {top}, but the devices show no queue ({ev.device_queue:.1f}) and "
                           f"{ev.device_await_ms:.2f} ms await: the I/O waits are CPU scheduling, not the device; "
                           + said)
        throttle = ", no throttle at its limit" if ev.throttles else ""
        return "unknown", (f"{undetermined}{top}, but no device shows a queue ({ev.device_queue:.1f}) or await "
                           f"({ev.device_await_ms:.2f} ms){throttle} and {idle_cpu}; " + said)
    if kind == "cpu" and not ev.remote and not ev.cpu_near_busy():
        return "unknown", f"{undetermined}{top} (running, no wait event), but {idle_cpu}; " + said
    if kind == "cpu" and ev.remote:
        return "cpu", f"cpu: {top} (active, no wait event, on the server's CPU as the server reports it); " + said
    return kind, f"{kind}: {top}; " + said
