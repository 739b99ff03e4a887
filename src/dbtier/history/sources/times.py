"""Times in the sources' exports, as DuckDB SQL: text (with or without an offset, in ISO 8601 or
Oracle's and others' formats) to a UTC TIMESTAMP, and the `--tz` zone a source's local times are in.

Times are UTC everywhere after a reader; a source's local times are converted with `--tz` (an IANA
zone, default UTC).
"""

from __future__ import annotations

import zoneinfo

from dbtier.core.errors import DbtierError
from dbtier.core.files import sql_str


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


# The day field of an INTERVAL DAY(p) TO SECOND as Oracle prints it: p is at most 9, and AWR exports
# print SNAP_TIMEZONE with all nine (`+000000000 01:00:00.000000`).
INTERVAL_DAY_DIGITS = 9


def interval_sql(expr: str) -> str:
    """Seconds east of UTC from Oracle's SNAP_TIMEZONE (`+01:00`, `+000000000 01:00:00.000000`), else NULL."""
    e = f"trim({expr})"
    return (f"(CASE WHEN regexp_matches({e}, '^[+-]?\\d{{1,{INTERVAL_DAY_DIGITS}}} \\d\\d:\\d\\d:\\d\\d') THEN "
            f"(CASE WHEN starts_with({e}, '-') THEN -1 ELSE 1 END) * ("
            f"abs(TRY_CAST(regexp_extract({e}, '^[+-]?(\\d+)', 1) AS BIGINT)) * 86400 + "
            f"CAST(regexp_extract({e}, ' (\\d\\d):', 1) AS BIGINT) * 3600 + "
            f"CAST(regexp_extract({e}, ':(\\d\\d):', 1) AS BIGINT) * 60) "
            f"WHEN regexp_matches({e}, '^[+-]\\d\\d:\\d\\d$') THEN "
            f"(CASE WHEN starts_with({e}, '-') THEN -1 ELSE 1 END) * ("
            f"CAST(substr({e}, 2, 2) AS BIGINT) * 3600 + CAST(substr({e}, 5, 2) AS BIGINT) * 60) "
            f"ELSE NULL END)")
