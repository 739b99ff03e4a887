"""CSV exports into DuckDB, with errors that name the file, the line and the column.

The fast path is DuckDB's CSV reader (every value read as text, then cast in SQL, so a million
rows cost no Python loop). Only when something is wrong does Python read the file again, line by
line, to say exactly where: a wrong field count, a value that is not a number or a time.

Accepted: `,` `;` `|` or tab as delimiter (found from the header), a UTF-8 byte-order mark, blank
lines before the header (SQL*Plus prints one), the header repeated further down (collectors that
append a snapshot at a time do that; those lines are skipped), column names in any case.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

import duckdb

from dbtier.core.errors import DbtierError
from dbtier.core.files import duck_path, regular_file, sql_str
from dbtier.history import limits
from dbtier.history import store

DELIMITERS = (",", ";", "|", "\t")
_DELIM_NAMES = {",": "comma", ";": "semicolon", "|": "pipe", "\t": "tab"}


@dataclass(frozen=True)
class Layout:
    path: str
    delim: str
    header: tuple[str, ...]        # names as written
    names: tuple[str, ...]         # lower-case, stripped
    header_line: int               # 1-based line of the header

    def index(self, name: str) -> int:
        return self.names.index(name)


def check_file(path: str | os.PathLike) -> Path:
    """A readable, non-empty, regular text file; refused by name otherwise (a FIFO, /dev/zero, a
    socket or a directory before it is opened: opening a FIFO blocks, /dev/zero never ends), and
    so is a compressed or binary file, or UTF-16 text, from its first bytes."""
    p = regular_file(path, "input file", "pass the export files themselves (regular files)")
    try:
        size = p.stat().st_size
        with open(p, "rb") as f:
            head = f.read(65536)
    except OSError as exc:
        raise DbtierError(f"{p}: cannot read it ({exc.strerror})", "check its permissions") from exc
    if size == 0:
        raise DbtierError(f"{p} is empty", "export it again; the collector may have been stopped before it wrote")
    kind = binary_kind(head)
    if kind:
        raise DbtierError(f"{p}: {kind}, not the plain text the collectors write", _BINARY_HINTS.get(kind, ""))
    return p


# First bytes of what is not plain UTF-8 text (the readers read text only; DMA archives are dma.py's).
_MAGIC = ((b"\x1f\x8b", "gzip-compressed"), (b"\xfd7zXZ\x00", "xz-compressed"), (b"\x28\xb5\x2f\xfd", "zstd-compressed"),
          (b"BZh", "bzip2-compressed"), (b"PK\x03\x04", "a zip archive"), (b"\xff\xfe\x00\x00", "UTF-32 text"),
          (b"\x00\x00\xfe\xff", "UTF-32 text"), (b"\xff\xfe", "UTF-16 text"), (b"\xfe\xff", "UTF-16 text"))
_BINARY_HINTS = {"gzip-compressed": "decompress it first (gunzip -k FILE)", "xz-compressed": "decompress it first (xz -dk FILE)",
                 "zstd-compressed": "decompress it first (zstd -d FILE)", "bzip2-compressed": "decompress it first (bunzip2 -k FILE)",
                 "a zip archive": "extract it first (unzip FILE)",
                 "UTF-16 text": "convert it to UTF-8 (iconv -f UTF-16 -t UTF-8 FILE > FILE.utf8)",
                 "UTF-32 text": "convert it to UTF-8 (iconv -f UTF-32 -t UTF-8 FILE > FILE.utf8)",
                 "binary data (NUL bytes)": "pass the collector's text output"}


def binary_kind(head: bytes) -> str | None:
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    if b"\x00" in head:
        return "binary data (NUL bytes)"
    return None


def first_non_utf8(path: str | os.PathLike) -> tuple[int, int, int] | None:
    """(line, column, byte) of the first byte that is not UTF-8, or None."""
    with open(path, "rb") as f:
        for lineno, raw in enumerate(bounded(f, path), 1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                return lineno, exc.start + 1, raw[exc.start]
    return None


def not_utf8_error(path: str | os.PathLike, where: tuple[int, int, int]) -> DbtierError:
    line, col, byte = where
    return DbtierError(f"{path}: line {line}: column {col}: byte 0x{byte:02X} is not UTF-8 text",
                       "convert the file to UTF-8 (e.g. iconv -f LATIN1 -t UTF-8 FILE > FILE.utf8)")


def file_label_sql(paths: Sequence[str]) -> str:
    """SQL mapping DuckDB's `filename` (absolute) back to the paths as the user gave them."""
    diff = [(os.path.abspath(p), p) for p in dict.fromkeys(paths) if os.path.abspath(p) != p]
    if not diff:
        return "filename"
    return "(CASE filename " + " ".join(f"WHEN {sql_str(a)} THEN {sql_str(p)}" for a, p in diff) + " ELSE filename END)"


