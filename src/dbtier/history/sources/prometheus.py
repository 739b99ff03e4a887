"""Prometheus history (query_range answers, `promtool tsdb dump`, VictoriaMetrics exports: promfiles.py;
node_exporter's text scrapes and `/federate` answers, two or more: promtext.py) as dbtier's counters, or as
rates when the file holds `rate()` results.

**Which metrics.** node_exporter's disk counters map to the diskstats model one to one (a unit per
`device`, its file type the device, as diskstats.py; `--database` names the database, else the `instance`
label, else the file name, a scrape's without its time):

| metric | counter |
|---|---|
| node_disk_reads_completed_total, node_disk_writes_completed_total | read_ios, write_ios |
| node_disk_read_bytes_total, node_disk_written_bytes_total | read_bytes, write_bytes |
| node_disk_read_time_seconds_total, node_disk_write_time_seconds_total | read/write time (latency) |
| node_disk_io_time_seconds_total | busy time: the device's utilisation, reported beside (`busy`) |
| node_boot_time_seconds | the epoch: a reboot starts a new segment, as diskstats' btime |

Which devices count: diskstats' rule (whole disks; not partitions of a listed disk, nor loop, ram, zram,
md, dm-*; `--devices` names them), so nothing is counted twice. postgres_exporter's
`pg_stat_database_blks_read` (blocks of 8 KiB, per datname, file type `data`) and `blk_read_time`,
`pg_stat_database_temp_bytes` (`temp files`), `pg_stat_bgwriter_buffers_{clean,backend,checkpoint}` and
`pg_stat_checkpointer_buffers_written` (pages written, `data`); mysqld_exporter's InnoDB counters
`mysql_global_status_innodb_data_{reads,read,writes,written}` (`data`), `_innodb_os_log_written` (redo,
beside) and `_innodb_data_fsyncs` (`fsync`, detail). Names are matched with or without `_total`; other
series are left out (counted in a note).

**Counters or rates.** Counters are differenced by series.py (resets and wraps as diskstats'). A series
named by Prometheus' recording-rule convention `level:metric:rateWINDOW` (or `irate`), e.g.
`instance:node_disk_reads_completed:rate1m`, holds averages already: the import is then of rates (each
sample the average over the window ending at it, an interval of the query's step), and the requirement
says so. One import is all counters or all rates. A series without a name (a bare `rate(...)`) is refused:
name it (a recording rule, or `label_replace(..., "__name__", "level:metric:rate1m", "", "")`).
"""

from __future__ import annotations

import csv
import os
import re
import statistics
from pathlib import Path
from typing import Sequence

import duckdb

from dbtier.core.debris import temp_file
from dbtier.core.errors import DbtierError
from dbtier.core.files import sql_str
from dbtier.history import store
from dbtier.history.sources import csvio
from dbtier.history.sources import detect
from dbtier.history.sources import diskstats
from dbtier.history.sources import promfiles
from dbtier.history.sources import promtext
from dbtier.history.tables import (COUNTER_TABLE_COLUMNS, INTERVAL_TABLE_COLUMNS, MB, ReadOptions, ReadResult,
                                   database_name_from_file)

SOURCE = "prometheus"
PG_BLOCK = 8192      # postgres_exporter gives blocks; block_size is 8 KiB unless the server was built otherwise

