"""A result document's headline figures as metric families (dbtier export metrics). Pure: documents in,
prometheus_client metric families out; no timestamps (the textfile collector and the Pushgateway refuse
them).

The figures are the ones `dbtier show` and the report lead with, found the same way (report/figures/core.py):
a probe's summary, an OLTP sweep's knee and best point, a TPC-H power run, a backup's MB/s per method, the
plan's cheapest configuration, a history's peaks and requirement, a simulation's hit ratio and latency.
dbtier's MB are 10^6 bytes, GB 10^9, µs and ms are converted to seconds, percentages to 0-1 ratios.
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any, Callable, Iterable

from dbtier import __version__
from dbtier.export.families import METRICS, Builder
from dbtier.report.figures import core as F
from dbtier.report.figures import mrc as mrc_figures
from dbtier.results import kinds, registry
from dbtier.core.parts import dict_at

PERCENTILES = ("p50", "p95", "p99", "max")
MB, GB, TB = 1e6, 1e9, 1e12


def _num(x: Any, scale: float = 1.0) -> float | None:
    return x * scale if F.isnum(x) else None


def epoch_s(text: Any) -> float | None:
    """An ISO-8601 UTC time of a document ('2026-11-21T23:53:57.823372Z') as Unix seconds."""
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


# -- the run itself ----------------------------------------------------------------------------------------

def target_of(doc: dict[str, Any]) -> str:
    """What the run measured or read: its directories, the trace, the history's files, the runs it read."""
    named = [t.get("path") or t.get("device") for t in F.dicts(F.get(doc, "machine", "targets"))]
    paths = [p for p in named if isinstance(p, str) and p]
    if paths:
        return ",".join(dict.fromkeys(paths))
    params = dict_at(doc, "params")
    for key in ("trace", "files", "runs", "run"):
        v = params.get(key)
        given = v if isinstance(v, list) else [v]
        names = [os.path.basename(os.path.normpath(n)) for n in given if isinstance(n, str) and n]
        if names:
            return ",".join(names)
    return ""


def run_labels(run_id: str, doc: dict[str, Any]) -> dict[str, Any]:
    """The dbtier_run info labels; `kind` is the kind's label (dbtier.results.kinds: `bench oltp`)."""
    k = kinds.kind_of(doc)
    engine = workload = ""
    if k == "bench.oltp":
        engine = F.engine_of(doc)
        workload = F.get(doc, "params", "workload") or F.workload_name(doc) or ""
    elif k in ("bench.dss", "bench.backup"):
        engine = doc.get("engine") or F.get(doc, "params", "engine") or ""
        workload = "tpch" if k == "bench.dss" else "backup"
    version = doc.get("dbtier_version") or F.get(doc, "machine", "versions", "dbtier") or ""
    return {"run_id": run_id, "command": doc.get("command") or "", "kind": kinds.label(k),
            "host": F.get(doc, "machine", "hostname") or "", "target": target_of(doc), "engine": engine,
            "workload": workload, "status": doc.get("status") or "", "dbtier_version": version}


def _run(b: Builder, run_id: str, doc: dict[str, Any]) -> None:
    b.info("dbtier_run", **run_labels(run_id, doc))
    start, end = epoch_s(doc.get("started_at")), epoch_s(doc.get("finished_at"))
    b.add("dbtier_run_start_timestamp_seconds", start, run_id=run_id)
    if start is not None and end is not None and end >= start:
        b.add("dbtier_run_duration_seconds", end - start, run_id=run_id)


# -- per kind: each kind's `metrics` face (dbtier.results.kinds) ----------------------------------------------

PROBE_RATES = (("read_iops_4k", "read_4k"), ("write_iops_4k", "write_4k"), ("mixed_iops_8k", "mixed_8k"),
               ("commits_per_s", "commit"))
PROBE_BANDWIDTH = (("read_mbps_seq", "read_seq"), ("write_mbps_seq", "write_seq"))
PROBE_LATENCY = (("read_lat_us_qd1_p50", "read_4k_qd1", "p50"), ("write_lat_us_qd1_p50", "write_4k_qd1", "p50"),
                 ("read_lat_us_p99_at_max", "read_4k_max_load", "p99"), ("commit_lat_us_p50", "commit", "p50"),
                 ("commit_lat_us_p99", "commit", "p99"))