def head_lines(path: str | os.PathLike, n: int = 40) -> list[str]:
    """The first `n` lines as text (UTF-8, BOM dropped, undecodable bytes replaced)."""
    out: list[str] = []
    with open(path, "r", encoding="utf-8-sig", errors="replace", newline="") as f:
        while len(out) < n:
            line = f.readline(1048576)      # bounded: a file of one endless line is not read whole
            if not line:
                break
            out.append(line.rstrip("\r\n"))
    return out


def _split(line: str, delim: str) -> list[str]:
    try:
        return next(csv.reader([line], delimiter=delim, quotechar='"'))
    except (csv.Error, StopIteration):
        return line.split(delim)


def norm(name: str) -> str:
    return name.strip().strip('"').strip().lower()


def sniff(path: str | os.PathLike, required: Iterable[str],
          lines: Sequence[str] | None = None) -> Layout | tuple[int, str, list[str]]:
    """The layout if a delimiter makes the header hold every required column; else
    (best number of required columns found, the delimiter of that guess, the missing ones).
    `lines`: the file's head_lines when the caller has them (a reader that tries several layouts)."""
    req = [r.lower() for r in required]
    lines = head_lines(path) if lines is None else lines
    first = next((i for i, l in enumerate(lines) if l.strip()), None)
    if first is None:
        raise DbtierError(f"{path} is empty (only blank lines)", "export it again")
    line = lines[first]
    best: tuple[int, str, list[str]] = (-1, ",", req)
    for d in DELIMITERS:
        fields = _split(line, d)
        names = tuple(norm(f) for f in fields)
        missing = [r for r in req if r not in names]
        if not missing:
            return Layout(str(path), d, tuple(fields), names, first + 1)
        found = len(req) - len(missing)
        if found > best[0] or (found == best[0] and len(fields) > 1 and d == ","):
            best = (found, d, missing)
    return best


def header_error(path: str, line: int, source: str, missing: list[str], delim: str, other: str | None) -> DbtierError:
    if other:
        return DbtierError(f"{path}: line {line}: this looks like a {other} file, not {source}",
                           f"import it with --source {other.split()[0]}")
    names = ", ".join(missing)
    return DbtierError(f"{path}: line {line}: missing columns: {names} (the {source} reader needs them; "
                       f"looked for {_DELIM_NAMES.get(delim, repr(delim))}-separated names)",
                       "export with the collector in collectors/ (docs/commands/history.md), or fix the header")


def load(con: duckdb.DuckDBPyConnection, table: str, layouts: Sequence[Layout], columns: Sequence[str],
         numeric: Iterable[str] = (), required: Iterable[str] = (), times: Iterable[str] = ()) -> None:
    """Read the files (same kind, maybe different layouts) into `table`: `columns` (NULL when a file
    lacks an optional one), `numeric` ones as DOUBLE, the rest as VARCHAR, plus `_file` (an ENUM of
    the paths: a small code a row, not the path again on each of millions of rows).

    Fast path: DuckDB parses the numbers itself, and the `times` too when every file prints them
    in plain ISO 8601 without an offset (then they are TIMESTAMP columns: see typed_times; text
    with offsets or in Oracle's formats stays VARCHAR for times.utc_sql). If
    DuckDB refuses anything (a repeated header, a bad value, a short line), the slow path reads
    text, names the first bad line and column, and only when nothing is wrong converts the text.
    Then every `required` numeric column must be a finite number >= 0 on every row, and optional
    ones when present (see check_numbers)."""
    for lay in layouts:
        for c in columns:
            if lay.names.count(c) > 1:
                cols = [str(i + 1) for i, n in enumerate(lay.names) if n == c]
                raise DbtierError(f"{lay.path}: line {lay.header_line}: the header names column {c} twice "
                                  f"(columns {' and '.join(cols)}); dbtier cannot tell which holds it",
                                  "export it again (or rename the column that is not it)")
    numeric = [c for c in columns if c in set(numeric)]
    times = [c for c in columns if c in set(times)]
    attempts = ([times] if times and _plain_times(layouts, times) else []) + [[]]
    for i, as_time in enumerate(attempts):
        try:
            _create(con, table, layouts, columns, numeric, typed=True, times=as_time)
            break
        except duckdb.Error:
            if i + 1 < len(attempts):
                continue
            _load_text(con, table, layouts, columns, numeric, required)
    check_numbers(con, table, layouts, [c for c in numeric if c in set(required)],
                  [c for c in numeric if c not in set(required)])


