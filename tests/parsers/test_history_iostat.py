"""sysstat's iostat read by `history import`: `-o JSON` with and without `-t`, text without `-t`, on the real
captures in tests/data/history/iostat/ (README there). Each expected figure is a number read off the file
by eye (the line is named), turned into dbtier's units here: kB/s * 1024 / 1e6 = MB/s."""

from __future__ import annotations

import pytest

from conftest import DATA
from dbtier.core.errors import DbtierError
from dbtier.history import read
from dbtier.history.sources import detect
from dbtier.history.store import connect
from dbtier.history.summary import summarise_import
from dbtier.history.tables import ReadOptions

IO = DATA / "history" / "iostat"
KB = 1024 / 1e6         # one kB/s (sysstat's 1024 bytes) in MB/s (10^6 bytes)


def imp(*files, **opts):
    con = connect()
    res = read(con, "iostat", [str(f) for f in files], ReadOptions(**opts))
    return summarise_import(con, res), con


def vda(con, start: str):
    return con.execute("SELECT read_iops, write_iops, read_mbps, write_mbps, read_lat_ms, write_lat_ms, "
                       "strftime(\"end\", '%H:%M:%S') FROM intervals WHERE file_type = 'vda' "
                       "AND strftime(start, '%Y-%m-%d %H:%M:%S') = ?", [start]).fetchone()


def totals(con) -> list[float]:
    return [r[0] for r in con.execute("SELECT read_iops FROM totals ORDER BY start").fetchall()]


def test_every_capture_is_sniffed_as_iostat():
    for f in sorted(IO.glob("*.json")) + [IO / "iostat-x.txt"]:
        assert detect.guess(f) == "iostat", f


def test_json_with_t_each_report_since_the_previous_one():
    doc, con = imp(IO / "iostat-x-t-json.json")
    (db,) = doc["databases"]
    # 5 reports at 15:23:06 ... 15:23:10; the first (vda r/s 1184.23 since boot, line 19) is left out.
    assert db["name"] == "vm" and db["intervals"] == 4
    assert (db["start"], db["end"]) == ("2026-11-28T15:23:06Z", "2026-11-28T15:23:10Z")
    # line 41, the report at 15:23:08: r/s 323.00 w/s 179.00 rkB/s 2544.00 wkB/s 1288.00 r_await 0.10 w_await 0.21
    assert vda(con, "2026-11-28 15:23:07") == pytest.approx((323, 179, 2544 * KB, 1288 * KB, 0.10, 0.21, "15:23:08"))
    # vda alone is counted (loop0's 50 r/s are not added): r/s of the four intervals 317, 323, 318, 300
    assert totals(con) == pytest.approx([317, 323, 318, 300])
    assert db["peaks"]["write_iops"]["max"] == pytest.approx(220)        # line 63
    assert any("left out" in n and "since boot" in n for n in doc["notes"])
    assert any("counted devices vda;" in n and "loop0" in n for n in doc["notes"])
    assert doc["provenance"]["semantics"] == "rate" and doc["provenance"]["native_step_s"] == 1


@pytest.mark.slow
def test_json_without_t_reports_interval_apart_from_start():
    doc, con = imp(IO / "iostat-x-json.json", interval_s=1, start="2026-11-28T15:23:00")
    (db,) = doc["databases"]
    assert db["intervals"] == 4 and (db["start"], db["end"]) == ("2026-11-28T15:23:00Z", "2026-11-28T15:23:04Z")
    # report 2 (line 28) covers [start, start + 1 s]: r/s 301.00 w/s 120.00 rkB/s 2404.00 wkB/s 960.00
    # r_await 0.10 w_await 0.07; report 5 (line 58) r/s 304.00
    assert vda(con, "2026-11-28 15:23:00") == pytest.approx((301, 120, 2404 * KB, 960 * KB, 0.10, 0.07, "15:23:01"))
    assert totals(con) == pytest.approx([301, 302, 303, 304])
    assert doc["provenance"]["native_step_s"] == 1 and not doc.get("limitations")
    # the same start in another zone, and as a time of day on the header's date (11/28/26)
    for start, tz in (("2026-11-28T16:23:00", "Europe/Paris"), ("16:23", "Europe/Paris"),
                      ("2026-11-28T10:23:00-05:00", "UTC")):
        d2, _ = imp(IO / "iostat-x-json.json", interval_s=1, start=start, tz=tz)
        assert d2["databases"][0]["start"] == "2026-11-28T15:23:00Z", start


