"""The history run's files: Parquet series beside result.json, and the DuckDB connection that writes them.

A history run directory holds, besides `result.json`:

- `intervals.parquet`: one row per database, file type and interval (rates, see series.py), written
  when some database has more than one file type (otherwise it would repeat totals.parquet);
- `totals.parquet`: one row per database and interval (the file types added up);
- `profiles.parquet`: hour-of-day, day-of-week and day-of-week x hour means and maxima per database;
- `hourly.parquet` (dma only): per instance, hour of day and statistic;
- `grid.parquet`, `sum.parquet` (consolidate): databases on the common grid (the drivers of the
  combined peak, or all with --full-grid), and the sum of all.

All times are UTC (TIMESTAMP without zone, microseconds). DuckDB does the work in bounded
memory: a memory limit, a spill directory, and no Python loop over rows.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import duckdb

from dbtier.core.errors import DbtierError

INTERVALS_FILE = "intervals.parquet"
TOTALS_FILE = "totals.parquet"
PROFILES_FILE = "profiles.parquet"
HOURLY_FILE = "hourly.parquet"
GRID_FILE = "grid.parquet"
SUM_FILE = "sum.parquet"


def _memory_limit_mb() -> int:
    """A quarter of the machine's memory, between 512 MB and 4 GB: bounded whatever the input size
    (DuckDB spills to the temp directory beyond it). DBTIER_MEMORY_MB overrides it."""
    env = os.environ.get("DBTIER_MEMORY_MB", "")
    if env.isdigit() and int(env) >= 256:
        return int(env)
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)
    except (ValueError, OSError, AttributeError):
        total = 4096
    return int(min(4096, max(512, total // 4)))


def connect(spill_dir: str | os.PathLike | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with UTC as its time zone, a memory limit and a spill directory."""
    con = duckdb.connect(":memory:")
    spill = Path(spill_dir) if spill_dir else Path(tempfile.gettempdir()) / f"dbtier-duckdb-{os.getpid()}"
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f"SET memory_limit = '{_memory_limit_mb()}MB'")
    con.execute(f"SET temp_directory = '{_sql_str(str(spill))}'")
    con.execute("SET preserve_insertion_order = false")
    con.execute(f"SET threads = {max(1, os.cpu_count() or 1)}")
    return con


def _sql_str(s: str) -> str:
    return s.replace("'", "''")


def write_parquet(con: duckdb.DuckDBPyConnection, query: str, path: Path) -> None:
    """COPY (query) TO path, atomically (temp file + rename)."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        con.execute(f"COPY ({query}) TO '{_sql_str(os.path.abspath(tmp))}' (FORMAT parquet, COMPRESSION snappy)")
        os.replace(tmp, path)
    except OSError as exc:
        raise DbtierError(f"cannot write {path}: {exc.strerror or exc}", "choose another run directory with --out") \
            from exc


def parquet(run_dir: str | os.PathLike, name: str, what: str = "history run") -> str:
    """The SQL text that reads one of a run's Parquet files; a clear error when it is missing."""
    path = Path(run_dir) / name
    if not path.exists():
        raise DbtierError(f"{run_dir}: no {name} in this {what}",
                          "pass a run directory written by `dbtier history import` (or re-run it: the file was removed)")
    from dbtier.history.tidy import duck_path
    return f"read_parquet('{_sql_str(duck_path(path))}')"
