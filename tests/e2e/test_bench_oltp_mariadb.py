"""`dbtier bench oltp --engine mariadb` for real: a managed MariaDB, sysbench's read-write sweep, the
PostgreSQL point's keys with InnoDB's counters, durability in the result, index= refused, and nothing
left running or on disk -- also when mariadbd is killed with SIGKILL mid-sweep."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import jsonschema
import pytest

from conftest import assert_clean_error, have, load_doc, run_dbtier
from dbtier.results.schema import result_schema

pytestmark = [pytest.mark.engine,
              pytest.mark.skipif(not have("mariadb-install-db") or not have("sysbench"),
                                 reason="MariaDB or sysbench is not installed")]

SHORT = ["--engine", "mariadb", "--workload", "sysbench-rw", "--scale", "1", "--warmup", "0"]


def bench(d: Path, *args: str) -> subprocess.CompletedProcess:
    return run_dbtier("bench", "oltp", *args, cwd=d)


def server_ids(d: Path) -> list[str]:
    return [p.name.split("-")[2] for p in d.glob("dbtier-mariadb-*")]


def left(d: Path, ids: list[str]) -> list[str]:
    """This run's server: its directories under d and the temp directory, and its processes."""
    found = [str(p) for p in d.glob("dbtier-mariadb-*")]
    for i in ids:
        found += [str(p) for p in Path(tempfile.gettempdir()).glob(f"dbtier-mariadb-{i}*")]
        out = subprocess.run(["pgrep", "-a", "-f", f"dbtier-mariadb-{i}"], capture_output=True, text=True).stdout
        found += [x for x in out.splitlines() if "mariadbd" in x]
    return found


def test_sysbench_sweep_contract_and_cleanup(pg_dir):
    r = bench(pg_dir, *SHORT, "--clients", "1,2", "--duration", "3", "--json", "--out", "run")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, result_schema())
    assert doc["engine"] == "mariadb" and doc["params"]["engine"] == "sysbench (MariaDB)"
    assert doc["durability"] == {"durable": True,
                                 "reason": "innodb_flush_log_at_trx_commit=1, doublewrite on, binary log off"}
    assert doc["params"]["settings"]["innodb_flush_log_at_trx_commit"] == "1"
    assert set(doc["placement"]) == {"data", "redo", "undo", "temp"}
    assert doc["load"]["database_bytes"] > 10e6 and doc["load"]["rows"] == 100_000
    # the default budget: with O_DIRECT the pool is all the cache, a quarter of the data at least 32 MiB
    assert doc["memory"]["shared_buffers_bytes"] == 32 * 2**20 or doc["memory"]["mechanism"] in ("none", "size")
    assert [p["clients"] for p in doc["points"]] == [1, 2]
    for p in doc["points"]:
        assert p["tps"] > 0 and p["tpm"] == pytest.approx(p["tps"] * 60) and p["nopm"] is None
        assert p["devices"] and p["devices"][0]["iops"] > 0
        assert p["bottleneck"] in ("cpu", "storage", "commit", "client", "lock", "other", "unknown")
        assert p["bottleneck_evidence"].startswith(p["bottleneck"] + ":")
        assert p["wait_samples"]["error"] is None and p["wait_samples"]["samples"] >= 2
        inn = p["innodb"]
        assert inn["log_bytes"] > 0 and inn["fsyncs"] > 0 and inn["buffer_pool_read_requests"] > 0
        assert p["read_path"]["db_page_reads"] == inn["buffer_pool_reads"]
        assert p["overhead"]["client_cpu_cores"] > 0
    assert (pg_dir / "run" / "raw" / "server-single.log").exists()
    assert (pg_dir / "run" / "raw" / "sysbench-prepare.txt").exists()
    assert left(pg_dir, server_ids(pg_dir)) == []


def test_flush_log_at_trx_commit_2_is_not_durable(pg_dir):
    r = bench(pg_dir, *SHORT, "--clients", "1", "--duration", "1", "--memory", "none",
              "--flush-log-at-trx-commit", "2", "--json", "--out", "run")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["durability"]["durable"] is False
    assert doc["durability"]["reason"].startswith("innodb_flush_log_at_trx_commit=2: the redo log is not flushed")
    assert doc["points"][0]["tps"] > 0
    assert left(pg_dir, []) == []


def test_index_placement_is_refused_with_innodbs_reason(pg_dir):
    (pg_dir / "ix").mkdir()
    r = bench(pg_dir, *SHORT, "--clients", "1", "--duration", "1", "--place", f"index={pg_dir / 'ix'}")
    assert_clean_error(r, "InnoDB keeps a table's indexes in the table's own file")
    r = bench(pg_dir, "--engine", "mariadb", "--workload", "tpcb", "--clients", "1")
    assert_clean_error(r, "the mariadb engine has no workload 'tpcb'")
    assert left(pg_dir, []) == []


def test_server_killed_mid_sweep_keeps_finished_points(pg_dir):
    proc = subprocess.Popen([sys.executable, "-m", "dbtier", "bench", "oltp", *SHORT, "--memory", "none",
                             "--clients", "1,2", "--duration", "8", "--out", "run"], cwd=pg_dir,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 180
    while time.time() < deadline:
        assert proc.poll() is None, proc.stderr.read()
        try:
            if len(load_doc(pg_dir / "run")["points"]) >= 1:
                break
        except (FileNotFoundError, KeyError, json.JSONDecodeError):
            pass
        time.sleep(0.2)
    time.sleep(2.0)                                # into the second (8 s) point
    ids = server_ids(pg_dir)
    pids = [p for i in ids for p in Path(tempfile.gettempdir()).glob(f"dbtier-mariadb-{i}-*/run/mariadbd.pid")]
    assert pids
    os.kill(int(pids[0].read_text().split()[0]), signal.SIGKILL)
    out, err = proc.communicate(timeout=180)
    assert proc.returncode != 0 and "Traceback" not in err
    assert "MariaDB died during the 2-client point" in err or "MariaDB is no longer running" in err, err
    doc = load_doc(pg_dir / "run")
    assert doc["status"] == "failed" and [p["clients"] for p in doc["points"]] == [1]
    assert left(pg_dir, ids) == []


def test_backup_of_mariadb_through_the_cli(pg_dir):
    """`bench backup --engine mariadb` (each method is tested in test_backup_mariadb.py): the stream to a directory and to null, the limiting side
    named, nothing left under --to."""
    to = pg_dir / "to"
    to.mkdir()
    r = run_dbtier("bench", "backup", "--engine", "mariadb", "--to", str(to), "--scale", "1",
                   "--methods", "stream", "--json", "--out", "bk", cwd=pg_dir)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, result_schema())
    assert doc["engine"] == "mariadb" and doc["params"]["methods"] == ["stream"]
    got = [(t["method"], t["target"]) for t in doc["targets"]]
    assert got == [("mariadb-backup stream", "null"), ("mariadb-backup stream", "dir")]
    for t in doc["targets"]:
        assert t["bytes"] > 10e6 and t["mbps"] > 0 and t["bottleneck"]
    assert list(to.iterdir()) == []
    assert left(pg_dir, server_ids(pg_dir)) == []
    assert_clean_error(run_dbtier("bench", "backup", "--engine", "mariadb", "--to", str(to), "--methods", "tar",
                                  cwd=pg_dir), "--methods: unknown method tar", "plain, stream, stream-gzip")
    assert_clean_error(run_dbtier("bench", "backup", "--engine", "duckdb", "--to", str(to), "--methods", "tar",
                                  cwd=pg_dir), "--methods does not apply to duckdb", "leave --methods out")
