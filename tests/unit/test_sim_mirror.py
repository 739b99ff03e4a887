"""Preferred-read mirror: bitmap and resync arithmetic, and the designs end to end on small traces."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from dbtier.core.errors import DbtierError
from dbtier.sim import mirror, mirror_plan
from dbtier.sim import simulate as sim
from dbtier.sim.device.latency import DeviceModel
from dbtier.sim.trace.traces import from_arrays

MIB = 1 << 20
R = 64 * MIB      # md's bitmap chunk: the hand-worked designs below name --tracking md-bitmap
FAST = DeviceModel("fast", "test", 100_000, 50_000, 1000, 500, 100, 30)
SLOW = DeviceModel("slow", "test", 1000, 500, 100, 50, 5000, 2000)


def test_dirty_regions():
    # writes at 0 (4 KiB), 64 MiB - 4 KiB (8 KiB: spans regions 0 and 1), 640 MiB (region 10),
    # and region 0 again on another volume: 4 distinct (volume, region) pairs.
    off = np.array([0, R - 4096, 10 * R, 0])
    ln = np.array([4096, 8192, 4096, 512])
    vol = np.array([0, 0, 0, 1])
    assert mirror.dirty_regions(off, ln, vol, R) == 4
    assert mirror.dirty_regions(off[:3], ln[:3], vol[:3], R) == 3
    assert mirror.dirty_regions(off[:0], ln[:0], vol[:0], R) == 0


def test_resync_arithmetic():
    f = mirror.Failure("fast", 100.0, 400.0)
    # 3 x 64 MiB = 201,326,592 bytes; read from a 100 MB/s survivor into a 500 MB/s side, idle: 100 MB/s,
    # 2.01326592 s; unprotected 300 s down + the resync
    secs = mirror.copy_seconds(3 * R, 400.0, survivor_read_mbps=100, returning_write_mbps=500)
    assert secs == pytest.approx(2.01326592)
    assert mirror.copy_rate_bytes_per_s(100, 500) == 100e6 and mirror.copy_rate_bytes_per_s(300, 50) == 50e6
    r = mirror.resync(3, R, f, trace_end_s=1000.0, seconds=secs)
    assert r == {"regions": 3, "bytes": 201326592, "seconds": pytest.approx(2.01326592),
                 "unprotected_seconds": pytest.approx(302.01326592)}


def test_copy_gets_the_time_the_foreground_leaves():
    """Read 100 MB/s from the survivor, write 200 MB/s to the returning side, 1 s buckets from 0; the copy
    starts at 0.5 s. Foreground busy: survivor 0.5, 0.25, 0 s; returning 0, 0.5, 0 s.
      bucket 0 (0.5-1 s): min(100 x 0.5, 200 x 1) = 50 MB/s for 0.5 s = 25 MB
      bucket 1 (1-2 s):   min(100 x 0.75, 200 x 0.5) = 75 MB/s = 75 MB
      bucket 2 (2-3 s):   min(100, 200) = 100 MB/s
    150 MB: 25 + 75 + 50 at 100 MB/s (0.5 s): done at 2.5 s, 2.0 s after the start.
    300 MB: 25 + 75 + 100 by 3 s, then 100 MB at the full 100 MB/s past the buckets: done at 4 s (3.5 s).
    A fully busy bucket (u = 1) copies nothing."""
    kw = dict(survivor_busy=np.array([0.5, 0.25, 0.0]), returning_busy=np.array([0.0, 0.5, 0.0]),
              t0_s=0.0, bucket_s=1.0)
    assert mirror.copy_seconds(150e6, 0.5, 100, 200, **kw) == pytest.approx(2.0)
    assert mirror.copy_seconds(300e6, 0.5, 100, 200, **kw) == pytest.approx(3.5)
    full = dict(survivor_busy=np.array([1.0, 2.0]), returning_busy=np.zeros(2), t0_s=0.0, bucket_s=1.0)
    assert mirror.copy_seconds(50e6, 0.0, 100, 200, **full) == pytest.approx(2.5)
    assert mirror.copy_seconds(0, 0.0, 100, 200) == 0.0


def test_resync_when_the_side_never_returns():
    r = mirror.resync(5, R, mirror.Failure("slow", 250.0), trace_end_s=1000.0, seconds=None)
    assert r == {"regions": 5, "bytes": 5 * R, "seconds": None, "unprotected_seconds": 750.0}


def test_failure_validation():
    with pytest.raises(DbtierError, match="unknown side 'middle'"):
        mirror.Failure("middle", 1.0)
    with pytest.raises(DbtierError, match="is not after --fail"):
        mirror.Failure("fast", 10.0, 5.0)


def test_phases():
    t = np.array([0, 50, 100, 150, 400, 401, 403, 500.0])
    ph = mirror.phases(t, mirror.Failure("fast", 100, 400), resync_s=2.5)
    assert list(ph) == [0, 0, 1, 1, 2, 2, 0, 0]


def _trace():
    # reads at 0 and 1, a write at 1.5 (before the failure), a read and a write while the fast side is down
    # (2 <= t < 4), a read during the resync (4 <= t < 4 + resync), a read well after.
    t = [0, 1, 1.5, 2, 3, 4, 10]
    op = [0, 0, 1, 0, 1, 0, 0]
    off = [0, 8192, 16384, 24576, 2 * R, 32768, 40960]
    return from_arrays(t, op, off, [4096] * 7)


def test_plan_is_a_value_of_the_failure_alone():
    """The fast side fails at 2 s and never returns: of _trace's writes only the one at 3 s (region 2) falls in
    the window, one 64 MiB region; requests from 2 s on (2, 3, 4, 10) are degraded; the design is unprotected
    from 2 s to the trace's end at 10 s. No resync: no copy, no return or resynced event."""
    roles = ("fast", "slow")
    devices = {"fast": FAST, "slow": SLOW}
    f = mirror.Failure("fast", 2.0)
    plan = mirror_plan.plan(_trace(), f, "md-bitmap", None, devices, roles, None, lambda *a: None)
    assert list(plan.phases) == [0, 0, 0, 1, 1, 1, 1]
    assert plan.resync == {"regions": 1, "bytes": R, "seconds": None, "unprotected_seconds": 8.0}
    assert plan.events == ({"t_s": 2.0, "event": "fail", "label": "fast side fails"},)
    assert len(plan.notes) == 2 and plan.notes[1].startswith("the fast side never returns within the trace")
    assert plan.mirror["failure"] == {"side": "fast", "fail_at_s": 2.0, "return_at_s": None, "survivor": "slow"}
    assert (plan.mirror["requests_degraded"], plan.mirror["requests_resyncing"]) == (4, 0)
    assert plan.mirror["resync_copy"] is None and plan.resync_timing_s is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.notes = ()  # type: ignore[misc]
    none = mirror_plan.plan(None, None, "md-bitmap", None, devices, roles, None, lambda *a: None)
    assert (none.phases, none.resync, none.events, none.notes) == (None, None, (), ())
    assert none.mirror["region_size"] == R and none.mirror["failure"] is None


