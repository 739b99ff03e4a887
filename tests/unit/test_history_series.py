"""History maths on hand-worked tables: deltas, restarts, irregular intervals, wraps, peaks, profiles, gain."""

from __future__ import annotations

import datetime as dt

import pytest

from dbtier.core.errors import DbtierError
from dbtier.core.stats import percentile
from dbtier.history import consolidate as cons
from dbtier.history import series
from dbtier.history.store import connect
from dbtier.history.tables import COUNTER_TABLE_COLUMNS, INTERVAL_TABLE_COLUMNS

T0 = dt.datetime(2024, 3, 4, 0, 0, 0)   # a Monday


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


def counters(con, rows, table="c"):
    """rows: (database, file_type, unit, role, seconds, epoch, read_ios, read_bytes, write_ios, write_bytes,
    read_time_ms, write_time_ms)."""
    con.execute(f"CREATE OR REPLACE TABLE {table} ({COUNTER_TABLE_COLUMNS})")
    for r in rows:
        db, ft, unit, role, s, ep, *vals = r
        vals = list(vals) + [None] * (6 - len(vals))
        con.execute(f"INSERT INTO {table} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, 'f.csv', NULL)",
                    [db, ft, unit, role, at(s), ep, *vals])


def fetch(con, q):
    return con.execute(q).fetchall()


@pytest.fixture
def con():
    c = connect()
    yield c
    c.close()


def test_deltas_and_irregular_intervals(con):
    # 10 s then 20 s: 100 reads of 8 KiB, then 200 reads; 50 writes of 4 KiB then none.
    counters(con, [("db", "data", "f1", "part", 0, "e1", 0, 0, 0, 0, 0, 0),
                   ("db", "data", "f1", "part", 10, "e1", 100, 819200, 50, 204800, 50, 25),
                   ("db", "data", "f1", "part", 30, "e1", 300, 2457600, 50, 204800, 250, 25)])
    series.intervals_from_counters(con, "c", "iv")
    got = fetch(con, 'SELECT start, "end", seconds, read_iops, write_iops, iops, read_mbps, write_mbps, '
                     'read_lat_ms, write_lat_ms, read_io_kb FROM iv ORDER BY start')
    assert got == [
        (at(0), at(10), 10.0, 10.0, 5.0, 15.0, 0.08192, 0.02048, 0.5, 0.5, 8.192),
        (at(10), at(30), 20.0, 10.0, 0.0, 10.0, 0.08192, 0.0, 1.0, None, 8.192),
    ]


def test_counter_going_down_starts_a_new_segment(con):
    counters(con, [("db", "data", "f", "part", 0, None, 1000),
                   ("db", "data", "f", "part", 60, None, 1600),
                   ("db", "data", "f", "part", 120, None, 40),      # restart: the interval is dropped
                   ("db", "data", "f", "part", 180, None, 640)])
    series.intervals_from_counters(con, "c", "iv")
    assert fetch(con, "SELECT start, read_iops FROM iv ORDER BY start") == [(at(0), 10.0), (at(120), 10.0)]
    assert series.events(con, "iv_events") == {"db": {"restarts": 1, "wraps": 0, "duplicates": 0}}


def test_new_startup_time_starts_a_new_segment_even_if_counters_grew(con):
    counters(con, [("db", "all", "1", "total", 0, "2024-03-01 08:00", 100),
                   ("db", "all", "1", "total", 3600, "2024-03-01 08:00", 460),
                   ("db", "all", "1", "total", 7200, "2024-03-04 01:30", 900),  # restarted in between
                   ("db", "all", "1", "total", 10800, "2024-03-04 01:30", 1260)])
    series.intervals_from_counters(con, "c", "iv")
    assert fetch(con, "SELECT start, read_iops FROM iv ORDER BY start") == [(at(0), 0.1), (at(7200), 0.1)]
    assert series.events(con, "iv_events")["db"]["restarts"] == 1


