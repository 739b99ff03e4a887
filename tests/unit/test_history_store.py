"""store.py writes a history run's Parquet files (moved here from summary.py): which files, and what they hold."""

from __future__ import annotations

import os

import pytest

from dbtier.core.errors import DbtierError
from dbtier.history import store


@pytest.fixture
def con(tmp_path):
    c = store.connect(tmp_path / "spill")
    yield c
    c.close()


def _series_tables(con):
    con.execute("CREATE TABLE intervals AS SELECT * FROM (VALUES ('db1', 'data', 1.0), ('db1', 'log', 2.0)) t(database, file_type, iops)")
    con.execute("CREATE TABLE totals AS SELECT * FROM (VALUES ('db1', 3.0)) t(database, iops)")
    con.execute("CREATE TABLE profiles AS SELECT * FROM (VALUES ('db1', 'hour', 5, 3.0)) t(database, kind, key, iops)")


def test_import_files_skip_intervals_when_each_database_has_one_file_type(con, tmp_path):
    _series_tables(con)
    got = store.write_import_files(con, tmp_path, "counters", [{"file_types": [{}]}])
    assert got == [store.TOTALS_FILE, store.PROFILES_FILE]
    assert sorted(p.name for p in tmp_path.glob("*.parquet")) == sorted(got)
    assert con.execute(f"SELECT iops FROM {store.parquet(tmp_path, store.TOTALS_FILE)}").fetchall() == [(3.0,)]


def test_import_files_add_intervals_when_some_database_has_several_file_types(con, tmp_path):
    _series_tables(con)
    got = store.write_import_files(con, tmp_path, "intervals", [{"file_types": [{}, {}]}])
    assert got == [store.INTERVALS_FILE, store.TOTALS_FILE, store.PROFILES_FILE]
    assert con.execute(f"SELECT count(*) FROM {store.parquet(tmp_path, store.INTERVALS_FILE)}").fetchone() == (2,)


def test_hourly_import_writes_hourly_only(con, tmp_path):
    con.execute("CREATE TABLE hourly AS SELECT * FROM (VALUES ('db1', 1, 'max', 9.0), ('db1', 0, 'avg', 4.0)) "
                "t(database, hour, statistic, read_iops)")
    assert store.write_import_files(con, tmp_path, "hourly", []) == [store.HOURLY_FILE]
    rows = con.execute(f"SELECT hour FROM {store.parquet(tmp_path, store.HOURLY_FILE)}").fetchall()
    assert rows == [(0,), (1,)]   # ordered by database, hour, statistic


@pytest.mark.parametrize("drivers, expect", [(None, {"a", "b"}), (["b"], {"b"}), ([], set())])
def test_consolidation_grid_holds_the_named_databases(con, tmp_path, drivers, expect):
    con.execute("CREATE TABLE grid AS SELECT * FROM (VALUES ('a', 1), ('b', 2), ('it''s', 3)) t(database, bin)")
    con.execute("CREATE TABLE sum_series AS SELECT * FROM (VALUES (1, 3.0)) t(bin, iops)")
    con.execute("CREATE TABLE sum_profiles AS SELECT * FROM (VALUES ('hour', 1, 3.0)) t(kind, key, iops)")
    got = store.write_consolidation_files(con, tmp_path, drivers)
    assert got == [store.GRID_FILE, store.SUM_FILE, store.PROFILES_FILE]
    names = {r[0] for r in con.execute(f"SELECT database FROM {store.parquet(tmp_path, store.GRID_FILE)}").fetchall()}
    assert names == (expect | {"it's"} if drivers is None else expect)


def _raw(tmp_path):
    raw = tmp_path / "raw"
    raw.mkdir()
    return raw, (lambda name: raw / name)


def test_copy_inputs_keeps_small_regular_files_and_both_of_one_name(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "x.csv").write_text("one")
    (tmp_path / "b" / "x.csv").write_text("two")
    (tmp_path / "dma").mkdir()                      # a collection directory: named, not copied
    raw, dest = _raw(tmp_path)
    files = [str(tmp_path / "a" / "x.csv"), str(tmp_path / "b" / "x.csv"), str(tmp_path / "dma"),
             str(tmp_path / "gone.csv")]
    assert store.copy_inputs(files, dest) is None
    assert sorted(p.name for p in raw.iterdir()) == ["x.csv", "x.csv.2"]
    assert (raw / "x.csv").read_text() == "one" and (raw / "x.csv.2").read_text() == "two"


def test_copy_inputs_over_the_limit_copies_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(store, "RAW_COPY_MAX_BYTES", 5)
    (tmp_path / "x.csv").write_text("123")
    (tmp_path / "y.csv").write_text("456")            # 6 bytes in all, over 5
    raw, dest = _raw(tmp_path)
    assert store.copy_inputs([str(tmp_path / "x.csv"), str(tmp_path / "y.csv")], dest) == \
        "inputs over 50 MB in all are not copied into raw/; params.files names them"
    assert list(raw.iterdir()) == []


def test_a_working_database_keeps_its_work_in_a_directory_of_its_own_and_removes_it(tmp_path, monkeypatch):
    monkeypatch.setenv("DBTIER_TMPDIR", str(tmp_path / "work"))
    monkeypatch.setenv("DBTIER_MEMORY_MB", "256")               # DuckDB's 170 MiB; half of it: 85 MiB
    with store.workdir(10 * 2**20) as w, store.open_db(w, 10 * 2**20) as con:     # 10 MiB of inputs: in memory
        con.execute("CREATE TABLE t AS SELECT 1 AS x")
        [work] = list((tmp_path / "work").iterdir())
        assert not list(work.glob("*.duckdb"))
    with pytest.raises(ZeroDivisionError):                     # 200 MiB: a database file, removed even on error
        with store.workdir(200 * 2**20) as w, store.open_db(w, 200 * 2**20) as con:
            con.execute("CREATE TABLE t AS SELECT range AS x FROM range(1000)")
            [work] = list((tmp_path / "work").iterdir())
            assert list(work.glob("*.duckdb")) and con.execute("SELECT count(*) FROM t").fetchone() == (1000,)
            raise ZeroDivisionError
    assert list((tmp_path / "work").iterdir()) == []


def test_a_work_directory_without_the_space_it_needs_says_where_and_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("DBTIER_TMPDIR", str(tmp_path))
    with pytest.raises(DbtierError) as e:
        with store.workdir(10**18):
            pass
    assert str(tmp_path) in e.value.message and "GB free" in e.value.message
    assert "DBTIER_TMPDIR" in e.value.hint
    assert list(tmp_path.iterdir()) == []                      # nothing made


def test_a_commands_memory_is_its_own_and_goes_with_it(monkeypatch):
    """--memory reaches the store as memory_cap's argument: over DBTIER_MEMORY_MB inside, gone after (the
    environment left as it was), and below 256 MB refused with the option named."""
    monkeypatch.setenv("DBTIER_MEMORY_MB", "768")
    with store.memory_cap(1536):
        assert store.memory_cap_mb() == 1536 and store.memory_limit_mb() == 1024      # two thirds to DuckDB
        assert store.batch_bytes() == 1024 * 2**20 // 3
    assert store.memory_cap_mb() == 768
    with store.memory_cap(None):                                 # not given: the environment's, or the default
        assert store.memory_cap_mb() == 768
    assert os.environ["DBTIER_MEMORY_MB"] == "768"
    with pytest.raises(DbtierError) as e:
        with store.memory_cap(100):
            pass
    assert e.value.message == "--memory 100: at least 256 MB" and e.value.hint == "e.g. --memory 1024"
