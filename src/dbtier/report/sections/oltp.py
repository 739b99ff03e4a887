"""The report section of a `dbtier bench oltp` document: the sweep, the placement matrix, waits,
device utilisation and the time series of a point.
"""

from __future__ import annotations

import os
from typing import Any, Iterable

from dbtier.model.placement import ALL_READ_STEPS, step_label
from dbtier.core.units import human_bytes
from dbtier.model.guards import doc_guards, reads_from_memory
from dbtier.report.figures import core as F
from dbtier.report.figures import method as FM
from dbtier.report.figures import placed as P
from dbtier.report.svg import charts as svg
from dbtier.report.base import (
    block_device_of,
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
    path_under,
    plural,
    run_head,
    to_mb,
)
from dbtier.report.svg.charts import Marker, Series
from dbtier.core.parts import dict_at

# -- bench oltp ------------------------------------------------------------------------------------

# Where backends spent their time, and the bottleneck classes: one colour each, in every chart.
WAIT_CLASSES = ("cpu", "storage", "commit", "lock", "client", "other", "idle")
WAIT_COLOURS = {"cpu": svg.colour(2), "storage": svg.colour(0), "commit": svg.colour(1), "lock": svg.colour(6),
                "client": svg.colour(3), "other": svg.colour(9), "idle": "#d0d0d0"}
_ROLES = ("data", "index", "wal", "temp")
_ROLE_LABELS = {"data": "tables (data)", "index": "indexes", "wal": "WAL", "temp": "temp", "redo": "redo log",
                "undo": "undo", "binlog": "binary log"}
# The roles each engine places, in the matrix table's columns (InnoDB keeps indexes in the table's file).
_ENGINE_ROLES = {"postgres": ("data", "index", "wal", "temp"), "mariadb": ("data", "redo", "undo", "temp")}
_MATRIX_HEADS = {"data": "tables", "index": "indexes", "wal": "WAL", "temp": "temp", "redo": "redo", "undo": "undo"}
_WORKLOAD_NAMES = F.WORKLOAD_NAMES
_WORKLOAD_METHOD: dict[Any, str] = {     # looked up with a document's value, which may be anything
    "tpcc": "TPC-C-like: the five transactions (new-order, payment, order-status, delivery, stock-level in a "
            "45/43/4/4/4 mix) as PL/pgSQL functions driven by pgbench, 1% of new orders rolled back, TPC-C's "
            "cardinalities. NOPM counts new orders per minute (from district.d_next_o_id); TPM counts all "
            "transactions. It is not TPC-C and its figures are not tpmC.",
    "tpcb": "pgbench's built-in TPC-B-like script: three updates, a select and an insert per transaction.",
    "select-only": "pgbench's built-in select-only script: one primary-key lookup per transaction.",
    "readmix": "80% 100-row index range scans and 20% update + insert.",
    "sysbench-rw": "sysbench oltp_read_write: 10 point selects, 4 range queries, 2 updates, a delete and an insert "
                   "per transaction.",
    "sysbench-ro": "sysbench oltp_read_only: 10 point selects and 4 range queries per transaction.",
    "sysbench-wo": "sysbench oltp_write_only: 2 updates, a delete and an insert per transaction.",
    "sysbench-point": "sysbench oltp_point_select: one primary-key lookup per transaction.",
}
# TPC-C-like on an engine other than PostgreSQL: the same transactions, driven by its own driver.
_TPCC_OTHER = ("TPC-C-like: the five transactions (new-order, payment, order-status, delivery, stock-level in a "
               "45/43/4/4/4 mix) driven by {driver}, 1% of new orders rolled back, TPC-C's cardinalities. NOPM counts "
               "new orders per minute; TPM counts all transactions. It is not TPC-C and its figures are not tpmC.")


def oltp_points(x: Any) -> list[dict[str, Any]]:
    """The points with a client count, in client order."""
    pts = [p for p in x if isinstance(p, dict) and isnum(p.get("clients"))] if isinstance(x, list) else []
    return sorted(pts, key=lambda p: p["clients"])


def best_point(points: list[dict[str, Any]]) -> dict[str, Any] | None:
    pts = [p for p in points if isnum(p.get("tps"))]
    return max(pts, key=lambda p: p["tps"]) if pts else None


def _knee_point(points: list[dict[str, Any]], knee: Any) -> dict[str, Any] | None:
    c = get(knee, "clients")
    return next((p for p in points if p.get("clients") == c), None) if isnum(c) else None


def _devices(p: dict[str, Any] | None) -> list[dict[str, Any]]:
    ds = (p or {}).get("devices")
    return [d for d in ds if isinstance(d, dict)] if isinstance(ds, list) else []


def _dev_max(p: dict[str, Any] | None, key: str) -> float | None:
    vals = [d[key] for d in _devices(p) if isnum(d.get(key))]
    return max(vals) if vals else None


def _clients_label(c: Any) -> str:
    return f"{num(c)} client" + ("" if c == 1 else "s")



def _oltp_workload(doc: dict[str, Any], load: Any) -> str:
    p = dict_at(doc, "params")
    w = p.get("workload") or get(load, "workload")
    name = _WORKLOAD_NAMES.get(w, str(w or "?"))
    if w == "tpcc":
        n = get(load, "warehouses") if isnum(get(load, "warehouses")) else p.get("warehouses")
        return f"{name}, {plural(n, 'warehouse')}" if isnum(n) else name
    s = get(load, "scale") if isnum(get(load, "scale")) else p.get("scale")
    return f"{name}, scale {num(s)}" if isnum(s) else name