# metric (without _total) -> (family, unit label or fixed unit, file type, [(column, scale), ...], role)
METRICS: dict[str, tuple[str, str, str, list[tuple[str, float]], str]] = {
    "node_disk_reads_completed": ("node", "device", "", [("read_ios", 1)], ""),
    "node_disk_writes_completed": ("node", "device", "", [("write_ios", 1)], ""),
    "node_disk_read_bytes": ("node", "device", "", [("read_bytes", 1)], ""),
    "node_disk_written_bytes": ("node", "device", "", [("write_bytes", 1)], ""),
    "node_disk_read_time_seconds": ("node", "device", "", [("read_time_ms", 1000)], ""),
    "node_disk_write_time_seconds": ("node", "device", "", [("write_time_ms", 1000)], ""),
    "node_disk_io_time_seconds": ("node", "device", "", [("busy_ms", 1000)], ""),
    "pg_stat_database_blks_read": ("postgres", "datname", "data", [("read_ios", 1), ("read_bytes", PG_BLOCK)], "part"),
    "pg_stat_database_blk_read_time": ("postgres", "datname", "data", [("read_time_ms", 1)], "part"),
    "pg_stat_database_temp_bytes": ("postgres", "datname", "temp files", [("write_bytes", 1)], "part"),
    "pg_stat_bgwriter_buffers_clean": ("postgres", "=bgwriter", "data", [("write_ios", 1), ("write_bytes", PG_BLOCK)], "part"),
    "pg_stat_bgwriter_buffers_backend": ("postgres", "=backends", "data", [("write_ios", 1), ("write_bytes", PG_BLOCK)], "part"),
    "pg_stat_bgwriter_buffers_checkpoint": ("postgres", "=checkpointer", "data",
                                            [("write_ios", 1), ("write_bytes", PG_BLOCK)], "part"),
    "pg_stat_checkpointer_buffers_written": ("postgres", "=checkpointer", "data",
                                             [("write_ios", 1), ("write_bytes", PG_BLOCK)], "part"),
    "mysql_global_status_innodb_data_reads": ("mysql", "=innodb", "data", [("read_ios", 1)], "part"),
    "mysql_global_status_innodb_data_read": ("mysql", "=innodb", "data", [("read_bytes", 1)], "part"),
    "mysql_global_status_innodb_data_writes": ("mysql", "=innodb", "data", [("write_ios", 1)], "part"),
    "mysql_global_status_innodb_data_written": ("mysql", "=innodb", "data", [("write_bytes", 1)], "part"),
    "mysql_global_status_innodb_os_log_written": ("mysql", "=innodb", "data", [("redo_bytes", 1)], "part"),
    "mysql_global_status_innodb_data_fsyncs": ("mysql", "=innodb fsync", "fsync", [("write_ios", 1)], "detail"),
}
BOOT = "node_boot_time_seconds"
_RULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*:([A-Za-z_][A-Za-z0-9_]*):(i?rate)(\d+)(ms|s|m|h|d)?$")
_UNIT_S = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, None: 1}
COLUMNS = ("read_ios", "read_bytes", "write_ios", "write_bytes", "read_time_ms", "write_time_ms", "redo_bytes",
           "busy_ms")


def base_name(name: str) -> tuple[str, str | None, float | None]:
    """(metric without _total, 'rate' or None, averaging window in s) of a series name."""
    m = _RULE.match(name)
    if m:
        return m.group(1).removesuffix("_total"), "rate", int(m.group(3)) * _UNIT_S[m.group(4)]
    return name.removesuffix("_total"), None, None


def read(con: duckdb.DuckDBPyConnection, paths: Sequence[str | Path], opts: ReadOptions) -> ReadResult:
    tmp, claim = temp_file("dbtier-prometheus-", ".csv", "prometheus parse file")
    try:
        with open(tmp, "w", newline="") as out:
            found = _parse_all(paths, csv.writer(out), opts)
        return _load(con, tmp, found, paths, opts)
    finally:
        os.unlink(tmp)
        claim.release()


class _Found:
    def __init__(self) -> None:
        self.kinds: dict[str, str] = {}         # semantics -> the first file and line that had it
        self.windows: set[float] = set()
        self.steps: list[float] = []
        self.node_units: set[str] = set()
        self.ignored: dict[str, int] = {}
        self.families: set[str] = set()
        self.stale = 0
        self.formats: set[str] = set()
        self.rows = 0
        self.times_from: dict[str, int] = {}    # text scrapes: where their times came from -> files
        self.scrapes: dict[str, int] = {}       # text scrapes: database -> scrape times
        self.single: list[str] = []             # text scrapes: databases of one scrape (no interval)


def _parse_all(paths: Sequence[str | Path], w, opts: ReadOptions) -> _Found:
    f = _Found()
    scrapes = []
    for p in paths:
        csvio.check_file(p)
        path = str(p)
        fmt = promfiles.sniff(path)
        if fmt is None:
            detect.refuse_other(path, SOURCE, "a Prometheus file")
        if fmt == "text":           # scrapes are a history together: read after the others, all at once
            scrapes.append(path)
            continue
        fmt, series, stale = promfiles.read(path)
        f.formats.add(fmt)
        f.stale += stale
        for s in series:
            _one_series(path, s, w, opts, f)
    if scrapes:
        _scrapes(scrapes, w, opts, f)
    return f


