"""The --columns maps: which column of a CSV holds what. Block traces (`Columns`: time, op, offset,
length, volume, their units and op tokens) and object traces (`ObjectColumns`: id, size, time, op) share
one syntax, one parser and its messages; a column is a 1-based number or a header name."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ClassVar

from dbtier.core.errors import DbtierError
from dbtier.sim.names import COLUMNS_HELP, OBJECT_COLUMNS_HELP
from dbtier.sim.trace.limits import FILETIME_S, MAX_COLUMN, MAX_REQUEST_BYTES, SECTOR


@dataclass
class Columns:
    """A --columns map for the generic CSV reader."""
    KEYS: ClassVar[tuple[str, ...]] = ("time", "op", "offset", "length", "volume")    # the keys naming a column
    time: str | None = None
    op: str = ""
    offset: str = ""
    length: str = ""
    volume: str | None = None
    time_scale: float = 1.0       # seconds per unit
    offset_scale: int = 1         # bytes per unit
    length_scale: int = 1
    read_tokens: frozenset[str] = frozenset({"r", "read", "rd"})
    write_tokens: frozenset[str] = frozenset({"w", "write", "wr"})
    delimiter: str | None = ","
    header: str = "auto"          # auto | yes | no


@dataclass
class ObjectColumns:
    """A --columns map for an object CSV (objects.py): the same syntax, other keys."""
    KEYS: ClassVar[tuple[str, ...]] = ("id", "size", "time", "op")
    id: str = ""
    size: str | None = None       # bytes; none: every object one unit (libCacheSim's CSV reader without a size)
    time: str | None = None
    op: str | None = None         # counted by value in the document; every request counts whatever its op
    time_scale: float = 1.0
    delimiter: str = ","
    header: str = "auto"


_TIME_UNITS = {"s": 1.0, "sec": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "filetime": FILETIME_S}
_DELIMS = {"comma": ",", ",": ",", "tab": "\t", "space": None, "semicolon": ";", "pipe": "|"}
_BLOCK_ONLY = ("offset", "length", "volume", "offset_unit", "length_unit", "read", "write")


def _colnum(ref: str) -> int | None:
    """A --columns reference as a column number (ASCII digits, optional sign), or None for a header name."""
    return int(ref) if re.fullmatch(r"[+-]?[0-9]+", ref) else None


def _spec_shown(spec: str) -> str:
    return repr(spec if len(spec) <= 120 else spec[:117] + "...")


def parse_columns(spec: str) -> Columns:
    """`time=1,op=Type,offset=5,length=6,time_unit=us,...` -> Columns (DbtierError on anything unclear).

    Every error names the spec: an unknown or repeated key, a missing op/offset/length, two fields on one
    column, a column number outside 1..MAX_COLUMN, an unknown unit, delimiter or header value, no tokens."""
    c = Columns()

    def block_key(key: str, value: str, bad: Callable[[str], DbtierError]) -> bool:
        if key in ("offset_unit", "length_unit"):
            v = value.lower()
            scale = {"bytes": 1, "byte": 1, "b": 1, "sectors": SECTOR, "sector": SECTOR, "kib": 1024}.get(v)
            if scale is None:
                if not re.fullmatch(r"[0-9]{1,10}", v) or not (1 <= int(v) <= MAX_REQUEST_BYTES):
                    raise bad(f"{key} '{value}' is not bytes, sectors, kib or a number of bytes from 1 to "
                              f"{MAX_REQUEST_BYTES}")
                scale = int(v)
            setattr(c, key.replace("_unit", "_scale"), scale)
        elif key in ("read", "write"):
            tokens = frozenset(t.strip().lower() for t in value.split("|") if t.strip())
            if not tokens:
                raise bad(f"{key}='{value}' names no token")
            setattr(c, f"{key}_tokens", tokens)
        else:
            return False
        return True

    bad = _parse_map(spec, c, ("op", "offset", "length"), {"size": "length"}, block_key, COLUMNS_HELP)
    if c.read_tokens & c.write_tokens:
        raise bad("the same token means read and write: " + ", ".join(sorted(c.read_tokens & c.write_tokens)))
    return c


def parse_object_columns(spec: str) -> ObjectColumns:
    """`id=key,size=bytes[,time=ts][,op=op][,time_unit=...][,delimiter=...][,header=...]` -> ObjectColumns,
    with parse_columns' syntax and messages; a block trace's key (offset, length, ...) is named as one."""
    c = ObjectColumns()

    def block_key(key: str, value: str, bad: Callable[[str], DbtierError]) -> bool:
        if key in _BLOCK_ONLY:
            raise bad(f"{key} maps a block trace; an object CSV maps id, size, time and op")
        return False

    _parse_map(spec, c, ("id",), {}, block_key, OBJECT_COLUMNS_HELP)
    c.delimiter = c.delimiter or " "     # pyarrow splits on one character: 'space' is one space here
    return c


def _parse_map(spec: str, c: Any, required: tuple[str, ...], aliases: dict[str, str],
               other: Callable[[str, str, Callable[[str], DbtierError]], bool],
               help_text: str) -> Callable[[str], DbtierError]:
    """Fill `c` (Columns or ObjectColumns) from `spec`: its column keys (c.KEYS), time_unit, delimiter and
    header here, the rest by `other` (True: taken). Returns the spec's error maker for later checks."""
    seen: set[str] = set()
    where = f"--columns {_spec_shown(spec)}"

    def bad(what: str) -> DbtierError:
        return DbtierError(f"{where}: {what}", help_text)

    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        key, eq, value = part.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not eq or not value:
            raise bad(f"'{part}' is not KEY=VALUE")
        key = aliases.get(key, key)
        if key in seen:
            alias = next((a for a, k in aliases.items() if k == key), None)
            raise bad(f"{key} is given twice" + (f" ({alias} is another name for {key})" if alias else ""))
        seen.add(key)
        if key in c.KEYS:
            n = _colnum(value)
            if n is not None and not (1 <= n <= MAX_COLUMN):
                raise bad(f"{key}={value}: columns are numbered from 1 to {MAX_COLUMN}")
            setattr(c, key, str(n) if n is not None else value)
        elif key == "time_unit":
            if value.lower() not in _TIME_UNITS:
                raise bad(f"unknown time_unit '{value}' (s, ms, us, ns, filetime)")
            c.time_scale = _TIME_UNITS[value.lower()]
        elif key == "delimiter":
            if value.lower() not in _DELIMS:
                raise bad(f"unknown delimiter '{value}' (comma, tab, space, semicolon, pipe)")
            c.delimiter = _DELIMS[value.lower()]
        elif key == "header":
            if value.lower() not in ("auto", "yes", "no"):
                raise bad(f"header must be auto, yes or no, not '{value}'")
            c.header = value.lower()
        elif not other(key, value, bad):
            raise bad(f"unknown key '{key}'")
    missing = [k for k in required if k not in seen]
    if missing:
        raise bad(f"missing {', '.join(missing)} (which column holds it?)")
    refs: dict[str, str] = {}
    for k in c.KEYS:
        ref = getattr(c, k)
        if ref is None:
            continue
        other_key = refs.get(ref.lower())
        if other_key is not None:
            raise bad(f"{other_key} and {k} both name column '{ref}'")
        refs[ref.lower()] = k
    return bad


