"""Statistics with no I/O: percentiles, linear fit, steady state, sweep stops."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence


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
    """A load sweep stops once `patience` points in a row fail to beat the knee so far by min_gain:
    `plateau`'s rule, asked after each point, so where a sweep stops and where its knee is are one rule.

    One flat step is not enough: on many devices (and on hypervisor-throttled
    volumes) IOPS plateau at one queue depth and climb again with a second
    submitting thread.
    """
    return bool(values) and plateau(values, min_gain, patience)[2]


def median(values: Sequence[float]) -> float:
    """The true median: the middle value, or the mean of the two middle values for an even count
    (100 and 140 give 120, not the lower-middle 100). The one definition every repeat uses."""
    if not values:
        raise ValueError("median of no values")
    xs = sorted(values)
    n = len(xs)
    mid = n // 2
    return float(xs[mid]) if n % 2 else (xs[mid - 1] + xs[mid]) / 2.0


def spread(values: Sequence[float]) -> dict[str, float | int | None]:
    """A repeated figure: {median, min, max, n, spread_pct}. spread_pct = (max - min) / median * 100;
    None with one sample (n=1 has no spread to report) or a zero median."""
    xs = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)]
    if not xs:
        return {"median": None, "min": None, "max": None, "n": 0, "spread_pct": None}
    m = median(xs)
    lo, hi = min(xs), max(xs)
    pct = 100.0 * (hi - lo) / m if len(xs) > 1 and m else None
    return {"median": m, "min": lo, "max": hi, "n": len(xs), "spread_pct": pct}


def representative(values: Sequence[float]) -> int:
    """Index of the sample that stands for a repeated measurement where only the headline figures can
    be medians (its CPU, devices, bottleneck): the middle sample by value; for an even count the lower
    of the two middle ones (both are equally near the median), the first of equal values."""
    if not values:
        raise ValueError("representative of no values")
    order = sorted(range(len(values)), key=lambda i: (values[i], i))
    return order[(len(values) - 1) // 2]


def plateau(values: Sequence[float], min_gain: float = 0.03, patience: int = 2,
            also: Callable[[int, int], bool] | None = None) -> tuple[int, int, bool]:
    """Where a load sweep stops paying: -> (knee index, points after it that failed, confirmed).

    The sweep's rule (`sweep_should_stop`) read from the start: a point is progress when it beats
    the best point so far by `min_gain` (and `also(best, i)` allows it, e.g. latency not growing
    faster than throughput); the knee is the last point of progress before `patience` points in a
    row that are not. One noisy step does not end the sweep: a later point that beats the best
    resumes it. Unconfirmed (fewer than `patience` failures at the end of the sweep): the knee is
    the best point so far and `confirmed` is False.
    """
    if not values:
        raise ValueError("plateau of no values")
    best, misses = 0, 0
    for i in range(1, len(values)):
        ok = values[i] >= values[best] * (1 + min_gain) and (also is None or also(best, i))
        if ok:
            best, misses = i, 0
        else:
            misses += 1
            if misses >= patience:
                return best, misses, True
    return best, misses, False
