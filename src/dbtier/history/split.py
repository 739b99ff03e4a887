"""The requirement per file type: WAL (or redo) apart from the data files, temp apart from both, where the
import's source tells them apart (PostgreSQL 18's pg_stat_io has WAL rows; 16 and 17 with pg_stat_wal;
AWR's file types; a Prometheus or diskstats import's devices).

Each file type's figures are its own percentile over its own intervals (read and write each): they do not
add up to the database's, whose peak intervals need not be any one file type's. Only the `part` file types
(those the database's figures add up) are listed; a `detail` breakdown (fsyncs, per-database reads) is not.

Where the source gives both the parts and the database's totals (AWR's file-type statistics beside its
system statistics), the two can disagree: `parts_vs_totals` compares the parts' sum with the totals over
the same intervals and says so, and `consistent_basis` raises the requirement to the larger of the two.
"""

from __future__ import annotations

from typing import Any


from dbtier.core.errors import DbtierError
from dbtier.core.files import sql_str
from dbtier.history import store

REIMPORT = "re-run the `dbtier history import` that wrote it"
METRICS = ("read_iops", "write_iops", "read_mbps", "write_mbps")


def by_file_type(doc: dict[str, Any], database: str, key: str) -> dict[str, dict[str, float | None]] | None:
    """{file type: {read_iops, write_iops, read_mbps, write_mbps, intervals}} at `key` (p95, p99, max) of
    one database of an import run, or None when it has fewer than two file types that add up."""
    run_dir = doc.get("_run_dir")
    if not run_dir or not store.series_files(run_dir, store.INTERVALS_FILE):
        return None
    q = {"p95": 0.95, "p99": 0.99}.get(key)
    aggs = ", ".join((f"quantile_cont({m}, {q})" if q else f"max({m})") for m in METRICS)
    with store.reading(run_dir, "intervals", REIMPORT) as con:
        store.check_parquet(con, run_dir, store.INTERVALS_FILE, ["database", "file_type", "role", *METRICS])
        rows = con.execute(f"""SELECT file_type, count(*), {aggs} FROM {store.parquet(run_dir, store.INTERVALS_FILE)}
                               WHERE database = {sql_str(database)} AND role = 'part' AND "end" > start
                               GROUP BY file_type ORDER BY file_type""").fetchall()
    if len(rows) < 2:
        return None
    return {str(ft): {"intervals": int(n), **{m: (None if v is None else float(v)) for m, v in zip(METRICS, vals)}}
            for ft, n, *vals in rows}


# Parts above the totals by more than both of these is a disagreement; less is rounding (or the totals'
# own sampling), and parts below the totals is normal where the source does not break every I/O down.
DISAGREE_RATIO = 0.05
DISAGREE_FLOOR = {"read_iops": 1.0, "write_iops": 1.0, "read_mbps": 0.1, "write_mbps": 0.1}
QUANTILES = {"p95": 0.95, "p99": 0.99, "max": None}
BASIS = "the larger of the two per figure"
_SOURCE_NAMES = {"awr": "AWR", "sqlserver": "SQL Server", "postgres": "PostgreSQL", "prometheus": "Prometheus",
                 "cloudwatch": "CloudWatch", "azure": "Azure Monitor"}
_PART_NOUNS = {"diskstats": "devices", "iostat": "devices", "sar": "devices", "prometheus": "devices",
               "cloudwatch": "volumes", "azure": "disks"}