def _load_text(con: duckdb.DuckDBPyConnection, table: str, layouts: Sequence[Layout], columns: Sequence[str],
               numeric: Sequence[str], required: Iterable[str]) -> None:
    """The slow path: every value as text; the first bad line named; then the numbers converted."""
    try:
        _create(con, table, layouts, columns, numeric, typed=False)
    except duckdb.Error as exc:
        _diagnose_structure(layouts, exc)
    for lay in layouts:
        problem = first_bad_row(lay) or first_bad_value(lay, numeric, set(required))
        if problem:
            raise DbtierError(problem, "fix or remove that line (or export the file again)")
    sel = ", ".join(f'TRY_CAST(trim("{c}") AS DOUBLE) AS "{c}"' if c in numeric else f'"{c}"' for c in columns)
    con.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT {sel}, _file FROM {table}")


# Plain ISO times, which DuckDB's CSV reader parses itself. It would drop a UTC offset without a
# word, so a file's times are typed only when its first and last rows print them without one (an
# export prints all its times one way); otherwise they stay text for times.utc_sql.
_PLAIN_TIME = re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d{1,6})?")


def _plain_times(layouts: Sequence[Layout], times: Sequence[str]) -> bool:
    for lay in layouts:
        first = next((r for _, r in rows(lay)), None)
        if first is None:
            return False
        for row in (first, _last_row(lay)):
            for c in times:
                if c in lay.names:
                    i = lay.index(c)
                    if i >= len(row) or not _PLAIN_TIME.fullmatch(row[i].strip()):
                        return False
    return True


def _last_row(lay: Layout) -> list[str]:
    """The file's last non-blank line, split (read from the end: files run to gigabytes)."""
    with open(lay.path, "rb") as f:
        f.seek(0, os.SEEK_END)
        f.seek(max(0, f.tell() - 65536))
        lines = [l for l in f.read().decode("utf-8", "replace").splitlines() if l.strip()]
    return _split(lines[-1], lay.delim) if lines else []


def typed_times(con: duckdb.DuckDBPyConnection, table: str) -> set[str]:
    """The columns of `table` that load() read as TIMESTAMP."""
    return {d[0] for d in con.execute(f"SELECT * FROM {table} LIMIT 0").description if str(d[1]) == "TIMESTAMP"}


def _create(con: duckdb.DuckDBPyConnection, table: str, layouts: Sequence[Layout], columns: Sequence[str],
            numeric: Sequence[str], typed: bool, times: Sequence[str] = ()) -> None:
    groups: dict[tuple[str, tuple[str, ...], int], list[Layout]] = {}
    for lay in layouts:
        groups.setdefault((lay.delim, lay.header, lay.header_line), []).append(lay)
    def type_of(c: str) -> str:
        if typed and c in numeric:
            return "DOUBLE"
        return "TIMESTAMP" if typed and c in times else "VARCHAR"

    parts = []
    file_enum = "ENUM(" + ", ".join(sql_str(p) for p in dict.fromkeys(l.path for l in layouts)) + ")"
    label = file_label_sql([l.path for l in layouts])
    for (delim, header, skip), lays in groups.items():
        names = [norm(h) for h in header]
        seen: dict[str, int] = {}
        uniq = []
        for n in names:          # DuckDB needs unique names: number the repeats (the first one is used)
            k = seen.get(n, 0)
            seen[n] = k + 1
            uniq.append(n if k == 0 else f"{n}__{k}")
        cols = "{" + ", ".join(f"{sql_str(u)}: '{type_of(u)}'" for u in uniq) + "}"
        files = "[" + ", ".join(sql_str(duck_path(l.path)) for l in lays) + "]"
        sel = [f'"{c}"' if c in uniq else f'CAST(NULL AS {type_of(c)}) AS "{c}"' for c in columns]
        parts.append(f"SELECT {', '.join(sel)}, CAST({label} AS {file_enum}) AS _file FROM read_csv({files}, "
                     f"auto_detect=false, compression='none', header=false, skip={skip}, delim={sql_str(delim)}, quote='\"', escape='\"', "
                     f"columns={cols}, filename=true, strict_mode=true, null_padding=false, "
                     f"ignore_errors=false, max_line_size=1048576)")
    union = " UNION ALL BY NAME ".join(parts)
    where = ""
    if not typed:   # repeated headers and sqlcmd's dashed line, text only (the typed read fails on them)
        first = next((c for c in columns if c not in numeric), columns[0])
        where = (f"WHERE NOT (lower(trim(coalesce(\"{first}\", ''))) = {sql_str(first)}) "
                 f"AND NOT regexp_matches(coalesce(\"{first}\", ''), '^\\s*-+\\s*$')")
    con.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT * FROM ({union}) {where}")


