"""The array model on hand-worked numbers: each layout's formulas, the read-fraction mix, overhead units and
the controller/bus ceiling, latency, price, and the limit named for each figure."""

from __future__ import annotations

import pytest

from dbtier.core.errors import DbtierError
from dbtier.model.plan.array import (LAYOUTS, SET_LAYOUTS, Config, configure, evaluate, iops_at, parse_spec, rule)
from dbtier.model.plan.catalog import Catalog, Device, Overhead, load_catalog

approx = pytest.approx


def dev(id="disk", kind="hdd", interface="sas-6g", capacity_gb=73.0, price_usd=300.0, read_iops=250.0,
        write_iops=250.0, read_mbps=100.0, write_mbps=100.0, read_latency_us=5000.0, write_latency_us=5500.0):
    return Device(id, id, kind, interface, capacity_gb, price_usd, read_iops, write_iops, read_mbps, write_mbps,
                  read_latency_us, write_latency_us, "test")


HBA = Overhead("hba", "HBA per 16", 1000.0, 16, 3200.0, ("sas-6g",), "test")
DISK = dev()                                           # the DESIGN's 15K SAS disk, in round figures
SSD = dev("ssd", "sata-ssd", "sata-6g", 200.0, 500.0, 40_000.0, 10_000.0, 550.0, 500.0, 100.0, 150.0)
CARD = dev("card", "pcie-flash", "pcie2-x4", 1200.0, 20_000.0, 185_000.0, 278_000.0, 1500.0, 1100.0, 30.0, 30.0)
CAT = Catalog({d.id: d for d in (DISK, SSD, CARD)}, {"hba": HBA})


def ev(layout: str, n: int, device: Device = DISK, r: float = 0.5):
    return evaluate(configure(CAT, device, n, layout), r)


# -- the read-fraction mix ------------------------------------------------------------------------------

def test_iops_at_read_fraction_is_time_weighted():
    # 1 / (0.5/185,000 + 0.5/278,000) = 2 * 185,000 * 278,000 / 463,000 = 222,159.827...
    assert iops_at(185_000, 278_000, 0.5) == approx(102_860_000_000 / 463_000)
    assert iops_at(185_000, 278_000, 1.0) == 185_000
    assert iops_at(185_000, 278_000, 0.0) == 278_000
    # 70% reads of 1,000 read / 250 write IOPS: 1 / (0.7/1000 + 0.3/250) = 1 / 0.0019 = 526.3
    assert iops_at(1000, 250, 0.7) == approx(1 / 0.0019)
    with pytest.raises(DbtierError, match="between 0"):
        iops_at(1000, 250, 1.5)


@pytest.mark.parametrize("layout, n", [(lay, 8) for lay in SET_LAYOUTS])
def test_every_single_set_layout_mixes_by_the_time_weighted_formula(layout, n):
    for device in (DISK, SSD):
        e = ev(layout, n, device, 0.7)
        assert e.iops.value == approx(iops_at(e.read_iops.value, e.write_iops.value, 0.7))


# -- layouts ---------------------------------------------------------------------------------------------

def test_jbod_and_raid0_add_everything_up():
    e = ev("jbod", 4)
    # 4 x 73 GB; 4 x 250 IOPS each way; 4 x 100 MB/s each way
    assert (e.capacity_gb.value, e.read_iops.value, e.write_iops.value) == (292, 1000, 1000)
    assert (e.read_mbps.value, e.write_mbps.value) == (400, 400)
    assert e.write_penalty == 1
    assert e.write_iops.limit == "devices" and e.capacity_gb.limit == "devices"
    r0 = ev("raid0", 4)
    assert (r0.capacity_gb.value, r0.read_iops.value, r0.write_iops.value) == (292, 1000, 1000)


