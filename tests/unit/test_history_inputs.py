"""Hostile inputs to the history readers, one test per class (issue 12): what is not a regular file,
glob characters in paths, compressed/binary/not-UTF-8 text, absurd numbers and rates, DMA archives
that are bombs, damaged or hold links. Each ends in one DbtierError naming the culprit, under a
timeout (opening a FIFO would block forever)."""

from __future__ import annotations

import gzip
import io
import os
import re
import socket
import tarfile
import zipfile
from pathlib import Path

import pytest

from conftest import DATA, with_timeout
from dbtier.core.errors import DbtierError
from dbtier.history import limits, read
from dbtier.history.store import connect
from dbtier.history.summary import summarise_import
from dbtier.history.tables import ReadOptions

H = DATA / "history"
AWR = H / "awr" / "awr_sysstat_PROD.csv"
MSS = H / "sqlserver" / "file_stats-sql01.csv"
SOURCES = ("awr", "sqlserver", "postgres", "diskstats", "iostat", "sar", "dma")


def run(source, *paths, **opts):
    def call():
        con = connect()
        try:
            return summarise_import(con, read(con, source, [str(p) for p in paths], ReadOptions(**opts)))
        finally:
            con.close()
    return with_timeout(call, 60, f"{source} reader on {paths}")


def refused(source, *paths, match: str, **opts) -> str:
    with pytest.raises(DbtierError) as err:
        run(source, *paths, **opts)
    assert match in str(err.value), str(err.value)
    return str(err.value)


# -- not regular files ---------------------------------------------------------------------------------

@pytest.mark.parametrize("source", SOURCES)
def test_fifo_is_refused_by_name_before_it_is_opened(source, tmp_path):
    fifo = tmp_path / "export.csv"
    os.mkfifo(fifo)
    refused(source, fifo, match=f"{fifo}: a FIFO (named pipe), not a regular file")


@pytest.mark.parametrize("source", SOURCES)
def test_dev_zero_is_refused_not_read_forever(source):
    refused(source, "/dev/zero", match="/dev/zero: a character device, not a regular file")


def test_socket_and_directory_are_refused(tmp_path):
    sock = tmp_path / "s.csv"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(sock))
    try:
        refused("sqlserver", sock, match=f"{sock}: a socket, not a regular file")
    finally:
        s.close()
    d = tmp_path / "dir.csv"
    d.mkdir()
    refused("awr", d, match=f"{d}: a directory, not a regular file")
    refused("iostat", d, match=f"{d}: a directory, not a regular file")


def _dma_collection(d: Path) -> None:
    """A minimal DMA collection: one instance, hours 3 and 4 (PERC100 of reads 7200 and 3600 per snapshot)."""
    d.mkdir(parents=True, exist_ok=True)
    (d / "opdb__awrsnapdetails__x.csv").write_text(
        "PKEY|DBID|INSTANCE_NUMBER|HOUR|MIN_SNAP_ID|MAX_SNAP_ID|MIN_BEGIN_INTERVAL_TIME|MAX_BEGIN_INTERVAL_TIME|CNT|"
        "SUM_SNAPS_DIFF_SECS|AVG_SNAPS_DIFF_SECS|MEDIAN_SNAPS_DIFF_SECS|MODE_SNAPS_DIFF_SECS|MIN_SNAPS_DIFF_SECS|"
        "MAX_SNAPS_DIFF_SECS\n"
        "DB1|77|1|3|1|9|2024-03-04 03:00:00|2024-03-05 03:00:00|2|7200|3600|3600|3600|3600|3600\n"
        "DB1|77|1|4|1|9|2024-03-04 04:00:00|2024-03-05 04:00:00|2|7200|3600|3600|3600|3600|3600\n")
    rows = ["PKEY|DBID|INSTANCE_NUMBER|HOUR|STAT_NAME|CNT|AVG_VALUE|MODE_VALUE|MEDIAN_VALUE|MIN_VALUE|MAX_VALUE|"
            "SUM_VALUE|PERC50|PERC75|PERC90|PERC95|PERC100"]
    for h, top in ((3, 7200), (4, 3600)):
        for stat in ("physical read total IO requests", "physical write total IO requests",
                     "physical read total bytes", "physical write total bytes"):
            rows.append(f"DB1|77|1|{h}|{stat}|2|0|0|0|0|0|{top}|{top // 2}|{top // 2}|{top}|{top}|{top}")
    (d / "opdb__dbahistsysstat__x.csv").write_text("\n".join(rows) + "\n")


