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
  each counter's width: 32, 64, or `auto` (32 while the previous value was below 2^32, else 64),
  with a scale where the counter is held in other units than it wraps in (sectors held as bytes:
  it wraps at 2^32 sectors, 2^41 bytes). `wraps` counts the units that are added up (a
  partition's wrap, a `detail` row, is not counted again).
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
from typing import Any, Iterable, Iterator, Sequence

import duckdb

from dbtier.core.errors import DbtierError
from dbtier.core.files import sql_str
from dbtier.history import limits
from dbtier.history import store
from dbtier.history.tables import COUNTERS, EXTRA_COUNTERS, MB

PCTS = (50, 95, 99)
PEAK_METRICS = ("read_iops", "write_iops", "read_mbps", "write_mbps")

_TWO32 = 4294967296.0
_TWO64 = 18446744073709551616.0


def _modulus(bits: object, prev: str) -> str:
    """The counter's range, in the unit it is held in: `(width, scale)` for a counter the source counts in
    units of `scale` (diskstats sectors held as bytes: 512), so the wrap happens at 2^width x scale."""
    scale = 1
    if isinstance(bits, tuple):
        bits, scale = bits
    if bits in (None, 0, "none"):
        return "NULL"
    two32, two64 = _TWO32 * scale, _TWO64 * scale
    if bits == 32:
        return repr(two32)
    if bits == 64:
        return repr(two64)
    if bits == "auto":
        return f"(CASE WHEN {prev} < {two32!r} THEN {two32!r} ELSE {two64!r} END)"
    raise ValueError(f"unknown counter width {bits!r}")


def intervals_from_counters(con: duckdb.DuckDBPyConnection, counters: str, out: str,
                            wrap_bits: dict[str, object] | None = None, one_unit: bool = False,
                            absent: Iterable[str] = (), series_by: Sequence[str] = ("database", "file_type", "unit"),
                            constant: dict[str, str] | None = None) -> None:
    """`counters` (see tables.py) -> `out` (INTERVAL columns plus the deltas) and `{out}_events`
    (per database: restarts, wraps, intervals dropped). `one_unit`: the reader promises one unit per
    database and file type, so there is nothing to add up per interval (a faster path). `absent`:
    counters the reader never fills (NULL on every row): not carried through the window. `series_by`:
    the columns that tell one unit's series from another's, when the reader knows fewer suffice (a
    window partitioned by one key sorts much faster than by three). `constant`: label columns with one
    value on every row (e.g. file_type and role of AWR's sysstat totals): not carried either."""
    wrap_bits = wrap_bits or {}
    constant = dict(constant or {})
    ALL = tuple(c for c in COUNTERS + EXTRA_COUNTERS if c not in set(absent))
    labels = [c for c in ("database", "file_type", "unit", "role") if c not in constant or c == "database"]
    keep = [*labels, "sample_time", "epoch", *ALL, "lag(sample_time) OVER w AS p_time",
            "lag(epoch) OVER w AS p_epoch", *(f"lag({c}) OVER w AS p_{c}" for c in ALL)]
    wraps, resets, deltas = [], [], []
    missing = ", ".join(f"CAST(NULL AS DOUBLE) AS d_{c}" for c in COUNTERS + EXTRA_COUNTERS if c not in ALL)
    with_missing = f"*, {missing}" if missing else "*"
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
    same = " AND ".join([f"{c} IS NOT DISTINCT FROM p_{c}" for c in ALL] + ["epoch IS NOT DISTINCT FROM p_epoch"])
    any_wrap = " OR ".join(w for w in wraps if w != "false") or "false"
    # The constants come back as literals wherever _deltas is read (constant vectors cost nothing).
    lits = [f"{sql_str(v)} AS {c}" for c, v in constant.items() if c != "database"]
    if any_wrap == "false":
        lits.append("false AS wrapped")
    src = f"(SELECT *, {', '.join(lits)} FROM _deltas)" if lits else "_deltas"
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
        WITH l AS (SELECT {', '.join(keep)}
                   FROM {counters}
                   WINDOW w AS (PARTITION BY {', '.join(series_by)} ORDER BY sample_time))
        SELECT {', '.join(labels)}, p_time AS start, sample_time AS "end",
               (epoch_us(sample_time) - epoch_us(p_time)) / 1e6 AS seconds,
               p_time = sample_time AS dup,
               CASE WHEN p_time = sample_time THEN NOT ({same}) ELSE false END AS conflict,
               CASE WHEN p_time < sample_time THEN (epoch IS NOT NULL AND p_epoch IS NOT NULL AND epoch <> p_epoch)
                                                   OR {' OR '.join([f'({r})' for r in resets] or ['false'])}
                    ELSE false END AS restart,
               {'' if any_wrap == 'false' else any_wrap + ' AS wrapped, '}{', '.join(deltas)}
        FROM l"""
    # One pass through the window into _deltas (only the counters there are: millions of rows);
    # rates are worked out on reading, by the view `out` (one_unit) or after adding up units.
    con.execute(f"DROP VIEW IF EXISTS {out}")
    con.execute(f"CREATE OR REPLACE TABLE _deltas AS {flagged}")
    conflict = con.execute(f'SELECT database, file_type, unit, "end" FROM {src} WHERE conflict LIMIT 1').fetchone()
    if conflict:
        db, ft, unit, t = conflict
        files = [r[0] for r in con.execute(
            f"SELECT DISTINCT _file FROM {counters} WHERE database = ? AND file_type = ? AND unit = ? "
            "AND sample_time = ? ORDER BY 1", [db, ft, unit, t]).fetchall() if r[0]]
        raise DbtierError(f"{' and '.join(files) or 'the input'}: duplicate snapshots with different values: "
                          f"{db}, {ft} ({unit}) at {t.isoformat(sep=' ')} UTC appears twice",
                          "export each snapshot once, or import the overlapping files separately")
    # The events, and (one_unit) what totals() needs to know of the valid intervals, in one pass.
    shape = ", " + _PICK.format(valid="AND start < \"end\" AND NOT restart") if one_unit else ""
    absurd = _absurd_sql(ALL)
    con.execute(f"""
        CREATE OR REPLACE TABLE {out}_events AS
        SELECT database,
               count(DISTINCT "end") FILTER (WHERE restart) AS restarts,
               count(*) FILTER (WHERE wrapped AND NOT restart AND NOT dup
                                AND role IS DISTINCT FROM 'detail') AS wraps,
               count(DISTINCT "end") FILTER (WHERE dup) AS duplicates,
               coalesce(bool_or({absurd}) FILTER (WHERE start < "end" AND NOT restart), false) AS absurd{shape}
        FROM {src} GROUP BY database""")
    if store.one_row(con.execute(f"SELECT bool_or(absurd) FROM {out}_events"))[0]:
        _refuse_absurd(con, src, counters, ALL, absurd)
    if one_unit:
        con.execute(f"DROP TABLE IF EXISTS {out}_rows")
        con.execute(f"ALTER TABLE _deltas RENAME TO {out}_rows")
        con.execute(f"""CREATE OR REPLACE VIEW {out} AS SELECT database, file_type, role, start, "end", seconds, {rates}
                        FROM (SELECT {with_missing}{''.join(', ' + l for l in lits)} FROM {out}_rows
                              WHERE start < "end" AND NOT restart)""")
        return
    sums = ", ".join(f"sum(d_{c}) AS d_{c}" for c in ALL)
    con.execute(f"""
        CREATE OR REPLACE TABLE {out} AS
        WITH a AS (
            SELECT database, file_type, role, start, "end", any_value(seconds) AS seconds, {sums}
            FROM {src} WHERE start < "end" AND NOT restart
            GROUP BY database, file_type, role, start, "end")
        SELECT database, file_type, role, start, "end", seconds, {rates}
        FROM (SELECT {with_missing} FROM a)""")
    con.execute("DROP TABLE _deltas")


# Rates of one unit over one interval that no storage does (limits.py): a corrupt or mistyped
# counter. Checked in the pass that counts the events, so valid input pays one more aggregate.
_RATE_CHECKS = (("read_ios", "iops", None), ("write_ios", "iops", None), ("read_bytes", "bytes_per_s", None),
                ("write_bytes", "bytes_per_s", None), ("redo_bytes", "bytes_per_s", None),
                ("read_time_ms", "lat_ms", "read_ios"), ("write_time_ms", "lat_ms", "write_ios"))
_LIMIT = {"iops": limits.MAX_IOPS, "bytes_per_s": limits.MAX_BYTES_PER_S, "lat_ms": limits.MAX_LAT_MS}


def _rate_sql(c: str, per: str | None) -> str:
    return f"d_{c} / nullif(d_{per}, 0)" if per else f"d_{c} / seconds"


def _absurd_sql(present: Sequence[str]) -> str:
    conds = [f"{_rate_sql(c, per)} > {_LIMIT[kind]!r}" for c, kind, per in _RATE_CHECKS
             if c in present and (per is None or per in present)]
    return "(" + " OR ".join(conds or ["false"]) + ")"


def _refuse_absurd(con: duckdb.DuckDBPyConnection, src: str, counters: str, present: Sequence[str],
                   absurd: str) -> None:
    """The first absurd interval, as one error naming the file, the unit, the times and the values (the
    caller found one)."""
    checks = [(c, kind, per) for c, kind, per in _RATE_CHECKS if c in present and (per is None or per in present)]
    row = store.one_row(con.execute(f"""SELECT database, file_type, unit, start, "end", seconds,
                                 {', '.join(_rate_sql(c, per) for c, _, per in checks)}
                          FROM {src} WHERE start < "end" AND NOT restart AND {absurd}
                          ORDER BY "end", database LIMIT 1"""))
    db, ft, unit, start, end, secs, *rates = row
    c, kind, _ = next(ch for ch, v in zip(checks, rates) if v is not None and not (v <= _LIMIT[ch[1]]))
    got = con.execute(f"""SELECT sample_time, {c}, _file FROM {counters}
                          WHERE database = ? AND file_type = ? AND unit = ? AND sample_time IN (?, ?)
                          ORDER BY sample_time""", [db, ft, unit, start, end]).fetchall()
    vals = " to ".join(f"{v:.17g}" for _, v, _ in got if v is not None)
    files = sorted({str(f) for *_, f in got if f})
    last = got[-1][1] if got else None
    line = _line_of(files[-1], last) if files and last is not None else None
    where = f"{files[-1]}: line {line}" if line else (" and ".join(files) or "the input")
    v = next(v for ch, v in zip(checks, rates) if ch[0] == c)
    raise DbtierError(f"{where}: {db}, {ft} ({unit}), {c.replace('_', ' ')} from {vals} over "
                      f"{secs:g} s ending {end.isoformat(sep=' ')} UTC: {limits.rate_problem(kind, v)}",
                      "fix or remove that sample (or export it again)")


def _line_of(path: str, value: float) -> int | None:
    """The first line of `path` holding `value` as one of its fields, in the file's own unit
    (bytes may be printed as 512-byte sectors, MiB or 8 KiB blocks). None if not found."""
    import re as _re
    targets = {value, value / 512, value / 1048576, value / 8192}
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                for tok in _re.split(r'[\s,;|"]+', line):
                    try:
                        if tok and float(tok) in targets:
                            return n
                    except ValueError:
                        continue
    except OSError:
        return None
    return None


# Per database, of its intervals: has `total` rows; one file type among them, among its `part`
# rows, among all (min = max: cheaper than counting distinct values); how many rows of each role.
_PICK = """coalesce(bool_or(role = 'total') FILTER (WHERE true {valid}), false) AS has_total,
           min(file_type) FILTER (WHERE role = 'total' {valid}) IS NOT DISTINCT FROM
               max(file_type) FILTER (WHERE role = 'total' {valid}) AS one_total,
           min(file_type) FILTER (WHERE role = 'part' {valid}) IS NOT DISTINCT FROM
               max(file_type) FILTER (WHERE role = 'part' {valid}) AS one_part,
           min(file_type) FILTER (WHERE true {valid}) IS NOT DISTINCT FROM
               max(file_type) FILTER (WHERE true {valid}) AS one_type,
           count(*) FILTER (WHERE true {valid}) AS n,
           count(*) FILTER (WHERE role = 'total' {valid}) AS n_total_rows,
           count(*) FILTER (WHERE role = 'part' {valid}) AS n_part_rows"""


def totals(con: duckdb.DuckDBPyConnection, intervals: str, out: str, pick: str | None = None) -> dict[str, Any]:
    """Per database and interval: its `total` rows if it has any, else the sum of its `part` rows.

    Returns what it found: `intervals` (rows of `intervals`), `multi_file_type` (some database has
    several file types) and `same_rows` (`out` is `intervals` row for row: one file type per
    database, all chosen; then one pass over `intervals` can serve both). `pick`: a table that
    already holds _PICK's columns per database (intervals_from_counters' events): no pass here."""
    con.execute(f"DROP VIEW IF EXISTS {out}")
    if pick:
        con.execute(f"CREATE OR REPLACE TABLE _pick AS SELECT * FROM {pick} WHERE n > 0")
    else:
        con.execute(f"CREATE OR REPLACE TABLE _pick AS SELECT database, {_PICK.format(valid='')} "
                    f"FROM {intervals} GROUP BY database")
    single, all_total, no_total, n, multi, same = store.one_row(con.execute("""
        SELECT coalesce(bool_and(CASE WHEN has_total THEN one_total ELSE n_part_rows > 0 AND one_part END), true),
               coalesce(bool_and(has_total), false), coalesce(bool_and(NOT has_total), false), coalesce(sum(n), 0),
               NOT coalesce(bool_and(one_type), true),
               coalesce(bool_and(one_type AND n = CASE WHEN has_total THEN n_total_rows ELSE n_part_rows END), true)
        FROM _pick"""))
    info = {"intervals": int(n), "multi_file_type": bool(multi), "same_rows": bool(single and same)}
    cols = ('i.database, i.start, i."end", i.seconds, i.read_iops, i.write_iops, i.iops, i.read_mbps, i.write_mbps, '
            'i.mbps, i.read_lat_ms, i.write_lat_ms')
    if single:   # one row per interval already: a filter (a view: no copy of millions of rows)
        if info["same_rows"]:
            where = ""
        elif all_total or no_total:   # the same role for every database: no join
            where = f"WHERE i.role = '{'total' if all_total else 'part'}'"
        else:
            where = ("JOIN _pick p ON i.database = p.database "
                     "WHERE i.role = CASE WHEN p.has_total THEN 'total' ELSE 'part' END")
        con.execute(f"DROP TABLE IF EXISTS {out}")
        con.execute(f"CREATE OR REPLACE VIEW {out} AS SELECT {cols} FROM {intervals} i {where}")
        return info
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
        WHERE i.role = CASE WHEN p.has_total THEN 'total' ELSE 'part' END
        GROUP BY i.database, i.start, i."end" """)
    return info


