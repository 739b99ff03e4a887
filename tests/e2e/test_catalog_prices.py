"""--prices and --grade through the real entry point: `catalog list` by class, `catalog show --prices`,
`catalog template` loaded back with --catalog, `plan size|budget --prices/--grade`, `advise --grade/--prices`.
Engine-free; prices worked by hand from tests/data/catalog/grades.toml (4 x $500 raid10, quoted $420)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import DATA, assert_clean_error, call_main

GRADES = str(DATA / "catalog" / "grades.toml")
QUOTES = DATA / "prices"
DC, CLIENT, STUDY = "t-dc-nvme-1tb", "t-client-nvme-2tb", "t-study-card"
RAID10_2000 = ("plan", "size", "--capacity-gb", "2000", "--headroom", "0", "--layouts", "raid10", "--cost", "purchase",
               "--catalog", GRADES)


def ok(tmp_path: Path, *args: str, json_out: bool = True) -> dict | str:
    r = call_main(*args, *(["--json"] if json_out else []), cwd=tmp_path, env={"COLUMNS": "200"})
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    return json.loads(r.stdout) if json_out else r.stdout


# -- catalog list, show, template ---------------------------------------------------------------------------

def test_list_groups_by_class_with_capacity_dwpd_plp_price_and_date(tmp_path):
    out = ok(tmp_path, "catalog", "list", "--catalog", GRADES, json_out=False)
    lines = out.splitlines()
    # class headers in the catalog's class order (nvme-ri-gen4 ... nvme-client ... study), each device under its own
    heads = {h: next(i for i, x in enumerate(lines) if x.startswith(h + " ") or x.strip() == h)
             for h in ("nvme-ri-gen4", "nvme-client", "study")}
    assert heads["nvme-ri-gen4"] < heads["nvme-client"] < heads["study"]
    row = {x.split()[0]: (i, x.split()) for i, x in enumerate(lines) if x.split() and x.split()[0].startswith("t-")}
    assert heads["nvme-ri-gen4"] < row[DC][0] < heads["nvme-client"] < row[CLIENT][0] < heads["study"] < row[STUDY][0]
    # id, GB, $, price date, $/GB, DWPD (none given: -), PLP
    assert row[DC][1][:7] == [DC, "1,000", "500", "2026-06", "0.50", "-", "yes"]
    assert row[CLIENT][1][:7] == [CLIENT, "2,000", "60", "-", "0.03", "-", "no"]
    for header in ("GB", "$", "price date", "DWPD", "PLP"):
        assert header in out
    doc = ok(tmp_path, "catalog", "list", "--catalog", GRADES)
    d = next(x for x in doc["devices"] if x["id"] == DC)
    assert (d["device_class"], d["grade"], d["price_date"]) == ("nvme-ri-gen4", "datacenter", "2026-06")
    assert {"id", "kind", "capacity_gb", "price_usd", "power_loss_protection", "dwpd", "origin"} <= set(d)
    only = ok(tmp_path, "catalog", "list", "--catalog", GRADES, "--class", "nvme-client")
    assert CLIENT in {x["id"] for x in only["devices"]}
    assert {x["device_class"] for x in only["devices"]} == {"nvme-client"}


def test_show_says_which_price_a_figure_uses(tmp_path):
    doc = ok(tmp_path, "catalog", "show", DC, "--catalog", GRADES)
    assert doc["price"]["from"] == "catalog" and doc["price"]["date"] == "2026-06"
    doc = ok(tmp_path, "catalog", "show", DC, "--catalog", GRADES, "--prices", str(QUOTES / "quotes.csv"))
    assert doc["device"]["price_usd"] == 420 and doc["price"]["from"] == "quote"
    assert doc["prices"]["applied"][0]["catalog_price_usd"] == 500
    out = ok(tmp_path, "catalog", "show", DC, "--catalog", GRADES, "--prices", str(QUOTES / "stale.csv"),
             json_out=False)
    assert "quoted: $450.00 of 2024-03" in out and "stale price" in out


def test_the_template_loads_with_catalog(tmp_path):
    text = ok(tmp_path, "catalog", "template", "--class", "nvme-mu-gen4", json_out=False)
    assert text.lstrip().startswith("#") and "[[device]]" in text
    (tmp_path / "mine.toml").write_text(text)
    doc = ok(tmp_path, "catalog", "show", "my-nvme-mu-gen4", "--catalog", "mine.toml")
    assert doc["device"]["device_class"] == "nvme-mu-gen4" and doc["device"]["grade"] == "datacenter"
    assert doc["device"]["origin"] == "mine.toml"
    # the JSON carries the same text
    assert ok(tmp_path, "catalog", "template", "--class", "nvme-mu-gen4")["template"] == text
    r = call_main("catalog", "template", "--class", "nvme-gen9", cwd=tmp_path)
    assert_clean_error(r, "--class nvme-gen9: not a device class")


# -- plan ------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["quotes.csv", "quotes.toml"])
def test_plan_size_is_priced_on_the_quote(tmp_path, name):
    base = ok(tmp_path, *RAID10_2000, "--devices", DC)
    assert (base["candidates"][0]["count"], base["candidates"][0]["price_usd"]) == (4, 2000)     # 4 x $500
    assert base["prices"] is None
    doc = ok(tmp_path, *RAID10_2000, "--devices", DC, "--prices", str(QUOTES / name))
    best = doc["candidates"][0]
    assert (best["count"], best["price_usd"]) == (4, 1680)                                        # 4 x $420
    assert best["device_class"] == "nvme-ri-gen4"
    assert doc["prices"]["applied"][0]["price_usd"] == 420 and doc["prices"]["notes"] == []
    assert doc["catalog"]["overridden"][f"price:{DC}"] == GRADES
    assert doc["params"]["prices"] == str(QUOTES / name)


def test_a_stale_quote_is_said_in_the_document_and_on_the_terminal(tmp_path):
    doc = ok(tmp_path, *RAID10_2000, "--devices", DC, "--prices", str(QUOTES / "stale.csv"))
    assert doc["candidates"][0]["price_usd"] == 4 * 450
    assert doc["prices"]["applied"][0]["stale"] is True and "2024-03" in doc["prices"]["notes"][0]
    out = ok(tmp_path, *RAID10_2000, "--devices", DC, "--prices", str(QUOTES / "stale.csv"), json_out=False)
    assert "stale price: t-dc-nvme-1tb: the quote of 2024-03" in out
    assert "nvme-ri-gen4" in out      # the class column


def test_budget_takes_the_quote_too(tmp_path):
    # $2,000 buys 4 x $500, or 4 x $420 = $1,680 (a fifth would be $2,100)
    doc = ok(tmp_path, "plan", "budget", "--usd", "2000", "--devices", DC, "--catalog", GRADES)
    assert (doc["options"][0]["count"], doc["options"][0]["price_usd"]) == (4, 2000)
    doc = ok(tmp_path, "plan", "budget", "--usd", "2000", "--devices", DC, "--catalog", GRADES,
             "--prices", str(QUOTES / "quotes.csv"))
    assert (doc["options"][0]["count"], doc["options"][0]["price_usd"]) == (4, 1680)


def test_grade_production_leaves_client_drives_out_and_lab_offers_them(tmp_path):
    args = ("plan", "size", "--capacity-gb", "2000", "--headroom", "0", "--layouts", "raid1", "raid10", "--cost",
            "purchase", "--catalog", GRADES, "--top", "50")
    prod = ok(tmp_path, *args)
    assert prod["grade"]["grade"] == "production"
    assert CLIENT not in {c["device"] for c in prod["candidates"]}
    assert STUDY not in {c["device"] for c in prod["candidates"]}
    gone = {x["device"]: x["reason"] for x in prod["grade"]["left_out"]}
    assert gone[CLIENT] == "grade" and gone[STUDY] == "study"
    # lab: 2 x the $60 client drive mirrored is the cheapest 2,000 GB
    lab = ok(tmp_path, *args, "--grade", "lab")
    assert (lab["candidates"][0]["device"], lab["candidates"][0]["price_usd"]) == (CLIENT, 120)
    assert lab["candidates"][0]["device_class"] == "nvme-client"
    assert lab["grade"]["grade"] == "lab" and lab["params"]["grade"] == "lab"
    out = ok(tmp_path, *args, json_out=False)
    assert "grade production: datacenter drives only" in out and CLIENT in out
    out = ok(tmp_path, *args, "--grade", "lab", json_out=False)
    assert "grade lab: datacenter and client drives" in out


def test_a_named_study_device_or_shared_array_is_sized_under_production(tmp_path):
    # 200 GB raid10 of the 100 GB study card, no headroom: 4 x $1,000
    doc = ok(tmp_path, "plan", "size", "--capacity-gb", "200", "--headroom", "0", "--layouts", "raid10", "--cost",
             "purchase", "--catalog", GRADES, "--devices", STUDY)
    assert (doc["candidates"][0]["device"], doc["candidates"][0]["price_usd"]) == (STUDY, 4000)
    assert doc["candidates"][0]["device_class"] == "study" and doc["grade"]["left_out"] == []
    doc = ok(tmp_path, "plan", "size", "--capacity-gb", "20000", "--devices", "afa-entry")
    assert doc["candidates"][0]["device"] == "afa-entry"


def test_bad_prices_and_grade_inputs_are_one_clear_error(tmp_path):
    r = call_main(*RAID10_2000, "--devices", CLIENT, "--out", "run", cwd=tmp_path)
    assert_clean_error(r, "a client drive", "--grade lab")
    assert not (tmp_path / "run").exists()
    bad = tmp_path / "eur.csv"
    bad.write_text("id,price_usd,currency,date\nt-dc-nvme-1tb,400,EUR,2026-10\n")
    r = call_main(*RAID10_2000, "--prices", str(bad), "--out", "run", cwd=tmp_path)
    assert_clean_error(r, f"{bad} line 2", "only USD is read")
    assert not (tmp_path / "run").exists()
    r = call_main("plan", "size", "--capacity-gb", "100", "--cloud", "aws", "--prices", str(bad), cwd=tmp_path)
    assert_clean_error(r, "--prices goes with an on-prem plan")
    r = call_main("catalog", "show", DC, "--catalog", GRADES, "--prices", str(tmp_path / "none.csv"), cwd=tmp_path)
    assert_clean_error(r, "prices file", "no such file")


# -- advise ----------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_advise_says_its_grade_and_quotes(tmp_path):
    quotes = tmp_path / "q.csv"
    quotes.write_text("id,price_usd,currency,date,source\nnvme-enterprise-3.84tb,399,USD,2025-06,quote Q-9\n")
    dma = DATA / "history" / "dma" / "dma-oracle19c-single.tgz"
    r = call_main("advise", str(dma), "--cloud", "none", "--grade", "lab", "--prices", str(quotes), "--json",
                  "--out", str(tmp_path / "a"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["advice"]["grade"]["grade"] == "lab"
    assert any(a.startswith("on-prem grade lab:") for a in doc["advice"]["assumptions"])
    assert any(a.startswith("on-prem prices: 1 quote(s)") for a in doc["advice"]["assumptions"])
    assert any(a.startswith("stale price: nvme-enterprise-3.84tb") for a in doc["advice"]["assumptions"])
    assert doc["prices"]["applied"][0]["stale"] is True and doc["params"]["grade"] == "lab"
    r = call_main("advise", str(dma), "--prices", str(tmp_path / "none.csv"), cwd=tmp_path)
    assert_clean_error(r, "prices file", "no such file")