def parts_vs_totals(doc: dict[str, Any], database: str, key: str) -> dict[str, Any] | None:
    """The `part` file types' sum against the database's totals at `key` (p95, p99, max) over the intervals
    both have (same database, start and end), per metric; None when the database has fewer than two part
    file types or the run has no intervals.parquet.

    {"metrics": {m: {"parts", "totals", "disagree"}}, "disagree": [m, ...], "intervals": joined intervals,
    "basis": BASIS, "note": one sentence naming the disagreeing figures, or None}. Each figure is its own
    percentile (quantile_cont, or max) over the joined intervals. Disagree: parts above totals by more than
    DISAGREE_RATIO and by more than DISAGREE_FLOOR."""
    if key not in QUANTILES:
        raise DbtierError(f"statistic {key!r}: not one of {', '.join(QUANTILES)}", "give p95, p99 or max")
    run_dir = doc.get("_run_dir")
    if not run_dir or not store.series_files(run_dir, store.INTERVALS_FILE):
        return None
    q = QUANTILES[key]

    def agg(col: str) -> str:
        return f"quantile_cont({col}, {q})" if q else f"max({col})"

    db = sql_str(database)
    sums = ", ".join(f"sum({m}) AS {m}" for m in METRICS)
    aggs = ", ".join([agg(f"p.{m}") for m in METRICS] + [agg(f"t.{m}") for m in METRICS])
    with store.reading(run_dir, "intervals and totals", REIMPORT) as con:
        store.check_parquet(con, run_dir, store.INTERVALS_FILE, ["database", "file_type", "role", "start", "end",
                                                                 *METRICS])
        store.check_parquet(con, run_dir, store.TOTALS_FILE, ["database", "start", "end", *METRICS])
        parts_src, totals_src = store.parquet(run_dir, store.INTERVALS_FILE), store.parquet(run_dir, store.TOTALS_FILE)
        where = f"""database = {db} AND role = 'part' AND "end" > start"""
        (n_types,) = store.one_row(con.execute(f"SELECT count(DISTINCT file_type) FROM {parts_src} WHERE {where}"))
        if n_types < 2:
            return None
        n, *vals = store.one_row(con.execute(f"""
            WITH p AS (SELECT start, "end", {sums} FROM {parts_src} WHERE {where} GROUP BY start, "end"),
                 t AS (SELECT start, "end", {", ".join(METRICS)} FROM {totals_src}
                       WHERE database = {db} AND "end" > start)
            SELECT count(*), {aggs} FROM p JOIN t ON p."end" = t."end" AND p.start = t.start"""))
    metrics: dict[str, dict[str, Any]] = {}
    for i, m in enumerate(METRICS):
        parts, totals = (None if v is None else float(v) for v in (vals[i], vals[i + len(METRICS)]))
        over = (parts is not None and totals is not None and parts > totals * (1 + DISAGREE_RATIO)
                and parts - totals > DISAGREE_FLOOR[m])
        metrics[m] = {"parts": parts, "totals": totals, "disagree": over}
    bad = [m for m in METRICS if metrics[m]["disagree"]]
    source = str(doc.get("source") or (doc.get("params") or {}).get("source") or "")
    return {"metrics": metrics, "disagree": bad, "intervals": int(n), "basis": BASIS,
            "note": _note(source, key, {m: metrics[m] for m in bad}) if bad else None}


def _iops(v: float) -> str:
    return f"{v:,.0f}" if v >= 10 else f"{v:.1f}"


def _mbps(v: float) -> str:
    return f"{v:,.1f}" if v < 1000 else f"{v:,.0f}"


def _note(source: str, key: str, bad: dict[str, dict[str, Any]]) -> str:
    """"AWR's file types add up to 45.0 MB/s of reads at p95, above the database's total of 9.8 MB/s: ..."."""
    what = {"read_iops": lambda v: f"{_iops(v)} read IOPS", "write_iops": lambda v: f"{_iops(v)} write IOPS",
            "read_mbps": lambda v: f"{_mbps(v)} MB/s of reads", "write_mbps": lambda v: f"{_mbps(v)} MB/s of writes"}
    unit = {"read_iops": lambda v: f"{_iops(v)} IOPS", "write_iops": lambda v: f"{_iops(v)} IOPS",
            "read_mbps": lambda v: f"{_mbps(v)} MB/s", "write_mbps": lambda v: f"{_mbps(v)} MB/s"}

    def join(items: list[str]) -> str:
        return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]

    who = f"{_SOURCE_NAMES.get(source, source or 'The source')}'s {_PART_NOUNS.get(source, 'file types')}"
    at = "at the maximum" if key == "max" else f"at {key}"
    parts = join([what[m](f["parts"]) for m, f in bad.items()])
    totals = join([unit[m](f["totals"]) for m, f in bad.items()])
    total_word = "total" if len(bad) == 1 else "totals"
    return (f"{who} add up to {parts} {at}, above the database's {total_word} of {totals}: the export's parts "
            "and totals disagree; sized from the larger")


def consistent_basis(req_figures: dict[str, Any], check: dict[str, Any] | None) -> tuple[dict[str, Any], list[str]]:
    """The requirement's figures with each metric on which `check` (parts_vs_totals) finds the parts above
    the totals raised to the parts' figure (never lowered: the larger of the two), and the notes saying so.
    A metric `req_figures` does not hold is not added. Pure."""
    out = dict(req_figures)
    if not check or not check.get("disagree"):
        return out, []
    for m in check["disagree"]:
        parts = ((check.get("metrics") or {}).get(m) or {}).get("parts")
        if m in out and parts is not None and (out[m] is None or out[m] < parts):
            out[m] = float(parts)
    return out, [check["note"]] if check.get("note") else []
