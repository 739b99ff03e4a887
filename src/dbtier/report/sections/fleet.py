"""The report's part for a fleet probe (`probe --hosts`): what it adds to the aggregate, which
report.probe draws as the probe's one target. A per-host table, each host's 4 KiB random read
curve with the aggregate's, the scaling chart and verdict, and the hosts that dropped, the
warnings and the test files left behind; then each host's own figures, folded.

Outstanding I/O in a fleet probe is per host: every host runs the same job at once.
"""

from __future__ import annotations

from typing import Any

from dbtier.report.figures import core as F
from dbtier.report.figures import fleet as FF
from dbtier.report.svg import charts as svg
from dbtier.report.base import badge, esc, figure_frame, get, html_table, isnum, num
from dbtier.report.sections.probe import OUTSTANDING_PER_HOST, probe_section, target_html, target_points, verdict_html
from dbtier.report.svg.charts import Marker, Series
from dbtier.report.figures.labels import SUMMARY_LABELS
from dbtier.results.probe import RANDOM, READ_4K
from dbtier.core.parts import dict_at

# The per-host table's summary columns, in SUMMARY_LABELS' words.
HOST_KEYS = ("read_iops_4k", "write_iops_4k", "mixed_iops_8k", "read_lat_us_qd1_p50", "read_lat_us_p99_at_max",
             "read_mbps_seq", "write_mbps_seq", "commit_lat_us_p50", "commits_per_s")
PER_HOST_NOTE = ("Outstanding I/O is per host: every host runs the same job at the same time, so at a point of "
                 "outstanding I/O <i>n</i> the storage has <i>n</i> × hosts I/Os in flight. The aggregate sums IOPS "
                 "and MB/s over the hosts that answered at each point; its latency percentiles come from the hosts' "
                 "merged latency distributions, not from an average of percentiles.")


def intro_html(doc: dict[str, Any]) -> str:
    """Above the aggregate: the incomplete notice when a host dropped, and that outstanding I/O is per host."""
    out = []
    notice = FF.fleet_notice(doc)
    if notice:
        out.append(f'<p class="note bad fleet-incomplete"><b>{esc(notice[0].upper() + notice[1:])}.</b></p>')
    n = doc["aggregate"].get("hosts")
    names = ", ".join(h["host"] for h in FF.fleet_hosts(doc))
    out.append(f'<p class="note fleet-per-host">A fleet probe of {esc(n)} hosts at once ({esc(names)}): the '
               f"target below is their aggregate. {PER_HOST_NOTE}</p>")
    return "".join(out)


def _cell(v: Any, key: str) -> str:
    digits = SUMMARY_LABELS.get(key, ("", "", 0))[2]
    return num(v, digits) if isnum(v) else '<span class="na">—</span>'


def _hosts_table(doc: dict[str, Any]) -> str:
    heads = ["host", "status", "checks", "target"]
    heads += [f"{esc(SUMMARY_LABELS[k][0])} ({esc(SUMMARY_LABELS[k][1])})" for k in HOST_KEYS]
    heads += ["fsync honesty", "4 KiB read knee (outstanding per host)"]
    rows = []
    for h in FF.fleet_hosts(doc):
        s = h["summary"]
        kn = F.probe_knee(h["target"]) if h["target"] else None
        addr = f"{h.get('address') or h['host']}" + (f":{h['port']}" if h.get("port") is not None else "")
        rows.append([f'<b>{esc(h["host"])}</b><br><span class="reason">{esc(addr)}</span>', badge(h["status"]),
                     esc(h["checks"] or "—"),
                     f"<code>{esc(h['path'] or '—')}</code>", *(_cell(s.get(k), k) for k in HOST_KEYS),
                     verdict_html(s.get("fsync_honesty")), num(kn["outstanding"]) if kn else "—"])
    agg = doc["aggregate"]
    s = dict_at(agg, "summary")
    kn = F.probe_knee(agg)
    rows.append([f"<b>aggregate of {esc(agg.get('hosts'))}</b>", badge(agg.get("status")), "",
                 f"<code>{esc(agg.get('path'))}</code>", *(_cell(s.get(k), k) for k in HOST_KEYS),
                 verdict_html(s.get("fsync_honesty")), num(kn["outstanding"]) if kn else "—"])
    return html_table(heads, rows, num_cols=range(4, 4 + len(HOST_KEYS) + 2), cls="fleet-hosts", wide=True)


def _read_curve(target: dict[str, Any]) -> list[tuple[float, float]]:
    """The 4 KiB random read sweep, one point per load level: its best (as results.probe.knee reads it,
    a confirming re-measure at the peak's load joins its level)."""
    best: dict[float, float] = {}
    for p in target_points(target):
        if p.get("group") == RANDOM and p.get("test") == READ_4K and isnum(p.get("outstanding")) \
                and isnum(p.get("iops")):
            best[p["outstanding"]] = max(best.get(p["outstanding"], p["iops"]), p["iops"])
    return sorted(best.items())


