"""PostgreSQL: snapshots of the cumulative statistics views, as collectors/postgres_stats.sql writes them.

Each file is one view's rows with `sample_time` (and `cluster`, `block_size`) in front, the
view's own column names after; the view is recognised by its columns:

| view | what dbtier takes | file type (role) |
|---|---|---|
| pg_stat_io (16+) | reads, writes + extends (x op_bytes; 18: the byte columns), read/write time | `data` for object relation, `temp relation`, `wal` (18) (part) |
| pg_stat_io (16+) | fsyncs and fsync_time | `data fsync`, `wal fsync` (18) (detail) |
| pg_stat_database | blks_read x block_size, blk_read_time, per database | `data` (part; detail when pg_stat_io is there) |
| pg_stat_database | temp_bytes (temporary files written) | `temp files` (part) |
| pg_stat_bgwriter (<= 16) | buffers_checkpoint + buffers_clean + buffers_backend, pages written | `data` (part; detail with pg_stat_io) |
| pg_stat_wal (14+) | wal_write, wal_bytes, wal_write_time | `wal` (part; detail when pg_stat_io has wal) |
| pg_statio_*_tables | heap+toast and index blocks read | `table reads`, `index reads` (detail) |

pg_stat_io's columns differ by version, and the file's column set says which it is (IO_COLUMNS): 16 and
17 have `op_bytes` (each read, write or extend is one block of that size); 18 has `read_bytes`,
`write_bytes` and `extend_bytes` instead (a read may combine several blocks: the bytes are counted, the
operations too) and WAL rows (object `wal`, contexts `normal` and `init`), so its requirement splits WAL
from relation I/O (16 and 17: with pg_stat_wal). A column set of neither (a newer version, or a hand-made
file) is refused with the columns named, not guessed at.

So on PostgreSQL 15 the data reads come from pg_stat_database, the data writes from the
background writer, checkpointer and backends, the WAL from pg_stat_wal; on 16+ from pg_stat_io.
The database is the cluster (`cluster` column, else `--database`, else "postgresql"): WAL and
the buffer pool are per cluster, and that is what moves to new storage. `stats_reset` is the
epoch (a reset, or a crash, which discards the statistics, starts a new segment); counters are
64-bit and never wrap, so one that goes down (pg_stat_reset_shared('io'), pg_stat_reset() with stats_reset
not selected) starts a new segment too. Capacity is the sum of `size_bytes` (pg_database_size) at the last
sample.

psql's own output of the same views is read too (sources/psql.py reads the formats: aligned, `-A`, `--csv`,
`\\x`, repeated with `\\watch` or appended), any file whose first line is not the collector's header. Its
snapshots' times, first that applies:

1. `--interval SECONDS` with `--start TIME`: the file's results are snapshots `--interval` apart from
   `--start`, in the order of the files given (the file's own times are then not read);
2. a time column (TIME_COLUMNS: `SELECT now(), * FROM pg_stat_database`), in any DateStyle;
3. the `\\watch` header above each result (psql's client time: `--tz` says its zone when it prints none).

Without --interval, a result is one snapshot; with it, a result whose key (KEYS: datname, or backend_type,
object and context) comes round again holds several (psql --csv -x prints no boundary). One snapshot of a
view is refused: a rate needs two. Without a `block_size` column a block is 8192 bytes (PostgreSQL's
default, said in the notes); without `cluster` the database is `--database`, else "postgresql".
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo
from pathlib import Path
from typing import Any, NoReturn, Sequence

import duckdb
import pyarrow as pa

from dbtier.core.errors import DbtierError
from dbtier.core.files import sql_str
from dbtier.history import limits
from dbtier.history import store
from dbtier.history.sources import csvio
from dbtier.history.sources import detect
from dbtier.history.sources import psql
from dbtier.history.sources.csvio import Layout
from dbtier.history.tables import COUNTER_TABLE_COLUMNS, ReadOptions, ReadResult
from dbtier.history.sources.times import utc_sql

SOURCE = "postgres"
BASE = ("sample_time",)
VIEWS = {
    "io": ("backend_type", "object", "context"),
    "database": ("datname", "blks_read"),
    "bgwriter": ("buffers_clean", "buffers_backend"),
    "wal": ("wal_bytes",),
    "statio": ("heap_blks_read", "idx_blks_read"),
}
COLUMNS = {
    "io": ("reads", "writes", "extends", "op_bytes", "read_time", "write_time", "extend_time", "read_bytes",
           "write_bytes", "extend_bytes", "fsyncs", "fsync_time", "stats_reset"),
    "database": ("datid", "blk_read_time", "temp_bytes", "stats_reset", "size_bytes"),
    "bgwriter": ("buffers_checkpoint", "stats_reset"),
    "wal": ("wal_write", "wal_write_time", "stats_reset"),
    "statio": ("datname", "toast_blks_read", "tidx_blks_read"),
}
NUMERIC = {
    "io": ("reads", "writes", "extends", "op_bytes", "read_time", "write_time", "extend_time", "read_bytes",
           "write_bytes", "extend_bytes", "fsyncs", "fsync_time", "block_size"),
    "database": ("blks_read", "blk_read_time", "temp_bytes", "size_bytes", "block_size"),
    "bgwriter": ("buffers_checkpoint", "buffers_clean", "buffers_backend", "block_size"),
    "wal": ("wal_bytes", "wal_write", "wal_write_time", "block_size"),
    "statio": ("heap_blks_read", "idx_blks_read", "toast_blks_read", "tidx_blks_read", "block_size"),
}
# pg_stat_io's columns (system_views.sql of each release): 16 and 17 alike; 18 has byte columns, no op_bytes.
_IO_COMMON = ("backend_type", "object", "context", "reads", "read_time", "writes", "write_time", "writebacks",
              "writeback_time", "extends", "extend_time", "hits", "evictions", "reuses", "fsyncs", "fsync_time",
              "stats_reset")
IO_COLUMNS = {"16/17": frozenset(_IO_COMMON + ("op_bytes",)),
              "18": frozenset(_IO_COMMON + ("read_bytes", "write_bytes", "extend_bytes"))}
COLLECTOR_COLUMNS = frozenset({"sample_time", "cluster", "block_size", "server_version_num"})
REQUIRED_NUMERIC = {"io": (), "database": ("blks_read",), "bgwriter": ("buffers_clean", "buffers_backend"),
                    "wal": ("wal_bytes",), "statio": ("heap_blks_read", "idx_blks_read")}
VIEW_NAMES = {"io": "pg_stat_io", "database": "pg_stat_database", "bgwriter": "pg_stat_bgwriter", "wal": "pg_stat_wal",
              "statio": "pg_statio_*_tables"}
# psql output: a column of the snapshot's time (SELECT now(), * ...), and what names a row within a snapshot
# (a key seen again starts the next snapshot when --interval gives the times).
TIME_COLUMNS = ("sample_time", "now", "clock_timestamp", "statement_timestamp", "transaction_timestamp",
                "current_timestamp", "localtimestamp", "time", "ts")
KEYS = {"io": ("backend_type", "object", "context"), "database": ("datid", "datname"), "bgwriter": (), "wal": (),
        "statio": ("datname", "relid", "schemaname", "relname")}


def view_of(names: Sequence[str]) -> str | None:
    """The view whose columns `names` holds (VIEWS), or None."""
    have = set(names)
    return next((v for v, cols in VIEWS.items() if set(cols) <= have), None)


def _collector_view(path: str) -> tuple[str, Layout] | None:
    """The view and layout of a collector file (sample_time and the view's columns in its first line)."""
    for view, cols in VIEWS.items():
        got = csvio.sniff(path, BASE + cols)
        if isinstance(got, Layout):
            return view, got
    return None


def _refuse(path: str) -> NoReturn:
    """Neither the collector's CSV nor psql output of a view: the columns it lacks, or another source."""
    best = None
    for cols in VIEWS.values():
        got = csvio.sniff(path, BASE + cols)
        if not isinstance(got, Layout) and (best is None or got[0] > best[0]):
            best = got
    other = detect.other_source(path, SOURCE)
    found, delim, missing = best if best else (0, ",", [])
    if other or found > 1:
        raise csvio.header_error(path, 1, "postgres", missing, delim, other)
    raise DbtierError(f"{path}: line 1: not a PostgreSQL statistics export: no columns of pg_stat_io, "
                      "pg_stat_database, pg_stat_bgwriter, pg_stat_wal or pg_statio_*_tables (psql's output of "
                      "them, or the collector's CSV with sample_time)",
                      "run SELECT * FROM pg_stat_database (or pg_stat_io) in psql, or export with "
                      "collectors/postgres_stats.sql (see README, `dbtier history`)")


def io_version(names: Sequence[str], where: str) -> str:
    """Which PostgreSQL's pg_stat_io the columns are (IO_COLUMNS), or a clear refusal naming `where`
    (the file and line of the header)."""
    cols = frozenset(names) - COLLECTOR_COLUMNS - set(TIME_COLUMNS)
    for version, known in IO_COLUMNS.items():
        if cols == known:
            return version
    near = min(IO_COLUMNS.items(), key=lambda kv: len(kv[1] ^ cols))
    extra, missing = sorted(cols - near[1]), sorted(near[1] - cols)
    raise DbtierError(f"{where}: pg_stat_io of an unknown PostgreSQL version: its columns "
                      f"are neither 16/17's nor 18's (against {near[0]}'s: "
                      + "; ".join(x for x in (f"not there: {', '.join(missing)}" if missing else "",
                                              f"unknown: {', '.join(extra)}" if extra else "") if x) + ")",
                      "export pg_stat_io whole (SELECT *) with collectors/postgres_stats.sql from PostgreSQL 16, 17 "
                      "or 18; another version's column set is not read until dbtier knows it")


def read(con: duckdb.DuckDBPyConnection, paths: Sequence[str | Path], opts: ReadOptions) -> ReadResult:
    by_view: dict[str, list[Layout]] = {}
    printed: list[psql.Parsed] = []
    io_versions: dict[str, str] = {}
    for p in paths:
        csvio.check_file(p)
        got = _collector_view(str(p))
        if got is None:
            parsed = psql.parse(str(p), lambda names: view_of(names) is not None)
            if parsed is None or not parsed.results:
                _refuse(str(p))
            printed.append(parsed)
            continue
        view, lay = got
        if view == "io":
            io_versions.setdefault(io_version(lay.names, f"{lay.path}: line {lay.header_line}"), lay.path)
        by_view.setdefault(view, []).append(lay)
    con.execute(f"CREATE OR REPLACE TABLE pg_counters ({COUNTER_TABLE_COLUMNS})")
    notes: list[str] = []
    t = utc_sql("sample_time", opts.tz)
    name = (sql_str(opts.database) if opts.database else
            "coalesce(nullif(trim(cluster), ''), 'postgresql')")
    tables: dict[str, str] = {}
    files: dict[str, list[str]] = {v: [l.path for l in lays] for v, lays in by_view.items()}
    cleanup: list[str] = []
    for view, lays in by_view.items():
        table = f"pg_{view}_raw"
        req = REQUIRED_NUMERIC[view]
        csvio.load(con, table, lays, _raw_columns(view), numeric=NUMERIC[view], required=req)
        if store.one_row(con.execute(f"SELECT count(*) FROM {table}"))[0] == 0:
            raise DbtierError(f"{lays[0].path}: no samples after the header", "run the collector at least twice")
        tables[view] = table
        cleanup.append(f"DROP TABLE {table}")
    said: dict[str, Any] = {}
    if printed:
        got_psql = _load_printed(con, printed, opts, notes, io_versions)
        for view, (table, paths_) in got_psql.tables.items():
            files.setdefault(view, []).extend(paths_)
            cleanup.append(f"DROP TABLE {table}")
            if view in tables:          # the collector's files and psql's of one view: one relation
                both = f"pg_{view}_all"
                con.execute(f"CREATE OR REPLACE TEMP VIEW {both} AS SELECT * REPLACE (CAST(_file AS VARCHAR) AS _file) "
                            f"FROM {tables[view]} UNION ALL BY NAME SELECT * FROM {table}")
                cleanup.insert(0, f"DROP VIEW {both}")
                table = both
            tables[view] = table
        said = got_psql.said
    if not tables:
        _refuse(str(paths[0]))

    def n(c: str) -> str:
        return f'"{c}"'

    bs = "coalesce(block_size, 8192)"
    has_io = "io" in tables
    has_io_wal = has_io and store.one_row(con.execute(f"SELECT count(*) FROM {tables['io']} "
                                                      "WHERE lower(trim(object)) = 'wal'"))[0] > 0
    ins = "INSERT INTO pg_counters SELECT"
    if has_io:
        ops = f"coalesce({n('op_bytes')}, 8192)"
        rd_b = f"coalesce({n('read_bytes')}, {n('reads')} * {ops})"
        wr_b = (f"coalesce({n('write_bytes')}, {n('writes')} * {ops}) + "
                f"coalesce({n('extend_bytes')}, coalesce({n('extends')}, 0) * {ops}, 0)")
        con.execute(f"""{ins} {name},
                CASE lower(trim(object)) WHEN 'relation' THEN 'data' ELSE lower(trim(object)) END,
                trim(backend_type) || '/' || trim(object) || '/' || trim(context), 'part', {t},
                nullif(trim(stats_reset), ''),
                {n('reads')}, {rd_b},
                CASE WHEN {n('writes')} IS NULL AND {n('extends')} IS NULL THEN NULL
                     ELSE coalesce({n('writes')}, 0) + coalesce({n('extends')}, 0) END, {wr_b},
                {n('read_time')},
                CASE WHEN {n('write_time')} IS NULL AND {n('extend_time')} IS NULL THEN NULL
                     ELSE coalesce({n('write_time')}, 0) + coalesce({n('extend_time')}, 0) END, NULL, _file, NULL
            FROM {tables['io']}""")
        con.execute(f"""{ins} {name},
                CASE lower(trim(object)) WHEN 'wal' THEN 'wal fsync' ELSE 'data fsync' END,
                trim(backend_type) || '/' || trim(object) || '/' || trim(context), 'detail', {t},
                nullif(trim(stats_reset), ''), NULL, NULL, {n('fsyncs')}, NULL, NULL, {n('fsync_time')}, NULL,
                _file, NULL
            FROM {tables['io']} WHERE {n('fsyncs')} IS NOT NULL""")
        versions = " and ".join(sorted(io_versions))
        notes.append(f"PostgreSQL: data and WAL I/O from pg_stat_io of PostgreSQL {versions} (writes include relation "
                     "extends; fsyncs kept as detail: `data fsync`, `wal fsync`)")
        if "16/17" in io_versions:
            notes.append("pg_stat_io 16/17: each read, write and extend is one op_bytes block; no WAL rows there "
                         "(WAL from pg_stat_wal)")
        if "18" in io_versions:
            notes.append("pg_stat_io 18: bytes from read_bytes, write_bytes and extend_bytes (a read may combine "
                         "several blocks); WAL from its own rows")
    if "database" in tables:
        role = "'detail'" if has_io else "'part'"
        unit = "coalesce(nullif(trim(datname), ''), '(shared objects)')"
        con.execute(f"""{ins} {name}, 'data', {unit}, {role}, {t}, nullif(trim(stats_reset), ''),
                {n('blks_read')}, {n('blks_read')} * {bs}, NULL, NULL, {n('blk_read_time')}, NULL,
                {n('size_bytes')}, _file, NULL
            FROM {tables['database']}""")
        con.execute(f"""{ins} {name}, 'temp files', {unit}, 'part', {t}, nullif(trim(stats_reset), ''),
                NULL, NULL, NULL, {n('temp_bytes')}, NULL, NULL, NULL, _file, NULL
            FROM {tables['database']} WHERE temp_bytes IS NOT NULL""")
        if not has_io:
            notes.append("PostgreSQL: data reads from pg_stat_database.blks_read (reads that missed shared_buffers; "
                         "some are served by the OS page cache)")
    if "bgwriter" in tables:
        role = "'detail'" if has_io else "'part'"
        w = (f"{n('buffers_clean')} + {n('buffers_backend')} + coalesce({n('buffers_checkpoint')}, 0)")
        con.execute(f"""{ins} {name}, 'data', 'bgwriter', {role}, {t}, nullif(trim(stats_reset), ''),
                NULL, NULL, {w}, ({w}) * {bs}, NULL, NULL, NULL, _file, NULL FROM {tables['bgwriter']}""")
        if not has_io:
            notes.append("PostgreSQL: data writes from pg_stat_bgwriter (checkpointer + background writer + "
                         "backends, in pages)")
    if "wal" in tables:
        role = "'detail'" if has_io_wal else "'part'"
        con.execute(f"""{ins} {name}, 'wal', 'wal', {role}, {t}, nullif(trim(stats_reset), ''),
                NULL, NULL, {n('wal_write')}, {n('wal_bytes')}, NULL, {n('wal_write_time')}, NULL, _file, NULL
            FROM {tables['wal']}""")
    if "statio" in tables:
        unit = "coalesce(nullif(trim(datname), ''), 'database')"
        con.execute(f"""{ins} {name}, 'table reads', {unit}, 'detail', {t}, NULL,
                {n('heap_blks_read')} + coalesce({n('toast_blks_read')}, 0),
                ({n('heap_blks_read')} + coalesce({n('toast_blks_read')}, 0)) * {bs}, NULL, NULL, NULL, NULL, NULL,
                _file, NULL FROM {tables['statio']}""")
        con.execute(f"""{ins} {name}, 'index reads', {unit}, 'detail', {t}, NULL,
                {n('idx_blks_read')} + coalesce({n('tidx_blks_read')}, 0),
                ({n('idx_blks_read')} + coalesce({n('tidx_blks_read')}, 0)) * {bs}, NULL, NULL, NULL, NULL, NULL,
                _file, NULL FROM {tables['statio']}""")
    if not ({"io", "database", "bgwriter", "wal"} & set(tables)):
        raise DbtierError(f"{files['statio'][0]}: pg_statio_* alone is a breakdown of reads, not the "
                          "database's I/O", "add pg_stat_database, pg_stat_wal (and pg_stat_io or pg_stat_bgwriter)")
    if "io" not in tables and "bgwriter" not in tables:
        notes.append("PostgreSQL: no pg_stat_io or pg_stat_bgwriter export, so data-file writes are not counted")
    if "wal" not in tables and not has_io_wal:
        notes.append("PostgreSQL: no pg_stat_wal export, so WAL writes are not counted")
    csvio.times_after_insert(con, "pg_counters", [(f"pg_{v}_raw", by_view[v], "sample_time", t) for v in by_view])
    for drop in cleanup:
        con.execute(drop)
    cap = con.execute("""
        WITH last AS (SELECT database, unit, arg_max(size_bytes, sample_time) AS b FROM pg_counters
                      WHERE size_bytes IS NOT NULL GROUP BY database, unit)
        SELECT database, sum(b) / 1e9 FROM last GROUP BY database""").fetchall()
    res = ReadResult(SOURCE, "counters", "pg_counters", [str(p) for p in paths], notes=notes,
                     capacity_gb={d: float(g) for d, g in cap if g is not None})
    if said:
        res.extra["provenance"] = said
        res.native_step_s = said.get("period_s")
    return res


def _raw_columns(view: str) -> list[str]:
    """The columns of a view's raw table (the collector's and psql's alike)."""
    return list(dict.fromkeys(list(BASE) + ["cluster", "block_size"] + list(VIEWS[view]) + list(COLUMNS[view])))


# -- psql's output ----------------------------------------------------------------------------------------

class Printed:
    """What _load_printed made: a table per view (and the files it came from), and what the provenance says."""

    def __init__(self) -> None:
        self.tables: dict[str, tuple[str, list[str]]] = {}
        self.said: dict[str, Any] = {}


_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def _number(path: str, line: int, col: str, v: str | None, required: bool) -> float | None:
    if v is None:
        if required:
            raise DbtierError(f"{path}: line {line}: column {col} is empty; a number is needed",
                              "pass psql's output of the whole view (SELECT *), as it printed it")
        return None
    if not _NUMBER.fullmatch(v):
        if re.fullmatch(r"\d{1,3}([,.' \u00a0\u202f]\d{3})+([.,]\d+)?", v):
            raise DbtierError(f"{path}: line {line}: column {col}: {v!r} has its digits grouped (psql's \\pset "
                              "numericlocale)", "print it again with \\pset numericlocale off")
        raise DbtierError(f"{path}: line {line}: column {col}: {v!r} is not a number",
                          "pass psql's output as it printed it")
    x = float(v)
    if not (0 <= x < limits.COUNTER_MAX):
        raise DbtierError(f"{path}: line {line}: column {col}: {v} is negative or beyond 64 bits; no counter of "
                          "PostgreSQL is", "pass psql's output as it printed it")
    return x


def _start(opts: ReadOptions) -> dt.datetime:
    """--start as a UTC time (without an offset: in --tz)."""
    if not opts.start:
        raise DbtierError("--interval without --start: psql's output carries no time to count from",
                          "give --start TIME too: when the first snapshot was taken (ISO 8601)")
    try:
        t = dt.datetime.fromisoformat(opts.start.strip())
    except ValueError:
        raise DbtierError(f"--start {opts.start}: not a time", "give ISO 8601: 2026-11-02T09:00:00 (without an "
                          "offset, in --tz)") from None
    if t.tzinfo is None:
        t = t.replace(tzinfo=zoneinfo.ZoneInfo(opts.tz))
    return t.astimezone(dt.timezone.utc).replace(tzinfo=None)


def _utc(stamp: psql.Stamp, tz: str, where: str, text: str) -> dt.datetime:
    """A printed time in UTC: its offset when it has one; else local time in --tz, whose name for that time
    must be the abbreviation printed (CET, EST) when there is one."""
    if stamp.offset_s is not None:
        return stamp.local - dt.timedelta(seconds=stamp.offset_s)
    zone = zoneinfo.ZoneInfo(tz)
    if stamp.zone is not None:
        names = {stamp.local.replace(tzinfo=zone, fold=f).tzname() for f in (0, 1)}
        if stamp.zone not in names:
            if tz == "UTC":
                raise DbtierError(f"{where}: {text!r} is in {stamp.zone}, a zone dbtier cannot tell from its "
                                  "abbreviation", f"give --tz, the zone {stamp.zone} is in (e.g. Europe/Paris for CET, "
                                  "America/New_York for EST)")
            raise DbtierError(f"{where}: {text!r} is in {stamp.zone}, but --tz {tz} calls that time "
                              f"{' or '.join(sorted(n for n in names if n))}", "give the --tz the times were printed in")
    local = stamp.local.replace(tzinfo=zone)
    return local.astimezone(dt.timezone.utc).replace(tzinfo=None)


def _time_source(res: psql.Result, tcol: str | None, interval: bool) -> str:
    if interval:
        own = " (the file's own times not read)" if tcol or res.title is not None else ""
        return f"--start and --interval{own}"
    if tcol:
        return f"the {tcol} column"
    if res.title is not None:
        return "the \\watch headers"
    return ""


def _load_printed(con: duckdb.DuckDBPyConnection, printed: Sequence[psql.Parsed], opts: ReadOptions,
                  notes: list[str], io_versions: dict[str, str]) -> Printed:
    """psql's results of the views into one table a view, columns as the collector's (_raw_columns)."""
    interval = opts.interval_s
    start = _start(opts) if interval else None
    rows: dict[str, dict[str, list]] = {}
    files: dict[str, list[str]] = {}
    snaps: dict[str, set] = {}          # view -> the snapshot times
    counter: dict[str, int] = {}        # view -> snapshots numbered so far (--interval)
    every: set[float | None] = set()
    said_how: dict[str, list[str]] = {}  # "aligned, times from the \watch headers" -> files
    no_block_size = False
    _one_snapshot(printed)
    for parsed in printed:
        path = parsed.path
        order = None
        for res in parsed.results:
            view = view_of(res.columns)
            tcol = next((c for c in TIME_COLUMNS if c in res.columns), None)
            texts = [r[res.columns.index(tcol)] for _, r in res.rows] if tcol else []
            order = order or psql.slash_order([x for x in texts if x] + [res.title or ""])
        for res in parsed.results:
            view = view_of(res.columns)
            if view is None:
                continue
            where = f"{path}: line {res.header_line}"
            dup = next((c for c in res.columns if res.columns.count(c) > 1 and c in _raw_columns(view)), None)
            if dup:
                raise DbtierError(f"{where}: the header names column {dup} twice; dbtier cannot tell which holds it",
                                  "select each column once")
            if view == "io":
                io_versions.setdefault(io_version(res.columns, where), path)
            tcol = next((c for c in TIME_COLUMNS if c in res.columns), None)
            how = _time_source(res, tcol, bool(interval))
            if not how:
                raise DbtierError(f"{where}: a snapshot of {VIEW_NAMES[view]} without a time: no \\watch header "
                                  "above it, no now() column in it",
                                  "give --interval SECONDS and --start TIME (how far apart the snapshots were taken, "
                                  "and when the first was), or print them with \\watch or SELECT now(), *")
            local: list[bool] = []          # times printed without an offset: read in --tz
            if not interval and not tcol:
                every.add(res.every_s)
            idx = {c: res.columns.index(c) for c in _raw_columns(view) if c in res.columns}
            no_block_size |= "block_size" not in idx
            out = rows.setdefault(view, {c: [] for c in _raw_columns(view) + ["_file"]})
            if path not in files.setdefault(view, []):
                files[view].append(path)
            keycols = [res.columns.index(c) for c in KEYS[view] if c in res.columns]
            seen: set = set()
            title_t = None
            if not interval and not tcol:
                title_t = _printed_time(res.title or "", order, opts.tz, f"{path}: line {res.title_line}", local)
            for k, (line, vals) in enumerate(res.rows):
                if interval:
                    key = tuple(vals[i] for i in keycols)
                    if k == 0 or not keycols or key in seen:
                        counter[view] = counter.get(view, 0) + 1
                        seen = set()
                    seen.add(key)
                    assert start is not None            # --interval: _start gave it
                    when = start + dt.timedelta(seconds=interval * (counter[view] - 1))
                elif tcol:
                    when = _printed_time(vals[res.columns.index(tcol)] or "", order, opts.tz,
                                         f"{path}: line {line}", local)
                else:
                    assert title_t is not None          # neither --interval nor a time column: read above
                    when = title_t
                snaps.setdefault(view, set()).add(when)
                for c in _raw_columns(view):
                    if c == "sample_time":
                        out[c].append(when.isoformat(sep=" ") + "+00:00")
                    elif c not in idx:
                        out[c].append(None)
                    elif c in NUMERIC[view]:
                        out[c].append(_number(path, line, c, vals[idx[c]], c in REQUIRED_NUMERIC[view]))
                    else:
                        out[c].append(vals[idx[c]])
                out["_file"].append(path)
            zone = f", {opts.tz} time" if any(local) and not interval else ""
            said_how.setdefault(f"{parsed.form}, times from {how}{zone}", []).append(path)
    for view, times in snaps.items():
        if len(times) < 2:
            names = ", ".join(files[view][:3])
            raise DbtierError(f"{names}: one snapshot of {VIEW_NAMES[view]}: a rate needs two",
                              "run the query again later and import both (psql's \\watch 60 repeats it every minute)")
    got = Printed()
    for view, cols in rows.items():
        table = f"pg_{view}_psql"
        data = {c: pa.array(v, type=pa.float64() if c in NUMERIC[view] else pa.string()) for c, v in cols.items()}
        con.register("_pg_printed", pa.table(data))
        try:
            con.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT * FROM _pg_printed")
        finally:
            con.unregister("_pg_printed")
        got.tables[view] = (table, files[view])
    for how, paths_ in said_how.items():
        uniq = list(dict.fromkeys(paths_))
        names = ", ".join(uniq[:3]) + (f" and {len(uniq) - 3} more" if len(uniq) > 3 else "")
        notes.append(f"psql output ({how}): {names}")
    if no_block_size and "database" in rows:
        notes.append("psql output without a block_size column: pg_stat_database's blocks taken as 8192 bytes "
                     "(PostgreSQL's default; SELECT current_setting('block_size') AS block_size, * says otherwise)")
    step = interval if interval else (next(iter(every)) if len(every) == 1 else None)
    views = " and ".join(VIEW_NAMES[v] for v in rows)
    got.said = {"statistic": f"cumulative counters of {views} (psql output)",
                "unit": "I/Os; bytes as blocks x block_size" + (" (pg_stat_io 18: its byte columns)"
                                                               if "18" in io_versions else ""),
                "period_s": step}
    return got


def _one_snapshot(printed: Sequence[psql.Parsed]) -> None:
    """Refuse a view printed once (one result, its keys once, one time if it has a time column), before asking
    for times it could not use anyway."""
    count: dict[str, int] = {}
    files: dict[str, list[str]] = {}
    for parsed in printed:
        for res in parsed.results:
            view = view_of(res.columns)
            if view is None:
                continue
            files.setdefault(view, []).append(parsed.path)
            tcol = next((c for c in TIME_COLUMNS if c in res.columns), None)
            if not res.rows:
                n = 0
            elif tcol:
                n = len({r[res.columns.index(tcol)] for _, r in res.rows})
            else:
                keycols = [res.columns.index(c) for c in KEYS[view] if c in res.columns]
                keys = [tuple(r[i] for i in keycols) for _, r in res.rows]
                n = 1 if keycols and len(set(keys)) == len(keys) else len(keys) if not keycols else 2
            count[view] = count.get(view, 0) + min(n, 2)
    for view, n in count.items():
        if n < 2:
            names = ", ".join(dict.fromkeys(files[view][:3]))
            raise DbtierError(f"{names}: one snapshot of {VIEW_NAMES[view]}: a rate needs two",
                              "run the query again later and import both (psql's \\watch 60 repeats it every minute)")


def _printed_time(text: str, order: str | None, tz: str, where: str, local: list[bool]) -> dt.datetime:
    """`text` in UTC; `local` gets whether it was printed without an offset (read in --tz)."""
    try:
        stamp = psql.parse_time(text, order)
    except ValueError as exc:
        raise DbtierError(f"{where}: {text.strip()[:80]!r} is not a time dbtier reads ({exc})",
                          "give --interval SECONDS and --start TIME instead (the file's times are then not "
                          "read), or print times in ISO 8601 (SET DateStyle = ISO)") from None
    t = _utc(stamp, tz, where, text.strip())
    local.append(stamp.offset_s is None)
    problem = limits.time_problem(t)
    if problem:
        raise DbtierError(f"{where}: {problem}", "check the file's times")
    return t