def wanted(name: str) -> bool:
    """A series name this reader maps (METRICS, with or without _total, as a counter or a named rate)."""
    return name == BOOT or base_name(name)[0] in METRICS


def _scrapes(paths: Sequence[str], w, opts: ReadOptions, f: _Found) -> None:
    got = promtext.read_all(paths, wanted, opts)
    f.formats.add("text scrapes")
    for name in got.ignored:
        base = base_name(name)[0]
        f.ignored[base] = f.ignored.get(base, 0) + 1
    f.steps += got.steps
    f.times_from = got.times_from
    f.scrapes = got.scrapes
    f.single = got.single
    for path, db, s in got.series:
        _one_series(path, s, w, opts, f, db)


def _one_series(path: str, s: promfiles.Series, w, opts: ReadOptions, f: _Found, db: str | None = None) -> None:
    if s.name is None:
        raise DbtierError(f"{path}: line {s.line}: series {s.describe()} has no metric name (a function result such "
                          "as rate(...)): dbtier cannot tell what it counts",
                          "query the counters themselves, or name the result: label_replace(rate(X[1m]), \"__name__\", "
                          "\"instance:X_without_total:rate1m\", \"\", \"\")")
    db = db or opts.database or s.labels.get("instance") or database_name_from_file(path)
    if s.name == BOOT:
        for t, v in zip(s.times, s.values):
            w.writerow([db, "", "", "", repr(t), "epoch", repr(v), path])
        return
    base, kind, window = base_name(s.name)
    spec = METRICS.get(base)
    if spec is None:
        f.ignored[base] = f.ignored.get(base, 0) + 1
        return
    family, unit_label, file_type, cols, role = spec
    semantics = kind or "counter"
    if semantics not in f.kinds:
        f.kinds[semantics] = f"{path}: line {s.line} ({s.name})"
    if len(f.kinds) > 1:
        raise DbtierError(f"{path}: line {s.line}: {s.name} is a rate while {f.kinds.get('counter')} is a counter: one "
                          "import is all counters or all rates", "import the counters and the rate() results separately")
    if window:
        f.windows.add(window)
    unit: str | None
    if unit_label.startswith("="):
        unit = unit_label[1:]
    else:
        unit = s.labels.get(unit_label)
        if not unit:
            raise DbtierError(f"{path}: line {s.line}: series {s.describe()} has no {unit_label!r} label: "
                              f"dbtier cannot tell which {'disk' if family == 'node' else 'database'} it counts",
                              f"keep the {unit_label} label in the query (no sum() or by() that drops it)")
    if family == "node":
        f.node_units.add(unit)
        file_type = unit
    f.families.add(family)
    if len(s.times) > 1:
        f.steps.append(statistics.median(b - a for a, b in zip(s.times, s.times[1:])))
    for col, scale in cols:
        for t, v in zip(s.times, s.values):
            if v < 0:
                raise DbtierError(f"{path}: line {s.line}: {s.describe()} at {promfiles.iso_time(t)}: {v:g} is negative; "
                                  "no I/O counter or rate is", "fix or remove that sample")
            w.writerow([db, unit, file_type, role, repr(t), col, repr(v * scale), path])
            f.rows += 1


