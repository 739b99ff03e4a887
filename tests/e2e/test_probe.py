"""`dbtier probe` end to end with real fio on this machine's disk, loop devices and mounts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from conftest import assert_clean_error, load_doc, needs_root, run_dbtier

from dbtier.results.probe import KNEE_TESTS, SUMMARY_KEYS, knee
from dbtier.results.schema import result_schema

pytestmark = pytest.mark.engine  # real fio on this machine's disk

FAST = ["--point-seconds", "0.2", "--size", "256M"]


def leftovers(d: Path) -> list[Path]:
    return list(d.glob(".dbtier-probe-*"))


def test_quick_probe_measures_everything_and_cleans_up(tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    r = run_dbtier("probe", str(target), *FAST, "--json", "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, result_schema())
    assert doc == load_doc(tmp_path / "run")
    assert doc["status"] == "ok" and doc["command"] == "probe"
    t = doc["targets"][0]
    assert tuple(t["summary"]) == SUMMARY_KEYS
    s = t["summary"]
    for k in SUMMARY_KEYS[:-2]:
        assert s[k] > 0, k
    assert s["fsync_honesty"] == "ok", s["fsync_honesty_reason"]
    # latency grows with load; peak IOPS beat QD1
    assert s["read_iops_4k"] > 1e6 / s["read_lat_us_qd1_p50"] * 0.5
    assert s["read_lat_us_p99_at_max"] > s["read_lat_us_qd1_p50"]
    tests = {p["test"] for p in t["points"]}
    assert {"rand-read-4k", "rand-write-4k", "rand-mix-8k", "rand-read-8k", "rand-write-8k", "rand-mix-4k",
            "seq-read-128k", "seq-read-1m", "seq-write-128k", "seq-write-1m", "commit", "commit-nosync"} <= tests
    assert all(p["direct"] for p in t["points"] if p["group"] in ("random", "sequential"))
    # the knee is stored, by the rule the report used to recompute it with
    assert tuple(t["knee"]) == KNEE_TESTS
    assert all(t["knee"][k] == knee(t["points"], k) and t["knee"][k]["iops"] > 0 for k in KNEE_TESTS)
    for p in t["points"]:
        assert (tmp_path / "run" / p["raw"]).exists()
    # every headline figure rests on at least two runs of its point, and is their median
    assert set(t["spread"]) == set(SUMMARY_KEYS[:-2])
    for k, sp in t["spread"].items():
        assert sp["n"] >= 2 and sp["min"] <= s[k] <= sp["max"] and sp["median"] == s[k], k
    repeats = [p for p in t["points"] if p.get("phase") == "repeat"]
    assert repeats and all(q["group"] in ("random", "sequential", "commit") for q in repeats)
    qd1 = [p["read"]["lat_us"]["p50"] for p in t["points"] if p["test"] == "rand-read-4k" and p["outstanding"] == 1]
    assert len(qd1) == 2 and s["read_lat_us_qd1_p50"] == (qd1[0] + qd1[1]) / 2   # the median of two: their mean
    m = doc["machine"]
    assert m["targets"][0]["filesystem"] and m["versions"]["fio"]
    assert leftovers(target) == []
    assert r.stderr == ""  # --json keeps the terminal quiet


def test_terminal_output_is_a_table_and_the_library_call_measures_the_same_way(tmp_path):
    r = run_dbtier("probe", str(tmp_path), "--only", "commit", "--point-seconds", "0.3", "--out",
                   str(tmp_path / "run"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "commit" in r.stdout and "fsync honesty" in r.stdout and "result:" in r.stdout
    # the same probe as a library call: no argv, its run directory where start() says, the same points
    import contextlib
    from dbtier.measure.probe import ProbeRequest, ProbeRun, check_targets, probe, with_profile
    from dbtier.results.store import RunDir
    doc = load_doc(tmp_path / "run")
    (tmp_path / "lib").mkdir()
    req = ProbeRequest(paths=(str(tmp_path),), profile=with_profile("quick", 0.3), tests=("commit",))
    saved, shown = [], []
    res = probe(req, check_targets(req), lambda: RunDir(tmp_path / "lib"),
                lambda section, errors: saved.append(len(section["targets"])),
                lambda path: contextlib.nullcontext(shown.append))
    assert isinstance(res, ProbeRun) and res.kind == doc["result_kind"] == "probe" and res.failed == ()
    [mine], [theirs] = res["targets"], doc["targets"]
    assert mine["status"] == theirs["status"] == "ok" and set(mine) == set(theirs)
    assert [(p["test"], p["outstanding"]) for p in mine["points"]] == \
        [(p["test"], p["outstanding"]) for p in theirs["points"]] == [(p["test"], p["outstanding"]) for p in shown]
    assert set(mine["summary"]) == set(theirs["summary"]) and mine["fsync_honesty"]["verdict"]
    assert saved[0] == 0 and saved[-1] == 1 and len(saved) > len(shown)     # saved before and after every point
    assert any((tmp_path / "lib").iterdir()) and leftovers(tmp_path) == []


@pytest.mark.skipif(not os.path.exists("/usr/bin/eatmydata"), reason="eatmydata not installed")
def test_fsync_honesty_ok_here_and_suspect_under_eatmydata(tmp_path):
    base = ["probe", str(tmp_path), "--only", "commit", "--point-seconds", "0.5", "--json"]
    honest = run_dbtier(*base, "--out", str(tmp_path / "honest"), cwd=tmp_path)
    lying = run_dbtier(*base, "--out", str(tmp_path / "lying"), cwd=tmp_path, prefix=["eatmydata"])
    assert honest.returncode == 0 and lying.returncode == 0, honest.stderr + lying.stderr
    h = json.loads(honest.stdout)["targets"][0]
    e = json.loads(lying.stdout)["targets"][0]
    assert h["summary"]["fsync_honesty"] == "ok", h["summary"]["fsync_honesty_reason"]
    assert e["summary"]["fsync_honesty"] == "suspect"
    # judged on the measurements, not only on LD_PRELOAD
    failed = {c["name"] for c in e["fsync_honesty"]["checks"] if c["passed"] is False}
    assert {"flush_time", "sync_costs_time"} <= failed
    assert e["summary"]["commit_lat_us_p50"] < h["summary"]["commit_lat_us_p50"] / 10


def test_missing_fio_says_how_to_install(tmp_path):
    r = run_dbtier("probe", str(tmp_path), cwd=tmp_path, env={"PATH": str(tmp_path / "empty")})
    assert_clean_error(r, "fio is not installed", "apt-get install fio")


def test_path_that_does_not_exist(tmp_path):
    assert_clean_error(run_dbtier("probe", str(tmp_path / "nope"), cwd=tmp_path), "nope: no such directory")


def test_path_that_is_a_file(tmp_path):
    f = tmp_path / "file"
    f.write_text("x")
    assert_clean_error(run_dbtier("probe", str(f), cwd=tmp_path), "not a directory")


@pytest.mark.parametrize("args,needle", [
    (["--only", "random,bogus"], "unknown test bogus"),
    (["--point-seconds", "-1"], "--point-seconds must be positive"),
    (["--size", "lots"], "not a size"),
    ([], None),
])
def test_bad_options(tmp_path, args, needle):
    if needle is None:  # nothing to probe
        assert_clean_error(run_dbtier("probe", cwd=tmp_path), "nothing to probe")
    else:
        assert_clean_error(run_dbtier("probe", str(tmp_path), *args, cwd=tmp_path), needle)
    assert not (tmp_path / "runs").exists()  # bad input leaves no run behind


@needs_root
def test_read_only_directory(tmp_path, mount_point):
    src = tmp_path / "src"
    src.mkdir()
    ro = mount_point("bind", "ro", bind_from=src)
    assert_clean_error(run_dbtier("probe", str(ro), cwd=tmp_path), "not writable", "Read-only file system")


@needs_root
def test_not_enough_free_space(tmp_path, loop_device):
    _, mnt = loop_device(150, fs="ext4", mount=True)
    err = assert_clean_error(run_dbtier("probe", str(mnt), cwd=tmp_path), "not enough free space", "margin")
    assert "--size" in err
    assert leftovers(mnt) == []


@needs_root
def test_tmpfs_is_refused_as_memory(tmp_path, mount_point):
    shm = mount_point("tmpfs", "size=64m")
    assert_clean_error(run_dbtier("probe", str(shm), cwd=tmp_path), "tmpfs", "memory, not storage", "--buffered")
    assert leftovers(shm) == []


@needs_root
def test_tmpfs_buffered_commit_is_flagged_suspect(tmp_path, mount_point):
    shm = mount_point("tmpfs", "size=600m")
    r = run_dbtier("probe", str(shm), "--buffered", "--only", "commit", "--point-seconds", "0.3",
                   "--margin-pct", "0", "--json", "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    t = json.loads(r.stdout)["targets"][0]
    assert t["direct_io"] is False and t["summary"]["fsync_honesty"] == "suspect"


@needs_root
def test_filesystem_without_direct_io(tmp_path, mount_point):
    rf = mount_point("ramfs")
    assert_clean_error(run_dbtier("probe", str(rf), cwd=tmp_path), "does not support direct I/O", "page cache")
    assert leftovers(rf) == []


@needs_root
def test_raw_device_needs_destroy_flag_and_a_blank_device(tmp_path, loop_device):
    blank, _ = loop_device(256)
    formatted, _ = loop_device(64, fs="ext4")
    mounted, _ = loop_device(64, fs="ext4", mount=True)
    assert_clean_error(run_dbtier("probe", "--device", blank, cwd=tmp_path), "--destroy-data")
    assert_clean_error(run_dbtier("probe", "--device", formatted, "--destroy-data", cwd=tmp_path),
                       "refusing to overwrite", "ext4")
    assert_clean_error(run_dbtier("probe", "--device", mounted, "--destroy-data", cwd=tmp_path), "mounted at")
    assert_clean_error(run_dbtier("probe", "--device", str(tmp_path), "--destroy-data", cwd=tmp_path),
                       "not a block device")
    # random sweeps stopped at their first level (a 1 ns latency ceiling) and no sequential tests: the device
    # path is what is checked here, not the sweeps (test_quick_probe_measures_everything_and_cleans_up)
    r = run_dbtier("probe", "--device", blank, "--destroy-data", "--point-seconds", "0.2", "--size", "128M",
                   "--only", "random,commit", "--max-lat-ms", "0.000001", "--json", "--out", str(tmp_path / "run"),
                   cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    t = json.loads(r.stdout)["targets"][0]
    assert t["kind"] == "device" and t["summary"]["read_iops_4k"] > 0 and t["summary"]["commits_per_s"] > 0


def test_ctrl_c_keeps_finished_points_and_leaves_nothing(tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    run_dir = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "dbtier", "probe", str(target), "--point-seconds", "1",
                             "--size", "256M", "--out", str(run_dir)], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if len(load_doc(run_dir)["targets"][0]["points"]) >= 3:
                break
        except (FileNotFoundError, IndexError, KeyError, json.JSONDecodeError):
            pass
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "interrupted" in err
    doc = load_doc(run_dir)
    assert doc["status"] == "interrupted" and doc["targets"][0]["status"] == "interrupted"
    assert len(doc["targets"][0]["points"]) >= 3
    assert leftovers(target) == []
    ps = subprocess.run(["pgrep", "-f", str(target)], capture_output=True, text=True)
    assert ps.stdout.strip() == "", "a fio process was left running"


def test_full_profile_sweeps_every_test_and_reports_steady_state(tmp_path):
    r = run_dbtier("probe", str(tmp_path), "--profile", "full", "--only", "random", "--point-seconds", "0.1",
                   "--size", "256M", "--json", "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, result_schema())
    t = doc["targets"][0]
    ss = t["steady_state"]
    assert ss["rounds"] >= 5 and len(ss["round_iops"]) == ss["rounds"]
    assert isinstance(ss["reached"], bool) and "SNIA" in ss["rule"]
    sweeps = {}
    for p in t["points"]:
        sweeps.setdefault(p["test"], []).append(p["outstanding"])
    for test in ("rand-read-4k", "rand-write-4k", "rand-mix-8k", "rand-read-8k", "rand-write-8k", "rand-mix-4k"):
        assert sweeps[test][:3] == [1, 2, 4], test  # each is a sweep, not a spot check
    assert t["summary"]["read_mbps_seq"] is None and t["summary"]["fsync_honesty"] is None


@needs_root
def test_fill_measures_writes_as_the_filesystem_fills(tmp_path, loop_device):
    _, mnt = loop_device(1024, fs="ext4", mount=True)
    r = run_dbtier("probe", str(mnt), "--only", "commit", "--fill", "--point-seconds", "0.2", "--size", "64M",
                   "--json", "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    fill = json.loads(r.stdout)["targets"][0]["fill"]
    assert len(fill) >= 5
    used = [f["fs_used_pct"] for f in fill]
    assert used == sorted(used) and used[-1] > used[0] + 30
    assert used[-1] < 92  # the 10% margin held
    assert all(f["seq_write_mbps"] > 0 and f["rand_write_iops_4k"] > 0 for f in fill)
    assert leftovers(mnt) == []
