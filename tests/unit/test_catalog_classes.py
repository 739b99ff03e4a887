"""A device's class, grade, price date and 4 KiB endurance rating: loading, checks, and the shipped data."""

from __future__ import annotations

import pytest

from dbtier.core.errors import DbtierError
from dbtier.model.catalog import load_catalog, parse_catalog_text

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
    from dbtier.model.endurance import SetLoad, set_endurance
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
