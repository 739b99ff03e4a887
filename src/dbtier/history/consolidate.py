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

- sum of peaks on the grid (`sum_of_peaks` here, `sum_of_peaks_grid` in the document): each
  database's highest cell, added up; the document's `sum_of_peaks` is each database's own import
  peak (its own intervals, at the chosen percentile), added up: what sizing each alone asks for;
- peak of sum: the highest cell of the summed series (what the consolidation needs);
- gain = sum of peaks on the grid / peak of sum (1 when all peaks coincide; 2 means half the naive
  size): both on the same grid, so a coarse step that smooths spikes does not pass for a gain;
- drivers: the databases' shares of the summed cell at the peak, largest first.
"""

from __future__ import annotations

import datetime as _dt
from pathlib import Path
from typing import Any, Sequence, cast

import duckdb

from dbtier.core.errors import DbtierError
from dbtier.core.files import sql_str
from dbtier.history import series
from dbtier.history import store
from dbtier.history.series import finite_or_none, iso

_METRICS = series.RATES


def _shape(con: duckdb.DuckDBPyConnection, table: str) -> dict[str, Any]:
    """One pass over `table` (imports older than `series_shape`): each database's series shape."""
    rows = con.execute(f"SELECT database, count(*), {', '.join(series.SHAPE_AGGREGATES)} FROM {table} "
                       "GROUP BY database").fetchall()
    return shape_of_imports([{"name": r[0], "series_shape": series.series_shape(r[1], r[2:])} for r in rows]) or \
        {"databases": [], "median_s": None, "full": {m: True for m in _METRICS}, "derive": {}}


def shape_of_imports(databases: list[dict[str, Any]]) -> dict[str, Any] | None:
    """What consolidate needs to know of all the series together, from each database's
    `series_shape` (the import took it in its own pass), or None when a document lacks it (then
    _shape reads the series)."""
    given = [db.get("series_shape") for db in databases]
    if not databases or not all(isinstance(sh, dict) for sh in given):
        return None
    shapes = cast(list[dict[str, Any]], given)      # every one a dict, just checked
    meds = [v for sh in shapes if (v := sh.get("median_interval_s")) is not None]
    return {"databases": sorted(db["name"] for db in databases), "median_s": max(meds) if meds else None,
            "full": {m: all(m in (sh.get("complete") or []) for sh in shapes) for m in _METRICS},
            "derive": {"iops": all(sh.get("iops_is_sum") for sh in shapes),
                       "mbps": all(sh.get("mbps_is_sum") for sh in shapes)},
            "overlap_s": _overlap_s(databases)}


def _overlap_s(databases: list[dict[str, Any]]) -> tuple[float, float] | None:
    """(latest start, earliest end) of the imports' databases in seconds since the epoch (whole seconds, as
    the documents print them), or None when a document lacks one."""
    try:
        starts = [_dt.datetime.fromisoformat(db["start"].replace("Z", "+00:00")).timestamp() for db in databases]
        ends = [_dt.datetime.fromisoformat(db["end"].replace("Z", "+00:00")).timestamp() for db in databases]
    except (KeyError, TypeError, AttributeError, ValueError):
        return None
    return max(starts), min(ends)


def auto_step(con: duckdb.DuckDBPyConnection, table: str, shape: dict[str, Any] | None = None) -> int:
    """The longest of the databases' median interval lengths, to the nearest whole minute (at least 60 s)."""
    med = (shape or _shape(con, table))["median_s"]
    med = med if med is not None else 3600.0
    return max(60, int(round(float(med) / 60.0)) * 60)


