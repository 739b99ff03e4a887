"""Cloud volumes as the providers sell them (dbtier.model.cloud.volumes): limits and prices as formulas, stripes,
instance caps and burst buckets, each against hand-worked numbers from the providers' own examples.

The volume types here are written out in the test (the providers' published rules, as of 2026-11-26) so
that the arithmetic is checked independently of the shipped data file, which is checked separately."""

from __future__ import annotations

import math

import pytest
from pytest import approx

from dbtier.core.errors import DbtierError
from dbtier.model.cloud import volumes as cloud
from dbtier.model.cloud.volumes import (Need, cheapest_set, gp2_bucket, instance_bucket, load_instances,
                                load_volume_types, need_for, replay, under_caps)

S = {"source": "test", "as_of": "2026-11-26"}
GP3 = {"provider": "aws", "type": "gp3", "name": "gp3", "model": "provisioned", "size_min": 1, "size_max": 65536,
       "throughput_unit": "MiB/s", "io_size_kib": 256, "iops_min": 3000, "iops_max": 80000, "iops_per_size": 500,
       "iops_free": 3000, "throughput_min": 125, "throughput_max": 2000, "throughput_free": 125,
       "throughput_per_iops": 0.25, "throughput_provisioned": True, "usd_per_size_month": 0.08,
       "usd_per_iops_month": 0.005, "usd_per_throughput_month": 0.04, **S}
IO2 = {"provider": "aws", "type": "io2", "name": "io2", "model": "provisioned", "size_min": 4, "size_max": 65536,
       "throughput_unit": "MiB/s", "io_size_kib": 256, "iops_min": 100, "iops_max": 256000, "iops_per_size": 1000,
       "throughput_max": 4000, "throughput_per_iops": 0.256, "usd_per_size_month": 0.125,
       "usd_iops_tiers": [[32000, 0.065], [64000, 0.0455], [0, 0.032]], **S}
GP2 = {"provider": "aws", "type": "gp2", "name": "gp2", "model": "size-scaled", "size_min": 1, "size_max": 16384,
       "throughput_unit": "MiB/s", "io_size_kib": 256, "iops_per_size": 3, "iops_floor": 100, "iops_max": 16000,
       "throughput_steps": [[170, 128], [334, 250]], "throughput_max": 250, "burst_iops": 3000,
       "usd_per_size_month": 0.10, "burst": "gp2-io-credits", **S}
PDB = {"provider": "gcp", "type": "pd-balanced", "name": "pd-balanced", "model": "size-scaled", "size_min": 10,
       "size_max": 65536, "throughput_unit": "MiB/s", "io_size_kib": 256, "iops_per_size": 6, "iops_base": 3000,
       "iops_max": 80000, "throughput_per_size": 0.28, "throughput_base": 140, "throughput_max": 1200,
       "usd_per_size_month": 0.10, **S}
PREMIUM = {"provider": "azure", "type": "premium-ssd", "name": "Premium SSD", "model": "tiered", "size_min": 4,
           "size_max": 32767, "throughput_unit": "MB/s", "io_size_kib": 256,
           "tiers": [[4, 120, 25, 0.6, 3500, 170], [64, 240, 50, 9.86, 3500, 170], [128, 500, 100, 19.71, 3500, 170],
                     [512, 2300, 150, 73.22, 3500, 170], [1024, 5000, 200, 135.17, 0, 0]], **S}
TYPES = load_volume_types({"volume": [GP3, IO2, GP2, PDB, PREMIUM]}, "test")
R6I_4XL = {"provider": "aws", "name": "r6i.4xlarge", "baseline_iops": 20000, "baseline_throughput": 625,
           "max_iops": 40000, "max_throughput": 1250, "throughput_unit": "MB/s", "burst": "aws-instance-30min", **S}


