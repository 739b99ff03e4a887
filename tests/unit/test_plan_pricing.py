"""Overheads in prices: the server's own drive ports, devices-only pricing, and the MySQL study's TPM/$.

Every expected figure is worked by hand in the comments (TPM / price), never by calling the model.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dbtier.core.errors import DbtierError
from dbtier.model.plan.array import Config, check_server_ports, configure, evaluate, parse_spec
from dbtier.model.plan.catalog import Catalog, Device, Overhead, Server, load_catalog
from dbtier.model.plan.planner import value

approx = pytest.approx
STUDY_PRICES = Path(__file__).resolve().parent.parent / "data" / "catalog" / "mysql-study-2009.toml"

# Percona, "RAID vs SSD vs FusionIO" (Vadim Tkachenko, 2009), MySQL 5.4/InnoDB TPC-C-like, 100 warehouses:
RAID10_TPM, X25E_TPM, FUSIONIO_TPM = 7439.85, 10681.05, 17372.25
RAID10, X25E, FUSIONIO = "sas-15k-73gb:8:raid10", "intel-x25e-32gb:1:jbod", "fusionio-iodrive-160gb-slc:1:jbod"


def bench(tpm: float) -> dict:
    """An OLTP bench document whose best point is the study's TPM (TPS = TPM / 60)."""
    return {"schema_version": 1, "command": "bench", "points": [{"clients": 16, "tps": tpm / 60, "tpm": tpm}],
            "knee": None}


def tpm_per_usd(cat: Catalog, spec: str, tpm: float, **pricing) -> float:
    return value(bench(tpm), evaluate(parse_spec(cat, spec, **pricing)), "study").figures["tpm_per_usd"]


# -- the MySQL study -----------------------------------------------------------------------------------------

def test_mysql_study_from_its_own_prices():
    """The study's own prices ($190 disks with --catalog, as the legacy catalog's note says; $390 X25-E;
    $4,800 Fusion-io 160 GB): RAID 10 7,439.85 / (8 x $190 = $1,520) = 4.8946 -> 4.9 TPM/$;
    X25-E 10,681.05 / $390 = 27.387 -> 27.4; Fusion-io 17,372.25 / $4,800 = 3.6192 -> 3.6.
    The 8 disks and the one SSD fit the server's own 8 drive ports (the shipped default), the card needs a
    slot, not an HBA: no overhead is priced, as in the study (which priced drives only)."""
    cat = load_catalog([STUDY_PRICES])
    raid = tpm_per_usd(cat, RAID10, RAID10_TPM)
    ssd = tpm_per_usd(cat, X25E, X25E_TPM)
    card = tpm_per_usd(cat, FUSIONIO, FUSIONIO_TPM)
    assert raid == approx(7439.85 / 1520) and round(raid, 1) == 4.9
    assert ssd == approx(10681.05 / 390) and round(ssd, 1) == 27.4
    assert card == approx(17372.25 / 4800) and round(card, 1) == 3.6
    # devices-only pricing gives the same figures here, since nothing else was priced
    for spec, tpm, want in ((RAID10, RAID10_TPM, 7439.85 / 1520), (X25E, X25E_TPM, 10681.05 / 390),
                            (FUSIONIO, FUSIONIO_TPM, 17372.25 / 4800)):
        assert tpm_per_usd(cat, spec, tpm, devices_only=True) == approx(want)