def _matrix_dirs(doc: dict[str, Any]) -> dict[str, str]:
    """{'fast': FAST, 'slow': SLOW} from --placement-matrix FAST,SLOW; {} otherwise."""
    m = get(doc, "params", "placement_matrix")
    parts = [x.strip() for x in m.split(",")] if isinstance(m, str) else []
    return {"fast": parts[0], "slow": parts[1]} if len(parts) == 2 and all(parts) else {}



def _tier(path: Any, dirs: dict[str, str]) -> str | None:
    """'fast' or 'slow' for a directory under one of the matrix directories (the longer match wins)."""
    if not isinstance(path, str):
        return None
    hits = [(len(d), t) for t, d in dirs.items() if path_under(path, d)]
    return max(hits)[1] if hits else None


def _tier_tag(tier: str | None) -> str:
    return f'<span class="tier {tier}">{tier}</span>' if tier in ("fast", "slow") else ""

def _placement_table(doc: dict[str, Any], placement: Any, dirs: dict[str, str], src: Any = None) -> str:
    """Each role's directory, tier, device, filesystem and mount (placed.where: `src` is the step, or the
    document, whose placement it is), and where parts the run keeps apart share a device, that said."""
    if not isinstance(placement, dict) or not placement:
        return '<p class="na">No placement recorded: the cluster was not created.</p>'
    w = P.where(doc, src if isinstance(src, dict) else {"placement": placement})
    rows = []
    for role in [*_ROLES, *(r for r in placement if r not in _ROLES)]:
        if role not in placement:
            continue
        path = placement[role]
        part = w.get(role) or {}
        rows.append([esc(_ROLE_LABELS.get(role, role)), _tier_tag(_tier(path, dirs)),
                     f'<code class="wrap">{esc(path)}</code>',
                     esc(block_device_of(doc, path) or part.get("device")), esc(part.get("mount") or "")])
    notes = "".join(f'<p class="note">{esc(t)}</p>' for t in P.sharing_sentences(w))
    return html_table(["", "tier" if dirs else "", "directory", "device", "mount"], rows,
                      cls="placement") + notes


def _oltp_summary(doc: dict[str, Any], points: list[dict[str, Any]], knee: Any, load: Any,
                  step: str | None) -> str:
    """The headline line and the summary table of one sweep."""
    best = best_point(points)
    kp = _knee_point(points, knee)
    rows: list[tuple[str, str]] = [("workload", esc(_oltp_workload(doc, load)))]
    dur = F.durability(doc)
    rows.append(("durability", (f'<span class="bad"><b>{esc(F.NOT_DURABLE)}</b></span>' if dur and not dur["durable"]
                                else "durable" if dur else '<span class="na">unknown (not recorded)</span>')
                 + (f'<br><span class="reason">{esc(dur["reason"])}</span>' if dur and dur["reason"] else "")))
    if step:
        rows.append(("step shown", f"<code>{esc(step)}</code> (the last step run; every step is below)"))
    planned = get(doc, "params", "clients")
    swept = ", ".join(num(p["clients"]) for p in points) or "none"
    if isinstance(planned, list) and len(planned) != len(points):
        swept += f' <span class="reason">(of {esc(", ".join(str(c) for c in planned))} planned)</span>'
    rows.append(("clients measured", swept))
    if isinstance(knee, dict) and isnum(knee.get("clients")):
        rows.append(("knee", f"<b>{_clients_label(knee['clients'])}, {num(knee.get('tps'), 1)} TPS</b>"
                             f'<br><span class="reason">{esc(knee.get("reason") or "")}</span>'))
    else:
        rows.append(("knee", "—"))
    if best:
        sp = F.point_spread(best)
        rows.append(("best TPS", f"<b>{num(best['tps'], 1)}</b> at {_clients_label(best['clients'])}"
                     + (f' <span class="reason">(the median of {num(sp["n"])} runs, {num(sp["min"], 1)}–'
                        f'{num(sp["max"], 1)} TPS)</span>' if sp and sp["n"] > 1 else "")))
        rows.append(("best TPM", num(best.get("tpm"))))
        nopm = [p for p in points if isnum(p.get("nopm"))]
        if nopm:
            bn = max(nopm, key=lambda p: p["nopm"])
            rows.append(("best NOPM", f"<b>{num(bn['nopm'])}</b> at {_clients_label(bn['clients'])}"))
    else:
        rows.append(("best TPS", "—"))
    if kp:
        lat = dict_at(kp, "lat_ms")
        rows.append(("latency at the knee", f"p50 {num(lat.get('p50'), 2)} · p95 {num(lat.get('p95'), 2)} · "
                                            f"p99 {num(lat.get('p99'), 2)} ms"))
        rows.append(("bottleneck at the knee",
                     f'<span class="bn bn-{esc(kp.get("bottleneck"))}">{esc(kp.get("bottleneck") or "—")}</span>'
                     f'<br><span class="reason">{esc(kp.get("bottleneck_evidence") or "")}</span>'))
    size, secs = get(load, "database_bytes"), get(load, "load_seconds")
    if isnum(size) or isnum(secs):
        rows.append(("database", (esc(human_bytes(size)) if isnum(size) else "—")
                     + (f", loaded in {num(secs, 1)} s" if isnum(secs) else "")))
    lead = ""
    if best and isinstance(knee, dict) and isnum(knee.get("clients")):
        limit = (kp or {}).get("bottleneck")
        lead = (f'<p class="lead">Knee at <b>{_clients_label(knee["clients"])}</b> ({num(knee.get("tps"))} TPS); '
                f'best <b>{num(best["tps"])} TPS</b> at {_clients_label(best["clients"])}'
                + (f"; the limit at the knee: <b>{esc(limit)}</b>" if limit else "") + ".</p>")
    return lead + kv_table(rows)


