"""The HTML report: one self-contained page for one or more result documents.

Pure: documents in, a string out. Everything the page needs is inline (CSS,
charts as SVG), so it opens offline and prints as it looks. Documents of
commands this module does not know get a generic section, so a report never
fails on a newer or partial document.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
from html import escape
from typing import Any, Callable, Iterable, Sequence

from dbtier import __version__
from dbtier.core.units import human_bytes
from dbtier.report import svg
from dbtier.report.svg import Band, Marker, RefLine, Series
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
  .badge, .note { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
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
    return os.path.basename(os.path.normpath(d)) if isinstance(d, str) and d else f"run {i + 1}"


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
    text = json.dumps(doc, indent=2, default=str, sort_keys=False)
    return f"<details><summary>Result document (JSON)</summary><pre>{_e(text)}</pre></details>"


def _probe_section(doc: dict[str, Any], i: int) -> str:
    anchor = f"run-{i + 1}"
    out = [_run_head(doc, i, anchor), _errors(doc)]
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


SECTIONS: dict[str, Callable[[dict[str, Any], int], str]] = {"probe": _probe_section, "plan": _plan_section}


def _section(doc: dict[str, Any], i: int) -> str:
    render = SECTIONS.get(doc.get("command"))  # type: ignore[arg-type]
    if render is None:
        return _generic_section(doc, i)
    try:
        return render(doc, i)
    except Exception as exc:  # a malformed document must not cost the rest of the report
        return _generic_section(doc, i, note=f"This {doc.get('command')} document could not be drawn in full "
                                             f"({type(exc).__name__}: {exc}); its raw content follows.")


# -- comparison and page ------------------------------------------------------------------------

def _probe_targets(docs: Sequence[dict[str, Any]]) -> list[tuple[int, int, dict[str, Any], dict[str, Any]]]:
    out = []
    for i, d in enumerate(docs):
        if d.get("command") != "probe":
            continue
        for j, t in enumerate(d.get("targets") or []):
            if isinstance(t, dict):
                out.append((i, j, d, t))
    return out


def _comparison(docs: Sequence[dict[str, Any]]) -> str:
    cols = _probe_targets(docs)
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
    return ('<section class="compare"><h2 id="compare">Side by side</h2>'
            '<p class="sub">Every probe target in this report; the best value of each row in bold.</p>'
            f'<div class="wide"><table><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
            "</div></section>")


def _header(docs: Sequence[dict[str, Any]]) -> str:
    rows = []
    for i, d in enumerate(docs):
        rows.append([str(i + 1), f'<a href="#run-{i + 1}">{_e(d.get("command") or "unknown")}</a>',
                     f"<code>{_e(_run_name(d, i))}</code>", _badge(d.get("status")), _time(d.get("started_at")),
                     _time(d.get("finished_at")), _duration(d.get("started_at"), d.get("finished_at"))])
    hosts = sorted({str(_get(d, "machine", "hostname")) for d in docs if _get(d, "machine", "hostname")})
    sub = f"{len(docs)} run{'s' if len(docs) != 1 else ''}" + (f" on {_e(', '.join(hosts))}" if hosts else "")
    table = _table(["#", "command", "run", "status", "started", "finished", "took"], rows)
    return f'<header><h1>dbtier report</h1><p class="sub">{sub}</p>{table}</header>'


def _toc(docs: Sequence[dict[str, Any]]) -> str:
    items = []
    if len(_probe_targets(docs)) >= 2:
        items.append('<li><a href="#compare">Side by side</a></li>')
    for i, d in enumerate(docs):
        sub = ""
        if d.get("command") == "probe":
            ts = [t for t in (d.get("targets") or []) if isinstance(t, dict)]
            if len(ts) > 1:
                sub = "<ul>" + "".join(f'<li><a href="#run-{i + 1}-t{j + 1}"><code>{_e(t.get("path"))}</code></a></li>'
                                       for j, t in enumerate(ts)) + "</ul>"
        items.append(f'<li><a href="#run-{i + 1}">{_e(d.get("command") or "unknown")} · '
                     f"{_e(_run_name(d, i))}</a>{sub}</li>")
    if len(items) < 2:
        return ""
    return f'<nav class="toc"><b>Contents</b><ul>{"".join(items)}</ul></nav>'


def render_html(docs: list[dict[str, Any]]) -> str:
    """The whole report for these documents, as one self-contained HTML page."""
    docs = [d if isinstance(d, dict) else {"command": "unknown", "value": d} for d in docs]
    names = ", ".join(_run_name(d, i) for i, d in enumerate(docs)) or "no runs"
    body = [_header(docs), _toc(docs), _comparison(docs)]
    body += [_section(d, i) for i, d in enumerate(docs)]
    if not docs:
        body.append('<p class="note">No result documents were given.</p>')
    body.append(f"<footer>Written by dbtier {_e(__version__)}. Self-contained: no scripts, fonts or images are "
                "loaded from anywhere.</footer>")
    return ("<!DOCTYPE html>\n"
            '<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>dbtier report — {_e(names)}</title><style>{CSS}</style></head>"
            f"<body>{''.join(body)}</body></html>\n")
