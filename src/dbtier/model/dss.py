"""Pure DSS helpers: answer checking, totals, size estimates, the backup bottleneck."""

from __future__ import annotations

import datetime as _dt
import decimal
import math
from typing import Any, Sequence, TypeGuard

from dbtier.model.guards import dss_guards

QUERIES = tuple(range(1, 23))
ANSWER_SCALES = (0.01, 0.1, 1.0)  # the tpch extension ships reference answers for these

# Rough on-disk and in-memory footprints per scale factor, from DuckDB 1.x runs:
# SF 1 is ~0.26 GB compressed, ~0.9 GB uncompressed; dbgen peaks at ~1 GB of memory.
DUCKDB_GB_PER_SF = {"on": 0.3, "off": 1.0}
POSTGRES_GB_PER_SF = 2.0  # tables + indexes
DBGEN_MEMORY_GB_PER_SF = 1.2


def estimate(engine: str, scale: float, compression: str = "on") -> dict[str, float]:
    disk = scale * (DUCKDB_GB_PER_SF[compression] if engine == "duckdb" else POSTGRES_GB_PER_SF)
    return {"disk_gb": disk, "memory_gb": scale * DBGEN_MEMORY_GB_PER_SF}


def _cell(v: Any) -> str:
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, (_dt.date, _dt.datetime)):
        return v.isoformat()
    return "" if v is None else str(v)


def _same(got: str, want: str) -> bool:
    if got.strip() == want.strip():
        return True
    try:
        a, b = float(got), float(want)
    except ValueError:
        return False
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=0.011)


def check_answer(rows: Sequence[Sequence[Any]], answer: str) -> str | None:
    """Compare result rows with a reference answer (pipe-separated, header first).

    None when they agree; otherwise what differs first. Numbers agree within a
    relative 1e-6 or an absolute 0.011 (answers are printed to two decimals).
    """
    # One trailing newline ends the last row; a blank line before it is a row of NULLs (Q17 at SF 0.01).
    text = answer[:-1] if answer.endswith("\n") else answer
    lines = text.split("\n") if text else []
    want = [ln.split("|") for ln in lines[1:]] if lines else []
    if len(rows) != len(want):
        return f"{len(rows)} rows, expected {len(want)}"
    for i, (g, w) in enumerate(zip(rows, want), start=1):
        if len(g) != len(w):
            return f"row {i}: {len(g)} columns, expected {len(w)}"
        for j, (a, b) in enumerate(zip(g, w), start=1):
            if not _same(_cell(a), b):
                return f"row {i}, column {j}: {_cell(a)!r}, expected {b!r}"
    return None


def geomean(xs: Sequence[float]) -> float | None:
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


# The limiting side of a backup (backup_bottleneck). The null sink is the same backup with its output
# discarded: what the source and the backup program deliver with no target in the way.
# A target is the limit when the null sink is at least this many times faster than the directory: a gap
# wider than two runs' spread may be (the verdict judges runs that agree within 20%) ...
BACKUP_NULL_FACTOR = 1.25
# ... or, at an emulated (throttled) tier, when the rate through it is within this share of the throttle's
# limit: a throttle delays I/O before the device sees it, so device busy time says nothing there.
BACKUP_THROTTLE_NEAR = 0.10
# Compression is the limit when it keeps the backup process at this many cores or more ...
BACKUP_CPU_CORES = 0.85
# ... and, with nothing to compare with (no null sink, no throttle), a device this busy (and busier than
# the other side by BACKUP_BUSY_LEAD points) is the limit: busy time alone, said as such.
BACKUP_BUSY_PCT = 90.0
BACKUP_BUSY_LEAD = 10.0
BACKUP_RULE = (f"the target when the rate through a throttled tier is within {BACKUP_THROTTLE_NEAR:.0%} of the "
               f"throttle's limit, or when the null sink is at least {BACKUP_NULL_FACTOR:g} times the directory's "
               f"MB/s; the CPU when compression keeps the backup process at {BACKUP_CPU_CORES:g} cores or more; "
               "the source when the null sink is not that much faster (or a throttled source runs at its limit); "
               f"with neither a null sink nor a throttle, a device at least {BACKUP_BUSY_PCT:.0f}% busy and "
               f"{BACKUP_BUSY_LEAD:.0f} points busier than the other side; otherwise not determined")

