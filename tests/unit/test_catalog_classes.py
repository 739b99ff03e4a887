"""A device's class, grade, price date and 4 KiB endurance rating: loading, checks, and the shipped data."""

from __future__ import annotations

import pytest

from dbtier.core.errors import DbtierError
from dbtier.model.plan.catalog import load_catalog, parse_catalog_text

QLC = """
[[device]]
id = "qlc-30tb"
name = "A QLC drive"
kind = "nvme"
interface = "pcie4-x4"
capacity_gb = 30720
price_usd = 2500
read_iops = 1000000
write_iops = 30000
read_mbps = 7000
write_mbps = 3000
read_latency_us = 90
write_latency_us = 30
dwpd = 0.6
endurance_write_kib = 64
dwpd_4k = 0.1
warranty_years = 5
device_class = "nvme-qlc"
grade = "datacenter"
price_date = "2025-06"
price_source = "class estimate"
source = "test"
"""


def parse_one(text: str):
    devices, _ = parse_catalog_text(text, "user.toml")
    return devices[0]


def error_of(text: str) -> str:
    with pytest.raises(DbtierError) as exc:
        parse_catalog_text(text, "user.toml")
    return exc.value.message


def test_new_fields_load():
    d = parse_one(QLC)
    assert (d.device_class, d.grade, d.price_date, d.price_source) == ("nvme-qlc", "datacenter", "2025-06",
                                                                      "class estimate")
    assert (d.dwpd_4k, d.endurance_write_kib) == (0.1, 64)


def test_new_fields_are_optional():
    text = "\n".join(line for line in QLC.splitlines()
                     if not line.startswith(("dwpd_4k", "endurance_write_kib", "device_class", "grade", "price_date",
                                                 "price_source")))
    d = parse_one(text)
    assert d.device_class is d.grade is d.price_date is d.price_source is d.dwpd_4k is d.endurance_write_kib is None


def test_qlc_is_rated_at_4k_random_writes():
    # by hand: 0.1 drive writes a day x 30.72 TB x 365 days x 5 years = 5,606.4 TB,
    # not the 0.6 x 30.72 x 365 x 5 = 33,638.4 TB its 64 KiB rating gives
    d = parse_one(QLC)
    assert d.rated_tbw == pytest.approx(5606.4)
    assert d.rated_dwpd == pytest.approx(0.1)
    assert "dwpd_4k" in (d.endurance_basis or "") and "64 KiB" in (d.endurance_basis or "")


def test_without_dwpd_4k_the_dwpd_rating_holds():
    d = parse_one(QLC.replace("dwpd_4k = 0.1\n", ""))
    assert d.rated_tbw == pytest.approx(0.6 * 30.72 * 365 * 5)


def test_endurance_reports_the_4k_basis():
    from dbtier.model.plan.endurance import SetLoad, set_endurance
    d = parse_one(QLC)
    load = SetLoad(write_tb_per_day=1.0, read_tb_per_day=0.0, random=True, role="data")
    doc = set_endurance(d, "jbod", 1, load, waf=1.0, service_years=5)
    assert "dwpd_4k" in doc["figure_source"]
    # 1 TB a day, WAF 1, one device: 5,606.4 TB / 365 TB a year = 15.36 years
    assert doc["lifetime_years"] == pytest.approx(5606.4 / 365)


@pytest.mark.parametrize("line, field, words", [
    ('grade = "enterprise"', "grade", "must be one of datacenter, client"),
    ('grade = 1', "grade", "must be a string"),
    ('device_class = "NVMe MU"', "device_class", "lowercase-kebab"),
    ('price_date = "2025-13"', "price_date", "YYYY-MM"),
    ('price_date = "2025-02-30"', "price_date", "YYYY-MM"),
    ('price_date = "June 2025"', "price_date", "YYYY-MM"),
    ('dwpd_4k = -1', "dwpd_4k", "must be positive"),
    ('endurance_write_kib = 4096', "endurance_write_kib", "at most"),
    ('price_source = ""', "price_source", "is empty"),
])
def test_bad_values_name_file_entry_and_field(line, field, words):
    key = line.split(" = ")[0]
    text = "\n".join(line if existing.startswith(key + " ") else existing for existing in QLC.splitlines())
    msg = error_of(text)
    assert "user.toml" in msg and "device #1 (id 'qlc-30tb')" in msg and f"'{field}'" in msg and words in msg


def test_existing_entries_carry_class_and_grade():
    c = load_catalog()
    assert (c.device("nvme-enterprise-3.84tb").device_class, c.device("nvme-enterprise-3.84tb").grade) == \
        ("nvme-ri-gen4", "datacenter")
    assert c.device("nvme-consumer-2tb").grade == "client"
    assert c.device("sas-15k-73gb").device_class == "study" and c.device("sas-15k-73gb").grade is None


