"""Bytes a day: what a database reads and writes per calendar day, from a run's per-interval series.

What `dbtier history requirement` reports as `write_tb_per_day` and `read_tb_per_day` (TB = 10^12 bytes;
the planner weighs them against a drive's endurance and an HDD's workload rating). The rules:

- **An interval's bytes** are its rate x its length (MB/s x 10^6 x seconds), spread evenly over it: the
  part of an interval that falls in a day is rate x the seconds of it in that day, so an hourly snapshot
  from 23:30 to 00:30 gives half its bytes to each day.
- **Days** are calendar days in a zone: an import run's `profile_tz` (its `--profile-tz`, else its `--tz`,
  else UTC), a consolidation's UTC (its grid is anchored in UTC). A day is 24 h long, or 23 h / 25 h on
  the days a zone changes to or from summer time.
- **A day partly covered** (the series starts or ends in it, or a restart or a gap drops intervals): when
  the intervals carrying the rate cover at least half of it (DAY_MIN_COVER), its bytes are scaled to 24 h
  (bytes x 86,400 / seconds covered: the day's mean rate over a whole day, which is also how a 23 h or
  25 h day is put on the same footing); less than half, it is left out and counted (`partial_dropped`).
  An interval whose rate is missing (NULL) covers nothing for that rate.
- **The figure** is the chosen percentile of the days counted (p95 or p99 by linear interpolation between
  closest ranks, as the interval peaks; or the max), and `days_counted` says how many. With less than one
  whole day of data in the days counted (the days' covered shares of their own length add up to less than
  1, so a whole 23 h day is enough; or no day counted), it is null and `reason` says why.
- **dma** (hour-of-day statistics, no series): the mean day, the sum over the 24 hours of the hour's mean
  rate x 3,600 s (`mean_day`); no percentile (null); the days counted are the snapshots' total length in
  days, rounded. Null when an hour of the day has no mean (the collection holds no snapshot starting in it).
"""

from __future__ import annotations

import math
from typing import Any, cast

import duckdb

from dbtier.core.errors import DbtierError
from dbtier.core.files import sql_str
from dbtier.history import store
from dbtier.history.series import finite_or_none, local_sql

DAY_S = 86400.0
DAY_MIN_COVER = 0.5      # a day counts when its intervals cover at least this share of it
TB = 1e12
MB = 1e6
METRICS = ("read", "write")


def _utc_of_local(day: str, tz: str) -> str:
    """SQL: the UTC instant (a naive TIMESTAMP) at which the local date `day` begins in `tz`."""
    ts = f"CAST({day} AS TIMESTAMP)"
    return ts if tz == "UTC" else f"timezone('UTC', timezone({sql_str(tz)}, {ts}))"


