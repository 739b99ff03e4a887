"""SQL Server: snapshots of sys.dm_io_virtual_file_stats, one row per database file per sample.

Columns as the DMV names them (`num_of_reads, num_of_bytes_read, io_stall_read_ms,
num_of_writes, num_of_bytes_written, io_stall_write_ms`, `database_id, file_id`,
`size_on_disk_bytes`), plus what collectors/sqlserver_file_stats.sql adds: `sample_time`
(SYSDATETIMEOFFSET(), so the offset to UTC is known), `server_name`, `sqlserver_start_time`
(sys.dm_os_sys_info: a new value is a restart), `database_name` and `type_desc`
(sys.master_files: ROWS, LOG, FILESTREAM, FULLTEXT).

File type: `log` for LOG files, `data` for the rest; without `type_desc`, file_id 2 is taken as the
log (SQL Server's default layout) and the note says so. Latency is the stall per I/O
(io_stall_read_ms / num_of_reads). The database is `SERVER/NAME` when server_name is given.
Capacity is the sum of the files' size_on_disk_bytes at the last sample. sqlcmd's dashed line
under the header and repeated headers are skipped. The DMV's counters are bigint and never wrap.
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
from dbtier.history.sources.times import utc_sql

SOURCE = "sqlserver"
COUNTERS = ("num_of_reads", "num_of_bytes_read", "num_of_writes", "num_of_bytes_written")
STALLS = ("io_stall_read_ms", "io_stall_write_ms")
REQUIRED = ("sample_time", "file_id") + COUNTERS
OPTIONAL = ("database_name", "database_id", "server_name", "sqlserver_start_time", "type_desc", "size_on_disk_bytes")


def read(con: duckdb.DuckDBPyConnection, paths: Sequence[str | Path], opts: ReadOptions) -> ReadResult:
    layouts = []
    for p in paths:
        csvio.check_file(p)
        got = csvio.sniff(str(p), REQUIRED)
        if not isinstance(got, Layout):
            _, delim, missing = got
            raise csvio.header_error(str(p), 1, "sqlserver", missing, delim, detect.other_source(p, SOURCE))
        if "database_name" not in got.names and "database_id" not in got.names:
            raise DbtierError(f"{p}: line {got.header_line}: missing columns: database_name (or database_id)",
                              "export with collectors/sqlserver_file_stats.sql")
        layouts.append(got)
    cols = list(REQUIRED) + list(STALLS) + list(OPTIONAL)
    csvio.load(con, "mss_raw", layouts, cols, numeric=list(COUNTERS) + list(STALLS) + ["size_on_disk_bytes"],
               required=COUNTERS)
    con.execute("DELETE FROM mss_raw WHERE regexp_matches(trim(sample_time), '^-+$')")   # sqlcmd's underline
    if store.one_row(con.execute("SELECT count(*) FROM mss_raw"))[0] == 0:
        raise DbtierError(f"{layouts[0].path}: no samples after the header", "run the collector at least twice")
    t = utc_sql("sample_time", opts.tz)
    notes = []
    has_type = store.one_row(con.execute("SELECT count(*) FROM mss_raw WHERE type_desc IS NOT NULL"))[0] > 0
    if not has_type:
        notes.append("SQL Server: no type_desc column; file_id 2 is taken as the log file, the others as data")
    ftype = ("CASE WHEN type_desc IS NOT NULL THEN (CASE WHEN upper(trim(type_desc)) = 'LOG' THEN 'log' ELSE 'data' "
             "END) WHEN TRY_CAST(trim(file_id) AS BIGINT) = 2 THEN 'log' ELSE 'data' END")
    dbname = "coalesce(nullif(trim(database_name), ''), 'database_id ' || trim(database_id))"
    if opts.database:
        name = sql_str(opts.database) + f" || '/' || {dbname}"
    else:
        name = f"CASE WHEN nullif(trim(server_name), '') IS NOT NULL THEN trim(server_name) || '/' ELSE '' END || {dbname}"

    def n(c: str) -> str:
        return f'"{c}"'

    con.execute(f"CREATE OR REPLACE TABLE mss_counters ({COUNTER_TABLE_COLUMNS})")
    con.execute(f"""INSERT INTO mss_counters
        SELECT {name}, {ftype}, trim(file_id), 'part', {t}, nullif(trim(sqlserver_start_time), ''),
               {n('num_of_reads')}, {n('num_of_bytes_read')}, {n('num_of_writes')}, {n('num_of_bytes_written')},
               {n('io_stall_read_ms')}, {n('io_stall_write_ms')}, {n('size_on_disk_bytes')}, _file, NULL
        FROM mss_raw""")
    csvio.times_after_insert(con, "mss_counters", [("mss_raw", layouts, "sample_time", t)])
    con.execute("DROP TABLE mss_raw")
    cap = con.execute("""
        WITH last AS (SELECT database, unit, file_type, arg_max(size_bytes, sample_time) AS b FROM mss_counters
                      WHERE size_bytes IS NOT NULL GROUP BY database, unit, file_type)
        SELECT database, sum(b) / 1e9 FROM last GROUP BY database""").fetchall()
    return ReadResult(SOURCE, "counters", "mss_counters", [str(p) for p in paths], notes=notes,
                      capacity_gb={d: float(g) for d, g in cap if g is not None})
