"""`dbtier.model.plan.plandoc`: the plan document's pricing note, budget body, number texts and the
requirement from options; every expected value written out by hand."""

from __future__ import annotations

import math

import pytest

from dbtier.core.errors import DbtierError
from dbtier.model.plan.catalog import load_catalog
from dbtier.model.plan.plandoc import (budget_body, number_text, pricing, requirement_from_options, usd_text)
from dbtier.model.plan.planner import budget

NO_REQ = {"read_iops": None, "write_iops": None, "read_mbps": None, "write_mbps": None, "capacity_gb": None}


def test_number_and_usd_text():
    assert number_text(None) == "-"
    assert number_text(math.inf) == "∞"
    assert number_text(2.5) == "2.50"            # a small fraction keeps two decimals
    assert number_text(3.0) == "3"
    assert number_text(1234.6) == "1,235"
    assert number_text(1234.56, 1) == "1,234.6"
    assert usd_text(None) == "-"
    assert usd_text(7.5) == "$7.50"             # cents only below $10
    assert usd_text(12.5) == "$12"              # 12.5 rounds half to even
    assert usd_text(20_000) == "$20,000"


def test_pricing_catalog_ports():
    p = pricing(8, None, False)
    assert p == {"basis": "devices and overheads", "server_ports": 8, "server_ports_from": "catalog",
                 "text": "devices and overheads, on a server with 8 drive ports of its own (the catalog's default): "
                         "HBA/enclosure units are priced only past them; PCIe cards and NVMe drives need none"}


def test_pricing_one_port_from_option_and_devices_only():
    p = pricing(8, 1, False)
    assert p["server_ports"] == 1 and p["server_ports_from"] == "--server-ports"
    assert p["text"].startswith("devices and overheads, on a server with 1 drive port of its own (--server-ports)")
    d = pricing(8, None, True)
    assert d["basis"] == "devices only" and d["server_ports"] == 8
    assert d["text"] == ("devices only (--devices-only): controllers, enclosures and slots are not priced; "
                         "their MB/s ceilings still apply")


def test_budget_body_left_and_note():
    cat = load_catalog()
    disk, card = "sas-15k-73gb", "fusionio-iodrive-duo-1.2tb"
    one = cat.device(disk).price_usd
    assert cat.device(card).price_usd > 3 * one
    # a budget of exactly 3 disks (devices only) buys 3 disks and leaves 0; it buys no card at all
    body = budget_body(budget(cat, 3 * one, [disk, card], devices_only=True), 3 * one, "jbod", 0.5)
    t, c = body["options"]
    assert (t["count"], t["price_usd"], t["left_usd"]) == (3, 3 * one, 0.0)
    assert "note" not in t
    assert (c["count"], c["price_usd"], c["left_usd"], c["array"]) == (0, 0, 3 * one, None)
    assert c["note"] == ("the budget buys no jbod array of it: the smallest costs "
                         f"${cat.device(card).price_usd:,.0f}")
    assert (body["usd"], body["layout"], body["read_fraction"]) == (3 * one, "jbod", 0.5)


def test_requirement_from_options_given():
    req, hist = requirement_from_options({**NO_REQ, "read_iops": 2000.0}, None, None)
    assert hist is None
    assert (req.read_iops, req.write_iops, req.headroom, req.source) == (2000.0, None, 0.3, "command line")
    req, _ = requirement_from_options(NO_REQ, 500.0, 0.0)       # a latency ceiling alone is a requirement
    assert (req.max_read_latency_us, req.headroom) == (500.0, 0.0)


def test_requirement_from_options_none_given():
    with pytest.raises(DbtierError) as e:
        requirement_from_options(NO_REQ, None, 0.5)
    assert e.value.message == "no requirement given"
    assert e.value.hint.endswith("or --from-history RUN_DIR")


def test_requirement_from_history_options_override():
    history = {"command": "history", "requirement": {"read_iops": 1000, "write_iops": 400, "read_mbps": None,
                                                      "write_mbps": 50, "capacity_gb": 200, "headroom": 0.5,
                                                      "percentile": 95}}
    req, hist = requirement_from_options({**NO_REQ, "write_iops": 900.0}, None, None, history, "runs/h/")
    assert (req.read_iops, req.write_iops, req.read_mbps, req.write_mbps, req.capacity_gb) == \
        (1000.0, 900.0, None, 50.0, 200.0)
    assert req.headroom == 0.5                  # the history run's, as no --headroom was given
    assert hist == {"run_dir": "runs/h", "requirement": history["requirement"]}
