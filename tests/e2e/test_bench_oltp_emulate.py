"""`bench oltp --placement-matrix FAST,SLOW --emulate SLOW=150iops`: two tiers that differ on one machine.

The slow tier is a real loop device on a file in SLOW, throttled through the cgroup v1 blkio controller;
with a memory budget below the data set, tpcc's reads reach it, so the step that leaves the tables on it
loses most of the all-fast TPS (issue 22). Root, real PostgreSQL 15, real loop device and throttle."""

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

from conftest import assert_clean_error, postgres_processes, run_dbtier

from dbtier.measure import slowtier
from dbtier.results.schema import result_schema

pytestmark = pytest.mark.engine  # a real managed PostgreSQL on a throttled loop device

ROOT = slowtier.blkio_root(Path("/proc/self/mountinfo").read_text())
CAN = (os.geteuid() == 0 and ROOT is not None and os.access(f"{ROOT}/blkio.throttle.read_iops_device", os.W_OK)
       and Path("/dev/loop-control").exists())
needs_tier = pytest.mark.skipif(not CAN, reason="needs root, loop devices and the cgroup v1 blkio controller")


def _tiers(pg_dir: Path) -> tuple[Path, Path]:
    fast, slow = pg_dir / "fast", pg_dir / "slow"
    for d in (fast, slow):
        d.mkdir()
        d.chmod(0o755)
    return fast, slow


def _throttled() -> str:
    return (Path(ROOT, "blkio.throttle.read_iops_device").read_text()
            + Path(ROOT, "blkio.throttle.write_iops_device").read_text())


def _gone(slow: Path, device: str | None) -> None:
    """Nothing of the tier is left: no directory, mount, loop device or throttle line."""
    assert list(slow.iterdir()) == []
    assert str(slow) not in Path("/proc/self/mountinfo").read_text()
    assert str(slow) not in subprocess.run(["losetup", "-a"], capture_output=True, text=True).stdout
    if device:
        majmin = Path(f"/sys/block/{device}/dev").read_text().strip() if Path(f"/sys/block/{device}/dev").exists() \
            else None
        assert majmin is None or majmin + " " not in _throttled()


@needs_tier
def test_tables_on_the_emulated_slow_tier_lose_most_of_the_tps(pg_dir):
    fast, slow = _tiers(pg_dir)
    # one warehouse (~120 MiB) against a 64 MiB budget: most reads reach the tier. Reads throttled to 150 I/Os
    # per second, writes to 6000 so that loading each step's data takes seconds (six steps in about 40 s;
    # with writes at 150 too it took 2.4 minutes)
    r = run_dbtier("bench", "oltp", "--workload", "tpcc", "--warehouses", "1", "--clients", "1", "--duration", "2",
                   "--warmup", "0", "--memory", "64MiB", "--placement-matrix", f"{fast},{slow}",
                   "--emulate", f"{slow}=150riops,6000wiops", "--dir", str(fast), "--json", "--out", "run",
                   cwd=pg_dir, timeout=900)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, result_schema())
    emu = doc["emulated"]
    assert emu["dir"] == str(slow) and (emu["read_iops"], emu["write_iops"]) == (150, 6000)
    assert emu["label"] == "emulated"
    assert emu["device"].startswith("loop") and emu["mount"].startswith(f"{slow}/dbtier-slow-")
    assert any("is emulated" in n for n in doc["notes"])
    steps = {s["name"]: s for s in doc["steps"]}
    tps = {n: s["points"][0]["tps"] for n, s in steps.items()}
    print("TPS by step:", {n: round(t, 1) for n, t in tps.items()})
    # the parts each step put on the emulated tier, from where the cluster really placed them
    assert steps["all-slow"]["emulated_roles"] == ["data", "index", "temp", "wal"]
    assert steps["index-fast"]["emulated_roles"] == ["data", "temp", "wal"]
    assert steps["tables-fast"]["emulated_roles"] == ["temp", "wal"]
    assert steps["all-fast"]["emulated_roles"] == []
    # the reads reached the storage: no cache guard, and the read steps count as measured
    assert not [g for g in doc["guards"] if g["kind"] == "reads-from-memory"]
    assert steps["index-fast"]["reads_measured"] is True and steps["tables-fast"]["reads_measured"] is True
    # the throttle binds: the tables' step reads the loop device at no more than ~150 I/Os per second
    loop = [d for d in steps["index-fast"]["points"][0]["devices"] if d["device"] == emu["device"]]
    assert loop and 20 < loop[0]["read_iops"] <= 150 * 1.15
    # The direction and a conservative size: tables on the slow tier keep under half the all-fast TPS, and
    # moving them to the fast tier (WAL still slow) at least doubles the step's TPS.
    assert tps["index-fast"] < 0.5 * tps["all-fast"]
    assert tps["tables-fast"] > 2 * tps["index-fast"]
    assert tps["all-slow"] < 0.5 * tps["all-fast"]
    # the verdict sets the two tiers against each other, the slow one named by its throttle (report/verdict/oltp.py)
    from dbtier.report.verdict.topics import verdict
    [t] = [x for x in verdict([doc])["tiers"] if "ratios" in x]
    assert f"all-slow — {slow} (emulated: 150 read / 6,000 write IOPS) — " in t["text"]
    assert t["ratios"][0]["peak_ratio"] == pytest.approx(tps["all-fast"] / tps["all-slow"])
    # each step ran once: the ratio is given, not judged (show's evidence rule: at least 2 runs a point)
    ratio = tps["all-fast"] / tps["all-slow"]
    assert f"{ratio:.{0 if ratio >= 10 else 1}f}x) is not judged, too little evidence: single runs" in t["text"]
    _gone(slow, emu["device"])
    assert postgres_processes("dbtier-pg-") == []


