"""Miss-ratio curves of object traces (sim/mrc/curves.py): hand-worked sequences, LRU's one pass against its replay,
and libCacheSim's own test figures on its CloudPhysics trace (test/test_evictionAlgo.c), exactly."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from dbtier.core.errors import DbtierError
from dbtier.core import workdir
from dbtier.sim.mrc import curves as mrc, spill as mrc_spill
from dbtier.sim.trace import objects

TRACE = Path(__file__).parent.parent / "data" / "objects" / "cloudPhysicsIO.oracleGeneral.bin"
MIB = 1 << 20

# libCacheSim's test suite (test/test_evictionAlgo.c), byte-sized objects, 128 MiB to 1024 MiB in steps of
# 128 MiB; its S3-FIFO figures are the original S3-FIFO's (dbtier's s3fifo-2023: libcachesim 0.3.5's S3FIFO.c
# gives test_mrc_libcachesim's)
LIBCACHESIM = {
    "lru": [93374, 89783, 83572, 81722, 72494, 72104, 71972, 71704],
    "fifo": [93403, 89386, 84387, 84025, 72498, 72228, 72182, 72140],
    "clock": [93313, 89775, 83411, 81328, 74815, 72283, 71927, 64456],
    "s3fifo-2023": [89307, 82387, 77041, 76791, 71300, 70343, 70455, 70355],
    "arc": [90252, 85861, 78168, 74297, 67381, 65685, 64439, 64772],
    "belady": [79256, 70724, 65481, 61594, 59645, 57599, 50873, 48974],
}


def _objs(ids, sizes):
    return mrc.objects_of(np.array(ids, np.uint64), np.array(sizes, np.int64))


def test_sizes_binary_decimal_and_percent():
    assert mrc.parse_sizes("128MiB,1GB,5%,1.5KiB,4k", 1000) == sorted({128 * MIB, 10**9, 50, 1536, 4096})
    assert mrc.parse_sizes(None, 1000) == [10, 20, 50, 100, 200, 300, 400, 500, 750, 1000]
    for bad in ("12 parsecs", "-5MB", "0.01%"):   # (0.01% of 1000 bytes: under one)
        with pytest.raises(DbtierError, match="--sizes"):
            mrc.parse_sizes(bad, 1000)


def test_hand_worked_lru_and_fifo_with_sizes():
    # cache 10 bytes; A=4, B=4, C=4 bytes. Sequence A B A C B A:
    # LRU: A miss {A}; B miss {B,A}; A hit {A,B}; C miss, 12 > 10: evict B -> {C,A}; B miss, evict A -> {B,C};
    #      A miss, evict C -> {A,B}: 5 misses.
    # FIFO: A miss [A]; B miss [A,B]; A hit; C miss, evict A -> [B,C]; B hit; A miss, evict B -> [C,A]: 4 misses.
    o = _objs([1, 2, 1, 3, 2, 1], [4, 4, 4, 4, 4, 4])
    lru, fifo = mrc.curve("lru", o, [10])[0], mrc.curve("fifo", o, [10])[0]
    assert (lru.misses, lru.byte_misses) == (5, 20)
    assert (fifo.misses, fifo.byte_misses) == (4, 16)
    assert lru.doc()["miss_ratio"] == 5 / 6 and lru.doc()["byte_miss_ratio"] == 20 / 24


def test_hand_worked_clock_and_belady():
    # cache 8 bytes, every object 4 (two fit). Sequence A B A C B A:
    # CLOCK: A miss [A0]; B miss [B0 A0]; A hit (A's bit set); C miss: tail A has its bit: cleared, to the head
    #   [A0 B0], then B evicted -> [C0 A0]; B miss: tail A (bit clear) evicted -> [B0 C0]; A miss: C evicted:
    #   5 misses.
    # Belady: A, B miss; A hit; C miss: next uses A at 6, B at 5, C never: evict A (the farthest of those in
    #   the cache, C not yet in) -> {B, C}; B hit; A miss: 4 misses.
    o = _objs([1, 2, 1, 3, 2, 1], [4] * 6)
    assert mrc.curve("clock", o, [8])[0].misses == 5
    assert mrc.curve("belady", o, [8])[0].misses == 4
    # the optimal bound (objects of one size, where MIN is optimal): no policy does better on a random trace
    rng = np.random.default_rng(3)
    ids = rng.zipf(1.2, 5000) % 300
    o = _objs(ids, np.full(len(ids), 100))
    for c in (2000, 8000, 20000):
        best = mrc.curve("belady", o, [c])[0].misses
        assert all(mrc.curve(p, o, [c])[0].misses >= best for p in mrc.POLICIES)


def test_hand_worked_arc():
    # two one-byte slots; A B A C A B A C. ARC: A, B miss (T1 [B A]); A hits, to T2; C misses: T1 (1 byte) is
    # over p = 0, so B goes to the ghost B1, C enters T1; A hits. B misses but is in B1: p rises to 1, and
    # the REPLACE for it takes T2's A (T1 = p, B not from B2) to B2; B enters T2. A misses, in B2: p falls to
    # 0, T1's C goes to B1, A enters T2. C misses (in B1). 6 misses; LRU on the same, 5.
    o = _objs([1, 2, 1, 3, 1, 2, 1, 3], [1] * 8)
    assert mrc.curve("arc", o, [2])[0].misses == 6
    assert mrc.curve("lru", o, [2])[0].misses == 5


def test_s3fifo_keeps_its_hot_objects_through_a_scan():
    # 100 one-byte slots (small queue 10, main 90): 20 hot objects, asked for five rounds, reach main (small
    # overflows, they leave for the ghost, the next request finds them there); a scan of 500 objects seen
    # once passes through small and the ghost only. The hot round after it: S3-FIFO misses none, LRU all 20.
    hot = list(range(20))
    warm, scan = hot * 5, list(range(1000, 1500))
    seq_before, seq = warm + scan, warm + scan + hot
    for pol, extra in (("s3fifo", 0), ("lru", 20)):
        before = mrc.curve(pol, _objs(seq_before, [1] * len(seq_before)), [100])[0].misses
        after = mrc.curve(pol, _objs(seq, [1] * len(seq)), [100])[0].misses
        assert after - before == extra, pol


def test_an_object_larger_than_the_cache_is_never_admitted():
    # cache 5: X (8 bytes) misses both times and evicts nothing; Y (2) hits its second time.
    o = _objs([7, 9, 7, 9], [8, 2, 8, 2])
    for pol in ("lru", "fifo", "clock", "arc", "belady"):    # (s3fifo admits nothing over a tenth of the cache)
        p = mrc.curve(pol, o, [5])[0]
        assert (p.misses, p.byte_misses) == (3, 18), pol


@pytest.mark.parametrize("seed", range(6))
def test_lru_one_pass_equals_its_replay(seed):
    rng = np.random.default_rng(seed)
    n_obj = int(rng.integers(20, 400))
    ids = rng.zipf(1.3, 20_000) % n_obj
    per_obj = rng.integers(1, 5000, n_obj)
    o = _objs(ids, per_obj[ids])
    caches = sorted({int(x) for x in rng.integers(5000, int(per_obj.sum()) + 1, 12)})
    got = [(p.misses, p.byte_misses) for p in mrc.curve("lru", o, caches)]
    want = [(p.misses, p.byte_misses) for p in (mrc.replay("lru", o, c) for c in caches)]
    assert got == want
    # fed in odd chunks, its tree of positions compacted again and again (one position more than the objects)
    o.chunk = 997
    assert [(p.misses, p.byte_misses) for p in mrc.lru_one_pass(o, caches, positions=o.n_objects + 1)] == want


def test_agrees_with_libcachesim_on_its_trace():
    t = objects.load_objects(TRACE)
    o = mrc.objects_of(t.obj_id, t.size, t.next_access)
    caches = [k * 128 * MIB for k in range(1, 9)]
    got = mrc.curves(list(LIBCACHESIM), o, caches, workers=2)     # every policy, on two threads
    for pol, want in LIBCACHESIM.items():
        assert [p.misses for p in got[pol]] == want, pol
    # Belady from the trace's own next-access field and from a backward pass: the same
    o = mrc.objects_of(t.obj_id, t.size)
    assert np.array_equal(mrc.next_requests(o), t.next_access)
    assert [p.misses for p in mrc.curve("belady", o, caches[:2])] == LIBCACHESIM["belady"][:2]


def test_spilled_and_fed_in_chunks_it_still_agrees(tmp_path):
    # the CLI's way: the trace read once, in chunks of 10,000 records, into codes on disk, then every replay
    # reads it back 7,777 requests at a time (each kernel's state carried from chunk to chunk)
    spill = mrc_spill.scan(objects.read_objects(TRACE, chunk=10_000), tmp_path, "t", keep_next=False)
    spill.chunk = 7_777
    t = objects.load_objects(TRACE)
    assert (spill.requests, spill.n_objects, spill.bytes) == (113_872, 48_974, int(t.size.sum()))
    assert spill.footprint_bytes == mrc.objects_of(t.obj_id, t.size).footprint_bytes and not spill.has_next
    codes = np.concatenate([c for c, _, _ in spill.chunks()])
    _, first = np.unique(t.obj_id, return_index=True)          # codes: 0, 1, ... in order of first appearance
    assert np.array_equal(codes[np.sort(first)], np.arange(48_974))
    assert len({(a, b) for a, b in zip(codes.tolist(), t.obj_id.tolist())}) == 48_974     # one code per id
    got = mrc.curves(list(LIBCACHESIM), spill, [k * 128 * MIB for k in range(1, 9)], workers=2)
    for pol, want in LIBCACHESIM.items():
        assert [p.misses for p in got[pol]] == want, pol
    assert spill.has_next           # Belady's next accesses from a backward pass over the spilled codes
    assert np.array_equal(np.concatenate([n for _, _, n in spill.chunks(True)]), t.next_access)
    # a sample spills only its requests, and gives the in-memory sample's figures
    smp = mrc_spill.scan(objects.read_objects(TRACE), tmp_path, "t", rate=0.1)
    mem = mrc.sampled(t.obj_id, t.size, 0.1)
    assert (smp.requests, smp.total_requests) == (mem.objs.requests, 113_872)
    caches = [64 * MIB, 256 * MIB]
    a = mrc.sampled_curves(["lru", "s3fifo"], mrc.Sampled(smp, 0.1, smp.total_requests, smp.total_bytes), caches)
    b = mrc.sampled_curves(["lru", "s3fifo"], mem, caches)
    assert {k: [p.doc() for p in v] for k, v in a.items()} == {k: [p.doc() for p in v] for k, v in b.items()}


def test_a_spill_without_room_is_refused_naming_where(tmp_path, monkeypatch):
    monkeypatch.setattr(workdir, "WORK_MARGIN_BYTES", 1 << 62)
    with pytest.raises(DbtierError) as e:
        mrc_spill.scan(objects.read_objects(TRACE), tmp_path, "cloud.bin")
    assert "GB free" in e.value.message and "cloud.bin" in e.value.message and "DBTIER_TMPDIR" in e.value.hint


def _skewed(n=2_000_000, n_obj=1_000_000, seed=1):
    rng = np.random.default_rng(seed)
    rank = (rng.zipf(1.1, n) - 1) % n_obj
    size_of = np.exp(rng.uniform(np.log(1000), np.log(100_000), n_obj)).astype(np.int64)
    return rank.astype(np.uint64) * np.uint64(2654435761), size_of[rank]      # ids far apart, sizes per object


@pytest.mark.slow       # a few seconds: `make test` runs it, test-fast does not
def test_shards_adj_against_the_exact_lru_curve():
    # 2 million requests, Zipf 1.1 over a million objects of 1 KB to 100 KB. Measured here (two seeds): the
    # largest miss-ratio error of SHARDS-adj over caches of 1% to 40% of the footprint is 0.018-0.023 at a 1%
    # sample, 0.004-0.006 at 5% and 0.002-0.003 at 10%; plain sampling (misses over the requests drawn) is
    # off by more.
    ids, size = _skewed()
    objs = mrc.objects_of(ids, size)
    n = len(ids)
    caches = [int(objs.footprint_bytes * f) for f in (0.01, 0.02, 0.05, 0.1, 0.2, 0.4)]
    exact = mrc.curves(["lru"], objs, caches)["lru"]
    for rate, bound in ((0.01, 0.03), (0.05, 0.01), (0.1, 0.01)):
        est = mrc.sampled_curves(["lru"], mrc.sampled(ids, size, rate), caches)["lru"]
        err = max(abs(e.misses - x.misses) / n for e, x in zip(est, exact))
        keep = mrc.sample(ids, rate)
        plain = mrc.curves(["lru"], mrc.objects_of(ids[keep], size[keep]), [int(c * rate) for c in caches])["lru"]
        plain_err = max(abs(p.misses / keep.sum() - x.misses / n) for p, x in zip(plain, exact))
        assert err < bound, (rate, err)
        assert plain_err > err, (rate, plain_err, err)
    # an object is sampled with all its requests or none
    keep = mrc.sample(ids, 0.05)
    assert set(ids[keep].tolist()).isdisjoint(set(ids[~keep].tolist()))
    # a 5% share of the objects (of the requests it is 13% here: whether the most popular are drawn moves it)
    assert abs(len(np.unique(ids[keep])) / len(np.unique(ids)) - 0.05) < 0.003


def _cli(*args, cwd):
    return subprocess.run([sys.executable, "-m", "dbtier", "simulate", "mrc", *args], capture_output=True, text=True,
                          cwd=cwd)


@pytest.mark.slow       # a few seconds: `make test` runs it, test-fast does not
def test_cli_json_keys_and_refusals(tmp_path):
    r = _cli(str(TRACE), "--policy", "lru,fifo", "--sizes", "128MiB,256MiB", "--json", "--out", str(tmp_path / "run"),
             cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)["mrc"]
    assert m["trace"] == {"format": "oracleGeneral", "mode": "object", "requests": 113_872, "objects": 48_974,
                          "footprint_bytes": m["trace"]["footprint_bytes"]}
    assert [c["policy"] for c in m["curves"]] == ["lru", "fifo"] and all(c["sample_rate"] == 1.0 for c in m["curves"])
    pt = m["curves"][0]["points"][0]
    assert set(pt) == {"cache_bytes", "requests", "misses", "miss_ratio", "bytes", "byte_misses", "byte_miss_ratio"}
    assert (pt["cache_bytes"], pt["misses"]) == (128 * MIB, 93374)
    assert json.loads((tmp_path / "run" / "result.json").read_text())["mrc"] == m
    est = json.loads(_cli(str(TRACE), "--sizes", "256MiB", "--sample", "0.1", "--json", "--out",
                          str(tmp_path / "sampled"), cwd=tmp_path).stdout)["mrc"]
    assert est["estimates"] is True and "estimate" in est["note"] and est["curves"][0]["sample_rate"] == 0.1
    pt, tr = est["curves"][0]["points"][0], est["trace"]
    assert pt["sampled_cache_objects"] == pytest.approx(256 * MIB * 0.1 / (tr["footprint_bytes"] / tr["objects"]),
                                                        rel=1e-3)
    assert pt["sampled_cache_objects"] > 500 and "rough" not in est["note"]
    few = json.loads(_cli(str(TRACE), "--sizes", "8MiB,256MiB", "--sample", "0.1", "--json", "--out",
                          str(tmp_path / "few"), cwd=tmp_path).stdout)["mrc"]
    assert few["curves"][0]["points"][0]["sampled_cache_objects"] < 500 and "1 of the 2 sizes" in few["note"]
    assert abs(est["curves"][0]["points"][0]["miss_ratio"] - 89783 / 113_872) < 0.01
    assert m["estimates"] is False
    bad = _cli(str(TRACE), "--sample", "1.5", cwd=tmp_path)
    assert bad.returncode != 0 and "--sample" in bad.stderr and not (tmp_path / "runs").exists()
    bad = _cli(str(TRACE), "--sizes", "lots", cwd=tmp_path)
    assert bad.returncode != 0 and "--sizes lots" in bad.stderr
    bad = _cli(str(TRACE), "--policy", "lru,magic", cwd=tmp_path)
    assert bad.returncode != 0 and "magic" in bad.stderr


@pytest.mark.slow       # a second or more: `make test` runs it, test-fast does not
def test_a_block_trace_at_block_granularity_agrees_with_the_block_cache(tmp_path):
    # The real CloudPhysics block trace cut into 8 KiB blocks, every request a get. The block cache in
    # write-through mode does the same with a write (admitted, or refreshed/moved on a hit), so its hits,
    # reads and writes added, are each policy's here: the block cache's kernels (write modes, restarts,
    # the sequential cutoff) and these give one answer per policy, miss for miss.
    from dbtier.sim.cache import replay as cache
    from dbtier.sim.trace.traces import read_chunks, read_trace
    src = Path(__file__).parent.parent / "data" / "traces" / "cloudPhysicsIO.csv.xz"
    blocks = mrc_spill.BlockObjects(read_chunks(src, requests=5_000), 8192, "t")
    spill = mrc_spill.scan(blocks, tmp_path, "t")
    prep = cache.prepare(read_trace(src), 8192)
    assert (blocks.requests, spill.requests, spill.n_objects) == (len(prep.nblk), int(prep.nblk.sum()), prep.nids)
    assert spill.footprint_bytes == prep.nids * 8192 and spill.constant_sizes
    caps = [19, 20, 500, 5_000, 20_000]
    # (both S3-FIFOs by the same name: libcachesim 0.3.5's rule and the original; SIEVE and 2Q too)
    pairs = (("lru", "lru"), ("fifo", "fifo"), ("s3fifo", "s3fifo"), ("s3fifo-2023", "s3fifo-2023"),
             ("sieve", "sieve"), ("twoq", "twoq"))
    got = mrc.curves([p for p, _ in pairs], spill, [c * 8192 for c in caps])
    for pol, block_pol in pairs:
        for cap, pt in zip(caps, got[pol]):
            c = cache.run_cache(prep, cap, block_pol, "write-through").counters
            assert pt.misses == spill.requests - c["read_block_hits"] - c["write_block_hits"], (pol, cap)
    reads = mrc_spill.BlockObjects(read_chunks(src), 8192, "t", reads_only=True)
    rs = mrc_spill.scan(reads, tmp_path, "t")
    assert (reads.requests, rs.requests) == (int((prep.op == 0).sum()), int(prep.nblk[prep.op == 0].sum()))
    assert rs.n_objects == prep.read_nids


@pytest.mark.slow       # a few seconds: `make test` runs it, test-fast does not
def test_cli_block_trace_mode(tmp_path):
    from dbtier.sim.cache import replay as cache
    from dbtier.sim.trace.traces import read_trace
    src = Path(__file__).parent.parent / "data" / "traces" / "cloudPhysicsIO.csv.xz"
    r = _cli(str(src), "--policy", "lru", "--sizes", str(20_000 * 8192), "--json", "--out", str(tmp_path / "b"),
             cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)["mrc"]
    assert m["trace"] == {"format": "cloudphysics", "mode": "block", "requests": 627_350, "objects": 136_271,
                          "footprint_bytes": 136_271 * 8192, "block_size": 8192, "io_requests": 113_872,
                          "reads_only": False}
    c = cache.run_cache(cache.prepare(read_trace(src), 8192), 20_000, "lru", "write-through").counters
    assert m["curves"][0]["points"][0]["misses"] == 627_350 - c["read_block_hits"] - c["write_block_hits"]
    # reads only: the 46,974 reads' 265,888 block accesses over 106,100 blocks (test_sim_cache's pinned counts)
    r = _cli(str(src), "--reads-only", "--block-size", "8K", "--sizes", "1%", "--json", "--out",
             str(tmp_path / "r"), cwd=tmp_path)
    t = json.loads(r.stdout)["mrc"]["trace"]
    assert (t["io_requests"], t["requests"], t["objects"]) == (46_974, 265_888, 106_100)
    bad = _cli(str(src), "--block-size", "3000", cwd=tmp_path)
    assert bad.returncode != 0 and "power of two" in bad.stderr


@pytest.mark.slow       # a second or more: `make test` runs it, test-fast does not
def test_an_interrupt_abandons_the_curves_between_chunks(monkeypatch):
    """Ctrl-C while the curves run: the queued replays are dropped and the running one stops at its next
    chunk, instead of every replay running to its end before the command can stop."""
    ids = np.random.default_rng(3).integers(0, 2000, 50_000)
    o = mrc.objects_of(ids, np.full(len(ids), 100), chunk=1000)          # 50 chunks a replay
    fed = []
    chunks = o.chunks

    def slow(with_next=False):
        for ch in chunks(with_next):
            fed.append(1)
            time.sleep(0.02)          # the next replay is a chunk or two in when the interrupt lands
            yield ch

    def interrupt(done, total):
        raise KeyboardInterrupt

    monkeypatch.setattr(o, "chunks", slow)
    with pytest.raises(KeyboardInterrupt):
        mrc.curves(["fifo", "clock"], o, [10_000, 50_000], workers=1, progress=interrupt)
    assert 50 <= len(fed) <= 60, len(fed)             # all four replays to the end: 200
