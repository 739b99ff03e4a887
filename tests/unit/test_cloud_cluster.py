"""Clustered databases on cloud volumes: which volume types N instances can attach read-write at once
(`max_attach`, Azure Premium SSD's maxShares by size), whether the engine's vendor supports its cluster there
(dbtier.model.cloud.cluster: Oracle RAC on none of AWS, Azure, Google Cloud), and the burst risk said in words
where a history cannot be replayed.

Expected figures are from the reference note cloud-shared-disks.md (2026-11-28), written out here, or worked
by hand on hand-made types tables."""

from __future__ import annotations

import pytest
from pytest import approx

from dbtier.core.errors import DbtierError
from dbtier.model.cloud.volumes import Volume, VolumeSet, load_volume_types
from dbtier.model.cloud.cluster import cluster_support, engine_of, load_clusters
from dbtier.model.cloud.sizing import CloudCandidate, Part, burst_unchecked, part_buckets, size_cloud, types_for
from dbtier.model.plan.requirement import Requirement
from test_cloud_model import GP3 as MODEL_GP3

S = {"source": "test", "as_of": "2026-11-28"}
GP3 = {**MODEL_GP3, **S}
IO2 = {"provider": "aws", "type": "io2", "name": "io2", "model": "provisioned", "size_min": 4, "size_max": 65536,
       "throughput_unit": "MiB/s", "io_size_kib": 256, "iops_min": 100, "iops_max": 256000, "iops_per_size": 1000,
       "throughput_max": 4000, "throughput_per_iops": 0.256, "usd_per_size_month": 0.125,
       "usd_per_iops_month": 0.065, "multi_attach": True, "max_attach": 16, **S}
GP2 = {"provider": "aws", "type": "gp2", "name": "gp2", "model": "size-scaled", "size_min": 1, "size_max": 16384,
       "throughput_unit": "MiB/s", "io_size_kib": 256, "iops_per_size": 3, "iops_floor": 100, "iops_max": 16000,
       "throughput_steps": [[170, 128], [334, 250]], "throughput_max": 250, "burst_iops": 3000,
       "usd_per_size_month": 0.10, "burst": "gp2-io-credits", **S}
# Azure Premium SSD, three tiers priced: P10 128 GiB, P20 512 GiB (credit bursting to 3,500 IOPS), P30 1 TiB
PREMIUM = {"provider": "azure", "type": "premium-ssd", "name": "Premium SSD", "model": "tiered", "size_min": 4,
           "size_max": 32767, "throughput_unit": "MB/s", "io_size_kib": 256, "burst": "azure-disk-credits",
           "tiers": [[128, 500, 100, 19.71, 3500, 170], [512, 2300, 150, 73.22, 3500, 170],
                     [1024, 5000, 200, 135.17, 0, 0]],
           "multi_attach": True, "max_attach": 3, "max_attach_by_size": [[512, 3], [4096, 5], [32767, 10]],
           "shared_note": "the tier is one pool", **S}
HDB = {"provider": "gcp", "type": "hyperdisk-balanced", "name": "HdB", "model": "provisioned", "size_min": 4,
       "size_max": 65536, "throughput_unit": "MiB/s", "io_size_kib": 256, "iops_min": 3000, "iops_max": 160000,
       "iops_per_size": 500, "iops_free": 3000, "throughput_min": 140, "throughput_max": 2400, "throughput_free": 140,
       "throughput_per_iops": 0.25, "throughput_provisioned": True, "usd_per_size_month": 0.1,
       "usd_per_iops_month": 0.006, "usd_per_throughput_month": 0.05, "multi_attach": True, "max_attach": 8, **S}
TYPES = load_volume_types({"volume": [GP3, IO2, GP2, PREMIUM, HDB]}, "test")
SMALL = Requirement(read_iops=100, write_iops=50, capacity_gb=50, headroom=0.0)


# -- which types a cluster can share ------------------------------------------------------------------------