def test_mysql_study_with_the_shipped_catalog():
    """The shipped catalog carries the study's SSD and card prices: 10,681.05 / $390 = 27.4 TPM/$ and
    17,372.25 / $4,800 = 3.6 TPM/$. Its 15K disk is at the 2010 Microsoft blog's $300: 7,439.85 / (8 x $300 =
    $2,400) = 3.0999 -> 3.1 TPM/$. Before the server's ports were modelled the SSD was charged a $1,000 HBA:
    10,681.05 / $1,390 = 7.68 - still what a server without drive ports of its own (--server-ports 0) gives."""
    cat = load_catalog()
    assert round(tpm_per_usd(cat, X25E, X25E_TPM), 1) == 27.4
    assert tpm_per_usd(cat, X25E, X25E_TPM) == approx(10681.05 / 390)
    assert round(tpm_per_usd(cat, FUSIONIO, FUSIONIO_TPM), 1) == 3.6
    assert tpm_per_usd(cat, FUSIONIO, FUSIONIO_TPM) == approx(17372.25 / 4800)
    assert tpm_per_usd(cat, RAID10, RAID10_TPM) == approx(7439.85 / 2400)
    # a server with no drive ports of its own buys the HBA unit from the first drive
    assert tpm_per_usd(cat, X25E, X25E_TPM, server_ports=0) == approx(10681.05 / 1390)
    assert tpm_per_usd(cat, RAID10, RAID10_TPM, server_ports=0) == approx(7439.85 / 3400)
    # the card never needed an HBA
    assert tpm_per_usd(cat, FUSIONIO, FUSIONIO_TPM, server_ports=0) == approx(17372.25 / 4800)


def test_the_value_result_says_which_pricing_was_used():
    cat = load_catalog()
    v = value(bench(X25E_TPM), evaluate(parse_spec(cat, X25E)), "study")
    assert "pricing: devices and overheads: the drive fits the server's own 8 drive ports: no HBA/enclosure " \
           "is priced" in v.figures_used
    p = v.evaluation.to_dict()["pricing"]
    assert p == {"basis": "devices and overheads", "server_ports": 8, "devices_on_server_ports": 1,
                 "text": p["text"]}
    bare = value(bench(X25E_TPM), evaluate(parse_spec(cat, X25E, devices_only=True)), "study")
    assert bare.evaluation.to_dict()["pricing"]["basis"] == "devices only"
    assert any(u.startswith("pricing: devices only") for u in bare.figures_used)


# -- the server's ports on a hand-made catalog ----------------------------------------------------------------

def dev(id: str, kind: str, interface: str, price: float, mbps: float = 100.0) -> Device:
    return Device(id, id, kind, interface, 100.0, price, 1000.0, 1000.0, mbps, mbps, 100.0, 100.0, "test")


DISK = dev("disk", "hdd", "sas-6g", 300.0)
SSD = dev("ssd", "sata-ssd", "sata-6g", 400.0, 500.0)
CARD = dev("card", "pcie-flash", "pcie2-x4", 5000.0, 1500.0)
HBA = Overhead("hba", "HBA + enclosure per 16", 1000.0, 16, 3200.0, ("sas-6g", "sata-6g"), "test",
               after_server_ports=True)
CABLE = Overhead("cable", "a cable per 4 drives, not a port", 10.0, 4, 100_000.0, ("sas-6g",), "test")
SRV = Server(8, "test")
CAT = Catalog({d.id: d for d in (DISK, SSD, CARD)}, {"hba": HBA}, server=SRV)


def test_units_are_bought_only_past_the_servers_ports():
    """8 server ports, $1,000 per 16 drives past them: 8 disks -> 0 units ($2,400); 9 -> ceil(1/16) = 1
    ($3,700); 24 -> ceil(16/16) = 1 ($8,200); 25 -> ceil(17/16) = 2 ($9,500)."""
    for n, units, price in ((8, 0, 2400), (9, 1, 3700), (24, 1, 8200), (25, 2, 9500)):
        e = evaluate(configure(CAT, "disk", n, "jbod"))
        assert (e.overheads[0]["units"], e.price_usd) == (units, price), n
        assert e.overheads[0]["devices_on_server_ports"] == 8
    # --server-ports 2: 8 disks -> ceil(6/16) = 1 unit: $3,400; 0 ports: ceil(8/16) = 1 unit, also $3,400
    assert evaluate(configure(CAT, "disk", 8, "jbod", server_ports=2)).price_usd == 3400
    assert evaluate(configure(CAT, "disk", 8, "jbod", server_ports=0)).price_usd == 3400
    # a catalog without [server] has no ports of its own: the old rule, 1 unit from the first drive
    bare = Catalog(CAT.devices, CAT.overheads)
    assert evaluate(configure(bare, "disk", 1, "jbod")).price_usd == 1300