def finite_or_none(x: Any) -> float | None:
    """A value from DuckDB as a float for result.json: None when missing, NaN or infinite."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _quants(q: Any, mx: Any) -> dict[str, float | None]:
    vals = list(q) if q is not None else [None] * len(PCTS)
    out = {f"p{p}": finite_or_none(v) for p, v in zip(PCTS, vals)}
    out["max"] = finite_or_none(mx)
    return out


def iso(ts: _dt.datetime | None) -> str | None:
    if ts is None:
        return None
    return ts.replace(tzinfo=None).isoformat(timespec="seconds") + "Z"


RATES = ("read_iops", "write_iops", "iops", "read_mbps", "write_mbps", "mbps")


# What consolidate needs to know of a series: its median interval (the grid step), which rates
# are never NULL, and whether IOPS and MB/s are read + write on every row (then they are added up
# after, not weighed). Aggregates, read back by series_shape().
SHAPE_AGGREGATES = (["median(seconds)"] + [f"count({m})" for m in RATES]
                    + [f"""count(*) FILTER (WHERE {a} IS NULL OR {b} IS NULL OR {t} IS NULL
                                           OR abs({t} - {a} - {b}) > 1e-9 * greatest(1, {t}))"""
                       for a, b, t in (("read_iops", "write_iops", "iops"), ("read_mbps", "write_mbps", "mbps"))])


def series_shape(n: int, values: Sequence[Any]) -> dict[str, Any]:
    """The `series_shape` of an import document, from SHAPE_AGGREGATES over `n` intervals."""
    med, *counts, not_i, not_m = values
    return {"median_interval_s": finite_or_none(med), "complete": [m for m, c in zip(RATES, counts) if c == n],
            "iops_is_sum": not_i == 0, "mbps_is_sum": not_m == 0}


def summarise(con: duckdb.DuckDBPyConnection, table: str, by: Sequence[str] = ("database",), top: int = 0,
              detail: bool = False, shape: bool = False, also: Sequence[str] = ()) -> dict[tuple, dict[str, Any]]:
    """One aggregation over `table` grouped by `by` (a few full passes over millions of rows are
    the cost of a history import, so everything a group needs is taken in the same pass):
    {key tuple: {intervals, start, end, peaks: {metric: {p50, p95, p99, max}}, top, ...}}.

    `top`: the N intervals of highest total IOPS (ties: the earlier first; max_by keeps the N best,
    no sort of the whole series). `detail`: the role, latency p50/p95 and redo MB/s p95/max too.
    `shape`: what consolidate needs to know of a series (see consolidate._shape), at no extra pass.
    `also`: columns with one value per group, taken as they are (cheaper than grouping by them too)."""
    cols = {d[0] for d in con.execute(f"SELECT * FROM {table} LIMIT 0").description}
    qlist = "[" + ", ".join(str(p / 100) for p in PCTS) + "]"
    aggs = ['count(*)', 'min(start)', 'max("end")']
    aggs += [f"quantile_cont({m}, {qlist}), max({m})" for m in RATES]
    if top:
        aggs.append(f"""max_by({{'start': start, 'end': "end", {', '.join(f"'{m}': {m}" for m in RATES)}}},
                               (coalesce(iops, -1), -epoch(start)), {int(top)})""")
    if shape:
        aggs += SHAPE_AGGREGATES
    aggs += [f"any_value({c})" for c in also]
    if detail:
        aggs.append("any_value(role)" if "role" in cols else "NULL")
        aggs += [f"quantile_cont({m}, [0.5, 0.95])" if m in cols else "NULL" for m in ("read_lat_ms", "write_lat_ms")]
        aggs.append("quantile_cont(redo_mbps, 0.95), max(redo_mbps)" if "redo_mbps" in cols else "NULL, NULL")
    keys = ", ".join(by)
    query = (f"SELECT {keys + ', ' if by else ''}{', '.join(aggs)} FROM {table} {WHERE_SLOT} "
             f"{'GROUP BY ' + keys + ' ORDER BY ' + keys if by else ''}")
    out: dict[tuple, dict[str, Any]] = {}
    for row in _batched_rows(con, query, table, by[0] if by else None):
        key, vals = tuple(row[:len(by)]), list(row[len(by):])
        n, s, e = vals[:3]
        item: dict[str, Any] = {"intervals": int(n), "start": iso(s), "end": iso(e),
                                "peaks": {m: _quants(vals[3 + 2 * i], vals[4 + 2 * i]) for i, m in enumerate(RATES)}}
        rest = vals[3 + 2 * len(RATES):]
        if top:
            item["top"] = [{"start": iso(t["start"]), "end": iso(t["end"]), **{m: finite_or_none(t[m]) for m in RATES}}
                           for t in rest.pop(0) or []]
        if shape:
            item["shape"] = series_shape(n, rest[:len(SHAPE_AGGREGATES)])
            rest = rest[len(SHAPE_AGGREGATES):]
        for c in also:
            item[c] = rest.pop(0)
        if detail:
            role, rl, wl, rp95, rmax = rest
            item["role"] = role
            for name, q in (("read_lat_ms", rl), ("write_lat_ms", wl)):
                if q is not None and any(v is not None for v in q):
                    item[name] = {"p50": finite_or_none(q[0]), "p95": finite_or_none(q[1])}
            if rmax is not None:
                item["redo_mbps"] = {"p95": finite_or_none(rp95), "max": finite_or_none(rmax)}
        out[key] = item
    return out


# An exact quantile is a holistic aggregate: it holds every value of its groups in memory at once (DuckDB
# cannot spill it; about 115 bytes a row for summarise's quantiles, measured on 3,000 databases' AWR year).
# summarise takes the groups of at most half the memory limit's worth of rows a query, so a fleet's
# thousands of databases cost a few scans of the table, not memory in proportion to the fleet (and a fleet
# that fits, one query). BATCH_ROWS, when set, overrides the computed size (tests).
QUANTILE_ROW_BYTES = 128
BATCH_ROWS: int | None = None


def batch_rows() -> int:
    from dbtier.history.store import memory_limit_mb
    return BATCH_ROWS if BATCH_ROWS is not None else memory_limit_mb() * 1024 * 1024 // 2 // QUANTILE_ROW_BYTES
WHERE_SLOT = "/* where */"


def _batched_rows(con: duckdb.DuckDBPyConnection, query: str, table: str, key: str | None) -> Iterator[tuple]:
    """The rows of `query` (its WHERE_SLOT filled in), run over batches of `key`'s groups of at most
    batch_rows() rows in all (one group larger than that is a batch of its own), in key order: the same rows
    as one query over the whole table."""
    counts = con.execute(f"SELECT {key}, count(*) FROM {table} GROUP BY {key} ORDER BY {key}").fetchall() \
        if key else []
    limit = batch_rows()
    if sum(c for _, c in counts) <= limit or any(k is None for k, _ in counts):
        yield from con.execute(query.replace(WHERE_SLOT, "")).fetchall()
        return
    batches: list[list[Any]] = [[]]
    rows = 0
    for k, c in counts:
        if batches[-1] and rows + c > limit:
            batches.append([])
            rows = 0
        batches[-1].append(k)
        rows += c
    for batch in batches:
        con.execute("CREATE OR REPLACE TEMP TABLE _summarise_batch AS SELECT unnest(?) AS k", [batch])
        yield from con.execute(query.replace(WHERE_SLOT, f"WHERE {key} IN (SELECT k FROM _summarise_batch)")).fetchall()
    con.execute("DROP TABLE IF EXISTS _summarise_batch")


def peaks(con: duckdb.DuckDBPyConnection, table: str, by: str | None = "database") -> dict[str | None, dict[str, Any]]:
    """{key: {intervals, start, end, peaks: {metric: {p50, p95, p99, max}}}} over `table`'s rows."""
    return {(k[0] if by else None): v for k, v in summarise(con, table, (by,) if by else ()).items()}