def test_mirror_design_routes_by_phase():
    tr = _trace()
    out = sim.simulate(tr, sim.Params("preferred-read-mirror", tracking="md-bitmap",
                                      failure=mirror.Failure("fast", 2.0, 4.0)),
                       {"fast": FAST, "slow": SLOW})
    c = out.contract
    # one write (at 3 s, region 2) while down -> one 64 MiB region, read from the slow side (100 MB/s) and
    # written to the fast one (500 MB/s): 100 MB/s, less the foreground's share of the survivor in the second
    # from 4 s: the read at 4 s holds one of its 5 units for 5 ms, 1 ms of capacity (0.1%): 99.9 MB/s
    rate = 100e6 * (1 - 0.001)
    assert c["resync"] == {"regions": 1, "bytes": R, "seconds": pytest.approx(R / rate),
                           "unprotected_seconds": pytest.approx(2 + R / rate)}
    # reads: fast (100 µs) at 0, 1, 10; slow (5 ms) at 2 (down) and 4 (resyncing)
    assert c["latency_us"]["read"]["p50"] == pytest.approx(100)
    served = sorted(x for x, _ in out.details["cdf_us"]["read"][::25])
    assert served[0] == pytest.approx(100)
    lat_read = [100, 100, 5000, 5000, 100]
    assert c["latency_us"]["read"]["p99"] == pytest.approx(np.percentile(lat_read, 99))
    # writes: to both sides (2 ms, the slow one) at 1.5; to the slow side only at 3 (fast is down)
    assert c["latency_us"]["write"]["p50"] == pytest.approx(2000)
    assert [e["event"] for e in out.details["timeline"]["events"]] == ["fail", "return", "resynced"]
    assert out.details["mirror"]["requests_degraded"] == 2 and out.details["mirror"]["requests_resyncing"] == 1
    assert out.details["baseline"]["latency_us"]["read"]["p50"] == pytest.approx(5000)


