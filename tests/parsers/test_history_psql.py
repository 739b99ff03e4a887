"""The postgres reader on psql's own output (tests/data/history/psql, README there): real pg_stat_database
captures from PostgreSQL 15 under pgbench in every psql format, and psql's formatting of pg_stat_io-shaped
rows (16/17 and 18 column sets). Expected figures are worked by hand from the files' printed numbers;
every refusal has its message."""

from __future__ import annotations

import datetime as dt
import shutil

import pytest

from conftest import DATA
from dbtier.core.errors import DbtierError
from dbtier.history import read
from dbtier.history.sources import detect
from dbtier.history.store import connect
from dbtier.history.summary import summarise_import
from dbtier.history.tables import ReadOptions

P = DATA / "history" / "psql"
IO = DATA / "history" / "pg_stat_io"
BLOCK = 8192


def imp(*files, **opts):
    con = connect()
    res = read(con, "postgres", [str(f) for f in files], ReadOptions(**opts))
    return summarise_import(con, res), con


def data_reads(con) -> list[float]:
    return [r[0] for r in con.execute("SELECT read_iops FROM intervals WHERE file_type = 'data' ORDER BY start")
            .fetchall()]


def secs(a: str, b: str) -> float:
    return (dt.datetime.fromisoformat(b) - dt.datetime.fromisoformat(a)).total_seconds()


# -- pg_stat_database, \watch headers ---------------------------------------------------------------------

def test_watch_aligned_c_locale_with_a_reset():
    doc, con = imp(P / "database-watch.txt")
    (db,) = doc["databases"]
    assert db["name"] == "postgresql" and db["start"] == "2026-11-28T15:27:23Z"
    # blks_read of (shared, postgres, bench; template0/1 still) at 15:27:23, :33, :43, :53, 15:28:03, :13:
    # shared 82 82 82 82 92 92; postgres 270 285 292 299 306 313; bench 24518 26046 27264 28441 | 664 1967
    # (pg_stat_reset() in bench between :53 and 15:28:03: its interval there is dropped, a new segment)
    assert data_reads(con) == pytest.approx([(15 + 1528) / 10, (7 + 1218) / 10, (7 + 1177) / 10,
                                             (10 + 7) / 10, (7 + 1303) / 10])
    assert db["restarts"] == 1 and db["intervals"] == 5
    assert db["peaks"]["read_mbps"]["max"] == pytest.approx(1543 * BLOCK / 10 / 1e6)
    # blk_read_time (ms) over the first interval: postgres 8.46 -> 8.618, bench 26.573 -> 45.724
    lat = con.execute("SELECT read_lat_ms FROM intervals WHERE file_type = 'data' ORDER BY start").fetchone()[0]
    assert lat == pytest.approx((8.618 - 8.46 + 45.724 - 26.573) / 1543)
    prov = doc["provenance"]
    assert prov["native_step_s"] == 10 and prov["period_s"] == 10 and prov["resets"] == 1
    assert "pg_stat_database (psql output)" in prov["statistic"]
    assert any("aligned, times from the \\watch headers" in n for n in doc["notes"])
    assert any("8192 bytes" in n for n in doc["notes"])


def test_watch_expanded_aligned():
    doc, con = imp(P / "database-watch-x.txt")
    # RECORD by RECORD: postgres 270 -> 289, bench 24518 -> 26046 over 15:27:23 -> :33
    assert data_reads(con)[0] == pytest.approx((19 + 1528) / 10)
    assert doc["databases"][0]["restarts"] == 1


def test_watch_french_headers_and_footer_in_paris_time():
    doc, con = imp(P / "database-watch-fr.txt", tz="Europe/Paris")
    (db,) = doc["databases"]
    # `sam. 28 nov. 2026 16:27:23 (chaque 10s)` is 15:27:23 UTC; `(5 lignes)` counted
    assert db["start"] == "2026-11-28T15:27:23Z" and db["end"] == "2026-11-28T15:28:13Z"
    assert data_reads(con)[0] == pytest.approx((18 + 1528) / 10)       # postgres 270 -> 288


