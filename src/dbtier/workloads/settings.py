"""The engines' own settings as options of a bench kind, without argparse (pure).

- `Option`: one option an engine declares for a bench kind (its flag, default, help, how its text is read);
  cli/settings_options.py registers the declared options with the bench's parser;
- `EngineOptions`: what was given for them, typed: each engine's frozen dataclass adds a field per option
  (named as the option's dest), which the CLI builds from the parsed arguments and the engine reads;
- the value checks in the engines' own syntax: PostgreSQL's memory and time units (shared_buffers,
  max_wal_size, checkpoint_timeout, work_mem), which DuckDB's memory_limit takes too.

A check returns the value as written, so the server gets exactly what the user typed, or raises BadValue
naming the value and the reason; the CLI turns that into argparse's own error (`argument --shared-buffers:
'1x' is not a memory size ...`, exit 2 before anything starts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable


class BadValue(ValueError):
    """An option's value refused: the message names the value and says why."""


@dataclass(frozen=True)
class Option:
    """One of an engine's settings as an option of a bench kind."""
    flag: str                                   # --shared-buffers
    default: Any = None
    help: str | None = None
    parse: Callable[[str], Any] | None = None   # text -> value; BadValue (or ValueError) when it is refused
    choices: tuple[Any, ...] | None = None
    metavar: str | None = None
    group: str | None = None                    # the title of the help section it is listed under (None: the
                                                # command's own options)

    @property
    def dest(self) -> str:
        """The field of the engine's options dataclass it fills (--shared-buffers: shared_buffers)."""
        return self.flag.lstrip("-").replace("-", "_")

    def default_value(self) -> Any:
        """The default as a parsed value: a text default read as a given text is (argparse's rule)."""
        if isinstance(self.default, str) and self.parse is not None:
            return self.parse(self.default)
        return self.default


@dataclass(frozen=True)
class EngineOptions:
    """An engine's own options as given to one bench kind (`kind`): the base of each engine's dataclass,
    whose fields default to what a kind without the option runs with."""
    kind: str


# -- PostgreSQL and DuckDB settings --------------------------------------------------------------------

# PostgreSQL's own units (case-sensitive, as postgresql.conf takes them); DuckDB reads the memory units
# alike. A fractional value is fine in both (PostgreSQL 12 and later).
_PG_MEMORY_KB: dict[str, float | None] = {"": None, "B": 1 / 1024, "kB": 1, "MB": 1024, "GB": 1024**2,
                                         "TB": 1024**3}
_PG_TIME_S = {"": 1.0, "us": 1e-6, "ms": 1e-3, "s": 1.0, "min": 60.0, "h": 3600.0, "d": 86400.0}
_PG_RE = re.compile(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)\s*")


def pg_memory(lo_kb: float, hi_kb: float, plain_kb: float | None = None,
              example: str = "128MB") -> Callable[[str], str]:
    """A PostgreSQL memory setting (128MB, 1GB, 512kB): checked, returned as written. `plain_kb`: what a
    bare number means (shared_buffers: 8 kB pages); None refuses a bare number."""
    def conv(text: str) -> str:
        m = _PG_RE.fullmatch(text)
        if not m or len(m.group(1)) > 20 or m.group(2) not in _PG_MEMORY_KB:
            raise BadValue(f"{text!r} is not a memory size PostgreSQL takes (digits and a unit B, kB, MB, GB or "
                           f"TB, case as written; e.g. {example})")
        per = _PG_MEMORY_KB[m.group(2)] if m.group(2) else plain_kb
        if per is None:
            raise BadValue(f"{text!r} needs a unit (B, kB, MB, GB or TB; e.g. {example})")
        kb = float(m.group(1)) * per
        if not (lo_kb <= kb <= hi_kb):
            raise BadValue(f"{text!r} must be between {_kb(lo_kb)} and {_kb(hi_kb)}")
        return text.strip()
    conv.__name__ = "memory size"      # argparse names the type so in some messages
    return conv


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
            raise BadValue(f"{text!r} is not a time PostgreSQL takes (digits and a unit us, ms, s, min, h or d; "
                           f"e.g. {example})")
        secs = float(m.group(1)) * _PG_TIME_S[m.group(2)]
        if not (lo_s <= secs <= hi_s):
            raise BadValue(f"{text!r} must be between {lo_s:g} s and {hi_s:g} s")
        return text.strip()
    conv.__name__ = "time"
    return conv


# PostgreSQL's shared_buffers: at least 16 pages of 8 kB; at most PostgreSQL's INT_MAX/2 pages; a bare number is pages.
PG_SHARED_BUFFERS = pg_memory(128, (2**30 - 1) * 8.0, plain_kb=8, example="128MB")