def test_32_bit_wrap_is_a_delta_not_a_restart(con):
    top = 4294967296
    counters(con, [("h", "sda", "sda", "part", 0, "boot1", 10, 0, 0, 0, top - 300),
                   ("h", "sda", "sda", "part", 10, "boot1", 20, 0, 0, 0, 200)])
    series.intervals_from_counters(con, "c", "iv", {"read_time_ms": 32})
    # 300 ms up to the wrap + 200 after it, over 10 reads.
    assert fetch(con, "SELECT read_iops, read_lat_ms FROM iv") == [(1.0, 50.0)]
    assert series.events(con, "iv_events")["h"] == {"restarts": 0, "wraps": 1, "duplicates": 0}


@pytest.mark.parametrize("prev,cur,expect", [
    (4294967290, 10, 16.0),          # auto: below 2^32, wraps at 2^32
    (1000, 10, None),                # auto: a wrap would be ~4.3e9 in one interval: a reset
    (5_000_000_000, 10, None),       # auto: above 2^32 the width is 64 bits; 2^64 - 5e9 is no wrap
])
def test_auto_width_wrap_or_reset(con, prev, cur, expect):
    counters(con, [("h", "sda", "sda", "part", 0, "boot1", prev),
                   ("h", "sda", "sda", "part", 1, "boot1", cur)])
    series.intervals_from_counters(con, "c", "iv", {"read_ios": "auto"})
    got = fetch(con, "SELECT read_iops FROM iv")
    assert got == ([] if expect is None else [(expect,)])


def test_identical_duplicate_snapshots_are_kept_once(con):
    counters(con, [("db", "data", "f", "part", 0, None, 0), ("db", "data", "f", "part", 10, None, 100),
                   ("db", "data", "f", "part", 10, None, 100), ("db", "data", "f", "part", 20, None, 300)])
    series.intervals_from_counters(con, "c", "iv")
    assert fetch(con, "SELECT read_iops FROM iv ORDER BY start") == [(10.0,), (20.0,)]
    assert series.events(con, "iv_events")["db"]["duplicates"] == 1


def test_conflicting_duplicate_snapshots_are_an_error(con):
    counters(con, [("db", "data", "f", "part", 0, None, 0), ("db", "data", "f", "part", 10, None, 100),
                   ("db", "data", "f", "part", 10, None, 120)])
    with pytest.raises(DbtierError, match=r"f\.csv: duplicate snapshots with different values: db, data \(f\)"):
        series.intervals_from_counters(con, "c", "iv")


def test_undeclared_counter_never_wraps(con):
    counters(con, [("db", "data", "f", "part", 0, None, 4294967290),
                   ("db", "data", "f", "part", 1, None, 10)])
    series.intervals_from_counters(con, "c", "iv")
    assert fetch(con, "SELECT count(*) FROM iv") == [(0,)]


def test_units_add_up_per_interval_and_restart_per_unit(con):
    counters(con, [("db", "data", "f1", "part", 0, None, 0), ("db", "data", "f2", "part", 0, None, 0),
                   ("db", "data", "f1", "part", 10, None, 100), ("db", "data", "f2", "part", 10, None, 50)])
    series.intervals_from_counters(con, "c", "iv")
    assert fetch(con, "SELECT file_type, read_iops FROM iv") == [("data", 15.0)]


def test_totals_prefer_total_rows_and_else_add_parts(con):
    counters(con, [
        ("ora", "total", "1", "total", 0, None, 0), ("ora", "total", "1", "total", 10, None, 1000),
        ("ora", "Data File", "1", "part", 0, None, 0), ("ora", "Data File", "1", "part", 10, None, 700),
        ("ora", "redo", "1", "detail", 0, None, 0), ("ora", "redo", "1", "detail", 10, None, 5000),
        ("mss", "data", "1", "part", 0, None, 0), ("mss", "data", "1", "part", 10, None, 300),
        ("mss", "log", "2", "part", 0, None, 0), ("mss", "log", "2", "part", 10, None, 200),
    ])
    series.intervals_from_counters(con, "c", "iv")
    series.totals(con, "iv", "tot")
    assert fetch(con, "SELECT database, read_iops FROM tot ORDER BY database") == [("mss", 50.0), ("ora", 100.0)]


