"""Trace readers on samples in each format's real layout, and the real CloudPhysics trace."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from dbtier.core.errors import DbtierError
from dbtier.sim.trace.traces import detect_format, parse_columns, read_trace

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


# -- hostile input (issue 12): each class refused by name, with file and line -------------------------

import bz2  # noqa: E402
import lzma  # noqa: E402
import os  # noqa: E402
import socket  # noqa: E402

MSR_LINE = "128166372003061629,hm,1,Read,{off},{len},1225\n"


def _msr(tmp_path, off=0, ln=4096, name="t.csv"):
    p = tmp_path / name
    p.write_text(MSR_LINE.format(off=0, len=4096) + MSR_LINE.format(off=off, len=ln))
    return p


def test_fifo_is_refused_before_opening(tmp_path):
    p = tmp_path / "pipe.csv"
    os.mkfifo(p)
    with pytest.raises(DbtierError, match=r"pipe.csv: a FIFO \(named pipe\), not a regular file"):
        read_trace(p)          # opening would block: no writer ever comes


@pytest.mark.parametrize("target, kind", [("/dev/zero", "a character device"), ("/dev/null", "a character device")])
def test_devices_are_refused(tmp_path, target, kind):
    link = tmp_path / "looks-like.csv"
    link.symlink_to(target)
    with pytest.raises(DbtierError, match=f"looks-like.csv: {kind}, not a regular file"):
        read_trace(link)


def test_socket_and_directory_are_refused(tmp_path):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.bind(str(tmp_path / "sock.csv"))
        with pytest.raises(DbtierError, match="sock.csv: a socket, not a regular file"):
            read_trace(tmp_path / "sock.csv")
    finally:
        s.close()
    with pytest.raises(DbtierError, match="is a directory, not a trace file"):
        read_trace(tmp_path)


@pytest.mark.parametrize("comp, name", [(gzip.compress, "gzip"), (bz2.compress, "bz2"), (lzma.compress, "xz")])
def test_truncated_compressed_trace_is_refused_whole(tmp_path, comp, name):
    """A cut-short copy of a 5,000-line trace: stopped with the file, where, and that nothing was used."""
    body = "".join(f"419,R,{i * 4096},4096,{1577808144007256 + i}\n" for i in range(5000)).encode()
    data = comp(body)
    p = tmp_path / f"t.csv.{name}"
    p.write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(DbtierError) as e:
        read_trace(p)
    msg = e.value.message
    assert msg.startswith(f"{p}: {name} data damaged ") and "(at about byte " in msg
    assert "no request of this trace was used" in msg and "cat " in e.value.hint


def test_gzip_crc_failure_names_file_and_position(tmp_path):
    data = bytearray(gzip.compress((DATA / "msr-hm1.csv").read_bytes()))
    data[-7] ^= 0xFF                      # the CRC32 in the trailer
    p = tmp_path / "crc.csv.gz"
    p.write_bytes(bytes(data))
    with pytest.raises(DbtierError, match=r"crc.csv.gz: gzip data damaged .*CRC check failed"):
        read_trace(p)


def test_zstd_is_named_not_called_binary(tmp_path):
    p = tmp_path / "t.csv.zst"
    p.write_bytes(b"\x28\xb5\x2f\xfd" + b"\x00" * 20)
    with pytest.raises(DbtierError) as e:
        read_trace(p)
    assert "zstd-compressed" in e.value.message and "zstd -d t.csv.zst" in e.value.hint


@pytest.mark.parametrize("off, ln, needle", [
    (0, 2**50, "length 1125899906842624 bytes is more than one request can be (the cap is 1 GiB"),
    (0, 2**30 + 1, "more than one request can be"),
    (2**63 - 100, 4096, "ends beyond byte 36,028,797,018,963,968 (2^55, 32 PiB)"),
    (2**70, 512, "ends beyond byte"),
    (0, -512, "length -512 bytes is negative"),
    (-512, 512, "Offset -512 is negative"),
])
def test_absurd_offsets_and_lengths_name_the_line(tmp_path, off, ln, needle):
    p = _msr(tmp_path, off, ln)
    with pytest.raises(DbtierError) as e:
        read_trace(p)
    assert e.value.message.startswith(f"{p}:2: malformed msr line: ") and needle in e.value.message
    t = read_trace(p, skip_bad=True)          # --skip-bad counts it like any malformed line
    assert len(t) == 1 and t.skipped == 1


def test_a_one_gib_request_is_taken(tmp_path):
    t = read_trace(_msr(tmp_path, 2**55 - 2**30, 2**30))
    assert int(t.length_bytes[1]) == 2**30 and int(t.offset_bytes[1]) + 2**30 == 2**55


def test_zero_length_requests_are_ignored_and_noted_with_their_lines(tmp_path):
    p = _msr(tmp_path, 8192, 0)
    t = read_trace(p)
    assert len(t) == 1 and t.ignored == {"zero-length": 1}
    assert "1 zero-length request ignored (line 2)" in t.notes


@pytest.mark.parametrize("tok, needle", [("nan", "time 'nan' is not a finite number"),
                                         ("inf", "time 'inf' is not a finite number"),
                                         ("1e308", "time 1e+308 is beyond +-2^62 ticks"),
                                         (str(2**64), "is beyond +-2^62 ticks"),
                                         ("1_0", "time '1_0' is not a number"),
                                         ("١٢", "time '١٢' is not a number")])
def test_non_finite_and_overflowing_times(tmp_path, tok, needle):
    p = tmp_path / "t.csv"
    p.write_text(f"t,op,off,len\n1,R,0,512\n{tok},R,0,512\n")
    with pytest.raises(DbtierError) as e:
        read_trace(p, columns="time=t,op=op,offset=off,length=len")
    assert e.value.message.startswith(f"{p}:3: malformed csv line: ") and needle in e.value.message


def test_time_far_from_the_first_request(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("t,op,off,len\n1,R,0,512\n400000000,R,0,512\n")
    with pytest.raises(DbtierError, match=r"t.csv:3: time 4e\+08 s from the first request \(line 2\) is more than "
                                          "ten years away"):
        read_trace(p, columns="time=t,op=op,offset=off,length=len")


def test_unicode_and_underscore_digits_are_not_numbers(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("128166372003061629,hm,1,Read,1_024,512,1\n")
    with pytest.raises(DbtierError, match=r"t.csv:1: malformed msr line: Offset '1_024' is not a whole number"):
        read_trace(p, fmt="msr")


def test_a_line_longer_than_a_mebibyte(tmp_path):
    p = tmp_path / "long.csv"
    p.write_text(MSR_LINE.format(off=0, len=512) + "1" * (3 << 20))       # no newline at all
    with pytest.raises(DbtierError, match=r"long.csv:2: a line of [0-9,]+\+ characters, more than the 1,048,576"):
        read_trace(p)


def test_crlf_bom_and_blank_lines_read_as_lf(tmp_path):
    p = tmp_path / "dos.csv"
    p.write_bytes(b"\xef\xbb\xbf" + (DATA / "msr-hm1.csv").read_bytes().replace(b"\n", b"\r\n\r\n"))
    t = read_trace(p)
    assert t.summary() == read_trace(DATA / "msr-hm1.csv").summary()


def test_too_many_volumes(tmp_path, monkeypatch):
    from dbtier.sim.trace import limits as tracelimits
    monkeypatch.setattr(tracelimits, "MAX_VOLUMES", 3)      # the readers look it up at the call
    p = tmp_path / "v.csv"
    p.write_text("".join(f"v{i},R,0,512,{i}\n" for i in range(5)))
    with pytest.raises(DbtierError, match=r"v.csv:4: volume 'v3' is one more than the 3 distinct volumes"):
        read_trace(p, fmt="alibaba")


@pytest.mark.parametrize("spec, needle", [
    ("op=2,op=3,offset=3,length=4", "op is given twice"),
    ("op=2,offset=3,length=4,size=5", "length is given twice (size is another name for length)"),
    ("op=2,offset=2,length=4", "op and offset both name column '2'"),
    ("op=0,offset=3,length=4", "op=0: columns are numbered from 1 to 4096"),
    ("op=-3,offset=3,length=4", "op=-3: columns are numbered from 1 to 4096"),
    ("op=99999999999999999999,offset=3,length=4", "columns are numbered from 1 to 4096"),
    ("op=2,offset=3,length=4,offset_unit=99999999999", "offset_unit '99999999999' is not bytes, sectors, kib"),
    ("op=2,offset=3,length=4,length_unit=²", "length_unit '²' is not bytes"),
    ("op=2,offset=3,length=4,read=|", "read='|' names no token"),
])
def test_bad_columns_spec_names_the_spec(spec, needle):
    with pytest.raises(DbtierError) as e:
        parse_columns(spec)
    assert e.value.message.startswith(f"--columns {spec!r}: ") and needle in e.value.message


def test_columns_past_the_last_column_name_file_and_line(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text("1,R,0,512,v\n2,W,0\n")
    with pytest.raises(DbtierError, match=r"c.csv:2: malformed csv line: 3 fields, the --columns map needs at least 4"):
        read_trace(p, columns="time=1,op=2,offset=3,length=4")


def test_columns_with_another_format_is_refused():
    with pytest.raises(DbtierError, match="--columns maps a CSV, but --format is msr"):
        read_trace(DATA / "msr-hm1.csv", fmt="msr", columns="op=4,offset=5,length=6")


def test_block_expansion_beyond_memory_is_refused_before_allocating():
    """200,000 requests of 1 GiB in 8 KiB blocks: 26 billion blocks, refused by arithmetic (no allocation)."""
    from dbtier.sim.cache import replay as cache
    from dbtier.sim.trace.traces import from_arrays
    n = 200_000
    t = from_arrays(np.arange(n, dtype=float), np.zeros(n), np.arange(n) * 2**30, np.full(n, 2**30))
    with pytest.raises(DbtierError, match="make 26,214,400,000 blocks"):
        cache.prepare(t, 8192)
