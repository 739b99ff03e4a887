"""The tidy tables every reader produces, and what they share (options, times, names).

A reader turns one source's files into one DuckDB table of one of three kinds:

- **counters** (awr, sqlserver, postgres, diskstats): one row per sample of one unit (a file, a
  device, an instance): `database, file_type, unit, role, sample_time, epoch`, the cumulative
  counters `read_ios, read_bytes, write_ios, write_bytes, read_time_ms, write_time_ms` (NULL =
  not collected), the gauge `size_bytes`, `_file` (where the row came from, for messages), and
  `redo_bytes` (AWR's redo size: redo generated, shown beside the I/O, never added to it). `epoch` names the life of the counters (a startup or
  boot time, a stats reset): a new epoch starts a new segment. series.py turns them into intervals.
- **intervals** (iostat, sar): the source already gives rates per interval, in the same columns
  series.py makes from counters (INTERVAL_COLUMNS).
- **hourly** (dma): hour-of-day statistics of per-snapshot deltas, see dma.py.

`role` says how a row adds up into its database: `total` (the source's own total, e.g. AWR's
`physical read total IO requests`), `part` (file types or devices that add up to the total when
there is no `total` row), or `detail` (a breakdown kept for the report, never added).
Times are UTC; a source's local times are converted with `--tz` (an IANA zone, default UTC).
"""

from __future__ import annotations

import re
import zoneinfo
from dataclasses import dataclass, field
from pathlib import Path

from dbtier.core.errors import DbtierError
from dbtier.core.files import duck_path, sql_str  # noqa: F401 - re-exported to the readers

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


@dataclass
class ReadResult:
    source: str
    kind: str                       # counters | intervals | hourly
    table: str                      # DuckDB table holding the tidy rows
    files: list[str]
    notes: list[str] = field(default_factory=list)
    wrap_bits: dict[str, object] = field(default_factory=dict)   # counter -> 32, 64 or "auto" (see series.py)
    capacity_gb: dict[str, float] = field(default_factory=dict)  # database -> allocated GB, when the source says
    duplicates_dropped: int = 0
    limitations: list[str] = field(default_factory=list)
    extra: dict[str, object] = field(default_factory=dict)    # reader-specific, for its own summarise()
    one_unit: bool = False          # one unit per database and file type (series.py can skip adding up)
    absent: tuple[str, ...] = ()    # counters this source never fills (NULL on every row)
    series_by: tuple[str, ...] = ("database", "file_type", "unit")   # what tells one counter series from another
    constant: dict[str, str] = field(default_factory=dict)   # label columns with one value on every row
    cleanup: list[str] = field(default_factory=list)   # tables behind `table` (a view), dropped after use


def check_tz(tz: str | None) -> str:
    tz = tz or "UTC"
    try:
        zoneinfo.ZoneInfo(tz)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise DbtierError(f"--tz {tz}: not a time zone name",
                          "give an IANA zone such as UTC, Europe/Paris or America/New_York") from None
    return tz


# Naive formats, tried in order after ISO 8601: Oracle's defaults (DD-MON-RR HH.MI.SSXFF AM), SQL
# Developer's, and US month-first dates.
_NAIVE_FORMATS = ("%d-%b-%y %I.%M.%S.%f %p", "%d-%b-%y %I.%M.%S.%n %p", "%d-%b-%y %I.%M.%S %p",
                  "%d-%b-%Y %I.%M.%S.%f %p", "%d-%b-%y %H:%M:%S", "%d-%b-%Y %H:%M:%S", "%d-%b-%y %H.%M.%S",
                  "%m/%d/%Y %H:%M:%S", "%m/%d/%y %H:%M:%S", "%m/%d/%Y %I:%M:%S %p", "%d.%m.%Y %H:%M:%S")


def naive_ts_sql(expr: str) -> str:
    """A TIMESTAMP from text without an offset (NULL when no format fits)."""
    fmts = ", ".join(sql_str(f) for f in _NAIVE_FORMATS)
    return f"coalesce(try_cast({expr} AS TIMESTAMP), try_strptime(upper(trim({expr})), [{fmts}]))"


