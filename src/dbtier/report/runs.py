"""The report of runs a query selects (`dbtier report --runs QUERY`) and trend charts (`dbtier runs trend`).

Pure: trend series (dbtier.runsdb.trend) and run rows in, HTML out. A trend is a line per group (host,
target or device) over days since its first run; with one group, the runs' own min and max are drawn
dashed beside the median. A few runs also get their full sections (report/html.py's page, after the trends).
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Sequence

from dbtier.report.figures import core as F
from dbtier.report.svg import charts as svg
from dbtier.report.base import esc, figure_frame, html_table, num, time_text

SECTIONS_MAX = 20       # more runs than this: the trends and the table of runs, no section per run


def _days(t: _dt.datetime, t0: _dt.datetime) -> float:
    return (t - t0).total_seconds() / 86400.0


def trend_chart(tr: dict[str, Any]) -> str:
    pts = [p for p in tr["points"] if isinstance(p.get("started_at"), _dt.datetime)]
    title = f"{tr['figure']}: {tr['label']}"
    if not pts:
        return svg.line_chart(title, [], y_label=tr.get("unit") or "")
    t0 = min(p["started_at"] for p in pts)
    groups = list(dict.fromkeys(p["group"] for p in pts))
    series = []
    for i, g in enumerate(groups):
        mine = [p for p in pts if p["group"] == g]
        col = svg.colour(i)
        series.append(svg.Series(g or tr["figure"], [(_days(p["started_at"], t0), p["value"]) for p in mine], col))
        if len(groups) == 1 and any(F.isnum(p.get("min")) and (p.get("n") or 0) > 1 for p in mine):
            for side in ("min", "max"):
                series.append(svg.Series(f"{side} of the run's repeats", [
                    (_days(p["started_at"], t0), p[side] if (p.get("n") or 0) > 1 else p["value"]) for p in mine],
                    col, dashed=True))
    better = {"higher": "higher is better", "lower": "lower is better"}.get(tr.get("better") or "", "")
    return svg.line_chart(title, series, x_label=f"days since {t0:%Y-%m-%d %H:%M} UTC",
                          y_label=" ".join(x for x in (tr.get("unit") or "", f"({better})" if better else "") if x),
                          desc=f"{tr['figure']} over {len(pts)} runs")


def trend_table(tr: dict[str, Any]) -> str:
    d = int(tr.get("digits") or 0)
    grouped = any(p["group"] for p in tr["points"])
    rows = []
    for p in tr["points"]:
        sp = F.spread_text({k: p.get(k) for k in ("median", "min", "max", "n")}, d)
        ch = p.get("change_pct")
        rows.append([time_text(p["started_at"].isoformat() + "Z") if isinstance(p["started_at"], _dt.datetime)
                     else "—", f"<code>{esc(p['run_id'])}</code>", *([esc(p["group"])] if grouped else []),
                     num(p["value"], d), esc(sp), f"{ch:+.1f}%" if F.isnum(ch) else "—"])
    heads = ["started", "run", *(["group"] if grouped else []), f"value ({esc(tr.get('unit') or '')})",
             "runs (min–max, n)", "change"]
    first = 3 if grouped else 2
    return html_table(heads, rows, num_cols=range(first, len(heads)), cls="points", wide=True)


def trend_section(trends: Sequence[dict[str, Any]]) -> str:
    if not trends:
        return ""
    charts = "".join(figure_frame(trend_chart(t), esc(f"{len(t['points'])} points; each the run's median where it "
                                                      "repeated the measurement")) for t in trends)
    tables = "".join(f"<details><summary>{esc(t['figure'])}: every point</summary>{trend_table(t)}</details>"
                     for t in trends)
    return f'<section class="run" id="trends"><h2>Trends</h2><div class="charts">{charts}</div>{tables}</section>'


RUN_HEADS = ("run", "kind", "status", "started", "host", "device", "model", "figures")


def runs_table(rows: Sequence[dict[str, Any]]) -> str:
    body = []
    for r in rows:
        fig = r.get("summary") if r.get("status") == "ok" or not r.get("reason") else f"{r['status']}: {r['reason']}"
        body.append([f"<code>{esc(r.get('run_id'))}</code>", esc(" ".join(x for x in (r.get("kind"), r.get("action"))
                                                                         if x)),
                     esc(r.get("status")), time_text(r["started_at"].isoformat() + "Z")
                     if isinstance(r.get("started_at"), _dt.datetime) else "—",
                     esc(r.get("host")), esc(r.get("device")), esc(r.get("model")), esc(fig)])
    return html_table(list(RUN_HEADS), body, cls="points", wide=True)


def runs_section(query: str, rows: Sequence[dict[str, Any]], shown: int) -> str:
    more = ("" if shown == len(rows) else f'<p class="note">{len(rows)} runs: more than {SECTIONS_MAX}, so '
            "each run's own section is left out; open one with <code>dbtier report RUN_DIR</code>.</p>")
    return (f'<section class="run" id="selected"><h2>Runs selected</h2><p class="sub">'
            f"<code>{esc(query)}</code>: {len(rows)} run{'s' if len(rows) != 1 else ''}</p>{more}"
            f"{runs_table(rows)}</section>")


def page(query: str, rows: Sequence[dict[str, Any]], trends: Sequence[dict[str, Any]],
         docs: Sequence[dict[str, Any]]) -> str:
    """The whole page: trends and the runs first, then (a few runs) report/html.py's page of them."""
    from dbtier.report.html import CSS, render_html
    top = (f"<h1>Runs: <code>{esc(query)}</code></h1>" + trend_section(trends) + runs_section(query, rows, len(docs)))
    if docs:
        return render_html(list(docs)).replace("<body>", "<body>" + top, 1)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>dbtier runs — {esc(query)}</title><style>{CSS}</style></head><body>{top}</body></html>\n")


def markdown(query: str, rows: Sequence[dict[str, Any]], trends: Sequence[dict[str, Any]]) -> str:
    """The same as Markdown: the runs and each trend as a table."""
    def md(x: Any) -> str:
        return str("" if x is None else x).replace("|", "\\|").replace("\n", " ")
    out = [f"# Runs: `{md(query)}`", "", f"{len(rows)} runs.", "", "| " + " | ".join(RUN_HEADS) + " |",
           "|" + "---|" * len(RUN_HEADS)]
    for r in rows:
        t = r.get("started_at")
        out.append("| " + " | ".join(md(x) for x in (r.get("run_id"), r.get("kind"), r.get("status"),
                                                      f"{t:%Y-%m-%d %H:%M}" if isinstance(t, _dt.datetime) else "",
                                                      r.get("host"), r.get("device"), r.get("model"),
                                                      r.get("summary") or r.get("reason"))) + " |")
    for tr in trends:
        d = int(tr.get("digits") or 0)
        out += ["", f"## {md(tr['figure'])}: {md(tr['label'])} ({md(tr.get('unit'))})", "",
                "| started | run | group | value | runs (min–max, n) |", "|---|---|---|---:|---|"]
        for p in tr["points"]:
            t = p["started_at"]
            sp = F.spread_text({k: p.get(k) for k in ("median", "min", "max", "n")}, d)
            out.append(f"| {t:%Y-%m-%d %H:%M} | {md(p['run_id'])} | {md(p['group'])} | {F.fmt(p['value'], d)} | "
                       f"{md(sp)} |" if isinstance(t, _dt.datetime) else
                       f"| | {md(p['run_id'])} | {md(p['group'])} | {F.fmt(p['value'], d)} | {md(sp)} |")
    return "\n".join(out) + "\n"