def regrid(con: duckdb.DuckDBPyConnection, table: str, step: int, out: str = "grid",
           shape: dict[str, Any] | None = None) -> None:
    """`out`: database, bin (cell index; its start is bin * step seconds after the Unix epoch),
    covered seconds, and the time-weighted rates.

    An interval no longer than a cell touches at most two cells: those two pieces are made
    directly; only longer intervals are cut by a generated series of cells."""
    g = float(step)
    shape = shape or _shape(con, table)
    full, derive = shape["full"], shape["derive"]
    # Fewer sums: totals that are read + write are added up after, not weighed again.
    summed = [m for m in _METRICS if not derive.get(m)]
    rates = ", ".join(
        (f"sum({m} * ov) / sum(ov) AS {m}" if full[m] else
         f"sum({m} * ov) / nullif(sum(CASE WHEN {m} IS NOT NULL THEN ov END), 0) AS {m}")
        for m in summed)
    final = ", ".join(("read_iops + write_iops AS iops" if m == "iops" else "read_mbps + write_mbps AS mbps")
                      if derive.get(m) else m for m in _METRICS)
    cols = ", ".join(summed)
    cells = f"{out}_cells"
    if not _regrid_sorted(con, table, g, summed, full, cols, cells):
        con.execute(f"""
            CREATE OR REPLACE TABLE {cells} AS
            WITH t AS (SELECT database, epoch_us(start) / 1e6 AS s, epoch_us("end") / 1e6 AS e, {cols},
                              CAST(floor(epoch_us(start) / 1e6 / {g}) AS BIGINT) AS b0
                       FROM {table}),
            short AS (SELECT * FROM t WHERE e - s <= {g}),
            pieces AS (
                SELECT database, b0 AS bin, least(e, (b0 + 1) * {g}) - s AS ov, {cols} FROM short
                UNION ALL
                SELECT database, b0 + 1, e - (b0 + 1) * {g}, {cols} FROM short WHERE e > (b0 + 1) * {g}
                UNION ALL
                SELECT database, bin, least(e, (bin + 1) * {g}) - greatest(s, bin * {g}), {cols}
                FROM (SELECT *, unnest(range(b0, CAST(ceil(e / {g}) AS BIGINT))) AS bin FROM t WHERE e - s > {g}))
            SELECT database, bin, sum(ov) AS covered, {rates} FROM pieces WHERE ov > 0 GROUP BY database, bin""")
    # A view: the cells a database covers for at least half, with the totals added up on reading
    # (no second copy of millions of cells).
    _drop_table(con, out)
    con.execute(f"CREATE OR REPLACE VIEW {out} AS SELECT database, bin, covered, {final} FROM {cells} "
                f"WHERE covered >= {g / 2}")


