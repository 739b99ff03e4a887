"""Oracle AWR: CSV exports of dba_hist_sysstat and dba_hist_iostat_filetype, with dba_hist_snapshot's times.

Files are told apart by their columns (names as the views have them, any case):

- **sysstat**, long as the view is (`SNAP_ID, DBID, INSTANCE_NUMBER, STAT_NAME, VALUE`), or wide as
  collectors/oracle_awr.sql writes it (one row per snapshot, one column per statistic). The
  statistics: `physical read total IO requests`, `physical write total IO requests`,
  `physical read total bytes`, `physical write total bytes` (the database's total, all file
  types: role `total`), and `redo size` if present (redo generated, as redo_mbps beside them).
- **iostat_filetype** (`FILETYPE_NAME`, `SMALL_READ_REQS`, `LARGE_READ_REQS`, `SMALL_READ_MEGABYTES`, ...
  `SMALL_READ_SERVICETIME`, ...): one `part` row per file type (Data File, Log File, Temp File,
  Control File, Archive Log, ...), with service times, so latency per file type. Oracle counts
  these megabytes as 2^20 bytes.
- **snapshot** (`SNAP_ID, DBID, INSTANCE_NUMBER, STARTUP_TIME, BEGIN_INTERVAL_TIME,
  END_INTERVAL_TIME`, and `SNAP_TIMEZONE` from 12c): needed only when the other files do not carry
  the interval times themselves (the collector's do).

The sample time is END_INTERVAL_TIME; STARTUP_TIME is the epoch (an instance restart starts a new
segment). Times are the database's local time: SNAP_TIMEZONE, when present, gives the offset to
UTC; otherwise `--tz`. Oracle counters are NUMBERs and never wrap. The database is DB_NAME when a
column gives it, else the DBID; with several instances (RAC) each instance is its own series,
`NAME/INSTANCE` (consolidate them to add them up).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import duckdb

from dbtier.core.errors import DbtierError
from dbtier.core.files import sql_str
from dbtier.history import store
from dbtier.history.sources import csvio
from dbtier.history.sources import detect
from dbtier.history.sources.csvio import Layout
from dbtier.history.tables import COUNTER_TABLE_COLUMNS, ReadOptions, ReadResult
from dbtier.history.sources.times import interval_sql, naive_ts_sql, utc_sql

SOURCE = "awr"
KEYS = ("snap_id", "dbid", "instance_number")
TIMES = ("startup_time", "end_interval_time", "snap_timezone")
TIME_COLS = ("startup_time", "end_interval_time")   # read as TIMESTAMP when plain ISO (csvio.load)
STATS = {
    "physical read total io requests": "read_ios",
    "physical read total bytes": "read_bytes",
    "physical write total io requests": "write_ios",
    "physical write total bytes": "write_bytes",
}
REDO = "redo size"
FILETYPE_REQUIRED = ("filetype_name", "small_read_reqs", "large_read_reqs", "small_write_reqs", "large_write_reqs",
                     "small_read_megabytes", "large_read_megabytes", "small_write_megabytes", "large_write_megabytes")
FILETYPE_OPTIONAL = ("small_read_servicetime", "large_read_servicetime", "small_write_servicetime",
                     "large_write_servicetime")
MIB = 1048576.0


def _kind(lay: Layout) -> str | None:
    names = set(lay.names)
    if "filetype_name" in names:
        return "filetype"
    if "stat_name" in names and "value" in names:
        return "sysstat_long"
    if any(s in names for s in STATS):
        return "sysstat_wide"
    if "end_interval_time" in names and "snap_id" in names:
        return "snapshot"
    return None


def _required(kind: str) -> tuple[str, ...]:
    return {"filetype": KEYS + FILETYPE_REQUIRED, "sysstat_long": KEYS + ("stat_name", "value"),
            "sysstat_wide": KEYS + tuple(STATS), "snapshot": KEYS + ("startup_time", "end_interval_time")}[kind]


def sniff_awr(path: str) -> Layout:
    """The file's layout, or an error naming what is missing (or which source it belongs to)."""
    best = None
    head = csvio.head_lines(path)     # read once: a fleet is thousands of files
    for kind in ("filetype", "sysstat_long", "sysstat_wide", "snapshot"):
        got = csvio.sniff(path, _required(kind), head)
        if isinstance(got, Layout):
            if _kind(got) == kind:
                return got
            continue
        if best is None or got[0] > best[1][0]:
            best = (kind, got)
    # A header that names some statistic or file-type column is that kind, whatever else it lacks.
    for kind, signature in (("filetype", ("filetype_name",)), ("sysstat_long", ("stat_name",)),
                            ("sysstat_wide", tuple(STATS))):
        if _has_any(path, signature):
            got = csvio.sniff(path, _required(kind), head)
            if not isinstance(got, Layout):
                raise csvio.header_error(path, _header_line(path), "awr", got[2], got[1],
                                         detect.other_source(path, SOURCE))
    other = detect.other_source(path, SOURCE)
    # A filetype Layout has filetype_name, which _kind calls filetype: the first kind returned or set best.
    assert best is not None
    kind, (found, delim, missing) = best
    if found <= 0 and not other:
        raise DbtierError(f"{path}: line 1: not an AWR export: the header has none of the columns of "
                          "dba_hist_sysstat (SNAP_ID, DBID, INSTANCE_NUMBER, STAT_NAME, VALUE), "
                          "dba_hist_iostat_filetype (FILETYPE_NAME, SMALL_READ_REQS, ...) or dba_hist_snapshot",
                          "export with collectors/oracle_awr.sql (docs/commands/history.md)")
    raise csvio.header_error(path, _header_line(path), "awr", missing, delim, other)


