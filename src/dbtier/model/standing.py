"""Where measured storage stands against the catalog (pure)."""

from __future__ import annotations

import math
from typing import Any, Sequence

from dbtier.model.plan.catalog import Device

# probe summary key -> catalog field; latency compares the other way round (lower is better)
FIGURES = (("read_iops_4k", "read_iops"), ("write_iops_4k", "write_iops"), ("read_mbps_seq", "read_mbps"),
           ("write_mbps_seq", "write_mbps"), ("read_lat_us_qd1_p50", "read_latency_us"))


def ratios(summary: dict[str, Any], d: Device) -> dict[str, float]:
    out = {}
    for key, field in FIGURES:
        m, c = summary.get(key), getattr(d, field)
        if m and c:
            out[key] = (c / m) if key.endswith("_p50") else (m / c)
    return out


def closest(summary: dict[str, Any], devices: Sequence[Device], top: int = 3) -> dict[str, Any]:
    """The catalog devices whose figures are nearest the measured ones (geometric distance of the ratios);
    each ratio is measured/catalog, > 1 meaning the measured storage does better."""
    scored = []
    for d in devices:
        r = ratios(summary, d)
        if not r:
            continue
        dist = math.sqrt(sum(math.log(x) ** 2 for x in r.values()) / len(r))
        scored.append((dist, d.id, d.name, d.kind, r))
    scored.sort()
    return {"closest": [{"device": i, "name": n, "kind": k, "ratios": r, "distance": round(dist, 3)}
                        for dist, i, n, k, r in scored[:top]]}
