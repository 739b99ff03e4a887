"""The report section of a `dbtier simulate run` document: figures, the hit-ratio curve, latency CDFs
beside the baseline's, and the timeline (warm-up after a restart; a mirror's failure, unprotected window
and resync). Pure: a document in, HTML out; it only reads the document.
"""

from __future__ import annotations

from typing import Any, Sequence

from dbtier.core.units import human_bytes, human_pct, human_us, size_text
from dbtier.report.figures import mrc as mrc_figures
from dbtier.report.svg import charts as svg
from dbtier.report.sections import mrc as mrc_report
from dbtier.report.base import esc, figure_frame, html_table, kv_table, module_section
from dbtier.report.svg.charts import Marker, Series
from dbtier.report.svg.sim import Event, Window, cdf_chart, timeline_chart

DESIGN_NAMES: dict[Any, str] = {"single": "one device", "read-cache": "flash read cache",
                "preferred-read-mirror": "preferred-read mirror"}


def _time_unit(end_s: float) -> tuple[float, str]:
    if end_s >= 3 * 3600:
        return 3600.0, "h"
    if end_s >= 180:
        return 60.0, "min"
    return 1.0, "s"


# -- charts ----------------------------------------------------------------------------------------

def curve_chart(doc: dict[str, Any]) -> str | None:
    det = doc.get("simulation") or {}
    pts = det.get("curve_detail") or []
    if len(pts) < 2:
        return None
    # GB when every size is at least 1 GB, else MB: log2 ticks stay short either way.
    scale, unit = (1.0, "GB") if min(p["cache_gb"] for p in pts) >= 1 else (1000.0, "MB")
    read = Series("read hit ratio (blocks)", [(p["cache_gb"] * scale, _pc(p["read_hit_ratio"])) for p in pts],
                  colour=svg.colour(0))
    req = Series("request hit ratio", [(p["cache_gb"] * scale, _pc(p["request_hit_ratio"])) for p in pts],
                 colour=svg.colour(1), dashed=True)
    markers = []
    cg = (det.get("cache") or {}).get("cache_gb")
    if cg is not None and doc.get("read_hit_ratio") is not None:
        markers.append(Marker(cg * scale, doc["read_hit_ratio"] * 100,
                              f"{cg * scale:.4g} {unit}: {_pct(doc['read_hit_ratio'])}"))
    ws = (det.get("cache") or {}).get("working_set_bytes")
    chart = svg.line_chart(f"Hit ratio by cache size ({doc.get('policy')}, "
                           f"{(det.get('cache') or {}).get('write_mode')})", [read, req],
                           x_label=f"cache size ({unit}, log scale)", y_label="hit ratio (%)", x_log2=True,
                           markers=markers)
    cap = (f"One replay per size. Working set {size_text(ws)} ({det.get('block_size')}-byte blocks): a "
           "larger cache only saves first-touch misses." if ws else "One replay per size.")
    return figure_frame(chart, cap)


def _pc(x: float | None) -> float | None:
    return None if x is None else x * 100


def cdf_charts(doc: dict[str, Any], others: Sequence[tuple[str, dict[str, Any]]] = ()) -> list[str]:
    """Read and write latency CDFs: this design, its baseline, and any other designs given."""
    det = doc.get("simulation") or {}
    base = det.get("baseline")
    out = []
    for op in ("read", "write"):
        series = [Series(_label(doc), (det.get("cdf_us") or {}).get(op) or [], colour=svg.colour(0))]
        if base:
            series.append(Series(f"{base['device']} alone", base["cdf_us"].get(op) or [], colour=svg.colour(2),
                                 dashed=True))
        for i, (name, other) in enumerate(others):
            series.append(Series(name, ((other.get("simulation") or {}).get("cdf_us") or {}).get(op) or [],
                                 colour=svg.colour(3 + i)))
        if not any(s.points for s in series):
            continue
        chart = cdf_chart(f"{op.capitalize()} latency, cumulative", series)
        out.append(figure_frame(chart, f"Fraction of {op}s completed within each latency (log scale); dots mark p50 "
                                "and p99. From the queueing model over the trace's own arrival times."))
    return out


