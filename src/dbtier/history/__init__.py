"""I/O history of databases: the sources' exports read, the series' maths, consolidation, the Parquet store.

sources/       one reader per source (awr, dma, sqlserver, postgres, diskstats, iostat and sar,
               prometheus, cloudwatch, azure) into one of tables.py's tables, what they share (csvio.py,
               times.py, detect.py), and promfetch.py, the live fetch from Prometheus; `read` below picks
               the reader
tables.py      the tables every reader produces, the reader's options and result
limits.py      the plausibility limits every reader checks numbers against
store.py       the run's Parquet series and the DuckDB connection that writes them
series.py      counters -> intervals -> rates, peaks and profiles (exact, tested on hand-worked tables)
provenance.py  what each source's numbers are (counters, deltas or averages), its step, its gaps
consolidate.py many databases on one UTC grid (dense.py: the grid at fleet scale, a numba kernel)
combine.py     a cluster's instances and several databases summed into one load
days.py        read and written bytes per calendar day (the requirement's TB/day)
split.py       the requirement per file type (WAL, redo, temp apart from the data files)
summary.py     a reader's table to the result document's sections; fleet.py the same in batches, the
               library call of `history import` (its typed, immutable HistoryImport)
intervals.py   a history's per-interval rates for the cloud burst replay
calls.py       `history consolidate` and `history requirement` as library calls (typed, immutable results)

What each may import: dbtier.core (intervals.py also dbtier.results.store; fleet.py and calls.py
dbtier.results, the results they return); sources/ each other and tables.py, limits.py, series.py
(dma.py); summary.py and fleet.py take sources/ further (summary.py reads DMA's hourly statistics through
sources/dma.py). Never model/, report/ or cli/.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Sequence

import duckdb

from dbtier.core.errors import DbtierError
from dbtier.history.tables import ReadOptions, ReadResult

# --source name -> module of sources/ (each has read(con, paths, opts) -> ReadResult)
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
    mod = importlib.import_module(f"dbtier.history.sources.{SOURCES[source]}")
    try:
        if source == "sar":
            return mod.read_sar(con, paths, opts)
        return mod.read(con, paths, opts)
    except duckdb.Error as exc:   # DuckDB refused something the reader did not foresee: say which files
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        names = ", ".join(str(p) for p in list(paths)[:3]) + (" ..." if len(paths) > 3 else "")
        raise DbtierError(f"{names}: cannot be read as {source} history ({first})",
                          "check that the files are the collector's output, unchanged") from exc