def test_watch_german_headers_need_the_zone_they_name():
    doc, _ = imp(P / "database-watch-de.txt", tz="Europe/Berlin")
    assert doc["databases"][0]["start"] == "2026-11-28T15:27:23Z"      # 16:27:23 CET
    with pytest.raises(DbtierError, match=r"database-watch-de\.txt: line 1: 'Sa 28 Nov 2026 16:27:23 CET' is in "
                       r"CET, a zone dbtier cannot tell from its abbreviation") as e:
        imp(P / "database-watch-de.txt")
    assert e.value.hint.startswith("give --tz")
    with pytest.raises(DbtierError, match=r"is in CET, but --tz Europe/London calls that time GMT"):
        imp(P / "database-watch-de.txt", tz="Europe/London")


def test_watch_unaligned_expanded_am_pm_in_new_york():
    doc, con = imp(P / "database-watch-en_US-x-unaligned.txt", tz="America/New_York")
    assert doc["databases"][0]["start"] == "2026-11-28T15:27:23Z"      # 10:27:23 AM EST
    assert data_reads(con)[0] == pytest.approx((17 + 1528) / 10)       # postgres 270 -> 287


def test_watch_unaligned_without_stats_reset_a_counter_going_down_is_a_reset():
    doc, con = imp(P / "database-watch-unaligned-minimal.txt")
    db = doc["databases"][0]
    # bench 28441 -> 664 with no stats_reset column: taken as a reset, never a negative rate
    assert db["restarts"] == 1
    assert min(data_reads(con)) >= 0
    assert data_reads(con)[0] == pytest.approx((20 + 1528) / 10)       # postgres 270 -> 290


# -- pg_stat_database, now() column ------------------------------------------------------------------------

@pytest.mark.parametrize("name, t0, t1, postgres", [
    ("database-aligned-now.txt", "2026-11-28 15:27:23.713169", "2026-11-28 15:27:33.717543", 285 - 262),
    ("database-unaligned-now.txt", "2026-11-28 15:27:23.697146", "2026-11-28 15:27:33.716879", 285 - 259),
    ("database-now.csv", "2026-11-28 15:27:23.71708", "2026-11-28 15:27:33.720284", 285 - 262),
])
def test_now_column_iso(name, t0, t1, postgres):
    doc, con = imp(P / name)
    assert data_reads(con)[0] == pytest.approx((postgres + 1528) / secs(t0, t1), rel=1e-9)
    assert doc["databases"][0]["restarts"] == 1
    assert doc["provenance"]["step_from"] == "the median interval"        # no \watch to say the step
    assert any("times from the now column" in n for n in doc["notes"])


def test_now_column_datestyle_sql_dmy_semicolons():
    doc, con = imp(P / "database-unaligned-semicolon-sql-dmy.txt", tz="Europe/Paris")
    # 28/11/2026 16:27:23.714935 CET -> 16:27:33.725958 CET; postgres 262 -> 285, bench 24518 -> 26046
    assert data_reads(con)[0] == pytest.approx((23 + 1528) / 10.011023, rel=1e-9)
    assert doc["databases"][0]["start"] == "2026-11-28T15:27:23Z"


def test_now_column_sql_dates_read_both_ways_are_refused(tmp_path):
    f = tmp_path / "dmy.txt"
    f.write_text((P / "database-unaligned-semicolon-sql-dmy.txt").read_text().replace("28/11/2026", "05/11/2026"))
    with pytest.raises(DbtierError, match=r"dmy\.txt: line 2: '05/11/2026 16:27:23\.714935 CET' is not a time dbtier "
                       r"reads \(05/11/2026 reads as day/month and as month/day \(DateStyle SQL\)\)"):
        imp(f, tz="Europe/Paris")


# -- pg_stat_database, --interval and --start ---------------------------------------------------------------

def test_aligned_without_times_takes_interval_and_start():
    doc, con = imp(P / "database-aligned.txt", interval_s=10, start="2026-11-28 15:27:23")
    db = doc["databases"][0]
    assert db["start"] == "2026-11-28T15:27:23Z" and db["end"] == "2026-11-28T15:28:13Z"
    # postgres 263 -> 285 (22), bench 24518 -> 26046, 10 s by --interval
    assert data_reads(con)[0] == pytest.approx((22 + 1528) / 10)
    assert doc["provenance"]["native_step_s"] == 10 and db["restarts"] == 1