def test_gp3_priced_as_aws_prices_it():
    vt = TYPES["aws:gp3"]
    # 1,000 GiB with 16,000 IOPS and 1,000 MiB/s: $80 + (16,000 - 3,000) x $0.005 + (1,000 - 125) x $0.04
    assert vt.monthly(1000, 16000, 1000) == approx({"capacity": 80, "iops": 65, "throughput": 35, "total": 180})
    assert vt.monthly(1000, 3000, 125)["total"] == approx(80)          # the free baseline costs nothing
    # the limits: 500 IOPS per GiB (16 GiB: 8,000), throughput at most 0.25 MiB/s per IOPS
    assert vt.max_iops(16) == 8000 and vt.max_iops(1000) == 80000
    # the free 3,000 IOPS hold at any size (AWS: "a baseline of 3,000 IOPS ... at any volume size"): 500 per GiB
    # bounds only what is provisioned above them
    assert vt.max_iops(1) == 3000 and vt.max_iops(6) == 3000 and vt.max_iops(7) == 3500
    # so a small, busy database stripes tiny volumes: 8,150 IOPS and 12.1 GiB (the lab's measured load with
    # headroom) are 13 x 1 GiB, each within its free 3,000 IOPS: 13 GiB x $0.08 = $1.04 a month (3 x 5 GiB:
    # $1.20; one volume of 17 GiB would pay 5,150 IOPS: $26.11)
    s = cheapest_set(vt, Need(8150, 70, 12.1))
    assert (s.count, s.volumes[0].size, s.volumes[0].iops) == (13, 1, 3000) and s.monthly["total"] == approx(1.04)
    assert cheapest_set(vt, Need(8150, 70, 12.1), max_volumes=3).monthly["total"] == approx(1.20)
    assert cheapest_set(vt, Need(8150, 70, 12.1), max_volumes=1).monthly["total"] == approx(17 * 0.08 + 5150 * 0.005)
    assert vt.throughput_at(1000, 4000) == 1000 and vt.throughput_at(1000, 16000) == 2000


def test_io2_iops_price_is_tiered():
    vt = TYPES["aws:io2"]
    # 40,000 IOPS: 32,000 x 0.065 + 8,000 x 0.0455 = 2,080 + 364; 1,000 GiB x 0.125 = 125
    assert vt.monthly(1000, 40000, 0)["iops"] == approx(2444) and vt.monthly(1000, 40000, 0)["total"] == approx(2569)
    # 100,000: 2,080 + 32,000 x 0.0455 (1,456) + 36,000 x 0.032 (1,152)
    assert vt.monthly(100, 100000, 0)["iops"] == approx(2080 + 1456 + 1152)


def test_gp2_scales_with_size():
    vt = TYPES["aws:gp2"]
    # 3 IOPS per GiB, at least 100, at most 16,000 (reached at 5,334 GiB); 128 MiB/s up to 170 GiB, 250 above 334
    assert vt.max_iops(10) == 100 and vt.max_iops(500) == 1500 and vt.max_iops(6000) == 16000
    assert vt.throughput_at(100, 0) == 128 and vt.throughput_at(400, 0) == 250
    assert vt.monthly(500, 1500, 250)["total"] == approx(50)


def test_pd_balanced_adds_a_per_disk_baseline_so_several_small_disks_can_beat_one_large():
    vt = TYPES["gcp:pd-balanced"]
    # Google's example, measured: 100 GiB -> 3,000 + 6 x 100 = 3,600 IOPS and 140 + 0.28 x 100 = 168 MiB/s
    assert vt.max_iops(100) == 3600 and vt.throughput_at(100, 0) == approx(168)
    # 20,000 IOPS, 100 GiB: one disk needs (20,000 - 3,000) / 6 = 2,834 GiB ($283.40); two need
    # (10,000 - 3,000) / 6 = 1,167 GiB each ($233.40); from seven on each disk's 3,000 base covers its share
    # and only capacity counts: 7 x 15 GiB (100 / 7 rounded up) = $10.50, 8 x 13 = $10.40, 9 x 12 = $10.80,
    # 10 x 10 GiB (the minimum) = $10.00, 11 or more x 10 GiB cost more
    best = cheapest_set(vt, Need(20000, 0, 100), max_volumes=16)
    one = cheapest_set(vt, Need(20000, 0, 100), max_volumes=1)
    assert one.count == 1 and one.volumes[0].size == 2834 and one.monthly["total"] == approx(283.4)
    assert best.count == 10 and best.volumes[0].size == 10 and best.monthly["total"] == approx(10.0)


