"""Series maths: cumulative counters -> intervals -> rates -> peaks and profiles. No I/O.

Everything runs as SQL on an in-memory DuckDB connection, so a year of hourly snapshots of a
thousand databases is a few set operations, not a Python loop; the same SQL is tested on
hand-worked tables in tests/unit/test_history_series.py.

Rules (the invariants the tests pin down):

- **Deltas** are taken per unit (one file, one device, one instance) between consecutive samples
  in time order; an interval runs from the earlier sample to the later one, and its rate is
  delta / seconds, so irregular intervals weigh correctly. Units of the same database and file
  type are then added up per interval.
- **Duplicates.** A unit sampled twice at the same time with the same values is kept once; with
  different values it is an error naming the file(s).
- **Restarts.** A sample whose `epoch` (startup time, boot time, stats reset) differs from the
  previous sample's, or where a counter went down and that is not a wrap (below), starts a new
  segment: the interval that spans the restart is dropped, never turned into a negative or a
  huge rate.
- **Counters that wrap.** Only fixed-width counters wrap: /proc/diskstats prints its time fields
  as 32-bit `unsigned int` (they wrap every 49.7 days of busy time) and its I/O and sector
  counts as `unsigned long` (64 bits on 64-bit kernels, 32 on 32-bit ones). A reader declares
  each counter's width: 32, 64, or `auto` (32 while the previous value was below 2^32, else 64).
  When such a counter goes down within the same epoch and the wrapped increase
  (2^width - previous + current) is under half the counter's range, it is taken as a wrap and
  that increase is the delta; otherwise it is a reset (new segment). Oracle, SQL Server and
  PostgreSQL counters are 64-bit or arbitrary precision and are declared as not wrapping: any
  decrease there is a reset. Counters are held as DOUBLE: deltas are exact below 2^53.
- **Rates.** read/write IOPS = I/Os / s; MB/s = bytes / s / 10^6; average I/O size in KB
  (10^3 bytes) = bytes / I/Os; latency in ms = time spent / I/Os, where the source counts time.
- **A database's series** is its `total` rows when it has any, else the sum of its `part`
  rows (`detail` rows are a breakdown and never added), per interval.
- **Peaks** are over intervals, each interval counting once: p50, p95, p99 by linear
  interpolation between closest ranks (as core.stats.percentile), and the max; and the top N
  intervals by total IOPS.
- **Profiles** group intervals by the hour of day and day of week of their start, in the
  profile time zone (default UTC): mean and max of IOPS and MB/s.
"""

from __future__ import annotations

import datetime as _dt
import math
from typing import Any, Iterable

import duckdb

from dbtier.core.errors import DbtierError
from dbtier.history.tidy import COUNTERS, EXTRA_COUNTERS, MB, sql_str

PCTS = (50, 95, 99)
PEAK_METRICS = ("read_iops", "write_iops", "read_mbps", "write_mbps")

_TWO32 = 4294967296.0
_TWO64 = 18446744073709551616.0


def _modulus(bits: object, prev: str) -> str:
    if bits in (None, 0, "none"):
        return "NULL"
    if bits == 32:
        return repr(_TWO32)
    if bits == 64:
        return repr(_TWO64)
    if bits == "auto":
        return f"(CASE WHEN {prev} < {_TWO32!r} THEN {_TWO32!r} ELSE {_TWO64!r} END)"
    raise ValueError(f"unknown counter width {bits!r}")


