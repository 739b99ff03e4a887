"""Property tests (Hypothesis) for every `dbtier simulate` trace reader.

Valid traces are generated from a list of known requests in each format's own layout (MSR, CloudPhysics,
Alibaba, Tencent, blkparse, fio v2 and v3, and CSV under a random `--columns` map), sometimes compressed
(gzip, bz2, xz), with CRLF ends, headers, comments and blank lines. The reader must give back exactly the
requests written (op, offset and length in bytes, volume, time in seconds), and a small LRU cache over
them must count exactly the hits of a tiny reference LRU written here (an OrderedDict, write-around:
a write drops the blocks it touches). Changing one request's offset must change that request, and only
it, and the hits as the reference says.

Malformed traces are mutations of valid ones (junk, absurd and non-finite numbers, cut lines, swapped
lines, bytes that are not UTF-8, long lines, damaged compressed data) and malformed `--columns` specs are
generated from their grammar: the reader either returns a trace that keeps every invariant of `Trace`
or raises one DbtierError naming the file (or `--columns`), never another exception. Every read runs
under a timer (SIGALRM), so a hang fails the test instead of stalling the suite.
"""

from __future__ import annotations

import bz2
import contextlib
import gzip
import lzma
import math
import signal
from collections import OrderedDict
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dbtier.core.errors import DbtierError
from dbtier.sim.cache import replay as cache
from dbtier.sim.trace.traces import (MAX_ADDRESS_BYTES, MAX_REQUEST_BYTES, MAX_SPAN_S, MAX_VOLUMES, SECTOR, Trace,
                                     parse_columns, read_trace)

pytestmark = pytest.mark.slow  # property tests (Hypothesis): `make test` runs them, `make test-fast` does not

BS = 4096                       # cache block of the LRU checks: 8 sectors
READ_TIMEOUT_S = 20.0           # far above any read here (milliseconds); only a hang reaches it
SETTINGS = settings(max_examples=80, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                           HealthCheck.data_too_large])
FORMATS = ("msr", "cloudphysics", "alibaba", "tencent", "blkparse", "fio3", "fio2", "csv")
CASES_RUN = {"count": 0, "refused": 0, "read": 0}   # generated reads, printed at the end (pytest -s)


class ReadTimeout(Exception):
    pass


@contextlib.contextmanager
def time_limit(seconds: float = READ_TIMEOUT_S):
    """Raise ReadTimeout in the reader if it runs longer than `seconds` (a hang fails the test)."""
    def on_alarm(signum, frame):
        raise ReadTimeout(f"reader still running after {seconds} s")
    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def read(path: Path, **kw) -> Trace:
    CASES_RUN["count"] += 1
    with time_limit():
        return read_trace(path, **kw)


# -- the model: requests in sectors, a clock in ticks ------------------------------------------------

@dataclass(frozen=True)
class Req:
    dt: int          # ticks after the previous request (>= 0: the file is in time order)
    op: int          # 0 read, 1 write
    off_sec: int     # offset in 512-byte sectors
    len_sec: int     # length in sectors (>= 1)
    vol: int         # index into the format's volume names


req_st = st.builds(Req, dt=st.integers(0, 3), op=st.integers(0, 1), off_sec=st.integers(0, 96),
                   len_sec=st.integers(1, 24), vol=st.integers(0, 2))
reqs_st = st.lists(req_st, min_size=1, max_size=30)


def ticks(reqs: list[Req], base: int, step: int) -> list[int]:
    out, t = [], base
    for r in reqs:
        t += r.dt * step
        out.append(t)
    return out


