"""`dbtier history import` of psql's output end to end: the source told from the files' first bytes (a
\\watch header, an expanded record, a CSV header), the figures and provenance in the run's JSON, and the
refusals as one `dbtier: error:` line, never a traceback. The captures are tests/data/history/psql's (README
there); the figures are worked by hand from their printed numbers."""

from __future__ import annotations


import pytest

from conftest import DATA, assert_clean_error, call_main, history_imported

P = DATA / "history" / "psql"

pytestmark = pytest.mark.slow       # a second or more each: `make test` runs them, test-fast does not


def imported(tmp_path, *args):
    return history_imported(tmp_path, "postgres", *args)


def test_aligned_watch_sniffed_and_read(tmp_path):
    doc = imported(tmp_path, P / "database-watch.txt")
    (db,) = doc["databases"]
    # 15:27:23 -> :33: postgres 270 -> 285, bench 24518 -> 26046 blocks of 8 KiB
    assert db["peaks"]["read_iops"]["max"] == pytest.approx((15 + 1528) / 10)
    assert db["peaks"]["read_mbps"]["max"] == pytest.approx(1543 * 8192 / 10 / 1e6)
    assert db["restarts"] == 1                     # pg_stat_reset() in bench
    prov = doc["provenance"]
    assert prov["period_s"] == 10 and prov["native_step_s"] == 10 and prov["resets"] == 1
    assert prov["basis"] == "10-s intervals between counter samples (dbtier's differences)"
    assert (tmp_path / "run" / "raw" / "database-watch.txt").exists()


def test_csv_with_interval_and_start(tmp_path):
    doc = imported(tmp_path, P / "database-watch.csv", "--interval", "10", "--start", "2026-11-28T15:27:23")
    (db,) = doc["databases"]
    assert db["start"] == "2026-11-28T15:27:23Z" and db["end"] == "2026-11-28T15:28:13Z"
    assert db["peaks"]["read_iops"]["max"] == pytest.approx((16 + 1528) / 10)    # postgres 270 -> 286
    assert any("times from --start and --interval" in n for n in doc["notes"])


def test_expanded_watch_of_pg_stat_io_18(tmp_path):
    doc = imported(tmp_path, P / "pg_stat_io-18-x-watch.txt", "--database", "pg18")
    (db,) = doc["databases"]
    assert db["name"] == "pg18"
    # data reads 4000 -> 10000 in 60 s; WAL writes 3100 -> 9100 + 70 -> 130 + 16 -> 16
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(6000 / 60)
    ft = {f["file_type"]: f for f in db["file_types"]}
    assert ft["wal"]["max_write_iops"] == pytest.approx(6060 / 60)
    assert "pg_stat_io" in doc["provenance"]["statistic"] and "byte columns" in doc["provenance"]["unit"]


def test_localised_watch_with_its_zone(tmp_path):
    doc = imported(tmp_path, P / "database-watch-fr.txt", "--tz", "Europe/Paris")
    assert doc["databases"][0]["start"] == "2026-11-28T15:27:23Z"


@pytest.mark.parametrize("args, needles", [
    ((P / "database-one.txt",), ("database-one.txt: one snapshot of pg_stat_database: a rate needs two",)),
    ((P / "database-aligned.txt",), ("without a time", "--interval SECONDS and --start TIME")),
    ((P / "database-watch-de.txt",), ("is in CET", "give --tz")),
    ((P / "database-aligned.txt", "--interval", "10"), ("--interval without --start",)),
])
def test_refusals_are_one_line(tmp_path, args, needles):
    r = call_main("history", "import", *map(str, args), "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert_clean_error(r, *needles)
    assert not (tmp_path / "run").exists()
