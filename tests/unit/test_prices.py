"""model/plan/prices.py: quotes read, checked and applied to a catalog; stale quotes; the grade filter; and the
catalog template (model/plan/catalog_template.py) loading as a catalog file. Pure, engine-free; every expected
figure is worked by hand from tests/data/catalog/grades.toml."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from dbtier.core.errors import DbtierError
from dbtier.model.plan import catalog_template
from dbtier.model.plan.catalog import DEVICE_CLASSES, load_catalog, parse_catalog_file
from dbtier.model.plan.prices import apply_prices, grade_filter, is_stale, load_prices, parse_prices, price_basis
from dbtier.model.plan.requirement import Requirement
from dbtier.model.plan.service import Terms
from dbtier.model.plan.sizing import size

DATA = Path(__file__).resolve().parent.parent / "data"
GRADES = DATA / "catalog" / "grades.toml"
TODAY = dt.date(2026, 11, 28)
DC, CLIENT, STUDY = "t-dc-nvme-1tb", "t-client-nvme-2tb", "t-study-card"
HEADER = "id,price_usd,currency,date,source\n"


@pytest.fixture(scope="module")
def catalog():
    return load_catalog([GRADES])


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def raid10_2000(cat):
    """2,000 GB usable, no headroom, raid10 only, ranked by purchase: 4 x 1,000 GB devices (n/2 x 1,000 >= 2,000)."""
    req = Requirement(capacity_gb=2000, headroom=0)
    return size(cat, req, [DC], ["raid10"], terms=Terms(cost="purchase")).candidates[0]


# -- applied --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["quotes.csv", "quotes.toml"])
def test_a_quote_changes_the_plan_by_quote_times_count(catalog, name):
    before = raid10_2000(catalog)
    assert (before.evaluation.config.count, before.evaluation.price_usd) == (4, 2000)     # 4 x $500
    priced, doc = load_prices(DATA / "prices" / name, catalog, TODAY)
    after = raid10_2000(priced)
    assert (after.evaluation.config.count, after.evaluation.price_usd) == (4, 1680)       # 4 x $420
    assert before.evaluation.price_usd - after.evaluation.price_usd == 4 * (500 - 420)
    d = priced.device(DC)
    assert (d.price_usd, d.price_date, d.price_source) == (420, "2026-10-02", "reseller quote Q-1")
    assert doc["applied"] == [{"id": DC, "price_usd": 420, "date": "2026-10-02", "source": "reseller quote Q-1",
                               "stale": False, "line": 3 if name.endswith(".csv") else 2,
                               "catalog_price_usd": 500, "catalog_price_date": "2026-06",
                               "catalog_price_source": "test figure"}]
    assert doc["notes"] == [] and doc["file"].endswith(name)
    assert priced.overridden[f"price:{DC}"] == str(GRADES)
    # the original catalog is left as it was
    assert catalog.device(DC).price_usd == 500 and f"price:{DC}" not in catalog.overridden


def test_price_basis_says_which_price(catalog):
    assert price_basis(catalog.device(DC))["text"] == "the catalog's: $500.00 of 2026-06 (test figure)"
    priced, doc = load_prices(DATA / "prices" / "quotes.csv", catalog, TODAY)
    b = price_basis(priced.device(DC), doc)
    assert b["from"] == "quote" and b["price_usd"] == 420 and b["stale"] is False
    assert "quoted: $420.00 of 2026-10-02" in b["text"] and "the catalog's: $500.00 of 2026-06" in b["text"]


# -- stale ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("date,stale", [
    ("2025-11-28", False),   # exactly a year before today
    ("2025-11-27", True),    # a day more
    ("2025-11", False),      # a month counts from its last day, 2025-11-30: within the year
    ("2025-10", True),       # 2025-10-31: more than a year
])
def test_stale_is_more_than_a_year_before_today(date, stale):
    assert is_stale(date, TODAY) is stale


def test_a_stale_quote_is_applied_and_flagged(catalog):
    priced, doc = load_prices(DATA / "prices" / "stale.csv", catalog, TODAY)
    assert priced.device(DC).price_usd == 450
    (a,) = doc["applied"]
    assert a["stale"] is True and a["source"].endswith("stale.csv line 2")
    (note,) = doc["notes"]
    assert "2024-03" in note and "more than a year old on 2026-11-28" in note
    # a day after the quote it is not stale
    _, fresh = load_prices(DATA / "prices" / "stale.csv", catalog, dt.date(2024, 4, 1))
    assert fresh["applied"][0]["stale"] is False and fresh["notes"] == []


# -- bad input ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("row,needles", [
    ("t-dc-nvme-1t,420,USD,2026-10,x", ("line 2", "unknown device id 't-dc-nvme-1t'", "'t-dc-nvme-1tb'")),
    ("t-dc-nvme-1tb,420,EUR,2026-10,x", ("line 2", "currency 'EUR'", "only USD is read")),
    ("t-dc-nvme-1tb,0,USD,2026-10,x", ("line 2", "price_usd 0 is not a positive number")),
    ("t-dc-nvme-1tb,-5,USD,2026-10,x", ("price_usd -5 is not a positive number",)),
    ("t-dc-nvme-1tb,$420,USD,2026-10,x", ("price_usd '$420' is not a positive number",)),
    ("t-dc-nvme-1tb,nan,USD,2026-10,x", ("price_usd nan is not a positive number",)),
    ("t-dc-nvme-1tb,420,USD,2026-13,x", ("line 2", "date '2026-13' is not a date")),
    ("t-dc-nvme-1tb,420,USD,02/10/2026,x", ("date '02/10/2026' is not a date",)),
    ("t-dc-nvme-1tb,420,USD,2027-01-01,x", ("date '2027-01-01' is after today (2026-11-28)",)),
    ("t-dc-nvme-1tb,420,USD,,x", ("line 2", "no date")),
    ("t-dc-nvme-1tb,420,USD,2026-10,x\nt-dc-nvme-1tb,400,USD,2026-11,y",
     ("line 3", "id 't-dc-nvme-1tb' is quoted again (first on line 2)")),
])
def test_each_bad_csv_line_is_one_clear_error(tmp_path, catalog, row, needles):
    p = write(tmp_path, "q.csv", HEADER + row + "\n")
    with pytest.raises(DbtierError) as exc:
        load_prices(p, catalog, TODAY)
    msg = exc.value.message
    assert str(p) in msg
    for n in needles:
        assert n in msg, msg
    assert exc.value.hint


def test_the_currency_error_says_to_convert_first(tmp_path, catalog):
    p = write(tmp_path, "q.csv", HEADER + "t-dc-nvme-1tb,420,EUR,2026-10,x\n")
    with pytest.raises(DbtierError) as exc:
        load_prices(p, catalog, TODAY)
    assert "convert" in exc.value.hint


@pytest.mark.parametrize("text,needles", [
    ('[[price]]\nid = "t-dc-nvme-1tb"\nprice_usd = 420\ncurrency = "GBP"\ndate = "2026-10"\n',
     ("line 1", "currency 'GBP'", "only USD")),
    ('# a quote\n\n[[price]]\nid = "nope"\nprice_usd = 420\ncurrency = "USD"\ndate = "2026-10"\n',
     ("line 3", "unknown device id 'nope'")),
    ('[[price]]\nid = "t-dc-nvme-1tb"\nprice_usd = -1\ncurrency = "USD"\ndate = "2026-10"\n',
     ("price_usd -1 is not a positive number",)),
    ('[[price]]\nid = "t-dc-nvme-1tb"\nprice_usd = 420\ncurrency = "USD"\ndate = "2026-02-30"\n',
     ("date '2026-02-30' is not a date",)),
    ('[[price]]\nid = "t-dc-nvme-1tb"\nprice_usd = 420\ncurrency = "USD"\ndate = "2026-10"\n'
     '[[price]]\nid = "t-dc-nvme-1tb"\nprice_usd = 400\ncurrency = "USD"\ndate = "2026-11"\n',
     ("line 6", "quoted again (first on line 1)")),
    ('[[price]]\nid = "t-dc-nvme-1tb"\nprice = 420\n', ("unknown field 'price'",)),
    ('[[quote]]\nid = "x"\n', ("unknown top-level key 'quote'",)),
])
def test_each_bad_toml_quote_is_one_clear_error(tmp_path, catalog, text, needles):
    p = write(tmp_path, "q.toml", text)
    with pytest.raises(DbtierError) as exc:
        load_prices(p, catalog, TODAY)
    for n in needles:
        assert n in exc.value.message, exc.value.message


@pytest.mark.parametrize("text,needle", [
    ("id,price_usd,currency\nx,1,USD\n", "no 'date' column"),
    ("id,price,currency,date\n", "unknown column 'price'"),
    ("", "no header and no quotes"),
    (HEADER, "no quotes in it"),
])
def test_a_bad_csv_header_or_an_empty_file(text, needle):
    with pytest.raises(DbtierError) as exc:
        parse_prices(text, "q.csv", "csv", TODAY)
    assert needle in exc.value.message


def test_an_overhead_id_is_not_a_device_quote(tmp_path, catalog):
    oid = next(iter(catalog.overheads))
    with pytest.raises(DbtierError) as exc:
        apply_prices(catalog, parse_prices(HEADER + f"{oid},100,USD,2026-10\n", "q.csv", "csv", TODAY), "q.csv",
                     TODAY)
    assert "is an overhead" in exc.value.message and "line 2" in exc.value.message


# -- grade ----------------------------------------------------------------------------------------------------

def test_production_leaves_client_drives_and_study_devices_out(catalog):
    graded, doc = grade_filter(catalog, "production")
    assert DC in graded.devices and CLIENT not in graded.devices and STUDY not in graded.devices
    out = {x["device"]: x["reason"] for x in doc["left_out"]}
    assert out[CLIENT] == "grade" and out[STUDY] == "study"
    assert doc["grade"] == "production" and doc["allows"] == ["datacenter"]
    # every shipped client drive is left out too, every shipped datacenter one kept
    assert all(d.grade != "client" for d in graded.devices.values())
    assert all(d.id in graded.devices for d in catalog.devices.values() if d.grade == "datacenter")


def test_lab_offers_client_drives_and_the_plan_picks_the_cheaper(catalog):
    graded, doc = grade_filter(catalog, "lab")
    assert CLIENT in graded.devices and STUDY not in graded.devices
    assert doc["allows"] == ["datacenter", "client"] and "lab" in doc["text"]
    # 2,000 GB mirrored: 2 x the 2 TB client drive = $120; under production it is not offered at all
    req = Requirement(capacity_gb=2000, headroom=0)
    lab = size(graded, req, [CLIENT, DC], ["raid10", "raid1"], terms=Terms(cost="purchase"))
    assert (lab.candidates[0].evaluation.config.device.id, lab.candidates[0].evaluation.price_usd) == (CLIENT, 120)
    prod, _ = grade_filter(catalog, "production")
    only_dc = size(prod, req, None, ["raid10", "raid1"], terms=Terms(cost="purchase"), top=50)
    assert CLIENT not in {c.evaluation.config.device.id for c in only_dc.candidates}


def test_named_devices_a_study_one_kept_a_client_one_refused_under_production(catalog):
    graded, doc = grade_filter(catalog, "production", [STUDY, DC])
    # named, the search takes those alone: the catalog stays whole and nothing is left out
    assert set(graded.devices) == set(catalog.devices) and doc["left_out"] == []
    # a named study card is sized: 200 GB raid10 of 100 GB cards, no headroom = 4 x $1,000
    req = Requirement(capacity_gb=200, headroom=0)
    sz = size(graded, req, [STUDY], ["raid10"], terms=Terms(cost="purchase"))
    assert (sz.candidates[0].evaluation.config.count, sz.candidates[0].evaluation.price_usd) == (4, 4000)
    with pytest.raises(DbtierError) as exc:
        grade_filter(catalog, "production", [CLIENT])
    assert "a client drive" in exc.value.message and "--grade lab" in exc.value.hint
    graded, _ = grade_filter(catalog, "lab", [CLIENT])
    assert CLIENT in graded.devices
    # an id the catalog lacks is left to the planner (a shipped array's id, or a typo it answers)
    graded, _ = grade_filter(catalog, "production", ["t-dc-nvme"])
    with pytest.raises(DbtierError) as exc:
        size(graded, req, ["t-dc-nvme"], ["raid10"])
    assert "did you mean" in exc.value.message and DC in exc.value.message


def test_an_entry_without_a_grade_is_offered_and_named(tmp_path):
    text = GRADES.read_text().replace('grade = "datacenter"\n', "", 1)
    cat = load_catalog([write(tmp_path, "c.toml", text)])
    graded, doc = grade_filter(cat, "production")
    assert DC in graded.devices and DC in doc["unstated"]


# -- the template ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("cls", catalog_template.classes())
def test_the_template_of_every_class_loads_and_names_every_field(cls):
    text = catalog_template.template(cls, "2026-11")
    (d,), _, _ = parse_catalog_file(text, "template.toml")
    assert d.device_class == cls and d.price_date == "2026-11"
    for f in catalog_template.device_fields():
        assert f"{f.name} = " in text, f.name


def test_the_template_covers_every_class():
    assert set(catalog_template.classes()) == set(DEVICE_CLASSES)
    with pytest.raises(DbtierError) as exc:
        catalog_template.template("nvme-gen9")
    assert "not a device class" in exc.value.message
