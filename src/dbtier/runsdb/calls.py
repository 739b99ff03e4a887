"""`dbtier runs` and its verbs as library calls, each a request in and a typed, immutable result out:

    runs_list(ListRequest) -> RunsList      every run under the runs directories, one row each
    runs_sql(SqlRequest) -> RunsSql         one read-only SELECT over the views
    runs_trend(TrendRequest) -> RunsTrend   a figure over time, with each run's spread
    runs_check(CheckRequest) -> RunsCheck   a run against a baseline run or query (exit 0, or 1: a regression)

Each reads the runs directories through their cached indexes (`catalogue`) into an in-memory DuckDB of the
documented views. `reading()` gives the progress callback while a cold index reads its documents (None:
none). `start(params, inputs)` is called once the answer stands (every refusal made) with the run's
parameters and the run directories it read; it gives the directory files go to (None: none; only `runs
trend` writes one, trend.html).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import decimal
import math
import os
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ContextManager, Sequence

import duckdb

from dbtier.core.errors import DbtierError
from dbtier.core.units import UnitError, parse_duration
from dbtier.report.figures import core as F
from dbtier.results import kinds
from dbtier.results.result import Frozen, Result
from dbtier.runsdb import extract, scan, trend as T, views as V
from dbtier.runsdb import check as C

DEFAULT_RUNS_DIR = "runs"       # where every command writes its runs by default (results/store.RunDir)

Progress = scan.Progress
# the progress callback while the indexes are refreshed (None: none), closed once they are
Reading = Callable[[], ContextManager[Progress | None]]
# (params, the run directories read) -> the directory the call's files go to, or None for none
Start = Callable[[dict[str, Any], list[str]], Path | None]


def _quiet() -> ContextManager[Progress | None]:
    return contextlib.nullcontext(None)


def _nowhere(_params: dict[str, Any], _inputs: list[str]) -> Path | None:
    return None


def roots(runs_dirs: Sequence[str]) -> list[str]:
    """The runs directories read: those given, else ./runs."""
    return list(runs_dirs or [DEFAULT_RUNS_DIR])


def parse_since(text: str) -> _dt.datetime:
    """--since as naive UTC: a date or time (UTC unless it says otherwise), or a duration back from now."""
    now = _dt.datetime.now(_dt.timezone.utc).replace(tzinfo=None)
    try:
        return now - _dt.timedelta(seconds=parse_duration(text))
    except (UnitError, OverflowError):
        pass
    try:
        t = _dt.datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise DbtierError(f"--since {text!r}: not a date, time or duration",
                          "e.g. --since 2025-03-01, --since 2025-03-01T12:00Z or --since 7d") from None
    return t.astimezone(_dt.timezone.utc).replace(tzinfo=None) if t.tzinfo else t


def jsonable(x: Any) -> Any:
    """A DuckDB value as JSON: times in UTC ISO form with Z, decimals as numbers."""
    if isinstance(x, _dt.datetime):
        return (x.astimezone(_dt.timezone.utc).replace(tzinfo=None) if x.tzinfo else x).isoformat() + "Z"
    if isinstance(x, (_dt.date, _dt.time)):
        return x.isoformat()
    if isinstance(x, decimal.Decimal):
        return float(x)
    if isinstance(x, _dt.timedelta):
        return x.total_seconds()
    if isinstance(x, (bytes, bytearray)):
        return x.hex()
    if isinstance(x, uuid.UUID):
        return str(x)
    if isinstance(x, float) and not math.isfinite(x):
        return None
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    return x


def catalogue(dirs: Sequence[str], registry: bool = False,
              reading: Reading = _quiet) -> tuple[duckdb.DuckDBPyConnection, list[scan.Refreshed]]:
    """(a locked DuckDB connection over the runs, each runs directory's refresh) for `dirs`; `registry`: the
    runs made elsewhere too (dbtier.core.runlog), their refresh last."""
    with reading() as progress:
        done = [scan.refresh(r, progress) for r in dirs]
        reg = None
        if registry:
            listed = {os.path.realpath(os.path.join(r.root, rid)) for r in done
                      for rid in r.table.column("run_id").to_pylist()}
            reg = scan.refresh_registered(listed, progress)
    con = V.connect([(r.root, r.table) for r in done], reg.table if reg is not None else None)
    return con, done + ([reg] if reg is not None else [])


def _index(done: Sequence[scan.Refreshed]) -> list[dict[str, Any]]:
    return [r.as_dict() for r in done]


# -- runs (the listing) ---------------------------------------------------------------------------------------

def known_kinds() -> set[str]:
    """What --kind takes: a view's name (probe, oltp, ...) or a command's (lab, report, runs, ...)."""
    return set(V.VIEWS) | set(kinds.COMMANDS)


@dataclass(frozen=True, kw_only=True)
class ListRequest:
    """Every run under `runs_dirs` (none given: ./runs and, as with `everywhere`, the runs made elsewhere),
    of one `kind` (a view's: its figures are columns then; else a command's; None: all but `runs` itself),
    matching `where` (a SQL expression over the columns), started at or after `since` (a date, time or
    duration back), ordered by `sort` ("COL", "COL desc" or "-COL").

    Made, the kind, --since and --where are checked (`since_at`, `where_sql`: what the query uses); `sort`
    is checked when the query is built (`order_by`), once the runs directories are read."""
    runs_dirs: tuple[str, ...] = ()
    kind: str | None = None
    where: str | None = None
    since: str | None = None
    sort: str = "started_at"
    everywhere: bool = False
    since_at: _dt.datetime | None = field(init=False)
    where_sql: str | None = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "runs_dirs", tuple(self.runs_dirs))
        if self.kind is not None and self.kind not in known_kinds():
            raise DbtierError(f"--kind {self.kind!r}: not a kind of run", "one of " + ", ".join(sorted(known_kinds())))
        object.__setattr__(self, "since_at", parse_since(self.since) if self.since else None)
        object.__setattr__(self, "where_sql", V.check_where(self.where) if self.where is not None else None)

    @property
    def view(self) -> str:
        """The view listed: the kind's, else `runs`."""
        return self.kind if self.kind in V.VIEWS else "runs"

    def order_by(self) -> str:
        """The ORDER BY of `sort` over the view's columns (run_id breaking ties), or one error naming them."""
        src, cols, sort = self.view, V.columns_of(self.view), self.sort
        words = sort.split()
        desc = sort.startswith("-") or (len(words) == 2 and words[1].lower() == "desc")
        col = sort[1:] if sort.startswith("-") else (words[0] if len(words) == 2 and words[1].lower() in (
            "asc", "desc") else sort)
        if col not in cols:
            raise DbtierError(f"--sort {sort!r}: {src} has no column {col!r}", f"its columns: {', '.join(cols)}")
        return f'"{col}" {"DESC" if desc else "ASC"} NULLS LAST, run_id'


@dataclass(frozen=True, kw_only=True)
class RunsList(Result):
    """The listing: the section (each runs directory's index refresh, the view, the query, its columns and
    rows as JSON, how many and how many damaged) and the rows as DuckDB gave them (times as datetimes), each
    a tuple in `columns` order."""
    kind: str = "runs.list"
    columns: tuple[str, ...]
    records: tuple[tuple[Any, ...], ...]


def runs_list(req: ListRequest, start: Start = _nowhere, reading: Reading = _quiet) -> RunsList:
    con, done = catalogue(roots(req.runs_dirs), registry=not req.runs_dirs or req.everywhere, reading=reading)
    src, kind, where = req.view, req.kind, req.where_sql
    conds: list[str] = []
    params: list[Any] = []
    if kind is None:
        conds.append("kind IS DISTINCT FROM 'runs'")
    elif src == "runs":
        conds.append("kind = ?")
        params.append(kind)
    if where:
        conds.append(where)
    if req.since_at:
        conds.append("started_at >= ?")
        params.append(req.since_at)
    sql = (f"SELECT * FROM {src}" + (" WHERE " + " AND ".join(conds) if conds else "")
           + f" ORDER BY {req.order_by()}")
    names, rows = V.run_query(con, sql, "--where" if where else "runs", hint=f"the columns of {src}: "
                              + ", ".join(V.columns_of(src)), params=params)
    start({"action": "list", "runs_dirs": roots(req.runs_dirs), "kind": kind, "where": req.where,
           "since": req.since, "sort": req.sort, "everywhere": bool(req.everywhere)}, [])
    records = [dict(zip(names, r)) for r in rows]
    section = dict(index=_index(done), view=src, query=sql, columns=names, count=len(records),
                   damaged=sum(1 for r in records if r["status"] == "damaged"),
                   rows=[{k: jsonable(v) for k, v in r.items()} for r in records])
    return RunsList(section=Frozen(section), columns=tuple(names), records=tuple(tuple(r) for r in rows))


# -- runs sql -------------------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class SqlRequest:
    """One read-only `query` (a SELECT, DESCRIBE, SHOW or SUMMARIZE) over the views of the runs under
    `runs_dirs` (none given: ./runs); anything else is refused before it runs."""
    query: str
    runs_dirs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "runs_dirs", tuple(self.runs_dirs))


