"""A cloud volume in the queueing model (dbtier.sim.device.cloudvolume on latency.py's kernel) against closed forms.

A rate limiter of mu I/Os per second in front of a base latency L, fed a constant arrival rate lambda:
- lambda <= mu: no I/O waits, every latency is L exactly;
- lambda > mu: the limiter starts the k-th request (k = 0, 1, ...) at k / mu, it arrived at k / lambda, so
  its latency is L + k (1/mu - 1/lambda): the backlog grows linearly.
mu is the tighter of IOPS / counted I/Os (an I/O of b bytes counts as max(1, ceil(b / accounting size)))
and bandwidth / b. Every expected figure here is worked out from the ID's own numbers or the provider's
published rule (stated where used), never by asking the code under test.
"""

from __future__ import annotations

import numpy as np
import pytest

from dbtier.core.errors import DbtierError
from dbtier.sim.device import latency
from dbtier.sim.device.cloudvolume import device
from dbtier.sim.device.devices import resolve
from dbtier.sim.device.latency import SubIOs

KIB, MIB = 1024, 1024 * 1024


def replay(dev, rate: float, n: int, nbytes: float, op=0, sequential: bool = False) -> np.ndarray:
    """Latencies (s) of n I/Os of nbytes arriving every 1/rate s (random offsets unless `sequential`)."""
    t = np.arange(n) / rate
    subs = SubIOs.empty()
    offsets = np.arange(n, dtype=np.int64) * int(nbytes) if sequential else None
    subs.add(np.arange(n), 0, op, np.full(n, float(nbytes)), offset=offsets)
    return latency.serve(subs, [dev], t, timed=True).latency_s


