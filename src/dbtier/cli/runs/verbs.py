"""`dbtier runs sql QUERY` (read-only SQL over the documented views) and `dbtier runs trend FIGURE`: their
calls are dbtier.runsdb.calls' runs_sql and runs_trend; here their answers are stored and printed."""

from __future__ import annotations

import argparse
import sys

from dbtier.cli.runs import render as R
from dbtier.cli.common import Run, console, emit


def _views_help() -> str:
    from dbtier.runsdb import views as V
    lines = ["views and their columns (times in UTC; figures named as in the result documents):", ""]
    for name in V.view_names():
        about = {"runs": "one row per run", "figures": "one row per figure of a run (long form, with spreads)"}.get(
            name) or V.VIEWS[name].about
        lines.append(f"  {name}: {about}")
        lines.append("    " + ", ".join(V.columns_of(name)))
    return "\n".join(lines)


def register(verbs: argparse._SubParsersAction) -> None:
    from dbtier.cli.runs.common import add_filters, add_runs_options
    from dbtier.runsdb.trend import BY
    p = verbs.add_parser("sql", help="read-only SQL over the runs (DuckDB)", epilog=_views_help(),
                         formatter_class=argparse.RawDescriptionHelpFormatter,
                         description="Run one SELECT over the runs' views in DuckDB (in memory, read-only: "
                         "no file access, no COPY, ATTACH, SET or any statement but a query). The views are "
                         "listed below.")
    p.add_argument("query", metavar="QUERY", help="one SELECT statement, e.g. \"SELECT host, max(read_iops_4k) "
                   "FROM probe GROUP BY host\"")
    add_runs_options(p)
    p.set_defaults(func=run_sql)
    t = verbs.add_parser("trend", help="a figure over time, with each run's spread",
                         description="A figure of one kind over time (one point per run; a probe per target, a "
                         "backup per method), each with the run's own spread where it repeated the measurement "
                         "(min–max, n), and its change from the previous point. Runs with status ok only. The "
                         "chart: dbtier report --runs QUERY --trend FIGURE (or --out DIR: trend.html there).")
    t.add_argument("figure", metavar="FIGURE", help="VIEW.COLUMN, e.g. probe.read_iops_4k, oltp.knee_tps, "
                   "dss.total_seconds, backup.dir_mbps, history.iops_p99")
    t.add_argument("--by", choices=BY, help="one series per host, target (probe path, backup method, history "
                   "database) or device")
    add_filters(t)
    add_runs_options(t)
    t.set_defaults(func=run_trend)


def run_sql(args: argparse.Namespace) -> int:
    from dbtier.cli.runs.common import reading, runs_dirs, starter
    from dbtier.runsdb.calls import SqlRequest, runs_sql
    made: list[Run] = []
    res = runs_sql(SqlRequest(query=args.query, runs_dirs=runs_dirs(args)), starter(args, made), reading(args))
    run = made[0]
    doc = run.doc
    doc.update(res.to_json())
    run.finish()
    names, rows = list(res.columns), res.records
    out = console(args)

    def render() -> None:
        right = {i for i in range(len(names)) if rows and all(
            isinstance(r[i], (int, float)) and not isinstance(r[i], bool) or r[i] is None for r in rows)}
        sys.stdout.write(R.table(names, [[R.cell(v) for v in r] for r in rows], right))
        out.print(f"{len(rows)} row{'s' if len(rows) != 1 else ''}", markup=False, highlight=False)
    emit(doc, args, render)
    return 0


def run_trend(args: argparse.Namespace) -> int:
    from dbtier.cli.runs.common import reading, runs_dirs, starter
    from dbtier.runsdb.calls import TrendRequest, runs_trend
    req = TrendRequest(figure=args.figure, by=args.by, where=args.where, since=args.since, runs_dirs=runs_dirs(args))
    made: list[Run] = []
    res = runs_trend(req, starter(args, made), reading(args))
    run = made[0]
    doc = run.doc
    doc.update(res.to_json())
    run.finish()
    tr = res.trend
    out = console(args)

    def render() -> None:
        d = int(tr["digits"] or 0)
        better = {"higher": ", higher is better", "lower": ", lower is better"}.get(tr["better"] or "", "")
        out.print(f"{tr['figure']}: {tr['label']}" + (f" ({tr['unit']}{better})" if tr["unit"] else better),
                  markup=False, highlight=False)
        if not tr["points"]:
            out.print("no run with status ok has this figure", markup=False, highlight=False)
            return
        grouped = args.by is not None
        heads = ["started (UTC)", "run", *([args.by] if grouped else []), "value", "runs (min–max, n)", "change"]
        body = [[R.when(p["started_at"]), R.clean(p["run_id"] + (f" [{p['item']}]" if p["item"] and not grouped
                                                                   else "")),
                 *([R.clean(p["group"])] if grouped else []), R.number(p["value"], d), R.spread_text(p, d),
                 f"{p['change_pct']:+.1f}%" if p["change_pct"] is not None else ""] for p in tr["points"]]
        first = 3 if grouped else 2
        sys.stdout.write(R.table(heads, body, set(range(first, len(heads)))))
        if doc.get("report_html"):
            out.print(f"chart: {doc['report_html']}", markup=False, highlight=False, soft_wrap=True)
    emit(doc, args, render)
    return 0
