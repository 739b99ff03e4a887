"""An import's parts (file types) against its totals: the parts' sum per interval, joined to the totals on the
same interval, at p95, p99 or max, and the disagreement when the parts exceed the totals. Hand-written
Parquet run directories with figures worked by hand, and the shipped AWR sample through the CLI."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

import duckdb
import pytest
from pytest import approx

from conftest import DATA, run_dbtier
from dbtier.core.errors import DbtierError
from dbtier.history.split import by_file_type, consistent_basis, parts_vs_totals
from dbtier.results.store import load_run

AWR = DATA / "history" / "awr"
T0 = datetime(2024, 3, 4)
METRICS = ("read_iops", "write_iops", "read_mbps", "write_mbps")


def at(h: int) -> tuple[datetime, datetime]:
    return T0 + timedelta(hours=h), T0 + timedelta(hours=h + 1)


def write(path: Path, columns: list[str], rows: list[tuple]) -> None:
    """rows -> Parquet through DuckDB (TIMESTAMP start and end, DOUBLE rates), the types an import writes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    types = {"database": "VARCHAR", "file_type": "VARCHAR", "role": "VARCHAR", "start": "TIMESTAMP",
             "end": "TIMESTAMP"}
    con = duckdb.connect()
    con.execute("CREATE TABLE t (" + ", ".join(f'"{c}" {types.get(c, "DOUBLE")}' for c in columns) + ")")
    if rows:
        con.executemany(f"INSERT INTO t VALUES ({', '.join('?' for _ in columns)})", rows)
    con.execute(f"COPY t TO '{path}' (FORMAT parquet)")
    con.close()


ICOLS = ["database", "file_type", "role", "start", "end", "seconds", *METRICS]
TCOLS = ["database", "start", "end", "seconds", "read_iops", "write_iops", "iops", "read_mbps", "write_mbps", "mbps"]


def part(db: str, ft: str, h: int, ri, wi, rm, wm, role: str = "part") -> tuple:
    return (db, ft, role, *at(h), 3600.0, ri, wi, rm, wm)


def total(db: str, h: int, ri, wi, rm, wm) -> tuple:
    return (db, *at(h), 3600.0, ri, wi, ri + wi, rm, wm, rm + wm)


# DB over hours 0-3 (joined), 4 (parts only), 5 (totals only). Data File and Log File are parts; the Log
# has no read figures (NULL, as AWR's Log File); a `detail` and a `total` row and database OTHER must not count.
#   parts' sum per hour 0-3: read IOPS 100 200 300 400, write IOPS 60 80 100 120,
#                            read MB/s 10 20 30 40, write MB/s 6 8 10 12
#   totals per hour 0-3:     read IOPS 100 200 300 400, write IOPS 60 80 100 120,
#                            read MB/s 2 4 6 8 (below the parts), write MB/s 7 9 11 13 (above the parts)
INTERVALS = [
    *(part("DB", "Data File", h, 100.0 * (h + 1), 10.0 * (h + 1), 10.0 * (h + 1), 1.0 * (h + 1)) for h in range(4)),
    *(part("DB", "Log File", h, None, 50.0 + 10 * h, None, 5.0 + h) for h in range(4)),
    *(part("DB", "fsync", h, 1000.0, 1000.0, 100.0, 100.0, role="detail") for h in range(4)),
    *(part("DB", "total", h, 1000.0, 1000.0, 100.0, 100.0, role="total") for h in range(4)),
    part("DB", "Data File", 4, 5000.0, 5000.0, 500.0, 500.0),     # no totals row for hour 4
    part("DB", "Log File", 4, None, 5000.0, None, 500.0),
    *(part("OTHER", ft, h, 9000.0, 9000.0, 900.0, 900.0) for ft in ("Data File", "Log File") for h in range(4)),
]
TOTALS = [
    *(total("DB", h, 100.0 * (h + 1), 60.0 + 20 * h, 2.0 * (h + 1), 7.0 + 2 * h) for h in range(4)),
    total("DB", 5, 9999.0, 9999.0, 999.0, 999.0),                   # no parts for hour 5
    *(total("OTHER", h, 1.0, 1.0, 0.1, 0.1) for h in range(4)),
]


def run(tmp_path: Path, intervals=INTERVALS, totals=TOTALS) -> dict:
    d = tmp_path / "imp"
    d.mkdir(parents=True, exist_ok=True)
    if intervals is not None:
        write(d / "intervals.parquet", ICOLS, intervals)
    if totals is not None:
        write(d / "totals.parquet", TCOLS, totals)
    return {"_run_dir": str(d), "source": "awr", "command": "history"}


