"""What a history input may hold: the plausibility limits every reader checks numbers against,
and the caps on DMA archives. One place, so the docs and tests name the same figures.

A number beyond these is refused with the file (and line where known), never carried into a
peak: a 1e308 AWR sample would otherwise be a peak of 1e304 IOPS.
"""

from __future__ import annotations

# Counters. Every source's counters are 64-bit (SQL Server bigint, PostgreSQL int8, Oracle's
# NUMBER statistics stay far below) or unsigned 64-bit (/proc/diskstats' unsigned long).
COUNTER_MAX = 2.0**63          # signed 64-bit: a counter at or above it is refused
COUNTER_MAX_UNSIGNED = 2.0**64  # /proc/diskstats prints unsigned long

# Rates of one unit (a file, a device, an instance) over one interval. Far beyond any storage
# (the fastest arrays do a few million IOPS and some hundred GB/s): above these the input is
# wrong (a corrupt counter, a typo), not the storage fast.
MAX_IOPS = 1e9                 # I/Os a second
MAX_BYTES_PER_S = 1e15         # bytes a second (1 PB/s)
MAX_LAT_MS = 1e7               # average ms per I/O (2.8 hours)

# DMA archives (.zip, .tgz, .tar): what one may expand to. Real collections are a few MB and
# compress 5-10:1; a member that expands more than MAX_RATIO times its compressed size (once past
# RATIO_FLOOR_BYTES) is a bomb, as is a member over MEMBER_MAX_BYTES or an archive over ARCHIVE_MAX_BYTES.
MEMBER_MAX_BYTES = 256 * 2**20
ARCHIVE_MAX_BYTES = 2**30
MAX_RATIO = 100
RATIO_FLOOR_BYTES = 16 * 2**20


# Sample times a capture can have: a year outside this is a typo or a clock fault (and a grid of
# centuries would be millions of cells in consolidate).
FIRST_YEAR, LAST_YEAR = 1980, 2199


def time_problem(t) -> str | None:
    """Why a sample time (a datetime, UTC) is not plausible, or None."""
    if not (FIRST_YEAR <= t.year <= LAST_YEAR):
        return f"{t.isoformat(sep=' ')} UTC is outside {FIRST_YEAR}-{LAST_YEAR}: a typo or a clock fault"
    return None


def rate_problem(what: str, value: float) -> str | None:
    """Why a per-second figure is absurd, or None. `what`: iops, bytes_per_s or lat_ms."""
    limit = {"iops": MAX_IOPS, "bytes_per_s": MAX_BYTES_PER_S, "lat_ms": MAX_LAT_MS}[what]
    if not (value <= limit):
        unit = {"iops": "I/Os a second", "bytes_per_s": "bytes a second", "lat_ms": "ms per I/O"}[what]
        return f"{value:.6g} {unit} is absurd (over {limit:g}): a corrupt or mistyped value"
    return None
