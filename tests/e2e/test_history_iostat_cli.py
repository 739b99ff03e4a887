"""`dbtier history import` of sysstat's iostat end to end, the source sniffed from the file: `-o JSON` with `-t`,
without it (`--interval`, `--start`), and text without `-t`; the figures read off the real captures
(tests/data/history/iostat/README.md), the refusal of a file without times as the user sees it."""

from __future__ import annotations


import duckdb

from conftest import DATA, assert_clean_error, call_main, history_imported

IO = DATA / "history" / "iostat"


def imported(tmp_path, *args):
    doc = history_imported(tmp_path, "iostat", *args)          # sniffed: no --source given
    out = tmp_path / "run"
    totals = duckdb.connect().execute(f"SELECT strftime(start, '%H:%M:%S'), read_iops, write_iops FROM "
                                      f"read_parquet('{out / 'totals.parquet'}') ORDER BY start").fetchall()
    return doc, totals


def test_json_with_t(tmp_path):
    doc, totals = imported(tmp_path, IO / "iostat-x-t-json.json")
    (db,) = doc["databases"]
    assert db["name"] == "vm" and db["intervals"] == 4
    # vda's r/s and w/s of the reports at 15:23:07 ... 15:23:10 (lines 30, 41, 52, 63); the first left out
    assert totals == [("15:23:06", 317.0, 140.0), ("15:23:07", 323.0, 179.0), ("15:23:08", 318.0, 152.0),
                      ("15:23:09", 300.0, 220.0)]
    assert doc["provenance"]["semantics"] == "rate"


def test_json_without_t(tmp_path):
    doc, totals = imported(tmp_path, IO / "iostat-x-json.json", "--interval", "1", "--start", "2026-11-28T16:23:00",
                           "--tz", "Europe/Paris")
    # lines 28, 38, 48, 58; 16:23 in Paris is 15:23 UTC
    assert totals == [("15:23:00", 301.0, 120.0), ("15:23:01", 302.0, 121.0), ("15:23:02", 303.0, 179.0),
                      ("15:23:03", 304.0, 120.0)]
    assert doc["provenance"]["native_step_s"] == 1


def test_text_without_t(tmp_path):
    doc, totals = imported(tmp_path, IO / "iostat-x.txt", "--interval", "60")
    # from 00:00 of the header's date, 60 s apart (said); lines 22, 33, 44, 55
    assert totals == [("00:00:00", 611.0, 322.0), ("00:01:00", 603.0, 267.0), ("00:02:00", 602.0, 268.0),
                      ("00:03:00", 603.0, 491.0)]
    (lim,) = doc["limitations"]
    assert "iostat without -t" in lim and "00:00 of the header's date 11/28/26" in lim and "give --start" in lim


def test_without_t_or_interval_is_refused_in_one_line(tmp_path):
    r = call_main("history", "import", str(IO / "iostat-x-json.json"), "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert_clean_error(r, "no report times: iostat was run without -t: give --interval", "--start")
    assert not (tmp_path / "run").exists()