def test_p95_of_the_parts_sum_and_of_the_totals_over_joined_intervals(tmp_path):
    c = parts_vs_totals(run(tmp_path), "DB", "p95")
    # quantile_cont on 4 values: position 0.95 x 3 = 2.85, the third value + 0.85 x (fourth - third)
    assert c["intervals"] == 4
    m = c["metrics"]
    assert m["read_iops"] == {"parts": approx(385.0), "totals": approx(385.0), "disagree": False}
    assert m["write_iops"] == {"parts": approx(117.0), "totals": approx(117.0), "disagree": False}
    assert m["read_mbps"] == {"parts": approx(38.5), "totals": approx(7.7), "disagree": True}
    assert m["write_mbps"] == {"parts": approx(11.7), "totals": approx(12.7), "disagree": False}   # below: normal
    assert c["disagree"] == ["read_mbps"]
    assert c["basis"] == "the larger of the two per figure"
    assert c["note"] == ("AWR's file types add up to 38.5 MB/s of reads at p95, above the database's total of "
                         "7.7 MB/s: the export's parts and totals disagree; sized from the larger")


def test_max_and_p99(tmp_path):
    doc = run(tmp_path)
    c = parts_vs_totals(doc, "DB", "max")
    # hour 4 (parts only: 5,500 read IOPS) and hour 5 (totals only: 999 MB/s) are left out
    assert {k: (v["parts"], v["totals"]) for k, v in c["metrics"].items()} == {
        "read_iops": (400.0, 400.0), "write_iops": (120.0, 120.0), "read_mbps": (40.0, 8.0), "write_mbps": (12.0, 13.0)}
    assert c["disagree"] == ["read_mbps"] and "at the maximum" in c["note"]
    p99 = parts_vs_totals(doc, "DB", "p99")       # position 2.97: 30 + 0.97 x 10, 6 + 0.97 x 2
    assert p99["metrics"]["read_mbps"]["parts"] == approx(39.7)
    assert p99["metrics"]["read_mbps"]["totals"] == approx(7.94)


def test_several_disagreeing_metrics_are_named_in_one_sentence(tmp_path):
    ints = [part("DB", "Data File", 0, 1000.0, 10.0, 50.0, 1.0), part("DB", "Temp File", 0, 500.0, 10.0, 50.0, 1.0)]
    c = parts_vs_totals(run(tmp_path, ints, [total("DB", 0, 1200.0, 20.0, 9.8, 2.0)]), "DB", "max")
    assert c["disagree"] == ["read_iops", "read_mbps"]
    assert c["note"] == ("AWR's file types add up to 1,500 read IOPS and 100.0 MB/s of reads at the maximum, above "
                         "the database's totals of 1,200 IOPS and 9.8 MB/s: the export's parts and totals disagree; "
                         "sized from the larger")


@pytest.mark.parametrize("parts, totals, disagree", [
    ((1000.0, 0.5), (960.0, 0.42), False),   # +4.2% IOPS (under 5%); +0.08 MB/s (under the 0.1 floor)
    ((1000.0, 0.5), (950.0, 0.35), True),    # +5.3% IOPS and +50 IOPS; +43% and +0.15 MB/s
    ((1.8, 0.5), (1.0, 0.45), False),        # +80% but 0.8 IOPS (under the 1 IOPS floor); +11% but 0.05 MB/s
])
def test_disagreement_needs_both_the_ratio_and_the_floor(tmp_path, parts, totals, disagree):
    (pi, pm), (ti, tm) = parts, totals
    ints = [part("DB", "Data File", 0, pi / 2, pi / 2, pm / 2, pm / 2), part("DB", "Log File", 0, pi / 2, pi / 2, pm / 2, pm / 2)]
    c = parts_vs_totals(run(tmp_path, ints, [total("DB", 0, ti, ti, tm, tm)]), "DB", "max")
    assert c["metrics"]["read_iops"]["disagree"] is disagree
    assert c["metrics"]["write_mbps"]["disagree"] is disagree
    assert (c["note"] is None) is (not disagree)


def test_none_without_intervals_or_with_fewer_than_two_parts(tmp_path):
    assert parts_vs_totals(run(tmp_path / "a", intervals=None), "DB", "p95") is None     # no intervals.parquet
    assert parts_vs_totals({"source": "awr"}, "DB", "p95") is None                        # no run directory
    one = [r for r in INTERVALS if r[1] != "Log File"]        # Data File + a detail + a total: one part
    assert parts_vs_totals(run(tmp_path / "b", one), "DB", "p95") is None
    assert parts_vs_totals(run(tmp_path / "c"), "NOSUCH", "p95") is None


def test_no_common_interval_gives_no_figures(tmp_path):
    c = parts_vs_totals(run(tmp_path, totals=[total("DB", 9, 1.0, 1.0, 1.0, 1.0)]), "DB", "p95")
    assert c["intervals"] == 0 and c["disagree"] == [] and c["note"] is None
    assert all(v == {"parts": None, "totals": None, "disagree": False} for v in c["metrics"].values())


