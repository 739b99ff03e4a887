"""`dbtier show RUN_DIR`: a run's summary as terminal tables (any command; a lab with every step).

The summary (figures, tables, how they were obtained; for a lab each step's too) comes from
dbtier.report.figures.core, the verdict from dbtier.report.verdict.topics: the same the reports print.
dbtier.report.calls.show reads the run and makes both; the tables here are the terminal's.
"""

from __future__ import annotations

import argparse
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from dbtier.model.guards import doc_guards
from dbtier.cli.fit import Col, fitted
from dbtier.cli.markup import esc, lit
from dbtier.cli.common import Run, add_output_options, console, emit
from dbtier.report.figures import core as F
from dbtier.report import summary as FC
from dbtier.report.figures import fleet as FF
from dbtier.report.figures import placed as P
from dbtier.report.calls import show
from dbtier.results.kinds import kind_of
from dbtier.results.result import thaw
from dbtier.report.verdict.topics import TOPIC_LABELS, TOPICS


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("show", help="print a run's summary as tables",
                       description="Print the summary of a run directory written by any dbtier command as "
                       "tables: the verdict, the key figures, the key tables and how the numbers were obtained "
                       "(a lab: every step's run too).")
    p.add_argument("run", metavar="RUN_DIR", help="a run directory written by dbtier (or its result.json)")
    add_output_options(p)
    p.set_defaults(func=run)


def _cell(v: Any, digits: int = 0) -> str:
    return F.fmt(v, digits) if v is not None else "-"


def figures_table(figs: list[dict[str, Any]], title: str = "key figures", width: int = 200) -> list[Table]:
    figs = [f for f in figs if not f.get("detail") and f.get("value") is not None]
    if not figs:
        return []
    spreads = any(f.get("spread") for f in figs)
    cols = [Col("measure", min_width=24), Col("value", min_width=10), Col("unit", min_width=7)]
    if spreads:  # a repeated figure: the median above, its runs' min–max and count here
        cols.append(Col("runs (min–max, n)", min_width=12))
    rows: list[list[Any]] = []
    group = None
    for f in figs:
        if f.get("group") and f["group"] != group:
            group = f["group"]
            rows.append([f"[bold]{esc(group)}[/bold]", "", "", *([""] if spreads else [])])
        runs = [lit(F.spread_text(f.get("spread"), f.get("digits") or 0))] if spreads else []
        rows.append([lit(("  " if group else "") + str(f["label"])),
                     Text(_cell(f["value"], f.get("digits") or 0), justify="right"), lit(f.get("unit") or ""), *runs])
    return fitted(width, esc(title), cols, rows)


def key_table(tab: dict[str, Any], digits: Any = (), width: int = 200) -> list[Table]:
    rows = tab["rows"]
    cols = [Col(c, figure=all(F.isnum(r[k]) or r[k] is None for r in rows if k < len(r))
                and any(F.isnum(r[k]) for r in rows if k < len(r)))
            for k, c in enumerate(tab["columns"])]
    cells = [[lit(_cell(v, digits[k] if k < len(digits) else 0)) for k, v in enumerate(r)] for r in rows]
    return fitted(width, esc(tab["title"]), cols, cells)