def test_csv_watch_has_no_headers_and_takes_interval_and_start():
    doc, con = imp(P / "database-watch.csv", interval_s=10, start="2026-11-28T16:27:23+01:00")
    assert doc["databases"][0]["start"] == "2026-11-28T15:27:23Z"
    assert data_reads(con)[0] == pytest.approx((16 + 1528) / 10)       # postgres 270 -> 286


def test_interval_files_continue_in_the_order_given(tmp_path):
    """Two one-result files taken 10 s apart: snapshots 1 and 2 of one history, not twice snapshot 1."""
    text = (P / "database-aligned.txt").read_text().split("(5 rows)\n")
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(text[0] + "(5 rows)\n")
    b.write_text(text[1].lstrip("\n") + "(5 rows)\n")
    doc, con = imp(a, b, interval_s=10, start="2026-11-28 15:27:23")
    assert doc["databases"][0]["intervals"] == 1
    assert data_reads(con) == pytest.approx([(22 + 1528) / 10])


# -- refusals ----------------------------------------------------------------------------------------------

def test_one_snapshot_is_refused_as_one_snapshot():
    with pytest.raises(DbtierError, match=r"database-one\.txt: one snapshot of pg_stat_database: a rate needs two"):
        imp(P / "database-one.txt")
    with pytest.raises(DbtierError, match=r"one snapshot of pg_stat_database: a rate needs two"):
        imp(P / "database-one.txt", interval_s=60, start="2026-11-28 15:00:00")


def test_no_time_is_refused_with_the_options_that_give_one():
    with pytest.raises(DbtierError, match=r"database-aligned\.txt: line 1: a snapshot of pg_stat_database without "
                       r"a time: no \\watch header above it, no now\(\) column in it") as e:
        imp(P / "database-aligned.txt")
    assert "--interval SECONDS and --start TIME" in e.value.hint


def test_interval_needs_start_and_start_must_be_a_time():
    with pytest.raises(DbtierError, match=r"--interval without --start"):
        imp(P / "database-aligned.txt", interval_s=10)
    with pytest.raises(DbtierError, match=r"--start yesterday: not a time"):
        imp(P / "database-aligned.txt", interval_s=10, start="yesterday")


def test_footer_counts_the_rows_read(tmp_path):
    lines = (P / "database-watch.txt").read_text().splitlines(keepends=True)
    del lines[5]                                   # postgres's row of the first snapshot
    f = tmp_path / "cut.txt"
    f.write_text("".join(lines))
    with pytest.raises(DbtierError, match=r"cut\.txt: line 9: psql's footer says 5 row\(s\), 4 read above it"):
        imp(f)


def test_a_row_with_fields_missing(tmp_path):
    lines = (P / "database-watch.txt").read_text().splitlines(keepends=True)
    lines[5] = lines[5].rsplit("|", 3)[0] + "\n"
    f = tmp_path / "short.txt"
    f.write_text("".join(lines))
    with pytest.raises(DbtierError, match=r"short\.txt: line 6: 25 field\(s\), the header on line 3 has 28"):
        imp(f)


def test_numericlocale_and_words_are_not_numbers(tmp_path):
    with pytest.raises(DbtierError, match=r"pg_stat_io-16-numericlocale\.txt: line 3: column reads: '1,000' has its "
                       r"digits grouped \(psql's \\pset numericlocale\)"):
        imp(P / "pg_stat_io-16-numericlocale.txt", interval_s=60, start="2026-11-20 10:00:00")
    f = tmp_path / "word.txt"
    f.write_text((P / "database-watch.txt").read_text().replace("24518", "lots!"))
    with pytest.raises(DbtierError, match=r"word\.txt: line 7: column blks_read: 'lots!' is not a number"):
        imp(f)
    g = tmp_path / "negative.txt"
    g.write_text((P / "database-watch.txt").read_text().replace(" 24518 ", "-24518 "))
    with pytest.raises(DbtierError, match=r"negative\.txt: line 7: column blks_read: -24518 is negative"):
        imp(g)


