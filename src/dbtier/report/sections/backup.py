"""The report section of a `dbtier bench backup` document: each method's speed and what limited it.
"""

from __future__ import annotations

from typing import Any

from dbtier.core.units import human_bytes
from dbtier.model.dss import BACKUP_RULE
from dbtier.report.figures import core as F
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
    plural,
    run_head,
    to_mb,
    yes_no,
)
from dbtier.report.svg.charts import Series
from dbtier.core.parts import dict_at

# -- bench backup -----------------------------------------------------------------------------------------

_LIMIT_TEXT = {"source": "source (read)", "target": "target (write)", "cpu": "CPU (compression)",
               "undetermined": "not determined"}


def _median(m: dict[str, Any], side: str) -> Any:
    """A method's MB/s to `side` (dir or null): the median of its runs (the run's own for one run)."""
    return get(m, f"{side}_spread", "median") if isnum(get(m, f"{side}_spread", "median")) else m[f"{side}_mbps"]


def _median_text(sp: Any) -> str:
    """'186 (120–250, n=2)' or 'n=1'."""
    med = get(sp, "median")
    if not isnum(med) or not isnum(get(sp, "n")) or sp["n"] < 2:
        return "n=1"
    return f"{num(med)} ({esc(F.spread_text(sp))})"


def backup_section(doc: dict[str, Any], i: int) -> str:
    out = [run_head(doc, i, f"run-{i + 1}"), errors_html(doc), guards_html(doc)]
    p = dict_at(doc, "params")
    src = dict_at(doc, "source")
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
            f"<b>{esc(m['method'])}</b>: {num(_median(m, 'dir'))} MB/s to the directory"
            + (f", {num(_median(m, 'null'))} MB/s to null" if isnum(_median(m, "null")) else "")
            + f" — limited by the <b>{esc(_LIMIT_TEXT.get(m['limit'], m['limit']))}</b>" for m in limited)
            + (" (medians of the runs)" if isnum(p.get("repeat")) and p["repeat"] > 1 else "") + ".</p>")
    rows = [("source", f"<code>{esc(p.get('data'))}</code> {esc(block_device_of(doc, p.get('data')))}"),
            ("backup directory", f"<code>{esc(p.get('to'))}</code> {esc(block_device_of(doc, p.get('to')))}"),
            ("null sink", "the same backup with its output discarded: what the source can deliver")]
    built = src.get("load_seconds") or src.get("seconds")
    if isnum(size):
        rows.append(("source size", esc(human_bytes(size))
                     + (f", built in {num(built, 1)} s" if isnum(built) else "")))
    emu = doc.get("emulated") if isinstance(doc.get("emulated"), dict) else None
    if emu:
        rows.append(("emulated", esc(emu.get("note") or "")))
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
        devs = dict_at(t, "devices")
        run_no = (f"{num(t.get('run'))} of {num(t.get('runs'))}" if isnum(t.get("runs")) and t["runs"] > 1
                  else "1")
        trows.append([esc(t.get("method")), esc(t.get("target")), run_no, num(t.get("mbps")), num(t.get("seconds"), 2),
                      num(to_mb(t.get("bytes")), 1), num(to_mb(t.get("output_bytes")), 1),
                      _median_text(t.get("mbps_spread")),
                      num(t.get("proc_cpu_cores"), 2), num(get(t, "cpu_util", "busy_pct"), 0),
                      "<br>".join(f"{esc(n)} {num(get(d, 'busy_pct'), 0)}%" for n, d in devs.items()) or "—",
                      yes_no(t.get("caches_dropped")),
                      f'<b>{esc(t.get("bottleneck") or "—")}</b><br><span class="reason">'
                      f'{esc(t.get("bottleneck_evidence") or "")}</span>'])
    if trows:
        out.append('<div class="wide">' + html_table(
            ["method", "to", "run", "MB/s", "seconds", "source MB", "written MB", "median MB/s (min–max, n)",
             "backup process cores", "CPU busy %", "device busy", "page cache dropped", "limiting side"], trows,
            num_cols=range(2, 10), cls="backup")
            + "</div>")
    else:
        out.append('<p class="na">No backup finished.</p>')
    ver = get(doc, "machine", "versions", engine) if isinstance(engine, str) else None
    mrows = [("engine", esc(engine_label(engine)) + (f" {esc(ver)}" if ver else "")),
             ("methods", json_value(p.get("methods"))), ("method", esc(p.get("method") or "—")),
             ("MB/s", "source bytes (10⁶) over the whole backup, start to finish, its writes synced to the device "
                      "before the clock stops"
                      + (f"; {num(p.get('repeat'))} runs per method and target (--repeat): the row's MB/s, seconds, "
                         "CPU and devices are one run's, the one in the middle by MB/s (of two, the slower), so "
                         "source MB / seconds = MB/s; the median of the runs beside it" if isnum(p.get("repeat"))
                         and p["repeat"] > 1 else "; one run per method and target (no spread: --repeat 2 or more "
                         "gives one)")),
             ("limiting side", esc(BACKUP_RULE) + "; judged on the medians of the runs"),
             ("raw outputs", "each backup's program output (pg_basebackup's progress, mariadb-backup's log, the "
                             "EXPORT DATABASE statement and its files) in the run's raw/ directory")]
    out.append("<h3>How the numbers were obtained</h3>" + kv_table(mrows))
    out.append(machine_section(doc))
    out.append(json_details(doc))
    return f'<section class="run bench backup">{"".join(out)}</section>'