def test_azure_premium_ssd_bills_the_tier_the_size_rounds_up_to():
    vt = TYPES["azure:premium-ssd"]
    assert vt.tier(400)[0] == 512 and vt.monthly(400, 0, 0)["total"] == approx(73.22)      # 400 GiB -> P20
    s = cheapest_set(vt, Need(4000, 0, 100), max_volumes=4)
    # one P30 ($135.17, 5,000 IOPS) against two P20 ($146.44): the P30
    assert (s.count, s.volumes[0].size, s.monthly["total"]) == (1, 1024, approx(135.17))


def test_the_io_size_accounting_counts_large_ios_as_several():
    vt = TYPES["aws:gp3"]
    # 1,000 IOPS at 1 MiB each (1,048.576 MB/s): each I/O counts as 1,024 / 256 = 4 -> 4,000 counted I/Os
    n = need_for(vt, 1000, 0, 1048.576, 0, 100)
    assert n.iops == approx(4000) and n.throughput == approx(1000)       # MB/s -> MiB/s
    # 8 KiB I/Os count once; reads and writes share the limit
    assert need_for(vt, 3000, 2000, 24.576, 16.384, 100).iops == 5000
    # capacity in GB -> GiB, headroom on everything
    assert need_for(vt, 0, 0, 0, 0, 1073.741824, headroom=0.5).size == approx(1500)


def test_a_gp3_stripe_under_an_r6i_4xlarge():
    vt, inst = TYPES["aws:gp3"], load_instances({"instance": [R6I_4XL]}, "test")["r6i.4xlarge"]
    need = Need(30000, 500, 4000)
    one = cheapest_set(vt, need, max_volumes=1)
    # one 4,000 GiB volume with 30,000 IOPS and 500 MiB/s: $320 + 27,000 x 0.005 + 375 x 0.04 = $470
    assert (one.volumes[0].size, one.volumes[0].iops, one.volumes[0].throughput) == (4000, 30000, 500)
    assert one.monthly["total"] == approx(470)
    # ten 400 GiB volumes each carry 3,000 IOPS and 125 MiB/s within their free baseline: capacity only, $320
    s = cheapest_set(vt, need)
    assert (s.count, s.volumes[0].size, s.volumes[0].iops, s.volumes[0].throughput) == (10, 400, 3000, 125)
    assert s.monthly == approx({"capacity": 320, "iops": 0, "throughput": 0, "total": 320})
    caps = under_caps(s, inst, need, vt)
    # 30,000 IOPS is over the instance's 20,000 baseline but within its 40,000 maximum: bursts only
    assert caps["sustained"] is False and caps["binding"] == "the instance's IOPS baseline (burst only)"
    # 625 MB/s baseline = 596.05 MiB/s
    assert caps["instance_throughput"] == approx(625 * 1e6 / 2**20)
    assert under_caps(s, inst, Need(50000, 0, 1), vt)["binding"] == "the instance's IOPS maximum"


def test_gp2_500_gib_at_3000_iops_runs_out_of_credits_after_one_hour():
    b = gp2_bucket(500)
    # baseline 3 x 500 = 1,500; the burst spends 3,000 - 1,500 = 1,500 credits a second: 5.4 M lasts 3,600 s
    assert (b.baseline, b.ceiling, b.capacity) == (1500, 3000, 5_400_000)
    out = replay(b, [(3600, 3000)] * 4)
    assert out["dry_after_s"] == approx(3600) and out["throttled_intervals"] == 3
    assert out["worst_shortfall"] == approx(1500) and out["min_balance"] == 0
    # AWS's own example: a 100 GiB volume bursts 5.4 M / (3,000 - 300) = 2,000 s
    assert replay(gp2_bucket(100), [(1, 3000)] * 2500)["dry_after_s"] == approx(2000)
    # demand at or below the baseline earns credits back, never above the bucket
    quiet = replay(b, [(3600, 3000), (3600, 0), (3600, 3000)])
    assert quiet["throttled_intervals"] == 0 and quiet["min_balance"] == 0


def test_an_instance_bucket_says_its_size_is_an_assumption():
    b = instance_bucket(20000, 40000, "IOPS")
    assert b.capacity == 20000 * 1800 and "assumed" in b.assumption
    out = replay(b, [(900, 40000), (900, 40000), (60, 40000)])
    # 30 minutes at the maximum empties it exactly; the next minute is throttled to the baseline
    assert out["dry_after_s"] == approx(1800) and out["throttled_intervals"] == 1 and out["worst_shortfall"] == 20000


