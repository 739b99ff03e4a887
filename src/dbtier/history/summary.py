"""From a reader's tidy table to the result document's sections (store.py writes the Parquet files).

The CLI calls these three steps (import, consolidate, requirement); each returns plain dicts for
result.json and leaves its full series in DuckDB tables that store.py writes as Parquet.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable, Sequence

import duckdb

from dbtier.core.errors import DbtierError
from dbtier.core.files import sql_str
from dbtier.history import combine
from dbtier.history import consolidate as cons
from dbtier.history import days, limits, provenance, series, split, store
from dbtier.history.sources import dma
from dbtier.history.tables import INTERVAL_COLUMNS, ReadResult, instance_fields

PERCENTILES = {"95": ("p95", 95), "99": ("p99", 99), "max": ("max", 100)}
REQUIREMENT_KEYS = ("read_iops", "write_iops", "read_mbps", "write_mbps", "capacity_gb", "percentile", "headroom",
                    "read_tb_per_day", "read_days_percentile", "read_days_counted",
                    "write_tb_per_day", "write_days_percentile", "write_days_counted", "instances", "clustered")


def summarise_import(con: duckdb.DuckDBPyConnection, res: ReadResult, top: int = 10, profile_tz: str = "UTC",
                     step: Callable[[str], None] | None = None, require_intervals: bool = True) -> dict[str, Any]:
    """Intervals, totals, peaks, top intervals, profiles. Leaves tables `intervals`, `totals`, `profiles`.
    `require_intervals`: no interval at all is an error (a batch of a fleet may have none; the fleet not)."""
    step = step or (lambda _: None)
    if res.kind == "hourly":
        doc = dma.summarise(con, res)
        doc["provenance"] = {**provenance.base(res), "basis": "hour-of-day statistics of the per-snapshot rates "
                             "(the collection's own)"}
        return doc
    inst = name_units(con, res)
    if res.kind == "counters":
        step("intervals from counters")
        series.intervals_from_counters(con, res.table, "intervals", res.wrap_bits, res.one_unit, res.absent,
                                       res.series_by, res.constant)
        _drop(con, res.table)          # memory: the counters (and the raw text behind them) are done with
        for t in res.cleanup:
            _drop(con, t)
        ev = series.events(con, "intervals_events")
    else:
        cols = ", ".join(f'"{c}"' for c in INTERVAL_COLUMNS)
        con.execute(f"CREATE OR REPLACE TABLE intervals AS SELECT {cols} FROM {res.table} WHERE seconds > 0")
        ev = {}
    shape = series.totals(con, "intervals", "totals",
                          pick="intervals_events" if res.kind == "counters" and res.one_unit else None)
    if shape["intervals"] == 0 and require_intervals:
        raise no_intervals(res.files)
    step("totals, peaks and profiles")
    if shape["same_rows"]:   # totals are the intervals (one file type a database): one pass serves both
        both = series.summarise(con, "intervals", top=top, detail=True, shape=True, also=("file_type",))
        pk = {db: v for (db,), v in both.items()}
        fts = {db: [series.file_type_item(v["file_type"], v)] for (db,), v in both.items()}
    else:
        pk = {db: v for (db,), v in series.summarise(con, "totals", top=top, shape=True).items()}
        fts = series.file_type_summary(con, "intervals")
    _check_names_and_times(res, pk, fts, list(ev))
    series.profiles(con, "totals", "profiles", profile_tz)
    holes = provenance.gaps(con, "totals", res.native_step_s)
    busy: dict[str, Any] = res.extra.get("busy") or {}
    databases = []
    for name, p in pk.items():
        e = ev.get(name, {"restarts": 0, "wraps": 0, "duplicates": 0})
        item = {"name": name, "intervals": p["intervals"], "start": p["start"], "end": p["end"],
                "peaks": {m: p["peaks"][m] for m in series.PEAK_METRICS},
                "total": {"iops": p["peaks"]["iops"], "mbps": p["peaks"]["mbps"]},
                "segments": 1 + e["restarts"], "restarts": e["restarts"], "wraps": e["wraps"],
                "gaps": holes.get(name, 0),
                "duplicates_dropped": e["duplicates"],
                "capacity_gb": res.capacity_gb.get(name),
                **instance_fields(instances_of(name, inst)),
                "top_intervals": p["top"],
                "series_shape": p["shape"],
                "file_types": fts.get(name, [])}
        if name in busy:
            item["busy"] = busy[name]      # device utilisation (busy time / elapsed), p95 and max
        databases.append(item)
    out: dict[str, Any] = {"source": res.source, "kind": res.kind, "files": res.files, "notes": list(res.notes),
                           "limitations": list(res.limitations), "profile_tz": profile_tz, "databases": databases}
    out["provenance"] = provenance.run_level(provenance.base(res), databases)
    return out


def no_intervals(files: Sequence[str]) -> DbtierError:
    names = ", ".join(files[:3]) + (" ..." if len(files) > 3 else "")
    return DbtierError(f"{names}: fewer than two snapshots of any database (or only restarts between them): "
                       "no interval to measure", "collect at least two snapshots, some minutes apart")


def name_units(con: duckdb.DuckDBPyConnection, res: ReadResult) -> dict[str, int]:
    """AWR RAC: a database whose rows carry several units (instances) is one series per instance,
    NAME/INSTANCE; the others keep their name. Done here, over every file the import reads together, so
    a batch that holds one instance of a database does not name it otherwise than the whole would.

    Returns the instances of each database as the reader names it (NAME, not NAME/INSTANCE) when the
    source's units are instances (res.instance_units), else {}: see instances_of()."""
    if not (res.unit_names or res.instance_units):
        return {}
    counts = {db: int(n) for db, n in con.execute(f"SELECT database, count(DISTINCT unit) FROM {res.keys or res.table} "
                                                  "GROUP BY database").fetchall()}
    multi = [db for db, n in counts.items() if n > 1] if res.unit_names else []
    if not multi:
        return counts if res.instance_units else {}
    inlist = ", ".join(sql_str(m) for m in multi)
    con.execute(f"""CREATE OR REPLACE VIEW {res.table}_named AS SELECT * REPLACE (
                        CASE WHEN database IN ({inlist}) THEN database || '/' || unit ELSE database END AS database)
                    FROM {res.table}""")
    res.cleanup.append(res.table)
    res.table = f"{res.table}_named"
    return counts if res.instance_units else {}


