"""Answer checking, totals, estimates and the backup rule on hand-made data."""

import datetime as dt
from decimal import Decimal

import pytest

from dbtier.model.dss import backup_bottleneck, check_answer, estimate, geomean

Q1_HEAD = "l_returnflag|l_linestatus|sum_qty|avg_disc|count_order\n"


def test_answer_matches_with_decimals_dates_and_float_noise():
    answer = Q1_HEAD + "A|F|380456.00|0.05008133906964238|14876\nN|O|742802.00|0.04999|1\n"
    rows = [("A", "F", Decimal("380456.00"), 0.050081339069642385, 14876), ("N", "O", Decimal("742802"), 0.04999, 1)]
    assert check_answer(rows, answer) is None


def test_answer_differences_are_named():
    answer = Q1_HEAD + "A|F|380456.00|0.05|14876\n"
    assert check_answer([("A", "F", Decimal("380457.00"), 0.05, 14876)], answer) == \
        "row 1, column 3: '380457.00', expected '380456.00'"
    assert check_answer([], answer) == "0 rows, expected 1"
    assert check_answer([("A", "F")], answer) == "row 1: 2 columns, expected 5"


def test_a_null_row_is_a_blank_line():
    assert check_answer([(None,)], "avg_yearly\n\n") is None
    assert check_answer([], "avg_yearly\n\n") == "0 rows, expected 1"


def test_dates_compare_as_iso_text():
    assert check_answer([(dt.date(1995, 3, 15), 3)], "o_orderdate|n\n1995-03-15|3\n") is None


def test_geomean():
    assert geomean([1.0, 4.0, 16.0]) == pytest.approx(4.0)
    assert geomean([]) is None


def test_estimate_scales_linearly():
    assert estimate("duckdb", 10, "on") == {"disk_gb": 3.0, "memory_gb": 12.0}
    assert estimate("duckdb", 1, "off")["disk_gb"] == 1.0
    assert estimate("postgres", 2)["disk_gb"] == 4.0


def test_backup_bottleneck_rules():
    # the null sink far faster than the directory: the target, whatever the busy figures say (a throttled
    # target shows no busy time): tar wrote 39 MB/s against 786 MB/s to null, 786 / 39 = 20.15 times
    kind, why = backup_bottleneck("dir", False, 0.4, 5, 0, 39, 786)
    assert kind == "target" and "786 MB/s to the null sink (20.2 times)" in why
    # the factor is 1.25: 125 / 100 is the target, 124 / 100 the source
    assert backup_bottleneck("dir", False, 0.3, 50, 50, 100, 125)[0] == "target"
    assert backup_bottleneck("dir", False, 0.3, 50, 50, 100, 124)[0] == "source"
    # compression that pegs a core, the null sink no faster (110 / 100 = 1.1): the CPU
    assert backup_bottleneck("dir", True, 0.97, 20, 30, 100, 110)[0] == "cpu"
    # compression that pegs a core, but null 3 times faster: the target (the CPU compressed 300 MB/s there)
    assert backup_bottleneck("dir", True, 0.97, 20, 30, 100, 300)[0] == "target"
    # as fast as null (346 / 330 = 1.05): the source, even with the source device only 90% busy
    kind, why = backup_bottleneck("dir", False, 0.3, 90, 50, 330, 346)
    assert kind == "source" and "under 1.25 times" in why
    assert backup_bottleneck("null", False, 0.3, 90, 0, 346, None)[0] == "source"