def linear_backlog(lat: np.ndarray, base_s: float, mu: float, lam: float) -> None:
    """The k-th latency is base + k (1/mu - 1/lambda), at several k and the last."""
    n = lat.size
    for k in (0, 1, 2, 10, 100, n // 2, n - 1):
        assert lat[k] == pytest.approx(base_s + k * (1 / mu - 1 / lam), rel=1e-9, abs=1e-12), k


# -- (a) below the limit: the base latency exactly ---------------------------------------------------------

def test_below_the_limit_every_request_takes_the_base_latency():
    dev = device("cloud:aws:gp3:size=1000,iops=3000,latency_us=800")
    lat = replay(dev, 2000.0, 4000, 4 * KIB)
    assert np.abs(lat - 800e-6).max() < 1e-12


def test_at_the_limit_and_with_a_long_base_latency_the_units_never_queue():
    # 5 ms at 3,000 IOPS keeps 15 I/Os in flight: the parallel servers must not add a wait of their own
    dev = device("cloud:aws:gp3:size=1000,iops=3000,latency_us=5000")
    lat = replay(dev, 3000.0, 6000, 4 * KIB)
    assert np.abs(lat - 5e-3).max() < 1e-9


def test_the_type_s_typical_latency_is_the_default_base():
    dev = device("cloud:aws:gp3:size=100")           # gp3: 3,000 IOPS free; AWS's ~1 ms typical (the data's)
    lat = replay(dev, 1000.0, 500, 16 * KIB)
    assert np.abs(lat - 1e-3).max() < 1e-12


# -- (b) above the limit: the backlog grows linearly ---------------------------------------------------------

def test_above_the_limit_the_backlog_grows_linearly():
    dev = device("cloud:aws:gp3:size=1000,iops=3000,latency_us=800")
    lam, secs = 4000.0, 5.0
    lat = replay(dev, lam, int(lam * secs), 4 * KIB)
    linear_backlog(lat, 800e-6, 3000.0, lam)
    # after T seconds (lambda - mu) T requests wait: the last one waits that many service slots
    assert lat[-1] - 800e-6 == pytest.approx((lam - 3000.0) * secs / 3000.0, rel=1e-3)


def test_reads_and_writes_share_one_iops_limit():
    dev = device("cloud:aws:gp3:size=1000,iops=3000,latency_us=800")
    ops = np.arange(20000) % 2                           # read, write, read, ...: 4,000 a second together
    linear_backlog(replay(dev, 4000.0, 20000, 4 * KIB, op=ops), 800e-6, 3000.0, 4000.0)


def test_a_stripe_multiplies_the_limits():
    dev = device("cloud:aws:gp3:size=1000,iops=3000,count=2,latency_us=800")
    assert replay(dev, 5000.0, 5000, 4 * KIB).max() == pytest.approx(800e-6, abs=1e-12)
    linear_backlog(replay(dev, 8000.0, 40000, 4 * KIB), 800e-6, 6000.0, 8000.0)


def test_a_sequential_stream_is_limited_too():
    # the disk's sequential rule (gate = transfer alone) does not free a cloud volume's I/Os from the IOPS limit
    dev = device("cloud:aws:gp3:size=1000,iops=3000,latency_us=800")
    linear_backlog(replay(dev, 4000.0, 20000, 4 * KIB, sequential=True), 800e-6, 3000.0, 4000.0)


# -- (c) I/O size accounting ------------------------------------------------------------------------------------

def test_a_1_mib_read_counts_as_four_256_kib_ios():
    # io2 at 1,000 IOPS: throughput 0.256 MiB/s per IOPS = 256 MiB/s (AWS), so for 1 MiB the IOPS bind:
    # 4 counted I/Os / 1,000 = 4 ms (the bandwidth alone would take 1/256 s = 3.906 ms)
    dev = device("cloud:aws:io2:size=100,iops=1000,latency_us=500")
    mu = 1000.0 / 4
    assert replay(dev, 200.0, 1000, 1 * MIB).max() == pytest.approx(500e-6, abs=1e-12)     # below 250/s
    linear_backlog(replay(dev, 400.0, 2000, 1 * MIB), 500e-6, mu, 400.0)
    # the same rate of 256 KiB reads counts one each: 400/s is far below 1,000/s, no wait
    assert replay(dev, 400.0, 2000, 256 * KIB).max() == pytest.approx(500e-6, abs=1e-12)
    # 300 KiB counts ceil(300/256) = 2: 500 I/Os a second
    linear_backlog(replay(dev, 600.0, 3000, 300 * KIB), 500e-6, 1000.0 / 2, 600.0)


def test_st1_counts_a_1_mib_read_as_one():
    # st1: 40 MiB/s per TiB baseline, at most 500 MiB/s, an I/O counted per 1 MiB (AWS): 12,800 GiB =
    # 12.5 TiB gives 500 MiB/s = 500 one-MiB I/Os a second; a 4 KiB read counts as one too
    dev = device("cloud:aws:st1:size=12800,latency_us=10000")
    linear_backlog(replay(dev, 600.0, 3000, 1 * MIB), 10e-3, 500.0, 600.0)
    linear_backlog(replay(dev, 600.0, 3000, 4 * KIB), 10e-3, 500.0, 600.0)
    # 2 MiB counts as two: 250 a second
    linear_backlog(replay(dev, 300.0, 1500, 2 * MIB), 10e-3, 250.0, 300.0)


# -- (d) the throughput limit binds for large I/Os ----------------------------------------------------------------

def test_the_throughput_limit_binds_for_large_ios():
    # 16,000 IOPS but 250 MiB/s: a 256 KiB I/O counts once (1/16,000 s) but takes 0.25/250 s = 1 ms of bandwidth
    dev = device("cloud:aws:gp3:size=1000,iops=16000,mibps=250,latency_us=800")
    assert replay(dev, 900.0, 2000, 256 * KIB).max() == pytest.approx(800e-6, abs=1e-12)
    linear_backlog(replay(dev, 1250.0, 5000, 256 * KIB), 800e-6, 1000.0, 1250.0)
    # small I/Os at the same rate are far below both limits
    assert replay(dev, 1250.0, 5000, 4 * KIB).max() == pytest.approx(800e-6, abs=1e-12)


def test_an_azure_throughput_is_in_mb_per_second():
    # Ultra Disk at 100 MB/s (10^6 B/s): a 256 KiB write takes 262,144 / 10^8 s = 2.62144 ms
    dev = device("cloud:azure:ultra:size=100,iops=5000,mbps=100,latency_us=500")
    linear_backlog(replay(dev, 500.0, 2000, 256 * KIB, op=1), 500e-6, 1e8 / 262144, 500.0)
    # given in MiB/s it is converted: 100 MiB/s = 104.8576 MB/s
    assert device("cloud:azure:ultra:size=100,iops=5000,mibps=100").read_mbps == pytest.approx(104.8576)


# -- (e) an instance's caps -----------------------------------------------------------------------------------

R6I_XLARGE_IOPS, R6I_XLARGE_BYTES_PER_S = 6000.0, 156.25e6     # AWS: baseline 6,000 IOPS, 1,250 Mbps


def test_an_instance_cap_below_the_stripe_binds():
    # four gp3 at 16,000 IOPS and 1,000 MiB/s: 64,000 IOPS and 4,000 MiB/s, far above the instance's baseline
    dev = device("cloud:aws:gp3:size=1000,iops=16000,mibps=1000,count=4,instance=r6i.xlarge,latency_us=800")
    linear_backlog(replay(dev, 7500.0, 30000, 4 * KIB), 800e-6, R6I_XLARGE_IOPS, 7500.0)
    # 256 KiB I/Os meet the instance's bandwidth first: 262,144 / 156.25e6 s each
    linear_backlog(replay(dev, 700.0, 3000, 256 * KIB), 800e-6, R6I_XLARGE_BYTES_PER_S / 262144, 700.0)
    lim = dev.to_dict()["limits"]
    assert "r6i.xlarge" in lim["iops_binds"] and "r6i.xlarge" in lim["throughput_binds"]
    assert "instance r6i.xlarge's baseline" in dev.source
    assert (lim["count"], lim["volume_iops"], lim["instance_iops"]) == (4, 16000, R6I_XLARGE_IOPS)


def test_a_stripe_below_the_instance_binds_itself():
    dev = device("cloud:aws:gp3:size=1000,count=1,instance=r6i.xlarge,latency_us=800")
    linear_backlog(replay(dev, 4000.0, 20000, 4 * KIB), 800e-6, 3000.0, 4000.0)
    assert dev.to_dict()["limits"]["iops_binds"] == "the volume"


# -- the figures each kind of type takes from its size --------------------------------------------------------

def test_size_scaled_and_tiered_types_take_their_figures_from_the_size():
    gp2 = device("cloud:aws:gp2:size=500")          # AWS: 3 IOPS per GiB; 250 MiB/s above 334 GiB
    assert (gp2.read_iops, gp2.read_mbps) == (1500, pytest.approx(250 * 1.048576))
    p20 = device("cloud:azure:premium-ssd:size=500")    # rounds up to P20 (512 GiB): 2,300 IOPS, 150 MB/s
    assert (p20.read_iops, p20.read_mbps, p20.write_iops) == (2300, 150, 2300)
    assert p20.io_size_bytes == 256 * KIB


def test_other_devices_keep_their_document():
    m = latency.DeviceModel("x", "test", 100, 100, 10, 10, 1000, 1000)
    assert "io_size_bytes" not in m.to_dict() and "limits" not in m.to_dict()
    assert m.table()[0][4] == 0.0


def test_a_cloud_id_works_in_any_role():
    got = resolve("read-cache", {"cache": "cloud:aws:io2:size=100,iops=20000",
                                 "backing": "cloud:aws:st1:size=2000,count=2"}, None)
    assert got["cache"].read_iops == 20000 and got["backing"].io_size_bytes == MIB


# -- (f) bad IDs: one clear message each ----------------------------------------------------------------------

@pytest.mark.parametrize("bad, says", [
    ("cloud:aws", "expected cloud:PROVIDER:TYPE:size=GIB"),
    ("cloud:oracle:gp3:size=10", "unknown cloud provider 'oracle' (known: aws, azure, gcp)"),
    ("cloud:aws:gp9:size=10", "unknown aws volume type 'gp9' (known: gp2, gp3, io1, io2, sc1, st1)"),
    ("cloud:aws:gp3", "a cloud volume needs size=GIB"),
    ("cloud:aws:gp3:size=100,colour=red", "unknown key 'colour'"),
    ("cloud:aws:gp3:size=100,iops", "'iops' is not KEY=VALUE"),
    ("cloud:aws:gp3:size=100,size=200", "'size' is given twice"),
    ("cloud:aws:gp3:size=-5", "size=-5 is not a positive number"),
    ("cloud:aws:gp3:size=100000", "aws:gp3 volumes are 1 to 65,536 GiB, not 100,000"),
    ("cloud:aws:gp3:size=10,iops=6000",
     "above what aws:gp3 allows at 10 GiB (5,000: at most 80,000 IOPS and 500 per GiB)"),
    ("cloud:aws:gp3:size=100,iops=1000", "iops=1,000 is below aws:gp3's minimum"),
    ("cloud:aws:gp3:size=1000,mibps=1000", "above what aws:gp3 allows at 3,000 IOPS (750 MiB/s: 0.25 MiB/s per IOPS"),
    ("cloud:aws:gp3:size=1000,mibps=200,mbps=200", "give the throughput once"),
    ("cloud:aws:gp2:size=100,iops=300", "aws:gp2's IOPS and throughput follow from its size"),
    ("cloud:aws:io1:size=100", "aws:io1 has no free IOPS baseline: give iops="),
    ("cloud:aws:io2:size=100,iops=1000,mibps=100", "aws:io2's throughput follows from its IOPS"),
    ("cloud:azure:ultra:size=100,iops=1000", "azure:ultra has no free throughput baseline"),
    ("cloud:aws:gp3:size=100,count=1.5", "count=1.5 is not a whole number"),
    ("cloud:aws:gp3:size=100,count=1000", "at most 128 volumes"),
    ("cloud:aws:gp3:size=100,instance=r9.huge", "unknown aws instance 'r9.huge' (known: "),
    ("cloud:aws:gp3:size=100,instance=Standard_E4s_v5", "unknown aws instance 'Standard_E4s_v5'"),
    ("cloud:aws:gp3:size=100,latency_us=abc", "latency_us=abc is not a positive number"),
    ("cloud:aws:gp3:size=1000,iops=80000,count=128,latency_us=1000000", "more than the model's"),
])
def test_bad_ids_are_refused_with_one_clear_message(bad, says):
    with pytest.raises(DbtierError) as e:
        device(bad)
    assert says in e.value.message
    assert e.value.message.startswith(f"device ID '{bad}': ") and e.value.hint
    assert "\n" not in e.value.message


def test_a_provider_without_instances_in_the_data_is_named():
    bad = "cloud:aws:gp3:size=100,instance=r6i.large"
    with pytest.raises(DbtierError, match=r"^device ID '.*': no aws instances in the data"):
        device(bad, instances={})