def test_totals_weigh_latency_by_iops(con):
    # data: 10 reads at 1 ms each; log: 30 reads at 3 ms each -> (10*1 + 30*3) / 40 = 2.5 ms
    counters(con, [("db", "data", "1", "part", 0, None, 0, 0, 0, 0, 0),
                   ("db", "data", "1", "part", 10, None, 10, 0, 0, 0, 10),
                   ("db", "log", "2", "part", 0, None, 0, 0, 0, 0, 0),
                   ("db", "log", "2", "part", 10, None, 30, 0, 0, 0, 90)])
    series.intervals_from_counters(con, "c", "iv")
    series.totals(con, "iv", "tot")
    assert fetch(con, "SELECT read_iops, read_lat_ms FROM tot") == [(4.0, 2.5)]


def _intervals(con, rows, table="tot"):
    """rows: (database, start s, end s, read_iops, write_iops, read_mbps, write_mbps)."""
    con.execute(f"CREATE OR REPLACE TABLE {table} ({INTERVAL_TABLE_COLUMNS})")
    for db, s, e, ri, wi, rm, wm in rows:
        con.execute(f"INSERT INTO {table} VALUES (?, 'all', 'part', ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)",
                    [db, at(s), at(e), e - s, ri, wi, ri + wi, rm, wm, rm + wm])


def test_peaks_percentiles_and_max(con):
    vals = [10, 20, 30, 40, 100]
    _intervals(con, [("db", i * 60, (i + 1) * 60, v, 0, 0, 0) for i, v in enumerate(vals)])
    p = series.peaks(con, "tot")["db"]
    assert p["intervals"] == 5 and p["start"] == "2024-03-04T00:00:00Z" and p["end"] == "2024-03-04T00:05:00Z"
    # k = 4 * 0.95 = 3.8 -> 40 + 0.8 * 60 = 88; k = 3.96 -> 97.6
    assert p["peaks"]["read_iops"] == pytest.approx({"p50": 30.0, "p95": 88.0, "p99": 97.6, "max": 100.0})
    assert p["peaks"]["read_iops"]["p95"] == pytest.approx(percentile(vals, 95))
    assert set(p["peaks"]) >= {"read_iops", "write_iops", "read_mbps", "write_mbps"}


def test_top_intervals_by_total_iops(con):
    _intervals(con, [("db", 0, 60, 5, 5, 0, 0), ("db", 60, 120, 50, 1, 0, 0), ("db", 120, 180, 1, 30, 0, 0)])
    top = series.summarise(con, "tot", ("database",), top=2)[("db",)]["top"]
    assert [(t["start"], t["iops"]) for t in top] == [("2024-03-04T00:01:00Z", 51.0), ("2024-03-04T00:02:00Z", 31.0)]


def test_hour_of_day_and_day_of_week_profiles_in_a_time_zone(con):
    # 2024-03-04 00:00 UTC is 01:00 on Monday in Paris; 23:00 UTC on Sunday 03-03 is 00:00 Monday there.
    _intervals(con, [("db", 0, 3600, 10, 0, 0, 0), ("db", -3600, 0, 30, 0, 0, 0),
                     ("db", 86400, 90000, 20, 0, 0, 0)])
    series.profiles(con, "tot", "prof", tz="Europe/Paris")
    hours = dict(fetch(con, "SELECT key, mean_iops FROM prof WHERE kind = 'hour'"))
    assert hours == {0: 30.0, 1: 15.0}
    dows = dict(fetch(con, "SELECT key, max_iops FROM prof WHERE kind = 'dow'"))
    assert dows == {1: 30.0, 2: 20.0}
    series.profiles(con, "tot", "prof_utc")
    assert dict(fetch(con, "SELECT key, mean_iops FROM prof_utc WHERE kind = 'hour'")) == {0: 15.0, 23: 30.0}