def test_an_expanded_record_without_a_field(tmp_path):
    lines = (P / "database-watch-x.txt").read_text().splitlines(keepends=True)
    k = next(i for i, l in enumerate(lines) if l.startswith("blks_read") and i > 40)
    del lines[k]
    f = tmp_path / "x.txt"
    f.write_text("".join(lines))
    with pytest.raises(DbtierError, match=r"x\.txt: line \d+: this record lacks blks_read \(against the record on "
                       r"line 3\)"):
        imp(f)


def test_pg_stat_io_printed_with_an_unknown_column_set(tmp_path):
    f = tmp_path / "io.csv"
    f.write_text((P / "pg_stat_io-18.csv").read_text().replace("extend_bytes,", "extend_blocks,"))
    with pytest.raises(DbtierError, match=r"io\.csv: line 1: pg_stat_io of an unknown PostgreSQL version.*against "
                       r"18's: not there: extend_bytes; unknown: extend_blocks"):
        imp(f, interval_s=60, start="2026-11-20 10:00:00")


def test_not_psql_output_of_a_view(tmp_path):
    f = tmp_path / "other.txt"
    f.write_text(" relname | n_live_tup \n---------+------------\n t       |         10\n(1 row)\n")
    with pytest.raises(DbtierError, match=r"other\.txt: line 1: not a PostgreSQL statistics export.*psql's output"):
        imp(f)


# -- pg_stat_io (psql's formatting of the 16/17 and 18 column sets) -----------------------------------------

def test_pg_stat_io_16_watch():
    doc, con = imp(P / "pg_stat_io-16-watch.txt")
    (db,) = doc["databases"]
    # \watch 60 at 15:27:20, 15:28:20, 15:29:20. Interval 2: client normal reads 7000 -> 19000, bulkread
    # 600 -> 600, autovacuum 50 -> 650: 12600 / 60 = 210 data; temp relation 0 -> 1200: 20
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(210 + 20)
    # interval 2 writes: client 70 -> 130 + extends 700 -> 1300, bgwriter 1100 -> 1700, checkpointer
    # 2000 -> 8000, autovacuum 0 -> 60 (and temp 300 -> 300): 60 + 600 + 600 + 6000 + 60 = 7320 / 60
    assert db["peaks"]["write_iops"]["max"] == pytest.approx(7320 / 60)
    assert db["peaks"]["read_mbps"]["max"] == pytest.approx(230 * 8192 / 1e6)    # op_bytes 8192
    assert db["start"] == "2026-11-28T15:27:20Z" and doc["provenance"]["period_s"] == 60
    assert any("16/17" in n for n in doc["notes"])


@pytest.mark.parametrize("name", ["pg_stat_io-17-unaligned-tab.txt", "pg_stat_io-16-border0.txt",
                                  "pg_stat_io-16-border2.txt", "pg_stat_io-16-unicode.txt",
                                  "pg_stat_io-16-x-border2.txt", "pg_stat_io-16-null.txt"])
def test_pg_stat_io_16_values_in_every_table_style(name):
    doc, con = imp(P / name, interval_s=60, start="2026-11-20 10:00:00")
    # the same rows as the \watch capture: data reads 6600 / 60 then 12600 / 60 (temp relation apart)
    got = con.execute("SELECT read_iops FROM intervals WHERE file_type = 'data' ORDER BY start").fetchall()
    assert [g[0] for g in got] == pytest.approx([6600 / 60, 12600 / 60])
    assert doc["databases"][0]["peaks"]["write_iops"]["max"] == pytest.approx(7320 / 60)


@pytest.mark.parametrize("name, opts", [("pg_stat_io-18-x-watch.txt", {}),
                                        ("pg_stat_io-18.csv", {"interval_s": 60, "start": "2026-11-20 10:00:00"})])