# --- the shipped data ---------------------------------------------------------

@pytest.fixture(scope="module")
def shipped():
    return load_catalog()


def physical(cat):
    """Devices bought and installed one by one (shared arrays are priced per usable TB, elsewhere)."""
    return [d for d in cat.devices.values() if d.kind != "shared-array"]


def test_every_entry_has_a_class_and_every_non_study_entry_a_grade(shipped):
    for d in physical(shipped):
        assert d.device_class, d.id
        if d.device_class == "study":
            assert d.grade is None and d.origin == "shipped:legacy.toml", d.id
        else:
            assert d.grade in ("datacenter", "client"), d.id


def test_datacenter_flash_is_protected_rated_warranted_and_dated(shipped):
    dc_flash = [d for d in physical(shipped) if d.flash and d.grade == "datacenter"]
    assert len(dc_flash) >= 30
    for d in dc_flash:
        assert d.power_loss_protection is True, d.id
        assert d.dwpd and d.warranty_years, d.id
        assert d.price_date and d.price_source, d.id


def test_every_shipped_price_says_its_channel(shipped):
    for d in physical(shipped):
        if d.device_class != "study":
            assert d.price_source, d.id
            assert "class estimate" in d.price_source or d.price_date, d.id


def test_the_classes_and_capacity_points_are_there(shipped):
    points = {(d.device_class, d.capacity_gb) for d in shipped.devices.values()}
    want = [("nvme-ri-gen4", c) for c in (1920, 3840, 7680, 15360)] + \
           [("nvme-mu-gen4", c) for c in (1600, 3200, 6400, 12800)] + \
           [("nvme-qlc", c) for c in (30720, 61440, 122880)] + [("nvme-ri-gen5", 30720)]
    assert set(want) <= points
    classes = {d.device_class for d in shipped.devices.values()}
    assert {"nvme-mu-gen5", "nvme-wi", "sas-ssd-ri", "sas-ssd-mu", "sata-ent-ri", "sata-ent-mu", "hdd-nl",
            "hdd-10k", "nvme-client", "sata-client", "study"} <= classes
    wi = [d for d in shipped.devices.values() if d.device_class == "nvme-wi"]
    assert all(35 <= d.dwpd <= 100 and 400 <= d.capacity_gb <= 3200 for d in wi)
    assert all(d.workload_tb_per_year for d in shipped.devices.values() if d.device_class == "hdd-nl")


def test_qlc_entries_are_rated_at_4k(shipped):
    """The shipped 61.44 TB QLC point by hand: 0.42 DWPD at 16 KiB / 4 = 0.105 DWPD at 4 KiB;
    0.105 x 61.44 TB x 365 x 5 years = 11,773.44 TB written."""
    d = shipped.device("nvme-qlc-61.44tb")
    assert (d.dwpd, d.endurance_write_kib, d.dwpd_4k) == (0.42, 16, 0.105)
    assert d.rated_tbw == pytest.approx(11773.44)
    for q in (x for x in shipped.devices.values() if x.device_class == "nvme-qlc"):
        assert q.dwpd_4k is not None and q.dwpd_4k < q.dwpd and q.endurance_write_kib > 4, q.id


def test_write_iops_do_not_fall_as_capacity_rises_within_a_family(shipped):
    """The survey's rule (§1.4): within a family the smaller drive writes less. QLC is the exception the
    survey shows (Solidigm D5-P5336: 61.44 TB 38K, 122.88 TB 25K), kept as the datasheets give it."""
    families: dict[str, list] = {}
    for d in physical(shipped):
        if d.device_class not in ("study", "nvme-qlc"):
            families.setdefault(d.device_class, []).append(d)
    assert len(families) >= 10
    for cls, devs in families.items():
        devs.sort(key=lambda d: d.capacity_gb)
        for small, large in zip(devs, devs[1:]):
            assert small.write_iops <= large.write_iops, (cls, small.id, large.id)
            assert small.sustained_write_iops is None or large.sustained_write_iops is None or \
                small.sustained_write_iops <= large.sustained_write_iops, (cls, small.id, large.id)


def test_existing_ids_keep_working(shipped):
    for id in ("nvme-enterprise-3.84tb", "sata-ssd-enterprise-3.84tb", "nvme-consumer-2tb", "sata-ssd-consumer-2tb",
               "hdd-7200-20tb"):
        assert shipped.device(id).origin == "shipped:current.toml"
