"""`dbtier bench dss` and `dbtier bench backup` end to end: real DuckDB, real PostgreSQL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import assert_clean_error, needs_root, postgres_processes, run_dbtier

pytestmark = pytest.mark.engine  # real DuckDB benchmarks and real PostgreSQL backups

QUERY_KEYS = {"query", "seconds", "rows", "temp_bytes", "read_bytes", "write_bytes", "cpu_util"}


def dss(cwd: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return run_dbtier("bench", "dss", *args, cwd=cwd, **kw)


def test_duckdb_power_run_checks_every_answer(pg_dir):
    """`bench dss --scale 0.01 --repeat 2 --temp TEMP` as a library call: the section it returns is the one
    it saved last, after the load and each of the 44 queries."""
    from dbtier.results.store import RunDir
    from dbtier.workloads.dss import DssRequest, run
    temp = pg_dir / "temp"
    temp.mkdir()
    (pg_dir / "run").mkdir()
    saved: list[dict] = []
    res = run(DssRequest(scale=0.01, repeat=2, data=str(pg_dir), temp=str(temp)), lambda params: RunDir(pg_dir / "run"),
              lambda section: saved.append(json.loads(json.dumps(section))))
    doc = res.to_json()
    assert res.kind == "bench.dss" and res.params["queries"] == tuple(range(1, 23))
    assert len(saved) == 1 + 44 + 1 and saved[-1] == doc and saved[0]["runs"] == []
    assert doc["bench"] == "dss" and doc["engine"] == "duckdb" and doc["scale"] == 0.01
    assert doc["answers_ok"] is True and doc["answers_checked"] is True
    assert [q["query"] for q in doc["queries"]] == list(range(1, 23))
    for q in doc["queries"]:
        assert QUERY_KEYS <= set(q) and q["seconds"] > 0 and q["rows"] > 0
    assert doc["total_seconds"] == pytest.approx(sum(q["seconds"] for q in doc["queries"]))
    assert 0 < doc["geomean_seconds"] < doc["total_seconds"]
    assert [r["cold"] for r in doc["runs"][0]] == [True] * 22 and not any(r["cold"] for r in doc["runs"][1])
    assert set(doc["placement"]) == {"data", "temp"} and doc["placement"]["temp"].startswith(str(temp))
    assert list(pg_dir.glob("dbtier-dss-*")) == [] and list(temp.glob("*")) == []


@needs_root
def test_memory_limit_forces_spills_to_the_emulated_temp_tier(pg_dir, monkeypatch):
    """--memory-limit below a query's need makes DuckDB spill into temp on an emulated tier; the spill is the
    engine's files only (Q6 spills nothing: dbtier's owner marker there is not counted), the temp device's
    writes are recorded, and either they hold the spill or the run says it stayed in memory. The same run
    with temp on this machine's disk: the verdict puts temp on a tier only beyond the runs' noise."""
    temp, local = pg_dir / "slow", pg_dir / "local"
    temp.mkdir()
    local.mkdir()
    # Q9's joins at SF 0.5 need more than 60 MB: DuckDB spills (at SF 0.1 it runs out of memory instead)
    args = ("--scale", "0.5", "--repeat", "3", "--queries", "6,9", "--memory-limit", "60MB", "--threads", "1")
    r = dss(pg_dir, *args, "--temp", str(temp), "--emulate", f"{temp}=150iops", "--json", "--out", "run")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    q6, q9 = doc["queries"]
    assert q6["temp_bytes"] == 0 and q9["temp_bytes"] > 1e6
    assert doc["answers_ok"] is None and doc["answers_checked"] is False  # no reference answers at SF 0.5
    assert doc["emulated"]["read_iops"] == 150 and doc["emulated_roles"] == ["temp"]
    assert doc["memory"]["mechanism"] in ("cgroup1", "cgroup2") and doc["memory"]["oom_kills"] == 0
    tt = doc["temp_tier"]
    assert tt["device"] == doc["emulated"]["device"] and tt["device"].startswith("loop")
    in_memory = [g for g in doc["guards"] if g["kind"] == "temp-in-memory"]
    assert len(tt["runs"]) == 3
    for run in tt["runs"]:
        assert run["queries_spilled"] == [9] and isinstance(run["device_write_bytes"], int)
        if run["temp_tier_exercised"]:
            assert run["device_write_bytes"] >= 0.5 * run["spill_bytes"]
        else:
            assert in_memory and "stayed in memory" in in_memory[0]["message"]
    # the query table's spill is the run its time comes from
    assert q9["temp_bytes"] in [x["spill_bytes"] for x in tt["runs"]]
    assert list(temp.iterdir()) == []            # the emulated tier is gone

    r = dss(pg_dir, *args, "--temp", str(local), "--json", "--out", "run-local")
    assert r.returncode == 0, r.stderr
    other = json.loads(r.stdout)
    assert other["queries"][1]["temp_bytes"] > 1e6
    from dbtier.report.verdict import rules as verdict_rules
    from dbtier.report.inputs import load_runs
    from dbtier.report.verdict.topics import verdict
    # second-long runs: the length and spread guards lowered, so the noise rule itself decides
    monkeypatch.setattr(verdict_rules, "MIN_DSS_RUN_S", 0.0)
    monkeypatch.setattr(verdict_rules, "MAX_SPREAD_PCT", float("inf"))
    [p] = verdict(load_runs([pg_dir / "run", pg_dir / "run-local"]))["placement"]
    # the rule by hand: each side's warm runs spread (max - min) / median; noise the two added, at least 5%
    side = {str(temp): doc, str(local): other}
    sp = {k: (d["warm_totals"]["max"] - d["warm_totals"]["min"]) / d["warm_totals"]["median"] * 100
          for k, d in side.items()}
    assert all(d["warm_totals"]["n"] == 2 for d in side.values())
    fast = min(side, key=lambda k: side[k]["total_seconds"])
    slow = max(side, key=lambda k: side[k]["total_seconds"])
    change = (side[slow]["total_seconds"] / side[fast]["total_seconds"] - 1) * 100
    noise = max(5.0, sp[fast] + sp[slow])
    assert p["noise_pct"] == pytest.approx(noise)
    if change <= noise:
        assert p["temp_on"] is None and "within noise" in p["text"] and "Put temp" not in p["text"]
    else:
        assert p["temp_on"] == fast and p["text"].startswith("Put temp on ")


def test_uncompressed_storage_is_bigger(pg_dir):
    sizes = {}
    for c in ("on", "off"):
        r = dss(pg_dir, "--scale", "0.01", "--repeat", "1", "--queries", "6", "--compression", c, "--json",
                "--out", f"run-{c}")
        assert r.returncode == 0, r.stderr
        sizes[c] = json.loads(r.stdout)["load"]["database_bytes"]
    assert sizes["off"] > sizes["on"]


def test_postgres_power_run(pg_dir):
    # as root, temp on an emulated tier: PostgreSQL's temp tablespace is made on the tier's mount
    slow = pg_dir / "slow"
    slow.mkdir()
    emu = ["--temp", str(slow), "--emulate", f"{slow}=150iops"] if os.geteuid() == 0 else []
    r = dss(pg_dir, "--engine", "postgres", "--scale", "0.01", "--repeat", "1", *emu, "--json", "--out", "run")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["engine"] == "postgres" and doc["answers_ok"] is True and len(doc["queries"]) == 22
    if emu:
        assert doc["placement"]["temp"].startswith(doc["emulated"]["mount"] + "/") and doc["emulated_roles"] == ["temp"]
        assert doc["temp_tier"]["device"] == doc["emulated"]["device"]
        # no budget bounds the server's processes: said, so a spill that stays in memory is not taken for the tier's
        assert doc["memory"]["mechanism"] == "none" and "server's own processes" in doc["memory"]["reason"]
    assert list(pg_dir.glob("dbtier-pg-*")) == [] and postgres_processes("dbtier-pg-") == []
    assert list(slow.iterdir()) == []


def test_wrong_answer_fails_loudly(pg_dir):
    """A corrupted table must fail the run, not be timed."""
    from dbtier.core.errors import DbtierError
    from dbtier.model.dss import QUERIES
    from dbtier.workloads import dss as w
    from dbtier.workloads.engine import ServerSpec
    from dbtier.workloads.engine_duckdb import DuckDBEngine
    eng = DuckDBEngine(ServerSpec(pg_dir, {}, options={"generator": "dbgen"}))
    try:
        eng.open()
        eng.load_tpch(0.01)
        eng.conn.execute("UPDATE lineitem SET l_quantity = l_quantity + 1 WHERE l_orderkey < 100")
        eng.conn.execute("CHECKPOINT")
        with pytest.raises(DbtierError, match="query 1 returned a wrong answer"):
            w.power_run(eng, 1, False, [], w.answers(0.01), lambda r: None, QUERIES)
    finally:
        eng.close()
    assert list(pg_dir.glob("dbtier-dss-*")) == []


def test_not_enough_memory_is_said_before_starting(pg_dir):
    err = assert_clean_error(dss(pg_dir, "--scale", "1000"), "not enough memory", "GB")
    assert "1200.0 GB" in err
    assert not (pg_dir / "runs").exists()


@needs_root
def test_not_enough_disk_is_said_before_starting(pg_dir, loop_device):
    _, mnt = loop_device(200, fs="ext4", mount=True, where=pg_dir)
    assert_clean_error(dss(pg_dir, "--scale", "1", "--data", str(mnt)), "not enough disk", "0.3 GB")


def test_missing_extension(pg_dir):
    assert_clean_error(dss(pg_dir, env={"DBTIER_TPCH_EXTENSION": str(pg_dir / "none.duckdb_extension")}),
                       "tpch extension", "duckdb-extension-tpch")


def test_bad_query_list(pg_dir):
    assert_clean_error(dss(pg_dir, "--queries", "0,23"), "queries 1 to 22")


def test_bad_emulate_and_temp_are_refused_before_anything_starts(pg_dir):
    assert dss(pg_dir, "--emulate", f"{pg_dir}=fast").returncode == 2
    assert_clean_error(dss(pg_dir, "--emulate", f"{pg_dir}=fast"), "cannot read the rate 'fast'", "next:")
    assert_clean_error(dss(pg_dir, "--temp", str(pg_dir), "--emulate", "/elsewhere=150iops"),
                       "neither the --temp nor the --data directory")
    assert_clean_error(dss(pg_dir, "--temp", str(pg_dir), "--temp", str(pg_dir)), "--temp is given 2 times")
    assert not (pg_dir / "runs").exists() and not list(pg_dir.glob("dbtier-*"))


def test_interrupted_load_cleans_up(pg_dir):
    """Ctrl-C during the dbgen load: exit 130, every time. Before, one run in four to eight printed
    "interrupted" and then died of SIGSEGV (-11) at exit: DuckDB's worker went on generating after the
    Python client had raised, and ran into what the interpreter's exit had freed."""
    proc = subprocess.Popen([sys.executable, "-m", "dbtier", "bench", "dss", "--scale", "1", "--out", "run"],
                            cwd=pg_dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 30
    while time.time() < deadline and not list(pg_dir.glob("dbtier-dss-*/tpch.duckdb*")):
        time.sleep(0.1)
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, f"exit status {proc.returncode}; stderr:\n{err}"
    assert "Traceback" not in err and "dbtier: interrupted" in err, err
    assert list(pg_dir.glob("dbtier-dss-*")) == []
    doc = json.loads((pg_dir / "run" / "result.json").read_text())
    assert doc["status"] == "interrupted" and doc["load"] is None


def _native_threads(settle_s: float = 0.0) -> int:
    """Threads of this process that Python did not start (DuckDB's workers among them); with settle_s,
    the lowest count seen in that time (a Python thread that has just ended lingers a moment as a task)."""
    import threading
    deadline, low = time.monotonic() + settle_s, None
    while True:
        n = len(os.listdir(f"/proc/{os.getpid()}/task")) - threading.active_count()
        low = n if low is None else min(low, n)
        if time.monotonic() >= deadline:
            return low
        time.sleep(0.05)


def test_interrupt_stops_duckdb_before_it_is_raised(pg_dir):
    """Ctrl-C during dbgen reaches the caller only once DuckDB has stopped: close() then ends the database
    and its worker threads. Before, the worker went on generating after close(), past the interpreter's
    exit (the SIGSEGV above)."""
    import _thread
    import threading

    import duckdb  # noqa: F401 - imported before counting: the module starts a thread of its own
    from dbtier.workloads.engine import ServerSpec
    from dbtier.workloads.engine_duckdb import DuckDBEngine
    eng = DuckDBEngine(ServerSpec(pg_dir, {}, options={"generator": "dbgen"}))
    before = _native_threads(0.5)
    timer = None
    try:
        eng.open()
        timer = threading.Timer(0.5, _thread.interrupt_main)    # as Ctrl-C: the SIGINT handler, in the main thread
        timer.start()
        with pytest.raises(KeyboardInterrupt):
            eng.load_tpch(1)     # about 10 s of dbgen on two cores: interrupted well before its end
        timer.join()
        if eng.conn.execute("SELECT current_setting('threads')").fetchone()[0] > 1:
            assert _native_threads() > before      # DuckDB's workers, idle now: the count sees them
    finally:
        if timer is not None:
            timer.cancel()
        eng.close()
    assert _native_threads(0.5) == before
    assert list(pg_dir.glob("dbtier-dss-*")) == []


BACKUP_KEYS = {"target", "method", "bytes", "seconds", "mbps", "bottleneck"}
SLICE_S = 0.1     # blk-throttle's slice: the bytes of one slice may go out as it opens


def test_postgres_backup_to_dir_and_null(pg_dir):
    to = pg_dir / "to"
    to.mkdir()
    r = run_dbtier("bench", "backup", "--to", str(to), "--scale", "1", "--json", "--out", "run", cwd=pg_dir)
    assert r.returncode == 0, r.stderr
    targets = json.loads(r.stdout)["targets"]
    assert {(t["method"], t["target"]) for t in targets} == {
        ("pg_basebackup plain", "dir"), ("pg_basebackup tar", "null"), ("pg_basebackup tar", "dir"),
        ("pg_basebackup tar-gzip", "null"), ("pg_basebackup tar-gzip", "dir")}
    for t in targets:
        assert BACKUP_KEYS <= set(t) and t["bytes"] > 10e6 and t["mbps"] > 0
        assert t["bottleneck"] in ("source", "target", "cpu", "undetermined")
        assert t["bytes"] / t["seconds"] / 1e6 == pytest.approx(t["mbps"])    # one run's figures
        # pg_basebackup's own output kept: the command, then its -P progress ending at the bytes counted
        [raw] = t["raw_files"]
        text = (pg_dir / "run" / raw).read_text()
        assert "pg_basebackup" in text and f"{t['bytes'] // 1024}/" in text
    gz = next(t for t in targets if t["method"].endswith("gzip") and t["target"] == "dir")
    assert gz["output_bytes"] < gz["bytes"]  # compressed
    # plain has no null sink: judged against tar's, which ran before it
    plain, tar_null = (next(t for t in targets if (t["method"], t["target"]) == k)
                       for k in (("pg_basebackup plain", "dir"), ("pg_basebackup tar", "null")))
    assert plain["null_method"] == "pg_basebackup tar" and plain["null_mbps"] == tar_null["mbps"]
    assert targets.index(plain) == len(targets) - 1
    assert list(to.iterdir()) == [] and list(pg_dir.glob("dbtier-pg-*")) == []


def test_duckdb_backup(pg_dir):
    to = pg_dir / "to"
    to.mkdir()
    r = run_dbtier("bench", "backup", "--engine", "duckdb", "--scale", "0.01", "--to", "to", "--repeat", "2",
                   "--json", "--out", "run", cwd=pg_dir)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    targets = doc["targets"]
    assert [(t["method"], t["target"]) for t in targets] == [("file copy", "null"), ("file copy", "dir"),
                                                             ("EXPORT DATABASE parquet", "dir")]
    assert doc["params"]["to"] == str(to) and doc["params"]["data"] == str(pg_dir)   # absolute, as given relative
    for t in targets:     # each backup twice: the slower run's figures, the median of two (their mean) beside them
        a, b = t["mbps_runs"]
        assert t["runs"] == 2 and t["mbps"] == min(a, b) and t["mbps_spread"]["median"] == pytest.approx((a + b) / 2)
        assert t["mbps_spread"]["n"] == 2 and t["mbps_spread"]["min"] == min(a, b)
        assert t["seconds"] == t["seconds_runs"][t["run"] - 1]
        assert t["bytes"] / t["seconds"] / 1e6 == pytest.approx(t["mbps"])
    export = (pg_dir / "run" / targets[2]["raw_files"][0]).read_text()     # the statement and the files written
    assert export.startswith("EXPORT DATABASE") and "lineitem" in export
    assert list(to.iterdir()) == []


@needs_root
def test_backup_to_an_emulated_target_is_timed_to_the_device(pg_dir):
    """A target throttled at 8 MiB/s (8.39 MB/s): every write to it is synced inside the timed window, so no
    backup is timed faster than the throttle lets it write. EXPORT DATABASE's files included: unsynced, the page
    cache takes them (101 MB/s through a 40 MiB/s throttle). The kernel's throttle grants a slice (100 ms) of
    bytes as a slice opens (blk-throttle rounds the elapsed time up to a whole slice), so a copy may finish up to
    one slice early: 14.7 MB took 1.65 s against 1.75 s at the rate alone."""
    to = pg_dir / "slow"
    to.mkdir()
    r = run_dbtier("bench", "backup", "--engine", "duckdb", "--scale", "0.05", "--to", str(to), "--emulate",
                   f"{to}=8MiBps", "--json", "--out", "run", cwd=pg_dir)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["emulated"]["write_bps"] == 8 * 2**20 and doc["emulated"]["roles"] == ["target"]
    dev = doc["emulated"]["device"]
    for t in (t for t in doc["targets"] if t["target"] == "dir"):
        written = t["devices"][dev]["write_bytes"]
        assert written >= t["output_bytes"] > 1e6, t["method"]          # it reached the tier's device
        allowed = 1.05 * 8 * 2**20 * (t["seconds"] + SLICE_S)
        assert t["output_bytes"] <= allowed, (t["method"], t["output_bytes"], t["seconds"])
    assert list(to.iterdir()) == []


def test_backup_bad_input(pg_dir):
    assert_clean_error(run_dbtier("bench", "backup", "--to", str(pg_dir / "nope"), cwd=pg_dir), "no such directory")
    assert_clean_error(run_dbtier("bench", "backup", "--to", str(pg_dir), "--methods", "zip", cwd=pg_dir),
                       "unknown method zip")


@needs_root
def test_backup_target_filling_up(pg_dir, loop_device):
    _, mnt = loop_device(40, fs="ext4", mount=True, where=pg_dir)
    r = run_dbtier("bench", "backup", "--to", str(mnt), "--scale", "5", "--methods", "tar", "--out", "run",
                   cwd=pg_dir)
    assert_clean_error(r, "filled up")
    assert list(mnt.glob("dbtier-backup-*")) == [] and postgres_processes("dbtier-pg-") == []


def test_directories_with_quotes_and_glob_characters(pg_dir):
    """--data named `d[1] o'k` beside a decoy `d1 o'k`: the tpchgen Parquet files are read from the very
    directory (DuckDB reads `[1]` as a glob) and the quote does not end the SQL string; a DuckDB backup
    exports into `b[1] o'k`. Before, the quote broke the SQL and the brackets could read the decoy."""
    data, decoy, to = pg_dir / "d[1] o'k", pg_dir / "d1 o'k", pg_dir / "b[1] o'k"
    for d in (data, decoy, to):
        d.mkdir()
    r = dss(pg_dir, "--scale", "0.01", "--repeat", "1", "--queries", "1,6", "--generator", "tpchgen",
            "--data", str(data), "--json", "--out", "run")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [q["rows"] > 0 for q in doc["queries"]] == [True, True] and doc["placement"]["data"].startswith(str(data))
    assert list(decoy.iterdir()) == []
    r = run_dbtier("bench", "backup", "--engine", "duckdb", "--scale", "0.01", "--to", str(to), "--data", str(data),
                   "--json", "--out", "run-b", cwd=pg_dir)
    assert r.returncode == 0, r.stderr
    assert list(to.iterdir()) == []