Throttle = tuple[float, float, str]    # (measured rate, the throttle's limit, unit: "MB/s" or "IOPS")


def near_throttle(t: Throttle | None) -> TypeGuard[Throttle]:
    """An emulated tier's rate within BACKUP_THROTTLE_NEAR of its throttle: the throttle is the limit."""
    return t is not None and t[1] > 0 and t[0] >= (1 - BACKUP_THROTTLE_NEAR) * t[1]


def _throttle_text(t: Throttle, what: str) -> str:
    return f"{what} {t[0]:,.1f} {t[2]} through the emulated tier, {100 * t[0] / t[1]:.0f}% of its throttle's " \
           f"{t[1]:,.1f} {t[2]}: the throttle"


def backup_bottleneck(target: str, compressed: bool, proc_cpu_cores: float, src_busy_pct: float,
                      dst_busy_pct: float, mbps: float, null_mbps: float | None, *,
                      dst_throttle: Throttle | None = None, src_throttle: Throttle | None = None,
                      medians: bool = False, null_of: str | None = None) -> tuple[str, str]:
    """-> (source | target | cpu | undetermined, why), by BACKUP_RULE, in its order.

    mbps and null_mbps count source bytes per second (the same bytes to either sink); `medians`: they are the
    medians of repeated runs (the evidence says so); `null_of`: the method whose null sink null_mbps is, when
    it is another method's (one with no null sink of its own is judged against one that reads the same files).
    dst_throttle /
    src_throttle: (rate through an emulated tier, its limit, unit) when the target / source is one: the
    written (read) MB/s or IOPS of that tier's device against the throttle's. Busy time only supports a
    judgement, except where nothing else is there to judge by."""
    busy = f"source busy {src_busy_pct:.0f}%, target busy {dst_busy_pct:.0f}%"
    cores = f"backup process {proc_cpu_cores:.2f} cores"
    ratio = (null_mbps / mbps) if (target == "dir" and null_mbps and mbps > 0) else None
    med = "median " if medians else ""
    vs_null = (f"{med}{mbps:,.0f} MB/s to the directory against {med}{null_mbps:,.0f} MB/s to the null sink"
               + (f" of {null_of}, which reads the same files" if null_of else "")
               + (f" ({ratio:.1f} times)" if ratio is not None and ratio >= 1.05 else "")) if ratio else ""
    if target == "dir" and near_throttle(dst_throttle):
        return "target", _throttle_text(dst_throttle, "wrote") + (f"; {vs_null}" if vs_null else "")
    if near_throttle(src_throttle):
        return "source", _throttle_text(src_throttle, "read")
    if ratio is not None and ratio >= BACKUP_NULL_FACTOR:
        return "target", (f"{vs_null}, at least {BACKUP_NULL_FACTOR:g} times: the source delivers more than the "
                          f"directory takes; {busy}")
    if compressed and proc_cpu_cores >= BACKUP_CPU_CORES:
        return "cpu", f"compression kept the backup process at {proc_cpu_cores:.2f} cores" \
                      + (f"; {vs_null}" if vs_null else "")
    if ratio is not None or target == "null":
        return "source", ((f"{vs_null}, under {BACKUP_NULL_FACTOR:g} times: the directory takes what the source "
                           "delivers") if vs_null else "the null sink writes nothing") + f"; {busy}, {cores}"
    # a directory with no null sink and no throttle at its limit: busy time is all there is
    if dst_busy_pct >= BACKUP_BUSY_PCT and dst_busy_pct >= src_busy_pct + BACKUP_BUSY_LEAD:
        return "target", f"no null sink to compare with; by busy time alone: {busy}"
    if src_busy_pct >= BACKUP_BUSY_PCT and src_busy_pct >= dst_busy_pct + BACKUP_BUSY_LEAD:
        return "source", f"no null sink to compare with; by busy time alone: {busy}"
    return "undetermined", f"no null sink to compare with and no device near its limit: {busy}, {cores}"


