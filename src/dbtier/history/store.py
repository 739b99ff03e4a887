"""The history run's files: Parquet series beside result.json, and the DuckDB connection that writes them.

A history run directory holds, besides `result.json`:

- `intervals.parquet`: one row per database, file type and interval (rates, see series.py), written
  when some database has more than one file type (otherwise it would repeat totals.parquet);
- `totals.parquet`: one row per database and interval (the file types added up);
- `profiles.parquet`: hour-of-day, day-of-week and day-of-week x hour means and maxima per database;
- `hourly.parquet` (dma only): per instance, hour of day and statistic;
- `grid.parquet`, `sum.parquet` (consolidate): databases on the common grid (the drivers of the
  combined peak, or all with --full-grid), and the sum of all.

All times are UTC (TIMESTAMP without zone, microseconds). DuckDB does the work in bounded
memory: a memory limit, a spill directory, and no Python loop over rows.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import duckdb

from dbtier.core.errors import DbtierError, expect
from dbtier.core.files import duck_path, full_error, is_full, is_regular, regular_file, sql_str
from dbtier.core.workdir import workdir  # noqa: F401 (the history commands call it store.workdir)

INTERVALS_FILE = "intervals.parquet"
TOTALS_FILE = "totals.parquet"
PROFILES_FILE = "profiles.parquet"
HOURLY_FILE = "hourly.parquet"
GRID_FILE = "grid.parquet"
SUM_FILE = "sum.parquet"
# inputs up to this size in all are copied into the run's raw/; larger ones are only named
RAW_COPY_MAX_BYTES = 50_000_000


MIN_MEMORY_MB = 256
_GIVEN_MB: ContextVar[int | None] = ContextVar("dbtier_history_memory_mb", default=None)


@contextlib.contextmanager
def memory_cap(mb: int | None) -> Iterator[None]:
    """Within: `mb` (a command's --memory; None: the default's) is memory_cap_mb(), for every batch,
    connection and quantile batch the command's calls make, however deep."""
    if mb is not None and mb < MIN_MEMORY_MB:
        raise DbtierError(f"--memory {mb}: at least {MIN_MEMORY_MB} MB", "e.g. --memory 1024")
    token = _GIVEN_MB.set(mb)
    try:
        yield
    finally:
        _GIVEN_MB.reset(token)


