"""The figures-for-people formatters of dbtier.core.units: a unit that fits the size, no exponents,
integers as integers, and the life cap. Expected texts are worked by hand."""

from __future__ import annotations

import pytest

from dbtier.core.units import (count_text, duration_text, life_cap_years, life_years_text, per_day_text,
                               plain_number, size_text)


@pytest.mark.parametrize("x, text", [
    (3610, "3,610"), (0.00412, "0.00412"), (1.0, "1"), (2.5, "2.5"), (123456, "123,000"),
    (9.996, "10"), (0, "0"), (-0.5, "-0.5"),
])
def test_plain_number(x, text):
    assert plain_number(x) == text


@pytest.mark.parametrize("seconds, noun, adjective", [
    (15, "15 s", "15-s"),
    (0.5, "0.5 s", "0.5-s"),
    (60, "1 min", "1-minute"),
    (90, "1.5 min", "1.5-minute"),            # 90 / 60
    (300, "5 min", "5-minute"),
    (3610, "1 h", "1-hour"),                  # 3,610 / 3,600 = 1.003 -> three digits: 1.00
    (5400, "1.5 h", "1.5-hour"),
    (12345, "3.43 h", "3.43-hour"),           # 12,345 / 3,600 = 3.429
    (86400, "1 d", "1-day"),
    (172800, "2 d", "2-day"),
])
def test_duration_text(seconds, noun, adjective):
    assert duration_text(seconds) == noun
    assert duration_text(seconds, adjective=True) == adjective


@pytest.mark.parametrize("n_bytes, text", [
    (4.12e9, "4.1 GB"), (2.18e6, "2.2 MB"), (123e9, "123 GB"), (1e12, "1 TB"), (512, "512 B"),
    (1500, "1.5 kB"), (2.5e15, "2.5 PB"),
])
def test_size_text(n_bytes, text):
    assert size_text(n_bytes) == text


def test_per_day_text_picks_the_unit():
    assert per_day_text(0.00412) == "4.1 GB/day"       # 0.00412 TB = 4.12e9 bytes
    assert per_day_text(3.54) == "3.5 TB/day"
    assert per_day_text(0.000218) == "218 MB/day"       # 2.18e8 bytes: the whole part is kept


def test_count_text_keeps_integers_whole():
    assert count_text(1.0) == "1"
    assert count_text(12000) == "12,000"
    assert count_text(2.5) == "2.5"


def test_life_cap_is_ten_service_lives_and_at_least_50():
    assert life_cap_years(5) == 50
    assert life_cap_years(3) == 50
    assert life_cap_years(7) == 70
    assert life_cap_years(None) == 50


def test_life_years_text():
    assert life_years_text(266.0, 5) == "> 50"
    assert life_years_text(50.0, 5) == "50.0"
    assert life_years_text(10.94, 5) == "10.9"
    assert life_years_text(80.0, 10) == "80.0"          # inside ten 10-year lives
    assert life_years_text(120.0, 10) == "> 100"
@pytest.mark.parametrize("x, line, text", [
    (89.58, 90.0, "89.6"),      # would round up to the line it is under: a tenth
    (89.4, 90.0, "89"),         # rounds under the line: whole
    (90.0, 90.0, "90"),         # at the line: whole
    (97.2, 90.0, "97"),
    (39.06, 90.0, "39"),
    (69.96, 70.0, "69.9"),      # a tenth would round it onto the line too: cut, not rounded
])
def test_a_percentage_just_under_a_rules_line_is_not_rounded_onto_it(x, line, text):
    from dbtier.core.units import pct_below
    assert pct_below(x, line) == text
