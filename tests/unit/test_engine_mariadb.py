"""workloads/engine_mariadb.py's pure parts: options -> settings, durability of both engines, the refused
index role, the workload choice per engine, and a point assembled from saved MariaDB 10.11 output
(tests/data/innodb/: the `rw` run). Expected figures are worked by hand from the saved numbers."""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

import pytest

from dbtier.cli.bench import command as bench

from dbtier.cli.bench import oltp_checks as bench_oltp_checks
from dbtier.cli.settings_options import add_engine_options, engine_options
from dbtier.core.errors import DbtierError
from dbtier.workloads.parsers.innodb import session_classes, status_values
from dbtier.workloads.parsers.sysbench import parse_sysbench, point_figures
from dbtier.workloads import engine as eng
from dbtier.workloads.engine_mariadb import (MariaDBEngine, buffer_pool_size, dsn_password, innodb_point,
                                             parse_wait_rows, server_conf, settings_of, size_bytes)
from dbtier.workloads.engine_postgres import PostgresEngine, PostgresOptions
from dbtier.workloads.settings import EngineOptions
from samples import DATA

D = DATA / "innodb"


def parse(*argv: str) -> EngineOptions:
    """The options as `bench oltp --engine mariadb` gives them to the engine."""
    p = argparse.ArgumentParser()
    add_engine_options(p, MariaDBEngine, "oltp")
    return engine_options(MariaDBEngine, "oltp", p.parse_args(list(argv)))


def test_defaults_are_durable_with_a_small_buffer_pool():
    conf = MariaDBEngine.settings(parse(), [1, 2, 8])
    assert conf["innodb_buffer_pool_size"] == "128M" and conf["innodb_flush_log_at_trx_commit"] == "1"
    assert conf["innodb_doublewrite"] == "ON" and conf["innodb_flush_method"] == "O_DIRECT"
    assert conf["max_connections"] == "18" and conf["performance_schema"] == "ON"
    assert "sync_binlog" not in conf                      # binary log off
    assert MariaDBEngine.durability(conf) == (True, "innodb_flush_log_at_trx_commit=1, doublewrite on, "
                                                    "binary log off")
    assert MariaDBEngine.buffer_request_bytes(parse()) == 128 * 2**20


def test_each_option_reaches_its_setting_and_comes_back():
    args = parse("--buffer-pool-size", "1g", "--flush-log-at-trx-commit", "2", "--sync-binlog", "0",
                 "--doublewrite", "off", "--flush-method", "fsync", "--binlog", "on")
    conf = MariaDBEngine.settings(args, [4])
    assert conf["innodb_buffer_pool_size"] == "1G" and conf["innodb_flush_log_at_trx_commit"] == "2"
    assert conf["sync_binlog"] == "0" and conf["innodb_doublewrite"] == "OFF"
    assert conf["innodb_flush_method"] == "fsync"
    s = settings_of(conf)
    assert (s.innodb_buffer_pool_size, s.innodb_flush_log_at_trx_commit, s.sync_binlog, s.innodb_doublewrite,
            s.innodb_flush_method, s.binlog, s.max_connections) == ("1G", 2, 0, False, "fsync", True, 14)
    assert s.conf() == conf                               # the round trip is exact
    assert MariaDBEngine.buffer_request_bytes(args) == 2**30


@pytest.mark.parametrize("argv, reason", [
    (("--flush-log-at-trx-commit", "2"), "innodb_flush_log_at_trx_commit=2"),
    (("--flush-log-at-trx-commit", "0"), "innodb_flush_log_at_trx_commit=0"),
    (("--doublewrite", "off"), "innodb_doublewrite=OFF"),
    (("--flush-method", "nosync"), "innodb_flush_method=nosync"),
    (("--binlog", "on", "--sync-binlog", "0"), "sync_binlog=0"),
])
def test_each_non_durable_setting_is_named(argv, reason):
    durable, why = MariaDBEngine.durability(MariaDBEngine.settings(parse(*argv), [1]))
    assert durable is False and why.startswith(reason)