def memory_cap_mb() -> int:
    """What a history command may hold in all (DuckDB, Python, the batch in hand): its `--memory` (given to
    memory_cap), else DBTIER_MEMORY_MB, else a quarter of the machine's memory between 768 MB and 3 GiB. A
    fleet's size changes the number of batches, never this."""
    given = _GIVEN_MB.get()
    if given is not None:
        return given
    env = os.environ.get("DBTIER_MEMORY_MB", "")
    if env.isdigit() and int(env) >= MIN_MEMORY_MB:
        return int(env)
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // (1024 * 1024)
    except (ValueError, OSError, AttributeError):
        total = 4096
    return int(min(3072, max(768, total // 4)))


def memory_limit_mb() -> int:
    """DuckDB's share of the cap (its memory_limit; it spills to the temp directory beyond it): two thirds,
    the rest for Python, the allocator's slack and what DuckDB does not count."""
    return max(128, memory_cap_mb() * 2 // 3)


def batch_bytes() -> int:
    """Input bytes an import reads in one batch: a third of DuckDB's share (a CSV's rows take about as
    much memory as its text; 10,000 databases' AWR year in batches of a sixth peaked at 1.0 GB of 3).
    DBTIER_BATCH_BYTES overrides it (tests; tuning)."""
    env = os.environ.get("DBTIER_BATCH_BYTES", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    return max(16 * 1024 * 1024, memory_limit_mb() * 1024 * 1024 // 3)


def connect(spill_dir: str | os.PathLike | None = None, database: str = ":memory:") -> duckdb.DuckDBPyConnection:
    """A DuckDB (in memory unless `database` names a file) with UTC as its time zone, a memory limit and a
    spill directory."""
    con = duckdb.connect(database)
    spill = Path(spill_dir) if spill_dir else Path(tempfile.gettempdir()) / f"dbtier-duckdb-{os.getpid()}"
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f"SET memory_limit = '{memory_limit_mb()}MB'")
    con.execute(f"SET temp_directory = {sql_str(str(spill))}")
    con.execute("SET preserve_insertion_order = false")
    con.execute(f"SET threads = {max(1, os.cpu_count() or 1)}")
    return con


def input_sizes(paths: Sequence[str | os.PathLike[str]]) -> list[int]:
    """Each input's size (what a batch holds, what a working directory must have room for); an unreadable
    one counts 0 (its reader names it)."""
    out = []
    for p in paths:
        try:
            out.append(os.stat(p).st_size)
        except OSError:
            out.append(0)
    return out


def one_row(con: duckdb.DuckDBPyConnection) -> tuple[Any, ...]:
    """The row of the query just run on `con` (`one_row(con.execute(sql))`), for a query that always returns
    one: an aggregate without GROUP BY, or the first of a table known not to be empty. DuckDB's fetchone()
    says None when there is no row; here that is a fault in the query, named as such."""
    return expect(con.fetchone(), "a DuckDB query that always returns a row returned none")


def plan_batches(sizes: Sequence[int], budget: int) -> list[range]:
    """Consecutive runs of files (indexes into `sizes`), each at most `budget` bytes unless one file alone
    is larger. Pure."""
    out, start, acc = [], 0, 0
    for i, n in enumerate(sizes):
        if i > start and acc + n > budget:
            out.append(range(start, i))
            start, acc = i, 0
        acc += n
    if sizes:
        out.append(range(start, len(sizes)))
    return out


@contextlib.contextmanager
def open_db(work: Path, need_bytes: int = 0) -> Iterator[duckdb.DuckDBPyConnection]:
    """A DuckDB spilling into `work`: in memory for inputs of up to half DuckDB's share (a third faster),
    on a database file there for larger ones (the buffer manager keeps at most its limit resident and
    evicts the rest to the file: an in-memory database grew past its limit, 6.3 GB for 3,000 databases'
    AWR import). Closed (and the file removed) on the way out."""
    in_memory = need_bytes <= memory_limit_mb() * 1024 * 1024 // 2
    path = work / f"work-{os.getpid()}-{id(work)}.duckdb"
    con = connect(work / "spill", database=":memory:" if in_memory else str(path))
    try:
        yield con
    finally:
        con.close()
        for p in (path, path.with_name(path.name + ".wal")):
            with contextlib.suppress(OSError):
                p.unlink()


def write_parquet(con: duckdb.DuckDBPyConnection, query: str, path: Path) -> None:
    """COPY (query) TO path, atomically (temp file + rename)."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        con.execute(f"COPY ({query}) TO {sql_str(os.path.abspath(tmp))} (FORMAT parquet, COMPRESSION snappy)")
        os.replace(tmp, path)
    except OSError as exc:
        if is_full(exc):
            raise full_error(path.parent, None, f"the series {path.name}") from None
        raise DbtierError(f"cannot write {path}: {exc.strerror or exc}", "choose another run directory with --out") \
            from exc


def series_files(run_dir: str | os.PathLike, name: str) -> list[Path]:
    """One of a run's series: NAME (one file), or its parts NAME-without-.parquet/part-*.parquet (a fleet
    imported in batches: each part holds whole databases). [] when neither is there."""
    path = Path(run_dir) / name
    if os.path.lexists(path):
        return [path]
    return sorted((Path(run_dir) / name.removesuffix(".parquet")).glob("part-*.parquet"))


def read_sql(paths: Sequence[Path]) -> str:
    """read_parquet over literal paths (a run directory named r[1] is not a glob)."""
    return "read_parquet([" + ", ".join(sql_str(duck_path(p)) for p in paths) + "])"


@contextlib.contextmanager
def reading(run_dir: str | os.PathLike, what: str = "series",
            next_step: str = "re-run the `dbtier history` command that wrote it") -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to read a run's series with: a failure DuckDB meets there is one clear error naming the run."""
    con = connect()
    try:
        yield con
    except duckdb.Error as exc:
        why = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise DbtierError(f"{run_dir}: its {what} cannot be read: {why[:200]}", next_step) from None
    finally:
        con.close()


def parquet(run_dir: str | os.PathLike, name: str, what: str = "history run") -> str:
    """The SQL text that reads one of a run's series (its file or its parts); a clear error when missing."""
    paths = series_files(run_dir, name)
    if not paths:
        raise DbtierError(f"{run_dir}: no {name} in this {what}",
                          "pass a run directory written by `dbtier history import` (or re-run it: the file was removed)")
    return read_sql(paths)


def check_parquet(con: duckdb.DuckDBPyConnection, run_dir: str | os.PathLike, name: str,
                  columns: Sequence[str], what: str = "history run") -> None:
    """One of a run's Parquet files, checked before it is read: a regular file, Parquet (not truncated,
    not foreign), with the columns the reader needs. Each failure names the file."""
    hint = "re-run the `dbtier history` command that wrote this run directory (its Parquet file is damaged)"
    paths = series_files(run_dir, name)
    if not paths:
        raise DbtierError(f"{run_dir}: no {name} in this {what}",
                          "pass a run directory written by `dbtier history import` (or re-run it: the file was removed)")
    for path in paths:
        _check_one(con, path, columns, what, hint)


def _check_one(con: duckdb.DuckDBPyConnection, path: Path, columns: Sequence[str], what: str, hint: str) -> None:
    regular_file(path, f"{what} file", hint)
    try:
        cols = {r[0] for r in con.execute(f"DESCRIBE SELECT * FROM read_parquet({sql_str(duck_path(path))})").fetchall()}
    except duckdb.Error as exc:
        why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DbtierError(f"{path}: not a readable Parquet file ({why[:200]})", hint) from None
    missing = [c for c in columns if c not in cols]
    if missing:
        raise DbtierError(f"{path}: a Parquet file without the column(s) {', '.join(missing)}; not written by "
                          "`dbtier history`", hint)


def part_path(name: str, k: int) -> str:
    """Where part `k` of the series `name` goes: totals.parquet -> totals/part-00003.parquet."""
    return f"{name.removesuffix('.parquet')}/part-{k:05d}.parquet"


def write_import_files(con: duckdb.DuckDBPyConnection, run_dir: Path, kind: str, databases: Sequence[dict],
                       part: int | None = None) -> list[str]:
    """An import run's series: hourly.parquet (dma), or totals.parquet, profiles.parquet and, when
    some database has several file types, intervals.parquet; from the tables summary.summarise_import
    left. `part`: written as that part of each (part_path) instead. Returns the names written."""
    def dest(name: str) -> Path:
        if part is None:
            return run_dir / name
        path = run_dir / part_path(name, part)
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    if kind == "hourly":
        write_parquet(con, "SELECT * FROM hourly ORDER BY database, hour, statistic", dest(HOURLY_FILE))
        return [HOURLY_FILE]
    # Not sorted (a sort of millions of rows costs more than the write): readers order as they need.
    # intervals.parquet only when it says more than totals.parquet (several file types somewhere).
    files = []
    if any(len(d.get("file_types") or []) > 1 for d in databases):
        write_parquet(con, "SELECT * FROM intervals", dest(INTERVALS_FILE))
        files.append(INTERVALS_FILE)
    write_parquet(con, "SELECT * FROM totals", dest(TOTALS_FILE))
    write_parquet(con, "SELECT * FROM profiles ORDER BY database, kind, key", dest(PROFILES_FILE))
    return files + [TOTALS_FILE, PROFILES_FILE]


def write_consolidation_files(con: duckdb.DuckDBPyConnection, run_dir: Path,
                              grid_databases: Sequence[str] | None = None) -> list[str]:
    """sum.parquet, profiles.parquet, and grid.parquet: the cells of `grid_databases` (the drivers
    of the combined peak, what the report draws), or of every database when None (--full-grid:
    a thousand databases' year is millions of cells, a copy of their totals.parquet on the grid)."""
    where = ""
    if grid_databases is not None:
        where = "WHERE database IN (" + ", ".join(sql_str(d) for d in grid_databases) + ")" if grid_databases \
            else "WHERE false"
    write_parquet(con, f"SELECT * FROM grid {where}", run_dir / GRID_FILE)
    write_parquet(con, "SELECT * FROM sum_series ORDER BY bin", run_dir / SUM_FILE)
    write_parquet(con, "SELECT * FROM sum_profiles ORDER BY kind, key", run_dir / PROFILES_FILE)
    return [GRID_FILE, SUM_FILE, PROFILES_FILE]


def copy_inputs(files: Sequence[str], raw_path: Callable[[str], Path]) -> str | None:
    """Keep small inputs beside the document (raw/, `raw_path(name)` the destination); None, or the note
    saying why they are not copied (over RAW_COPY_MAX_BYTES in all: named in params.files instead).

    Only regular files (a DMA collection directory is named in params.files, not copied); two inputs of
    the same name from different directories are both kept (the second as NAME.2, ...)."""
    sizes = {}
    for f in files:
        if not is_regular(f):
            continue
        try:
            sizes[f] = Path(f).stat().st_size
        except OSError:
            continue
    if sum(sizes.values()) > RAW_COPY_MAX_BYTES:
        return "inputs over 50 MB in all are not copied into raw/; params.files names them"
    used: set[str] = set()
    copied: list[Path] = []
    try:
        for f in sizes:
            name, k = Path(f).name, 1
            while name in used:
                k += 1
                name = f"{Path(f).name}.{k}"
            used.add(name)
            dest = raw_path(name)
            copied.append(dest)
            shutil.copyfile(f, dest)
    except OSError as exc:
        if not is_full(exc):
            raise
        for c in copied:            # the copies filled it: they go, the run's own files stay
            try:
                c.unlink()
            except OSError:
                pass
        raise full_error(copied[-1].parent, sum(sizes.values()),
                         "copies of the inputs into raw/ (removed again)") from None
    return None