@dataclass(frozen=True, kw_only=True)
class RunsSql(Result):
    """The query's answer: the section (the index refresh, its columns, how many rows, the rows as JSON)
    and the rows as DuckDB gave them."""
    kind: str = "runs.sql"
    columns: tuple[str, ...]
    records: tuple[tuple[Any, ...], ...]


def runs_sql(req: SqlRequest, start: Start = _nowhere, reading: Reading = _quiet) -> RunsSql:
    con, done = catalogue(roots(req.runs_dirs), reading=reading)
    V.check_select(con, req.query)
    names, rows = V.run_query(con, req.query, "runs sql")
    start({"action": "sql", "runs_dirs": roots(req.runs_dirs), "query": req.query}, [])
    section = dict(index=_index(done), columns=names, count=len(rows), rows=[[jsonable(v) for v in r] for r in rows])
    return RunsSql(section=Frozen(section), columns=tuple(names), records=tuple(tuple(r) for r in rows))


# -- runs trend -----------------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class TrendRequest:
    """`figure` (VIEW.COLUMN, a number column of a kind's view) over time in the runs under `runs_dirs`
    (none given: ./runs), one series per `by` (host, target, device; None: one), of the runs matching `where`
    (over the kind's view) started at or after `since`. Made, the figure's name and --since are checked."""
    figure: str
    by: str | None = None
    where: str | None = None
    since: str | None = None
    runs_dirs: tuple[str, ...] = ()
    since_at: _dt.datetime | None = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "runs_dirs", tuple(self.runs_dirs))
        T.parse_figure(self.figure)                   # a bad name fails before the runs are read
        object.__setattr__(self, "since_at", parse_since(self.since) if self.since else None)


