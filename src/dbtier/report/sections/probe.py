"""The report section of a `dbtier probe` document: per target its summary, fsync honesty, charts of
the sweep, the fill test and every point; then how the numbers were obtained and the machine.
"""

from __future__ import annotations

from typing import Any, Sequence

from dbtier.core.units import human_bytes
from dbtier.report.figures import core as F
from dbtier.report.svg import charts as svg
from dbtier.report.base import (
    badge,
    errors_html,
    esc,
    figure_frame,
    get,
    guards_html,
    html_table,
    isnum,
    json_value,
    kv_table,
    machine_section,
    num,
    run_head,
    yes_no,
)
from dbtier.report.svg.charts import Band, Marker, RefLine, Series
from dbtier.report.figures.labels import SUMMARY_LABELS, cache_note, rotational_text
from dbtier.results.cache_suspect import of_target as cache_of_target
from dbtier.results.probe import (
    COMMIT,
    COMMIT_NOSYNC,
    RANDOM,
    RANDOM_TESTS,
    READ_4K,
    SEQUENTIAL,
    FIGURE_KEYS,
    MIN_MEASUREMENTS,
    SEQUENTIAL_TESTS,
    WRITE_4K,
)
from dbtier.core.parts import dict_at

# Each test keeps its colour everywhere (random tests in the order their lines are drawn).
TEST_COLOURS = {t: svg.colour(i) for i, t in enumerate(RANDOM_TESTS)}
TEST_COLOURS.update({t: svg.colour(i) for i, t in enumerate(SEQUENTIAL_TESTS)})
# -- points --------------------------------------------------------------------------

def target_points(target: dict[str, Any]) -> list[dict[str, Any]]:
    pts = target.get("points")
    return [p for p in pts if isinstance(p, dict)] if isinstance(pts, list) else []


def _side_lat(p: dict[str, Any], side: str, pct: str) -> float | None:
    v = get(p, side, "lat_us", pct)
    if not isnum(v):
        v = get(p, "lat_us", pct)
    return v if isnum(v) else None


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

OUTSTANDING = "outstanding I/O (jobs × queue depth)"
OUTSTANDING_PER_HOST = "outstanding I/O per host (jobs × queue depth)"


def _chart_iops(points: list[dict[str, Any]], x_label: str = OUTSTANDING) -> str | None:
    tests = _by_test(points, RANDOM)
    if not tests:
        return None
    series, sparse = [], []
    for i, t in enumerate(_ordered(tests, RANDOM_TESTS)):
        pts = [(p["outstanding"], p.get("iops")) for p in tests[t] if isnum(p.get("outstanding"))]
        dashed = len(pts) <= 2 and len(tests) > 3
        if dashed:
            sparse.append(t)
        series.append(Series(t, pts, _colour_for(t, i), dashed=dashed))
    markers = []
    read4k = [p for p in tests.get(READ_4K, []) if isnum(p.get("iops")) and isnum(p.get("outstanding"))]
    if read4k:
        peak = max(read4k, key=lambda p: p["iops"])
        markers.append(Marker(peak["outstanding"], peak["iops"], f"4k read peak {svg.fmt_num(peak['iops'])}"))
    chart = svg.line_chart("Random I/O: IOPS vs outstanding I/O", series,
                           x_label=x_label, y_label="IOPS", x_log2=True,
                           markers=markers, desc="One line per random test; x on a log2 scale.")
    cap = "One line per random test; the ring marks the 4 KiB random read peak."
    if sparse:
        cap += (f" Dashed: {', '.join(esc(s) for s in sparse)} measured at queue depth 1 and at the 4 KiB peak's "
                "load only (quick profile).")
    return figure_frame(chart, cap)