@needs_tier
def test_select_only_on_the_throttled_tier_is_judged_by_the_throttle(pg_dir):
    """Select-only with the data on a tier throttled to 300 read IOPS, starting cold: the loop device reads at
    the throttle's rate while its busy % and await show nothing (the throttle holds each I/O before the device
    sees it). The bottleneck is the storage, said as the throttle, never the CPU."""
    fast, slow = _tiers(pg_dir)
    t0 = time.monotonic()
    r = run_dbtier("bench", "oltp", "--workload", "select-only", "--scale", "2", "--clients", "1", "--duration", "2",
                   "--warmup", "0", "--memory", "64MiB", "--place", f"data={slow}",
                   "--emulate", f"{slow}=300riops,3000wiops", "--dir", str(fast), "--json", "--out", "run",
                   cwd=pg_dir, timeout=600)
    print(f"select-only on the throttled tier: {time.monotonic() - t0:.1f} s")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    p = doc["points"][0]
    loop = [d for d in p["devices"] if d["device"] == doc["emulated"]["device"]]
    assert loop and 0.9 * 300 <= loop[0]["read_iops"] <= 300 * 1.15, loop
    assert p["bottleneck"] == "storage", p["bottleneck_evidence"]
    assert p["bottleneck_evidence"].startswith("storage: reads at ")
    assert f"against the emulated tier's 300 read IOPS throttle ({doc['emulated']['device']})" in \
        p["bottleneck_evidence"]
    _gone(slow, doc["emulated"]["device"])
    assert postgres_processes("dbtier-pg-") == []


@needs_tier
def test_ctrl_c_removes_the_emulated_tier(pg_dir):
    fast, slow = _tiers(pg_dir)
    proc = subprocess.Popen([sys.executable, "-m", "dbtier", "bench", "oltp", "--workload", "tpcb", "--scale", "1",
                             "--clients", "1", "--duration", "20", "--warmup", "0", "--placement-matrix",
                             f"{fast},{slow}", "--emulate", f"{slow}=150iops", "--dir", str(fast), "--out", "run"],
                            cwd=pg_dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 180
    while time.time() < deadline and not list(slow.glob("dbtier-slow-*/mnt/dbtier-pg-*/pgdata/postmaster.pid")):
        assert proc.poll() is None, proc.stderr.read()
        time.sleep(0.2)
    device = Path("/proc/self/mountinfo").read_text()
    loops = [line.split(" - ")[1].split()[1] for line in device.splitlines() if f"{slow}/dbtier-slow-" in line]
    assert loops, "the tier was never mounted"
    time.sleep(3.0)   # mid-load or mid-point
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "Traceback" not in err, err
    _gone(slow, os.path.basename(loops[0]))
    assert postgres_processes("dbtier-pg-") == []
    doc = json.loads((pg_dir / "run" / "result.json").read_text())
    assert doc["status"] == "interrupted" and doc["emulated"]["read_iops"] == 150


@pytest.mark.parametrize("extra, words", [
    (["--emulate", "/nowhere=150iops"], "/nowhere is not one of the placement's directories"),
    (["--emulate", "SLOW=150"], "cannot read the rate '150'"),
    (["--emulate", "SLOW=0iops"], "outside 1..1,000,000"),
    (["--dsn", "host=127.0.0.1 dbname=x", "--emulate", "/x=150iops"], "--emulate needs the managed cluster"),
])
def test_emulate_refusals_name_the_culprit(tmp_path, extra, words):
    fast, slow = tmp_path / "fast", tmp_path / "slow"
    fast.mkdir()
    slow.mkdir()
    extra = [x.replace("SLOW", str(slow)) for x in extra]
    matrix = [] if "--dsn" in extra else ["--placement-matrix", f"{fast},{slow}"]
    r = run_dbtier("bench", "oltp", *matrix, *extra, "--out", "run", cwd=tmp_path)
    assert_clean_error(r, words)
    assert list(slow.iterdir()) == []
