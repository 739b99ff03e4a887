"""One load from several series: the instances of a clustered database and several databases, summed.

Instances of one clustered database (Oracle RAC: AWR and DMA name them NAME/INSTANCE) write to the same
storage, so the storage carries their sum; so do several databases consolidated onto one array. How the
sum is taken depends on what the history holds:

- time series (AWR, PostgreSQL, diskstats, iostat, sar, Prometheus, CloudWatch, ...): on a common UTC
  grid (consolidate.py); a percentile of the sum is exact on that grid;
- hour-of-day statistics (DMA): per hour of day, each database's statistic for that hour added up, and
  the highest hour taken. For the maximum that is an upper bound (the instances' busiest snapshots in an
  hour need not coincide); for a percentile it is an estimate, since a percentile of a sum is not bounded
  by the sum of the percentiles in general. Said in `bound`.
- both kinds together: the time series' own peaks are added to the hour-of-day sum's (an upper bound for
  the maximum, an estimate for a percentile; said).

Pure: documents in, dicts out (the time-series grid is consolidate.py's, run by summary.py).
"""

from __future__ import annotations

import math
import re
from typing import Any, Sequence

from dbtier.core.errors import DbtierError
from dbtier.history.tables import instance_fields

METRICS = ("read_iops", "write_iops", "read_mbps", "write_mbps")
STATS = ("p50", "p95", "max")           # what DMA's hour-of-day statistics carry (no p99)
_INSTANCE = re.compile(r"^(?P<base>.+)/(?P<inst>[0-9]+)$")

HOURLY_BOUND = ("summed per hour of day from the collection's hour-of-day statistics: the max is an upper bound "
                "(the busiest snapshots of each part in an hour need not coincide); p50 and p95 are estimates (a "
                "percentile of a sum is not bounded by the sum of percentiles in general)")
MIXED_BOUND = ("hour-of-day statistics and time series together: each time series' own peak is added to the "
               "hour-of-day sum's, an upper bound for the max and an estimate for a percentile")


def cluster_of(name: str, instances: int | None) -> str:
    """The database a series belongs to: NAME of a RAC instance's NAME/INSTANCE (when the source says the
    database has several instances), else the name itself."""
    m = _INSTANCE.match(name or "")
    return m.group("base") if m and isinstance(instances, int) and instances > 1 else name


