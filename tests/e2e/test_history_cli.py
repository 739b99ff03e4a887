"""`dbtier history` end to end: the JSON contract of import, consolidate and requirement, the Parquet
series, and every kind of bad input ending in one `dbtier: error:` line that names the file, the
line and the column, with a non-zero exit and no traceback."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from conftest import DATA, assert_clean_error, call_main, load_doc

H = DATA / "history"
MSS = H / "sqlserver" / "file_stats-sql01.csv"
AWR = H / "awr" / "awr_sysstat_PROD.csv"
SHARED = Path(__file__).resolve().parent.parent / "data" / "history" / "dma"   # real DMA collections (README there)

PEAK_KEYS = {"read_iops", "write_iops", "read_mbps", "write_mbps"}
STAT_KEYS = {"p50", "p95", "p99", "max"}
REQ_KEYS = {"read_iops", "write_iops", "read_mbps", "write_mbps", "capacity_gb", "percentile", "headroom",
            "read_tb_per_day", "read_days_percentile", "read_days_counted",
            "write_tb_per_day", "write_days_percentile", "write_days_counted", "instances", "clustered"}
RAC = H / "awr" / "awr_sysstat_PRODRAC.csv"


def dbtier_json(tmp_path, *args):
    r = call_main(*args, "--json", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)   # --json prints only the document


def test_import_json_contract_and_parquet(tmp_path):
    out = tmp_path / "mss"
    doc = dbtier_json(tmp_path, "history", "import", "--source", "sqlserver", str(MSS), "--out", str(out))
    assert doc["command"] == "history" and doc["params"]["action"] == "import" and doc["status"] == "ok"
    assert len(doc["databases"]) == 2
    for db in doc["databases"]:
        assert {"name", "intervals", "start", "end", "peaks"} <= set(db)
        assert set(db["peaks"]) == PEAK_KEYS
        for m in PEAK_KEYS:
            assert set(db["peaks"][m]) == STAT_KEYS
            assert all(isinstance(v, float) for v in db["peaks"][m].values())
    assert load_doc(out) == {k: v for k, v in doc.items()}
    con = duckdb.connect()
    n = con.execute(f"SELECT count(*), count(DISTINCT database) FROM read_parquet('{out / 'totals.parquet'}')").fetchone()
    assert n == (6, 2)
    cols = {c[0] for c in con.execute(f"DESCRIBE SELECT * FROM read_parquet('{out / 'intervals.parquet'}')").fetchall()}
    assert {"database", "file_type", "start", "end", "read_iops", "write_iops", "read_mbps", "write_mbps",
            "read_lat_ms", "write_lat_ms", "read_io_kb"} <= cols
    assert (out / "profiles.parquet").exists() and (out / "raw" / MSS.name).exists()


@pytest.mark.slow
def test_consolidate_and_requirement_contract(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    dbtier_json(tmp_path, "history", "import", "--source", "sqlserver", str(MSS), "--out", str(a))
    dbtier_json(tmp_path, "history", "import", "--source", "awr", str(AWR), "--out", str(b), "--database", "PROD")
    c = dbtier_json(tmp_path, "history", "consolidate", str(a), str(b), "--out", str(tmp_path / "c"), "--step", "5m")
    for k in ("sum_of_peaks_grid", "peak_of_sum"):
        assert set(c[k]) == {"iops", "mbps"}
    # sum_of_peaks: each database's own import peak (max by default), added up; gain is on the grid
    dbs = load_doc(a)["databases"] + load_doc(b)["databases"]
    assert c["sum_of_peaks"] == {"percentile": "max", "iops": pytest.approx(sum(d["total"]["iops"]["max"] for d in dbs)),
                                 "mbps": pytest.approx(sum(d["total"]["mbps"]["max"] for d in dbs))}
    assert c["sum_of_peaks"]["iops"] >= c["sum_of_peaks_grid"]["iops"] - 1e-6   # a 5 min grid cell averages
    assert c["gain"] == pytest.approx(c["sum_of_peaks_grid"]["iops"] / c["peak_of_sum"]["iops"])
    assert c["gain_uses"].startswith("sum_of_peaks_grid / peak_of_sum")
    assert c["gain"] >= 1.0 and c["peak_time"].endswith("Z")
    assert isinstance(c["drivers"], list) and {"database", "iops", "share"} <= set(c["drivers"][0])
    assert set(c["peaks"]) == PEAK_KEYS
    assert (tmp_path / "c" / "sum.parquet").exists() and (tmp_path / "c" / "grid.parquet").exists()
    # grid.parquet holds the drivers' cells; --full-grid every database's.
    grid_dbs = lambda run: {r[0] for r in duckdb.sql(  # noqa: E731
        f"SELECT DISTINCT database FROM read_parquet('{run / 'grid.parquet'}')").fetchall()}
    one = dbtier_json(tmp_path, "history", "consolidate", str(a), str(b), "--out", str(tmp_path / "c1"), "--step", "5m",
                      "--top", "1")
    assert grid_dbs(tmp_path / "c1") == {one["drivers"][0]["database"]} == set(one["grid_databases"])
    full = dbtier_json(tmp_path, "history", "consolidate", str(a), str(b), "--out", str(tmp_path / "c2"), "--step", "5m",
                       "--top", "1", "--full-grid")
    assert full["grid_databases"] == "all"
    assert grid_dbs(tmp_path / "c2") == {d["name"] for d in full["databases"]} and len(full["databases"]) > 1
    r = dbtier_json(tmp_path, "history", "requirement", str(tmp_path / "c"), "--percentile", "99", "--headroom", "0.3",
                    "--out", str(tmp_path / "r"))
    assert set(r["requirement"]) == REQ_KEYS
    for k in REQ_KEYS:
        assert r[k] == r["requirement"][k]
    assert r["percentile"] == 99 and r["headroom"] == 0.3
    assert r["read_iops"] == pytest.approx(c["peaks"]["read_iops"]["p99"])
    stored = load_doc(tmp_path / "r")
    assert stored["requirement"] == r["requirement"]


def test_requirement_of_one_database_with_capacity_and_max(tmp_path):
    dbtier_json(tmp_path, "history", "import", "--source", "awr", str(AWR), "--out", str(tmp_path / "a"))
    r = dbtier_json(tmp_path, "history", "requirement", str(tmp_path / "a"), "--percentile", "max",
                    "--capacity-gb", "750", "--out", str(tmp_path / "r"))
    imp = load_doc(tmp_path / "a")
    assert r["requirement"]["read_iops"] == imp["databases"][0]["peaks"]["read_iops"]["max"]
    assert r["requirement"]["percentile"] == 100 and r["requirement"]["capacity_gb"] == 750.0


def test_requirement_bytes_a_day_and_instances_from_a_saved_sample(tmp_path):
    """PROD: 48 hourly AWR snapshots from 2024-03-04 00:00 UTC (a restart on 03-05): two UTC days, both
    covered for more than half; one instance. The keys are in `requirement` and at the top level."""
    imp = dbtier_json(tmp_path, "history", "import", "--source", "awr", str(AWR), "--out", str(tmp_path / "a"))
    assert imp["databases"][0]["instances"] == 1 and imp["databases"][0]["clustered"] is False
    r = dbtier_json(tmp_path, "history", "requirement", str(tmp_path / "a"), "--out", str(tmp_path / "r"))
    req = r["requirement"]
    assert set(req) == REQ_KEYS and all(r[k] == req[k] for k in REQ_KEYS)
    assert req["write_days_percentile"] == 95 and req["write_days_counted"] == 2 and req["read_days_counted"] == 2
    assert req["write_tb_per_day"] > 0 and req["read_tb_per_day"] > req["write_tb_per_day"]
    assert req["instances"] == 1 and req["clustered"] is False
    assert r["from"]["days_tz"] == "UTC" and r["from"]["write_days_partial_dropped"] == 0
    assert r["with_headroom"]["write_tb_per_day"] == pytest.approx(req["write_tb_per_day"] * 1.3)
    assert "write_tb_per_day" not in r["absent"] and "instances" not in r["absent"]
    # the bytes of a day from the series itself: day 2024-03-04 (UTC) is covered whole, by intervals whose
    # bytes are write MB/s x seconds (clipped to the day), so the max of two days is at least that day's
    con = duckdb.connect()
    day1 = con.execute(f"""SELECT sum(write_mbps * 1e6 * (epoch(least("end", TIMESTAMP '2024-03-05'))
                                                            - epoch(greatest(start, TIMESTAMP '2024-03-04'))))
                           FROM read_parquet('{tmp_path / 'a' / 'totals.parquet'}')
                           WHERE start < TIMESTAMP '2024-03-05' AND "end" > TIMESTAMP '2024-03-04'""").fetchone()[0]
    mx = dbtier_json(tmp_path, "history", "requirement", str(tmp_path / "a"), "--percentile", "max",
                     "--out", str(tmp_path / "rm"))
    assert mx["write_days_percentile"] == 100 and mx["write_tb_per_day"] >= day1 / 1e12 - 1e-9
    shown = call_main("history", "requirement", str(tmp_path / "a"), "--out", str(tmp_path / "rt"), cwd=tmp_path)
    assert shown.returncode == 0 and "write a day (p95 of 2 days)" in shown.stdout
    assert "instances: 1" in shown.stdout


def test_rac_database_is_clustered_through_consolidation(tmp_path):
    """PRODRAC (two instances, hand-made: README in tests/data/history): each instance series and the
    consolidation of both say 2 instances, clustered; the consolidation has bytes a day on its grid."""
    imp = dbtier_json(tmp_path, "history", "import", "--source", "awr", str(RAC), "--out", str(tmp_path / "a"))
    assert {(d["name"], d["instances"], d["clustered"]) for d in imp["databases"]} == \
        {("PRODRAC/1", 2, True), ("PRODRAC/2", 2, True)}
    one = dbtier_json(tmp_path, "history", "requirement", str(tmp_path / "a"), "--database", "PRODRAC/2",
                      "--out", str(tmp_path / "r1"))
    assert one["instances"] == 2 and one["clustered"] is True
    c = dbtier_json(tmp_path, "history", "consolidate", str(tmp_path / "a"), "--out", str(tmp_path / "c"))
    assert c["instances"] == 2 and c["clustered"] is True and {d["instances"] for d in c["databases"]} == {2}
    r = dbtier_json(tmp_path, "history", "requirement", str(tmp_path / "c"), "--out", str(tmp_path / "r"))
    assert set(r["requirement"]) == REQ_KEYS
    assert r["requirement"]["instances"] == 2 and r["requirement"]["clustered"] is True
    assert r["write_days_counted"] == 2 and r["write_tb_per_day"] > 0 and r["from"]["days_tz"] == "UTC"
    assert "sum on the common grid" in r["from"]["days_method"]


def test_requirement_of_a_short_history_has_no_bytes_a_day(tmp_path):
    """FIN: six 30-minute snapshots (2.5 h): no whole day, so null with the reason in `absent`."""
    dbtier_json(tmp_path, "history", "import", "--source", "awr", str(H / "awr" / "dba_hist_sysstat_FIN.csv"),
                str(H / "awr" / "dba_hist_snapshot_FIN.csv"), "--out", str(tmp_path / "a"))
    r = dbtier_json(tmp_path, "history", "requirement", str(tmp_path / "a"), "--database", "DBID 1177042553/1",
                    "--out", str(tmp_path / "r"))
    assert r["write_tb_per_day"] is None and r["read_tb_per_day"] is None
    assert "less than a whole day" in r["absent"]["write_tb_per_day"]
    assert r["instances"] == 2 and r["clustered"] is True


def test_terminal_output_is_a_table(tmp_path):
    r = call_main("history", "import", "--source", "sqlserver", str(MSS), "--out", str(tmp_path / "x"), cwd=tmp_path)
    assert r.returncode == 0 and "SQL01/sales" in r.stdout and "read IOPS" in r.stdout


@pytest.mark.slow
def test_dma_import_then_requirement_p95_but_not_p99(tmp_path):
    d = dbtier_json(tmp_path, "history", "import", "--source", "dma", str(SHARED / "dma-oracle19c-single.tgz"),
                    "--out", str(tmp_path / "d"))
    assert d["kind"] == "hourly" and d["limitations"]
    assert (tmp_path / "d" / "hourly.parquet").exists()
    r = dbtier_json(tmp_path, "history", "requirement", str(tmp_path / "d"), "--percentile", "95",
                    "--out", str(tmp_path / "r"))
    assert r["requirement"]["capacity_gb"] == 8.0
    # the mean day from the hour-of-day averages: no percentile, the days the snapshots span
    assert r["write_tb_per_day"] > 0 and r["write_days_percentile"] is None and r["write_days_counted"] == 7
    assert r["instances"] == 1 and r["clustered"] is False
    bad = call_main("history", "requirement", str(tmp_path / "d"), "--percentile", "99", cwd=tmp_path)
    assert_clean_error(bad, "no p99")
    cons = dbtier_json(tmp_path, "history", "consolidate", str(tmp_path / "d"), "--out", str(tmp_path / "c"))
    own = d["databases"][0]["peaks"]      # one database summed per hour of day is itself
    assert cons["kind"] == "hourly" and cons["peaks"]["read_iops"]["p95"] == pytest.approx(own["read_iops"]["p95"])
    assert "upper bound" in cons["bound"] and "estimate" in cons["bound"]


# -- bad input -------------------------------------------------------------------------------------------

def _lines(p: Path) -> list[str]:
    return p.read_text().splitlines(keepends=True)


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def imp(tmp_path, source, *files, extra=()):
    return call_main("history", "import", "--source", source, *map(str, files), *extra,
                      "--out", str(tmp_path / "out"), cwd=tmp_path)


def test_wrong_delimiter_in_the_data_names_file_and_line(tmp_path):
    lines = _lines(AWR)
    lines[4] = lines[4].replace(",", ";")
    p = write(tmp_path, "awr.csv", "".join(lines))
    assert_clean_error(imp(tmp_path, "awr", p), f"{p}: line 5", "fields where the header has 13",
                       "semicolon-separated")
    assert not (tmp_path / "out").exists()   # bad input leaves no run directory


def test_whole_file_with_another_delimiter_is_read(tmp_path):
    p = write(tmp_path, "awr.csv", AWR.read_text().replace(",", ";"))
    r = imp(tmp_path, "awr", p)
    assert r.returncode == 0, r.stderr


def test_wrong_header_names_the_missing_columns(tmp_path):
    text = AWR.read_text().replace('"physical write total bytes"', '"phys write bytes"')
    p = write(tmp_path, "awr.csv", text)
    assert_clean_error(imp(tmp_path, "awr", p), f"{p}: line 2", "missing columns: physical write total bytes")


def test_file_from_another_source(tmp_path):
    assert_clean_error(imp(tmp_path, "awr", MSS), str(MSS), "looks like a sqlserver", "--source sqlserver")
    assert_clean_error(imp(tmp_path, "sqlserver", AWR), str(AWR), "looks like a awr", "--source awr")
    assert_clean_error(imp(tmp_path, "diskstats", MSS), "looks like a sqlserver")
    assert_clean_error(imp(tmp_path, "iostat", H / "real" / "sar-d.txt"), "looks like a sar")
    assert_clean_error(imp(tmp_path, "dma", MSS), "not a DMA collection")
    assert_clean_error(imp(tmp_path, "postgres", AWR), "looks like a awr")


def test_missing_columns_sqlserver(tmp_path):
    text = "".join(l.replace(",num_of_bytes_read,", ",bytes_read,") for l in _lines(MSS))
    p = write(tmp_path, "mss.csv", text)
    assert_clean_error(imp(tmp_path, "sqlserver", p), "missing columns: num_of_bytes_read")


def test_non_numeric_value_names_file_line_and_column(tmp_path):
    lines = _lines(MSS)
    f = lines[5].split(",")
    f[10] = "12x4"
    lines[5] = ",".join(f)
    p = write(tmp_path, "mss.csv", "".join(lines))
    assert_clean_error(imp(tmp_path, "sqlserver", p), f"{p}: line 6", "column io_stall_read_ms", "'12x4'",
                       "not a number")


def test_negative_counter_is_refused(tmp_path):
    lines = _lines(AWR)
    f = lines[3].split(",")
    f[8] = "-5"
    lines[3] = ",".join(f)
    p = write(tmp_path, "awr.csv", "".join(lines))
    assert_clean_error(imp(tmp_path, "awr", p), f"{p}: line 4", "physical read total IO requests", "negative")


def test_bad_time_names_file_and_line(tmp_path):
    lines = _lines(AWR)
    lines[6] = lines[6].replace("2024-03-04 05:00", "2024-13-04 05:00")
    p = write(tmp_path, "awr.csv", "".join(lines))
    assert_clean_error(imp(tmp_path, "awr", p), f"{p}: line 7", "END_INTERVAL_TIME", "not a time")


def test_identical_duplicate_snapshots_are_kept_once(tmp_path):
    lines = _lines(AWR)
    p = write(tmp_path, "awr.csv", "".join(lines[:10] + lines[8:]))
    r = call_main("history", "import", "--source", "awr", str(p), "--json", "--out", str(tmp_path / "o"),
                   cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["databases"][0]["duplicates_dropped"] == 2


def test_conflicting_duplicate_snapshots_name_the_file(tmp_path):
    lines = _lines(AWR)
    dup = lines[9].split(",")
    dup[8] = str(int(dup[8]) + 1)
    p = write(tmp_path, "awr.csv", "".join(lines[:10] + [",".join(dup)] + lines[10:]))
    assert_clean_error(imp(tmp_path, "awr", p), f"{p}: duplicate snapshots with different values", "PROD")


def test_empty_and_header_only_files(tmp_path):
    e = write(tmp_path, "empty.csv", "")
    assert_clean_error(imp(tmp_path, "sqlserver", e), f"{e} is empty")
    h = write(tmp_path, "header.csv", _lines(MSS)[0])
    assert_clean_error(imp(tmp_path, "sqlserver", h), f"{h}: no samples after the header")
    one = write(tmp_path, "one.csv", "".join(_lines(AWR)[:3]))
    assert_clean_error(imp(tmp_path, "awr", one), "fewer than two snapshots")
    blank = write(tmp_path, "blank.txt", "\n\n  \n")
    assert_clean_error(imp(tmp_path, "diskstats", blank), "no snapshot times")


def test_counters_that_wrap_are_documented_handling(tmp_path):
    """A 32-bit diskstats time field that wraps is a delta, not an error (see series.py)."""
    lines = _lines(H / "real" / "diskstats-vm.txt")[:22]
    k = 0
    out = []
    for l in lines:
        if l.startswith("#"):
            k += 1
        elif " vda " in l:
            f = l.split()
            f[6] = str(2**32 - 10) if k == 1 else "5"
            l = " ".join(f) + "\n"
        out.append(l)
    p = write(tmp_path, "ds.txt", "".join(out))
    doc = dbtier_json(tmp_path, "history", "import", "--source", "diskstats", str(p), "--out", str(tmp_path / "o"))
    assert doc["databases"][0]["wraps"] == 1 and doc["databases"][0]["restarts"] == 0


def test_restart_is_a_new_segment_not_a_negative_rate(tmp_path):
    doc = dbtier_json(tmp_path, "history", "import", "--source", "sqlserver", str(MSS), "--out", str(tmp_path / "o"))
    for db in doc["databases"]:
        assert db["restarts"] == 1 and db["segments"] == 2
        assert all(v >= 0 for m in db["peaks"].values() for v in m.values())


def test_diskstats_bad_lines(tmp_path):
    lines = _lines(H / "real" / "diskstats-vm.txt")[:22]
    lines[9] = lines[9].replace(" vda 6", " vda x")
    p = write(tmp_path, "ds.txt", "".join(lines))
    assert_clean_error(imp(tmp_path, "diskstats", p), f"{p}: line 10", "field 4 (reads completed) of vda")
    short = write(tmp_path, "ds2.txt", "".join(_lines(H / "real" / "diskstats-vm.txt")[:2]) + "8 0 sda 1 2 3\n")
    assert_clean_error(imp(tmp_path, "diskstats", short), "line 3", "6 fields")
    no_marker = write(tmp_path, "ds3.txt", "".join(_lines(H / "real" / "diskstats-vm.txt")[1:11]))
    assert_clean_error(imp(tmp_path, "diskstats", no_marker), "before any snapshot time")
    assert_clean_error(imp(tmp_path, "diskstats", H / "real" / "diskstats-vm.txt", extra=["--devices", "sdz"]),
                       "--devices: sdz not in the data")


def test_iostat_without_times_and_sar_bad_value(tmp_path):
    text = "".join(l for l in _lines(H / "real" / "iostat-x-t.txt") if not l.startswith("11/22/26 00:"))
    p = write(tmp_path, "iostat.txt", text)
    assert_clean_error(imp(tmp_path, "iostat", p), "no report times", "-t")
    lines = _lines(H / "real" / "sar-d.txt")
    lines[6] = lines[6].replace("525.40", "5x5.40")
    s = write(tmp_path, "sar.txt", "".join(lines))
    assert_clean_error(imp(tmp_path, "sar", s), f"{s}: line 7", "column tps", "not a number")


def test_dma_bad_archive_and_missing_extract(tmp_path):
    import tarfile
    bad = write(tmp_path, "dma.tgz", "not a tar")
    assert_clean_error(imp(tmp_path, "dma", bad), "cannot open the DMA archive")
    t = tmp_path / "partial.tgz"
    with tarfile.open(SHARED / "dma-oracle19c-single.tgz") as src, tarfile.open(t, "w:gz") as dst:
        for m in src.getmembers():
            if "awrsnapdetails" not in m.name:
                dst.addfile(m, src.extractfile(m))
    assert_clean_error(imp(tmp_path, "dma", t), "no opdb__awrsnapdetails__*.csv")


@pytest.mark.slow
def test_bad_options_and_runs(tmp_path):
    assert_clean_error(imp(tmp_path, "awr", AWR, extra=["--tz", "Mars/Olympus"]), "--tz: 'Mars/Olympus'")
    assert_clean_error(call_main("history", "consolidate", str(tmp_path / "nope"), cwd=tmp_path), "no result.json")
    dbtier_json(tmp_path, "history", "import", "--source", "sqlserver", str(MSS), "--out", str(tmp_path / "m"))
    # two databases in one import: the requirement is their sum, as a consolidation's requirement is
    both = dbtier_json(tmp_path, "history", "requirement", str(tmp_path / "m"), "--out", str(tmp_path / "mr"))
    dbtier_json(tmp_path, "history", "consolidate", str(tmp_path / "m"), "--out", str(tmp_path / "mc"))
    via = dbtier_json(tmp_path, "history", "requirement", str(tmp_path / "mc"), "--out", str(tmp_path / "mcr"))
    for k in ("read_iops", "write_iops", "read_mbps", "write_mbps"):
        assert both[k] == pytest.approx(via[k]), k
    assert both["from"]["of"] == "sum of 2 databases"
    assert_clean_error(call_main("history", "consolidate", str(tmp_path / "m"), str(tmp_path / "m"), cwd=tmp_path),
                       "is in two runs")
    assert_clean_error(call_main("history", "consolidate", str(tmp_path / "m"), "--step", "soon", cwd=tmp_path),
                       "--step soon")
    dbtier_json(tmp_path, "history", "import", "--source", "diskstats", str(H / "real" / "diskstats-vm.txt"),
                "--out", str(tmp_path / "d"))
    assert_clean_error(call_main("history", "consolidate", str(tmp_path / "m"), str(tmp_path / "d"), cwd=tmp_path),
                       "vm: the history covers no 300 s grid cell")
    assert_clean_error(call_main("history", "consolidate", str(tmp_path / "m"), str(tmp_path / "d"), "--step", "60",
                                  cwd=tmp_path), "do not overlap")
    dbtier_json(tmp_path, "history", "import", "--source", "awr", str(AWR), "--out", str(tmp_path / "a"))
    assert_clean_error(call_main("history", "requirement", str(tmp_path / "a"), "--headroom", "-1", cwd=tmp_path),
                       "--headroom")


def test_help_mentions_every_source():
    r = call_main("history", "import", "--help", cwd=Path("."))
    assert r.returncode == 0
    for s in ("awr", "dma", "sqlserver", "postgres", "diskstats", "iostat", "sar"):
        assert s in r.stdout


@pytest.mark.slow       # a second or more: `make test` runs it, test-fast does not
def test_report_section_draws_every_kind_of_run(tmp_path):
    from dbtier.report.sections.history import section_html
    dbtier_json(tmp_path, "history", "import", "--source", "sqlserver", str(MSS), "--out", str(tmp_path / "m"))
    dbtier_json(tmp_path, "history", "import", "--source", "awr", str(AWR), "--out", str(tmp_path / "a"))
    dbtier_json(tmp_path, "history", "consolidate", str(tmp_path / "m"), str(tmp_path / "a"), "--step", "5m",
                "--out", str(tmp_path / "c"))
    dbtier_json(tmp_path, "history", "requirement", str(tmp_path / "c"), "--out", str(tmp_path / "r"))
    dbtier_json(tmp_path, "history", "import", "--source", "dma", str(SHARED / "dma-oracle11g-single.tgz"),
                "--out", str(tmp_path / "d"))
    for run, needles in (("m", ("SQL01/sales", "peak", "heatmap", "busiest intervals")),
                         ("a", ("PROD", "IOPS per interval", "heatmap")),
                         ("c", ("sum of the peaks", "what drives the combined peak", "drivers of the combined peak")),
                         ("r", ("with headroom",)),
                         ("d", ("by hour of day", "cannot give true peaks of sums", "heatmap"))):
        html = section_html(load_doc(tmp_path / run), str(tmp_path / run))
        assert html.startswith('<div class="history">') and "could not be drawn" not in html, run
        for n in needles:
            assert n in html, (run, n)
    (tmp_path / "a" / "totals.parquet").unlink()
    html = section_html(load_doc(tmp_path / "a"), str(tmp_path / "a"))
    assert "not in the run directory" in html


@pytest.mark.slow
def test_fifo_and_glob_characters_through_the_cli(tmp_path):
    """A FIFO given as an export is refused by name (opening it would block); files and run
    directories with glob characters are read literally, by import and by consolidate."""
    import os
    fifo = tmp_path / "awr.csv"
    os.mkfifo(fifo)
    assert_clean_error(call_main("history", "import", "--source", "awr", str(fifo), cwd=tmp_path, timeout=60),
                       f"{fifo}: a FIFO (named pipe), not a regular file")
    lit = write(tmp_path, "mss[1].csv", MSS.read_text())
    write(tmp_path, "mss1.csv", "not this file\n")
    a = dbtier_json(tmp_path, "history", "import", "--source", "sqlserver", str(lit), "--out", str(tmp_path / "r[1]"))
    assert {d["name"] for d in a["databases"]} == {"SQL01/sales", "SQL01/tempdb"}
    dbtier_json(tmp_path, "history", "import", "--source", "awr", str(AWR), "--out", str(tmp_path / "r1"))
    dbtier_json(tmp_path, "history", "import", "--source", "awr", str(AWR), "--database", "P2",
                "--out", str(tmp_path / "r*"))
    c = dbtier_json(tmp_path, "history", "consolidate", str(tmp_path / "r[1]"), str(tmp_path / "r*"), "--step", "5m",
                    "--out", str(tmp_path / "c"))
    assert {d["name"] for d in c["databases"]} == {"SQL01/sales", "SQL01/tempdb", "P2"}
