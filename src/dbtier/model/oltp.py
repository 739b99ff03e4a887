"""Pure OLTP maths: pgbench output, latency percentiles, the knee, the bottleneck.

Nothing here touches the machine; the inputs are pgbench's text and the
samplers' figures, so every rule is tested on saved output and hand-made numbers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from dbtier.core.stats import percentile

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
    return {
        "transactions": num(r"^number of transactions actually processed: (\d+)"),
        "failed": num(r"^number of failed transactions: (\d+)") or 0.0,
        "tps": tps,
        "latency_avg_ms": num(r"^latency average = ([\d.]+) ms"),
        "initial_connection_ms": num(r"^initial connection time = ([\d.]+) ms"),
        "clients": num(r"^number of clients: (\d+)"),
        "threads": num(r"^number of threads: (\d+)"),
    }


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


def latency_summary(lat_ms: Sequence[float]) -> dict[str, float | None]:
    if not lat_ms:
        return {"p50": None, "p95": None, "p99": None, "max": None, "mean": None}
    return {"p50": percentile(lat_ms, 50), "p95": percentile(lat_ms, 95), "p99": percentile(lat_ms, 99),
            "max": max(lat_ms), "mean": sum(lat_ms) / len(lat_ms)}


def knee(points: Sequence[dict[str, Any]], min_gain: float = 0.05) -> dict[str, Any] | None:
    """The client count after which throughput rises by less than 5% per step, or latency
    (p95) grows faster than throughput. With no such step, the last point."""
    pts = sorted(points, key=lambda p: p["clients"])
    if not pts:
        return None
    for a, b in zip(pts, pts[1:]):
        tps_ratio = b["tps"] / a["tps"] if a["tps"] else float("inf")
        la, lb = (a.get("lat_ms") or {}).get("p95"), (b.get("lat_ms") or {}).get("p95")
        lat_ratio = lb / la if la and lb else 1.0
        if tps_ratio < 1 + min_gain or lat_ratio > tps_ratio:
            return {"clients": a["clients"], "tps": a["tps"],
                    "reason": (f"throughput rose {100 * (tps_ratio - 1):.1f}% from {a['clients']} to "
                               f"{b['clients']} clients" if tps_ratio < 1 + min_gain else
                               f"p95 latency grew {lat_ratio:.2f}x while throughput grew {tps_ratio:.2f}x "
                               f"from {a['clients']} to {b['clients']} clients")}
    last = pts[-1]
    return {"clients": last["clients"], "tps": last["tps"], "reason": "throughput still rising at the last point"}


# PostgreSQL wait events (pg_stat_activity) grouped by what they mean for a bottleneck.
COMMIT_WAITS = {"WALSync", "WALWrite", "WALInsert", "WALBufMapping", "WALInitSync", "WALInitWrite"}


def classify_wait(state: str | None, wait_type: str | None, wait_event: str | None) -> str:
    """One backend's state -> cpu | storage | commit | lock | client | idle."""
    if wait_event in COMMIT_WAITS:
        return "commit"
    if state == "idle" or wait_event == "ClientRead":
        return "client"
    if wait_type is None:
        return "cpu"
    if wait_type == "IO":
        return "storage"
    if wait_type in ("Lock", "LWLock"):
        return "lock"
    if wait_type == "Client":
        return "client"
    return "other"


def wait_shares(counts: dict[str, int]) -> dict[str, float]:
    total = sum(counts.values())
    return {k: (v / total if total else 0.0) for k, v in sorted(counts.items())}


@dataclass(frozen=True)
class Evidence:
    cpu_busy_pct: float            # machine CPU, user + system, % of all cores
    iowait_pct: float
    client_cpu_cores: float        # pgbench's own CPU use
    client_threads: int
    waits: dict[str, float]        # share of sampled backend states per class
    device_await_ms: float         # the worst placement device
    device_busy_pct: float
    device_queue: float


def bottleneck(ev: Evidence) -> tuple[str, str]:
    """-> (cpu|storage|commit|client|lock, the evidence in words).

    Judged by where backends spend their time and by the CPU, not by device busy %
    alone: a pegged CPU stretches every I/O's completion and makes a fast device
    look 100% busy while its queue and wait stay short.
    """
    w = ev.waits
    said = (f"CPU {ev.cpu_busy_pct:.0f}% busy, iowait {ev.iowait_pct:.0f}%; backends: "
            + ", ".join(f"{k} {100 * v:.0f}%" for k, v in w.items() if v >= 0.005)
            + f"; device await {ev.device_await_ms:.2f} ms, queue {ev.device_queue:.1f}, busy {ev.device_busy_pct:.0f}%"
            + f"; pgbench {ev.client_cpu_cores:.2f} cores")
    if ev.client_threads and ev.client_cpu_cores / ev.client_threads >= 0.9:
        return "client", "pgbench's threads are saturated; " + said
    if ev.cpu_busy_pct >= 90:
        return "cpu", "the CPU is saturated; " + said
    ranked = sorted(((w.get(k, 0.0), k) for k in ("storage", "commit", "lock", "cpu", "client")), reverse=True)
    share, kind = ranked[0]
    if kind == "client" and ev.cpu_busy_pct >= 70:
        kind = "cpu"
    if kind == "storage" and ev.device_queue < 0.5 and ev.device_await_ms < 0.5:
        kind = "cpu"  # I/O waits without a device queue: the wait is CPU scheduling, not the device
    return kind, f"most backend time is {kind} ({100 * share:.0f}%); " + said