def probe(b: Builder, run_id: str, doc: dict[str, Any]) -> None:
    for j, t in enumerate(F.probe_targets(doc)):
        s = dict_at(t, "summary")
        target = str(t.get("path") or f"target {j + 1}")
        for key, test in PROBE_RATES:
            b.add("dbtier_probe_operations_per_second", s.get(key), run_id=run_id, target=target, test=test)
        for key, test in PROBE_BANDWIDTH:
            b.add("dbtier_probe_throughput_bytes_per_second", _num(s.get(key), MB), run_id=run_id, target=target,
                  test=test)
        for key, test, pct in PROBE_LATENCY:
            b.add("dbtier_probe_latency_seconds", _num(s.get(key), 1e-6), run_id=run_id, target=target, test=test,
                  percentile=pct)
        verdicts: dict[str | None, int] = {"ok": 1, "suspect": 0}      # no verdict (None): no sample
        honest = verdicts.get(s.get("fsync_honesty"))
        b.add("dbtier_probe_fsync_honest", honest, run_id=run_id, target=target)
        k = F.probe_knee(t)
        b.add("dbtier_probe_read_knee_outstanding", (k or {}).get("outstanding"), run_id=run_id, target=target)


def _latencies(b: Builder, name: str, lat_ms: Any, **labels: Any) -> None:
    lat = lat_ms if isinstance(lat_ms, dict) else {}
    for pct in PERCENTILES:
        b.add(name, _num(lat.get(pct), 1e-3), percentile=pct, **labels)


def oltp(b: Builder, run_id: str, doc: dict[str, Any]) -> None:
    v = F.oltp_view(doc)
    remote = F.not_measured(doc, v["knee_point"])
    for point, p in (("knee", v["knee_point"]), ("best", v["best"])):
        if not p:
            continue
        b.add("dbtier_oltp_transactions_per_second", p.get("tps"), run_id=run_id, point=point)
        b.add("dbtier_oltp_new_orders_per_second", _num(p.get("nopm"), 1 / 60), run_id=run_id, point=point)
        _latencies(b, "dbtier_oltp_latency_seconds", p.get("lat_ms"), run_id=run_id, point=point)
        b.add("dbtier_oltp_clients", p.get("clients"), run_id=run_id, point=point)
        if "server_cpu" not in remote:
            b.add("dbtier_oltp_cpu_busy_ratio", _num(F.get(p, "cpu_util", "busy_pct"), 0.01), run_id=run_id,
                  point=point)
        if "server_devices" not in remote:
            for d in F.dicts(p.get("devices")):
                b.add("dbtier_oltp_device_busy_ratio", _num(d.get("busy_pct"), 0.01), run_id=run_id, point=point,
                      device=d.get("device") or d.get("name") or "")
    durable = (F.durability(doc) or {}).get("durable")
    b.add("dbtier_oltp_durable", durable if isinstance(durable, bool) else None, run_id=run_id)
    steps = F.oltp_steps(doc)
    sweeps = [(str(s.get("name") or f"step {k + 1}"), F.oltp_points(s.get("points"))) for k, s in enumerate(steps)]
    for step, points in sweeps or [("", v["points"])]:
        for p in points:
            b.add("dbtier_oltp_sweep_transactions_per_second", p.get("tps"), run_id=run_id, step=step,
                  clients=p.get("clients"))
            _latencies(b, "dbtier_oltp_sweep_latency_seconds", p.get("lat_ms"), run_id=run_id, step=step,
                       clients=p.get("clients"))


def dss(b: Builder, run_id: str, doc: dict[str, Any]) -> None:
    s = F.dss_stats(doc)
    b.add("dbtier_dss_power_run_seconds", s["total_s"], run_id=run_id)
    b.add("dbtier_dss_query_geomean_seconds", s["geomean_s"], run_id=run_id)
    for q in F.dss_queries(doc):
        b.add("dbtier_dss_query_seconds", q.get("seconds"), run_id=run_id, query=q["query"])
    b.add("dbtier_dss_scale_factor", s["scale"], run_id=run_id)
    b.add("dbtier_dss_peak_temp_bytes", s["peak_temp_bytes"], run_id=run_id)
    b.add("dbtier_dss_spilled_queries", len(s["spilled"]) if s["queries"] else None, run_id=run_id)
    b.add("dbtier_dss_cpu_busy_ratio", _num(s["cpu_pct"], 0.01), run_id=run_id)
    ok = s["answers_ok"]
    b.add("dbtier_dss_answers_correct", ok if isinstance(ok, bool) else None, run_id=run_id)
    b.add("dbtier_dss_cold_scan_throughput_bytes_per_second", _num(s["scan_mbps"], MB), run_id=run_id)


