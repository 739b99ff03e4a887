"""csvscan's kernel (the byte-level path of fastread.batches) gives exactly the pyarrow reader's answer:
the same Batch arrays and dtypes, the same State (rows, volumes in order of first appearance,
header_lines), or a Reject where pyarrow rejects. The reference is fastread's pyarrow path itself
(fastread.KERNEL = False), on every committed trace it covers and on generated files with odd content;
the counters on State say which blocks the kernel read and which it handed to pyarrow."""

from __future__ import annotations

import gzip
import io
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbtier.sim.trace import csvscan, fastread, batch as tracebatch, reader as tracereader, traces
from dbtier.sim.trace.columns import csv_index

TRACES = Path(__file__).resolve().parent.parent / "data" / "traces"
FIELDS = ("t", "op", "offset", "length", "volume")
MSR = fastread.layout("msr", None, None, "")
MAX_ADDR = tracebatch.MAX_ADDRESS_BYTES
HEADER = b"Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n"


def _src(data, lay=MSR, header=0, max_volumes=tracebatch.MAX_VOLUMES):
    """A source for _run: fastread.batches over `data` (bytes, or a function opening a stream)."""
    def make():
        state = fastread.State(max_volumes=max_volumes)
        stream = data() if callable(data) else io.BytesIO(data)
        return state, fastread.batches(stream, lay, header, state)
    return make


def _run(source, kernel, monkeypatch, trace=None):
    """(arrays or None on Reject, dtypes seen, State) from fastread.batches with or without the kernel;
    `trace` gets "K" or "A" per batch (read by the kernel or by pyarrow)."""
    monkeypatch.setattr(fastread, "KERNEL", kernel)
    state, gen = source()
    got, dtypes = [], set()
    try:
        for b in gen:
            got.append(b)
            dtypes |= {(k, getattr(b, k).dtype.str) for k in FIELDS}
            if trace is not None:
                trace.append("K" if state.kernel_blocks > trace.count("K") else "A")
    except fastread.Reject:
        return None, dtypes, state
    return tuple(np.concatenate([getattr(b, k) for b in got]) if got else None for k in FIELDS), dtypes, state


def _same(source, monkeypatch) -> fastread.State:
    """Assert the kernel's answer is pyarrow's (both Reject, or equal arrays, dtypes and State: after a
    Reject the caller drops the State); the kernel run's State (its counters say what read each block)."""
    ref, ref_dt, ref_st = _run(source, False, monkeypatch)
    new, new_dt, new_st = _run(source, True, monkeypatch)
    assert ref_st.kernel_blocks == ref_st.arrow_blocks == 0        # the reference never touched the kernel
    assert (ref is None) == (new is None), f"pyarrow {'rejects' if ref is None else 'reads'}, the kernel not"
    if ref is not None:
        for k, a, b in zip(FIELDS, ref, new):
            assert (a is None) == (b is None), k
            if a is not None:
                assert a.dtype == b.dtype and np.array_equal(a, b), k
        assert ref_dt == new_dt
        assert ref_st == new_st and list(ref_st.volumes) == list(new_st.volumes)
    return new_st


def _rejects(source, monkeypatch) -> bool:
    return _run(source, True, monkeypatch)[0] is None


def _msr_lines(n: int, vols: int = 3, seed: int = 1, mixed: bool = False) -> list[bytes]:
    """n MSR lines over `vols` disks of host hm, in turn (or in random order: mixed)."""
    rng = random.Random(seed)
    return [b"%d,hm,%d,%s,%d,%d,%d" % (128166372003061629 + 1000 * i, rng.randrange(vols) if mixed else i % vols,
                                       rng.choice([b"Read", b"Write"]),
                                       rng.randrange(0, 10**12) // 512 * 512, 512 * rng.randrange(1, 300),
                                       rng.randrange(1, 10**6)) for i in range(n)]


def _data(lines: list[bytes], end: bytes = b"\n") -> bytes:
    return b"".join(ln + end for ln in lines)


