"""A history's per-interval rates, in time order, for replaying them through burst credit buckets
(`dbtier plan size --cloud --from-history`): (seconds, IOPS, MB/s) per interval of an import's database or
of a consolidation's sum on its grid. A gap between intervals is left out (no credit is earned over it).

A history of hour-of-day statistics (a DMA collection: `hourly`) has no such series: `plan size --cloud` sizes
its volumes without the replay and says so; the roles, which need per-interval file types, refuse it."""

from __future__ import annotations

from typing import Any


from dbtier.core.errors import DbtierError
from dbtier.core.files import sql_str
from dbtier.history import store

HOURLY_SOURCES = ("dma",)         # history sources whose imports hold hour-of-day statistics, not a time series
HOURLY_WHY = ("a DMA collection holds hour-of-day statistics, not the time series a replay needs")


def hourly(source: dict[str, Any]) -> bool:
    """Whether a requirement run's `from` is hour-of-day statistics (a DMA import, or an import whose document
    says kind "hourly"), not a time series of intervals."""
    if source.get("source") in HOURLY_SOURCES:
        return True
    if source.get("action") != "import" or not source.get("run_dir"):
        return False
    from dbtier.results.store import load_run
    try:
        return load_run(str(source["run_dir"])).get("kind") == "hourly"
    except DbtierError:
        return False              # unreadable: reading its series says why


def _read(source: dict[str, Any], name: str, cols: list[str], sql: str) -> list[tuple]:
    run_dir = source.get("run_dir")
    if source.get("source") in HOURLY_SOURCES:
        raise DbtierError(f"{run_dir}: {HOURLY_WHY}: it has no per-interval rates to read",
                          "import a time series (AWR, PostgreSQL, diskstats, iostat, sar), or give the rates on the "
                          "command line (plan size --read-iops ... --cloud aws)")
    assert run_dir, "by_file_type and rates return before reading a source without a run_dir"
    with store.reading(run_dir) as con:
        store.check_parquet(con, run_dir, name, cols)
        return con.execute(sql.format(src=store.parquet(run_dir, name))).fetchall()


def by_file_type(source: dict[str, Any]) -> list[tuple[str, float, float, float, float, float, float]]:
    """The import's additive parts per file type and interval, in time order: (file_type, start epoch s,
    seconds, read IOPS, write IOPS, read MB/s, write MB/s), for sizing one volume set per role
    (`plan size --cloud --roles`). Empty when the source gives only database totals."""
    run_dir, action = source.get("run_dir"), source.get("action")
    if hourly(source):
        raise DbtierError(f"--roles needs the history's file types interval by interval: {run_dir} is hour-of-day "
                          "statistics of the whole database (a DMA collection), with no per-interval file types",
                          "size the whole database's volumes (drop --roles), or import a time series by file type "
                          "(AWR iostat by file type, SQL Server file stats, PostgreSQL)")
    if not run_dir or action != "import":
        raise DbtierError("--roles needs the history of one database (a `history requirement` taken from an import "
                          "run): a consolidation sums databases and keeps no file types",
                          "take the requirement from the import run of the database")
    cols = ["database", "file_type", "role", "start", "end", "read_iops", "write_iops", "read_mbps", "write_mbps"]
    rows = _read(source, store.INTERVALS_FILE, cols, f"""
        SELECT file_type, epoch(start), epoch("end") - epoch(start), coalesce(read_iops, 0), coalesce(write_iops, 0),
               coalesce(read_mbps, 0), coalesce(write_mbps, 0)
        FROM {{src}} WHERE database = {sql_str(str(source.get('of')))} AND role = 'part' AND "end" > start
        ORDER BY start, file_type""")
    return [(str(f), float(t), float(s), float(ri), float(wi), float(rm), float(wm)) for f, t, s, ri, wi, rm, wm in rows]


def rates(source: dict[str, Any]) -> list[tuple[float, float, float]]:
    """`source` is a requirement run's `from` ({run_dir, action, of}): the run whose series it was taken from."""
    run_dir, action = source.get("run_dir"), source.get("action")
    if not run_dir or action not in ("import", "consolidate"):
        raise DbtierError("the history run does not say which import or consolidation its requirement came from",
                          "re-run `dbtier history requirement` on an import or consolidation run")
    name = store.SUM_FILE if action == "consolidate" else store.TOTALS_FILE
    cols = ["start", "end", "iops", "mbps"] + ([] if action == "consolidate" else ["database"])
    where = "" if action == "consolidate" else f"WHERE database = {sql_str(str(source.get('of')))}"
    rows = _read(source, name, cols, f"""SELECT epoch("end") - epoch(start), coalesce(iops, 0), coalesce(mbps, 0)
                                        FROM {{src}} {where} ORDER BY start""")
    out = [(float(s), float(i), float(m)) for s, i, m in rows if s and s > 0]
    if not out:
        raise DbtierError(f"{run_dir}: no intervals with rates for {source.get('of') or 'the sum'}",
                          "the burst replay needs the history's per-interval IOPS")
    return out
