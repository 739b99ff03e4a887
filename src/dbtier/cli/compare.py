"""`dbtier compare RUN_A RUN_B`: the key figures of two runs of the same command, side by side,
with their differences (B − A) and ratios (B / A), then the verdict on the two read together (on two
tiers: each tier's TPS per client count and the ratios between them). dbtier.report.calls.compare reads and
sets the runs against each other; the tables here are the terminal's."""

from __future__ import annotations

import argparse
from typing import Any

from rich.text import Text

from dbtier.cli.fit import Cell, Col, fitted
from dbtier.cli.markup import esc, lit
from dbtier.cli.common import Run, add_output_options, console, emit
from dbtier.report.calls import compare
from dbtier.report.figures import core as F
from dbtier.report.verdict import rules as R
from dbtier.results.result import thaw
from dbtier.cli.show import print_verdict


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("compare", help="two runs of the same command side by side, with differences and ratios",
                       description="Print the key figures of two runs of the same command (two machines, or "
                       "before and after) side by side, with the difference B − A and the ratio B / A of each.")
    p.add_argument("a", metavar="RUN_A", help="the first run directory (the baseline)")
    p.add_argument("b", metavar="RUN_B", help="the second run directory")
    add_output_options(p)
    p.set_defaults(func=run)


def _ratio(r: dict, judge: bool = True) -> str:
    """B / A coloured by the one evidence rule (report/verdict/rules.py's judge, which compare_rows applied): green when
    B is better and red when worse, "~" within noise, "?" too little evidence (single runs, a wide spread);
    uncoloured when not `judge`d (a durable and a non-durable run: neither is better)."""
    x = r["ratio"]
    if not F.isnum(x):
        return "-"
    text = f"{x:,.2f}x" if abs(x) < 100 else f"{x:,.0f}x"
    verdict = r.get("verdict")
    if not judge or verdict is None:
        return text
    if verdict == "within noise":
        return f"[dim]{text} ~[/dim]"
    if verdict == R.TOO_LITTLE:
        return f"[dim]{text} ?[/dim]"
    return f"[{'green' if verdict.startswith('better') else 'red'}]{text}[/]"


def run(args: argparse.Namespace) -> int:
    runs: list[Run] = []

    def start(params: dict[str, Any], inputs: list[str]) -> None:
        runs.append(Run("compare", args, params, inputs=inputs, read_only=True))

    res = compare(args.a, args.b, start)
    run_ = runs[0]
    doc = run_.doc
    doc.update(res.to_json())
    run_.finish()
    out = console(args)
    a, b = (thaw(d) for d in res.documents)
    ka = F.kind(a)
    rows, clash, placed = doc["rows"], doc["not_comparable"], doc["placement"]
    v, unjudged = thaw(res.verdict), thaw(res.unjudged)

    def render() -> None:
        caption = ("B − A and B / A" + (": not judged, the runs are not comparable" if clash else
                                        "; green: better, red: worse -- by more than the runs' "
                                        "combined spread (max − min over median, A's plus B's) and at "
                                        f"least 5%, each side from {R.MIN_RUNS} runs or more within "
                                        f"{F.fmt_auto(R.MAX_SPREAD_PCT)}% of each other; ~ within noise; "
                                        "? too little evidence (said below)"))
        spreads = any(r.get("a_spread") or r.get("b_spread") for r in rows)
        cols = [Col("measure", min_width=22), Col("A", min_width=9), Col("B", min_width=9),
                Col("B − A", figure=True), Col("B / A", figure=True), Col("unit", min_width=7)]
        if spreads:  # repeated figures: A and B are medians; their runs' min–max and count
            cols += [Col("A runs", figure=True), Col("B runs", figure=True)]
        cells: list[list[Cell]] = []
        for r in rows:
            d = r["digits"] or 0
            label = (f"{r['group']}: " if r["group"] and r["group"] not in r["metric"] else "") + r["metric"]
            diff = f"{r['diff']:+,.{d}f}" if F.isnum(r["diff"]) else ("same" if r["a"] == r["b"] else "differs")
            cells.append([lit(label), Text(F.fmt(r["a"], d), justify="right"), Text(F.fmt(r["b"], d), justify="right"),
                          lit(diff), _ratio(r, not clash), lit(r["unit"] or ""),
                          *([lit(F.spread_text(r.get("a_spread"), d)), lit(F.spread_text(r.get("b_spread"), d))]
                            if spreads else [])])
        tables = fitted(out.width, esc(f"{ka}: A = {F.run_name(a)}, B = {F.run_name(b)}"), cols, cells,
                        caption=caption)
        if clash:
            out.print(f"[bold red]not comparable[/bold red]: {esc(clash)}.", highlight=False)
        for side, d in (("A", a), ("B", b)):
            if F.is_fleet(d):   # its figures are the aggregate's, its outstanding I/O per host
                n = d["aggregate"].get("hosts")
                out.print(f"{side} is a fleet probe of {esc(str(n))} hosts: its figures are the aggregate (IOPS "
                          "and MB/s summed over the hosts, latencies from their merged distribution); "
                          "outstanding I/O is per host.", highlight=False)
        for t in tables:
            out.print(t)
        if not rows:
            out.print("no figures to compare in these runs")
        for why, metrics in unjudged.items() if not clash else ():
            shown = ", ".join(metrics[:4]) + (f" and {len(metrics) - 4} more" if len(metrics) > 4 else "")
            out.print(f"[yellow]? not judged, too little evidence[/yellow] ({esc(why)}): {esc(shown)}",
                      highlight=False)
        if placed:
            for p in fitted(out.width, "placement", [Col("part", min_width=7), Col("A", min_width=20),
                                                     Col("B", min_width=20)],
                            [[lit(x) for x in row] for row in placed["rows"]]):
                out.print(p)
            for text in placed["notes"]:
                out.print(f"[bold yellow]same device[/bold yellow]: {esc(text)}", highlight=False)
        out.print()
        print_verdict(out, v)
    emit(doc, args, render)
    return 0
