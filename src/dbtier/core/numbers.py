"""Numbers from users and their files are checked before use.

Checks are written so that NaN fails them (`not (v > 0)`, `math.isfinite`),
never as `v <= 0` alone, which NaN passes.
"""

from __future__ import annotations

import math

from dbtier.core.errors import DbtierError

INT64_MAX = 2**63 - 1


def finite(v: float, what: str, hint: str | None = None) -> float:
    """`v` as a float if it is a finite number; otherwise a DbtierError naming `what`."""
    try:
        f = float(v)
    except (TypeError, ValueError, OverflowError):
        raise DbtierError(f"{what}: {v!r} is not a number", hint) from None
    if not math.isfinite(f):
        raise DbtierError(f"{what}: {v!r} is not a finite number", hint)
    return f


def in_range(v: float, what: str, lo: float | None = None, hi: float | None = None,
             lo_open: bool = False, hint: str | None = None) -> float:
    """`v` checked finite and lo <= v <= hi (lo < v with lo_open)."""
    f = finite(v, what, hint)
    if lo is not None and not (f > lo if lo_open else f >= lo):
        raise DbtierError(f"{what}: {v!r} must be {'>' if lo_open else '>='} {lo:g}", hint)
    if hi is not None and not (f <= hi):
        raise DbtierError(f"{what}: {v!r} must be <= {hi:g}", hint)
    return f


def int64(v: int, what: str, hint: str | None = None) -> int:
    """An integer that fits a signed 64-bit column (what DuckDB, numpy and fio hold)."""
    if not (-INT64_MAX - 1 <= v <= INT64_MAX):
        raise DbtierError(f"{what}: {v} does not fit in 64 bits", hint)
    return v
