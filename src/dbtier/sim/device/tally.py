"""What a replay keeps of its requests' latencies as they complete: bounded by the chunk, not the trace.

- `Latencies`: latency histograms by op (the bins of `latency.HIST_EDGES_US`, so several replays merge),
  and the latencies themselves while there are at most `exact_limit` requests, for exact percentiles and
  CDFs; past that only the histograms (each percentile within 0.6% of the exact one).
- `Timeline`: per bucket of arrival time, requests, reads, read latency (sum and histogram: mean and p99)
  and read blocks and hits. Buckets are a power of two seconds wide, the narrowest that holds the trace in
  at most 120 (so 60 to 120 of them): a bucket never straddles two of a wider grid, so the timeline is built
  as the trace streams by, doubling the width (adding pairs) when the trace outgrows it, and does not depend
  on how the trace was cut.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np

from dbtier.core.malloc import populate
from dbtier.sim.device import latency

NBINS = latency.HIST_EDGES_US.size - 1


# A first guess at a latency's bin from the top bits of its float (exponent and 12 bits of mantissa: cells
# 0.02% wide, finer than a bin's 1.16%): the bin of each cell's lowest value. _count settles it against the
# edges themselves, so the answer is the edges' own whatever the guess.
_GUESS_SHIFT = 40


def _guess_table() -> tuple[np.ndarray, int]:
    e = latency.HIST_EDGES_US
    lo = np.array([e[0] / 1e6 / 2], dtype=np.float64).view(np.int64)[0] >> _GUESS_SHIFT
    hi = np.array([e[-1] / 1e6 * 2], dtype=np.float64).view(np.int64)[0] >> _GUESS_SHIFT
    cells = ((np.arange(lo, hi + 1, dtype=np.int64) << _GUESS_SHIFT).view(np.float64)) * 1e6
    return np.clip(np.searchsorted(e, cells, side="right") - 1, 0, e.size - 2).astype(np.int32), int(lo)


_GUESS, _GUESS_BASE = _guess_table()


@numba.njit(nogil=True, cache=True)
def _count(lat_s, lat_bits, is_read, edges, guess, guess_base, bins, hist_read, hist_write):
    """Each latency's bin of `edges` (latency.histogram_bins' rule: the last edge at or below it, as
    np.searchsorted finds it, clipped to the first and last bins), counted by op: one pass where numpy took
    six. lat_bits: lat_s's bits (a view), for the first guess (_GUESS); the comparisons after it decide (a
    bisection was 30 ns a latency, mostly mispredicted branches)."""
    top = edges.shape[0] - 2
    lo, hi = edges[0], edges[-1]
    last_cell = guess.shape[0] - 1
    for i in range(lat_s.shape[0]):
        us = lat_s[i] * 1e6
        if us != us:
            b = top                              # NaN sorts last
        else:
            us = min(max(us, lo), hi)
            b = guess[min(max((lat_bits[i] >> _GUESS_SHIFT) - guess_base, 0), last_cell)]
            while b < top and edges[b + 1] <= us:
                b += 1
            while b > 0 and edges[b] > us:
                b -= 1
        bins[i] = b
        if is_read[i]:
            hist_read[b] += 1
        else:
            hist_write[b] += 1


@numba.njit(nogil=True, cache=True)
def _timeline(time_s, is_read, lat_s, bins, width_s, hits, nblk, cache, requests, reads, lat_sum, hist,
              read_blocks, read_hits):
    """Timeline.add's per-bucket sums in one pass, in request order (the order np.bincount adds in);
    lat_sum is the chunk's own, added to the total by the caller as before."""
    m = requests.shape[0]
    for i in range(time_s.shape[0]):
        k = min(np.int64(time_s[i] / width_s), m - 1)
        requests[k] += 1
        if is_read[i]:
            reads[k] += 1
            lat_sum[k] += lat_s[i]
            hist[k, bins[i]] += 1
            if cache:
                read_blocks[k] += nblk[i]
                read_hits[k] += hits[i]


class Latencies:
    def __init__(self, exact_limit: int):
        self.exact_limit = int(exact_limit)
        self.hist = {"read": np.zeros(NBINS, dtype=np.int64), "write": np.zeros(NBINS, dtype=np.int64)}
        # kept latencies by op, written in place into room for exact_limit each (taken at the first add; its
        # pages only as filled): the summary selects in place, no copy of millions joined at the end
        self.kept: dict[str, np.ndarray] | None = {}
        self.nkept = {"read": 0, "write": 0}
        self.count = 0

    def add(self, lat_s: np.ndarray, is_read: np.ndarray) -> np.ndarray:
        """Count the latencies; their bins (for Timeline.add)."""
        lat_s = np.ascontiguousarray(lat_s, dtype=np.float64)
        is_read = np.ascontiguousarray(is_read, dtype=np.bool_)
        b = np.empty(lat_s.size, dtype=np.int64)
        if lat_s.size == 0:
            return b
        _count(lat_s, lat_s.view(np.int64), is_read, latency.HIST_EDGES_US, _GUESS, _GUESS_BASE, b,
               self.hist["read"], self.hist["write"])
        self.count += int(lat_s.size)
        if self.kept is not None:
            if self.count > self.exact_limit:
                self.kept = None            # too many to keep: the histograms answer from here on
            else:
                if not self.kept:
                    self.kept = {op: np.empty(self.exact_limit) for op in self.nkept}
                nread = int(np.count_nonzero(is_read))
                for op, keep, k in (("read", is_read, nread), ("write", ~is_read, lat_s.size - nread)):
                    at = self.nkept[op]
                    populate(self.kept[op], at, at + k)
                    np.compress(keep, lat_s, out=self.kept[op][at:at + k])
                    self.nkept[op] = at + k
        return b

    @property
    def exact(self) -> bool:
        return self.kept is not None

    def summary(self) -> tuple[dict[str, dict[str, float | None]], dict[str, list[list[float]]]]:
        """(percentiles_us, cdf_us), each by op: exact when the latencies were kept, else from the histograms.
        Gives the kept latencies back (once: a summary is taken at the end)."""
        pct: dict[str, dict[str, float | None]] = {}
        cdf: dict[str, list[list[float]]] = {}
        for op, h in self.hist.items():
            if self.kept is None:
                pct[op], cdf[op] = latency.percentiles_from_histogram_us(h), histogram_cdf(h)
            else:
                lat = self.kept[op][:self.nkept[op]] if self.kept else np.zeros(0)
                pct[op], cdf[op] = latency.percentiles_and_cdf_us(lat, overwrite=True)
        self.kept = {} if self.kept is not None else None
        self.nkept = {"read": 0, "write": 0}
        return pct, cdf

    def method(self) -> str:
        return ("exact, from every request's latency" if self.exact else
                f"from histograms ({self.count:,} requests, more than the {self.exact_limit:,} kept whole): "
                + latency.HIST_RULE)


