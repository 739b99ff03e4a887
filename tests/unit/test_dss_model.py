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
    # compression pegging a core
    assert backup_bottleneck("dir", True, 0.97, 20, 30, 100, 300)[0] == "cpu"
    # the disk target is much slower than null and busier than the source
    kind, why = backup_bottleneck("dir", False, 0.3, 40, 95, 120, 346)
    assert kind == "target" and "346 MB/s to null" in why
    # as fast as null: the source limits
    assert backup_bottleneck("dir", False, 0.3, 90, 50, 330, 346)[0] == "source"
    assert backup_bottleneck("null", False, 0.3, 90, 0, 346, None)[0] == "source"