def test_bad_option_values_are_refused():
    for bad in (("--buffer-pool-size", "4M"), ("--buffer-pool-size", "lots"), ("--flush-log-at-trx-commit", "3"),
                ("--doublewrite", "maybe"), ("--sync-binlog", "-1"), ("--flush-method", "O_SYNC")):
        with pytest.raises(SystemExit):
            parse(*bad)
    assert size_bytes("134217728") == 134217728 and size_bytes("2K") == 2048
    assert buffer_pool_size("64m") == "64M"


def test_postgres_durability():
    base = PostgresEngine.settings(PostgresOptions("oltp", shared_buffers="128MB", synchronous_commit="on",
                                                   checkpoint_timeout="5min", max_wal_size="1GB"), [1])
    assert PostgresEngine.durability(base)[0] is True
    off = {**base, "synchronous_commit": "off"}
    assert PostgresEngine.durability(off) == (False, "synchronous_commit=off: a commit returns before its WAL is "
                                                     "flushed (the last commits are lost on a crash)")
    assert PostgresEngine.durability({**base, "fsync": "off"})[0] is False
    assert PostgresEngine.durability({**base, "synchronous_commit": "local"})[0] is True


def test_index_is_refused_with_innodbs_reason():
    with pytest.raises(DbtierError, match="index=/x: InnoDB keeps a table's indexes in the table's own file"):
        eng.parse_placement("data=/d,index=/x", MariaDBEngine.roles, MariaDBEngine.refused_roles)
    assert eng.parse_placement("redo=/r,undo=/u", MariaDBEngine.roles, MariaDBEngine.refused_roles) == \
        {"redo": "/r", "undo": "/u"}


def test_workloads_are_the_union_and_each_engine_refuses_what_it_lacks():
    assert set(bench.oltp_workloads()) >= {"tpcc", "tpcb", "sysbench-rw", "sysbench-point"}
    ns = argparse.Namespace(workload="tpcb")
    with pytest.raises(DbtierError, match="the mariadb engine has no workload 'tpcb'") as e:
        bench_oltp_checks.workload(ns, MariaDBEngine)
    assert "sysbench-rw" in e.value.hint
    with pytest.raises(DbtierError, match="the postgres engine has no workload 'sysbench-rw'"):
        bench_oltp_checks.workload(argparse.Namespace(workload="sysbench-rw"), PostgresEngine)
    assert bench_oltp_checks.workload(argparse.Namespace(workload=None), PostgresEngine) == "tpcc"
    assert bench_oltp_checks.workload(argparse.Namespace(workload=None), MariaDBEngine) in MariaDBEngine.workloads


def test_dsn_password_from_the_environment_then_my_cnf(tmp_path: Path):
    assert dsn_password({"MYSQL_PWD": "pw1"}, tmp_path) == "pw1"
    assert dsn_password({}, tmp_path) is None
    (tmp_path / ".my.cnf").write_text("[client]\nuser = me\npassword = 's3cret'\n")
    assert dsn_password({}, tmp_path) == "s3cret"
    with pytest.raises(DbtierError, match="password in the DSN is refused"):
        MariaDBEngine.check_dsn("mysql://me:pw@db:3306/")
    assert MariaDBEngine.shown_dsn("mysql://me:pw@db:3306/") == "mysql://me:***@db:3306/"


# --- a point from the saved `rw` run -----------------------------------------------------------------------

def _status(when: str) -> dict[str, float]:
    rows = [line.split("\t", 1) for line in (D / f"rw-status-{when}.tsv").read_text().splitlines()[1:]]
    return status_values((n, v) for n, v in rows)


def _wait_samples() -> list[str]:
    """The waits file's samples as the client prints them (no header: --skip-column-names)."""
    out: list[list[str]] = []
    for line in (D / "rw-waits.tsv").read_text().splitlines():
        if line.startswith("# sample"):
            out.append([])
        elif line and not line.startswith("conn_id\t"):
            out[-1].append(line)
    return ["\n".join(s) for s in out]