def reference_lru(reqs: list[Req], capacity: int) -> dict[str, int]:
    """Write-around LRU over (volume, 4 KiB block), by hand: a read hit moves the block to the front, a
    read miss admits it (evicting the least recent), a write drops the cached blocks it touches."""
    lru: OrderedDict = OrderedDict()
    c = {"read_blocks": 0, "read_block_hits": 0, "read_reqs": 0, "read_req_hits": 0, "write_blocks": 0}
    for r in reqs:
        off, ln = r.off_sec * SECTOR, r.len_sec * SECTOR
        blocks = [(r.vol, b) for b in range(off // BS, (off + ln - 1) // BS + 1)]
        if r.op == 1:
            c["write_blocks"] += len(blocks)
            for k in blocks:
                lru.pop(k, None)
            continue
        c["read_reqs"] += 1
        c["read_blocks"] += len(blocks)
        hits = 0
        for k in blocks:
            if k in lru:
                hits += 1
                lru.move_to_end(k)
            else:
                if len(lru) >= capacity:
                    lru.popitem(last=False)
                lru[k] = True
        c["read_block_hits"] += hits
        c["read_req_hits"] += hits == len(blocks)
    return c


# -- rendering each format ----------------------------------------------------------------------------

@dataclass
class Rendered:
    lines: list[str]          # text lines without ends
    fmt: str                  # what read_trace must report
    read_fmt: str             # what to pass as fmt ("auto" or the name)
    columns: str | None
    scale: float              # seconds per tick
    times: list[int | float]
    vol_names: list[str]      # volume name of model volume index
    timed: bool = True


MSR_HOSTS = ("hm_1", "src1_0", "web_2")


def render(fmt: str, reqs: list[Req], data: st.DataObject) -> Rendered:
    draw = data.draw
    auto = draw(st.booleans(), label="detect the format")
    if fmt == "msr":
        tt = ticks(reqs, 128166372003061629, draw(st.sampled_from([1, 3500, 10_000_000])))
        lines = ["Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime"] if draw(st.booleans()) else []
        for r, t in zip(reqs, tt):
            host, disk = MSR_HOSTS[r.vol].rsplit("_", 1)
            op = draw(st.sampled_from(["Read", "read", "READ"] if r.op == 0 else ["Write", "write"]))
            resp = draw(st.integers(0, 99999))
            lines.append(f"{t},{host},{disk},{op},{r.off_sec * SECTOR},{r.len_sec * SECTOR},{resp}")
        return Rendered(lines, "msr", "auto" if auto else "msr", None, 1e-7, tt, list(MSR_HOSTS))
    if fmt == "cloudphysics":
        tt = ticks(reqs, 5633898, 1)
        lines = ["version,time,op,size,lbn"] if draw(st.booleans()) else []
        for r, t in zip(reqs, tt):
            code = draw(st.sampled_from(["28", "88", "a8", "08"] if r.op == 0 else ["2a", "2A", "8a", "aa", "0a"]))
            lines.append(f"1,{t},{code},{r.len_sec * SECTOR},{r.off_sec}")
        if auto and lines[0][2:].split(",")[1] not in ("28", "2a", "2A", "op"):
            auto = False          # detection looks for op 28/2a on the first line (other opcodes: --format)
        return Rendered(lines, "cloudphysics", "auto" if auto else "cloudphysics", None, 1.0, tt, ["0"])
    if fmt == "alibaba":
        tt = ticks(reqs, 1577808144007256, draw(st.sampled_from([1, 250, 1000])))
        names = ["419", "37", "8"]
        lines = ["device_id,opcode,offset,length,timestamp"] if draw(st.booleans()) else []
        for r, t in zip(reqs, tt):
            lines.append(f"{names[r.vol]},{'RW'[r.op]},{r.off_sec * SECTOR},{r.len_sec * SECTOR},{t}")
        return Rendered(lines, "alibaba", "auto" if auto else "alibaba", None, 1e-6, tt, names)
    if fmt == "tencent":
        tt = ticks(reqs, 1538323200, 1)
        names = ["1063", "2471", "5"]
        lines = ["Timestamp,Offset,Size,IOType,VolumeID"] if draw(st.booleans()) else []
        for r, t in zip(reqs, tt):
            lines.append(f"{t},{r.off_sec},{r.len_sec},{r.op},{names[r.vol]}")
        return Rendered(lines, "tencent", "auto" if auto else "tencent", None, 1.0, tt, names)
    if fmt == "blkparse":
        tt = ticks(reqs, draw(st.integers(0, 10**12)), draw(st.sampled_from([1, 812, 1000])))
        devs = ["8,16", "8,0", "259,1"]
        lines = []
        for seq, (r, t) in enumerate(zip(reqs, tt), 1):
            rwbs = draw(st.sampled_from(["R", "RS", "RA", "RM"] if r.op == 0 else ["W", "WS", "WM", "WFS"]))
            stamp = f"{t // 10**9}.{t % 10**9:09d}"
            q = (f"{devs[r.vol]:>5} {seq % 4:>3} {seq:>8} {stamp:>14} {4162:>5}  Q {rwbs:>3} "
                 f"{r.off_sec} + {r.len_sec} [db]")
            lines.append(q)
            if draw(st.booleans()):      # the same I/O issued and completed: D and C events are not counted
                lines.append(q.replace("  Q ", "  D ").replace("[db]", "[kworker]"))
                lines.append(q.replace("  Q ", "  C ").replace(" [db]", " [0]"))
            if draw(st.booleans()):
                lines.append(f"{devs[r.vol]:>5} {seq % 4:>3} {0:>8} {stamp:>14} {0:>5}  m   N cfq4162S insert")
        if draw(st.booleans()):
            lines += ["CPU0 (sdb):", " Reads Queued:           3,      140KiB	 Writes Queued:           3,       40KiB",
                      "Total (sdb):", "Throughput (R/W): 31019KiB/s / 8862KiB/s", "Events (sdb): 57 entries",
                      "Skips: 0 forward (0 -   0.0%)"]
        return Rendered(lines, "blkparse", "auto" if auto else "blkparse", None, 1e-9, tt, devs)
    if fmt == "fio3":
        tt = ticks(reqs, draw(st.integers(0, 500)), draw(st.sampled_from([1, 37, 1000])))
        files = ["/data/a.bin", "/data/b.bin", "/tmp/c"]
        lines = ["fio version 3 iolog"] + [f"{tt[0]} {f} add" for f in files] + [f"{tt[0]} {f} open" for f in files]
        for r, t in zip(reqs, tt):
            lines.append(f"{t} {files[r.vol]} {('read', 'write')[r.op]} {r.off_sec * SECTOR} {r.len_sec * SECTOR}")
            if draw(st.booleans()):
                lines.append(f"{t} {files[r.vol]} sync 0 0")
        lines += [f"{tt[-1]} {f} close" for f in files]
        return Rendered(lines, "fio", "auto" if auto else "fio", None, 1e-6, tt, files)
    if fmt == "fio2":
        step = draw(st.sampled_from([100, 250]))
        files = ["/dev/sdb", "/dev/sdc", "/dev/nvme0n1"]
        lines = ["fio version 2 iolog"] + [f"{f} add" for f in files] + [f"{f} open" for f in files]
        waited, tt = 0, []
        for i, r in enumerate(reqs):
            if i and r.dt:
                lines.append(f"{files[0]} wait {r.dt * step} 0")
                waited += r.dt * step
            tt.append(waited)
            lines.append(f"{files[r.vol]} {('read', 'write')[r.op]} {r.off_sec * SECTOR} {r.len_sec * SECTOR}")
        timed = any(r.dt for r in reqs[1:])
        return Rendered(lines, "fio", "auto" if auto else "fio", None, 1e-6, tt, files, timed)
    assert fmt == "csv"
    return render_csv(reqs, data)


UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "filetime": 1e-7}
DELIMS = {"comma": ",", "tab": "\t", "semicolon": ";", "pipe": "|", "space": " "}
SIZE_UNITS = {"bytes": 1, "b": 1, "sectors": 512, "sector": 512, "512": 512, "256": 256, "1": 1}


def render_csv(reqs: list[Req], data: st.DataObject) -> Rendered:
    draw = data.draw
    fields = ["op", "offset", "length"]
    has_time = draw(st.booleans(), label="time column")
    has_vol = draw(st.booleans(), label="volume column")
    fields += ["time"] * has_time + ["volume"] * has_vol
    ncols = len(fields) + draw(st.integers(0, 3), label="junk columns")
    order = draw(st.permutations(range(ncols)), label="layout")
    col_of = {f: order[i] for i, f in enumerate(fields)}
    delim_name = draw(st.sampled_from(sorted(DELIMS)))
    d = DELIMS[delim_name]
    header = draw(st.sampled_from(["yes", "no", "auto", None]))
    with_header = header in ("yes", "auto", None) and draw(st.booleans()) or header == "yes"
    names = [f"c{i}x" for i in range(ncols)]
    by_name = with_header and draw(st.booleans())
    ref = {f: (names[c] if by_name else str(c + 1)) for f, c in col_of.items()}
    read_tok = draw(st.sampled_from([None, ("rd", "get"), ("r",), ("0",)]))
    write_tok = draw(st.sampled_from([None, ("wr", "put"), ("w",), ("1",)]))
    if read_tok is None:
        read_tok = ("r", "read", "rd")
    if write_tok is None:
        write_tok = ("w", "write", "wr")
    if set(read_tok) & set(write_tok):
        write_tok = ("wx",)
    unit = draw(st.sampled_from(sorted(UNITS)))
    off_unit = draw(st.sampled_from(sorted(SIZE_UNITS)))
    len_unit = draw(st.sampled_from(sorted(SIZE_UNITS)))
    float_time = unit == "s" and draw(st.booleans())
    spec = [f"{k}={ref[k]}" for k in fields]
    if read_tok != ("r", "read", "rd") or draw(st.booleans()):
        spec.append("read=" + "|".join(read_tok))
    if write_tok != ("w", "write", "wr") or draw(st.booleans()):
        spec.append("write=" + "|".join(write_tok))
    spec += [f"time_unit={unit}", f"offset_unit={off_unit}", f"length_unit={len_unit}",
             f"delimiter={draw(st.sampled_from([k for k, v in DELIMS.items() if v == d]))}"]
    if header is not None:
        spec.append(f"header={header}")
    spec = draw(st.permutations(spec))
    tt: list[int | float] = ticks(reqs, draw(st.integers(0, 10**6)), draw(st.sampled_from([1, 7, 1000])))
    if float_time:
        tt = [t / 4 for t in tt]            # quarters of a second: exact in binary and in text
    vols = ["lunA", "lunB", "lunC"]
    lines = [d.join(names)] if with_header else []
    pad = "" if d == " " else draw(st.sampled_from(["", " "]))
    for r, t in zip(reqs, tt):
        row = [f"j{k}" for k in range(ncols)]
        tok = draw(st.sampled_from(read_tok if r.op == 0 else write_tok))
        row[col_of["op"]] = draw(st.sampled_from([tok, tok.upper()]))
        row[col_of["offset"]] = f"{pad}{r.off_sec * SECTOR // SIZE_UNITS[off_unit]}{pad}"
        row[col_of["length"]] = f"{pad}{r.len_sec * SECTOR // SIZE_UNITS[len_unit]}"
        if has_time:
            row[col_of["time"]] = f"{t:.2f}" if float_time else str(t)
        if has_vol:
            row[col_of["volume"]] = vols[r.vol]
        lines.append(d.join(row))
    return Rendered(lines, "csv", "csv", ",".join(spec), UNITS[unit], tt, vols if has_vol else ["0"] * 3, has_time)


def write(path: Path, r: Rendered, data: st.DataObject) -> Path:
    """The lines as a file: LF or CRLF, comments and blank lines after the first line, maybe compressed."""
    draw = data.draw
    lines = list(r.lines)
    if r.fmt != "csv" and len(lines) > 1 and draw(st.booleans(), label="comments"):
        lines.insert(draw(st.integers(1, len(lines) - 1)), "# a comment line")
    if len(lines) > 1 and draw(st.booleans(), label="blank line"):
        lines.insert(draw(st.integers(1, len(lines) - 1)), "")
    if draw(st.booleans(), label="leading blank line") and r.fmt != "csv":
        lines.insert(0, "")
    end = draw(st.sampled_from(["\n", "\r\n"]))
    text = end.join(lines) + (end if draw(st.booleans(), label="final newline") else "")
    raw = text.encode()
    comp = draw(st.sampled_from(["", ".gz", ".bz2", ".xz"]), label="compression")
    raw = {"": lambda b: b, ".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}[comp](raw)
    p = path.with_name(path.name + comp)
    p.write_bytes(raw)
    return p


def model_volumes(r: Rendered, reqs: list[Req]) -> list[Req]:
    """The volume each request ends in: formats with one address space put every request on volume 0."""
    if r.fmt == "cloudphysics" or (r.fmt == "csv" and len(set(r.vol_names)) == 1):
        return [replace(q, vol=0) for q in reqs]
    return reqs


def check_matches(t: Trace, r: Rendered, reqs: list[Req]) -> None:
    """The trace read holds exactly the requests generated."""
    assert t.format == r.fmt
    assert len(t) == len(reqs)
    assert list(t.op) == [q.op for q in reqs]
    assert list(t.offset_bytes) == [q.off_sec * SECTOR for q in reqs]
    assert list(t.length_bytes) == [q.len_sec * SECTOR for q in reqs]
    assert [t.volumes[v] for v in t.volume] == [r.vol_names[q.vol] for q in reqs]
    s = t.summary()
    assert s["reads"] == sum(q.op == 0 for q in reqs) and s["writes"] == sum(q.op == 1 for q in reqs)
    assert s["bytes"] == sum(q.len_sec for q in reqs) * SECTOR
    assert t.timed == r.timed
    if r.timed:
        want = [(x - r.times[0]) * r.scale for x in r.times]
        assert t.time_s == pytest.approx(want, rel=1e-9, abs=1e-9)
        assert s["duration_s"] == pytest.approx(want[-1] - want[0], rel=1e-9, abs=1e-9)
    else:
        assert not t.time_s.any() and s["duration_s"] is None


def check_lru(t: Trace, reqs: list[Req], capacity: int) -> None:
    want = reference_lru(reqs, capacity)
    res = cache.run_cache(cache.prepare(t, BS), capacity, "lru", "write-around", record=False)
    got = {k: res.counters[k] for k in want}
    assert got == want


# -- valid traces: the right result ---------------------------------------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
@SETTINGS
@given(data=st.data(), reqs=reqs_st, capacity=st.integers(1, 8))
def test_valid_trace_reads_back_exactly(tmp_path, fmt, data, reqs, capacity):
    """Worked by the model: every generated request comes back in bytes and seconds, and the LRU hits
    equal the reference LRU's on the same requests."""
    r = render(fmt, reqs, data)
    reqs = model_volumes(r, reqs)
    p = write(tmp_path / f"trace-{fmt}", r, data)
    t = read(p, fmt=r.read_fmt, columns=r.columns)
    check_matches(t, r, reqs)
    check_lru(t, reqs, capacity)


@pytest.mark.parametrize("fmt", FORMATS)
@settings(SETTINGS, max_examples=25)
@given(data=st.data(), reqs=reqs_st, capacity=st.integers(1, 4))
def test_one_changed_offset_changes_that_request_and_the_hits(tmp_path, fmt, data, reqs, capacity):
    """Changing one request's offset changes that request only, and the hits exactly as the reference
    LRU on the changed requests says."""
    i = data.draw(st.integers(0, len(reqs) - 1), label="changed request")
    new_off = data.draw(st.integers(0, 96).filter(lambda o: o != reqs[i].off_sec), label="new offset")
    changed = list(reqs)
    changed[i] = replace(reqs[i], off_sec=new_off)
    rec = _Recorder(data)
    out = []
    for k, model in enumerate((reqs, changed)):
        # the same rendering choices for both: only the offset differs
        r = render(fmt, model, rec if k == 0 else _Replayer(rec.values))
        model = model_volumes(r, model)
        p = tmp_path / f"m{k}-{fmt}"
        p.write_text("\n".join(r.lines) + "\n")
        t = read(p, fmt=r.read_fmt, columns=r.columns)
        check_matches(t, r, model)
        check_lru(t, model, capacity)
        out.append((t, model))
    (a, ma), (b, mb) = out
    diff = np.flatnonzero(a.offset_bytes != b.offset_bytes)
    assert list(diff) == [i] and int(b.offset_bytes[i]) == new_off * SECTOR
    want_a, want_b = reference_lru(ma, capacity), reference_lru(mb, capacity)
    got_a = cache.run_cache(cache.prepare(a, BS), capacity, record=False).counters["read_block_hits"]
    got_b = cache.run_cache(cache.prepare(b, BS), capacity, record=False).counters["read_block_hits"]
    assert got_b - got_a == want_b["read_block_hits"] - want_a["read_block_hits"]


class _Recorder:
    """Draws through Hypothesis and keeps the values, so a second rendering can make the same choices."""

    def __init__(self, data):
        self.data, self.values = data, []

    def draw(self, strategy, label=None):
        v = self.data.draw(strategy, label=label)
        self.values.append(v)
        return v


class _Replayer:
    """The recorded choices again, in order (the renderers' draws never depend on offsets)."""

    def __init__(self, values):
        self.values = iter(values)

    def draw(self, strategy, label=None):
        return next(self.values)


# -- malformed traces: one DbtierError naming the file, or a trace that keeps every invariant ----------

JUNK = ["", "x", "-1", "-4096", "nan", "NaN", "inf", "-inf", "1e308", "1e400", "0", "0.5", "1_000", "١٢",
        "²", "０", str(2**50), str(2**63), str(2**64 + 1), str(MAX_REQUEST_BYTES + 1), "9" * 30, "9" * 5000,
        "Read", "Write", "R", "W", "28", "2a", "Q", "+", '"', "\t", ";", "|", "  ", "\x00", "\ufffd", "é"]


def check_invariants(t: Trace) -> None:
    """What every returned Trace keeps (traces.py's module docstring), and the cache can cut it."""
    n = len(t)
    assert n >= 1
    assert t.time_s.shape == t.op.shape == t.offset_bytes.shape == t.length_bytes.shape == t.volume.shape == (n,)
    assert np.isfinite(t.time_s).all() and t.time_s[0] == 0 and (np.diff(t.time_s) >= 0).all()
    assert (np.abs(t.time_s) <= MAX_SPAN_S).all()
    assert set(np.unique(t.op)) <= {0, 1}
    assert (t.offset_bytes >= 0).all() and (t.length_bytes > 0).all() and (t.length_bytes <= MAX_REQUEST_BYTES).all()
    assert (t.offset_bytes + t.length_bytes <= MAX_ADDRESS_BYTES).all()
    assert 0 <= t.volume.min() and t.volume.max() < len(t.volumes) <= MAX_VOLUMES
    assert math.isfinite(t.time_origin)
    s = t.summary()
    assert s["requests"] == n and s["bytes"] == int(t.length_bytes.sum())
    prep = cache.prepare(t, 8192)           # the default block size takes every address a trace may use
    assert int(prep.nblk.sum()) == prep.keys.shape[0]


def mutate(text: str, data: st.DataObject) -> bytes:
    draw = data.draw
    lines = text.split("\n")
    for _ in range(draw(st.integers(1, 3), label="mutations")):
        kind = draw(st.sampled_from(["junk field", "drop char", "cut", "swap lines", "dup first", "delimiter",
                                     "bytes", "long line", "huge number", "blank field", "join lines"]))
        i = draw(st.integers(0, max(len(lines) - 1, 0)))
        if not lines:
            lines = [""]
        line = lines[i]
        if kind == "junk field":
            for sep in (",", " ", ";", "\t", "|"):
                f = line.split(sep)
                if len(f) > 1:
                    f[draw(st.integers(0, len(f) - 1))] = draw(st.sampled_from(JUNK))
                    lines[i] = sep.join(f)
                    break
        elif kind == "drop char" and line:
            j = draw(st.integers(0, len(line) - 1))
            lines[i] = line[:j] + line[j + 1:]
        elif kind == "cut":
            return "\n".join(lines)[:draw(st.integers(0, len(text)))].encode()
        elif kind == "swap lines":
            j = draw(st.integers(0, len(lines) - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif kind == "dup first":
            lines.insert(i, lines[0])
        elif kind == "delimiter":
            lines[i] = line.replace(",", ";").replace(" ", "\t")
        elif kind == "long line":
            lines[i] = line + "9" * draw(st.sampled_from([5000, 2**20 + 10]))
        elif kind == "huge number":
            lines[i] = line.replace(draw(st.sampled_from(["1", "0", "8", "2"])),
                                    draw(st.sampled_from(["99999999999999999999", str(2**40), "-1"])), 1)
        elif kind == "blank field":
            lines[i] = line.replace(",,", ",", 1).replace(" + ", " +  + ", 1)
        elif kind == "join lines" and i + 1 < len(lines):
            lines[i:i + 2] = [lines[i] + lines[i + 1]]
        else:                                   # bytes that are not UTF-8 (or NUL) into the line
            b = line.encode()
            j = draw(st.integers(0, len(b)))
            junk = draw(st.sampled_from([b"\xff\xfe", b"\x00", b"\xc3", b"\r", b"\x1f\x8b"]))
            return ("\n".join(lines[:i]) + ("\n" if i else "")).encode() + b[:j] + junk + b[j:] + \
                ("\n" + "\n".join(lines[i + 1:])).encode()
    return "\n".join(lines).encode()


def expect_trace_or_error(p: Path, **kw) -> Trace | None:
    try:
        t = read(p, **kw)
    except DbtierError as exc:
        assert str(p) in exc.message or "--columns" in exc.message, exc.message
        assert exc.hint
        CASES_RUN["refused"] += 1
        return None
    check_invariants(t)
    CASES_RUN["read"] += 1
    return t


@pytest.mark.parametrize("fmt", FORMATS)
@settings(SETTINGS, max_examples=150)
@given(data=st.data(), reqs=reqs_st)
def test_mutated_trace_gives_a_trace_or_an_error_naming_the_file(tmp_path, fmt, data, reqs):
    r = render(fmt, reqs, data)
    raw = mutate("\n".join(r.lines) + "\n", data)
    p = tmp_path / f"bad-{fmt}.txt"
    p.write_bytes(raw)
    skip_bad, sort = data.draw(st.booleans(), label="skip_bad"), data.draw(st.booleans(), label="sort")
    expect_trace_or_error(p, fmt=data.draw(st.sampled_from([r.read_fmt, "auto"])), columns=r.columns,
                          skip_bad=skip_bad, sort=sort)


@pytest.mark.parametrize("comp", [".gz", ".bz2", ".xz"])
@settings(SETTINGS, max_examples=50)
@given(data=st.data(), reqs=reqs_st)
def test_damaged_compressed_trace_stops_with_file_and_position(tmp_path, comp, data, reqs):
    """A compressed trace cut short is refused whole (the message says no request was used); a flipped
    byte is refused or, where it lands in a field the format does not check, read as a valid trace."""
    r = render("alibaba", reqs, data)
    full = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress}[comp](
        ("\n".join(r.lines) + "\n").encode())
    p = tmp_path / f"t.csv{comp}"
    if data.draw(st.booleans(), label="cut or flip"):
        magic = {".gz": 2, ".bz2": 3, ".xz": 6}[comp]       # shorter, the file no longer says it is compressed
        cut = data.draw(st.integers(0, len(full) - 1), label="cut at")
        p.write_bytes(full[:cut])
        with pytest.raises(DbtierError) as e:
            read(p)
        assert str(p) in e.value.message
        if cut >= magic:
            assert "no request of this trace was used" in e.value.message
    else:
        b = bytearray(full)
        i = data.draw(st.integers(0, len(b) - 1), label="byte")
        b[i] ^= data.draw(st.integers(1, 255), label="xor")
        p.write_bytes(bytes(b))
        expect_trace_or_error(p)


# -- --columns specs -------------------------------------------------------------------------------------

KEYS = ["time", "op", "offset", "length", "size", "volume", "time_unit", "offset_unit", "length_unit", "read",
        "write", "delimiter", "header", "colour", "", "TIME", "op "]
VALUES = ["1", "2", "3", "4", "5", "0", "-1", "+2", "4096", "4097", "99999999999999999999", "1.5", "²", "١", "t",
          "op", "off", "len", "s", "ms", "fortnight", "bytes", "sectors", "kib", "0x10", "1e3", "R|r", "W|w",
          "|", "r", "comma", "tab", "x", "yes", "no", "maybe", "", " "]


@settings(SETTINGS, max_examples=300)
@given(parts=st.lists(st.tuples(st.sampled_from(KEYS), st.sampled_from(["=", "", "=="]), st.sampled_from(VALUES)),
                      max_size=10))
def test_columns_spec_parses_or_names_the_spec(tmp_path, parts):
    spec = ",".join(f"{k}{eq}{v}" for k, eq, v in parts)
    CASES_RUN["count"] += 1
    try:
        cols = parse_columns(spec)
    except DbtierError as exc:
        assert exc.message.startswith("--columns "), exc.message
        assert exc.hint and "--columns" in exc.hint
        return
    refs = [getattr(cols, k) for k in ("time", "op", "offset", "length", "volume") if getattr(cols, k)]
    assert cols.op and cols.offset and cols.length
    assert len({x.lower() for x in refs}) == len(refs)              # no column holds two fields
    assert not cols.read_tokens & cols.write_tokens and cols.read_tokens and cols.write_tokens
    assert 1 <= cols.offset_scale <= MAX_REQUEST_BYTES and 1 <= cols.length_scale <= MAX_REQUEST_BYTES
    # and against a file: a result or an error naming the file or the spec
    p = tmp_path / "t.csv"
    p.write_text("t,op,off,len\n1,R,0,512\n2,W,8192,4096\n")
    expect_trace_or_error(p, columns=cols)


def test_zz_report_generated_cases():
    """Not a check: prints how many generated cases the properties above ran (see `pytest -s`)."""
    print(f"\ntrace property tests: {CASES_RUN['count']} generated cases; of the malformed ones "
          f"{CASES_RUN['refused']} refused with a DbtierError, {CASES_RUN['read']} read as valid traces")