def instances_of(name: str, counts: dict[str, int]) -> int | None:
    """The instances of the database a series belongs to: `name` itself, or NAME of a RAC instance's
    NAME/INSTANCE (each instance of a 2-instance database says 2). None when the source does not say."""
    if name in counts:
        return counts[name]
    base = name.rsplit("/", 1)[0] if "/" in name else None
    n = counts.get(base) if base is not None else None
    return n if n is not None and n > 1 else None


FIRST_YEAR, LAST_YEAR = limits.FIRST_YEAR, limits.LAST_YEAR


def _check_names_and_times(res: ReadResult, pk: dict, fts: dict, others: Sequence[str] = ()) -> None:
    """Names from the files are text a person can read (a NUL, a newline or another control
    character is garbage, and would split one database in two); times are within FIRST_YEAR..LAST_YEAR.
    `others`: databases with no interval (one sample), whose names count too."""
    files = ", ".join(res.files[:3]) + (" ..." if len(res.files) > 3 else "")
    for db in others:
        if db not in pk:
            pk = {**pk, db: {}}
    for db, p in pk.items():
        names = [("database", db)] + [("file type", f.get("file_type")) for f in fts.get(db, [])]
        for what, name in names:
            if isinstance(name, str) and any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
                raise DbtierError(f"{files}: {what} name {name!r} holds a control character (binary garbage in the "
                                  "file?)", "export it again; names must be plain text")
        for k in ("start", "end"):
            t = p.get(k)
            if t and not (FIRST_YEAR <= int(t[:4]) <= LAST_YEAR):
                raise DbtierError(f"{files}: {db}: a sample time in {t[:4]} ({k} {t}): outside {FIRST_YEAR}-{LAST_YEAR}, "
                                  "a typo or a clock fault", "fix the times (or export them again)")


def _drop(con: duckdb.DuckDBPyConnection, name: str) -> None:
    for kind in ("VIEW", "TABLE"):
        try:
            con.execute(f"DROP {kind} IF EXISTS {name}")
        except duckdb.Error:
            pass


