"""Pure parts of the probe: load levels, sizing, the summary."""

import json
from pathlib import Path


from dbtier.core.units import GIB, MIB
from dbtier.measure.probe import load_levels, margin_bytes, plan_file_size
from dbtier.results.probe import SUMMARY_KEYS, summarize

SAMPLE = Path(__file__).parent.parent / "data" / "probe" / "quick-ext4-virtio.json"


def test_load_levels_add_a_thread_past_32():
    assert load_levels(128, cpus=2) == [(1, 1), (1, 2), (1, 4), (1, 8), (1, 16), (1, 32), (2, 32), (2, 64)]
    assert load_levels(256, cpus=8)[-2:] == [(4, 32), (8, 32)]
    assert load_levels(64, cpus=1)[-1] == (1, 64)


def test_margin_is_a_share_with_a_floor():
    assert margin_bytes(100 * GIB, 10) == 10 * GIB
    assert margin_bytes(2 * GIB, 10) == 2 * GIB // 10
    # the floor: 512 MiB, or 5% of a small filesystem
    assert margin_bytes(100 * GIB, 0) == 512 * MIB
    assert margin_bytes(1 * GIB, 0) == GIB * 5 // 100


def test_file_size_capped_by_free_space_less_margin():
    # 3 GiB free of 10 GiB: margin 1 GiB -> at most 2 GiB, and whole MiB
    assert plan_file_size(3 * GIB, 10 * GIB, 16 * GIB, 10) == 2 * GIB
    assert plan_file_size(100 * GIB, 200 * GIB, 1 * GIB, 10) == 1 * GIB
    assert plan_file_size(3 * GIB + 12345, 10 * GIB, 16 * GIB, 10) == 2 * GIB


def _pt(test, iops, outstanding=1, group="random", rw="randread", read=None, write=None, bw=0.0, jobs=1, **kw):
    return {"test": test, "group": group, "rw": rw, "iops": iops, "outstanding": outstanding, "jobs": jobs,
            "read": read, "write": write, "bw_bytes_per_s": bw, **kw}


def _lat(p50, p99):
    return {"lat_us": {"p50": p50, "p99": p99}}


def test_summary_from_hand_made_points():
    pts = [
        _pt("rand-read-4k", 20_000, 1, read=_lat(50, 100)),
        _pt("rand-read-4k", 110_000, 64, read=_lat(600, 990)),
        _pt("rand-read-4k", 100_000, 128, read=_lat(1200, 2000)),
        _pt("rand-write-4k", 15_000, 1, rw="randwrite", write=_lat(60, 150)),
        _pt("rand-write-4k", 90_000, 64, rw="randwrite", write=_lat(700, 1100)),
        _pt("rand-mix-8k", 80_000, 64, rw="randrw"),
        _pt("seq-read-1m", 1500, group="sequential", rw="read", bw=1.5e9),
        _pt("seq-read-128k", 12000, group="sequential", rw="read", bw=1.55e9),
        _pt("seq-write-1m", 2300, group="sequential", rw="write", bw=2.3e9),
        _pt("commit", 7500, group="commit", rw="write", commit_lat_us={"p50": 116, "p99": 347}),
        _pt("commit", 10_400, 4, group="commit", rw="write", jobs=4, commit_lat_us={"p50": 300, "p99": 900}),
    ]
    s = summarize(pts, {"verdict": "ok", "reason": "r"})
    assert tuple(s) == SUMMARY_KEYS
    assert s == {
        "read_iops_4k": 110_000, "write_iops_4k": 90_000, "mixed_iops_8k": 80_000,
        "read_lat_us_qd1_p50": 50, "write_lat_us_qd1_p50": 60, "read_lat_us_p99_at_max": 990,
        "read_mbps_seq": 1550.0, "write_mbps_seq": 2300.0,
        "commit_lat_us_p50": 116, "commit_lat_us_p99": 347, "commits_per_s": 10_400,
        "fsync_honesty": "ok", "fsync_honesty_reason": "r",
    }


def test_summary_of_nothing_is_all_null():
    assert set(summarize([], None).values()) == {None}


def test_summary_matches_saved_real_run():
    doc = json.loads(SAMPLE.read_text())
    t = doc["targets"][0]
    assert summarize(t["points"], t["fsync_honesty"]) == t["summary"]
