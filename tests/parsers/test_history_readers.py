"""Each history reader on realistic files: real engine output where this machine could make it
(diskstats, iostat, sar, PostgreSQL 15), the export layouts elsewhere (AWR, SQL Server), and both
real DMA samples. Figures are checked against an independent computation from the files."""

from __future__ import annotations

import csv
import datetime as dt
import shutil
from pathlib import Path

import duckdb
import pytest

from conftest import DATA
from dbtier.core.errors import DbtierError
from dbtier.history import read
from dbtier.history.store import connect
from dbtier.history.summary import summarise_import
from dbtier.history.tables import ReadOptions

H = DATA / "history"
REAL = H / "real"
SHARED = Path(__file__).resolve().parent.parent / "data" / "history" / "dma"   # real DMA collections (README there)


def imp(source: str, *files, **opts):
    con = connect()
    res = read(con, source, [str(f) for f in files], ReadOptions(**opts))
    doc = summarise_import(con, res)
    return doc, con


def by_name(doc):
    return {d["name"]: d for d in doc["databases"]}


# -- SQL Server --------------------------------------------------------------------------------------

def test_sqlserver_file_stats():
    doc, con = imp("sqlserver", H / "sqlserver" / "file_stats-sql01.csv")
    dbs = by_name(doc)
    assert set(dbs) == {"SQL01/sales", "SQL01/tempdb"}
    sales = dbs["SQL01/sales"]
    # 5 samples, a restart (new sqlserver_start_time) between the 3rd and 4th: 3 intervals.
    assert sales["intervals"] == 3 and sales["restarts"] == 1 and sales["segments"] == 2
    assert sales["start"] == "2024-03-04T09:00:00Z" and sales["end"] == "2024-03-04T09:20:00Z"   # +01:00 -> UTC
    # 10:05:00.4626501 -> 10:10:00.4483310: 60000 + 15000 reads of the two data files.
    secs = 299.9856809
    assert sales["peaks"]["read_iops"]["max"] == pytest.approx(75000 / secs, rel=1e-9)
    assert sales["peaks"]["read_mbps"]["max"] == pytest.approx((60000 * 8192 + 15000 * 65536) / secs / 1e6, rel=1e-9)
    assert sales["peaks"]["write_iops"]["max"] == pytest.approx(50, rel=1e-3)
    ft = {f["file_type"]: f for f in sales["file_types"]}
    assert set(ft) == {"data", "log"}
    assert ft["data"]["read_lat_ms"]["p50"] == pytest.approx((30000 * 2 + 15000 * 4) / 45000)
    assert ft["log"]["write_lat_ms"]["p95"] == pytest.approx(0.5)
    assert sales["capacity_gb"] == pytest.approx((53687091200 + 10737418240 + 21474836480) / 1e9)


# -- PostgreSQL 15 (real) ------------------------------------------------------------------------------

def test_postgres15_real_snapshots_with_a_crash_restart():
    files = sorted((REAL / "postgres15").glob("*.csv"))
    doc, con = imp("postgres", *files)
    (db,) = doc["databases"]
    assert db["name"] == "pgcap15"
    # 10 snapshots; an immediate (crash) restart between the 6th and 7th resets the statistics.
    assert db["intervals"] == 9 and db["restarts"] == 1
    fts = {f["file_type"]: f for f in db["file_types"]}
    assert {"data", "wal", "temp files", "table reads", "index reads"} <= set(fts)
    assert fts["table reads"]["role"] == "detail"
    # Independent: WAL writes per second from pg_stat_wal's first two rows.
    rows = [r for r in csv.DictReader(open(REAL / "postgres15" / "pg_stat_wal.csv")) if r["sample_time"] != "sample_time"]
    t = [dt.datetime.fromisoformat(r["sample_time"].replace("+00", "+00:00")) for r in rows]
    first = (int(rows[1]["wal_write"]) - int(rows[0]["wal_write"])) / (t[1] - t[0]).total_seconds()
    got = con.execute("SELECT write_iops FROM intervals WHERE file_type = 'wal' ORDER BY start LIMIT 1").fetchone()[0]
    assert got == pytest.approx(first, rel=1e-6)
    assert db["capacity_gb"] > 0
    assert any("pg_stat_bgwriter" in n for n in doc["notes"])


# -- Oracle AWR --------------------------------------------------------------------------------------