@dataclass(frozen=True, kw_only=True)
class RunsTrend(Result):
    """The trend: the section (the index refresh, the trend with its points as JSON, the chart's file when
    one was written) and the trend as DuckDB gave it (times as datetimes)."""
    kind: str = "runs.trend"
    trend: Frozen


def runs_trend(req: TrendRequest, start: Start = _nowhere, reading: Reading = _quiet) -> RunsTrend:
    """`start`'s directory, when it gives one, gets the chart: trend.html."""
    con, done = catalogue(roots(req.runs_dirs), reading=reading)
    tr = T.series(con, req.figure, req.by, req.where, req.since_at.isoformat() if req.since_at else None)
    out = start({"action": "trend", "runs_dirs": roots(req.runs_dirs), "figure": req.figure, "by": req.by,
                 "where": req.where, "since": req.since}, [])
    section: dict[str, Any] = dict(index=_index(done), trend={
        **{k: v for k, v in tr.items() if k != "points"},
        "points": [{k: jsonable(v) for k, v in p.items()} for p in tr["points"]]})
    if out is not None:
        from dbtier.report.calls import write_text_atomic
        from dbtier.report.runs import page
        path = out / "trend.html"
        write_text_atomic(path, page(req.figure, [], [tr], []))
        section["report_html"] = str(path)
    return RunsTrend(section=Frozen(section), trend=Frozen(tr))


# -- runs check -----------------------------------------------------------------------------------------------

_FIGURE_COLS = ("path", "figure_key", "item", "key", "label", "value", "text", "unit", "digits", "better", "detail",
                "median", "min", "max", "n", "spread_pct")


@dataclass(frozen=True, kw_only=True)
class CheckRequest:
    """`run` (its directory, result.json or run id in the runs directories) against `baseline`: a run named
    so too, or a SQL expression selecting runs of its kind (status ok, `run` left out; the `last` N most
    recent only); a figure regresses when worse by more than `tolerance_pct` and the runs' own noise.
    `runs_dirs`: where run ids and queries look (none given: ./runs). What can be refused depends on the
    runs read (no such run, another kind, no baseline run, nothing in common), so the call refuses it."""
    run: str
    baseline: str
    last: int | None = None
    tolerance_pct: float = C.DEFAULT_TOLERANCE_PCT
    runs_dirs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "runs_dirs", tuple(self.runs_dirs))


@dataclass(frozen=True, kw_only=True)
class RunsCheck(Result):
    """The verdict: the section (the index refresh, the run checked, the baseline runs, the verdict figure by
    figure: `check`) and the run directories read (the run's first)."""
    kind: str = "runs.check"
    inputs: tuple[str, ...]

    @property
    def passed(self) -> bool:
        return bool(self.section["check"]["passed"])

    @property
    def exit_code(self) -> int:
        """0: no figure regressed; 1: some did."""
        return int(self.section["check"]["exit_code"])


def _by_id(con: duckdb.DuckDBPyConnection, text: str) -> str | None:
    rows = con.execute("SELECT path FROM runs WHERE run_id = ? ORDER BY path", [text]).fetchall()
    if len(rows) > 1:
        raise DbtierError(f"{text!r} names a run in several runs directories: {', '.join(r[0] for r in rows)}",
                          "pass the run directory itself")
    return rows[0][0] if rows else None


def _looks_like_path(text: str) -> bool:
    return bool(re.fullmatch(r"[^\s'\"=<>!()]+", text)) and ("/" in text or text.endswith(".json"))