def test_json_without_t_or_start_from_the_header_date_said_as_a_limitation():
    doc, con = imp(IO / "iostat-x-json.json", interval_s=60)
    (db,) = doc["databases"]
    # 00:00 of the header's date, the reports 60 s apart; iostat's rates are taken as they are
    assert (db["start"], db["end"]) == ("2026-11-28T00:00:00Z", "2026-11-28T00:04:00Z")
    assert totals(con) == pytest.approx([301, 302, 303, 304])
    (lim,) = [x for x in doc["limitations"] if "without -t" in x]
    assert "00:00 of the header's date 11/28/26" in lim and "give --start" in lim


def test_json_with_y_the_first_report_is_still_left_out():
    """-y is not in the file: its first report (r/s 293.00, line 14) is left out like a since-boot one."""
    doc, con = imp(IO / "iostat-x-y-json.json", interval_s=1, start="2026-11-28T15:23:12")
    assert doc["databases"][0]["intervals"] == 4
    # reports 2..5, vda r/s 307, 329, 311, 371
    assert totals(con) == pytest.approx([307, 329, 311, 371])


def test_text_without_t_with_interval():
    doc, con = imp(IO / "iostat-x.txt", interval_s=1, start="09:00", tz="America/New_York")
    (db,) = doc["databases"]
    # 09:00 EST on the header's date is 14:00 UTC; line 22 (report 2): r/s 611.00 rkB/s 3684.00 r_await 0.08
    # w/s 322.00 wkB/s 1780.00 w_await 0.07
    assert db["name"] == "vm" and db["intervals"] == 4 and db["start"] == "2026-11-28T14:00:00Z"
    assert vda(con, "2026-11-28 14:00:00") == pytest.approx((611, 322, 3684 * KB, 1780 * KB, 0.08, 0.07, "14:00:01"))
    assert totals(con) == pytest.approx([611, 603, 602, 603])       # lines 22, 33, 44, 55


def test_iso_times_carry_their_offset():
    doc, con = imp(IO / "iostat-x-t-y-iso-json.json", tz="Europe/Paris")
    (db,) = doc["databases"]
    # 2026-11-28T15:23:24+0000 ... 15:23:28+0000: the offset wins over --tz
    assert (db["start"], db["end"]) == ("2026-11-28T15:23:24Z", "2026-11-28T15:23:28Z")
    # the 15:23:26 report: r/s 584.16 rkB/s 3528.71 w/s 284.16 wkB/s 1805.94
    assert vda(con, "2026-11-28 15:23:25")[:4] == pytest.approx((584.16, 284.16, 3528.71 * KB, 1805.94 * KB))


def test_megabytes_with_m():
    doc, con = imp(IO / "iostat-x-m-t-json.json")
    # the 15:30:25 report: r/s 3.00 rMB/s 0.01 wMB/s 3.34 (MB of 2^20 bytes)
    got = vda(con, "2026-11-28 15:30:24")
    assert got[0] == 3 and got[2:4] == pytest.approx((0.01 * 2**20 / 1e6, 3.34 * 2**20 / 1e6))
    assert doc["provenance"]["unit"] == "MB/s of 2^20 bytes"


def test_a_run_stopped_by_sigterm_keeps_its_complete_reports(tmp_path):
    doc, con = imp(IO / "iostat-x-t-json-sigterm.json")
    # five reports 15:29:48 ... 15:29:52, the JSON never closed; vda r/s 202, 204, 200, 198 after the first
    assert doc["databases"][0]["intervals"] == 4
    assert totals(con) == pytest.approx([202, 204, 200, 198])
    assert any("not closed after report 5" in n for n in doc["notes"])
    # the same file cut inside report 4's vda line (line 52): reports 1-3 complete, two intervals
    lines = (IO / "iostat-x-t-json-sigterm.json").read_text().splitlines(keepends=True)
    cut = tmp_path / "cut.json"
    cut.write_text("".join(lines[:51]) + lines[51][:60])
    doc, con = imp(cut)
    assert totals(con) == pytest.approx([202, 204])
    assert any("not closed after report 3" in n for n in doc["notes"])


