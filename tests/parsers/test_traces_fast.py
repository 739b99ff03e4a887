"""The vectorised reader (sim/trace/fastread.py) gives exactly the line reader's Trace on every committed trace,
and hands back to the line reader (today's messages) on anything it cannot vouch for."""

from __future__ import annotations

import dataclasses
import gzip
from pathlib import Path

import numpy as np
import pytest

from dbtier.core.errors import DbtierError
from dbtier.sim.trace import limits as tracelimits, reader as tracereader, traces
from dbtier.sim.trace.chunks import chunks_of

TRACES = Path(__file__).resolve().parent.parent / "data" / "traces"
CUSTOM = "time=1,volume=2,op=3,offset=4,length=5,time_unit=ms,offset_unit=sectors,length_unit=sectors,delimiter=semicolon"
CASES = [(p.name, None) for p in sorted(TRACES.iterdir()) if p.name != "README.md" and p.name != "custom-ms.csv"]
CASES.append(("custom-ms.csv", CUSTOM))
CASES.append(("msr-hm1.csv", "time=1,op=4,offset=5,length=6,volume=2,time_unit=filetime"))


def _slow(monkeypatch, *a, **k):
    with monkeypatch.context() as m:
        m.setattr(tracereader, "_read_fast", lambda *a, **k: None)
        return traces.read_trace(*a, **k)


def _same(a: traces.Trace, b: traces.Trace) -> None:
    for f in dataclasses.fields(traces.Trace):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and np.array_equal(x, y), f.name
        else:
            assert x == y, f.name


@pytest.mark.parametrize("name,columns", CASES)
def test_fast_equals_slow(monkeypatch, name, columns):
    path = TRACES / name
    _same(traces.read_trace(path, columns=columns), _slow(monkeypatch, path, columns=columns))


@pytest.mark.parametrize("name", ["msr-hm1.csv", "alibaba-block.csv", "tencent-cbs.csv", "cloudphysics-layout.csv",
                                  "cloudPhysicsIO.csv.xz", "policy-17.csv"])
def test_fast_path_taken(name):
    assert tracereader._read_fast(TRACES / name, "auto", None, False, None) is not None


@pytest.mark.parametrize("name,columns", [("custom-ms.csv", CUSTOM), ("msr-hm1.csv", "op=4,offset=5,length=6")])
def test_fast_path_taken_csv(name, columns):
    assert tracereader._read_fast(TRACES / name, "csv", traces.parse_columns(columns), False, None) is not None


def test_gzip_and_header(tmp_path, monkeypatch):
    src = (TRACES / "msr-hm1.csv").read_text()
    p = tmp_path / "t.csv.gz"
    p.write_bytes(gzip.compress(("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n" + src).encode()))
    fast = traces.read_trace(p)
    assert tracereader._read_fast(p, "auto", None, False, None) is not None
    assert fast.ignored == {"header": 1}
    _same(fast, _slow(monkeypatch, p))


@pytest.mark.parametrize("change,expect", [
    (lambda ls: ls[:3] + [""] + ls[3:], None),                                   # blank line: counted
    (lambda ls: ls[:3] + [ls[3].replace("Write", "Flush")] + ls[4:], ":4: malformed msr line"),
    (lambda ls: ls[:2] + [ls[2].replace(",4096,", ",0x10,")] + ls[3:], ":3: malformed msr line"),
    (lambda ls: ls[:2] + [ls[2].replace(",4096,", ",1.5,")] + ls[3:], ":3: malformed msr line"),
    (lambda ls: ls[:2] + [ls[2].replace(",4096,", ",0,")] + ls[3:], None),      # zero-length: noted
    (lambda ls: ls[:2] + [ls[2].replace(",4096,", ",2000000000,")] + ls[3:], ":3: malformed msr line"),
    (lambda ls: [ls[1], ls[0]] + ls[2:], ":2: time goes backwards"),
])
def test_hands_back_to_line_reader(tmp_path, monkeypatch, change, expect):
    lines = (TRACES / "msr-hm1.csv").read_text().splitlines()
    p = tmp_path / "t.csv"
    p.write_text("\n".join(change(lines)) + "\n")
    if expect is None:
        _same(traces.read_trace(p), _slow(monkeypatch, p))
    else:
        with pytest.raises(DbtierError, match=expect):
            traces.read_trace(p)


