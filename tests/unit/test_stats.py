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


# -- issue 13 item 4: one median for every repeat ---------------------------------------------------------

from dbtier.core.stats import median, plateau, representative, spread  # noqa: E402


def test_true_median_of_an_even_count_is_the_mean_of_the_middle_two():
    """100 and 140 TPS: the median is (100 + 140) / 2 = 120, not the lower-middle 100."""
    assert median([140, 100]) == 120
    assert median([4, 1, 3, 2]) == 2.5          # (2 + 3) / 2
    assert median([3, 1, 2]) == 2 and median([7]) == 7
    with pytest.raises(ValueError):
        median([])


def test_spread_is_min_max_and_count_and_one_sample_has_none():
    """100 and 140: median 120, 100-140, n=2, (140 - 100) / 120 = 33.3%; one run: n=1 and no spread."""
    assert spread([100, 140]) == {"median": 120, "min": 100, "max": 140, "n": 2,
                                  "spread_pct": pytest.approx(100 * 40 / 120)}
    assert spread([100]) == {"median": 100, "min": 100, "max": 100, "n": 1, "spread_pct": None}
    assert spread([100, math.nan])["n"] == 1
    assert spread([])["n"] == 0 and spread([])["median"] is None


def test_representative_run_is_the_middle_one_and_the_lower_middle_for_an_even_count():
    """[140, 100]: the lower middle is 100, index 1; [5, 1, 3]: the middle is 3, index 2."""
    assert representative([140, 100]) == 1
    assert representative([5, 1, 3]) == 2
    assert representative([2, 2]) == 0


# -- issue 13 item 6f: the knee with the probe's patience -----------------------------------------------

def test_plateau_one_noisy_step_does_not_end_the_sweep():
    """TPS 100, 190, 170, 260, 265, 262 with +5% and patience 2, by hand:
    190 >= 105 (progress); 170 < 199.5 (miss 1); 260 >= 199.5 (progress, misses reset);
    265 < 273 (miss 1); 262 < 273 (miss 2): the knee is index 3 (260), confirmed.
    With patience 1 (the old rule) the dip at 170 would have ended it at index 1 (190)."""
    tps = [100, 190, 170, 260, 265, 262]
    assert plateau(tps, 0.05, 2) == (3, 2, True)
    assert plateau(tps, 0.05, 1) == (1, 1, True)


def test_plateau_unconfirmed_and_still_rising():
    """100, 190, 170 ends after one miss: the best so far (index 1), unconfirmed; 1, 2, 4: still rising."""
    assert plateau([100, 190, 170], 0.05, 2) == (1, 1, False)
    assert plateau([1, 2, 4], 0.05, 2) == (2, 0, False)
    assert plateau([5], 0.05, 2) == (0, 0, False)


def test_plateau_extra_condition_can_refuse_progress():
    """100, 200, 400 where the step to index 2 is refused (e.g. latency grew faster): knee 1, one miss."""
    assert plateau([100, 200, 400], 0.05, 2, also=lambda best, i: i != 2) == (1, 1, False)


def test_median_agrees_with_the_standard_library_and_lies_within_the_spread():
    """Property: the one median equals statistics.median (an independent implementation) and sits
    between min and max; the representative run is one of the two middle values."""
    import statistics

    from hypothesis import given, settings, strategies as st

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False), min_size=1, max_size=30))
    def check(xs):
        m = median(xs)
        assert m == pytest.approx(statistics.median(xs), rel=1e-12, abs=1e-9)
        sp = spread(xs)
        assert sp["min"] <= m <= sp["max"] and sp["n"] == len(xs)
        ordered = sorted(xs)
        assert xs[representative(xs)] == ordered[(len(xs) - 1) // 2]
    check()


def test_sweep_stop_counts_from_the_knee_so_far():
    # 205 is no progress over 200 (< 206), 210 is: one miss since, so the sweep goes on (plateau's rule;
    # measured from the largest value, 205, both 210 and 211 would have been misses and stopped it)
    assert not sweep_should_stop([100, 200, 205, 210, 211])
    assert sweep_should_stop([100, 200, 205, 210, 211, 212])