def test_series_in_parts_are_read_whole(tmp_path):
    """A fleet imported in batches: intervals/part-*.parquet and totals/part-*.parquet, whole databases each."""
    d = tmp_path / "imp"
    write(d / "intervals" / "part-00000.parquet", ICOLS, [r for r in INTERVALS if r[0] == "DB"])
    write(d / "intervals" / "part-00001.parquet", ICOLS, [r for r in INTERVALS if r[0] == "OTHER"])
    write(d / "totals" / "part-00000.parquet", TCOLS, [r for r in TOTALS if r[0] == "DB"])
    write(d / "totals" / "part-00001.parquet", TCOLS, [r for r in TOTALS if r[0] == "OTHER"])
    c = parts_vs_totals({"_run_dir": str(d), "source": "awr"}, "DB", "max")
    assert c["intervals"] == 4 and c["metrics"]["read_mbps"]["parts"] == 40.0


def test_bad_runs_and_statistic_are_one_clear_error(tmp_path):
    with pytest.raises(DbtierError, match="p50.*not one of p95, p99, max"):
        parts_vs_totals(run(tmp_path / "a"), "DB", "p50")
    doc = run(tmp_path / "b", totals=None)
    with pytest.raises(DbtierError, match="no totals.parquet"):
        parts_vs_totals(doc, "DB", "p95")
    (Path(doc["_run_dir"]) / "totals.parquet").write_text("not parquet")
    with pytest.raises(DbtierError, match=r"totals\.parquet: not a readable Parquet file"):
        parts_vs_totals(doc, "DB", "p95")
    write(Path(doc["_run_dir"]) / "totals.parquet", ["database", "start", "end", "read_iops"],
          [("DB", *at(0), 1.0)])
    with pytest.raises(DbtierError, match="without the column.*write_iops"):
        parts_vs_totals(doc, "DB", "p95")


def test_consistent_basis_raises_only_the_disagreeing_figures():
    check = {"metrics": {"read_iops": {"parts": 385.0, "totals": 385.0, "disagree": False},
                         "write_iops": {"parts": 100.0, "totals": 117.0, "disagree": False},
                         "read_mbps": {"parts": 38.5, "totals": 7.7, "disagree": True},
                         "write_mbps": {"parts": 20.0, "totals": 12.7, "disagree": True}},
             "disagree": ["read_mbps", "write_mbps"], "intervals": 4, "basis": "the larger of the two per figure",
             "note": "the note"}
    req = {"read_iops": 385.0, "write_iops": 117.0, "read_mbps": 7.7, "write_mbps": 25.0, "capacity_gb": 100.0,
           "percentile": 95}
    out, notes = consistent_basis(req, check)
    # read MB/s raised to the parts' 38.5; write MB/s already above the parts' 20 stays; the rest untouched
    assert out == {**req, "read_mbps": 38.5}
    assert notes == ["the note"]
    assert req["read_mbps"] == 7.7                      # the input is not changed
    assert consistent_basis(req, None) == (req, [])
    assert consistent_basis(req, {**check, "disagree": [], "note": None}) == (req, [])
    assert consistent_basis({"read_mbps": None}, check) == ({"read_mbps": 38.5}, ["the note"])


@pytest.mark.slow
def test_shipped_awr_sample_data_files_exceed_the_database_reads(tmp_path):
    out = tmp_path / "imp"
    r = run_dbtier("history", "import", "--source", "awr", str(AWR / "awr_sysstat_PROD.csv"),
                   str(AWR / "awr_iostat_filetype_PROD.csv"), "--out", str(out), "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    printed = json.loads(r.stdout)
    doc = load_run(out)
    c = parts_vs_totals(doc, "PROD", "p95")
    assert c["intervals"] == 46                         # every interval has both sides
    rm = c["metrics"]["read_mbps"]
    # the totals over the joined intervals are the import's own p95 (every interval joined)
    assert rm["totals"] == approx(printed["databases"][0]["peaks"]["read_mbps"]["p95"])
    assert rm["totals"] == approx(9.78, abs=0.01)
    # the parts' sum is at least its Data File alone at every interval, so at p95 too (38.7 MB/s)
    data_file = by_file_type(doc, "PROD", "p95")["Data File"]["read_mbps"]
    assert data_file == approx(38.67, abs=0.01)
    assert rm["parts"] >= data_file > rm["totals"] * 1.05
    assert rm["disagree"] and "read_mbps" in c["disagree"]
    assert "MB/s of reads" in c["note"] and "9.8 MB/s" in c["note"] and c["note"].startswith("AWR's file types")
    # IOPS agree (the file types' requests add up to the database's, to rounding)
    assert not c["metrics"]["read_iops"]["disagree"] and not c["metrics"]["write_iops"]["disagree"]
    raised, notes = consistent_basis({m: printed["databases"][0]["peaks"][m]["p95"] for m in METRICS}, c)
    assert raised["read_mbps"] == rm["parts"] and notes == [c["note"]]
