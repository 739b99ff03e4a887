"""The tables every reader produces (their columns), the reader's options and result, and names from files.

A reader turns one source's files into one DuckDB table of one of three kinds:

- **counters** (awr, sqlserver, postgres, diskstats): one row per sample of one unit (a file, a
  device, an instance): `database, file_type, unit, role, sample_time, epoch`, the cumulative
  counters `read_ios, read_bytes, write_ios, write_bytes, read_time_ms, write_time_ms` (NULL =
  not collected), the gauge `size_bytes`, `_file` (where the row came from, for messages), and
  `redo_bytes` (AWR's redo size: redo generated, shown beside the I/O, never added to it). `epoch` names the life of the counters (a startup or
  boot time, a stats reset): a new epoch starts a new segment. series.py turns them into intervals.
- **intervals** (iostat, sar): the source already gives rates per interval, in the same columns
  series.py makes from counters (INTERVAL_COLUMNS).
- **hourly** (dma): hour-of-day statistics of per-snapshot deltas, see sources/dma.py.

`role` says how a row adds up into its database: `total` (the source's own total, e.g. AWR's
`physical read total IO requests`), `part` (file types or devices that add up to the total when
there is no `total` row), or `detail` (a breakdown kept for the report, never added).
Times are UTC (sources/times.py turns a source's times into UTC).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from pathlib import Path

COUNTERS = ("read_ios", "read_bytes", "write_ios", "write_bytes", "read_time_ms", "write_time_ms")
EXTRA_COUNTERS = ("redo_bytes",)    # kept beside the I/O (AWR's redo size), never added into it

COUNTER_TABLE_COLUMNS = (
    "database VARCHAR, file_type VARCHAR, unit VARCHAR, role VARCHAR, sample_time TIMESTAMP, epoch VARCHAR, "
    + ", ".join(f"{c} DOUBLE" for c in COUNTERS) + ", size_bytes DOUBLE, _file VARCHAR, redo_bytes DOUBLE")

# Rates per interval, as series.py makes them and iostat/sar give them.
INTERVAL_COLUMNS = ("database", "file_type", "role", "start", "end", "seconds", "read_iops", "write_iops", "iops",
                    "read_mbps", "write_mbps", "mbps", "read_lat_ms", "write_lat_ms")

INTERVAL_TABLE_COLUMNS = (
    'database VARCHAR, file_type VARCHAR, role VARCHAR, start TIMESTAMP, "end" TIMESTAMP, seconds DOUBLE, '
    "read_iops DOUBLE, write_iops DOUBLE, iops DOUBLE, read_mbps DOUBLE, write_mbps DOUBLE, mbps DOUBLE, "
    "read_lat_ms DOUBLE, write_lat_ms DOUBLE")

MB = 1e6   # MB/s is 10^6 bytes a second, as everywhere in dbtier


@dataclass(frozen=True)
class ReadOptions:
    tz: str = "UTC"                 # zone of times printed without an offset
    database: str | None = None     # name to give (sources that do not carry one, or to override)
    devices: str | None = None      # diskstats/iostat/sar: comma-separated device names that count
    interval_s: float | None = None # sources whose snapshots carry no time of their own: seconds between them
    start: str | None = None        # ... and the first snapshot's time (ISO 8601; without an offset, in tz)


@dataclass
class ReadResult:
    source: str
    kind: str                       # counters | intervals | hourly
    table: str                      # DuckDB table holding the reader's rows
    files: list[str]
    notes: list[str] = field(default_factory=list)
    wrap_bits: dict[str, object] = field(default_factory=dict)   # counter -> 32, 64 or "auto" (see series.py)
    capacity_gb: dict[str, float] = field(default_factory=dict)  # database -> allocated GB, when the source says
    duplicates_dropped: int = 0
    limitations: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)    # reader-specific, for its own summarise()
    one_unit: bool = False          # one unit per database and file type (series.py can skip adding up)
    absent: tuple[str, ...] = ()    # counters this source never fills (NULL on every row)
    series_by: tuple[str, ...] = ("database", "file_type", "unit")   # what tells one counter series from another
    constant: dict[str, str] = field(default_factory=dict)   # label columns with one value on every row
    cleanup: list[str] = field(default_factory=list)   # tables behind `table` (a view), dropped after use
    unit_names: bool = False        # a database with several units is one series per unit, NAME/UNIT (AWR RAC)
    keys: str | None = None         # SQL of the distinct (database, _file, unit) of `table`, when cheaper than it
    instance_units: bool = False    # a unit is a database instance (AWR's INSTANCE_NUMBER): instances are counted
    instances: dict[str, int] = field(default_factory=dict)   # database -> instances, when the reader knows (dma)
    # provenance (provenance.py): what the source's numbers are. `counter`: cumulative, differenced by dbtier;
    # `delta`: a sum per period (CloudWatch); `rate`: the source's own averages (Azure Monitor, rate()).
    semantics: str = "counter"
    native_step_s: float | None = None   # the source's own step or period, when it says (else the median interval)
    averaging_s: float | None = None     # rate: the window each average is over, when it says


def instance_fields(n: int | None) -> dict[str, object]:
    """A database's `instances` (how many the history shows: an Oracle RAC database has 2 or more; None when
    the source does not say) and `clustered` (several instances share its storage; None when unknown)."""
    return {"instances": n, "clustered": None if n is None else n > 1}


_SAFE = re.compile(r"[^A-Za-z0-9_.:@/#+-]+")


def database_name_from_file(path: str | Path) -> str:
    """A database name from a file name, for sources that carry none (`diskstats-db01.txt` -> `diskstats-db01`)."""
    stem = Path(path).name
    for suffix in (".gz", ".txt", ".csv", ".log", ".out"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
    return _SAFE.sub("_", stem) or "database"