def test_partitions_are_not_counted_with_their_disk():
    doc, con = imp(IO / "iostat-x-p-all-json.json", interval_s=1, start="2026-11-28T15:23:18")
    roles = dict(con.execute("SELECT DISTINCT file_type, role FROM intervals").fetchall())
    assert roles["vda"] == "part" and roles["loop0p1"] == roles["loop0"] == roles["zram0"] == "detail"
    assert totals(con) == pytest.approx([600, 605.94, 605, 602])     # lines 39, 55, 71, 87: vda alone


def _renamed(tmp_path, **names):
    text = (IO / "iostat-x-p-all-json.json").read_text()
    for old, new in names.items():
        text = text.replace(f'"disk_device": "{old}"', f'"disk_device": "{new}"')
    p = tmp_path / "renamed.json"
    p.write_text(text)
    return p


def test_a_disk_and_its_partition_count_once(tmp_path):
    """The -p ALL capture with loop0 named sdb and its partition loop0p1 sdb1 (a loop device is never
    counted, a disk is): the disk counts, its partition does not; report 2 (lines 30, 31, 39):
    vda 600.00 + sdb 50.00 (sdb1's 50.00 are the same reads)."""
    p = _renamed(tmp_path, loop0="sdb", loop0p1="sdb1")
    _, con = imp(p, interval_s=1, start="2026-11-28T15:23:18")
    assert totals(con) == pytest.approx([600 + 50, 605.94 + 49.5, 605 + 50, 602 + 50])
    _, con = imp(p, interval_s=1, start="2026-11-28T15:23:18", devices="sdb1")
    assert totals(con) == pytest.approx([50, 49.5, 50, 50])
    with pytest.raises(DbtierError, match="--devices names sdb and sdb1, a partition of it: its I/O would count twice"):
        imp(p, interval_s=1, devices="sdb,sdb1")


@pytest.mark.parametrize("mapper", ["dm-0", "vg0-data", "luks-3f2a9c1e-8b7d-4e22-9a55-0c6d1f2e3b4a"])
def test_device_mapper_devices_are_not_counted_with_their_disks(tmp_path, mapper):
    """loop0p1 renamed as a device-mapper device (dm-N, or its own name as `iostat -N` prints it) over sdb."""
    p = _renamed(tmp_path, loop0="sdb", loop0p1=mapper)
    doc, con = imp(p, interval_s=1, start="2026-11-28T15:23:18")
    roles = dict(con.execute("SELECT DISTINCT file_type, role FROM intervals").fetchall())
    assert roles[mapper] == "detail" and roles["sdb"] == roles["vda"] == "part"
    assert totals(con) == pytest.approx([650, 655.44, 655, 652])
    _, con = imp(p, interval_s=1, start="2026-11-28T15:23:18", devices=mapper)     # chosen by name: counted
    assert totals(con) == pytest.approx([50, 49.5, 50, 50])


def test_the_same_reports_as_text_and_as_json_agree(tmp_path):
    """iostat-x.txt's report 2 written as sysstat's JSON by hand gives the text reader's figures."""
    text = (IO / "iostat-x.txt").read_text().splitlines()
    cols = text[5].split()
    rows = [dict(zip(cols, line.split())) for line in (text[10], text[21])]     # vda, reports 1 and 2
    disks = [", ".join(['"disk_device": "vda"'] + [f'"{c}": {r[c]}' for c in ("r/s", "w/s", "rkB/s", "wkB/s",
                                                                              "r_await", "w_await")])
             for r in rows]
    body = ",".join('{"disk": [{' + d + '}]}' for d in disks)
    p = tmp_path / "hand.json"
    p.write_text('{"sysstat": {"hosts": [{"nodename": "vm", "date": "11/28/26", "statistics": [' + body + ']}]}}')
    _, a = imp(p, interval_s=1, start="09:00")
    _, b = imp(IO / "iostat-x.txt", interval_s=1, start="09:00")
    assert vda(a, "2026-11-28 09:00:00") == vda(b, "2026-11-28 09:00:00")
