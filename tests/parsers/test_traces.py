"""Trace readers on samples in each format's real layout, and the real CloudPhysics trace."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from dbtier.core.errors import DbtierError
from dbtier.sim.traces import detect_format, parse_columns, read_trace

DATA = Path(__file__).resolve().parent.parent / "data" / "traces"
CLOUDPHYSICS = DATA / "cloudPhysicsIO.csv.xz"   # the real trace (README there)


def _req(t, i):
    return (round(float(t.time_s[i]), 9), int(t.op[i]), int(t.offset_bytes[i]), int(t.length_bytes[i]),
            t.volumes[t.volume[i]])


def test_msr():
    t = read_trace(DATA / "msr-hm1.csv")
    assert t.format == "msr"
    assert t.summary() == {"requests": 10, "reads": 5, "writes": 5, "bytes": 250368,
                           "duration_s": pytest.approx(3.5687472)}
    assert _req(t, 0) == (0.0, 0, 3154152960, 32768, "hm_1")
    # Windows filetime ticks are 100 ns: the second request is 35,011 ticks later
    assert _req(t, 1) == (0.0035011, 0, 3154185728, 32768, "hm_1")
    assert _req(t, 9)[1:] == (1, 3272810496, 512, "hm_1")
    assert t.time_origin == pytest.approx(128166372003061629e-7)


def test_msr_with_header_line(tmp_path):
    text = "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n" + (DATA / "msr-hm1.csv").read_text()
    p = tmp_path / "hdr.csv"
    p.write_text(text)
    t = read_trace(p)
    assert t.format == "msr" and len(t) == 10 and t.ignored == {"header": 1}


def test_alibaba():
    t = read_trace(DATA / "alibaba-block.csv")
    assert t.format == "alibaba"
    assert t.summary() == {"requests": 7, "reads": 3, "writes": 4, "bytes": 4096 * 3 + 16384 * 2 + 8192 + 65536,
                           "duration_s": pytest.approx(0.038951)}
    assert t.volumes == ("419", "37")
    assert _req(t, 3) == (0.007756, 0, 61829496832, 4096, "37")


def test_tencent():
    t = read_trace(DATA / "tencent-cbs.csv")
    assert t.format == "tencent"
    assert t.summary() == {"requests": 6, "reads": 2, "writes": 4, "bytes": (8 * 4 + 16 + 256) * 512,
                           "duration_s": 3.0}
    # offsets and sizes are 512-byte sectors; IOType 0 is a read
    assert _req(t, 2) == (0.0, 0, 45203456 * 512, 16 * 512, "2471")
    assert _req(t, 0) == (0.0, 1, 1367248 * 512, 4096, "1063")


def test_cloudphysics_layout():
    t = read_trace(DATA / "cloudphysics-layout.csv")
    assert t.format == "cloudphysics"
    assert t.summary() == {"requests": 5, "reads": 2, "writes": 3, "bytes": 4096 + 8192 + 512 + 512 + 65536,
                           "duration_s": 3.0}
    assert _req(t, 0) == (0.0, 1, 40409911 * 512, 4096, "0")      # 2a = WRITE(10)
    assert _req(t, 1) == (0.0, 0, 17221808 * 512, 8192, "0")      # 28 = READ(10)


def test_real_cloudphysics_trace():
    t = read_trace(CLOUDPHYSICS)
    assert t.format == "cloudphysics"
    # The data README: 113,872 requests over about two hours.
    assert t.summary() == {"requests": 113872, "reads": 46974, "writes": 66898, "bytes": 4205978112,
                           "duration_s": 7200.0}
    assert t.ignored == {"header": 1} and t.skipped == 0
    assert _req(t, 0) == (0.0, 1, 42932745 * 512, 512, "0")
    assert np.all(np.diff(t.time_s) >= 0)


def test_blkparse_uses_queue_events():
    t = read_trace(DATA / "blkparse-sdb.txt")
    assert t.format == "blkparse"
    s = t.summary()
    # blkparse's own summary of the same events: Reads Queued 3, 140KiB; Writes Queued 3, 40KiB
    assert (s["requests"], s["reads"], s["writes"]) == (6, 3, 3)
    assert int(t.length_bytes[t.op == 0].sum()) == 140 * 1024
    assert int(t.length_bytes[t.op == 1].sum()) == 40 * 1024
    assert s["duration_s"] == pytest.approx(0.004512980 - 0.000000812)
    assert _req(t, 0) == (0.0, 0, 1050624 * 512, 16 * 512, "8,16")
    assert t.ignored["flush"] >= 3 and t.ignored["discard"] == 3 and t.ignored["summary"] > 10
    assert "Q (queued)" in t.notes[0]


def test_blkparse_falls_back_to_issue_events(tmp_path):
    lines = [ln for ln in (DATA / "blkparse-sdb.txt").read_text().splitlines() if "  Q  " not in ln
             and " Q   " not in ln and " Q F" not in ln]
    p = tmp_path / "d-only.txt"
    p.write_text("\n".join(lines) + "\n")
    t = read_trace(p)
    assert len(t) == 5        # the second WS was merged (M) into the first, so only 5 dispatches
    assert "D (issued)" in t.notes[0]


def test_fio_v3_written_by_fio():
    t = read_trace(DATA / "fio-v3-oltp.iolog")
    assert t.format == "fio" and t.timed
    s = t.summary()
    assert s["requests"] == 40 and s["reads"] + s["writes"] == 40 and set(np.unique(t.length_bytes)) == {8192}
    assert s["duration_s"] == pytest.approx((26411 - 145) * 1e-6)   # v3 timestamps are microseconds
    assert t.ignored == {"header": 1, "add": 1, "open": 1, "sync": 4, "close": 1}
    assert t.volumes == ("/tmp/fiot/data.bin",)


def test_fio_v2_timed_by_wait_lines():
    t = read_trace(DATA / "fio-v2-replay.iolog")
    assert t.format == "fio" and t.timed
    assert [_req(t, i) for i in range(len(t))] == [
        (0.0, 0, 1048576, 8192, "/dev/sdb"), (0.00025, 1, 2097152, 8192, "/dev/sdb"),
        (0.00025, 0, 1056768, 8192, "/dev/sdb"), (0.00125, 1, 2105344, 16384, "/dev/sdb")]
    assert t.ignored["trim"] == 1 and t.ignored["sync"] == 1 and t.ignored["wait"] == 2


def test_fio_v2_without_waits_is_untimed(tmp_path):
    p = tmp_path / "v2.iolog"
    p.write_text("fio version 2 iolog\n/data/f add\n/data/f open\n/data/f read 0 4096\n/data/f write 4096 4096\n")
    t = read_trace(p)
    assert not t.timed and t.summary()["duration_s"] is None and len(t) == 2


def test_custom_columns():
    cols = ("time=ts_ms,op=rw,offset=lba,length=sectors,volume=lun,time_unit=ms,offset_unit=sectors,"
            "length_unit=sectors,delimiter=semicolon,read=R,write=W")
    t = read_trace(DATA / "custom-ms.csv", columns=cols)
    assert t.format == "csv"
    assert t.summary() == {"requests": 5, "reads": 3, "writes": 2, "bytes": 184 * 512,
                           "duration_s": pytest.approx(0.00276)}
    assert t.volumes == ("lun7", "lun3")
    assert _req(t, 1) == (0.00035, 0, 204816 * 512, 16 * 512, "lun7")


def test_custom_columns_by_number_without_header(tmp_path):
    p = tmp_path / "n.csv"
    p.write_text("10,read,0,4096\n20,write,4096,8192\n")
    t = read_trace(p, columns="time=1,op=2,offset=3,length=4,time_unit=us")
    assert t.summary() == {"requests": 2, "reads": 1, "writes": 1, "bytes": 12288, "duration_s": pytest.approx(1e-5)}


def test_gzip_is_read_transparently(tmp_path):
    p = tmp_path / "t.csv.gz"
    p.write_bytes(gzip.compress((DATA / "tencent-cbs.csv").read_bytes()))
    assert len(read_trace(p)) == 6


def test_detect_format():
    assert detect_format(["fio version 3 iolog"]) == "fio"
    assert detect_format(["version,time,op,size,lbn"]) == "cloudphysics"
    assert detect_format(["128166372003061629,hm,1,Write,2567680000,4096,45623"]) == "msr"
    assert detect_format(["419,W,8792731648,4096,1577808144007256"]) == "alibaba"
    assert detect_format(["1538323200,1367248,8,1,1063"]) == "tencent"
    assert detect_format(["  8,0    3        1     0.000000000  4162  Q  RM 1286144 + 8 [jbd2/sda1-8]"]) == "blkparse"
    assert detect_format(["a,b,c"]) is None


# -- bad input ---------------------------------------------------------------------------------------

def test_unknown_format_lists_the_known_ones_and_columns(tmp_path):
    p = tmp_path / "odd.csv"
    p.write_text("when|what|where\n1|r|0\n")
    with pytest.raises(DbtierError) as e:
        read_trace(p)
    assert "unknown trace format (first line: 'when|what|where')" in e.value.message
    for name in ("msr", "cloudphysics", "alibaba", "tencent", "blkparse", "fio"):
        assert name in e.value.message
    assert "--columns time=COL,op=COL,offset=COL,length=COL" in e.value.hint


def test_malformed_line_names_file_and_line(tmp_path):
    p = tmp_path / "bad.csv"
    lines = (DATA / "msr-hm1.csv").read_text().splitlines()
    lines[3] = "128166372016404936,hm,1,Wrote,2567684096,4096,22774"
    lines[6] = "128166372022467290,hm,1,Read,15249x7184,65536,5126"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(DbtierError) as e:
        read_trace(p)
    assert e.value.message == f"{p}:4: malformed msr line: Type 'Wrote' is neither Read nor Write"
    assert "--skip-bad" in e.value.hint
    t = read_trace(p, skip_bad=True)
    assert len(t) == 8 and t.skipped == 2
    assert t.skipped_lines == [(4, "Type 'Wrote' is neither Read nor Write"),
                               (7, "Offset '15249x7184' is not a whole number")]


def test_wrong_field_count(tmp_path):
    p = tmp_path / "short.csv"
    p.write_text("1538323200,1367248,8,1,1063\n1538323200,1367256,8\n")
    with pytest.raises(DbtierError, match=r"short.csv:2: malformed tencent line: 3 fields, expected 5"):
        read_trace(p)


def test_time_going_backwards(tmp_path):
    p = tmp_path / "back.csv"
    p.write_text("419,R,0,4096,1577808144000100\n419,R,4096,4096,1577808144000300\n"
                 "419,W,8192,4096,1577808144000200\n")
    with pytest.raises(DbtierError) as e:
        read_trace(p)
    assert e.value.message.startswith(f"{p}:3: time goes backwards: 0.0001 s after 0.0002 s at line 2")
    assert "--sort" in e.value.hint
    t = read_trace(p, sort=True)
    assert list(t.offset_bytes) == [0, 8192, 4096] and t.sorted


def test_empty_trace(tmp_path):
    p = tmp_path / "empty.csv"
    p.write_text("")
    with pytest.raises(DbtierError, match="empty trace"):
        read_trace(p)
    q = tmp_path / "only-header.csv"
    q.write_text("version,time,op,size,lbn\n")
    with pytest.raises(DbtierError, match=r"empty trace: no read or write requests \(1 lines; ignored: header 1\)"):
        read_trace(q)


def test_all_lines_bad_under_skip_bad_is_an_empty_trace(tmp_path):
    p = tmp_path / "allbad.csv"
    p.write_text("1538323200,1367248,8,7,1063\n1538323200,1367256,8,9,1063\n")
    with pytest.raises(DbtierError, match="2 malformed and skipped"):
        read_trace(p, fmt="tencent", skip_bad=True)


def test_binary_file(tmp_path):
    p = tmp_path / "sdb.blktrace.0"
    p.write_bytes(b"\x65\x61\x74\x07\x00\x00\x00\x00" * 64)
    with pytest.raises(DbtierError) as e:
        read_trace(p)
    assert "binary data" in e.value.message and "blkparse -i" in e.value.hint


def test_missing_file(tmp_path):
    with pytest.raises(DbtierError, match="not found"):
        read_trace(tmp_path / "nope.csv")


@pytest.mark.parametrize("spec, needle", [
    ("time=1,op=2", "missing offset, length"),
    ("time=1,op=2,offset=3,length=4,time_unit=fortnights", "unknown time_unit"),
    ("time=1,op=2,offset=3,length=4,colour=red", "unknown key 'colour'"),
    ("op=2,offset=3,length=4,read=x,write=x", "the same token means read and write"),
    ("op", "is not KEY=VALUE"),
])
def test_bad_columns_spec(spec, needle):
    with pytest.raises(DbtierError, match=needle):
        parse_columns(spec)


def test_columns_naming_an_absent_header(tmp_path):
    p = tmp_path / "h.csv"
    p.write_text("t,kind,pos,len\n1,r,0,512\n")
    with pytest.raises(DbtierError) as e:
        read_trace(p, columns="time=t,op=kind,offset=position,length=len")
    assert "--columns offset=position: no such column; the header has: t, kind, pos, len" in e.value.message