def test_wait_rows_parse_as_the_model_reads_them():
    rows = parse_wait_rows(_wait_samples()[0])
    assert rows[0] == {"conn_id": "87", "command": "Sleep", "state": None, "trx_state": "RUNNING", "event_id": "13107",
                       "in_progress": "1", "event_name": "idle", "operation": "idle", "nesting_event_id": None}


def test_point_of_the_read_write_run_by_hand():
    text = (D / "rw-sysbench.txt").read_text()
    driven = point_figures(parse_sysbench(text), 8, 10.0, None)
    driven.update(wall_s=10.064, overhead={"client_cpu_cores": 0.2, "client_cpu_s": 2.0,
                                           "client_cpu_pct_of_machine": 10.0}, raw="raw/x.txt")
    counts = sum((session_classes(parse_wait_rows(s)) for s in _wait_samples()), Counter())
    dev = {"iops": 9000.0, "read_iops": 7000.0, "read_ios": 70000, "write_iops": 2000.0, "mbps": 150.0,
           "await_ms": 0.9, "busy_pct": 95.0, "queue": 7.5, "read_bytes": 1, "write_bytes": 2}
    overall = {"cpu": {"busy_pct": 40.0, "iowait_pct": 50.0, "user_pct": 25.0, "system_pct": 15.0},
               "seconds": 10.0, "devices": {"vda": dev}}
    p = innodb_point(driven, overall, [], counts, 12, None, _status("before"), _status("after"), cpus=2,
                     remote=False, sampler_cpu_s=0.02)
    # raw deltas, after - before from the .tsv files
    assert p["innodb"]["buffer_pool_reads"] == 320981 - 247147 == 73834
    assert p["innodb"]["fsyncs"] == 46450 - 39540 == 6910
    assert p["innodb"]["log_bytes"] == 119805822 - 107706412
    assert p["innodb"]["row_lock_waits"] == 11413 - 11390
    # per transaction over sysbench's 3385 transactions; the window is 3385 / 338.09 s
    assert p["innodb"]["fsyncs_per_transaction"] == pytest.approx(6910 / 3385)
    assert p["innodb"]["fsyncs_per_s"] == pytest.approx(6910 / (3385 / 338.09))
    # the cache guard: 70,000 device reads against 73,834 pages InnoDB read
    assert p["read_path"]["db_page_reads"] == 73834 and p["read_path"]["device_fraction"] == pytest.approx(70000 / 73834)
    # PostgreSQL's point keys, with innodb instead of pg
    for k in ("clients", "tps", "tpm", "nopm", "lat_ms", "transactions", "failed", "cpu_util", "devices", "bottleneck",
              "bottleneck_evidence", "waits", "wait_samples", "not_measured", "rate", "duration_s", "read_path",
              "overhead", "series", "raw", "sampled_s"):
        assert k in p, k
    assert "pg" not in p and p["tps"] == pytest.approx(338.09, rel=1e-3) and p["nopm"] is None
    assert p["wait_samples"] == {"backend_states": sum(counts.values()), "samples": 12, "error": None}
    assert sum(p["waits"].values()) == pytest.approx(1.0)
    assert p["devices"][0]["device"] == "vda" and p["not_measured"] == []
    assert p["overhead"]["sampler_cpu_pct_of_machine"] == pytest.approx(100 * 0.02 / 10.064 / 2)
    assert "pgbench" not in p["bottleneck_evidence"] and "backend" not in p["bottleneck_evidence"]
    # the same point with vda an emulated tier throttled to 7,500 read IOPS: 7,000 is 93% of it (>= 90%)
    p = innodb_point(driven, overall, [], counts, 12, None, _status("before"), _status("after"), cpus=2,
                     remote=False, sampler_cpu_s=0.02, throttles={"vda": {"read_iops": 7500, "write_iops": 5000}})
    assert p["bottleneck"] == "storage"
    assert p["bottleneck_evidence"].startswith("storage: reads at 7,000 IOPS against the emulated tier's 7,500 "
                                               "read IOPS throttle (vda)")


