"""The report section of a `dbtier bench dss` document: per-query times, scans, spill and totals.
"""

from __future__ import annotations

import re
from typing import Any, cast

from dbtier.core.units import human_bytes
from dbtier.report.figures import core as F
from dbtier.report.figures import placed as P
from dbtier.report.svg import charts as svg
from dbtier.report.base import (
    block_device_of,
    engine_label,
    errors_html,
    esc,
    figure_frame,
    get,
    guards_html,
    html_table,
    isnum,
    json_details,
    json_value,
    kv_table,
    machine_section,
    num,
    run_head,
    to_mb,
)
from dbtier.report.svg.charts import Series
from dbtier.core.parts import dict_at
from dbtier.results.kinds import kind_of

# -- bench dss ---------------------------------------------------------------------------------------------

def _queries(n: Any) -> str:
    return f"{num(n)} quer" + ("y" if n == 1 else "ies")



def _dss_placement(doc: dict[str, Any]) -> str:
    """Data's and temp's directory, device, filesystem and mount (placed.where), and when the run keeps them
    apart on one device, that said."""
    pl = dict_at(doc, "placement")
    p = dict_at(doc, "params")
    w = P.where(doc)
    rows = []
    for role, label in (("data", "database"), ("temp", "temp (spills)")):
        path = pl.get(role) or p.get(role)
        if path is None:
            continue
        part = w.get(role) or {}
        rows.append([esc(label), f'<code class="wrap">{esc(path)}</code>',
                     esc(block_device_of(doc, p.get(role)) or block_device_of(doc, path) or part.get("device")),
                     esc(part.get("mount") or "")])
    if not rows:
        return '<p class="na">No placement recorded.</p>'
    notes = "".join(f'<p class="note">{esc(t)}</p>' for t in P.sharing_sentences(w))
    return html_table(["", "directory", "device", "mount"], rows, cls="placement") + notes


def _dss_summary(doc: dict[str, Any], s: dict[str, Any]) -> str:
    load = dict_at(doc, "load")
    ver = get(doc, "machine", "versions", s["engine"]) if isinstance(s["engine"], str) else None
    rows: list[tuple[str, str]] = [
        ("engine", esc(engine_label(s["engine"])) + (f" {esc(ver)}" if ver else "")),
        ("scale factor", esc(F.fmt_auto(s["scale"])) + (f"; database {esc(human_bytes(load['database_bytes']))}"
                                                if isnum(load.get("database_bytes")) else "")
         + (f", loaded in {num(load.get('seconds'), 1)} s" if isnum(load.get("seconds")) else "")),
        ("queries run", num(s["queries"])),
        ("power run, total", f"<b>{num(s['total_s'], 3)} s</b>" if isnum(s["total_s"]) else "—"),
        ("per query, geometric mean", f"{num(s['geomean_s'], 4)} s" if isnum(s["geomean_s"]) else "—"),
        ("answers", esc(F.answers_text(s["answers_ok"])) if s["queries"] else "—")]
    if s["spilled"]:
        q, b = max(s["spilled"], key=lambda x: x[1])
        share = num(100 * (s["spill_share"] or 0), 0)
        rows.append(("spilled to temp", f"{_queries(len(s['spilled']))}; peak {num(b / 1e6, 1)} MB (Q{esc(q)}); "
                                        f"{share}% of the time"))
    elif s["queries"]:
        rows.append(("spilled to temp", "nothing: every query ran in memory"))
    if isnum(s["cpu_pct"]):
        rows.append(("CPU busy", f"{num(s['cpu_pct'], 0)}% of all cores, weighted by each query's time"))
    if isnum(s["scan_mbps"]):
        scan = dict_at(doc, "scan")
        rows.append(("cold scan", f"{num(s['scan_mbps'])} MB/s from {esc(scan.get('device') or '?')}"
                     + (f": {num(100 * s['scan_ratio'])}% of the probe's sequential read "
                        f"({num(s['probe_mbps'])} MB/s)" if isnum(s["scan_ratio"]) else "")))
    return kv_table(rows)