def test_raid5_of_four_disks():
    e = ev("raid5", 4)
    # usable 3 x 73 = 219 GB; reads 4 x 250 = 1,000;
    # a small write = 2 reads + 2 writes (penalty 4): 4 / (2/250 + 2/250) = 250 = 4 x 250 / 4
    assert e.capacity_gb.value == 219
    assert e.read_iops.value == 1000
    assert e.write_iops.value == approx(250)
    assert e.write_penalty == 4
    # 50/50: 1 / (0.5/1000 + 0.5/250) = 400
    assert e.iops.value == approx(400)
    # full-stripe sequential writes: 3 data devices x 100 MB/s; reads skip parity: 3 x 100
    assert (e.read_mbps.value, e.write_mbps.value) == (approx(300), approx(300))
    # read-modify-write: read 5,000 µs then write 5,500 µs
    assert e.write_latency_us.value == 10_500 and e.read_latency_us.value == 5000
    assert e.write_iops.limit == "write penalty" and "2 reads + 2 writes" in e.write_iops.detail
    assert e.write_mbps.limit == "write penalty" and "parity" in e.write_mbps.detail
    assert e.capacity_gb.limit == "redundancy"
    assert e.read_iops.limit == "devices"


def test_raid5_charges_reads_and_writes_at_their_own_rates():
    e = ev("raid5", 4, SSD)
    # 4 / (2/40,000 + 2/10,000) = 4 / 0.00025 = 16,000 (not 4 x 10,000 / 4 = 10,000)
    assert e.write_iops.value == approx(16_000)


def test_raid6():
    e = ev("raid6", 6)
    # usable 4 x 73 = 292; penalty 6 = 3 reads + 3 writes: 6 / (3/250 + 3/250) = 250 = 6 x 250 / 6
    assert e.capacity_gb.value == 292
    assert e.write_penalty == 6
    assert e.write_iops.value == approx(250)
    assert e.read_iops.value == 1500
    assert (e.read_mbps.value, e.write_mbps.value) == (approx(400), approx(400))
    assert e.write_latency_us.value == 10_500


def test_raid10():
    e = ev("raid10", 8)
    # usable 8 x 73 / 2 = 292; reads 8 x 250 = 2,000; writes 8 x 250 / 2 = 1,000 (penalty 2)
    assert e.capacity_gb.value == 292
    assert (e.read_iops.value, e.write_iops.value) == (approx(2000), approx(1000))
    assert e.write_penalty == 2
    assert (e.read_mbps.value, e.write_mbps.value) == (approx(800), approx(400))
    assert e.write_latency_us.value == 5500          # the two copies are written in parallel
    assert e.write_iops.limit == "write penalty" and "2 copies" in e.write_iops.detail


def test_raid1_n_way():
    e = ev("raid1", 3)
    # usable 1 x 73; reads 3 x 250; every write goes to all 3: 3 / (3/250) = 250; seq 300 read / 100 write
    assert e.capacity_gb.value == 73
    assert (e.read_iops.value, e.write_iops.value) == (approx(750), approx(250))
    assert (e.read_mbps.value, e.write_mbps.value) == (approx(300), approx(100))
    assert e.write_penalty == 3


def test_mirror2_and_mirror3_are_asm_normal_and_high_redundancy():
    m2 = ev("mirror2", 3)           # any count of at least 2, unlike raid10
    # usable 3 x 73 / 2 = 109.5; reads 750; writes 3 x 250 / 2 = 375
    assert m2.capacity_gb.value == approx(109.5)
    assert (m2.read_iops.value, m2.write_iops.value) == (approx(750), approx(375))
    assert m2.write_penalty == 2
    m3 = ev("mirror3", 6)
    # usable 6 x 73 / 3 = 146; reads 1,500; writes 6 x 250 / 3 = 500; seq write 6 x 100 / 3 = 200
    assert m3.capacity_gb.value == approx(146)
    assert (m3.read_iops.value, m3.write_iops.value) == (approx(1500), approx(500))
    assert m3.write_mbps.value == approx(200)
    assert m3.write_penalty == 3


