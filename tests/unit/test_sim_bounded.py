"""The block cache's state follows the cache, not the trace: rows only for the blocks a cache holds (and
S3-FIFO's ghost, 2Q's Aout), recycled once they leave (sim/cache/slots.py), and the working set counted in bounded
memory (sim/cache/workingset.py).

Exactness: on generated traces (several seeds, writes, two volumes, unaligned multi-block requests,
sequential runs), every policy and write mode, with restarts and the sequential cutoff, caches from a few
blocks to larger than the footprint, the kernels give the counters and per-request outputs of a plain-Python
cache written from the policies' rules (below: dicts keyed by (volume, block), nothing shared with the code
under test), with the default spare rows and with one or two spare rows (a recycling sweep every few new
blocks), whole and chunk after chunk.

Memory: on a trace touching 100 times the blocks a cache holds, the replay's arrays stay at the size its
cache fixes (the same over 10 times and 100 times the footprint), and a tracemalloc peak over the whole replay
stays far below what one row per distinct block would take. Nothing here is timed (bench/simulate_scale.py)."""

from __future__ import annotations

import tracemalloc
from collections import OrderedDict

import numpy as np
import pytest

from dbtier.core.errors import DbtierError
from dbtier.sim.cache import replay as cache, slots, workingset
from dbtier.sim import simulate as sim
from dbtier.sim.trace.chunks import chunks_of
from dbtier.sim.device.latency import DeviceModel
from dbtier.sim.trace.traces import from_arrays
from dbtier.sim.cache.workingset import WorkingSet

BS = 8192


def _generated(n: int, seed: int, hot_blocks: int):
    """Writes (30%), two volumes, 1-3 blocks unaligned, 30% in sequential runs of 4-block requests."""
    rng = np.random.default_rng(seed)
    hot = rng.integers(0, hot_blocks, n) * BS + rng.integers(0, 2, n) * 512
    seq = (np.arange(n) % 40) * 4 * BS + 10 * hot_blocks * BS
    offset = np.where(rng.random(n) < 0.3, seq, hot).astype(np.int64)
    length = np.where(offset >= 10 * hot_blocks * BS, 4 * BS, rng.integers(1, 3 * BS, n)).astype(np.int64)
    op = (rng.random(n) < 0.3).astype(np.uint8)
    volume = (rng.random(n) < 0.2).astype(np.int32)
    return from_arrays(np.arange(n, dtype=np.float64), op, offset, length, volume=volume)


# -- the reference: each policy from its rules, block by (volume, block) --------------------------------------