def test_slow_side_failure_keeps_reads_fast_and_writes_fast():
    out = sim.simulate(_trace(), sim.Params("preferred-read-mirror", tracking="md-bitmap",
                                            failure=mirror.Failure("slow", 2.0, 4.0)),
                       {"fast": FAST, "slow": SLOW})
    c = out.contract
    assert c["latency_us"]["read"]["p999"] == pytest.approx(100)
    # the write at 3 s goes to the fast side only (30 µs); the one at 1.5 s to both (2 ms)
    assert sorted([c["latency_us"]["write"]["p50"]]) == [pytest.approx((30 + 2000) / 2)]
    assert c["resync"]["seconds"] == pytest.approx(R / 50e6)      # the slow side's 50 MB/s write (fast reads 1000)


def test_mirror_without_failure_has_null_resync():
    out = sim.simulate(_trace(), sim.Params("preferred-read-mirror"), {"fast": FAST, "slow": SLOW})
    assert out.contract["resync"] is None
    assert out.contract["latency_us"]["read"]["p999"] == pytest.approx(100)
    assert set(out.contract["device_util"]) == {"fast", "slow"}


def test_failure_after_the_trace_is_refused():
    with pytest.raises(DbtierError, match="after the trace ends"):
        sim.simulate(_trace(), sim.Params("preferred-read-mirror", failure=mirror.Failure("fast", 20.0)),
                     {"fast": FAST, "slow": SLOW})


NVME = DeviceModel("nvme-enterprise-3.84tb", "test", read_iops=1_000_000, write_iops=180_000, read_mbps=6800,
                   write_mbps=4000, read_latency_us=80, write_latency_us=20)
HDD = DeviceModel("hdd-7200-20tb", "test", read_iops=170, write_iops=550, read_mbps=285, write_mbps=285,
                  read_latency_us=12_500, write_latency_us=12_500, single_actuator=True)


