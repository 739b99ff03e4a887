"""Streaming simulate: a trace replayed chunk after chunk (read as chunks, never whole) gives the answers of
the whole-trace replay -- every counter, utilisation, latency histogram, percentile and CDF point, the curve
and the timeline -- for every design, with disks whose queue count looks ahead past a chunk's end, a coarse
clock whose ticks straddle chunks, untimed traces, restarts, the sequential cutoff and write-back.

The queueing model's own pieces are checked the same way: requests fed to latency.Server in random pieces
give bit-for-bit the latencies of one call over the whole trace. The disk's 32-command queue is checked
against a hand-worked schedule."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from dbtier.sim.device import latency, tally
from dbtier.sim import simulate as sim
from dbtier.sim.trace.chunks import chunks_of, prefetched, whole_ticks
from dbtier.sim.device.devices import resolve
from dbtier.sim.device.latency import DeviceModel, SubIOs
from dbtier.sim.trace.traces import read_chunks, read_trace

DATA = Path(__file__).resolve().parent.parent / "data" / "traces"
DISK = DeviceModel("disk", "test", 200, 300, 150, 150, 10_000, 8_000, single_actuator=True)
FLASH = DeviceModel("flash", "test", 20_000, 10_000, 500, 400, 100, 50)


# -- the queueing model fed in pieces -------------------------------------------------------------------------

def _ios(n: int, seed: int, ndev: int):
    """Random I/Os of n requests: 1-3 each, on ndev devices, reads and writes, some continuing the last."""
    rng = np.random.default_rng(seed)
    per = rng.integers(1, 4, n)
    req = np.repeat(np.arange(n), per)
    m = req.size
    dev = rng.integers(0, ndev, m).astype(np.int32)
    op = (rng.random(m) < 0.3).astype(np.uint8)
    nb = rng.choice([4096.0, 8192.0, 65536.0], m)
    off = rng.integers(0, 1 << 20, m) * 4096
    cont = rng.random(m) < 0.3                       # continue the previous I/O: the sequential rule
    off[1:][cont[1:]] = off[:-1][cont[1:]] + nb[:-1][cont[1:]].astype(np.int64)
    fg = rng.random(m) < 0.9
    return req, dev, op, nb, off, fg


def _subs(req, dev, op, nb, off, fg, lo, hi) -> SubIOs:
    s = SubIOs.empty()
    m = (req >= lo) & (req < hi)
    for d in np.unique(dev[m]):
        k = m & (dev == d)
        for g in (True, False):          # pieces in any order: the model sorts them by request (stably)
            kk = k & (fg == g)
            s.add(req[kk], int(d), op[kk], nb[kk], fg=g, offset=off[kk], volume=np.zeros(int(kk.sum())))
    return s


@pytest.mark.parametrize("timed", [True, False])
@pytest.mark.parametrize("rate", [50.0, 400.0])           # the disk idle-ish, and saturated (a backlog)
def test_server_in_pieces_gives_the_whole_calls_latencies(timed, rate):
    n = 3000
    req, dev, op, nb, off, fg = _ios(n, 3, 3)
    t = np.cumsum(np.random.default_rng(4).exponential(1 / rate, n))
    t -= t[0]
    devices = [FLASH, DISK, DISK]
    whole = latency.serve(_subs(req, dev, op, nb, off, fg, 0, n), devices, t, timed)
    srv = latency.Server(devices, timed)
    got = []
    cuts = np.unique(np.concatenate([[0, n], np.random.default_rng(5).integers(1, n, 40)]))
    held = 0
    for lo, hi in zip(cuts[:-1], cuts[1:]):
        d = srv.feed(_subs(req, dev, op, nb, off, fg, lo, hi), int(lo), t[lo:hi])
        assert d["first"] == sum(len(x) for x in got)
        got.append(d["latency_s"])
        held = max(held, hi - (d["first"] + len(d["latency_s"])))
    got.append(srv.feed(SubIOs.empty(), n, np.zeros(0), final=True)["latency_s"])
    lat = np.concatenate(got)
    assert lat.shape == (n,)
    assert np.array_equal(lat, whole.latency_s)               # bit for bit
    assert np.array_equal(srv.busy, whole.busy_s)
    if timed and rate > 300:
        assert held > 0          # the saturated disk's look-ahead did hold requests back to the next piece
        assert whole.utilisation()[1] > 0.9


def test_a_disk_reorders_among_at_most_32_commands():
    """40 random 4 KiB reads arrive together on a disk (200 IOPS at depth, 10 ms at QD1: 5 ms of positioning
    is saveable). The j-th (0-based) starts when the one before ends, with 40 - j outstanding, of which the
    disk holds min(40 - j, 32): s = 5 ms + 5 ms x 2 / (min(40 - j, 32) + 1). The first 9 get 5 ms x 2/33."""
    n = 40
    subs = SubIOs.empty()
    subs.add(np.arange(n), 0, 0, np.full(n, 4096.0), offset=np.arange(n) * 10**9, volume=np.zeros(n))
    lat = latency.serve(subs, [DISK], np.zeros(n), True).latency_s
    svc = [0.005 + 0.005 * 2 / (min(n - j, 32) + 1) for j in range(n)]
    assert lat == pytest.approx(np.cumsum(svc), rel=1e-12)
    assert lat[0] == pytest.approx(0.005 + 0.010 / 33)


# -- chunk helpers --------------------------------------------------------------------------------------------

def test_whole_ticks_keeps_each_timestamps_requests_together():
    tr = read_trace(DATA / "msr-hm1.csv")
    tr.time_s = np.floor(np.arange(len(tr)) / 3.0)          # three requests a tick
    parts = list(whole_ticks(chunks_of(tr, 4)))
    assert sum(len(c) for c in parts) == len(tr)
    assert [c.first_request for c in parts] == list(np.cumsum([0] + [len(c) for c in parts[:-1]]))
    for a, b in zip(parts, parts[1:]):
        assert a.time_s[-1] < b.time_s[0]                  # no tick cut in two


def test_prefetched_raises_the_readers_error_where_its_chunk_would_be():
    def chunks():
        yield 1
        raise ValueError("line 7: bad")
    it = prefetched(chunks())
    assert next(it) == 1
    with pytest.raises(ValueError, match="line 7"):
        next(it)


def test_prefetched_stops_the_reader_when_the_consumer_stops():
    made = []

    def chunks():
        for i in range(1000):
            made.append(i)
            yield i
    it = prefetched(chunks(), depth=1)
    assert next(it) == 0
    it.close()
    assert len(made) <= 3 and not any(t.name == "dbtier-reader" for t in threading.enumerate())


# -- simulate: streamed against whole -------------------------------------------------------------------------

CACHE = {"cache": "nvme-enterprise-3.84tb", "backing": "sas-15k-73gb"}


def _coarse(tmp_path: Path) -> Path:
    """A Tencent CBS trace stamped to the second, ~40 requests a second on one disk: ties to spread, a queue."""
    rng = np.random.default_rng(11)
    n = 6000
    t = 1_500_000_000 + np.sort(rng.integers(0, n // 40, n))
    lines = [f"{ts},{rng.integers(0, 1 << 24) * 16},{rng.choice([8, 16, 64])},{int(rng.random() < 0.3)},7"
             for ts in t]
    p = tmp_path / "cbs.csv"
    p.write_text("\n".join(lines) + "\n")
    return p


CASES = [
    ("cloudPhysicsIO.csv.xz", "read-cache", dict(cache_gb=0.05, policy="s3fifo", write_mode="write-back",
                                                 seq_cutoff_bytes=1 << 20, restart_at_s=(1800.0,))),
    ("cloudPhysicsIO.csv.xz", "read-cache", dict(cache_gb=0.05, sweep_gb=())),          # the working-set pass
    ("cloudPhysicsIO.csv.xz", "single", {}),
    ("cloudPhysicsIO.csv.xz", "preferred-read-mirror", {}),
    ("coarse", "read-cache", dict(cache_gb=0.01, write_mode="write-through")),
    ("coarse", "single", {}),
    ("fio-v2-replay.iolog", "read-cache", dict(cache_gb=0.01)),                           # untimed
    ("msr-hm1.csv", "read-cache", dict(cache_gb=0.01, sweep_gb=(0.001, 0.002))),
]


def _devices(design: str):
    named = {"single": {"device": "sas-15k-73gb"}, "read-cache": CACHE,
             "preferred-read-mirror": {"fast": "nvme-enterprise-3.84tb", "slow": "sas-15k-73gb"}}[design]
    return resolve(design, named, None)


def _same_doc(a: dict, b: dict, path: str = "") -> None:
    """Equal everywhere; sums of floats in a different order (timeline means) to 1e-12 relative."""
    if isinstance(a, dict):
        assert set(a) == set(b), path
        for k in a:
            if k != "timings_s":
                _same_doc(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _same_doc(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and "read_mean_us" in path:
        assert a == pytest.approx(b, rel=1e-12), path
    else:
        assert a == b, path


@pytest.mark.slow
@pytest.mark.parametrize("name,design,kw", CASES, ids=[f"{c[0]}-{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_streamed_equals_whole(tmp_path, name, design, kw):
    path = _coarse(tmp_path) if name == "coarse" else DATA / name
    p = sim.Params(design, **kw)
    devs = _devices(design)
    whole = sim.simulate(read_trace(path), p, devs)
    reader = read_chunks(path, requests=997)                # chunk ends fall anywhere, inside ticks too
    streamed = sim.simulate_stream(lambda: iter(reader), lambda: reader.meta, p, devs)
    _same_doc(whole.contract, streamed.contract)
    _same_doc(whole.details, streamed.details)
    for op in ("read", "write"):
        assert np.array_equal(whole.latencies.hist[op], streamed.latencies.hist[op])
    assert streamed.details["latency_percentiles"].startswith("exact")
    if name == "coarse":
        assert whole.details["time_spread_resolution_s"] == 1.0
    if design == "read-cache":
        assert streamed.contract["read_hit_ratio"] is not None


@pytest.mark.slow
def test_past_the_exact_limit_percentiles_come_from_the_histograms():
    tr = read_trace(DATA / "cloudPhysicsIO.csv.xz")
    p = sim.Params("read-cache", cache_gb=0.05)
    devs = _devices("read-cache")
    exact = sim.simulate(tr, p, devs)
    binned = sim.simulate(tr, p, devs, chunk_requests=5000, exact_limit=20_000)
    assert "from histograms" in binned.details["latency_percentiles"]
    for op in ("read", "write"):
        h = exact.latencies.hist[op]
        assert np.array_equal(binned.latencies.hist[op], h)
        assert binned.contract["latency_us"][op] == latency.percentiles_from_histogram_us(h)
        for k, v in exact.contract["latency_us"][op].items():
            assert binned.contract["latency_us"][op][k] == pytest.approx(v, rel=0.006)   # half a 1.16% bin
    assert binned.details["cdf_us"]["read"] == tally.histogram_cdf(exact.latencies.hist["read"])


def _numpy_bins(lat_s):
    """The bins as numpy's searchsorted gives them (the rule the compiled pass follows)."""
    e = latency.HIST_EDGES_US
    us = np.clip(lat_s * 1e6, e[0], e[-1])
    return np.clip(np.searchsorted(e, us, side="right") - 1, 0, e.size - 2)


