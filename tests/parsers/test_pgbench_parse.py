"""pgbench's report and per-transaction log, saved from a real tpcc run (PostgreSQL 15.18)."""

from pathlib import Path

import pytest

from dbtier.workloads.parsers.oltp import latency_summary, parse_pgbench_log, parse_pgbench_summary

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


def test_elapsed_time_is_pgbench_s_own():
    """pgbench prints tps = transactions / its measured time: 2608 / 522.862399 = 4.98793 s of `-T 5`."""
    s = parse_pgbench_summary((DATA / "tpcc-c2-stdout.txt").read_text())
    assert s["duration_s"] == 5
    assert s["elapsed_s"] == pytest.approx(2608 / 522.862399) == pytest.approx(4.98793, abs=1e-5)


def test_a_fractional_duration_divides_by_the_second_pgbench_ran():
    """A real `bench oltp --duration 0.4` point (tpcc, 1 client, PostgreSQL 15.18): pgbench ran `-T 1`,
    137 transactions at tps = 137.360572, so it measured 137 / 137.360572 = 0.99738 s. TPS over the
    measured time: 137.36; over the 0.4 s asked for (the old rule): 137 / 0.4 = 342.5, 2.5x too high."""
    from dbtier.workloads.parsers.oltp import measured_window, rates
    s = parse_pgbench_summary((DATA / "tpcc-c1-duration0.4-stdout.txt").read_text())
    assert s["duration_s"] == 1 and s["transactions"] == 137 and s["tps"] == pytest.approx(137.360572)
    secs, src = measured_window(s, 1.05)
    assert src == "pgbench" and secs == pytest.approx(0.99738, abs=1e-5)
    assert rates(137, None, secs)["tps"] == pytest.approx(137.360572)
    assert 137 / 0.4 == pytest.approx(2.5 * 137)           # the figure before: 342.5 TPS