def intervals_from_counters(con: duckdb.DuckDBPyConnection, counters: str, out: str,
                            wrap_bits: dict[str, object] | None = None, one_unit: bool = False) -> None:
    """`counters` (see tidy.py) -> `out` (INTERVAL columns plus the deltas) and `{out}_events`
    (per database: restarts, wraps, intervals dropped). `one_unit`: the reader promises one unit per
    database and file type, so there is nothing to add up per interval (a faster path)."""
    wrap_bits = wrap_bits or {}
    ALL = COUNTERS + EXTRA_COUNTERS
    lags = ", ".join(f"lag({c}) OVER w AS p_{c}" for c in ALL)
    wraps, resets, deltas = [], [], []
    for c in ALL:
        m = _modulus(wrap_bits.get(c), f"p_{c}")
        if m == "NULL":
            wrap = "false"
        else:
            wrap = (f"coalesce({c} < p_{c} AND p_{c} < {m} AND {c} < {m} "
                    f"AND (({m} - p_{c}) + {c}) < {m} / 2, false)")
        wraps.append(wrap)
        resets.append(f"coalesce({c} < p_{c}, false) AND NOT {wrap}")
        deltas.append(f"CASE WHEN {c} >= p_{c} THEN {c} - p_{c} "
                      + (f"WHEN {wrap} THEN ({m} - p_{c}) + {c} " if m != "NULL" else "") + f"END AS d_{c}")
    same = " AND ".join(f"{c} IS NOT DISTINCT FROM p_{c}" for c in ALL) + " AND epoch IS NOT DISTINCT FROM p_epoch"
    any_wrap = " OR ".join(w for w in wraps if w != "false") or "false"
    rates = f"""d_read_ios / seconds AS read_iops, d_write_ios / seconds AS write_iops,
               CASE WHEN d_read_ios IS NULL AND d_write_ios IS NULL THEN NULL
                    ELSE (coalesce(d_read_ios, 0) + coalesce(d_write_ios, 0)) / seconds END AS iops,
               d_read_bytes / seconds / {MB} AS read_mbps, d_write_bytes / seconds / {MB} AS write_mbps,
               CASE WHEN d_read_bytes IS NULL AND d_write_bytes IS NULL THEN NULL
                    ELSE (coalesce(d_read_bytes, 0) + coalesce(d_write_bytes, 0)) / seconds / {MB} END AS mbps,
               d_read_time_ms / nullif(d_read_ios, 0) AS read_lat_ms,
               d_write_time_ms / nullif(d_write_ios, 0) AS write_lat_ms,
               d_read_bytes / nullif(d_read_ios, 0) / 1000 AS read_io_kb,
               d_write_bytes / nullif(d_write_ios, 0) / 1000 AS write_io_kb,
               d_redo_bytes / seconds / {MB} AS redo_mbps"""
    flagged = f"""
        WITH l AS (SELECT database, file_type, unit, role, sample_time, epoch, {', '.join(ALL)},
                          lag(sample_time) OVER w AS p_time, lag(epoch) OVER w AS p_epoch, {lags}
                   FROM {counters}
                   WINDOW w AS (PARTITION BY database, file_type, unit ORDER BY sample_time))
        SELECT database, file_type, unit, role, p_time, sample_time,
               p_time = sample_time AS dup,
               p_time = sample_time AND NOT ({same}) AS conflict,
               p_time < sample_time AND ((epoch IS NOT NULL AND p_epoch IS NOT NULL AND epoch <> p_epoch)
                                         OR {' OR '.join(f'({r})' for r in resets)}) AS restart,
               {any_wrap} AS wrapped,
               {', '.join(deltas)}
        FROM l"""
    if one_unit:   # one pass: flags and rates together; `out` is a view of the valid intervals
        con.execute(f"DROP VIEW IF EXISTS {out}")
        con.execute(f"""
            CREATE OR REPLACE TABLE _deltas AS
            SELECT database, file_type, unit, role, p_time AS start, sample_time AS "end", sample_time, dup,
                   conflict, restart, wrapped, seconds, {rates}
            FROM (SELECT *, (epoch_us(sample_time) - epoch_us(p_time)) / 1e6 AS seconds FROM ({flagged}))""")
    else:
        con.execute(f"CREATE OR REPLACE TABLE _deltas AS {flagged}")
    conflict = con.execute("SELECT database, file_type, unit, sample_time FROM _deltas WHERE conflict LIMIT 1").fetchone()
    if conflict:
        db, ft, unit, t = conflict
        files = [r[0] for r in con.execute(
            f"SELECT DISTINCT _file FROM {counters} WHERE database = ? AND file_type = ? AND unit = ? "
            "AND sample_time = ? ORDER BY 1", [db, ft, unit, t]).fetchall() if r[0]]
        raise DbtierError(f"{' and '.join(files) or 'the input'}: duplicate snapshots with different values: "
                          f"{db}, {ft} ({unit}) at {t.isoformat(sep=' ')} UTC appears twice",
                          "export each snapshot once, or import the overlapping files separately")
    con.execute(f"""
        CREATE OR REPLACE TABLE {out}_events AS
        SELECT database,
               count(DISTINCT sample_time) FILTER (WHERE restart) AS restarts,
               count(*) FILTER (WHERE wrapped AND NOT restart AND NOT dup) AS wraps,
               count(DISTINCT sample_time) FILTER (WHERE dup) AS duplicates
        FROM _deltas GROUP BY database""")
    if one_unit:
        con.execute(f"DROP TABLE IF EXISTS {out}_rows")
        con.execute(f"ALTER TABLE _deltas RENAME TO {out}_rows")
        con.execute(f"""CREATE OR REPLACE VIEW {out} AS SELECT database, file_type, role, start, "end", seconds,
                            read_iops, write_iops, iops, read_mbps, write_mbps, mbps, read_lat_ms, write_lat_ms,
                            read_io_kb, write_io_kb, redo_mbps
                        FROM {out}_rows WHERE start < "end" AND NOT restart""")
        return
    sums = ", ".join(f"sum(d_{c}) AS d_{c}" for c in ALL)
    con.execute(f"DROP VIEW IF EXISTS {out}")
    con.execute(f"""
        CREATE OR REPLACE TABLE {out} AS
        WITH a AS (
            SELECT database, file_type, role, p_time AS start, sample_time AS "end",
                   (epoch_us(sample_time) - epoch_us(p_time)) / 1e6 AS seconds, {sums}
            FROM _deltas WHERE p_time < sample_time AND NOT restart
            GROUP BY database, file_type, role, p_time, sample_time)
        SELECT database, file_type, role, start, "end", seconds, {rates}
        FROM a""")
    con.execute("DROP TABLE _deltas")


