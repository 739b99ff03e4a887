"""`dbtier runs check RUN --baseline RUN|QUERY`: does RUN hold up against the baseline? For CI.

Exit 0: every headline figure is within the tolerance or the runs' own noise (compare's rule); exit 1:
at least one regressed (listed); exit 2: the check could not be made (bad input, no baseline run, no figure
in common, a durable run against a non-durable one). The verdict is the run document's `check`; the call
that reaches it is dbtier.runsdb.calls.runs_check.
"""

from __future__ import annotations

import argparse

from rich.console import JustifyMethod
from rich.table import Table

from dbtier.cli.common import Run, console, emit
from dbtier.cli.markup import esc, lit
from dbtier.cli.options import nonneg_float, positive_int
from dbtier.report.figures import core as F


def register(verbs: argparse._SubParsersAction) -> None:
    from dbtier.cli.runs.common import add_runs_options
    from dbtier.runsdb.check import DEFAULT_TOLERANCE_PCT
    c = verbs.add_parser("check", help="a run against a baseline: exit 1 when a headline figure regressed",
                         description="Compare RUN's headline figures with a baseline run, or with the runs a "
                         "query selects (each figure their median, their spread its noise). A figure regresses "
                         "when it is worse by more than the runs' combined spread (at least 5%: compare's rule) "
                         "and by more than --tolerance. Exit 0: none regressed; 1: some did (listed); 2: the "
                         "check could not be made.")
    c.add_argument("run", metavar="RUN", help="the run to check: its directory (or result.json), or its run id "
                   "in the runs directory")
    c.add_argument("--baseline", required=True, metavar="RUN|QUERY",
                   help="a run (directory or run id), or a SQL boolean expression selecting runs of RUN's kind "
                        "(status ok, RUN itself left out), e.g. \"host = 'ci1'\"")
    c.add_argument("--last", type=positive_int(), metavar="N",
                   help="with a QUERY: only the N most recent runs it selects")
    c.add_argument("--tolerance", type=nonneg_float(1000.0), default=DEFAULT_TOLERANCE_PCT, metavar="PCT",
                   help=f"how much worse a figure may be, in percent (default {DEFAULT_TOLERANCE_PCT:g}); "
                        "the runs' own noise applies when larger")
    add_runs_options(c, writes=True)
    c.set_defaults(func=run_check)


def run_check(args: argparse.Namespace) -> int:
    from dbtier.cli.runs.common import reading, runs_dirs, starter
    from dbtier.runsdb.calls import CheckRequest, runs_check
    req = CheckRequest(run=args.run, baseline=args.baseline, last=args.last, tolerance_pct=args.tolerance,
                       runs_dirs=runs_dirs(args))
    made: list[Run] = []
    res = runs_check(req, starter(args, made, writes=True), reading(args))
    run = made[0]
    out_doc = run.doc
    out_doc.update(res.to_json())
    run.finish()
    kind, base_info, verdict = out_doc["run"]["kind"], out_doc["baseline"], out_doc["check"]
    checked = F.run_name({"_run_dir": out_doc["run"]["dir"]})
    out = console(args)

    def render() -> None:
        t = Table(title=esc(f"{kind}: {checked} against {len(base_info['runs'])} baseline run"
                            f"{'s' if len(base_info['runs']) != 1 else ''}"), title_justify="left",
                  caption=f"a regression: worse by more than the threshold (the tolerance, {args.tolerance:g}%, or "
                          "the runs' combined spread, at least 5%, whichever is larger)", caption_justify="left")
        heads: tuple[tuple[str, JustifyMethod], ...] = (
            ("figure", "left"), ("baseline", "right"), ("run", "right"), ("change", "right"), ("threshold", "right"),
            ("verdict", "left"))
        for name, j in heads:
            t.add_column(name, justify=j)
        multi = len({f["item"] for f in verdict["figures"]}) > 1
        for f in verdict["figures"]:
            d = f["digits"]
            colour = {"regression": "bold red", "better": "green"}.get(f["status"], "dim")
            label = (f"{f['item']}: " if f["item"] and multi else "") + f["key"].rsplit(".", 1)[-1]
            t.add_row(lit(label), lit(F.fmt(f["baseline"], d)), lit(F.fmt(f["value"], d) + (f" {f['unit']}" if
                      f["unit"] else "")), lit(f"{f['change_pct']:+.1f}%" if f["change_pct"] is not None else "—"),
                      lit(f"{f['threshold_pct']:.1f}%" if f["threshold_pct"] is not None else "—"),
                      f"[{colour}]{esc(f['status'])}[/]")
        out.print(t)
        for c in verdict["changed_texts"]:
            out.print(f"changed: {esc(c['label'])}: {esc(', '.join(c['baseline']))} -> {esc(c['value'])}",
                      highlight=False)
        if verdict["passed"]:
            out.print(f"[green]pass[/green]: {verdict['judged']} figures judged, none regressed", highlight=False)
        else:
            out.print(f"[bold red]regression[/bold red]: {esc(', '.join(verdict['regressions']))} (exit 1)",
                      highlight=False)
        if run.persist:
            out.print(f"verdict: {esc(str(run.dir.result_path))}", highlight=False, soft_wrap=True)
    emit(out_doc, args, render)
    return res.exit_code