def test_nvme_side_returns_over_a_7200_rpm_survivor():
    """Issue 13's example, counted by hand. Fast side: enterprise NVMe (4,000 MB/s write); slow side: a 7,200
    rpm disk (285 MB/s sequential read, 12.5 ms per random read). The fast side fails at 10 s and returns at
    20 s; the trace runs from 0 to 30 s.

    - While it is down, 10 writes of 4 KiB land in 10 distinct 64 MiB regions: 10 x 67,108,864 =
      671,088,640 dirty bytes.
    - From 20 s on the trace sends a random 4 KiB read every 25 ms (at 20.0125 + 0.025 j), 40 a second; during
      the resync they go to the disk, each alone (25 ms apart, 12.5 ms each): the disk is 40 x 12.5 ms = 50%
      busy in every second; no writes, so the returning NVMe has no foreground load.

    Old figure (the returning side's write rate alone): 671,088,640 / 4,000 MB/s = 0.168 s, unprotected
    10.168 s. The copy reads the disk: idle, 671,088,640 / 285 MB/s = 2.355 s (14.0 x longer); with half the
    disk's time taken by the reads, min(285 x (1 - 0.5), 4,000 x (1 - 0)) = 142.5 MB/s: 4.709 s, and the
    window without redundancy is 10 + 4.709 = 14.709 s.
    """
    t = [0.0] + [11.0 + 0.5 * k for k in range(10)] + [20.0125 + 0.025 * j for j in range(400)] + [30.0]
    op = [0] + [1] * 10 + [0] * 400 + [0]
    off = [0] + [k * R for k in range(10)] + [(1000 + 2 * j) * MIB for j in range(400)] + [5000 * MIB]
    tr = from_arrays(t, op, off, [4096] * len(t))
    out = sim.simulate(tr, sim.Params("preferred-read-mirror", tracking="md-bitmap",
                                      failure=mirror.Failure("fast", 10.0, 20.0)),
                       {"fast": NVME, "slow": HDD})
    rs = out.contract["resync"]
    dirty = 10 * 64 * MIB
    assert dirty == 671_088_640 and rs["regions"] == 10 and rs["bytes"] == dirty
    old = dirty / 4000e6
    assert old == pytest.approx(0.16777216)
    assert dirty / 285e6 / old == pytest.approx(14.035, abs=1e-3)
    assert rs["seconds"] == pytest.approx(dirty / 142.5e6) == pytest.approx(4.709394, abs=1e-6)
    assert rs["unprotected_seconds"] == pytest.approx(10 + 4.709394, abs=1e-6)
    copy = out.details["mirror"]["resync_copy"]
    assert copy["rate_mbps_idle"] == 285 and copy["seconds_idle"] == pytest.approx(dirty / 285e6)
    assert copy["foreground_util"] == {"survivor": pytest.approx(0.5), "returning": pytest.approx(0.0)}
    assert copy["rate_mbps_mean"] == pytest.approx(142.5)
    # reads during the resync (20.0125 + 0.025 j < 24.709 s: j = 0..187, 188 of them) took the disk's 12.5 ms,
    # the other 214 reads the NVMe's 80 us
    assert out.details["mirror"]["requests_resyncing"] == 188
    lat = out.contract["latency_us"]["read"]
    assert lat["p50"] == pytest.approx(80) and lat["p99"] == pytest.approx(12_500)
    assert any("optimistic" in n for n in out.details["notes"])