def test_consolidation_gain_when_peaks_do_not_coincide(con):
    # A peaks in the first hour, B in the second: sum of peaks 200, peak of sum 110, gain 200/110.
    _intervals(con, [("A", 0, 3600, 100, 0, 1, 0), ("A", 3600, 7200, 10, 0, 1, 0),
                     ("B", 0, 3600, 10, 0, 2, 0), ("B", 3600, 7200, 100, 0, 2, 0)])
    r = cons.consolidate(con, "tot", step=3600)
    assert r["sum_of_peaks"] == {"iops": 200.0, "mbps": 3.0}
    assert r["peak_of_sum"] == {"iops": 110.0, "mbps": 3.0}
    assert r["gain"] == pytest.approx(200 / 110)
    assert r["peak_time"] == "2024-03-04T00:00:00Z"
    assert [(d["database"], d["iops"], d["share"]) for d in r["drivers"]] == [("A", 100.0, 100 / 110),
                                                                               ("B", 10.0, 10 / 110)]
    assert r["grid"] == {"step_seconds": 3600, "start": "2024-03-04T00:00:00Z", "end": "2024-03-04T02:00:00Z",
                         "cells": 2}


def test_consolidation_gain_is_one_when_peaks_coincide(con):
    _intervals(con, [("A", 0, 3600, 100, 0, 0, 0), ("A", 3600, 7200, 10, 0, 0, 0),
                     ("B", 0, 3600, 50, 0, 0, 0), ("B", 3600, 7200, 5, 0, 0, 0)])
    r = cons.consolidate(con, "tot", step=3600)
    assert r["gain"] == 1.0 and r["peak_of_sum"]["iops"] == 150.0


def test_regrid_spreads_misaligned_and_irregular_intervals_by_overlap(con):
    # (474864 is the hour of 2024-03-04 00:00 UTC since 1970.)
    # A: one 90-minute interval at 60 IOPS from 00:30 and one 30-minute at 120 IOPS from 02:00.
    # Cells: 00:00 covered 30 min at 60; 01:00 full at 60; 02:00 covered 30 min at 120.
    _intervals(con, [("A", 1800, 7200, 60, 0, 0, 0), ("A", 7200, 9000, 120, 0, 0, 0)])
    cons.regrid(con, "tot", 3600, "g")
    assert fetch(con, "SELECT bin - 474864, covered, read_iops FROM g ORDER BY bin") == [
        (0, 1800.0, 60.0), (1, 3600.0, 60.0), (2, 1800.0, 120.0)]
    # Half an hour at 30 and half at 90 in one cell: 60, the time-weighted mean.
    _intervals(con, [("B", 0, 1800, 30, 0, 0, 0), ("B", 1800, 3600, 90, 0, 0, 0)], table="t2")
    cons.regrid(con, "t2", 3600, "g2")
    assert fetch(con, "SELECT read_iops FROM g2") == [(60.0,)]


def test_regrid_of_snapshots_a_little_off_the_hour(con, monkeypatch):
    # Hourly snapshots at 00:00:30, 01:00:30, 02:00:40, 03:00:00 (rates 10, 100, 40):
    # cell 0: 3570 s at 10; cell 1: 30 s at 10 + 3570 s at 100; cell 2: 40 s at 100 + 3560 s at 40.
    _intervals(con, [("A", 30, 3630, 10, 0, 0, 0), ("A", 3630, 7240, 100, 0, 0, 0), ("A", 7240, 10800, 40, 0, 0, 0)])
    want = [(0, 3570.0, 10.0), (1, 3600.0, (30 * 10 + 3570 * 100) / 3600), (2, 3600.0, (40 * 100 + 3560 * 40) / 3600)]
    cons.regrid(con, "tot", 3600, "g")
    got = fetch(con, "SELECT bin - 474864, covered, read_iops FROM g ORDER BY bin")
    assert [(b, c) for b, c, _ in got] == [(b, c) for b, c, _ in want]
    assert [r for _, _, r in got] == pytest.approx([r for _, _, r in want])
    # The general path (pieces added up in a hash aggregation) gives the same cells.
    monkeypatch.setattr(cons, "_regrid_sorted", lambda *a: False)
    cons.regrid(con, "tot", 3600, "g2")
    got2 = fetch(con, "SELECT bin - 474864, covered, read_iops FROM g2 ORDER BY bin")
    assert [(b, c) for b, c, _ in got2] == [(b, c) for b, c, _ in want]
    assert [r for _, _, r in got2] == pytest.approx([r for _, _, r in want])