def _label(doc: dict[str, Any]) -> str:
    d = doc.get("design")
    if d == "read-cache":
        c = (doc.get("simulation") or {}).get("cache") or {}
        return f"{c.get('cache_gb', 0):g} GB {doc.get('policy')} cache"
    return DESIGN_NAMES.get(d, str(d))


def timeline_charts(doc: dict[str, Any]) -> list[str]:
    det = doc.get("simulation") or {}
    tl = det.get("timeline") or {}
    series = tl.get("series") or []
    if not series:
        return []
    end = series[-1]["t_s"] + (tl.get("bucket_s") or 0)
    div, unit = _time_unit(end)
    windows: list[Window] = []
    events: list[Event] = []
    evs = {e["event"]: e for e in tl.get("events") or []}
    if "fail" in evs:
        down_end = evs["return"]["t_s"] if "return" in evs else end
        windows.append(Window(evs["fail"]["t_s"] / div, down_end / div, evs["fail"]["label"]))
        if "resynced" in evs:
            windows.append(Window(evs["return"]["t_s"] / div, max(evs["resynced"]["t_s"], evs["return"]["t_s"]) / div,
                                  "resync", fill="#fff1c2"))
    for e in tl.get("events") or []:
        if e["event"] == "restart":
            events.append(Event(e["t_s"] / div, "restart"))
    out = []
    lat = [Series("read p99", [(p["t_s"] / div, p["read_p99_us"]) for p in series], colour=svg.colour(2)),
           Series("read mean", [(p["t_s"] / div, p["read_mean_us"]) for p in series], colour=svg.colour(0))]
    cap = f"Per {tl.get('bucket_s', 0) / div:.3g} {unit} bucket of the trace."
    rs = doc.get("resync")
    if rs:
        secs = "it never returns within the trace" if rs["seconds"] is None else \
            f"resync of {rs['regions']:,} regions ({size_text(rs['bytes'])}) takes {rs['seconds']:.3g} s"
        cap += (f" Shaded: the side is down, then resyncing; {secs}; the design ran without redundancy for "
                f"{rs['unprotected_seconds']:,.0f} s.")
    out.append(figure_frame(timeline_chart("Read latency over the trace", lat, windows=windows, events=events,
                                           x_label=f"time ({unit})", y_label="latency (µs, log scale)", y_log=True),
                            cap))
    if any(p.get("read_hit_ratio") is not None for p in series):
        hr = [Series("read hit ratio", [(p["t_s"] / div, _pc(p.get("read_hit_ratio"))) for p in series],
                     colour=svg.colour(0))]
        out.append(figure_frame(timeline_chart("Cache hit ratio over the trace", hr, events=events,
                                               x_label=f"time ({unit})", y_label="read hit ratio (%)", y_max=100.0),
                                "Blocks of reads served from the cache, per bucket; after a restart the cache starts "
                                "empty and warms up again."))
    return out


# -- the section ---------------------------------------------------------------------------------------

def section(doc: dict[str, Any], i: int) -> str:
    """The report section of any simulate document (the simulate kinds' section face, dbtier.results.kinds)."""
    return module_section(doc, i, "simulate", section_html(doc))