def test_the_tally_pass_bins_and_sums_as_numpy_does():
    """The one-pass tally against numpy's bincounts: latencies on the bins' edges, under the first and over
    the last, reads and writes, a cache's blocks and hits, over two calls and a widening."""
    rng = np.random.default_rng(7)
    e = latency.HIST_EDGES_US
    on = e[rng.integers(0, e.size, 300)]
    # on the edges, a hair either side of them (where a logarithm's guess could land one bin off), everywhere
    lat = np.concatenate([on / 1e6, np.nextafter(on, 0) / 1e6, np.nextafter(on, np.inf) / 1e6,
                          rng.lognormal(-8, 3, 5000), [0.0, 1e-12, 5e3, np.nan]])
    n = lat.size
    read = rng.random(n) < 0.7
    t = np.sort(rng.uniform(0, 50, n))
    hits, nblk = rng.integers(0, 4, n).astype(np.int32), np.full(n, 4, dtype=np.int32)
    lat_t, tl = tally.Latencies(10), tally.Timeline(True)
    ref_hist = {"read": np.zeros(tally.NBINS, np.int64), "write": np.zeros(tally.NBINS, np.int64)}
    halves = [slice(0, n // 3), slice(n // 3, n)]
    for h in halves:
        b = lat_t.add(lat[h], read[h])
        assert (b == _numpy_bins(lat[h])).all()
        tl.add(t[h], read[h], lat[h], hits[h], nblk[h], b)
        ref_hist["read"] += np.bincount(_numpy_bins(lat[h][read[h]]), minlength=tally.NBINS)
        ref_hist["write"] += np.bincount(_numpy_bins(lat[h][~read[h]]), minlength=tally.NBINS)
    assert (lat_t.hist["read"] == ref_hist["read"]).all() and (lat_t.hist["write"] == ref_hist["write"]).all()
    # the timeline by hand: the final width, each request's bucket
    k = np.minimum((t / tl.width_s).astype(np.int64), tl.MAX_BUCKETS - 1)
    assert (tl.requests == np.bincount(k, minlength=tl.MAX_BUCKETS)).all()
    assert (tl.reads == np.bincount(k[read], minlength=tl.MAX_BUCKETS)).all()
    assert tl.read_lat_s == pytest.approx(np.bincount(k[read], weights=lat[read], minlength=tl.MAX_BUCKETS),
                                          nan_ok=True)
    assert (tl.read_hits == np.bincount(k[read], weights=hits[read], minlength=tl.MAX_BUCKETS)).all()
    assert (tl.read_blocks == np.bincount(k[read], weights=nblk[read], minlength=tl.MAX_BUCKETS)).all()
    hist = np.zeros((tl.MAX_BUCKETS, tally.NBINS), np.int64)
    np.add.at(hist, (k[read], _numpy_bins(lat[read])), 1)
    assert (tl.hist == hist).all()
