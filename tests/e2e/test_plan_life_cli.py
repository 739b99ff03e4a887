"""`dbtier plan` over the service life through the real entry point, on the shipped catalog: the answer a
storage architect would sign for the issue's requirement, the warehouse that may buy consumer drives, the
result document's keys, the history's written bytes and topology, and every bad option as one message."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_plan_cli import CARD, DISK, fails, history_run, ok_json, probe_run
from conftest import call_main

OLTP = ("--read-iops", "20000", "--write-iops", "15000", "--write-mbps", "200", "--capacity-gb", "4000")


@pytest.mark.slow
def test_the_oltp_requirement_gets_protected_flash_that_lasts(tmp_path):
    doc = ok_json(tmp_path, "plan", "size", *OLTP)
    c = doc["candidates"][0]
    # the result document's names
    assert set(c["endurance"]) >= {"device_writes_tb_per_day", "lifetime_years", "service_years", "used_fraction",
                                   "figure_source"}
    assert set(c["durable_writes"]) >= {"protected", "reason"}
    assert c["sized_on"]["write_iops"] in ("sustained", "burst", "flush-bound")
    assert set(c["tco"]) >= {"purchase_usd", "replacements_usd", "energy_usd", "cloud_usd", "total_usd",
                             "per_year_usd"}
    # protected against power loss, lasting the 5 years: on the shipped catalog, datacenter flash
    assert c["durable_writes"]["protected"] is True and c["endurance"]["passes"] is True
    assert c["endurance"]["lifetime_years"] >= 5 * (1 - 1e-9) and c["endurance"]["service_years"] == 5
    # the arithmetic is visible: 17.28 TB a day (200 MB/s held 24 h, said as pessimistic) x the layout's factor
    assert doc["host_writes"]["write_tb_per_day"] == pytest.approx(17.28)
    assert doc["host_writes"]["basis"] == "peak held 24 h (pessimistic)"
    assert "TBW" in c["endurance"]["reason"] and "years" in c["endurance"]["reason"]
    # by hand: 3 x sata-ent-mu-3.84tb raid5 ($1,459 each, 3 DWPD): 7,680 GB >= 5,200; 285K reads; 3 x 65,000 / 4 =
    # 48,750 writes >= 19,500; each device writes 17.28 x 2 / 3 = 11.52 TB a day against 3 x 3.84 x 365 x 5 =
    # 21,024 TBW: 5.0 years; 3 drives fit the server's 8 ports, so $4,377 with no HBA
    assert c["device"] == "sata-ent-mu-3.84tb" and c["sized_on"]["write_iops"] == "sustained"
    assert (c["count"], c["price_usd"]) == (3, 3 * 1459)
    assert c["endurance"]["lifetime_years"] == pytest.approx(21024 / (17.28 * 2 / 3 * 365))
    # ranked by cost over the service life; the cheaper design by purchase price is named and why it fails
    totals = [x["tco"]["total_usd"] for x in doc["candidates"]]
    assert totals == sorted(totals) and doc["ranked_by"] == "tco.total_usd"
    assert doc["cheaper_by_purchase"]["reason"] in ("durability", "endurance")
    assert doc["binding"] in ("durability", "endurance")
    assert doc["terms"]["service_years"] == 5 and doc["terms"]["usd_per_kwh"] == 0.13


@pytest.mark.slow
def test_the_terminal_shows_life_and_tco(tmp_path):
    r = call_main("plan", "size", *OLTP, "--out", "run", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    words = " ".join(r.stdout.split())     # the notes wrap at the terminal's width
    for text in ("TCO 5y", "life", "17.28 TB a day", "durable writes required"):
        assert text in words, text
    assert "binding: durability" in r.stdout or "binding: endurance" in r.stdout


@pytest.mark.slow
def test_a_warehouse_temp_tier_may_buy_consumer_drives(tmp_path):
    # client drives are offered under --grade lab only (production: datacenter drives)
    doc = ok_json(tmp_path, "plan", "size", "--read-iops", "40000", "--write-iops", "200", "--read-mbps", "1500",
                  "--capacity-gb", "2000", "--durable-writes", "no", "--grade", "lab")
    c = doc["candidates"][0]
    assert "consumer" in c["device"]
    assert doc["durable_writes"] == {"required": False, "reason": doc["durable_writes"]["reason"]}
    assert "scratch" in doc["durable_writes"]["reason"]


def test_worn_replace_prices_replacements(tmp_path):
    doc = ok_json(tmp_path, "plan", "size", *OLTP, "--worn", "replace", "--devices", "sata-ssd-enterprise-3.84tb",
                  "--layouts", "raid10")
    c = doc["candidates"][0]
    # the rates alone take the smallest raid10, 4 drives (26,000 read and 19,500 write IOPS together fit
    # 4 x 98,000 / 4 x 30,000 / 2; 5,200 GB <= 2 x 3,840 = 7,680), each writing 17.28 x 2 / 4 = 8.64 TB a day;
    # 1 DWPD x 3.84 TB x 365 x 5 = 7,008 TBW lasts 2.2222 years: 2 replacements of each over 5 years
    assert c["count"] == 4 and c["endurance"]["lifetime_years"] == pytest.approx(7008 / (8.64 * 365))
    assert c["tco"]["replacements_usd"] == 4 * 2 * 1152 and c["endurance"]["replacements_per_device"] == 2


@pytest.mark.slow
def test_written_bytes_and_instances_from_a_history_run(tmp_path):
    run = history_run(tmp_path, {"read_iops": 2000, "write_iops": 1000, "read_mbps": 50, "write_mbps": 40,
                                 "capacity_gb": 3000, "percentile": 95, "headroom": 0.3,
                                 "write_tb_per_day": 0.8, "write_days_percentile": 95, "write_days_counted": 30,
                                 "read_tb_per_day": 2.0, "instances": 2, "clustered": True})
    doc = ok_json(tmp_path, "plan", "size", "--from-history", str(run))
    assert doc["requirement"]["write_tb_per_day"] == 0.8 and doc["requirement"]["instances"] == 2
    assert "p95 of 30 days" in doc["requirement"]["daily_source"]
    # a RAC database: only storage every node reaches (a shared array or a multi-attach volume)
    assert doc["topology"]["clustered"] is True
    from dbtier.model.plan.catalog import load_catalog
    cat = load_catalog()
    for c in doc["candidates"]:     # a shared array (its controllers serve every node) or a shared catalog device
        assert "array" in c or cat.device(c["device"]).shared_access, c["device"]
    assert any(d["reason"] == "topology" for d in doc["dropped"])
    assert doc["host_writes"]["write_tb_per_day"] == 0.8 and doc["host_writes"]["basis"].startswith("history run")
    # the command line wins over the history's figure
    doc2 = ok_json(tmp_path, "plan", "size", "--from-history", str(run), "--write-tb-per-day", "0.2",
                   "--instances", "1", out="run2")
    assert doc2["host_writes"]["write_tb_per_day"] == 0.2 and doc2["topology"]["clustered"] is False


@pytest.mark.slow
def test_a_probe_run_is_passed_and_recorded(tmp_path):
    run = probe_run(tmp_path)
    doc = ok_json(tmp_path, "plan", "size", "--write-iops", "1000", "--capacity-gb", "500", "--probe", str(run))
    p = doc["terms"]["probe"]
    # the saved probe: 10,384 durable commits/s, fsync judged honest
    assert p["commits_per_s"] == pytest.approx(10384.307846) and p["fsync_honest"] is True and p["used"] is True


def test_studies_still_priced_on_the_purchase_price(tmp_path):
    # the 2010 blog: 889 disks + 56 HBA units against one card, x16.1 on the purchase price; the TCO columns
    # beside it count the kilowatts too (889 x 6.6 W + 56 x 70 W against the card's 20 W)
    doc = ok_json(tmp_path, "plan", "equivalent", "--reference", CARD, "--using", DISK, "--server-ports", "0")
    m = doc["by_metric"]["iops"]
    assert (m["count"], m["price_usd"], round(m["price_ratio"], 1)) == (889, 322_700, 16.1)
    hours = 5 * 8766
    disks_w, card_w = 889 * 6.6 + 56 * 70, 20
    assert m["tco"]["energy_usd"] == pytest.approx(disks_w * hours / 1000 * 0.13)
    assert m["reference_tco"]["energy_usd"] == pytest.approx(card_w * hours / 1000 * 0.13)
    assert m["tco_ratio"] == pytest.approx((322_700 + disks_w * hours / 1000 * 0.13)
                                           / (20_000 + card_w * hours / 1000 * 0.13))


@pytest.mark.parametrize("args, needle", [
    (("--service-years", "0"), "--service-years"),
    (("--service-years", "-2"), "--service-years"),
    (("--waf", "0.5"), "--waf must be a number of at least 1"),
    (("--usd-per-kwh", "nan"), "--usd-per-kwh"),
    (("--usd-per-kwh", "0"), "--usd-per-kwh"),
    (("--write-tb-per-day", "inf"), "--write-tb-per-day"),
    (("--write-burst-seconds", "0"), "--write-burst-seconds"),
    (("--worn", "later"), "--worn"),
])
def test_bad_life_options(tmp_path, args, needle):
    fails(tmp_path, "plan", "size", *OLTP, *args, needles=(needle,))


def test_bad_catalog_endurance_names_the_file_and_entry(tmp_path):
    cat = tmp_path / "mine.toml"
    cat.write_text(Path(__file__).parent.parent.joinpath("data", "catalog", "life.toml").read_text()
                   .replace("endurance_tbw = 1200\nwarranty_years = 5\npower_loss_protection = false\n"
                            "flush_write_iops = 500", "endurance_tbw = -1\nwarranty_years = 5\n"
                            "power_loss_protection = false\nflush_write_iops = 500", 1))
    fails(tmp_path, "plan", "size", *OLTP, "--catalog", str(cat),
          needles=(f"{cat}: device #2 (id 't-client-2tb'): field 'endurance_tbw' must be positive",))


def test_a_probe_that_is_not_one(tmp_path):
    run = history_run(tmp_path, None)
    fails(tmp_path, "plan", "size", *OLTP, "--probe", str(run), needles=("--probe", "not a `dbtier probe` run"))


@pytest.mark.slow
def test_a_rac_history_plans_shared_storage(tmp_path):
    """From a real import to the plan: PRODRAC's two instances (the AWR export with a second instance, README in
    tests/data/history) consolidated, its requirement, then plan size: only storage every node reaches."""
    from test_history_cli import RAC, dbtier_json
    dbtier_json(tmp_path, "history", "import", "--source", "awr", str(RAC), "--out", str(tmp_path / "a"))
    dbtier_json(tmp_path, "history", "consolidate", str(tmp_path / "a"), "--out", str(tmp_path / "c"))
    dbtier_json(tmp_path, "history", "requirement", str(tmp_path / "c"), "--capacity-gb", "2000",
                "--out", str(tmp_path / "r"))
    doc = ok_json(tmp_path, "plan", "size", "--from-history", str(tmp_path / "r"), out="p")
    assert doc["requirement"]["instances"] == 2 and doc["topology"]["clustered"] is True
    from dbtier.model.plan.catalog import load_catalog
    from dbtier.model.plan.shared_array import shipped_arrays
    shared = {d.id for d in load_catalog().devices.values() if d.shared_access} | {a.id for a in shipped_arrays()}
    assert {c["device"] for c in doc["candidates"]} <= shared
    # the bytes a day came from the history (its days), not the peak held 24 h
    assert doc["host_writes"]["basis"].startswith("history run") and doc["host_writes"]["write_tb_per_day"] > 0