def _awr_oracle_rates(path):
    """Independent: read IOPS per interval from the wide sysstat export, skipping restarts."""
    rows = list(csv.DictReader(l for l in open(path) if l.strip()))
    out = []
    for a, b in zip(rows, rows[1:]):
        if a["STARTUP_TIME"] != b["STARTUP_TIME"]:
            continue
        ta = dt.datetime.fromisoformat(a["END_INTERVAL_TIME"])
        tb = dt.datetime.fromisoformat(b["END_INTERVAL_TIME"])
        out.append((int(b["physical read total IO requests"]) - int(a["physical read total IO requests"]))
                   / (tb - ta).total_seconds())
    return out


def test_awr_collector_export_with_snap_timezone_and_a_restart():
    f = H / "awr" / "awr_sysstat_PROD.csv"
    doc, con = imp("awr", f)
    (db,) = doc["databases"]
    assert db["name"] == "PROD"
    assert db["intervals"] == 46 and db["restarts"] == 1   # 48 snapshots, one instance restart
    # SNAP_TIMEZONE +0 01:00:00: local 01:00:12 is 00:00:12 UTC.
    assert db["start"] == "2024-03-04T00:00:12Z"
    rates = _awr_oracle_rates(f)
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(max(rates), rel=1e-12)
    total = next(t for t in db["file_types"] if t["file_type"] == "total")
    assert total["role"] == "total" and total["redo_mbps"]["max"] > 0     # redo generated, beside the I/O


@pytest.mark.parametrize("slow", [False, True])
def test_awr_snap_timezone_with_nine_day_digits(tmp_path, monkeypatch, slow):
    """SNAP_TIMEZONE as Oracle prints an INTERVAL DAY(9) TO SECOND gives the same UTC times as the
    short form, through DuckDB's CSV reader (fast) and through the text path (slow, forced here)."""
    f = tmp_path / "awr_sysstat_PROD.csv"
    f.write_text((H / "awr" / "awr_sysstat_PROD.csv").read_text()
                 .replace('"+0 01:00:00"', '"+000000000 01:00:00.000000"'))
    if slow:
        from dbtier.history.sources import csvio
        real = csvio._create

        def typed_refused(con, table, layouts, columns, numeric, typed, times=()):
            if typed:
                raise duckdb.Error("forced: the slow path")
            return real(con, table, layouts, columns, numeric, typed, times)
        monkeypatch.setattr(csvio, "_create", typed_refused)
    doc, _ = imp("awr", f)
    want, _ = imp("awr", H / "awr" / "awr_sysstat_PROD.csv")
    (db,), (ref,) = doc["databases"], want["databases"]
    assert db["start"] == ref["start"] == "2024-03-04T00:00:12Z"      # local 01:00:12 at +01:00
    assert db["end"] == ref["end"] and db["intervals"] == ref["intervals"] == 46


def test_awr_iostat_filetype_alone_adds_up_its_file_types():
    doc, con = imp("awr", H / "awr" / "awr_iostat_filetype_PROD.csv")
    (db,) = doc["databases"]
    fts = {f["file_type"] for f in db["file_types"]}
    assert {"Data File", "Log File", "Temp File", "Control File", "Archive Log", "Other"} <= fts
    parts = con.execute("""SELECT sum(read_iops) FROM intervals GROUP BY start ORDER BY start LIMIT 1""").fetchone()[0]
    total = con.execute("SELECT read_iops FROM totals ORDER BY start LIMIT 1").fetchone()[0]
    assert total == pytest.approx(parts)
    data = next(f for f in db["file_types"] if f["file_type"] == "Data File")
    assert data["read_lat_ms"]["p50"] > 0


def test_awr_sysstat_and_filetype_together_use_the_sysstat_total():
    doc, _ = imp("awr", H / "awr" / "awr_sysstat_PROD.csv", H / "awr" / "awr_iostat_filetype_PROD.csv")
    (db,) = doc["databases"]
    rates = _awr_oracle_rates(H / "awr" / "awr_sysstat_PROD.csv")
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(max(rates), rel=1e-12)
    assert {f["role"] for f in db["file_types"]} == {"total", "part"}


