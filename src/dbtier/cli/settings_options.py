"""argparse types for the engines' settings, in their own syntax: PostgreSQL's memory and time units
(shared_buffers, max_wal_size, checkpoint_timeout, work_mem), which DuckDB's memory_limit takes too.

Checked like every option of cli/options.py (the value named, the reason said, exit 2 before anything
starts) and returned as written, so the server gets exactly what the user typed.
"""

from __future__ import annotations

import argparse
import re
from typing import Callable

from dbtier.cli.options import named

# -- PostgreSQL and DuckDB settings --------------------------------------------------------------------

# PostgreSQL's own units (case-sensitive, as postgresql.conf takes them); DuckDB reads the memory units
# alike. A fractional value is fine in both (PostgreSQL 12 and later).
_PG_MEMORY_KB = {"": None, "B": 1 / 1024, "kB": 1, "MB": 1024, "GB": 1024**2, "TB": 1024**3}
_PG_TIME_S = {"": 1.0, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0, "d": 86400.0}
_PG_RE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*")


def pg_memory(lo_kb: float, hi_kb: float, plain_kb: float | None = None,
              example: str = "128MB") -> Callable[[str], str]:
    """A PostgreSQL memory setting (128MB, 1GB, 512kB): checked, returned as written. `plain_kb`: what a
    bare number means (shared_buffers: 8 kB pages); None refuses a bare number."""
    def conv(text: str) -> str:
        m = _PG_RE.fullmatch(text)
        if not m or len(m.group(1)) > 20 or m.group(2) not in _PG_MEMORY_KB:
            raise argparse.ArgumentTypeError(f"{text!r} is not a memory size PostgreSQL takes (digits and a unit "
                                             f"B, kB, MB, GB or TB, case as written; e.g. {example})")
        per = _PG_MEMORY_KB[m.group(2)] if m.group(2) else plain_kb
        if per is None:
            raise argparse.ArgumentTypeError(f"{text!r} needs a unit (B, kB, MB, GB or TB; e.g. {example})")
        kb = float(m.group(1)) * per
        if not (lo_kb <= kb <= hi_kb):
            raise argparse.ArgumentTypeError(f"{text!r} must be between {_kb(lo_kb)} and {_kb(hi_kb)}")
        return text.strip()
    return named("memory size", conv)


def pg_memory_bytes(text: str, plain_kb: float | None = None) -> int:
    """Bytes of a PostgreSQL memory setting `pg_memory` accepted ('128MB' -> 134217728; a bare number is
    `plain_kb` kB each)."""
    m = _PG_RE.fullmatch(text)
    if not m:
        raise ValueError(f"{text!r} is not a PostgreSQL memory size")
    per = _PG_MEMORY_KB[m.group(2)] if m.group(2) else plain_kb
    if per is None:
        raise ValueError(f"{text!r} needs a unit")
    return int(float(m.group(1)) * per * 1024)


def _kb(kb: float) -> str:
    for unit, n in (("TB", 1024**3), ("GB", 1024**2), ("MB", 1024)):
        if kb >= n:
            return f"{kb / n:g}{unit}"
    return f"{kb:g}kB"


def pg_time(lo_s: float, hi_s: float, example: str = "5min") -> Callable[[str], str]:
    """A PostgreSQL time setting (30s, 5min, 1h): checked, returned as written."""
    def conv(text: str) -> str:
        m = _PG_RE.fullmatch(text)
        if not m or len(m.group(1)) > 20 or m.group(2) not in _PG_TIME_S:
            raise argparse.ArgumentTypeError(f"{text!r} is not a time PostgreSQL takes (digits and a unit us, ms, "
                                             f"s, min, h or d; e.g. {example})")
        secs = float(m.group(1)) * _PG_TIME_S[m.group(2)]
        if not (lo_s <= secs <= hi_s):
            raise argparse.ArgumentTypeError(f"{text!r} must be between {lo_s:g} s and {hi_s:g} s")
        return text.strip()
    return named("time", conv)



# PostgreSQL's shared_buffers: at least 16 pages of 8 kB; at most PostgreSQL's INT_MAX/2 pages; a bare number is pages.
PG_SHARED_BUFFERS = pg_memory(128, (2**30 - 1) * 8.0, plain_kb=8, example="128MB")