def backup(b: Builder, run_id: str, doc: dict[str, Any]) -> None:
    b.add("dbtier_backup_source_bytes", F.get(doc, "source", "database_bytes"), run_id=run_id)
    for m in F.backup_methods(doc):
        for sink, key in (("directory", "dir_mbps"), ("null", "null_mbps")):
            b.add("dbtier_backup_throughput_bytes_per_second", _num(m[key], MB), run_id=run_id, method=m["method"],
                  sink=sink)
        b.add("dbtier_backup_output_bytes", m["output_bytes"], run_id=run_id, method=m["method"])
        b.add("dbtier_backup_duration_seconds", m["seconds"], run_id=run_id, method=m["method"])


def plan_size(b: Builder, run_id: str, doc: dict[str, Any]) -> None:
    c = (F.dicts(doc.get("candidates")) or [{}])[0]
    if c:
        b.info("dbtier_plan_cheapest", run_id=run_id, configuration=F.config_name(c) or "",
               binding=doc.get("binding") if isinstance(doc.get("binding"), str) else "")
    b.add("dbtier_plan_cheapest_price", c.get("price_usd"), run_id=run_id, currency="USD")
    b.add("dbtier_plan_cheapest_monthly_price", F.get(c, "cloud", "monthly_usd", "total"), run_id=run_id,
          currency="USD")
    b.add("dbtier_plan_cheapest_capacity_bytes", _num(c.get("capacity_gb"), GB), run_id=run_id)
    for op in ("read", "write"):
        b.add("dbtier_plan_cheapest_operations_per_second", c.get(f"{op}_iops"), run_id=run_id, op=op)
        b.add("dbtier_plan_cheapest_throughput_bytes_per_second", _num(c.get(f"{op}_mbps"), MB), run_id=run_id,
              op=op)
    b.add("dbtier_plan_designs_meeting", doc.get("designs_meeting"), run_id=run_id)


def plan_value(b: Builder, run_id: str, doc: dict[str, Any]) -> None:
    b.add("dbtier_plan_price", F.get(doc, "config", "price_usd"), run_id=run_id, currency="USD")


def plan_equivalent(b: Builder, run_id: str, doc: dict[str, Any]) -> None:
    for metric in ("iops", "throughput", "capacity"):
        m = F.get(doc, "by_metric", metric)
        b.add("dbtier_plan_match_devices", F.get(m, "count"), run_id=run_id, metric=metric)
        b.add("dbtier_plan_match_price", F.get(m, "price_usd"), run_id=run_id, metric=metric, currency="USD")


def plan_budget(b: Builder, run_id: str, doc: dict[str, Any]) -> None:
    for o in F.dicts(doc.get("options")):
        d = str(o.get("device"))
        b.add("dbtier_plan_budget_devices", o.get("count"), run_id=run_id, device=d)
        b.add("dbtier_plan_budget_operations_per_second", o.get("iops"), run_id=run_id, device=d)
        b.add("dbtier_plan_budget_capacity_bytes", _num(o.get("capacity_gb"), GB), run_id=run_id, device=d)


def _peaks(b: Builder, run_id: str, database: str, peaks: Any, total: Any) -> None:
    """A database's (or a sum's) peaks {read_iops: {p50, ...}, ...} and total {iops: {...}, mbps: {...}}."""
    for op in ("read", "write", "total"):
        src = total if op == "total" else peaks
        for unit, name, scale in (("iops", "dbtier_history_operations_per_second", 1.0),
                                  ("mbps", "dbtier_history_throughput_bytes_per_second", MB)):
            stats = F.get(src, unit if op == "total" else f"{op}_{unit}")
            for pct in PERCENTILES:
                b.add(name, _num(F.get(stats, pct), scale), run_id=run_id, database=database, op=op, percentile=pct)


def history_import(b: Builder, run_id: str, doc: dict[str, Any]) -> None:
    for db in F.dicts(doc.get("databases")):
        name = str(db.get("name") or "")
        _peaks(b, run_id, name, db.get("peaks"), db.get("total"))
        b.add("dbtier_history_intervals", db.get("intervals"), run_id=run_id, database=name)


