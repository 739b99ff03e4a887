"""Bytes a day (history/days.py): per-day read and written bytes from interval rates, worked by hand.

Every expected figure is computed in the test from the rates and lengths given, not by the code under
test: bytes = MB/s x 10^6 x seconds, TB = 10^12 bytes, a day covered for at least half is scaled to 24 h."""

from __future__ import annotations

import datetime as dt

import pytest

from dbtier.history import days
from dbtier.history.store import connect
from dbtier.history.summary import consolidated_instances, with_headroom

T0 = dt.datetime(2024, 1, 1)


def hours(a: float, b: float, write: float | None, read: float | None, step: float = 1.0):
    """Intervals of `step` hours from hour a to hour b after T0 at the given MB/s."""
    out, h = [], a
    while h < b - 1e-9:
        e = min(b, h + step)
        out.append((T0 + dt.timedelta(hours=h), T0 + dt.timedelta(hours=e), read, write))
        h = e
    return out


@pytest.fixture
def con():
    c = connect()
    c.execute('CREATE TABLE t (start TIMESTAMP, "end" TIMESTAMP, read_mbps DOUBLE, write_mbps DOUBLE)')
    yield c
    c.close()


def load(con, rows):
    con.executemany("INSERT INTO t VALUES (?, ?, ?, ?)", rows)


def test_two_whole_days_a_partial_day_scaled_and_a_short_day_dropped(con):
    """Day 1: 23 hourly intervals at 10 MB/s written, then one of 2 h (23:00 to 01:00) at 40 MB/s that
    crosses midnight; day 2: the rest at 20 MB/s; day 3: 18 h at 30 MB/s (75% covered); day 4: 6 h
    (25%, left out). Reads are a tenth of the writes."""
    load(con, hours(0, 23, 10.0, 1.0) + hours(23, 25, 40.0, 4.0, step=2) + hours(25, 48, 20.0, 2.0)
         + hours(48, 66, 30.0, 3.0) + hours(78, 84, 30.0, 3.0))
    day1 = (23 * 3600 * 10e6 + 1 * 3600 * 40e6) / 1e12          # 0.828 + 0.144 = 0.972 TB
    day2 = (1 * 3600 * 40e6 + 23 * 3600 * 20e6) / 1e12          # 0.144 + 1.656 = 1.800 TB
    day3 = 18 * 3600 * 30e6 / 1e12 * 86400 / (18 * 3600)         # 1.944 TB in 18 h -> 2.592 TB a day
    assert (day1, day2, day3) == pytest.approx((0.972, 1.8, 2.592))
    # p95 of three days by linear interpolation: rank 0.95 x 2 = 1.9, between day2 and day3
    p95 = day2 + 0.9 * (day3 - day2)                              # 1.8 + 0.9 x 0.792 = 2.5128
    p99 = day2 + 0.98 * (day3 - day2)                             # 2.57616
    got = days.figures(con, "t", "UTC", 95)
    assert got["write"] == {"tb_per_day": pytest.approx(p95), "percentile": 95, "days_counted": 3,
                            "partial_dropped": 1, "reason": None}
    assert got["read"]["tb_per_day"] == pytest.approx(p95 / 10) and got["read"]["days_counted"] == 3
    assert days.figures(con, "t", "UTC", 99)["write"]["tb_per_day"] == pytest.approx(p99)
    mx = days.figures(con, "t", "UTC", 100)["write"]
    assert mx["tb_per_day"] == pytest.approx(day3) and mx["percentile"] == 100


def test_the_half_day_rule_is_inclusive_and_a_gap_is_scaled_over(con):
    """Day 1 whole at 10 MB/s; day 2 exactly 12 h at 20 MB/s (50%: counted, scaled x2); day 3 11 h (dropped)."""
    load(con, hours(0, 24, 10.0, 0.0) + hours(24, 36, 20.0, 0.0) + hours(48, 59, 50.0, 0.0))
    got = days.figures(con, "t", "UTC", 100)["write"]
    # day 2: 12 h x 20 MB/s = 0.864 TB over half a day -> 1.728 TB a day; day 1 0.864; max 1.728
    assert got["tb_per_day"] == pytest.approx(12 * 3600 * 20e6 * 2 / 1e12) == pytest.approx(1.728)
    assert got["days_counted"] == 2 and got["partial_dropped"] == 1
    # reads of 0 are a measured zero, not missing
    assert days.figures(con, "t", "UTC", 95)["read"]["tb_per_day"] == 0.0


def test_a_missing_rate_covers_nothing_for_that_rate(con):
    """Two whole days; day 2's writes are missing (NULL) for 13 h: day 2 has 11 h of writes (dropped),
    24 h of reads (counted)."""
    load(con, hours(0, 24, 10.0, 1.0) + hours(24, 37, None, 1.0) + hours(37, 48, 10.0, 1.0))
    got = days.figures(con, "t", "UTC", 95)
    assert got["write"]["days_counted"] == 1 and got["write"]["partial_dropped"] == 1
    assert got["write"]["tb_per_day"] == pytest.approx(24 * 3600 * 10e6 / 1e12)     # day 1 alone: 0.864
    assert got["read"]["days_counted"] == 2 and got["read"]["tb_per_day"] == pytest.approx(24 * 3600 * 1e6 / 1e12)