def _load(con: duckdb.DuckDBPyConnection, text: str, what: str) -> dict[str, Any] | None:
    """A run named by its directory, result.json or run id; None when `text` names none (a query, then)."""
    from dbtier.results.store import load_run
    if os.path.exists(text):
        return load_run(text)
    path = _by_id(con, text)
    if path is not None:
        return load_run(path)
    if what == "RUN" or _looks_like_path(text):
        raise DbtierError(f"{what} {text!r}: no run directory there, and no run with that id in the runs "
                          "directories", "dbtier runs lists them; pass a directory, or --runs-dir DIR")
    return None


def _durable(rows: list[dict[str, Any]]) -> bool | None:
    t = next((r.get("text") for r in rows if r.get("figure_key") == "durability"), None)
    if not isinstance(t, str):
        return None
    return False if t.startswith(F.NOT_DURABLE) else (True if t.startswith("durable") else None)


def _baseline(con: duckdb.DuckDBPyConnection, req: CheckRequest, run_path: str, kind: str, action: str | None
              ) -> tuple[list[list[dict[str, Any]]], dict[str, Any]]:
    doc = _load(con, req.baseline, "--baseline")
    if doc is not None:
        bk = extract.kind_of(doc)
        if bk != (kind, action):
            raise DbtierError(f"--baseline {req.baseline} is a run of kind {' '.join(x for x in bk if x)} and RUN "
                              f"of kind {' '.join(x for x in (kind, action) if x)}: check takes runs of one kind",
                              "name a baseline of the same kind, or a query")
        return [extract.figure_rows(doc)], {"how": "run", "runs": [doc["_run_dir"]]}
    src = kind if kind in V.VIEWS else "runs"
    sql = (f"SELECT path, max(started_at) AS t FROM {src} WHERE kind = ? AND action IS NOT DISTINCT FROM ? AND "
           f"status = 'ok' AND path <> ? AND {V.check_where(req.baseline, '--baseline')} GROUP BY path "
           "ORDER BY t DESC NULLS LAST" + (f" LIMIT {int(req.last)}" if req.last else ""))
    _, picked = V.run_query(con, sql, "--baseline", f"the columns of {src}: " + ", ".join(V.columns_of(src)),
                            params=[kind, action, run_path])
    paths = [p for p, _ in picked]
    if not paths:
        raise DbtierError(f"--baseline {req.baseline!r} selects no {kind} run with status ok (other than RUN)",
                          "see what it selects: dbtier runs --kind " + kind + " --where \"...\"")
    cur = con.execute(f"SELECT {', '.join(_FIGURE_COLS)} FROM figures WHERE list_contains(?, path)", [paths])
    by: dict[str, list[dict[str, Any]]] = {p: [] for p in paths}
    for r in cur.fetchall():
        row = dict(zip(_FIGURE_COLS, r))
        by[row["path"]].append(row)
    return list(by.values()), {"how": "query", "query": req.baseline, "last": req.last, "runs": paths}


def runs_check(req: CheckRequest, start: Start = _nowhere, reading: Reading = _quiet) -> RunsCheck:
    from dbtier.report import summary as FC
    con, done = catalogue(roots(req.runs_dirs), reading=reading)
    doc = _load(con, req.run, "RUN")
    assert doc is not None      # _load raises for the RUN rather than read it as a query
    kind, action = extract.kind_of(doc)
    run_path = os.path.abspath(doc["_run_dir"])
    rows = extract.figure_rows(doc)
    base_runs, base_info = _baseline(con, req, run_path, kind, action)
    mine, theirs = _durable(rows), {_durable(r) for r in base_runs} - {None}
    if mine is not None and theirs - {mine}:
        raise DbtierError(f"RUN is {'durable' if mine else F.NOT_DURABLE}, and the baseline has "
                          f"{'non-durable' if mine else 'durable'} runs: {F.NOT_DURABLE}, so no figure is judged",
                          "compare runs with the same durability (the `durability` column of the oltp view)")
    verdict = C.judge(rows, C.baseline(base_runs), req.tolerance_pct)
    if not verdict["figures"] and not verdict["changed_texts"]:
        raise DbtierError(f"RUN and the baseline have no headline figure in common ({kind})",
                          "check a run against runs of the same kind that measured the same things")
    inputs = [run_path, *base_info["runs"]]
    start({"action": "check", "runs_dirs": roots(req.runs_dirs), "run": req.run, "baseline": req.baseline,
           "last": req.last, "tolerance_pct": req.tolerance_pct}, inputs)
    section = dict(index=_index(done), run={**FC.run_info(doc), "kind": kind, "action": action},
                   baseline=base_info, check=verdict)
    return RunsCheck(section=Frozen(section), inputs=tuple(inputs))