def groups(databases: Sequence[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """{database: its series (one, or one per instance)}, in first-seen order."""
    out: dict[str, list[dict[str, Any]]] = {}
    for db in databases:
        out.setdefault(cluster_of(str(db.get("name")), db.get("instances")), []).append(db)
    return out


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def hourly_sum(dbs: Sequence[dict[str, Any]], stat: str) -> dict[str, float | None]:
    """{metric: the highest hour of day of the sum of each database's `stat` for that hour}. A database with no
    figure for an hour adds nothing there; a metric no database has for any hour is None."""
    if stat not in STATS:
        raise DbtierError(f"a dma collection has no {stat} (it gives p50, p75, p90, p95 and max per hour of day)",
                          "use --percentile 95 or --percentile max")
    out: dict[str, float | None] = {}
    for m in METRICS:
        per_hour: dict[int, float] = {}
        for db in dbs:
            for h in db.get("hour_of_day") or []:
                v = _num(((h or {}).get(m) or {}).get(stat))
                if v is not None and isinstance(h.get("hour"), int):
                    per_hour[h["hour"]] = per_hour.get(h["hour"], 0.0) + v
        out[m] = max(per_hour.values()) if per_hour else None
    return out


def hourly_peaks(dbs: Sequence[dict[str, Any]]) -> dict[str, dict[str, float | None]]:
    """The sum's peaks in the import document's shape: {metric: {p50, p95, p99 (None), max}}."""
    by_stat = {s: hourly_sum(dbs, s) for s in STATS}
    return {m: {"p50": by_stat["p50"][m], "p95": by_stat["p95"][m], "p99": None, "max": by_stat["max"][m]}
            for m in METRICS}


def _sum_known(values: Sequence[Any]) -> float | None:
    known = [v for v in (_num(x) for x in values) if v is not None]
    return sum(known) if known and len(known) == len(values) else None


def hourly_consolidation(docs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """`history consolidate` of dma imports (hour-of-day statistics): the consolidation document's figures."""
    dbs = [db for d in docs for db in d.get("databases") or []]
    if not dbs:
        raise DbtierError("no databases to consolidate", "import some history first: `dbtier history import`")
    peaks = hourly_peaks(dbs)
    caps = [db.get("capacity_gb") for db in dbs]
    inst = [db.get("instances") for db in dbs if isinstance(db.get("instances"), int)]
    rows = []
    for name, members in groups(dbs).items():
        pk = hourly_peaks(members)
        rows.append({"name": name, "series": [m.get("name") for m in members],
                     "instances": members[0].get("instances"),
                     "peaks": pk, "capacity_gb": _cluster_capacity(members)})
    from dbtier.history.days import dma_mean_day
    days = [dma_mean_day(db) for db in dbs]
    tb = {k: _sum_known([d[k]["tb_per_day"] for d in days]) for k in ("read", "write")}
    reasons = {k: next((d[k]["reason"] for d in days if d[k]["reason"]), None) for k in ("read", "write")}
    return {"kind": "hourly", "method": "per hour of day", "bound": HOURLY_BOUND, "peaks": peaks,
            "total": None, "intervals": sum(int(db.get("intervals") or 0) for db in dbs),
            "capacity_gb": _sum_capacity(dbs, caps),
            **instance_fields(max(inst) if inst else None),
            "databases": rows, "runs": [d.get("_run_dir") for d in docs],
            "tb_per_day": {k: {"tb_per_day": tb[k], "reason": None if tb[k] is not None else reasons[k],
                               "method": "the sum of each database's mean day (hour-of-day averages x 3,600 s)"}
                           for k in ("read", "write")}}


def _cluster_capacity(members: Sequence[dict[str, Any]]) -> float | None:
    """A cluster's instances share one database's files: its capacity is one instance's figure, not their sum."""
    caps = [v for v in (_num(m.get("capacity_gb")) for m in members) if v is not None]
    return max(caps) if caps else None


def _sum_capacity(dbs: Sequence[dict[str, Any]], caps: Sequence[Any]) -> float | None:
    """Capacity over databases: each cluster counted once; None unless every database says."""
    per = [_cluster_capacity(ms) for ms in groups(dbs).values()]
    return sum(per) if per and all(v is not None for v in per) else None  # type: ignore[arg-type]


def database_rows(databases: Sequence[dict[str, Any]], key: str, clusters: dict[str, dict[str, float | None]],
                  tb_per_day: dict[str, float | None] | None = None) -> list[dict[str, Any]]:
    """The answer's `databases`: one row a database (a cluster's instances as one, summed), at `key` (p95, max).
    `clusters`: {cluster: {metric: figure}} of the clusters' summed series (taken on the grid or per hour of
    day); a single-instance database's figures are its own import peaks. `tb_per_day`: {series name: write TB
    a day} where known (a cluster's is the sum of its instances')."""
    out = []
    for name, members in groups(databases).items():
        if len(members) > 1 or name in clusters:
            figs = clusters.get(name) or {m: None for m in METRICS}
        else:
            figs = {m: _num(((members[0].get("peaks") or {}).get(m) or {}).get(key)) for m in METRICS}
        inst = members[0].get("instances")
        writes = [(tb_per_day or {}).get(str(m.get("name"))) for m in members]
        out.append({"name": name, "instances": inst if isinstance(inst, int) else len(members),
                    **{m: figs.get(m) for m in METRICS}, "capacity_gb": _cluster_capacity(members),
                    "write_tb_per_day": _sum_known(writes), "series": [m.get("name") for m in members]})
    return out


def mixed_peaks(hourly: dict[str, dict[str, float | None]], timed: Sequence[dict[str, Any]]
                ) -> dict[str, dict[str, float | None]]:
    """Hour-of-day peaks of some databases plus the time series' own peaks of the others (see MIXED_BOUND)."""
    out: dict[str, dict[str, float | None]] = {}
    for m in METRICS:
        out[m] = {}
        for k in ("p50", "p95", "p99", "max"):
            parts = [(hourly.get(m) or {}).get(k)] + [((db.get("peaks") or {}).get(m) or {}).get(k) for db in timed]
            out[m][k] = _sum_known(parts)
    return out