def test_regrid_spill_into_a_gap_is_its_own_cell(con):
    # 00:10-01:10 at 60, then nothing until 03:00: cell 1 has only the 10-minute spill (under half: a gap);
    # with a 20-minute spill (00:20-01:20) it is still under half; 00:00-00:59 then 01:40-02:39 leaves cell 1
    # 20 minutes of the second interval only.
    _intervals(con, [("A", 600, 4200, 60, 0, 0, 0), ("A", 10800, 14400, 5, 0, 0, 0)])
    cons.regrid(con, "tot", 3600, "g")
    assert fetch(con, "SELECT bin - 474864, covered, read_iops FROM g ORDER BY bin") == [
        (0, 3000.0, 60.0), (3, 3600.0, 5.0)]


def test_regrid_longer_intervals_and_both_paths_agree(con, monkeypatch):
    # Intervals of 1.5 h and 2.5 h: middle cells are one interval's alone.
    _intervals(con, [("A", 1800, 7200, 60, 0, 0, 0), ("A", 7200, 16200, 30, 0, 0, 0),
                     ("A", 16200, 18000, 90, 0, 0, 0)])
    cons.regrid(con, "tot", 3600, "g")
    fast = fetch(con, "SELECT bin, covered, read_iops FROM g ORDER BY bin")
    monkeypatch.setattr(cons, "_regrid_sorted", lambda *a: False)
    cons.regrid(con, "tot", 3600, "g2")
    slow = fetch(con, "SELECT bin, covered, read_iops FROM g2 ORDER BY bin")
    assert [x for r in slow for x in r] == pytest.approx([x for r in fast for x in r])
    assert [r[1:] for r in fast] == [(1800.0, 60.0), (3600.0, 60.0), (3600.0, 30.0), (3600.0, 30.0),
                                     (3600.0, (1800 * 30 + 1800 * 90) / 3600)]


def test_a_cell_covered_for_less_than_half_is_a_gap(con):
    # 00:00-01:00:30 at 100 IOPS: the 01:00 cell has 30 s of it, not enough to stand for the hour.
    _intervals(con, [("A", 0, 3630, 100, 0, 0, 0)])
    cons.regrid(con, "tot", 3600, "g")
    assert fetch(con, "SELECT bin - 474864, covered FROM g") == [(0, 3600.0)]


def test_time_zones_line_up_on_utc(con):
    # Both databases' history is already UTC: a peak at 09:00 Paris (08:00 UTC) and one at 03:00 New York
    # (08:00 UTC) coincide.
    _intervals(con, [("paris", 8 * 3600, 9 * 3600, 100, 0, 0, 0), ("paris", 9 * 3600, 10 * 3600, 1, 0, 0, 0),
                     ("ny", 8 * 3600, 9 * 3600, 100, 0, 0, 0), ("ny", 9 * 3600, 10 * 3600, 1, 0, 0, 0)])
    r = cons.consolidate(con, "tot", step=3600)
    assert r["peak_of_sum"]["iops"] == 200.0 and r["gain"] == 1.0 and r["peak_time"] == "2024-03-04T08:00:00Z"


def test_consolidation_window_is_the_overlap_and_gaps_are_counted(con):
    _intervals(con, [("A", 0, 3600, 10, 0, 0, 0), ("A", 3600, 7200, 10, 0, 0, 0), ("A", 7200, 10800, 10, 0, 0, 0),
                     ("B", 3600, 7200, 5, 0, 0, 0), ("B", 10800, 14400, 5, 0, 0, 0)])
    r = cons.consolidate(con, "tot", step=3600)
    assert r["grid"]["cells"] == 2      # 01:00 and 02:00: where both have history
    assert {d["name"]: d["missing_bins"] for d in r["databases"]} == {"A": 0, "B": 1}