def per_day(con: duckdb.DuckDBPyConnection, table: str, tz: str = "UTC", out: str = "_days") -> None:
    """`out`: one row per calendar day in `tz` that `table`'s intervals (start, "end", read_mbps, write_mbps;
    UTC) touch: day, day_s (its length), and per metric its bytes and the seconds of it that intervals with
    that rate cover (capped at the day's length)."""
    lo_day = f"CAST({local_sql('lo', tz)} AS DATE)"
    hi_day = f"CAST({local_sql('hi', tz)} AS DATE)"
    sums = ", ".join(
        f"sum({m}_mbps * ov) * {MB} AS {m}_bytes, least(coalesce(sum(ov) FILTER (WHERE {m}_mbps IS NOT NULL), 0), "
        f"epoch_us(any_value(de)) / 1e6 - epoch_us(any_value(ds)) / 1e6) AS {m}_cov" for m in METRICS)
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE {out} AS
        WITH r AS (SELECT start, "end", read_mbps, write_mbps FROM {table} WHERE "end" > start),
        b AS (SELECT min(start) AS lo, max("end") AS hi FROM r),
        d AS (SELECT CAST(x AS DATE) AS day FROM b, range({lo_day}, {hi_day} + 1, INTERVAL 1 DAY) t(x)
              WHERE lo IS NOT NULL),
        days AS (SELECT day, {_utc_of_local('day', tz)} AS ds, {_utc_of_local('day + 1', tz)} AS de FROM d),
        pieces AS (SELECT day, ds, de, read_mbps, write_mbps,
                          (epoch_us(least(r."end", de)) - epoch_us(greatest(r.start, ds))) / 1e6 AS ov
                   FROM r JOIN days ON r.start < days.de AND r."end" > days.ds)
        SELECT day, epoch_us(any_value(de)) / 1e6 - epoch_us(any_value(ds)) / 1e6 AS day_s, {sums}
        FROM pieces WHERE ov > 0 GROUP BY day""")


def figures(con: duckdb.DuckDBPyConnection, table: str, tz: str, pnum: int) -> dict[str, dict[str, Any]]:
    """{read|write: {tb_per_day, percentile, days_counted, partial_dropped, reason}} of `table`'s intervals:
    the `pnum` percentile (100: the max) of the per-day bytes (see the module docstring), in TB."""
    per_day(con, table, tz)
    out = {}
    q = "max(x)" if pnum >= 100 else f"quantile_cont(x, {pnum / 100})"
    for m in METRICS:
        # counted_d, seen_d: days' worth of data (each day's covered share of its own length: a whole 23 h day is 1)
        got, n, dropped, counted_d, seen_d, seen_s = store.one_row(con.execute(f"""
            WITH k AS (SELECT {m}_cov >= {DAY_MIN_COVER} * day_s AS counted, {m}_cov AS cov, {m}_cov / day_s AS share,
                              {m}_bytes * {DAY_S} / nullif({m}_cov, 0) / {TB} AS x FROM _days)
            SELECT {q} FILTER (WHERE counted), count(*) FILTER (WHERE counted),
                   count(*) FILTER (WHERE NOT counted AND cov > 0),
                   coalesce(sum(share) FILTER (WHERE counted), 0), coalesce(sum(share), 0), coalesce(sum(cov), 0)
            FROM k"""))
        item: dict[str, Any] = {"tb_per_day": None, "percentile": pnum, "days_counted": int(n),
                                "partial_dropped": int(dropped), "reason": None}
        if seen_s <= 0:
            item["reason"] = f"the history has no {m} bytes"
        elif seen_d < 1 - 1e-9:
            item["reason"] = f"the history holds {seen_s / 3600:.1f} h of {m} data, less than a whole day"
        elif counted_d < 1 - 1e-9:
            item["reason"] = (f"less than a whole day of {m} data in the days covered for at least "
                              f"{DAY_MIN_COVER:.0%} ({counted_d:.2f} day(s) of data in {int(n)} day(s); "
                              f"{int(dropped)} day(s) covered less, left out)")
        else:
            item["tb_per_day"] = finite_or_none(got)
        out[m] = item
    con.execute("DROP TABLE IF EXISTS _days")
    return out


def dma_mean_day(db: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """{read|write: ...} of a dma database (its `hour_of_day` in the import document): the mean day, the sum
    over the 24 hours of the hour's mean rate x 3,600 s; days_counted the snapshots' total length in days."""
    hours = {h.get("hour"): h for h in db.get("hour_of_day") or [] if isinstance(h, dict)}
    secs = sum((h.get("snapshots") or 0) * (h.get("interval_s") or 0) for h in hours.values())
    days = int(round(secs / DAY_S)) if secs > 0 else None
    out = {}
    for m in METRICS:
        item: dict[str, Any] = {"tb_per_day": None, "percentile": None, "days_counted": days,
                                "partial_dropped": 0, "reason": None, "method": "mean day from hour-of-day averages"}
        means = [((hours.get(h) or {}).get(f"{m}_mbps") or {}).get("avg") for h in range(24)]
        missing = [h for h, v in enumerate(means) if not (isinstance(v, (int, float)) and math.isfinite(v))]
        if missing:
            item["reason"] = (f"the dma collection has no mean {m} rate for {len(missing)} hour(s) of the day "
                              f"({', '.join(f'{h:02d}h' for h in missing[:6])}{' ...' if len(missing) > 6 else ''}): "
                              "no whole mean day")
        elif secs < DAY_S:
            item["reason"] = f"the dma snapshots cover {secs / 3600:.1f} h, less than a day"
        else:
            # every hour's mean a finite number: none missing
            item["tb_per_day"] = sum(cast(float, v) * MB * 3600.0 for v in means) / TB
        out[m] = item
    return out


def _absent_all(why: str, pnum: int | None) -> dict[str, dict[str, Any]]:
    return {m: {"tb_per_day": None, "percentile": pnum, "days_counted": 0, "partial_dropped": 0, "reason": why}
            for m in METRICS}


def of_run(doc: dict[str, Any], database: dict[str, Any] | None, pnum: int) -> tuple[dict[str, dict[str, Any]], str]:
    """(the figures, the zone of the days) of an import run's `database` (its item in the document) or,
    `database` None, of a consolidation run (its sum.parquet, on the grid). A series file that is missing
    or unreadable makes the figures null with that reason (the rates come from the document)."""
    run_dir = doc.get("_run_dir")
    if database is not None and doc.get("kind") == "hourly":
        return dma_mean_day(database), "UTC"
    tz = "UTC" if database is None else (doc.get("profile_tz") or "UTC")
    if not run_dir:
        return _absent_all("the run directory is not known (no series to read)", pnum), tz
    name = store.SUM_FILE if database is None else store.TOTALS_FILE
    cols = ["start", "end", "read_mbps", "write_mbps"] + ([] if database is None else ["database"])
    con = store.connect()
    try:
        try:
            store.check_parquet(con, run_dir, name, cols)
            where = "" if database is None else f"WHERE database = {sql_str(str(database.get('name')))}"
            con.execute(f"""CREATE TEMP TABLE _one AS SELECT start, "end", read_mbps, write_mbps
                            FROM {store.parquet(run_dir, name)} {where}""")
            return figures(con, "_one", tz, pnum), tz
        except DbtierError as exc:
            return _absent_all(f"the series cannot be read: {exc.message}", pnum), tz
        except duckdb.Error as exc:
            why = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
            return _absent_all(f"the series cannot be read: {why[:200]}", pnum), tz
    finally:
        con.close()
