"""The requirement per file type: WAL (or redo) apart from the data files, temp apart from both, where the
import's source tells them apart (PostgreSQL 18's pg_stat_io has WAL rows; 16 and 17 with pg_stat_wal;
AWR's file types; a Prometheus or diskstats import's devices).

Each file type's figures are its own percentile over its own intervals (read and write each): they do not
add up to the database's, whose peak intervals need not be any one file type's. Only the `part` file types
(those the database's figures add up) are listed; a `detail` breakdown (fsyncs, per-database reads) is not.
"""

from __future__ import annotations

from typing import Any

import duckdb

from dbtier.core.errors import DbtierError
from dbtier.core.files import sql_str
from dbtier.history import store

METRICS = ("read_iops", "write_iops", "read_mbps", "write_mbps")


def by_file_type(doc: dict[str, Any], database: str, key: str) -> dict[str, dict[str, float | None]] | None:
    """{file type: {read_iops, write_iops, read_mbps, write_mbps, intervals}} at `key` (p95, p99, max) of
    one database of an import run, or None when it has fewer than two file types that add up."""
    run_dir = doc.get("_run_dir")
    if not run_dir or not store.series_files(run_dir, store.INTERVALS_FILE):
        return None
    q = {"p95": 0.95, "p99": 0.99}.get(key)
    aggs = ", ".join((f"quantile_cont({m}, {q})" if q else f"max({m})") for m in METRICS)
    con = store.connect()
    try:
        store.check_parquet(con, run_dir, store.INTERVALS_FILE, ["database", "file_type", "role", *METRICS])
        rows = con.execute(f"""SELECT file_type, count(*), {aggs} FROM {store.parquet(run_dir, store.INTERVALS_FILE)}
                               WHERE database = {sql_str(database)} AND role = 'part' AND "end" > start
                               GROUP BY file_type ORDER BY file_type""").fetchall()
    except duckdb.Error as exc:
        why = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise DbtierError(f"{run_dir}: its intervals cannot be read: {why[:200]}",
                          "re-run the `dbtier history import` that wrote it") from None
    finally:
        con.close()
    if len(rows) < 2:
        return None
    return {str(ft): {"intervals": int(n), **{m: (None if v is None else float(v)) for m, v in zip(METRICS, vals)}}
            for ft, n, *vals in rows}