def test_histories_that_do_not_overlap_are_an_error(con):
    _intervals(con, [("A", 0, 3600, 10, 0, 0, 0), ("B", 7200, 10800, 10, 0, 0, 0)])
    with pytest.raises(DbtierError, match="do not overlap"):
        cons.consolidate(con, "tot", step=3600)


def test_auto_step_is_the_longest_median_interval(con):
    _intervals(con, [("A", 0, 900, 1, 0, 0, 0), ("A", 900, 1800, 1, 0, 0, 0),
                     ("B", 0, 3590, 1, 0, 0, 0), ("B", 3590, 7210, 1, 0, 0, 0)])
    assert cons.auto_step(con, "tot") == 3600


def test_series_shape_taken_at_import_matches_the_one_consolidate_reads(con):
    # A: 15-minute intervals, IOPS = read + write; B: hourly, one write rate unknown (NULL).
    _intervals(con, [("A", 0, 900, 4, 1, 0, 0), ("A", 900, 1800, 6, 2, 0, 0), ("A", 1800, 2700, 1, 1, 0, 0),
                     ("B", 0, 3600, 10, 1, 0, 0), ("B", 3600, 7200, 10, 1, 0, 0)])
    con.execute("UPDATE tot SET write_iops = NULL, iops = 10 WHERE database = 'B' AND start = ?", [at(3600)])
    got = {k[0]: v["shape"] for k, v in series.summarise(con, "tot", shape=True).items()}
    assert got["A"] == {"median_interval_s": 900.0, "complete": list(series.RATES), "iops_is_sum": True,
                        "mbps_is_sum": True}
    assert got["B"]["median_interval_s"] == 3600.0 and "write_iops" not in got["B"]["complete"]
    assert got["B"]["iops_is_sum"] is False
    docs = [{"name": db, "series_shape": sh} for db, sh in got.items()]
    assert cons.shape_of_imports(docs) == cons._shape(con, "tot")
    assert cons.shape_of_imports(docs + [{"name": "C"}]) is None     # an older import: read the series


@pytest.mark.slow
def test_summarise_in_batches_of_databases_gives_the_one_querys_figures(con, monkeypatch):
    """An exact quantile holds its groups' values in memory: summarise takes at most BATCH_ROWS rows' groups
    a query. Seven databases of 40 intervals, batches of 100 rows (two databases each; the last alone): the
    same figures, in the same order, as one query -- and a p50 checked by hand."""
    rows = []
    for d in range(7):
        ctr = 0
        rows.append((f"db{d}", "all", "1", "total", 0, None, 0))
        for k in range(1, 41):
            ctr += (k * 37 + d * 11) % 50 + 1                   # reads in the k-th minute
            rows.append((f"db{d}", "all", "1", "total", 60 * k, None, ctr))
    counters(con, rows)
    series.intervals_from_counters(con, "c", "iv")
    whole = series.summarise(con, "iv", top=3, shape=True)
    queries = []

    class Counting:                                             # the connection, counting its queries
        def execute(self, q, *a):
            queries.append(q)
            return con.execute(q, *a)
    monkeypatch.setattr(series, "BATCH_ROWS", 100)
    batched = series.summarise(Counting(), "iv", top=3, shape=True)
    assert batched == whole and list(batched) == [(f"db{d}",) for d in range(7)]
    assert sum("_summarise_batch)" in q for q in queries) == 4     # 7 databases in batches of 2, 2, 2, 1
    reads = sorted(((k * 37 + 3 * 11) % 50 + 1) / 60 for k in range(1, 41))   # db3's read IOPS
    assert whole[("db3",)]["peaks"]["read_iops"]["p50"] == pytest.approx(percentile(reads, 50))
