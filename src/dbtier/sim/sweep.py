"""What a replay's figures advise, as pure functions: the cache size a hit-ratio curve recommends, whether
another write mode would change the answer, and whether a device's average utilisation hides bursts.

Each takes figures the replay has already computed and returns a plain dict, a note (or None) or a list of notes.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from dbtier.core.units import size_text

WITHIN_PP = 2.0           # the recommendation: within this many points of the largest size's read hit ratio
PER_DOUBLING_PP = 1.0     # the curve has flattened once the miss ratio falls less than this per doubling
WRITE_MODE_MARGIN_PP = 10.0   # another write mode is named when its read hit ratio differs by more than this
BURST_AVG = 0.20          # an average utilisation below this ...
BURST_PEAK_PCT = 90.0     # ... with a busiest interval above this (percent) ...


def recommend(curve: Sequence[dict[str, Any]], within_pp: float = WITHIN_PP,
              per_doubling_pp: float = PER_DOUBLING_PP) -> dict[str, Any] | None:
    """The cache size a hit-ratio curve recommends ({cache_gb, read_hit_ratio} points, any order), or None
    (fewer than two sizes with a read hit ratio: no reads, or no sweep).

    Two sizes are found: `within_gb`, the smallest size whose read hit ratio is at most `within_pp`
    percentage points below the largest size's; and `flattens_at_gb`, the smallest size from which, at
    every further step of the curve, the miss ratio falls by less than `per_doubling_pp` points per
    doubling of the cache (a step from a to b is log2(b/a) doublings). The recommendation is the smaller
    of the two that is within `within_pp` of the largest size's ratio: `within_gb` is by definition the
    smallest size that is, so it is the recommendation; `flattens_at_gb` is reported beside it (smaller
    when the curve flattens well below the best and climbs again later, as a loop larger than the cache
    makes it; larger when the last doublings still gain a point or more each but less than `within_pp`
    in all)."""
    pts = sorted((float(p["cache_gb"]), float(p["read_hit_ratio"])) for p in curve
                 if p.get("read_hit_ratio") is not None and p.get("cache_gb"))
    if len(pts) < 2:
        return None
    best_gb, best = pts[-1]
    within_gb, within_hit = next((g, h) for g, h in pts if (best - h) * 100.0 <= within_pp + 1e-9)
    flat = len(pts) - 1
    for i in range(len(pts) - 2, -1, -1):
        (a, ha), (b, hb) = pts[i], pts[i + 1]
        if (hb - ha) * 100.0 / math.log2(b / a) >= per_doubling_pp:
            break
        flat = i
    return {"cache_gb": within_gb, "read_hit_ratio": within_hit,
            "rule": (f"the smallest swept size whose read hit ratio is within {within_pp:g} points of the largest "
                     f"size's ({size_text(best_gb * 1e9)}, {best:.1%}); beside it, the size from which the miss "
                     f"ratio falls by less than {per_doubling_pp:g} point per doubling of the cache"),
            "within_pp": within_pp, "per_doubling_pp": per_doubling_pp, "within_gb": within_gb,
            "flattens_at_gb": pts[flat][0], "flattens_read_hit_ratio": pts[flat][1],
            "largest_gb": best_gb, "largest_read_hit_ratio": best}


def other_write_mode(mode: str) -> str:
    """The write mode whose read hits differ: write-around against write-through (write-back caches
    writes as write-through does, so its read hits are write-through's)."""
    return "write-through" if mode == "write-around" else "write-around"


def write_mode_note(mode: str, hit: float | None, other: str, other_hit: float | None,
                    margin_pp: float = WRITE_MODE_MARGIN_PP) -> str | None:
    """A note when `other` would change the read hit ratio by more than `margin_pp` points, else None."""
    if hit is None or other_hit is None or abs(other_hit - hit) * 100.0 <= margin_pp:
        return None
    return (f"{other} would give {other_hit:.0%} read hits against {mode}'s {hit:.0%} on this trace "
            f"(--write-mode {other}); a difference of more than {margin_pp:g} points")


def burst_note(who: str, avg: float | None, busiest: dict[str, Any] | None, median_us: float | None,
               service_us: float, op: str = "read") -> str | None:
    """A note when a device's average utilisation is low (< BURST_AVG) but its busiest interval is
    saturated (> BURST_PEAK_PCT) and the median latency is above the device's service time: the average
    hides bursts the requests queue behind."""
    if avg is None or busiest is None or median_us is None:
        return None
    if not (avg < BURST_AVG and busiest["pct"] > BURST_PEAK_PCT and median_us > service_us):
        return None
    width = busiest["interval_s"]
    span = "second" if width == 1 else f"{width:g} s interval"
    return (f"{who}: the average hides bursts: the busiest {span} ran at {busiest['pct']:.0f}% (from "
            f"{busiest['at_s']:,.0f} s, {busiest['requests']:,} requests arriving) against {avg:.1%} on average, "
            f"and the median {op} ({_ms(median_us)}) is above the device's {_ms(service_us)} service time: "
            "requests queue behind the bursts")


def burst_notes(figs: dict[str, Any], roles: Sequence[str], devices: dict[str, Any],
                pct: dict[str, dict[str, float | None]], alone: str) -> list[str]:
    """burst_note for each device role that has one (figs: device_util and busiest_utilisation by role;
    devices: latency.DeviceModel by role): against the median read, else write (pct: latency percentiles by op)."""
    op = "read" if (pct.get("read") or {}).get("p50") is not None else "write"
    notes = []
    for role in roles:
        m = devices[role]
        who = f"the device ({m.id})" if role == "device" else f"the {role} device ({m.id})"
        note = burst_note(who + alone, figs["device_util"].get(role), (figs["busiest_utilisation"] or {}).get(role),
                          (pct.get(op) or {}).get("p50"),
                          m.read_latency_us if op == "read" else m.write_latency_us, op)
        if note:
            notes.append(note)
    return notes


def _ms(us: float) -> str:
    return f"{us / 1e6:.3g} s" if us >= 1e6 else (f"{us / 1e3:.3g} ms" if us >= 1e3 else f"{us:.3g} µs")
