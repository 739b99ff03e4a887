"""`dbtier history` on a fleet read in batches: the figures do not depend on how the files are cut into
batches (the one-batch import is the reference), a database whose files fall in several batches is whole,
a bad file among many is named with its line and column or, with --skip-bad-files, left out and listed."""

from __future__ import annotations

import json
import random
from pathlib import Path

import duckdb
import pytest

from conftest import assert_clean_error, call_main, load_doc
from dbtier.history import store

HEADER = ("DB_NAME,SNAP_ID,DBID,INSTANCE_NUMBER,STARTUP_TIME,BEGIN_INTERVAL_TIME,END_INTERVAL_TIME,SNAP_TIMEZONE,"
          "physical read total IO requests,physical write total IO requests,physical read total bytes,"
          "physical write total bytes,redo size")


def _rows(db: str, dbid: int, inst: int, hours: range, seed: int) -> list[str]:
    """Hourly snapshots with cumulative counters (a restart half way for DB02), ending at :00:NN."""
    rng = random.Random(seed)
    out, r, w = [], 0, 0
    for h in range(hours.stop):
        if db == "DB02" and h == 30:
            r = w = 0
        r += rng.randint(1000, 90000) * (3 if h % 24 == 11 else 1)
        w += rng.randint(500, 30000)
        if h not in hours:
            continue
        start = "2024-03-01 22:05:41" if db == "DB02" and h >= 30 else "2024-02-28 10:00:00"
        b = f"2024-03-{1 + h // 24:02d} {h % 24:02d}:00:{10 + inst:02d}"
        e = f"2024-03-{1 + (h + 1) // 24:02d} {(h + 1) % 24:02d}:00:{10 + inst:02d}"
        out.append(f"{db},{1000 + h},{dbid},{inst},{start},{b},{e},+01:00,{r},{w},{r * 8192},{w * 8192},{w * 1536}")
    return out


def _fleet(tmp_path: Path) -> list[str]:
    """Eight databases in fourteen files, in an order that splits some across batches: DB01 in three
    weekly-ish files given out of time order, DB05 a RAC database whose two instances are in different
    files far apart, the others one file each."""
    d = tmp_path / "awr"
    d.mkdir()
    files = []

    def put(name: str, rows: list[str]) -> None:
        (d / name).write_text(HEADER + "\n" + "\n".join(rows) + "\n")
        files.append(str(d / name))

    put("db01-c.csv", _rows("DB01", 101, 1, range(48, 72), 1))
    put("db02.csv", _rows("DB02", 102, 1, range(0, 72), 2))
    put("db01-a.csv", _rows("DB01", 101, 1, range(0, 25), 1))      # overlaps b by one identical snapshot, b overlaps c by one
    put("db05-i1.csv", _rows("DB05", 105, 1, range(0, 72), 5))
    for n in (3, 4, 6, 7):
        put(f"db0{n}.csv", _rows(f"DB0{n}", 100 + n, 1, range(0, 72), n))
    put("db01-b.csv", _rows("DB01", 101, 1, range(24, 49), 1))
    put("db05-i2.csv", _rows("DB05", 105, 2, range(0, 72), 55))
    put("db08.csv", _rows("DB08", 108, 1, range(0, 72), 8))
    return files


def _import(tmp_path: Path, files: list[str], out: str, batch_bytes: int | None, *extra: str):
    env = {"DBTIER_BATCH_BYTES": str(batch_bytes)} if batch_bytes else None
    r = call_main("history", "import", "--source", "awr", *files, "--out", str(tmp_path / out), "--json", *extra,
                  cwd=tmp_path, env=env)
    return r


def _totals(run: Path) -> list[tuple]:
    paths = store.series_files(run, store.TOTALS_FILE)
    return duckdb.connect().execute(f"SELECT * FROM {store.read_sql(paths)} ORDER BY database, start").fetchall()


