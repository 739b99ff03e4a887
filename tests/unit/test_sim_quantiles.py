"""sim/device/quantiles.py against np.quantile itself (the reference: its own selection over every value), to the
bit, on latencies spread wide, tied, sorted, packed into a sliver (a saturated queue's), all equal, on
power-of-two boundaries, and tiny arrays; and the cases it leaves to np.quantile."""

from __future__ import annotations

import numpy as np
import pytest

from dbtier.sim.device import latency, quantiles

QS = np.concatenate([[p / 100.0 for _, p in latency.PERCENTILES], latency._CDF_P])
RNG = np.random.default_rng(5)
CASES = {
    "lognormal": lambda: RNG.lognormal(-8, 2, 300_000),
    "ties": lambda: np.round(RNG.exponential(1e-3, 100_000), 5),
    "sorted": lambda: np.sort(RNG.uniform(0, 1e-2, 50_001)),
    "sliver": lambda: 3000 + np.cumsum(RNG.exponential(1e-6, 200_000)),    # a backlog: one top bucket, split
    "hits and backlog": lambda: np.where(RNG.random(100_000) < 0.07, RNG.normal(1e-4, 1e-6, 100_000),
                                         3000 + RNG.uniform(0, 30, 100_000)),
    "powers of two": lambda: np.ldexp(1.0, RNG.integers(-30, 10, 20_000)) * RNG.choice([1.0, np.nextafter(1, 2)],
                                                                                      20_000),
    "zeros and tiny": lambda: np.concatenate([np.zeros(500), np.full(10, 5e-324), RNG.uniform(0, 1e-300, 500)]),
    "one": lambda: np.array([4.2e-3]),
    "two": lambda: np.array([4.2e-3, 1e-6]),
    "seven": lambda: RNG.lognormal(-8, 2, 7),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_numpys_quantiles_to_the_bit(case):
    values = CASES[case]()
    want = np.quantile(values, QS)
    got = quantiles.quantile(values.copy(), QS)
    assert np.array_equal(got, want)
    # and through the gathering path itself, whatever share of the values it takes
    n = values.size
    prev, nxt, _ = quantiles._numpy_points(n, QS)
    idx = np.unique(np.concatenate([np.where(prev < 0, n - 1, prev), np.where(nxt < 0, n - 1, nxt)]))
    stats = quantiles.order_statistics(values, idx, share=1)
    assert stats is not None and np.array_equal(stats, np.sort(values)[idx])


def test_buckets_small_and_split():
    """A bucket of at most SPLIT values is gathered whole; a larger one is counted again by its next bits:
    the order statistics are right either way, at the bucket's edges too."""
    small = RNG.uniform(1.0, 1.0625, quantiles.SPLIT)              # one top bucket (4 bits of mantissa)
    big = RNG.uniform(2.0, 2.125, quantiles.SPLIT * 10)
    values = RNG.permutation(np.concatenate([small, big]))
    idx = np.array([0, 1, small.size - 1, small.size, small.size + 1, values.size // 2, values.size - 1])
    assert np.array_equal(quantiles.order_statistics(values, idx, share=1), np.sort(values)[idx])


def test_left_to_numpy():
    """Negative or NaN values (their bits do not sort as they do), and values packed so close that the
    pieces would be most of them, are np.quantile's to answer: order_statistics says None, quantile still
    gives numpy's answer."""
    lat = RNG.lognormal(-8, 2, 10_000)
    idx = np.array([0, 5_000, 9_999])
    for bad in (-1e-6, np.nan, -0.0):
        v = lat.copy()
        v[77] = bad
        assert quantiles.order_statistics(v, idx) is None
        assert np.array_equal(quantiles.quantile(v, QS), np.quantile(v, QS), equal_nan=True)
    same = np.full(50_000, 2.5e-4)
    assert quantiles.order_statistics(same, idx) is None
    assert np.array_equal(quantiles.quantile(same, QS), np.quantile(same, QS))


def test_the_interpolation_is_numpys_to_the_last_bit():
    """Between two order statistics numpy interpolates from the lower one below a half and from the upper
    one from a half on; the two differ in the last bit often enough that small arrays of awkward values
    tell them apart (share=1: through the bits, which a handful of values would otherwise leave to numpy)."""
    rng = np.random.default_rng(9)
    for n in range(2, 60):
        values = rng.lognormal(-8, 3, n)
        assert np.array_equal(quantiles.quantile(values, QS, share=1), np.quantile(values, QS)), n
