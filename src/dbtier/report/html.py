"""The HTML report: one self-contained page for one or more result documents.

Pure: documents in, a string out. Everything the page needs is inline (CSS,
charts as SVG), so it opens offline and prints as it looks. Documents of
commands this module does not know get a generic section, so a report never
fails on a newer or partial document.

This module is the page: its style, the verdict, the runs table, the contents,
the side by side (report/compare.py) and one section per run, drawn by the
module of its kind (report/sections/: probe.py, with fleet.py for a fleet, plan.py, oltp.py, dss.py, backup.py,
simulate.py with mrc.py for miss-ratio curves, history.py, lab.py), all built from report/base.py.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from dbtier import __version__
from dbtier.report.figures import core as F
from dbtier.results import kinds, registry
from dbtier.report.base import (
    badge,
    duration_text,
    esc,
    figure_frame,
    generic_section,
    get,
    html_table,
    machines_once,
    run_label,
    time_text,
)
from dbtier.report.compare import Entry, comparison_html
from dbtier.report.sections.lab import lab_section
from dbtier.report.svg import charts as svg
from dbtier.report.verdict.topics import TOPIC_LABELS, TOPICS, thresholds, verdict

CSS = """
:root { --ink:#1f2328; --muted:#59636e; --line:#d8dee4; --soft:#f6f8fa;
        --ok:#1a7f37; --bad:#cf222e; --warn:#9a6700; }
* { box-sizing: border-box; }
html { background: #fff; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
       color: var(--ink); background: #fff; max-width: 1200px; margin: 0 auto; padding: 28px 32px 48px;
       font-size: 15px; line-height: 1.5; }
h1 { font-size: 28px; margin: 0 0 2px; letter-spacing: -0.01em; }
h2 { font-size: 22px; margin: 44px 0 12px; padding-bottom: 6px; border-bottom: 2px solid var(--ink); }
h3 { font-size: 18px; margin: 32px 0 10px; }
h4 { font-size: 15px; margin: 22px 0 8px; color: var(--muted); text-transform: uppercase; letter-spacing: .04em; }
p { margin: 6px 0 10px; }
.sub { color: var(--muted); margin: 0 0 18px; }
h2 code, h3 code { font-size: 0.92em; }
code.wrap { word-break: break-all; }
table.storage td:first-child { white-space: nowrap; color: var(--muted); font-weight: 600; font-size: 13px; }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "Liberation Mono", monospace;
              font-size: 13px; }