def test_dma_directory_reads_and_links_to_devices_or_fifos_are_refused(tmp_path):
    good = tmp_path / "good"
    _dma_collection(good)
    doc = run("dma", good)
    assert doc["databases"][0]["peaks"]["read_iops"]["max"] == pytest.approx(7200 / 3600)   # 7200 per 3600 s snapshot
    # A link inside the directory to /dev/zero (never ends) or to a FIFO (blocks): refused by name.
    z = tmp_path / "zero"
    _dma_collection(z)
    (z / "opdb__dbsummary__x.csv").symlink_to("/dev/zero")
    refused("dma", z, match="opdb__dbsummary__x.csv: a character device, not a regular file")
    f = tmp_path / "fifo"
    _dma_collection(f)
    os.mkfifo(tmp_path / "pipe")
    (f / "opdb__dbahistsysstat__y.csv").symlink_to(tmp_path / "pipe")
    refused("dma", f, match="opdb__dbahistsysstat__y.csv: a FIFO (named pipe), not a regular file")
    # A link to a regular file is read; a link to a directory is not followed.
    ln = tmp_path / "linked"
    ln.mkdir()
    for m in good.iterdir():
        (ln / m.name).symlink_to(m)
    (ln / "loop").symlink_to(ln)
    assert run("dma", ln)["databases"][0]["peaks"] == doc["databases"][0]["peaks"]


# -- DMA archives: caps, damage ------------------------------------------------------------------------

def test_zip_bomb_is_stopped_by_the_ratio_cap(tmp_path):
    """50 MB of zeros in a member compresses to about 50 KB: beyond MAX_RATIO past RATIO_FLOOR_BYTES."""
    bomb = tmp_path / "dma.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("opdb__dbahistsysstat__x.csv", b"0" * 50_000_000)
    assert bomb.stat().st_size < 200_000
    msg = refused("dma", bomb, match="opdb__dbahistsysstat__x.csv: refused")
    assert f"more than {limits.MAX_RATIO} times" in msg and "decompression bomb" in msg


def test_tar_bomb_is_stopped_before_it_is_read(tmp_path):
    t = tmp_path / "dma.tgz"
    with tarfile.open(t, "w:gz") as tar:
        info = tarfile.TarInfo("opdb__dbahistsysstat__x.csv")
        info.size = 50_000_000
        tar.addfile(info, io.BytesIO(b"0" * info.size))
    refused("dma", t, match="more than 100 times its size")


def test_member_size_cap(tmp_path, monkeypatch):
    """With the cap lowered to 1 MiB, a 2 MB member of ordinary text is refused, naming it."""
    monkeypatch.setattr(limits, "MEMBER_MAX_BYTES", 2**20)
    z = tmp_path / "dma.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr("opdb__awrsnapdetails__x.csv", os.urandom(1_000_000).hex())
    refused("dma", z, match="over the 1,048,576-byte cap of one member")


def test_zip_with_a_bad_crc_names_the_member(tmp_path):
    src = tmp_path / "c"
    _dma_collection(src)
    z = tmp_path / "dma.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_STORED) as out:
        for m in sorted(src.iterdir()):
            out.write(m, m.name)
    data = bytearray(z.read_bytes())
    i = data.index(b"DB1|77|1|3")
    data[i] = ord("X")
    z.write_bytes(bytes(data))
    refused("dma", z, match="cannot open the DMA archive at member opdb__")


