"""The report section of a `dbtier bench backup` document: each method's speed and what limited it.
"""

from __future__ import annotations

from typing import Any

from dbtier.core.units import human_bytes
from dbtier.report import figures as F
from dbtier.report import svg
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
    plural,
    run_head,
    to_mb,
    yes_no,
)
from dbtier.report.svg import Series

# -- bench backup -----------------------------------------------------------------------------------------

_LIMIT_TEXT = {"source": "source (read)", "target": "target (write)", "cpu": "CPU (compression)"}


def backup_section(doc: dict[str, Any], i: int) -> str:
    out = [run_head(doc, i, f"run-{i + 1}"), errors_html(doc), guards_html(doc)]
    p = doc.get("params") if isinstance(doc.get("params"), dict) else {}
    src = doc.get("source") if isinstance(doc.get("source"), dict) else {}
    engine = doc.get("engine") or p.get("engine")
    methods = F.backup_methods(doc)
    targets = [t for t in (doc.get("targets") or []) if isinstance(t, dict)]
    status = doc.get("status")
    if status not in ("ok", None):
        out.append(f'<p class="note">This run is <b>{esc(status)}</b>: {plural(len(targets), "backup")} finished '
                   "before it stopped.</p>")
    size = src.get("database_bytes")
    what = (f"pgbench scale {num(src.get('scale'))}" if engine == "postgres" and isnum(src.get("scale"))
            else ("TPC-H" if engine == "duckdb" else ""))
    out.append(f"<h3>Full backup: {esc(engine_label(engine))}"
               + (f" ({esc(what)}{', ' if what and isnum(size) else ''}"
                  f"{esc(human_bytes(size)) if isnum(size) else ''})" if what or isnum(size) else "") + "</h3>")
    limited = [m for m in methods if m["limit"]]
    if limited:
        out.append('<p class="lead">' + "; ".join(
            f"<b>{esc(m['method'])}</b>: {num(m['dir_mbps'])} MB/s to the directory"
            + (f", {num(m['null_mbps'])} MB/s to null" if isnum(m["null_mbps"]) else "")
            + f" — limited by the <b>{esc(_LIMIT_TEXT.get(m['limit'], m['limit']))}</b>" for m in limited) + ".</p>")
    rows = [("source", f"<code>{esc(p.get('data'))}</code> {esc(block_device_of(doc, p.get('data')))}"),
            ("backup directory", f"<code>{esc(p.get('to'))}</code> {esc(block_device_of(doc, p.get('to')))}"),
            ("null sink", "the same backup with its output discarded: what the source can deliver")]
    built = src.get("load_seconds") or src.get("seconds")
    if isnum(size):
        rows.append(("source size", esc(human_bytes(size))
                     + (f", built in {num(built, 1)} s" if isnum(built) else "")))
    out.append(kv_table(rows))
    cats = [m["method"] for m in methods]
    if cats:
        chart = svg.bar_chart("Backup throughput: to the directory and to null", cats, [
            Series("to the directory", [(k, m["dir_mbps"]) for k, m in enumerate(methods)], svg.colour(0)),
            Series("to null", [(k, m["null_mbps"]) for k, m in enumerate(methods)], svg.colour(9))],
            x_label="method", y_label="MB/s", unit="MB/s", notes=[str(m["limit"] or "") for m in methods],
            desc="MB/s of source bytes per method, to the backup directory and to a null sink.")
        out.append('<div class="charts">' + figure_frame(
            chart, "MB/s of source bytes over the whole backup. Under each method: the limiting side of the run to the "
                   "directory (source read, target write, or the CPU compressing).") + "</div>")
    trows = []
    for t in targets:
        devs = t.get("devices") if isinstance(t.get("devices"), dict) else {}
        trows.append([esc(t.get("method")), esc(t.get("target")), num(t.get("mbps")),
                      esc(F.spread_text(t.get("mbps_spread")) or "n=1"), num(t.get("seconds"), 2),
                      num(to_mb(t.get("bytes")), 1), num(to_mb(t.get("output_bytes")), 1),
                      num(t.get("proc_cpu_cores"), 2), num(get(t, "cpu_util", "busy_pct"), 0),
                      "<br>".join(f"{esc(n)} {num(get(d, 'busy_pct'), 0)}%" for n, d in devs.items()) or "—",
                      yes_no(t.get("caches_dropped")),
                      f'<b>{esc(t.get("bottleneck") or "—")}</b><br><span class="reason">'
                      f'{esc(t.get("bottleneck_evidence") or "")}</span>'])
    if trows:
        out.append('<div class="wide">' + html_table(
            ["method", "to", "MB/s (median)", "runs (min–max, n)", "seconds", "source MB", "written MB",
             "backup process cores", "CPU busy %", "device busy", "page cache dropped", "limiting side"], trows,
            num_cols=range(2, 9), cls="backup")
            + "</div>")
    else:
        out.append('<p class="na">No backup finished.</p>')
    ver = get(doc, "machine", "versions", engine) if isinstance(engine, str) else None
    mrows = [("engine", esc(engine_label(engine)) + (f" {esc(ver)}" if ver else "")),
             ("methods", json_value(p.get("methods"))), ("method", esc(p.get("method") or "—")),
             ("MB/s", "source bytes (10⁶) over the whole backup, start to finish"
                      + (f"; the median of {num(p.get('repeat'))} runs per method and target (--repeat), their "
                         "seconds, CPU and devices those of the run in the middle" if isnum(p.get("repeat"))
                         and p["repeat"] > 1 else "; one run per method and target (no spread: --repeat 2 or more "
                         "gives one)")),
             ("limiting side", "the CPU when compression keeps the backup process at 0.85 cores or more; the "
                               "target when the directory is under 80% of the null sink and at least as busy as "
                               "the source; the source otherwise")]
    out.append("<h3>How the numbers were obtained</h3>" + kv_table(mrows))
    out.append(machine_section(doc))
    out.append(json_details(doc))
    return f'<section class="run bench backup">{"".join(out)}</section>'