@pytest.mark.slow       # a few seconds: `make test` runs it, test-fast does not
def test_batches_change_nothing_but_the_number_of_parts(tmp_path):
    files = _fleet(tmp_path)
    one = _import(tmp_path, files, "one", None)
    assert one.returncode == 0, one.stderr
    many = _import(tmp_path, files, "many", 9000)     # a file is ~5-10 kB: two files a batch at most
    assert many.returncode == 0, many.stderr
    a, b = json.loads(one.stdout), json.loads(many.stdout)
    assert a["batches"] == 1 and b["batches"] >= 7
    assert a["series_files"] == ["totals.parquet", "profiles.parquet"]
    assert b["series_files"] == ["totals/", "profiles/"]
    # the reference by hand: DB01's 72 hourly samples over three files (one shared): 71 intervals; DB02
    # restarts once (the interval across it dropped): 70; RAC DB05 is two series of 71
    names = {d["name"]: d for d in b["databases"]}
    assert sorted(names) == ["DB01", "DB02", "DB03", "DB04", "DB05/1", "DB05/2", "DB06", "DB07", "DB08"]
    assert names["DB01"]["intervals"] == 71 and names["DB01"]["duplicates_dropped"] == 2
    assert names["DB02"]["intervals"] == 70 and names["DB02"]["restarts"] == 1
    assert names["DB05/1"]["intervals"] == names["DB05/2"]["intervals"] == 71
    for key in ("databases", "files", "notes", "limitations"):
        assert a[key] == b[key] or (key == "files" and sorted(a[key]) == sorted(b[key])), key
    assert _totals(tmp_path / "one") == _totals(tmp_path / "many")
    # a database is in one part only
    parts = store.series_files(tmp_path / "many", store.TOTALS_FILE)
    con = duckdb.connect()
    seen = [r[0] for p in parts for r in con.execute(f"SELECT DISTINCT database FROM {store.read_sql([p])}").fetchall()]
    assert sorted(seen) == sorted(names)
    # consolidating either gives the same figures (the batched one also puts the grid on in batches)
    c1 = json.loads(call_main("history", "consolidate", str(tmp_path / "one"), "--out", str(tmp_path / "c1"),
                              "--json", cwd=tmp_path).stdout)
    c2 = call_main("history", "consolidate", str(tmp_path / "many"), "--out", str(tmp_path / "c2"), "--json",
                   cwd=tmp_path, env={"DBTIER_BATCH_BYTES": "64000"})
    assert c2.returncode == 0, c2.stderr
    c2 = json.loads(c2.stdout)
    for key in ("sum_of_peaks", "sum_of_peaks_grid", "peak_of_sum", "gain", "peak_time", "drivers", "grid", "peaks"):
        assert _close(c1[key], c2[key]), key     # sums of floats taken in another order: equal to 1e-9