def test_awr_sql_developer_long_export_rac_with_snapshot_file():
    files = (H / "awr" / "dba_hist_sysstat_FIN.csv", H / "awr" / "dba_hist_snapshot_FIN.csv")
    doc, _ = imp("awr", *files, database="FIN")
    dbs = by_name(doc)
    assert set(dbs) == {"FIN/1", "FIN/2"}           # RAC: one series per instance
    assert dbs["FIN/1"]["intervals"] == 5
    # Oracle's default DD-MON-RR HH.MI.SS.FF9 AM times and SNAP_TIMEZONE "+00 01:00:00.000000".
    assert dbs["FIN/1"]["start"] == "2024-03-04T08:00:02Z"   # the first sample is 09:00:02 +01:00
    assert dbs["FIN/1"]["peaks"]["read_iops"]["max"] == pytest.approx(5200, rel=1e-5)
    assert dbs["FIN/2"]["peaks"]["read_iops"]["max"] == pytest.approx(4800, rel=1e-5)


def test_awr_without_names_uses_the_dbid():
    doc, _ = imp("awr", H / "awr" / "dba_hist_sysstat_FIN.csv", H / "awr" / "dba_hist_snapshot_FIN.csv")
    assert set(by_name(doc)) == {"DBID 1177042553/1", "DBID 1177042553/2"}


# -- diskstats, iostat, sar (real, this machine) ---------------------------------------------------------

def _vda_diskstats(path):
    out, t = [], None
    for line in open(path):
        if line.startswith("# dbtier-diskstats"):
            t = float(line.split("time=")[1].split()[0])
        elif " vda " in line:
            f = line.split()
            out.append((t, int(f[3]), int(f[5]) * 512, int(f[6])))     # time, reads, bytes read, ms reading
    return out


def test_diskstats_real_capture():
    f = REAL / "diskstats-vm.txt"
    doc, con = imp("diskstats", f)
    (db,) = doc["databases"]
    assert db["name"] == "vm" and db["intervals"] == 24 and db["restarts"] == 0
    assert any("counted devices vda" in n for n in doc["notes"])
    s = _vda_diskstats(f)
    rates = [(b[1] - a[1]) / (b[0] - a[0]) for a, b in zip(s, s[1:])]
    assert db["peaks"]["read_iops"]["max"] == pytest.approx(max(rates), rel=1e-6)   # times kept to the µs
    mbps = [(b[2] - a[2]) / (b[0] - a[0]) / 1e6 for a, b in zip(s, s[1:])]
    assert db["peaks"]["read_mbps"]["max"] == pytest.approx(max(mbps), rel=1e-6)
    lat = [(b[3] - a[3]) / (b[1] - a[1]) for a, b in zip(s, s[1:]) if b[1] > a[1]]
    got = con.execute("SELECT max(read_lat_ms) FROM intervals WHERE file_type = 'vda'").fetchone()[0]
    assert got == pytest.approx(max(lat))
    roles = dict(con.execute("SELECT DISTINCT file_type, role FROM intervals").fetchall())
    assert roles["vda"] == "part" and roles.get("loop0") == "detail"


def test_diskstats_32_bit_time_wrap_and_a_reboot(tmp_path):
    """The ms fields are 32-bit: a wrap is a delta; a new btime is a reboot (new segment)."""
    lines = [l for l in open(REAL / "diskstats-vm.txt")][:33]   # three snapshots
    out = []
    k = 0
    for l in lines:
        if l.startswith("# dbtier"):
            k += 1
            if k == 3:
                l = l.replace("btime=1795303153", "btime=1795306300")   # rebooted before the 3rd
        elif " vda " in l:
            f = l.split()
            if k == 1:
                f[6] = str(2**32 - 100)          # ms reading just under 2^32 ...
            elif k == 2:
                f[6] = "70"                      # ... wrapped: 170 ms
            l = " ".join(f) + "\n"
        out.append(l)
    p = tmp_path / "wrap.txt"
    p.write_text("".join(out))
    doc, con = imp("diskstats", p)
    (db,) = doc["databases"]
    assert db["wraps"] >= 1 and db["restarts"] == 1 and db["intervals"] == 1
    reads = con.execute("SELECT read_iops * seconds, read_lat_ms * read_iops * seconds FROM intervals "
                        "WHERE file_type = 'vda'").fetchone()
    assert reads[1] == pytest.approx(170.0)          # 100 ms up to 2^32, 70 after


