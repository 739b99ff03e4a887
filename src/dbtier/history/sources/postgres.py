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
64-bit and never wrap. Capacity is the sum of `size_bytes` (pg_database_size) at the last sample.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import duckdb

from dbtier.core.errors import DbtierError
from dbtier.core.files import sql_str
from dbtier.history.sources import csvio
from dbtier.history.sources import detect
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


def _view(path: str) -> tuple[str, Layout]:
    best = None
    for view, cols in VIEWS.items():
        got = csvio.sniff(path, BASE + cols)
        if isinstance(got, Layout):
            return view, got
        if best is None or got[0] > best[0]:
            best = got
    other = detect.other_source(path, SOURCE)
    found, delim, missing = best
    if other or found > 1:
        raise csvio.header_error(path, 1, "postgres", missing, delim, other)
    raise DbtierError(f"{path}: line 1: not a PostgreSQL statistics export: no columns of pg_stat_io, "
                      "pg_stat_database, pg_stat_bgwriter, pg_stat_wal or pg_statio_*_tables (and sample_time)",
                      "export with collectors/postgres_stats.sql (docs/commands/history.md)")


def io_version(lay: Layout) -> str:
    """Which PostgreSQL's pg_stat_io the file's columns are (IO_COLUMNS), or a clear refusal."""
    cols = frozenset(lay.names) - COLLECTOR_COLUMNS
    for version, known in IO_COLUMNS.items():
        if cols == known:
            return version
    near = min(IO_COLUMNS.items(), key=lambda kv: len(kv[1] ^ cols))
    extra, missing = sorted(cols - near[1]), sorted(near[1] - cols)
    raise DbtierError(f"{lay.path}: line {lay.header_line}: pg_stat_io of an unknown PostgreSQL version: its columns "
                      f"are neither 16/17's nor 18's (against {near[0]}'s: "
                      + "; ".join(x for x in (f"not there: {', '.join(missing)}" if missing else "",
                                              f"unknown: {', '.join(extra)}" if extra else "") if x) + ")",
                      "export pg_stat_io whole (SELECT *) with collectors/postgres_stats.sql from PostgreSQL 16, 17 "
                      "or 18; another version's column set is not read until dbtier knows it")