@pytest.mark.slow
def test_chunks_concatenate_to_read_trace():
    path = TRACES / "cloudPhysicsIO.csv.xz"
    whole = traces.read_trace(path)
    for size in (1, 997, 50_000, 10**9):
        got = list(traces.read_chunks(path, requests=size))
        assert [c.first_request for c in got] == list(range(0, len(whole), size))
        for k in ("time_s", "op", "offset_bytes", "length_bytes", "volume"):
            assert np.array_equal(np.concatenate([getattr(c, k) for c in got]), getattr(whole, k)), k
    ref = list(chunks_of(whole, 997))
    assert len(ref) == len(list(traces.read_chunks(path, requests=997)))


def test_caps_agree():
    from dbtier.sim.trace import batch as tracebatch
    for k in ("READ", "WRITE", "SECTOR", "MAX_REQUEST_BYTES", "MAX_ADDRESS_BYTES", "MAX_VOLUMES"):
        assert getattr(tracebatch, k) == getattr(traces, k), k
    assert tracebatch.T_LIM_TICKS == tracelimits.T_LIM


def _big_msr(tmp_path, n: int, bad_at: int | None = None, back_at: int | None = None) -> Path:
    """n MSR lines (a few MiB: several of the fast reader's blocks), one malformed or out of order."""
    rows = []
    for i in range(n):
        t = 128166372003061629 + 1000 * i
        if back_at is not None and i == back_at:
            t -= 5000
        rows.append(f"{t},hm,{i % 3},{'Read' if i % 4 else 'Write'},{(i * 7919 % 100000) * 4096},"
                    f"{4096 * (1 + i % 4)},100")
    if bad_at is not None:
        rows[bad_at] = rows[bad_at].replace("Read", "Erase").replace("Write", "Erase")
    p = tmp_path / "big.csv"
    p.write_text("\n".join(rows) + "\n")
    return p


@pytest.mark.slow
def test_sort_and_skip_bad_through_fast_and_slow(tmp_path, monkeypatch):
    p = _big_msr(tmp_path, 60_000, back_at=45_000)
    with pytest.raises(DbtierError, match=":45001: time goes backwards"):
        traces.read_trace(p)
    _same(traces.read_trace(p, sort=True), _slow(monkeypatch, p, sort=True))
    q = _big_msr(tmp_path, 60_000, bad_at=50_000)
    with pytest.raises(DbtierError, match=":50001: malformed msr line"):
        traces.read_trace(q)
    _same(traces.read_trace(q, skip_bad=True), _slow(monkeypatch, q, skip_bad=True))


@pytest.mark.slow
def test_chunks_fall_back_mid_file(tmp_path):
    """A malformed line after the first chunks were yielded: the rest comes from the line reader, in order."""
    q = _big_msr(tmp_path, 60_000, bad_at=50_000)
    whole = traces.read_trace(q, skip_bad=True)
    got = list(traces.read_chunks(q, requests=4096, skip_bad=True))
    assert got[0].first_request == 0 and sum(len(c) for c in got) == len(whole)
    for k in ("time_s", "op", "offset_bytes", "length_bytes", "volume"):
        assert np.array_equal(np.concatenate([getattr(c, k) for c in got]), getattr(whole, k)), k
    assert [c.first_request for c in got] == list(np.cumsum([0] + [len(c) for c in got[:-1]]))
    with pytest.raises(DbtierError, match=":50001: malformed msr line"):
        list(traces.read_chunks(q, requests=4096))


@pytest.mark.parametrize("name,columns", CASES + [("custom-ms.csv", CUSTOM.replace("time=1,", ""))])
def test_chunks_meta_equals_read_trace(name, columns):
    path = TRACES / name
    whole = traces.read_trace(path, columns=columns)
    chunks = traces.read_chunks(path, columns=columns, requests=7)
    got = list(chunks)
    for k in ("time_s", "op", "offset_bytes", "length_bytes", "volume"):
        a = np.concatenate([getattr(c, k) for c in got])
        assert a.dtype == getattr(whole, k).dtype and np.array_equal(a, getattr(whole, k)), k
    meta = chunks.meta
    assert meta is not None and len(meta) == 0
    for f in dataclasses.fields(traces.Trace):
        if not isinstance(getattr(whole, f.name), np.ndarray):
            assert getattr(meta, f.name) == getattr(whole, f.name), f.name


def test_chunks_refuse_what_read_trace_refuses():
    with pytest.raises(DbtierError, match="--columns maps a CSV, but --format is msr"):
        traces.read_chunks(TRACES / "msr-hm1.csv", "msr", "op=4,offset=5,length=6")
    with pytest.raises(DbtierError, match="--format csv needs --columns"):
        traces.read_chunks(TRACES / "msr-hm1.csv", "csv")