# -- every committed trace the kernel covers ---------------------------------------------------------------

CUSTOM = ("time=1,volume=2,op=3,offset=4,length=5,time_unit=ms,offset_unit=sectors,length_unit=sectors,"
          "delimiter=semicolon")
FILES = [(p.name, "auto", None) for p in sorted(TRACES.iterdir())
         if p.name not in ("README.md", "custom-ms.csv")]
FILES += [("custom-ms.csv", "csv", CUSTOM), ("msr-hm1.csv", "csv", "time=1,op=4,offset=5,length=6,volume=2"),
          ("msr-hm1.csv", "csv", "op=4,offset=5,length=6")]
KERNEL_READS = {"msr-hm1.csv", "policy-17.csv", "alibaba-block.csv", "tencent-cbs.csv", "cloudphysics-layout.csv",
                "cloudPhysicsIO.csv.xz"}


@pytest.mark.parametrize("name,fmt,columns", FILES)
def test_committed_traces(monkeypatch, name, fmt, columns):
    """Through fast_start, as the readers call it (its format detection, header and layout)."""
    cols = traces.parse_columns(columns) if columns else None

    def source(float_time=False):
        start = tracereader.fast_start(TRACES / name, fmt, cols)
        start[1].float_time = float_time
        return start[2][:2]
    if tracereader.fast_start(TRACES / name, fmt, cols) is None:      # blkparse, fio: not CSV-like
        assert name not in KERNEL_READS
        return
    st = _same(source, monkeypatch)
    if name in KERNEL_READS:
        assert st.kernel_blocks >= 1 and st.arrow_blocks == 0 and st.rows > 0
    if name == "custom-ms.csv":                          # fractional times: Reject, then pyarrow alone
        assert _rejects(source, monkeypatch)
        st = _same(lambda: source(True), monkeypatch)
        assert st.rows == 5 and st.kernel_blocks == st.arrow_blocks == 0


def test_read_trace_same_with_and_without_kernel(monkeypatch, tmp_path):
    """The whole reader (read_trace, read_chunks) on a file of several kernel blocks, one handed to pyarrow."""
    monkeypatch.setattr(csvscan, "BLOCK", 4096)
    lines = _msr_lines(600, vols=5)
    lines[300] = lines[300].replace(b",hm,", b",h\xc3\xb4st,")       # non-ASCII host: that block to pyarrow
    p = tmp_path / "t.csv"
    p.write_bytes(_data(lines))
    answers = []
    for kernel in (True, False):
        monkeypatch.setattr(fastread, "KERNEL", kernel)
        assert tracereader._read_fast(p, "auto", None, False, None) is not None
        tr = traces.read_trace(p)
        ch = list(traces.read_chunks(p, requests=97))
        answers.append((tr, ch))
    (a, ca), (b, cb) = answers
    for k in ("time_s", "op", "offset_bytes", "length_bytes", "volume"):
        assert np.array_equal(getattr(a, k), getattr(b, k)) and getattr(a, k).dtype == getattr(b, k).dtype, k
        assert np.array_equal(np.concatenate([getattr(c, k) for c in ca]), getattr(a, k)), k
    assert a.volumes == b.volumes and a.lines == b.lines and a.time_origin == b.time_origin
    assert [len(c) for c in ca] == [len(c) for c in cb]


# -- generated MSR files with odd content -------------------------------------------------------------------

BASE = _msr_lines(40)


def _field(i: int, col: int, new: bytes, more: dict[int, bytes] | None = None) -> bytes:
    """BASE with field `col` of line i (and the fields in `more`) replaced."""
    lines = list(BASE)
    f = lines[i].split(b",")
    for c, v in {col: new, **(more or {})}.items():
        f[c] = v
    lines[i] = b",".join(f)
    return _data(lines)