def history_consolidate(b: Builder, run_id: str, doc: dict[str, Any]) -> None:
    _peaks(b, run_id, "sum", doc.get("peaks"), doc.get("total"))
    b.add("dbtier_history_intervals", doc.get("intervals"), run_id=run_id, database="sum")
    b.add("dbtier_history_consolidation_gain", doc.get("gain"), run_id=run_id)


def history_requirement(b: Builder, run_id: str, doc: dict[str, Any]) -> None:
    req = dict_at(doc, "requirement")
    pct = req.get("percentile")
    pct = f"p{pct}" if F.isnum(pct) else str(pct or "")
    for basis, src in (("measured", req), ("with_headroom", doc.get("with_headroom"))):
        src = src if isinstance(src, dict) else {}
        for op in ("read", "write"):
            b.add("dbtier_requirement_operations_per_second", src.get(f"{op}_iops"), run_id=run_id, op=op,
                  percentile=pct, basis=basis)
            b.add("dbtier_requirement_throughput_bytes_per_second", _num(src.get(f"{op}_mbps"), MB), run_id=run_id,
                  op=op, percentile=pct, basis=basis)
            b.add("dbtier_requirement_bytes_per_day", _num(src.get(f"{op}_tb_per_day"), TB), run_id=run_id, op=op,
                  basis=basis)
        b.add("dbtier_requirement_capacity_bytes", _num(src.get("capacity_gb"), GB), run_id=run_id, basis=basis)
    b.add("dbtier_requirement_headroom_ratio", req.get("headroom"), run_id=run_id)


def simulate_mrc(b: Builder, run_id: str, doc: dict[str, Any]) -> None:
    """Each policy's miss ratio at each cache size (a run that stopped before its curves: a simulate run's)."""
    if not mrc_figures.is_mrc(doc):
        simulate_run(b, run_id, doc)
        return
    for r in mrc_figures.rows(doc["mrc"]):
        b.add("dbtier_simulate_miss_ratio", r.miss_ratio, run_id=run_id, policy=r.policy, cache_bytes=r.cache_bytes)


def simulate_run(b: Builder, run_id: str, doc: dict[str, Any]) -> None:
    for counted, key in (("blocks", "read_hit_ratio"), ("requests", "request_hit_ratio")):
        b.add("dbtier_simulate_read_hit_ratio", doc.get(key), run_id=run_id, counted=counted)
    for op in ("read", "write"):
        lat = F.get(doc, "latency_us", op)
        for pct in ("p50", "p95", "p99", "p999"):
            b.add("dbtier_simulate_latency_seconds", _num(F.get(lat, pct), 1e-6), run_id=run_id, op=op,
                  percentile=pct)
    b.add("dbtier_simulate_requests", F.get(doc, "trace", "requests"), run_id=run_id)
    util = dict_at(doc, "device_util")
    for role, u in util.items():
        b.add("dbtier_simulate_device_busy_ratio", u, run_id=run_id, role=role)
    rs = dict_at(doc, "resync")
    b.add("dbtier_simulate_resync_bytes", rs.get("bytes"), run_id=run_id)
    b.add("dbtier_simulate_resync_seconds", rs.get("seconds"), run_id=run_id)
    b.add("dbtier_simulate_unprotected_seconds", rs.get("unprotected_seconds"), run_id=run_id)


def lab(b: Builder, run_id: str, doc: dict[str, Any]) -> None:
    counts: dict[str, int] = {}
    for s in F.dicts(doc.get("steps")):
        st = str(s.get("status") or "unknown")
        counts[st] = counts.get(st, 0) + 1
    for st, n in counts.items():
        b.add("dbtier_lab_steps", n, run_id=run_id, status=st)


def families(runs: Iterable[tuple[str, dict[str, Any]]]) -> list:
    """The metric families of (run_id, document) pairs (a lab's step runs are pairs of their own)."""
    b = Builder(METRICS)
    for run_id, doc in runs:
        _run(b, run_id, doc)
        fill: Callable[[Builder, str, dict[str, Any]], None] | None = registry.face_of(doc, "metrics")
        if fill is not None:
            fill(b, run_id, doc)
    return b.families()


def version() -> str:
    return __version__
