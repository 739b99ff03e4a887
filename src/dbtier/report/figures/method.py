"""How a result document's numbers were obtained, as (what, how) lines: the Markdown report's and `dbtier
show`'s method section, with the wording of durations and repeats the HTML report shares.
"""

from __future__ import annotations

import math
from typing import Any

from dbtier.report.figures import mrc as mrc_figures
from dbtier.report.figures.core import (engine_words, fmt, fmt_auto, get, is_fleet, isnum, kind, not_measured, oltp_points,
                                   oltp_steps, oltp_view, point_spread, spread_of, spread_text)
from dbtier.report.figures.fleet import fleet_method
from dbtier.core.parts import dict_at


def method(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """How a document's numbers were obtained, as (what, how) lines."""
    p = dict_at(doc, "params")
    k = kind(doc)
    out: list[tuple[str, str]] = []
    if k == "probe":
        out.append(("I/O", "direct I/O (O_DIRECT), the page cache bypassed" if p.get("direct_io") is not False
                    else "buffered, through the page cache"))
        if isnum(p.get("point_s")):
            out.append(("each point", f"{fmt_auto(p['point_s'])} s measured after {fmt_auto(p.get('ramp_s'))} s of "
                                      "warm-up (excluded)"))
        if p.get("profile"):
            out.append(("profile", str(p["profile"])))
        if p.get("latency"):
            out.append(("latency", str(p["latency"])))
        out.append(("repeats", "one fio run per point; the sweep stops once IOPS stop growing (+3%) or p99 passes "
                               f"{fmt(p.get('max_lat_ms'))} ms"))
        if is_fleet(doc):
            out += fleet_method(doc)
    elif k == "bench oltp":
        if isnum(p.get("duration_s")):
            out.append(("each point", f"{duration_words(p['duration_s'])} after {fmt_auto(p.get('warmup_s'))} s "
                                      "of warm-up (excluded)"))
        driver = engine_words(doc)[1]
        out.append(("rates", f"TPS, TPM and NOPM divide by the time {driver} measured (its own window, without the "
                             "initial connection time), not by the duration asked for"))
        pts = oltp_view(doc)["points"] + [q for s in oltp_steps(doc)[:-1] for q in oltp_points(s.get("points"))]
        out.append(("repeats", repeats_text(p.get("repeat"), pts)))
        out.append(("load", f"open loop at {fmt(p['rate'])} transactions/s" if isnum(p.get("rate"))
                    else "closed loop (each client sends its next transaction when the last returns)"))
        if p.get("latency"):
            out.append(("latency", str(p["latency"])))
        if p.get("knee_rule"):
            out.append(("knee", str(p["knee_rule"])))
        nm = not_measured(doc)
        if nm:
            out.append(("not measured", ", ".join(x.replace("_", " ") for x in nm) + " (--dsn: CPU figures are "
                        f"this machine's, where {driver} runs; no bottleneck is judged from them)"))
    elif k == "bench dss":
        rep = p.get("repeat")
        wt = spread_of(doc.get("warm_totals"))
        out.append(("runs", f"{fmt(rep)} power run{'s' if rep != 1 else ''}: the first cold, the rest warm; per "
                            "query the median of the warm runs (an even count: the mean of the two middle ones), "
                            "with their min–max and count; the total is the sum of the per-query medians"
                    + (f"; the {wt['n']} warm power runs' own totals took {fmt(wt['min'], 3)}–{fmt(wt['max'], 3)} s"
                       if wt and wt["n"] > 1 else "")
                    + ("; one warm run: n=1, no spread" if rep == 2 else "")
                    + ("; no warm run: each query's cold time" if rep == 1 else "")
                    if isnum(rep) else "—"))
        if p.get("method"):
            out.append(("method", str(p["method"])))
        out.append(("memory limit", str(p.get("memory_limit") or "engine default")))
        if p.get("generator"):
            out.append(("data", f"TPC-H generated with {p['generator']}"))
    elif k == "bench backup":
        if p.get("method"):
            out.append(("method", str(p["method"])))
        methods = p.get("methods")
        if isinstance(methods, list):
            out.append(("backups", ", ".join(map(str, methods))))
    elif k.startswith("plan "):
        files = get(doc, "catalog", "files")
        if isinstance(files, list):
            out.append(("catalog", ", ".join(map(str, files)) + " (datasheet figures, not measurements)"))
    elif mrc_figures.is_mrc(doc):
        out += mrc_figures.method(doc)
    elif k == "lab":
        if p.get("profile"):
            out.append(("profile", str(p["profile"])))
        if isinstance(p.get("dirs"), list):
            out.append(("directories", ", ".join(map(str, p["dirs"]))))
    return out


def duration_words(asked: float, digits: int | None = None) -> str:
    """'30 s measured' or, for a fractional --duration, '0.4 s asked for, run as 1 s (pgbench -T takes whole
    seconds; rates divide by the time pgbench measured)'."""
    run = max(1, math.ceil(asked))
    shown = fmt_auto(asked) if digits is None else fmt(asked, digits)
    if run == asked:
        return f"{shown} s measured"
    return (f"{shown} s asked for, run as {run} s (pgbench -T takes whole seconds; rates divide by the "
            "time pgbench measured)")


def repeats_text(rep: Any, points: list[dict[str, Any]]) -> str:
    """The repeats line of an OLTP run: how a point's figures come from its runs, and the widest spread."""
    if not (isnum(rep) and rep > 1):
        return "one run per point (n=1: no spread measured; --repeat runs each point several times)"
    spreads = [(point_spread(q), q) for q in points]
    spreads = [(sp, q) for sp, q in spreads if sp and isnum(sp.get("spread_pct"))]
    text = (f"{fmt(rep)} runs per point; TPS, TPM, NOPM and latency percentiles are the medians of the runs (an "
            "even count: the mean of the two middle values), CPU, devices and the bottleneck those of the run "
            "in the middle by TPS (the lower of the two middle ones for an even count)")
    if spreads:
        sp, q = max(spreads, key=lambda x: x[0]["spread_pct"])
        text += (f"; the widest TPS spread is {fmt(sp['spread_pct'], 1)}% of the median at {fmt(q.get('clients'))} "
                 f"clients ({spread_text(sp, 1)})")
    return text
