"""Statistics with no I/O: percentiles, linear fit, steady state, sweep stops."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence


def percentile(values: Sequence[float], pct: float) -> float:
    """Linear interpolation between closest ranks (numpy's default method)."""
    if not values:
        raise ValueError("percentile of no values")
    xs = sorted(values)
    k = (len(xs) - 1) * pct / 100.0
    lo, hi = math.floor(k), math.ceil(k)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def linear_fit(ys: Sequence[float]) -> tuple[float, float]:
    """Least-squares line y = slope*x + intercept over x = 0..n-1."""
    n = len(ys)
    if n < 2:
        raise ValueError("a fit needs two points")
    mx = (n - 1) / 2.0
    my = sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in range(n))
    sxy = sum((x - mx) * (y - my) for x, y in zip(range(n), ys))
    slope = sxy / sxx
    return slope, my - slope * mx


@dataclass(frozen=True)
class SteadyState:
    reached: bool
    window: tuple[float, ...]
    average: float
    range_pct: float        # (max - min) / average * 100, limit 20
    excursion_pct: float    # |slope| * (n - 1) / average * 100, limit 10

    def as_dict(self) -> dict:
        return {"reached": self.reached, "window": list(self.window), "average": self.average,
                "range_pct": self.range_pct, "excursion_pct": self.excursion_pct}


def snia_steady_state(rounds: Sequence[float], window: int = 5, max_range_pct: float = 20.0,
                      max_excursion_pct: float = 10.0) -> SteadyState | None:
    """SNIA PTS steady-state test on the last `window` rounds (None until there are enough).

    Steady when, within the window, max - min is within 20% of the average and
    the best-fit line's excursion across the window is within 10% of it.
    """
    if len(rounds) < window:
        return None
    w = tuple(float(x) for x in rounds[-window:])
    avg = sum(w) / window
    if avg <= 0:
        return SteadyState(False, w, avg, math.inf, math.inf)
    slope, _ = linear_fit(w)
    rng = (max(w) - min(w)) / avg * 100.0
    exc = abs(slope) * (window - 1) / avg * 100.0
    return SteadyState(rng <= max_range_pct and exc <= max_excursion_pct, w, avg, rng, exc)


def sweep_should_stop(values: Sequence[float], min_gain: float = 0.03, patience: int = 2) -> bool:
    """A load sweep stops once `patience` points in a row fail to beat the best so far by min_gain.

    One flat step is not enough: on many devices (and on hypervisor-throttled
    volumes) IOPS plateau at one queue depth and climb again with a second
    submitting thread.
    """
    if len(values) <= patience:
        return False
    best_before = max(values[:-patience])
    return all(v < best_before * (1 + min_gain) for v in values[-patience:])
