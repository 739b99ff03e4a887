"""The dense grid (dense.py, what a fleet's consolidation takes) against regrid's SQL (consolidate.regrid, the
reference): hand-worked fleets, then many random ones with what makes cells hard (snapshots off the hour,
intervals shorter and longer than a cell, gaps, missing rates, staggered starts), figure for figure."""

from __future__ import annotations

import datetime as dt
import math
import random

import pyarrow as pa
import pytest

from dbtier.core.errors import DbtierError
from dbtier.history import consolidate as cons
from dbtier.history import store
from dbtier.history.store import connect
from dbtier.history.tables import INTERVAL_TABLE_COLUMNS

T0 = dt.datetime(2024, 3, 4, 0, 0, 0)


@pytest.fixture
def con():
    c = connect()
    yield c
    c.close()


def _table(con, rows, table="tot"):
    """rows: (database, start s, end s, read_iops, write_iops, read_mbps, write_mbps); iops and mbps are
    read + write (NULL when either is)."""
    con.execute(f"CREATE OR REPLACE TABLE {table} ({INTERVAL_TABLE_COLUMNS})")
    cols = list(zip(*[(db, T0 + dt.timedelta(seconds=s), T0 + dt.timedelta(seconds=e), float(e - s), ri, wi,
                       None if ri is None or wi is None else ri + wi, rm, wm,
                       None if rm is None or wm is None else rm + wm) for db, s, e, ri, wi, rm, wm in rows]))
    names = ["database", "start", "end", "seconds", "read_iops", "write_iops", "iops", "read_mbps", "write_mbps",
             "mbps"]
    con.register("_rows", pa.table({n: pa.array(c) for n, c in zip(names, cols)}))
    con.execute(f"INSERT INTO {table} SELECT database, 'all', 'part', {', '.join(f'{chr(34)}{n}{chr(34)}' for n in names[1:])}, "
                "NULL, NULL FROM _rows")
    con.unregister("_rows")


def _batches(con, table, per):
    names = [r[0] for r in con.execute(f"SELECT DISTINCT database FROM {table} ORDER BY 1").fetchall()]
    groups = [names[i:i + per] for i in range(0, len(names), per)]
    return [f"(SELECT * FROM {table} WHERE database IN ({', '.join(repr(n) for n in g)}))" for g in groups]


def _both(con, tmp_path, table="tot", step=3600, per=2, top=10, shape=None):
    """(dense result, its sum series, its grid; regrid's) for the same totals."""
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    d = cons.consolidate(con, table, step=step, top=top, shape=shape, batches=_batches(con, table, per), work=work)
    used_dense = any(work.glob("dense-*.npy"))
    d_sum = con.execute("SELECT * FROM sum_series ORDER BY bin").fetchall()
    d_grid = con.execute("SELECT * FROM grid ORDER BY database, bin").fetchall()
    r = cons.consolidate(con, table, step=step, top=top, shape=shape)
    drivers = [x["database"] for x in r["drivers"]]
    r_sum = con.execute("SELECT * FROM sum_series ORDER BY bin").fetchall()
    r_grid = con.execute(f"SELECT * FROM grid WHERE database IN ({', '.join(repr(n) for n in drivers) or 'NULL'}) "
                         "ORDER BY database, bin").fetchall()
    return used_dense, (d, d_sum, d_grid), (r, r_sum, r_grid)


def _close(a, b, path="") -> None:
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), path
        for k in a:
            _close(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), (path, len(a), len(b))
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9), (path, a, b)
    else:
        assert a == b, (path, a, b)


def test_hand_worked_gain_the_dense_way(con, tmp_path):
    # A peaks in the first hour, B in the second: sum of peaks 200, peak of sum 110 (as regrid's test).
    _table(con, [("A", 0, 3600, 100, 0, 1, 0), ("A", 3600, 7200, 10, 0, 1, 0),
                 ("B", 0, 3600, 10, 0, 2, 0), ("B", 3600, 7200, 100, 0, 2, 0)])
    dense, (d, d_sum, _), _ = _both(con, tmp_path, per=1)
    assert dense
    assert d["sum_of_peaks"] == {"iops": 200.0, "mbps": 3.0} and d["peak_of_sum"] == {"iops": 110.0, "mbps": 3.0}
    assert d["peak_time"] == "2024-03-04T00:00:00Z"
    assert [(x["database"], x["iops"], x["share"]) for x in d["drivers"]] == [("A", 100.0, 100 / 110),
                                                                               ("B", 10.0, 10 / 110)]
    assert [(r[4], r[5]) for r in d_sum] == [(2, 110.0), (2, 110.0)]     # databases, read_iops per cell