def test_iostat_real_capture_default_and_iso_times():
    doc, con = imp("iostat", REAL / "iostat-x-t.txt")
    (db,) = doc["databases"]
    assert db["name"] == "vm" and db["intervals"] == 24    # 25 reports, the first (since boot) dropped
    # The 2nd report's vda line: r/s 488.00, rkB/s 30897.60, r_await 0.08.
    first = con.execute("SELECT read_iops, read_mbps, read_lat_ms FROM intervals WHERE file_type = 'vda' "
                        "ORDER BY start LIMIT 1").fetchone()
    assert first == pytest.approx((488.0, 30897.6 * 1024 / 1e6, 0.08))
    doc2, _ = imp("iostat", REAL / "iostat-x-t-y-iso.txt")
    assert doc2["databases"][0]["intervals"] == 23
    assert doc2["databases"][0]["start"] == "2026-11-22T00:12:40Z"


def test_iostat_overlapping_captures_are_refused():
    with pytest.raises(DbtierError, match="duplicate reports"):
        imp("iostat", REAL / "iostat-x-t.txt", REAL / "iostat-x-t-y-iso.txt")


def test_sar_real_capture_with_and_without_p():
    doc, con = imp("sar", REAL / "sar-d.txt")
    (db,) = doc["databases"]
    assert db["name"] == "vm" and db["intervals"] == 24
    assert doc["limitations"] and "tps" in doc["limitations"][0]
    first = con.execute("SELECT start, iops, read_mbps, write_mbps FROM intervals WHERE file_type = 'vda' "
                        "ORDER BY start LIMIT 1").fetchone()
    assert first[0] == dt.datetime(2026, 11, 22, 0, 12, 35)
    assert first[1:] == pytest.approx((525.40, 30736.80 * 1024 / 1e6, 30568.80 * 1024 / 1e6))
    doc_p, _ = imp("sar", REAL / "sar-d-p.txt")
    assert doc_p["databases"][0]["peaks"]["read_iops"] == pytest.approx(db["peaks"]["read_iops"])


def test_sar_time_zone_and_a_restart_record(tmp_path):
    text = (REAL / "sar-d.txt").read_text().splitlines()
    text.insert(20, "00:12:57     LINUX RESTART\t(2 CPU)")
    p = tmp_path / "sar.txt"
    p.write_text("\n".join(text) + "\n")
    doc, _ = imp("sar", p, tz="Europe/Paris")
    (db,) = doc["databases"]
    assert db["start"] == "2026-11-21T23:12:35Z"      # 00:12:35 in Paris (winter, +01:00)
    assert any("(1 seen)" in n for n in doc["notes"])


# -- Google DMA (the two real samples) ----------------------------------------------------------------

@pytest.mark.parametrize("name,db,snapshots,cap", [("dma-oracle19c-single.tgz", "VBOXNCDB", 648, 8.0),
                                                   ("dma-oracle11g-single.tgz", "DB11G", 213, 3.0)])
@pytest.mark.slow
def test_dma_real_samples(name, db, snapshots, cap):
    doc, con = imp("dma", SHARED / name)
    (d,) = doc["databases"]
    assert d["name"] == db and d["intervals"] == snapshots and d["capacity_gb"] == cap
    assert doc["kind"] == "hourly" and "cannot give true peaks of sums" in doc["limitations"][0]
    for m in ("read_iops", "write_iops", "read_mbps", "write_mbps"):
        assert set(d["peaks"][m]) == {"p50", "p95", "p99", "max"} and d["peaks"][m]["p99"] is None
        assert d["peaks"][m]["p50"] <= d["peaks"][m]["p95"] <= d["peaks"][m]["max"]
    assert len(d["hour_of_day"]) == 24
    n = con.execute("SELECT count(*) FROM hourly").fetchone()[0]
    assert n == 24 * 6


@pytest.mark.slow
def test_dma_19c_figures_by_hand():
    doc, _ = imp("dma", SHARED / "dma-oracle19c-single.tgz")
    h5 = doc["databases"][0]["hour_of_day"][5]
    # hour 05: physical read total bytes PERC100 1546562048 over 28 snapshots of 25266 s in all.
    assert h5["read_mbps"]["max"] == pytest.approx(1546562048 / (25266 / 28) / 1e6)
    # the mean is exact: SUM_VALUE 2747329024 / SUM_SNAPS_DIFF_SECS 25266
    assert h5["read_mbps"]["avg"] == pytest.approx(2747329024 / 25266 / 1e6)


