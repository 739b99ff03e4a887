"""Shared arrays as controllers and shelves (dbtier.model.plan.shared_array): hand-worked figures on a small test
array, then the planner on it and on the shipped arrays."""

from __future__ import annotations

import pytest
from pytest import approx

from dbtier.core.errors import DbtierError
from dbtier.model.plan.array import evaluate
from dbtier.model.plan.catalog import load_catalog
from dbtier.model.plan.requirement import Requirement
from dbtier.model.plan.service import Terms
from dbtier.model.plan.shared_array import Targets, array_config, parse_arrays, shipped_arrays, size_array
from dbtier.model.plan.sizing import size

# Controller pair: $10,000, 100,000 IOPS, 2,000 / 1,000 MB/s, 400 W. Drives: 1,000 GB at $500, 50,000 read /
# 10,000 write IOPS, 500 / 250 MB/s, 10 W busy / 5 W idle. Shelves of 10 at $2,000 and 100 W; 4 to 40 drives.
# Protection: half the raw capacity usable (500 GB a drive), 2 drive writes per host write, 8+2 stripes.
T_TOML = """
[[array]]
id = "t-array"
name = "test array"
family = "all-flash"
interface = "t-fc"

[array.controllers]
price_usd = 10000
support_years = 3
iops = 100000
iops_block_kib = 8
read_mbps = 2000
write_mbps = 1000
read_latency_us = 500
write_latency_us = 300
watts = 400
rack_units = 2
source = "hand-made for tests"

[array.drives]
drive_class = "test drive 1 TB"
capacity_gb = 1000
price_usd = 500
price_basis = "hand-made"
read_iops = 50000
write_iops = 10000
read_mbps = 500
write_mbps = 250
active_watts = 10
idle_watts = 5
source = "hand-made for tests"

[array.shelves]
drives_per_shelf = 10
price_usd = 2000
watts = 100
rack_units = 2
min_drives = 4
max_drives = 40
source = "hand-made for tests"

[array.protection]
scheme = "test double parity"
usable_fraction = 0.5
write_reads = 0
write_writes = 2
stripe_data = 8
stripe_parity = 2
source = "hand-made for tests"
"""

(T,) = parse_arrays(T_TOML, "test")


def test_the_controller_ceiling_binds():
    # 90,000 reads: the drives alone need 90,000 / 50,000 = 1.8, the array builds at least 4; 4 drives could read
    # 200,000 IOPS but the controller pair passes 100,000: it is the tightest limit (90% used; drives 1.8/4 = 45%)
    s = size_array(T, Targets(read_iops=90000, capacity_gb=100))
    assert s.drives == 4 and s.sized_on == "minimum drives" and s.limit == "controller IOPS"
    assert s.loads["controller IOPS"] == approx(0.9) and s.loads["drives"] == approx(0.45)
    e = evaluate(array_config(T, 4), 1.0)
    assert e.read_iops.value == approx(100000) and e.read_iops.limit == "controller IOPS"
    # beyond the ceiling no drive count helps
    over = size_array(T, Targets(read_iops=110000))
    assert over.drives is None and over.sized_on == "controller IOPS"
    # 1,200 MB/s of writes: over the pair's 1,000
    assert size_array(T, Targets(write_mbps=1200)).sized_on == "controller MB/s"


def test_the_drives_bind():
    # 30,000 writes x 2 drive writes each / 10,000 a drive = 6 drives; the controllers pass 100,000 (30% used)
    s = size_array(T, Targets(write_iops=30000))
    assert s.drives == 6 and s.sized_on == "drives" and s.limit == "drives"
    e = evaluate(array_config(T, 6), 0.0)
    assert e.write_iops.value == approx(6 / (2 / 10000)) == approx(30000) and e.write_iops.limit == "drives"
    # sequential: 1,500 MB/s of reads over 8+2 stripes: 1,500 x 10/8 / 500 = 3.75 drives, the minimum 4 rules;
    # 4 drives read 4 x 500 x 8/10 = 1,600 MB/s, under the pair's 2,000
    assert size_array(T, Targets(read_mbps=1500)).drives == 4
    assert evaluate(array_config(T, 4), 1.0).read_mbps.value == approx(1600)
    # 12 drives would read 4,800 MB/s: the pair's 2,000 caps it
    e12 = evaluate(array_config(T, 12), 1.0)
    assert e12.read_mbps.value == approx(2000) and e12.read_mbps.limit == "controller MB/s"


def test_the_capacity_binds_and_the_price_is_controllers_shelves_and_drives():
    # 7,000 GB / 500 usable GB a drive = 14 drives on ceil(14 / 10) = 2 shelves
    s = size_array(T, Targets(read_iops=1000, capacity_gb=7000))
    assert s.drives == 14 and s.sized_on == "capacity" and s.limit == "capacity"
    assert "capacity assumes 1.0:1 data reduction" in s.detail
    assert T.price_usd(14) == 10000 + 2 * 2000 + 14 * 500 == 21000
    e = evaluate(array_config(T, 14), 0.5)
    assert e.price_usd == 21000 and e.capacity_gb.value == approx(7000)
    # with 2:1 data reduction a drive holds 1,000 GB: 7 drives, 1 shelf, 10,000 + 2,000 + 3,500
    s2 = size_array(T, Targets(read_iops=1000, capacity_gb=7000), data_reduction=2.0)
    assert s2.drives == 7 and "capacity assumes 2.0:1 data reduction" in s2.detail
    assert T.price_usd(7) == 15500
    # more than 40 drives is more than the array takes
    assert size_array(T, Targets(capacity_gb=20500)).sized_on == "max drives"