def first_bad_value(lay: Layout, numeric: Sequence[str], required: set[str]) -> str | None:
    """The first line where a numeric column holds something other than a finite number >= 0
    (empty is allowed in optional columns)."""
    idx = [(c, lay.index(c)) for c in numeric if c in lay.names]
    for line, row in rows(lay):
        for c, i in idx:
            v = row[i].strip() if i < len(row) else ""
            problem = _value_problem(v, c in required)
            if problem:
                return f"{lay.path}: line {line}: column {lay.header[i].strip()}: {problem}"
    return None


def _value_problem(v: str, required: bool) -> str | None:
    if v == "":
        return "empty; a number is needed" if required else None
    try:
        if not v.isascii():     # Python reads '８' or '١٢' as digits; DuckDB (rightly) does not
            raise ValueError(v)
        x = float(v)
    except ValueError:
        return f"{v!r} is not a number"
    if not (x >= 0 and x != float("inf")):
        return f"{v} is negative or not finite; a counter cannot be"
    if not (x < limits.COUNTER_MAX):
        return f"{v} is beyond 64 bits; no counter of this source reaches it"
    return None


def _diagnose_structure(layouts: Sequence[Layout], exc: Exception) -> None:
    """DuckDB refused a file: find the first bad line ourselves, or pass its first message on."""
    for lay in layouts:
        bad = first_non_utf8(lay.path)
        if bad:
            raise not_utf8_error(lay.path, bad)
    for lay in layouts:
        problem = first_bad_row(lay)
        if problem:
            raise DbtierError(problem, "fix or remove that line (or export the file again)")
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    names = ", ".join(l.path for l in layouts[:3])
    raise DbtierError(f"{names}: cannot be read as CSV ({msg})", "export the file again with the collector")


def rows(lay: Layout) -> Iterable[tuple[int, list[str]]]:
    """(line number, fields) after the header; blank lines and repeated headers skipped."""
    with open(lay.path, "r", encoding="utf-8-sig", errors="replace", newline="") as f:
        reader = csv.reader(bounded(f, lay.path), delimiter=lay.delim, quotechar='"')
        try:
            for row in reader:
                line = reader.line_num
                if line <= lay.header_line:
                    continue
                if not row or (len(row) == 1 and not row[0].strip()):
                    continue
                if len(row) == len(lay.names) and tuple(norm(x) for x in row) == lay.names:
                    continue
                if row and row[0].strip() and set(row[0].strip()) == {"-"}:   # sqlcmd's line under the header
                    continue
                yield line, row
        except csv.Error as exc:
            raise DbtierError(f"{lay.path}: line {reader.line_num}: not valid CSV ({exc})",
                              "fix or remove that line") from exc


def first_bad_row(lay: Layout) -> str | None:
    n = len(lay.names)
    for line, row in rows(lay):
        if len(row) != n:
            hint = ""
            for d in DELIMITERS:
                if d != lay.delim and len(_split(",".join(row) if lay.delim == "," else lay.delim.join(row), d)) == n:
                    hint = f" (is it {_DELIM_NAMES[d]}-separated? the header is {_DELIM_NAMES.get(lay.delim)}-separated)"
                    break
            return f"{lay.path}: line {line}: {len(row)} fields where the header has {n}{hint}"
        if any("\x00" in x for x in row):
            return f"{lay.path}: line {line}: a NUL byte in the data"
    return None


def locate(lay: Layout, column: str, value: str | None) -> int | None:
    """The line where `column` holds `value` (None: is empty)."""
    if column not in lay.names:
        return None
    i = lay.index(column)
    for line, row in rows(lay):
        if i >= len(row):
            continue
        v = row[i].strip()
        if (value is None and v == "") or (value is not None and v == value.strip()):
            return line
    return None


