"""Pure parts of the probe: load levels, sizing, the summary."""

import json

import pytest
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


def test_a_repeated_point_gives_its_median_and_spread():
    from dbtier.results.probe import spreads
    pts = [
        # the 64-deep point twice (the sweep and its confirming run): median (110k + 90k) / 2 = 100k
        _pt("rand-read-4k", 110_000, 64, read=_lat(600, 990), runtime_s=1.0),
        _pt("rand-read-4k", 90_000, 64, read=_lat(640, 1010), runtime_s=2.0),
        # a single lucky run below the pair's max but above its median wins: medians are compared
        _pt("rand-read-4k", 104_000, 128, read=_lat(1200, 2000), runtime_s=1.0),
        _pt("rand-read-4k", 20_000, 1, read=_lat(50, 100), runtime_s=1.0),
        _pt("rand-read-4k", 18_000, 1, read=_lat(56, 120), runtime_s=1.0),
        _pt("seq-read-1m", 1500, group="sequential", rw="read", bw=1.3e9, streams=1),
        _pt("seq-read-1m", 1500, group="sequential", rw="read", bw=4.4e9, streams=1),
    ]
    s = summarize(pts, None)
    assert s["read_iops_4k"] == 104_000 and s["read_lat_us_p99_at_max"] == 2000
    assert s["read_lat_us_qd1_p50"] == 53           # (50 + 56) / 2
    assert s["read_mbps_seq"] == 2850.0             # (1300 + 4400) / 2 MB/s
    sp = spreads(pts)
    assert sp["read_iops_4k"] == {"median": 104_000, "min": 104_000, "max": 104_000, "n": 1, "spread_pct": None,
                                  "min_runtime_s": 1.0}
    assert sp["read_lat_us_qd1_p50"]["n"] == 2
    assert abs(sp["read_lat_us_qd1_p50"]["spread_pct"] - 100 * 6 / 53) < 1e-9
    assert abs(sp["read_mbps_seq"]["spread_pct"] - 100 * 3100 / 2850) < 1e-9
    assert "write_iops_4k" not in sp


def test_under_measured_names_each_headline_point_once():
    from dbtier.results.probe import GROUP_HEADLINES, RANDOM, point_config, under_measured
    pts = [
        _pt("rand-read-4k", 20_000, 1, read=_lat(50, 100)),
        _pt("rand-read-4k", 110_000, 64, read=_lat(600, 990)),
        _pt("rand-read-4k", 100_000, 64, read=_lat(600, 990), phase="confirm"),
        _pt("rand-write-4k", 15_000, 1, rw="randwrite", write=_lat(60, 150)),
    ]
    todo = under_measured(pts, GROUP_HEADLINES[RANDOM])
    # the read peak has its two runs; the QD1 read and the write (its peak is also its QD1 point) do not
    assert sorted(point_config(p) for p in todo) == sorted([point_config(pts[0]), point_config(pts[3])])
    assert under_measured(pts + [dict(pts[0]), dict(pts[3])], GROUP_HEADLINES[RANDOM]) == []


REPEATS = Path(__file__).parent.parent / "data" / "probe" / "quick-ext4-virtio-repeats.json"


def test_a_saved_probe_with_repeats_has_two_runs_behind_every_headline():
    """A real quick probe (1 s points) on this project's virtio disk, saved after headline points were repeated
    (its `knee` recomputed once the knee took medians too). Its sequential read's two runs were 1,264 and 2,209
    MB/s: the median, 1,736.5, is the headline and the 54% spread is kept beside it."""
    from dbtier.results.probe import knees, spreads
    t = json.loads(REPEATS.read_text())["targets"][0]
    assert summarize(t["points"], t["fsync_honesty"]) == t["summary"]
    assert spreads(t["points"]) == t["spread"] and knees(t["points"]) == t["knee"]
    assert {k: v["n"] for k, v in t["spread"].items()} == {k: 2 for k in SUMMARY_KEYS[:-2]}
    seq = sorted(p["bw_bytes_per_s"] / 1e6 for p in t["points"] if p["test"] == "seq-read-1m" and p["streams"] == 2)
    assert seq == pytest.approx([1263.936574, 2209.125684])
    assert t["summary"]["read_mbps_seq"] == pytest.approx((1263.936574 + 2209.125684) / 2)
    assert t["spread"]["read_mbps_seq"]["spread_pct"] == pytest.approx(100 * (2209.125684 - 1263.936574) / 1736.531129)


def test_repeats_go_on_until_every_leading_point_has_its_two_runs():
    """A repeat of the leading sequential point measures 1 MB/s, which sinks its median below every point
    measured once, so leadership passes down all six stream counts: six rounds, where the old bound of three
    left the leader with one run (the failure a real quick probe hit)."""
    from dbtier.measure.fio import FioJob
    from dbtier.measure.probe import PROFILES, Prober
    from dbtier.results.probe import GROUP_HEADLINES, SEQUENTIAL, spreads

    class Scripted(Prober):
        def run_point(self, job, test, group, read_pct, **extra):
            seen = [p for p in self.entry["points"] if p["test"] == test and p.get("streams") == extra["streams"]]
            bw = 1e6 if seen else (1000.0 + extra["streams"]) * 1e6
            p = {"test": test, "group": group, "rw": job.rw, "jobs": extra["streams"], "outstanding": extra["streams"],
                 "bs_bytes": job.bs_bytes, "iops": bw / job.bs_bytes, "bw_bytes_per_s": bw, "runtime_s": 1.0, **extra}
            self.entry["points"].append(p)
            return p

    entry = {"index": 0, "points": []}
    pr = Scripted(None, entry, PROFILES["quick"], None, lambda: None, lambda p: None, 50.0, True, 2)
    for s in range(1, 7):
        pr.measure(FioJob(name=f"s{s}", rw="read", bs_bytes=1 << 20, size_bytes=1 << 30), "seq-read-1m", SEQUENTIAL,
                   100, streams=s)
    pr.repeat_headlines(("read_mbps_seq",))
    sp = spreads(entry["points"])["read_mbps_seq"]
    assert sp["n"] == 2
    # every stream count was repeated once (each led in turn, from 6 down to 1); the leader is 6 streams:
    # median (1006 + 1) / 2 = 503.5 MB/s
    assert len(entry["points"]) == 12 and sp["median"] == 503.5
    assert GROUP_HEADLINES[SEQUENTIAL] == ("read_mbps_seq", "write_mbps_seq")
