"""The fsync-honesty judgement on hand-made evidence."""

from dbtier.model.fsync_honesty import CommitEvidence, judge


def ev(**kw):
    base = dict(sync_lat_us_p50=110.0, commit_lat_us_p50=116.0, write_only_lat_us_p50=1.3,
                commits_per_s_1=8000.0, rotational=True, virtual_disk=True, mount_options="rw,relatime")
    base.update(kw)
    return CommitEvidence(**base)


def checks(result):
    return {c["name"]: c["passed"] for c in result["checks"]}


def test_honest_virtual_disk_is_ok_and_rotation_rule_skipped():
    r = judge(ev())
    assert r["verdict"] == "ok"
    assert checks(r) == {"flush_time": True, "sync_costs_time": True, "rotation_limit": None, "mount_barriers": True}
    assert "110.00 µs" in r["reason"]


def test_flush_in_microseconds_is_suspect():
    r = judge(ev(sync_lat_us_p50=0.18, commit_lat_us_p50=1.7, write_only_lat_us_p50=1.4))
    assert r["verdict"] == "suspect"
    assert checks(r)["flush_time"] is False and checks(r)["sync_costs_time"] is False
    assert "0.18 µs" in r["reason"] and "adds nothing" in r["reason"]


def test_sync_no_slower_than_write_alone_is_suspect_by_itself():
    # 6 µs flush passes the absolute floor, but 7 µs against a 5 µs write is 1.4x < 1.5x
    r = judge(ev(sync_lat_us_p50=6.0, commit_lat_us_p50=7.0, write_only_lat_us_p50=5.0))
    assert r["verdict"] == "suspect"
    assert checks(r) == {"flush_time": True, "sync_costs_time": False, "rotation_limit": None, "mount_barriers": True}


def test_physical_rotating_disk_faster_than_rotation_is_suspect():
    # 15,000 RPM -> 250 durable commits/s per writer; 20% slack -> 300
    assert judge(ev(virtual_disk=False, commits_per_s_1=299.0))["verdict"] == "ok"
    r = judge(ev(virtual_disk=False, commits_per_s_1=2000.0))
    assert r["verdict"] == "suspect" and "volatile write cache" in r["reason"]


def test_ssd_is_not_held_to_rotation():
    assert checks(judge(ev(rotational=False, virtual_disk=False, commits_per_s_1=50000)))["rotation_limit"] is None


def test_nobarrier_mount_is_suspect():
    r = judge(ev(mount_options="rw,nobarrier"))
    assert r["verdict"] == "suspect" and "nobarrier" in r["reason"]


def test_eatmydata_preload_is_named():
    r = judge(ev(ld_preload="libeatmydata.so"))
    assert r["verdict"] == "suspect" and "libeatmydata" in r["reason"]