def test_host_mirroring_sends_each_copy_over_the_bus():
    # 40 SSDs behind the HBA's interface (sas-6g): ceil(40/16) = 3 units x 3,200 = 9,600 MB/s.
    ssd = dev("ssd6", "sata-ssd", "sas-6g", 200.0, 500.0, 40_000.0, 10_000.0, 550.0, 500.0, 100.0, 150.0)
    cat = Catalog({"ssd6": ssd}, {"hba": HBA})
    m2 = evaluate(configure(cat, "ssd6", 40, "mirror2"))
    # devices: 40 x 500 / 2 = 10,000; bus: 9,600 / 2 copies = 4,800 -> the bus limits
    assert m2.write_mbps.value == approx(4800)
    assert m2.write_mbps.limit == "controller/bus" and "hba: 3 units" in m2.write_mbps.detail
    # reads: devices 40 x 550 = 22,000, bus 9,600
    assert m2.read_mbps.value == approx(9600) and m2.read_mbps.limit == "controller/bus"
    # the controller does raid10 itself: a written MB crosses the bus once; devices 40 x 500 / 2 = 10,000
    r10 = evaluate(configure(cat, "ssd6", 40, "raid10"))
    assert r10.write_mbps.value == approx(9600) and r10.write_mbps.limit == "controller/bus"


def test_preferred_read_mirror_reads_fast_writes_at_the_slow_side():
    cfg = configure(CAT, "card", 1, "preferred-read-mirror", "disk", 20)
    e = evaluate(cfg)
    # capacity: min(1,200, 20 x 73 = 1,460) = 1,200, the fast side
    assert e.capacity_gb.value == 1200 and e.capacity_gb.limit == "fast side"
    # all reads from the card; every write to both: min(278,000, 20 x 250 = 5,000) = 5,000, the slow side
    assert e.read_iops.value == approx(185_000) and e.read_iops.limit == "fast side"
    assert e.write_iops.value == approx(5000) and e.write_iops.limit == "slow side"
    # 50/50: the card is busy 0.5/185,000 + 0.5/278,000 s per I/O, the disks 0.5/5,000 s: 1 / 0.0001 = 10,000
    assert e.iops.value == approx(10_000) and e.iops.limit == "slow side"
    # sequential: reads 1,500 (card); writes min(1,100, 20 x 100 = 2,000, 2 HBA units x 3,200) = 1,100
    assert e.read_mbps.value == approx(1500) and e.write_mbps.value == approx(1100)
    assert e.write_mbps.limit == "fast side"
    # latency: reads at the card, writes at the slower disk
    assert e.read_latency_us.value == 30
    assert e.write_latency_us.value == 5500 and e.write_latency_us.limit == "slow side"
    # price: 20,000 + 20 x 300 + ceil(20/16) = 2 HBA units x 1,000
    assert e.price_usd == 28_000
    assert cfg.redundant


