"""The read-cache design's device I/Os (sim/routing.py) against a hand-worked list: which device each part
goes to, in which order, foreground or not, its bytes and offset, for reads with hits, misses, admissions
and a bypass, and writes in each write mode (8 KiB blocks)."""

from __future__ import annotations

import numpy as np
import pytest

from dbtier.sim import routing

C, B = routing.CACHE, routing.BACKING
BS = 8192
READ, WRITE = 0, 1

# per request: op, offset, length, volume, blocks, hits, admitted, destaged, first miss, bypass
REQS = [
    (READ, 16384, 24576, 3, 3, 1, 2, 0, 0, False),      # blocks 2-4: one hit, two missing from block 2 on
    (READ, 8192, 10000, 3, 2, 0, 0, 0, 0, True),       # bypassing: just the bytes asked, from the backing
    (READ, 0, 4096, 3, 1, 1, 0, 0, -1, False),         # a hit: the cache alone
    (READ, 81920, 16384, 3, 2, 0, 2, 1, 0, False),     # missing from block 10 on, admitted, a dirty block evicted
    (WRITE, 40960, 8192, 3, 1, 0, 0, 1, -1, False),    # a write whose admission evicted a dirty block
    (WRITE, 49152, 8192, 3, 1, 0, 0, 0, -1, True),     # a write that bypasses
    # unaligned reads (512-byte offsets): the backing read is the request's own bytes over its missing run
    (READ, 164352, 65536, 3, 9, 0, 9, 0, 0, False),    # blocks 20-28, all missing: the bytes asked, not 9 blocks
    (READ, 229888, 65536, 3, 9, 1, 8, 0, 1, False),    # blocks 28-36, block 28 (partly covered) cached
    (READ, 512, 20000, 3, 3, 2, 1, 0, 2, False),       # blocks 0-2, 0 (partly covered) and 1 cached, 2 missing
    (READ, 40960, 12000, 3, 2, 1, 1, 0, 0, False),     # blocks 5-6, 6 (partly covered) cached, 5 missing
]


def _by_hand(mode: str) -> list[tuple]:
    """(request, device, foreground, op, bytes, offset, volume) in the order the model serves them."""
    first = 100
    out = [
        (first, C, True, READ, 24576 * 1 / 3, 16384, 3),
        (first, B, True, READ, 2 * BS, 16384, 3),
        (first, C, False, WRITE, 2 * BS, -2, 0),
        (first + 1, B, True, READ, 10000.0, 8192, 3),
        (first + 2, C, True, READ, 4096.0, 0, 3),
        (first + 3, B, True, READ, 2 * BS, 81920, 3),
        (first + 3, C, False, WRITE, 2 * BS, -2, 0),
        (first + 3, B, False, WRITE, BS, -2, 0),
    ]
    to_cache, to_backing = {"write-around": (False, True), "write-through": (True, True),
                            "write-back": (True, False)}[mode]
    if to_cache:
        out.append((first + 4, C, True, WRITE, 8192.0, 40960, 3))
    if to_backing:
        out.append((first + 4, B, True, WRITE, 8192.0, 40960, 3))
    out.append((first + 4, B, False, WRITE, BS, -2, 0))
    out.append((first + 5, B, True, WRITE, 8192.0, 49152, 3))    # a bypassing write: the backing device, any mode
    # Worked by hand from the blocks. Until the backing read was the request's bytes, these were 9 whole blocks
    # from block 20's start (73,728 B at 163,840: off the end of the stream's previous read, so a disk paid a
    # seek the device alone did not) and, for the next three, whole missing blocks with the partly covered
    # cached block served by the cache (the run starting or ending mid-stream).
    out += [
        (first + 6, B, True, READ, 65536.0, 164352, 3),      # exactly the device-alone I/O
        (first + 6, C, False, WRITE, 9 * BS, -2, 0),
        # block 28 is cached but the request covers only 229,888-237,568 of it: read with the run (no cache part)
        (first + 7, B, True, READ, 65536.0, 229888, 3),
        (first + 7, C, False, WRITE, 8 * BS, -2, 0),
        # block 0 partly covered but not next to the run (block 1, whole, is between): blocks 0-1 from the
        # cache (20,000 x 2/3 B), the run from block 2's start (16,384) to the request's end (20,512)
        (first + 8, C, True, READ, 20000 * 2 / 3, 512, 3),
        (first + 8, B, True, READ, 4128.0, 16384, 3),
        (first + 8, C, False, WRITE, BS, -2, 0),
        # block 6 cached, covered 49,152-52,960 only, next to the run: all 12,000 B from the backing device
        (first + 9, B, True, READ, 12000.0, 40960, 3),
        (first + 9, C, False, WRITE, BS, -2, 0),
    ]
    return out