def utc_sql(expr: str, tz: str, typed: bool = False) -> str:
    """SQL turning text `expr` into a UTC TIMESTAMP: an explicit offset wins, else it is local time in `tz`.

    SQL Server's `2024-03-01 10:00:00.1234567 +01:00` (a space before the offset) is accepted.
    Cheap string tests pick the branch, so a million ISO times cost a cast each, not a regex.
    `typed`: `expr` is already a TIMESTAMP (csvio.load read it; it had no offset), local to `tz`."""
    e = expr
    if typed:
        return e if tz == "UTC" else f"timezone('UTC', timezone({sql_str(tz)}, {_in_range(e)}))"
    has_offset = (f"(contains(substr({e}, 11), '+') OR contains(substr({e}, 12), '-') OR suffix({e}, 'Z') "
                  f"OR suffix(upper(rtrim({e})), 'UTC'))")
    spaced = (f"CASE WHEN contains({e}, ' +') OR contains({e}, ' -') OR suffix(upper(rtrim({e})), 'UTC') THEN "
              f"regexp_replace(regexp_replace(trim({e}), '\\s*UTC$', '+00'), '\\s+([+-]\\d\\d(:?\\d\\d)?|Z)$', "
              f"'\\1') ELSE trim({e}) END")
    with_offset = f"timezone('UTC', {_in_range(f'try_cast({spaced} AS TIMESTAMPTZ)', 'TIMESTAMPTZ')})"
    naive = naive_ts_sql(e)
    local = naive if tz == "UTC" else f"timezone('UTC', timezone({sql_str(tz)}, {_in_range(naive)}))"
    return f"(CASE WHEN {e} IS NULL THEN NULL WHEN {has_offset} THEN {with_offset} ELSE {local} END)"


# Times a zone conversion can take (DuckDB converts through nanoseconds, which end in 2262): beyond
# them a time is NULL, so the reader names its file and line; summary.py refuses years before 1980.
TIME_RANGE = ("1900-01-01", "2262-01-01")


def _in_range(ts: str, kind: str = "TIMESTAMP") -> str:
    lo, hi = TIME_RANGE
    return f"(CASE WHEN {ts} >= {kind} '{lo}' AND {ts} < {kind} '{hi}' THEN {ts} END)"


def interval_sql(expr: str) -> str:
    """Seconds east of UTC from Oracle's SNAP_TIMEZONE (`+01:00`, `+000000000 01:00:00.000000`), else NULL."""
    e = f"trim({expr})"
    return (f"(CASE WHEN regexp_matches({e}, '^[+-]?\\d{{1,6}} \\d\\d:\\d\\d:\\d\\d') THEN "
            f"(CASE WHEN starts_with({e}, '-') THEN -1 ELSE 1 END) * ("
            f"abs(TRY_CAST(regexp_extract({e}, '^[+-]?(\\d+)', 1) AS BIGINT)) * 86400 + "
            f"CAST(regexp_extract({e}, ' (\\d\\d):', 1) AS BIGINT) * 3600 + "
            f"CAST(regexp_extract({e}, ':(\\d\\d):', 1) AS BIGINT) * 60) "
            f"WHEN regexp_matches({e}, '^[+-]\\d\\d:\\d\\d$') THEN "
            f"(CASE WHEN starts_with({e}, '-') THEN -1 ELSE 1 END) * ("
            f"CAST(substr({e}, 2, 2) AS BIGINT) * 3600 + CAST(substr({e}, 5, 2) AS BIGINT) * 60) "
            f"ELSE NULL END)")


_SAFE = re.compile(r"[^A-Za-z0-9_.:@/#+-]+")


def database_name_from_file(path: str | Path) -> str:
    """A database name from a file name, for sources that carry none (`diskstats-db01.txt` -> `diskstats-db01`)."""
    stem = Path(path).name
    for suffix in (".gz", ".txt", ".csv", ".log", ".out"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
    return _SAFE.sub("_", stem) or "database"