def _dss_charts(doc: dict[str, Any]) -> list[str]:
    qs = F.dss_queries(doc)
    if not qs:
        return []
    cats = [f"Q{q['query']}" for q in qs]
    labels = len(cats) <= 8
    warm = [(k, q.get("seconds") if isnum(q.get("seconds")) else None) for k, q in enumerate(qs)]
    cold = [(k, q.get("cold_seconds") if isnum(q.get("cold_seconds")) else None) for k, q in enumerate(qs)]
    rep = get(doc, "params", "repeat")
    series = [Series("warm (median)" if isnum(rep) and rep > 1 else "time", warm, svg.colour(0))]
    if isnum(rep) and rep > 1 and any(y is not None for _, y in cold):
        series.append(Series("cold (run 1)", cold, svg.colour(9)))
    out = [figure_frame(svg.bar_chart("TPC-H: time per query", cats, series, x_label="query", y_label="seconds",
                                      unit="s", width=1000, value_labels=labels,
                                      desc="Seconds per query; warm median and the cold first run."),
                        "Each query's time: the median of the warm runs, and the cold first run (database reopened"
                        + (", OS page cache dropped" if any(r.get("caches_dropped") for run in doc.get("runs") or []
                                                     if isinstance(run, list) for r in run if isinstance(r, dict))
                      else "") + ").")]
    if any(isnum(q.get("temp_bytes")) and q["temp_bytes"] > 0 for q in qs):
        out.append(figure_frame(svg.bar_chart("TPC-H: temp spilled per query", cats, [
            Series("temp MB", [(k, q["temp_bytes"] / 1e6 if isnum(q.get("temp_bytes")) else None)
                               for k, q in enumerate(qs)], svg.colour(1))],
            x_label="query", y_label="MB", unit="MB", width=1000, value_labels=labels,
            desc="Peak size of the spill directory per query."),
            "Peak size of the temp (spill) directory while each query ran, polled every 10 ms; MB = 10⁶ bytes."))
    io = [Series("read, cold run", [(k, q["cold_read_bytes"] / 1e6 if isnum(q.get("cold_read_bytes")) else None)
                                    for k, q in enumerate(qs)], svg.colour(0)),
          Series("read, warm", [(k, q["read_bytes"] / 1e6 if isnum(q.get("read_bytes")) else None)
                                for k, q in enumerate(qs)], svg.colour(3)),
          Series("written", [(k, q["write_bytes"] / 1e6 if isnum(q.get("write_bytes")) else None)
                             for k, q in enumerate(qs)], svg.colour(1))]
    io = [x for x in io if any(y for _, y in x.points)]
    if io:
        out.append(figure_frame(svg.bar_chart("TPC-H: device bytes per query", cats, io, x_label="query", y_label="MB",
                                              unit="MB", width=1000, value_labels=False,
                                              desc="Bytes read and written on the placement devices per query."),
                                "From /proc/diskstats of the devices behind the data and temp directories; MB = 10⁶ "
                                "bytes. A warm run reads little: the data is in the page cache."))
    cpu = [(k, q.get("cpu_util") if isnum(q.get("cpu_util")) else None) for k, q in enumerate(qs)]
    if any(y is not None for _, y in cpu):
        out.append(figure_frame(svg.bar_chart("TPC-H: CPU busy per query", cats, [Series("CPU %", cpu, svg.colour(2))],
                                              x_label="query", y_label="% of all cores", unit="%", y_max=100,
                                              width=1000, value_labels=False,
                                              desc="CPU busy % of all cores while each query ran."),
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
        runs = q["runs_seconds"] if isinstance(q.get("runs_seconds"), list) else []
        rows.append([f"Q{esc(q['query'])}", num(q.get("seconds"), 3), num(q.get("cold_seconds"), 3),
                     " · ".join(num(x, 3) for x in runs) or "—", esc(F.spread_text(F.query_spread(q), 3) or "—"),
                     num(q.get("rows")),
                     num(to_mb(q.get("temp_bytes")), 1), num(to_mb(q.get("cold_read_bytes")), 1),
                     num(to_mb(q.get("read_bytes")), 1), num(to_mb(q.get("write_bytes")), 1),
                     num(q.get("cpu_util"), 0), ok])
    t = html_table(["query", "seconds", "cold s", "every run (s)", "warm runs (min–max, n)", "rows", "temp MB",
                    "read MB (cold)", "read MB", "written MB", "CPU %", "answer"], rows,
                   num_cols=[1, 2, 3, *range(5, 11)], cls="points")
    return (f'<details><summary>All {len(qs)} queries</summary><div class="wide">{t}</div>'
            '<p class="reason">seconds: the median of the warm runs (the mean of the two middle ones for an even '
            "count; the cold run when there is no warm one); "
            "MB = 10⁶ bytes; read/written on the placement devices.</p></details>")


def _dss_method(doc: dict[str, Any]) -> str:
    p = dict_at(doc, "params")
    rep = p.get("repeat")
    spreads = [(sp["spread_pct"], q["query"]) for q in F.dss_queries(doc) for sp in [F.query_spread(q)]
               if sp and isnum(sp.get("spread_pct"))]
    rows = [("method", esc(p.get("method") or "—")),
            ("runs", (f"{num(rep)} power run{'s' if rep != 1 else ''}: run 1 cold, the rest warm; each query's "
                      "figure is the median of its warm runs (the mean of the two middle ones for an even count), "
                      "the total the sum of those medians") if isnum(rep) else "—"),
            ("spread", (f"warm runs differ by up to {num(max(spreads)[0], 1)}% of their median (Q{max(spreads)[1]})"
                        if spreads else "one warm run per query at most (n=1): no spread measured "
                                        "(<code>--repeat</code> 3 or more measures it)")
             + (f"; the warm power runs' totals: {esc(F.spread_text(doc.get('warm_totals'), 3))} s"
                if F.spread_of(doc.get("warm_totals")) and doc["warm_totals"]["n"] > 1 else "")),
            ("data", esc(f"TPC-H generated with {p['generator']}") if p.get("generator") else "—"),
            ("memory limit", esc(p.get("memory_limit") or "the engine's default")),
            ("threads", esc(p.get("threads") or "all cores")), ("compression", esc(p.get("compression") or "—")),
            ("timing", "each query timed end to end by dbtier; CPU from /proc/stat, device bytes from "
                       "/proc/diskstats; temp: the peak size of the spill directory, polled every 10 ms")]
    est = p.get("estimate")
    if isinstance(est, dict):
        rows.append(("checked before the run", f"needs about {num(est.get('disk_gb'), 3)} GB of disk and "
                                               f"{num(est.get('memory_gb'), 3)} GB of memory"))
    known = {"method", "repeat", "generator", "memory_limit", "threads", "compression", "estimate", "engine",
             "scale", "data", "temp"}
    rows += [(k.replace("_", " "), json_value(v)) for k, v in p.items() if k not in known]
    return "<h3>How the numbers were obtained</h3>" + kv_table(rows)


def dss_section(doc: dict[str, Any], i: int) -> str:
    out = [run_head(doc, i, f"run-{i + 1}"), errors_html(doc), guards_html(doc)]
    s = F.dss_stats(doc)
    status = doc.get("status")
    if status not in ("ok", None):
        out.append(f'<p class="note">This run is <b>{esc(status)}</b>: {_queries(s["queries"])} finished before it '
                   "stopped; the figures below show only those.</p>")
    out.append(f"<h3>TPC-H power run: {esc(engine_label(s['engine']))}, SF {esc(F.fmt_auto(s['scale']))}</h3>")
    out.append('<div class="top"><div><h4>Summary</h4>' + _dss_summary(doc, s) + "</div><div><h4>Placement</h4>"
               + _dss_placement(doc) + "</div></div>")
    figs = _dss_charts(doc)
    out.append('<div class="charts one">' + "".join(figs) + "</div>" if figs
               else '<p class="na">No query finished.</p>')
    out.append(_dss_table(doc))
    out.append(_dss_method(doc))
    out.append(machine_section(doc))
    out.append(json_details(doc))
    return f'<section class="run bench dss">{"".join(out)}</section>'


# -- temp on two (or more) tiers -------------------------------------------------------------------------------

def temp_tier_name(doc: dict[str, Any]) -> str:
    """What a run's temp tier is: 'emulated: 150 read / 150 write IOPS' when temp was on the emulated tier,
    else the temp directory's device model (its name when the model says nothing), '?' when unknown."""
    emu = doc.get("emulated") if isinstance(doc.get("emulated"), dict) else None
    if emu and "temp" in (doc.get("emulated_roles") or []):
        r, w = emu.get("read_iops"), emu.get("write_iops")
        return (f"emulated: {num(r)} IOPS" if r == w else f"emulated: {num(r)} read / {num(w)} write IOPS")
    bd = get(F.machine_target(doc, get(doc, "params", "temp")), "block_device") or {}
    for what in (bd.get("model"), bd.get("name")) if isinstance(bd, dict) else ():
        # a virtual disk's "model" can be its PCI vendor id (0x1af4: virtio), which names nothing
        if isinstance(what, str) and what.strip() and not re.fullmatch(r"0x[0-9a-fA-F]+", what.strip()):
            return what.strip()
    return "?"


def _exercised_text(doc: dict[str, Any]) -> str:
    tt = dict_at(doc, "temp_tier")
    ex = tt.get("temp_tier_exercised")
    runs = [r for r in tt.get("runs") or [] if isinstance(r, dict) and r.get("spill_bytes")]
    figs = "; ".join(f"run {r.get('run')}: {num(to_mb(r.get('spill_bytes')), 1)} MB spilled, "
                     f"{num(to_mb(r.get('device_write_bytes')), 1)} MB written by {tt.get('device') or '?'}"
                     + (f", {num(to_mb(r['query_written_bytes']), 1)} MB of it by the queries' process"
                        if isnum(r.get("query_written_bytes")) else "") for r in runs)
    if ex is True:
        return f"spill reached the temp device ({figs})"
    if ex is False:
        return f"<b>spill stayed in memory: the temp tier was not exercised</b> ({figs})"
    return "nothing spilled" if not runs else "device writes not recorded"


def dss_tiers_html(docs: list[dict[str, Any]]) -> str:
    """TPC-H runs with temp on different directories (same engine, scale and queries), per query side by
    side: each tier's time (the median of its warm runs) and spill, spilling queries marked; '' otherwise."""
    runs = [d for d in docs if kind_of(d) == "bench.dss" and F.dss_queries(d)
            and isinstance(get(d, "params", "temp"), str)]
    keys = {(F.dss_stats(d)["engine"], F.dss_stats(d)["scale"]) for d in runs}
    if len(runs) < 2 or len(keys) != 1 or len({get(d, "params", "temp") for d in runs}) < 2:
        return ""
    by = [{q["query"]: q for q in F.dss_queries(d)} for d in runs]
    qs = sorted(set().union(*by))
    heads = ["query"] + [f"{esc(get(d, 'params', 'temp'))}<br><span class=reason>{esc(temp_tier_name(d))}</span> s"
                         for d in runs] + [f"÷ {esc(get(runs[0], 'params', 'temp'))}"] * (len(runs) == 2) \
        + [f"spill MB ({k + 1})" for k in range(len(runs))]
    rows = []
    for q in qs:
        cells = [b.get(q) or {} for b in by]
        spilled = any(isnum(c.get("temp_bytes")) and c["temp_bytes"] > 0 for c in cells)
        secs = [c.get("seconds") for c in cells]
        ratio = cast(float, secs[1]) / cast(float, secs[0]) \
            if len(runs) == 2 and all(isnum(x) and x > 0 for x in secs) else None      # both numbers, checked
        rows.append([f"Q{q}" + (" <b>spilled</b>" if spilled else "")] + [num(x, 3) for x in secs]
                    + ([num(ratio, 2) + "×" if ratio else "—"] if len(runs) == 2 else [])
                    + [num(to_mb(c.get("temp_bytes")), 1) for c in cells])
    totals = [F.dss_stats(d)["total_s"] for d in runs]
    rows.append(["<b>total</b>"] + [f"<b>{num(t, 3)}</b>" for t in totals]
                + ([num(totals[1] / totals[0], 2) + "×" if all(isnum(t) and t > 0 for t in totals) else "—"]
                   if len(runs) == 2 else []) + [""] * len(runs))
    t = html_table(heads, rows, num_from=1, cls="points", wide=True)
    notes = "".join(f"<li><code>{esc(get(d, 'params', 'temp'))}</code> ({esc(temp_tier_name(d))}): "
                    f"{_exercised_text(d)}</li>" for d in runs)
    return ("<h3>TPC-H with temp on each tier</h3>"
            '<p class="sub">Per query, each tier\'s time (the median of its warm runs) and spill from that same '
            "run; <b>spilled</b> marks the queries that spilled on either tier: only they can differ by the temp "
            "tier.</p>" + t + f"<ul>{notes}</ul>")
