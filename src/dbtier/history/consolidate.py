"""Several databases on one time grid: the peak of their sum beside the sum of their peaks. No I/O.

Each database's series (its totals per interval, UTC) is spread over a grid of `step` seconds
anchored at 1970-01-01 00:00 UTC, so databases in different time zones, with different snapshot
times or lengths, line up on the same absolute instants. A grid cell's rate is the time-weighted
mean of the intervals that overlap it (rate x overlap seconds / covered seconds): I/O is neither
created nor lost, and an hourly AWR snapshot at :00:47 still lands in its hour. A cell a
database's history covers for less than half its length is a gap for that database (otherwise a
few seconds of an interval would stand for the whole cell).

The window is where all databases have history (the latest first cell to the earliest last
one); a database with a gap inside it adds nothing there (its missing cells are counted).

- sum of peaks: each database's highest cell, added up (what sizing each alone would ask for);
- peak of sum: the highest cell of the summed series (what the consolidation needs);
- gain = sum of peaks / peak of sum (1 when all peaks coincide; 2 means half the naive size);
- drivers: the databases' shares of the summed cell at the peak, largest first.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

import duckdb

from dbtier.core.errors import DbtierError
from dbtier.history.series import _num, iso

_METRICS = ("read_iops", "write_iops", "iops", "read_mbps", "write_mbps", "mbps")


def auto_step(con: duckdb.DuckDBPyConnection, table: str) -> int:
    """The longest of the databases' median interval lengths, to the nearest whole minute (at least 60 s)."""
    row = con.execute(f"SELECT max(m) FROM (SELECT database, median(seconds) AS m FROM {table} GROUP BY database)"
                      ).fetchone()
    med = row[0] if row and row[0] is not None else 3600.0
    return max(60, int(round(float(med) / 60.0)) * 60)


def regrid(con: duckdb.DuckDBPyConnection, table: str, step: int, out: str = "grid") -> None:
    """`out`: database, bin (cell index; its start is bin * step seconds after the Unix epoch),
    covered seconds, and the time-weighted rates.

    An interval no longer than a cell touches at most two cells: those two pieces are made
    directly; only longer intervals are cut by a generated series of cells. Databases are
    numbered while they are cut and added up (integers hash and compare faster than names)."""
    g = float(step)
    q = con.execute(f"""SELECT {', '.join(f'count({m}) = count(*)' for m in _METRICS)},
                               count(*) FILTER (WHERE read_iops IS NULL OR write_iops IS NULL OR iops IS NULL
                                                OR abs(iops - read_iops - write_iops) > 1e-9 * greatest(1, iops)) = 0,
                               count(*) FILTER (WHERE read_mbps IS NULL OR write_mbps IS NULL OR mbps IS NULL
                                                OR abs(mbps - read_mbps - write_mbps) > 1e-9 * greatest(1, mbps)) = 0
                        FROM {table}""").fetchone()
    full, derive = dict(zip(_METRICS, q[:6])), {"iops": q[6], "mbps": q[7]}
    # Fewer sums: totals that are read + write are added up after, not weighed again.
    summed = [m for m in _METRICS if not derive.get(m)]
    rates = ", ".join(
        (f"sum({m} * ov) / sum(ov) AS {m}" if full[m] else
         f"sum({m} * ov) / nullif(sum(CASE WHEN {m} IS NOT NULL THEN ov END), 0) AS {m}")
        for m in summed)
    final = ", ".join(("read_iops + write_iops AS iops" if m == "iops" else "read_mbps + write_mbps AS mbps")
                      if derive.get(m) else m for m in _METRICS)
    cols = ", ".join(summed)
    con.execute(f"CREATE OR REPLACE TEMP TABLE _dbs AS SELECT row_number() OVER (ORDER BY database) AS id, database "
                f"FROM (SELECT DISTINCT database FROM {table})")
    if not _regrid_sorted(con, table, g, summed, full, cols):
        con.execute(f"""
            CREATE OR REPLACE TEMP TABLE _cells AS
            WITH t AS (SELECT d.id, epoch_us(x.start) / 1e6 AS s, epoch_us(x."end") / 1e6 AS e, {cols},
                              CAST(floor(epoch_us(x.start) / 1e6 / {g}) AS BIGINT) AS b0
                       FROM {table} x JOIN _dbs d ON x.database = d.database),
            short AS (SELECT * FROM t WHERE e - s <= {g}),
            pieces AS (
                SELECT id, b0 AS bin, least(e, (b0 + 1) * {g}) - s AS ov, {cols} FROM short
                UNION ALL
                SELECT id, b0 + 1, e - (b0 + 1) * {g}, {cols} FROM short WHERE e > (b0 + 1) * {g}
                UNION ALL
                SELECT id, bin, least(e, (bin + 1) * {g}) - greatest(s, bin * {g}), {cols}
                FROM (SELECT *, unnest(range(b0, CAST(ceil(e / {g}) AS BIGINT))) AS bin FROM t WHERE e - s > {g}))
            SELECT id, bin, sum(ov) AS covered, {rates} FROM pieces WHERE ov > 0 GROUP BY id, bin
            HAVING sum(ov) >= {g / 2}""")
    con.execute(f"""CREATE OR REPLACE TABLE {out} AS SELECT d.database, c.bin, c.covered, {final}
                    FROM _cells c JOIN _dbs d ON c.id = d.id""")
    con.execute("DROP TABLE _cells")