def _chart_latency(points: list[dict[str, Any]], x_label: str = OUTSTANDING) -> str | None:
    tests = _by_test(points, RANDOM)
    series = []
    for t, side, name in ((READ_4K, "read", "4k read"), (WRITE_4K, "write", "4k write")):
        pts = sorted((p for p in tests.get(t, []) if isnum(p.get("outstanding"))), key=lambda p: p["outstanding"])
        if not pts:
            continue
        col = TEST_COLOURS[t]
        series.append(Series(f"{name} p50", [(p["outstanding"], _side_lat(p, side, "p50")) for p in pts], col))
        series.append(Series(f"{name} p99", [(p["outstanding"], _side_lat(p, side, "p99")) for p in pts], col,
                             dashed=True))
    if not series:
        return None
    chart = svg.line_chart("4 KiB random latency vs outstanding I/O", series,
                           x_label=x_label, y_label="latency (µs)",
                           x_log2=True, y_log=True, desc="p50 solid, p99 dashed; both axes logarithmic.")
    return figure_frame(chart, "Latency per I/O from submission to completion (fio lat); p50 solid, p99 dashed; "
                               "logarithmic axes.")


def _chart_sequential(points: list[dict[str, Any]]) -> str | None:
    tests = _by_test(points, SEQUENTIAL)
    if not tests:
        return None
    series = []
    for i, t in enumerate(_ordered(tests, SEQUENTIAL_TESTS)):
        pts = []
        for p in tests[t]:
            streams = p.get("streams") if isnum(p.get("streams")) else p.get("jobs")
            if isnum(streams):
                pts.append((streams, p.get("mbps")))
        series.append(Series(t, pts, _colour_for(t, i), dashed="write" in t))
    chart = svg.line_chart("Sequential throughput vs streams", series, x_label="concurrent streams",
                           y_label="MB/s", x_log2=True, desc="One line per sequential test; writes dashed.")
    return figure_frame(chart, "Each stream reads or writes its own region of the test file; MB = 10⁶ bytes. "
                               "The sweep stops once another stream adds less than 5%.")


def _commit_points(points: list[dict[str, Any]]) -> list[dict[str, Any]]:
    pts = [p for p in points if p.get("test") == COMMIT]
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
    nosync = next((p for p in points if p.get("test") == COMMIT_NOSYNC), None)
    w50 = _side_lat(nosync, "write", "p50") if nosync else None
    if w50 is not None:
        cap += f" The same write without fdatasync: p50 {num(w50, 1)} µs."
    out.append(figure_frame(lat_chart, cap))
    rate_chart = svg.bar_chart("Commits per second", cats, [
        Series("commits/s", [(k, p.get("iops")) for k, p in enumerate(pts)], svg.colour(4)),
    ], y_label="commits/s", unit="/s", desc="Commit throughput for each number of writers.")
    out.append(figure_frame(rate_chart, "Total over all writers; with one writer, commits/s × latency ≈ 1 s."))
    return out


def _chart_steady(ss: Any) -> str | None:
    if not isinstance(ss, dict):
        return None
    rounds = [r for r in (ss.get("round_iops") or []) if isnum(r)]
    if not rounds:
        return None
    window = ss.get("window") if isinstance(ss.get("window"), list) else []
    bands, refs = [], []
    if window and len(window) <= len(rounds):
        bands.append(Band(len(rounds) - len(window) + 1, len(rounds), "measurement window"))
    if isnum(ss.get("average")):
        refs.append(RefLine(ss["average"], f"window average {svg.fmt_num(ss['average'])}"))
    chart = svg.line_chart("Preconditioning: 4 KiB random write IOPS per round",
                           [Series("IOPS per round", list(enumerate(rounds, start=1)), svg.colour(1))],
                           x_label="round", y_label="IOPS", bands=bands, ref_lines=refs,
                           desc="SNIA PTS steady-state rounds.")
    reached = ss.get("reached")
    verdict = ("<span class=verdict-ok>steady state reached</span>" if reached is True
               else "<span class=verdict-suspect>steady state not reached</span>")
    cap = (f"{verdict} after {num(ss.get('rounds') or len(rounds))} rounds; range {num(ss.get('range_pct'), 1)}% "
           f"(limit 20%), excursion {num(ss.get('excursion_pct'), 1)}% (limit 10%). {esc(ss.get('rule') or '')}")
    return figure_frame(chart, cap)