def _has_any(path: str, names: tuple[str, ...]) -> bool:
    lines = [l for l in csvio.head_lines(path, 5) if l.strip()]
    if not lines:
        return False
    header = lines[0]
    return any(csvio.norm(f) in names for d in csvio.DELIMITERS for f in header.split(d))


def _header_line(path: str) -> int:
    for i, line in enumerate(csvio.head_lines(path), 1):
        if line.strip():
            return i
    return 1


def read(con: duckdb.DuckDBPyConnection, paths: Sequence[str | Path], opts: ReadOptions) -> ReadResult:
    layouts: dict[str, list[Layout]] = {}
    for p in paths:
        csvio.check_file(p)
        lay = sniff_awr(str(p))
        layouts.setdefault(_kind(lay) or "?", []).append(lay)
    if not any(k in layouts for k in ("filetype", "sysstat_long", "sysstat_wide")):
        raise DbtierError(f"{', '.join(str(p) for p in paths)}: only dba_hist_snapshot exports; no I/O statistics",
                          "add the dba_hist_sysstat or dba_hist_iostat_filetype export (collectors/oracle_awr.sql)")
    name_cols = ("db_name",)    # the name the export gives (_NAME falls back to the DBID)
    notes: list[str] = []
    selects: list[str] = []      # one SELECT per part, in the counter table's column order

    snap = None
    if "snapshot" in layouts:
        lays = layouts["snapshot"]
        cols = list(KEYS) + list(TIMES) + list(name_cols)
        csvio.load(con, "awr_snap_raw", lays, cols, times=TIME_COLS)
        snap = "awr_snap_raw"

    def times_for(table: str, lays: list[Layout]) -> str:
        """A table of the rows of `table` with interval times, from themselves or from the snapshot export."""
        has_times = all("end_interval_time" in l.names and "startup_time" in l.names for l in lays)
        if has_times:
            return table
        if snap is None:
            lay = next(l for l in lays if "end_interval_time" not in l.names or "startup_time" not in l.names)
            raise DbtierError(f"{lay.path}: no END_INTERVAL_TIME/STARTUP_TIME columns and no dba_hist_snapshot "
                              "export given to take them from",
                              "add the dba_hist_snapshot export to the files (or use collectors/oracle_awr.sql)")
        tcols = ", ".join(f's."{c}" AS "{c}"' for c in TIMES)
        keep = ", ".join(f't."{c}"' for c in _cols_of(con, table) if c not in TIMES)
        joined = f"{table}_t"
        con.execute(f"""CREATE OR REPLACE TABLE {joined} AS SELECT {keep}, {tcols},
                        coalesce(t.db_name, s.db_name) AS db_name_j
                        FROM {table} t LEFT JOIN {snap} s ON trim(t.dbid) = trim(s.dbid)
                        AND trim(t.instance_number) = trim(s.instance_number) AND trim(t.snap_id) = trim(s.snap_id)""")
        miss = con.execute(f'SELECT _file, snap_id FROM {joined} WHERE end_interval_time IS NULL LIMIT 1').fetchone()
        if miss:
            lay = next((l for l in lays if l.path == miss[0]), lays[0])
            line = csvio.locate(lay, "snap_id", miss[1])
            raise DbtierError(f"{miss[0]}: line {line}: snapshot {miss[1]} is not in the dba_hist_snapshot export",
                              "export dba_hist_snapshot for the same period")
        con.execute(f"UPDATE {joined} SET db_name = db_name_j")
        return joined

    parts = []
    time_checks: list = []
    epochs: list[str] = []       # each part's epoch: "startup_time" (a TIMESTAMP) or text
    units: set[str] = set()      # instance numbers seen (more than one: RAC, maybe)
    keys: list[str] = []         # each part's distinct names, instances, zones and files (see _time_exprs)
    if "sysstat_long" in layouts:
        lays = layouts["sysstat_long"]
        cols = list(KEYS) + list(TIMES) + ["stat_name", "value"] + list(name_cols)
        csvio.load(con, "awr_long_raw", lays, cols, numeric=["value"], required=["value"], times=TIME_COLS)
        con.execute(f"DELETE FROM awr_long_raw WHERE lower(trim(stat_name)) NOT IN "
                    f"({', '.join(sql_str(s) for s in list(STATS) + [REDO])})")
        if store.one_row(con.execute("SELECT count(*) FROM awr_long_raw"))[0] == 0:
            raise DbtierError(f"{lays[0].path}: none of the statistics dbtier needs ("
                              + ", ".join(STATS) + ")", "export them with collectors/oracle_awr.sql")
        _check_dupes_long(con, "awr_long_raw", lays)
        pivot = ", ".join(f"max(CASE WHEN lower(trim(stat_name)) = {sql_str(s)} THEN value END) AS \"{s}\""
                          for s in list(STATS) + [REDO])
        group = ", ".join(f'"{c}"' for c in list(KEYS) + list(TIMES) + list(name_cols))
        con.execute(f"""CREATE OR REPLACE TABLE awr_wide_l AS SELECT {group}, any_value(_file) AS _file, {pivot}
                        FROM awr_long_raw GROUP BY {group}""")
        parts.append(("awr_wide_l", lays))
    if "sysstat_wide" in layouts:
        lays = layouts["sysstat_wide"]
        cols = _keys(lays) + list(TIMES) + list(STATS) + [REDO] + list(name_cols)
        csvio.load(con, "awr_wide_raw", lays, cols, numeric=list(STATS) + [REDO], required=STATS, times=TIME_COLS)
        parts.append(("awr_wide_raw", lays))

    for table, lays in parts:
        t = times_for(table, lays)
        ts = _time_exprs(con, t, lays, opts.tz, time_checks, epochs, units, keys)
        name = _NAME
        counters = ", ".join(f'"{s}"' for s in STATS)
        selects.append(f"""
            SELECT {name}, 'total', trim(instance_number), 'total', {ts['end']}, {ts['epoch']}, {counters},
                   NULL, NULL, NULL, _file, "{REDO}" FROM {t} {ts['join']}""")

    if "filetype" in layouts:
        lays = layouts["filetype"]
        cols = _keys(lays) + list(TIMES) + list(FILETYPE_REQUIRED) + list(FILETYPE_OPTIONAL) + list(name_cols)
        csvio.load(con, "awr_ft_raw", lays, cols, numeric=list(FILETYPE_REQUIRED[1:]) + list(FILETYPE_OPTIONAL),
                   required=FILETYPE_REQUIRED[1:], times=TIME_COLS)
        t = times_for("awr_ft_raw", lays)
        ts = _time_exprs(con, t, lays, opts.tz, time_checks, epochs, units, keys)
        name = _NAME

        def n(c: str) -> str:
            return f'coalesce("{c}", 0)'

        def opt2(a: str, b: str) -> str:
            return f'CASE WHEN "{a}" IS NULL AND "{b}" IS NULL THEN NULL ELSE coalesce("{a}", 0) + coalesce("{b}", 0) END'

        selects.append(f"""
            SELECT {name}, trim(filetype_name), trim(instance_number), 'part', {ts['end']}, {ts['epoch']},
                   {n('small_read_reqs')} + {n('large_read_reqs')},
                   ({n('small_read_megabytes')} + {n('large_read_megabytes')}) * {MIB},
                   {n('small_write_reqs')} + {n('large_write_reqs')},
                   ({n('small_write_megabytes')} + {n('large_write_megabytes')}) * {MIB},
                   {opt2('small_read_servicetime', 'large_read_servicetime')},
                   {opt2('small_write_servicetime', 'large_write_servicetime')}, NULL, _file, NULL
            FROM {t} {ts['join']}""")
        if "sysstat_long" not in layouts and "sysstat_wide" not in layouts:
            notes.append("AWR: the database's series is the sum of the file types of dba_hist_iostat_filetype")
    # The counters are a view over the raw tables (no copy of millions of rows): the window in
    # series.py reads through it once. RAC: each instance its own series, NAME/INSTANCE.
    names = [c.split()[0] for c in COUNTER_TABLE_COLUMNS.split(", ")]
    types = [c.split()[1] for c in COUNTER_TABLE_COLUMNS.split(", ")]
    # The epoch stays a TIMESTAMP when every part read STARTUP_TIME as one (no text made of millions of times).
    typed_epoch = all(e == "startup_time" for e in epochs)
    if typed_epoch:
        types[names.index("epoch")] = "TIMESTAMP"
    # (_time_exprs left "{EPOCH}" where a part's STARTUP_TIME is a TIMESTAMP: now it is known which type fits all.)
    selects = [q.replace("{EPOCH}", "startup_time" if typed_epoch else "CAST(startup_time AS VARCHAR)")
               for q in selects]
    union = " UNION ALL ".join(f"SELECT * FROM ({q}) AS x({', '.join(names)})" for q in selects)
    # RAC (several instance numbers somewhere): summary.name_units makes each instance of a database its own
    # series, NAME/INSTANCE, over all the files of the import (a batch of them may hold one instance only).
    dbexpr = sql_str(opts.database) if opts.database else "database"
    casts = ", ".join(f"CAST({dbexpr} AS VARCHAR) AS database" if n == "database" else f"CAST({n} AS {t}) AS {n}"
                      for n, t in zip(names, types))
    con.execute(f"CREATE OR REPLACE VIEW awr_counters AS SELECT {casts} FROM ({union})")
    csvio.times_after_insert(con, "awr_counters", time_checks)
    raw = [t for t in ("awr_long_raw", "awr_snap_raw", "awr_ft_raw_t", "awr_wide_raw_t", "awr_wide_l_t", "awr_wide_l",
                       "awr_wide_raw", "awr_ft_raw")]
    sysstat = "sysstat_long" in layouts or "sysstat_wide" in layouts
    absent = (() if "filetype" in layouts else ("read_time_ms", "write_time_ms")) + (() if sysstat else ("redo_bytes",))
    # A database (NAME/INSTANCE with RAC) is one series of sysstat totals; file types split it.
    series_by = ("database", "file_type") if "filetype" in layouts else ("database",)
    constant = {} if "filetype" in layouts else {"file_type": "total", "role": "total"}
    kname = sql_str(opts.database) if opts.database else _NAME
    key_sql = " UNION ".join(f"SELECT CAST({kname} AS VARCHAR) AS database, _file, trim(instance_number) AS unit FROM {k}"
                             for k in keys)
    res = ReadResult(SOURCE, "counters", "awr_counters", [str(p) for p in paths], notes=notes, one_unit=True,
                     cleanup=raw + keys, absent=absent, series_by=series_by, constant=constant,
                     unit_names=len(units) > 1, keys=f"({key_sql})" if keys else None, instance_units=True)
    if not any("snap_timezone" in l.names for ls in layouts.values() for l in ls):
        res.notes.append(f"AWR times are the database's local time; read as {opts.tz} (--tz)")
    return res