def totals(con: duckdb.DuckDBPyConnection, intervals: str, out: str) -> None:
    """Per database and interval: its `total` rows if it has any, else the sum of its `part` rows."""
    con.execute(f"DROP VIEW IF EXISTS {out}")
    con.execute(f"""CREATE OR REPLACE TABLE _pick AS
                    SELECT database, bool_or(role = 'total') AS has_total,
                           count(DISTINCT file_type) FILTER (WHERE role = 'total') AS n_total,
                           count(DISTINCT file_type) FILTER (WHERE role = 'part') AS n_part
                    FROM {intervals} GROUP BY database""")
    single = con.execute("SELECT coalesce(bool_and(CASE WHEN has_total THEN n_total = 1 ELSE n_part = 1 END), true) "
                         "FROM _pick").fetchone()[0]
    chosen = "i.role = CASE WHEN p.has_total THEN 'total' ELSE 'part' END"
    if single:   # one row per interval already: a filter (a view: no copy of millions of rows)
        con.execute(f"DROP TABLE IF EXISTS {out}")
        con.execute(f"""
            CREATE OR REPLACE VIEW {out} AS
            SELECT i.database, i.start, i."end", i.seconds, i.read_iops, i.write_iops, i.iops, i.read_mbps,
                   i.write_mbps, i.mbps, i.read_lat_ms, i.write_lat_ms
            FROM {intervals} i JOIN _pick p ON i.database = p.database WHERE {chosen}""")
        return
    con.execute(f"""
        CREATE OR REPLACE TABLE {out} AS
        SELECT i.database, i.start, i."end", max(i.seconds) AS seconds,
               sum(i.read_iops) AS read_iops, sum(i.write_iops) AS write_iops, sum(i.iops) AS iops,
               sum(i.read_mbps) AS read_mbps, sum(i.write_mbps) AS write_mbps, sum(i.mbps) AS mbps,
               sum(i.read_lat_ms * i.read_iops) / nullif(sum(CASE WHEN i.read_lat_ms IS NOT NULL
                                                              THEN i.read_iops END), 0) AS read_lat_ms,
               sum(i.write_lat_ms * i.write_iops) / nullif(sum(CASE WHEN i.write_lat_ms IS NOT NULL
                                                                THEN i.write_iops END), 0) AS write_lat_ms
        FROM {intervals} i JOIN _pick p ON i.database = p.database
        WHERE {chosen}
        GROUP BY i.database, i.start, i."end" """)