def test_bad_volume_and_instance_data_is_named():
    with pytest.raises(DbtierError, match=r"test: volume #1 \(aws:x\): unknown field 'colour'"):
        load_volume_types({"volume": [{**GP3, "type": "x", "colour": "red"}]}, "test")
    with pytest.raises(DbtierError, match="field 'iops_max' must be a finite number"):
        load_volume_types({"volume": [{**GP3, "iops_max": math.inf}]}, "test")
    with pytest.raises(DbtierError, match="a minimum is above its maximum"):
        load_volume_types({"volume": [{**GP3, "size_min": 10, "size_max": 1}]}, "test")
    with pytest.raises(DbtierError, match="its maximum is below its baseline"):
        load_instances({"instance": [{**R6I_4XL, "max_iops": 100}]}, "test")
    with pytest.raises(DbtierError, match=r"unknown aws volume type 'gp9' \(known: gp2, gp3, io2\)"):
        cloud.volume_type(TYPES, "aws", "gp9")


# -- the shipped data and plan size --cloud ---------------------------------------------------------------

def test_the_shipped_cloud_data_loads_with_every_figure_dated_and_sourced():
    types, insts = load_volume_types(), load_instances()
    assert {"aws:gp3", "aws:gp2", "aws:io1", "aws:io2", "aws:st1", "aws:sc1", "azure:premium-ssd",
            "azure:premium-ssd-v2", "azure:ultra", "gcp:pd-balanced", "gcp:pd-ssd", "gcp:hyperdisk-balanced",
            "gcp:hyperdisk-extreme"} <= set(types)
    for t in types.values():
        assert t.source and t.as_of and t.throughput_unit == ("MB/s" if t.provider == "azure" else "MiB/s")
    for i in insts.values():
        assert i.source and i.as_of
    # gp3 as AWS sells it since September 2025
    gp3 = types["aws:gp3"]
    assert (gp3.size_max, gp3.iops_max, gp3.throughput_max) == (65536, 80000, 2000)
    r = insts["r6i.4xlarge"]
    assert (r.baseline_iops, r.max_iops, r.baseline_throughput, r.max_throughput) == (20000, 40000, 625, 1250)


