"""`dbtier bench oltp` end to end on a real PostgreSQL 15 cluster run as the postgres OS user."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest

from conftest import assert_clean_error, load_doc, needs_root, postgres_processes, run_dbtier

from dbtier.results.schema import result_schema

pytestmark = pytest.mark.engine  # a real managed PostgreSQL

SHORT = ["--duration", "2", "--warmup", "0"]
POINT_KEYS = {"clients", "tps", "tpm", "nopm", "lat_ms", "cpu_util", "devices", "bottleneck"}


def bench(pg_dir: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return run_dbtier("bench", "oltp", *args, cwd=pg_dir, **kw)


def leftovers(*dirs: Path) -> list[Path]:
    return [p for d in dirs for p in d.glob("dbtier-pg-*")]


def test_tpcc_sweep_contract_and_cleanup(pg_dir):
    # --memory none: unbounded, so one warehouse sits in memory and the cache guard must fire (below)
    r = bench(pg_dir, "--workload", "tpcc", "--clients", "1,2", *SHORT, "--memory", "none", "--json", "--out", "run")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, result_schema())
    assert doc["command"] == "bench" and doc["bench"] == "oltp" and doc["status"] == "ok"
    assert [p["clients"] for p in doc["points"]] == [1, 2]
    assert any("think time" in x for x in doc["deviations"])  # what is not TPC-C, in the result
    for p in doc["points"]:
        assert POINT_KEYS <= set(p)
        assert p["tps"] > 0 and p["tpm"] == pytest.approx(p["tps"] * 60)
        # NOPM from the schema: new orders are ~45% of transactions (less 1% rolled back)
        assert 0.30 * p["tpm"] < p["nopm"] < 0.50 * p["tpm"]
        assert set(p["lat_ms"]) >= {"p50", "p95", "p99", "max"} and p["lat_ms"]["p50"] <= p["lat_ms"]["p99"]
        assert {"user_pct", "system_pct", "iowait_pct"} <= set(p["cpu_util"])
        assert p["devices"] and {"device", "iops", "mbps", "await_ms", "busy_pct"} <= set(p["devices"][0])
        assert p["bottleneck"] in ("cpu", "storage", "commit", "client", "lock", "other", "unknown")
        assert p["bottleneck_evidence"].startswith(p["bottleneck"] + ":")
        assert p["not_measured"] == [] and p["wait_samples"]["error"] is None
        assert p["pg"]["wal_bytes"] > 0 and p["pg"]["commits"] > 0
        # the cache guard's evidence: PostgreSQL's page reads against the devices' read I/Os
        rp = p["read_path"]
        assert rp["db_page_reads"] == p["pg"]["blks_read"]
        assert rp["device_read_ios"] == sum(d["read_ios"] for d in p["devices"])
        assert rp["device_fraction"] == (rp["device_read_ios"] / rp["db_page_reads"] if rp["db_page_reads"] else None)
    # One warehouse (~100 MB) with no memory limit sits in shared_buffers and the page cache on this machine:
    # the guard fires and says what the run measured.
    assert [g["kind"] for g in doc["guards"]] == ["reads-from-memory"]
    assert "write and commit path" in doc["guards"][0]["message"]
    # the knee by its rule, worked from the two real points: 1 -> 2 clients is one doubling, progress at +10%
    t1, t2 = (p["tps"] for p in doc["points"])
    if t2 >= 1.10 * t1:    # a rising curve is never called saturated
        assert (doc["knee"]["clients"], doc["knee"]["still_rising"]) == (2, True)
    else:
        assert (doc["knee"]["clients"], doc["knee"]["still_rising"]) == (1, False)
    assert set(doc["placement"]) == {"data", "index", "wal", "temp"}
    assert doc["load"]["database_bytes"] > 50e6  # one warehouse is ~100 MB
    assert (pg_dir / "run" / "raw" / "server-single.log").exists()
    assert leftovers(pg_dir) == [] and postgres_processes("dbtier-pg-") == []


def test_placement_puts_wal_indexes_temp_where_asked(pg_dir):
    dirs = {r: pg_dir / r for r in ("data", "index", "wal", "temp")}
    for d in dirs.values():
        d.mkdir()
        d.chmod(0o755)
    place = ",".join(f"{r}={d}" for r, d in dirs.items())
    r = bench(pg_dir, "--workload", "tpcb", "--scale", "1", "--clients", "1", *SHORT, "--place", place,
              "--json", "--out", "run")
    assert r.returncode == 0, r.stderr
    pl = json.loads(r.stdout)["placement"]
    for role, d in dirs.items():
        assert pl[role].startswith(str(d) + "/dbtier-pg-"), (role, pl[role])
    # each part's directory, disk (this machine's one: all on it), filesystem and mount are in the document
    from dbtier.measure.machine import path_info
    here = path_info(str(pg_dir))
    disk = (here["block_device"] or {}).get("disk")
    assert json.loads(r.stdout)["placement_where"] == {
        r: {"dir": pl[r], "device": disk, "fs": here["filesystem"], "mount": here["mount_point"]} for r in dirs}
    assert leftovers(*dirs.values()) == []


@pytest.mark.parametrize("workload", ["tpcb", "select-only", "readmix"])
def test_pgbench_workloads(pg_dir, workload):
    # readmix at scale 2: its custom scripts run at the loaded scale only when dbtier passes it (-s)
    scale = 2 if workload == "readmix" else 1
    r = bench(pg_dir, "--workload", workload, "--scale", str(scale), "--clients", "2", *SHORT, "--json",
              "--out", "run")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    p = doc["points"][0]
    assert p["tps"] > 0 and p["nopm"] is None and doc["deviations"] is None
    assert p["pgbench_scale"] == scale
    assert f"scaling factor: {scale}\n" in (pg_dir / "run" / p["raw"]).read_text()


def test_open_loop_rate_and_repeats_as_a_library_call(pg_dir):
    # bench oltp with no argv: the request, its run directory where start() says, the figures returned
    from dbtier.results.store import RunDir
    from dbtier.workloads.oltp import BenchOltp, Hooks, OltpRequest, bench as bench_call
    (pg_dir / "lib").mkdir()
    req = OltpRequest(workload="select-only", scale=1, clients=(2,), rate=200, repeat=2, duration_s=2,
                      warmup_s=0, steps=(("single", {}),), dir=str(pg_dir))
    saved, shown = [], []
    res = bench_call(req, lambda params: RunDir(pg_dir / "lib"),
                     lambda params, section: saved.append(len(section["points"])),
                     Hooks(point=lambda p, first, step: shown.append((p["clients"], first, step))))
    assert isinstance(res, BenchOltp) and res.kind == "bench.oltp"
    assert res.params["rate"] == 200 and res.params["mode"] == "managed" and res["bench"] == "oltp"
    [p] = res["points"]
    assert 150 < p["tps"] < 250  # the schedule, not the server, sets the rate
    assert p["rate"] == 200 and p["repeats"] == 2 and len(p["tps_runs"]) == 2
    # the true median of two runs is the mean of both, with the spread kept
    assert p["tps"] == pytest.approx(sum(p["tps_runs"]) / 2)
    assert p["tps_spread"]["n"] == 2 and p["tps_spread"]["min"] == min(p["tps_runs"])
    assert shown == [(2, True, "single")] and saved[0] == 0 and saved[-1] == 1   # saved before and after
    assert (pg_dir / "lib" / "raw" / "server-single.log").exists() and leftovers(pg_dir) == []
    with pytest.raises(TypeError):          # the result cannot be changed
        res.section["points"] = []


def test_a_fractional_duration_divides_by_the_time_pgbench_ran(pg_dir):
    """--duration 0.4: pgbench -T takes whole seconds, so it runs 1 s; TPS is transactions over the time
    pgbench measured (about 1 s), not over 0.4 s (which made it 2.5x too high)."""
    r = bench(pg_dir, "--workload", "select-only", "--scale", "1", "--clients", "1", "--duration", "0.4",
              "--warmup", "0", "--json", "--out", "run")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, result_schema())
    assert "ran 1 s per point" in doc["params"]["duration_note"]
    p = doc["points"][0]
    assert p["pgbench_T_s"] == 1 and p["requested_s"] == 0.4 and p["duration_source"] == "pgbench"
    assert 0.8 < p["duration_s"] < 1.3
    assert p["tps"] == pytest.approx(p["transactions"] / p["duration_s"])
    assert p["tps_spread"]["n"] == 1 and p["tps_spread_pct"] is None


def test_placement_matrix_runs_the_six_steps(pg_dir):
    fast, slow = pg_dir / "fast", pg_dir / "slow"
    for d in (fast, slow):
        d.mkdir()
        d.chmod(0o755)
    r = bench(pg_dir, "--workload", "tpcb", "--scale", "1", "--clients", "1", "--duration", "1", "--warmup", "0",
              "--placement-matrix", f"{fast},{slow}", "--json", "--out", "run")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, result_schema())
    steps = doc["steps"]
    assert [s["name"] for s in steps] == ["all-slow", "index-fast", "tables-fast", "wal-fast", "temp-fast", "all-fast"]
    for s in steps:
        assert {"name", "placement", "points", "knee"} <= set(s) and s["points"][0]["tps"] > 0
    where = {s["name"]: {r: ("fast" if str(fast) in v else "slow") for r, v in s["placement"].items()} for s in steps}
    assert where["all-slow"] == {"data": "slow", "index": "slow", "wal": "slow", "temp": "slow"}
    assert where["index-fast"] == {"data": "slow", "index": "fast", "wal": "slow", "temp": "slow"}
    assert where["tables-fast"] == {"data": "fast", "index": "fast", "wal": "slow", "temp": "slow"}
    assert where["wal-fast"] == {"data": "fast", "index": "fast", "wal": "fast", "temp": "slow"}
    assert where["all-fast"] == {"data": "fast", "index": "fast", "wal": "fast", "temp": "fast"}
    assert leftovers(fast, slow) == []


def test_missing_postgres_says_how_to_install(pg_dir):
    r = bench(pg_dir, env={"DBTIER_PG_BINDIR": str(pg_dir / "nowhere")})
    assert_clean_error(r, "PostgreSQL is not installed", "apt-get install postgresql")


@pytest.mark.parametrize("place,needle", [
    ("data=/nonexistent/x", "no such directory"),
    ("wal={d},wal={d}", "wal is given twice"),
    ("disk={d}", "unknown role 'disk'"),
    ("data", "is not ROLE=DIR"),
])
def test_bad_placement(pg_dir, place, needle):
    assert_clean_error(bench(pg_dir, "--place", place.format(d=pg_dir)), needle)


def test_matrix_with_the_same_directory_twice(pg_dir):
    assert_clean_error(bench(pg_dir, "--placement-matrix", f"{pg_dir},{pg_dir}"), "given twice")


@needs_root
def test_placement_directory_not_writable(pg_dir, mount_point):
    src = pg_dir / "src"
    src.mkdir()
    ro = mount_point("bind", "ro", bind_from=src)
    assert_clean_error(bench(pg_dir, "--place", f"wal={ro}", *SHORT), "not writable")


def test_port_in_use(pg_dir):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert_clean_error(bench(pg_dir, "--port", str(port)), f"port {port} is in use")


def test_cluster_that_will_not_start_shows_the_log(pg_dir):
    r = bench(pg_dir, "--shared-buffers", "900GB", "--clients", "1", *SHORT)
    err = assert_clean_error(r, "PostgreSQL would not start", "server log ends")
    assert "shared memory" in err or "memory" in err.lower()
    assert leftovers(pg_dir) == [] and postgres_processes("dbtier-pg-") == []


def test_dsn_that_fails_never_shows_the_password(pg_dir):
    r = bench(pg_dir, "--dsn", "host=127.0.0.1 port=1 user=alice password=s3cret-value dbname=x", *SHORT)
    err = assert_clean_error(r, "cannot connect to PostgreSQL", "PGPASSWORD")
    assert "s3cret-value" not in err + r.stdout


def test_dsn_mode_creates_and_drops_only_its_own_database(pg_dir):
    """A user's server (a cluster this test starts) keeps its own database; dbtier_* is dropped; the result's
    durability is that server's own (synchronous_commit off there), not what dbtier would have set."""
    from dbtier.workloads.postgres import Cluster, Settings
    with Cluster(pg_dir, settings=Settings(synchronous_commit="off")) as server:
        subprocess.run(["psql", "-d", "postgres", "-c", "CREATE DATABASE userdb"], env={**os.environ, **server.pg_env()},
                       check=True, capture_output=True)
        dsn = server.conninfo("postgres")
        r = bench(pg_dir, "--dsn", dsn, "--workload", "tpcb", "--scale", "1", "--clients", "1", *SHORT,
                  "--json", "--out", "run")
        assert r.returncode == 0, r.stderr
        dbs = subprocess.run(["psql", "-At", "-d", "postgres", "-c", "SELECT datname FROM pg_database"],
                             env={**os.environ, **server.pg_env()}, capture_output=True, text=True).stdout.split()
        assert "userdb" in dbs and not [d for d in dbs if d.startswith("dbtier_")]
        doc = json.loads(r.stdout)
        p = doc["points"][0]
        assert p["tps"] > 0
        # this machine's CPU and devices are not the server's: said, and never the ground for "cpu"
        assert doc["not_measured"] == p["not_measured"] == ["server_cpu", "server_devices"]
        assert "the server's CPU and devices were not measured" in p["bottleneck_evidence"]
        assert "the CPU is saturated" not in p["bottleneck_evidence"]
        assert doc["params"]["settings"]["synchronous_commit"] == "off"
        assert doc["durability"]["durable"] is False
        assert doc["durability"]["reason"].startswith("the server's own settings (--dsn): synchronous_commit=off")