def combine_query_runs(recs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One query's records over the power runs -> its figures.

    seconds: the true median of the warm runs (an even count: the mean of the two middle values;
    warm runs of 2.0 s and 3.0 s give 2.5 s), or the cold run's when there is no warm run.
    `warm` = {median, min, max, n, spread_pct} of the warm runs (n=0 without one; n=1 has no spread).
    rows, bytes, spill and CPU are those of the middle warm run by time (an even count: the faster of the two
    middle runs), so a query's spill and its time come from the same run; temp_bytes_runs is every run's spill."""
    from dbtier.core.stats import representative, spread
    warm = [r for r in recs if not r.get("cold")]
    base = warm or list(recs)
    secs = [r["seconds"] for r in base]
    rep = base[representative(secs)]
    sp = spread([r["seconds"] for r in warm])
    cold = next((r for r in recs if r.get("cold")), None)
    return {"query": rep["query"], "seconds": sp["median"] if warm else rep["seconds"], "rows": rep["rows"],
            "temp_bytes": rep["temp_bytes"], "temp_device_write_bytes": rep.get("temp_device_write_bytes"),
            "temp_bytes_runs": [r["temp_bytes"] for r in recs], "read_bytes": rep["read_bytes"],
            "write_bytes": rep["write_bytes"], "cpu_util": rep["cpu_util"],
            "cold_seconds": cold["seconds"] if cold else None,
            "cold_read_bytes": cold["read_bytes"] if cold else None,
            "runs_seconds": [r["seconds"] for r in recs], "warm": sp}


def run_totals(runs: Sequence[Sequence[dict[str, Any]]], queries: Sequence[int]) -> dict[str, Any]:
    """Each warm power run's total (runs that timed every query in `queries`) -> {median, min, max, n,
    spread_pct, runs}: the spread of the power run as a whole, next to the total of per-query medians."""
    from dbtier.core.stats import spread
    want = set(queries)
    totals = [sum(r["seconds"] for r in run) for run in runs
              if run and not any(r.get("cold") for r in run) and {r["query"] for r in run} >= want]
    return {**spread(totals), "runs": totals}


def dss_totals(doc: dict[str, Any]) -> None:
    """queries[]: per query, the true median of the warm runs (the cold run when there is no warm one),
    with their spread; warm_totals: the spread of the warm power runs' totals; the cache guards; the
    total and geometric mean of the per-query figures; answers_ok over every checked answer. In place."""
    by_q: dict[int, list[dict[str, Any]]] = {}
    for run in doc["runs"]:
        for rec in run:
            by_q.setdefault(rec["query"], []).append(rec)
    queries = [combine_query_runs(recs) for _, recs in sorted(by_q.items())]
    doc["warm_totals"] = run_totals(doc["runs"], sorted(by_q))
    doc["guards"] = dss_guards(doc["runs"], (doc.get("load") or {}).get("database_bytes"))
    doc["temp_tier"] = temp_tier(doc["runs"], (doc.get("temp_tier") or {}).get("device"))
    if doc["temp_tier"]["guard"]:
        doc["guards"].append(doc["temp_tier"]["guard"])
    doc["queries"] = queries
    doc["total_seconds"] = sum(q["seconds"] for q in queries)
    doc["geomean_seconds"] = geomean([q["seconds"] for q in queries])
    checked = [r["answer_ok"] for run in doc["runs"] for r in run if r["answer_ok"] is not None]
    doc["answers_ok"] = all(checked) if checked else None


def dss_scan(doc: dict[str, Any], probe: dict[str, Any] | None, devices: list[str]) -> None:
    """Scan bandwidth of the cold run against the probe's sequential read MB/s for the same device."""
    if not probe or not doc["runs"]:
        return
    data_dev = devices[0] if devices else None
    cold = doc["runs"][0]
    secs = sum(r["seconds"] for r in cold)
    read = sum(r["devices"].get(data_dev, {}).get("read_bytes", 0) for r in cold) if data_dev else 0
    match = None
    for info, t in zip(probe["machine"]["targets"], probe.get("targets") or []):
        bd = info.get("block_device")
        if isinstance(bd, dict) and bd.get("name") == data_dev and t.get("summary"):
            match = t
    seq = match["summary"].get("read_mbps_seq") if match else None
    seq = seq if isinstance(seq, (int, float)) and not isinstance(seq, bool) else None
    doc["scan"] = {"device": data_dev, "achieved_mbps": read / secs / 1e6 if secs else None,
                   "probe_read_mbps_seq": seq,
                   "ratio": (read / secs / 1e6) / seq if match and secs and seq else None,
                   "note": "cold run: bytes read from the data device over the summed query time"
                   if match else "no probe target on the data device"}


