"""Statistics on hand-worked numbers."""

import math

import pytest

from dbtier.core.stats import linear_fit, percentile, snia_steady_state, sweep_should_stop


def test_percentile_interpolates_between_ranks():
    xs = [10, 20, 30, 40]
    # rank (4-1)*0.5 = 1.5 -> halfway between 20 and 30
    assert percentile(xs, 50) == 25
    # rank 3*0.99 = 2.97 -> 30 + 0.97*10
    assert percentile(xs, 99) == pytest.approx(39.7)
    assert percentile(xs, 0) == 10 and percentile(xs, 100) == 40
    assert percentile([7], 99) == 7


def test_percentile_of_nothing_is_an_error():
    with pytest.raises(ValueError):
        percentile([], 50)


def test_linear_fit_exact_line():
    slope, intercept = linear_fit([3, 5, 7, 9])
    assert slope == pytest.approx(2) and intercept == pytest.approx(3)


def test_steady_state_needs_five_rounds():
    assert snia_steady_state([100, 100, 100, 100]) is None


def test_steady_state_reached_on_flat_window():
    # window 100,102,98,101,99: avg 100, range 4 -> 4%;
    # fit: x-2 = -2..2, y-100 = 0,2,-2,1,-1 -> sxy = -3, sxx = 10, slope -0.3 -> excursion 1.2%
    s = snia_steady_state([300, 200, 100, 102, 98, 101, 99])
    assert s.reached
    assert s.average == pytest.approx(100)
    assert s.range_pct == pytest.approx(4.0)
    assert s.excursion_pct == pytest.approx(1.2)


def test_steady_state_range_too_wide():
    # 80..105: avg 96, range 25/96 = 26% > 20%
    s = snia_steady_state([80, 100, 105, 100, 95])
    assert not s.reached
    assert s.range_pct == pytest.approx(25 / 95 * 100 * 95 / 96)


def test_steady_state_slope_too_steep_even_within_range():
    # a steady climb 100,104,108,112,116: avg 108, range 16/108 = 14.8% (ok),
    # slope 4/round -> excursion 16/108 = 14.8% > 10%
    s = snia_steady_state([100, 104, 108, 112, 116])
    assert s.range_pct == pytest.approx(16 / 108 * 100)
    assert s.excursion_pct == pytest.approx(16 / 108 * 100)
    assert not s.reached


def test_steady_state_zero_average_is_not_steady():
    s = snia_steady_state([0, 0, 0, 0, 0])
    assert not s.reached and math.isinf(s.range_pct)


def test_sweep_keeps_going_through_one_flat_step():
    # 97.5k -> 98.8k is flat, but 2 jobs later reach 117k: one flat point must not stop it
    assert not sweep_should_stop([20_000, 57_000, 97_500, 98_800])
    assert not sweep_should_stop([20_000, 57_000, 97_500, 98_800, 105_800])


def test_sweep_stops_after_two_points_without_gain():
    assert sweep_should_stop([50_000, 100_000, 101_000, 102_500])  # both < 103,000
    assert not sweep_should_stop([50_000, 100_000, 101_000, 103_500])


def test_sweep_patience_one():
    assert sweep_should_stop([1000, 1400, 1420], patience=1, min_gain=0.05)
    assert not sweep_should_stop([1000, 1600], patience=1, min_gain=0.5)