# -- bench oltp charts

def _chart_oltp_tps(points: list[dict[str, Any]], knee: Any, driver: str = "pgbench") -> str | None:
    pts = [(p["clients"], p.get("tps")) for p in points if isnum(p.get("tps"))]
    if not pts:
        return None
    markers = []
    if isnum(get(knee, "clients")) and isnum(get(knee, "tps")):
        markers.append(Marker(knee["clients"], knee["tps"],
                              f"knee: {_clients_label(knee['clients'])}, {num(knee['tps'])} TPS"))
    chart = svg.line_chart("Throughput vs clients", [Series("TPS", pts, svg.colour(0))], x_label="clients",
                           y_label="transactions per second", x_log2=True, markers=markers,
                           desc="TPS at each client count; the ring marks the knee.")
    spread = [(sp, p) for p in points for sp in [F.point_spread(p)] if sp and isnum(sp.get("spread_pct"))]
    cap = (f"Transactions per second over the time {driver} measured (warm-up excluded); the ring marks the knee.")
    if spread:
        sp, worst = max(spread, key=lambda x: x[0]["spread_pct"])
        cap += (f" Each point is the median of {num(sp['n'])} runs (the mean of the two middle ones for an even "
                f"count); the widest spread is {num(sp['spread_pct'], 1)}% at {_clients_label(worst['clients'])} "
                f"({num(sp['n'])} runs, {num(sp['min'], 1)}–{num(sp['max'], 1)} TPS).")
    return figure_frame(chart, cap)


def _chart_oltp_nopm(points: list[dict[str, Any]], knee: Any) -> str | None:
    pts = [(p["clients"], p["nopm"]) for p in points if isnum(p.get("nopm"))]
    if not pts:
        return None
    kp = _knee_point(points, knee)
    markers = [Marker(kp["clients"], kp["nopm"], f"knee: {num(kp['nopm'])} NOPM")] \
        if kp and isnum(kp.get("nopm")) else []
    chart = svg.line_chart("New orders per minute vs clients", [Series("NOPM", pts, svg.colour(4))],
                           x_label="clients", y_label="new orders per minute", x_log2=True, markers=markers,
                           desc="NOPM at each client count; the ring marks the knee.")
    return figure_frame(chart, "New orders per minute, counted from district.d_next_o_id (TPC-C-like, not tpmC).")


def _chart_oltp_latency(points: list[dict[str, Any]], knee: Any, driver: str = "pgbench") -> str | None:
    series = []
    for i, pct in enumerate(("p50", "p95", "p99")):
        pts = [(p["clients"], get(p, "lat_ms", pct)) for p in points]
        if any(isnum(y) and y > 0 for _, y in pts):
            series.append(Series(pct, [(x, y if isnum(y) else None) for x, y in pts], svg.colour(i),
                                 dashed=pct == "p99"))
    if not series:
        return None
    kp = _knee_point(points, knee)
    markers = [Marker(kp["clients"], kp["lat_ms"]["p95"], "knee p95")] \
        if kp and isnum(get(kp, "lat_ms", "p95")) and kp["lat_ms"]["p95"] > 0 else []
    chart = svg.line_chart("Transaction latency vs clients", series, x_label="clients", y_label="latency (ms)",
                           x_log2=True, y_log=True, markers=markers,
                           desc="p50, p95 and p99 latency per transaction; logarithmic y axis.")
    return figure_frame(chart, f"Per-transaction latency from {driver}'s logs over the measured window; logarithmic "
                          "y axis; the ring marks p95 at the knee.")


def _wait_order(keys: Iterable[str]) -> list[str]:
    ks = set(keys)
    return [k for k in WAIT_CLASSES if k in ks] + sorted(k for k in ks if k not in WAIT_CLASSES)


def _wait_colour(cls: str, i: int) -> str:
    return WAIT_COLOURS.get(cls) or svg.colour(i)


def _chart_oltp_waits(points: list[dict[str, Any]], driver: str = "pgbench") -> str | None:
    waits = [dict_at(p, "waits") for p in points]
    classes = _wait_order(k for w in waits for k, v in w.items() if isnum(v) and v > 0)
    if not classes:
        return None
    cats = [num(p["clients"]) for p in points]
    series = [Series(c, [(k, 100 * w[c] if isnum(w.get(c)) else None) for k, w in enumerate(waits)],
                     _wait_colour(c, i)) for i, c in enumerate(classes)]
    notes = [str(p.get("bottleneck") or "") for p in points]
    chart = svg.stacked_bar_chart("Where the backends spent their time", cats, series, x_label="clients",
                                  y_label="% of sampled backend states", y_max=100, unit="%", totals=False,
                                  notes=notes, desc="Shares of sampled pg_stat_activity states per client count; "
                                                    "under each bar, the bottleneck judged at that point.")
    if driver != "pgbench":   # another engine's sessions (MariaDB: performance_schema), the same classes
        return figure_frame(chart, "The server's sessions sampled during each point (MariaDB: performance_schema "
                            "and InnoDB's transactions), wait events grouped: cpu, storage (data-file I/O), commit "
                            "(redo log write and flush), lock (row and table locks), client (waiting for "
                            f"{driver}), other. Under each bar: the bottleneck judged at that point (unknown without "
                            "wait samples).")
    return figure_frame(chart,
                        "pg_stat_activity sampled during each point, wait events grouped: cpu (running), storage "
                        "(data-file, temp and buffer I/O waits), commit (WAL write and sync, group commit, "
                        "synchronous standby), lock (heavy and light-weight locks, WAL insertion included), client "
                        f"(waiting for {driver}), other (IPC, timeouts, buffer pins, extensions). Under each bar: the "
                        "bottleneck judged at that point (unknown without wait samples).")


