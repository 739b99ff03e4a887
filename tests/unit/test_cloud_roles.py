"""Cloud designs beyond one stripe: one volume set per role (--roles), the instance store, a mirror across
zones, and instance caps from `aws ec2 describe-instance-types` output. Figures worked by hand."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from pytest import approx

from conftest import call_main
from dbtier.core.errors import DbtierError
from dbtier.model.cloud.volumes import load_instances, load_volume_types
from dbtier.model.cloud.instances import parse_describe_instance_types
from dbtier.model.cloud.sizing import size_cloud
from dbtier.model.cloud.roles import parse_spec, role_of, role_requirements, size_roles
from dbtier.model.plan.requirement import Requirement

DATA = Path(__file__).resolve().parents[1] / "data"
REAL = DATA / "cloud" / "describe-instance-types.json"


def test_file_types_map_to_roles():
    for ft, role in (("Data File", "data"), ("Control File", "data"), ("Log File", "log"), ("wal", "log"),
                     ("client backend/wal/normal", "log"), ("Temp File", "temp"), ("temp files", "temp"),
                     ("client backend/temp relation/normal", "temp"), ("Archive Log", "archive"),
                     ("Flashback Log", "archive"), ("client backend/relation/normal", "data"), ("vda", "data")):
        assert role_of(ft) == role, ft


def test_role_requirements_sum_file_types_per_interval_then_take_the_statistic():
    # two intervals of 60 s; data = Data File + Control File in each interval
    rows = [("Data File", 0, 60, 100, 40, 1.0, 0.5), ("Control File", 0, 60, 10, 20, 0.1, 0.2),
            ("Log File", 0, 60, 0, 300, 0.0, 3.0),
            ("Data File", 60, 60, 200, 10, 2.0, 0.1), ("Control File", 60, 60, 10, 20, 0.1, 0.2),
            ("Log File", 60, 60, 0, 500, 0.0, 5.0)]
    req = Requirement(capacity_gb=1000, headroom=0.3, source="history")
    reqs, ivs, sep = role_requirements(rows, req, "max", parse_spec("log=io2:200"))
    # data: reads 110 then 210 -> max 210; writes 60 then 30 -> 60 (a statistic per rate, as the requirement's)
    d = reqs["data"]
    assert (d.read_iops, d.write_iops, d.read_mbps, d.write_mbps, d.capacity_gb) == approx((210, 60, 2.1, 0.7, 1000))
    lg = reqs["log"]
    assert (lg.write_iops, lg.write_mbps, lg.capacity_gb) == approx((500, 5.0, 200))
    # p95 of two values by linear interpolation: 110 + 0.95 x (210 - 110) = 205
    reqs95, _, _ = role_requirements(rows, req, "p95", {})
    assert reqs95["data"].read_iops == approx(205) and reqs95["log"].capacity_gb is None
    assert ivs["log"] == [(60, 300, 3.0), (60, 500, 5.0)]
    assert sep["not_separated"] == ["temp"] and "temp" in sep["note"]
    with pytest.raises(DbtierError, match="only the database's totals"):
        role_requirements([], req, "max", {})
    with pytest.raises(DbtierError, match="names temp, which the history does not separate"):
        role_requirements(rows, req, "max", parse_spec("temp=gp3"))
    for bad in ("redo=io2", "log", "log=io2:lots", "log=io2:-5"):
        with pytest.raises(DbtierError):
            parse_spec(bad)


def test_one_volume_set_per_role_under_one_instance():
    types, insts = load_volume_types(), load_instances()
    data = Requirement(read_iops=10000, write_iops=3000, read_mbps=80, write_mbps=30, capacity_gb=1000, headroom=0.3)
    log = Requirement(read_iops=0, write_iops=2000, read_mbps=0, write_mbps=20, capacity_gb=200, headroom=0.3)
    spec = parse_spec("data=gp3,log=io2:200")
    [c], _ = size_roles(types, insts, "aws", {"data": data, "log": log}, spec, "r6i.4xlarge")
    d, lg = c.parts
    # data on gp3: 16,900 IOPS and 143 MB/s with headroom, 1,210.7 GiB. Each gp3 volume brings 3,000 IOPS and
    # 125 MiB/s free, so 6 or more volumes need no paid IOPS; 7 x 173 GiB (1,211 GiB) rounds up least:
    # 7 x 173 x $0.08 = $96.88 (6 x 202 = 1,212 GiB, 8 x 152 = 1,216)
    assert (d.role, d.volume_type.type, d.volumes.count, d.volumes.volumes[0].size) == ("data", "gp3", 7, 173)
    assert d.monthly["total"] == approx(96.88)
    # log on io2: 2,600 IOPS, 200 GB x 1.3 = 242.1 GiB -> 243 GiB: 243 x $0.125 + 2,600 x $0.065 = $199.375
    assert (lg.role, lg.volume_type.type, lg.volumes.count, lg.volumes.volumes[0].size) == ("log", "io2", 1, 243)
    assert lg.monthly["total"] == approx(199.375)
    assert c.monthly["total"] == approx(96.88 + 199.375)
    # under the instance together: 16,900 + 2,600 = 19,500 IOPS <= 20,000 sustained
    assert c.caps["sustained"] and c.caps["binding"] is None
    doc = c.contract()["cloud"]
    assert [v["role"] for v in doc["volumes"]] == ["data"] * 7 + ["log"]
    # on an r6i.xlarge (6,000 sustained, 40,000 for 30 minutes) the same sets only burst
    [c2], _ = size_roles(types, insts, "aws", {"data": data, "log": log}, spec, "r6i.xlarge")
    assert c2.caps["binding"] == "the instance's IOPS baseline (burst only)"
    big = Requirement(read_iops=30000, write_iops=8000, capacity_gb=1000, headroom=0.3)
    with pytest.raises(DbtierError, match="together exceed the instance: r6i.4xlarge caps it: the instance's IOPS max"):
        size_roles(types, insts, "aws", {"data": big, "log": log}, spec, "r6i.4xlarge")


def test_instance_store_priced_as_the_premium_and_said_to_be_lost_on_stop():
    types, insts = load_volume_types(), load_instances()
    req = Requirement(read_iops=20000, write_iops=15000, write_mbps=200, capacity_gb=2000, headroom=0.3)
    found, missed = size_cloud(types, insts, "aws", req, "auto", instance_store=True)
    local = [c for c in found if c.local]
    assert len(local) == 1
    c = local[0]
    # 2,000 GB x 1.3 = 2,600 GB: i4i.large (468 GB) and i4i.xlarge (937 GB) are too small at 90% usable;
    # i4i.4xlarge: 3,750 GB, busy 20,000/400,000 + 15,000/220,000 = 11.8% (15.4% with headroom)
    assert c.instance.name == "i4i.4xlarge" and c.monthly["instance_premium"] == approx(113.0)
    assert c.monthly["total"] == approx(113.0)
    reasons = " ".join(m["reason"] for m in missed if m["type"] == "instance-store")
    assert "i4i.large: 421 GB of instance store" in reasons and "r6id.xlarge: its instance store's" in reasons
    doc = c.contract()["cloud"]
    assert doc["ephemeral"] and "does not survive a stop" in doc["notes"][0]
    assert doc["volumes"][0]["type"] == "instance-store"
    # mirrored across zones: two of everything
    found2, _ = size_cloud(types, insts, "aws", req, "auto", instance_store=True, copies=2)
    c2 = [c for c in found2 if c.local][0]
    assert c2.monthly["total"] == approx(226.0) and c2.contract()["count"] == 2


def test_describe_instance_types_real_output():
    insts, notes = parse_describe_instance_types(REAL.read_text(), "f.json", "2026-11-26")
    # t2.micro has no EbsOptimizedInfo: left out and named
    assert set(insts) == {"t3a.small", "t3.xlarge", "m5ad.large", "m5ad.2xlarge"} and "t2.micro" in notes[0]
    t = insts["t3a.small"]
    assert (t.baseline_iops, t.max_iops, t.baseline_throughput, t.max_throughput) == (1000, 11800, 21.875, 260.625)
    assert t.throughput_unit == "MB/s" and t.burst == "aws-instance-30min" and t.vcpus == 2 and t.memory_gib == 2
    assert insts["m5ad.large"].local_nvme_gb == 75 and insts["t3.xlarge"].local_nvme_gb is None
    for bad, why in (("{not json", "not JSON"), ('{"Reservations": []}', "no InstanceTypes"),
                     ('{"InstanceTypes": [{"InstanceType": "t2.micro", "EbsInfo": {}}]}', "none of its 1")):
        with pytest.raises(DbtierError, match=why):
            parse_describe_instance_types(bad, "f.json", "2026-11-26")


def test_plan_size_cloud_with_instances_file_mirror_and_bad_input(tmp_path):
    shutil.copy(REAL, tmp_path / "types.json")
    args = ["plan", "size", "--read-iops", "2000", "--write-iops", "1000", "--capacity-gb", "200", "--cloud", "aws"]
    r = call_main(*args, "--instances-file", "types.json", "--instance", "m5ad.2xlarge", "--json", "--out", "a",
                  cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    c = doc["candidates"][0]["cloud"]
    assert c["instance"] == "m5ad.2xlarge" and c["caps"]["instance_iops"] == 8333
    assert "t2.micro" in doc["cloud_notes"][0]
    # gp3: 3,900 IOPS, 242.1 GiB: one volume of 243 GiB pays 900 IOPS ($23.94); three of 81 GiB (243 GiB),
    # each in its free 3,000 IOPS: 243 x $0.08 = $19.44 (two of 122 GiB: $19.52); mirrored across zones, twice that
    assert c["volumes"][0]["type"] == "gp3" and c["monthly_usd"]["total"] == approx(19.44)
    r = call_main(*args, "--mirror-zones", "--json", "--out", "b", cwd=tmp_path)
    c = json.loads(r.stdout)["candidates"][0]
    assert c["cloud"]["copies"] == 2 and c["cloud"]["monthly_usd"]["total"] == approx(38.88) and c["count"] == 6
    (tmp_path / "bad.json").write_text("<html>rate exceeded</html>")
    for extra, msg in ((["--instances-file", "bad.json"], "bad.json: not JSON"),
                       (["--instances-file", "missing.json"], "missing.json: cannot be read"),
                       (["--roles"], "--roles sizes one volume set per role from the history"),
                       (["--roles", "redo=io2", "--from-history", "x"], None)):
        r = call_main(*args, *extra, "--out", "c", cwd=tmp_path)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        if msg:
            assert msg in r.stderr, r.stderr
    r = call_main("plan", "size", "--capacity-gb", "10", "--cloud", "azure", "--instances-file", "types.json",
                  "--out", "d", cwd=tmp_path)
    assert r.returncode == 2 and "goes with --cloud aws" in r.stderr
    r = call_main("plan", "size", "--capacity-gb", "10", "--mirror-zones", "--out", "e", cwd=tmp_path)
    assert r.returncode == 2 and "--mirror-zones goes with --cloud" in r.stderr
    r = call_main("plan", "size", "--capacity-gb", "10", "--engine", "oracle", "--out", "f", cwd=tmp_path)
    assert r.returncode == 2 and "--engine goes with --cloud" in r.stderr


def test_plan_roles_from_an_awr_file_type_history(tmp_path):
    shutil.copy(DATA / "history" / "awr" / "awr_iostat_filetype_PROD.csv", tmp_path)
    r = call_main("history", "import", "--source", "awr", "awr_iostat_filetype_PROD.csv", "--out", "imp", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = call_main("history", "requirement", "imp", "--capacity-gb", "2000", "--percentile", "95", "--out", "req",
                  cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = call_main("plan", "size", "--from-history", "req", "--cloud", "aws", "--instance", "auto",
                  "--roles", "log=io2:100", "--json", "--out", "p", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    c = doc["candidates"][0]["cloud"]
    roles = {v["role"] for v in c["volumes"]}
    # the export's Archive Log rows carry no I/O at the p95: nothing to size, and said
    assert roles == {"data", "log", "temp"} and doc["roles"]["idle"] == ["archive"]
    assert {v["type"] for v in c["volumes"] if v["role"] == "log"} == {"io2"}
    assert doc["roles"]["file_types"]["log"] == ["Log File"] and doc["roles"]["not_separated"] == []
    req = doc["roles"]["requirements"]
    assert req["data"]["capacity_gb"] == 2000 and req["log"]["capacity_gb"] == 100
    assert req["log"]["read_iops"] < req["log"]["write_iops"]          # redo is written, not read
    # the sum of the roles' monthly prices is the design's
    assert c["monthly_usd"]["total"] == approx(sum(v["monthly_usd"]["total"] for v in c["volumes"]))


@pytest.mark.slow
def test_a_history_without_intervals_is_refused_for_the_roles(tmp_path):
    """Hour-of-day statistics (DMA) have no per-interval file types: --roles refuses them, naming why (sizing
    the whole database without the replay is tests/e2e/test_plan_cloud_history.py's)."""
    shutil.copy(DATA / "history" / "dma" / "dma-oracle19c-single.tgz", tmp_path)
    r = call_main("history", "import", "-s", "dma", "dma-oracle19c-single.tgz", "--out", "imp", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = call_main("history", "requirement", "imp", "--capacity-gb", "100", "--percentile", "95", "--out", "req",
                  cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = call_main("plan", "size", "--from-history", "req", "--cloud", "aws", "--roles", "--out", "p", cwd=tmp_path)
    assert r.returncode == 2 and "--roles needs the history's file types interval by interval" in r.stderr, r.stderr
    assert "hour-of-day statistics" in r.stderr and "drop --roles" in r.stderr
    assert "Traceback" not in r.stderr