def test_a_cluster_keeps_only_the_types_its_instances_can_attach():
    assert [t.type for t in types_for(TYPES, "aws", False)] == ["gp3", "io2", "gp2"]
    missed: list = []
    assert [t.type for t in types_for(TYPES, "aws", True, 2, missed)] == ["io2"]
    assert {m["type"] for m in missed} == {"gp3", "gp2"} and "not shareable" in missed[0]["reason"]
    # io2 Multi-Attach: at most 16 Nitro instances; a 17th can't attach it
    missed = []
    assert types_for(TYPES, "aws", True, 17, missed) == []
    assert "at most 16 instances can attach one volume, the cluster has 17" in \
        next(m["reason"] for m in missed if m["type"] == "io2")
    # Hyperdisk Balanced multi-writer: 8 VMs
    assert [t.type for t in types_for(TYPES, "gcp", True, 8)] == ["hyperdisk-balanced"]
    assert types_for(TYPES, "gcp", True, 9) == []
    # clustered without a count: two instances
    assert [t.type for t in types_for(TYPES, "aws", True)] == ["io2"]


def test_azure_premium_ssd_is_shared_by_more_vms_only_from_the_larger_tiers():
    p = TYPES["azure:premium-ssd"]
    # maxShares: P1-P20 (up to 512 GiB) 3, P30-P50 (up to 4 TiB) 5, P60-P80 10
    assert (p.attach_limit(128), p.attach_limit(512), p.attach_limit(1024), p.attach_limit(8192)) == (3, 3, 5, 10)
    assert p.most_attach == 10
    assert p.for_attach(3) is p
    four = p.for_attach(4)
    assert [t[0] for t in four.tiers] == [1024] and four.size_min == 513
    assert p.for_attach(11) is None
    # a small database: 2 VMs share a P10 ($19.71 a month); 4 VMs need a P30 ($135.17), whatever the size asked
    two, _ = size_cloud(TYPES, {}, "azure", SMALL, None, clustered=True, attach=2)
    assert (two[0].volumes.volumes[0].size, two[0].total_month) == (128, approx(19.71))
    four_vms, _ = size_cloud(TYPES, {}, "azure", SMALL, None, clustered=True, attach=4)
    assert (four_vms[0].volumes.volumes[0].size, four_vms[0].total_month) == (1024, approx(135.17))
    doc = four_vms[0].contract()["cloud"]
    assert doc["attach"] == 4 and "shared by 4 instances: the tier is one pool" in doc["notes"]
    with pytest.raises(DbtierError, match="no azure volume set meets the requirement: premium-ssd: at most 10 "
                                          "instances can attach one volume, the cluster has 11"):
        size_cloud(TYPES, {}, "azure", SMALL, None, clustered=True, attach=11)


def test_a_cluster_is_never_offered_an_instance_store():
    from dbtier.model.cloud.volumes import load_instances
    insts = load_instances()
    found, missed = size_cloud(TYPES, insts, "aws", SMALL, None, clustered=True, attach=2, instance_store=True)
    assert {c.name for c in found} == {"io2"}
    assert any(m["type"] == "instance-store" and "can't be attached to the other 1 instance" in m["reason"]
               for m in missed)


def test_bad_attach_figures_are_named_with_the_file_and_the_key():
    def bad(**kw):
        return load_volume_types({"volume": [{**IO2, **kw}]}, "mine.toml")
    with pytest.raises(DbtierError, match=r"mine.toml: volume #1 \(aws:io2\): field 'max_attach' must be a whole "
                                          r"number of at least 1"):
        bad(max_attach=0)
    with pytest.raises(DbtierError, match="field 'max_attach' must be a whole number"):
        bad(max_attach=2.5)
    with pytest.raises(DbtierError, match="field 'max_attach' must be a whole number"):
        bad(max_attach="16")
    with pytest.raises(DbtierError, match="multi_attach is true but max_attach is 1"):
        bad(max_attach=1)
    with pytest.raises(DbtierError, match="multi_attach is false but max_attach is 16"):
        bad(multi_attach=False)
    with pytest.raises(DbtierError, match="field 'multi_attach' must be true or false"):
        bad(multi_attach="yes")
    with pytest.raises(DbtierError, match="field 'max_attach_by_size' must list"):
        bad(max_attach_by_size=[[4096, 20], [512, 30]])          # sizes not rising
    with pytest.raises(DbtierError, match="field 'max_attach_by_size' must list"):
        bad(max_attach_by_size=[[512, 2]])                       # below max_attach
    with pytest.raises(DbtierError, match="field 'max_attach_by_size' must list"):
        bad(max_attach_by_size=5)


