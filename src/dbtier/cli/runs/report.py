"""What `dbtier report --runs QUERY` reads: the runs a query selects from the runs directory, the trends of
their kinds' headline figures (or of --trend FIGURE), and, for a few runs, their documents."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from typing import Any

from dbtier.core.errors import DbtierError


@dataclass
class Selection:
    query: str
    rows: list[dict[str, Any]]
    trends: list[dict[str, Any]]
    docs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def paths(self) -> list[str]:
        return [r["path"] for r in self.rows]


def _by(points: list[dict[str, Any]]) -> str | None:
    """One line per host when the runs come from several, else per target when they measured several."""
    if len({p["host"] for p in points}) > 1:
        return "host"
    return "target" if len({p["item"] for p in points}) > 1 else None


def select(args: argparse.Namespace) -> Selection:
    from dbtier.cli.runs.common import catalogue
    from dbtier.runsdb.calls import DEFAULT_RUNS_DIR
    from dbtier.report.inputs import load_runs
    from dbtier.report.runs import SECTIONS_MAX
    from dbtier.runsdb import trend, views as V
    where = V.check_where(args.runs_query, "--runs")
    figs = list(args.trend or [])
    for f in figs:                              # a bad name fails before the runs are read
        trend.parse_figure(f)
    con, _ = catalogue(args, [args.runs_dir or DEFAULT_RUNS_DIR])
    names, rows = V.run_query(con, f"SELECT * FROM runs WHERE {where} ORDER BY started_at NULLS LAST, run_id",
                              "--runs", "the columns of runs: " + ", ".join(V.RUN_COLUMNS))
    records = [dict(zip(names, r)) for r in rows]
    if not records:
        raise DbtierError(f"--runs {args.runs_query!r} selects no run", "see what there is: dbtier runs")
    paths = [r["path"] for r in records]
    if not figs:
        kinds = dict.fromkeys(r["kind"] for r in records if r["kind"] in trend.DEFAULT_TRENDS)
        figs = [f"{k}.{key}" for k in kinds for key in trend.DEFAULT_TRENDS[k]]
    trends = []
    for f in figs:
        tr = trend.series(con, f, paths=paths)
        by = _by(tr["points"])
        if by:
            tr = trend.series(con, f, by, paths=paths)
        if tr["points"] or args.trend:
            trends.append(tr)
    readable = [r["path"] for r in records if r["status"] != "damaged"]
    docs = load_runs(readable) if len(readable) <= SECTIONS_MAX else []
    return Selection(args.runs_query, records, trends, docs)