def _load(con: duckdb.DuckDBPyConnection, tmp: str, f: _Found, paths: Sequence[str | Path],
          opts: ReadOptions) -> ReadResult:
    files = [str(p) for p in paths]
    if f.rows == 0:
        seen = ", ".join(sorted(f.ignored)[:5]) or "none"
        raise DbtierError(f"{', '.join(files[:3])}: no disk or database I/O metric (node_exporter's node_disk_*, "
                          f"postgres_exporter's pg_stat_*, mysqld_exporter's innodb counters); the series are: {seen}",
                          "query node_disk_reads_completed_total, node_disk_writes_completed_total, "
                          "node_disk_read_bytes_total, node_disk_written_bytes_total and node_disk_io_time_seconds_total")
    if opts.devices and not f.node_units:
        raise DbtierError(f"--devices {opts.devices}: only for node_exporter's disks, and the files have none",
                          "leave --devices out")
    role = diskstats.roles(f.node_units, opts.devices) if f.node_units else {}
    con.execute("CREATE OR REPLACE TEMP TABLE prom_roles (unit VARCHAR, role VARCHAR)")
    if role:
        con.executemany("INSERT INTO prom_roles VALUES (?, ?)", sorted(role.items()))
    con.execute(f"""CREATE OR REPLACE TEMP TABLE prom_long AS
        SELECT database, l.unit, file_type, CASE WHEN coalesce(l.role, '') = '' THEN coalesce(r.role, 'part') ELSE l.role END AS role,
               CAST(round(t * 1e6) AS BIGINT) AS us, col, value, _file
        FROM read_csv({sql_str(csvio.duck_path(tmp))}, header=false, auto_detect=false, compression='none',
                      delim=',', quote='"', escape='"',
                      columns={{'database': 'VARCHAR', 'unit': 'VARCHAR', 'file_type': 'VARCHAR', 'role': 'VARCHAR',
                                't': 'DOUBLE', 'col': 'VARCHAR', 'value': 'DOUBLE', '_file': 'VARCHAR'}}) l
        LEFT JOIN prom_roles r ON l.unit = r.unit AND coalesce(l.role, '') = '' AND l.col <> 'epoch'""")
    _refuse_conflicts(con)
    rate = "rate" in f.kinds
    notes = [f"Prometheus ({', '.join(sorted(f.formats))}): " + ("rates (the source's averages)" if rate else
                                                                 "counters, differenced by dbtier")]
    if role:
        counted = sorted(n for n, r in role.items() if r == "part")
        if not counted:
            raise DbtierError(f"{files[0]}: no whole disk among the devices ({', '.join(sorted(role))})",
                              "name the database's devices with --devices")
        notes.append(f"node_exporter: counted devices {', '.join(counted)}; the others are kept as detail"
                     + ("" if opts.devices else " (choose with --devices)"))
    if "postgres" in f.families:
        notes.append(f"postgres_exporter: blocks taken as {PG_BLOCK} bytes (PostgreSQL's default block_size)")
    if f.ignored:
        notes.append(f"left out {sum(f.ignored.values())} series of other metrics ("
                     + ", ".join(sorted(f.ignored)[:4]) + (" ..." if len(f.ignored) > 4 else "") + ")")
    if f.stale:
        notes.append(f"{f.stale} staleness markers (NaN: the target went away) skipped")
    times_from = [b for b in promtext.BASES if b in f.times_from]
    if f.scrapes:
        notes.append(f"text scrapes: {sum(f.scrapes.values()):,} scrape times of {len(f.scrapes)} database(s), "
                     "their times from " + " and ".join(f"{b} ({f.times_from[b]:,} file(s))" for b in times_from))
    if f.single:
        notes.append(f"one scrape of {', '.join(f.single[:5])}{' ...' if len(f.single) > 5 else ''} in these files: a "
                     "rate needs two, so no interval from it")
    if promtext.MTIMES in f.times_from:
        notes.append("a file's modification time is its scrape's time only as curl wrote it: a copy without "
                     "cp -p, an edit or a restore moves it")
    step = statistics.median(f.steps) if f.steps else None
    busy = _busy(con, rate)
    extra: dict = {"busy": busy} if busy else {}
    if times_from:
        extra["provenance"] = {"times_from": " and ".join(times_from)}
    if rate:
        _rates(con, step)
        return ReadResult(SOURCE, "intervals", "prom_intervals", files, notes=notes, semantics="rate",
                          native_step_s=step, averaging_s=max(f.windows) if f.windows else None, extra=extra)
    wrap = {"read_ios": "auto", "read_bytes": ("auto", 512), "write_ios": "auto", "write_bytes": ("auto", 512),
            "read_time_ms": 32, "write_time_ms": 32} if f.node_units else {}
    one_unit = _counters(con)
    return ReadResult(SOURCE, "counters", "prom_counters", files, notes=notes, wrap_bits=wrap, one_unit=one_unit,
                      semantics="counter", native_step_s=step, extra=extra)


def _refuse_conflicts(con: duckdb.DuckDBPyConnection) -> None:
    """The same series at the same time twice (overlapping files) must say the same."""
    bad = con.execute("""SELECT database, unit, col, us, string_agg(DISTINCT _file, ' and ') FROM prom_long
                         GROUP BY database, unit, file_type, col, us HAVING min(value) <> max(value) LIMIT 1""").fetchone()
    if bad:
        db, unit, col, us, where = bad
        raise DbtierError(f"{where}: {db} {unit or ''} {col} at {promfiles.iso_time(us / 1e6)} has two different values",
                          "import overlapping files of one Prometheus only (or fetch the range once); several "
                          "instances under one --database clash: leave --database out")


