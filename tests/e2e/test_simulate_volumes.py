"""`simulate run --volume all`: each volume of a multi-volume trace through the design on its own, in
parallel processes or on a (local, two-worker) Dask cluster; the totals checked against the same volumes
replayed one by one with `--volume NAME` (the single-volume path, run separately)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from conftest import assert_clean_error, call_main

CACHE = ["--design", "read-cache", "--cache", "nvme-enterprise-3.84tb", "--backing", "sas-15k-73gb",
         "--cache-gb", "0.004", "--block-size", "4K"]
DISKS = ("0", "1", "2")
VOLUMES = tuple(f"hm_{d}" for d in DISKS)     # MSR names a volume host_disk


def msr_trace(path: Path, per_volume: int = 3000, seed: int = 3) -> Path:
    """MSR Cambridge's layout: filetime ticks, host, disk number, Read/Write, offset, size, response time;
    three disks with different working sets (so their hit ratios differ), requests interleaved in time."""
    rng = np.random.default_rng(seed)
    rows = []
    t0 = 128166372000000000
    for d, blocks in zip(DISKS, (500, 2000, 8000)):
        for i in range(per_volume):
            blk = int(rng.zipf(1.3)) % blocks
            op = "Write" if rng.random() < 0.2 else "Read"
            rows.append((t0 + i * 100_000 + int(d) * 7,     # 100 requests a second a volume
                          d, op, blk * 4096 * 3, 4096 * int(rng.integers(1, 4))))
    rows.sort()
    path.write_text("".join(f"{t},hm,{d},{op},{off},{ln},100\n" for t, d, op, off, ln in rows))
    return path


def run(tmp_path: Path, *args: str) -> dict:
    r = call_main("simulate", "run", *args, "--json", cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.slow       # a second or more: `make test` runs it, test-fast does not
def test_every_volume_on_its_own_adds_up_to_the_volumes_one_by_one(tmp_path):
    tr = msr_trace(tmp_path / "msr.csv")
    doc = run(tmp_path, str(tr), *CACHE, "--volume", "all", "--jobs", "2", "--out", "all")
    assert doc["status"] == "ok" and doc["params"]["volume"] == "all"
    one = {v: run(tmp_path, str(tr), *CACHE, "--volume", v, "--out", f"v{v}") for v in VOLUMES}
    assert [v["volume"] for v in doc["volumes"]] == list(VOLUMES)
    for v in doc["volumes"]:
        alone = one[v["volume"]]
        assert v["read_hit_ratio"] == alone["read_hit_ratio"] and v["latency_us"] == alone["latency_us"]
        assert v["trace"] == alone["trace"]
    c = {v: one[v]["simulation"]["cache"] for v in VOLUMES}
    hits, blocks = sum(x["read_block_hits"] for x in c.values()), sum(x["read_blocks"] for x in c.values())
    assert doc["read_hit_ratio"] == pytest.approx(hits / blocks)
    assert doc["simulation"]["cache"]["read_block_hits"] == hits
    assert doc["trace"]["requests"] == sum(one[v]["trace"]["requests"] for v in VOLUMES) == 9000
    assert len({round(one[v]["read_hit_ratio"], 3) for v in VOLUMES}) == 3        # the volumes really differ
    # the total p99 lies between the volumes' own, as a percentile of all requests must
    p99 = [one[v]["latency_us"]["read"]["p99"] for v in VOLUMES]
    assert min(p99) * 0.99 <= doc["latency_us"]["read"]["p99"] <= max(p99) * 1.01
    assert doc["device_util"]["backing"] == max(one[v]["device_util"]["backing"] for v in VOLUMES)
    # the report and show draw it
    r = call_main("report", "all", "--out", "rep", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    html = "".join(p.read_text() for p in (tmp_path / "rep").rglob("*.html"))
    assert "Each volume on its own" in html and all(v in html for v in VOLUMES)
    shown = call_main("simulate", "run", str(tr), *CACHE, "--volume", "all", "--jobs", "1", "--out", "t", cwd=tmp_path)
    assert shown.returncode == 0 and "each volume on its own" in shown.stdout and "hm_2" in shown.stdout


def test_a_sweep_gives_the_total_curve(tmp_path):
    tr = msr_trace(tmp_path / "msr.csv", per_volume=1000)
    doc = run(tmp_path, str(tr), *CACHE, "--volume", "all", "--sweep", "0.001,0.004", "--jobs", "1", "--out", "s")
    assert [p["cache_gb"] for p in doc["curve"]] == [0.001, 0.004]
    assert doc["curve"][1]["read_hit_ratio"] == pytest.approx(doc["read_hit_ratio"])


def test_bad_combinations_are_refused(tmp_path):
    tr = msr_trace(tmp_path / "msr.csv", per_volume=50)
    assert_clean_error(call_main("simulate", "run", str(tr), *CACHE, "--cluster", "tcp://127.0.0.1:9",
                                 cwd=tmp_path), "needs --volume all")
    assert_clean_error(call_main("simulate", "run", str(tr), *CACHE, "--volume", "all", "--restart-at", "1",
                                 cwd=tmp_path), "--restart-at with --volume all")
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


@pytest.mark.slow     # a local Dask cluster: two worker processes
def test_on_a_dask_cluster_of_two_workers(tmp_path):
    from distributed import LocalCluster
    tr = msr_trace(tmp_path / "msr.csv", per_volume=1000)
    # nobody listening: one clear message after the connect timeout (10 s), and no run directory
    assert_clean_error(call_main("simulate", "run", str(tr), *CACHE, "--volume", "all", "--cluster",
                                 "tcp://127.0.0.1:9", "--out", "none", cwd=tmp_path, timeout=60),
                       "no Dask scheduler answers")
    assert not (tmp_path / "none").exists()
    local = run(tmp_path, str(tr), *CACHE, "--volume", "all", "--jobs", "1", "--out", "local")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as cluster:
        doc = run(tmp_path, str(tr), *CACHE, "--volume", "all", "--cluster", cluster.scheduler_address,
                  "--out", "dask")
    assert doc["simulation"]["cluster"].startswith("tcp://127.0.0.1:")
    for k in ("read_hit_ratio", "request_hit_ratio", "latency_us", "volumes", "device_util"):
        assert doc[k] == local[k], k


@pytest.mark.slow     # a real process interrupted while its worker processes replay
def test_ctrl_c_stops_every_worker(tmp_path):
    import signal
    import subprocess
    import sys
    import time
    tr = msr_trace(tmp_path / "msr.csv", per_volume=150_000)
    proc = subprocess.Popen([sys.executable, "-m", "dbtier", "simulate", "run", str(tr), *CACHE, "--volume", "all",
                             "--jobs", "2", "--out", "run"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    def cmdline(pid: str) -> str:           # "" once it has gone (a short-lived child pgrep saw)
        try:
            return Path(f"/proc/{pid}/cmdline").read_text(errors="replace")
        except OSError:
            return ""

    deadline = time.time() + 60
    kids: list[str] = []
    while time.time() < deadline and len(kids) < 2:
        out = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
        kids = [k for k in out if "multiprocessing" in cmdline(k)]
        time.sleep(0.1)
    assert len(kids) >= 2, "the worker processes never started"
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    time.sleep(0.5)
    def running(pid: str) -> bool:          # a zombie (state Z) has exited: only its parent's reaping is left
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except (OSError, IndexError):
            return False
    alive = {k: cmdline(k) for k in kids if running(k)}
    assert not alive, f"a worker outlived the run: {alive}"
    assert json.loads((tmp_path / "run" / "result.json").read_text())["status"] == "interrupted"
