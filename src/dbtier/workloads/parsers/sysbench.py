"""Pure sysbench (1.0) figures: the command line, its report, a point's figures.

sysbench drives MariaDB/MySQL with its built-in Lua OLTP tests. Nothing here runs it: the argv
is built from plain values and the report is parsed from text, so both are tested on saved output
(tests/data/sysbench/). workloads/sysbench.py runs it.

Facts of sysbench 1.0.20 (Debian 12) that shape this module:
- `--time` takes whole seconds; there is no `--warmup-time` (1.1 added it: 1.0.20 says "invalid
  option"), so a warm-up is a separate run unless `native_warmup` is asked for.
- `--percentile` takes one value; p50/p95/p99 come from `--histogram`, by sysbench's own rule
  (`histogram_percentile`), so the percentile sysbench prints is reproduced exactly.
- With `--rate` (open loop) the latency histogram holds each event's service time only: the time an
  event waited in sysbench's queue is not added (sysbench.c: the timer starts when a thread takes the
  event). The queue shows in the interval lines (`queue length`), kept as `max_queue_length`.
- No password is read from the environment; `--mysql-password` on the command line is visible in
  `ps`, so a password goes in a `--config-file` (mode 0600) or the user is a passwordless socket user.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Sequence

# dbtier's workload name -> sysbench's built-in Lua test
WORKLOADS = {"sysbench-rw": "oltp_read_write", "sysbench-ro": "oltp_read_only",
             "sysbench-wo": "oltp_write_only", "sysbench-point": "oltp_point_select"}
COMMANDS = ("prepare", "run", "cleanup")

# One scale unit is 100,000 rows in all, as pgbench's scale is 100,000 pgbench_accounts rows: the same
# --scale gives about the same number of rows on either engine, spread over TABLES tables.
ROWS_PER_SCALE = 100_000
TABLES = 4


@dataclass(frozen=True)
class MysqlTarget:
    """Where sysbench connects: a socket (preferred: the managed server's private socket) or host/port.

    `config_file`: a sysbench --config-file holding `mysql-password=...` (written 0600 by the driver)
    for a server that needs a password; never the password itself on the command line."""
    user: str
    db: str
    socket: str | None = None
    host: str | None = None
    port: int | None = None
    config_file: str | None = None

    def args(self) -> list[str]:
        a = []
        if self.config_file:
            a.append(f"--config-file={self.config_file}")   # sysbench reads it before the other options
        if self.socket:
            a.append(f"--mysql-socket={self.socket}")
        else:
            a += [f"--mysql-host={self.host or '127.0.0.1'}", f"--mysql-port={int(self.port or 3306)}"]
        return a + [f"--mysql-user={self.user}", f"--mysql-db={self.db}"]


def layout(scale: int, tables: int = TABLES) -> tuple[int, int]:
    """--scale -> (tables, rows per table): scale x 100,000 rows spread over `tables` (at least 1 row each)."""
    if scale < 1 or tables < 1:
        raise ValueError("scale and tables must be at least 1")
    return tables, max(1, scale * ROWS_PER_SCALE // tables)


def sysbench_seconds(requested_s: float) -> int:
    """--time takes whole seconds: a fractional duration rounds up, never down to 0 (as pgbench's -T)."""
    return max(1, math.ceil(requested_s))


def lua_string(text: str) -> str:
    """A Lua string literal: backslash, quote and control characters escaped (\\ddd)."""
    out = []
    for c in text:
        if c in '\\"':
            out.append("\\" + c)
        elif ord(c) < 32 or ord(c) == 127:
            out.append(f"\\{ord(c):03d}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


def table_options_script(workload: str, table_options: str) -> str:
    """A Lua script that runs sysbench's built-in test of `workload` with `table_options` (e.g. DATA
    DIRECTORY='/srv/x') at the end of each CREATE TABLE: 1.0.20's oltp_common.lua appends the Lua global
    `mysql_table_options` to its CREATE TABLE (create_table), and `require` finds the stock test on
    sysbench's own path (/usr/share/sysbench), wherever this script is."""
    if workload not in WORKLOADS:
        raise ValueError(f"unknown sysbench workload {workload!r} (one of {', '.join(WORKLOADS)})")
    return (f"-- dbtier: sysbench's {WORKLOADS[workload]} with table options (its tables' CREATE TABLE)\n"
            f"mysql_table_options = {lua_string(table_options)}\n"
            f"require({lua_string(WORKLOADS[workload])})\n")


def sysbench_args(workload: str, command: str, target: MysqlTarget, *, tables: int, table_size: int,
                  threads: int = 1, seconds: float | None = None, rate: float | None = None,
                  percentile: int = 95, histogram: bool = True, report_interval_s: int = 1,
                  warmup_s: float = 0.0, native_warmup: bool = False, sysbench: str = "sysbench",
                  script: str | None = None) -> list[str]:
    """The sysbench command line (pure): `prepare` and `cleanup` take the tables; `run` the point.

    `rate` (transactions/s, whole: sysbench takes an integer) makes the run open loop; None or 0 is
    closed loop. `warmup_s` goes on the command line only with `native_warmup` (sysbench >= 1.1).
    `script`: a Lua file to run instead of the built-in test's name (table_options_script's)."""
    if workload not in WORKLOADS:
        raise ValueError(f"unknown sysbench workload {workload!r} (one of {', '.join(WORKLOADS)})")
    if command not in COMMANDS:
        raise ValueError(f"unknown sysbench command {command!r}")
    a = [sysbench, script or WORKLOADS[workload], *target.args(), f"--tables={int(tables)}", f"--table-size={int(table_size)}",
         f"--threads={max(1, int(threads))}"]
    if command == "run":
        if seconds is None:
            raise ValueError("a run needs its seconds")
        a += [f"--time={sysbench_seconds(seconds)}", f"--report-interval={int(report_interval_s)}",
              f"--percentile={int(percentile)}", f"--histogram={'on' if histogram else 'off'}"]
        if rate:
            a.append(f"--rate={max(1, round(rate))}")
        if native_warmup and warmup_s > 0:
            a.append(f"--warmup-time={sysbench_seconds(warmup_s)}")
    return a + [command]


# ------------------------------------------------------------------ the report

_INTERVAL = re.compile(r"^\[\s*(\d+)s \] thds: (\d+) tps: ([\d.]+) qps: ([\d.]+) .*?lat \(ms,(\d+)%\): ([\d.]+) "
                       r"err/s:? ([\d.]+) reconn/s: ([\d.]+)")
_QUEUE = re.compile(r"^\[\s*(\d+)s \] queue length: (\d+), concurrency: (\d+)")
_HIST = re.compile(r"^\s*([\d.]+) \|\**\s+(\d+)\s*$")


def parse_sysbench(text: str) -> dict[str, Any]:
    """sysbench 1.0's `run` report -> figures (None where the report lacks one).

    The summary (SQL statistics, General statistics, Latency), the histogram as [(value_ms, count)],
    the interval lines as dicts, and `fatal`: sysbench's FATAL lines (a lost connection, a full event
    queue under --rate)."""
    def num(pattern: str) -> float | None:
        m = re.search(pattern, text, re.M)
        return float(m.group(1)) if m else None

    def pair(label: str) -> tuple[float | None, float | None]:
        m = re.search(rf"^\s+{label}:\s+(\d+)\s+\(([\d.]+) per sec\.\)", text, re.M)
        return (float(m.group(1)), float(m.group(2))) if m else (None, None)

    hist: list[tuple[float, int]] = []
    in_hist = False
    intervals: list[dict[str, Any]] = []
    queues: dict[int, tuple[int, int]] = {}
    for line in text.splitlines():
        if line.startswith("Latency histogram"):
            in_hist = True
            continue
        if in_hist:
            m = _HIST.match(line)
            if m:
                hist.append((float(m.group(1)), int(m.group(2))))
                continue
            if "distribution" in line:
                continue
            in_hist = False
        m = _INTERVAL.match(line)
        if m:
            intervals.append({"t_s": int(m.group(1)), "threads": int(m.group(2)), "tps": float(m.group(3)),
                              "qps": float(m.group(4)), "lat_pct": int(m.group(5)), "lat_ms": float(m.group(6)),
                              "err_per_s": float(m.group(7)), "reconn_per_s": float(m.group(8))})
            continue
        m = _QUEUE.match(line)
        if m:
            queues[int(m.group(1))] = (int(m.group(2)), int(m.group(3)))
    for iv in intervals:
        if iv["t_s"] in queues:
            iv["queue_length"], iv["concurrency"] = queues[iv["t_s"]]
    pct = re.search(r"^\s+(\d+)(?:st|nd|rd|th) percentile:\s+([\d.]+)", text, re.M)
    transactions, tps = pair("transactions")
    queries, qps = pair("queries")
    errors, errors_per_s = pair("ignored errors")
    reconnects, _ = pair("reconnects")
    return {
        "threads": num(r"^Number of threads: (\d+)"),
        "rate_target": num(r"^Target transaction rate: (\d+)/sec"),
        "reads": num(r"^\s+read:\s+(\d+)"), "writes": num(r"^\s+write:\s+(\d+)"),
        "other": num(r"^\s+other:\s+(\d+)"),
        "transactions": transactions, "tps": tps, "queries": queries, "qps": qps,
        "errors": errors, "errors_per_s": errors_per_s, "reconnects": reconnects,
        "total_time_s": num(r"^\s+total time:\s+([\d.]+)s"),
        "events": num(r"^\s+total number of events:\s+(\d+)"),
        "lat_min_ms": num(r"^\s+min:\s+([\d.]+)"), "lat_avg_ms": num(r"^\s+avg:\s+([\d.]+)"),
        "lat_max_ms": num(r"^\s+max:\s+([\d.]+)"), "lat_sum_ms": num(r"^\s+sum:\s+([\d.]+)"),
        "percentile": int(pct.group(1)) if pct else None, "lat_pct_ms": float(pct.group(2)) if pct else None,
        "histogram": hist, "intervals": intervals,
        "fatal": [x.strip() for x in text.splitlines() if "FATAL" in x],
    }


def histogram_percentile(hist: Sequence[tuple[float, int]], pct: float) -> float | None:
    """sysbench's own percentile of its histogram (sb_histogram.c): the value of the first bucket at
    which the running count reaches round(n * pct / 100); None for an empty histogram.

    Buckets are logarithmic (1024 from 0.001 ms to 100 s, about 1.6% apart), so this is the latency to
    within a bucket, and equals what sysbench prints for its --percentile (to its two decimals)."""
    n = sum(c for _, c in hist)
    if n <= 0:
        return None
    need = math.floor(n * pct / 100.0 + 0.5)
    running = 0
    for value, count in hist:
        running += count
        if running >= need:
            return value
    return hist[-1][0]


def point_figures(parsed: dict[str, Any], clients: int, duration_s: float, rate: float | None) -> dict[str, Any]:
    """One point's figures with a PostgreSQL point's keys (pgbench.run_point) where they apply.

    TPS is sysbench's own: transactions over the time it measured (it prints both; the window is
    transactions / tps, as for pgbench). nopm is None: no sysbench workload has new orders. Latency:
    p50/p95/p99 from the histogram by sysbench's rule, max and mean from its summary; without a
    histogram only the percentile sysbench printed. `failed` counts sysbench's ignored errors
    (deadlocks and lock wait timeouts it rolled back and retried)."""
    n, tps = parsed.get("transactions"), parsed.get("tps")
    if isinstance(n, (int, float)) and isinstance(tps, (int, float)) and n > 0 and tps > 0:
        measured_s, source = n / tps, "sysbench"
    elif isinstance(parsed.get("total_time_s"), (int, float)) and parsed["total_time_s"] > 0:
        measured_s, source = float(parsed["total_time_s"]), "sysbench total time"
    else:
        measured_s, source = None, "none"
    done = float(n or 0)
    tps_v = done / measured_s if measured_s else 0.0
    hist = parsed.get("histogram") or []
    lat: dict[str, float | None] = {"p50": None, "p95": None, "p99": None,
                                    "max": parsed.get("lat_max_ms"), "mean": parsed.get("lat_avg_ms")}
    if hist:
        for p in (50, 95, 99):
            lat[f"p{p}"] = histogram_percentile(hist, p)
    elif parsed.get("percentile") in (50, 95, 99):
        lat[f"p{parsed['percentile']}"] = parsed.get("lat_pct_ms")
    queue = [iv["queue_length"] for iv in parsed.get("intervals") or [] if "queue_length" in iv]
    return {
        "clients": clients, "tps": tps_v, "tpm": tps_v * 60.0, "nopm": None,
        "lat_ms": lat, "transactions": int(done), "failed": int(parsed.get("errors") or 0),
        "rate": rate, "duration_s": measured_s, "duration_source": source, "requested_s": duration_s,
        "sysbench_time_s": sysbench_seconds(duration_s),
        "latency_source": "sysbench histogram" if hist else "sysbench summary",
        # open loop: sysbench's latency is service time only; its queue is the sign of falling behind
        "latency_excludes_queue": bool(rate),
        "sysbench": {"queries": parsed.get("queries"), "qps": parsed.get("qps"), "reads": parsed.get("reads"),
                     "writes": parsed.get("writes"), "other": parsed.get("other"),
                     "errors": parsed.get("errors"), "reconnects": parsed.get("reconnects"),
                     "lat_min_ms": parsed.get("lat_min_ms"), "percentile": parsed.get("percentile"),
                     "lat_pct_ms": parsed.get("lat_pct_ms"), "total_time_s": parsed.get("total_time_s"),
                     "max_queue_length": max(queue) if queue else None},
    }