def test_less_than_a_whole_day_is_null_with_the_reason(con):
    load(con, hours(6, 26, 10.0, 1.0))    # 20 h: 18 h on day 1 (counted), 2 h on day 2 (dropped)
    got = days.figures(con, "t", "UTC", 95)
    assert got["write"]["tb_per_day"] is None and got["write"]["days_counted"] == 1
    assert "20.0 h of write data, less than a whole day" in got["write"]["reason"]


def test_a_day_of_data_in_halves_is_not_a_whole_day_counted(con):
    """30 h spread as 11 h, 8 h, 11 h over three days: no day reaches half, so nothing is counted."""
    load(con, hours(13, 24, 10.0, 1.0) + hours(32, 40, 10.0, 1.0) + hours(48, 59, 10.0, 1.0))
    got = days.figures(con, "t", "UTC", 95)["write"]
    assert got["tb_per_day"] is None and got["days_counted"] == 0 and got["partial_dropped"] == 3
    assert "less than a whole day" in got["reason"] and "3 day(s) covered less" in got["reason"]


def test_days_in_a_zone_and_a_23_hour_day_scaled_to_24(con):
    """Europe/Paris, 2024-03-31 (summer time starts: a 23 h day, 2024-03-30 23:00 UTC to 03-31 22:00 UTC).
    Its first hour at 50 MB/s, the 22 others at 10 MB/s: 0.18 + 0.792 = 0.972 TB in 23 h, so
    0.972 x 24 / 23 a day. In UTC the same intervals are 1 h of 03-30 (dropped) and 22 h of 03-31."""
    base = dt.datetime(2024, 3, 30, 23)
    rows = [(base, base + dt.timedelta(hours=1), 0.0, 50.0)]
    rows += [(base + dt.timedelta(hours=h), base + dt.timedelta(hours=h + 1), 0.0, 10.0) for h in range(1, 23)]
    load(con, rows)
    paris = days.figures(con, "t", "Europe/Paris", 95)["write"]
    assert paris["days_counted"] == 1 and paris["partial_dropped"] == 0
    assert paris["tb_per_day"] == pytest.approx((3600 * 50e6 + 22 * 3600 * 10e6) / 1e12 * 24 / 23)
    utc = days.figures(con, "t", "UTC", 95)["write"]
    # in UTC: 03-31 counted (22 h of 24), 03-30 left out (1 h); 23 h in all, less than a whole day: null
    assert utc["days_counted"] == 1 and utc["partial_dropped"] == 1 and utc["tb_per_day"] is None
    assert "23.0 h of write data" in utc["reason"]


def test_dma_mean_day_is_the_sum_of_the_hours_mean_rates():
    """24 hours, hour h at (h + 1) MB/s written on average: sum 300 MB/s-hours x 3,600 s = 1.08 TB; 7 days of
    15-minute snapshots (4 x 7 = 28 a hour of 900 s)."""
    db = {"hour_of_day": [{"hour": h, "snapshots": 28, "interval_s": 900.0,
                           "write_mbps": {"avg": float(h + 1), "p95": 99.0}, "read_mbps": {"avg": 2.0}}
                          for h in range(24)]}
    got = days.dma_mean_day(db)
    assert got["write"]["tb_per_day"] == pytest.approx(sum(range(1, 25)) * 3600 * 1e6 / 1e12) == pytest.approx(1.08)
    assert got["write"]["percentile"] is None and got["write"]["days_counted"] == 7
    assert got["read"]["tb_per_day"] == pytest.approx(24 * 2.0 * 3600 * 1e6 / 1e12)
    db["hour_of_day"] = db["hour_of_day"][:23]      # hour 23 without snapshots: no whole mean day
    gone = days.dma_mean_day(db)["write"]
    assert gone["tb_per_day"] is None and "1 hour(s) of the day (23h)" in gone["reason"]


def test_consolidated_instances_are_the_largest_known():
    docs = [{"databases": [{"name": "A", "instances": 1}, {"name": "RAC/1", "instances": 2}]},
            {"databases": [{"name": "S", "instances": None}]}]
    grid = [{"name": "A"}, {"name": "RAC/1"}, {"name": "S"}]
    assert consolidated_instances(docs, grid) == {"instances": 2, "clustered": True, "instances_unknown": 1}
    assert [g["instances"] for g in grid] == [1, 2, None]
    single = consolidated_instances([{"databases": [{"name": "A", "instances": 1}]}], [])
    assert single["instances"] == 1 and single["clustered"] is False
    unknown = consolidated_instances([{"databases": [{"name": "S"}]}], [])
    assert unknown["instances"] is None and unknown["clustered"] is None


def test_with_headroom_covers_the_bytes_a_day():
    req = {"read_iops": 10.0, "write_iops": 1.0, "read_mbps": 1.0, "write_mbps": 1.0, "capacity_gb": None,
           "headroom": 0.5, "write_tb_per_day": 2.0, "read_tb_per_day": None}
    wh = with_headroom(req)
    assert wh["write_tb_per_day"] == 3.0 and wh["read_tb_per_day"] is None