# Spill reached the temp tier when the temp directory's device wrote at least this share of it while the
# spilling queries ran; less, and the page cache took it (files removed before writeback are never written).
TEMP_REACHED_SHARE = 0.5


def temp_tier(runs: Sequence[Sequence[dict[str, Any]]], device: str | None) -> dict[str, Any]:
    """Did the spill reach the temp directory's device? Per power run: spill_bytes, the sum of each query's
    peak spill (each query's files are gone when it ends); device_write_bytes, what the temp device wrote
    while those queries ran; temp_tier_exercised, device_write_bytes >= TEMP_REACHED_SHARE x spill_bytes
    (None when nothing spilled). The device's counters count every writer on it; where the query's own
    process is known (query_written_bytes: its writes not cancelled before writeback) the bytes that
    reached the device are the smaller of the two, so another program writing to a shared disk does not
    count. `guard` (a temp-in-memory guard) when a run spilled and the device saw less.
    Run 1 spills 100 MB, the device writes 80 MB: exercised; 100 MB and 0.1 MB: stayed in memory; 100 MB,
    the device 400 MB but the query's process 10 MB: stayed in memory (the 390 MB were another writer's)."""
    out = []
    for i, run in enumerate(runs):
        recs = [r for r in run if isinstance(r, dict)]
        spilled = [r for r in recs if (r.get("temp_bytes") or 0) > 0]
        spill = sum(r["temp_bytes"] for r in spilled)
        dev, own = (_total([r.get(k) for r in spilled]) for k in ("temp_device_write_bytes", "query_written_bytes"))
        reached = dev if own is None or dev is None else min(dev, own)
        ex = None if not spill else (None if reached is None else reached >= TEMP_REACHED_SHARE * spill)
        out.append({"run": i + 1, "spill_bytes": spill, "device_write_bytes": dev, "query_written_bytes": own,
                    "reached_bytes": reached, "temp_tier_exercised": ex,
                    "queries_spilled": [r["query"] for r in spilled]})
    missed = [r for r in out if r["temp_tier_exercised"] is False]
    guard = None
    if missed:
        words = "; ".join(f"run {r['run']} spilled {r['spill_bytes'] / 1e6:,.1f} MB "
                          f"(Q{', Q'.join(str(q) for q in r['queries_spilled'])}) and {device or 'the temp device'} "
                          f"wrote {r['device_write_bytes'] / 1e6:,.1f} MB while those queries ran"
                          + (f" ({r['query_written_bytes'] / 1e6:,.1f} MB of them the queries' own)"
                             if r["query_written_bytes"] is not None and r["query_written_bytes"] < r["device_write_bytes"]
                             else "") for r in missed)
        guard = {"kind": "temp-in-memory", "runs": [r["run"] for r in missed],
                 "message": f"{words}: the spill stayed in memory (the page cache) and the temp tier was not "
                            f"exercised (under {TEMP_REACHED_SHARE:.0%} of it reached the device); the times "
                            "measure memory, not the temp directory's storage"}
    seen = [r["temp_tier_exercised"] for r in out if r["temp_tier_exercised"] is not None]
    return {"device": device, "runs": out, "rule": f"exercised when the temp device wrote at least "
            f"{TEMP_REACHED_SHARE:.0%} of the spill while the spilling queries ran (at most what the queries' own "
            "process wrote and did not cancel, /proc/PID/io, where it is known)",
            "temp_tier_exercised": (False if missed else True) if seen else None, "guard": guard}