def file_type_item(file_type: str, v: dict[str, Any]) -> dict[str, Any]:
    """One file type's line of the import document, from its summarise() entry."""
    pk = v["peaks"]
    item = {"file_type": file_type, "role": v.get("role"), "intervals": v["intervals"],
            "iops": {"p95": pk["iops"]["p95"], "max": pk["iops"]["max"]},
            "mbps": {"p95": pk["mbps"]["p95"], "max": pk["mbps"]["max"]},
            **{f"max_{m}": pk[m]["max"] for m in PEAK_METRICS}}
    item.update({k: v[k] for k in ("read_lat_ms", "write_lat_ms", "redo_mbps") if k in v})
    return item


def file_type_summary(con: duckdb.DuckDBPyConnection, intervals: str) -> dict[str, list[dict[str, Any]]]:
    """Per database, per file type (busiest first): intervals, IOPS and MB/s p95/max, latency p50/p95 where known."""
    out: dict[str, list[dict[str, Any]]] = {}
    for (db, ft), v in sorted(summarise(con, intervals, ("database", "file_type"), detail=True).items(),
                              key=lambda kv: (kv[0][0], -(kv[1]["peaks"]["iops"]["max"] or -1.0), kv[0][1])):
        out.setdefault(db, []).append(file_type_item(ft, v))
    return out