class _Reference:
    """LRU, FIFO, S3-FIFO (libCacheSim's S3FIFOv0.c, `s3fifo-2023`: shares in bytes, the ghost 90%, the
    frequency counted to 3 and reset on the move to main; `s3fifo`, its current S3FIFO.c: the same, except
    that before the first eviction a miss that is not a ghost hit and finds S at or over its share enters M),
    SIEVE (a FIFO and a hand) and 2Q (Ain 25%, Aout 50%, Am the rest) with the write modes, restarts and bypass
    of sim/cache/kernels.py's docstring."""

    def __init__(self, capacity: int, policy: str, mode: str):
        self.cap, self.policy, self.mode = capacity, policy, mode
        b = BS
        self.current = policy == "s3fifo"
        self.evicted_once = False                      # S3-FIFO (current): the cache has had to evict
        self.order: list = []                          # SIEVE: oldest first
        self.visited: dict = {}                        # SIEVE: key -> visited
        self.sdirty: dict = {}                         # SIEVE: key -> dirty
        self.hand = None                               # SIEVE: the key under the hand (None: the oldest)
        self.ain_cap = int(capacity * b * 0.25)        # 2Q's shares, in bytes
        self.aout_cap = int(capacity * b * 0.5)
        self.am_cap = capacity * b - self.ain_cap
        self.Ain: OrderedDict = OrderedDict()          # 2Q: oldest first; value: dirty
        self.Am: OrderedDict = OrderedDict()
        self.Aout: OrderedDict = OrderedDict()
        self.small_cap = int(capacity * b * 0.1)
        self.main_cap = capacity * b - self.small_cap
        self.ghost_cap = int(capacity * b * 0.9)
        self.c = dict.fromkeys(cache.COUNTER_NAMES, 0)
        self.lru: OrderedDict = OrderedDict()          # LRU/FIFO: oldest first; value: dirty
        self.S: OrderedDict = OrderedDict()            # S3-FIFO: oldest first; value: [freq, dirty]
        self.M: OrderedDict = OrderedDict()
        self.G: OrderedDict = OrderedDict()

    def restart(self) -> int:
        d = self.dirty()
        self.c["restart_destaged_blocks"] += d
        self.c["destaged_blocks"] += d                 # a restart's destaging counts as destaging too
        for q in (self.lru, self.S, self.M, self.G, self.visited, self.sdirty, self.Ain, self.Am, self.Aout):
            q.clear()
        self.order.clear()
        self.hand = None
        self.evicted_once = False
        return d

    def dirty(self) -> int:
        return (sum(self.lru.values()) + sum(v[1] for q in (self.S, self.M) for v in q.values())
                + sum(self.sdirty.values()) + sum(self.Ain.values()) + sum(self.Am.values()))

    # SIEVE
    def _newer(self, x):
        i = self.order.index(x)
        return self.order[i + 1] if i + 1 < len(self.order) else None

    def _sieve_remove(self, x) -> int:
        if self.hand == x:
            self.hand = self._newer(x)
        self.order.remove(x)
        del self.visited[x]
        return self.sdirty.pop(x)

    def _sieve_admit(self, x, dirty) -> tuple[int, int]:
        d = 0
        while len(self.order) + 1 > self.cap:
            o = self.hand if self.hand is not None else self.order[0]
            while self.visited[o]:
                self.visited[o] = False
                o = self._newer(o)
                if o is None:
                    o = self.order[0]
            self.hand = self._newer(o)
            self.order.remove(o)
            del self.visited[o]
            d += self.sdirty.pop(o)
            self.c["evicted_blocks"] += 1
        self.order.append(x)
        self.visited[x] = False
        self.sdirty[x] = dirty
        return 1, d

    # 2Q
    def _twoq_admit(self, x, dirty, ghost) -> tuple[int, int]:
        b = BS
        if b > self.ain_cap or b > self.cap * b:
            return 0, 0
        d = 0
        while (len(self.Ain) + len(self.Am) + 1) * b > self.cap * b:
            self.c["evicted_blocks"] += 1
            if len(self.Ain) * b > self.ain_cap:
                t, was = self.Ain.popitem(last=False)
                d += was
                if b <= self.aout_cap:
                    while (len(self.Aout) + 1) * b > self.aout_cap:
                        self.Aout.popitem(last=False)
                    self.Aout[t] = None
            else:
                _, was = self.Am.popitem(last=False)
                d += was
        if ghost:
            while (len(self.Am) + 1) * b > self.am_cap:
                _, was = self.Am.popitem(last=False)
                d += was
                self.c["evicted_blocks"] += 1
            self.Am[x] = dirty
        else:
            self.Ain[x] = dirty
        return 1, d

    # LRU and FIFO
    def _lru_admit(self, x, dirty) -> tuple[int, int]:
        d = 0
        while len(self.lru) + 1 > self.cap:
            _, was = self.lru.popitem(last=False)
            d += was
            self.c["evicted_blocks"] += 1
        self.lru[x] = dirty
        return 1, d

    # S3-FIFO
    def _evict(self) -> int:
        b = BS
        if len(self.M) * b > self.main_cap or not self.S:
            while self.M:
                t, (f, dirty) = self.M.popitem(last=False)
                if f >= 1:
                    self.M[t] = [min(f, 3) - 1, dirty]
                    continue
                self.c["evicted_blocks"] += 1
                return dirty
            return 0
        while self.S:
            t, (f, dirty) = self.S.popitem(last=False)
            if f >= 2:
                self.M[t] = [0, dirty]
                continue
            self.c["evicted_blocks"] += 1
            if b <= self.ghost_cap:
                while (len(self.G) + 1) * b > self.ghost_cap:
                    self.G.popitem(last=False)
                self.G[t] = None
            return dirty
        return 0

    def _s3_admit(self, x, dirty, ghost) -> tuple[int, int]:
        b = BS
        if b > self.small_cap:
            return 0, 0
        d = 0
        while (len(self.S) + len(self.M) + 1) * b > self.cap * b:
            self.evicted_once = True
            d += self._evict()
        if not ghost and b >= self.small_cap:
            return 0, d
        to_main = ghost or (self.current and not self.evicted_once and len(self.S) * b >= self.small_cap)
        (self.M if to_main else self.S)[x] = [0, dirty]
        return 1, d

    def request(self, blocks: list, is_read: bool, byp: bool) -> tuple[int, int, int, int]:
        """(hits, admitted, destaged, first miss) of one request."""
        c = self.c
        hits = admit = destage = 0
        first = -1
        around = (not is_read) and (self.mode == "write-around" or byp)
        back = (not is_read) and self.mode == "write-back"
        if byp:
            c["bypassed_reqs"] += 1
        for j, x in enumerate(blocks):
            if self.policy in ("lru", "fifo"):
                if x in self.lru:
                    hits += 1
                    if around:
                        del self.lru[x]
                        c["invalidated_blocks"] += 1
                        continue
                    if self.policy == "lru":
                        self.lru.move_to_end(x)
                    self.lru[x] = self.lru[x] or back
                    continue
                if is_read and first < 0:
                    first = j
                if not around and self.cap > 0 and not (is_read and byp):
                    a, d = self._lru_admit(x, back)
                    admit += a
                    destage += d
                continue
            takes = not around and self.cap > 0 and not (is_read and byp)
            if self.policy == "sieve":
                if x in self.visited:
                    hits += 1
                    if around:
                        self._sieve_remove(x)
                        c["invalidated_blocks"] += 1
                        continue
                    self.visited[x] = True
                    self.sdirty[x] = self.sdirty[x] or back
                    continue
                if first < 0:
                    first = j
                if takes:
                    a, d = self._sieve_admit(x, back)
                    admit += a
                    destage += d
                continue
            if self.policy == "twoq":
                q = self.Ain if x in self.Ain else self.Am if x in self.Am else None
                if q is not None:
                    hits += 1
                    if around:
                        del q[x]
                        c["invalidated_blocks"] += 1
                        continue
                    if q is self.Am:
                        self.Am.move_to_end(x)
                    q[x] = q[x] or back
                    continue
                if first < 0:
                    first = j
                if takes:
                    ghost = x in self.Aout
                    if ghost:
                        del self.Aout[x]
                    a, d = self._twoq_admit(x, back, ghost)
                    admit += a
                    destage += d
                    c["ghost_hits"] += a and ghost
                continue
            q = self.S if x in self.S else self.M if x in self.M else None
            if q is not None:
                hits += 1
                if around:
                    del q[x]
                    c["invalidated_blocks"] += 1
                else:
                    q[x][0] = min(q[x][0] + 1, 3)
                    q[x][1] = q[x][1] or back
                continue
            if first < 0:
                first = j
            if not around and self.cap > 0 and not (is_read and byp):
                ghost = x in self.G
                if ghost:
                    del self.G[x]
                a, d = self._s3_admit(x, back, ghost)
                admit += a
                destage += d
                c["ghost_hits"] += a and ghost
        k = len(blocks)
        if is_read:
            c["read_reqs"] += 1
            c["read_blocks"] += k
            c["read_block_hits"] += hits
            c["read_req_hits"] += hits == k
        else:
            c["write_reqs"] += 1
            c["write_blocks"] += k
            c["write_block_hits"] += hits
        c["admitted_blocks"] += admit
        c["destaged_blocks"] += destage
        return hits, admit, destage, first


