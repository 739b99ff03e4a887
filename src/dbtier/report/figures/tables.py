"""The key tables of a result document beyond its figures (points, queries, methods, candidates, steps):
read by the Markdown report, `dbtier show` and the tests, as report/figures/core.py's figures are.
"""

from __future__ import annotations

from typing import Any

from dbtier.model.guards import doc_guards, reads_from_memory
from dbtier.model.placement import ALL_READ_STEPS
from dbtier.report.figures import mrc as mrc_figures
from dbtier.report.figures.core import (Table, backup_methods, busiest_device, children, config_name, dicts, dss_queries,
                                   fmt, get, is_fleet, isnum, kind, matrix_bests, not_measured, oltp_steps, oltp_view,
                                   point_spread, probe_knee, probe_targets, query_spread, spread_text)
from dbtier.report.figures.fleet import fleet_tables
from dbtier.results.probe import KNEE_TESTS


def tables(doc: dict[str, Any]) -> list[Table]:
    """The key tables of one document beyond its figures (points, queries, methods, candidates, steps)."""
    k = kind(doc)
    out: list[Table] = []
    if k == "probe":
        for t in probe_targets(doc):
            rows = []
            for test in KNEE_TESTS:
                kn = probe_knee(t, test)
                if kn:
                    rows.append([test, kn["outstanding"], kn["iops"], kn["p99_us"],
                                 "still rising" if kn["still_rising"] else f"{fmt(kn['last_iops'])} at "
                                 f"{fmt(kn['last_outstanding'])}"])
            if rows:
                out.append(Table(f"Where IOPS stop growing: {t.get('path')}",
                                 ["test", "knee (outstanding I/O" + (" per host)" if is_fleet(doc) else ")"),
                                  "IOPS", "p99 µs", "largest load"], rows, (0, 0, 0, 1, 0)))
        if is_fleet(doc):
            out += fleet_tables(doc)
    elif k == "bench oltp":
        bests = matrix_bests(doc)
        if bests:
            steps = oltp_steps(doc)
            memory = reads_from_memory(doc_guards(doc))
            rows = []
            for s, b in zip(steps, bests):
                kn = s.get("knee") if isinstance(s.get("knee"), dict) else {}
                unmeasured = s.get("reads_measured") is False or (memory and b["name"] in ALL_READ_STEPS)
                rows.append([b["name"], b["tps"], b["clients"], kn.get("clients"), kn.get("tps"),
                             "reads not measured" if unmeasured else None])
            out.append(Table("Placement matrix (best point of each step)",
                             ["step", "best TPS", "at clients", "knee clients", "knee TPS", "reads"], rows,
                             (0, 1, 0, 0, 1, 0)))
        v = oltp_view(doc)
        remote = not_measured(doc)
        rows = []
        for p in v["points"]:
            dev = busiest_device(p)
            rows.append([p.get("clients"), p.get("tps"), spread_text(point_spread(p), 1) or None, p.get("tpm"),
                         get(p, "lat_ms", "p50"), get(p, "lat_ms", "p95"), get(p, "lat_ms", "p99"),
                         None if "server_cpu" in remote else get(p, "cpu_util", "busy_pct"),
                         None if "server_devices" in remote else (dev or {}).get("busy_pct"), p.get("bottleneck")])
        if rows:
            out.append(Table("Sweep" + (f" (step {v['step']})" if v["step"] else ""),
                             ["clients", "TPS (median)", "TPS runs", "TPM", "p50 ms", "p95 ms", "p99 ms", "CPU %",
                              "device busy %", "bottleneck"], rows, (0, 1, 0, 0, 2, 2, 2, 0, 0, 0)))
    elif k == "bench dss":
        rows = [[f"Q{q['query']}", q.get("seconds"), spread_text(query_spread(q), 3) or None, q.get("cold_seconds"),
                 q.get("rows"), q["temp_bytes"] / 1e6 if isnum(q.get("temp_bytes")) else None,
                 q["read_bytes"] / 1e6 if isnum(q.get("read_bytes")) else None, q.get("cpu_util")]
                for q in dss_queries(doc)]
        if rows:
            out.append(Table("Per query", ["query", "seconds (warm median)", "warm runs", "cold seconds", "rows",
                                           "temp MB", "read MB", "CPU %"], rows, (0, 3, 0, 3, 0, 1, 1, 0)))
    elif k == "bench backup":
        rows = [[m["method"], m["dir_mbps"], m["null_mbps"],
                 m["dir_mbps"] / m["null_mbps"] if isnum(m["dir_mbps"]) and isnum(m["null_mbps"]) and m["null_mbps"]
                 else None, m["limit"], m["evidence"]] for m in backup_methods(doc)]
        if rows:
            out.append(Table("Backup throughput", ["method", "to directory MB/s", "to null MB/s", "dir / null",
                                                   "limiting side", "evidence"], rows, (0, 0, 0, 2, 0, 0)))
    elif k == "plan size":
        rows = [[i, config_name(c), c.get("price_usd"), c.get("capacity_gb"), c.get("read_iops"),
                 c.get("write_iops"), c.get("binding")] for i, c in enumerate(dicts(doc.get("candidates")), 1)]
        if rows:
            out.append(Table("Cheapest configurations", ["#", "configuration", "price $", "GB", "read IOPS",
                                                         "write IOPS", "binding"], rows, (0, 0, 0, 0, 0, 0, 0)))
    elif mrc_figures.is_mrc(doc):
        out += [Table(**t) for t in mrc_figures.tables(doc)]
    elif k == "lab":
        rows = [[s.get("name"), s.get("status"), s.get("seconds"), s.get("run_dir"),
                 s.get("error") or err] for s, _, err in children(doc)]
        if rows:
            out.append(Table("Steps", ["step", "status", "seconds", "run", "error"], rows, (0, 0, 0, 0, 0)))
    return out