def _wait_points(run_dir: Path, n: int, proc: subprocess.Popen, timeout_s: float = 120) -> None:
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"dbtier ended early: {proc.stderr.read()}")
        try:
            if len(load_doc(run_dir)["points"]) >= n:
                return
        except (FileNotFoundError, KeyError, json.JSONDecodeError):
            pass
        time.sleep(0.2)
    raise AssertionError("no point finished in time")


def _start(pg_dir: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "dbtier", "bench", "oltp", *args, "--out", "run"], cwd=pg_dir,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_server_dying_mid_run_keeps_finished_points(pg_dir):
    proc = _start(pg_dir, "--workload", "tpcb", "--scale", "1", "--clients", "1,2,4", "--duration", "3", "--warmup", "0")
    _wait_points(pg_dir / "run", 1, proc)
    time.sleep(1.0)
    pid_files = list(pg_dir.glob("dbtier-pg-*/pgdata/postmaster.pid"))
    assert pid_files
    os.kill(int(pid_files[0].read_text().split()[0]), signal.SIGKILL)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode != 0 and "Traceback" not in err
    assert "PostgreSQL died" in err or "pgbench failed" in err, err
    doc = load_doc(pg_dir / "run")
    assert doc["status"] == "failed" and len(doc["points"]) >= 1
    assert leftovers(pg_dir) == [] and postgres_processes("dbtier-pg-") == []