ODD = {
    # name: (bytes, header lines, what reads it: "K" kernel only, "A" some block by pyarrow, "R" both reject)
    "plain": (_data(BASE), 0, "K"),
    "crlf": (_data(BASE, b"\r\n"), 0, "K"),
    "bare cr line ends": (_data(BASE, b"\r"), 0, None),
    "one bare cr": (_data(BASE[:5]) + BASE[5] + b"\r" + _data(BASE[6:]), 0, "A"),
    "cr cr lf": (_data(BASE[:5]) + BASE[5] + b"\r\r\n" + _data(BASE[6:]), 0, None),
    "blank line": (_data(BASE[:7]) + b"\n" + _data(BASE[7:]), 0, "R"),
    "blank crlf line": (_data(BASE[:7], b"\r\n") + b"\r\n" + _data(BASE[7:], b"\r\n"), 0, "R"),
    "trailing blank line": (_data(BASE) + b"\n", 0, "R"),
    "header": (HEADER + _data(BASE), 1, "K"),
    "header crlf": (HEADER.replace(b"\n", b"\r\n") + _data(BASE, b"\r\n"), 1, "K"),
    "header bare cr": (HEADER.replace(b"\n", b"\r") + _data(BASE), 1, None),
    "header only": (HEADER, 1, None),
    "header without newline": (HEADER[:-1], 1, "R"),
    "spaces around a number": (_field(3, 5, b" 4096 "), 0, "A"),
    "tab before a number": (_field(3, 5, b"\t4096"), 0, None),
    "plus sign": (_field(3, 5, b"+4096"), 0, "R"),
    "minus offset": (_field(3, 4, b"-4096"), 0, "R"),
    "hex offset": (_field(3, 4, b"0x10"), 0, "R"),
    "hex host": (_field(3, 1, b"0xab"), 0, "R"),
    "hex response time": (_field(39, 6, b"0X1f"), 0, "R"),
    "an x, no 0x": (_field(3, 6, b"12x"), 0, "K"),
    "decimal point": (_field(3, 5, b"4096.0"), 0, "R"),
    "exponent": (_field(3, 5, b"4e3"), 0, "R"),
    "underscore": (_field(3, 5, b"4_096"), 0, "R"),
    "leading zeros": (_field(3, 4, b"000000000000000000000004096"), 0, "A"),
    "18-digit offset": (_field(3, 4, b"000000000000004096"), 0, "K"),
    "19-digit time": (_field(3, 0, b"1281663720030616290"), 0, "A"),
    "19-digit time above the cap": (_field(3, 0, b"9223372036854775807"), 0, "R"),
    "20-digit time": (_field(3, 0, b"12816637200306162900"), 0, "R"),
    "18-digit time": (_field(3, 0, b"999999999999999999"), 0, "K"),
    "one-digit time": (_field(3, 0, b"7"), 0, "K"),
    "empty time": (_field(3, 0, b""), 0, "R"),
    "zero-length request": (_field(3, 5, b"0"), 0, "R"),
    "length at the cap": (_field(3, 5, b"%d" % (1 << 30)), 0, "K"),
    "length over the cap": (_field(3, 5, b"%d" % ((1 << 30) + 1)), 0, "R"),
    "end at the address cap": (_field(3, 4, b"%d" % ((1 << 55) - 4096), {5: b"4096"}), 0, "K"),
    "end over the address cap": (_field(3, 4, b"%d" % ((1 << 55) - 100)), 0, "R"),
    "end a sector over the address cap": (_field(3, 4, b"%d" % ((1 << 55) - 3584), {5: b"4096"}), 0, "R"),
    "lowercase read": (_field(4, 3, b"read"), 0, "K"),
    "mixed-case op": (_field(4, 3, b"rEaD"), 0, "A"),
    "op with spaces": (_field(4, 3, b" Read "), 0, "A"),
    "unknown op": (_field(4, 3, b"Flush"), 0, "R"),
    "empty op": (_field(4, 3, b""), 0, "R"),
    "non-ASCII host": (_field(9, 1, "hôst".encode()), 0, "A"),
    "not UTF-8 host": (_field(9, 1, b"h\xffst"), 0, "R"),
    "not UTF-8 response time": (_field(9, 6, b"\xff\xfe"), 0, "A"),
    "NUL in response time": (_field(9, 6, b"1\x002"), 0, "A"),
    "DEL in host": (_field(9, 1, b"h\x7fm"), 0, "A"),
    "host with spaces": (_field(9, 1, b" hm "), 0, "K"),
    "empty host": (_field(9, 1, b""), 0, "K"),
    "empty disk": (_field(9, 2, b""), 0, "K"),
    "quoted host": (_field(9, 1, b'"hm"'), 0, "K"),
    "long host": (_field(9, 1, b"h" * 300), 0, "K"),
    "disk 01 and 1": (_field(9, 2, b"01"), 0, "K"),
    "host_disk names that meet": (_field(9, 1, b"hm_1", {2: b""}).replace(BASE[10], b"%s,hm,1_,%s" % (
        BASE[10].split(b",", 1)[0], BASE[10].split(b",", 3)[3])), 0, "K"),
    "empty response time": (_field(9, 6, b""), 0, "K"),
    "extra column": (_field(9, 6, b"1,2"), 0, "R"),
    "missing column": (_data(BASE[:9]) + b",".join(BASE[9].split(b",")[:6]) + b"\n" + _data(BASE[10:]), 0, "R"),
    "semicolon in a field": (_field(9, 6, b"1;2"), 0, "K"),
    "six fields, then one": (_data(BASE[:9]) + b",".join(BASE[9].split(b",")[:6]) + b"\n7\n" + _data(BASE[10:]),
                             0, "R"),
    "no final newline": (_data(BASE)[:-1], 0, "K"),
    "no final newline after crlf": (_data(BASE, b"\r\n")[:-1], 0, "K"),
    "one line without newline": (BASE[0], 0, None),
    "empty file": (b"", 0, "R"),
    "BOM first": (b"\xef\xbb\xbf" + _data(BASE), 0, "A"),
    "BOM after the header": (HEADER + b"\xef\xbb\xbf" + _data(BASE), 1, "R"),
    "BOM mid-file": (_data(BASE[:20]) + b"\xef\xbb\xbf" + _data(BASE[20:]), 0, "R"),
    "just a newline": (b"\n", 0, "R"),
    "65 volumes": (_data(_msr_lines(200, vols=65)), 0, "K"),
    "5000 volumes in a block": (_data(_msr_lines(6000, vols=5000)), 0, "A"),
}