def test_the_planner_offers_the_array_to_a_cluster_with_its_contract():
    # a 2-instance cluster: the catalog's drives are not shared, the array is; 7,000 GB with no headroom
    req = Requirement(read_iops=1000, write_iops=500, capacity_gb=7000, headroom=0, instances=2)
    sz = size(load_catalog(), req, arrays=[T], terms=Terms(cost="purchase"))
    (c,) = sz.candidates
    d = c.contract()
    assert (d["device"], d["count"], d["layout"], d["price_usd"]) == ("t-array", 14, "jbod", 21000)
    assert d["capacity_gb"] == approx(7000) and d["meets"]["capacity_gb"]["met"]
    # reads: 14 x 50,000 drives, the pair's 100,000 binds; writes: 14 / (2 / 10,000) = 70,000 drives
    assert d["read_iops"] == approx(100000) and d["write_iops"] == approx(70000)
    a = d["array"]
    assert (a["drives"], a["shelves"], a["controllers_usd"], a["shelves_usd"], a["drives_usd"]) == \
        (14, 2, 10000, 4000, 7000)
    assert a["sized_on"] == "capacity" and a["note"] == "capacity assumes 1.0:1 data reduction"
    assert "capacity assumes 1.0:1 data reduction" in d["binding_detail"]
    # power: 400 W of controllers, 2 x 100 W of shelves, 14 drives between 5 and 10 W by utilisation
    u = d["tco"]["utilisation"]
    assert d["tco"]["watts"] == approx(400 + 200 + 14 * (5 + 5 * u))
    # 2:1 data reduction halves the drives of this capacity-bound load: 7 on 1 shelf, $15,500
    sz2 = size(load_catalog(), req, arrays=[T], terms=Terms(cost="purchase", data_reduction=2.0))
    c2 = sz2.candidates[0].contract()
    assert (c2["count"], c2["price_usd"], c2["array"]["shelves"]) == (7, 15500, 1)
    assert "capacity assumes 2.0:1 data reduction" in c2["binding_detail"]


def test_a_rac_gets_an_entry_array_at_its_fewest_drives():
    """The 2-instance RAC of 500 GB at 1,820 read / 728 write IOPS (30% headroom: 2,366 / 946.4 IOPS, 650 GB).
    afa-entry: 650 GB fit 1 drive (3,840 x 0.6 = 2,304 GB), the I/O a fraction of one, so its fewest, 7 drives,
    on 1 shelf: $40,000 + $5,000 + 7 x $4,608 = $77,256. hybrid-midrange: its HDDs carry the I/O: 2,366 / 170
    + 946.4 x (3 + 3) / 170 = 47.3, so 48 drives on 4 shelves: $25,000 + 4 x $4,000 + 48 x $2,000 = $137,000."""
    req = Requirement(read_iops=1820, write_iops=728, capacity_gb=500, headroom=0.3, instances=2)
    sz = size(load_catalog(), req)
    best = sz.candidates[0].contract()
    assert (best["device"], best["count"], best["price_usd"]) == ("afa-entry", 7, 77256)
    assert best["array"]["sized_on"] == "minimum drives" and best["array"]["shelves"] == 1
    hybrid = next(c.contract() for c in sz.candidates if c.evaluation.config.device.id == "hybrid-midrange")
    assert (hybrid["count"], hybrid["price_usd"]) == (48, 137000)
    assert hybrid["array"]["sized_on"] == "drives"
    # every candidate is an array: the cluster keeps only storage every node reaches
    assert all("array" in c.contract() for c in sz.candidates)


def test_named_devices_take_only_the_arrays_named():
    req = Requirement(read_iops=1000, capacity_gb=100, headroom=0)
    sz = size(load_catalog(), req, devices=["t-array"], arrays=[T])
    assert {c.evaluation.config.device.id for c in sz.candidates} == {"t-array"}


def test_the_shipped_arrays_load_and_say_their_sources():
    arrays = shipped_arrays()
    assert {a.id for a in arrays} >= {"afa-entry", "afa-midrange", "afa-highend", "hybrid-midrange"}
    for a in arrays:
        for part in (a.controllers, a.drives, a.shelves, a.protection):
            assert part.source.strip(), a.id
        assert 0 < a.protection.usable_fraction <= 1 and a.shelves.min_drives <= a.shelves.max_drives


@pytest.mark.parametrize("x", [0.5, 0.99, 10.5, float("nan"), True, "2"])
def test_bad_data_reduction(x):
    with pytest.raises(DbtierError, match="--data-reduction") as exc:
        Terms(data_reduction=x)
    assert "2.0 for 2:1" in exc.value.hint


@pytest.mark.parametrize("edit, match", [
    (("usable_fraction = 0.5", "usable_fraction = 1.5"), "usable_fraction"),
    (("min_drives = 4", "min_drives = 41"), "min_drives"),
    (("watts = 400", "wats = 400"), "unknown field 'wats'"),
    (("write_writes = 2", "write_writes = 0.5"), "write_writes"),
    (("iops = 100000", "iops = -1"), "'iops' must be a positive number"),
    (('family = "all-flash"', 'family = "tape"'), "family"),
])
def test_a_bad_arrays_file_names_the_culprit(edit, match):
    with pytest.raises(DbtierError, match=match) as exc:
        parse_arrays(T_TOML.replace(*edit, 1), "bad.toml")
    assert "bad.toml: array #1 (t-array)" in str(exc.value)
