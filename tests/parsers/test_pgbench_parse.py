"""pgbench's report and per-transaction log, saved from a real tpcc run (PostgreSQL 15.18)."""

from pathlib import Path

import pytest

from dbtier.model.oltp import latency_summary, parse_pgbench_log, parse_pgbench_summary

DATA = Path(__file__).parent.parent / "data" / "pgbench"


def test_summary_of_a_real_run():
    s = parse_pgbench_summary((DATA / "tpcc-c2-stdout.txt").read_text())
    assert s["transactions"] == 2608 and s["failed"] == 0
    assert s["tps"] == pytest.approx(522.862399)
    assert s["latency_avg_ms"] == pytest.approx(3.825)
    assert s["clients"] == 2 and s["threads"] == 2


def test_log_lines_to_latency():
    lat, failed = parse_pgbench_log((DATA / "tpcc-c2-log.txt").read_text().splitlines())
    assert len(lat) == 40 and failed == 0
    assert lat[:3] == [18.662, 8.386, 1.393]  # time_us / 1000


def test_open_loop_latency_counts_schedule_lag_and_failures():
    lines = ["0 1 1500 0 1795305257 340487 500",     # 1.5 ms + 0.5 ms lag
             "0 2 failed 0 1795305257 350000 0",
             "1 1 skipped 0 1795305258 1 0",
             "1 2 2000 0 1795305258 2000 3000"]
    lat, failed = parse_pgbench_log(lines, with_lag=True)
    assert lat == [2.0, 5.0] and failed == 2
    assert parse_pgbench_log(lines[:1], with_lag=False)[0] == [1.5]


def test_latency_summary_hand_worked():
    s = latency_summary([1.0, 2.0, 3.0, 4.0, 100.0])
    assert s["p50"] == 3.0 and s["max"] == 100.0 and s["mean"] == 22.0
    assert s["p95"] == pytest.approx(4 + 0.8 * 96)  # rank 3.8
    assert latency_summary([])["p50"] is None