def _num(x: Any) -> float | None:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _quants(q: Any, mx: Any) -> dict[str, float | None]:
    vals = list(q) if q is not None else [None] * len(PCTS)
    out = {f"p{p}": _num(v) for p, v in zip(PCTS, vals)}
    out["max"] = _num(mx)
    return out


def iso(ts: _dt.datetime | None) -> str | None:
    if ts is None:
        return None
    return ts.replace(tzinfo=None).isoformat(timespec="seconds") + "Z"


def peaks(con: duckdb.DuckDBPyConnection, table: str, by: str | None = "database",
          metrics: Iterable[str] = PEAK_METRICS + ("iops", "mbps")) -> dict[str | None, dict[str, Any]]:
    """{key: {intervals, start, end, peaks: {metric: {p50, p95, p99, max}}}} over `table`'s rows."""
    metrics = list(metrics)
    qs = ", ".join(f"quantile_cont({m}, [{', '.join(str(p / 100) for p in PCTS)}]) AS q_{m}, max({m}) AS m_{m}"
                   for m in metrics)
    key = by if by else "NULL"
    grp = f"GROUP BY {by}" if by else ""
    res = con.execute(f'SELECT {key} AS k, count(*) AS n, min(start) AS s, max("end") AS e, {qs} '
                      f"FROM {table} {grp} ORDER BY k").fetchall()
    out: dict[str | None, dict[str, Any]] = {}
    for row in res:
        k, n, s, e = row[:4]
        vals = row[4:]
        out[k] = {"intervals": int(n), "start": iso(s), "end": iso(e),
                  "peaks": {m: _quants(vals[2 * i], vals[2 * i + 1]) for i, m in enumerate(metrics)}}
    return out


def top_intervals(con: duckdb.DuckDBPyConnection, table: str, n: int, by: str = "database") -> dict[str, list[dict]]:
    """The `n` intervals of highest total IOPS per database (ties: the earlier first). One hash
    aggregation (max_by keeps the n best), no sort of the whole series."""
    res = con.execute(f"""
        SELECT {by}, max_by({{'start': start, 'end': "end", 'read_iops': read_iops, 'write_iops': write_iops,
                              'iops': iops, 'read_mbps': read_mbps, 'write_mbps': write_mbps, 'mbps': mbps}},
                            (coalesce(iops, -1), -epoch(start)), {int(n)})
        FROM {table} GROUP BY {by}""").fetchall()
    out: dict[str, list[dict]] = {}
    for k, items in res:
        out[k] = [{"start": iso(t["start"]), "end": iso(t["end"]),
                   **{m: _num(t[m]) for m in ("read_iops", "write_iops", "iops", "read_mbps", "write_mbps", "mbps")}}
                  for t in items]
    return out


def local_sql(col: str, tz: str) -> str:
    return col if tz == "UTC" else f"timezone({sql_str(tz)}, timezone('UTC', {col}))"