def _chart_hosts(doc: dict[str, Any]) -> str | None:
    series = []
    for k, h in enumerate(FF.fleet_hosts(doc)):
        pts = _read_curve(h["target"])
        if pts:
            series.append(Series(h["host"] + (" (dropped)" if h["status"] == "dropped" else ""), pts, svg.colour(k),
                                 dashed=h["status"] == "dropped"))
    agg_pts = _read_curve(doc["aggregate"])
    if agg_pts:
        series.append(Series(f"aggregate of {doc['aggregate'].get('hosts')}", agg_pts, svg.INK))
    if not series:
        return None
    chart = svg.line_chart("4 KiB random read: each host and the aggregate", series, x_label=OUTSTANDING_PER_HOST,
                           y_label="IOPS", x_log2=True,
                           desc="One line per host and one for the aggregate; x on a log2 scale, per host.")
    return figure_frame(chart, "IOPS against the outstanding I/O each host kept in flight, all hosts at once; the "
                               "aggregate (black) is their sum at the same point. A dropped host's line is dashed and "
                               "ends where it stopped answering.")


def _scaling_charts(sc: dict[str, Any]) -> list[str]:
    steps = sorted((s for s in F.dicts(sc.get("steps")) if isnum(s.get("hosts"))), key=lambda s: s["hosts"])
    if not steps:
        return []
    where = f"{esc(sc.get('test'))} at {esc(sc.get('jobs'))}×{esc(sc.get('iodepth'))} per host"
    deg = sc.get("degraded_at_hosts")
    markers = []
    at = next((s for s in steps if s["hosts"] == deg), None)
    if at is not None and isnum(at.get("iops_per_host")):
        markers.append(Marker(at["hosts"], at["iops_per_host"], f"degraded at {deg}"))
    iops = svg.line_chart("Scaling: IOPS with more hosts", [
        Series("aggregate IOPS", [(s["hosts"], s.get("iops")) for s in steps], svg.INK),
        Series("IOPS per host", [(s["hosts"], s.get("iops_per_host")) for s in steps], svg.colour(0)),
    ], x_label="hosts at once", y_label="IOPS", markers=markers, x_log2=True,
        desc="Aggregate IOPS and IOPS per host against the number of hosts running at once.")
    lat = svg.line_chart("Scaling: p99 latency with more hosts", [
        Series("worst host p99", [(s["hosts"], s.get("worst_host_lat_us_p99")) for s in steps], svg.colour(2)),
        Series("aggregate p99", [(s["hosts"], s.get("lat_us_p99")) for s in steps], svg.INK, dashed=True),
    ], x_label="hosts at once", y_label="latency (µs)", x_log2=True,
        desc="The worst host's p99 and the aggregate's p99 against the number of hosts running at once.")
    return [figure_frame(iops, f"The same point ({where}) run on 1, 2, … hosts at once: flat IOPS per host means "
                               "the shared storage keeps up; a falling line, that the hosts share a limit."),
            figure_frame(lat, f"The same point ({where}): the slowest host's p99 and the p99 of all the hosts' "
                              "I/Os merged.")]


def _verdict_html(sc: dict[str, Any]) -> str:
    cls = "verdict-suspect" if sc.get("degraded_at_hosts") is not None else "verdict-ok"
    return (f'<p class="fleet-scaling"><b>Scaling:</b> <span class="{cls}">{esc(sc.get("verdict") or "no verdict")}'
            "</span>" + (f' <span class="reason">(rule: {esc(sc["rule"])})</span>' if sc.get("rule") else "")
            + "</p>")


def _host_machine(doc: dict[str, Any], h: dict[str, Any]) -> dict[str, Any] | None:
    """This machine's record of a host's target: only for a host checked here, matched by its path."""
    if h.get("checks") != "local":
        return None
    return next((m for m in F.dicts(get(doc, "machine", "targets")) if m.get("path") == h.get("path")), None)


def hosts_html(doc: dict[str, Any], anchor: str) -> str:
    """Below the aggregate: the hosts side by side, the scaling, what went wrong, each host folded."""
    out = [f'<h3 id="{anchor}-hosts">Hosts</h3>', '<p class="sub">Each host\'s own figures, measured while all the '
           "hosts ran at once; the last row is the aggregate. Outstanding I/O is per host.</p>", _hosts_table(doc)]
    sc = FF.fleet_scaling(doc)
    if sc:
        out.append(_verdict_html(sc))
    figures = [f for f in [_chart_hosts(doc)] if f] + (_scaling_charts(sc) if sc else [])
    if figures:
        out.append('<div class="charts">' + "".join(figures) + "</div>")
    warnings = [w for w in (get(doc, "fleet", "warnings") or []) if w]
    if warnings:
        out.append('<p class="note"><b>Warnings:</b></p><ul class="fleet-warnings">'
                   + "".join(f"<li>{esc(w)}</li>" for w in warnings) + "</ul>")
    left = [x for x in (get(doc, "fleet", "left_behind") or []) if x]
    if left:
        out.append('<p class="note bad"><b>Test files left behind</b> (not removed; delete them by hand):</p>'
                   '<ul class="fleet-left-behind">' + "".join(f"<li><code>{esc(x)}</code></li>" for x in left)
                   + "</ul>")
    for k, h in enumerate(FF.fleet_hosts(doc)):
        if not h["target"]:
            continue
        body = target_html(doc, h["target"], 0, f"{anchor}-h{k + 1}", heading=f"Host {h['host']}:",
                             mt=_host_machine(doc, h) or {})
        out.append(f'<details class="fleet-host"><summary>Host {esc(h["host"])}: every figure and chart '
                   f"({len(target_points(h['target']))} points)</summary>{body}</details>")
    return "".join(out)


def section(doc: dict[str, Any], i: int) -> str:
    """The report's section of any probe document: a fleet's with its hosts, a single host's as ever."""
    if not F.is_fleet(doc):
        return probe_section(doc, i)
    return probe_section(doc, i, (intro_html(doc), hosts_html(doc, f"run-{i + 1}")))