def test_backup_bottleneck_at_a_throttle():
    # 40 MiB/s = 40 * 1,048,576 / 1e6 = 41.94 MB/s; 39.0 written is 93% of it: within 10%, the throttle,
    # even though the null sink (40.5) is not 1.25 times faster and no device shows busy time
    limit = 40 * 1048576 / 1e6
    kind, why = backup_bottleneck("dir", False, 0.3, 2, 0, 39.0, 40.5, dst_throttle=(39.0, limit, "MB/s"))
    assert kind == "target" and "93% of its throttle's 41.9 MB/s: the throttle" in why
    # 30 MB/s is 72% of it: not the throttle; null (31) not 1.25 times faster: the source
    assert backup_bottleneck("dir", False, 0.3, 2, 0, 30.0, 31.0, dst_throttle=(30.0, limit, "MB/s"))[0] == "source"
    # an IOPS throttle: 480 write IOPS against 500 (96%)
    assert backup_bottleneck("dir", False, 0.3, 2, 0, 60, 61, dst_throttle=(480, 500, "IOPS"))[0] == "target"
    # a throttled source (null sink): 40.5 of 41.94 MB/s read (97%)
    kind, why = backup_bottleneck("null", False, 0.3, 0, 0, 40.5, None, src_throttle=(40.5, limit, "MB/s"))
    assert kind == "source" and "read 40.5 MB/s" in why


def test_backup_bottleneck_without_a_null_sink():
    # busy time alone, said as such: 95% against 40% (55 points) is the target ...
    kind, why = backup_bottleneck("dir", False, 0.3, 40, 95, 200, None)
    assert kind == "target" and "busy time alone" in why
    # ... 95% on both (one device): not determined, and neither is 60% against 20%
    assert backup_bottleneck("dir", False, 0.3, 95, 95, 200, None)[0] == "undetermined"
    assert backup_bottleneck("dir", False, 0.3, 20, 60, 200, None)[0] == "undetermined"
    assert backup_bottleneck("dir", False, 0.3, 96, 40, 200, None)[0] == "source"


def test_warm_runs_true_median_and_spread():
    """Q1 cold 5.0 s, warm 2.0 s and 3.0 s: the figure is (2.0 + 3.0) / 2 = 2.5 s (the lower-middle rule
    gave 2.0 s), warm spread 2.0-3.0 s, n=2, (3 - 2) / 2.5 = 40%; rows/bytes from the lower middle run."""
    from dbtier.model.dss import combine_query_runs

    def rec(run, s, cold=False):
        return {"query": 1, "run": run, "cold": cold, "seconds": s, "rows": 4, "temp_bytes": run * 10,
                "read_bytes": run * 100, "write_bytes": 0, "cpu_util": 50.0 + run}
    q = combine_query_runs([rec(1, 5.0, cold=True), rec(2, 3.0), rec(3, 2.0)])
    assert q["seconds"] == 2.5 and q["cold_seconds"] == 5.0
    assert q["warm"] == {"median": 2.5, "min": 2.0, "max": 3.0, "n": 2, "spread_pct": pytest.approx(40.0)}
    assert q["read_bytes"] == 300 and q["cpu_util"] == 53.0          # run 3, the faster middle run
    assert q["temp_bytes"] == 30 and q["runs_seconds"] == [5.0, 3.0, 2.0]
    one = combine_query_runs([rec(1, 5.0, cold=True), rec(2, 3.0)])
    assert one["seconds"] == 3.0 and one["warm"]["n"] == 1 and one["warm"]["spread_pct"] is None
    cold_only = combine_query_runs([rec(1, 5.0, cold=True)])
    assert cold_only["seconds"] == 5.0 and cold_only["warm"]["n"] == 0


def test_warm_power_run_totals():
    """Runs: cold (5 + 4), warm (2 + 1) = 3 and (3 + 2) = 5, and an unfinished warm run (q1 only, left
    out): totals 3 and 5, median 4, n=2."""
    from dbtier.model.dss import run_totals
    runs = [[{"query": 1, "seconds": 5.0, "cold": True}, {"query": 2, "seconds": 4.0, "cold": True}],
            [{"query": 1, "seconds": 2.0, "cold": False}, {"query": 2, "seconds": 1.0, "cold": False}],
            [{"query": 1, "seconds": 3.0, "cold": False}, {"query": 2, "seconds": 2.0, "cold": False}],
            [{"query": 1, "seconds": 9.0, "cold": False}]]
    t = run_totals(runs, [1, 2])
    assert (t["median"], t["min"], t["max"], t["n"], t["runs"]) == (4.0, 3.0, 5.0, 2, [3.0, 5.0])
