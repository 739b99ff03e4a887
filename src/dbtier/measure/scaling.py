"""How shared storage scales as a fleet's hosts are added (`probe --hosts --hosts-step`), pure: the load each
step runs, the host counts it steps through, a step's figures from its points, and where each host's share
degrades. measure/fleet.py runs the steps; nothing here starts fio or touches a file."""

from __future__ import annotations

from typing import Any

DEGRADED_P99 = 1.5          # per-host p99 this many times the one-host figure: the shared storage degrades
DEGRADED_IOPS = 0.8         # or per-host IOPS below this share of one host's

SCALING_RULE = (f"degraded: the worst host's p99 over {DEGRADED_P99}x its one-host figure, or IOPS per host under "
                f"{DEGRADED_IOPS:.0%} of it")

FALLBACK_LOAD = {"jobs": 1, "iodepth": 32}     # when the plan ran no point of the test


def peak_load(points: list[dict[str, Any]]) -> dict[str, Any]:
    """The point with the most IOPS among `points` (the aggregate's 4 KiB random reads), whose jobs and
    iodepth every step runs; FALLBACK_LOAD when there is none."""
    return max(points, key=lambda p: p["iops"]) if points else FALLBACK_LOAD


def host_counts(live: int) -> list[int]:
    """The steps' host counts: 1, 2, 4, ... up to `live`, and `live` itself."""
    return sorted({min(2 ** k, live) for k in range(live.bit_length() + 1)})


def step(point: dict[str, Any], per_host: list[dict[str, Any]]) -> dict[str, Any]:
    """One step's figures: the aggregate point of k hosts at once and each answering host's own point."""
    p99s = [(q["lat_us"] or {}).get("p99") for q in per_host]
    return {"hosts": point["hosts"], "iops": point["iops"], "iops_per_host": point["iops"] / max(1, point["hosts"]),
            "lat_us_p99": (point["lat_us"] or {}).get("p99"),
            "worst_host_lat_us_p99": max((x for x in p99s if x is not None), default=None),
            "host_iops": [q["iops"] for q in per_host], "raw": point["raw"]}


def verdict(steps: list[dict[str, Any]]) -> dict[str, Any]:
    """Where each host's share degrades as hosts are added: the first step whose worst host's p99 is over
    DEGRADED_P99 times the one-host step's, or whose IOPS per host is under DEGRADED_IOPS of it."""
    one = steps[0]
    lat1 = one["worst_host_lat_us_p99"]
    for s in steps[1:]:
        why = []
        if lat1 and (s["worst_host_lat_us_p99"] or 0) > DEGRADED_P99 * lat1:
            why.append(f"the worst host's p99 {s['worst_host_lat_us_p99']:,.0f} µs vs {lat1:,.0f} µs alone")
        if s["iops_per_host"] < DEGRADED_IOPS * one["iops_per_host"]:
            why.append(f"{s['iops_per_host']:,.0f} IOPS a host vs {one['iops_per_host']:,.0f} alone")
        if why:
            return {"degraded_at_hosts": s["hosts"],
                    "verdict": f"each host's 4 KiB random reads degrade at {s['hosts']} hosts at once: "
                               + " and ".join(why), "rule": SCALING_RULE}
    last = steps[-1]
    return {"degraded_at_hosts": None, "rule": SCALING_RULE,
            "verdict": (f"each host's 4 KiB random reads hold up to {last['hosts']} hosts at once "
                        f"({last['iops_per_host']:,.0f} IOPS a host vs {one['iops_per_host']:,.0f} alone)")}
