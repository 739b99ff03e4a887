"""A bench dss run's headline figures (the power run's totals, spills, CPU and cold scan; each query's time as
detail), its per-query table and how its numbers were obtained: the `bench.dss` kind's figures and terminal
faces (dbtier.results.kinds)."""

from __future__ import annotations

from typing import Any

from dbtier.core.parts import dict_at
from dbtier.report.figures.core import (Figure, Table, Terminal, answers_text, dss_queries, dss_stats, fmt, isnum,
                                        query_spread, spread_of, spread_text)


def figures(doc: dict[str, Any]) -> list[Figure]:
    s = dss_stats(doc)
    out = [Figure("engine", "engine", s["engine"]),
           Figure("scale", "TPC-H scale factor", s["scale"], "SF", 2),
           Figure("temp", "temp directory", s["temp"] if isinstance(s["temp"], str) else None),
           Figure("total_seconds", "power run, total", s["total_s"], "s", 3, "lower", spread=s["warm_totals"]),
           Figure("geomean_seconds", "per query, geometric mean", s["geomean_s"], "s", 4, "lower"),
           Figure("queries", "queries run", s["queries"], "", 0),
           Figure("answers", "answers", answers_text(s["answers_ok"]) if s["queries"] else None),
           Figure("peak_temp_mb", "peak temp spilled", s["peak_temp_bytes"] / 1e6
                  if isnum(s["peak_temp_bytes"]) else None, "MB", 1, "lower"),
           Figure("spilled_queries", "queries that spilled", len(s["spilled"]) if s["queries"] else None, "", 0,
                  "lower"),
           Figure("cpu_pct", "CPU busy (time-weighted)", s["cpu_pct"], "%", 0)]
    if s["scan_mbps"] is not None:
        out.append(Figure("scan_mbps", "cold scan", s["scan_mbps"], "MB/s", 0, "higher"))
    if s["scan_ratio"] is not None:
        out.append(Figure("scan_pct_of_probe", "cold scan / probe sequential read", 100 * s["scan_ratio"], "%", 0,
                          "higher"))
    for q in dss_queries(doc):
        out.append(Figure(f"q{q['query']}.seconds", f"Q{q['query']}", q.get("seconds") if isnum(q.get("seconds"))
                          else None, "s", 3, "lower", "per query", detail=True, spread=query_spread(q)))
    return out


def tables(doc: dict[str, Any]) -> list[Table]:
    out: list[Table] = []
    rows = [[f"Q{q['query']}", q.get("seconds"), spread_text(query_spread(q), 3) or None, q.get("cold_seconds"),
             q.get("rows"), q["temp_bytes"] / 1e6 if isnum(q.get("temp_bytes")) else None,
             q["read_bytes"] / 1e6 if isnum(q.get("read_bytes")) else None, q.get("cpu_util")]
            for q in dss_queries(doc)]
    if rows:
        out.append(Table("Per query", ["query", "seconds (warm median)", "warm runs", "cold seconds", "rows",
                                       "temp MB", "read MB", "CPU %"], rows, (0, 3, 0, 3, 0, 1, 1, 0)))
    return out


def method(doc: dict[str, Any]) -> list[tuple[str, str]]:
    p = dict_at(doc, "params")
    out: list[tuple[str, str]] = []
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
    return out


TERMINAL = Terminal(tables, method)
