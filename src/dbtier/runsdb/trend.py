"""A figure over time: `probe.read_iops_4k` -> one point per run (or per probe target, backup method,
history database), in start order, with the run's own spread where the document has one (repeats), grouped
by host, target or device.

The figure is named VIEW.COLUMN, a number column of a kind's view (views.VIEWS); only runs whose status is
`ok` are drawn (a failed run's partial figures would read as a change of the storage).
"""

from __future__ import annotations

from typing import Any, Sequence

import duckdb

from dbtier.core.errors import DbtierError
from dbtier.runsdb import views as V

BY = ("host", "target", "device")

# What `report --runs` draws for each kind when no --trend is given.
DEFAULT_TRENDS: dict[str, tuple[str, ...]] = {
    "probe": ("read_iops_4k", "write_iops_4k", "read_lat_us_qd1_p50", "read_mbps_seq", "commit_lat_us_p50"),
    "oltp": ("best_tps", "knee_tps", "knee_p95_ms"),
    "dss": ("total_seconds", "geomean_seconds"),
    "backup": ("dir_mbps", "null_mbps"),
    "history": ("iops_p99", "mbps_p99"),
    "plan": ("total_usd", "price_usd"),
    "advise": ("total_usd",),
    "simulate": ("read_hit_ratio", "read_p99_us"),
}


def numeric_columns(view: str) -> list[str]:
    v = V.VIEWS[view]
    return list(dict.fromkeys(k for k, t in v.item_keys + v.run_keys if t == V.N))


def parse_figure(name: str) -> tuple[str, str]:
    """'probe.read_iops_4k' -> ('probe', 'read_iops_4k'), or one error naming what is known."""
    view, dot, key = name.partition(".")
    if not dot or view not in V.VIEWS:
        raise DbtierError(f"figure {name!r}: name it VIEW.COLUMN, VIEW one of {', '.join(V.VIEWS)}",
                          "e.g. dbtier runs trend probe.read_iops_4k, or oltp.knee_tps")
    cols = numeric_columns(view)
    if key not in cols:
        texts = [k for k, t in V.VIEWS[view].item_keys + V.VIEWS[view].run_keys if t == V.T]
        why = "is text, not a number" if key in texts else "is not a figure of it"
        raise DbtierError(f"figure {name!r}: {key!r} {why}", f"the {view} figures: {', '.join(cols)}")
    return view, key


def _group(row: dict[str, Any], by: str | None) -> str:
    if by == "host":
        return row["host"] or "?"
    if by == "device":
        return row["device"] or "?"
    if by == "target":
        return row["item"] or row["run_target"] or "?"
    return ""


def series(con: duckdb.DuckDBPyConnection, figure: str, by: str | None = None, where: str | None = None,
           since: str | None = None, paths: Sequence[str] | None = None) -> dict[str, Any]:
    """{figure, view, key, label, unit, digits, better, by, points: [{run_id, path, started_at, group, item,
    host, device, value, median, min, max, n, spread_pct, change_pct}]}: change_pct against the group's
    previous point. `where` filters the kind's view; `paths` keeps only those runs."""
    view, key = parse_figure(figure)
    conds = ["f.kind = ?", "f.key = ?", "f.value IS NOT NULL", "f.status = 'ok'", "NOT f.detail"]
    params: list[Any] = [view, key]
    v = V.VIEWS[view]      # the view's column is an item's figure, the run's, or either (history's capacity)
    per_item, per_run = key in dict(v.item_keys) and v.item is not None, key in dict(v.run_keys)
    if not (per_item and per_run):
        conds.append("f.item <> ''" if per_item else "f.item = ''")
    if where:
        conds.append(f"f.path IN (SELECT path FROM {view} WHERE {V.check_where(where)})")
    if since:
        conds.append("f.started_at >= CAST(? AS TIMESTAMP)")
        params.append(since)
    if paths is not None:
        conds.append("list_contains(?, f.path)")
        params.append(list(paths))
    sql = ("SELECT f.run_id, f.path, f.started_at, f.host, f.item, coalesce(f.device, r.device) AS device, "
           "r.target AS run_target, f.value, f.median, f.min, f.max, f.n, f.spread_pct, f.label, f.unit, "
           "f.digits, f.better FROM figures f JOIN runs r ON r.path = f.path WHERE " + " AND ".join(conds)
           + " ORDER BY f.started_at NULLS LAST, f.run_id, f.item")
    try:
        cur = con.execute(sql, params)
        cols = [d[0] for d in cur.description]
        rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    except duckdb.Error as exc:
        raise DbtierError(f"runs trend {figure}: {V.first_line(exc)}", V.VIEWS_HINT) from None
    last: dict[str, float] = {}
    points = []
    for r in rows:
        g = _group(r, by)
        prev = last.get(g)
        change = (r["value"] / prev - 1) * 100 if prev not in (None, 0) else None
        last[g] = r["value"]
        points.append({"run_id": r["run_id"], "path": r["path"], "started_at": r["started_at"], "group": g,
                       "item": r["item"] or None, "host": r["host"], "device": r["device"], "value": r["value"],
                       "median": r["median"], "min": r["min"], "max": r["max"], "n": r["n"],
                       "spread_pct": r["spread_pct"], "change_pct": change})
    first = rows[0] if rows else {}
    # an item's label names the item (a backup method): the trend's is the figure's own name then
    label = first.get("label") if first else None
    if label and first.get("item") and first["item"] in label:
        label = key.replace("_", " ")
    return {"figure": figure, "view": view, "key": key, "label": label or key,
            "unit": first.get("unit"), "digits": first.get("digits") or 0, "better": first.get("better"),
            "by": by, "points": points}