def test_the_shipped_types_share_as_the_note_says():
    types = load_volume_types()
    shared = {k: (t.max_attach, t.most_attach) for k, t in types.items() if t.multi_attach}
    # AWS: io1 and io2 only, 16 instances; Azure: Premium SSD 3/5/10 by tier, Premium SSD v2 and Ultra 15;
    # Google: Hyperdisk Balanced 8 (pd-ssd's 2 N2 VMs and Hyperdisk Extreme's 16 are Preview: not offered)
    assert shared == {"aws:io1": (16, 16), "aws:io2": (16, 16), "azure:premium-ssd": (3, 10),
                      "azure:premium-ssd-v2": (15, 15), "azure:ultra": (15, 15), "gcp:hyperdisk-balanced": (8, 8)}
    assert all(t.max_attach == 1 for t in types.values() if not t.multi_attach)
    assert "Preview" in types["gcp:pd-ssd"].source and "Preview" in types["gcp:hyperdisk-extreme"].source
    for k in shared:
        assert "2026-11-28" in types[k].source and types[k].shared_note
    assert "az-shared-enable" in types["azure:premium-ssd"].source and "aws-ma" in types["aws:io2"].source


# -- the engine's vendor support ----------------------------------------------------------------------------

def test_oracle_rac_is_supported_on_no_providers_shared_disks_and_its_route_is_named():
    routes = {"aws": "Oracle Database@AWS (Exadata)", "azure": "Oracle Database@Azure (Exadata)",
              "gcp": "Oracle Database@Google Cloud (Exadata)"}
    grades = {"aws": "P", "azure": "V", "gcp": "V"}         # AWS: MOS 2688277.1 known only second-hand
    for provider, route in routes.items():
        s = cluster_support(provider, "oracle", 2)
        assert s["offered"] is False and s["route"] == route and s["grade"] == grades[provider]
        assert "RAC" in s["statement"] and s["as_of"] == "2026-11-28" and s["source"] and s["cite"]
    assert "az-ora-arch" in cluster_support("azure", "oracle", 2)["cite"]
    # a single instance shares nothing: offered whatever the engine
    one = cluster_support("aws", "oracle", 1)
    assert one["offered"] is True and one["route"] is None and cluster_support("aws", "oracle", None)["offered"]


def test_sql_server_fci_is_offered_on_the_types_the_note_names():
    assert cluster_support("aws", "sqlserver", 2)["types"] == ["io2"]        # io1 Multi-Attach: Linux only
    az = cluster_support("azure", "sqlserver", 3)
    assert az["offered"] and az["types"] == ["premium-ssd", "ultra"] and "az-sqlfci" in az["cite"]
    assert az["dated"] == "2023-10-02"
    assert cluster_support("gcp", "sqlserver", 2)["types"] == ["hyperdisk-balanced"]


def test_an_engine_dbtier_does_not_know_to_cluster_is_said_not_refused():
    for engine in ("postgresql", "mysql"):
        s = cluster_support("aws", engine, 2)
        assert s["offered"] is True and s["route"] is None and s["source"] is None
        assert f"{engine}'s clustering on aws's shared volumes is not known to dbtier" in s["statement"]
    s = cluster_support("gcp", None, 3)
    assert s["offered"] is True and "the engine is not known" in s["statement"] and "3-instance" in s["statement"]
    with pytest.raises(DbtierError, match="engine must be one of oracle, sqlserver, postgresql, mysql"):
        cluster_support("aws", "db2", 2)
    with pytest.raises(DbtierError, match="provider must be one of aws, azure, gcp"):
        cluster_support("oci", "oracle", 2)