@pytest.mark.parametrize("mode", ["write-around", "write-through", "write-back"])
def test_each_part_to_its_device_in_order(mode):
    cols = list(zip(*REQS))
    op, offset, length, volume = (np.array(c) for c in cols[:4])
    nblk, hits, adm, dst, fm = (np.array(c, dtype=np.int32) for c in cols[4:9])
    byp = np.array(cols[9], dtype=np.bool_)
    ios = routing.cache_ios(100, op.astype(np.uint8), offset, length, volume.astype(np.int32), nblk, hits, adm, dst,
                            fm, byp, BS, mode)
    got = list(zip(*(np.concatenate(getattr(ios, k)).tolist() for k in
                     ("req", "dev", "fg", "op", "nbytes", "offset", "volume"))))
    assert got == _by_hand(mode)


# -- misses cost what the backing device alone costs ---------------------------------------------------------

MB = 1 << 20


def _stream_trace():
    """64 KiB reads at 512-byte offsets continuing each other (the CloudPhysics trace's pattern), a small write
    elsewhere between them, and a random 4 KiB read: each read's bytes read for the first time."""
    from dbtier.sim.trace.traces import from_arrays
    rows = [  # time s, op, offset, length
        (0.000, READ, 512_000, 65536),
        (0.001, READ, 577_536, 65536),      # starts where the first ended, inside its last block (70)
        (0.002, WRITE, 40 * MB + 512, 512),
        (0.003, READ, 643_072, 65536),      # starts inside the second's last block (78)
        (0.004, READ, 63_209_472, 4096),
    ]
    return from_arrays(*(np.array(c) for c in zip(*rows)))


def test_a_read_missing_every_byte_issues_the_device_alone_io():
    """Through a one-block cache every read of the stream finds the block it starts in cached (its
    neighbour's last block), and none of its own bytes: the backing device gets exactly the trace's own
    requests, each once (by hand: the trace's rows), and the cache device serves none of them."""
    from dbtier.sim.cache import replay as cache_mod
    from dbtier.sim.trace.blocks import cut_chunk
    from dbtier.sim.trace.chunks import chunks_of
    tr = _stream_trace()
    c = next(chunks_of(tr, 100))
    rp = cache_mod.Replay(1, "lru", "write-around", BS)
    hits, adm, dst, fm = rp.feed(c)
    assert hits.tolist() == [0, 1, 0, 1, 0]          # the block model's hits: the shared edge blocks
    prep = cut_chunk(c, BS, "t")
    ios = routing.cache_ios(0, c.op, c.offset_bytes, c.length_bytes, c.volume, prep.nblk, hits, adm, dst, fm,
                            None, BS, "write-around")
    cols = {k: np.concatenate(getattr(ios, k)).tolist() for k in ("req", "dev", "fg", "op", "nbytes", "offset")}
    fg = [(r, d, o, nb, off) for r, d, f, o, nb, off in zip(*cols.values()) if f]
    assert fg == [(0, B, READ, 65536.0, 512_000), (1, B, READ, 65536.0, 577_536), (2, B, WRITE, 512.0, 40 * MB + 512),
                  (3, B, READ, 65536.0, 643_072), (4, B, READ, 4096.0, 63_209_472)]


def test_a_cache_that_never_holds_what_is_read_costs_what_the_device_alone_does():
    """The same trace through the whole simulation: with every read's bytes missing, the design's read and write
    latencies are the backing device's alone (its baseline, replayed separately), to the nanosecond."""
    from dbtier.sim import simulate as sim
    from dbtier.sim.device.devices import resolve
    devs = resolve("read-cache", {"cache": "nvme-enterprise-3.84tb", "backing": "sas-15k-73gb"}, None)
    out = sim.simulate(_stream_trace(), sim.Params("read-cache", cache_gb=BS / 1e9), devs)
    assert out.contract["read_hit_ratio"] > 0                   # block hits, none of them the request's bytes
    base = out.details["baseline"]["latency_us"]
    for op in ("read", "write"):
        for k, v in out.contract["latency_us"][op].items():
            assert v == pytest.approx(base[op][k], abs=1e-3), (op, k)
    assert out.contract["latency_us"]["read"]["p50"] > 5000     # a disk's: the reads reached the backing device


def test_a_tiny_cache_on_the_cloudphysics_trace_is_no_slower_than_the_disk_alone():
    """10 KB (one 8 KiB block) of flash in front of a 15K disk: the read p50 is at most the disk alone's plus the
    flash's own read latency (the most a hit could add), where whole-block misses made it 20.0 ms against 11.5."""
    from pathlib import Path
    from dbtier.sim import simulate as sim
    from dbtier.sim.device.devices import resolve
    from dbtier.sim.trace.traces import read_trace
    trace = read_trace(Path(__file__).resolve().parent.parent / "data" / "traces" / "cloudPhysicsIO.csv.xz")
    devs = resolve("read-cache", {"cache": "fusionio-iodrive-320gb", "backing": "sas-15k-73gb"}, None)
    out = sim.simulate(trace, sim.Params("read-cache", cache_gb=1e-5), devs)
    p50, base = out.contract["latency_us"]["read"]["p50"], out.details["baseline"]["latency_us"]["read"]["p50"]
    assert base == pytest.approx(11_520, rel=0.01)              # the disk alone, as the issue measured it
    assert p50 <= base + devs["cache"].read_latency_us