def test_truncated_tgz_names_the_member_and_position(tmp_path):
    src = tmp_path / "c"
    _dma_collection(src)
    (src / "opdb__dbahistsysstat__x.csv").write_bytes(os.urandom(300_000).hex().encode())
    t = tmp_path / "dma.tgz"
    with tarfile.open(t, "w:gz") as out:
        for m in sorted(src.iterdir()):
            out.add(m, m.name)
    t.write_bytes(t.read_bytes()[: t.stat().st_size // 2])
    msg = refused("dma", t, match="truncated or damaged")
    assert "at member opdb__dbahistsysstat__x.csv" in msg and "bytes into its contents" in msg


# -- paths with glob characters ----------------------------------------------------------------------

@pytest.mark.parametrize("name,decoy", [("awr[1].csv", "awr1.csv"), ("a*b.csv", "aXb.csv"), ("x?.csv", "xY.csv"),
                                        ("{a,b}.csv", "a.csv")])
def test_glob_characters_name_the_literal_file(name, decoy, tmp_path, monkeypatch):
    """DuckDB reads awr[1].csv as a glob (it would read awr1.csv): the literal file is read, and
    only it, by absolute or relative path; messages name it as given."""
    text = AWR.read_text()
    (tmp_path / name).write_text(text)
    (tmp_path / decoy).write_text(text.replace('"PROD"', '"DECOY"'))
    doc = run("awr", tmp_path / name)
    assert [d["name"] for d in doc["databases"]] == ["PROD"] and doc["databases"][0]["intervals"] == 46
    monkeypatch.chdir(tmp_path)
    lines = text.splitlines(keepends=True)
    f = lines[3].split(",")
    f[8] = "12x"
    (tmp_path / name).write_text("".join(lines[:3] + [",".join(f)] + lines[4:]))
    refused("awr", name, match=f"{name}: line 4: column physical read total IO requests: '12x' is not a number")


def test_glob_characters_in_sqlserver_and_postgres_paths(tmp_path):
    (tmp_path / "mss[0].csv").write_text(MSS.read_text())
    (tmp_path / "mss0.csv").write_text("garbage\n")
    assert {d["name"] for d in run("sqlserver", tmp_path / "mss[0].csv")["databases"]} == {"SQL01/sales", "SQL01/tempdb"}
    pg = tmp_path / "pg*"
    pg.mkdir()
    files = []
    for f in sorted((H / "real" / "postgres15").glob("*.csv")):
        (pg / f.name).write_bytes(f.read_bytes())
        files.append(pg / f.name)
    assert run("postgres", *files)["databases"][0]["name"] == "pgcap15"


# -- not plain UTF-8 text ------------------------------------------------------------------------------

def test_compressed_utf16_binary_and_latin1_inputs(tmp_path):
    gz = tmp_path / "awr.csv.gz"
    gz.write_bytes(gzip.compress(AWR.read_bytes()))
    refused("awr", gz, match=f"{gz}: gzip-compressed, not the plain text")
    u16 = tmp_path / "awr16.csv"
    u16.write_bytes(AWR.read_text().encode("utf-16"))
    refused("awr", u16, match="UTF-16 text")
    binf = tmp_path / "diskstats.txt"
    binf.write_bytes(b"# dbtier-diskstats time=1795306355\n\x00\x01\x02")
    refused("diskstats", binf, match="binary data (NUL bytes)")
    lat = tmp_path / "latin1.csv"
    lat.write_bytes(AWR.read_text().replace('"PROD",1005', '"PRÖD",1005').encode("latin-1"))
    refused("awr", lat, match=f"{lat}: line 7: column 4: byte 0xD6 is not UTF-8 text")
    io_l = tmp_path / "iostat.txt"
    io_l.write_bytes((H / "real" / "iostat-x-t.txt").read_bytes().replace(b"vda ", b"vd\xe9 ", 3))
    refused("iostat", io_l, match="is not UTF-8 text")


def test_a_newline_or_nul_in_a_name_is_refused(tmp_path):
    p = tmp_path / "awr.csv"
    p.write_text(AWR.read_text().replace('"PROD",1005', '"PR\nOD",1005'))
    refused("awr", p, match="database name 'PR\\nOD' holds a control character")


# -- numbers -------------------------------------------------------------------------------------------

def test_a_1e308_awr_sample_is_refused_not_a_peak_of_1e304(tmp_path):
    lines = AWR.read_text().splitlines(keepends=True)
    f = lines[3].split(",")
    f[8] = "1e308"
    p = tmp_path / "awr.csv"
    p.write_text("".join(lines[:3] + [",".join(f)] + lines[4:]))
    refused("awr", p, match=f"{p}: line 4: column physical read total IO requests: 1e308 is beyond 64 bits")


def test_a_counter_jump_within_64_bits_is_an_absurd_rate(tmp_path):
    """Valid int64 counters whose delta is 5e18 reads in an hour (1.4e15 IOPS): refused, naming the
    file, line, database and interval, not a peak."""
    lines = AWR.read_text().splitlines(keepends=True)
    f = lines[5].split(",")
    f[8] = str(5 * 10**18)
    p = tmp_path / "awr.csv"
    p.write_text("".join(lines[:5] + [",".join(f)] + lines[6:]))
    msg = refused("awr", p, match=f"{p}: line 6: PROD")
    assert "PROD, total (1), read ios from 10372257 to 5e+18 over 3607.14 s ending 2024-03-04 03:00:33" in msg
    assert "I/Os a second is absurd (over 1e+09)" in msg


def test_absurd_printed_rates_and_times(tmp_path):
    text = (H / "real" / "iostat-x-t.txt").read_text().splitlines(keepends=True)
    i = next(k for k, l in enumerate(text) if l.startswith("vda") and k > 20)
    f = text[i].split()
    f[1] = "5000000000"
    p = tmp_path / "iostat.txt"
    p.write_text("".join(text[:i] + [" ".join(f) + "\n"] + text[i + 1:]))
    refused("iostat", p, match=f"{p}: line {i + 1}: vda: read iops: 5e+09 I/Os a second is absurd")
    ds = (H / "real" / "diskstats-vm.txt").read_text()
    later = tmp_path / "ds.txt"
    later.write_text(ds.replace("time=1795306360.337155261", "time=1795306000", 1))
    refused("diskstats", later, match="line 12: snapshot time 2026-11-22 00:06:40 UTC is not after the previous")
    mss = tmp_path / "mss.csv"
    mss.write_text(MSS.read_text().replace("2024-03-04T", "9999-12-31T"))
    refused("sqlserver", mss, match=f"{mss}: line 3: column sample_time")
    awr = tmp_path / "awrtz.csv"
    awr.write_text(AWR.read_text().replace('"+0 01:00:00"', '"+99999999999999999999 01:00:00"'))
    refused("awr", awr, match="SNAP_TIMEZONE '+99999999999999999999 01:00:00' is not an offset")


def test_overlapping_iostat_files_with_different_values_name_the_files(tmp_path):
    """The same real iostat capture twice, the second with one of vda's figures changed: the overlapping
    reports disagree, and the message names the files (it named only the database and device before)."""
    real = (DATA / "history" / "real" / "iostat-x-t.txt").read_text()
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text(real)
    lines = real.splitlines(keepends=True)
    k = [i for i, ln in enumerate(lines) if ln.startswith("vda")][3]   # a report past the dropped first one
    lines[k] = re.sub(r"^(vda\s+)(\d)", r"\g<1>1\2", lines[k])   # r/s 21651.46 -> 121651.46
    b.write_text("".join(lines))
    msg = refused("iostat", a, b, match="duplicate reports with different values")
    assert str(a) in msg and str(b) in msg
