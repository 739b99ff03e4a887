"""CPU and block-device sampling from /proc while a workload runs.

`parse_*` and `*_between` are pure (tested on saved /proc text); `Sampler` is a
thread that reads /proc/stat and /proc/diskstats every interval and, given a
callback, PostgreSQL's wait events. It measures its own CPU time so the report
can show that sampling costs well under 1% of a core.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
SECTOR_BYTES = 512  # /proc/diskstats counts 512-byte sectors whatever the device's block size


def parse_proc_stat(text: str) -> dict[str, int]:
    """The aggregate `cpu` line of /proc/stat, in clock ticks."""
    for line in text.splitlines():
        if line.startswith("cpu "):
            vals = [int(x) for x in line.split()[1:]]
            return dict(zip(CPU_FIELDS, vals + [0] * (len(CPU_FIELDS) - len(vals))))
    raise ValueError("no aggregate cpu line in /proc/stat")


def parse_diskstats(text: str) -> dict[str, dict[str, int]]:
    """/proc/diskstats -> {device: counters} (fields per the kernel's iostats.rst)."""
    out = {}
    for line in text.splitlines():
        f = line.split()
        if len(f) < 14:
            continue
        v = [int(x) for x in f[3:14]]
        out[f[2]] = {"reads": v[0], "reads_merged": v[1], "read_sectors": v[2], "read_ms": v[3], "writes": v[4],
                     "writes_merged": v[5], "write_sectors": v[6], "write_ms": v[7], "in_flight": v[8],
                     "io_ms": v[9], "weighted_ms": v[10]}
    return out


def cpu_between(a: dict[str, int], b: dict[str, int]) -> dict[str, float]:
    """Utilisation between two /proc/stat samples, % of the whole machine."""
    d = {k: b[k] - a[k] for k in CPU_FIELDS}
    total = sum(d.values()) or 1
    busy = total - d["idle"] - d["iowait"]
    return {
        "user_pct": 100.0 * (d["user"] + d["nice"]) / total,
        "system_pct": 100.0 * (d["system"] + d["irq"] + d["softirq"]) / total,
        "iowait_pct": 100.0 * d["iowait"] / total,
        "steal_pct": 100.0 * d["steal"] / total,
        "busy_pct": 100.0 * busy / total,
    }


def disk_between(a: dict[str, int], b: dict[str, int], seconds: float) -> dict[str, float]:
    """iostat -x style figures for one device between two samples."""
    ios = (b["reads"] - a["reads"]) + (b["writes"] - a["writes"])
    wait_ms = (b["read_ms"] - a["read_ms"]) + (b["write_ms"] - a["write_ms"])
    sectors = (b["read_sectors"] - a["read_sectors"]) + (b["write_sectors"] - a["write_sectors"])
    return {
        "iops": ios / seconds,
        "read_iops": (b["reads"] - a["reads"]) / seconds,
        "read_ios": b["reads"] - a["reads"],     # the raw count: the cache guard compares it with page reads
        "write_iops": (b["writes"] - a["writes"]) / seconds,
        # I/Os merged into others before they completed: an I/O throttle (cgroup blkio) counts them, since
        # it charges each I/O as submitted, before the queue merges it
        "read_merged_iops": (b.get("reads_merged", 0) - a.get("reads_merged", 0)) / seconds,
        "write_merged_iops": (b.get("writes_merged", 0) - a.get("writes_merged", 0)) / seconds,
        "mbps": sectors * SECTOR_BYTES / seconds / 1e6,
        "read_bytes": (b["read_sectors"] - a["read_sectors"]) * SECTOR_BYTES,
        "write_bytes": (b["write_sectors"] - a["write_sectors"]) * SECTOR_BYTES,
        "await_ms": wait_ms / ios if ios else 0.0,
        "busy_pct": min(100.0, 100.0 * (b["io_ms"] - a["io_ms"]) / (seconds * 1000.0)),
        "queue": (b["weighted_ms"] - a["weighted_ms"]) / (seconds * 1000.0),
    }


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


@dataclass
class Sample:
    t: float
    cpu: dict[str, int]
    disks: dict[str, dict[str, int]]
    extra: Any = None


@dataclass
class Sampler:
    """Samples every `interval_s` in a thread until stopped; `extra()` adds e.g. wait events."""
    devices: list[str]
    interval_s: float = 1.0
    extra: Callable[[], Any] | None = None
    samples: list[Sample] = field(default_factory=list)
    cpu_s: float = 0.0          # the sampler thread's own CPU time
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    extra_error: str | None = None

    def take(self) -> Sample:
        disks = parse_diskstats(_read("/proc/diskstats"))
        extra = None
        if self.extra is not None:
            try:
                extra = self.extra()
            except Exception as exc:  # the database went away: keep sampling /proc, stop asking it
                self.extra_error = str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc)
                self.extra = None
        return Sample(time.monotonic(), parse_proc_stat(_read("/proc/stat")),
                      {d: disks[d] for d in self.devices if d in disks}, extra)

    def _loop(self) -> None:
        start = time.thread_time()
        try:
            while True:
                self.samples.append(self.take())
                if self._stop.wait(self.interval_s):
                    break
            self.samples.append(self.take())
        finally:
            self.cpu_s = time.thread_time() - start

    def __enter__(self) -> "Sampler":
        self._thread = threading.Thread(target=self._loop, name="dbtier-sampler", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=10)

    def series(self) -> list[dict[str, Any]]:
        """Per-interval CPU and device figures (for charts over time)."""
        out = []
        t0 = self.samples[0].t if self.samples else 0.0
        for a, b in zip(self.samples, self.samples[1:]):
            dt = b.t - a.t
            if dt <= 0:
                continue
            out.append({"t_s": round(b.t - t0, 3), "cpu": cpu_between(a.cpu, b.cpu),
                        "devices": {d: disk_between(a.disks[d], b.disks[d], dt)
                                    for d in self.devices if d in a.disks and d in b.disks}})
        return out

    def overall(self) -> dict[str, Any]:
        """First to last sample: machine CPU and each device."""
        if len(self.samples) < 2:
            return {"cpu": None, "devices": {}, "seconds": 0.0}
        a, b = self.samples[0], self.samples[-1]
        dt = b.t - a.t
        return {"cpu": cpu_between(a.cpu, b.cpu), "seconds": dt,
                "devices": {d: disk_between(a.disks[d], b.disks[d], dt)
                            for d in self.devices if d in a.disks and d in b.disks}}