def test_a_history_source_names_its_engine():
    assert [engine_of(s) for s in ("awr", "dma", "sqlserver", "postgres", "diskstats", "iostat", "sar", None)] == \
        ["oracle", "oracle", "sqlserver", "postgresql", None, None, None, None]


def test_bad_cluster_data_is_named_with_the_file_and_the_key():
    ok = {"provider": "aws", "engine": "oracle", "offered": False, "statement": "no", "route": "X", "cite": "k",
          "source": "s", "grade": "V", "dated": "2023-01-01", "as_of": "2026-11-28"}

    def bad(**kw):
        e = {**ok, **kw}
        return load_clusters({"cluster": [{k: v for k, v in e.items() if v is not None}]}, "mine.toml")
    assert load_clusters({"cluster": [ok]}, "mine.toml")[("aws", "oracle")]["route"] == "X"
    with pytest.raises(DbtierError, match=r"mine.toml: cluster #1 \(aws:oracle\): unknown field 'colour'"):
        bad(colour="red")
    with pytest.raises(DbtierError, match="field 'offered' must be true or false"):
        bad(offered="no")
    with pytest.raises(DbtierError, match="field 'route' is needed where offered = false"):
        bad(route=None)
    with pytest.raises(DbtierError, match="field 'grade' must be one of V, T, P, L, D"):
        bad(grade="A")
    with pytest.raises(DbtierError, match="field 'source' must be a non-empty text"):
        bad(source=" ")
    with pytest.raises(DbtierError, match="engine one of oracle"):
        bad(engine="db2")
    with pytest.raises(DbtierError, match="field 'types' must list volume type names"):
        bad(types="io2")
    with pytest.raises(DbtierError, match="a second entry for aws:oracle"):
        load_clusters({"cluster": [ok, ok]}, "mine.toml")


# -- burst risk said where the history cannot be replayed ----------------------------------------------------

def _one(vt_key: str, size: float, attach: int = 1) -> CloudCandidate:
    vt = TYPES[vt_key]
    v = Volume(vt, size, vt.max_iops(size), vt.throughput_at(size, 0))
    return CloudCandidate(vt.provider, None, (Part(None, vt, VolumeSet((v,), "capacity")),), None, 5.0, attach=attach)


def test_the_burst_risk_is_said_on_each_design_with_a_bucket():
    gp2, gp3, p10, p10_shared = _one("aws:gp2", 100), _one("aws:gp3", 100), _one("azure:premium-ssd", 128), \
        _one("azure:premium-ssd", 128, attach=2)
    out = burst_unchecked([gp2, gp3, p10, p10_shared], "hour-of-day statistics", "the p95")
    # gp2 100 GiB: 300 IOPS baseline, 3,000 burst: 5.4 M credits / 2,700 a second = 2,000 s, 33 minutes
    assert len(out[0].notes) == 1 and out[0].notes[0].startswith("burst credits not checked: hour-of-day statistics; "
                                                                 "the requirement (the p95) is within the baseline")
    assert "gp2 I/O credits (33 min at 3,000 IOPS per volume)" in out[0].notes[0]
    assert out[1].notes == ()                                   # gp3 has no bucket
    # P10: 500 IOPS target, 3,500 burst; a full bucket is 30 minutes at the burst rate
    assert "premium-ssd P-tier credits (30 min at 3,500 IOPS per volume)" in out[2].notes[0]
    # a shared Premium SSD (maxShares > 1) has no credit bursting: nothing to say, nothing replayed
    assert out[3].notes == () and part_buckets(p10_shared.parts[0], True) == []
    assert out[0].notes[0] in out[0].contract()["cloud"]["notes"]
