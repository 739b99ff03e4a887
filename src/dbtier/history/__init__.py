"""I/O history of databases: one reader per source, series maths, consolidation, Parquet store.

readers (pure parsing into a tidy DuckDB table, see tables.py):
  awr.py (Oracle AWR CSV), dma.py (Google DMA collections), sqlserver.py
  (sys.dm_io_virtual_file_stats), postgres.py (pg_stat_* views), diskstats.py (/proc/diskstats),
  iostat.py (`iostat -x` and `sar -d`), prometheus.py (query_range answers, `promtool tsdb dump`,
  VictoriaMetrics exports: promfiles.py), cloudwatch.py (EBS get-metric-data), azure.py (az monitor metrics);
provenance.py: what each source's numbers are (counters, deltas or the source's averages), its step, gaps;
series.py: counters -> intervals -> rates, peaks, profiles (exact, tested on hand-worked tables);
consolidate.py: many databases on one UTC grid, peak of the sum vs sum of the peaks;
days.py: read and written bytes per calendar day (the requirement's TB/day);
store.py: the run directory's Parquet files and the DuckDB connection.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Sequence

import duckdb

from dbtier.core.errors import DbtierError
from dbtier.history.tables import ReadOptions, ReadResult

# --source name -> module (each has read(con, paths, opts) -> ReadResult)
SOURCES = {
    "awr": "awr",
    "dma": "dma",
    "sqlserver": "sqlserver",
    "postgres": "postgres",
    "diskstats": "diskstats",
    "iostat": "iostat",
    "sar": "iostat",
    "prometheus": "prometheus",
    "cloudwatch": "cloudwatch",
    "azure": "azure",
}


def read(con: duckdb.DuckDBPyConnection, source: str, paths: Sequence[str | Path], opts: ReadOptions) -> ReadResult:
    """Read `paths` with the `source` reader. Every failure a user can fix is a DbtierError."""
    if source not in SOURCES:
        raise DbtierError(f"unknown source {source!r}", f"use one of {', '.join(SOURCES)}")
    if not paths:
        raise DbtierError("no files given", "pass the exported files after --source")
    mod = importlib.import_module(f"dbtier.history.{SOURCES[source]}")
    try:
        if source == "sar":
            return mod.read_sar(con, paths, opts)
        return mod.read(con, paths, opts)
    except duckdb.Error as exc:   # DuckDB refused something the reader did not foresee: say which files
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        names = ", ".join(str(p) for p in list(paths)[:3]) + (" ..." if len(paths) > 3 else "")
        raise DbtierError(f"{names}: cannot be read as {source} history ({first})",
                          "check that the files are the collector's output, unchanged") from exc