def _import_docs(docs: Sequence[dict[str, Any]]) -> None:
    seen: dict[str, str] = {}
    for d in docs:
        for db in d.get("databases") or []:
            name = db.get("name")
            if name in seen:
                raise DbtierError(f"database {name!r} is in two runs: {seen[name]} and {d['_run_dir']}",
                                  "consolidate each database once (or re-import one with --database NEWNAME)")
            seen[name] = d["_run_dir"]
    for d in docs:
        if d.get("command") != "history" or (d.get("params") or {}).get("action") != "import":
            raise DbtierError(f"{d.get('_run_dir')}: not a `dbtier history import` run "
                              f"(a {d.get('command')} {(d.get('params') or {}).get('action') or ''} run)".rstrip(),
                              "pass run directories written by `dbtier history import`")


_TOTALS_COLS = ["database", "start", "end", "seconds", "read_iops", "write_iops", "iops", "read_mbps", "write_mbps",
                "mbps"]


def load_totals(con: duckdb.DuckDBPyConnection, docs: Sequence[dict[str, Any]], table: str = "all_totals") -> list[str]:
    """Every run's totals (its file or parts) as one view; a database name in two runs is an error.
    Returns the same totals as batches of whole databases, each at most store.batch_bytes() of Parquet
    (a part never split): what consolidate puts on the grid one at a time."""
    _import_docs(docs)
    for d in docs:   # a foreign or truncated totals.parquet is refused by name here, not deep in a query
        store.check_parquet(con, d["_run_dir"], store.TOTALS_FILE, _TOTALS_COLS)
    files = [p for d in docs for p in store.series_files(d["_run_dir"], store.TOTALS_FILE)]
    # A view: the Parquet files are read where needed, never copied into memory whole.
    con.execute(f"CREATE OR REPLACE VIEW {table} AS {_select_totals(files)}")
    # Parquet is a fraction of the rows' size in memory, and the grid's window holds them twice (a
    # quarter of an import's batch: 10,000 databases at an eighth peaked at 0.5 GB)
    groups = store.plan_batches([p.stat().st_size for p in files], store.batch_bytes() // 4)
    return [f"({_select_totals([files[i] for i in g])})" for g in groups]


def _select_totals(files: Sequence[Any]) -> str:
    cols = ", ".join(f'"{c}"' for c in _TOTALS_COLS)
    return f"SELECT {cols} FROM {store.read_sql(files)}"


def own_sum_of_peaks(docs: Sequence[dict[str, Any]], percentile: str = "max") -> dict[str, Any]:
    """Each database's own peak (its import series, at `percentile` of its intervals), added up: what sizing
    each database alone asks for. A database whose import lacks the figure makes that sum None (and named)."""
    key = PERCENTILES[percentile][0]
    out: dict[str, Any] = {"percentile": percentile}
    for m in ("iops", "mbps"):
        vals = {db.get("name"): ((db.get("total") or {}).get(m) or {}).get(key)
                for d in docs for db in d.get("databases") or []}
        missing = sorted(str(n) for n, v in vals.items() if not (isinstance(v, (int, float)) and math.isfinite(v)))
        out[m] = None if missing else float(sum(float(v) for v in vals.values() if v is not None))
        if missing:
            out[f"{m}_missing"] = missing[:10]
    return out


def only(docs: Sequence[dict[str, Any]], names: Sequence[str] | None) -> list[dict[str, Any]]:
    """The documents with only the databases `names` (a name, or a clustered database's NAME for all its
    NAME/INSTANCE series) left in; None keeps all. A name none of them holds is an error naming them."""
    if names is None:
        return list(docs)
    want = set(names)
    out = []
    for d in docs:
        dbs = [db for db in d.get("databases") or []
               if db.get("name") in want or combine.cluster_of(str(db.get("name")), db.get("instances")) in want]
        out.append({**d, "databases": dbs, "_subset": len(dbs) != len(d.get("databases") or [])})
    found = {db.get("name") for d in out for db in d["databases"]} | \
        {combine.cluster_of(str(db.get("name")), db.get("instances")) for d in out for db in d["databases"]}
    lost = sorted(want - found)
    if lost:
        have = ", ".join(sorted({str(db.get("name")) for d in docs for db in d.get("databases") or []})[:10])
        raise DbtierError(f"no database {lost[0]!r} in {', '.join(str(d.get('_run_dir')) for d in docs)} "
                          f"(it has {have})", "give one of those names")
    return [d for d in out if d["databases"]]


def consolidation(con: duckdb.DuckDBPyConnection, docs: Sequence[dict[str, Any]], step: int | None, top: int,
                  percentile: str = "max", work: Path | None = None, full_grid: bool = False) -> dict[str, Any]:
    """The sum of every database of `docs` (see combine.py for how each kind of history is summed): time series
    on a common grid (leaves `grid`, `sum_series` and `sum_profiles` in `con`), hour-of-day statistics per hour
    of day, both together as an upper bound. Each document's `databases` may be a subset (only())."""
    _import_docs(docs)
    hourly = [d for d in docs if d.get("kind") == "hourly"]
    timed = [d for d in docs if d.get("kind") != "hourly"]
    if not timed:
        return combine.hourly_consolidation(hourly)
    if not hourly:
        return summarise_consolidation(con, timed, step, top, percentile, work, full_grid)
    part = combine.hourly_consolidation(hourly)
    tdbs = [db for d in timed for db in d.get("databases") or []]
    part["peaks"] = combine.mixed_peaks(part["peaks"], tdbs)
    part.update(kind="mixed", method="hour-of-day sum plus the time series' own peaks", bound=combine.MIXED_BOUND)
    part["databases"] += [{"name": n, "series": [m.get("name") for m in ms], "instances": ms[0].get("instances"),
                           "peaks": ms[0].get("peaks") if len(ms) == 1 else None,
                           "capacity_gb": ms[0].get("capacity_gb")} for n, ms in combine.groups(tdbs).items()]
    caps = [db.get("capacity_gb") for db in part["databases"]]
    part["capacity_gb"] = sum(caps) if caps and all(isinstance(c, (int, float)) for c in caps) else None
    inst = [db.get("instances") for d in docs for db in d.get("databases") or [] if isinstance(db.get("instances"), int)]
    part.update(instance_fields(max(inst) if inst else None))
    part["runs"] = [d.get("_run_dir") for d in docs]
    for k in ("read", "write"):     # each time series' own days at the percentile, added to the mean days
        got = [days.of_run(d, db, 95)[0][k]["tb_per_day"] for d in timed for db in d.get("databases") or []]
        base = part["tb_per_day"][k]["tb_per_day"]
        ok = base is not None and all(isinstance(g, (int, float)) for g in got)
        part["tb_per_day"][k] = {"tb_per_day": base + sum(got) if ok else None,
                                 "reason": None if ok else "a database's days are not known",
                                 "method": "the dma databases' mean days plus the time series' p95 days"}
    return part


def cluster_peaks(con: duckdb.DuckDBPyConnection, docs: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """{clustered database: the peaks of its instances' sum} of time-series imports, each cluster on its own
    grid (its instances' overlap). Runs before the whole consolidation, whose grid tables it would replace."""
    out: dict[str, dict[str, Any]] = {}
    for d in docs:
        for name, members in combine.groups(d.get("databases") or []).items():
            if len(members) < 2:
                continue
            load_totals(con, [d], table="_cluster_totals")
            inlist = ", ".join(sql_str(str(m.get("name"))) for m in members)
            con.execute(f"CREATE OR REPLACE VIEW _cluster_sel AS SELECT * FROM _cluster_totals "
                        f"WHERE database IN ({inlist})")
            cons.consolidate(con, "_cluster_sel", grid="_cluster_grid", out_sum="_cluster_sum",
                             shape=cons.shape_of_imports(members))
            pk = series.peaks(con, "_cluster_sum", by=None)[None]
            out[name] = {m: pk["peaks"][m] for m in series.PEAK_METRICS}
    return out


def summarise_consolidation(con: duckdb.DuckDBPyConnection, docs: Sequence[dict[str, Any]], step: int | None,
                            top: int, percentile: str = "max", work: Path | None = None,
                            full_grid: bool = False) -> dict[str, Any]:
    """`work`: a directory for the grid's batches (see consolidate.consolidate); without it, one pass.
    `full_grid`: leave every database's cells in `grid` (else the drivers' may be all it holds)."""
    clusters = cluster_peaks(con, docs)
    batches = load_totals(con, docs)
    if any(d.get("_subset") for d in docs):       # some databases of a run: one pass over those, filtered
        inlist = ", ".join(sql_str(str(db.get("name"))) for d in docs for db in d.get("databases") or [])
        con.execute(f"CREATE OR REPLACE VIEW sel_totals AS SELECT * FROM all_totals WHERE database IN ({inlist})")
        table, batches, work = "sel_totals", [], None
    else:
        table = "all_totals"
    r = cons.consolidate(con, table, step=step, top=top, grid="grid", out_sum="sum_series",
                         shape=cons.shape_of_imports([db for d in docs for db in d.get("databases") or []]),
                         batches=batches if work is not None else (), work=work, full_grid=full_grid)
    # Two sums of peaks: each database's own series (finer intervals keep its true spikes) and on the grid
    # (each database's highest cell). gain compares like with like: the grid's sum over the grid's peak.
    r["sum_of_peaks_grid"] = r.pop("sum_of_peaks")
    r["sum_of_peaks"] = own_sum_of_peaks(docs, percentile)
    r["gain_uses"] = "sum_of_peaks_grid / peak_of_sum (both on the common grid)"
    pk = series.peaks(con, "sum_series", by=None)[None]
    r["peaks"] = {m: pk["peaks"][m] for m in series.PEAK_METRICS}
    r["total"] = {"iops": pk["peaks"]["iops"], "mbps": pk["peaks"]["mbps"]}
    r["intervals"] = pk["intervals"]
    caps = {db["name"]: db.get("capacity_gb") for d in docs for db in d.get("databases") or []}
    known = [v for v in caps.values() if isinstance(v, (int, float))]
    r["capacity_gb"] = sum(known) if known and len(known) == len(caps) else None
    if known and len(known) != len(caps):
        r["capacity_note"] = (f"capacity known for {len(known)} of {len(caps)} databases "
                              f"({sum(known):.1f} GB); give --capacity-gb to `history requirement`")
    r.update(consolidated_instances(docs, r.get("databases") or []))
    r["clusters"] = clusters
    r["kind"] = "series"
    r["method"] = "peak of the sum on a common UTC grid"
    r["bound"] = None
    r["runs"] = [d["_run_dir"] for d in docs]
    con.execute("CREATE OR REPLACE VIEW sum_named AS SELECT 'sum' AS database, * FROM sum_series")
    series.profiles(con, "sum_named", "sum_profiles")
    return r


def consolidated_instances(docs: Sequence[dict[str, Any]], grid_dbs: list[dict[str, Any]]) -> dict[str, Any]:
    """A consolidation's `instances` (the largest of its databases': the storage must serve the most
    clustered of them; None when no database's import says) and `clustered`; each of `grid_dbs` (the
    consolidation document's databases[]) gets its own `instances` from its import."""
    own = {db.get("name"): db.get("instances") for d in docs for db in d.get("databases") or []}
    for g in grid_dbs:
        g["instances"] = own.get(g.get("name"))
    known = [n for n in own.values() if isinstance(n, int) and not isinstance(n, bool)]
    out = instance_fields(max(known) if known else None)
    out["instances_unknown"] = len(own) - len(known)
    return out


def requirement(doc: dict[str, Any], percentile: str, headroom: float, capacity_gb: float | None = None,
                database: str | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """(requirement, where it came from) from an import run (one database) or a consolidation run.

    The rates are the measured percentile (no headroom added: `headroom` travels with them and the
    planner applies it); capacity_gb is what the source says is allocated (0 when unknown)."""
    if percentile not in PERCENTILES:
        raise DbtierError(f"--percentile {percentile}: not one of 95, 99, max", "use --percentile 95, 99 or max")
    if not (isinstance(headroom, (int, float)) and math.isfinite(headroom) and 0 <= headroom <= 10):
        raise DbtierError(f"--headroom {headroom}: must be between 0 and 10 (0.3 = 30% on top)", "e.g. --headroom 0.3")
    key, pnum = PERCENTILES[percentile]
    params = doc.get("params") or {}
    action = params.get("action")
    run_dir = doc.get("_run_dir")
    if doc.get("command") != "history" or action not in ("import", "consolidate"):
        raise DbtierError(f"{run_dir}: not a `dbtier history import` or `consolidate` run",
                          "pass a run directory written by one of them")
    what: Any
    kind: str | None
    basis: str | None
    if action == "consolidate":
        peaks, cap, what = doc.get("peaks") or {}, doc.get("capacity_gb"), consolidated_what(doc)
        kind = "hourly" if doc.get("kind") in ("hourly", "mixed") else "consolidate"
        db = None
        inst, has_inst = doc.get("instances"), "instances" in doc
    else:
        dbs = doc.get("databases") or []
        if database:
            dbs = [d for d in dbs if d.get("name") == database]
            if not dbs:
                names = ", ".join(d.get("name") for d in doc.get("databases") or [])
                raise DbtierError(f"{run_dir}: no database {database!r} (it has {names})", "give one of those names")
        if len(dbs) != 1:
            raise DbtierError(f"{run_dir}: {len(dbs)} databases in this import; a requirement is for one database "
                              "or one consolidation",
                              f"run `dbtier history consolidate {run_dir}` and take the requirement from that run, "
                              "or choose one with --database NAME")
        db = dbs[0]
        peaks, cap, what = db.get("peaks") or {}, db.get("capacity_gb"), db.get("name")
        kind = doc.get("kind")
        inst, has_inst = db.get("instances"), "instances" in db
    out: dict[str, Any] = {}
    absent: dict[str, str] = {}
    for m in ("read_iops", "write_iops", "read_mbps", "write_mbps"):
        v = (peaks.get(m) or {}).get(key)
        if v is None and kind == "hourly" and key == "p99":
            raise DbtierError(f"{run_dir}: a dma collection has no p99 (it gives p50, p75, p90, p95 and max per "
                              "hour of day)", "use --percentile 95 or --percentile max")
        # A rate the source does not carry stays missing (null): a 0 would read as "measured: none".
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
        out[m] = float(v) if ok and v is not None else None
        if not ok:
            absent[m] = f"the {doc.get('source') or 'history'} data has no {m.replace('_', ' ')} {key}"
    if capacity_gb is not None:
        out["capacity_gb"] = float(capacity_gb)
    elif isinstance(cap, (int, float)) and not isinstance(cap, bool) and math.isfinite(cap):
        out["capacity_gb"] = float(cap)
    else:
        out["capacity_gb"] = None
        absent["capacity_gb"] = "the source does not say the allocated size; give --capacity-gb"
    out["percentile"] = pnum
    out["headroom"] = float(headroom)
    if action == "consolidate" and kind == "hourly":     # summed per hour of day: the document has its days
        figs = {m: {"percentile": None, "days_counted": None, "partial_dropped": 0,
                    **((doc.get("tb_per_day") or {}).get(m) or {"tb_per_day": None, "reason": "not in the run"})}
                for m in days.METRICS}
        tz = "UTC"
    else:
        figs, tz = days.of_run(doc, db, pnum)
    for m in days.METRICS:
        f = figs[m]
        out[f"{m}_tb_per_day"] = f["tb_per_day"]
        out[f"{m}_days_percentile"] = f["percentile"]
        out[f"{m}_days_counted"] = f["days_counted"]
        if f["tb_per_day"] is None:
            absent[f"{m}_tb_per_day"] = f["reason"] or f"no {m} bytes a day"
    ok = isinstance(inst, int) and not isinstance(inst, bool) and inst > 0
    out.update(instance_fields(inst if ok else None))
    if not ok:
        absent["instances"] = (
            "the import run predates `instances` (import it again to have them)" if not has_inst else
            "none of the consolidated databases' imports says how many instances run it" if kind == "consolidate" else
            f"the {doc.get('source') or 'history'} data does not say how many instances run the database "
            "(a cluster sharing its storage cannot be told)")
    hourly = kind == "hourly"
    if action == "consolidate" and hourly:
        basis = f"{key} of the sum per hour of day" + (" and of the time series" if doc.get("kind") == "mixed" else "")
    elif action == "consolidate":
        step = (doc.get("grid") or {}).get("step_seconds")
        basis = f"{key} of the sum on the common {provenance.duration(step)} grid" if step else None
    else:
        basis = provenance.statistic(doc.get("provenance"), key) if not hourly else \
            f"{key} of the hour-of-day statistics (the collection's own)"
    source = {"run_dir": run_dir, "action": action, "source": doc.get("source"), "of": what,
              "statistic": key, "basis": basis,
              "semantics": (doc.get("provenance") or {}).get("semantics") if action == "import" else None, "capacity_from": "--capacity-gb" if capacity_gb is not None else
              ("the source" if out["capacity_gb"] is not None else "unknown (no capacity requirement)"),
              "bound": (doc.get("bound") if action == "consolidate" else
                        dma.DMA_LIMITATION if hourly else None),
              "days_method": ("mean day from hour-of-day averages (the sum of the 24 hours' mean rates x 3,600 s)"
                              if hourly else f"{key} of the per-day bytes, over calendar days in {tz}"
                              + (" (the sum on the common grid)" if kind == "consolidate" else "")),
              "days_tz": None if hourly else tz,
              "days_rule": None if hourly else (f"a day covered for at least {days.DAY_MIN_COVER:.0%} is scaled to "
                                                "24 h (bytes x 86,400 / seconds covered); less is left out"),
              "read_days_partial_dropped": figs["read"]["partial_dropped"],
              "write_days_partial_dropped": figs["write"]["partial_dropped"],
              "absent": absent}
    source["notes"] = []
    if action == "import" and not hourly and db is not None:    # one basis: the parts, where above the totals
        check = split.parts_vs_totals(doc, str(db.get("name")), key)
        out, source["notes"] = split.consistent_basis(out, check)
        source["parts_vs_totals"] = check
    return {k: out[k] for k in REQUIREMENT_KEYS}, source


MAX_PARTS_CHECKED = 50     # databases of a sum whose file types are checked against their totals (a read each)


def sum_on_parts(req: dict[str, Any], docs: Sequence[dict[str, Any]], key: str) -> tuple[dict[str, Any], list[str]]:
    """A sum's requirement on the same basis as one database's (requirement()): where a database's file types
    add up to more than its totals at `key`, the difference is added to the sum (an upper bound: the parts'
    peak need not fall on the sum's). Returns the figures and a note per such database."""
    out, notes = dict(req), []
    dbs = [(d, db) for d in docs if d.get("kind") != "hourly" for db in d.get("databases") or []]
    for d, db in dbs[:MAX_PARTS_CHECKED]:
        check = split.parts_vs_totals(d, str(db.get("name")), key)
        if not check or not check.get("disagree"):
            continue
        added = []
        for m in check["disagree"]:
            f = (check.get("metrics") or {}).get(m) or {}
            if out.get(m) is not None and f.get("parts") is not None and f.get("totals") is not None:
                out[m] += f["parts"] - f["totals"]
                added.append(f"{f['parts'] - f['totals']:,.1f} {m.replace('_', ' ').replace('mbps', 'MB/s').replace('iops', 'IOPS')}")
        note = str(check.get("note") or "").replace("; sized from the larger", "")
        notes.append(f"{db.get('name')}: {note}; the sum adds the difference ({', '.join(added)})")
    if len(dbs) > MAX_PARTS_CHECKED:
        notes.append(f"file types checked against the totals for the first {MAX_PARTS_CHECKED} of {len(dbs)} "
                     "databases only")
    return out, notes


def consolidated_what(doc: dict[str, Any]) -> str:
    """What a consolidation sums, in words: "PRODRAC (2 instances summed)" or "sum of 3 databases"."""
    names: dict[str, int] = {}
    for db in doc.get("databases") or []:
        series_ = db.get("series") or [db.get("name")]
        name = combine.cluster_of(str(db.get("name")), db.get("instances"))
        names[name] = names.get(name, 0) + len(series_)
    if len(names) == 1:
        (name, n), = names.items()
        return f"{name} ({n} instances summed)" if n > 1 else name
    return f"sum of {len(names)} databases"


def with_headroom(req: dict[str, Any]) -> dict[str, float | None]:
    """Each figure of a `requirement` with its headroom on top (what the planner will size for);
    a missing figure stays missing."""
    return {k: None if req.get(k) is None else req[k] * (1 + req["headroom"]) for k in
            ("read_iops", "write_iops", "read_mbps", "write_mbps", "capacity_gb", "read_tb_per_day", "write_tb_per_day")
            if k in req}
