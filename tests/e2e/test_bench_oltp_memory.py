"""`bench oltp --memory`: the managed PostgreSQL in a memory cgroup, as root with real PostgreSQL 15.

With a budget well below the data set its reads reach the device; without one (--memory none) the whole
data set sits in the page cache. The cgroup dbtier made is gone after the run, a Ctrl-C and a failure."""

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

from conftest import load_doc, postgres_processes, run_dbtier
from dbtier.measure import cgroup
from dbtier.results.schema import result_schema


def _memory_parent() -> Path | None:
    """Where dbtier (run from this process's cgroup) makes its memory cgroups, if it can here."""
    mc = cgroup.MemoryCgroup(64 * 2**20).open()
    mc.close()
    return Path(mc.plan.parent) if mc.plan else None


PARENT = _memory_parent() if os.geteuid() == 0 else None
pytestmark = [pytest.mark.engine,  # a real managed PostgreSQL in a memory cgroup
              pytest.mark.skipif(PARENT is None, reason="needs root and a writable memory cgroup controller")]


def ours() -> list[Path]:
    return sorted(PARENT.glob("dbtier-*"))


def _read_bytes(doc: dict) -> float:
    return sum(d["read_bytes"] for p in doc["points"] for d in p["devices"])


def _read_iops(doc: dict) -> float:
    return sum(d["read_iops"] for p in doc["points"] for d in p["devices"])


def test_a_budget_sends_reads_to_the_device_and_none_does_not(pg_dir):
    before = ours()
    common = ["--workload", "tpcc", "--warehouses", "4", "--clients", "2", "--duration", "5", "--warmup", "0",
              "--json"]
    r = run_dbtier("bench", "oltp", *common, "--memory", "256MiB", "--out", "bounded", cwd=pg_dir, timeout=900)
    assert r.returncode == 0, r.stderr
    bounded = json.loads(r.stdout)
    jsonschema.validate(bounded, result_schema())
    m = bounded["memory"]
    assert m["mechanism"] in ("cgroup1", "cgroup2") and m["budget_bytes"] == 256 * 2**20
    assert m["data_bytes"] > 300e6                    # 4 warehouses, ~100 MB each
    assert m["shared_buffers_bytes"] == 64 * 2**20    # 128MB asked, capped at a quarter of 256 MiB
    assert m["oom_kills"] == 0
    assert ours() == before                           # removed after the run
    r = run_dbtier("bench", "oltp", *common, "--memory", "none", "--out", "unbounded", cwd=pg_dir, timeout=900)
    assert r.returncode == 0, r.stderr
    free = json.loads(r.stdout)
    jsonschema.validate(free, result_schema())
    assert free["memory"]["mechanism"] == "none" and free["memory"]["budget_bytes"] is None
    assert "unbounded" in free["memory"]["reason"]
    print(f"bounded: {_read_iops(bounded):.0f} read IOPS, {_read_bytes(bounded) / 1e6:.0f} MB read, "
          f"{bounded['points'][0]['tps']:.0f} TPS; none: {_read_iops(free):.0f} read IOPS, "
          f"{_read_bytes(free) / 1e6:.0f} MB read, {free['points'][0]['tps']:.0f} TPS")
    # A conservative direction, not exact figures: the bounded run reads the device at least 50 MB and
    # 10x as much as the unbounded one.
    assert _read_bytes(bounded) > 50e6
    assert _read_bytes(bounded) > 10 * _read_bytes(free) + 1e6
    assert bounded["points"][0]["pg"]["blks_read"] > 0
    # The cache guard: bounded, a substantial share of PostgreSQL's page reads reached the device (a fraction
    # near 0.5 here: readahead merges pages into fewer I/Os) and no reads-from-memory guard fires ...
    for p in bounded["points"]:
        rp = p["read_path"]
        assert rp["db_page_reads"] > 1000 and rp["device_read_ios"] / rp["db_page_reads"] > 0.2
    assert "reads-from-memory" not in [g["kind"] for g in bounded["guards"]]
    # ... unbounded, almost none did: the guard fires and the verdict names it.
    assert "reads-from-memory" in [g["kind"] for g in free["guards"]]
    for name, _doc in (("bounded", bounded), ("unbounded", free)):
        r = run_dbtier("show", name, "--json", cwd=pg_dir)
        assert r.returncode == 0, r.stderr
        v = json.loads(r.stdout)["verdict"]
        said = " ".join(v["sentences"] + v["caveats"])
        # (the caveat: a single-run knee's bottleneck sentence is not judged, so the guard is said there)
        assert ("the reads were served from the OS page cache" in said) == (name == "unbounded"), said
    assert ours() == before and postgres_processes("dbtier-pg-") == []


def _start(pg_dir: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "dbtier", "bench", "oltp", *args, "--out", "run"], cwd=pg_dir,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_server_inside(proc: subprocess.Popen, before: list[Path], timeout_s: float = 180) -> Path:
    """The cgroup this run made, once the server runs inside it."""
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"dbtier ended early: {proc.stderr.read()}")
        for d in set(ours()) - set(before):
            try:
                if (d / "cgroup.procs").read_text().split():
                    return d
            except OSError:
                pass
        time.sleep(0.2)
    raise AssertionError("the server never ran inside a dbtier cgroup")


