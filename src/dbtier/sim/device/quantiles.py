"""np.quantile's answer (its default rule, to the bit) without its selection over every value.

np.quantile(a, q) reads a's order statistics either side of (n - 1) q and interpolates; it finds them by
np.partition at all of those places at once, a pass over the values for each level of the selection: on 7
million latencies and the ~110 fractions a summary asks (percentiles and the CDF's points), 160-280 ms. Here
the order statistics come from the values' bits instead: a non-negative float's bits, read as an integer,
sort as the float does, so counting the values by their top 16 bits (sign, exponent, 4 bits of mantissa)
says which bucket holds each order statistic and its rank there; a bucket holding more than SPLIT values is
counted again by its next 12 bits; one more pass gathers the buckets (or sub-buckets) that hold an order
statistic, and a selection within each, a few thousand values, finds it. Three passes in all, about 40 ms
for 7 million. Where that would gather more than 1/GATHER_SHARE of the values (most of them equal, say), or
a value is negative or NaN, np.quantile answers as before.
"""

from __future__ import annotations

import numba
import numpy as np

TOP_SHIFT = 48          # the first count: the top 16 bits (a non-negative float's are below 0x7FF1)
TOP_BUCKETS = 1 << 15
SUB_SHIFT = 36          # the second: the next 12 bits, within the buckets that hold more than SPLIT values
SUB_BUCKETS = 1 << 12
SPLIT = 4096
GATHER_SHARE = 4
_NAN_BITS = 0x7FF0000000000000      # +inf; bits above are NaNs


@numba.njit(nogil=True, cache=True)
def _top_counts(bits, counts):
    """Count the values by their top bits; False where a value is negative or NaN (its bits would not sort
    as it does)."""
    for i in range(bits.shape[0]):
        b = bits[i]
        if b < 0 or b > _NAN_BITS:
            return False
        counts[b >> TOP_SHIFT] += 1
    return True


@numba.njit(nogil=True, cache=True)
def _sub_counts(bits, split_slot, counts):
    """Count the values of the split buckets (split_slot[top] >= 0: their row of counts) by their next bits."""
    for i in range(bits.shape[0]):
        b = bits[i]
        s = split_slot[b >> TOP_SHIFT]
        if s >= 0:
            counts[s, (b >> SUB_SHIFT) & (SUB_BUCKETS - 1)] += 1


@numba.njit(nogil=True, cache=True)
def _gather(values, bits, top_fill, split_slot, sub_fill, out):
    """Each value of a wanted bucket (top_fill[top] >= 0) or of a wanted sub-bucket of a split one
    (sub_fill[slot, sub] >= 0) into `out` at its piece's next place."""
    for i in range(bits.shape[0]):
        b = bits[i]
        t = b >> TOP_SHIFT
        at = top_fill[t]
        if at >= 0:
            out[at] = values[i]
            top_fill[t] = at + 1
            continue
        s = split_slot[t]
        if s >= 0:
            u = (b >> SUB_SHIFT) & (SUB_BUCKETS - 1)
            at = sub_fill[s, u]
            if at >= 0:
                out[at] = values[i]
                sub_fill[s, u] = at + 1


def _numpy_points(n: int, q: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """np.quantile's order statistics (below and above each fraction: -1 the last) and weights, as numpy's
    lib/_function_base_impl.py computes them (_quantile, _get_indexes, _get_gamma for 'linear')."""
    virtual = (n - 1) * q
    prev = np.floor(virtual)
    nxt = prev + 1
    above = virtual >= n - 1
    prev[above] = -1
    nxt[above] = -1
    below = virtual < 0
    prev[below] = 0
    nxt[below] = 0
    gamma = virtual - prev
    return prev.astype(np.intp), nxt.astype(np.intp), gamma


def _lerp(lo: np.ndarray, hi: np.ndarray, t: np.ndarray) -> np.ndarray:
    """numpy's _lerp: from the lower end below a half, from the upper end from a half on."""
    diff = hi - lo
    res = np.add(lo, diff * t)
    np.subtract(hi, diff * (1 - t), out=res, where=t >= 0.5)
    return res


def _pieces(counts: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For sorted ranks idx: the bucket of counts holding each, and its rank within the bucket."""
    cum = np.cumsum(counts)
    where = np.searchsorted(cum, idx, side="right")
    return where, idx - (cum[where] - counts[where])


def order_statistics(values: np.ndarray, idx: np.ndarray, share: int = GATHER_SHARE) -> np.ndarray | None:
    """The idx-th smallest of `values` (idx sorted, unique, within range), or None where gathering them would
    take more than 1/share of the values or a value is negative or NaN."""
    n = values.size
    bits = values.view(np.int64)
    top = np.zeros(TOP_BUCKETS, dtype=np.int64)
    if not _top_counts(bits, top):
        return None
    tb, trank = _pieces(top, idx)
    need = np.unique(tb)
    split = need[top[need] > SPLIT]
    split_slot = np.full(TOP_BUCKETS, -1, dtype=np.int64)
    split_slot[split] = np.arange(split.size)
    sub = np.zeros((split.size, SUB_BUCKETS), dtype=np.int64)
    if split.size:
        _sub_counts(bits, split_slot, sub)
    # the pieces gathered: whole buckets (small ones) and sub-buckets, one after another in `out`
    top_fill = np.full(TOP_BUCKETS, -1, dtype=np.int64)
    sub_fill = np.full((split.size, SUB_BUCKETS), -1, dtype=np.int64)
    at = np.empty(idx.size, dtype=np.int64)           # each order statistic's piece (start, size), its rank there
    count = np.empty(idx.size, dtype=np.int64)
    rank = np.empty(idx.size, dtype=np.int64)
    size = 0
    starts: dict[tuple[int, int], int] = {}
    for k, (t, r) in enumerate(zip(tb.tolist(), trank.tolist())):
        s = int(split_slot[t])
        if s < 0:
            key, count[k], rank[k] = (t, -1), top[t], r
        else:
            sb, sr = _pieces(sub[s], np.array([r]))
            key, count[k], rank[k] = (t, int(sb[0])), sub[s, sb[0]], sr[0]
        if key not in starts:
            starts[key] = size
            if s < 0:
                top_fill[t] = size
            else:
                sub_fill[s, key[1]] = size
            size += int(count[k])
        at[k] = starts[key]
    if size * share > n:
        return None
    out = np.empty(size)
    _gather(values, bits, top_fill, split_slot, sub_fill, out)
    stats = np.empty(idx.size)
    for a in np.unique(at):
        mine = at == a
        part = out[a:a + count[mine][0]]
        ranks = rank[mine]
        part.partition(np.unique(ranks))
        stats[mine] = part[ranks]
    return stats


def quantile(values: np.ndarray, q: np.ndarray, overwrite: bool = False, share: int = GATHER_SHARE) -> np.ndarray:
    """np.quantile(values, q) for a 1-d float64 array, to the bit (`overwrite`: np.quantile, where it answers,
    may reorder values; share: order_statistics')."""
    values = np.ascontiguousarray(values, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    n = values.size
    if n:
        prev, nxt, gamma = _numpy_points(n, q)
        prev_i = np.where(prev < 0, n - 1, prev)
        nxt_i = np.where(nxt < 0, n - 1, nxt)
        idx = np.unique(np.concatenate([prev_i, nxt_i]))
        stats = order_statistics(values, idx, share)
        if stats is not None:
            return _lerp(stats[np.searchsorted(idx, prev_i)], stats[np.searchsorted(idx, nxt_i)], gamma)
    return np.quantile(values, q, overwrite_input=overwrite)