def profiles(con: duckdb.DuckDBPyConnection, table: str, out: str, tz: str = "UTC", by: str = "database") -> None:
    """`out`: {by}, kind (hour | dow | dow_hour), key (0-23 | 1-7 Monday first | (dow-1)*24+hour),
    intervals, mean/max of iops and mbps, mean of read/write iops and mbps."""
    loc = local_sql("start", tz)
    aggs = ("count(*) AS intervals, avg(iops) AS mean_iops, max(iops) AS max_iops, avg(mbps) AS mean_mbps, "
            "max(mbps) AS max_mbps, avg(read_iops) AS mean_read_iops, avg(write_iops) AS mean_write_iops, "
            "avg(read_mbps) AS mean_read_mbps, avg(write_mbps) AS mean_write_mbps")
    con.execute(f"""
        CREATE OR REPLACE TABLE {out} AS
        WITH t AS (SELECT *, hour({loc}) AS h, isodow({loc}) AS d FROM {table})
        SELECT {by}, 'hour' AS kind, h AS key, {aggs} FROM t GROUP BY {by}, h
        UNION ALL SELECT {by}, 'dow', d, {aggs} FROM t GROUP BY {by}, d
        UNION ALL SELECT {by}, 'dow_hour', (d - 1) * 24 + h, {aggs} FROM t GROUP BY {by}, d, h""")


def file_type_summary(con: duckdb.DuckDBPyConnection, intervals: str) -> dict[str, list[dict[str, Any]]]:
    """Per database, per file type: intervals, IOPS and MB/s p95/max, latency p50/p95 where known."""
    cols = {d[0] for d in con.execute(f"SELECT * FROM {intervals} LIMIT 0").description}
    redo = ("quantile_cont(redo_mbps, 0.95), max(redo_mbps)" if "redo_mbps" in cols else "NULL, NULL")
    res = con.execute(f"""
        SELECT database, file_type, any_value(role), count(*),
               quantile_cont(iops, 0.95), max(iops), quantile_cont(mbps, 0.95), max(mbps),
               quantile_cont(read_lat_ms, [0.5, 0.95]), quantile_cont(write_lat_ms, [0.5, 0.95]),
               max(read_iops), max(write_iops), max(read_mbps), max(write_mbps),
               {redo}
        FROM {intervals} GROUP BY database, file_type ORDER BY database, max(iops) DESC NULLS LAST, file_type
        """).fetchall()
    out: dict[str, list[dict[str, Any]]] = {}
    for db, ft, role, n, ip95, imax, mp95, mmax, rl, wl, ri, wi, rm, wm, rp95, rmax in res:
        item = {"file_type": ft, "role": role, "intervals": int(n),
                "iops": {"p95": _num(ip95), "max": _num(imax)}, "mbps": {"p95": _num(mp95), "max": _num(mmax)},
                "max_read_iops": _num(ri), "max_write_iops": _num(wi),
                "max_read_mbps": _num(rm), "max_write_mbps": _num(wm)}
        if rl is not None and any(v is not None for v in rl):
            item["read_lat_ms"] = {"p50": _num(rl[0]), "p95": _num(rl[1])}
        if wl is not None and any(v is not None for v in wl):
            item["write_lat_ms"] = {"p50": _num(wl[0]), "p95": _num(wl[1])}
        if rmax is not None:
            item["redo_mbps"] = {"p95": _num(rp95), "max": _num(rmax)}
        out.setdefault(db, []).append(item)
    return out


def events(con: duckdb.DuckDBPyConnection, table: str) -> dict[str, dict[str, int]]:
    """Per database: restarts (new segments), wraps taken as deltas, identical duplicate samples dropped."""
    try:
        res = con.execute(f"SELECT database, restarts, wraps, duplicates FROM {table}").fetchall()
    except duckdb.Error:
        return {}
    return {db: {"restarts": int(r), "wraps": int(w), "duplicates": int(d)} for db, r, w, d in res}
