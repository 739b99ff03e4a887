"""What a replay advises (sim/sweep.py) and the busiest second (latency.Server.busiest), on hand-worked figures."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dbtier.sim.cache import replay as cache
from dbtier.sim.device import latency
from dbtier.sim import sweep
from dbtier.sim import simulate as sim
from dbtier.sim.device.latency import DeviceModel
from dbtier.sim.trace.traces import READ, from_arrays, read_trace

TRACES = Path(__file__).parents[1] / "data" / "traces"


def _curve(pairs):
    return [{"cache_gb": g, "read_hit_ratio": h} for g, h in pairs]


def test_recommend_flattens_where_it_is_within():
    # largest 71%: within 2 points means >= 69%, first reached at 4 GB (70%). Per doubling: 1->2 20 points,
    # 2->4 10, 4->8 0.5, 8->16 0.5: flat from 4 GB on.
    rec = sweep.recommend(_curve([(16, 0.71), (1, 0.40), (2, 0.60), (4, 0.70), (8, 0.705)]))
    assert rec["cache_gb"] == 4 and rec["read_hit_ratio"] == 0.70
    assert rec["within_gb"] == 4 and rec["flattens_at_gb"] == 4
    assert rec["within_pp"] == 2.0 and rec["per_doubling_pp"] == 1.0
    assert rec["largest_gb"] == 16 and rec["largest_read_hit_ratio"] == 0.71
    assert "within 2 points" in rec["rule"] and "1 point per doubling" in rec["rule"]


def test_recommend_flat_early_is_reported_not_recommended():
    # 0.9 points a doubling throughout: flat from the first size (1 GB), but 1 GB is 3.6 points below the
    # largest (83.6%); within 2 points (>= 81.6%) first at 4 GB (81.8%).
    rec = sweep.recommend(_curve([(1, 0.800), (2, 0.809), (4, 0.818), (8, 0.827), (16, 0.836)]))
    assert rec["flattens_at_gb"] == 1 and rec["cache_gb"] == 4


def test_recommend_counts_doublings_between_uneven_sizes():
    # 1 -> 4 GB is two doublings: 1.5 points is 0.75 a doubling, flat; 4 -> 8 GB gains 3 points, not flat.
    rec = sweep.recommend(_curve([(1, 0.50), (4, 0.515), (8, 0.545)]))
    assert rec["flattens_at_gb"] == 8 and rec["cache_gb"] == 8
    rec = sweep.recommend(_curve([(1, 0.50), (4, 0.515), (8, 0.52)]))
    assert rec["flattens_at_gb"] == 1 and rec["cache_gb"] == 1     # 52% - 2 points = 50%: 1 GB's, exactly
    assert sweep.recommend(_curve([(1, 0.5)])) is None
    assert sweep.recommend([{"cache_gb": 1, "read_hit_ratio": None}, {"cache_gb": 2, "read_hit_ratio": None}]) is None


def test_write_mode_note_margin():
    assert sweep.other_write_mode("write-around") == "write-through"
    assert sweep.other_write_mode("write-back") == "write-around"
    assert sweep.write_mode_note("write-around", 0.27, "write-through", 0.36) is None      # 9 points
    note = sweep.write_mode_note("write-around", 0.27, "write-through", 0.88)
    assert note.startswith("write-through would give 88% read hits against write-around's 27% on this trace "
                           "(--write-mode write-through)")


def test_write_mode_note_on_the_sample_trace():
    """The issue's figures: cloudPhysicsIO (113,872 requests) through the default cache (its working set),
    write-around 27% read hits; write-through 88%, found here by a replay of its own."""
    tr = read_trace(TRACES / "cloudPhysicsIO.csv.xz")
    hdd = DeviceModel("hdd", "test", 170, 550, 250, 250, 12_500, 12_500, single_actuator=True)
    ssd = DeviceModel("ssd", "test", 800_000, 130_000, 6800, 2700, 80, 20)
    out = sim.simulate(tr, sim.Params(design="read-cache"), {"cache": ssd, "backing": hdd})
    c = out.details["cache"]
    assert c["cache_gb_from"] == "working set"
    assert c["capacity_blocks"] == c["working_set_blocks"] == 136_271
    alone = cache.Replay(c["capacity_blocks"], "lru", "write-through", 8192)
    alone.feed_prepared(cache.prepare(tr, 8192))
    other = alone.result().read_hit_ratio
    assert c["write_mode_alternative"]["read_hit_ratio"] == pytest.approx(other)
    assert round(out.contract["read_hit_ratio"], 2) == 0.27 and round(other, 2) == 0.88
    assert any(n.startswith("write-through would give 88% read hits against write-around's 27%")
               for n in out.details["notes"])
    assert not out.warnings          # the default size is a fact, not a warning
    assert any("the default without --cache-gb" in n for n in out.details["notes"])


# A disk of 100 IOPS whose QD1 latency is 1/IOPS: every random read takes 10 ms, one at a time.
DISK = DeviceModel("disk", "test", 100, 100, 100, 100, 10_000, 10_000, single_actuator=True)


def test_busiest_second_by_hand():
    """150 reads at t=0 and one at t=99 s (1 MiB apart: none sequential). By hand: the disk serves the burst
    back to back, starting reads at 0, 0.01, ..., 1.49 s: 100 of them (1.00 s busy) start in second 0, 50
    (0.50 s) in second 1. Busy 1.51 s over 99.01 s (the last read completes at 99.01): 1.53% on average.
    The burst's k-th read (k = 1..150) takes k x 10 ms; the median of the 151 latencies is the 76th
    smallest: 10 ms (the lone read), then 10, 20, ..., so 750 ms."""
    t = [0.0] * 150 + [99.0]
    n = len(t)
    tr = from_arrays(t, [READ] * n, np.arange(n) * (1 << 20), [4096] * n)
    out = sim.simulate(tr, sim.Params(design="single", spread_ties=False), {"device": DISK})
    busiest = out.contract["busiest_utilisation"]["device"]
    assert busiest == {"pct": pytest.approx(100.0), "at_s": 0.0, "requests": 150, "interval_s": 1.0}
    assert out.contract["device_util"]["device"] == pytest.approx(1.51 / 99.01)
    assert out.contract["latency_us"]["read"]["p50"] == pytest.approx(750_000)
    note = next(x for x in out.details["notes"] if "average hides bursts" in x)
    assert "the busiest second ran at 100%" in note and "150 requests" in note


def test_busiest_second_quiet_device_has_no_note():
    # one read a second: each 10 ms, every second 1% busy; no burst note
    tr = from_arrays([float(i) for i in range(10)], [READ] * 10, np.arange(10) * (1 << 20), [4096] * 10)
    out = sim.simulate(tr, sim.Params(design="single"), {"device": DISK})
    b = out.contract["busiest_utilisation"]["device"]
    assert b["pct"] == pytest.approx(1.0) and b["requests"] == 1
    assert not any("average hides bursts" in x for x in out.details["notes"])


def test_busiest_buckets_widen_past_the_limit(monkeypatch):
    """With room for 8 buckets, a trace of 20 s takes 4 s buckets: reads at 0..19 s, one a second, and a
    burst of 5 more at 13 s: 4-second bucket [12, 16) holds 4 + 5 = 9 arrivals and 0.09 s of busy time."""
    monkeypatch.setattr(latency, "MAX_INTERVALS", 8)
    t = sorted([float(i) for i in range(20)] + [13.0] * 5)
    n = len(t)
    srv = latency.Server([DISK], True, 0.0, 1.0, grow=True)
    subs = latency.SubIOs.empty()
    subs.add(np.arange(n), 0, READ, np.full(n, 4096.0), offset=np.arange(n) * (1 << 20))
    srv.feed(subs, 0, np.array(t), final=True)
    b = srv.busiest()[0]
    assert b["interval_s"] == 4.0 and b["at_s"] == 12.0 and b["requests"] == 9
    assert b["pct"] == pytest.approx(0.09 / 4 * 100)
