"""A run's time series as metric families with timestamps (dbtier export series), for
`promtool tsdb create-blocks-from openmetrics`: every series' samples together and in time order.

What each kind has, and where its times come from (`time_basis`, kept in the export's document):
- history import / consolidate: the Parquet intervals (totals.parquet per database, sum.parquet for a
  consolidation), each rate stamped at its interval's end (as Prometheus' rate() is): the history's own
  clock, UTC;
- probe: each fio point in the order run, stamped at the run's start plus the ramp and runtime of the
  points before it and its own (fio's times: setup between points is not counted, so a stamp is early by
  that much);
- bench oltp: each per-second sample of a point, stamped at the run's start plus its offset into the point:
  the points of a sweep share one origin (one series per clients count and step), to be laid over each
  other; they ran one after the other;
- simulate: the timeline's buckets, stamped at the run's start plus the bucket's end in trace time.
Other kinds have no series. A sample whose value is missing (NULL, NaN) is left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

from dbtier.core.errors import DbtierError
from dbtier.export.families import SERIES, Builder, finite
from dbtier.export.metrics import MB, epoch_s
from dbtier.report.figures import core as F
from dbtier.results import kinds, registry

HISTORY_OPS = (("read", "read_iops", "read_mbps"), ("write", "write_iops", "write_mbps"), ("total", "iops", "mbps"))

BASIS = {
    "history": "the intervals' own times (UTC), each rate stamped at its interval's end",
    "probe": "the run's start plus the fio ramp and runtime of the points run up to and including each one",
    "bench oltp": "the run's start plus each sample's offset into its point (the points share one origin)",
    "simulate": "the run's start plus each timeline bucket's end in trace time",
}


class _Series:
    """Samples of one series, kept strictly increasing in time (a sample at or before the last is dropped:
    the OpenMetrics parser and promtool refuse one)."""

    def __init__(self, b: Builder, name: str, labels: dict[str, Any]):
        self.b, self.name, self.labels = b, name, labels
        self.first: float | None = None
        self.last: float | None = None
        self.count = 0

    def add(self, t: float, value: Any) -> None:
        if not finite(value) or (self.last is not None and t <= self.last):
            return
        if self.b.add(self.name, value, timestamp=round(t, 6), **self.labels):
            self.first = t if self.first is None else self.first
            self.last, self.count = t, self.count + 1


def _probe(b: Builder, run_id: str, doc: dict[str, Any], start: float) -> list[_Series]:
    out = []
    for j, t in enumerate(F.probe_targets(doc)):
        target = str(t.get("path") or f"target {j + 1}")
        clock, stamped = start, []
        for p in F.dicts(t.get("points")):
            clock += sum(x for x in (p.get("ramp_s"), p.get("runtime_s")) if F.isnum(x))
            if isinstance(p.get("test"), str):
                stamped.append((clock, p))
        for test in dict.fromkeys(p["test"] for _, p in stamped):
            pts = [(ts, p) for ts, p in stamped if p["test"] == test]
            lab = {"run_id": run_id, "target": target, "test": test}
            for name, get in (("dbtier_series_probe_operations_per_second", lambda p: p.get("iops")),
                              ("dbtier_series_probe_throughput_bytes_per_second", lambda p: p.get("bw_bytes_per_s")),
                              ("dbtier_series_probe_outstanding", lambda p: p.get("outstanding"))):
                s = _Series(b, name, lab)
                for ts, p in pts:
                    s.add(ts, get(p))
                out.append(s)
            for pct in ("p50", "p99"):
                s = _Series(b, "dbtier_series_probe_latency_seconds", {**lab, "percentile": pct})
                for ts, p in pts:
                    v = F.get(p, "lat_us", pct)
                    s.add(ts, v * 1e-6 if F.isnum(v) else None)
                out.append(s)
    return out


def _oltp(b: Builder, run_id: str, doc: dict[str, Any], start: float) -> list[_Series]:
    steps = [(str(s.get("name") or f"step {k + 1}"), F.oltp_points(s.get("points")))
             for k, s in enumerate(F.oltp_steps(doc))] or [("", F.oltp_points(doc.get("points")))]
    out: list[_Series] = []
    seen = set()
    for step, points in steps:
        for p in points:
            key = (step, p.get("clients"))
            samples = [x for x in F.dicts(p.get("series")) if F.isnum(x.get("t_s"))]
            if key in seen or not samples:
                continue
            seen.add(key)
            lab = {"run_id": run_id, "step": step, "clients": p.get("clients")}
            s = _Series(b, "dbtier_series_oltp_cpu_busy_ratio", lab)
            for x in samples:
                v = F.get(x, "cpu", "busy_pct")
                s.add(start + x["t_s"], v / 100 if F.isnum(v) else None)
            out.append(s)
            devices = list(dict.fromkeys(d for x in samples for d in (x.get("devices") or {})))
            for dev in devices:
                out += _oltp_device(b, {**lab, "device": dev}, samples, start)
    return out


def _oltp_device(b: Builder, lab: dict[str, Any], samples: list[dict[str, Any]], start: float) -> list[_Series]:
    out = []
    for op in ("read", "write"):
        s = _Series(b, "dbtier_series_oltp_device_operations_per_second", {**lab, "op": op})
        for x in samples:
            s.add(start + x["t_s"], F.get(x, "devices", lab["device"], f"{op}_iops"))
        out.append(s)
    for op in ("read", "write"):    # the sample's bytes over the time since the one before
        s = _Series(b, "dbtier_series_oltp_device_throughput_bytes_per_second", {**lab, "op": op})
        prev = 0.0
        for x in samples:
            v, dt = F.get(x, "devices", lab["device"], f"{op}_bytes"), x["t_s"] - prev
            s.add(start + x["t_s"], v / dt if F.isnum(v) and dt > 0 else None)
            prev = x["t_s"]
        out.append(s)
    s = _Series(b, "dbtier_series_oltp_device_busy_ratio", lab)
    for x in samples:
        v = F.get(x, "devices", lab["device"], "busy_pct")
        s.add(start + x["t_s"], v / 100 if F.isnum(v) else None)
    out.append(s)
    return out


def _simulate(b: Builder, run_id: str, doc: dict[str, Any], start: float) -> list[_Series]:
    tl = F.get(doc, "simulation", "timeline")
    width = F.get(tl, "bucket_s")
    buckets = [x for x in F.dicts(F.get(tl, "series")) if F.isnum(x.get("t_s"))]
    if not F.isnum(width) or width <= 0 or not buckets:
        return []
    lab = {"run_id": run_id}
    rate = _Series(b, "dbtier_series_simulate_requests_per_second", lab)
    mean = _Series(b, "dbtier_series_simulate_read_latency_seconds", {**lab, "statistic": "mean"})
    p99 = _Series(b, "dbtier_series_simulate_read_latency_seconds", {**lab, "statistic": "p99"})
    hits = _Series(b, "dbtier_series_simulate_read_hit_ratio", lab)
    for x in buckets:
        rate.add(start + x["t_s"] + width, x["requests"] / width if F.isnum(x.get("requests")) else None)
    for s, key in ((mean, "read_mean_us"), (p99, "read_p99_us")):
        for x in buckets:
            v = x.get(key)
            s.add(start + x["t_s"] + width, v * 1e-6 if F.isnum(v) else None)
    for x in buckets:
        hits.add(start + x["t_s"] + width, x.get("read_hit_ratio"))
    return [rate, mean, p99, hits]


def _history(b: Builder, run_id: str, doc: dict[str, Any], name: str, database: str) -> list[_Series]:
    """The history's intervals from the Parquet file `name` beside its result.json, per database (`database`:
    the SQL that names it, its column or a constant)."""
    from dbtier.history import store
    run_dir = doc.get("_run_dir")
    if not isinstance(run_dir, str):
        return []
    paths = store.series_files(run_dir, name)
    if not paths:
        raise DbtierError(f"{run_dir}: no {name} beside its result.json: the history's intervals are missing",
                          "export the run directory `dbtier history` wrote (its Parquet files with it), or re-run it")
    import duckdb
    sql = (f'SELECT {database} AS database, epoch_us("end") / 1e6 AS t, read_iops, write_iops, iops, read_mbps, '
           f'write_mbps, mbps FROM {store.read_sql(paths)} ORDER BY 1, 2')
    try:
        with duckdb.connect() as con:
            rows = con.execute(sql).fetchall()
    except duckdb.Error as exc:
        raise DbtierError(f"{run_dir}: cannot read {name}: {str(exc).splitlines()[0]}",
                          "re-run the history command that wrote it (the file is damaged or not dbtier's)") from None
    out = []
    by_db: dict[str, list[tuple]] = {}
    for r in rows:
        by_db.setdefault(str(r[0]), []).append(r)
    for database, rs in by_db.items():
        for col, (op, _iops_k, _mbps_k) in enumerate(HISTORY_OPS):
            s = _Series(b, "dbtier_series_history_operations_per_second",
                        {"run_id": run_id, "database": database, "op": op})
            for r in rs:
                s.add(r[1], r[2 + col])
            out.append(s)
        for col, (op, _, _) in enumerate(HISTORY_OPS):
            s = _Series(b, "dbtier_series_history_throughput_bytes_per_second",
                        {"run_id": run_id, "database": database, "op": op})
            for r in rs:
                v = r[5 + col]
                s.add(r[1], v * MB if v is not None else None)
            out.append(s)
    return out


def history_import(b: Builder, run_id: str, doc: dict[str, Any], start: float | None) -> list[_Series]:
    """Each database's totals (totals.parquet)."""
    from dbtier.history.store import TOTALS_FILE
    return _history(b, run_id, doc, TOTALS_FILE, "database")