def _total(xs: Sequence[Any]) -> int | None:
    """The sum of byte counts, None when one is missing (not measured)."""
    return sum(xs) if xs and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in xs) else None


def _round_up_1sig(x: float) -> float:
    """x rounded up to one significant figure: 6.25 -> 7, 0.31 -> 0.4, 12.5 -> 20, 3.0 -> 3."""
    if x <= 0:
        return 0.0
    e = math.floor(math.log10(x))
    step = 10.0 ** e
    n = math.ceil(round(x / step, 9))
    return float(f"{n * step:.10g}")


def needed_scale(scale: float, total_s: float, min_run_s: float) -> float | None:
    """The TPC-H scale factor whose power run lasts min_run_s, from a measured run at `scale` that took
    total_s (time grows about linearly with the scale factor), rounded up to one significant figure.
    SF 3 in 2.4 s is 0.8 s per SF: 5 s needs SF 6.25, said as 7. None when nothing was timed."""
    if not (scale > 0 and total_s > 0):
        return None
    return _round_up_1sig(min_run_s / (total_s / scale))


def dss_scale_advice(stats: Sequence[dict[str, Any]], min_run_s: float) -> str | None:
    """The scale whose power run reaches min_run_s, from the run (report.figures.dss_stats) with the least
    time per scale factor among those shorter than that: "run --scale 7 or more (0.8 s per scale factor
    measured at SF 3: 5 s needs SF 6.25 ...)". None when no run is short or timed."""
    short = [s for s in stats if isinstance(s.get("total_s"), (int, float)) and isinstance(s.get("scale"), (int, float))
             and 0 < s["total_s"] < min_run_s and s["scale"] > 0]
    if not short:
        return None
    s = min(short, key=lambda x: x["total_s"] / x["scale"])
    per = s["total_s"] / s["scale"]
    n = needed_scale(s['scale'], s['total_s'], min_run_s)
    return (f"run --scale {n:g} or more (lab: --dss-scale {n:g}; {per:.3g} s per scale "
            f"factor measured at SF {s['scale']:g}: {min_run_s:g} s needs SF {min_run_s / per:.3g} if the time grows "
            "in proportion to the scale; fixed per-query costs make that a lower bound)")


def dss_advice(stats: Sequence[dict[str, Any]], min_run_s: float, min_runs: int | None = None) -> str:
    """What would let TPC-H power runs (report.figures.dss_stats of each) be judged, ending "to judge": the
    scale (dss_scale_advice) and, with min_runs, when a run has fewer warm runs than that, the --repeat
    that gives them (run 1 is cold: min_runs + 1)."""
    parts = [a for a in [dss_scale_advice(stats, min_run_s)] if a]
    if min_runs is not None and any(int((s.get("warm_totals") or {}).get("n") or 0) < min_runs for s in stats):
        parts.append(f"run --repeat {min_runs + 1} or more (run 1 is cold: {min_runs} warm runs give the spread)")
    return (" and ".join(parts) if parts else "repeat the runs") + " to judge"