@pytest.mark.parametrize("name", list(ODD))
def test_odd_msr(monkeypatch, name):
    data, header, how = ODD[name]
    st = _same(_src(data, MSR, header), monkeypatch)
    if how == "R":
        assert _rejects(_src(data, MSR, header), monkeypatch)
    elif how == "K":
        assert st.kernel_blocks >= 1 and st.arrow_blocks == 0 and st.rows > 0
    elif how == "A":
        assert st.arrow_blocks >= 1 and st.rows > 0


def test_the_odd_cases_hold_what_they_say():
    assert {ln.split(b",")[3] for ln in BASE} == {b"Read", b"Write"} and len({ln[19:23] for ln in BASE}) == 3
    assert len({ln.split(b",")[2] for ln in _msr_lines(200, vols=65)}) == 65
    meet = ODD["host_disk names that meet"][0].split(b"\n")
    assert meet[9].split(b",")[1:3] == [b"hm_1", b""] and meet[10].split(b",")[1:3] == [b"hm", b"1_"]


@pytest.mark.parametrize("comp", ["gzip", "xz", "bz2"])
def test_compressed(monkeypatch, comp):
    import bz2
    import lzma
    data = _data(_msr_lines(3000))
    packed = {"gzip": gzip.compress, "xz": lzma.compress, "bz2": bz2.compress}[comp](data)
    opener = {"gzip": lambda b: gzip.GzipFile(fileobj=io.BytesIO(b)), "xz": lambda b: lzma.LZMAFile(io.BytesIO(b)),
              "bz2": lambda b: bz2.BZ2File(io.BytesIO(b))}[comp]
    st = _same(_src(lambda: opener(packed)), monkeypatch)
    assert st.kernel_blocks >= 1 and st.arrow_blocks == 0
    cut = packed[: len(packed) // 2]                     # damaged: both reject
    assert _rejects(_src(lambda: opener(cut)), monkeypatch)
    _same(_src(lambda: opener(cut)), monkeypatch)


def test_volume_cap(monkeypatch):
    data = _data(_msr_lines(300, vols=40))
    for cap in (39, 40):
        _same(_src(data, max_volumes=cap), monkeypatch)
    assert _rejects(_src(data, max_volumes=39), monkeypatch)
    assert not _rejects(_src(data, max_volumes=40), monkeypatch)


def test_names_merge_after_strip(monkeypatch):
    """' hm' and 'hm' are one volume (names are stripped), numbered where the first of them appears."""
    lines = _msr_lines(30, vols=2)
    lines[3] = lines[3].replace(b",hm,", b", hm,")
    lines[20] = lines[20].replace(b",hm,", b",hm ,")
    st = _same(_src(_data(lines)), monkeypatch)
    assert list(st.volumes) == ["hm_0", "hm_1"] and st.kernel_blocks >= 1 and st.arrow_blocks == 0


# -- block boundaries -------------------------------------------------------------------------------------

@pytest.mark.parametrize("end", [b"\n", b"\r\n"])
@pytest.mark.parametrize("final", [True, False])
def test_every_block_boundary(monkeypatch, end, final):
    """Blocks of 1 to 130 bytes: every line is cut at every place, \\r\\n included."""
    data = _data(_msr_lines(12, vols=4), end)
    data = data if final else data[:-len(end)]
    for block in range(1, 131):
        monkeypatch.setattr(csvscan, "BLOCK", block)
        st = _same(_src(data), monkeypatch)
        assert st.kernel_blocks >= 1 and st.arrow_blocks == 0, block
        hd = _same(_src(HEADER + data, MSR, 1), monkeypatch)
        assert hd.kernel_blocks >= 1 and hd.arrow_blocks == 0 and hd.header_lines == 1, block


def test_a_refused_block_mid_file_goes_to_pyarrow_alone(monkeypatch):
    """One block the kernel refuses (an op pyarrow reads as a write): that block, and only it, by pyarrow."""
    monkeypatch.setattr(csvscan, "BLOCK", 4096)
    lines = _msr_lines(1000, vols=7)
    lines[500] = lines[500].replace(b",Read,", b",WRITE ,").replace(b",Write,", b",WRITE ,")
    data = _data(lines)
    st = _same(_src(data), monkeypatch)
    trace: list[str] = []
    _run(_src(data), True, monkeypatch, trace=trace)
    assert st.arrow_blocks == 1 and st.kernel_blocks >= 10 and st.rows == 1000
    a = trace.index("A")
    assert trace.count("A") == 1 and 3 < a < len(trace) - 3, trace       # kernel blocks before and after it


def test_long_lines(monkeypatch):
    """A line of 1 MiB or more rejects (pyarrow's own answer depends on where its blocks fall)."""
    monkeypatch.setattr(csvscan, "BLOCK", 1 << 16)
    big = _field(5, 6, b"1" * (5 << 19))                  # 2.5 MiB: pyarrow rejects it wherever it falls
    _same(_src(big), monkeypatch)
    assert _rejects(_src(big), monkeypatch)
    host = _field(5, 1, b"h" * ((1 << 20) + 5))
    assert _rejects(_src(host), monkeypatch)
    ok = _field(5, 1, b"h" * 5000)                        # a long field well under the cap: the kernel reads it
    st = _same(_src(ok), monkeypatch)
    assert st.kernel_blocks >= 1 and st.arrow_blocks == 0


@pytest.mark.parametrize("block", [1 << 16, 4 << 20])                # the line across blocks, or in one
@pytest.mark.parametrize("end", [b"\n", b"\r\n"])
def test_the_line_cap(monkeypatch, end, block):
    """A line of LINE_CAP - 1 bytes (its end aside) is read; one of LINE_CAP rejects, in the kernel's blocks
    and in those it hands to pyarrow."""
    monkeypatch.setattr(csvscan, "BLOCK", block)
    pad = len(BASE[5]) - len(BASE[5].split(b",")[6])
    for extra, ok in ((csvscan.LINE_CAP - 1 - pad, True), (csvscan.LINE_CAP - pad, False)):
        for odd in (b"", b" "):                          # " ": a field the kernel refuses, so pyarrow's block
            lines = list(BASE)
            f = lines[5].split(b",")
            f[6] = b"7" * (extra - len(odd))
            f[5] = odd + f[5]
            lines[5] = b",".join(f)
            assert len(lines[5]) == extra + pad
            src = _src(_data(lines, end))
            if ok and not odd:
                st = _same(src, monkeypatch)
                assert st.kernel_blocks >= 1 and st.arrow_blocks == 0
            elif ok:
                assert _same(src, monkeypatch).arrow_blocks == 1
            else:
                assert _rejects(src, monkeypatch)


def test_rows_ended_by_bare_cr_past_the_cap(monkeypatch):
    """2 MiB of rows ended by \r alone after some \n lines: no \n for a while, yet short rows; pyarrow reads on."""
    monkeypatch.setattr(csvscan, "BLOCK", 1 << 16)
    lines = _msr_lines(50000)
    data = _data(lines[:100]) + _data(lines[100:], b"\r")
    st = _same(_src(data), monkeypatch)
    assert st.kernel_blocks >= 1 and st.arrow_blocks == 1 and st.rows == 50000


# -- the other layouts ------------------------------------------------------------------------------------

def _alibaba(n, vols=3, seed=2):
    rng = random.Random(seed)
    return [b"%d,%s,%d,%d,%d" % (rng.randrange(vols), rng.choice([b"R", b"W"]), 4096 * rng.randrange(10**6),
                                 4096 * rng.randrange(1, 32), 1577808144007256 + i) for i in range(n)]


def _tencent(n, vols=3, seed=3):
    rng = random.Random(seed)
    return [b"%d,%d,%d,%d,%d" % (1538323200 + i // 10, rng.randrange(10**9), 8 * rng.randrange(1, 32),
                                 rng.randrange(2), 1000 + rng.randrange(vols)) for i in range(n)]


def _cloudphysics(n, seed=4):
    rng = random.Random(seed)
    return [b"1,%d,%s,%d,%d" % (5633898 + i, rng.choice([b"28", b"2a", b"88", b"aa", b"0a"]),
                                512 * rng.randrange(1, 64), rng.randrange(10**8)) for i in range(n)]


LAYOUTS = {
    "alibaba": (fastread.layout("alibaba", None, None, ""), _alibaba),
    "tencent": (fastread.layout("tencent", None, None, ""), _tencent),
    "cloudphysics": (fastread.layout("cloudphysics", None, None, ""), _cloudphysics),
}


@pytest.mark.parametrize("fmt", list(LAYOUTS))
def test_other_layouts(monkeypatch, fmt):
    lay, gen = LAYOUTS[fmt]
    lines = gen(500)
    for data, how in [(_data(lines), "K"), (_data(lines, b"\r\n"), "K"), (_data(lines)[:-1], "K"),
                      (_data(lines[:50]) + lines[50].upper() + b"\n" + _data(lines[51:]), None),
                      (_data(lines[:50]) + lines[50].replace(b",", b", ", 1) + b"\n" + _data(lines[51:]), None),
                      (_data(lines[:50]) + lines[50] + b",9\n" + _data(lines[51:]), "R"),
                      (_data(lines[:50]) + b"\n" + _data(lines[51:]), "R")]:
        st = _same(_src(data, lay), monkeypatch)
        if how == "K":
            assert st.kernel_blocks >= 1 and st.arrow_blocks == 0
        elif how == "R":
            assert _rejects(_src(data, lay), monkeypatch)


def test_alibaba_many_volumes_and_case(monkeypatch):
    lay = LAYOUTS["alibaba"][0]
    lines = _alibaba(20000, vols=3000)
    st = _same(_src(_data(lines), lay), monkeypatch)
    assert st.kernel_blocks >= 1 and st.arrow_blocks == 0
    assert list(st.volumes) == list(dict.fromkeys(ln.split(b",")[0].decode() for ln in lines))
    lower = _data([ln.replace(b",R,", b",r,").replace(b",W,", b",w,") for ln in _alibaba(100)])
    st = _same(_src(lower, lay), monkeypatch)
    assert st.kernel_blocks >= 1 and st.arrow_blocks == 0
    assert csvscan.plan(lay).tok_len.tolist() == [1, 1, 1, 1]


@pytest.mark.parametrize("fmt,col", [("cloudphysics", 4), ("tencent", 1), ("tencent", 2), ("alibaba", 2)])
def test_numbers_past_the_caps(monkeypatch, fmt, col):
    """Offsets and lengths past the caps, some that would overflow int64 once scaled by 512: rejected."""
    lay, gen = LAYOUTS[fmt]
    lines = gen(50)
    scaled = fmt != "alibaba"                            # (alibaba's offsets are bytes)
    for big in [b"9" * 18, b"%d" % (MAX_ADDR + 1)] + [b"%d" % (MAX_ADDR // 512 + 1)] * scaled:
        f = lines[20].split(b",")
        f[col] = big
        src = _src(_data(lines[:20] + [b",".join(f)] + lines[21:]), lay)
        _same(src, monkeypatch)
        assert _rejects(src, monkeypatch)


@pytest.mark.parametrize("block", [64, 4096, 4 << 20])
def test_bom_only_at_the_start(monkeypatch, block):
    """pyarrow drops a UTF-8 BOM that starts its input: the file's, not a block's (alibaba's first column is
    a name, so a BOM there is part of a volume's name)."""
    monkeypatch.setattr(csvscan, "BLOCK", block)
    lay = LAYOUTS["alibaba"][0]
    lines = _alibaba(300)
    bom = b"\xef\xbb\xbf"
    for data, header in [(bom + _data(lines), 0), (_data(lines[:150]) + bom + _data(lines[150:]), 0),
                         (b"device,op,offset,length,time\n" + bom + _data(lines), 1)]:
        st = _same(_src(data, lay, header), monkeypatch)
        assert st.arrow_blocks >= 1 and st.rows == 300
        assert any(v.startswith("\ufeff") for v in st.volumes) == (data[:3] != bom)


def test_tencent_op_codes(monkeypatch):
    lay = LAYOUTS["tencent"][0]
    lines = _tencent(100)
    for op, how in [(b"2", "R"), (b"00", "A"), (b"1 ", "A")]:
        f = lines[40].split(b",")
        f[3] = op
        data = _data(lines[:40] + [b",".join(f)] + lines[41:])
        st = _same(_src(data, lay), monkeypatch)
        if how == "A":
            assert st.arrow_blocks == 1
        else:
            assert _rejects(_src(data, lay), monkeypatch)


@pytest.mark.parametrize("spec,delim", [("time=1,volume=2,op=3,offset=4,length=5,delimiter=semicolon", b";"),
                                        ("op=4,offset=2,length=3,volume=1,time=5,delimiter=tab", b"\t"),
                                        ("op=1,offset=2,length=3,delimiter=pipe", b"|"),
                                        ("op=1,offset=2,length=3,time=4,delimiter=comma", b",")])
def test_csv_columns(monkeypatch, spec, delim):
    cols = traces.parse_columns(spec)
    idx = csv_index(cols, None, Path("t.csv"))
    rng = random.Random(5)
    lines = []
    for i in range(400):
        f = [b"x%d" % j for j in range(max(idx.values()) + 2)]
        vals = {"time": b"%d" % (1000 + i), "volume": b"lun%d" % rng.randrange(4),
                "op": rng.choice([b"r", b"W", b"read", b"Write", b"rd", b"wr"]),
                "offset": b"%d" % rng.randrange(10**7), "length": b"%d" % rng.randrange(1, 256)}
        for k, v in idx.items():
            f[v] = vals[k]
        lines.append(delim.join(f))
    lay = fastread.layout("csv", cols, idx, lines[0].decode())
    assert csvscan.plan(lay) is not None
    st = _same(_src(_data(lines), lay), monkeypatch)
    assert st.kernel_blocks >= 1 and st.arrow_blocks == 0 and st.rows == 400
    for i, new in [(100, b"R "), (101, b"READ"), (102, b"Rd"), (103, b"write!")]:
        odd = list(lines)
        f = odd[i].split(delim)
        f[idx["op"]] = new
        odd[i] = delim.join(f)
        _same(_src(_data(odd), lay), monkeypatch)


def test_plan_leaves_to_pyarrow():
    lay = fastread.layout("msr", None, None, "")
    assert csvscan.plan(lay) is not None
    for change in (dict(float_time=True), dict(delimiter="ab"), dict(delimiter="x"), dict(delimiter="5"),
                   dict(offset=3), dict(volume=(1, 2, 6)), dict(tokens=()), dict(tokens=("ReadWrite!",)),
                   dict(length=9)):
        other = fastread.Layout(**{**lay.__dict__, **change})
        assert csvscan.plan(other) is None, change


# -- random files -----------------------------------------------------------------------------------------

_PIECES = [b"Read", b"Write", b"read", b"WRITE", b"Flush", b"", b" ", b"0", b"7", b"4096", b"+4", b"-4", b"0x1",
           b"12345678901234567", b"123456789012345678", b"1234567890123456789", b"1.5", b"hm", b"h\xc3\xb4", b"\xff",
           b"\t", b"\r", b'"', b"\x00"]


def _random_case(rng: random.Random) -> tuple[bytes, int, int]:
    """(file, header lines, block size): MSR lines, a few fields replaced by odd pieces, \\n or \\r\\n ends,
    perhaps a header and no final newline."""
    n = rng.randint(1, 60)
    lines = _msr_lines(n, vols=rng.randint(1, 6), seed=rng.randrange(10**6), mixed=True)
    for _ in range(rng.choice([0, 0, 1, 2, 3])):
        i = rng.randrange(n)
        f = lines[i].split(b",")
        f[rng.randrange(7)] = rng.choice(_PIECES)
        lines[i] = b",".join(f)
    end = rng.choice([b"\n", b"\r\n"])
    body = _data(lines, end)
    if rng.random() < 0.3:
        body = body[:-len(end)]
    header = rng.random() < 0.3
    return (HEADER if header else b"") + body, int(header), rng.choice([7, 64, 100, 333, 4096, 1 << 22])


@pytest.mark.parametrize("seed", range(100))
def test_random_msr_files(monkeypatch, seed):
    """Random cases, cut at random block sizes: always pyarrow's answer."""
    data, header, block = _random_case(random.Random(seed))
    monkeypatch.setattr(csvscan, "BLOCK", block)
    _same(_src(data, MSR, header), monkeypatch)


@pytest.mark.slow                     # a property test (Hypothesis): `make test` runs it, `make test-fast` not
@settings(max_examples=500, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32))
def test_random_msr_files_more(monkeypatch, seed):
    data, header, block = _random_case(random.Random(seed))
    monkeypatch.setattr(csvscan, "BLOCK", block)
    _same(_src(data, MSR, header), monkeypatch)