def test_plan_size_cloud_on_an_instance_that_cannot_carry_it_says_so(tmp_path):
    from conftest import call_main
    args = ["plan", "size", "--read-iops", "20000", "--write-iops", "15000", "--write-mbps", "200",
            "--capacity-gb", "4000", "--cloud", "aws"]
    # 35,000 IOPS + 30% = 45,500: over an r6i.4xlarge's 40,000 maximum
    r = call_main(*args, "--instance", "r6i.4xlarge", "--out", "a", cwd=tmp_path)
    assert r.returncode == 2 and "r6i.4xlarge caps it: the instance's IOPS maximum" in r.stderr, r.stderr
    r = call_main(*args, "--instance", "r6i.16xlarge", "--json", "--out", "b", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    import json
    doc = json.loads(r.stdout)
    c = doc["candidates"][0]["cloud"]
    assert set(c) >= {"provider", "instance", "volumes", "monthly_usd", "caps", "burst"}
    assert set(c["monthly_usd"]) >= {"capacity", "iops", "throughput", "instance_premium", "total"}
    # 16 gp3 volumes of 303 GiB (4,843 GiB with headroom / 16), each within its free 3,000 IOPS and 125 MiB/s:
    # 16 x 303 x $0.08 = $387.84 a month
    assert (len(c["volumes"]), c["volumes"][0]["type"], c["volumes"][0]["size_gib"]) == (16, "gp3", 303)
    assert c["monthly_usd"]["total"] == approx(16 * 303 * 0.08)
    assert doc["limits_as_of"]["volumes_and_instances"] == ["2026-11-26"]
    r = call_main(*args, "--instance", "r9z.huge", "--out", "c", cwd=tmp_path)
    assert r.returncode == 2 and "unknown aws instance 'r9z.huge' (known:" in r.stderr
    r = call_main("plan", "size", "--capacity-gb", "10", "--instance", "r6i.large", "--out", "d", cwd=tmp_path)
    assert r.returncode == 2 and "--instance goes with --cloud" in r.stderr


def test_the_history_replayed_a_gp2_500_gib_volume_runs_dry_after_one_hour():
    from dbtier.model.cloud.sizing import CloudCandidate, Part, replay_history
    from dbtier.model.cloud.volumes import Volume, VolumeSet
    vt = TYPES["aws:gp2"]
    part = Part(None, vt, VolumeSet((Volume(vt, 500, 1500, 250),), "capacity"))
    c = CloudCandidate("aws", None, (part,), None, 5.0)
    # four hourly intervals at 3,000 IOPS of 8 KiB (24.576 MB/s): 1,500 credits a second over the baseline
    r = replay_history(c, [(3600, 3000, 24.576)] * 4)
    assert r["bucket"] == "gp2 I/O credits" and r["dry_after_s"] == approx(3600)
    assert r["throttled_intervals"] == 3 and r["worst_shortfall"] == approx(1500)
    assert "3,600 s long" in r["interval_note"]
    # the balance over time: 5.4 M - 1,500 x 3,600 = 0 after the first hour, and it stays empty
    assert r["balance_over_time"] == {"t_s": [3600, 7200, 10800, 14400], "balance": [0, 0, 0, 0]}


def _diskstats_history(tmp_path, iops: int, hours: int) -> str:
    """A real diskstats capture (the format `collectors/` writes): `vda` reading `iops` 8 KiB reads a second
    for `hours` hours, one snapshot an hour."""
    t0, lines = 1_795_300_000, []
    for h in range(hours + 1):
        n = iops * 3600 * h
        lines.append(f"# dbtier-diskstats time={t0 + 3600 * h}.000000000 btime=1795200000 host=vm")
        lines.append(f" 254       0 vda {n} 0 {n * 16} 0 0 0 0 0 0 {3600 * 1000 * h} 0 0 0 0 0 0 0")
    p = tmp_path / "diskstats.txt"
    p.write_text("\n".join(lines) + "\n")
    return str(p)


def test_an_instance_burst_drained_by_the_history_drops_the_design_unless_allowed(tmp_path):
    """30,000 IOPS for four hours on an r6i.4xlarge (20,000 sustained, 40,000 for 30 minutes): the instance's
    bucket, (40,000 - 20,000) x 1,800 s = 36 M I/Os, drains at 10,000 a second: dry after one hour."""
    import json
    from conftest import call_main
    hist = _diskstats_history(tmp_path, 30000, 4)
    r = call_main("history", "import", "--source", "diskstats", hist, "--out", "imp", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = call_main("history", "requirement", "imp", "--capacity-gb", "500", "--percentile", "max", "--out", "req",
                  cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    args = ["plan", "size", "--from-history", "req", "--cloud", "aws", "--instance", "r6i.4xlarge"]
    r = call_main(*args, "--out", "p1", cwd=tmp_path)
    assert r.returncode == 2 and "would be throttled by the history's demand" in r.stderr, r.stderr
    assert "instance IOPS burst runs dry after 3,600 s" in r.stderr
    r = call_main(*args, "--allow-throttling", "--json", "--out", "p2", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    burst = json.loads(r.stdout)["candidates"][0]["cloud"]["burst"]
    assert burst["bucket"] == "instance IOPS burst" and burst["dry_after_s"] == approx(3600)
    assert burst["throttled_intervals"] == 3 and burst["worst_shortfall"] == approx(10000)
    assert "not published" in burst["assumption"]
    # the balance over time: 36 M I/Os, 10,000 a second over the baseline: empty after the first hour
    assert burst["balance_over_time"] == {"t_s": [3600, 7200, 10800, 14400], "balance": [0, 0, 0, 0]}
    # the report draws it, and the design's volumes and monthly price
    r = call_main("report", "p2", "--format", "html", "--out", "rep", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    html = next((tmp_path / "rep").glob("*.html")).read_text()
    assert "Burst credit balance over the history" in html and "#1 instance IOPS burst" in html
    assert "gp3" in html and "Monthly price by component" in html
