"""The HTML report: one self-contained page for one or more result documents.

Pure: documents in, a string out. Everything the page needs is inline (CSS,
charts as SVG), so it opens offline and prints as it looks. Documents of
commands this module does not know get a generic section, so a report never
fails on a newer or partial document.
"""

from __future__ import annotations

import datetime as _dt
import importlib
import json
import math
import os
from html import escape
from typing import Any, Callable, Iterable, Sequence

from dbtier.model.guards import READ_STEPS, doc_guards, reads_from_memory
from dbtier import __version__
from dbtier.core.units import human_bytes
from dbtier.report import figures as F
from dbtier.report import svg
from dbtier.report.svg import Band, Marker, RefLine, Series
from dbtier.report.verdict import TOPIC_LABELS, TOPICS, verdict
from dbtier.report.tables import SUMMARY_LABELS
from dbtier.results.probe import SUMMARY_KEYS

# Random tests in the order their lines are drawn; each keeps its colour everywhere.
RANDOM_TESTS = ("rand-read-4k", "rand-write-4k", "rand-mix-8k", "rand-read-8k", "rand-write-8k", "rand-mix-4k")
SEQUENTIAL_TESTS = ("seq-read-128k", "seq-read-1m", "seq-write-128k", "seq-write-1m")
TEST_COLOURS = {t: svg.colour(i) for i, t in enumerate(RANDOM_TESTS)}
TEST_COLOURS.update({t: svg.colour(i) for i, t in enumerate(SEQUENTIAL_TESTS)})

# Summary keys where a higher number is better (the rest: lower is better).
_HIGHER_BETTER = {"read_iops_4k", "write_iops_4k", "mixed_iops_8k", "read_mbps_seq", "write_mbps_seq",
                  "commits_per_s"}

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
.badge.interrupted, .badge.running, .badge.unknown { background: var(--warn); }
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
.charts.one { grid-template-columns: 1fr; }
table.steps td:last-child { font-size: 12px; }
table.steps td:first-child, table.steps td:nth-child(4) { white-space: nowrap; }
table.backup { font-size: 13px; } table.backup th { vertical-align: bottom; }
table.backup td.num, table.backup th.num { padding-left: 8px; white-space: nowrap; }
@media (max-width: 820px) { .top { grid-template-columns: 1fr; } .charts { grid-template-columns: 1fr; } }
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


# -- small formatting helpers ------------------------------------------------------

def _e(x: Any) -> str:
    return escape("" if x is None else str(x))


