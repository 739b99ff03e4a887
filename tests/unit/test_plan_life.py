"""plan size over the service life: sustained writes, endurance, durable writes, topology and TCO.

Every expected figure is worked by hand in the comments from tests/data/catalog/life.toml's round
numbers (never by calling the code under test)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pytest import approx

from dbtier.core.errors import DbtierError
from dbtier.model.plan.catalog import load_catalog, parse_catalog_text
from dbtier.model.plan.power_loss import ProbeFlush, probe_flush
from dbtier.model.plan.endurance import layout_write_factor, replacements
from dbtier.model.plan.requirement import Requirement
from dbtier.model.plan.service import Terms
from dbtier.model.plan.shared_array import shipped_arrays
from dbtier.model.plan.sizing import size

LIFE = Path(__file__).parent.parent / "data" / "catalog" / "life.toml"
ENT, CLIENT, NOFLUSH, HDD, CLOUD, ARRAY = ("t-ent-3.84tb", "t-client-2tb", "t-client-noflush-2tb", "t-hdd-10tb",
                                          "t-cloud-1tb", "t-array-tb")
HOURS = 5 * 8766          # five years of 365.25 days


@pytest.fixture(scope="module")
def cat():
    """life.toml; its cloud volume, which load_catalog leaves out (noted in `ignored`), added in code."""
    loaded = load_catalog([LIFE])
    assert [e["id"] for e in loaded.ignored] == [CLOUD]
    loaded.devices.update({d.id: d for d in parse_catalog_text(LIFE.read_text(), str(LIFE))[0]
                           if d.kind == "cloud-volume"})
    return loaded


def best(sz):
    return sz.candidates[0]


def test_the_test_devices_need_no_overhead(cat):
    # the TCO figures below count no HBA: none of the shipped overheads applies to these devices
    for d in (ENT, CLIENT, NOFLUSH, HDD, CLOUD):
        assert cat.overheads_for(cat.device(d)) == []


def test_layout_write_factors():
    # device writes per host write, summed over the set
    assert layout_write_factor("raid0", 7, True) == 1
    assert layout_write_factor("raid1", 3, True) == 3
    assert layout_write_factor("raid10", 8, True) == 2 and layout_write_factor("mirror2", 5, False) == 2
    assert layout_write_factor("mirror3", 6, True) == 3
    assert layout_write_factor("raid5", 4, True) == 2 and layout_write_factor("raid5", 4, False) == approx(4 / 3)
    assert layout_write_factor("raid6", 6, True) == 3 and layout_write_factor("raid6", 6, False) == approx(1.5)


def test_rated_endurance_from_dwpd_or_tbw(cat):
    # 1 DWPD x 3.84 TB x 365 x 5 years = 7,008 TB; the client drive states 1,200 TBW (0.33 DWPD)
    assert cat.device(ENT).rated_tbw == approx(7008)
    assert cat.device(CLIENT).rated_tbw == 1200
    assert cat.device(CLIENT).rated_dwpd == approx(1200 / 2 / 365 / 5)


def test_replacements_over_the_service_life():
    # a 2.2222-year device over 5 years: ceil(2.25) - 1 = 2 more; one that lasts needs none
    assert replacements(7008 / (8.64 * 365), 5) == 2
    assert replacements(5.0, 5) == 0 and replacements(None, 5) == 0


def test_raid10_grows_until_every_device_lasts(cat):
    """200 MB/s of writes, no average day given: 200e6 x 86,400 = 17.28 TB a day (the pessimistic peak)."""
    req = Requirement(write_mbps=200, capacity_gb=1000)
    sz = size(cat, req, devices=[ENT], layouts=["raid10"])
    c = best(sz)
    # the rates alone: 260 MB/s with headroom <= n/2 x 500 -> the smallest raid10, 4. Wear: each device writes
    # 17.28 x 2 / n TB a day (WAF 1, enterprise) <= 7,008 / (5 x 365) = 3.84 -> n >= 9 -> 10 (even)
    assert c.evaluation.config.count == 10 and c.binding == "endurance"
    e = c.contract()["endurance"]
    assert e["device_writes_tb_per_day"] == approx(3.456)
    # 7,008 / (3.456 x 365) = 5.5556 years; 5 / 5.5556 = 0.9 of the rating used
    assert e["lifetime_years"] == approx(7008 / (3.456 * 365)) and e["used_fraction"] == approx(0.9)
    assert e["host"]["basis"] == "peak held 24 h (pessimistic)" and e["host"]["write_tb_per_day"] == approx(17.28)
    assert sz.binding == "endurance"


def test_worn_devices_replaced_and_priced(cat):
    req = Requirement(write_mbps=200, capacity_gb=1000)
    c = best(size(cat, req, devices=[ENT], layouts=["raid10"], terms=Terms(worn="replace")))
    assert c.evaluation.config.count == 4
    d = c.contract()
    # 17.28 x 2 / 4 = 8.64 TB a day: 7,008 / (8.64 x 365) = 2.2222 years -> 2 replacements of each of 4 x $400
    assert d["endurance"]["lifetime_years"] == approx(7008 / (8.64 * 365))
    assert d["endurance"]["passes"] is False and d["endurance"]["replacements_per_device"] == 2
    t = d["tco"]
    assert t["replacements_usd"] == 3200 and t["purchase_usd"] == 1600
    # energy: the busiest resource is the devices' write bandwidth, 200 / (2 x 500) = 0.2 busy;
    # 4 x (5 + (10 - 5) x 0.2) = 24 W x 43,830 h = 1,051.92 kWh x $0.13 = $136.75
    assert t["utilisation"] == approx(0.2) and t["watts"] == approx(24)
    assert t["energy_usd"] == approx(24 * HOURS / 1000 * 0.13)
    assert t["total_usd"] == approx(1600 + 3200 + 24 * HOURS / 1000 * 0.13)
    assert t["per_year_usd"] == approx(t["total_usd"] / 5)


def test_raid5_of_client_drives_for_sequential_and_random_writes(cat):
    terms = Terms(durable_writes="no", wide_parity_groups=True)   # 80 and 158 drives: the formula at any width
    # sequential (no write IOPS): full-stripe factor n/(n-1); per device 17.28 x n/(n-1) / n x WAF 3 (client)
    # = 51.84 / (n - 1) <= 1,200 / (5 x 365) = 0.65753 -> n - 1 >= 78.84 -> 80 drives
    c = best(size(cat, Requirement(write_mbps=200, capacity_gb=4000), devices=[CLIENT], layouts=["raid5"],
                  terms=terms))
    assert c.evaluation.config.count == 80
    assert c.contract()["endurance"]["waf"] == 3
    # random writes (write IOPS given, the same 17.28 TB a day): data + parity, factor 2:
    # 17.28 x 2 / n x 3 = 103.68 / n <= 0.65753 -> n >= 157.7 -> 158
    c = best(size(cat, Requirement(write_iops=1, write_mbps=200, capacity_gb=4000), devices=[CLIENT],
                  layouts=["raid5"], terms=terms))
    assert c.evaluation.config.count == 158 and c.contract()["endurance"]["layout_write_factor"] == 2


def test_unprotected_devices_sized_on_their_flush_bound_rate(cat):
    req = Requirement(write_iops=1000, capacity_gb=1000, write_tb_per_day=0.1)
    sz = size(cat, req, devices=[CLIENT, NOFLUSH], layouts=["raid10"])
    # required by default (the requirement writes): 1,300 IOPS <= n / 2 x 500 flush-bound -> n >= 5.2 -> 6
    c = best(sz)
    assert c.evaluation.config.spec == f"{CLIENT}:6:raid10"
    d = c.contract()
    assert d["sized_on"]["write_iops"] == "flush-bound" and d["durable_writes"]["protected"] is False
    # the one with no flush-bound figure is dropped, and said
    assert [(x["device"], x["reason"]) for x in sz.dropped] == [(NOFLUSH, "durability")]
    # endurance at the given 0.1 TB a day: 0.1 x 2 / 6 x 3 = 0.1 TB a day per device; 1,200 / 36.5 = 32.88 years
    assert d["endurance"]["lifetime_years"] == approx(1200 / 36.5)
    assert d["endurance"]["host"]["basis"] == "given"
    # a scratch tier: the sustained 8,000 IOPS, the smallest raid10 (4)
    c2 = best(size(cat, req, devices=[CLIENT], layouts=["raid10"], terms=Terms(durable_writes="no")))
    assert c2.evaluation.config.count == 4 and c2.contract()["sized_on"]["write_iops"] == "sustained"


def test_the_cheapest_to_buy_dropped_for_unprotected_writes(cat):
    req = Requirement(write_iops=1000, capacity_gb=3000)
    sz = size(cat, req, devices=[ENT, NOFLUSH], layouts=["raid10"])
    assert best(sz).evaluation.config.device.id == ENT
    # on datasheet figures 4 x $100 (raid10, 4,000 GB usable) beats 4 x $400; it has no power-loss protection
    assert sz.cheaper_by_purchase["spec"] == f"{NOFLUSH}:4:raid10" and sz.cheaper_by_purchase["price_usd"] == 400
    assert sz.cheaper_by_purchase["reason"] == "durability" and sz.binding == "durability"


def test_burst_figures_only_where_the_burst_fits_the_write_cache(cat):
    req = Requirement(write_mbps=400, write_tb_per_day=0.1)
    terms = dict(durable_writes="no", worn="replace")
    # sustained: n x 100 >= 520 -> 6 drives in raid0
    plain = best(size(cat, req, devices=[CLIENT], layouts=["raid0"], redundancy="none", terms=Terms(**terms)))
    assert plain.evaluation.config.count == 6 and plain.contract()["sized_on"]["write_mbps"] == "sustained"
    # 60 s bursts: 2 drives on burst figures (2 x 500 >= 520) each take 520e6 / 2 x 60 = 15.6 GB <= 20 GB
    b = best(size(cat, req, devices=[CLIENT], layouts=["raid0"], redundancy="none",
                  terms=Terms(write_burst_seconds=60, **terms)))
    assert b.evaluation.config.count == 2 and b.contract()["sized_on"]["write_mbps"] == "burst"
    # 100 s bursts: 26 GB a drive overflows the 20 GB cache: back to the sustained 6
    s = best(size(cat, req, devices=[CLIENT], layouts=["raid0"], redundancy="none",
                  terms=Terms(write_burst_seconds=100, **terms)))
    assert s.evaluation.config.count == 6


def test_hdd_within_its_workload_rating(cat):
    # 1 TB written and 1 TB read a day on 4 drives in raid10: (1 x 2 / 4 + 1 / 4) x 365 = 273.75 TB a year
    req = Requirement(capacity_gb=1000, write_tb_per_day=1, read_tb_per_day=1)
    c = best(size(cat, req, devices=[HDD], layouts=["raid10"]))
    e = c.contract()["endurance"]
    assert c.evaluation.config.count == 4 and e["used_fraction"] == approx(273.75 / 550) and e["passes"]
    # 3 and 3: (6 / n + 3 / n) x 365 <= 550 -> n >= 5.97 -> 6
    c = best(size(cat, Requirement(capacity_gb=1000, write_tb_per_day=3, read_tb_per_day=3), devices=[HDD],
                  layouts=["raid10"]))
    assert c.evaluation.config.count == 6 and c.binding == "endurance"


def test_cloud_volumes_months_and_no_wear(cat):
    c = best(size(cat, Requirement(capacity_gb=2000, write_iops=100, headroom=0), devices=[CLOUD],
                  layouts=["raid0"]))
    d = c.contract()
    # 2 volumes x $80 x 12 x 5 = $9,600; nothing bought, no energy of ours
    t = d["tco"]
    assert (t["purchase_usd"], t["cloud_usd"], t["energy_usd"], t["total_usd"]) == (0, approx(9600), 0, approx(9600))
    assert d["endurance"] is None and "provider" in d["endurance_reason"]
    assert d["durable_writes"]["protected"] is True


def test_a_clustered_database_gets_storage_every_node_reaches(cat):
    req = Requirement(capacity_gb=4000, headroom=0, instances=2)
    sz = size(cat, req, devices=[ENT, ARRAY], layouts=["raid10", "raid0"])
    c = best(sz)
    # 4 usable TB units + one controller pair: $4,000 + $20,000
    assert c.evaluation.config.spec == f"{ARRAY}:4:raid0" and c.evaluation.price_usd == 24_000
    assert [(x["device"], x["reason"]) for x in sz.dropped] == [(ENT, "topology")]
    # energy: 4 x 10 W + 500 W for the controllers = 540 W; 540 x 43,830 h / 1,000 x $0.13 = $3,076.87
    assert c.contract()["tco"]["energy_usd"] == approx(540 * HOURS / 1000 * 0.13)
    assert c.contract()["tco"]["rack_units"] == 2
    with pytest.raises(DbtierError, match="clustered database"):
        size(cat, req, devices=[ENT, HDD])


def test_an_array_controller_caps_iops(cat):
    # 150,000 read IOPS: one controller pair passes 100,000 whatever its shelves; the second comes with the
    # 101st usable TB (ceil(101 / 100) = 2): 101 x $1,000 + 2 x $20,000 = $141,000
    c = best(size(cat, Requirement(read_iops=150_000, headroom=0), devices=[ARRAY], layouts=["raid0"]))
    assert c.evaluation.config.count == 101 and c.evaluation.price_usd == 141_000


def test_a_probe_prices_unprotected_devices(cat):
    req = Requirement(write_iops=1000, capacity_gb=1000, write_tb_per_day=0.1)
    honest = ProbeFlush("runs/p", 2000.0, 480.0, True, "ok")
    c = best(size(cat, req, devices=[NOFLUSH], layouts=["raid10"], terms=Terms(probe=honest)))
    # 1,300 <= n / 2 x 2,000 -> the smallest raid10, 4
    assert c.evaluation.config.count == 4 and "probe runs/p" in c.contract()["durable_writes"]["reason"]
    liar = ProbeFlush("runs/p", 90000.0, 2.0, False, "fdatasync returned in 2 µs")
    with pytest.raises(DbtierError, match="no device is left"):
        size(cat, req, devices=[NOFLUSH], layouts=["raid10"], terms=Terms(probe=liar))


def test_probe_flush_reads_a_probe_document():
    doc = {"command": "probe", "targets": [{"summary": {"commits_per_s": 1234.5, "commit_lat_us_p50": 800.0,
                                                        "fsync_honesty": "ok", "fsync_honesty_reason": "r"}}]}
    p = probe_flush(doc, "d")
    assert (p.commits_per_s, p.commit_lat_us_p50, p.honest, p.usable) == (1234.5, 800.0, True, True)
    with pytest.raises(DbtierError, match="no commit rate"):
        probe_flush({"command": "probe", "targets": [{"summary": {}}]}, "d")
    with pytest.raises(DbtierError, match="not a `dbtier probe` run"):
        probe_flush({"command": "history"}, "d")


@pytest.mark.parametrize("kw, match", [
    (dict(service_years=0), "--service-years must be a positive"),
    (dict(service_years=-3), "--service-years must be a positive"),
    (dict(waf=0.5), "--waf must be a number of at least 1"),
    (dict(usd_per_kwh=float("nan")), "--usd-per-kwh must be a finite positive"),
    (dict(usd_per_kwh=0), "--usd-per-kwh must be a finite positive"),
    (dict(worn="sometimes"), "--worn must be"),
    (dict(durable_writes="maybe"), "--durable-writes must be"),
    (dict(write_burst_seconds=0), "--write-burst-seconds"),
])
def test_bad_terms(kw, match):
    with pytest.raises(DbtierError, match=match):
        Terms(**kw)


BASE = """[[device]]
id = "x"
name = "x"
kind = "sata-ssd"
interface = "sata-6g"
capacity_gb = 1000
price_usd = 100
read_iops = 1000
write_iops = 1000
read_mbps = 100
write_mbps = 100
read_latency_us = 100
write_latency_us = 100
source = "s"
"""


@pytest.mark.parametrize("extra, match", [
    ("endurance_tbw = 0", "field 'endurance_tbw' must be positive"),
    ("endurance_tbw = nan", "field 'endurance_tbw' must be a finite number"),
    ("active_watts = -1", "field 'active_watts' must be positive"),
    ("active_watts = inf", "field 'active_watts' must be a finite number"),
    ("sustained_write_iops = 2000", "'sustained_write_iops' \\(2000\\) is above its burst figure 'write_iops'"),
    ("sustained_write_mbps = 101", "'sustained_write_mbps' \\(101\\) is above its burst figure"),
    ("endurance_tbw = 100\ndwpd = 1\nwarranty_years = 5", "both 'endurance_tbw' and 'dwpd'"),
    ("dwpd = 1", "'dwpd' needs 'warranty_years'"),
    ("active_watts = 1\nidle_watts = 2", "'idle_watts' \\(2\\) is above 'active_watts'"),
    ("power_loss_protection = \"yes\"", "field 'power_loss_protection' must be true or false"),
])
def test_bad_catalog_figures(extra, match):
    with pytest.raises(DbtierError, match=r"my\.toml: device #1 \(id 'x'\): .*" + match):
        parse_catalog_text(BASE + extra + "\n", "my.toml")


def test_an_old_catalog_still_loads_and_its_designs_say_unchecked(cat):
    devs, _ = parse_catalog_text(BASE.replace('"x"', '"old"', 1), "old.toml")
    assert devs[0].rated_tbw is None and devs[0].power_loss_protection is None
    old = load_catalog([LIFE])
    old.devices["old"] = devs[0]
    c = best(size(old, Requirement(write_iops=100, capacity_gb=100), devices=["old"], layouts=["raid1"]))
    d = c.contract()
    assert d["endurance"]["checked"] is False and "unchecked for wear" in d["endurance"]["reason"]
    assert d["durable_writes"]["protected"] is None and "unchecked" in d["durable_writes"]["reason"]
    assert set(d["sized_on"]["unchecked"]) == {"sustained_write_iops", "sustained_write_mbps"}
    assert d["tco"]["energy_usd"] is None and d["tco"]["unchecked"]


def test_the_shipped_catalog_has_the_service_life_figures():
    """Every shipped physical device says its warranty, protection and watts; flash its endurance and
    sustained writes, an unprotected one its flush-bound rate; every source says where the new figures
    come from. (Cloud volumes are not in the catalog: `plan size --cloud` sizes them.)"""
    cat = load_catalog()
    for d in cat.devices.values():
        assert d.power_loss_protection is not None and d.active_watts and d.idle_watts, d.id
        if d.flash:
            assert d.rated_tbw and d.warranty_years, d.id
            assert d.sustained_write_iops and d.sustained_write_mbps, d.id
        if d.kind == "hdd":
            assert d.workload_tb_per_year and d.warranty_years, d.id
        if d.power_loss_protection is False:
            assert d.flush_write_iops and d.flush_write_iops < d.write_iops, d.id
    # shared arrays (what a cluster uses) ship in arrays.toml: controllers, shelves and drives, each with watts
    arrays = shipped_arrays()
    assert {a.family for a in arrays} == {"all-flash", "hybrid"}
    for a in arrays:
        assert a.controllers.watts and a.shelves.watts and a.drives.active_watts and a.controllers.support_years, a.id
        assert a.controllers.source and a.drives.source and a.shelves.source and a.protection.source, a.id
    for o in cat.overheads.values():
        assert o.watts, o.id
