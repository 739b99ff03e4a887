"""`dbtier report RUN_DIR...`: one self-contained HTML page (or a Markdown summary) for one or more runs.

The report only reads result documents (a lab's with its step runs); it writes its own run
directory (`report.html` and/or `report.md` beside its `result.json`) and, with --output, a copy
elsewhere. The work is dbtier.report.calls.report's; here argv becomes its request, and the run.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from dbtier.cli.common import Sink, add_output_options, console, emit
from dbtier.report.calls import FORMATS, ReportRequest, report


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("report", help="write a self-contained HTML report of one or more runs",
                       description="Write one HTML page (the verdict first, charts inline, opens offline, prints "
                       "cleanly) for the given run directories; several runs are shown side by side, a lab with "
                       "every step's run. --format md writes a Markdown summary (the verdict and the key tables) "
                       "to paste into a ticket.")
    p.add_argument("runs", nargs="*", metavar="RUN_DIR",
                   help="run directories written by dbtier (or their result.json files)")
    p.add_argument("--runs", dest="runs_query", metavar="QUERY",
                   help="instead of RUN_DIRs: the runs in --runs-dir (default ./runs) that a SQL boolean over "
                        "the `dbtier runs` columns selects, e.g. \"kind = 'probe' AND host = 'db1'\", with the "
                        "trends of their headline figures")
    p.add_argument("--trend", action="append", metavar="FIGURE",
                   help="with --runs: draw this figure's trend (VIEW.COLUMN, e.g. probe.read_iops_4k; repeat for "
                        "several) instead of each kind's headline figures")
    p.add_argument("--format", choices=sorted(FORMATS), default="html",
                   help="html (report.html, the default), md (report.md) or both")
    p.add_argument("--output", "-o", metavar="FILE",
                   help="also write the report to FILE (with --format both: the HTML; the Markdown beside it, "
                        "as FILE with .md)")
    add_output_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    query = getattr(args, "runs_query", None)
    req = ReportRequest(runs=tuple(args.runs), runs_query=query, trend=args.trend,
                        format=getattr(args, "format", "html") or "html",
                        output=Path(args.output) if args.output is not None else None)
    sel = None
    if query is not None:
        from dbtier.cli.runs.report import select
        sel = select(args)
    sink = Sink("report", args)
    res = report(req, sink.start_reading, sel, lambda section: sink.run.doc.update(section))
    run_ = sink.run
    run_.finish()
    doc = run_.doc
    out = console(args)

    def render() -> None:
        for label, path in res.written:
            out.print(f"{label + ':':<8}{path}", markup=False, highlight=False, soft_wrap=True)
    emit(doc, args, render)
    return 0