def test_read_cache_bottleneck_law_and_latency():
    disk = dev("big", "hdd", "sata-6g", 20_000.0, 350.0, 170.0, 550.0, 285.0, 285.0, 12_500.0, 12_500.0)
    nvme = dev("nvme", "nvme", "pcie4-x4", 3840.0, 450.0, 1_000_000.0, 180_000.0, 6800.0, 4000.0, 80.0, 20.0)
    cat = Catalog({"big": disk, "nvme": nvme}, {})
    e = evaluate(configure(cat, "nvme", 1, "read-cache", "big", 4, "raid10", hit_ratio=0.9))
    # backing raid10 of 4: reads 680, writes 4 x 550 / 2 = 1,100; capacity 4 x 20,000 / 2 = 40,000
    # reads: min(1,000,000 / 0.9, 680 / 0.1) = 6,800 - the misses saturate the backing set
    assert e.read_iops.value == approx(6800) and e.read_iops.limit == "backing set"
    assert e.write_iops.value == approx(1100) and e.write_iops.limit == "backing set"
    assert e.capacity_gb.value == 40_000 and e.capacity_gb.limit == "backing set"
    # mean read latency: 0.9 x 80 + 0.1 x 12,500 = 72 + 1,250 = 1,322 µs; writes at the backing set
    assert e.read_latency_us.value == approx(1322)
    assert e.write_latency_us.value == 12_500
    # sequential reads bypass the cache: the backing set's 4 x 285 = 1,140 MB/s
    assert e.read_mbps.value == approx(1140)
    # a slow cache limits instead: 1,000 read IOPS / 0.9 = 1,111.1 < 6,800
    slow = dev("slowcache", "sata-ssd", "sata-6g", 100.0, 50.0, 1000.0, 1000.0, 100.0, 100.0, 100.0, 100.0)
    cat2 = Catalog({"big": disk, "slowcache": slow}, {})
    e2 = evaluate(configure(cat2, "slowcache", 1, "read-cache", "big", 4, "raid10", hit_ratio=0.9))
    assert e2.read_iops.value == approx(1000 / 0.9) and e2.read_iops.limit == "cache set"
    # h = 0: every read misses; h = 1: every read hits
    e0 = evaluate(configure(cat, "nvme", 1, "read-cache", "big", 4, "raid10", hit_ratio=0.0))
    assert e0.read_iops.value == approx(680)
    e1 = evaluate(configure(cat, "nvme", 1, "read-cache", "big", 4, "raid10", hit_ratio=1.0))
    assert e1.read_iops.value == approx(1_000_000) and e1.read_latency_us.value == approx(80)


# -- overhead and price --------------------------------------------------------------------------------------

@pytest.mark.parametrize("n, units", [(1, 1), (16, 1), (17, 2), (32, 2), (33, 3), (889, 56)])
def test_overhead_units_are_ceil_of_count_over_per_devices(n, units):
    e = ev("jbod", n)
    assert e.overheads[0]["units"] == units
    assert e.price_usd == n * 300 + units * 1000
    assert e.overhead_price_usd == units * 1000


def test_max_mbps_caps_throughput_and_names_the_controller():
    # 40 SATA SSDs (550 MB/s each) on the SAS-2 HBA of the studies: devices 22,000 MB/s. On a server with
    # no drive ports of its own: 3 units x 3,200 = 9,600 MB/s -> the controller/bus limits.
    cat = load_catalog()
    e0 = evaluate(parse_spec(cat, "ocz-vertex3-120gb:40:jbod", server_ports=0))
    assert e0.read_mbps.value == approx(9600)
    assert e0.read_mbps.limit == "controller/bus"
    assert "sas2-hba-pcie2-x8" in e0.read_mbps.detail and "3 units" in e0.read_mbps.detail
    # With the shipped 8 server ports: 8 on the server's own controller + ceil(32/16) = 2 units bought;
    # the ceiling counts 3 controllers: 9,600 MB/s again, for $2,000 of overhead instead of $3,000.
    e = evaluate(parse_spec(cat, "ocz-vertex3-120gb:40:jbod"))
    assert e.read_mbps.value == approx(9600) and e.read_mbps.limit == "controller/bus"
    assert "the server's own controller (8 on its ports) + 2 units, 3 x 3,200 MB/s" in e.read_mbps.detail
    assert (e0.overhead_price_usd, e.overhead_price_usd) == (3000, 2000)
    # 5 of them: 5 x 550 = 2,750 < 3,200 -> the devices
    e5 = evaluate(parse_spec(cat, "ocz-vertex3-120gb:5:jbod"))
    assert e5.read_mbps.value == approx(2750) and e5.read_mbps.limit == "devices"
    # IOPS are not capped by the overhead
    assert e.read_iops.value == approx(40 * 20_000)


def test_prices_per_unit():
    e = ev("raid10", 8)
    # 8 x 300 + 1 x 1,000 = 3,400; usable 292 GB; IOPS at 50%: 1 / (0.5/2000 + 0.5/1000) = 1,333.3
    assert e.price_usd == 3400
    assert e.usd_per_gb == approx(3400 / 292)
    assert e.iops.value == approx(4000 / 3)
    assert e.usd_per_iops == approx(3400 / (4000 / 3))
    # MB/s at 50%: 1 / (0.5/800 + 0.5/400) = 533.3
    assert e.usd_per_mbps == approx(3400 / (1600 / 3))


