"""`plan size` ranks purchases: designs that differ only in layout are one candidate, and cloud volumes
(replicated by their provider) are no on-prem design: left out by default, striped only when named.

The catalog leaves a file's cloud volumes out (`plan size --cloud` sizes them); the model still takes a
cloud-volume Device given in code, which is how CATALOG's reaches these tests.

Every expected figure is worked by hand in the comments from the round numbers of CATALOG below."""

from __future__ import annotations

from dataclasses import replace

import pytest
from pytest import approx

from dbtier.core.errors import DbtierError
from dbtier.model.plan.array import LAYOUTS, evaluate, parse_spec
from dbtier.model.plan.catalog import Catalog, load_catalog, parse_catalog_text
from dbtier.model.plan.planner import budget, equivalent, value
from dbtier.model.plan.requirement import Requirement
from dbtier.model.plan.search import shapes
from dbtier.model.plan.service import Terms
from dbtier.model.plan.sizing import failures_survived, size

HDD, SSD, CLOUD = "f-hdd-1tb", "f-ssd-1tb", "f-cloud-1tb"
HOURS = 5 * 8766          # five years of 365.25 days

# Interfaces no shipped overhead applies to: every price below is the devices' alone.
CATALOG = f"""
[[device]]
id = "{HDD}"
name = "fold test HDD"
kind = "hdd"
interface = "f-bay"
capacity_gb = 1000
price_usd = 100
read_iops = 100
write_iops = 100
read_mbps = 100
write_mbps = 100
read_latency_us = 8000
write_latency_us = 8000
workload_tb_per_year = 550
warranty_years = 5
power_loss_protection = true
active_watts = 8
idle_watts = 5
source = "hand-made for tests"

[[device]]
id = "{SSD}"
name = "fold test SSD"
kind = "sata-ssd"
interface = "f-bay"
capacity_gb = 1000
price_usd = 500
read_iops = 100000
write_iops = 50000
read_mbps = 500
write_mbps = 500
read_latency_us = 100
write_latency_us = 40
dwpd = 1
warranty_years = 5
power_loss_protection = true
sustained_write_iops = 50000
sustained_write_mbps = 500
active_watts = 4
idle_watts = 2
source = "hand-made for tests"

[[device]]
id = "{CLOUD}"
name = "fold test cloud volume, $80 a month"
kind = "cloud-volume"
interface = "f-cloud"
capacity_gb = 1000
price_usd = 2880
read_iops = 3000
write_iops = 3000
read_mbps = 125
write_mbps = 125
read_latency_us = 1000
write_latency_us = 1000
usd_per_month = 80
durability_pct = 99.8
shared_access = true
source = "hand-made for tests"
"""

PURCHASE = Terms(cost="purchase")


def with_cloud_volumes(cat: Catalog) -> Catalog:
    """CATALOG's cloud volume added in code (load_catalog leaves it out, noted in `ignored`)."""
    cat.devices.update({d.id: d for d in parse_catalog_text(CATALOG, "fold")[0] if d.kind == "cloud-volume"})
    return cat


@pytest.fixture(scope="module")
def cat(tmp_path_factory):
    path = tmp_path_factory.mktemp("catalog") / "fold.toml"
    path.write_text(CATALOG)
    loaded = load_catalog([path])
    assert [e["id"] for e in loaded.ignored] == [CLOUD]
    return with_cloud_volumes(loaded)


def rows(sz):
    return [(c.evaluation.config.count, c.evaluation.config.layout, list(c.layouts), c.evaluation.price_usd)
            for c in sz.candidates]


def test_failures_survived_whatever_devices_fail():
    assert [failures_survived(lay, 4) for lay in ("jbod", "raid0", "raid1", "raid10", "raid5", "raid6", "mirror2",
                                                  "mirror3")] == [0, 0, 3, 1, 1, 2, 1, 2]
    assert failures_survived("raid1", 2) == 1


