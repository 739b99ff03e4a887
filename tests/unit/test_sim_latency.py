"""The queueing model on hand-worked numbers (see dbtier.sim.device.latency's docstring)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from dbtier.core.errors import DbtierError
from dbtier.sim.device import latency
from dbtier.sim.device.latency import DeviceModel, SubIOs

# 1,000 read IOPS (1 ms each), 500 write IOPS (2 ms), 100 / 50 MB/s, 5 ms read and 2 ms write latency at QD1.
DISK = DeviceModel("disk", "test", read_iops=1000, write_iops=500, read_mbps=100, write_mbps=50,
                   read_latency_us=5000, write_latency_us=2000)
FLASH = DeviceModel("flash", "test", read_iops=100_000, write_iops=50_000, read_mbps=1000, write_mbps=500,
                    read_latency_us=100, write_latency_us=30)


def test_service_figures():
    assert DISK.occupancy_s(0, 4096) == pytest.approx(1e-3)                    # the IOPS bound
    assert DISK.occupancy_s(0, 1 << 20) == pytest.approx((1 << 20) / 100e6)    # the bandwidth bound
    assert DISK.delay_s(0, 4096) == pytest.approx(5e-3)                        # QD1 latency of 4 KiB
    assert DISK.delay_s(1, 8192) == pytest.approx(2e-3 + 4096 / 50e6)          # + transfer past 4 KiB
    assert DISK.transfer_s(0, 4096) == pytest.approx(4096 / 100e6)


def test_hand_worked_queue():
    """DISK as flash-like (parallel): units = ceil(max(1000 x 5 ms, 500 x 2 ms)) = 5, each busy for the QD1
    latency (+ transfer past 4 KiB); the gate spaces starts by max(1/IOPS, b/bandwidth). Busy = max(gate,
    service / 5).

    req  t (s)    I/O                      start        gate      completes     latency      busy
    0    0        read 4 KiB               0            1 ms      0.005         5 ms         1 ms
    1    0        read 4 KiB               0.001        1 ms      0.006         6 ms         1 ms
    2    0.0005   read 4 KiB at 1,000,000  0.002        1 ms      0.007         6.5 ms       1 ms
    3    1.0      read 4 KiB at 1,004,096  1.0 (seq.)   40.96 µs  1.005         5 ms         5 ms / 5 = 1 ms
    4    2.0      read 1 MiB               2.0          10.48576  2.0154448     15.4448 ms   10.48576 ms
    5    2.001    write 4 KiB              2.01048576   2 ms      2.01248576    11.48576 ms  2 ms
    (three units are busy at most: the fifth never binds.)
    """
    subs = SubIOs.empty()
    subs.add([0, 1], 0, 0, np.array([4096, 4096]))
    subs.add([2, 3], 0, 0, np.array([4096, 4096]), offset=np.array([1_000_000, 1_004_096]),
             volume=np.array([0, 0]))
    subs.add([4], 0, 0, np.array([1 << 20]))
    subs.add([5], 0, 1, np.array([4096]))
    t = np.array([0, 0, 0.0005, 1.0, 2.0, 2.001])
    s = latency.serve(subs, [DISK], t, timed=True)
    assert s.latency_s * 1e3 == pytest.approx([5, 6, 6.5, 5, 15.4448, 11.48576])
    busy = 1e-3 * 4 + (1 << 20) / 100e6 + 2e-3
    assert s.busy_s[0] == pytest.approx(busy)
    assert s.span_s == pytest.approx(2.0154448)
    assert s.utilisation()[0] == pytest.approx(busy / 2.0154448)


def test_other_volume_is_not_sequential():
    subs = SubIOs.empty()
    subs.add([0, 1], 0, 0, np.array([4096, 4096]), offset=np.array([0, 4096]), volume=np.array([0, 1]))
    s = latency.serve(subs, [DISK], np.array([0.0, 0.0]), timed=True)
    assert s.latency_s * 1e3 == pytest.approx([5, 6])          # random: waits the full 1 ms


def test_request_on_two_devices_completes_with_the_slower():
    subs = SubIOs.empty()
    subs.add([0], 0, 1, np.array([4096]))
    subs.add([0], 1, 1, np.array([4096]))
    s = latency.serve(subs, [FLASH, DISK], np.array([0.0]), timed=True)
    assert s.latency_s[0] == pytest.approx(2e-3)


def test_background_io_occupies_but_is_not_waited_for():
    subs = SubIOs.empty()
    subs.add([0], 0, 0, np.array([4096]), fg=False)     # e.g. a destage of a dirty block
    subs.add([0], 1, 0, np.array([4096]))
    subs.add([1], 0, 0, np.array([4096]))
    s = latency.serve(subs, [DISK, FLASH], np.array([0.0, 0.0]), timed=True)
    assert s.latency_s[0] == pytest.approx(100e-6)            # only the foreground flash read
    assert s.latency_s[1] == pytest.approx(1e-3 + 5e-3)       # queued behind the background disk I/O


def test_untimed_is_closed_loop_qd1():
    subs = SubIOs.empty()
    subs.add([0, 1, 2], 0, 0, np.array([4096, 4096, 4096]))
    s = latency.serve(subs, [DISK], np.zeros(3), timed=False)
    assert s.latency_s * 1e3 == pytest.approx([5, 5, 5])


def test_spread_ties():
    coarse = np.array([0, 0, 0, 1, 1, 2.0])
    res = latency.tie_resolution(coarse)
    t = latency.spread_ties(coarse, res)
    assert res == 1.0 and list(t) == pytest.approx([0, 1 / 3, 2 / 3, 1, 1.5, 2])
    fine = np.array([0, 0, 1e-6, 2e-6])
    assert latency.tie_resolution(fine) is None and latency.spread_ties(fine, None) is fine
    assert latency.tie_resolution(np.array([0.0, 1.0, 2.0])) is None      # no ties: nothing to spread


def test_percentiles_and_cdf():
    lat = np.arange(1, 1001) * 1e-6            # 1..1000 µs
    p, cdf = latency.percentiles_and_cdf_us(lat)
    assert p == pytest.approx({"p50": 500.5, "p95": 950.05, "p99": 990.01, "p999": 999.001})
    assert cdf[0] == [pytest.approx(1.0), 0.0] and cdf[-1] == [pytest.approx(1000.0), 1.0]
    assert all(a[0] <= b[0] and a[1] < b[1] for a, b in zip(cdf, cdf[1:]))
    assert latency.percentiles_and_cdf_us(np.zeros(0)) == ({"p50": None, "p95": None, "p99": None, "p999": None}, [])


def test_device_figures_must_be_positive():
    with pytest.raises(DbtierError, match="read_iops must be a positive number"):
        DeviceModel("x", "test", 0, 1, 1, 1, 1, 1)


def test_from_probe_document(tmp_path):
    import json
    from pathlib import Path
    doc = json.loads((Path(__file__).resolve().parent.parent / "data" / "probe" / "quick-ext4-virtio.json")
                     .read_text())
    m = latency.from_probe(doc, "runs/x")
    assert (m.read_iops, m.write_mbps, m.read_latency_us) == (109270.486342, 2404.704021, 54.016)
    assert m.id == "probe:/tmp/pt"
    # the probed disk is virtio: its rotational flag says nothing, so it is served as a parallel device
    assert m.single_actuator is False and m.units == math.ceil(109270.486342 * 54.016e-6)
    bd = doc["machine"]["targets"][0]["block_device"]
    bd["virtual"] = False
    assert latency.from_probe(doc, "runs/x").single_actuator is True       # a real rotating disk: one actuator
    bd["rotational"] = False
    assert latency.from_probe(doc, "runs/x").single_actuator is False
    doc["targets"][0]["summary"]["read_mbps_seq"] = None
    with pytest.raises(DbtierError, match="lacks read_mbps_seq"):
        latency.from_probe(doc, "runs/x")
    with pytest.raises(DbtierError, match="not a probe run"):
        latency.from_probe({"command": "catalog"}, "runs/y")


def test_catalog_kinds():
    """Catalog `hdd` devices have one actuator; flash has IOPS x QD1 latency units (the larger of read and write):
    enterprise NVMe 1,000,000 x 80 us = 80 (writes 180,000 x 20 us = 3.6); X25-E 35,000 x 75 us = 2.625 -> 3;
    gp3 3,000 x 1 ms = 3 (a cloud volume spreads its I/O over many devices; the catalog leaves a file's cloud
    volumes out, so it is parsed here)."""
    from dbtier.model.plan.catalog import load_catalog, parse_catalog_text
    cat = load_catalog()
    text = (Path(__file__).resolve().parent.parent / "data" / "catalog" / "cloud-volume.toml").read_text()
    cat.devices["aws-gp3-1tb"] = next(d for d in parse_catalog_text(text, "t")[0] if d.kind == "cloud-volume")
    units = {i: latency.from_catalog(cat.device(i)) for i in ("hdd-7200-20tb", "sas-15k-73gb", "nvme-enterprise-3.84tb",
                                                               "intel-x25e-32gb", "aws-gp3-1tb")}
    assert units["hdd-7200-20tb"].single_actuator and units["sas-15k-73gb"].single_actuator
    assert [units[i].units for i in units] == [1, 1, 80, 3, 3]
    assert not units["nvme-enterprise-3.84tb"].single_actuator