table { border-collapse: collapse; font-size: 14px; margin: 6px 0 14px; }
th, td { padding: 5px 12px 5px 0; border-bottom: 1px solid var(--line); text-align: left; vertical-align: top; }
th { font-weight: 600; color: var(--muted); font-size: 13px; }
thead th { border-bottom: 2px solid var(--line); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; padding-left: 12px; }
td.unit { color: var(--muted); }
td.best { font-weight: 700; }
table.kv th { width: 12em; }
table.plan td.num { white-space: normal; }
table.cands { font-size: 13px; }
table.cands th { vertical-align: bottom; }
table.cands td.num, table.cands th.num { padding-left: 8px; }
table.cands td:nth-child(2) { min-width: 15em; }
.wide { overflow-x: auto; }
.badge { display: inline-block; padding: 0 9px; border-radius: 10px; font-size: 12px; font-weight: 600;
         color: #fff; vertical-align: middle; line-height: 20px; }
.badge.ok { background: var(--ok); } .badge.failed, .badge.suspect { background: var(--bad); }
.badge.interrupted, .badge.running, .badge.abandoned, .badge.unknown { background: var(--warn); }
.verdict-ok { color: var(--ok); font-weight: 700; }
.verdict-suspect { color: var(--bad); font-weight: 700; }
.verdict-unknown { color: var(--warn); font-weight: 700; }
.reason { font-size: 13px; color: var(--muted); }
.note { border-left: 4px solid var(--warn); background: #fff8e5; padding: 8px 12px; margin: 10px 0; }
.note.bad { border-color: var(--bad); background: #ffebe9; }
span.bad { color: var(--bad); font-weight: 600; font-size: 12px; }
.top { display: grid; grid-template-columns: minmax(0, 1.1fr) minmax(0, 1fr); gap: 28px; align-items: start; }
.top table { width: 100%; }
table.points { font-size: 13px; }
table.points td { white-space: nowrap; padding-top: 3px; padding-bottom: 3px; }
table.points th { vertical-align: bottom; white-space: normal; }
table.points td.num, table.points th.num { padding-left: 8px; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: 10px 14px; }
.card h4 { margin-top: 4px; }
ul.checks { list-style: none; padding: 0; margin: 6px 0; font-size: 14px; }
ul.checks li { margin: 4px 0; padding-left: 22px; text-indent: -22px; }
.pass { color: var(--ok); } .fail { color: var(--bad); } .na { color: var(--muted); }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(480px, 1fr)); gap: 18px; margin: 12px 0; }
figure { margin: 0; border: 1px solid var(--line); border-radius: 6px; padding: 8px 8px 6px; background: #fff;
         break-inside: avoid; page-break-inside: avoid; }
figcaption { font-size: 13px; color: var(--muted); padding: 4px 6px 2px; }
svg.chart { width: 100%; height: auto; display: block; }
details { margin: 10px 0; }
details > summary { cursor: pointer; font-weight: 600; padding: 4px 0; }
pre { background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: 12px;
      overflow: auto; font-size: 12px; max-height: 640px; }
nav.toc { background: var(--soft); border: 1px solid var(--line); border-radius: 6px; padding: 8px 16px;
          margin: 12px 0 4px; font-size: 14px; }
nav.toc ul { margin: 4px 0; padding-left: 20px; }
a { color: #0969da; text-decoration: none; } a:hover { text-decoration: underline; }
footer { margin-top: 48px; color: var(--muted); font-size: 13px; border-top: 1px solid var(--line);
         padding-top: 8px; }
p.lead { font-size: 16px; margin: 4px 0 10px; }
.tier { display: inline-block; padding: 0 7px; border-radius: 9px; font-size: 12px; font-weight: 600;
        line-height: 18px; }
.tier.fast { background: #dafbe1; color: #116329; } .tier.slow { background: #fff1e5; color: #953800; }
table.placement td:first-child { white-space: nowrap; color: var(--muted); font-weight: 600; font-size: 13px; }
table.matrix { font-size: 13px; }
table.matrix td { white-space: nowrap; } table.matrix th { vertical-align: bottom; white-space: normal; }
table.placement td:last-child { white-space: nowrap; }
table.matrix td.num, table.matrix th.num { padding-left: 8px; }
table.settings { margin: 0; font-size: 13px; } table.settings td { padding: 1px 14px 1px 0; border: 0; }
ul.reason { padding-left: 20px; } ul.reason li { margin: 3px 0; }
details.step { border-top: 1px solid var(--line); padding-top: 4px; }
.bn { font-weight: 700; }
section.verdict { border: 2px solid var(--ink); border-radius: 8px; padding: 2px 20px 8px; margin: 18px 0 8px; }
section.verdict h2 { margin-top: 12px; border-bottom: 0; padding-bottom: 0; }
table.verdict { width: 100%; font-size: 15px; }
table.verdict th { width: 7.5em; text-transform: uppercase; font-size: 12px; letter-spacing: .04em; padding-top: 8px; }
table.verdict td p { margin: 4px 0; }
table.verdict td p.unjudged { color: var(--muted); font-style: italic; }
.charts.one { grid-template-columns: 1fr; }
.verdict-top { display: grid; grid-template-columns: minmax(0, 1.3fr) minmax(0, 1fr); gap: 20px; align-items: start; }
.verdict-top figure { margin-top: 8px; }
table.steps td:last-child { font-size: 12px; }
table.steps td:first-child, table.steps td:nth-child(4) { white-space: nowrap; }
table.backup { font-size: 13px; } table.backup th { vertical-align: bottom; }
table.backup td.num, table.backup th.num { padding-left: 8px; white-space: nowrap; }
@media (max-width: 820px) { .top, .charts, .verdict-top { grid-template-columns: minmax(0, 1fr); } }
/* a phone: a table wider than the screen scrolls inside itself, never the page */
@media screen and (max-width: 600px) {
  body { padding: 16px 12px 32px; }
  table:not(.verdict) { display: block; max-width: 100%; overflow-x: auto; }
  table.verdict th { width: 5.5em; }
}
@media print {
  @page { margin: 14mm; }
  body { max-width: none; padding: 0; font-size: 10.5pt; }
  nav.toc { display: none; }
  a { color: inherit; }
  section.run + section.run { break-before: page; page-break-before: always; }
  .charts { grid-template-columns: 1fr; gap: 10px; }
  svg.chart { max-width: 150mm; margin: 0 auto; }
  figure, table, .card { break-inside: avoid; page-break-inside: avoid; }
  h2, h3, h4 { break-after: avoid; page-break-after: avoid; }
  pre { max-height: none; white-space: pre-wrap; }
  .badge, .note, .tier { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
}
"""


# -- each run's section: its kind's (dbtier.results.kinds) --------------------------------------------------

def _section(doc: dict[str, Any], i: int) -> str:
    """The run's section as its kind's module draws it (a kind without one: the generic section, its JSON and
    parameters; a plan or history document of an action this dbtier does not know: its command's, which says
    so)."""
    render: Callable[[dict[str, Any], int], str] = registry.face_of(doc, "section")
    try:
        return render(doc, i)
    except Exception as exc:  # a malformed document must not cost the rest of the report
        return generic_section(doc, i, note=f"This {doc.get('command')} document could not be drawn in full "
                                             f"({type(exc).__name__}: {exc}); its raw content follows.")


# -- the verdict ----------------------------------------------------------------------------------------------

def _verdict_section(docs: Sequence[dict[str, Any]]) -> str:
    try:
        v = verdict(docs)
    except Exception as exc:  # the verdict must not cost the report
        return (f'<section class="verdict"><h2 id="verdict">Verdict</h2><p class="note">No verdict: the documents '
                f"did not add up ({esc(type(exc).__name__)}: {esc(exc)}).</p></section>")
    rows = []
    for topic in TOPICS:
        items = v.get(topic) or []
        if items:
            rows.append(f"<tr><th>{esc(TOPIC_LABELS[topic])}</th><td>"
                        + "".join(f'<p class="unjudged">{esc(it["text"])}</p>' if it.get("judged") is False
                                  else f"<p>{esc(it['text'])}</p>" for it in items) + "</td></tr>")
    notes = "".join(f'<p class="note{" bad" if c.get("kind") in ("fsync", "step", "status", "reads-from-memory") else ""}">{esc(c["text"])}'
                    "</p>" for c in v.get("caveats") or [])
    body = (f'<table class="verdict"><tbody>{"".join(rows)}</tbody></table>' if rows else
            '<p class="na">No verdict: these runs hold no probe, benchmark or plan figures to judge from.</p>')
    charts = "".join(_tiers_chart(it) for it in v.get("tiers") or [])
    if charts:   # the tiers' TPS against clients beside the sentences: the report's first screen
        body = f'<div class="verdict-top"><div>{body}</div><div>{charts}</div></div>'

    return (f'<section class="verdict"><h2 id="verdict">Verdict</h2>{body}{notes}'
            '<p class="reason">Each sentence rests on the figures it cites, from the runs below; a question the runs '
            "do not answer gets no sentence, and one they answer on too little evidence says what would be needed."
            "</p>" + _thresholds_html() + "</section>")


def _answers(docs: Sequence[dict[str, Any]]) -> str:
    """An advise run's answer opens the report (before any verdict)."""
    from dbtier.advise import html as advise_html
    return "".join(advise_html.answer_html(d) for d in docs if kinds.kind_of(d) == "advise" and d.get("advice"))


def _tiers_chart(item: dict[str, Any]) -> str:
    """TPS against clients, one line per tier (named by what the tier is), each knee ringed and named."""
    tiers = [t for t in item.get("tiers") or [] if isinstance(t, dict) and t.get("points")]
    if len(tiers) < 2:
        return ""
    series = [svg.Series(f"{t['name']}: {t['label']}" if t.get("label") != t["name"] else str(t["name"]),
                         [(x, y) for x, y in t["points"]], svg.colour(k)) for k, t in enumerate(tiers)]
    markers = [svg.Marker(k["clients"], k["tps"], f"{t['name']}: " + ("still rising" if k.get("still_rising")
                                                                        else f"knee, {F.fmt(k['clients'])} cl."),
                          svg.colour(j))
               for j, t in enumerate(tiers) for k in [t.get("knee")]
               if isinstance(k, dict) and k.get("judged") and F.isnum(k.get("clients")) and F.isnum(k.get("tps"))]
    chart = svg.line_chart("TPS vs clients, tier by tier", series, x_label="clients",
                           y_label="transactions per second", x_log2=True, markers=markers, height=300,
                           desc="One line per tier: transactions per second at each client count.")
    return figure_frame(chart, "One line per tier, each point the median of its runs at that client count; a ring "
                               "marks each tier's knee (or its largest load, still rising) where the verdict judges "
                               "it.")


def _thresholds_html() -> str:
    rows = "".join(f"<tr><th>{esc(what)}</th><td>{esc(rule)}</td></tr>" for what, rule in thresholds())
    return ('<details class="thresholds"><summary>The rules of thumb and the evidence a sentence needs '
            f'(<code>dbtier.report.verdict</code>)</summary><table class="kv"><tbody>{rows}</tbody></table></details>')



def _header(docs: Sequence[dict[str, Any]]) -> str:
    hosts = sorted({str(get(d, "machine", "hostname")) for d in F.expand(docs) if get(d, "machine", "hostname")})
    steps = sum(1 for d in docs if kinds.kind_of(d) == "lab" for _, c, _ in F.children(d) if c is not None)
    sub = (f"{len(docs)} run{'s' if len(docs) != 1 else ''}"
           + (f" and {steps} lab step run{'s' if steps != 1 else ''}" if steps else "")
           + (f" on {esc(', '.join(hosts))}" if hosts else ""))
    return f'<header><h1>dbtier report</h1><p class="sub">{sub}</p></header>'


def _runs_table(docs: Sequence[dict[str, Any]]) -> str:
    rows = []
    for i, d in enumerate(docs):
        name = d.get("name")
        rows.append([str(i + 1), f'<a href="#run-{i + 1}">{esc(d.get("command") or "unknown")}</a>',
                     f"<code>{esc(run_label(d, i))}</code>", esc(name) if isinstance(name, str) else "—",
                     badge(d.get("status")), time_text(d.get("started_at")),
                     time_text(d.get("finished_at")), duration_text(d.get("started_at"), d.get("finished_at"))])
    return "<h2>Runs</h2>" + html_table(["#", "command", "run", "name", "status", "started", "finished", "took"], rows)


def _toc(docs: Sequence[dict[str, Any]], kids: dict[int, list[Entry]], compare: bool) -> str:
    items = []
    if compare:
        items.append('<li><a href="#compare">Side by side</a></li>')
    for i, d in enumerate(docs):
        sub = ""
        if d.get("command") == "probe":
            ts = [t for t in (d.get("targets") or []) if isinstance(t, dict)]
            if len(ts) > 1:
                sub = "<ul>" + "".join(f'<li><a href="#run-{i + 1}-t{j + 1}"><code>{esc(t.get("path"))}</code></a></li>'
                                       for j, t in enumerate(ts)) + "</ul>"
        if kids.get(i):
            sub = "<ul>" + "".join(f'<li><a href="#run-{k + 1}">{esc(F.kind(c))} · {esc(run_label(c, k))}</a></li>'
                                   for c, k in kids[i]) + "</ul>"
        items.append(f'<li><a href="#run-{i + 1}">{esc(d.get("command") or "unknown")} · '
                     f"{esc(run_label(d, i))}</a>{sub}</li>")
    if len(items) + sum(len(v) for v in kids.values()) < 2:
        return ""
    return f'<nav class="toc"><b>Contents</b><ul>{"".join(items)}</ul></nav>'


def render_html(docs: list[dict[str, Any]]) -> str:
    """The whole report for these documents, as one self-contained HTML page: the verdict first, then
    the runs side by side, then a section per run (a lab's step runs right after the lab's own)."""
    docs = [d if isinstance(d, dict) else {"command": "unknown", "value": d} for d in docs]
    names = ", ".join(run_label(d, i) for i, d in enumerate(docs)) or "no runs"
    # Section numbers: the given runs 0..n-1 (anchors run-1 ...), then each lab's step runs.
    kids: dict[int, list[Entry]] = {}
    anchors: dict[int, dict[int, int]] = {}
    n = len(docs)
    for i, d in enumerate(docs):
        if kinds.kind_of(d) != "lab":
            continue
        lab_name = run_label(d, i)
        for k, (_, child, _) in enumerate(F.children(d)):
            if child is not None:
                kids.setdefault(i, []).append(({**child, "_parent": lab_name}, n))
                anchors.setdefault(i, {})[k] = n
                n += 1
    entries: list[Entry] = []
    for i, d in enumerate(docs):
        entries.append((d, i))
        entries += kids.get(i, [])
    compare = comparison_html([(d, i) for d, i in entries if kinds.kind_of(d) != "lab"])
    body = [_header(docs), _answers(docs),
            _verdict_section(docs) if any(kinds.kind_of(d) != "advise" for d in docs) else "",
            _runs_table(docs) if docs else "", _toc(docs, kids, bool(compare)), compare]
    with machines_once():
        for i, d in enumerate(docs):
            if kinds.kind_of(d) == "lab":
                try:
                    body.append(lab_section(d, i, anchors.get(i, {})))
                except Exception as exc:  # as _section: a malformed lab must not cost the report
                    body.append(generic_section(d, i, note=f"This lab document could not be drawn in full "
                                                           f"({type(exc).__name__}: {exc}); its raw content follows."))
            else:
                body.append(_section(d, i))
            body += [_section(c, k) for c, k in kids.get(i, [])]
    if not docs:
        body.append('<p class="note">No result documents were given.</p>')
    body.append(f"<footer>Written by dbtier {esc(__version__)}. Self-contained: no scripts, fonts or images are "
                "loaded from anywhere.</footer>")
    return ("<!DOCTYPE html>\n"
            '<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>dbtier report — {esc(names)}</title><style>{CSS}</style></head>"
            f"<body>{''.join(body)}</body></html>\n")

