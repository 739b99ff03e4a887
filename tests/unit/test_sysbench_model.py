"""sysbench's command line and a point's figures, from plain values (workloads/parsers/sysbench.py)."""

import pytest

from dbtier.workloads.parsers.sysbench import (MysqlTarget, histogram_percentile, layout, point_figures, sysbench_args,
                                   sysbench_seconds)

SOCK = MysqlTarget(user="dbtier", db="dbtier_bench", socket="/run/x/mysqld.sock")


def test_run_argv_closed_loop_over_the_socket():
    a = sysbench_args("sysbench-rw", "run", SOCK, tables=4, table_size=25000, threads=8, seconds=30)
    assert a == ["sysbench", "oltp_read_write", "--mysql-socket=/run/x/mysqld.sock", "--mysql-user=dbtier",
                 "--mysql-db=dbtier_bench", "--tables=4", "--table-size=25000", "--threads=8", "--time=30",
                 "--report-interval=1", "--percentile=95", "--histogram=on", "run"]


def test_run_argv_open_loop_host_port_and_password_file():
    t = MysqlTarget(user="bench", db="dbtier_1a2b3c4d", host="db.example", port=3307, config_file="/r/sb.cfg")
    a = sysbench_args("sysbench-point", "run", t, tables=2, table_size=10, threads=4, seconds=2.5, rate=199.6,
                      percentile=99, histogram=False, sysbench="/usr/bin/sysbench")
    assert a[:2] == ["/usr/bin/sysbench", "oltp_point_select"]
    assert a[2] == "--config-file=/r/sb.cfg"     # the password lives there, never on the command line
    assert "--mysql-host=db.example" in a and "--mysql-port=3307" in a and not any("password" in x for x in a)
    assert "--time=3" in a and "--rate=200" in a and "--percentile=99" in a and "--histogram=off" in a
    assert a[-1] == "run"


def test_each_workload_maps_to_sysbench_s_test():
    tests = {w: sysbench_args(w, "run", SOCK, tables=1, table_size=1, seconds=1)[1]
             for w in ("sysbench-rw", "sysbench-ro", "sysbench-wo", "sysbench-point")}
    assert tests == {"sysbench-rw": "oltp_read_write", "sysbench-ro": "oltp_read_only",
                     "sysbench-wo": "oltp_write_only", "sysbench-point": "oltp_point_select"}


def test_prepare_and_cleanup_take_no_run_options():
    for cmd in ("prepare", "cleanup"):
        a = sysbench_args("sysbench-ro", cmd, SOCK, tables=4, table_size=25000, threads=2)
        assert a[-1] == cmd and not any(x.startswith(("--time", "--rate", "--histogram")) for x in a)


def test_warmup_only_on_a_sysbench_that_has_it():
    plain = sysbench_args("sysbench-rw", "run", SOCK, tables=1, table_size=1, seconds=5, warmup_s=2)
    assert not any(x.startswith("--warmup-time") for x in plain)   # 1.0.20: "invalid option"
    native = sysbench_args("sysbench-rw", "run", SOCK, tables=1, table_size=1, seconds=5, warmup_s=1.2,
                           native_warmup=True)
    assert "--warmup-time=2" in native


def test_refusals():
    with pytest.raises(ValueError):
        sysbench_args("tpcc", "run", SOCK, tables=1, table_size=1, seconds=1)
    with pytest.raises(ValueError):
        sysbench_args("sysbench-rw", "drop", SOCK, tables=1, table_size=1)
    with pytest.raises(ValueError):
        sysbench_args("sysbench-rw", "run", SOCK, tables=1, table_size=1)


def test_layout_is_pgbench_s_rows_per_scale():
    assert layout(1) == (4, 25_000)       # 100,000 rows as pgbench's scale 1
    assert layout(10, tables=8) == (8, 125_000)
    assert sysbench_seconds(0.4) == 1 and sysbench_seconds(3) == 3 and sysbench_seconds(2.01) == 3


def test_histogram_percentile_hand_worked():
    # 10 events: 1.0 x4, 2.0 x5, 9.0 x1. p50: rank round(5.0)=5 -> 2.0; p95: round(9.5)=10 -> 9.0;
    # p30: round(3.0)=3 -> 1.0; p35: round(3.5)=4 -> 1.0; p45: round(4.5)=5 -> 2.0
    h = [(1.0, 4), (2.0, 5), (9.0, 1)]
    assert [histogram_percentile(h, p) for p in (30, 35, 45, 50, 95, 99)] == [1.0, 1.0, 2.0, 2.0, 9.0, 9.0]
    assert histogram_percentile([], 95) is None


def test_point_figures_without_a_histogram_keep_the_printed_percentile():
    parsed = {"transactions": 600, "tps": 200.0, "errors": 3, "histogram": [], "percentile": 99,
              "lat_pct_ms": 7.5, "lat_max_ms": 20.0, "lat_avg_ms": 3.0}
    f = point_figures(parsed, 2, 3.0, None)
    assert f["lat_ms"] == {"p50": None, "p95": None, "p99": 7.5, "max": 20.0, "mean": 3.0}
    assert f["duration_s"] == 3.0 and f["tps"] == 200.0 and f["tpm"] == 12000.0 and f["failed"] == 3
    assert f["latency_source"] == "sysbench summary" and f["latency_excludes_queue"] is False


def test_point_figures_of_nothing_measured():
    f = point_figures({"transactions": 0, "tps": 0.0, "total_time_s": None}, 1, 1.0, None)
    assert f["tps"] == 0.0 and f["duration_s"] is None and f["duration_source"] == "none"


def test_point_keys_are_a_postgres_point_s_where_they_apply():
    f = point_figures({"transactions": 10, "tps": 5.0, "histogram": [(1.0, 10)]}, 1, 2.0, 5.0)
    for k in ("clients", "tps", "tpm", "nopm", "lat_ms", "transactions", "failed", "rate", "duration_s",
              "duration_source", "requested_s"):
        assert k in f
    assert set(f["lat_ms"]) == {"p50", "p95", "p99", "max", "mean"}
    assert f["nopm"] is None