def _drop_table(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """`name` gone if it is a table (a view of that name is replaced by CREATE OR REPLACE VIEW)."""
    if store.one_row(con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = ?", [name]))[0]:
        con.execute(f"DROP TABLE {name}")


def _regrid_sorted(con: duckdb.DuckDBPyConnection, table: str, g: float, summed: list[str], full: dict,
                   cols: str, cells: str) -> bool:
    """The common case without a hash aggregation over millions of cells: at most one interval
    starts in each cell (snapshots at least a cell apart, however far off the hour). Then a
    cell is the first cell of at most one interval, which shares it only with the spill of the
    interval before; cells in between are one interval's alone; a spill that no interval starts
    after is a cell of its own. One window over each database's intervals in time order makes
    the first kind (nearly all cells) and flags the intervals whose last cell is of the third
    kind; the rare others come from a second, filtered pass.
    False when the case does not hold (regrid then adds up the pieces the general way)."""
    t = f"""(SELECT database, epoch_us(start) / 1e6 AS s, epoch_us("end") / 1e6 AS e, {cols},
                    CAST(floor(epoch_us(start) / 1e6 / {g}) AS BIGINT) AS b0,
                    CAST(ceil(epoch_us("end") / 1e6 / {g}) AS BIGINT) - 1 AS last
             FROM {table})"""
    lags = ", ".join(f"lag({m}) OVER w AS p_{m}" for m in summed)

    def w(m: str, own: str, prev: str) -> str:
        # time-weighted mean of this interval's share and the previous one's spill (a NULL rate weighs nothing)
        num = f"coalesce({m} * {own}, 0) + coalesce(p_{m} * {prev}, 0)"
        if full.get(m):
            return f"({num}) / ({own} + {prev}) AS {m}"
        den = f"(CASE WHEN {m} IS NOT NULL THEN {own} ELSE 0 END + CASE WHEN p_{m} IS NOT NULL THEN {prev} ELSE 0 END)"
        return f"({num}) / nullif({den}, 0) AS {m}"

    own = f"(least(e, (b0 + 1) * {g}) - s)"
    # the previous interval spills into this cell when it ends inside it (its last cell is this one)
    prev = f"(CASE WHEN CAST(ceil(p_e / {g}) AS BIGINT) - 1 = b0 THEN p_e - b0 * {g} ELSE 0 END)"
    con.execute(f"""
        CREATE OR REPLACE TABLE {cells} AS
        SELECT database, b0 AS bin, {own} + {prev} AS covered, {', '.join(w(m, own, prev) for m in summed)},
               coalesce(n_b0 = b0, false) AS clash, last > b0 AND (n_b0 IS NULL OR n_b0 > last) AS alone,
               last > b0 + 1 AS long
        FROM (SELECT *, lag(e) OVER w AS p_e, lead(b0) OVER w AS n_b0, {lags}
              FROM {t} WINDOW w AS (PARTITION BY database ORDER BY s))""")
    clash, long = store.one_row(con.execute(f"SELECT bool_or(clash), bool_or(long) FROM {cells}"))
    if clash:
        con.execute(f"DROP TABLE {cells}")
        return False
    if long:
        con.execute(f"""INSERT INTO {cells} SELECT database, bin, {g}, {cols}, false, false, false
                        FROM (SELECT *, unnest(range(b0 + 1, last)) AS bin FROM {t} WHERE last > b0 + 1)""")
    con.execute(f"CREATE OR REPLACE TEMP TABLE _alone AS SELECT database, bin FROM {cells} WHERE alone")
    con.execute(f"""
        INSERT INTO {cells}
        SELECT x.database, x.last, x.e - x.last * {g}, {', '.join(f'x.{m}' for m in summed)}, false, false, false
        FROM {t} x JOIN _alone a ON x.database = a.database AND x.b0 = a.bin""")
    con.execute("DROP TABLE _alone")
    return True


def _regrid_batches(con: duckdb.DuckDBPyConnection, batches: Sequence[str], step: int, shape: dict[str, Any],
                    work: Path) -> None:
    files = []
    for k, src in enumerate(batches):
        regrid(con, src, step, "_grid_b", shape)
        path = work / f"grid-{k:05d}.parquet"
        con.execute(f"COPY (SELECT * FROM _grid_b) TO {sql_str(str(path))} (FORMAT parquet)")
        con.execute("DROP VIEW _grid_b")
        con.execute("DROP TABLE _grid_b_cells")
        files.append(path)
    con.execute("CREATE OR REPLACE VIEW _grid_all AS SELECT * FROM read_parquet(["
                + ", ".join(sql_str(str(p)) for p in files) + "])")


def _ts(bin_: int | None, step: int) -> str | None:
    if bin_ is None:
        return None
    return iso(_dt.datetime(1970, 1, 1) + _dt.timedelta(seconds=int(bin_) * step))


def consolidate(con: duckdb.DuckDBPyConnection, table: str, step: int | None = None, top: int = 10,
                grid: str = "grid", out_sum: str = "sum_series", shape: dict[str, Any] | None = None,
                batches: Sequence[str] = (), work: Path | None = None, full_grid: bool = False) -> dict[str, Any]:
    """`table` holds every database's totals (database, start, end, rates). Returns the summary;
    leaves `grid` (each database in the window; only the drivers of the combined peak when the grid was
    made the dense way) and `out_sum` (the sum per cell) in `con`.
    `shape`: _shape's answer when the caller knows it (shape_of_imports). `batches` (with `work`): the
    same totals as queries each holding whole databases, put on the grid one at a time (dense.py; or, with
    `full_grid` or where that does not apply, into Parquet files in `work`), so the memory is a batch's,
    not the fleet's."""
    shape = shape or _shape(con, table)
    if not shape["databases"]:
        raise DbtierError("no intervals to consolidate", "import some history first: `dbtier history import`")
    step = int(step or auto_step(con, table, shape))
    if batches and work is not None and not full_grid:
        from dbtier.history import dense      # numba: loaded when a fleet is consolidated, not at start-up
        try:
            return _consolidate_dense(con, table, step, top, grid, out_sum, shape, batches, work)
        except dense.Fallback:
            pass       # regrid's way below (which also words a failure)
    if batches and work is not None:
        _regrid_batches(con, batches, step, shape, work)
    else:
        regrid(con, table, step, "_grid_all", shape)
    spans = dict((db, (b0, b1)) for db, b0, b1 in con.execute(
        "SELECT database, min(bin), max(bin) FROM _grid_all GROUP BY database").fetchall())
    lost = [db for db in shape["databases"] if db not in spans]
    if lost:
        raise DbtierError(f"{', '.join(lost[:5])}: the history covers no {step} s grid cell for at least "
                          "half of it (a history shorter than the grid step?)", "give a smaller --step")
    lo, hi = max(b0 for b0, _ in spans.values()), min(b1 for _, b1 in spans.values())
    if lo > hi:
        first = con.execute(f'SELECT database, min(start), max("end") FROM {table} GROUP BY database '
                            "ORDER BY min(start) LIMIT 6").fetchall()
        text = "; ".join(f"{d}: {iso(s)} to {iso(e)}" for d, s, e in first)
        raise DbtierError(f"the databases' histories do not overlap in time ({text})",
                          "consolidate histories that cover the same period")
    _drop_table(con, grid)
    con.execute(f"CREATE OR REPLACE VIEW {grid} AS SELECT * FROM _grid_all WHERE bin BETWEEN {lo} AND {hi}")
    sums = ", ".join(f"sum({m}) AS {m}" for m in _METRICS)
    con.execute(f"""
        CREATE OR REPLACE TABLE {out_sum} AS
        SELECT bin, TIMESTAMP '1970-01-01' + to_seconds(bin * {step}) AS start,
               TIMESTAMP '1970-01-01' + to_seconds((bin + 1) * {step}) AS "end", {float(step)} AS seconds,
               count(*) AS databases, {sums}
        FROM {grid} GROUP BY bin""")
    per_db = con.execute(f"""
        SELECT database, max(iops), max(mbps), arg_max(bin, (coalesce(iops, -1), -bin)), count(*)
        FROM {grid} GROUP BY database ORDER BY max(iops) DESC NULLS LAST, database""").fetchall()
    pk, pm = _peaks_of_sum(con, out_sum)
    at_peak = con.execute(f"""SELECT database, iops, mbps FROM {grid} WHERE bin = {pk[0]}
                              ORDER BY iops DESC NULLS LAST, database LIMIT {int(top)}""").fetchall()
    return _summary(per_db, pk, pm, at_peak, lo, hi, step)


def _consolidate_dense(con: duckdb.DuckDBPyConnection, table: str, step: int, top: int, grid: str, out_sum: str,
                       shape: dict[str, Any], batches: Sequence[str], work: Path) -> dict[str, Any]:
    """consolidate by dense.py: the same figures without a sort; `grid` holds the drivers' cells only."""
    from dbtier.history import dense
    bnd = dense.bound(con, table, step, shape.get("overlap_s"))
    d = dense.pass1(con, batches, shape["databases"], step, shape, bnd, work)
    lo, hi = dense.window(d)
    dense.register_sum(con, dense.sum_table(d, lo, hi), step, out_sum)
    per = dense.per_database(d, lo, hi)
    rows = [(name, finite_or_none(per.max_iops[i]), finite_or_none(per.max_mbps[i]), int(per.peak_bin[i]),
             int(per.cells[i])) for i, name in enumerate(per.names) if per.cells[i] > 0]
    rows.sort(key=lambda r: (r[1] is None, -(r[1] or 0.0), r[0]))       # max(iops) DESC NULLS LAST, database
    pk, pm = _peaks_of_sum(con, out_sum)
    cells = [(db, finite_or_none(i), finite_or_none(m)) for db, i, m in dense.at_bin(d, lo, pk[0])]
    at_peak = sorted(cells, key=lambda r: (r[1] is None, -(r[1] or 0.0), r[0]))[:int(top)]
    # the drivers' cells for grid.parquet (what the report draws): regrid's way, on their totals only (read
    # from the batches that hold them)
    names = [r[0] for r in at_peak]
    inlist = ", ".join(sql_str(n) for n in names) or "NULL"
    held = [batches[k] for k in d.batches_of(names)] or [table]
    src = " UNION ALL ".join(f"SELECT * FROM {b} WHERE database IN ({inlist})" for b in held)
    regrid(con, f"({src})", step, "_grid_all", shape)
    _drop_table(con, grid)
    con.execute(f"CREATE OR REPLACE VIEW {grid} AS SELECT * FROM _grid_all WHERE bin BETWEEN {lo} AND {hi}")
    return _summary(rows, pk, pm, at_peak, lo, hi, step)


def _peaks_of_sum(con: duckdb.DuckDBPyConnection, out_sum: str) -> tuple[tuple, tuple]:
    """(bin, IOPS) and (bin, MB/s) of the summed series' highest cells (the earliest of equals). The sum has
    cells: the histories overlap (checked before)."""
    pk = store.one_row(con.execute(f"SELECT bin, iops FROM {out_sum} ORDER BY iops DESC NULLS LAST, bin LIMIT 1"))
    pm = store.one_row(con.execute(f"SELECT bin, mbps FROM {out_sum} ORDER BY mbps DESC NULLS LAST, bin LIMIT 1"))
    return pk, pm


def _summary(per_db: Sequence[tuple], pk: tuple, pm: tuple, at_peak: Sequence[tuple], lo: int, hi: int,
             step: int) -> dict[str, Any]:
    """The document's part from: per database (name, max IOPS, max MB/s, bin of its IOPS peak, cells), highest
    IOPS first; the summed series' peaks; the drivers' (name, IOPS, MB/s) at the IOPS peak."""
    bins = hi - lo + 1
    sum_of_peaks = {"iops": sum(finite_or_none(r[1]) or 0.0 for r in per_db), "mbps": sum(finite_or_none(r[2]) or 0.0 for r in per_db)}
    peak_bin, peak_iops = pk[0], finite_or_none(pk[1]) or 0.0
    peak_bin_m, peak_mbps = pm[0], finite_or_none(pm[1]) or 0.0
    peak_of_sum = {"iops": peak_iops, "mbps": peak_mbps}
    own = {r[0]: r for r in per_db}
    drivers = []
    for db, iops, mbps in at_peak:
        own_peak = finite_or_none(own[db][1]) if db in own else None
        drivers.append({"database": db, "iops": finite_or_none(iops), "mbps": finite_or_none(mbps),
                        "share": (finite_or_none(iops) or 0.0) / peak_iops if peak_iops else None,
                        "own_peak_iops": own_peak,
                        "of_own_peak": (finite_or_none(iops) or 0.0) / own_peak if own_peak else None})
    databases = [{"name": db, "peak_iops": finite_or_none(i), "peak_mbps": finite_or_none(m), "peak_time": _ts(b, step),
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