def histogram_cdf(counts: np.ndarray) -> list[list[float]]:
    """[[latency_us, fraction <=], ...] from histogram counts (bins' upper edges), at most ~110 points."""
    n = int(counts.sum())
    if n == 0:
        return []
    cum = np.cumsum(counts) / n
    nz = np.flatnonzero(counts)
    step = max(1, math.ceil(nz.size / 100))
    keep = np.unique(np.concatenate([nz[::step], nz[-1:]]))
    return [[float(latency.HIST_EDGES_US[i + 1]), float(cum[i])] for i in keep]


class Timeline:
    MAX_BUCKETS = 120
    FIRST_WIDTH_S = 2.0 ** -20          # about a microsecond: doubled as often as the trace needs

    def __init__(self, cache: bool):
        self.width_s = self.FIRST_WIDTH_S
        self.cache = cache
        m = self.MAX_BUCKETS
        self.requests = np.zeros(m, dtype=np.int64)
        self.reads = np.zeros(m, dtype=np.int64)
        self.read_lat_s = np.zeros(m)
        self.read_blocks = np.zeros(m, dtype=np.int64)
        self.read_hits = np.zeros(m, dtype=np.int64)
        self.hist = np.zeros((m, NBINS), dtype=np.int64)
        self.end_s = 0.0

    def _widen(self) -> None:
        half = self.MAX_BUCKETS // 2
        for name in ("requests", "reads", "read_lat_s", "read_blocks", "read_hits", "hist"):
            a = getattr(self, name)
            pairs = a.reshape(half, 2, *a.shape[1:]).sum(axis=1)
            out = np.zeros_like(a)
            out[:half] = pairs
            setattr(self, name, out)
        self.width_s *= 2

    def add(self, time_s: np.ndarray, is_read: np.ndarray, lat_s: np.ndarray, hits: np.ndarray | None = None,
            nblk: np.ndarray | None = None, bins: np.ndarray | None = None) -> None:
        """Completed requests (arrival times ascending); bins: their latencies' (Latencies.add gives them)."""
        if time_s.size == 0:
            return
        self.end_s = max(self.end_s, float(time_s[-1]))
        while self.end_s >= self.MAX_BUCKETS * self.width_s:
            self._widen()
        lat_s = np.ascontiguousarray(lat_s, dtype=np.float64)
        is_read = np.ascontiguousarray(is_read, dtype=np.bool_)
        bins = latency.histogram_bins(lat_s) if bins is None else bins
        cache = self.cache and hits is not None and nblk is not None
        none = np.zeros(0, dtype=np.int64)
        lat_sum = np.zeros(self.MAX_BUCKETS)
        _timeline(latency.writable(time_s), is_read, lat_s, bins, self.width_s,
                  np.asarray(hits, dtype=np.int64) if cache else none, np.asarray(nblk, dtype=np.int64) if cache
                  else none, cache, self.requests, self.reads, lat_sum, self.hist, self.read_blocks, self.read_hits)
        self.read_lat_s += lat_sum

    def result(self, timed: bool, events: list[dict[str, Any]]) -> dict[str, Any]:
        """The timeline block: bucket_s, series (t_s, requests, reads, read_mean_us, read_p99_us and, for a
        cache, read_hit_ratio), events."""
        if not timed or self.end_s <= 0:
            return {"bucket_s": None, "series": [], "events": events}
        n = int(self.end_s // self.width_s) + 1
        series = []
        for b in range(min(n, self.MAX_BUCKETS)):
            rd = int(self.reads[b])
            point: dict[str, Any] = {
                "t_s": b * self.width_s, "requests": int(self.requests[b]), "reads": rd,
                "read_mean_us": float(self.read_lat_s[b] / rd * 1e6) if rd else None,
                "read_p99_us": latency.percentiles_from_histogram_us(self.hist[b])["p99"] if rd else None}
            if self.cache:
                nb = int(self.read_blocks[b])
                point["read_hit_ratio"] = float(self.read_hits[b] / nb) if nb else None
            series.append(point)
        return {"bucket_s": self.width_s, "series": series, "events": events}