def section_html(doc: dict[str, Any]) -> str:
    """HTML for one simulate document (headings from h3 down; the caller places it)."""
    det = doc.get("simulation") or {}
    if doc.get("params", {}).get("action") == "capture" or "capture" in doc:
        return _capture_html(doc)
    if "convert" in doc:
        return _convert_html(doc)
    if mrc_figures.is_mrc(doc):
        return mrc_report.section_html(doc)
    tr = doc.get("trace") or {}
    info = det.get("trace_info") or {}
    out = [f"<h3>Simulation: {esc(DESIGN_NAMES.get(doc.get('design'), doc.get('design')))}</h3>"]
    dur = "untimed" if tr.get("duration_s") is None else f"{tr['duration_s']:,.1f} s"
    rows = [("trace", f"<code>{esc(info.get('path'))}</code> ({esc(info.get('format'))}): "
                      f"{tr.get('requests', 0):,} requests, {tr.get('reads', 0):,} reads, {tr.get('writes', 0):,} "
                      f"writes, {tr.get('bytes', 0) / 1e9:,.3f} GB, {dur}")]
    if info.get("skipped_bad_lines"):
        rows.append(("skipped", f"{info['skipped_bad_lines']:,} malformed lines (--skip-bad)"))
    for role, d in (det.get("devices") or {}).items():
        rows.append((role, f"<code>{esc(d['id'])}</code>: {d['read_iops']:,.0f}/{d['write_iops']:,.0f} IOPS, "
                           f"{d['read_mbps']:,.0f}/{d['write_mbps']:,.0f} MB/s, {d['read_latency_us']:,.0f}/"
                           f"{d['write_latency_us']:,.0f} µs (read/write){_units(d)} "
                           f"<span class=reason>{esc(d['source'])}"
                           "</span>"))
    if doc.get("design") == "read-cache":
        c = det.get("cache") or {}
        rows.append(("cache", f"{c.get('cache_gb', 0):g} GB, {esc(doc.get('policy'))}, {esc(c.get('write_mode'))}, "
                              f"{det.get('block_size')}-byte blocks"
                              + (f", sequential cutoff {c['seq_cutoff_bytes']:,} B" if c.get("seq_cutoff_bytes")
                                 else "")))
        rows.append(("read hit ratio", f"{_pct(doc.get('read_hit_ratio'))} of blocks, "
                                       f"{_pct(doc.get('request_hit_ratio'))} of requests"))
    busiest = doc.get("busiest_utilisation") or {}
    rows.append(("utilisation", ", ".join(f"{esc(r)} {_pct(u)}" + _busiest(busiest.get(r))
                                          for r, u in (doc.get("device_util") or {}).items())))
    rec = doc.get("recommended")
    if rec:
        rows.append(("recommended cache", esc(f"{rec['cache_gb']:.4g} GB ({rec['read_hit_ratio']:.1%} read hits): "
                                              f"{rec['rule']}, {rec['flattens_at_gb']:.4g} GB")))
    rs = doc.get("resync")
    if rs:
        secs = "— (never returns)" if rs["seconds"] is None else f"{rs['seconds']:,.1f} s"
        copy = (det.get("mirror") or {}).get("resync_copy")
        how = ""
        if copy and rs["seconds"] is not None:
            fu = copy.get("foreground_util") or {}
            how = (f" (copy at up to {copy['rate_mbps_idle']:,.0f} MB/s: survivor read "
                   f"{copy['survivor_read_mbps']:,.0f}, returning write {copy['returning_write_mbps']:,.0f}; "
                   f"the requests kept the survivor {_pct(fu.get('survivor'))} and the returning side "
                   f"{_pct(fu.get('returning'))} busy, mean {_mbps(copy.get('rate_mbps_mean'))})")
        tr = (det.get("mirror") or {}).get("tracking")
        unit = (f" of {human_bytes(tr['region_size'])} ({esc(tr['model'])} tracking; region size: "
                f"{esc(tr['region_size_from'])})"
                if tr else "")
        rows.append(("resync", f"{rs['regions']:,} regions{unit}, {rs['bytes'] / 1e9:,.3f} GB, {secs}{how}; without "
                               f"redundancy {rs['unprotected_seconds']:,.1f} s"))
    out.append(kv_table(rows))

    lat = doc.get("latency_us") or {}
    base = det.get("baseline")
    trows = []
    for op in ("read", "write"):
        v = lat.get(op) or {}
        trows.append([op, *[_us(v.get(k)) for k in ("p50", "p95", "p99", "p999")]])
        if base:
            b = base["latency_us"].get(op) or {}
            trows.append([f"{op}, {esc(base['device'])} alone",
                          *[_us(b.get(k)) for k in ("p50", "p95", "p99", "p999")]])
    out.append("<h4>Latency</h4>" + html_table(["", "p50", "p95", "p99", "p99.9"], trows, num_from=1))
    if doc.get("volumes"):
        vrows = [[esc(v["volume"]), f"{v['trace']['requests']:,}", _pct(v.get("read_hit_ratio")),
                  _us(v["latency_us"]["read"]["p99"]), _us(v["latency_us"]["write"]["p99"]),
                  ", ".join(f"{esc(r)} {_pct(u)}" for r, u in (v.get("device_util") or {}).items())]
                 for v in doc["volumes"]]
        out.append("<h4>Each volume on its own</h4>"
                   + html_table(["volume", "requests", "read hit ratio", "read p99", "write p99", "utilisation"],
                                vrows, num_cols=(1, 2, 3, 4)))

    figures = [f for f in [curve_chart(doc)] if f] + cdf_charts(doc) + timeline_charts(doc)
    if figures:
        out.append('<h4>Charts</h4><div class="charts">' + "".join(figures) + "</div>")
    model = det.get("latency_model")
    resync_model = (det.get("mirror") or {}).get("resync_model")
    notes = det.get("notes") or []
    if model or notes:
        out.append("<h4>How these numbers were obtained</h4>")
        if model:
            out.append(f'<p class="reason">{esc(model)}</p>')
        if det.get("latency_percentiles"):
            out.append(f'<p class="reason">Latency percentiles: {esc(det["latency_percentiles"])}.</p>')
        if resync_model and not any(resync_model in n for n in notes):
            out.append(f'<p class="reason">{esc(resync_model)}</p>')
        for n in notes:
            out.append(f'<p class="reason">{esc(n)}</p>')
    return "\n".join(out)


