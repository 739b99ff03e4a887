"""`plan size --cloud --from-history` on the histories that are not a plain single-instance time series:
a clustered Oracle database (AWR of a 2-instance RAC), refused on every provider's shared disks with Oracle's
own route named, and a DMA collection (hour-of-day statistics), sized without the burst replay and with the
burst risk said. Engine-free: history import, requirement and plan run in this interpreter."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from conftest import DATA, assert_clean_error, call_main
from dbtier.results.schema import result_schema

pytestmark = pytest.mark.slow      # each runs the CLI end to end for a second or more

RAC = DATA / "history" / "awr" / "awr_sysstat_PRODRAC.csv"
DMA = DATA / "history" / "dma" / "dma-oracle19c-single.tgz"


def ok(tmp_path: Path, *args: str) -> dict:
    r = call_main(*args, "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, result_schema())
    return doc


@pytest.fixture()
def rac(tmp_path: Path) -> Path:
    """A requirement of PRODRAC/2: 2 instances, clustered, from an AWR import (engine: oracle)."""
    ok(tmp_path, "history", "import", "--source", "awr", str(RAC), "--out", "imp")
    req = ok(tmp_path, "history", "requirement", "imp", "--database", "PRODRAC/2", "--capacity-gb", "500",
             "--out", "req")
    assert req["requirement"]["instances"] == 2 and req["from"]["source"] == "awr"
    return tmp_path


@pytest.mark.parametrize("cloud, route", [("aws", "Oracle Database@AWS (Exadata)"),
                                          ("azure", "Oracle Database@Azure (Exadata)"),
                                          ("gcp", "Oracle Database@Google Cloud (Exadata)")])
def test_oracle_rac_from_an_awr_history_is_refused_naming_oracles_route(rac, cloud, route):
    r = call_main("plan", "size", "--from-history", "req", "--cloud", cloud, "--out", "p", cwd=rac)
    assert_clean_error(r, "a 2-instance oracle cluster (engine from the history's source (awr))", "RAC",
                       f"price {route} with its provider", "size it on-prem (plan size without --cloud)")
    assert not (rac / "p").exists()


def test_the_engine_option_overrides_the_history_and_one_instance_shares_nothing(rac):
    # SQL Server FCI on AWS: io2 Multi-Attach only (io1 is Linux only), replayed through the history
    doc = ok(rac, "plan", "size", "--from-history", "req", "--cloud", "aws", "--engine", "sqlserver", "--out", "p1")
    assert {c["cloud"]["volume_type"]["type"] for c in doc["candidates"]} == {"io2"}
    c = doc["candidates"][0]["cloud"]
    assert c["attach"] == 2 and c["multi_attach"] is True
    assert any(n.startswith("shared by 2 instances: one io2 volume attached to every instance") for n in c["notes"])
    cl = doc["cluster"]
    assert (cl["engine"], cl["engine_from"], cl["instances"], cl["offered"], cl["types"]) == \
        ("sqlserver", "--engine", 2, True, ["io2"])
    assert doc["burst_checked"] is True and doc["burst_note"] is None
    # --instances 1: a single instance, every AWS type offered, no cluster check
    doc = ok(rac, "plan", "size", "--from-history", "req", "--cloud", "aws", "--instances", "1", "--out", "p2")
    assert doc["cluster"] is None and {"gp3", "io2"} <= {c["cloud"]["volume_type"]["type"] for c in doc["candidates"]}
    # an engine dbtier does not know to cluster: sized on the shareable types, and said
    doc = ok(rac, "plan", "size", "--from-history", "req", "--cloud", "azure", "--engine", "postgresql", "--out", "p3")
    assert {c["cloud"]["volume_type"]["type"] for c in doc["candidates"]} == {"premium-ssd", "premium-ssd-v2", "ultra"}
    assert "not known to dbtier" in doc["cluster"]["statement"]
    assert any("not known to dbtier" in n for n in doc["cloud_notes"])


def test_a_dma_history_is_sized_without_the_replay_and_says_the_burst_risk(tmp_path):
    ok(tmp_path, "history", "import", "--source", "dma", str(DMA), "--out", "imp")
    req = ok(tmp_path, "history", "requirement", "imp", "--out", "req")
    assert req["from"]["source"] == "dma" and req["requirement"]["capacity_gb"] == 8.0
    doc = ok(tmp_path, "plan", "size", "--from-history", "req", "--cloud", "aws", "--instance", "auto", "--out", "p")
    assert doc["burst_checked"] is False
    assert "hour-of-day statistics, not the time series a replay needs" in doc["burst_note"]
    by_type = {c["cloud"]["volume_type"]["type"]: c["cloud"] for c in doc["candidates"]}
    assert {"gp3", "gp2", "io2"} <= set(by_type)
    for c in by_type.values():
        assert c["burst"] is None or "throttled_intervals" not in c["burst"]          # nothing replayed
    # 8 GB + 30% = 9.69 GiB: a 10 GiB gp2 volume, 100 IOPS baseline, bursting to 3,000 on 5.4 M credits:
    # 5,400,000 / 2,900 = 1,862 s, 31 minutes
    gp2 = next(n for n in by_type["gp2"]["notes"] if n.startswith("burst credits not checked"))
    assert "the requirement (the highest hour-of-day p95, with 30% headroom) is within the baseline" in gp2
    assert "gp2 I/O credits (31 min at 3,000 IOPS per volume)" in gp2
    # the instance auto chose bursts too: said on every design placed on it (30 minutes at its maximum, assumed)
    inst = doc["candidates"][0]["cloud"]["instance"]
    assert inst and all("instance IOPS burst (30 min at the" in " ".join(c["notes"]) for c in by_type.values())
    # Azure: a P4 (32 GiB, 120 IOPS) bursts to 3,500 IOPS for 30 minutes
    az = ok(tmp_path, "plan", "size", "--from-history", "req", "--cloud", "azure", "--out", "a")
    prem = next(c["cloud"] for c in az["candidates"] if c["cloud"]["volume_type"]["type"] == "premium-ssd")
    assert prem["volumes"][0]["size_gib"] == 32
    assert any("premium-ssd P-tier credits (30 min at 3,500 IOPS per volume)" in n for n in prem["notes"])
    # the terminal and the report say it
    r = call_main("plan", "size", "--from-history", "req", "--cloud", "gcp", "--out", "g", cwd=tmp_path)
    assert r.returncode == 0 and "burst credits not checked" in r.stdout, r.stderr
    r = call_main("report", "p", "--format", "html", "--out", "rep", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "burst credits not checked" in next((tmp_path / "rep").glob("*.html")).read_text()


def test_a_dma_history_with_roles_is_refused(tmp_path):
    ok(tmp_path, "history", "import", "--source", "dma", str(DMA), "--out", "imp")
    ok(tmp_path, "history", "requirement", "imp", "--out", "req")
    r = call_main("plan", "size", "--from-history", "req", "--cloud", "aws", "--roles", "--out", "p", cwd=tmp_path)
    assert_clean_error(r, "--roles needs the history's file types interval by interval", "hour-of-day statistics",
                       "drop --roles")