def _reference(tr, capacity, policy, mode, bypass, restart_req) -> tuple[dict, np.ndarray]:
    ref = _Reference(capacity, policy, mode)
    out = np.zeros((len(tr), 4), dtype=np.int64)
    restarts = list(restart_req)
    for i in range(len(tr)):
        d = 0
        while restarts and restarts[0] <= i:
            restarts.pop(0)
            d += ref.restart()
        f = int(tr.offset_bytes[i]) // BS
        last = (int(tr.offset_bytes[i]) + int(tr.length_bytes[i]) - 1) // BS
        blocks = [(int(tr.volume[i]), b) for b in range(f, last + 1)]
        h, a, dst, fm = ref.request(blocks, tr.op[i] == 0, bool(bypass[i]) if bypass is not None else False)
        out[i] = (h, a, dst + d, fm)
    ref.c["dirty_blocks_at_end"] = ref.dirty()
    return ref.c, out


def _outputs(r: cache.CacheResult) -> np.ndarray:
    return np.stack([r.hits, r.admitted, r.destaged, r.first_miss], axis=1).astype(np.int64)


SEEDS = (1, 2, 3)


@pytest.mark.slow
@pytest.mark.parametrize("policy", cache.POLICIES)
@pytest.mark.parametrize("mode", cache.WRITE_MODES)
def test_bounded_rows_give_the_reference_hits(policy, mode):
    for seed in SEEDS:
        tr = _generated(1500, seed, hot_blocks=300)
        foot = cache.prepare(tr, BS).nids
        restarts = [] if seed == 1 else [float(len(tr)) * 0.4, float(len(tr)) * 0.75]
        rr = cache.restart_requests(tr.time_s, restarts)
        cut = 6 * BS if seed == 3 else None
        byp = cache.sequential_bypass(tr.offset_bytes, tr.length_bytes, tr.volume, cut) if cut else None
        for cap in (0, 2, 11, 12, 37, 150, foot // 2, foot + 5):
            want_c, want = _reference(tr, cap, policy, mode, byp, rr)
            prep = cache.prepare(tr, BS)
            for spare in (None, 1, 2):
                got = cache.run_cache(prep, cap, policy, mode, byp, rr, spare_rows=spare)
                assert got.counters == want_c, (seed, cap, spare)
                assert np.array_equal(_outputs(got), want), (seed, cap, spare)
            # chunk after chunk, one spare row: recycling sweeps inside and across chunks
            rp = cache.Replay(cap, policy, mode, BS, seq_cutoff_bytes=cut, restart_at_s=restarts, spare_rows=1)
            for ch in chunks_of(tr, 97):
                rp.feed(ch)
            got = rp.result()
            assert got.counters == want_c and np.array_equal(_outputs(got), want), (seed, cap)
            assert (rp.working_set.nids, rp.working_set.exact) == (foot, True)


@pytest.mark.parametrize("policy", cache.POLICIES)
def test_recycling_happens_and_covers_working_set_is_exact(policy):
    tr = _generated(2000, 5, hot_blocks=400)
    foot = cache.prepare(tr, BS).nids
    for cap, spare in ((10, 1), (10, None), (foot - 1, 1), (foot, 1), (foot + 100, 1), (5 * foot, None)):
        rp = cache.Replay(cap, policy, "write-through", BS, spare_rows=spare)
        for ch in chunks_of(tr, 250):
            rp.feed(ch)
        held = cache.most_held(cap, policy, BS)
        assert rp.rows.recycled == (foot > rp.rows.rows_max), (cap, spare)
        assert rp.covers_working_set == (cap >= foot), (cap, spare)
        if spare == 1:
            assert rp.rows.rows_max == held + 1


# -- memory ------------------------------------------------------------------------------------------------

def _wide(n: int, blocks: int, seed: int = 9):
    """n single-block reads spread over `blocks` distinct blocks (each touched about n / blocks times)."""
    rng = np.random.default_rng(seed)
    return from_arrays(np.arange(n, dtype=np.float64), np.zeros(n, dtype=np.uint8),
                       rng.integers(0, blocks, n) * BS, np.full(n, BS))


@pytest.mark.parametrize("policy", cache.POLICIES)
def test_the_state_follows_the_cache_not_the_footprint(policy):
    cap = 500                                       # blocks; the traces touch 10x and 100x that
    sizes = {}
    for factor in (10, 100):
        tr = _wide(20 * cap * factor, cap * factor)
        rp = cache.Replay(cap, policy, "write-around", BS, record=False)
        for ch in chunks_of(tr, 4096):
            rp.feed(ch)
        assert rp.working_set.nids >= 0.99 * cap * factor            # the footprint really is that large
        rows_max = rp.rows.rows_max
        held = cache.most_held(cap, policy, BS)
        assert rows_max == held + max(cache.SPARE_MIN, held // cache.SPARE_SHARE, min(held, cache.SPARE_FULL))
        assert rp.rows.node.shape[0] <= rows_max and rp.rows.rowkey.shape[0] <= rows_max
        assert rp.rows.table.shape[0] == slots.table_slots(rp.rows.node.shape[0])
        assert rp.state_bytes() <= cache.state_bytes(cap, policy, BS)
        assert rp.rows.recycled
        sizes[factor] = rp.state_bytes()
    assert sizes[10] == sizes[100]
    # per cached block: 24-byte rows for the most the policy holds (S3-FIFO: with its ghost, 1.9 times; 2Q: with
    # Aout, 1.5) and as many again as spares up to 2^18 rows (100,000 blocks), a quarter more past that (a
    # million); 8-byte table slots, a power of two at most half full (under 2 / 0.5 a row)
    held = {"s3fifo": 1.9, "s3fifo-2023": 1.9, "twoq": 1.5}.get(policy, 1.0)
    for blocks, spare in ((100_000, 2.0 if held * 100_000 <= 1 << 18 else 1.0 + (1 << 18) / (held * 100_000)),
                          (1_000_000, 1.25)):
        rows = held * spare
        assert cache.state_bytes(blocks, policy, BS) / blocks <= rows * 24 + 2 * rows / 0.5 * 8 + 1


def test_a_replay_over_a_footprint_100_times_the_cache_stays_small():
    """tracemalloc (numpy's allocations are traced): the peak of the replay, chunks included, against what
    the dense numbering took (a 16-byte row and at least 17 bytes of map per distinct block). The working
    set's own count is bounded apart (its exact set stops at workingset.EXACT_BLOCKS: below)."""
    cap, blocks = 1_000, 100_000
    tr = _wide(400_000, blocks)
    rp = cache.Replay(cap, "lru", "write-around", BS, record=False)
    chunks = list(chunks_of(tr, 8192))
    rp.feed_prepared(cache.cut_chunk(chunks[0], BS))
    tracemalloc.start()
    try:
        for ch in chunks[1:]:
            rp.feed_prepared(cache.cut_chunk(ch, BS))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    distinct = len(np.unique(tr.offset_bytes))
    assert rp.rows.recycled and distinct > 95_000
    assert peak < 400_000 < (16 + 17) * distinct, (peak, distinct)
    assert rp.state_bytes() <= cache.state_bytes(cap, "lru", BS) < 100 * cap     # 2,000 rows, 4,096 slots


def test_a_cache_state_beyond_memory_is_refused_before_it_is_made(monkeypatch):
    monkeypatch.setattr(slots, "memory_bytes", lambda: 64 << 20)
    rp = cache.Replay(10_000_000, "lru", "write-around", BS)
    with pytest.raises(DbtierError, match="10,000,000-block lru cache needs state for .* blocks"):
        rp.feed(next(chunks_of(_wide(2_000_000, 5_000_000), 2_000_000)))


# -- the working set --------------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_working_set_is_exact_to_its_bound_then_an_estimate():
    rng = np.random.default_rng(4)
    n = 400_000
    off = rng.integers(0, 1 << 34, n) * BS
    op = (rng.random(n) < 0.4).astype(np.uint8)
    vol = np.zeros(n, dtype=np.int32)
    ln = np.full(n, BS)
    exact = WorkingSet(BS, exact_max=None)
    bounded = WorkingSet(BS, exact_max=10_000)
    for lo in range(0, n, 50_000):
        for ws in (exact, bounded):
            ws.feed(off[lo:lo + 50_000], ln[lo:lo + 50_000], vol[lo:lo + 50_000], op[lo:lo + 50_000])
    true_all = len(np.unique(off))
    true_read = len(np.unique(off[op == 0]))
    assert (exact.nids, exact.read_nids, exact.exact) == (true_all, true_read, True)
    assert not bounded.exact and bounded.keys.size == 1        # the set was dropped
    rse = workingset.HLL_RSE
    assert abs(bounded.nids / true_all - 1) < 3 * rse and abs(bounded.read_nids / true_read - 1) < 3 * rse
    d = bounded.describe()
    assert d == {"working_set_estimate": True, "working_set_method": workingset.METHOD_HLL,
                 "working_set_relative_std_error": rse}
    assert exact.describe()["working_set_estimate"] is False


def test_the_document_says_when_the_working_set_is_an_estimate(monkeypatch):
    tr = _generated(3000, 8, hot_blocks=2000)
    dev = {"cache": DeviceModel("flash", "test", 20_000, 10_000, 500, 400, 100, 50),
           "backing": DeviceModel("disk", "test", 200, 300, 150, 150, 10_000, 8_000, single_actuator=True)}
    p = sim.Params(design="read-cache", cache_gb=3000 * BS / 1e9, sweep_gb=())
    exact = sim.simulate(tr, p, dev)
    monkeypatch.setattr(workingset, "EXACT_BLOCKS", 100)
    est = sim.simulate(tr, p, dev)
    a, b = exact.details["cache"], est.details["cache"]
    assert a["working_set_estimate"] is False and b["working_set_estimate"] is True
    assert b["working_set_method"] == workingset.METHOD_HLL
    assert abs(b["working_set_blocks"] / a["working_set_blocks"] - 1) < 3 * workingset.HLL_RSE
    assert any("is an estimate" in n and "the sweep's sizes are halvings of it" in n for n in est.details["notes"])
    # the hit ratios do not depend on how the working set was counted, nor does which cache holds it all
    # which sizes hold the whole working set is exact either way (the sweep's sizes are halvings of the count)
    for out in (exact, est):
        flags = [c["larger_than_working_set"] for c in out.details["curve_detail"]]
        assert flags == [c["capacity_blocks"] >= a["working_set_blocks"] for c in out.details["curve_detail"]]
    assert exact.contract["read_hit_ratio"] == est.contract["read_hit_ratio"]


# -- the table itself ------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("rows_max, universe, seed", [(5, 40, 1), (23, 200, 2), (44, 3000, 3)])
def test_rows_table_keeps_every_mapped_row_findable(rows_max, universe, seed):
    """Random lookups over a small table (64 slots: runs wrap past its end) with rows made live and dead at
    random, recycled by sweeps: a live block always gets its own row back, and after every step each mapped
    row is found from its key, once (backward-shift deletion and the re-probe after a sweep)."""
    rng = np.random.default_rng(seed)
    r = slots.Rows(rows_max)
    r.reserve(rows_max)
    prev, nxt, live = r.node[:, 0], r.node[:, 1], r.node[:, 2]
    owner: dict[int, int] = {}                      # live key -> its row
    for _ in range(4000):
        key = int(rng.integers(0, universe)) * 7919 + (int(rng.integers(0, 2)) << 42)
        x = int(slots.row_of(np.int64(key), r.table, r.rowkey, prev, nxt, live, r.st))
        if key in owner:
            assert x == owner[key]
        assert r.rowkey[x] == key
        if live[x] == 0 and len(owner) < rows_max - 1 and rng.random() < 0.6:
            live[x] = 1
            owner[key] = x
        elif live[x] and rng.random() < 0.3:
            live[x] = 0
            del owner[key]
        for dead in [k for k, v in owner.items() if rng.random() < 0.02]:
            live[owner.pop(dead)] = 0
        mapped = [s for s in range(r.hiwater) if r.rowkey[s] != slots.UNMAPPED]
        # each mapped row in one slot: the top half of its key's hash (computed here apart) and the row plus one
        full = r.table[r.table != slots.EMPTY]
        hashes = [(int(r.rowkey[s]) * 0x9E3779B97F4A7C15) % (1 << 64) for s in mapped]
        assert sorted(full.view(np.uint64).tolist()) == sorted((h >> 32 << 32) | (s + 1) for h, s in zip(hashes, mapped))
        tshift = int(r.st[slots.S_TSHIFT])
        for s in mapped:
            assert slots.peek(r.rowkey[s], r.table, r.rowkey, tshift, True) == s
    assert r.sweeps > 10
