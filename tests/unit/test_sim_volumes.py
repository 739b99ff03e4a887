"""--volume all's arithmetic: merged latency histograms, totals from summed counts, the refusals.

Every expected figure is computed another way: percentiles with numpy over the raw latencies, hit
ratios by hand from the counts."""

import numpy as np
import pytest

from dbtier.core.errors import DbtierError
from dbtier.sim.device import latency, tally
from dbtier.sim import volumes
from dbtier.sim.simulate import Params
from dbtier.sim.volumes import VolumeResult


def test_histogram_percentiles_are_within_the_bin_width_of_numpys():
    rng = np.random.default_rng(7)
    a = rng.lognormal(np.log(200e-6), 0.8, 60_000)      # seconds: ~200 µs typical
    b = rng.lognormal(np.log(5e-3), 0.5, 40_000)        # a slower volume
    merged = latency.histogram_us(a) + latency.histogram_us(b)
    assert merged.sum() == 100_000
    got = latency.percentiles_from_histogram_us(merged)
    both = np.concatenate([a, b]) * 1e6
    for k, q in latency.PERCENTILES:
        exact = float(np.percentile(both, q))
        assert got[k] == pytest.approx(exact, rel=0.01), k
    # the average of the two volumes' p99s is nowhere near the p99 of both together
    avg = (np.percentile(a * 1e6, 99) + np.percentile(b * 1e6, 99)) / 2
    assert abs(avg - got["p99"]) / got["p99"] > 0.2


def test_histogram_keeps_every_request_even_out_of_range():
    h = latency.histogram_us(np.array([0.0, 1e-12, 5e-6, 1e9]))
    assert h.sum() == 4 and h[0] == 2 and h[-1] == 1
    assert latency.percentiles_from_histogram_us(np.zeros_like(h)) == {k: None for k, _ in latency.PERCENTILES}


def _vol(name, read_blocks, hits, reqs, req_hits, util, curve=None, lat_s=(100e-6,)):
    lat = np.array(lat_s)
    return VolumeResult(
        name, {"trace": {"requests": reqs}, "read_hit_ratio": hits / read_blocks, "request_hit_ratio": req_hits / reqs,
               "latency_us": {}, "device_util": {"cache": util[0], "backing": util[1]}},
        {"read_blocks": read_blocks, "read_block_hits": hits, "read_reqs": reqs, "read_req_hits": req_hits,
         "cache_gb": 1.0, "write_mode": "write-around"},
        curve, latency.histogram_us(lat), latency.histogram_us(np.zeros(0)))


def test_totals_come_from_summed_counts_not_averaged_ratios():
    a = _vol("a", 100, 50, 40, 10, (0.2, 0.5))
    b = _vol("b", 300, 30, 60, 6, (0.4, 0.1))
    t = volumes.combine([a, b], "read-cache", "lru", {"requests": 100})
    assert t["read_hit_ratio"] == pytest.approx(80 / 400)            # not (0.5 + 0.1) / 2
    assert t["request_hit_ratio"] == pytest.approx(16 / 100)
    assert t["device_util"] == {"cache": 0.4, "backing": 0.5}        # the busiest volume's, per role
    assert [v["volume"] for v in t["volumes"]] == ["a", "b"] and t["trace"] == {"requests": 100}
    assert t["curve"] is None and t["latency_us"]["write"]["p50"] is None


def test_total_curve_weights_each_volume_by_its_reads():
    pt = lambda gb, r, q, big=False: {"cache_gb": gb, "read_hit_ratio": r, "request_hit_ratio": q,  # noqa: E731
                                      "larger_than_working_set": big}
    a = _vol("a", 100, 50, 40, 10, (0.2, 0.5), [pt(1, 0.2, 0.1), pt(2, 0.5, 0.25, True)])
    b = _vol("b", 300, 30, 60, 6, (0.4, 0.1), [pt(1, 0.0, 0.0), pt(2, 0.1, 0.1)])
    t = volumes.combine([a, b], "read-cache", "lru", {})
    # at 1 GB: (0.2 x 100 + 0 x 300) / 400 = 0.05; at 2 GB: (50 + 30) / 400 = 0.2
    assert t["curve"] == [{"cache_gb": 1, "read_hit_ratio": pytest.approx(0.05)},
                          {"cache_gb": 2, "read_hit_ratio": pytest.approx(0.2)}]
    # sizes that differ between volumes (automatic sweeps): no total curve
    c = _vol("c", 10, 1, 5, 1, (0.1, 0.1), [pt(3, 0.1, 0.1), pt(4, 0.2, 0.2)])
    assert volumes.combine([a, c], "read-cache", "lru", {})["curve"] is None


def test_times_are_refused_with_every_volume():
    with pytest.raises(DbtierError, match="--restart-at with --volume all"):
        volumes.check(Params(design="read-cache", cache_gb=1, restart_at_s=(5.0,)))
    volumes.check(Params(design="read-cache", cache_gb=1))


def test_cdf_from_histogram_ends_at_one():
    pts = tally.histogram_cdf(latency.histogram_us(np.array([1e-4, 2e-4, 3e-3])))
    assert pts[-1][1] == pytest.approx(1.0) and [p[1] for p in pts] == sorted(p[1] for p in pts)
    assert tally.histogram_cdf(np.zeros(5, dtype=np.int64)) == []