def header_first(cols: Columns | ObjectColumns, fields: list[str]) -> bool:
    """Whether the first line (split into `fields`) is a header: header=yes; or header=auto and a column is
    referred to by name or no field of the line is a number."""
    by_name = any(_colnum(ref) is None for ref in (getattr(cols, k) for k in cols.KEYS) if ref is not None)
    return cols.header == "yes" or (cols.header == "auto" and (by_name or not any(
        x.strip().replace(".", "", 1).isdigit() for x in fields)))


def csv_index(cols: Columns | ObjectColumns, header_fields: list[str] | None, path: Path,
              help_text: str = COLUMNS_HELP) -> dict[str, int]:
    """Each mapped key's 0-based column, from its number or its name in `header_fields`; a name the header
    does not have is a DbtierError listing the header."""
    index: dict[str, int] = {}
    names = [h.strip().lower() for h in header_fields] if header_fields else None
    for key in cols.KEYS:
        ref = getattr(cols, key)
        if ref is None:
            continue
        n = _colnum(ref)
        if n is not None:
            if not (1 <= n <= MAX_COLUMN):
                raise DbtierError(f"--columns: {key}={ref}: columns are numbered from 1 to {MAX_COLUMN}",
                                  help_text)
            index[key] = n - 1
        elif names is not None and ref.lower() in names:
            index[key] = names.index(ref.lower())
        else:
            have = f"the header has: {', '.join(h.strip() for h in header_fields)}" if header_fields else \
                "the file has no header line, so use column numbers (1 = first)"
            raise DbtierError(f"{path}: --columns {key}={ref}: no such column; {have}", help_text)
    return index