def test_the_servers_controller_counts_once_in_the_ceiling():
    """SSDs at 500 MB/s, 8 server ports, 3,200 MB/s per controller. 8 SSDs: the server's own controller only,
    min(4,000, 3,200) = 3,200 MB/s (controller/bus). 20 SSDs: server + ceil(12/16) = 1 unit = 2 controllers,
    min(10,000, 6,400) = 6,400."""
    e8 = evaluate(configure(CAT, "ssd", 8, "jbod"))
    assert e8.read_mbps.value == approx(3200) and e8.read_mbps.limit == "controller/bus"
    assert "the server's own controller (8 on its ports), 1 x 3,200 MB/s" in e8.read_mbps.detail
    e20 = evaluate(configure(CAT, "ssd", 20, "jbod"))
    assert e20.read_mbps.value == approx(6400) and e20.price_usd == 20 * 400 + 1000


def test_overheads_that_supply_no_ports_are_bought_for_every_device():
    """A cable per 4 drives ($10) is not a port: 8 disks on the server's ports still need ceil(8/4) = 2
    cables = $20, and no HBA: 8 x $300 + $20 = $2,420."""
    cat = Catalog(CAT.devices, {"hba": HBA, "cable": CABLE}, server=SRV)
    e = evaluate(configure(cat, "disk", 8, "jbod"))
    assert e.price_usd == 2420
    assert {o["id"]: o["units"] for o in e.overheads} == {"hba": 0, "cable": 2}


def test_pcie_cards_use_no_drive_port_and_mixed_designs_share_no_controller():
    """A card needs a slot, not an HBA: in a preferred-read mirror of 1 card and 20 disks the disks get the
    server's 8 ports: ceil(12/16) = 1 unit: 5,000 + 6,000 + 1,000 = $12,000. With 4 SSDs as the fast side
    (they attach to ports and come first) the SSDs take the server's controller and the 20 disks, which share
    no controller with them, buy ceil(20/16) = 2 units: 1,600 + 6,000 + 2,000 = $9,600."""
    e = evaluate(configure(CAT, "card", 1, "preferred-read-mirror", "disk", 20))
    assert e.price_usd == 12_000
    assert e.to_dict()["pricing"]["devices_on_server_ports"] == 8
    e2 = evaluate(configure(CAT, "ssd", 4, "preferred-read-mirror", "disk", 20))
    assert e2.price_usd == 9600
    assert [(o["role"], o["units"]) for o in e2.overheads] == [("fast side", 0), ("slow side", 2)]
    # a card read cache in front of 10 disks in raid10: the backing set gets the ports: ceil(2/16) = 1 unit
    e3 = evaluate(configure(CAT, "card", 1, "read-cache", "disk", 10, "raid10"))
    assert e3.price_usd == 5000 + 3000 + 1000


def test_devices_only_prices_the_devices_and_keeps_the_ceilings():
    """40 SSDs, no server ports: 3 HBA units would cost $3,000 and pass 9,600 MB/s. Devices only:
    40 x $400 = $16,000, overhead $0, still 9,600 MB/s (the controllers are there, unpriced)."""
    e = evaluate(configure(CAT, "ssd", 40, "jbod", server_ports=0, devices_only=True))
    assert (e.price_usd, e.device_price_usd, e.overhead_price_usd) == (16_000, 16_000, 0)
    assert e.read_mbps.value == approx(9600) and e.read_mbps.limit == "controller/bus"
    assert e.overheads[0]["units"] == 3 and e.overheads[0]["price_usd"] == 0 and e.overheads[0]["priced"] is False
    assert e.to_dict()["pricing"]["basis"] == "devices only"


@pytest.mark.parametrize("bad", [-1, 10_001, True, 1.5, "8", 2**70])
def test_server_ports_are_checked(bad):
    with pytest.raises(DbtierError, match="--server-ports must be a whole number from 0 to 10,000"):
        check_server_ports(bad)
    with pytest.raises(DbtierError):
        configure(CAT, "disk", 4, "jbod", server_ports=bad)


def test_a_config_built_directly_keeps_the_old_rule():
    """Config(...) without server_ports: 0 ports, every unit bought (what tests and callers built before)."""
    e = evaluate(Config(DISK, 4, "jbod", (HBA,)))
    assert e.price_usd == 4 * 300 + 1000