def test_the_design_example_figures():
    cat = load_catalog()
    card = evaluate(parse_spec(cat, "fusionio-iodrive-duo-1.2tb:1:jbod"))
    assert (card.price_usd, card.capacity_gb.value, card.read_mbps.value, card.write_mbps.value) == \
        (20_000, 1200, 1500, 1100)
    assert card.overheads == ()          # a PCIe card carries its own controller
    disks = evaluate(parse_spec(cat, "sas-15k-73gb:16:jbod"))
    # 16 x $300 + one $1,000 unit per 16 drives
    assert disks.price_usd == 5800
    assert disks.overheads[0]["id"] == "sas2-hba-pcie2-x8" and disks.overheads[0]["max_mbps"] == 3200


# -- bad input -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("layout, n, needle", [
    ("raid6", 3, "raid6 needs at least 4 devices, got 3"),
    ("raid5", 2, "raid5 needs at least 3 devices, got 2"),
    ("raid10", 2, "raid10 needs at least 4 devices, got 2"),
    ("raid10", 5, "raid10 needs an even number of devices, got 5"),
    ("raid1", 1, "raid1 needs at least 2 devices, got 1"),
    ("mirror3", 2, "mirror3 needs at least 3 devices, got 2"),
    ("jbod", 0, "at least 1, got 0"),
])
def test_a_layout_needing_more_devices_is_refused(layout, n, needle):
    with pytest.raises(DbtierError) as exc:
        configure(CAT, DISK, n, layout)
    assert needle in exc.value.message
    assert exc.value.hint


@pytest.mark.parametrize("spec, needle", [
    ("disk:4", "is not DEVICE:COUNT:LAYOUT"),
    ("disk:four:raid5", "device count 'four' is not a whole number"),
    ("disk:-2:raid5", "at least 1, got -2"),
    ("disk:4:raid7", "unknown layout 'raid7'"),
    ("disk:4:raid5:card:1", "raid5 takes DEVICE:COUNT:LAYOUT only"),
    ("card:1:preferred-read-mirror", "takes DEVICE:COUNT:preferred-read-mirror:SLOW:COUNT"),
    ("card:1:read-cache:disk:3:raid6", "raid6 needs at least 4 devices, got 3 (backing set, raid6)"),
    ("dsk:4:raid5", "unknown device id 'dsk'; did you mean 'disk'?"),
])
def test_bad_specs(spec, needle):
    with pytest.raises(DbtierError) as exc:
        parse_spec(CAT, spec)
    assert needle in exc.value.message


def test_hit_ratio_must_be_a_fraction():
    with pytest.raises(DbtierError, match="between 0 and 1"):
        configure(CAT, "card", 1, "read-cache", "disk", 4, hit_ratio=1.5)


def test_spec_round_trips_and_redundancy():
    for spec in ("disk:8:raid10", "card:1:preferred-read-mirror:disk:20", "card:1:read-cache:disk:8:raid5"):
        assert parse_spec(CAT, spec).spec == spec
    assert parse_spec(CAT, "card:1:read-cache:disk:8").spec == "card:1:read-cache:disk:8:raid10"
    assert not parse_spec(CAT, "disk:8:raid0").redundant
    assert parse_spec(CAT, "disk:8:raid5").redundant
    assert not parse_spec(CAT, "card:1:read-cache:disk:8:raid0").redundant
    cloud = dev("vol", "cloud-volume", "aws-ebs")
    assert Config(cloud, 4, "raid0").redundant        # the provider replicates a volume
    assert set(LAYOUTS) == set(SET_LAYOUTS) | {"preferred-read-mirror", "read-cache"}
    assert rule("raid5", 4).write_penalty == 4 and rule("raid6", 6).write_penalty == 6