def test_layouts_at_one_price_are_one_row(cat):
    """1,000 GB of 1,000 GB disks at $100, no headroom: raid1 keeps 1 disk's capacity -> 2 ($200); mirror2 n/2 ->
    2 ($200); raid5 n-1 -> 2, at least 3 ($300); mirror3 n/3 -> 3 ($300); raid10 n/2 -> 2, at least 4 ($400);
    raid6 n-2 -> 3, at least 4 ($400). Three purchases, each with two layouts."""
    sz = size(cat, Requirement(capacity_gb=1000, headroom=0), devices=[HDD], terms=PURCHASE)
    # preferred: the most failures survived whatever devices fail, then array.LAYOUTS' order:
    # raid1 of 2 and mirror2 both survive 1 -> raid1 (first in LAYOUTS); mirror3 survives 2, raid5 1;
    # raid6 survives 2, raid10 1
    assert rows(sz) == [(2, "raid1", ["raid1", "mirror2"], 200), (3, "mirror3", ["mirror3", "raid5"], 300),
                        (4, "raid6", ["raid6", "raid10"], 400)]
    assert sz.found == 3 and sz.considered == 6      # raid1, raid10, raid5, raid6, mirror2, mirror3 tried
    d = sz.candidates[0].contract()
    assert (d["device"], d["count"], d["layout"], d["layouts"], d["price_usd"]) == (HDD, 2, "raid1",
                                                                                    ["raid1", "mirror2"], 200)
    assert d["description"] == f"2 x {HDD} raid1" and d["capacity_gb"] == 1000


def test_the_top_n_are_n_purchases(cat):
    # before folding, the top 2 were 2 disks as raid1 and 2 disks as mirror2
    sz = size(cat, Requirement(capacity_gb=1000, headroom=0), devices=[HDD], terms=PURCHASE, top=2)
    assert [(c.evaluation.config.count, c.evaluation.price_usd) for c in sz.candidates] == [(2, 200), (3, 300)]
    assert sz.found == 3


def test_folded_on_the_cost_over_the_service_life(cat):
    """With no rates the disks idle: 2 x 5 W x 43,830 h = 438.3 kWh x $0.13 = $56.98 of energy for raid1 and
    mirror2 alike, so they fold at $200 + $56.98 = $256.98."""
    sz = size(cat, Requirement(capacity_gb=1000, headroom=0), devices=[HDD])
    c = sz.candidates[0]
    assert (c.evaluation.config.count, c.layouts) == (2, ("raid1", "mirror2"))
    assert c.life["tco"]["energy_usd"] == approx(2 * 5 * HOURS / 1000 * 0.13)
    assert c.life["tco"]["total_usd"] == approx(200 + 2 * 5 * HOURS / 1000 * 0.13)


def test_a_read_cache_folds_its_backing_layouts(cat):
    """6,000 reads/s, no headroom, 90% hits: 1 SSD serves 5,400 (of 100,000); the disks' 600 misses need 6 of
    them (100 each) whatever the backing layout: raid10 (even, 6), raid5 and raid6 (6). The cache holds 10% of
    the backing set: at most 400 GB, 1 SSD. One purchase: $500 + 6 x $100 = $1,100; raid6 survives 2."""
    sz = size(cat, Requirement(read_iops=6000, headroom=0), devices=[SSD, HDD], layouts=["read-cache"],
              terms=PURCHASE)
    (c,) = sz.candidates
    cfg = c.evaluation.config
    assert (cfg.count, cfg.second_count, cfg.second_layout, c.evaluation.price_usd) == (1, 6, "raid6", 1100)
    d = c.contract()
    assert d["layout"] == "read-cache" and d["layouts"] == ["read-cache"]
    assert d["second"]["layout"] == "raid6" and d["second"]["layouts"] == ["raid6", "raid10", "raid5"]


def test_different_prices_are_not_folded(cat):
    # 2,000 GB: raid1 cannot (1 disk's capacity at any count); mirror2 4 ($400); raid5 3 ($300): two rows
    sz = size(cat, Requirement(capacity_gb=2000, headroom=0), devices=[HDD], layouts=["raid1", "mirror2", "raid5"],
              terms=PURCHASE)
    assert rows(sz) == [(3, "raid5", ["raid5"], 300), (4, "mirror2", ["mirror2"], 400)]