def test_hand_worked_cells_off_the_hour_longer_and_in_a_gap(con, tmp_path):
    # A: 00:00:30-01:00:30 at 10, 01:00:30-03:30:30 at 100 (2.5 h), then a gap, 05:00-06:00 at 7.
    # Cells: 0: 3570 s at 10 (valid); 1: 30 s at 10 + 3570 s at 100; 2: 100; 3: 1830 s at 100 (valid, over
    # half); 4: nothing; 5: 7. B covers 00:00-06:00 at 1: the window is cells 0..5, and A misses cell 4.
    _table(con, [("A", 30, 3630, 10, 0, 0, 0), ("A", 3630, 12630, 100, 0, 0, 0), ("A", 18000, 21600, 7, 0, 0, 0),
                 ("B", 0, 21600, 1, 0, 0, 0)])
    dense, (d, d_sum, _), _ = _both(con, tmp_path, per=1)
    assert dense
    a_cells = [10.0, (30 * 10 + 3570 * 100) / 3600, 100.0, 100.0, None, 7.0]
    want = [x + 1 if x is not None else 1.0 for x in a_cells]
    assert [r[5] for r in d_sum] == pytest.approx(want)
    assert {x["name"]: x["missing_bins"] for x in d["databases"]} == {"A": 1, "B": 0}
    assert d["grid"]["cells"] == 6


def _random_fleet(rng: random.Random, ndb: int):
    rows = []
    for k in range(ndb):
        db = f"DB{k:03d}"
        t = rng.choice([0, 0, 0, 1800, 7200]) + rng.randint(0, 90)
        end = 3600 * rng.randint(30, 60) - rng.choice([0, 0, 1800, 7200])
        kind = rng.choice(["hourly", "quarter", "mixed"])
        nulls = rng.random() < 0.2
        while t < end:
            length = {"hourly": 3600 + rng.randint(-40, 40), "quarter": 900,
                      "mixed": rng.choice([600, 3600, 5400, 9000])}[kind]
            if rng.random() < 0.05:      # a gap (a restart's interval dropped)
                t += length
                continue
            ri = rng.uniform(0, 1000) * (5 if rng.random() < 0.03 else 1)
            wi = None if nulls and rng.random() < 0.3 else rng.uniform(0, 500)
            rows.append((db, t, t + length, ri, wi, ri / 100, rng.uniform(0, 3)))
            t += length
    return rows


@pytest.mark.parametrize("seed", range(12))
def test_random_fleets_agree_with_regrid(con, tmp_path, seed):
    rng = random.Random(seed)
    _table(con, _random_fleet(rng, rng.randint(3, 9)))
    step = rng.choice([3600, 3600, 1800, 7200])
    dense, (d, d_sum, d_grid), (r, r_sum, r_grid) = _both(con, tmp_path, step=step, per=rng.randint(1, 4),
                                                           top=rng.choice([2, 10]))
    assert dense
    _close(d, r)
    _close(d_sum, r_sum)
    _close(d_grid, r_grid)


def test_the_imports_own_start_and_end_bound_the_window_alike(con, tmp_path):
    # shape_of_imports gives the bound from the documents' whole-second times: the same figures.
    rng = random.Random(99)
    _table(con, _random_fleet(rng, 6))
    shape = cons._shape(con, "tot")
    spans = con.execute('SELECT database, min(start), max("end") FROM tot GROUP BY 1').fetchall()
    shape["overlap_s"] = _docs_overlap(spans)
    dense, (d, d_sum, _), (r, r_sum, _) = _both(con, tmp_path, shape=shape)
    assert dense
    _close(d, r)
    _close(d_sum, r_sum)


def _docs_overlap(spans):
    dbs = [{"name": n, "start": s.replace(microsecond=0).isoformat() + "Z", "end": e.replace(microsecond=0).isoformat() + "Z"}
           for n, s, e in spans]
    return cons._overlap_s(dbs)


def test_spans_too_sparse_for_the_budget_take_regrids_way(con, tmp_path, monkeypatch):
    rng = random.Random(5)
    _table(con, _random_fleet(rng, 4))
    monkeypatch.setattr(store, "batch_bytes", lambda: 1000)      # room for a handful of cells: Fallback
    dense, (d, d_sum, _), (r, r_sum, _) = _both(con, tmp_path)
    assert not dense
    _close(d, r)
    _close(d_sum, r_sum)


def test_failures_are_worded_as_regrids(con, tmp_path):
    _table(con, [("A", 0, 3600, 10, 0, 0, 0), ("B", 7200, 10800, 10, 0, 0, 0)])
    with pytest.raises(DbtierError, match="do not overlap"):
        cons.consolidate(con, "tot", step=3600, batches=_batches(con, "tot", 1), work=tmp_path)
    # B's only interval covers a 2-hour cell for 25 minutes: no cell of its own
    _table(con, [("A", 0, 7200, 10, 0, 0, 0), ("B", 0, 1500, 10, 0, 0, 0)])
    with pytest.raises(DbtierError, match="B: the history covers no 7200 s grid cell"):
        cons.consolidate(con, "tot", step=7200, batches=_batches(con, "tot", 1), work=tmp_path)