def test_pg_stat_io_18_bytes_wal_and_a_shared_reset(name, opts):
    doc, con = imp(P / name, **opts)
    (db,) = doc["databases"]
    ft = {f["file_type"]: f for f in db["file_types"]}
    # relation reads 1000 -> 4000 -> 10000; read_bytes 32768000 -> 131072000 -> 327680000 (4 blocks a read)
    assert ft["data"]["max_read_iops"] == pytest.approx(6000 / 60)
    assert ft["data"]["max_read_mbps"] == pytest.approx((327680000 - 131072000) / 60 / 1e6)
    # WAL writes, interval 1: client normal 100 -> 3100, walwriter 10 -> 70, init 0 -> 16 = 3076; interval 2:
    # 6000 + 60 + 0
    wal = [r[0] for r in con.execute("SELECT write_iops FROM intervals WHERE file_type = 'wal' ORDER BY start")
           .fetchall()]
    assert wal == pytest.approx([3076 / 60, 6060 / 60])
    # relation writes, interval 2: client 60 -> 120 + extends 600 -> 1200, checkpointer 1000 -> 7000
    assert db["peaks"]["write_iops"]["max"] == pytest.approx((60 + 600 + 6000) / 60 + 6060 / 60)
    # the fourth snapshot is after pg_stat_reset_shared('io'): counters down, stats_reset moved
    assert db["restarts"] == 1 and db["intervals"] == 2


def test_collector_csv_and_psql_output_of_one_view_together():
    """The collector's pg_stat_io-16.csv (10:00-10:02) and psql's -A output of the same rows at 10:03-10:05
    (--interval and --start apply to psql's output only), named one database: one series, whose counters
    go back at 10:03 (the same rows again), a reset."""
    doc, con = imp(IO / "pg_stat_io-16.csv", P / "pg_stat_io-17-unaligned-tab.txt", interval_s=60,
                   start="2026-11-20 10:03:00.000123+00:00", database="pg")
    (db,) = doc["databases"]
    assert db["intervals"] == 4 and db["restarts"] == 1
    assert data_reads(con) == pytest.approx([6600 / 60, 12600 / 60, 6600 / 60, 12600 / 60])


# -- sniffing -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(p.name for p in P.iterdir() if p.suffix in (".txt", ".csv")))
def test_every_capture_is_sniffed_as_postgres(name):
    assert detect.guess(P / name) == "postgres"


def test_a_capture_under_another_name_reads_the_same(tmp_path):
    f = tmp_path / "snapshots"
    shutil.copyfile(P / "database-watch.txt", f)
    doc, _ = imp(f)
    assert doc["databases"][0]["intervals"] == 5


def test_interval_and_start_win_over_the_files_own_times():
    doc, con = imp(P / "database-watch.txt", interval_s=20, start="2026-11-28 15:00:00")
    assert doc["databases"][0]["start"] == "2026-11-28T15:00:00Z"
    assert data_reads(con)[0] == pytest.approx((15 + 1528) / 20)
    assert any("times from --start and --interval (the file's own times not read)" in n for n in doc["notes"])


def test_psql_output_beyond_the_size_read_is_refused(monkeypatch):
    from dbtier.history.sources import psql
    monkeypatch.setattr(psql, "MAX_BYTES", 1000)
    with pytest.raises(DbtierError, match=r"database-watch\.txt: 0 MiB of psql output; dbtier reads psql's output up "
                       r"to 0 MiB") as e:
        imp(P / "database-watch.txt")
    assert "collectors/postgres_stats.sql" in e.value.hint


def test_a_script_run_with_psql_a_echoes_its_statements(tmp_path):
    """`psql -a -f script.sql`: each statement and meta-command echoed above its result, command tags of the
    statements that return no rows; read as the results alone."""
    text = (P / "database-aligned.txt").read_text()
    echoed = "SET search_path = public;\nSET\n" + text.replace(
        " datid |", "SELECT * FROM pg_stat_database;\n datid |").replace("(5 rows)\n\n", "(5 rows)\n\n\\! sleep 10\n")
    f = tmp_path / "echoed.txt"
    f.write_text(echoed)
    doc, con = imp(f, interval_s=10, start="2026-11-28 15:27:23")
    assert doc["databases"][0]["intervals"] == 5
    assert data_reads(con)[0] == pytest.approx((22 + 1528) / 10)