def _close(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        return a == pytest.approx(b, rel=1e-9)
    return a == b


@pytest.mark.slow       # a few seconds: `make test` runs it, test-fast does not
def test_a_bad_file_among_many_is_named_with_line_and_column_or_skipped(tmp_path):
    files = _fleet(tmp_path)
    bad = next(Path(f) for f in files if f.endswith("db04.csv"))
    lines = bad.read_text().splitlines()
    fields = lines[5].split(",")
    fields[9] = "12x4"                                    # physical write total IO requests
    lines[5] = ",".join(fields)
    bad.write_text("\n".join(lines) + "\n")
    r = _import(tmp_path, files, "stop", 9000)
    assert_clean_error(r, str(bad))
    assert "line 6" in r.stderr and "physical write total IO requests" in r.stderr
    assert not (tmp_path / "stop").exists()                # nothing half-written
    ok = _import(tmp_path, files, "skip", 9000, "--skip-bad-files")
    assert ok.returncode == 0, ok.stderr
    doc = json.loads(ok.stdout)
    assert [s["file"] for s in doc["skipped_files"]] == [str(bad)]
    assert "line 6" in doc["skipped_files"][0]["error"]
    assert "DB04" not in {d["name"] for d in doc["databases"]} and len(doc["databases"]) == 8
    assert str(bad) not in doc["files"] and load_doc(tmp_path / "skip")["skipped_files"] == doc["skipped_files"]


def test_the_memory_cap_is_recorded_and_bounds_duckdb(tmp_path, monkeypatch):
    files = _fleet(tmp_path)[:2]
    r = _import(tmp_path, files, "m", None, "--memory", "512")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["params"]["memory_mb"] == 512
    monkeypatch.setenv("DBTIER_MEMORY_MB", "768")
    assert store.memory_cap_mb() == 768 and store.memory_limit_mb() == 512    # two thirds to DuckDB
    bad = _import(tmp_path, files, "m2", None, "--memory", "100")
    assert_clean_error(bad, "--memory")


def test_batches_are_runs_of_files_within_the_budget():
    assert store.plan_batches([], 10) == []
    assert store.plan_batches([4, 4, 4, 30, 1, 9, 1], 10) == [range(0, 2), range(2, 3), range(3, 4), range(4, 6),
                                                              range(6, 7)]
    assert store.plan_batches([11], 10) == [range(0, 1)]


@pytest.mark.slow
def test_into_adds_files_to_an_earlier_import_as_if_read_together(tmp_path):
    """Run A holds DB01's first day, DB02's first 36 hours and DB03; --into A adds DB01's other days, the
    rest of DB02 and a new DB04. The result equals importing every file at once (the reference); A is
    not changed; DB03 is not read again (its series are A's, linked)."""
    d = tmp_path / "awr"
    d.mkdir()

    def put(name: str, rows: list[str]) -> str:
        (d / name).write_text(HEADER + "\n" + "\n".join(rows) + "\n")
        return str(d / name)

    first = [put("db01-a.csv", _rows("DB01", 101, 1, range(0, 25), 1)),
             put("db02-a.csv", _rows("DB02", 102, 1, range(0, 36), 2)),
             put("db03.csv", _rows("DB03", 103, 1, range(0, 72), 3))]
    later = [put("db01-b.csv", _rows("DB01", 101, 1, range(24, 49), 1)),
             put("db01-c.csv", _rows("DB01", 101, 1, range(48, 72), 1)),
             put("db02-b.csv", _rows("DB02", 102, 1, range(35, 72), 2)),
             put("db04.csv", _rows("DB04", 104, 1, range(0, 72), 4))]
    assert _import(tmp_path, first, "a", None).returncode == 0
    before = {p.name: p.read_bytes() for p in (tmp_path / "a").rglob("*") if p.is_file()}
    r = _import(tmp_path, later, "b", None, "--into", str(tmp_path / "a"))
    assert r.returncode == 0, r.stderr
    ref = _import(tmp_path, first + later, "ref", None)
    b, want = json.loads(r.stdout), json.loads(ref.stdout)
    assert b["databases"] == want["databases"] and b["appended_to"] == str(tmp_path / "a")
    assert {db["name"]: db["intervals"] for db in b["databases"]} == {"DB01": 71, "DB02": 70, "DB03": 71, "DB04": 71}
    assert sorted(b["files"]) == sorted(first + later)
    assert _totals(tmp_path / "b") == _totals(tmp_path / "ref")
    assert b["database_files"]["DB03"]["files"] == [first[2]]
    assert b["database_files"]["DB01"]["files"] == sorted([first[0], later[0], later[1]])
    assert {p.name: p.read_bytes() for p in (tmp_path / "a").rglob("*") if p.is_file()} == before
    # a database whose earlier file is gone cannot be added to: said, nothing written
    Path(first[1]).rename(tmp_path / "moved.csv")
    gone = _import(tmp_path, [later[2]], "c", None, "--into", str(tmp_path / "a"))
    assert_clean_error(gone, first[1])
    assert not (tmp_path / "c").exists()
    # not an import run, or another source
    assert_clean_error(_import(tmp_path, [later[3]], "d", None, "--into", str(tmp_path / "ref" / "raw")), "no result.json")
    assert call_main("history", "consolidate", str(tmp_path / "ref"), "--out", str(tmp_path / "k"),
                     cwd=tmp_path).returncode == 0
    assert_clean_error(_import(tmp_path, [later[3]], "d", None, "--into", str(tmp_path / "k")),
                       "--into", "not a `dbtier history import` run")
    other = call_main("history", "import", "--source", "sqlserver", later[3], "--into", str(tmp_path / "a"),
                      "--out", str(tmp_path / "e"), cwd=tmp_path)
    assert_clean_error(other, "a awr import")


def test_skip_bad_files_when_every_file_is_bad_says_so(tmp_path):
    files = _fleet(tmp_path)[:3]
    for f in files:
        Path(f).write_text("not,an,awr,export\n1,2,3,4\n")
    r = _import(tmp_path, files, "none", 9000, "--skip-bad-files")
    assert_clean_error(r, "every file failed (3; the first:", files[0])
    assert not (tmp_path / "none").exists()
