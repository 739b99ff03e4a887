"""The shipped catalog answers with the class an architect would buy: a write-heavy load on mixed-use drives,
a read-mostly large one on large drives, a cluster's on an array; each answer worked by hand from the
catalog's own figures (price, DWPD, capacity) and the layout's rules."""

from __future__ import annotations

import math

import pytest

from dbtier.model.plan.catalog import load_catalog
from dbtier.model.plan.prices import grade_filter
from dbtier.model.plan.requirement import Requirement
from dbtier.model.plan.search import PARITY_GROUP_MAX
from dbtier.model.plan.sizing import size

pytestmark = pytest.mark.slow      # each runs the CLI end to end for a second or more


@pytest.fixture(scope="module")
def cat():
    return grade_filter(load_catalog(), "production")[0]      # what plan size and advise search by default


def test_a_write_heavy_load_buys_mixed_use_drives_not_more_read_intensive_ones(cat):
    # 20,000 read / 15,000 write IOPS, 200 MB/s, 4 TB: no written bytes a day given, so 200 MB/s held 24 h,
    # 17.28 TB a day; RAID5's small random writes cost data + parity, 2 device writes a host write.
    sz = size(cat, Requirement(read_iops=20000, write_iops=15000, write_mbps=200, capacity_gb=4000))
    best = sz.candidates[0].contract()
    assert best["device_class"] in ("sata-ent-mu", "nvme-mu-gen4", "nvme-mu-gen5", "sas-ssd-mu", "nvme-wi")
    dev = cat.device(best["device"])
    # the cheapest read-intensive design by price, 4 x 1.92 TB RAID5, wears out: 17.28 x 2 / 4 = 8.64 TB a day
    # per device against 1.92 x 1 DWPD x 365 x 5 = 3,504 TB: 3,504 / (8.64 x 365) = 1.1 years
    ri = cat.device("nvme-ri-gen4-1.92tb")
    assert ri.rated_tbw == pytest.approx(1.92 * 1 * 365 * 5)
    assert ri.rated_tbw / (17.28 * 2 / 4 * 365) == pytest.approx(1.11, abs=0.01)
    assert "wear out" in sz.binding_detail or sz.binding == "endurance"
    # the answer lasts: its rated TB over the writes each device takes in RAID5 of n
    n = best["count"]
    per_device = 17.28 * 2 / n                  # RAID5 (data + parity) or a two-way mirror: 2 device writes
    assert dev.rated_tbw / (per_device * 365) >= 5 * (1 - 1e-9)
    assert dev.rated_dwpd >= 3 * (1 - 1e-9)            # mixed-use or better: 3 drive writes a day or more


def test_a_read_mostly_large_load_buys_large_drives_not_many_small_ones(cat):
    # 40,000 read / 200 write IOPS, 0.5 TB a day, 60 TB: 78 TB with headroom
    sz = size(cat, Requirement(read_iops=40000, write_iops=200, capacity_gb=60000, write_tb_per_day=0.5))
    best = sz.candidates[0].contract()
    dev = cat.device(best["device"])
    assert best["count"] <= 12 and dev.capacity_gb >= 7680
    # RAID5 of 7.68 TB drives: n - 1 data drives must hold 78,000 GB: n - 1 >= 10.16 -> 12 drives
    if best["layout"] == "raid5" and dev.capacity_gb == 7680:
        assert best["count"] == 1 + math.ceil(78000 / 7680)
        # 12 SATA drives: 8 on the server's own ports, 4 behind one SAS HBA and JBOF share ($2,000)
        assert best["price_usd"] == 12 * dev.price_usd + 2000
    # no RAID 5/6 set of the ranked designs is wider than the practice rule
    for c in (x.contract() for x in sz.candidates):
        if c["layout"] in PARITY_GROUP_MAX:
            assert c["count"] <= PARITY_GROUP_MAX[c["layout"]]


def test_a_cluster_buys_an_array_sized_on_its_controllers_and_drives(cat):
    sz = size(cat, Requirement(read_iops=1820, write_iops=728, capacity_gb=500, instances=2))
    best = sz.candidates[0].contract()
    assert "array" in best and best["device"] == "afa-entry"
    a = best["array"]
    # the controllers carry it with room: 2,366 read + 946 write IOPS against a ceiling of 150,000
    assert a["limit"] in ("capacity", "controller IOPS", "controller MB/s", "drives")
    # controllers + one shelf + 7 drives, each priced by arrays.toml
    assert best["price_usd"] == pytest.approx(40000 + 5000 + 7 * 4608)