def _chart_oltp_util(points: list[dict[str, Any]]) -> str | None:
    series = [Series("CPU busy", [(p["clients"], get(p, "cpu_util", "busy_pct")) for p in points], svg.colour(2)),
              Series("CPU iowait", [(p["clients"], get(p, "cpu_util", "iowait_pct")) for p in points],
                     svg.colour(2), dashed=True)]
    names = list(dict.fromkeys(str(d.get("device")) for p in points for d in _devices(p)))
    for i, name in enumerate(names):
        pts = []
        for p in points:
            d = next((d for d in _devices(p) if str(d.get("device")) == name), None)
            pts.append((p["clients"], d.get("busy_pct") if d and isnum(d.get("busy_pct")) else None))
        series.append(Series(f"{name} busy", pts, svg.colour((i * 2) % 10 if i else 0)))
    if not any(isnum(y) for s in series for _, y in s.points):
        return None
    chart = svg.line_chart("CPU and device utilisation vs clients", series, x_label="clients", y_label="%",
                           x_log2=True, y_max=100,
                           desc="Machine CPU busy and iowait %, and each placement device's busy %.")
    return figure_frame(chart,
                        "CPU: user + system time of all cores (/proc/stat); iowait dashed. Device busy %: the share "
                        "of time the device had I/O in flight (/proc/diskstats) — a pegged CPU stretches completions "
                        "and can make a fast device look busy.")


def _series_samples(p: dict[str, Any] | None) -> list[dict[str, Any]]:
    """A point's samples over time, without those covering under a quarter of the usual interval (the
    sampler's last, cut-short interval: a few milliseconds of counters are noise, not load)."""
    s = (p or {}).get("series")
    samples = sorted((x for x in s if isinstance(x, dict) and isnum(x.get("t_s"))), key=lambda x: x["t_s"]) \
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
    series = [Series(label, [(s["t_s"], get(s, "cpu", key)) for s in samples], col) for key, label, col in parts
              if label != "steal" or any(isnum(get(s, "cpu", key)) and get(s, "cpu", key) >= 0.5
                                         for s in samples)]
    cpu = svg.stacked_area_chart(f"CPU over time ({where})", series, x_label="seconds into the measured run",
                                 y_label="% of all cores", y_max=100, unit="%",
                                 desc="CPU user, system and iowait %, stacked, sampled during the point.")
    interval = ""
    if len(samples) > 1:
        interval = f" every {num((samples[-1]['t_s'] - samples[0]['t_s']) / (len(samples) - 1), 1)} s"
    raw = p["series"] if isinstance(p.get("series"), list) else []
    cut = (" A final sample covering only a few milliseconds is left out." if len(raw) > len(samples) else "")
    out.append(figure_frame(cpu, f"Sampled from /proc/stat{interval} during the {esc(which)} point "
                                 f"({_clients_label(p.get('clients'))}); the bands are stacked.{cut}"))
    names = list(dict.fromkeys(str(n) for s in samples for n in (s.get("devices") or {})
                               if isinstance(s.get("devices"), dict)))
    if names:
        for key, title, unit, cap in (
                ("busy_pct", "Device busy % over time", "busy %",
                 "Share of each interval the device had I/O in flight (/proc/diskstats)."),
                ("await_ms", "Device await over time", "await (ms)",
                 "Average time an I/O took, queueing included, in each interval (/proc/diskstats).")):
            series = [Series(n, [(s["t_s"], get(s, "devices", n, key)) for s in samples], svg.colour(i))
                      for i, n in enumerate(names)]
            chart = svg.line_chart(f"{title} ({where})", series, x_label="seconds into the measured run",
                                   y_label=unit, legend=True, y_max=100 if key == "busy_pct" else None,
                                   desc=f"{title} for the placement devices.")
            out.append(figure_frame(chart, cap + " One line per device behind the placement."))
    return out


def _oltp_charts(points: list[dict[str, Any]], knee: Any, driver: str = "pgbench") -> list[str]:
    figs = [_chart_oltp_tps(points, knee, driver), _chart_oltp_nopm(points, knee),
            _chart_oltp_latency(points, knee, driver), _chart_oltp_waits(points, driver), _chart_oltp_util(points)]
    out = [f for f in figs if f]
    kp = _knee_point(points, knee)
    which = "knee"
    if not _series_samples(kp):
        kp, which = best_point(points), "best"
    out += _charts_oltp_time(kp, which)
    return out


# -- bench oltp tables

def _runs_cells(p: dict[str, Any]) -> list[str]:
    sp = F.point_spread(p)
    if not sp:
        return ["—", "—", "—"]
    if sp["n"] < 2:
        return ["1", "n=1", "—"]
    return [num(sp["n"]), f"{num(sp['min'], 1)}–{num(sp['max'], 1)}", num(sp.get("spread_pct"), 1)]