def _pivot(cols: Sequence[str]) -> str:
    return ", ".join(f"max(value) FILTER (WHERE col = '{c}') AS {c}" for c in cols)


def _counters(con: duckdb.DuckDBPyConnection) -> bool:
    con.execute(f"CREATE OR REPLACE TABLE prom_counters ({COUNTER_TABLE_COLUMNS})")
    con.execute(f"""INSERT INTO prom_counters
        WITH p AS (SELECT database, file_type, unit, role, us, {_pivot(COLUMNS[:7])}, any_value(_file) AS _file
                   FROM prom_long WHERE col NOT IN ('epoch', 'busy_ms') GROUP BY database, file_type, unit, role, us),
             e AS (SELECT database, us, CAST(CAST(round(max(value)) AS BIGINT) AS VARCHAR) AS epoch FROM prom_long
                   WHERE col = 'epoch' GROUP BY database, us)
        SELECT p.database, file_type, unit, role, make_timestamp(p.us), e.epoch, read_ios, read_bytes, write_ios,
               write_bytes, read_time_ms, write_time_ms, NULL, _file, redo_bytes
        FROM p LEFT JOIN e ON p.database = e.database AND p.us = e.us""")
    multi = store.one_row(con.execute("""SELECT count(*) FROM (SELECT database, file_type FROM prom_counters
                                         GROUP BY ALL HAVING count(DISTINCT unit) > 1)"""))[0]
    return multi == 0


def _rates(con: duckdb.DuckDBPyConnection, step: float | None) -> None:
    if not step:
        raise DbtierError("the rate() series have one sample each: no step to tell the intervals' length",
                          "query a range of at least two steps")
    con.execute(f"CREATE OR REPLACE TABLE prom_intervals ({INTERVAL_TABLE_COLUMNS})")
    con.execute(f"""INSERT INTO prom_intervals
        WITH p AS (SELECT database, file_type, role, us, {_pivot(COLUMNS[:6])} FROM prom_long
                   WHERE col NOT IN ('epoch', 'busy_ms', 'redo_bytes') GROUP BY database, file_type, unit, role, us)
        SELECT database, file_type, role, make_timestamp(us - {round(step * 1e6)}), make_timestamp(us), {step!r},
               read_ios, write_ios, CASE WHEN read_ios IS NULL AND write_ios IS NULL THEN NULL
                                         ELSE coalesce(read_ios, 0) + coalesce(write_ios, 0) END,
               read_bytes / {MB}, write_bytes / {MB},
               CASE WHEN read_bytes IS NULL AND write_bytes IS NULL THEN NULL
                    ELSE (coalesce(read_bytes, 0) + coalesce(write_bytes, 0)) / {MB} END,
               read_time_ms / nullif(read_ios, 0), write_time_ms / nullif(write_ios, 0)
        FROM p""")


def _busy(con: duckdb.DuckDBPyConnection, rate: bool) -> dict[str, dict[str, dict[str, float | None]]]:
    """Per database and device: the utilisation (busy time / elapsed time, 0-1) per interval, p95 and max."""
    per = ("value / 1000" if rate else
           """CASE WHEN d >= 0 AND dt > 0 THEN d / 1000 / dt END""")
    rows = con.execute(f"""
        WITH s AS (SELECT database, unit, us, max(value) AS value FROM prom_long WHERE col = 'busy_ms'
                   GROUP BY ALL),
             d AS (SELECT database, unit, value, value - lag(value) OVER w AS d, (us - lag(us) OVER w) / 1e6 AS dt
                   FROM s WINDOW w AS (PARTITION BY database, unit ORDER BY us)),
             u AS (SELECT database, unit, {per} AS util FROM d)
        SELECT database, unit, quantile_cont(util, 0.95), max(util) FROM u WHERE util IS NOT NULL
        GROUP BY ALL ORDER BY ALL""").fetchall()
    out: dict[str, dict[str, dict[str, float | None]]] = {}
    for db, unit, p95, mx in rows:
        out.setdefault(db, {})[unit] = {"p95": round(float(p95), 4), "max": round(float(mx), 4)}
    return out
