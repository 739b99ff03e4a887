"""times.py (source times to UTC in SQL) and tables.database_name_from_file, on hand-worked cases."""

from __future__ import annotations

import datetime as dt

import duckdb
import pytest

from dbtier.core.errors import DbtierError
from dbtier.history.tables import database_name_from_file
from dbtier.history.sources.times import check_tz, interval_sql, utc_sql


@pytest.fixture(scope="module")
def con():
    c = duckdb.connect(":memory:")
    c.execute("SET TimeZone = 'UTC'")
    yield c
    c.close()


def _utc(con, text, tz="UTC"):
    return con.execute(f"SELECT {utc_sql('v', tz)} FROM (SELECT CAST(? AS VARCHAR) AS v)", [text]).fetchone()[0]


@pytest.mark.parametrize("text, tz, expect", [
    ("2024-03-01 10:00:00", "UTC", dt.datetime(2024, 3, 1, 10)),
    ("2024-03-01 10:00:00", "Europe/Paris", dt.datetime(2024, 3, 1, 9)),          # CET is UTC+1 in March
    ("2024-07-01 10:00:00", "Europe/Paris", dt.datetime(2024, 7, 1, 8)),          # CEST is UTC+2
    ("2024-03-01 10:00:00 +01:00", "America/New_York", dt.datetime(2024, 3, 1, 9)),   # an offset wins over --tz
    ("2024-03-01T10:00:00Z", "Europe/Paris", dt.datetime(2024, 3, 1, 10)),
    ("01-MAR-24 10.00.00.000000 AM", "UTC", dt.datetime(2024, 3, 1, 10)),         # Oracle's default format
    ("03/01/2024 22:00:00", "UTC", dt.datetime(2024, 3, 1, 22)),                  # US month first
    ("not a time", "UTC", None),
])
def test_utc_sql(con, text, tz, expect):
    assert _utc(con, text, tz) == expect


@pytest.mark.parametrize("text, secs", [
    ("+01:00", 3600), ("-05:30", -19800), ("+00 02:00:00.000000", 7200), ("+0 01:00:00", 3600),
    # INTERVAL DAY(9) TO SECOND, as AWR exports print SNAP_TIMEZONE: nine day digits, with a sign
    ("+000000000 01:00:00.000000", 3600), ("-000000000 05:30:00.000000", -19800),
    ("000000000 02:00:00", 7200), (" +000000000 01:00:00.000000 ", 3600),
    ("+0000000000 01:00:00.000000", None),          # ten day digits: no Oracle interval prints that
    ("garbage", None)])
def test_interval_sql_reads_oracle_snap_timezone(con, text, secs):
    assert con.execute(f"SELECT {interval_sql('v')} FROM (SELECT CAST(? AS VARCHAR) AS v)", [text]).fetchone()[0] == secs


def test_check_tz():
    assert check_tz(None) == "UTC"
    assert check_tz("Europe/Paris") == "Europe/Paris"
    with pytest.raises(DbtierError, match="not a time zone"):
        check_tz("Mars/Olympus")


def test_database_name_from_file():
    assert database_name_from_file("/x/diskstats-db01.txt") == "diskstats-db01"
    assert database_name_from_file("iostat db 2.log.gz") == "iostat_db_2"
    assert database_name_from_file(".txt") == "database"