@pytest.mark.slow
def test_dma_11g_sqlplus_concatenated_headers_from_a_directory(tmp_path):
    import tarfile
    with tarfile.open(SHARED / "dma-oracle11g-single.tgz") as t:
        t.extractall(tmp_path, filter="data")
    doc, _ = imp("dma", tmp_path)
    h0 = doc["databases"][0]["hour_of_day"][0]
    # hour 00: physical read total bytes PERC95 50029568; 9 snapshots, 32336 s.
    assert h0["read_mbps"]["p95"] == pytest.approx(50029568 / (32336 / 9) / 1e6)
    assert h0["snapshots"] == 9


@pytest.mark.slow       # a second or more: `make test` runs it, test-fast does not
def test_dma_zip_is_read_like_the_tgz(tmp_path):
    import tarfile
    import zipfile
    z = tmp_path / "dma.zip"
    with tarfile.open(SHARED / "dma-oracle19c-single.tgz") as t, zipfile.ZipFile(z, "w") as out:
        for m in t.getmembers():
            if m.isfile():
                out.writestr(m.name, t.extractfile(m).read())
    a, _ = imp("dma", z)
    b, _ = imp("dma", SHARED / "dma-oracle19c-single.tgz")
    assert a["databases"][0]["peaks"] == b["databases"][0]["peaks"]


def test_copies_are_unchanged():
    # The real captures are used as they are (see tests/data/history/README.md).
    assert (REAL / "postgres15" / "pg_stat_database.csv").read_text().startswith("sample_time,cluster,block_size,datid")
    assert shutil.which("true")


# -- times the CSV reader types itself (csvio.load) ------------------------------------------------------

_AWR_HEADER = ("DB_NAME,SNAP_ID,DBID,INSTANCE_NUMBER,STARTUP_TIME,BEGIN_INTERVAL_TIME,END_INTERVAL_TIME,"
               "physical read total IO requests,physical write total IO requests,physical read total bytes,"
               "physical write total bytes,redo size")


def _awr_three_snapshots(path, last_end):
    rows = [(1, "2024-03-04 09:00:00", "2024-03-04 10:00:00", 0), (2, "2024-03-04 10:00:00", "2024-03-04 11:00:00", 3600),
            (3, "2024-03-04 11:00:00", last_end, 10800)]
    path.write_text(_AWR_HEADER + "\n" + "".join(
        f"TZDB,{s},42,1,2024-03-01 08:00:00,{b},{e},{r},0,{r * 8192},0,0\n" for s, b, e, r in rows))
    return path


def test_awr_plain_iso_times_are_typed_and_read_in_tz(tmp_path):
    from dbtier.history.sources import awr
    from dbtier.history.sources import csvio
    f = _awr_three_snapshots(tmp_path / "a.csv", "2024-03-04 12:00:00")
    con = connect()
    csvio.load(con, "raw", [awr.sniff_awr(str(f))], ["end_interval_time", "startup_time", "db_name"],
               times=awr.TIME_COLS)
    assert csvio.typed_times(con, "raw") == {"end_interval_time", "startup_time"}
    # Paris is UTC+1 on 4 March: 10:00, 11:00, 12:00 local are 09:00, 10:00, 11:00 UTC; 1 then 2 reads a second.
    doc, _ = imp("awr", f, tz="Europe/Paris")
    (db,) = doc["databases"]
    assert (db["start"], db["end"]) == ("2024-03-04T09:00:00Z", "2024-03-04T11:00:00Z")
    assert db["peaks"]["read_iops"]["max"] == 2.0 and db["peaks"]["read_iops"]["p50"] == 1.5


def test_awr_a_time_with_an_offset_keeps_the_times_text_and_the_offset_wins(tmp_path):
    from dbtier.history.sources import awr
    from dbtier.history.sources import csvio
    # The last row says 13:00 at +02:00, which is 11:00 UTC (read as plain Paris time it would be 12:00 UTC).
    f = _awr_three_snapshots(tmp_path / "b.csv", "2024-03-04 13:00:00+02:00")
    con = connect()
    csvio.load(con, "raw", [awr.sniff_awr(str(f))], ["end_interval_time", "startup_time"], times=awr.TIME_COLS)
    assert csvio.typed_times(con, "raw") == set()
    doc, _ = imp("awr", f, tz="Europe/Paris")
    (db,) = doc["databases"]
    assert db["end"] == "2024-03-04T11:00:00Z" and db["peaks"]["read_iops"]["max"] == 2.0