def _regrid_sorted(con: duckdb.DuckDBPyConnection, table: str, g: float, summed: list[str], full: dict,
                   cols: str) -> bool:
    """The common case without a hash aggregation over millions of cells: at most one interval
    starts in each cell (snapshots at least a cell apart, however far off the hour). Then a
    cell is the first cell of at most one interval, which shares it only with the spill of the
    interval before; cells in between are one interval's alone; a spill that no interval starts
    after is a cell of its own. One window over each database's intervals in time order does it.
    False when the case does not hold (regrid then adds up the pieces the general way)."""
    lags = ", ".join(f"lag({m}) OVER w AS p_{m}" for m in summed)
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE _iv AS
        WITH t AS (SELECT d.id, epoch_us(x.start) / 1e6 AS s, epoch_us(x."end") / 1e6 AS e, {cols},
                          CAST(floor(epoch_us(x.start) / 1e6 / {g}) AS BIGINT) AS b0,
                          CAST(ceil(epoch_us(x."end") / 1e6 / {g}) AS BIGINT) - 1 AS last
                   FROM {table} x JOIN _dbs d ON x.database = d.database)
        SELECT *, lag(e) OVER w AS p_e, lag(last) OVER w AS p_last, lead(b0) OVER w AS n_b0, {lags}
        FROM t WINDOW w AS (PARTITION BY id ORDER BY s)""")
    if con.execute("SELECT count(*) FILTER (WHERE n_b0 = b0) FROM _iv").fetchone()[0]:
        con.execute("DROP TABLE _iv")
        return False

    def w(m: str, own: str, prev: str) -> str:
        # time-weighted mean of this interval's share and the previous one's spill (a NULL rate weighs nothing)
        num = f"coalesce({m} * {own}, 0) + coalesce(p_{m} * {prev}, 0)"
        if full.get(m):
            return f"({num}) / ({own} + {prev}) AS {m}"
        den = f"(CASE WHEN {m} IS NOT NULL THEN {own} ELSE 0 END + CASE WHEN p_{m} IS NOT NULL THEN {prev} ELSE 0 END)"
        return f"({num}) / nullif({den}, 0) AS {m}"

    own = f"(least(e, (b0 + 1) * {g}) - s)"
    prev = f"(CASE WHEN p_last = b0 THEN p_e - b0 * {g} ELSE 0 END)"
    con.execute(f"""
        CREATE OR REPLACE TEMP TABLE _cells AS
        SELECT id, bin, covered, {', '.join(summed)} FROM (
            SELECT id, b0 AS bin, {own} + {prev} AS covered, {', '.join(w(m, own, prev) for m in summed)}
            FROM _iv
            UNION ALL
            SELECT id, bin, {g}, {', '.join(summed)}
            FROM (SELECT *, unnest(range(b0 + 1, last)) AS bin FROM _iv WHERE last > b0 + 1)
            UNION ALL
            SELECT id, last, e - last * {g}, {', '.join(summed)}
            FROM _iv WHERE last > b0 AND (n_b0 IS NULL OR n_b0 > last))
        WHERE covered >= {g / 2}""")
    con.execute("DROP TABLE _iv")
    return True


def _ts(bin_: int | None, step: int) -> str | None:
    if bin_ is None:
        return None
    return iso(_dt.datetime(1970, 1, 1) + _dt.timedelta(seconds=int(bin_) * step))


def consolidate(con: duckdb.DuckDBPyConnection, table: str, step: int | None = None, top: int = 10,
                grid: str = "grid", out_sum: str = "sum_series") -> dict[str, Any]:
    """`table` holds every database's totals (database, start, end, rates). Returns the summary;
    leaves `grid` (each database in the window) and `out_sum` (the sum per cell) in `con`."""
    n_db = con.execute(f"SELECT count(DISTINCT database) FROM {table}").fetchone()[0]
    if n_db == 0:
        raise DbtierError("no intervals to consolidate", "import some history first: `dbtier history import`")
    step = int(step or auto_step(con, table))
    regrid(con, table, step, "_grid_all")
    lost = con.execute(f"SELECT DISTINCT database FROM {table} EXCEPT SELECT DISTINCT database FROM _grid_all "
                       "ORDER BY 1 LIMIT 5").fetchall()
    if lost:
        raise DbtierError(f"{', '.join(r[0] for r in lost)}: the history covers no {step} s grid cell for at least "
                          "half of it (a history shorter than the grid step?)", "give a smaller --step")
    lo, hi = con.execute("SELECT max(b0), min(b1) FROM (SELECT database, min(bin) AS b0, max(bin) AS b1 "
                         "FROM _grid_all GROUP BY database)").fetchone()
    if lo is None or lo > hi:
        spans = con.execute(f'SELECT database, min(start), max("end") FROM {table} GROUP BY database '
                            "ORDER BY min(start) LIMIT 6").fetchall()
        text = "; ".join(f"{d}: {iso(s)} to {iso(e)}" for d, s, e in spans)
        raise DbtierError(f"the databases' histories do not overlap in time ({text})",
                          "consolidate histories that cover the same period")
    con.execute(f"DROP TABLE IF EXISTS {grid}")
    con.execute(f"ALTER TABLE _grid_all RENAME TO {grid}")
    con.execute(f"DELETE FROM {grid} WHERE bin < {lo} OR bin > {hi}")
    sums = ", ".join(f"sum({m}) AS {m}" for m in _METRICS)
    con.execute(f"""
        CREATE OR REPLACE TABLE {out_sum} AS
        SELECT bin, TIMESTAMP '1970-01-01' + to_seconds(bin * {step}) AS start,
               TIMESTAMP '1970-01-01' + to_seconds((bin + 1) * {step}) AS "end", {float(step)} AS seconds,
               count(*) AS databases, {sums}
        FROM {grid} GROUP BY bin""")
    bins = hi - lo + 1
    per_db = con.execute(f"""
        SELECT database, max(iops), max(mbps), arg_max(bin, (coalesce(iops, -1), -bin)), count(*)
        FROM {grid} GROUP BY database ORDER BY max(iops) DESC NULLS LAST, database""").fetchall()
    sum_of_peaks = {"iops": sum(_num(r[1]) or 0.0 for r in per_db), "mbps": sum(_num(r[2]) or 0.0 for r in per_db)}
    pk = con.execute(f"SELECT bin, iops FROM {out_sum} ORDER BY iops DESC NULLS LAST, bin LIMIT 1").fetchone()
    pm = con.execute(f"SELECT bin, mbps FROM {out_sum} ORDER BY mbps DESC NULLS LAST, bin LIMIT 1").fetchone()
    peak_bin, peak_iops = pk[0], _num(pk[1]) or 0.0
    peak_bin_m, peak_mbps = pm[0], _num(pm[1]) or 0.0
    peak_of_sum = {"iops": peak_iops, "mbps": peak_mbps}
    own = {r[0]: r for r in per_db}
    drivers = []
    for db, iops, mbps in con.execute(f"""SELECT database, iops, mbps FROM {grid} WHERE bin = {peak_bin}
                                          ORDER BY iops DESC NULLS LAST, database LIMIT {int(top)}""").fetchall():
        own_peak = _num(own[db][1]) if db in own else None
        drivers.append({"database": db, "iops": _num(iops), "mbps": _num(mbps),
                        "share": (_num(iops) or 0.0) / peak_iops if peak_iops else None,
                        "own_peak_iops": own_peak,
                        "of_own_peak": (_num(iops) or 0.0) / own_peak if own_peak else None})
    databases = [{"name": db, "peak_iops": _num(i), "peak_mbps": _num(m), "peak_time": _ts(b, step),
                  "missing_bins": int(bins - n)} for db, i, m, b, n in per_db]
    return {
        "sum_of_peaks": sum_of_peaks,
        "peak_of_sum": peak_of_sum,
        "gain": sum_of_peaks["iops"] / peak_iops if peak_iops else None,
        "gain_mbps": sum_of_peaks["mbps"] / peak_mbps if peak_mbps else None,
        "peak_time": _ts(peak_bin, step),
        "peak_time_mbps": _ts(peak_bin_m, step),
        "drivers": drivers,
        "grid": {"step_seconds": step, "start": _ts(lo, step), "end": _ts(hi + 1, step), "cells": int(bins)},
        "databases": databases,
    }