def test_dirty_regions_merges_spans_without_expanding_them():
    """Worked by hand, regions of 4 KiB: volume 0 writes [0, 8 KiB) -> regions 0-1, [4 KiB, 16 KiB) -> 1-3,
    a 1 GiB write at 1 GiB -> regions 262,144 .. 524,287 (262,144 of them); volume 1 writes 1 byte at
    2^54 (region 2^42) and 1 byte at 2^54 + 1 (the same region). Distinct: 4 + 262,144 + 1 = 262,149.
    The old code expanded every region into a key `volume << 40 | region`: region 2^42 of volume 1
    overflowed into another volume's bits."""
    K = 4096
    off = np.array([0, 4 * 1024, 2**30, 2**54, 2**54 + 1], dtype=np.int64)
    ln = np.array([8 * 1024, 12 * 1024, 2**30, 1, 1], dtype=np.int64)
    vol = np.array([0, 0, 0, 1, 1], dtype=np.int64)
    assert mirror.dirty_regions(off, ln, vol, K) == 4 + 262_144 + 1
    # a reference by brute force on a small random case
    rng = np.random.default_rng(7)
    off = rng.integers(0, 200, 300).astype(np.int64) * 100
    ln = rng.integers(1, 900, 300).astype(np.int64)
    vol = rng.integers(0, 3, 300).astype(np.int64)
    ref = {(int(v), r) for o, n, v in zip(off, ln, vol) for r in range(int(o) // 512, (int(o) + int(n) - 1) // 512 + 1)}
    assert mirror.dirty_regions(off, ln, vol, 512) == len(ref)


def test_failure_from_options():
    assert mirror.failure_from(None, None) is None
    assert mirror.failure_from(("fast", 600.0), None) == mirror.Failure("fast", 600.0, None)
    assert mirror.failure_from(("slow", 60.0), ("slow", 120.0)) == mirror.Failure("slow", 60.0, 120.0)
    with pytest.raises(DbtierError) as e:
        mirror.failure_from(("fast", 60.0), ("slow", 120.0))
    assert e.value.message == "--return slow but --fail fast: only the failed side can return"
    assert e.value.hint == "write --return fast@T"
    with pytest.raises(DbtierError) as e:
        mirror.failure_from(None, ("fast", 120.0))
    assert e.value.message == "--return without --fail"


def _tracking_trace():
    """A write before the failure (not tracked), then while the fast side is down (2 s to 4 s) writes of 4 KiB at
    0, 8 KiB at 1 MiB - 4 KiB (across the first 1 MiB boundary), 4 KiB at 5 MiB, 100 MiB and 200 MiB; a read at
    4 s (its return) ends the trace."""
    t = [0.0, 1.0, 2.1, 2.2, 2.3, 2.4, 2.5, 4.0]
    op = [0, 1, 1, 1, 1, 1, 1, 0]
    off = [0, 300 * MIB, 0, MIB - 4096, 5 * MIB, 100 * MIB, 200 * MIB, 0]
    ln = [4096, 4096, 4096, 8192, 4096, 4096, 4096, 4096]
    return from_arrays(t, op, off, ln)


@pytest.mark.parametrize("tracking, region_size, regions, region", [
    # 1 MiB AUs: {0, 1} (the first two writes), 5, 100, 200 -> 5 regions
    (None, None, 5, MIB),
    ("asm-au", None, 5, MIB),
    # 64 MiB chunks: 0 (0 to 5 MiB), 1 (100 MiB), 3 (200 MiB) -> 3
    ("md-bitmap", None, 3, 64 * MIB),
    # ASM with AU_SIZE 4 MB: 0 (0 to 1 MiB + 4 KiB), 1 (5 MiB), 25 (100 MiB), 50 (200 MiB) -> 4
    ("asm-au", 4 * MIB, 4, 4 * MIB),
])
def test_change_tracking_sets_the_resync_unit(tracking, region_size, regions, region):
    """Regions counted by hand; the copy reads the slow survivor (100 MB/s) into the fast side (500 MB/s write)
    with no foreground left after the return: resync seconds = bytes / 100 MB/s; without redundancy 2 s down
    plus the resync. The default is ASM's allocation unit."""
    out = sim.simulate(_tracking_trace(), sim.Params("preferred-read-mirror", tracking=tracking,
                                                     region_size=region_size,
                                                     failure=mirror.Failure("fast", 2.0, 4.0)),
                       {"fast": FAST, "slow": SLOW})
    nbytes = regions * region
    assert out.contract["resync"] == {"regions": regions, "bytes": nbytes, "seconds": pytest.approx(nbytes / 100e6),
                                      "unprotected_seconds": pytest.approx(2 + nbytes / 100e6)}
    tr = out.details["mirror"]["tracking"]
    assert tr["model"] == (tracking or "asm-au") and tr["region_size"] == region
    assert out.details["mirror"]["region_size"] == region and out.details["params"]["region_size"] == region
    assert out.details["params"]["tracking"] == (tracking or "asm-au")
    assert tr["region_size_from"] == ("--region-size" if region_size else "the tracking's unit")
    assert ("Oracle ASM" in tr["basis"]) == (tr["model"] == "asm-au")
    assert any(n.startswith(f"change tracking: {tr['model']}") for n in out.details["notes"])


def test_unknown_tracking_and_tracking_on_another_design_are_refused():
    with pytest.raises(DbtierError, match="--tracking: unknown model 'zfs'"):
        sim.simulate(_tracking_trace(), sim.Params("preferred-read-mirror", tracking="zfs"),
                     {"fast": FAST, "slow": SLOW})
    with pytest.raises(DbtierError, match="--region-size applies to --design preferred-read-mirror, not single"):
        sim.simulate(_tracking_trace(), sim.Params("single", region_size=MIB), {"device": SLOW})
