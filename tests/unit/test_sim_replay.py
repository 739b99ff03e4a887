"""Streaming replay: a trace fed as chunks of any size gives exactly the counters and per-request outputs of
the whole-trace replay (and of the prepare + run_cache path), for every policy and write mode, with
writes, restarts and the sequential cutoff on. Cutting into blocks and counting the working set give the same
whatever the chunking."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dbtier.sim.cache import replay as cache
from dbtier.sim.trace.chunks import chunks_of
from dbtier.sim.trace.traces import from_arrays, read_trace
from dbtier.sim.cache.workingset import WorkingSet

DATA = Path(__file__).resolve().parent.parent / "data" / "traces"
BS = 8192
COMMITTED = ["policy-17.csv", "msr-hm1.csv", "alibaba-block.csv", "tencent-cbs.csv", "blkparse-sdb.txt",
             "fio-v3-oltp.iolog", "fio-v2-replay.iolog", "cloudPhysicsIO.csv.xz"]


def _generated(n: int = 3000, seed: int = 7):
    """Writes, two volumes, multi-block and unaligned requests, sequential runs (so the cutoff bites)."""
    rng = np.random.default_rng(seed)
    hot = rng.integers(0, 400, n) * BS + rng.integers(0, 2, n) * 512
    seq = (np.arange(n) % 50) * 4 * BS + 10_000 * BS
    offset = np.where(rng.random(n) < 0.3, seq, hot).astype(np.int64)
    length = np.where(offset >= 10_000 * BS, 4 * BS, rng.integers(1, 3 * BS, n)).astype(np.int64)
    op = (rng.random(n) < 0.3).astype(np.uint8)
    volume = (rng.random(n) < 0.2).astype(np.int32)
    return from_arrays(np.arange(n, dtype=np.float64), op, offset, length, volume=volume)


def _today(tr, cap, policy, mode, cutoff, restarts):
    prep = cache.prepare(tr, BS)
    byp = cache.sequential_bypass(tr.offset_bytes, tr.length_bytes, tr.volume, cutoff) if cutoff else None
    rr = cache.restart_requests(tr.time_s, restarts) if restarts else None
    return prep, cache.run_cache(prep, cap, policy, mode, byp, rr, record=True)


def _chunked(tr, size, cap, policy, mode, cutoff, restarts):
    rp = cache.Replay(cap, policy, mode, BS, seq_cutoff_bytes=cutoff, restart_at_s=restarts)
    parts = [rp.feed(ch) for ch in cache_chunks(tr, size)]
    return rp, parts, rp.result()


def cache_chunks(tr, size):
    return chunks_of(tr, size) if size else chunks_of(tr, max(1, len(tr)))


def _same(a: cache.CacheResult, b: cache.CacheResult) -> None:
    assert a.counters == b.counters
    for f in ("hits", "admitted", "destaged", "first_miss"):
        assert np.array_equal(getattr(a, f), getattr(b, f)), f


@pytest.mark.slow
@pytest.mark.parametrize("policy", cache.POLICIES)
@pytest.mark.parametrize("mode", cache.WRITE_MODES)
def test_generated_trace_any_chunking_same_counters(policy, mode):
    tr = _generated()
    t_end = float(tr.time_s[-1])
    restarts = [t_end * 0.3, t_end * 0.3, t_end * 0.71 + 0.5, t_end * 2]   # twice at one time, one past the end
    for cap in (0, 1, 37, 500):
        for cutoff in (None, 6 * BS):
            prep, want = _today(tr, cap, policy, mode, cutoff, restarts)
            assert want.counters["read_blocks"] > 0 and want.counters["write_blocks"] > 0
            if cutoff and cap:
                assert want.counters["bypassed_reqs"] > 0
            for size in (None, 1, 7, 1000):
                rp, parts, got = _chunked(tr, size, cap, policy, mode, cutoff, restarts)
                _same(got, want)
                assert (rp.working_set.nids, rp.working_set.read_nids) == (prep.nids, prep.read_nids)
                assert np.array_equal(np.concatenate([p[0] for p in parts]), want.hits)


@pytest.mark.slow    # compiles kernels only it needs: the full suite's
@pytest.mark.parametrize("name", COMMITTED)
def test_committed_traces_any_chunking_same_counters(name):
    tr = read_trace(DATA / name)
    if len(tr) > 5000:
        sizes = (1000, 7919)                     # the whole CloudPhysics trace; small chunks on a prefix below
        tr_small = tr.select(np.arange(len(tr)) < 3000)
    else:
        sizes, tr_small = (), tr
    prep = cache.prepare(tr, BS)
    for policy in cache.POLICIES:
        for mode in cache.WRITE_MODES:
            for cap in (4, max(1, prep.nids // 7)):
                _, want = _today(tr, cap, policy, mode, None, ())
                for size in sizes:
                    _same(_chunked(tr, size, cap, policy, mode, None, ())[2], want)
                _, want_small = _today(tr_small, cap, policy, mode, 64 * 1024, [float(tr_small.time_s[-1]) / 2])
                for size in (1, 7, 1000):
                    _same(_chunked(tr_small, size, cap, policy, mode, 64 * 1024,
                                   [float(tr_small.time_s[-1]) / 2])[2], want_small)


def test_cutting_and_counting_do_not_depend_on_chunking():
    tr = _generated(2000, seed=3)
    whole = cache.prepare(tr, BS)
    for size in (1, 13, 999):
        parts = [cache.cut_chunk(ch, BS) for ch in chunks_of(tr, size)]
        assert np.array_equal(np.concatenate([p.keys for p in parts]), whole.keys)
        assert np.array_equal(np.concatenate([p.nblk for p in parts]), whole.nblk)
        assert [p.first_request for p in parts] == list(range(0, len(tr), size))
        ws = WorkingSet(BS)
        ws.keys = np.zeros(4, dtype=np.int64)         # a tiny empty set: it grows many times on the way
        ws.st[2] = 2
        for ch in chunks_of(tr, size):
            ws.feed_chunk(ch)
        assert (ws.nids, ws.read_nids, ws.exact) == (whole.nids, whole.read_nids, True)


def test_blocks_and_working_set_like_a_set():
    tr = _generated(1500, seed=11)
    prep = cache.prepare(tr, BS)
    first = tr.offset_bytes // BS
    last = (tr.offset_bytes + tr.length_bytes - 1) // BS
    seen, read, keys = set(), set(), []
    for f, la, v, o in zip(first, last, tr.volume, tr.op):
        for b in range(int(f), int(la) + 1):
            seen.add((int(v), b))
            keys.append((int(v) << 42) | b)
            if o == 0:
                read.add((int(v), b))
    assert (prep.nids, prep.read_nids, int(prep.nblk.sum())) == (len(seen), len(read), prep.keys.size)
    assert prep.keys.tolist() == keys


def test_replay_refuses_requests_out_of_order():
    tr = _generated(100)
    rp = cache.Replay(10)
    ch = list(chunks_of(tr, 40))
    rp.feed(ch[0])
    with pytest.raises(ValueError, match="out of order"):
        rp.feed_prepared(cache.cut_chunk(ch[0], BS))


def test_a_chunk_beyond_memory_is_refused_before_allocating():
    """Cutting into blocks is checked chunk by chunk: 200,000 requests of 1 GiB in 8 KiB blocks."""
    from dbtier.core.errors import DbtierError
    n = 200_000
    t = from_arrays(np.arange(n, dtype=float), np.zeros(n), np.arange(n) * 2**30, np.full(n, 2**30))
    rp = cache.Replay(100)
    with pytest.raises(DbtierError, match="big.csv: 200,000 requests cut into 8,192-byte blocks make 26,214,400,000"):
        rp.feed(next(chunks_of(t, n)), "big.csv")


@pytest.mark.parametrize("policy", cache.POLICIES)
def test_sweep_over_chunks_matches_the_sweep(policy):
    tr = _generated(2500, seed=5)
    restarts = [float(tr.time_s[-1]) / 3]
    prep = cache.prepare(tr, BS)
    byp = cache.sequential_bypass(tr.offset_bytes, tr.length_bytes, tr.volume, 6 * BS)
    rr = cache.restart_requests(tr.time_s, restarts)
    caps = [1, 20, 150, 900]
    want = cache.sweep(prep, caps, policy, "write-back", byp, rr, jobs=2)
    for size, jobs in ((1, 1), (333, 2), (len(tr), 2)):
        got, ws = cache.sweep_chunks(chunks_of(tr, size), caps, policy, "write-back", BS,
                                         seq_cutoff_bytes=6 * BS, restart_at_s=restarts, jobs=jobs)
        assert [g.counters for g in got] == [w.counters for w in want]
        assert (ws.nids, ws.exact) == (prep.nids, True)


def test_restarts_resolve_chunk_by_chunk_as_on_the_whole_trace():
    t = np.array([0, 1, 1, 2, 5, 5, 5, 9], dtype=np.float64)
    at = [-1, 1, 1, 1.5, 5, 8.5, 9, 10]
    want = cache.restart_requests(t, at)
    want = want[want < len(t)]
    for size in (1, 2, 3, 8):
        r = cache.Restarts(at)
        for lo in range(0, len(t), size):
            got = r.feed(t[lo:lo + size], lo)
        assert got.tolist() == want.tolist()