def print_summary(out: Console, doc: dict[str, Any], indent: str = "") -> None:
    """The figures, tables and method lines of one document (a lab: then each step's)."""
    info = FC.run_info(doc)
    out.print(f"{indent}[bold]{esc(info['kind'])}[/bold] · {esc(F.run_name(doc))} · {esc(info['status'] or 'unknown')}"
              + (f" · started {esc(info['started_at'])}" if info["started_at"] else ""), highlight=False)
    ab = doc.get("abandoned")
    if isinstance(ab, dict) and ab.get("message"):    # its dbtier died: what is shown is what it finished
        out.print(f"{indent}[bold yellow]{esc(str(ab['message']))}[/bold yellow]", highlight=False)
    for g in doc_guards(doc):   # the cache guard first, in colour: it says what the figures measured
        colour = "bold red" if g.get("kind") == "reads-from-memory" else "bold yellow"
        out.print(f"{indent}[{colour}]guard {esc(str(g.get('kind')))}[/{colour}]: {esc(str(g.get('message')))}",
                  highlight=False)
    if kind_of(doc) == "bench.oltp" and (F.durability(doc) or {}).get("durable") is False:
        out.print(f"{indent}[bold red]{esc(F.durability_text(doc))}[/bold red]", highlight=False)
    notice = FF.fleet_notice(doc)   # a host dropped: the aggregate is not the whole fleet's
    if notice:
        out.print(f"{indent}[bold red]{esc(notice)}[/bold red]", highlight=False)
    placement_lines(out, doc, indent)
    figs, tabs, meth, problems = FC.drawn(doc)
    for t in figures_table([f.as_dict() for f in figs], width=out.width):
        out.print(t)
    for tab in tabs:
        for t in key_table(tab.as_dict(), tab.digits, width=out.width):
            out.print(t)
    for what, text in FF.fleet_lines(doc):
        out.print(f"{indent}[bold]{esc(what)}[/bold]: {esc(text)}", highlight=False)
    for what, how in meth:
        out.print(f"[dim]{esc(what)}: {esc(how)}[/dim]", highlight=False)
    for p in problems:   # a part that could not be drawn is said, not dropped
        out.print(f"[red]the {esc(p['section'])} of this run could not be drawn[/red]: {esc(p['error'])}", highlight=False)
    if doc.get("command") == "lab":
        for s, child, _ in F.children(doc):
            if child is not None:
                out.print()
                out.rule(esc(f"step {s.get('name')}"))
                print_summary(out, child)


def placement_lines(out: Console, doc: dict[str, Any], indent: str = "") -> None:
    """Where each part of an OLTP or DSS run went (directory, device, filesystem, mount). Parts the run keeps
    apart on one device are said by the verdict's caveats (report/verdict/caveats.py), printed above."""
    if kind_of(doc) not in ("bench.oltp", "bench.dss"):
        return
    w = P.where(doc)
    if not w:
        return
    rows = [[lit(role), lit(d), lit(on)] for role, d, on in P.lines(w)]
    for t in fitted(out.width, "placement" + (" (the last step)" if F.oltp_steps(doc) else ""),
                    [Col("part", min_width=7), Col("directory", min_width=20), Col("device", min_width=12)], rows):
        out.print(t)


def print_verdict(out: Console, v: dict[str, Any]) -> None:
    lines = [(TOPIC_LABELS[t], it["text"]) for t in TOPICS for it in v.get(t) or []]
    if not lines and not v.get("caveats"):
        return
    out.print("[bold]Verdict[/bold]")
    for label, text in lines:
        out.print(f"  [bold]{esc(label)}[/bold]: {esc(text)}", highlight=False)
    for c in v.get("caveats") or []:
        tag = {"reads-from-memory": "[bold red]reads from memory[/bold red]",
               "not-durable": "[bold red]not durable[/bold red]",
               "not-comparable": "[bold red]not comparable[/bold red]",
               "same_device": "[bold yellow]same device[/bold yellow]"}.get(c.get("kind"), "[yellow]note[/yellow]")
        out.print(f"  {tag}: {esc(c['text'])}", highlight=False)
    out.print()


def run(args: argparse.Namespace) -> int:
    runs: list[Run] = []

    def start(params: dict[str, Any], inputs: list[str]) -> None:
        runs.append(Run("show", args, params, inputs=inputs, read_only=True))

    res = show(args.run, start)
    run_ = runs[0]
    doc = run_.doc
    doc.update(res.to_json())
    run_.finish()
    out = console(args)
    shown, v = thaw(res.document), thaw(res.verdict)

    def render() -> None:
        print_verdict(out, v)
        print_summary(out, shown)
    emit(doc, args, render)
    return 0