def _isnum(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _num(x: Any, digits: int = 0) -> str:
    if not _isnum(x):
        return "—"
    return f"{x:,.{digits}f}"


def _get(d: Any, *keys: str) -> Any:
    """d[k1][k2]... or None when any step is missing or not a dict."""
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def _parse_time(ts: Any) -> _dt.datetime | None:
    if not isinstance(ts, str) or not ts:
        return None
    try:
        return _dt.datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return None


def _time(ts: Any) -> str:
    t = _parse_time(ts)
    if t is None:
        return _e(ts) if ts else "—"
    if t.tzinfo is not None:
        t = t.astimezone(_dt.timezone.utc)
    return t.strftime("%Y-%m-%d %H:%M:%S") + (" UTC" if t.tzinfo is not None else "")


def _duration(start: Any, end: Any) -> str:
    a, b = _parse_time(start), _parse_time(end)
    if a is None or b is None:
        return "—"
    try:
        s = (b - a).total_seconds()
    except TypeError:
        return "—"
    if s < 0:
        return "—"
    if s < 60:
        return f"{s:.1f} s"
    m, sec = divmod(int(round(s)), 60)
    if m < 60:
        return f"{m} min {sec} s"
    h, m = divmod(m, 60)
    return f"{h} h {m} min"


def _badge(status: Any) -> str:
    s = str(status or "unknown")
    cls = s if s in ("ok", "failed", "interrupted", "running", "suspect") else "unknown"
    return f'<span class="badge {cls}">{_e(s)}</span>'


def _yes_no(x: Any) -> str:
    if x is True:
        return "yes"
    if x is False:
        return "no"
    return "—" if x is None else _e(x)


def _run_name(doc: dict[str, Any], i: int) -> str:
    d = doc.get("_run_dir")
    name = os.path.basename(os.path.normpath(d)) if isinstance(d, str) and d else f"run {i + 1}"
    parent = doc.get("_parent")     # a lab's step run: lab/step
    return f"{parent}/{name}" if isinstance(parent, str) and parent else name


def _table(headers: Sequence[str], rows: Iterable[Sequence[str]], num_cols: Iterable[int] = (),
           cls: str = "") -> str:
    """Cells are HTML already (escape before); columns in num_cols are right-aligned."""
    nums = set(num_cols)
    head = "".join(f'<th{" class=num" if i in nums else ""}>{h}</th>' for i, h in enumerate(headers))
    body = []
    for r in rows:
        body.append("<tr>" + "".join(f'<td{" class=num" if i in nums else ""}>{c}</td>'
                                     for i, c in enumerate(r)) + "</tr>")
    c = f' class="{cls}"' if cls else ""
    return f"<table{c}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _kv(rows: Iterable[tuple[str, str]]) -> str:
    """Key/value table; values are HTML already."""
    body = "".join(f"<tr><th>{_e(k)}</th><td>{v}</td></tr>" for k, v in rows)
    return f'<table class="kv"><tbody>{body}</tbody></table>'


def _figure(chart: str, caption: str = "") -> str:
    cap = f"<figcaption>{caption}</figcaption>" if caption else ""
    return f"<figure>{chart}{cap}</figure>"


def _json_value(v: Any) -> str:
    if isinstance(v, str):
        return _e(v)
    if v is None:
        return "—"
    if isinstance(v, bool):
        return _yes_no(v)
    if _isnum(v):
        return _e(v)
    if isinstance(v, list) and all(isinstance(x, (str, int, float)) and not isinstance(x, bool) for x in v):
        return ", ".join(f"<code>{_e(x)}</code>" if isinstance(x, str) else _e(x) for x in v) or "—"
    return f'<code>{_e(json.dumps(v, default=str))}</code>'


# -- points --------------------------------------------------------------------------

def _points(target: dict[str, Any]) -> list[dict[str, Any]]:
    pts = target.get("points")
    return [p for p in pts if isinstance(p, dict)] if isinstance(pts, list) else []


def _side_lat(p: dict[str, Any], side: str, pct: str) -> float | None:
    v = _get(p, side, "lat_us", pct)
    if not _isnum(v):
        v = _get(p, "lat_us", pct)
    return v if _isnum(v) else None


def _by_test(points: list[dict[str, Any]], group: str) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for p in points:
        if p.get("group") == group and isinstance(p.get("test"), str):
            out.setdefault(p["test"], []).append(p)
    return out


def _ordered(tests: dict[str, Any], order: Sequence[str]) -> list[str]:
    return [t for t in order if t in tests] + sorted(t for t in tests if t not in order)


def _colour_for(test: str, i: int) -> str:
    return TEST_COLOURS.get(test) or svg.colour(i)


# -- probe charts ------------------------------------------------------------------------

def _chart_iops(points: list[dict[str, Any]]) -> str | None:
    tests = _by_test(points, "random")
    if not tests:
        return None
    series, sparse = [], []
    for i, t in enumerate(_ordered(tests, RANDOM_TESTS)):
        pts = [(p.get("outstanding"), p.get("iops")) for p in tests[t] if _isnum(p.get("outstanding"))]
        dashed = len(pts) <= 2 and len(tests) > 3
        if dashed:
            sparse.append(t)
        series.append(Series(t, pts, _colour_for(t, i), dashed=dashed))
    markers = []
    read4k = [p for p in tests.get("rand-read-4k", []) if _isnum(p.get("iops")) and _isnum(p.get("outstanding"))]
    if read4k:
        peak = max(read4k, key=lambda p: p["iops"])
        markers.append(Marker(peak["outstanding"], peak["iops"], f"4k read peak {svg.fmt_num(peak['iops'])}"))
    chart = svg.line_chart("Random I/O: IOPS vs outstanding I/O", series,
                           x_label="outstanding I/O (jobs × queue depth)", y_label="IOPS", x_log2=True,
                           markers=markers, desc="One line per random test; x on a log2 scale.")
    cap = "One line per random test; the ring marks the 4 KiB random read peak."
    if sparse:
        cap += (f" Dashed: {', '.join(_e(s) for s in sparse)} measured at queue depth 1 and at the 4 KiB peak's "
                "load only (quick profile).")
    return _figure(chart, cap)


def _chart_latency(points: list[dict[str, Any]]) -> str | None:
    tests = _by_test(points, "random")
    series = []
    for t, side, name in (("rand-read-4k", "read", "4k read"), ("rand-write-4k", "write", "4k write")):
        pts = sorted((p for p in tests.get(t, []) if _isnum(p.get("outstanding"))), key=lambda p: p["outstanding"])
        if not pts:
            continue
        col = TEST_COLOURS[t]
        series.append(Series(f"{name} p50", [(p["outstanding"], _side_lat(p, side, "p50")) for p in pts], col))
        series.append(Series(f"{name} p99", [(p["outstanding"], _side_lat(p, side, "p99")) for p in pts], col,
                             dashed=True))
    if not series:
        return None
    chart = svg.line_chart("4 KiB random latency vs outstanding I/O", series,
                           x_label="outstanding I/O (jobs × queue depth)", y_label="latency (µs)",
                           x_log2=True, y_log=True, desc="p50 solid, p99 dashed; both axes logarithmic.")
    return _figure(chart, "Latency per I/O from submission to completion (fio lat); p50 solid, p99 dashed; "
                          "logarithmic axes.")


def _chart_sequential(points: list[dict[str, Any]]) -> str | None:
    tests = _by_test(points, "sequential")
    if not tests:
        return None
    series = []
    for i, t in enumerate(_ordered(tests, SEQUENTIAL_TESTS)):
        pts = []
        for p in tests[t]:
            streams = p.get("streams") if _isnum(p.get("streams")) else p.get("jobs")
            if _isnum(streams):
                pts.append((streams, p.get("mbps")))
        series.append(Series(t, pts, _colour_for(t, i), dashed="write" in t))
    chart = svg.line_chart("Sequential throughput vs streams", series, x_label="concurrent streams",
                           y_label="MB/s", x_log2=True, desc="One line per sequential test; writes dashed.")
    return _figure(chart, "Each stream reads or writes its own region of the test file; MB = 10⁶ bytes. "
                          "The sweep stops once another stream adds less than 5%.")


def _commit_points(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    pts = [p for p in points if p.get("test") == "commit"]
    return sorted(pts, key=lambda p: p.get("writers") or p.get("jobs") or 0)


def _writers_label(p: dict[str, Any]) -> str:
    w = p.get("writers") or p.get("jobs")
    return f"{w} writer" + ("" if w == 1 else "s")


def _chart_commit(points: list[dict[str, Any]]) -> list[str]:
    pts = _commit_points(points)
    if not pts:
        return []
    cats = [_writers_label(p) for p in pts]
    lat = [p.get("commit_lat_us") or {} for p in pts]
    out = []
    lat_chart = svg.bar_chart("Commit latency (8 KiB write + fdatasync)", cats, [
        Series("p50", [(k, l.get("p50")) for k, l in enumerate(lat)], svg.colour(0)),
        Series("p99", [(k, l.get("p99")) for k, l in enumerate(lat)], svg.colour(1)),
    ], y_label="latency (µs)", unit="µs", desc="p50 and p99 commit latency for each number of writers.")
    cap = "Each writer overwrites a preallocated file: buffered 8 KiB write, then fdatasync — the WAL pattern."
    nosync = next((p for p in points if p.get("test") == "commit-nosync"), None)
    w50 = _side_lat(nosync, "write", "p50") if nosync else None
    if w50 is not None:
        cap += f" The same write without fdatasync: p50 {_num(w50, 1)} µs."
    out.append(_figure(lat_chart, cap))
    rate_chart = svg.bar_chart("Commits per second", cats, [
        Series("commits/s", [(k, p.get("iops")) for k, p in enumerate(pts)], svg.colour(4)),
    ], y_label="commits/s", unit="/s", desc="Commit throughput for each number of writers.")
    out.append(_figure(rate_chart, "Total over all writers; with one writer, commits/s × latency ≈ 1 s."))
    return out


def _chart_steady(ss: Any) -> str | None:
    if not isinstance(ss, dict):
        return None
    rounds = [r for r in (ss.get("round_iops") or []) if _isnum(r)]
    if not rounds:
        return None
    window = ss.get("window") if isinstance(ss.get("window"), list) else []
    bands, refs = [], []
    if window and len(window) <= len(rounds):
        bands.append(Band(len(rounds) - len(window) + 1, len(rounds), "measurement window"))
    if _isnum(ss.get("average")):
        refs.append(RefLine(ss["average"], f"window average {svg.fmt_num(ss['average'])}"))
    chart = svg.line_chart("Preconditioning: 4 KiB random write IOPS per round",
                           [Series("IOPS per round", list(enumerate(rounds, start=1)), svg.colour(1))],
                           x_label="round", y_label="IOPS", bands=bands, ref_lines=refs,
                           desc="SNIA PTS steady-state rounds.")
    reached = ss.get("reached")
    verdict = ("<span class=verdict-ok>steady state reached</span>" if reached is True
               else "<span class=verdict-suspect>steady state not reached</span>")
    cap = (f"{verdict} after {_num(ss.get('rounds') or len(rounds))} rounds; range {_num(ss.get('range_pct'), 1)}% "
           f"(limit 20%), excursion {_num(ss.get('excursion_pct'), 1)}% (limit 10%). {_e(ss.get('rule') or '')}")
    return _figure(chart, cap)


def _chart_fill(fill: Any) -> list[str]:
    if not isinstance(fill, list):
        return []
    rows = [f for f in fill if isinstance(f, dict) and _isnum(f.get("fs_used_pct"))]
    if not rows:
        return []
    seq = svg.line_chart("Sequential write as the filesystem fills",
                         [Series("1 MiB sequential write", [(f["fs_used_pct"], f.get("seq_write_mbps")) for f in rows],
                                 svg.colour(0))],
                         x_label="filesystem used (%)", y_label="MB/s", desc="Write throughput against fill level.")
    rnd = svg.line_chart("4 KiB random write as the filesystem fills",
                         [Series("IOPS", [(f["fs_used_pct"], f.get("rand_write_iops_4k")) for f in rows],
                                 svg.colour(1))],
                         x_label="filesystem used (%)", y_label="IOPS", desc="Random write IOPS against fill level.")
    return [_figure(seq, "Each step writes a new file, then measures."),
            _figure(rnd, "Random writes over all the files written so far.")]


# -- probe tables --------------------------------------------------------------------------

def _verdict_html(verdict: Any) -> str:
    if verdict is None:
        return "—"
    cls = "verdict-ok" if verdict == "ok" else ("verdict-suspect" if verdict == "suspect" else "verdict-unknown")
    return f'<span class="{cls}">{_e(verdict)}</span>'


def _summary_table(target: dict[str, Any]) -> str:
    s = target.get("summary") if isinstance(target.get("summary"), dict) else {}
    rows = []
    for key in SUMMARY_KEYS:
        if key in ("fsync_honesty", "fsync_honesty_reason"):
            continue
        label, unit, digits = SUMMARY_LABELS.get(key, (key.replace("_", " "), "", 1))
        v = s.get(key)
        cell = _num(v, digits) if _isnum(v) else '<span class="na">not measured</span>'
        rows.append(f'<tr><td>{_e(label)}</td><td class="num">{cell}</td><td class="unit">{_e(unit)}</td></tr>')
    verdict = s.get("fsync_honesty")
    reason = s.get("fsync_honesty_reason")
    rows.append(f'<tr><td>fsync honesty</td><td class="num">{_verdict_html(verdict)}</td><td></td></tr>')
    if reason:
        rows.append(f'<tr><td colspan="3" class="reason">{_e(reason)}</td></tr>')
    return ('<table class="summary"><thead><tr><th>measure</th><th class="num">value</th><th>unit</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table>')


def _fsync_card(target: dict[str, Any]) -> str:
    h = target.get("fsync_honesty")
    if not isinstance(h, dict):
        return ('<div class="card"><h4>fsync honesty</h4><p class="na">not judged: the commit test did not '
                'finish for this target.</p></div>')
    items = []
    for c in h.get("checks") or []:
        if not isinstance(c, dict):
            continue
        passed = c.get("passed")
        mark, cls = ("✓", "pass") if passed is True else (("✗", "fail") if passed is False else ("–", "na"))
        items.append(f'<li><span class="{cls}">{mark}</span> <b>{_e(c.get("name"))}</b>: {_e(c.get("detail"))}</li>')
    warn = ""
    if h.get("verdict") not in (None, "ok"):
        warn = ('<p class="note bad">A device or layer that acknowledges a flush before the data is durable loses '
                'committed transactions at power loss: its commit figures are not comparable with honest ones.</p>')
    return (f'<div class="card"><h4>fsync honesty: {_verdict_html(h.get("verdict"))}</h4>'
            f'<ul class="checks">{"".join(items)}</ul>{warn}</div>')


def _target_facts(target: dict[str, Any], mt: dict[str, Any] | None) -> str:
    bd = (mt or {}).get("block_device") or {}
    rows = [("path", f"<code>{_e(target.get('path'))}</code>"),
            ("kind", _e(target.get("kind") or "—")),
            ("filesystem", _e(target.get("filesystem") or (mt or {}).get("filesystem") or "—")),
            ("device", _e(" · ".join(str(x) for x in (bd.get("name"), bd.get("model"), bd.get("driver")) if x)
                          or "—")),
            ("test file", _e(human_bytes(target["file_bytes"])) if _isnum(target.get("file_bytes")) else "—"),
            ("I/O", "direct (O_DIRECT)" if target.get("direct_io") is not False else
             "<b>buffered, through the page cache</b>"),
            ("points measured", _num(len(_points(target))))]
    return _kv(rows)


def _points_table(points: list[dict[str, Any]]) -> str:
    headers = ["test", "group", "jobs×qd", "outstanding", "streams or writers", "IOPS", "MB/s",
               "p50 µs", "p99 µs", "p99.9 µs", "CPU cores", "engine", "direct"]
    rows = []
    for p in points:
        commit = isinstance(p.get("commit_lat_us"), dict)
        lat = p.get("commit_lat_us") if commit else (p.get("lat_us") or {})
        lat = lat if isinstance(lat, dict) else {}
        mark = "†" if commit else ""
        sw = p.get("streams") if p.get("streams") is not None else p.get("writers")
        rows.append([_e(p.get("test")) + mark, _e(p.get("group")), f"{_e(p.get('jobs'))}×{_e(p.get('iodepth'))}",
                     _num(p.get("outstanding")), _num(sw) if sw is not None else "",
                     _num(p.get("iops")), _num(p.get("mbps"), 1),
                     _num(lat.get("p50"), 1), _num(lat.get("p99"), 1), _num(lat.get("p999"), 1),
                     _num(p.get("cpu_cores"), 2), _e(p.get("ioengine") or ""), _yes_no(p.get("direct"))])
    table = _table(headers, rows, num_cols=(3, 4, 5, 6, 7, 8, 9, 10), cls="points")
    return (f'<details><summary>All {len(points)} measured points</summary><div class="wide">{table}</div>'
            '<p class="reason">† commit latency: the buffered write plus its fdatasync. Other latencies: fio '
            'completion latency per I/O. CPU cores: fio\'s own user + system time.</p></details>')


def _fill_table(fill: Any) -> str:
    if not isinstance(fill, list) or not fill:
        return ""
    rows = [[_e(human_bytes(f["filled_bytes"])) if _isnum(f.get("filled_bytes")) else "—",
             _num(f.get("fs_used_pct"), 1), _num(f.get("seq_write_mbps"), 0), _num(f.get("rand_write_iops_4k")),
             _num(f.get("rand_write_lat_us_p99"), 1)] for f in fill if isinstance(f, dict)]
    return ("<h4>Fill</h4>" + _table(["written", "filesystem used %", "seq write MB/s", "4k rand write IOPS",
                                        "4k rand write p99 µs"], rows, num_cols=(1, 2, 3, 4)))


def _machine_target(doc: dict[str, Any], target: dict[str, Any], index: int) -> dict[str, Any] | None:
    mts = [m for m in (_get(doc, "machine", "targets") or []) if isinstance(m, dict)]
    for m in mts:
        if m.get("path") == target.get("path") or m.get("device") == target.get("path"):
            return m
    return mts[index] if index < len(mts) else None


def _probe_target(doc: dict[str, Any], target: dict[str, Any], j: int, anchor: str) -> str:
    points = _points(target)
    status = target.get("status")
    out = [f'<h3 id="{anchor}">Target <code>{_e(target.get("path") or f"target {j + 1}")}</code> '
           f'{_badge(status)}</h3>']
    if status not in ("ok", None):
        out.append(f'<p class="note">This target\'s probe is <b>{_e(status)}</b>: {len(points)} point(s) were '
                   'measured before it stopped; the figures below show only what finished.</p>')
    mt = _machine_target(doc, target, j)
    out.append('<div class="top"><div>')
    out.append("<h4>Summary</h4>" + _summary_table(target))
    out.append("</div><div>")
    out.append("<h4>Target</h4>" + _target_facts(target, mt))
    out.append(_fsync_card(target))
    out.append("</div></div>")
    figures = [f for f in (_chart_iops(points), _chart_latency(points), _chart_sequential(points)) if f]
    figures += _chart_commit(points)
    ss = _chart_steady(target.get("steady_state"))
    if ss:
        figures.append(ss)
    figures += _chart_fill(target.get("fill"))
    if figures:
        out.append('<h4>Charts</h4><div class="charts">' + "".join(figures) + "</div>")
    else:
        out.append('<p class="na">No points were measured for this target.</p>')
    out.append(_fill_table(target.get("fill")))
    if points:
        out.append(_points_table(points))
    return "".join(out)


# -- machine and method --------------------------------------------------------------------

def _machine_section(doc: dict[str, Any]) -> str:
    m = doc.get("machine")
    if not isinstance(m, dict) or not m:
        return ""
    cpu = m.get("cpu_model") or "—"
    if _isnum(m.get("cpu_count")):
        cpu = f"{cpu} × {m['cpu_count']} CPUs"
    rows = [("host", _e(m.get("hostname") or "—")), ("OS", _e(m.get("os") or "—")),
            ("kernel", _e(m.get("kernel") or "—") + (f" ({_e(m['arch'])})" if m.get("arch") else "")),
            ("CPU", _e(cpu)),
            ("memory", _e(human_bytes(m["memory_bytes"])) if _isnum(m.get("memory_bytes")) else "—")]
    known = {"hostname", "os", "kernel", "arch", "cpu_model", "cpu_count", "memory_bytes", "targets", "versions"}
    rows += [(k.replace("_", " "), _json_value(v)) for k, v in m.items() if k not in known]
    out = ["<h4>Host</h4>", _kv(rows)]
    mts = [t for t in (m.get("targets") or []) if isinstance(t, dict)]
    storage = ""
    if mts:
        def bd(t: dict[str, Any]) -> dict[str, Any]:
            return t["block_device"] if isinstance(t.get("block_device"), dict) else {}

        def blocks(t: dict[str, Any]) -> str:
            b = bd(t)
            if not _isnum(b.get("logical_block_bytes")):
                return "—"
            return f"{b['logical_block_bytes']} / {_e(b.get('physical_block_bytes', '?'))} B"

        attrs: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
            ("mount point", lambda t: _e(t.get("mount_point") or "—")),
            ("filesystem", lambda t: _e(t.get("filesystem") or "—")),
            ("mount options", lambda t: f'<code class="wrap">{_e(t.get("mount_options") or "—")}</code>'),
            ("source", lambda t: _e(t.get("source") or "—")),
            ("device", lambda t: _e(" · ".join(dict.fromkeys(str(x) for x in (bd(t).get("name"), bd(t).get("disk"))
                                                             if x)) or "—")),
            ("device model", lambda t: _e(bd(t).get("model") or "—")),
            ("driver", lambda t: _e(bd(t).get("driver") or "—")),
            ("virtual", lambda t: _yes_no(bd(t).get("virtual"))),
            ("rotational", lambda t: _yes_no(bd(t).get("rotational"))),
            ("scheduler", lambda t: _e(bd(t).get("scheduler") or "—")),
            ("write cache", lambda t: _e(bd(t).get("write_cache") or "—")),
            ("logical / physical block", blocks),
            ("device size", lambda t: _e(human_bytes(bd(t)["size_bytes"])) if _isnum(bd(t).get("size_bytes"))
             else "—"),
        ]
        heads = ["", *(f"<code>{_e(t.get('path') or t.get('device'))}</code>" for t in mts)]
        rows = [[_e(name), *(fn(t) for t in mts)] for name, fn in attrs]
        storage = "<h4>Storage</h4>" + '<div class="wide">' + _table(heads, rows, cls="storage") + "</div>"
        if any(bd(t).get("virtual") for t in mts):
            storage += ('<p class="reason">On a virtual disk the rotational flag and the write-cache mode are the '
                        'hypervisor driver\'s defaults and say little about the media underneath.</p>')
    versions = m.get("versions")
    tools = ""
    if isinstance(versions, dict) and versions:
        tools = "<h4>Tool versions</h4>" + _kv((k, _e(v) if v is not None else '<span class="na">not installed</span>')
                                               for k, v in versions.items())
    return ('<h3>Machine</h3><div class="top"><div>' + "".join(out) + "</div><div>" + tools + "</div></div>"
            + storage)


def _levels(levels: Any) -> str:
    if not isinstance(levels, list) or not levels:
        return "—"
    parts = []
    for lv in levels:
        if isinstance(lv, (list, tuple)) and len(lv) == 2 and all(_isnum(x) for x in lv):
            parts.append(f"{lv[0]}×{lv[1]}")
        else:
            parts.append(_e(lv))
    outs = [lv[0] * lv[1] for lv in levels if isinstance(lv, (list, tuple)) and len(lv) == 2
            and all(_isnum(x) for x in lv)]
    rng = f" (outstanding I/O {min(outs)} to {max(outs)}, doubling)" if outs else ""
    return ", ".join(parts) + " jobs × queue depth" + rng


def _method_section(doc: dict[str, Any]) -> str:
    p = doc.get("params") if isinstance(doc.get("params"), dict) else {}
    fio = _get(doc, "machine", "versions", "fio")
    direct = p.get("direct_io")
    rows = [("engine", _e(p.get("engine") or "fio") + (f" {_e(fio)}" if fio else "")),
            ("I/O path", "direct I/O (O_DIRECT): the page cache is bypassed" if direct is not False else
             "<b>buffered</b>: through the page cache (asked for with --buffered); figures include caching"),
            ("profile", _e(p.get("profile") or "—")),
            ("seconds per point", (f"{_num(p.get('point_s'), 1)} s measured after {_num(p.get('ramp_s'), 1)} s of "
                                   "warm-up, which is excluded") if _isnum(p.get("point_s")) else "—"),
            ("load levels", _levels(p.get("load_levels"))),
            ("sweep stop", (f"a random sweep stops once p99 latency passes {_num(p.get('max_lat_ms'), 0)} ms or IOPS "
                            "stops growing") if _isnum(p.get("max_lat_ms")) else "—"),
            ("latency", _e(p.get("latency") or "—")),
            ("commit pattern", _e(p.get("commit_pattern") or "—")),
            ("tests", _e(", ".join(map(str, p.get("tests") or [])) or "—")),
            ("free-space margin", f"{_num(p.get('margin_pct'), 0)}% of the filesystem left untouched"
             if _isnum(p.get("margin_pct")) else "—"),
            ("fill test", _yes_no(p.get("fill")))]
    known = {"engine", "direct_io", "profile", "point_s", "ramp_s", "load_levels", "max_lat_ms", "latency",
             "commit_pattern", "tests", "margin_pct", "fill"}
    rows += [(k.replace("_", " "), _json_value(v)) for k, v in p.items() if k not in known]
    return ("<h3>How the numbers were obtained</h3>"
            "<p>Each point is one fio run against a test file dbtier created; random tests sweep the number of "
            "outstanding I/Os, sequential tests the number of streams, commit tests the number of writers. "
            "MB/s counts 10⁶ bytes; latencies are in microseconds.</p>" + _kv(rows))


# -- sections ------------------------------------------------------------------------------------

def _errors(doc: dict[str, Any]) -> str:
    errs = doc.get("errors")
    if not isinstance(errs, list) or not errs:
        return ""
    items = []
    for e in errs:
        if isinstance(e, dict):
            where = f"<code>{_e(e.get('target'))}</code>: " if e.get("target") else ""
            hint = f" <span class=reason>next: {_e(e.get('hint'))}</span>" if e.get("hint") else ""
            items.append(f"<li>{where}{_e(e.get('message'))}{hint}</li>")
        else:
            items.append(f"<li>{_e(e)}</li>")
    return f'<div class="note bad"><b>Errors</b><ul>{"".join(items)}</ul></div>'


def _run_head(doc: dict[str, Any], i: int, anchor: str) -> str:
    return (f'<h2 id="{anchor}">{_e(doc.get("command") or "unknown")} · {_e(_run_name(doc, i))} '
            f'{_badge(doc.get("status"))}</h2>'
            f'<p class="sub">started {_time(doc.get("started_at"))} · finished {_time(doc.get("finished_at"))} · '
            f'took {_duration(doc.get("started_at"), doc.get("finished_at"))}'
            + (f' · dbtier {_e(doc.get("dbtier_version"))}' if doc.get("dbtier_version") else "")
            + (f' · <code>{_e(doc.get("_run_dir"))}</code>' if doc.get("_run_dir") else "") + "</p>")


def _json_details(doc: dict[str, Any]) -> str:
    text = json.dumps({k: v for k, v in doc.items() if k not in ("_children", "_parent")}, indent=2, default=str,
                      sort_keys=False)
    return f"<details><summary>Result document (JSON)</summary><pre>{_e(text)}</pre></details>"


def _probe_section(doc: dict[str, Any], i: int) -> str:
    anchor = f"run-{i + 1}"
    out = [_run_head(doc, i, anchor), _errors(doc), _guards_html(doc)]
    targets = [t for t in (doc.get("targets") or []) if isinstance(t, dict)]
    if not targets:
        out.append('<p class="note">This probe has no targets yet: it stopped before measuring anything.</p>')
    for j, t in enumerate(targets):
        out.append(_probe_target(doc, t, j, f"{anchor}-t{j + 1}"))
    out.append(_method_section(doc))
    out.append(_machine_section(doc))
    return f'<section class="run probe">{"".join(out)}</section>'


def _generic_section(doc: dict[str, Any], i: int, note: str = "") -> str:
    anchor = f"run-{i + 1}"
    out = [_run_head(doc, i, anchor)]
    if not note:
        note = (f"This report does not draw {doc.get('command') or 'unknown'} runs yet: their parameters, machine "
                "and result document follow.")
    out.append(f'<p class="note">{_e(note)}</p>')
    out.append(_errors(doc))
    params = doc.get("params")
    if isinstance(params, dict) and params:
        out.append("<h4>Parameters</h4>" + _kv((k, _json_value(v)) for k, v in params.items()))
    out.append(_machine_section(doc))
    out.append(_json_details(doc))
    return f'<section class="run generic">{"".join(out)}</section>'


# -- plan ------------------------------------------------------------------------------------------

# (key in an array dict, label, unit, digits) for the side-by-side figure tables
_PLAN_FIGURES = (("price_usd", "price", "$", 0), ("capacity_gb", "usable capacity", "GB", 0),
                 ("read_iops", "random read", "IOPS", 0), ("write_iops", "random write", "IOPS", 0),
                 ("iops", "random mix", "IOPS", 0), ("read_mbps", "sequential read", "MB/s", 0),
                 ("write_mbps", "sequential write", "MB/s", 0), ("read_latency_us", "read latency", "µs", 0),
                 ("write_latency_us", "write latency", "µs", 0), ("usd_per_gb", "$/GB", "$", 2),
                 ("usd_per_iops", "$/IOPS", "$", 3), ("usd_per_mbps", "$ per MB/s", "$", 2))


def _usd(x: Any, digits: int = 0) -> str:
    return f"${_num(x, digits)}" if _isnum(x) else "—"


def _arrays_charts(names: Sequence[str], arrays: Sequence[dict[str, Any]], highlight: int | None = None) -> str:
    """Side-by-side bar charts of price, capacity, IOPS, MB/s and latency, one row per configuration."""
    def pts(key: str) -> list[tuple[float, float | None]]:
        return [(k, a.get(key) if _isnum(a.get(key)) else None) for k, a in enumerate(arrays)]

    r = next((a.get("read_fraction") for a in arrays if _isnum(a.get("read_fraction"))), None)
    mix = f"mix ({r:.0%} reads)" if _isnum(r) else "mix"
    charts = [
        (svg.hbar_chart("Price", names, [Series("price", pts("price_usd"), svg.colour(0))], unit="USD",
                        x_label="US dollars, overhead included", highlight=highlight),
         "Devices plus controller/enclosure overhead units."),
        (svg.hbar_chart("Usable capacity", names, [Series("capacity", pts("capacity_gb"), svg.colour(4))],
                        unit="GB", x_label="GB (10⁹ bytes)", highlight=highlight),
         "After the layout's redundancy."),
        (svg.hbar_chart("Random IOPS", names, [Series("read", pts("read_iops"), svg.colour(0)),
                                               Series("write", pts("write_iops"), svg.colour(1)),
                                               Series(mix, pts("iops"), svg.colour(3))],
                        unit="IOPS", x_label="IOPS", highlight=highlight),
         "Writes after the layout's write penalty; the mix is time-weighted."),
        (svg.hbar_chart("Sequential MB/s", names, [Series("read", pts("read_mbps"), svg.colour(0)),
                                                   Series("write", pts("write_mbps"), svg.colour(1))],
                        unit="MB/s", x_label="MB/s (10⁶ bytes)", highlight=highlight),
         "The least of the devices and the controller/bus ceilings."),
        (svg.hbar_chart("Latency (one I/O, nothing queued)", names,
                        [Series("read", pts("read_latency_us"), svg.colour(0)),
                         Series("write", pts("write_latency_us"), svg.colour(1))],
                        unit="µs", x_label="microseconds (shorter is better)", highlight=highlight),
         "From the catalog's device figures; a raid5/6 small write reads before it writes."),
    ]
    return '<div class="charts">' + "".join(_figure(c, cap) for c, cap in charts) + "</div>"


def _arrays_table(names: Sequence[str], arrays: Sequence[dict[str, Any]]) -> str:
    """Figures side by side; each cell names what limits it (from the array's `limits`)."""
    heads = ["", *(_e(n) for n in names)]
    rows = []
    for key, label, unit, digits in _PLAN_FIGURES:
        cells = [_e(label) + (f' <span class="reason">{_e(unit)}</span>' if unit != "$" else "")]
        for a in arrays:
            v = a.get(key)
            text = _usd(v, digits) if unit == "$" else _num(v, digits)
            lim = _get(a, "limits", key)
            if isinstance(lim, dict) and lim.get("limit"):
                text += (f'<br><span class="reason" title="{_e(lim.get("detail"))}">'
                         f'{_e(lim.get("limit"))}</span>')
            cells.append(text)
        rows.append(cells)
    return '<div class="wide">' + _table(heads, rows, num_cols=range(1, len(heads)), cls="plan") + "</div>"


def _array_name(a: dict[str, Any]) -> str:
    if not isinstance(a, dict):
        return "?"
    name = f"{_num(a.get('count'))} × {a.get('device')}"
    sec = a.get("second")
    if isinstance(sec, dict):
        name += f" + {_num(sec.get('count'))} × {sec.get('device')}"
    return name


def _plan_equivalent(doc: dict[str, Any]) -> str:
    ref = doc.get("reference") if isinstance(doc.get("reference"), dict) else {}
    using = _get(doc, "using", "device") or "?"
    layout = _get(doc, "using", "layout") or "jbod"
    by = doc.get("by_metric") if isinstance(doc.get("by_metric"), dict) else {}
    arrays = doc.get("arrays") if isinstance(doc.get("arrays"), dict) else {}
    matched = doc.get("matched") if isinstance(doc.get("matched"), dict) else {}
    out = [f"<h3>Equal performance: <code>{_e(using)}</code> ({_e(layout)}) against one "
           f"<code>{_e(ref.get('device'))}</code></h3>",
           f'<p class="sub">How many {_e(using)}, with their controller/enclosure overhead, match one '
           f'{_e(ref.get("device"))} on each metric, and what that costs.</p>']
    rows = []
    for metric in ("iops", "throughput", "capacity"):
        m = by.get(metric)
        if not isinstance(m, dict):
            continue
        ratio = m.get("price_ratio")
        rows.append([_e(metric), _e(matched.get(metric) or ""), _num(m.get("count")), _usd(m.get("price_usd")),
                     _usd(m.get("reference_price_usd")),
                     (f"{ratio:,.2f}×" if _isnum(ratio) else "—")])
    out.append(_table(["metric", "to match", "count", "price", "reference price", "price ratio"], rows,
                      num_cols=(2, 3, 4, 5)))
    names = [f"1 × {ref.get('device')}"]
    arrs = [ref]
    for metric in ("iops", "throughput", "capacity"):
        a = arrays.get(metric)
        if isinstance(a, dict):
            names.append(f"{_array_name(a)} ({metric})")
            arrs.append(a)
    if len(arrs) > 1:
        out.append("<h4>Side by side</h4>" + _arrays_charts(names, arrs, highlight=0))
        out.append(_arrays_table(names, arrs))
    return "".join(out)


def _plan_budget(doc: dict[str, Any]) -> str:
    opts = [o for o in (doc.get("options") or []) if isinstance(o, dict)]
    usd, layout = doc.get("usd"), doc.get("layout") or "jbod"
    out = [f"<h3>Equal budget: what {_usd(usd)} buys ({_e(layout)})</h3>",
           '<p class="sub">The most of each device the budget buys, controller/enclosure overhead included.</p>']
    rows = []
    for o in opts:
        rows.append([f"<code>{_e(o.get('device'))}</code>", _num(o.get("count")), _usd(o.get("price_usd")),
                     _num(o.get("capacity_gb")), _num(o.get("iops")), _num(o.get("read_mbps")),
                     _num(o.get("write_mbps")), _num(o.get("read_latency_us")), _num(o.get("write_latency_us")),
                     _e(o.get("note") or "")])
    out.append('<div class="wide">' + _table(["device", "count", "price", "GB", "IOPS (mix)", "read MB/s",
                                               "write MB/s", "read µs", "write µs", ""], rows,
                                              num_cols=range(1, 9)) + "</div>")
    bought = [o for o in opts if _isnum(o.get("count")) and o["count"] > 0]
    if bought:
        arrs = [o["array"] if isinstance(o.get("array"), dict) else o for o in bought]
        names = [_array_name(a) for a in arrs]
        out.append("<h4>Side by side</h4>" + _arrays_charts(names, arrs))
        out.append(_arrays_table(names, arrs))
    return "".join(out)


def _margin_cell(m: Any, headroom: Any) -> str:
    if not isinstance(m, dict):
        return "—"
    met = m.get("met")
    cls, mark = ("pass", "✓") if met is True else (("fail", "✗") if met is False else ("na", "–"))
    margin = m.get("margin")
    if not _isnum(margin):
        text = "—"
    elif margin >= 1 and m.get("offered", 0) >= (m.get("required") or math.inf):   # 2x or more: as a multiple
        x = margin + 1
        text = f"{x:,.0f}×" if x >= 10 else f"{x:.1f}×"
    else:
        text = f"{margin * 100:+,.0f}%"
    tip = f"offered {_num(m.get('offered'))}, required {_num(m.get('required'))}"
    return f'<span class="{cls}" title="{_e(tip)}">{mark} {_e(text)}</span>'


_REQ_LABELS = {"read_iops": "read IOPS", "write_iops": "write IOPS", "read_mbps": "read MB/s",
               "write_mbps": "write MB/s", "capacity_gb": "capacity GB", "read_latency_us": "read latency µs"}


def _plan_size(doc: dict[str, Any]) -> str:
    req = doc.get("requirement") if isinstance(doc.get("requirement"), dict) else {}
    cands = [c for c in (doc.get("candidates") or []) if isinstance(c, dict)]
    headroom = req.get("headroom")
    out = ["<h3>Cheapest configurations that meet the requirement</h3>"]
    kv = [(_REQ_LABELS.get(k, k), _num(req.get(k))) for k in ("read_iops", "write_iops", "read_mbps", "write_mbps",
                                                              "capacity_gb") if _isnum(req.get(k))]
    if _isnum(req.get("max_read_latency_us")):
        kv.append(("read latency ceiling", f"{_num(req['max_read_latency_us'])} µs"))
    kv.append(("headroom", f"{headroom:.0%}" if _isnum(headroom) else "—"))
    if req.get("source"):
        kv.append(("from", _e(req.get("source"))))
    out.append(_kv(kv))
    binding = doc.get("binding")
    if binding:
        out.append(f'<p class="note"><b>Binding requirement: {_e(binding)}</b> — '
                   f'{_e(doc.get("binding_detail") or "")}</p>')
    keys = list(dict.fromkeys(k for c in cands for k in (c.get("meets") or {}) if isinstance(c.get("meets"), dict)))
    heads = ["#", "configuration", "price", "GB", "IOPS read / write", "MB/s read / write", "read µs", "binding",
             *(f"{_e(_REQ_LABELS.get(k, k))}<br>margin" for k in keys)]

    def pair(a: Any, b: Any) -> str:
        return f"{svg.fmt_num(a) if _isnum(a) else '—'} / {svg.fmt_num(b) if _isnum(b) else '—'}"

    rows = []
    for i, c in enumerate(cands, 1):
        meets = c.get("meets") if isinstance(c.get("meets"), dict) else {}
        rows.append([str(i), _e(c.get("description") or _array_name(c)), _usd(c.get("price_usd")),
                     _num(c.get("capacity_gb")), pair(c.get("read_iops"), c.get("write_iops")),
                     pair(c.get("read_mbps"), c.get("write_mbps")), _num(c.get("read_latency_us")),
                     f"<b>{_e(c.get('binding') or '')}</b>" if i == 1 else _e(c.get("binding") or ""),
                     *(_margin_cell(meets.get(k), headroom) for k in keys)])
    if rows:
        out.append('<div class="wide">' + _table(heads, rows, num_cols=(2, 3, 4, 5, 6, *range(8, 8 + len(keys))),
                                                 cls="cands") + "</div>")
        out.append('<p class="reason">Ranked by price. Margin = offered / required − 1 (read and write rates '
                   'offered while the other is also served), shown as a multiple from 2× up; a requirement is met '
                   'when its margin is at least the headroom. The binding requirement is the one whose own smallest '
                   'configuration costs the most (or latency, when it ruled out a cheaper one).</p>')
    else:
        out.append('<p class="na">No candidates in this document.</p>')
    return "".join(out)


def _plan_value(doc: dict[str, Any]) -> str:
    v = doc.get("value") if isinstance(doc.get("value"), dict) else {}
    cfg = doc.get("config") if isinstance(doc.get("config"), dict) else {}
    res = doc.get("result") if isinstance(doc.get("result"), dict) else {}
    out = [f"<h3>Price/performance of <code>{_e(res.get('run_dir'))}</code> ({_e(res.get('kind') or '?')} run) as "
           f"{_e(cfg.get('description') or _array_name(cfg))}</h3>"]
    labels = (("tpm_per_usd", "TPM per $", 3), ("tps_per_usd", "TPS per $", 4), ("iops_per_usd", "IOPS per $", 3),
              ("mbps_per_usd", "MB/s per $", 4), ("usd_per_gb", "$ per usable GB", 2),
              ("usd_per_tpm", "$ per TPM", 2), ("usd_per_tps", "$ per TPS", 2), ("usd_per_iops", "$ per IOPS", 3))
    rows = [[_e(label), _num(v.get(k), d)] for k, label, d in labels if _isnum(v.get(k))]
    out.append(_table(["figure", "value"], rows, num_cols=(1,)))
    used = [u for u in (doc.get("figures_used") or []) if isinstance(u, str)]
    if used:
        out.append("<h4>Which figures were used</h4><ul>" + "".join(f"<li>{_e(u)}</li>" for u in used) + "</ul>")
    measured = doc.get("measured")
    if isinstance(measured, dict) and measured:
        out.append("<h4>Measured</h4>" + _kv((k.replace("_", " "), _json_value(x)) for k, x in measured.items()))
    if cfg:
        out.append("<h4>The configuration, from the catalog</h4>" + _arrays_table([_array_name(cfg)], [cfg]))
    return "".join(out)


_PLAN_ACTIONS: dict[str, Callable[[dict[str, Any]], str]] = {
    "equivalent": _plan_equivalent, "budget": _plan_budget, "size": _plan_size, "value": _plan_value}


def _plan_section(doc: dict[str, Any], i: int) -> str:
    anchor = f"run-{i + 1}"
    out = [_run_head(doc, i, anchor), _errors(doc)]
    render = _PLAN_ACTIONS.get(doc.get("plan"))  # type: ignore[arg-type]
    if render is None:
        out.append(f'<p class="note">This plan document has no known action ({_e(doc.get("plan"))}); its raw '
                   "content follows.</p>")
    else:
        out.append(render(doc))
    files = _get(doc, "catalog", "files")
    if isinstance(files, list) and files:
        over = _get(doc, "catalog", "overridden")
        extra = f"; overridden: {_json_value(list(over))}" if isinstance(over, dict) and over else ""
        out.append(f'<p class="reason">Catalog: {_json_value(files)}{extra}. Figures are the catalog\'s datasheet '
                   "figures; the array model is described in <code>dbtier.model.array</code>.</p>")
    out.append(_json_details(doc))
    return f'<section class="run plan">{"".join(out)}</section>'


# -- bench oltp ------------------------------------------------------------------------------------

# Where backends spent their time, and the bottleneck classes: one colour each, in every chart.
WAIT_CLASSES = ("cpu", "storage", "commit", "lock", "client", "other", "idle")
WAIT_COLOURS = {"cpu": svg.colour(2), "storage": svg.colour(0), "commit": svg.colour(1), "lock": svg.colour(6),
                "client": svg.colour(3), "other": svg.colour(9), "idle": "#d0d0d0"}
_ROLES = ("data", "index", "wal", "temp")
_ROLE_LABELS = {"data": "tables (data)", "index": "indexes", "wal": "WAL", "temp": "temp"}
_WORKLOAD_NAMES = F.WORKLOAD_NAMES
_WORKLOAD_METHOD = {
    "tpcc": "TPC-C-like: the five transactions (new-order, payment, order-status, delivery, stock-level in a "
            "45/43/4/4/4 mix) as PL/pgSQL functions driven by pgbench, 1% of new orders rolled back, TPC-C's "
            "cardinalities. NOPM counts new orders per minute (from district.d_next_o_id); TPM counts all "
            "transactions. It is not TPC-C and its figures are not tpmC.",
    "tpcb": "pgbench's built-in TPC-B-like script: three updates, a select and an insert per transaction.",
    "select-only": "pgbench's built-in select-only script: one primary-key lookup per transaction.",
    "readmix": "80% 100-row index range scans and 20% update + insert.",
}
_MATRIX_STEPS = {"all-slow": "everything on the slow directory", "index-fast": "indexes moved to fast",
                 "tables-fast": "+ tables fast", "wal-fast": "+ WAL fast", "temp-fast": "+ temp fast",
                 "all-fast": "everything on the fast directory"}


def _oltp_points(x: Any) -> list[dict[str, Any]]:
    """The points with a client count, in client order."""
    pts = [p for p in x if isinstance(p, dict) and _isnum(p.get("clients"))] if isinstance(x, list) else []
    return sorted(pts, key=lambda p: p["clients"])


def _best_point(points: list[dict[str, Any]]) -> dict[str, Any] | None:
    pts = [p for p in points if _isnum(p.get("tps"))]
    return max(pts, key=lambda p: p["tps"]) if pts else None


def _knee_point(points: list[dict[str, Any]], knee: Any) -> dict[str, Any] | None:
    c = _get(knee, "clients")
    return next((p for p in points if p.get("clients") == c), None) if _isnum(c) else None


def _devices(p: dict[str, Any] | None) -> list[dict[str, Any]]:
    ds = (p or {}).get("devices")
    return [d for d in ds if isinstance(d, dict)] if isinstance(ds, list) else []


def _dev_max(p: dict[str, Any] | None, key: str) -> float | None:
    vals = [d[key] for d in _devices(p) if _isnum(d.get(key))]
    return max(vals) if vals else None


def _clients_label(c: Any) -> str:
    return f"{_num(c)} client" + ("" if c == 1 else "s")


def _plural(n: Any, word: str) -> str:
    return f"{_num(n)} {word}" + ("" if n == 1 else "s")


def _oltp_workload(doc: dict[str, Any], load: Any) -> str:
    p = doc.get("params") if isinstance(doc.get("params"), dict) else {}
    w = p.get("workload") or _get(load, "workload")
    name = _WORKLOAD_NAMES.get(w, str(w or "?"))
    if w == "tpcc":
        n = _get(load, "warehouses") if _isnum(_get(load, "warehouses")) else p.get("warehouses")
        return f"{name}, {_plural(n, 'warehouse')}" if _isnum(n) else name
    s = _get(load, "scale") if _isnum(_get(load, "scale")) else p.get("scale")
    return f"{name}, scale {_num(s)}" if _isnum(s) else name


def _matrix_dirs(doc: dict[str, Any]) -> dict[str, str]:
    """{'fast': FAST, 'slow': SLOW} from --placement-matrix FAST,SLOW; {} otherwise."""
    m = _get(doc, "params", "placement_matrix")
    parts = [x.strip() for x in m.split(",")] if isinstance(m, str) else []
    return {"fast": parts[0], "slow": parts[1]} if len(parts) == 2 and all(parts) else {}


def _under(path: str, d: str) -> bool:
    d = d.rstrip("/") or "/"
    return path == d or path.startswith(d if d.endswith("/") else d + "/")


def _tier(path: Any, dirs: dict[str, str]) -> str | None:
    """'fast' or 'slow' for a directory under one of the matrix directories (the longer match wins)."""
    if not isinstance(path, str):
        return None
    hits = [(len(d), t) for t, d in dirs.items() if _under(path, d)]
    return max(hits)[1] if hits else None


def _tier_tag(tier: str | None) -> str:
    return f'<span class="tier {tier}">{tier}</span>' if tier in ("fast", "slow") else ""


def _block_device(doc: dict[str, Any], path: Any) -> str:
    """The block device under a directory, from the machine's targets (the longest matching path)."""
    if not isinstance(path, str):
        return ""
    best, name = -1, ""
    for t in _get(doc, "machine", "targets") or []:
        if isinstance(t, dict) and isinstance(t.get("path"), str) and _under(path, t["path"]):
            bd = t.get("block_device") if isinstance(t.get("block_device"), dict) else {}
            if len(t["path"]) > best:
                best = len(t["path"])
                name = " · ".join(str(x) for x in (bd.get("name"), t.get("filesystem")) if x)
    return name


def _placement_table(doc: dict[str, Any], placement: Any, dirs: dict[str, str]) -> str:
    if not isinstance(placement, dict) or not placement:
        return '<p class="na">No placement recorded: the cluster was not created.</p>'
    rows = []
    for role in [*_ROLES, *(r for r in placement if r not in _ROLES)]:
        if role not in placement:
            continue
        path = placement[role]
        rows.append([_e(_ROLE_LABELS.get(role, role)), _tier_tag(_tier(path, dirs)),
                     f'<code class="wrap">{_e(path)}</code>', _e(_block_device(doc, path))])
    return _table(["", "tier" if dirs else "", "directory", "device"], rows, cls="placement")


def _oltp_summary(doc: dict[str, Any], points: list[dict[str, Any]], knee: Any, load: Any,
                  step: str | None) -> str:
    """The headline line and the summary table of one sweep."""
    best = _best_point(points)
    kp = _knee_point(points, knee)
    rows: list[tuple[str, str]] = [("workload", _e(_oltp_workload(doc, load)))]
    if step:
        rows.append(("step shown", f"<code>{_e(step)}</code> (the last step run; every step is below)"))
    planned = _get(doc, "params", "clients")
    swept = ", ".join(_num(p["clients"]) for p in points) or "none"
    if isinstance(planned, list) and len(planned) != len(points):
        swept += f' <span class="reason">(of {_e(", ".join(str(c) for c in planned))} planned)</span>'
    rows.append(("clients measured", swept))
    if isinstance(knee, dict) and _isnum(knee.get("clients")):
        rows.append(("knee", f"<b>{_clients_label(knee['clients'])}, {_num(knee.get('tps'), 1)} TPS</b>"
                             f'<br><span class="reason">{_e(knee.get("reason") or "")}</span>'))
    else:
        rows.append(("knee", "—"))
    if best:
        sp = F.point_spread(best)
        rows.append(("best TPS", f"<b>{_num(best['tps'], 1)}</b> at {_clients_label(best['clients'])}"
                     + (f' <span class="reason">(the median of {_num(sp["n"])} runs, {_num(sp["min"], 1)}–'
                        f'{_num(sp["max"], 1)} TPS)</span>' if sp and sp["n"] > 1 else "")))
        rows.append(("best TPM", _num(best.get("tpm"))))
        nopm = [p for p in points if _isnum(p.get("nopm"))]
        if nopm:
            bn = max(nopm, key=lambda p: p["nopm"])
            rows.append(("best NOPM", f"<b>{_num(bn['nopm'])}</b> at {_clients_label(bn['clients'])}"))
    else:
        rows.append(("best TPS", "—"))
    if kp:
        lat = kp.get("lat_ms") if isinstance(kp.get("lat_ms"), dict) else {}
        rows.append(("latency at the knee", f"p50 {_num(lat.get('p50'), 2)} · p95 {_num(lat.get('p95'), 2)} · "
                                            f"p99 {_num(lat.get('p99'), 2)} ms"))
        rows.append(("bottleneck at the knee",
                     f'<span class="bn bn-{_e(kp.get("bottleneck"))}">{_e(kp.get("bottleneck") or "—")}</span>'
                     f'<br><span class="reason">{_e(kp.get("bottleneck_evidence") or "")}</span>'))
    size, secs = _get(load, "database_bytes"), _get(load, "load_seconds")
    if _isnum(size) or _isnum(secs):
        rows.append(("database", (_e(human_bytes(size)) if _isnum(size) else "—")
                     + (f", loaded in {_num(secs, 1)} s" if _isnum(secs) else "")))
    lead = ""
    if best and isinstance(knee, dict) and _isnum(knee.get("clients")):
        bn = (kp or {}).get("bottleneck")
        lead = (f'<p class="lead">Knee at <b>{_clients_label(knee["clients"])}</b> ({_num(knee.get("tps"))} TPS); '
                f'best <b>{_num(best["tps"])} TPS</b> at {_clients_label(best["clients"])}'
                + (f"; the limit at the knee: <b>{_e(bn)}</b>" if bn else "") + ".</p>")
    return lead + _kv(rows)


# -- bench oltp charts

def _chart_oltp_tps(points: list[dict[str, Any]], knee: Any) -> str | None:
    pts = [(p["clients"], p.get("tps")) for p in points if _isnum(p.get("tps"))]
    if not pts:
        return None
    markers = []
    if _isnum(_get(knee, "clients")) and _isnum(_get(knee, "tps")):
        markers.append(Marker(knee["clients"], knee["tps"],
                              f"knee: {_clients_label(knee['clients'])}, {_num(knee['tps'])} TPS"))
    chart = svg.line_chart("Throughput vs clients", [Series("TPS", pts, svg.colour(0))], x_label="clients",
                           y_label="transactions per second", x_log2=True, markers=markers,
                           desc="TPS at each client count; the ring marks the knee.")
    spread = [(sp, p) for p in points for sp in [F.point_spread(p)] if sp and _isnum(sp.get("spread_pct"))]
    cap = ("Transactions per second over the time pgbench measured (warm-up excluded); the ring marks the knee.")
    if spread:
        sp, worst = max(spread, key=lambda x: x[0]["spread_pct"])
        cap += (f" Each point is the median of {_num(sp['n'])} runs (the mean of the two middle ones for an even "
                f"count); the widest spread is {_num(sp['spread_pct'], 1)}% at {_clients_label(worst['clients'])} "
                f"({_num(sp['n'])} runs, {_num(sp['min'], 1)}–{_num(sp['max'], 1)} TPS).")
    return _figure(chart, cap)


def _chart_oltp_nopm(points: list[dict[str, Any]], knee: Any) -> str | None:
    pts = [(p["clients"], p["nopm"]) for p in points if _isnum(p.get("nopm"))]
    if not pts:
        return None
    kp = _knee_point(points, knee)
    markers = [Marker(kp["clients"], kp["nopm"], f"knee: {_num(kp['nopm'])} NOPM")] \
        if kp and _isnum(kp.get("nopm")) else []
    chart = svg.line_chart("New orders per minute vs clients", [Series("NOPM", pts, svg.colour(4))],
                           x_label="clients", y_label="new orders per minute", x_log2=True, markers=markers,
                           desc="NOPM at each client count; the ring marks the knee.")
    return _figure(chart, "New orders per minute, counted from district.d_next_o_id (TPC-C-like, not tpmC).")


def _chart_oltp_latency(points: list[dict[str, Any]], knee: Any) -> str | None:
    series = []
    for i, pct in enumerate(("p50", "p95", "p99")):
        pts = [(p["clients"], _get(p, "lat_ms", pct)) for p in points]
        if any(_isnum(y) and y > 0 for _, y in pts):
            series.append(Series(pct, [(x, y if _isnum(y) else None) for x, y in pts], svg.colour(i),
                                 dashed=pct == "p99"))
    if not series:
        return None
    kp = _knee_point(points, knee)
    markers = [Marker(kp["clients"], kp["lat_ms"]["p95"], "knee p95")] \
        if kp and _isnum(_get(kp, "lat_ms", "p95")) and kp["lat_ms"]["p95"] > 0 else []
    chart = svg.line_chart("Transaction latency vs clients", series, x_label="clients", y_label="latency (ms)",
                           x_log2=True, y_log=True, markers=markers,
                           desc="p50, p95 and p99 latency per transaction; logarithmic y axis.")
    return _figure(chart, "Per-transaction latency from pgbench's logs over the measured window; logarithmic "
                          "y axis; the ring marks p95 at the knee.")


def _wait_order(keys: Iterable[str]) -> list[str]:
    ks = set(keys)
    return [k for k in WAIT_CLASSES if k in ks] + sorted(k for k in ks if k not in WAIT_CLASSES)


def _wait_colour(cls: str, i: int) -> str:
    return WAIT_COLOURS.get(cls) or svg.colour(i)


def _chart_oltp_waits(points: list[dict[str, Any]]) -> str | None:
    waits = [p.get("waits") if isinstance(p.get("waits"), dict) else {} for p in points]
    classes = _wait_order(k for w in waits for k, v in w.items() if _isnum(v) and v > 0)
    if not classes:
        return None
    cats = [_num(p["clients"]) for p in points]
    series = [Series(c, [(k, 100 * w[c] if _isnum(w.get(c)) else None) for k, w in enumerate(waits)],
                     _wait_colour(c, i)) for i, c in enumerate(classes)]
    notes = [str(p.get("bottleneck") or "") for p in points]
    chart = svg.stacked_bar_chart("Where the backends spent their time", cats, series, x_label="clients",
                                  y_label="% of sampled backend states", y_max=100, unit="%", totals=False,
                                  notes=notes, desc="Shares of sampled pg_stat_activity states per client count; "
                                                    "under each bar, the bottleneck judged at that point.")
    return _figure(chart, "pg_stat_activity sampled during each point, wait events grouped: cpu (running), "
                          "storage (data-file, temp and buffer I/O waits), commit (WAL write and sync, group commit, "
                          "synchronous standby), lock (heavy and light-weight locks, WAL insertion included), client "
                          "(waiting for pgbench), other (IPC, timeouts, buffer pins, extensions). Under each bar: the "
                          "bottleneck judged at that point (unknown without wait samples).")


def _chart_oltp_util(points: list[dict[str, Any]]) -> str | None:
    series = [Series("CPU busy", [(p["clients"], _get(p, "cpu_util", "busy_pct")) for p in points], svg.colour(2)),
              Series("CPU iowait", [(p["clients"], _get(p, "cpu_util", "iowait_pct")) for p in points],
                     svg.colour(2), dashed=True)]
    names = list(dict.fromkeys(str(d.get("device")) for p in points for d in _devices(p)))
    for i, name in enumerate(names):
        pts = []
        for p in points:
            d = next((d for d in _devices(p) if str(d.get("device")) == name), None)
            pts.append((p["clients"], d.get("busy_pct") if d and _isnum(d.get("busy_pct")) else None))
        series.append(Series(f"{name} busy", pts, svg.colour((i * 2) % 10 if i else 0)))
    if not any(_isnum(y) for s in series for _, y in s.points):
        return None
    chart = svg.line_chart("CPU and device utilisation vs clients", series, x_label="clients", y_label="%",
                           x_log2=True, y_max=100,
                           desc="Machine CPU busy and iowait %, and each placement device's busy %.")
    return _figure(chart, "CPU: user + system time of all cores (/proc/stat); iowait dashed. Device busy %: the "
                          "share of time the device had I/O in flight (/proc/diskstats) — a pegged CPU stretches "
                          "completions and can make a fast device look busy.")


def _series_samples(p: dict[str, Any] | None) -> list[dict[str, Any]]:
    """A point's samples over time, without those covering under a quarter of the usual interval (the
    sampler's last, cut-short interval: a few milliseconds of counters are noise, not load)."""
    s = (p or {}).get("series")
    samples = sorted((x for x in s if isinstance(x, dict) and _isnum(x.get("t_s"))), key=lambda x: x["t_s"]) \
        if isinstance(s, list) else []
    gaps = [b["t_s"] - a["t_s"] for a, b in zip(samples, samples[1:])]
    if len(gaps) < 2:
        return samples
    usual = sorted(gaps)[len(gaps) // 2]
    return samples[:1] + [b for b, g in zip(samples[1:], gaps) if g >= usual / 4]


def _charts_oltp_time(p: dict[str, Any] | None, which: str) -> list[str]:
    samples = _series_samples(p)
    if not samples or p is None:
        return []
    where = f"{which}: {_clients_label(p.get('clients'))}"
    out = []
    parts = [("user_pct", "user", svg.colour(0)), ("system_pct", "system", svg.colour(1)),
             ("iowait_pct", "iowait", svg.colour(2)), ("steal_pct", "steal", svg.colour(9))]
    series = [Series(label, [(s["t_s"], _get(s, "cpu", key)) for s in samples], col) for key, label, col in parts
              if label != "steal" or any(_isnum(_get(s, "cpu", key)) and _get(s, "cpu", key) >= 0.5
                                         for s in samples)]
    cpu = svg.stacked_area_chart(f"CPU over time ({where})", series, x_label="seconds into the measured run",
                                 y_label="% of all cores", y_max=100, unit="%",
                                 desc="CPU user, system and iowait %, stacked, sampled during the point.")
    interval = ""
    if len(samples) > 1:
        interval = f" every {_num((samples[-1]['t_s'] - samples[0]['t_s']) / (len(samples) - 1), 1)} s"
    raw = p.get("series") if isinstance(p.get("series"), list) else []
    cut = (" A final sample covering only a few milliseconds is left out." if len(raw) > len(samples) else "")
    out.append(_figure(cpu, f"Sampled from /proc/stat{interval} during the {_e(which)} point "
                            f"({_clients_label(p.get('clients'))}); the bands are stacked.{cut}"))
    names = list(dict.fromkeys(str(n) for s in samples for n in (s.get("devices") or {})
                               if isinstance(s.get("devices"), dict)))
    if names:
        for key, title, unit, cap in (
                ("busy_pct", "Device busy % over time", "busy %",
                 "Share of each interval the device had I/O in flight (/proc/diskstats)."),
                ("await_ms", "Device await over time", "await (ms)",
                 "Average time an I/O took, queueing included, in each interval (/proc/diskstats).")):
            series = [Series(n, [(s["t_s"], _get(s, "devices", n, key)) for s in samples], svg.colour(i))
                      for i, n in enumerate(names)]
            chart = svg.line_chart(f"{title} ({where})", series, x_label="seconds into the measured run",
                                   y_label=unit, legend=True, y_max=100 if key == "busy_pct" else None,
                                   desc=f"{title} for the placement devices.")
            out.append(_figure(chart, cap + " One line per device behind the placement."))
    return out


def _oltp_charts(points: list[dict[str, Any]], knee: Any) -> list[str]:
    figs = [_chart_oltp_tps(points, knee), _chart_oltp_nopm(points, knee), _chart_oltp_latency(points, knee),
            _chart_oltp_waits(points), _chart_oltp_util(points)]
    out = [f for f in figs if f]
    kp = _knee_point(points, knee)
    which = "knee"
    if not _series_samples(kp):
        kp, which = _best_point(points), "best"
    out += _charts_oltp_time(kp, which)
    return out


# -- bench oltp tables

def _mb(b: Any) -> float | None:
    return b / 1e6 if _isnum(b) else None


def _runs_cells(p: dict[str, Any]) -> list[str]:
    sp = F.point_spread(p)
    if not sp:
        return ["—", "—", "—"]
    if sp["n"] < 2:
        return ["1", "n=1", "—"]
    return [_num(sp["n"]), f"{_num(sp['min'], 1)}–{_num(sp['max'], 1)}", _num(sp.get("spread_pct"), 1)]


def _oltp_points_table(points: list[dict[str, Any]]) -> str:
    def devs(key: str, digits: int) -> str:
        return "<br>".join(_num(d.get(key), digits) for d in _devices(p)) or "—"

    repeated = any((F.point_spread(p) or {}).get("n", 1) > 1 for p in points)
    heads = ["clients", "TPS", "TPM", "NOPM", "p50 ms", "p95 ms", "p99 ms", "max ms", "CPU user %", "CPU sys %",
             "iowait %", "device", "IOPS", "MB/s", "await ms", "busy %", "queue", "bottleneck"]
    heads += ["runs", "TPS min–max", "TPS spread %"] if repeated else []
    rows = []
    for p in points:
        lat = p.get("lat_ms") if isinstance(p.get("lat_ms"), dict) else {}
        cpu = p.get("cpu_util") if isinstance(p.get("cpu_util"), dict) else {}
        rows.append([_num(p.get("clients")), _num(p.get("tps"), 1), _num(p.get("tpm")), _num(p.get("nopm")),
                     _num(lat.get("p50"), 2), _num(lat.get("p95"), 2), _num(lat.get("p99"), 2),
                     _num(lat.get("max"), 1), _num(cpu.get("user_pct"), 0), _num(cpu.get("system_pct"), 0),
                     _num(cpu.get("iowait_pct"), 1), "<br>".join(_e(d.get("device")) for d in _devices(p)) or "—",
                     devs("iops", 0), devs("mbps", 1), devs("await_ms", 2), devs("busy_pct", 0), devs("queue", 1),
                     _e(p.get("bottleneck") or "—")]
                    + (_runs_cells(p) if repeated else []))
    t1 = _table(heads, rows, num_cols=[*range(11), *range(12, 17), 18, 20], cls="points")
    heads2 = ["clients", "hit ratio %", "blocks read", "WAL MB", "WAL syncs", "ms per sync", "temp MB",
              "checkpoints", "backend fsyncs", "commits / rollbacks", "pgbench cores", "pgbench % of CPU",
              "sampler % of CPU", "pgbench output in raw/"]
    rows2 = []
    for p in points:
        pg = p.get("pg") if isinstance(p.get("pg"), dict) else {}
        ov = p.get("overhead") if isinstance(p.get("overhead"), dict) else {}
        syncs, sync_ms = pg.get("wal_syncs"), pg.get("wal_sync_ms")
        per_sync = sync_ms / syncs if _isnum(syncs) and _isnum(sync_ms) and syncs else None
        rows2.append([_num(p.get("clients")),
                      _num(100 * pg["hit_ratio"], 2) if _isnum(pg.get("hit_ratio")) else "—",
                      _num(pg.get("blks_read")), _num(_mb(pg.get("wal_bytes")), 1), _num(syncs),
                      _num(per_sync, 2), _num(_mb(pg.get("temp_bytes")), 1), _num(pg.get("checkpoints")),
                      _num(pg.get("backend_fsyncs")), f'{_num(pg.get("commits"))} / {_num(pg.get("rollbacks"))}',
                      
                      _num(ov.get("client_cpu_cores"), 2), _num(ov.get("client_cpu_pct_of_machine"), 1),
                      _num(ov.get("sampler_cpu_pct_of_machine"), 2),
                      f'<code title="{_e(p.get("raw"))}">{_e(os.path.basename(str(p.get("raw") or "")))}</code>'])
    t2 = _table(heads2, rows2, num_cols=range(13), cls="points")
    ev = "".join(f"<li><b>{_clients_label(p.get('clients'))}</b>: {_e(p.get('bottleneck') or '—')} — "
                 f"{_e(p.get('bottleneck_evidence') or '')}</li>" for p in points if p.get("bottleneck_evidence"))
    return (f'<details><summary>All {len(points)} measured points</summary>'
            f'<h4>Throughput, latency, CPU and devices</h4><div class="wide">{t1}</div>'
            f'<h4>PostgreSQL counters and measurement overhead</h4><div class="wide">{t2}</div>'
            + (f'<h4>Bottleneck evidence</h4><ul class="reason">{ev}</ul>' if ev else "")
            + '<p class="reason">MB = 10⁶ bytes. Device columns: one line per device behind the placement. '
            + ("Runs: repeats of the point; TPS, TPM, NOPM and latency percentiles are the medians of the runs (the "
               "mean of the two middle ones for an even count), the other columns those of the middle run by TPS "
               "(the lower middle one for an even count); the spread is (max − min) / median of their TPS. "
               if repeated
               else "Each point was run once (n=1: no spread measured). ")
            + "Raw output: pgbench's output, in the run directory.</p></details>")


def _steps(doc: dict[str, Any]) -> list[dict[str, Any]]:
    st = doc.get("steps")
    return [s for s in st if isinstance(s, dict)] if isinstance(st, list) else []


_GUARD_TITLES = {"reads-from-memory": "Cache guard: the reads came from memory",
                 "too-few-reads": "Cache guard: too few page reads to judge",
                 "remote": "Cache guard: the server's devices were not measured"}


def _guards_html(doc: dict[str, Any]) -> str:
    """The cache guard (dbtier.model.guards), above the run's figures: it says what they measured."""
    out = []
    for g in doc_guards(doc):
        k = str(g.get("kind"))
        out.append(f'<div class="note{" bad" if k == "reads-from-memory" else ""} guard"><b>'
                   f'{_e(_GUARD_TITLES.get(k, "Guard: " + k))}</b>: {_e(g.get("message"))}</div>')
    return "".join(out)


def _matrix_section(doc: dict[str, Any], steps: list[dict[str, Any]], dirs: dict[str, str]) -> str:
    names = [str(s.get("name") or f"step {k + 1}") for k, s in enumerate(steps)]
    pts = [_oltp_points(s.get("points")) for s in steps]
    bests = [_best_point(p) for p in pts]
    out = ["<h3>Placement matrix</h3>",
           '<p class="sub">The same workload with data, indexes, WAL and temp moved step by step from the slow '
           "directory to the fast one, a fresh cluster each step, in the order run. Figures are at each step's "
           "best point (the client count with the highest TPS).</p>"]
    bns = [str(b.get("bottleneck") or "unknown") if b else "" for b in bests]
    classes = _wait_order(b for b in bns if b)
    tps_series = [Series(f"bottleneck: {c}", [(k, b["tps"]) for k, b in enumerate(bests)
                             if b and bns[k] == c and _isnum(b.get("tps"))], _wait_colour(c, i))
                  for i, c in enumerate(classes)]
    notes = [f"{bns[k]}\n{_clients_label(b['clients'])}" if b else "no points" for k, b in enumerate(bests)]
    figs = [_figure(svg.stacked_bar_chart("Best TPS per placement step", names, tps_series, x_label="step",
                                          y_label="transactions per second", unit="TPS", notes=notes,
                                          desc="One bar per step in the order run, coloured by the bottleneck "
                                               "at its best point."),
                    "One bar per step, in the order run; the colour and the label under each bar name the "
                    "bottleneck at that step's best point, with its client count.")]
    p95 = [(k, _get(b, "lat_ms", "p95")) for k, b in enumerate(bests) if b]
    figs.append(_figure(svg.bar_chart("p95 latency per placement step", names,
                                      [Series("p95", p95, svg.colour(1))], x_label="step", y_label="ms",
                                      unit="ms", desc="p95 transaction latency at each step's best point."),
                        "p95 transaction latency at each step's best point."))
    util = [Series("CPU busy %", [(k, _get(b, "cpu_util", "busy_pct")) for k, b in enumerate(bests) if b],
                   svg.colour(2)),
            Series("device busy % (busiest)", [(k, _dev_max(b, "busy_pct")) for k, b in enumerate(bests) if b],
                   svg.colour(0))]
    figs.append(_figure(svg.bar_chart("CPU and device busy per placement step", names, util, x_label="step",
                                      y_label="%", unit="%", y_max=100,
                                      desc="CPU busy % and the busiest placement device's busy % at each step's "
                                           "best point."),
                        "When the CPU is near 100% the device figures are stretched by scheduling: the limit "
                        "is the CPU even where a device looks busy."))
    lines = [Series(n, [(p["clients"], p.get("tps")) for p in ps], svg.colour(k)) for k, (n, ps)
             in enumerate(zip(names, pts)) if ps]
    if lines:
        figs.append(_figure(svg.line_chart("TPS vs clients, every step", lines, x_label="clients",
                                           y_label="transactions per second", x_log2=True,
                                           desc="One line per placement step."),
                            "One line per step: where each placement's throughput stops growing."))
    out.append('<div class="charts">' + "".join(figs) + "</div>")
    rows = []
    memory = reads_from_memory(doc_guards(doc))
    for k, (s, b, ps) in enumerate(zip(steps, bests, pts)):
        pl = s.get("placement") if isinstance(s.get("placement"), dict) else {}
        cells = [f'<b title="{_e(_MATRIX_STEPS.get(names[k], ""))}">{_e(names[k])}</b>'
                 + ('<br><span class="bad">reads not measured</span>'
                    if s.get("reads_measured") is False or (memory and names[k] in READ_STEPS) else "")]
        for role in _ROLES:
            path = pl.get(role)
            tier = _tier(path, dirs)
            cells.append(f'<span title="{_e(path)}">{_tier_tag(tier)}</span>' if tier
                         else (f'<code class="wrap">{_e(path)}</code>' if path else "—"))
        kn = s.get("knee") if isinstance(s.get("knee"), dict) else {}
        b = b or {}
        cells += [f"{_num(kn.get('clients'))} · {_num(kn.get('tps'))}" if kn else "—",
                  _num(b.get("tps")), _num(b.get("clients")), _num(b.get("tpm")),
                  _num(_get(b, "lat_ms", "p95"), 2), _num(_get(b, "cpu_util", "busy_pct"), 0),
                  _num(_get(b, "cpu_util", "iowait_pct"), 1), _num(_dev_max(b, "busy_pct"), 0),
                  _num(_dev_max(b, "await_ms"), 2),
                  f'<span class="bn bn-{_e(b.get("bottleneck"))}" title="{_e(b.get("bottleneck_evidence"))}">'
                  f'{_e(b.get("bottleneck") or "—")}</span>']
        rows.append(cells)
    heads = ["step", "tables", "indexes", "WAL", "temp", "knee: clients · TPS", "best TPS", "at clients", "TPM",
             "p95 ms", "CPU busy %", "iowait %", "device busy %", "device await ms", "bottleneck"]
    out.append('<div class="wide">' + _table(heads, rows, num_cols=range(5, 14), cls="matrix") + "</div>")
    if dirs:
        out.append(f'<p class="reason">fast = <code>{_e(dirs["fast"])}</code>, slow = <code>{_e(dirs["slow"])}'
                   "</code>; hover a tier for the directory. Device figures are the busiest device behind the "
                   "placement.</p>")
    return "".join(out)


def _oltp_sweep(doc: dict[str, Any], points: list[dict[str, Any]], knee: Any) -> str:
    figs = _oltp_charts(points, knee)
    out = []
    if figs:
        out.append('<div class="charts">' + "".join(figs) + "</div>")
    else:
        out.append('<p class="na">No points were measured.</p>')
    if points:
        out.append(_oltp_points_table(points))
    return "".join(out)


def _oltp_method(doc: dict[str, Any], all_points: list[dict[str, Any]], dirs: dict[str, str]) -> str:
    p = doc.get("params") if isinstance(doc.get("params"), dict) else {}
    pg = _get(doc, "machine", "versions", "postgresql")
    cores = _get(doc, "machine", "cpu_count")
    w = p.get("workload")
    rows: list[tuple[str, str]] = [
        ("engine", _e(p.get("engine") or "pgbench (PostgreSQL)") + (f"; PostgreSQL {_e(pg)}" if pg else "")),
        ("workload", _e(_WORKLOAD_METHOD.get(w, w or "—")))]
    if p.get("mode") == "dsn":
        rows.append(("server", f"your server (<code>{_e(p.get('dsn'))}</code>), in a database dbtier created and "
                               "dropped"))
    else:
        rows.append(("server", "a throw-away PostgreSQL cluster dbtier created with initdb, placed as shown, and "
                               "removed at the end"))
    rows.append(("clients", _e(", ".join(str(c) for c in p.get("clients") or []) or "—")))
    if _isnum(p.get("duration_s")):
        rows.append(("each point", f"{_e(F.duration_words(p['duration_s'], 1))} after {_num(p.get('warmup_s'), 1)} s "
                                   "of warm-up, which is excluded from every figure"))
    # one wording of how repeats make a point's figures, shared with show (figures.repeats_text)
    rows.append(("repeats", _e(F.repeats_text(p.get("repeat"), all_points))))
    nm = F.not_measured(doc)
    if nm:
        rows.append(("not measured", _e(", ".join(x.replace("_", " ") for x in nm)) + ": with <code>--dsn</code> "
                     "the CPU and device figures are this machine's (where pgbench runs), not the server's; no "
                     "bottleneck is judged from them"))
    if _isnum(p.get("rate")):
        rows.append(("load", f"open loop: transactions scheduled at {_num(p['rate'])} per second in total; latency "
                             "counts from the scheduled start, so queueing behind a slow server is included"))
    else:
        rows.append(("load", "closed loop: each client sends its next transaction when the last one returns"))
    rows.append(("latency", _e(p.get("latency") or "—") + ": each transaction from pgbench sending it to the "
                 "reply; p50/p95/p99/max of all transactions in the measured window, in milliseconds"))
    rule = str(p.get("knee_rule") or "—")
    rows.append(("knee", _e(rule) + ("" if "unconfirmed" in rule else "; with no such step, the last point")))
    rows.append(("bottleneck", "judged at each point from sampled <code>pg_stat_activity</code> wait events, CPU "
                               "(/proc/stat) and the placement devices' queue and await (/proc/diskstats): a CPU "
                               "90% or more busy wins over a device that only looks busy; no wait samples (or a "
                               "failed sampling query): unknown, with the reason"))
    cpu_txt = "user + system time as a % of all cores" + (f" ({_num(cores)})" if _isnum(cores) else "")
    rows.append(("CPU %", cpu_txt + "; iowait separately"))
    cl = [q["overhead"]["client_cpu_pct_of_machine"] for q in all_points
          if _isnum(_get(q, "overhead", "client_cpu_pct_of_machine"))]
    cc = [q["overhead"]["client_cpu_cores"] for q in all_points if _isnum(_get(q, "overhead", "client_cpu_cores"))]
    sm = [q["overhead"]["sampler_cpu_pct_of_machine"] for q in all_points
          if _isnum(_get(q, "overhead", "sampler_cpu_pct_of_machine"))]
    if cl or sm:
        rows.append(("measurement overhead",
                     (f"pgbench used up to {_num(max(cl), 1)}% of the machine's CPU"
                      + (f" ({_num(max(cc), 2)} cores)" if cc else "") if cl else "")
                     + ("; " if cl and sm else "")
                     + (f"dbtier's sampler up to {_num(max(sm), 2)}%" if sm else "")
                     + "; both run on the same machine as the server and are inside the CPU figures"))
    if dirs:
        rows.append(("placement matrix", f"fast <code>{_e(dirs['fast'])}</code>, slow <code>{_e(dirs['slow'])}"
                                         "</code>; steps: all slow; indexes fast; + tables; + WAL; + temp; all "
                                         "fast — tables with the cluster directory, indexes through a tablespace, "
                                         "WAL through initdb's waldir, temp through temp_tablespaces"))
    asked = p.get("placement_requested")
    if isinstance(asked, dict):
        rows.append(("placement asked for", ", ".join(f"{_e(k)}=<code>{_e(v)}</code>" for k, v in asked.items())
                     or "none: everything in the cluster directory"))
    settings = p.get("settings")
    if isinstance(settings, dict) and settings:
        rows.append(("PostgreSQL settings", '<table class="settings"><tbody>' + "".join(
            f"<tr><td><code>{_e(k)}</code></td><td><code>{_e(v)}</code></td></tr>" for k, v in settings.items())
            + "</tbody></table>"))
    known = {"workload", "warehouses", "scale", "clients", "duration_s", "warmup_s", "repeat", "rate", "mode", "dsn",
             "settings", "engine", "latency", "knee_rule", "placement_matrix", "placement_requested"}
    rows += [(k.replace("_", " "), _json_value(v)) for k, v in p.items() if k not in known]
    return ("<h3>How the numbers were obtained</h3>"
            "<p>Each point is one pgbench run at a fixed number of clients against a freshly loaded database; "
            "CPU, devices and PostgreSQL's wait events are sampled while it runs.</p>" + _kv(rows)
            + '<p class="reason">PostgreSQL reads through the OS page cache: a small <code>shared_buffers</code> '
              "forces reads out of PostgreSQL's cache but not out of the kernel's; the device figures show how "
              "much really reached the disk.</p>")


def _oltp_section(doc: dict[str, Any], i: int) -> str:
    anchor = f"run-{i + 1}"
    out = [_run_head(doc, i, anchor), _errors(doc), _guards_html(doc)]
    steps = _steps(doc)
    dirs = _matrix_dirs(doc)
    points = _oltp_points(doc.get("points"))
    knee = doc.get("knee")
    placement = doc.get("placement")
    load = doc.get("load")
    last = steps[-1] if steps else None
    if last is not None:   # the top level repeats the last step; fill what an older document left out
        if not points:
            points = _oltp_points(last.get("points"))
        knee = knee if isinstance(knee, dict) else last.get("knee")
        placement = placement if isinstance(placement, dict) else last.get("placement")
        load = load if isinstance(load, dict) else last.get("load")
    status = doc.get("status")
    all_points = points + [p for s in steps[:-1] for p in _oltp_points(s.get("points"))]
    if status not in ("ok", None):
        out.append(f'<p class="note">This run is <b>{_e(status)}</b>: {_plural(len(all_points), "point")} '
                   "measured before it stopped; the figures below show only what finished.</p>")
    kind = "Placement matrix" if steps else "OLTP sweep"
    out.append(f'<h3>{kind}: {_e(_oltp_workload(doc, load))}</h3>')
    out.append('<div class="top"><div><h4>Summary</h4>'
               + _oltp_summary(doc, points, knee, load, str(last.get("name")) if last else None)
               + "</div><div><h4>Placement</h4>" + _placement_table(doc, placement, dirs) + "</div></div>")
    if steps:
        out.append(_matrix_section(doc, steps, dirs))
        out.append(f'<h3>Sweep: step <code>{_e(last.get("name"))}</code></h3>' if last else "")
    else:
        out.append("<h3>Sweep</h3>")
    out.append(_oltp_sweep(doc, points, knee))
    for s in steps[:-1]:
        sp = _oltp_points(s.get("points"))
        kn = s.get("knee") if isinstance(s.get("knee"), dict) else {}
        head = (f"Step <code>{_e(s.get('name'))}</code>: {_plural(len(sp), 'point')}"
                + (f", knee at {_clients_label(kn['clients'])} ({_num(kn.get('tps'))} TPS)"
                   if _isnum(kn.get("clients")) else ""))
        out.append(f'<details class="step"><summary>{head}</summary>'
                   + _placement_table(doc, s.get("placement"), dirs) + _oltp_sweep(doc, sp, kn) + "</details>")
    out.append(_oltp_method(doc, all_points, dirs))
    out.append(_machine_section(doc))
    out.append(_json_details(doc))
    return f'<section class="run bench oltp">{"".join(out)}</section>'


# -- bench dss ---------------------------------------------------------------------------------------------

def _queries(n: Any) -> str:
    return f"{_num(n)} quer" + ("y" if n == 1 else "ies")


def _engine_name(e: Any) -> str:
    return {"duckdb": "DuckDB", "postgres": "PostgreSQL"}.get(e, str(e or "?"))


def _dss_placement(doc: dict[str, Any]) -> str:
    pl = doc.get("placement") if isinstance(doc.get("placement"), dict) else {}
    p = doc.get("params") if isinstance(doc.get("params"), dict) else {}
    rows = []
    for role, label in (("data", "database"), ("temp", "temp (spills)")):
        path = pl.get(role) or p.get(role)
        if path is None:
            continue
        rows.append([_e(label), f'<code class="wrap">{_e(path)}</code>',
                     _e(_block_device(doc, p.get(role)) or _block_device(doc, path))])
    if not rows:
        return '<p class="na">No placement recorded.</p>'
    return _table(["", "directory", "device"], rows, cls="placement")


def _dss_summary(doc: dict[str, Any], s: dict[str, Any]) -> str:
    load = doc.get("load") if isinstance(doc.get("load"), dict) else {}
    ver = _get(doc, "machine", "versions", s["engine"]) if isinstance(s["engine"], str) else None
    rows: list[tuple[str, str]] = [
        ("engine", _e(_engine_name(s["engine"])) + (f" {_e(ver)}" if ver else "")),
        ("scale factor", _e(F.fmt_auto(s["scale"])) + (f"; database {_e(human_bytes(load['database_bytes']))}"
                                                if _isnum(load.get("database_bytes")) else "")
         + (f", loaded in {_num(load.get('seconds'), 1)} s" if _isnum(load.get("seconds")) else "")),
        ("queries run", _num(s["queries"])),
        ("power run, total", f"<b>{_num(s['total_s'], 3)} s</b>" if _isnum(s["total_s"]) else "—"),
        ("per query, geometric mean", f"{_num(s['geomean_s'], 4)} s" if _isnum(s["geomean_s"]) else "—"),
        ("answers", _e(F.answers_text(s["answers_ok"])) if s["queries"] else "—")]
    if s["spilled"]:
        q, b = max(s["spilled"], key=lambda x: x[1])
        share = _num(100 * (s["spill_share"] or 0), 0)
        rows.append(("spilled to temp", f"{_queries(len(s['spilled']))}; peak {_num(b / 1e6, 1)} MB (Q{_e(q)}); "
                                        f"{share}% of the time"))
    elif s["queries"]:
        rows.append(("spilled to temp", "nothing: every query ran in memory"))
    if _isnum(s["cpu_pct"]):
        rows.append(("CPU busy", f"{_num(s['cpu_pct'], 0)}% of all cores, weighted by each query's time"))
    if _isnum(s["scan_mbps"]):
        scan = doc.get("scan") if isinstance(doc.get("scan"), dict) else {}
        rows.append(("cold scan", f"{_num(s['scan_mbps'])} MB/s from {_e(scan.get('device') or '?')}"
                     + (f": {_num(100 * s['scan_ratio'])}% of the probe's sequential read "
                        f"({_num(s['probe_mbps'])} MB/s)" if _isnum(s["scan_ratio"]) else "")))
    return _kv(rows)


def _dss_charts(doc: dict[str, Any]) -> list[str]:
    qs = F.dss_queries(doc)
    if not qs:
        return []
    cats = [f"Q{q['query']}" for q in qs]
    labels = len(cats) <= 8
    warm = [(k, q.get("seconds") if _isnum(q.get("seconds")) else None) for k, q in enumerate(qs)]
    cold = [(k, q.get("cold_seconds") if _isnum(q.get("cold_seconds")) else None) for k, q in enumerate(qs)]
    rep = _get(doc, "params", "repeat")
    series = [Series("warm (median)" if _isnum(rep) and rep > 1 else "time", warm, svg.colour(0))]
    if _isnum(rep) and rep > 1 and any(y is not None for _, y in cold):
        series.append(Series("cold (run 1)", cold, svg.colour(9)))
    out = [_figure(svg.bar_chart("TPC-H: time per query", cats, series, x_label="query", y_label="seconds",
                                 unit="s", width=1000, value_labels=labels,
                                 desc="Seconds per query; warm median and the cold first run."),
                   "Each query's time: the median of the warm runs, and the cold first run (database reopened"
                   + (", OS page cache dropped" if any(r.get("caches_dropped") for run in doc.get("runs") or []
                                                     if isinstance(run, list) for r in run if isinstance(r, dict))
                      else "") + ").")]
    if any(_isnum(q.get("temp_bytes")) and q["temp_bytes"] > 0 for q in qs):
        out.append(_figure(svg.bar_chart("TPC-H: temp spilled per query", cats, [
            Series("temp MB", [(k, q["temp_bytes"] / 1e6 if _isnum(q.get("temp_bytes")) else None)
                               for k, q in enumerate(qs)], svg.colour(1))],
            x_label="query", y_label="MB", unit="MB", width=1000, value_labels=labels,
            desc="Peak size of the spill directory per query."),
            "Peak size of the temp (spill) directory while each query ran, polled every 10 ms; MB = 10⁶ bytes."))
    io = [Series("read, cold run", [(k, q["cold_read_bytes"] / 1e6 if _isnum(q.get("cold_read_bytes")) else None)
                                    for k, q in enumerate(qs)], svg.colour(0)),
          Series("read, warm", [(k, q["read_bytes"] / 1e6 if _isnum(q.get("read_bytes")) else None)
                                for k, q in enumerate(qs)], svg.colour(3)),
          Series("written", [(k, q["write_bytes"] / 1e6 if _isnum(q.get("write_bytes")) else None)
                             for k, q in enumerate(qs)], svg.colour(1))]
    io = [x for x in io if any(y for _, y in x.points)]
    if io:
        out.append(_figure(svg.bar_chart("TPC-H: device bytes per query", cats, io, x_label="query", y_label="MB",
                                         unit="MB", width=1000, value_labels=False,
                                         desc="Bytes read and written on the placement devices per query."),
                           "From /proc/diskstats of the devices behind the data and temp directories; MB = 10⁶ "
                           "bytes. A warm run reads little: the data is in the page cache."))
    cpu = [(k, q.get("cpu_util") if _isnum(q.get("cpu_util")) else None) for k, q in enumerate(qs)]
    if any(y is not None for _, y in cpu):
        out.append(_figure(svg.bar_chart("TPC-H: CPU busy per query", cats, [Series("CPU %", cpu, svg.colour(2))],
                                         x_label="query", y_label="% of all cores", unit="%", y_max=100, width=1000,
                                         value_labels=False, desc="CPU busy % of all cores while each query ran."),
                           "User + system time of all cores while each query ran (/proc/stat): near 100% the "
                           "queries wait on the CPU, not the storage."))
    return out


def _dss_table(doc: dict[str, Any]) -> str:
    qs = F.dss_queries(doc)
    if not qs:
        return ""
    answers: dict[Any, list[Any]] = {}
    for run in doc.get("runs") or []:
        for r in run if isinstance(run, list) else []:
            if isinstance(r, dict):
                answers.setdefault(r.get("query"), []).append(r.get("answer_ok"))
    rows = []
    for q in qs:
        a = answers.get(q["query"], [])
        ok = "✗ wrong" if False in a else ("✓" if True in a else "—")
        runs = q.get("runs_seconds") if isinstance(q.get("runs_seconds"), list) else []
        rows.append([f"Q{_e(q['query'])}", _num(q.get("seconds"), 3), _num(q.get("cold_seconds"), 3),
                     " · ".join(_num(x, 3) for x in runs) or "—", _e(F.spread_text(F.query_spread(q), 3) or "—"),
                     _num(q.get("rows")),
                     _num(_mb(q.get("temp_bytes")), 1), _num(_mb(q.get("cold_read_bytes")), 1),
                     _num(_mb(q.get("read_bytes")), 1), _num(_mb(q.get("write_bytes")), 1),
                     _num(q.get("cpu_util"), 0), ok])
    t = _table(["query", "seconds", "cold s", "every run (s)", "warm runs (min–max, n)", "rows", "temp MB",
                "read MB (cold)", "read MB", "written MB", "CPU %", "answer"], rows,
               num_cols=[1, 2, 3, *range(5, 11)], cls="points")
    return (f'<details><summary>All {len(qs)} queries</summary><div class="wide">{t}</div>'
            '<p class="reason">seconds: the median of the warm runs (the mean of the two middle ones for an even '
            "count; the cold run when there is no warm one); "
            "MB = 10⁶ bytes; read/written on the placement devices.</p></details>")


def _dss_method(doc: dict[str, Any]) -> str:
    p = doc.get("params") if isinstance(doc.get("params"), dict) else {}
    rep = p.get("repeat")
    spreads = [(sp["spread_pct"], q["query"]) for q in F.dss_queries(doc) for sp in [F.query_spread(q)]
               if sp and _isnum(sp.get("spread_pct"))]
    rows = [("method", _e(p.get("method") or "—")),
            ("runs", (f"{_num(rep)} power run{'s' if rep != 1 else ''}: run 1 cold, the rest warm; each query's "
                      "figure is the median of its warm runs (the mean of the two middle ones for an even count), "
                      "the total the sum of those medians") if _isnum(rep) else "—"),
            ("spread", (f"warm runs differ by up to {_num(max(spreads)[0], 1)}% of their median (Q{max(spreads)[1]})"
                        if spreads else "one warm run per query at most (n=1): no spread measured "
                                        "(<code>--repeat</code> 3 or more measures it)")
             + (f"; the warm power runs' totals: {_e(F.spread_text(doc.get('warm_totals'), 3))} s"
                if F.spread_of(doc.get("warm_totals")) and doc["warm_totals"]["n"] > 1 else "")),
            ("data", _e(f"TPC-H generated with {p['generator']}") if p.get("generator") else "—"),
            ("memory limit", _e(p.get("memory_limit") or "the engine's default")),
            ("threads", _e(p.get("threads") or "all cores")), ("compression", _e(p.get("compression") or "—")),
            ("timing", "each query timed end to end by dbtier; CPU from /proc/stat, device bytes from "
                       "/proc/diskstats; temp: the peak size of the spill directory, polled every 10 ms")]
    est = p.get("estimate")
    if isinstance(est, dict):
        rows.append(("checked before the run", f"needs about {_num(est.get('disk_gb'), 3)} GB of disk and "
                                               f"{_num(est.get('memory_gb'), 3)} GB of memory"))
    known = {"method", "repeat", "generator", "memory_limit", "threads", "compression", "estimate", "engine",
             "scale", "data", "temp"}
    rows += [(k.replace("_", " "), _json_value(v)) for k, v in p.items() if k not in known]
    return "<h3>How the numbers were obtained</h3>" + _kv(rows)


def _dss_section(doc: dict[str, Any], i: int) -> str:
    out = [_run_head(doc, i, f"run-{i + 1}"), _errors(doc), _guards_html(doc)]
    s = F.dss_stats(doc)
    status = doc.get("status")
    if status not in ("ok", None):
        out.append(f'<p class="note">This run is <b>{_e(status)}</b>: {_queries(s["queries"])} finished before it '
                   "stopped; the figures below show only those.</p>")
    out.append(f"<h3>TPC-H power run: {_e(_engine_name(s['engine']))}, SF {_e(F.fmt_auto(s['scale']))}</h3>")
    out.append('<div class="top"><div><h4>Summary</h4>' + _dss_summary(doc, s) + "</div><div><h4>Placement</h4>"
               + _dss_placement(doc) + "</div></div>")
    figs = _dss_charts(doc)
    out.append('<div class="charts one">' + "".join(figs) + "</div>" if figs
               else '<p class="na">No query finished.</p>')
    out.append(_dss_table(doc))
    out.append(_dss_method(doc))
    out.append(_machine_section(doc))
    out.append(_json_details(doc))
    return f'<section class="run bench dss">{"".join(out)}</section>'


# -- bench backup -----------------------------------------------------------------------------------------

_LIMIT_TEXT = {"source": "source (read)", "target": "target (write)", "cpu": "CPU (compression)"}


def _backup_section(doc: dict[str, Any], i: int) -> str:
    out = [_run_head(doc, i, f"run-{i + 1}"), _errors(doc), _guards_html(doc)]
    p = doc.get("params") if isinstance(doc.get("params"), dict) else {}
    src = doc.get("source") if isinstance(doc.get("source"), dict) else {}
    engine = doc.get("engine") or p.get("engine")
    methods = F.backup_methods(doc)
    targets = [t for t in (doc.get("targets") or []) if isinstance(t, dict)]
    status = doc.get("status")
    if status not in ("ok", None):
        out.append(f'<p class="note">This run is <b>{_e(status)}</b>: {_plural(len(targets), "backup")} finished '
                   "before it stopped.</p>")
    size = src.get("database_bytes")
    what = (f"pgbench scale {_num(src.get('scale'))}" if engine == "postgres" and _isnum(src.get("scale"))
            else ("TPC-H" if engine == "duckdb" else ""))
    out.append(f"<h3>Full backup: {_e(_engine_name(engine))}"
               + (f" ({_e(what)}{', ' if what and _isnum(size) else ''}"
                  f"{_e(human_bytes(size)) if _isnum(size) else ''})" if what or _isnum(size) else "") + "</h3>")
    limited = [m for m in methods if m["limit"]]
    if limited:
        out.append('<p class="lead">' + "; ".join(
            f"<b>{_e(m['method'])}</b>: {_num(m['dir_mbps'])} MB/s to the directory"
            + (f", {_num(m['null_mbps'])} MB/s to null" if _isnum(m["null_mbps"]) else "")
            + f" — limited by the <b>{_e(_LIMIT_TEXT.get(m['limit'], m['limit']))}</b>" for m in limited) + ".</p>")
    rows = [("source", f"<code>{_e(p.get('data'))}</code> {_e(_block_device(doc, p.get('data')))}"),
            ("backup directory", f"<code>{_e(p.get('to'))}</code> {_e(_block_device(doc, p.get('to')))}"),
            ("null sink", "the same backup with its output discarded: what the source can deliver")]
    built = src.get("load_seconds") or src.get("seconds")
    if _isnum(size):
        rows.append(("source size", _e(human_bytes(size))
                     + (f", built in {_num(built, 1)} s" if _isnum(built) else "")))
    out.append(_kv(rows))
    cats = [m["method"] for m in methods]
    if cats:
        chart = svg.bar_chart("Backup throughput: to the directory and to null", cats, [
            Series("to the directory", [(k, m["dir_mbps"]) for k, m in enumerate(methods)], svg.colour(0)),
            Series("to null", [(k, m["null_mbps"]) for k, m in enumerate(methods)], svg.colour(9))],
            x_label="method", y_label="MB/s", unit="MB/s", notes=[str(m["limit"] or "") for m in methods],
            desc="MB/s of source bytes per method, to the backup directory and to a null sink.")
        out.append('<div class="charts">' + _figure(chart, "MB/s of source bytes over the whole backup. Under each "
                                                    "method: the limiting side of the run to the directory (source "
                                                    "read, target write, or the CPU compressing).") + "</div>")
    trows = []
    for t in targets:
        devs = t.get("devices") if isinstance(t.get("devices"), dict) else {}
        trows.append([_e(t.get("method")), _e(t.get("target")), _num(t.get("mbps")), _num(t.get("seconds"), 2),
                      _num(_mb(t.get("bytes")), 1), _num(_mb(t.get("output_bytes")), 1),
                      _num(t.get("proc_cpu_cores"), 2), _num(_get(t, "cpu_util", "busy_pct"), 0),
                      "<br>".join(f"{_e(n)} {_num(_get(d, 'busy_pct'), 0)}%" for n, d in devs.items()) or "—",
                      _yes_no(t.get("caches_dropped")),
                      f'<b>{_e(t.get("bottleneck") or "—")}</b><br><span class="reason">'
                      f'{_e(t.get("bottleneck_evidence") or "")}</span>'])
    if trows:
        out.append('<div class="wide">' + _table(
            ["method", "to", "MB/s", "seconds", "source MB", "written MB", "backup process cores", "CPU busy %",
             "device busy", "page cache dropped", "limiting side"], trows, num_cols=range(2, 8), cls="backup")
            + "</div>")
    else:
        out.append('<p class="na">No backup finished.</p>')
    ver = _get(doc, "machine", "versions", engine) if isinstance(engine, str) else None
    mrows = [("engine", _e(_engine_name(engine)) + (f" {_e(ver)}" if ver else "")),
             ("methods", _json_value(p.get("methods"))), ("method", _e(p.get("method") or "—")),
             ("MB/s", "source bytes (10⁶) over the whole backup, start to finish; one run per method and target "
                      "(no repeats, no spread)"),
             ("limiting side", "the CPU when compression keeps the backup process at 0.85 cores or more; the "
                               "target when the directory is under 80% of the null sink and at least as busy as "
                               "the source; the source otherwise")]
    out.append("<h3>How the numbers were obtained</h3>" + _kv(mrows))
    out.append(_machine_section(doc))
    out.append(_json_details(doc))
    return f'<section class="run bench backup">{"".join(out)}</section>'


_BENCH_KINDS: dict[str, Callable[[dict[str, Any], int], str]] = {"oltp": _oltp_section, "dss": _dss_section,
                                                                "backup": _backup_section}


def _bench_section(doc: dict[str, Any], i: int) -> str:
    render = _BENCH_KINDS.get(doc.get("bench"))  # type: ignore[arg-type]
    return render(doc, i) if render else _generic_section(doc, i)


# -- simulate and history: their own modules, when present ------------------------------------------------

def _module_section(doc: dict[str, Any], i: int, module: str, call: Callable[[Any], str]) -> str:
    """A section drawn by dbtier.report.<module> (imported only now: it may not exist yet)."""
    try:
        mod = importlib.import_module(f"dbtier.report.{module}")
    except ImportError:
        return _generic_section(doc, i)
    body = call(mod)
    out = [_run_head(doc, i, f"run-{i + 1}"), _errors(doc), body]
    params = doc.get("params")
    if isinstance(params, dict) and params:
        out.append("<h4>Parameters</h4>" + _kv((k, _json_value(v)) for k, v in params.items()))
    out.append(_machine_section(doc))
    out.append(_json_details(doc))
    return f'<section class="run {_e(module)}">{"".join(out)}</section>'


def _simulate_section(doc: dict[str, Any], i: int) -> str:
    return _module_section(doc, i, "simulate", lambda m: m.section_html(doc))


def _history_section(doc: dict[str, Any], i: int) -> str:
    return _module_section(doc, i, "history", lambda m: m.section_html(doc, doc.get("_run_dir")))


SECTIONS: dict[str, Callable[[dict[str, Any], int], str]] = {"probe": _probe_section, "plan": _plan_section,
                                                           "bench": _bench_section, "simulate": _simulate_section,
                                                           "history": _history_section}


def _section(doc: dict[str, Any], i: int) -> str:
    render = SECTIONS.get(doc.get("command"))  # type: ignore[arg-type]
    if render is None:
        return _generic_section(doc, i)
    try:
        return render(doc, i)
    except Exception as exc:  # a malformed document must not cost the rest of the report
        return _generic_section(doc, i, note=f"This {doc.get('command')} document could not be drawn in full "
                                             f"({type(exc).__name__}: {exc}); its raw content follows.")


# -- lab -------------------------------------------------------------------------------------------------------

def _lab_section(doc: dict[str, Any], i: int, anchors: dict[int, int]) -> str:
    """The lab itself: its directories, a table of its steps (each linked to its run's section, which
    follows), and what it passed between steps. `anchors` maps a step's position to its section's number."""
    out = [_run_head(doc, i, f"run-{i + 1}"), _errors(doc)]
    p = doc.get("params") if isinstance(doc.get("params"), dict) else {}
    rows: list[tuple[str, str]] = []
    dirs = p.get("dirs")
    if isinstance(dirs, list):
        rows.append(("directories", "<br>".join(f"<code>{_e(d)}</code> {_e(F.device_of(doc, d) or '')}"
                                                for d in dirs) or "—"))
    for key, label in (("fast_dir", "fast tier"), ("slow_dir", "slow tier")):
        if p.get(key):
            rows.append((label, f"<code>{_e(p[key])}</code>"))
    if p.get("profile"):
        rows.append(("profile", _e(p["profile"])))
    if isinstance(p.get("skip"), list) and p["skip"]:
        rows.append(("skipped", _e(", ".join(map(str, p["skip"])))))
    known = {"dirs", "fast_dir", "slow_dir", "profile", "skip"}
    for k, v in p.items():
        if k in known:
            continue
        if isinstance(v, dict) and v and all(isinstance(x, (str, int, float)) for x in v.values()):
            rows.append((k.replace("_", " "), '<table class="settings"><tbody>' + "".join(
                f"<tr><td><code>{_e(a)}</code></td><td><code>{_e(b)}</code></td></tr>" for a, b in v.items())
                + "</tbody></table>"))
        else:
            rows.append((k.replace("_", " "), _json_value(v)))
    out.append("<h3>The lab</h3>" + _kv(rows))
    srows = []
    for k, (s, _, err) in enumerate(F.children(doc)):
        link = (f'<a href="#run-{anchors[k] + 1}"><code>{_e(s.get("run_dir"))}</code></a>' if k in anchors
                else (f'<code>{_e(s.get("run_dir"))}</code>' if s.get("run_dir") else "—"))
        note = s.get("error") or (f"its result could not be read: {err}" if err else "")
        argv = s.get("argv")
        srows.append([f"<b>{_e(s.get('name'))}</b>", _badge(s.get("status")), _num(s.get("seconds"), 1), link,
                      _e(note), f'<code class="wrap">{_e(" ".join(map(str, argv)))}</code>'
                      if isinstance(argv, list) else "—"])
    if srows:
        out.append("<h3>Steps</h3>" + '<div class="wide">' + _table(
            ["step", "status", "seconds", "run", "note", "command"], srows, num_cols=(2,), cls="steps") + "</div>"
            + '<p class="reason">Each step is a dbtier command run in its own run directory under the lab\'s; '
              "each finished step's run follows as its own section, in step order.</p>")
    else:
        out.append('<p class="na">This lab has no steps yet.</p>')
    req = doc.get("requirement")
    if isinstance(req, dict) and req:
        out.append("<h4>Load passed to the plan</h4>" + _kv((_REQ_LABELS.get(k, k.replace("_", " ")),
                                                             _num(v, 1) if _isnum(v) else _json_value(v))
                                                            for k, v in req.items()))
    standing = doc.get("standing")
    if isinstance(standing, list) and standing:
        out.append("<h4>Against the catalog</h4>" + "".join(
            _kv((k.replace("_", " "), _json_value(v)) for k, v in s.items()) for s in standing if isinstance(s, dict)))
    out.append(_machine_section(doc))
    out.append(_json_details(doc))
    return f'<section class="run lab">{"".join(out)}</section>'


# -- the verdict ----------------------------------------------------------------------------------------------

def _verdict_section(docs: Sequence[dict[str, Any]]) -> str:
    try:
        v = verdict(docs)
    except Exception as exc:  # the verdict must not cost the report
        return (f'<section class="verdict"><h2 id="verdict">Verdict</h2><p class="note">No verdict: the documents '
                f"did not add up ({_e(type(exc).__name__)}: {_e(exc)}).</p></section>")
    rows = []
    for topic in TOPICS:
        items = v.get(topic) or []
        if items:
            rows.append(f"<tr><th>{_e(TOPIC_LABELS[topic])}</th><td>"
                        + "".join(f"<p>{_e(it['text'])}</p>" for it in items) + "</td></tr>")
    notes = "".join(f'<p class="note{" bad" if c.get("kind") in ("fsync", "step", "status", "reads-from-memory") else ""}">{_e(c["text"])}'
                    "</p>" for c in v.get("caveats") or [])
    body = (f'<table class="verdict"><tbody>{"".join(rows)}</tbody></table>' if rows else
            '<p class="na">No verdict: these runs hold no probe, benchmark or plan figures to judge from.</p>')
    return (f'<section class="verdict"><h2 id="verdict">Verdict</h2>{body}{notes}'
            '<p class="reason">Each sentence rests on the figures it cites, from the runs below; a question the runs '
            "do not answer gets no sentence. The rules of thumb are in <code>dbtier.report.verdict</code>.</p>"
            "</section>")


# -- comparison and page ------------------------------------------------------------------------

Entry = tuple[dict[str, Any], int]     # a document and its section number (0-based)

_NO_COMPARE = {"probe", "lab", "report", "show", "compare", "unknown"}


def _probe_targets(entries: Sequence[Entry]) -> list[tuple[int, int, dict[str, Any], dict[str, Any]]]:
    out = []
    for d, i in entries:
        if d.get("command") != "probe":
            continue
        for j, t in enumerate(d.get("targets") or []):
            if isinstance(t, dict):
                out.append((i, j, d, t))
    return out


def _probe_comparison(entries: Sequence[Entry]) -> str:
    cols = _probe_targets(entries)
    if len(cols) < 2:
        return ""
    heads = ["measure"]
    for i, j, d, t in cols:
        mt = _machine_target(d, t, j) or {}
        dev = _get(mt, "block_device", "model") or _get(mt, "block_device", "driver") or ""
        fs = t.get("filesystem") or mt.get("filesystem") or ""
        heads.append(f'<a href="#run-{i + 1}-t{j + 1}"><code>{_e(t.get("path"))}</code></a><br>'
                     f'<span class="reason">{_e(_run_name(d, i))}<br>{_e(" · ".join(x for x in (fs, dev) if x))}'
                     f'</span>')
    heads.append("unit")
    rows = []
    for key in SUMMARY_KEYS:
        if key == "fsync_honesty_reason":
            continue
        if key == "fsync_honesty":
            cells = [_verdict_html(_get(t, "summary", key)) for _, _, _, t in cols]
            rows.append("<tr><td>fsync honesty</td>" + "".join(f'<td class="num">{c}</td>' for c in cells)
                        + "<td></td></tr>")
            continue
        label, unit, digits = SUMMARY_LABELS.get(key, (key, "", 1))
        vals = [_get(t, "summary", key) for _, _, _, t in cols]
        nums = [v for v in vals if _isnum(v)]
        best = (max(nums) if key in _HIGHER_BETTER else min(nums)) if len(nums) > 1 else None
        cells = "".join(f'<td class="num{" best" if best is not None and v == best else ""}">{_num(v, digits)}</td>'
                        for v in vals)
        rows.append(f"<tr><td>{_e(label)}</td>{cells}<td class=unit>{_e(unit)}</td></tr>")
    head = "".join(f"<th{' class=num' if 0 < k < len(heads) - 1 else ''}>{h}</th>" for k, h in enumerate(heads))
    return ('<p class="sub">Every probe target in this report; the best value of each row in bold.</p>'
            f'<div class="wide"><table><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
            "</div>")


def _run_hint(doc: dict[str, Any]) -> str:
    """What sets a run apart from others of its kind: its temp directory, its backup target ..."""
    k = F.kind(doc)
    p = doc.get("params") if isinstance(doc.get("params"), dict) else {}
    if k == "bench dss" and p.get("temp"):
        return f"temp on {p['temp']}"
    if k == "bench backup" and p.get("to"):
        return f"to {p['to']}"
    if k == "bench oltp":
        return F.workload_name(doc) or ""
    host = _get(doc, "machine", "hostname")
    return f"on {host}" if host else ""


def _figures_comparison(kind: str, group: Sequence[Entry]) -> str:
    figs = [{f.key: f for f in F.figures(d) if not f.detail} for d, _ in group]
    keys = list(dict.fromkeys(k for fs in figs for k in fs))
    if not keys:
        return ""
    heads = ["measure"] + [f'<a href="#run-{i + 1}"><code>{_e(_run_name(d, i))}</code></a><br>'
                           f'<span class="reason">{_e(_run_hint(d))}</span>' for d, i in group] + ["unit"]
    rows = []
    for key in keys:
        f0 = next(fs[key] for fs in figs if key in fs)
        vals = [fs[key].value if key in fs else None for fs in figs]
        if all(v is None for v in vals):
            continue
        nums = [v for v in vals if _isnum(v)]
        best = ((max(nums) if f0.better == "higher" else min(nums))
                if f0.better in ("higher", "lower") and len(nums) > 1 and len(set(nums)) > 1 else None)
        cells = "".join(f'<td class="num{" best" if best is not None and v == best else ""}">'
                        f'{_num(v, f0.digits) if _isnum(v) else _e(v) if v is not None else "—"}</td>' for v in vals)
        label = (f"{f0.group}: " if f0.group and f0.group not in f0.label else "") + f0.label
        rows.append(f"<tr><td>{_e(label)}</td>{cells}<td class=unit>{_e(f0.unit)}</td></tr>")
    head = "".join(f"<th{' class=num' if 0 < k < len(heads) - 1 else ''}>{h}</th>" for k, h in enumerate(heads))
    return (f"<h3>{_e(kind)}: {len(group)} runs</h3>"
            f'<div class="wide"><table class="compare"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}'
            "</tbody></table></div>")


def _comparison_charts(kind: str, group: Sequence[Entry]) -> list[str]:
    names = [f"{_run_name(d, i)}" + (f" ({_run_hint(d)})" if _run_hint(d) else "") for d, i in group]
    out = []
    if kind == "bench dss":
        qs = sorted({q["query"] for d, _ in group for q in F.dss_queries(d)})
        if qs:
            series = []
            for k, (d, _) in enumerate(group):
                by = {q["query"]: q.get("seconds") for q in F.dss_queries(d)}
                series.append(Series(names[k], [(n, by.get(q) if _isnum(by.get(q)) else None)
                                                for n, q in enumerate(qs)], svg.colour(k)))
            out.append(_figure(svg.bar_chart("TPC-H per-query time, runs side by side", [f"Q{q}" for q in qs], series,
                                             x_label="query", y_label="seconds", unit="s", width=1000,
                                             value_labels=False, desc="Grouped bars: each query, one bar per run."),
                               "One group per query, one bar per run (the median of its warm runs)."))
    elif kind == "bench oltp":
        lines = [Series(names[k], [(p["clients"], p.get("tps")) for p in F.oltp_view(d)["points"]], svg.colour(k))
                 for k, (d, _) in enumerate(group)]
        if any(s.points for s in lines):
            out.append(_figure(svg.line_chart("TPS vs clients, runs side by side", lines, x_label="clients",
                                              y_label="transactions per second", x_log2=True,
                                              desc="One line per run."), "One line per run (a placement matrix: its "
                                                                        "last step)."))
    elif kind == "bench backup":
        methods = list(dict.fromkeys(m["method"] for d, _ in group for m in F.backup_methods(d)))
        if methods:
            series = []
            for k, (d, _) in enumerate(group):
                by = {m["method"]: m["dir_mbps"] for m in F.backup_methods(d)}
                series.append(Series(names[k], [(n, by.get(m)) for n, m in enumerate(methods)], svg.colour(k)))
            out.append(_figure(svg.bar_chart("Backup MB/s to the directory, runs side by side", methods, series,
                                             x_label="method", y_label="MB/s", unit="MB/s",
                                             desc="Grouped bars: each method, one bar per run."),
                               "One group per method, one bar per run: MB/s to the backup directory."))
    return out


def _comparison(entries: Sequence[Entry]) -> str:
    parts = []
    probes = _probe_comparison(entries)
    if probes:
        parts.append(probes)
    groups: dict[str, list[Entry]] = {}
    for d, i in entries:
        k = F.kind(d)
        if k not in _NO_COMPARE and d.get("command") not in _NO_COMPARE:
            groups.setdefault(k, []).append((d, i))
    for k, group in groups.items():
        if len(group) < 2:
            continue
        try:
            table = _figures_comparison(k, group)
            charts = _comparison_charts(k, group)
            if k.startswith("simulate"):
                mod = importlib.import_module("dbtier.report.simulate")
                extra = mod.compare_html([d for d, _ in group]) if hasattr(mod, "compare_html") else ""
                if extra:
                    charts.append(extra)
        except Exception as exc:  # noqa: BLE001 - said in the report, and the rest still drawn
            parts.append(f'<p class="note bad">The side-by-side of the {_e(k)} runs could not be drawn '
                         f"({_e(type(exc).__name__)}: {_e(exc)}).</p>")
            continue
        if table or charts:
            parts.append(table + (f'<div class="charts{" one" if k == "bench dss" else ""}">' + "".join(charts)
                                  + "</div>" if charts else ""))
    if not parts:
        return ""
    return ('<section class="compare"><h2 id="compare">Side by side</h2>'
            '<p class="sub">Runs of the same kind, their key figures next to each other; the best value of a row in '
            "bold.</p>" + "".join(parts) + "</section>")


def _header(docs: Sequence[dict[str, Any]]) -> str:
    hosts = sorted({str(_get(d, "machine", "hostname")) for d in F.expand(docs) if _get(d, "machine", "hostname")})
    steps = sum(1 for d in docs if d.get("command") == "lab" for _, c, _ in F.children(d) if c is not None)
    sub = (f"{len(docs)} run{'s' if len(docs) != 1 else ''}"
           + (f" and {steps} lab step run{'s' if steps != 1 else ''}" if steps else "")
           + (f" on {_e(', '.join(hosts))}" if hosts else ""))
    return f'<header><h1>dbtier report</h1><p class="sub">{sub}</p></header>'


def _runs_table(docs: Sequence[dict[str, Any]]) -> str:
    rows = []
    for i, d in enumerate(docs):
        rows.append([str(i + 1), f'<a href="#run-{i + 1}">{_e(d.get("command") or "unknown")}</a>',
                     f"<code>{_e(_run_name(d, i))}</code>", _badge(d.get("status")), _time(d.get("started_at")),
                     _time(d.get("finished_at")), _duration(d.get("started_at"), d.get("finished_at"))])
    return "<h2>Runs</h2>" + _table(["#", "command", "run", "status", "started", "finished", "took"], rows)


def _toc(docs: Sequence[dict[str, Any]], kids: dict[int, list[Entry]], compare: bool) -> str:
    items = []
    if compare:
        items.append('<li><a href="#compare">Side by side</a></li>')
    for i, d in enumerate(docs):
        sub = ""
        if d.get("command") == "probe":
            ts = [t for t in (d.get("targets") or []) if isinstance(t, dict)]
            if len(ts) > 1:
                sub = "<ul>" + "".join(f'<li><a href="#run-{i + 1}-t{j + 1}"><code>{_e(t.get("path"))}</code></a></li>'
                                       for j, t in enumerate(ts)) + "</ul>"
        if kids.get(i):
            sub = "<ul>" + "".join(f'<li><a href="#run-{k + 1}">{_e(F.kind(c))} · {_e(_run_name(c, k))}</a></li>'
                                   for c, k in kids[i]) + "</ul>"
        items.append(f'<li><a href="#run-{i + 1}">{_e(d.get("command") or "unknown")} · '
                     f"{_e(_run_name(d, i))}</a>{sub}</li>")
    if len(items) + sum(len(v) for v in kids.values()) < 2:
        return ""
    return f'<nav class="toc"><b>Contents</b><ul>{"".join(items)}</ul></nav>'


def render_html(docs: list[dict[str, Any]]) -> str:
    """The whole report for these documents, as one self-contained HTML page: the verdict first, then
    the runs side by side, then a section per run (a lab's step runs right after the lab's own)."""
    docs = [d if isinstance(d, dict) else {"command": "unknown", "value": d} for d in docs]
    names = ", ".join(_run_name(d, i) for i, d in enumerate(docs)) or "no runs"
    # Section numbers: the given runs 0..n-1 (anchors run-1 ...), then each lab's step runs.
    kids: dict[int, list[Entry]] = {}
    anchors: dict[int, dict[int, int]] = {}
    n = len(docs)
    for i, d in enumerate(docs):
        if d.get("command") != "lab":
            continue
        lab_name = _run_name(d, i)
        for k, (_, child, _) in enumerate(F.children(d)):
            if child is not None:
                kids.setdefault(i, []).append(({**child, "_parent": lab_name}, n))
                anchors.setdefault(i, {})[k] = n
                n += 1
    entries: list[Entry] = []
    for i, d in enumerate(docs):
        entries.append((d, i))
        entries += kids.get(i, [])
    compare = _comparison([(d, i) for d, i in entries if d.get("command") != "lab"])
    body = [_header(docs), _verdict_section(docs), _runs_table(docs) if docs else "", _toc(docs, kids, bool(compare)),
            compare]
    for i, d in enumerate(docs):
        if d.get("command") == "lab":
            try:
                body.append(_lab_section(d, i, anchors.get(i, {})))
            except Exception as exc:  # as _section: a malformed lab must not cost the report
                body.append(_generic_section(d, i, note=f"This lab document could not be drawn in full "
                                                        f"({type(exc).__name__}: {exc}); its raw content follows."))
        else:
            body.append(_section(d, i))
        body += [_section(c, k) for c, k in kids.get(i, [])]
    if not docs:
        body.append('<p class="note">No result documents were given.</p>')
    body.append(f"<footer>Written by dbtier {_e(__version__)}. Self-contained: no scripts, fonts or images are "
                "loaded from anywhere.</footer>")
    return ("<!DOCTYPE html>\n"
            '<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>dbtier report — {_e(names)}</title><style>{CSS}</style></head>"
            f"<body>{''.join(body)}</body></html>\n")