@pytest.mark.slow
def test_cloud_volumes_leave_the_default_search():
    shipped = load_catalog()
    assert "cloud-volume" not in {d.kind for d in shipped.devices.values()}
    shipped = with_cloud_volumes(shipped)
    sz = size(shipped, Requirement(read_iops=2000, write_iops=800, capacity_gb=22, instances=2))
    kinds = {c.evaluation.config.device.kind for c in sz.candidates}
    assert "cloud-volume" not in kinds and kinds == {"shared-array"}
    assert set(sz.cloud_left_out) == {CLOUD}
    assert not any(x["device"] == CLOUD for x in sz.dropped)
    single = size(shipped, Requirement(read_iops=2000, write_iops=800, capacity_gb=22))
    assert "cloud-volume" not in {c.evaluation.config.device.kind for c in single.candidates}


def test_a_catalog_of_cloud_volumes_only_points_to_cloud(cat):
    only = load_catalog()
    only.devices = {k: d for k, d in cat.devices.items() if d.kind == "cloud-volume"}
    with pytest.raises(DbtierError, match="only cloud volumes") as exc:
        size(only, Requirement(capacity_gb=100))
    assert "--cloud" in exc.value.hint


def test_a_named_cloud_volume_is_sized_as_a_stripe(cat):
    """2,500 GB of 1,000 GB volumes, no headroom: a stripe of 3, 3 x $2,880 = $8,640; no parity or mirror."""
    sz = size(cat, Requirement(capacity_gb=2500, headroom=0), devices=[CLOUD], terms=PURCHASE)
    assert rows(sz) == [(3, "raid0", ["raid0"], 8640)]
    assert sz.considered == 1
    # beside flash dearer per GB ($5,000 / 1,000 GB against $2.88): the volume is never a preferred-read
    # mirror's side, and a read cache's backing set over it is a stripe
    dear = replace(cat.device(SSD), price_usd=5000)
    got = {(s.device.id, s.layout, s.second.id if s.second else None, s.second_layout)
           for s in shapes([dear, cat.device(CLOUD)], LAYOUTS, "required")}
    assert {x for x in got if CLOUD in x} == {(CLOUD, "raid0", None, None), (SSD, "read-cache", CLOUD, "raid0")}


def test_a_named_cloud_volume_without_a_stripe_layout_is_one_clear_error(cat):
    with pytest.raises(DbtierError, match="stripe only") as exc:
        size(cat, Requirement(capacity_gb=2500), devices=[CLOUD], layouts=["raid10", "mirror2"])
    assert CLOUD in exc.value.message and "--cloud" in exc.value.hint


BENCH = {"schema_version": 1, "command": "bench",
         "points": [{"clients": 1, "tps": 100.0, "tpm": 6000.0}]}


def test_equivalent_budget_and_value_take_cloud_volumes_as_stripes_only(cat):
    # jbod: $10,000 buys 3 volumes (3 x $2,880 = $8,640)
    (opt,) = budget(cat, 10_000, [CLOUD])
    assert (opt.count, opt.evaluation.price_usd) == (3, 8640)
    # capacity: one 1,000 GB volume matches one 1,000 GB disk
    assert equivalent(cat, HDD, CLOUD).by_metric["capacity"].count == 1
    # a run on 2 striped volumes: 100 TPS / $5,760
    v = value(BENCH, evaluate(parse_spec(cat, f"{CLOUD}:2:raid0")))
    assert v.figures["tps_per_usd"] == approx(100 / 5760)
    for call in (lambda: budget(cat, 10_000, [HDD, CLOUD], "raid1"),
                 lambda: equivalent(cat, HDD, CLOUD, layout="mirror2"),
                 lambda: value(BENCH, evaluate(parse_spec(cat, f"{CLOUD}:3:raid5"))),
                 lambda: value(BENCH, evaluate(parse_spec(cat, f"{SSD}:1:preferred-read-mirror:{CLOUD}:2"))),
                 lambda: value(BENCH, evaluate(parse_spec(cat, f"{SSD}:1:read-cache:{CLOUD}:4:raid10")))):
        with pytest.raises(DbtierError, match=f"{CLOUD} is a cloud-volume.*stripe only") as exc:
            call()
        assert "--cloud" in exc.value.hint