def history_consolidate(b: Builder, run_id: str, doc: dict[str, Any], start: float | None) -> list[_Series]:
    """The consolidation's sum (sum.parquet)."""
    from dbtier.history.store import SUM_FILE
    return _history(b, run_id, doc, SUM_FILE, "'sum'")


@dataclass(frozen=True)
class Source:
    """A kind's time series (its `series` face, dbtier.results.kinds): what draws them, from the run's start
    when `clocked` (a run without one has none), and where their times come from (a key of BASIS)."""
    draw: Callable[[Builder, str, dict[str, Any], Any], list[_Series]]
    basis: str
    clocked: bool = True


PROBE = Source(_probe, "probe")
OLTP = Source(_oltp, "bench oltp")
SIMULATE = Source(_simulate, "simulate")
HISTORY_IMPORT = Source(history_import, "history", clocked=False)
HISTORY_CONSOLIDATE = Source(history_consolidate, "history", clocked=False)


def families(runs: Iterable[tuple[str, dict[str, Any]]]) -> tuple[list, list[dict[str, Any]]]:
    """(metric families, one record per run: {run_id, kind, series, samples, first, last, time_basis})."""
    b = Builder(SERIES)
    records = []
    for run_id, doc in runs:
        start = epoch_s(doc.get("started_at"))
        src: Source | None = registry.face_of(doc, "series")
        if src is None or (src.clocked and start is None):
            made, basis = [], None
        else:
            made, basis = src.draw(b, run_id, doc, start), src.basis
        made = [s for s in made if s.count]
        records.append({"run_id": run_id, "kind": kinds.label_of(doc), "series": len(made),
                        "samples": sum(s.count for s in made),
                        "first": min((s.first for s in made), default=None),   # type: ignore[type-var]
                        "last": max((s.last for s in made), default=None),     # type: ignore[type-var]
                        "time_basis": BASIS.get(basis) if made and basis else None})
    return b.families(), records