def compare_html(docs: Sequence[dict[str, Any]]) -> str:
    """Latency CDFs of several simulate documents side by side (e.g. the same trace through three designs)."""
    sims = [d for d in docs if d.get("command") == "simulate" and (d.get("simulation") or {}).get("cdf_us")]
    if len(sims) < 2:
        return ""
    first, rest = sims[0], sims[1:]
    others = [(_label(d) + (f" ({i + 2})" if _label(d) == _label(first) else ""), d) for i, d in enumerate(rest)]
    figures = cdf_charts(first, others)
    return '<h3>Designs side by side</h3><div class="charts">' + "".join(figures) + "</div>"


def _capture_html(doc: dict[str, Any]) -> str:
    c = doc.get("capture") or {}
    tr = c.get("trace") or {}
    rows = [("device", f"<code>{esc(c.get('block_device'))}</code>"),
            ("trace file", f"<code>{esc(c.get('trace_file'))}</code>")]
    if tr:
        rows.append(("captured", f"{tr.get('requests', 0):,} requests ({tr.get('reads', 0):,} reads, "
                                 f"{tr.get('writes', 0):,} writes)"))
    return "<h3>Trace capture (blktrace)</h3>" + kv_table(rows)


def _convert_html(doc: dict[str, Any]) -> str:
    c = doc.get("convert") or {}
    src = c.get("source") or {}
    rows = [("source", f"<code>{esc(src.get('path'))}</code> ({esc(c.get('format'))}, {(src.get('bytes') or 0) / 1e6:,.1f}"
                       f" MB, SHA-256 <code>{esc(src.get('sha256'))}</code>)"),
            ("copy", f"<code>{esc(c.get('path'))}</code>: {c.get('requests', 0):,} requests, {c.get('volumes', 0):,} "
                     f"volumes, {(c.get('bytes_written') or 0) / 1e6:,.1f} MB of Parquet")]
    return "<h3>Trace converted (Parquet)</h3>" + kv_table(rows)


def _busiest(b: dict[str, Any] | None) -> str:
    if not b:
        return ""
    span = "second" if b["interval_s"] == 1 else f"{b['interval_s']:g} s"
    return esc(f" (busiest {span} {b['pct']:.0f}% at {b['at_s']:,.0f} s, {b['requests']:,} requests)")


def _us(x: float | None) -> str:
    return human_us(x, "—")


def _pct(x: float | None) -> str:
    return human_pct(x, "—")


def _units(d: dict[str, Any]) -> str:
    """How the queueing model serves the device (absent in documents from before the model had units)."""
    if d.get("single_actuator"):
        return ", one actuator (command queueing)"
    return f", {d['units']:,} parallel units" if d.get("units") else ""


def _mbps(x: float | None) -> str:
    return "—" if x is None else f"{x:,.1f} MB/s"