def check_numbers(con: duckdb.DuckDBPyConnection, table: str, layouts: Sequence[Layout], required: Sequence[str],
                  optional: Sequence[str] = ()) -> None:
    """Numeric (DOUBLE) columns: required ones never NULL; all finite and >= 0. One aggregate pass;
    on a failure, the file's first bad line and column, found by reading it again."""
    cols = list(required) + list(optional)
    if not cols:
        return
    conds = []
    for c in cols:
        bad = f'("{c}" < 0 OR NOT isfinite("{c}") OR "{c}" >= {limits.COUNTER_MAX!r})'
        conds.append(f'("{c}" IS NULL OR {bad})' if c in required else bad)
    row = con.execute(f"SELECT _file FROM {table} WHERE {' OR '.join(conds)} LIMIT 1").fetchone()
    if row is None:
        return
    lay = next((l for l in layouts if l.path == row[0]), None)
    if lay is not None:
        numeric = [c for c in cols]
        problem = first_bad_value(lay, numeric, set(required))
        if problem:
            raise DbtierError(problem, "export it again, or fix or remove that line")
    raise DbtierError(f"{row[0]}: a value in the columns {', '.join(cols)} is empty, negative, not finite or "
                      "beyond 64 bits",
                      "export it again")


def check_times(con: duckdb.DuckDBPyConnection, table: str, layouts: Sequence[Layout], raw_col: str,
                parsed_sql: str) -> None:
    """Every `raw_col` parses with `parsed_sql`; else the file and line of the first that does not."""
    by_path = {l.path: l for l in layouts}
    bad = con.execute(f'SELECT _file, "{raw_col}" FROM {table} WHERE ({parsed_sql}) IS NULL LIMIT 1').fetchone()
    if bad is None:
        return
    path, raw = bad
    lay = by_path.get(path)
    line = locate(lay, raw_col, raw) if lay else None
    col = lay.header[lay.index(raw_col)].strip() if lay and raw_col in lay.names else raw_col
    where_ = f"{path}: line {line}" if line else path
    if raw is None or not str(raw).strip():
        raise DbtierError(f"{where_}: column {col} is empty; a time is needed", "export it again, or remove that line")
    raise DbtierError(f"{where_}: column {col}: {raw!r} is not a time dbtier reads (or not between 1900 and 2261)",
                      "use ISO 8601 (2024-03-01 10:00:00, optionally +01:00) or Oracle's DD-MON-RR HH.MI.SS AM")


def times_after_insert(con: duckdb.DuckDBPyConnection, counters: str, checks: Sequence[tuple]) -> None:
    """Times are parsed once, while inserting; only when some came out NULL is each raw table
    checked again (`checks`: check_times arguments) to name the file and line."""
    if store.one_row(con.execute(f"SELECT count(*) FROM {counters} WHERE sample_time IS NULL"))[0] == 0:
        return
    for args in checks:
        check_times(con, *args)
    raise DbtierError("some sample times could not be read", "use ISO 8601 times (2024-03-01 10:00:00+01:00)")


MAX_LINE = 1048576      # characters (DuckDB's max_line_size here): no export line is near it


def bounded(f, path: str | os.PathLike, limit: int = MAX_LINE):
    """The lines of `f`, each read with a bound: a file of one endless line is refused at that
    line, never read whole into memory."""
    n = 0
    while True:
        line = f.readline(limit + 1)
        if not line:
            return
        n += 1
        if len(line) > limit:
            raise DbtierError(f"{path}: line {n}: longer than {limit:,} characters; not an export's line",
                              "pass the collector's output as it wrote it")
        yield line


def text_io(path: str | os.PathLike) -> io.TextIOWrapper:
    return open(path, "r", encoding="utf-8-sig", errors="replace", newline="")


JSON_MAX_BYTES = 256 * 2**20     # a monitoring answer larger than this is a time range to split, not one file


def load_json(path: str, whole: str) -> tuple[Any, str]:
    """A monitoring system's saved JSON answer and its text (for line numbers); `whole` names what to save
    again when it is not JSON (e.g. "the az CLI's -o json answer")."""
    size = os.path.getsize(path)
    if size > JSON_MAX_BYTES:
        raise DbtierError(f"{path}: {size / 2**20:,.0f} MiB of JSON", "split the time range into several files")
    text = Path(path).read_text(encoding="utf-8-sig", errors="replace")
    try:
        return json.loads(text), text
    except json.JSONDecodeError as exc:
        raise DbtierError(f"{path}: line {exc.lineno}: not valid JSON ({exc.msg})", f"save {whole} whole") from None
