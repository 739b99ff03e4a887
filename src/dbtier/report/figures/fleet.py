"""A `probe --hosts` document's figures beyond report/figures/core.py's: one row per host, the hosts dropped, the
notice on the outstanding-I/O axes, the scaling check, the per-host table and the method lines (read by
`dbtier show`, the Markdown and HTML reports)."""

from __future__ import annotations

from typing import Any

from dbtier.report.figures.core import Table, dicts, get, is_fleet
from dbtier.core.parts import dict_at


# The per-host figures show and the Markdown report put side by side: summary key, column, digits.
FLEET_HOST_COLUMNS = (("read_iops_4k", "4K read peak IOPS", 0), ("read_mbps_seq", "seq read MB/s", 0),
                      ("read_lat_us_qd1_p50", "QD1 read p50 µs", 1), ("commit_lat_us_p50", "commit p50 µs", 1))
PER_HOST = ("outstanding I/O is per host: every host runs the same job at once, so the total outstanding at a "
            "point is outstanding × hosts")


def fleet_hosts(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per host: {host, address, port, status, checks, path, target (its target entry or {}),
    summary ({} when none)}."""
    out = []
    for h in dicts(doc.get("hosts")):
        ts = dicts(h.get("targets"))
        t = ts[0] if ts else {}
        s = dict_at(t, "summary")
        out.append({"host": str(h.get("host") or h.get("address") or "?"), "address": h.get("address"),
                    "port": h.get("port"), "status": h.get("status"), "checks": h.get("checks"),
                    "path": t.get("path"), "target": t, "summary": s})
    return out


def fleet_dropped(doc: dict[str, Any]) -> list[tuple[str, str | None]]:
    """The hosts that dropped, each with the error that names it (None when no error does)."""
    errs = {str(e.get("host")): e.get("message") for e in dicts(doc.get("errors")) if e.get("host")}
    return [(h["host"], errs.get(h["host"])) for h in fleet_hosts(doc) if h["status"] == "dropped"]


def fleet_notice(doc: dict[str, Any]) -> str | None:
    """'incomplete: host X dropped ...' when the aggregate is marked incomplete, else None."""
    if not is_fleet(doc) or doc["aggregate"].get("complete") is not False:
        return None
    dropped = fleet_dropped(doc)
    names = ", ".join(h for h, _ in dropped) or "a host"
    why = "; ".join(str(m) for _, m in dropped if m)
    return (f"incomplete: host{'s' if len(dropped) > 1 else ''} {names} dropped"
            + (f" ({why})" if why else "")
            + "; the other hosts' points are kept, and the aggregate from then on sums only the hosts that answered")


def fleet_scaling(doc: dict[str, Any]) -> dict[str, Any] | None:
    sc = get(doc, "fleet", "scaling")
    return sc if isinstance(sc, dict) and dicts(sc.get("steps")) else None


def fleet_tables(doc: dict[str, Any]) -> list[Table]:
    out = []
    rows = []
    for h in fleet_hosts(doc):
        rows.append([h["host"], h["status"], *(h["summary"].get(k) for k, _, _ in FLEET_HOST_COLUMNS)])
    agg = doc["aggregate"]
    s = dict_at(agg, "summary")
    rows.append([f"all {agg.get('hosts') or len(rows)}", agg.get("status"),
                 *(s.get(k) for k, _, _ in FLEET_HOST_COLUMNS)])
    out.append(Table("Per host (all: the aggregate)", ["host", "status", *(c for _, c, _ in FLEET_HOST_COLUMNS)],
                     rows, (0, 0, *(d for _, _, d in FLEET_HOST_COLUMNS))))
    sc = fleet_scaling(doc)
    if sc:
        out.append(Table(f"Scaling: {sc.get('test')} at {sc.get('jobs')}×{sc.get('iodepth')} per host",
                         ["hosts", "IOPS", "IOPS per host", "p99 µs", "worst host p99 µs"],
                         [[st.get("hosts"), st.get("iops"), st.get("iops_per_host"), st.get("lat_us_p99"),
                           st.get("worst_host_lat_us_p99")] for st in dicts(sc.get("steps"))], (0, 0, 0, 1, 1)))
    return out


def fleet_method(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return [("hosts", f"{doc['aggregate'].get('hosts') or len(fleet_hosts(doc))} at once through fio's client/server "
                      "mode; the aggregate sums IOPS and MB/s over the hosts at each point, its latencies come from "
                      "the hosts' merged distributions")]


def fleet_lines(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """What a fleet probe adds beyond its tables, as (what, text): that outstanding I/O is per host, the
    scaling verdict and its rule, the warnings and the test files left behind (show and Markdown)."""
    if not is_fleet(doc):
        return []
    out = [("outstanding I/O", PER_HOST.split(": ", 1)[1])]
    sc = fleet_scaling(doc)
    if sc:
        out.append(("scaling", str(sc.get("verdict") or "no verdict")))
        if sc.get("rule"):
            out.append(("scaling rule", str(sc["rule"])))
    out += [("warning", str(w)) for w in (get(doc, "fleet", "warnings") or []) if w]
    left = [str(x) for x in (get(doc, "fleet", "left_behind") or []) if x]
    if left:
        out.append(("left behind", "test files not removed: " + ", ".join(left)))
    return out