def _innodb_rows(points: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """The InnoDB counters of each point (MariaDB), with the measurement overhead."""
    heads = ["clients", "buffer pool hit %", "buffer pool reads", "data reads/s", "data writes/s", "redo MB/s",
             "fsyncs/s", "log waits/s", "row lock waits", "sysbench cores", "sysbench % of CPU", "sampler % of CPU",
             "sysbench output in raw/"]
    rows = []
    for p in points:
        ib = dict_at(p, "innodb")
        ov = dict_at(p, "overhead")
        hit = ib.get("buffer_pool_hit_ratio")
        rows.append([num(p.get("clients")), num(100 * hit, 2) if isnum(hit) else "—",
                     num(ib.get("buffer_pool_reads")), num(ib.get("data_reads_per_s")),
                     num(ib.get("data_writes_per_s")), num(ib.get("log_written_mb_per_s"), 2),
                     num(ib.get("fsyncs_per_s")), num(ib.get("log_waits_per_s"), 1), num(ib.get("row_lock_waits")),
                     num(ov.get("client_cpu_cores"), 2), num(ov.get("client_cpu_pct_of_machine"), 1),
                     num(ov.get("sampler_cpu_pct_of_machine"), 2),
                     f'<code title="{esc(p.get("raw"))}">{esc(os.path.basename(str(p.get("raw") or "")))}</code>'])
    return heads, rows


def _oltp_points_table(points: list[dict[str, Any]], doc: dict[str, Any] | None = None) -> str:
    server, driver = F.engine_words(doc or {})
    def devs(key: str, digits: int) -> str:
        return "<br>".join(num(d.get(key), digits) for d in _devices(p)) or "—"

    repeated = any((F.point_spread(p) or {}).get("n", 1) > 1 for p in points)
    heads = ["clients", "TPS", "TPM", "NOPM", "p50 ms", "p95 ms", "p99 ms", "max ms", "CPU user %", "CPU sys %",
             "iowait %", "device", "IOPS", "MB/s", "await ms", "busy %", "queue", "bottleneck"]
    heads += ["runs", "TPS min–max", "TPS spread %"] if repeated else []
    rows = []
    for p in points:
        lat = dict_at(p, "lat_ms")
        cpu = dict_at(p, "cpu_util")
        rows.append([num(p.get("clients")), num(p.get("tps"), 1), num(p.get("tpm")), num(p.get("nopm")),
                     num(lat.get("p50"), 2), num(lat.get("p95"), 2), num(lat.get("p99"), 2),
                     num(lat.get("max"), 1), num(cpu.get("user_pct"), 0), num(cpu.get("system_pct"), 0),
                     num(cpu.get("iowait_pct"), 1), "<br>".join(esc(d.get("device")) for d in _devices(p)) or "—",
                     devs("iops", 0), devs("mbps", 1), devs("await_ms", 2), devs("busy_pct", 0), devs("queue", 1),
                     esc(p.get("bottleneck") or "—")]
                    + (_runs_cells(p) if repeated else []))
    t1 = html_table(heads, rows, num_cols=[*range(11), *range(12, 17), 18, 20], cls="points")
    heads2 = ["clients", "hit ratio %", "blocks read", "WAL MB", "WAL syncs", "ms per sync", "temp MB",
              "checkpoints", "backend fsyncs", "commits / rollbacks", "pgbench cores", "pgbench % of CPU",
              "sampler % of CPU", "pgbench output in raw/"]
    rows2 = []
    for p in points:
        pg = dict_at(p, "pg")
        ov = dict_at(p, "overhead")
        syncs, sync_ms = pg.get("wal_syncs"), pg.get("wal_sync_ms")
        per_sync = sync_ms / syncs if isnum(syncs) and isnum(sync_ms) and syncs else None
        rows2.append([num(p.get("clients")),
                      num(100 * pg["hit_ratio"], 2) if isnum(pg.get("hit_ratio")) else "—",
                      num(pg.get("blks_read")), num(to_mb(pg.get("wal_bytes")), 1), num(syncs),
                      num(per_sync, 2), num(to_mb(pg.get("temp_bytes")), 1), num(pg.get("checkpoints")),
                      num(pg.get("backend_fsyncs")), f'{num(pg.get("commits"))} / {num(pg.get("rollbacks"))}',
                      num(ov.get("client_cpu_cores"), 2), num(ov.get("client_cpu_pct_of_machine"), 1),
                      num(ov.get("sampler_cpu_pct_of_machine"), 2),
                      f'<code title="{esc(p.get("raw"))}">{esc(os.path.basename(str(p.get("raw") or "")))}</code>'])
    if any(isinstance(p.get("innodb"), dict) for p in points):
        heads2, rows2 = _innodb_rows(points)
    t2 = html_table(heads2, rows2, num_cols=range(len(heads2) - 1), cls="points")
    ev = "".join(f"<li><b>{_clients_label(p.get('clients'))}</b>: {esc(p.get('bottleneck') or '—')} — "
                 f"{esc(p.get('bottleneck_evidence') or '')}</li>" for p in points if p.get("bottleneck_evidence"))
    return (f'<details><summary>All {len(points)} measured points</summary>'
            f'<h4>Throughput, latency, CPU and devices</h4><div class="wide">{t1}</div>'
            f'<h4>{esc(server)} counters and measurement overhead</h4><div class="wide">{t2}</div>'
            + (f'<h4>Bottleneck evidence</h4><ul class="reason">{ev}</ul>' if ev else "")
            + '<p class="reason">MB = 10⁶ bytes. Device columns: one line per device behind the placement. '
            + ("Runs: repeats of the point; TPS, TPM, NOPM and latency percentiles are the medians of the runs (the "
               "mean of the two middle ones for an even count), the other columns those of the middle run by TPS "
               "(the lower middle one for an even count); the spread is (max − min) / median of their TPS. "
               if repeated
               else "Each point was run once (n=1: no spread measured). ")
            + f"Raw output: {esc(driver)}'s output, in the run directory.</p></details>")


def oltp_steps_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    st = doc.get("steps")
    return [s for s in st if isinstance(s, dict)] if isinstance(st, list) else []




def _matrix_section(doc: dict[str, Any], steps: list[dict[str, Any]], dirs: dict[str, str]) -> str:
    names = [str(s.get("name") or f"step {k + 1}") for k, s in enumerate(steps)]
    pts = [oltp_points(s.get("points")) for s in steps]
    bests = [best_point(p) for p in pts]
    engine = F.engine_of(doc)
    roles = _ENGINE_ROLES.get(engine, _ROLES)
    moved = ("tables (with their indexes), redo, undo and temp" if engine == "mariadb"
             else "data, indexes, WAL and temp")
    out = ["<h3>Placement matrix</h3>",
           f'<p class="sub">The same workload with {moved} moved step by step from the slow '
           "directory to the fast one, a fresh server each step, in the order run. Figures are at each step's "
           "best point (the client count with the highest TPS).</p>"]
    bns = [str(b.get("bottleneck") or "unknown") if b else "" for b in bests]
    classes = _wait_order(b for b in bns if b)
    tps_series = [Series(f"bottleneck: {c}", [(k, b["tps"]) for k, b in enumerate(bests)
                             if b and bns[k] == c and isnum(b.get("tps"))], _wait_colour(c, i))
                  for i, c in enumerate(classes)]
    notes = [f"{bns[k]}\n{_clients_label(b['clients'])}" if b else "no points" for k, b in enumerate(bests)]
    figs = [figure_frame(svg.stacked_bar_chart("Best TPS per placement step", names, tps_series, x_label="step",
                                               y_label="transactions per second", unit="TPS", notes=notes,
                                               desc="One bar per step in the order run, coloured by the bottleneck "
                                               "at its best point."),
                         "One bar per step, in the order run; the colour and the label under each bar name the "
                         "bottleneck at that step's best point, with its client count.")]
    p95 = [(k, get(b, "lat_ms", "p95")) for k, b in enumerate(bests) if b]
    figs.append(figure_frame(svg.bar_chart("p95 latency per placement step", names,
                                           [Series("p95", p95, svg.colour(1))], x_label="step", y_label="ms",
                                           unit="ms", desc="p95 transaction latency at each step's best point."),
                             "p95 transaction latency at each step's best point."))
    util = [Series("CPU busy %", [(k, get(b, "cpu_util", "busy_pct")) for k, b in enumerate(bests) if b],
                   svg.colour(2)),
            Series("device busy % (busiest)", [(k, _dev_max(b, "busy_pct")) for k, b in enumerate(bests) if b],
                   svg.colour(0))]
    figs.append(figure_frame(svg.bar_chart("CPU and device busy per placement step", names, util, x_label="step",
                                           y_label="%", unit="%", y_max=100,
                                           desc="CPU busy % and the busiest placement device's busy % at each step's "
                                           "best point."),
                             "When the CPU is near 100% the device figures are stretched by scheduling: the limit "
                             "is the CPU even where a device looks busy."))
    lines = [Series(n, [(p["clients"], p.get("tps")) for p in ps], svg.colour(k)) for k, (n, ps)
             in enumerate(zip(names, pts)) if ps]
    if lines:
        figs.append(figure_frame(svg.line_chart("TPS vs clients, every step", lines, x_label="clients",
                                                y_label="transactions per second", x_log2=True,
                                                desc="One line per placement step."),
                                 "One line per step: where each placement's throughput stops growing."))
    out.append('<div class="charts">' + "".join(figs) + "</div>")
    rows = []
    memory = reads_from_memory(doc_guards(doc))
    for k, (s, b, _ps) in enumerate(zip(steps, bests, pts)):
        pl = dict_at(s, "placement")
        cells = [f'<b title="{esc(step_label(names[k], engine))}">{esc(names[k])}</b>'
                 + ('<br><span class="bad">reads not measured</span>'
                    if s.get("reads_measured") is False or (memory and names[k] in ALL_READ_STEPS) else "")]
        for role in roles:
            path = pl.get(role)
            tier = _tier(path, dirs)
            cells.append(f'<span title="{esc(path)}">{_tier_tag(tier)}</span>' if tier
                         else (f'<code class="wrap">{esc(path)}</code>' if path else "—"))
        kn = dict_at(s, "knee")
        b = b or {}
        cells += [f"{num(kn.get('clients'))} · {num(kn.get('tps'))}" if kn else "—",
                  num(b.get("tps")), num(b.get("clients")), num(b.get("tpm")),
                  num(get(b, "lat_ms", "p95"), 2), num(get(b, "cpu_util", "busy_pct"), 0),
                  num(get(b, "cpu_util", "iowait_pct"), 1), num(_dev_max(b, "busy_pct"), 0),
                  num(_dev_max(b, "await_ms"), 2),
                  f'<span class="bn bn-{esc(b.get("bottleneck"))}" title="{esc(b.get("bottleneck_evidence"))}">'
                  f'{esc(b.get("bottleneck") or "—")}</span>']
        rows.append(cells)
    heads = ["step", *(_MATRIX_HEADS.get(r, r) for r in roles), "knee: clients · TPS", "best TPS", "at clients", "TPM",
             "p95 ms", "CPU busy %", "iowait %", "device busy %", "device await ms", "bottleneck"]
    out.append('<div class="wide">' + html_table(heads, rows, num_cols=range(5, 14), cls="matrix") + "</div>")
    if dirs:
        out.append(f'<p class="reason">fast = <code>{esc(dirs["fast"])}</code>, slow = <code>{esc(dirs["slow"])}'
                   "</code>; hover a tier for the directory. Device figures are the busiest device behind the "
                   "placement.</p>")
    return "".join(out)


def _oltp_sweep(doc: dict[str, Any], points: list[dict[str, Any]], knee: Any) -> str:
    figs = _oltp_charts(points, knee, F.engine_words(doc)[1])
    out = []
    if figs:
        out.append('<div class="charts">' + "".join(figs) + "</div>")
    else:
        out.append('<p class="na">No points were measured.</p>')
    if points:
        out.append(_oltp_points_table(points, doc))
    return "".join(out)


def _oltp_method(doc: dict[str, Any], all_points: list[dict[str, Any]], dirs: dict[str, str]) -> str:
    p = dict_at(doc, "params")
    engine = F.engine_of(doc)
    server, driver = F.engine_words(doc)
    pg = get(doc, "machine", "versions", "postgresql" if engine == "postgres" else engine)
    cores = get(doc, "machine", "cpu_count")
    w = p.get("workload")
    how = (_TPCC_OTHER.format(driver=driver) if w == "tpcc" and engine != "postgres"
           else _WORKLOAD_METHOD.get(w, w or "—"))
    rows: list[tuple[str, str]] = [
        ("engine", esc(p.get("engine") or f"{driver} ({server})") + (f"; {esc(server)} {esc(pg)}" if pg else "")),
        ("workload", esc(how))]
    dur = F.durability(doc)
    rows.append(("durability", esc(F.durability_text(doc)) if dur else "unknown: this result does not record it"))
    if p.get("mode") == "dsn":
        rows.append(("server", f"your server (<code>{esc(p.get('dsn'))}</code>), in a database dbtier created and "
                               "dropped"))
    else:
        rows.append(("server", "a throw-away MariaDB server dbtier created with mariadb-install-db and ran as the "
                               "mysql user, placed as shown, and removed at the end" if engine == "mariadb" else
                     f"a throw-away {esc(server)} cluster dbtier created with initdb, placed as shown, and removed "
                     "at the end"))
    rows.append(("clients", esc(", ".join(str(c) for c in p.get("clients") or []) or "—")))
    if isnum(p.get("duration_s")):
        rows.append(("each point", f"{esc(FM.duration_words(p['duration_s'], 1))} after {num(p.get('warmup_s'), 1)} s "
                                   "of warm-up, which is excluded from every figure"))
    # one wording of how repeats make a point's figures, shared with show (figures.repeats_text)
    rows.append(("repeats", esc(FM.repeats_text(p.get("repeat"), all_points))))
    nm = F.not_measured(doc)
    if nm:
        rows.append(("not measured", esc(", ".join(x.replace("_", " ") for x in nm)) + ": with <code>--dsn</code> "
                     f"the CPU and device figures are this machine's (where {esc(driver)} runs), not the server's; no "
                     "bottleneck is judged from them"))
    if isnum(p.get("rate")):
        rows.append(("load", f"open loop: transactions scheduled at {num(p['rate'])} per second in total; latency "
                             "counts from the scheduled start, so queueing behind a slow server is included"))
    else:
        rows.append(("load", "closed loop: each client sends its next transaction when the last one returns"))
    rows.append(("latency", esc(p.get("latency") or "—") + f": each transaction from {esc(driver)} sending it to the "
                 "reply; p50/p95/p99/max of all transactions in the measured window, in milliseconds"))
    rule = str(p.get("knee_rule") or "—")
    rows.append(("knee", esc(rule) + ("" if "unconfirmed" in rule else "; with no such step, the last point")))
    waits = ("<code>performance_schema</code>" if engine == "mariadb" else "<code>pg_stat_activity</code>")
    rows.append(("bottleneck", f"judged at each point from sampled {waits} wait events, CPU "
                               "(/proc/stat) and the placement devices' queue and await (/proc/diskstats): a CPU "
                               "90% or more busy wins over a device that only looks busy; no wait samples (or a "
                               "failed sampling query): unknown, with the reason"))
    cpu_txt = "user + system time as a % of all cores" + (f" ({num(cores)})" if isnum(cores) else "")
    rows.append(("CPU %", cpu_txt + "; iowait separately"))
    cl = [q["overhead"]["client_cpu_pct_of_machine"] for q in all_points
          if isnum(get(q, "overhead", "client_cpu_pct_of_machine"))]
    cc = [q["overhead"]["client_cpu_cores"] for q in all_points if isnum(get(q, "overhead", "client_cpu_cores"))]
    sm = [q["overhead"]["sampler_cpu_pct_of_machine"] for q in all_points
          if isnum(get(q, "overhead", "sampler_cpu_pct_of_machine"))]
    if cl or sm:
        rows.append(("measurement overhead",
                     (f"{esc(driver)} used up to {num(max(cl), 1)}% of the machine's CPU"
                      + (f" ({num(max(cc), 2)} cores)" if cc else "") if cl else "")
                     + ("; " if cl and sm else "")
                     + (f"dbtier's sampler up to {num(max(sm), 2)}%" if sm else "")
                     + "; both run on the same machine as the server and are inside the CPU figures"))
    if dirs and engine == "mariadb":
        rows.append(("placement matrix", f"fast <code>{esc(dirs['fast'])}</code>, slow <code>{esc(dirs['slow'])}"
                                         "</code>; steps: all slow; redo fast; + undo; + tables; + temp; all "
                                         "fast — tables (with their indexes) in the datadir, redo through "
                                         "innodb_log_group_home_dir, undo through innodb_undo_directory, temp "
                                         "through tmpdir and the temporary tablespace"))
    elif dirs:
        rows.append(("placement matrix", f"fast <code>{esc(dirs['fast'])}</code>, slow <code>{esc(dirs['slow'])}"
                                         "</code>; steps: all slow; indexes fast; + tables; + WAL; + temp; all "
                                         "fast — tables with the cluster directory, indexes through a tablespace, "
                                         "WAL through initdb's waldir, temp through temp_tablespaces"))
    asked = p.get("placement_requested")
    if isinstance(asked, dict):
        rows.append(("placement asked for", ", ".join(f"{esc(k)}=<code>{esc(v)}</code>" for k, v in asked.items())
                     or "none: everything in the cluster directory"))
    settings = p.get("settings")
    if isinstance(settings, dict) and settings:
        rows.append((f"{server} settings", '<table class="settings"><tbody>' + "".join(
            f"<tr><td><code>{esc(k)}</code></td><td><code>{esc(v)}</code></td></tr>" for k, v in settings.items())
            + "</tbody></table>"))
    known = {"workload", "warehouses", "scale", "clients", "duration_s", "warmup_s", "repeat", "rate", "mode", "dsn",
             "settings", "engine", "latency", "knee_rule", "placement_matrix", "placement_requested"}
    rows += [(k.replace("_", " "), json_value(v)) for k, v in p.items() if k not in known]
    cache = ('<p class="reason">InnoDB reads into its buffer pool (a small <code>innodb_buffer_pool_size</code> '
             "by default, to reach the storage); with <code>innodb_flush_method=O_DIRECT</code> it bypasses the OS "
             "page cache, otherwise the device figures show how much really reached the disk.</p>"
             if engine == "mariadb" else
             '<p class="reason">PostgreSQL reads through the OS page cache: a small <code>shared_buffers</code> '
             "forces reads out of PostgreSQL's cache but not out of the kernel's; the device figures show how "
             "much really reached the disk.</p>")
    return ("<h3>How the numbers were obtained</h3>"
            f"<p>Each point is one {esc(driver)} run at a fixed number of clients against a freshly loaded database; "
            f"CPU, devices and {esc(server)}'s wait events are sampled while it runs.</p>" + kv_table(rows) + cache)


def oltp_section(doc: dict[str, Any], i: int) -> str:
    anchor = f"run-{i + 1}"
    out = [run_head(doc, i, anchor), errors_html(doc), guards_html(doc)]
    dur = F.durability(doc)
    if dur is not None and not dur["durable"]:   # the study's own caveat: said before any figure
        out.append(f'<p class="note bad"><b>{esc(F.NOT_DURABLE[:1].upper() + F.NOT_DURABLE[1:])}</b>'
                   + (f" ({esc(dur['reason'])})" if dur["reason"] else "")
                   + ": it skipped flushes a durable run pays for, so its TPS is no measure of the storage's "
                   "durable commit path.</p>")
    steps = oltp_steps_of(doc)
    dirs = _matrix_dirs(doc)
    points = oltp_points(doc.get("points"))
    knee = doc.get("knee")
    placement = doc.get("placement")
    load = doc.get("load")
    last = steps[-1] if steps else None
    if last is not None:   # the top level repeats the last step; fill what an older document left out
        if not points:
            points = oltp_points(last.get("points"))
        knee = knee if isinstance(knee, dict) else last.get("knee")
        placement = placement if isinstance(placement, dict) else last.get("placement")
        load = load if isinstance(load, dict) else last.get("load")
    status = doc.get("status")
    all_points = points + [p for s in steps[:-1] for p in oltp_points(s.get("points"))]
    if status not in ("ok", None):
        out.append(f'<p class="note">This run is <b>{esc(status)}</b>: {plural(len(all_points), "point")} '
                   "measured before it stopped; the figures below show only what finished.</p>")
    kind = "Placement matrix" if steps else "OLTP sweep"
    out.append(f'<h3>{kind}: {esc(_oltp_workload(doc, load))}</h3>')
    out.append('<div class="top"><div><h4>Summary</h4>'
               + _oltp_summary(doc, points, knee, load, str(last.get("name")) if last else None)
               + "</div><div><h4>Placement</h4>"
               + _placement_table(doc, placement, dirs, doc if isinstance(doc.get("placement"), dict) else last)
               + "</div></div>")
    if steps:
        out.append(_matrix_section(doc, steps, dirs))
        out.append(f'<h3>Sweep: step <code>{esc(last.get("name"))}</code></h3>' if last else "")
    else:
        out.append("<h3>Sweep</h3>")
    out.append(_oltp_sweep(doc, points, knee))
    for s in steps[:-1]:
        sp = oltp_points(s.get("points"))
        kn = dict_at(s, "knee")
        head = (f"Step <code>{esc(s.get('name'))}</code>: {plural(len(sp), 'point')}"
                + (f", knee at {_clients_label(kn['clients'])} ({num(kn.get('tps'))} TPS)"
                   if isnum(kn.get("clients")) else ""))
        out.append(f'<details class="step"><summary>{head}</summary>'
                   + _placement_table(doc, s.get("placement"), dirs, s) + _oltp_sweep(doc, sp, kn) + "</details>")
    out.append(_oltp_method(doc, all_points, dirs))
    out.append(machine_section(doc))
    out.append(json_details(doc))
    return f'<section class="run bench oltp">{"".join(out)}</section>'