def read(con: duckdb.DuckDBPyConnection, paths: Sequence[str | Path], opts: ReadOptions) -> ReadResult:
    by_view: dict[str, list[Layout]] = {}
    io_versions: dict[str, str] = {}
    for p in paths:
        csvio.check_file(p)
        view, lay = _view(str(p))
        if view == "io":
            io_versions.setdefault(io_version(lay), lay.path)
        by_view.setdefault(view, []).append(lay)
    con.execute(f"CREATE OR REPLACE TABLE pg_counters ({COUNTER_TABLE_COLUMNS})")
    notes: list[str] = []
    t = utc_sql("sample_time", opts.tz)
    name = (sql_str(opts.database) if opts.database else
            "coalesce(nullif(trim(cluster), ''), 'postgresql')")
    tables = {}
    for view, lays in by_view.items():
        table = f"pg_{view}_raw"
        cols = list(BASE) + ["cluster", "block_size"] + list(VIEWS[view]) + list(COLUMNS[view])
        cols = list(dict.fromkeys(cols))
        req = REQUIRED_NUMERIC[view]
        csvio.load(con, table, lays, cols, numeric=NUMERIC[view], required=req)
        if con.execute(f"SELECT count(*) FROM {table}").fetchone()[0] == 0:
            raise DbtierError(f"{lays[0].path}: no samples after the header", "run the collector at least twice")
        tables[view] = table

    def n(c: str) -> str:
        return f'"{c}"'

    bs = "coalesce(block_size, 8192)"
    has_io = "io" in tables
    has_io_wal = has_io and con.execute("SELECT count(*) FROM pg_io_raw WHERE lower(trim(object)) = 'wal'"
                                        ).fetchone()[0] > 0
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
            FROM pg_io_raw""")
        con.execute(f"""{ins} {name},
                CASE lower(trim(object)) WHEN 'wal' THEN 'wal fsync' ELSE 'data fsync' END,
                trim(backend_type) || '/' || trim(object) || '/' || trim(context), 'detail', {t},
                nullif(trim(stats_reset), ''), NULL, NULL, {n('fsyncs')}, NULL, NULL, {n('fsync_time')}, NULL,
                _file, NULL
            FROM pg_io_raw WHERE {n('fsyncs')} IS NOT NULL""")
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
            FROM pg_database_raw""")
        con.execute(f"""{ins} {name}, 'temp files', {unit}, 'part', {t}, nullif(trim(stats_reset), ''),
                NULL, NULL, NULL, {n('temp_bytes')}, NULL, NULL, NULL, _file, NULL
            FROM pg_database_raw WHERE temp_bytes IS NOT NULL""")
        if not has_io:
            notes.append("PostgreSQL: data reads from pg_stat_database.blks_read (reads that missed shared_buffers; "
                         "some are served by the OS page cache)")
    if "bgwriter" in tables:
        role = "'detail'" if has_io else "'part'"
        w = (f"{n('buffers_clean')} + {n('buffers_backend')} + coalesce({n('buffers_checkpoint')}, 0)")
        con.execute(f"""{ins} {name}, 'data', 'bgwriter', {role}, {t}, nullif(trim(stats_reset), ''),
                NULL, NULL, {w}, ({w}) * {bs}, NULL, NULL, NULL, _file, NULL FROM pg_bgwriter_raw""")
        if not has_io:
            notes.append("PostgreSQL: data writes from pg_stat_bgwriter (checkpointer + background writer + "
                         "backends, in pages)")
    if "wal" in tables:
        role = "'detail'" if has_io_wal else "'part'"
        con.execute(f"""{ins} {name}, 'wal', 'wal', {role}, {t}, nullif(trim(stats_reset), ''),
                NULL, NULL, {n('wal_write')}, {n('wal_bytes')}, NULL, {n('wal_write_time')}, NULL, _file, NULL
            FROM pg_wal_raw""")
    if "statio" in tables:
        unit = "coalesce(nullif(trim(datname), ''), 'database')"
        con.execute(f"""{ins} {name}, 'table reads', {unit}, 'detail', {t}, NULL,
                {n('heap_blks_read')} + coalesce({n('toast_blks_read')}, 0),
                ({n('heap_blks_read')} + coalesce({n('toast_blks_read')}, 0)) * {bs}, NULL, NULL, NULL, NULL, NULL,
                _file, NULL FROM pg_statio_raw""")
        con.execute(f"""{ins} {name}, 'index reads', {unit}, 'detail', {t}, NULL,
                {n('idx_blks_read')} + coalesce({n('tidx_blks_read')}, 0),
                ({n('idx_blks_read')} + coalesce({n('tidx_blks_read')}, 0)) * {bs}, NULL, NULL, NULL, NULL, NULL,
                _file, NULL FROM pg_statio_raw""")
    if not ({"io", "database", "bgwriter", "wal"} & set(tables)):
        raise DbtierError(f"{by_view['statio'][0].path}: pg_statio_* alone is a breakdown of reads, not the "
                          "database's I/O", "add pg_stat_database, pg_stat_wal (and pg_stat_io or pg_stat_bgwriter)")
    if "io" not in tables and "bgwriter" not in tables:
        notes.append("PostgreSQL: no pg_stat_io or pg_stat_bgwriter export, so data-file writes are not counted")
    if "wal" not in tables and not has_io_wal:
        notes.append("PostgreSQL: no pg_stat_wal export, so WAL writes are not counted")
    csvio.times_after_insert(con, "pg_counters", [(tables[v], by_view[v], "sample_time", t) for v in tables])
    for t_ in tables.values():
        con.execute(f"DROP TABLE {t_}")
    cap = con.execute("""
        WITH last AS (SELECT database, unit, arg_max(size_bytes, sample_time) AS b FROM pg_counters
                      WHERE size_bytes IS NOT NULL GROUP BY database, unit)
        SELECT database, sum(b) / 1e9 FROM last GROUP BY database""").fetchall()
    return ReadResult(SOURCE, "counters", "pg_counters", [str(p) for p in paths], notes=notes,
                      capacity_gb={d: float(g) for d, g in cap if g is not None})
