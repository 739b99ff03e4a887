"""A simulate run's headline figures (its design, cache policy, hit ratios, read and write latency, a
mirror's resync): the simulate kinds' figures face (dbtier.results.kinds; an mrc's are mrc.py's once its
curves are there)."""

from __future__ import annotations

from typing import Any

from dbtier.report.figures.core import Figure, get, isnum


def figures(doc: dict[str, Any]) -> list[Figure]:
    out = [Figure("design", "design", doc.get("design") if isinstance(doc.get("design"), str) else None),
           Figure("policy", "cache policy", doc.get("policy") if isinstance(doc.get("policy"), str) else None),
           Figure("requests", "requests converted" if "convert" in doc else "requests replayed",
                  get(doc, "trace", "requests"), "", 0),
           Figure("read_hit_ratio", "read hit ratio (blocks)", 100 * doc["read_hit_ratio"]
                  if isnum(doc.get("read_hit_ratio")) else None, "%", 1, "higher"),
           Figure("request_hit_ratio", "read hit ratio (requests)", 100 * doc["request_hit_ratio"]
                  if isnum(doc.get("request_hit_ratio")) else None, "%", 1, "higher")]
    for op in ("read", "write"):
        for pct in ("p50", "p99"):
            v = get(doc, "latency_us", op, pct)
            out.append(Figure(f"{op}_{pct}_us", f"{op} latency {pct}", v if isnum(v) else None, "µs", 0, "lower"))
    rs = doc.get("resync") if isinstance(doc.get("resync"), dict) else None
    if rs:
        out += [Figure("resync_gb", "resync volume", rs["bytes"] / 1e9 if isnum(rs.get("bytes")) else None, "GB", 3,
                       "lower"),
                Figure("resync_s", "resync time", rs.get("seconds") if isnum(rs.get("seconds")) else None, "s", 1,
                       "lower"),
                Figure("unprotected_s", "time without redundancy", rs.get("unprotected_seconds")
                       if isnum(rs.get("unprotected_seconds")) else None, "s", 1, "lower")]
    return out