@needs_root
def test_disk_filling_mid_run_keeps_finished_points(pg_dir, loop_device):
    _, mnt = loop_device(300, fs="ext4", mount=True, where=pg_dir)
    mnt.chmod(0o755)
    proc = _start(pg_dir, "--workload", "tpcb", "--scale", "1", "--clients", "1,2,4", "--duration", "4",
                  "--warmup", "0", "--place", f"wal={mnt}")
    _wait_points(pg_dir / "run", 1, proc)
    # Someone else fills the WAL disk while the benchmark runs; the next WAL segment has no room.
    subprocess.run(["dd", "if=/dev/zero", f"of={mnt}/filler", "bs=1M", "status=none"], capture_output=True)
    pid = next(pg_dir.glob("dbtier-pg-*/pgdata/postmaster.pid")).read_text().splitlines()
    subprocess.run(["psql", "-h", pid[4], "-p", pid[3], "-U", "dbtier", "-d", "postgres", "-c",
                    "SELECT pg_switch_wal(); CREATE TABLE fill AS SELECT g FROM generate_series(1, 300000) g"],
                   capture_output=True)
    out, err = proc.communicate(timeout=180)
    (mnt / "filler").unlink()
    assert proc.returncode != 0 and "Traceback" not in err
    assert "filled up" in err or "No space" in err or "died" in err, err
    doc = load_doc(pg_dir / "run")
    assert len(doc["points"]) >= 1
    assert leftovers(pg_dir, mnt) == [] and postgres_processes("dbtier-pg-") == []


def test_ctrl_c_stops_and_removes_the_cluster(pg_dir):
    proc = _start(pg_dir, "--workload", "tpcb", "--scale", "1", "--clients", "1,2,4,8", "--duration", "3",
                  "--warmup", "0")
    _wait_points(pg_dir / "run", 1, proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "Traceback" not in err, err
    doc = load_doc(pg_dir / "run")
    assert doc["status"] == "interrupted" and len(doc["points"]) >= 1
    assert leftovers(pg_dir) == [] and postgres_processes("dbtier-pg-") == []