def _chart_fill(fill: Any) -> list[str]:
    if not isinstance(fill, list):
        return []
    rows = [f for f in fill if isinstance(f, dict) and isnum(f.get("fs_used_pct"))]
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
    return [figure_frame(seq, "Each step writes a new file, then measures."),
            figure_frame(rnd, "Random writes over all the files written so far.")]


# -- probe tables --------------------------------------------------------------------------

def verdict_html(verdict: Any) -> str:
    if verdict is None:
        return "—"
    cls = "verdict-ok" if verdict == "ok" else ("verdict-suspect" if verdict == "suspect" else "verdict-unknown")
    return f'<span class="{cls}">{esc(verdict)}</span>'


def _summary_table(target: dict[str, Any], cache: dict[str, Any] | None = None) -> str:
    """`cache`: the target's cache_suspect (results/cache_suspect.py); its figures are marked as a cache's."""
    s = dict_at(target, "summary")
    cached = set((cache or {}).get("figures") or [])
    rows = []
    for key in FIGURE_KEYS:
        label, unit, digits = SUMMARY_LABELS.get(key, (key.replace("_", " "), "", 1))
        v = s.get(key)
        cell = num(v, digits) if isnum(v) else '<span class="na">not measured</span>'
        if key in cached and isnum(v):
            cell += ' <span class="bad" title="a write-back cache\'s figure, not the media\'s">(cache)</span>'
        sp = F.probe_spread(target, key) if isnum(v) else None
        pct = sp.get("spread_pct") if sp else None
        runs = esc(F.spread_text(sp, digits)) if sp else ""
        rows.append(f'<tr><td>{esc(label)}</td><td class="num">{cell}</td><td class="unit">{esc(unit)}</td>'
                    f'<td class="num">{runs}</td><td class="num">{num(pct, 1) + "%" if isnum(pct) else ""}'
                    '</td></tr>')
    verdict = s.get("fsync_honesty")
    reason = s.get("fsync_honesty_reason")
    rows.append(f'<tr><td>fsync honesty</td><td class="num">{verdict_html(verdict)}</td><td></td><td></td><td></td></tr>')
    if reason:
        rows.append(f'<tr><td colspan="5" class="reason">{esc(reason)}</td></tr>')
    if cache and cached:            # (figures named only by a cache_suspect)
        rows.append(f'<tr><td colspan="5" class="reason">{esc(cache_note(cache))}</td></tr>')
    return ('<div class="wide"><table class="summary"><thead><tr><th>measure</th><th class="num">value (median)</th>'
            '<th>unit</th><th class="num">runs (min–max, n)</th><th class="num">spread (range / median)</th></tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


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
        items.append(f'<li><span class="{cls}">{mark}</span> <b>{esc(c.get("name"))}</b>: {esc(c.get("detail"))}</li>')
    warn = ""
    if h.get("verdict") not in (None, "ok"):
        warn = ('<p class="note bad">A device or layer that acknowledges a flush before the data is durable loses '
                'committed transactions at power loss: its commit figures are not comparable with honest ones.</p>')
    return (f'<div class="card"><h4>fsync honesty: {verdict_html(h.get("verdict"))}</h4>'
            f'<ul class="checks">{"".join(items)}</ul>{warn}</div>')


def _target_facts(target: dict[str, Any], mt: dict[str, Any] | None) -> str:
    bd = (mt or {}).get("block_device") or {}
    rows = [("path", f"<code>{esc(target.get('path'))}</code>"),
            ("kind", esc(target.get("kind") or "—")),
            ("filesystem", esc(target.get("filesystem") or (mt or {}).get("filesystem") or "—")),
            ("device", esc(" · ".join(str(x) for x in (bd.get("name"), bd.get("model"), bd.get("driver")) if x)
                           or "—")),
            ("rotational", esc(rotational_text(bd))),
            ("test file", esc(human_bytes(target["file_bytes"])) if isnum(target.get("file_bytes")) else "—"),
            ("I/O", "direct (O_DIRECT)" if target.get("direct_io") is not False else
             "<b>buffered, through the page cache</b>"),
            ("points measured", num(len(target_points(target))))]
    return kv_table(rows)


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
        rows.append([esc(p.get("test")) + mark, esc(p.get("group")), f"{esc(p.get('jobs'))}×{esc(p.get('iodepth'))}",
                     num(p.get("outstanding")), num(sw) if sw is not None else "",
                     num(p.get("iops")), num(p.get("mbps"), 1),
                     num(lat.get("p50"), 1), num(lat.get("p99"), 1), num(lat.get("p999"), 1),
                     num(p.get("cpu_cores"), 2), esc(p.get("ioengine") or ""), yes_no(p.get("direct"))])
    table = html_table(headers, rows, num_cols=(3, 4, 5, 6, 7, 8, 9, 10), cls="points")
    return (f'<details><summary>All {len(points)} measured points</summary><div class="wide">{table}</div>'
            '<p class="reason">† commit latency: the buffered write plus its fdatasync. Other latencies: fio '
            'completion latency per I/O. CPU cores: fio\'s own user + system time.</p></details>')


def _fill_table(fill: Any) -> str:
    if not isinstance(fill, list) or not fill:
        return ""
    rows = [[esc(human_bytes(f["filled_bytes"])) if isnum(f.get("filled_bytes")) else "—",
             num(f.get("fs_used_pct"), 1), num(f.get("seq_write_mbps"), 0), num(f.get("rand_write_iops_4k")),
             num(f.get("rand_write_lat_us_p99"), 1)] for f in fill if isinstance(f, dict)]
    return ("<h4>Fill</h4>" + html_table(["written", "filesystem used %", "seq write MB/s", "4k rand write IOPS",
                                        "4k rand write p99 µs"], rows, num_cols=(1, 2, 3, 4)))


def machine_target(doc: dict[str, Any], target: dict[str, Any], index: int) -> dict[str, Any] | None:
    mts = [m for m in (get(doc, "machine", "targets") or []) if isinstance(m, dict)]
    for m in mts:
        if m.get("path") == target.get("path") or m.get("device") == target.get("path"):
            return m
    return mts[index] if index < len(mts) else None


def target_html(doc: dict[str, Any], target: dict[str, Any], j: int, anchor: str, per_host: bool = False,
                  heading: str = "Target", mt: dict[str, Any] | None = None) -> str:
    """One target's figures. A fleet probe's: `per_host`, the outstanding-I/O axes say per host; `heading`
    names it; `mt` its machine record ({} for none: not this machine's, or the aggregate's)."""
    points = target_points(target)
    status = target.get("status")
    xl = OUTSTANDING_PER_HOST if per_host else OUTSTANDING
    out = [f'<h3 id="{anchor}">{esc(heading)} <code>{esc(target.get("path") or f"target {j + 1}")}</code> '
           f'{badge(status)}</h3>']
    if status not in ("ok", None):
        out.append(f'<p class="note">This target\'s probe is <b>{esc(status)}</b>: {len(points)} point(s) were '
                   'measured before it stopped; the figures below show only what finished.</p>')
    if mt is None:
        mt = machine_target(doc, target, j)
    out.append('<div class="top"><div>')
    cache = cache_of_target(target, (mt or {}).get("block_device"), get(doc, "machine", "memory_bytes"))
    out.append("<h4>Summary</h4>" + _summary_table(target, cache))
    out.append("</div><div>")
    out.append("<h4>Target</h4>" + _target_facts(target, mt))
    out.append(_fsync_card(target))
    out.append("</div></div>")
    figures = [f for f in (_chart_iops(points, xl), _chart_latency(points, xl), _chart_sequential(points)) if f]
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


def _levels(levels: Any) -> str:
    if not isinstance(levels, list) or not levels:
        return "—"
    parts = []
    for lv in levels:
        if isinstance(lv, (list, tuple)) and len(lv) == 2 and all(isnum(x) for x in lv):
            parts.append(f"{lv[0]}×{lv[1]}")
        else:
            parts.append(esc(lv))
    outs = [lv[0] * lv[1] for lv in levels if isinstance(lv, (list, tuple)) and len(lv) == 2
            and all(isnum(x) for x in lv)]
    rng = f" (outstanding I/O {min(outs)} to {max(outs)}, doubling)" if outs else ""
    return ", ".join(parts) + " jobs × queue depth" + rng


def _method_section(doc: dict[str, Any]) -> str:
    p = dict_at(doc, "params")
    fio = get(doc, "machine", "versions", "fio")
    direct = p.get("direct_io")
    rows = [("engine", esc(p.get("engine") or "fio") + (f" {esc(fio)}" if fio else "")),
            ("I/O path", "direct I/O (O_DIRECT): the page cache is bypassed" if direct is not False else
             "<b>buffered</b>: through the page cache (asked for with --buffered); figures include caching"),
            ("profile", esc(p.get("profile") or "—")),
            ("seconds per point", (f"{num(p.get('point_s'), 1)} s measured after {num(p.get('ramp_s'), 1)} s of "
                                   "warm-up, which is excluded") if isnum(p.get("point_s")) else "—"),
            ("load levels", _levels(p.get("load_levels"))),
            ("sweep stop", (f"a random sweep stops once p99 latency passes {num(p.get('max_lat_ms'), 0)} ms or IOPS "
                            "stops growing") if isnum(p.get("max_lat_ms")) else "—"),
            ("latency", esc(p.get("latency") or "—")),
            ("commit pattern", esc(p.get("commit_pattern") or "—")),
            ("tests", esc(", ".join(map(str, p.get("tests") or [])) or "—")),
            ("free-space margin", f"{num(p.get('margin_pct'), 0)}% of the filesystem left untouched"
             if isnum(p.get("margin_pct")) else "—"),
            ("fill test", yes_no(p.get("fill"))),
            ("headline figures", f"each the median of at least {MIN_MEASUREMENTS} runs of its point (the probe "
             "measures a headline point again until it has them); the spread is the runs' range as a share of "
             "the median; a peak is the point with the highest median")]
    known = {"engine", "direct_io", "profile", "point_s", "ramp_s", "load_levels", "max_lat_ms", "latency",
             "commit_pattern", "tests", "margin_pct", "fill"}
    rows += [(k.replace("_", " "), json_value(v)) for k, v in p.items() if k not in known]
    return ("<h3>How the numbers were obtained</h3>"
            "<p>Each point is one fio run against a test file dbtier created; random tests sweep the number of "
            "outstanding I/Os, sequential tests the number of streams, commit tests the number of writers. "
            "MB/s counts 10⁶ bytes; latencies are in microseconds.</p>" + kv_table(rows))

def probe_section(doc: dict[str, Any], i: int, fleet: tuple[str, str] | None = None) -> str:
    """A probe's section. `fleet` (from report/sections/fleet.py's section, for a `probe --hosts` document): the HTML
    drawn before and after its one target, the aggregate, whose axes say per host."""
    anchor = f"run-{i + 1}"
    out = [run_head(doc, i, anchor), errors_html(doc), guards_html(doc)]
    if fleet is not None:
        out.append(fleet[0])
    targets = [t for t in (doc.get("targets") or []) if isinstance(t, dict)]
    if not targets:
        out.append('<p class="note">This probe has no targets yet: it stopped before measuring anything.</p>')
    for j, t in enumerate(targets):
        out.append(target_html(doc, t, j, f"{anchor}-t{j + 1}", per_host=True, heading="Aggregate", mt={})
                   if fleet is not None else target_html(doc, t, j, f"{anchor}-t{j + 1}"))
    if fleet is not None:
        out.append(fleet[1])
    out.append(_method_section(doc))
    out.append(machine_section(doc))
    return f'<section class="run probe">{"".join(out)}</section>'