def local_sql(col: str, tz: str) -> str:
    return col if tz == "UTC" else f"timezone({sql_str(tz)}, timezone('UTC', {col}))"


def profiles(con: duckdb.DuckDBPyConnection, table: str, out: str, tz: str = "UTC", by: str = "database") -> None:
    """`out`: {by}, kind (hour | dow | dow_hour), key (0-23 | 1-7 Monday first | (dow-1)*24+hour),
    intervals, mean/max of iops and mbps, mean of read/write iops and mbps.

    One pass over the series into the 168 hours of the week; hours and days are added up from those."""
    loc = local_sql("start", tz)
    # Hour of the week, Monday 00:00 = 0. In UTC after 1970 it is plain arithmetic on the epoch
    # (1970-01-01 was a Thursday: hour 72 of its week), cheaper than isodow() and hour().
    week_hour = f"(isodow({loc}) - 1) * 24 + hour({loc})"
    if tz == "UTC":
        week_hour = (f"CASE WHEN start >= TIMESTAMP '1970-01-01' THEN (epoch_us(start) // 3600000000 + 72) % 168 "
                     f"ELSE {week_hour} END")
    means = ("iops", "mbps", "read_iops", "write_iops", "read_mbps", "write_mbps")
    fine = ", ".join(f"sum({m}) AS s_{m}, count({m}) AS c_{m}" for m in means)
    roll = ", ".join(["sum(n) AS intervals"]
                     + [f"sum(s_{m}) / nullif(sum(c_{m}), 0) AS mean_{m}"
                        + (f", max(x_{m}) AS max_{m}" if m in ("iops", "mbps") else "") for m in means])
    con.execute(f"""
        CREATE OR REPLACE TABLE {out} AS
        WITH f AS (SELECT {by}, {week_hour} AS k, count(*) AS n, {fine},
                          max(iops) AS x_iops, max(mbps) AS x_mbps
                   FROM {table} GROUP BY ALL)
        SELECT {by}, 'hour' AS kind, k % 24 AS key, {roll} FROM f GROUP BY {by}, k % 24
        UNION ALL SELECT {by}, 'dow', k // 24 + 1, {roll} FROM f GROUP BY {by}, k // 24 + 1
        UNION ALL SELECT {by}, 'dow_hour', k, {roll} FROM f GROUP BY {by}, k""")


def events(con: duckdb.DuckDBPyConnection, table: str) -> dict[str, dict[str, int]]:
    """Per database: restarts (new segments), wraps taken as deltas, identical duplicate samples dropped."""
    # deltas() always writes this table: a failure here is a bug to show, not "no restarts" to report.
    res = con.execute(f"SELECT database, restarts, wraps, duplicates FROM {table}").fetchall()
    return {db: {"restarts": int(r), "wraps": int(w), "duplicates": int(d)} for db, r, w, d in res}