def test_a_remote_point_says_what_it_did_not_measure():
    driven = point_figures(parse_sysbench((D / "rw-sysbench.txt").read_text()), 8, 10.0, None)
    p = innodb_point(driven, {"cpu": None, "devices": {}, "seconds": 0.0}, [], Counter(), 0, "gone", {}, {},
                     cpus=2, remote=True, sampler_cpu_s=0.0)
    assert p["not_measured"] == ["server_cpu", "server_devices"] and p["devices"] == []
    assert p["innodb"]["buffer_pool_reads"] is None and p["wait_samples"]["error"] == "gone"


def test_server_conf_reads_a_dsn_servers_durability():
    """SHOW GLOBAL VARIABLES of the user's server -> its own durability, whatever dbtier's options said."""
    rows = [["innodb_buffer_pool_size", "8589934592"], ["innodb_doublewrite", "ON"],
            ["innodb_flush_log_at_trx_commit", "1"], ["innodb_flush_method", "O_DIRECT"], ["log_bin", "OFF"],
            ["sync_binlog", "0"]]
    conf = server_conf(rows)
    assert conf == {"innodb_buffer_pool_size": "8589934592", "innodb_flush_log_at_trx_commit": "1",
                    "innodb_flush_method": "O_DIRECT", "innodb_doublewrite": "ON"}   # sync_binlog: no binary log
    assert MariaDBEngine.durability(conf) == (True, "innodb_flush_log_at_trx_commit=1, doublewrite on, binary log off")
    # the binary log on without sync_binlog=1: not durable
    on = server_conf([*rows[:4], ["log_bin", "ON"], ["sync_binlog", "0"]])
    assert on["sync_binlog"] == "0"
    assert MariaDBEngine.durability(on)[1].startswith("sync_binlog=0 with the binary log on")
    # MySQL 8.0.30+: DETECT_AND_RECOVER repairs torn pages, DETECT_ONLY does not
    assert server_conf([["innodb_doublewrite", "DETECT_AND_RECOVER"]])["innodb_doublewrite"] == "ON"
    assert MariaDBEngine.durability(server_conf([["innodb_flush_log_at_trx_commit", "1"],
                                                 ["innodb_doublewrite", "DETECT_ONLY"]]))[0] is False
    assert MariaDBEngine.durability(server_conf([["innodb_flush_log_at_trx_commit", "2"]]))[1].startswith(
        "innodb_flush_log_at_trx_commit=2")


@pytest.mark.parametrize("engine", [PostgresEngine, MariaDBEngine])
def test_emulating_the_dir_puts_the_whole_datadir_on_the_tier(tmp_path, engine):
    # `--dir SLOW --emulate SLOW=...`: the unplaced cluster goes to --dir, so the tier takes its datadir
    from dbtier.cli.main import build_parser
    slow = tmp_path / "slow"
    slow.mkdir()
    eng = "mariadb" if engine is MariaDBEngine else "postgres"
    base = ["bench", "oltp", "--engine", eng, "--scale", "1", "--warehouses", "1", "--dir", str(slow)]
    ns = build_parser().parse_args([*base, "--emulate", f"{slow}=1000riops,500wiops"])
    _, steps, emulation = bench_oltp_checks.checked(ns, engine)
    assert steps == [("single", {"data": str(slow)})] and emulation.dir == str(slow)
    # a --place that puts data elsewhere keeps it there; the tier must then be one of the placed directories
    ns = build_parser().parse_args([*base, "--place", f"data={tmp_path}", "--emulate", f"{slow}=150iops"])
    with pytest.raises(DbtierError, match="is not one of the placement's directories"):
        bench_oltp_checks.checked(ns, engine)