def test_ctrl_c_removes_the_cgroup(pg_dir):
    before = ours()
    proc = _start(pg_dir, "--workload", "tpcb", "--scale", "2", "--clients", "1,2", "--duration", "20",
                  "--warmup", "0", "--memory", "128MiB")
    d = _wait_server_inside(proc, before)
    time.sleep(2.0)   # mid-point
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert not d.exists() and ours() == before
    assert postgres_processes("dbtier-pg-") == []


def test_a_failure_removes_the_cgroup(pg_dir):
    before = ours()
    proc = _start(pg_dir, "--workload", "tpcb", "--scale", "2", "--clients", "1,2", "--duration", "20",
                  "--warmup", "0", "--memory", "128MiB")
    d = _wait_server_inside(proc, before)
    time.sleep(2.0)
    postmaster = int(next(pg_dir.glob("dbtier-pg-*/pgdata/postmaster.pid")).read_text().split()[0])
    assert str(postmaster) in (d / "cgroup.procs").read_text().split()   # the server really runs inside
    os.kill(postmaster, signal.SIGKILL)
    out, err = proc.communicate(timeout=180)
    assert proc.returncode != 0 and "Traceback" not in err
    assert "PostgreSQL died" in err or "pgbench failed" in err, err
    doc = load_doc(pg_dir / "run")
    assert doc["status"] == "failed" and doc["memory"]["mechanism"] in ("cgroup1", "cgroup2")
    assert not d.exists() and ours() == before
    assert postgres_processes("dbtier-pg-") == []


def test_memory_with_dsn_is_refused(pg_dir):
    r = run_dbtier("bench", "oltp", "--dsn", "host=127.0.0.1 port=1 user=x", "--memory", "1G", cwd=pg_dir)
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert "--memory" in r.stderr and "--dsn" in r.stderr


# Where no memory cgroup can be made (a container whose cgroup filesystem is read-only, no delegation):
# the same dbtier, in a private mount namespace with the memory hierarchy remounted read-only.


def _without_cgroup(pg_dir: Path, *args: str, meminfo: str | None = None) -> subprocess.CompletedProcess:
    mount_root = subprocess.run(["findmnt", "-n", "-o", "TARGET", "--target", str(PARENT)], capture_output=True,
                                text=True, check=True).stdout.strip()
    pre = f"mount -o remount,bind,ro {mount_root}"
    if meminfo is not None:   # what /proc/meminfo says inside the namespace only
        fake = pg_dir / "meminfo"
        fake.write_text(meminfo)
        pre += f" && mount --bind {fake} /proc/meminfo"
    cmd = " ".join(["exec", sys.executable, "-m", "dbtier", "bench", "oltp", *args])
    return subprocess.run(["unshare", "-m", "sh", "-c", f"{pre} && {cmd}"], cwd=pg_dir, capture_output=True,
                          text=True, timeout=600)


def test_no_cgroup_says_so_once_and_that_reads_come_from_memory(pg_dir):
    # 6 s points: enough page accesses (at least 10,000) for the buffer rule to judge, even on a loaded machine
    r = _without_cgroup(pg_dir, "--workload", "tpcb", "--scale", "1", "--clients", "1,2", "--duration", "6",
                        "--warmup", "0", "--out", "run")
    assert r.returncode == 0, r.stderr
    doc = load_doc(pg_dir / "run")
    m = doc["memory"]
    assert m["mechanism"] == "none" and m["budget_bytes"] is None
    assert m["reason"].startswith("no memory cgroup can be made (") and "not writable" in m["reason"]
    assert "reads will come from memory" in m["reason"]
    assert doc["params"]["scale"] == 1                 # the size asked for is kept
    assert [n for n in doc["notes"] if n.startswith("no memory cgroup")] == [m["reason"]]   # once
    assert " ".join(r.stdout.split()).count("no memory cgroup can be made") == 1
    assert "reads-from-memory" in [g["kind"] for g in doc["guards"]]
    assert postgres_processes("dbtier-pg-") == []


def test_no_cgroup_sizes_the_data_set_past_free_memory(pg_dir):
    # 256 MiB available: pgbench scale ceil(1.5 x 268,435,456 / 16e6) = ceil(25.2) = 26, about 420 MB
    meminfo = "MemTotal:        1048576 kB\nMemFree:          262144 kB\nMemAvailable:     262144 kB\n"
    r = _without_cgroup(pg_dir, "--workload", "tpcb", "--clients", "1", "--duration", "3", "--warmup", "0",
                        "--json", "--out", "run", meminfo=meminfo)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, result_schema())
    m = doc["memory"]
    assert m["mechanism"] == "size" and m["budget_bytes"] is None
    assert doc["params"]["scale"] == 26 and doc["load"]["scale"] == 26
    assert m["data_bytes"] > 1.5 * 256 * 2**20 * 0.9    # the loaded database is past the available memory
    assert "sized past free memory: 26 x 16 MB" in m["reason"]
    assert postgres_processes("dbtier-pg-") == []