def _keys(lays: list[Layout]) -> list[str]:
    """The key columns to load: SNAP_ID only when the times must be joined from the snapshot export
    (one column fewer on each of millions of rows otherwise)."""
    if all("end_interval_time" in l.names and "startup_time" in l.names for l in lays):
        return ["dbid", "instance_number"]
    return list(KEYS)


def _cols_of(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    return [d[0] for d in con.execute(f"SELECT * FROM {table} LIMIT 0").description]


_NAME = "coalesce(nullif(trim(db_name), ''), 'DBID ' || trim(dbid))"


def _time_exprs(con: duckdb.DuckDBPyConnection, table: str, lays: list[Layout], tz: str,
                time_checks: list, epochs: list[str], units: set[str], keys: list[str]) -> dict[str, str]:
    """SQL for the UTC end time (`table` joined with awr_tz on snap_timezone) and the epoch; validates
    every row's times first (file and line on error). SNAP_TIMEZONE has few values: they are parsed
    once. Times csvio.load read as TIMESTAMP need no parsing; text ones go through times.py's parsers."""
    typed = csvio.typed_times(con, table)
    # One pass for the few distinct names, instance numbers (RAC, see read()), SNAP_TIMEZONE values and files:
    # what the zones, the units and which file holds which database (ReadResult.keys) are read from.
    con.execute(f"""CREATE OR REPLACE TEMP TABLE {table}_keys AS
                    SELECT DISTINCT db_name, dbid, instance_number, snap_timezone, _file FROM {table}""")
    keys.append(f"{table}_keys")
    tzs, inst = store.one_row(con.execute(f"""SELECT list(DISTINCT snap_timezone) FILTER (WHERE trim(snap_timezone) <> ''),
                                       list(DISTINCT trim(instance_number)) FILTER (WHERE instance_number IS NOT NULL)
                                FROM {table}_keys"""))
    units.update(inst or [])
    con.execute("CREATE OR REPLACE TEMP TABLE awr_tz (tzs VARCHAR)")
    if tzs:
        con.executemany("INSERT INTO awr_tz VALUES (?)", [[z] for z in tzs])
    con.execute(f"CREATE OR REPLACE TEMP TABLE awr_tz AS SELECT tzs, {interval_sql('tzs')} AS off FROM awr_tz")
    # An offset beyond 18 hours is not a time zone (and would move the times by years).
    bad = con.execute("SELECT tzs FROM awr_tz WHERE off IS NULL OR abs(off) > 64800 LIMIT 1").fetchone()
    if bad:
        f = store.one_row(con.execute(f"SELECT _file FROM {table} WHERE snap_timezone = ? LIMIT 1", [bad[0]]))[0]
        lay = next((l for l in lays if l.path == f), lays[0])
        line = csvio.locate(lay, "snap_timezone", bad[0])
        raise DbtierError(f"{f}: line {line}: SNAP_TIMEZONE {bad[0]!r} is not an offset dbtier reads",
                          "export it as +HH:MI or as Oracle prints an INTERVAL DAY TO SECOND")
    zones = con.execute("SELECT tzs, off FROM awr_tz").fetchall()
    if len(zones) <= 64:   # a few zones: a CASE over them is cheaper than a join of millions of rows
        off = ("(CASE snap_timezone " + " ".join(f"WHEN {sql_str(z)} THEN {int(o)}" for z, o in zones)
               + " ELSE NULL END)") if zones else "CAST(NULL AS BIGINT)"
        join = ""
    else:
        off, join = "z.off", "LEFT JOIN awr_tz z ON snap_timezone = z.tzs"
    end_t = "end_interval_time" in typed
    naive_end = "end_interval_time" if end_t else naive_ts_sql("end_interval_time")
    end = (f"(CASE WHEN {off} IS NOT NULL THEN {naive_end} - to_seconds({off}) "
           f"ELSE {utc_sql('end_interval_time', tz, typed=end_t)} END)")
    # STARTUP_TIME has few values: checked once each. END_INTERVAL_TIME is checked after the insert.
    start_t = "startup_time" in typed
    con.execute(f"CREATE OR REPLACE TEMP TABLE awr_st AS SELECT DISTINCT startup_time, _file FROM {table}")
    csvio.check_times(con, "awr_st", lays, "startup_time",
                      '"startup_time"' if start_t else naive_ts_sql('"startup_time"'))
    time_checks.append((f"{table} {join}", lays, "end_interval_time", end))
    epochs.append("startup_time" if start_t else "trim(startup_time)")
    return {"end": end, "join": join, "epoch": "{EPOCH}" if start_t else "trim(startup_time)"}


def _check_dupes_long(con: duckdb.DuckDBPyConnection, table: str, lays: list[Layout]) -> None:
    bad = con.execute(f"""SELECT any_value(_file), snap_id, stat_name FROM {table}
                          GROUP BY trim(dbid), trim(instance_number), trim(snap_id), snap_id, lower(trim(stat_name)),
                          stat_name HAVING count(DISTINCT value) > 1 LIMIT 1""").fetchone()
    if bad:
        raise DbtierError(f"{bad[0]}: snapshot {bad[1]} has two different values of {bad[2]!r}",
                          "export each snapshot once (or remove the conflicting line)")
