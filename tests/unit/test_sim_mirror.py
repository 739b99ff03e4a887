"""Preferred-read mirror: bitmap and resync arithmetic, and the designs end to end on small traces."""

from __future__ import annotations

import numpy as np
import pytest

from dbtier.core.errors import DbtierError
from dbtier.sim import mirror
from dbtier.sim import simulate as sim
from dbtier.sim.latency import DeviceModel
from dbtier.sim.traces import from_arrays

MIB = 1 << 20
R = 64 * MIB
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
    r = mirror.resync(3, R, write_mbps=100, failure=f, trace_end_s=1000.0)
    # 3 x 64 MiB = 201,326,592 bytes at 100 MB/s = 2.01326592 s; unprotected 300 s down + the resync
    assert r == {"regions": 3, "bytes": 201326592, "seconds": pytest.approx(2.01326592),
                 "unprotected_seconds": pytest.approx(302.01326592)}


def test_resync_when_the_side_never_returns():
    r = mirror.resync(5, R, 100, mirror.Failure("slow", 250.0), trace_end_s=1000.0)
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


def test_mirror_design_routes_by_phase():
    tr = _trace()
    out = sim.simulate(tr, sim.Params("preferred-read-mirror", failure=mirror.Failure("fast", 2.0, 4.0)),
                       {"fast": FAST, "slow": SLOW})
    c = out.contract
    # one write (at 3 s, region 2) while down -> one 64 MiB region at the fast side's 500 MB/s
    assert c["resync"] == {"regions": 1, "bytes": R, "seconds": pytest.approx(R / 500e6),
                           "unprotected_seconds": pytest.approx(2 + R / 500e6)}
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
    out = sim.simulate(_trace(), sim.Params("preferred-read-mirror", failure=mirror.Failure("slow", 2.0, 4.0)),
                       {"fast": FAST, "slow": SLOW})
    c = out.contract
    assert c["latency_us"]["read"]["p999"] == pytest.approx(100)
    # the write at 3 s goes to the fast side only (30 µs); the one at 1.5 s to both (2 ms)
    assert sorted([c["latency_us"]["write"]["p50"]]) == [pytest.approx((30 + 2000) / 2)]
    assert c["resync"]["seconds"] == pytest.approx(R / 50e6)      # the slow side's 50 MB/s


def test_mirror_without_failure_has_null_resync():
    out = sim.simulate(_trace(), sim.Params("preferred-read-mirror"), {"fast": FAST, "slow": SLOW})
    assert out.contract["resync"] is None
    assert out.contract["latency_us"]["read"]["p999"] == pytest.approx(100)
    assert set(out.contract["device_util"]) == {"fast", "slow"}


def test_failure_after_the_trace_is_refused():
    with pytest.raises(DbtierError, match="after the trace ends"):
        sim.simulate(_trace(), sim.Params("preferred-read-mirror", failure=mirror.Failure("fast", 20.0)),
                     {"fast": FAST, "slow": SLOW})
