"""The per-format line parsers of the text block traces (msr, cloudphysics, alibaba, tencent, blkparse,
fio, csv through --columns) and format detection from a trace's first lines."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Sequence

from dbtier.core.errors import DbtierError
from dbtier.sim.names import COLUMNS_HELP, FORMATS, known_formats_text
from dbtier.sim.trace.columns import Columns
from dbtier.sim.trace.limits import READ, SECTOR, WRITE

# Each parser returns (time, op, offset_bytes, length_bytes, volume, blkparse action or None), raises
# Ignore(kind) for a line that is not a request (header, flush, ...) and Bad(reason) for a malformed one.


class Bad(Exception):
    pass


class Ignore(Exception):
    """A well-formed line that is not a read or write request; its kind is counted."""

    def __init__(self, kind: str):
        self.kind = kind


def shown(tok: Any) -> str:
    t = str(tok).strip()
    return t if len(t) <= 40 else f"{t[:20]}...({len(t)} characters)"


def _int(tok: str, what: str, base: int = 10) -> int:
    try:
        v = int(tok, base)
    except ValueError:
        raise Bad(f"{what} '{shown(tok)}' is not a whole number") from None
    # int() also takes '1_000' and non-ASCII digits ('١٢'); a trace writes neither
    if "_" in tok or not tok.isascii():
        raise Bad(f"{what} '{shown(tok)}' is not a whole number")
    return v


def _nonneg(v: int, what: str) -> int:
    if v < 0:
        raise Bad(f"{what} {shown(v)} is negative")
    return v


def _fields(line: str, n: int, layout: str, sep: str | None = ",") -> list[str]:
    f = line.split(sep)
    if len(f) != n:
        raise Bad(f"{len(f)} fields, expected {n} ({layout})")
    return f


def _msr(line: str):
    f = _fields(line, 7, FORMATS["msr"].layout)
    typ = f[3].strip().lower()
    if typ == "read":
        op = READ
    elif typ == "write":
        op = WRITE
    elif f[0].strip().lower() == "timestamp":
        raise Ignore("header")
    else:
        raise Bad(f"Type '{f[3].strip()}' is neither Read nor Write")
    return (_int(f[0], "Timestamp"), op, _nonneg(_int(f[4], "Offset"), "Offset"), _int(f[5], "Size"),
            f"{f[1].strip()}_{f[2].strip()}", None)


def _cloudphysics(line: str):
    f = _fields(line, 5, FORMATS["cloudphysics"].layout)
    code = f[2].strip().lower()
    if code == "28":
        op = READ
    elif code == "2a":
        op = WRITE
    elif code == "op":
        raise Ignore("header")
    elif code in ("88", "8a", "a8", "aa", "08", "0a"):  # READ/WRITE (16), (12), (6): other CDB sizes
        op = READ if code in ("88", "a8", "08") else WRITE
    else:
        raise Bad(f"op '{f[2].strip()}' is not a SCSI read (28) or write (2a) opcode")
    return (_int(f[1], "time"), op, _nonneg(_int(f[4], "lbn"), "lbn") * SECTOR, _int(f[3], "size"), "0", None)


def _alibaba(line: str):
    f = _fields(line, 5, FORMATS["alibaba"].layout)
    code = f[1].strip().upper()
    if code == "R":
        op = READ
    elif code == "W":
        op = WRITE
    elif code == "OPCODE":
        raise Ignore("header")
    else:
        raise Bad(f"opcode '{f[1].strip()}' is neither R nor W")
    return (_int(f[4], "timestamp"), op, _nonneg(_int(f[2], "offset"), "offset"), _int(f[3], "length"),
            f[0].strip(), None)


def _tencent(line: str):
    f = _fields(line, 5, FORMATS["tencent"].layout)
    code = f[3].strip()
    if code == "0":
        op = READ
    elif code == "1":
        op = WRITE
    elif code.lower() == "iotype":
        raise Ignore("header")
    else:
        raise Bad(f"IOType '{code}' is neither 0 (read) nor 1 (write)")
    return (_int(f[0], "Timestamp"), op, _nonneg(_int(f[1], "Offset"), "Offset") * SECTOR,
            _int(f[2], "Size") * SECTOR, f[4].strip(), None)


_BLK_EVENT = re.compile(r"^\s*(\d+,\d+)\s+(\d+)\s+(\d+)\s+(\d+)\.(\d+)\s+(\d+)\s+([A-Za-z]{1,2})\s+(\S+)\s*(.*)$")
_BLK_IO = re.compile(r"^(\d+)\s+\+\s+(\d+)(?:\s|$)")
_BLK_SUMMARY = re.compile(r"^(CPU\d+ \(|Total \(|Throughput \(|Events \(|Skips:)")


class BlkparseState:
    def __init__(self) -> None:
        self.in_summary = False


def blkparse_line(state: BlkparseState):
    def parse(line: str):
        if state.in_summary:
            raise Ignore("summary")
        m = _BLK_EVENT.match(line)
        if m is None:
            if _BLK_SUMMARY.match(line):
                state.in_summary = True
                raise Ignore("summary")
            raise Bad("not a blkparse event line (dev cpu seq seconds.nanoseconds pid action rwbs ...)")
        dev, _cpu, _seq, sec, frac, _pid, action, rwbs, rest = m.groups()
        if action not in ("Q", "D", "C"):
            raise Ignore(f"event {action}")
        io_ = _BLK_IO.match(rest)
        kind = rwbs.upper()
        if io_ is None:
            if rest.startswith("[") or rest == "" or "F" in kind or kind == "N":
                raise Ignore("flush")
            raise Bad(f"{action} event without 'sector + count'")
        if "D" in kind:
            raise Ignore("discard")
        if "W" in kind:
            op = WRITE
        elif "R" in kind:
            op = READ
        else:
            raise Ignore(f"event {action} {rwbs}")
        nsec = int(io_.group(2))
        if nsec == 0:
            raise Ignore(f"event {action} of zero sectors (flush)")
        t_ns = int(sec) * 1_000_000_000 + int(frac.ljust(9, "0")[:9])
        return (t_ns, op, int(io_.group(1)) * SECTOR, nsec * SECTOR, dev, action)
    return parse


class FioState:
    def __init__(self) -> None:
        self.version = 0
        self.wait_us = 0
        self.waits = 0


def fio_line(state: FioState):
    def parse(line: str):
        s = line.strip()
        if state.version == 0:
            if s == "fio version 2 iolog":
                state.version = 2
            elif s == "fio version 3 iolog":
                state.version = 3
            else:
                raise Bad("a fio iolog starts with 'fio version 2 iolog' or 'fio version 3 iolog'")
            raise Ignore("header")
        toks = s.split()
        ts = None
        if state.version == 3:
            if len(toks) < 3:
                raise Bad("expected 'timestamp filename action [offset length]'")
            ts = _int(toks[0], "timestamp")
            toks = toks[1:]
        if len(toks) >= 4 and toks[-3] in ("read", "write", "trim", "sync", "datasync", "wait"):
            name, action, off, ln = " ".join(toks[:-3]), toks[-3], toks[-2], toks[-1]
        elif len(toks) >= 3 and toks[-2] in ("read", "write", "trim", "wait"):
            raise Bad(f"'{toks[-2]}' needs an offset and a length ('filename {toks[-2]} offset length')")
        elif len(toks) >= 2:
            name, action, off, ln = " ".join(toks[:-1]), toks[-1], None, None
        else:
            raise Bad("expected 'filename action [offset length]'")
        if action in ("add", "open", "close", "sync", "datasync", "trim"):
            raise Ignore(action)
        if action == "wait":
            if state.version != 2 or off is None:
                raise Bad("'wait' needs a microsecond count (fio v2)")
            state.wait_us += _nonneg(_int(off, "wait"), "wait")
            state.waits += 1
            raise Ignore("wait")
        if action not in ("read", "write"):
            raise Bad(f"unknown action '{action}'")
        if off is None:
            raise Bad(f"'{action}' without offset and length")
        assert ln is not None           # set with off, by the same branch
        t = ts if ts is not None else state.wait_us
        return (t, READ if action == "read" else WRITE, _nonneg(_int(off, "offset"), "offset"),
                _int(ln, "length"), name, None)
    return parse


def csv_line(cols: Columns, index: dict[str, int]):
    ti, oi, fi, li, vi = (index.get(k) for k in ("time", "op", "offset", "length", "volume"))
    # csv_index maps every key whose column is named, and a Columns always names op, offset and length
    assert oi is not None and fi is not None and li is not None
    need = max(i for i in (ti, oi, fi, li, vi) if i is not None) + 1
    delim = cols.delimiter

    def parse(line: str):
        f = line.split(delim)
        if len(f) < need:
            raise Bad(f"{len(f)} fields, the --columns map needs at least {need}")
        code = f[oi].strip().lower()
        if code in cols.read_tokens:
            op = READ
        elif code in cols.write_tokens:
            op = WRITE
        else:
            raise Bad(f"op '{f[oi].strip()}' is none of read tokens {sorted(cols.read_tokens)} "
                       f"or write tokens {sorted(cols.write_tokens)} (set read=... and write=... in --columns)")
        if ti is None:
            t: Any = 0
        else:
            tok = f[ti].strip()
            if "_" in tok or not tok.isascii():
                raise Bad(f"time '{shown(tok)}' is not a number")
            try:
                t = int(tok)
            except ValueError:
                try:
                    t = float(tok)
                except ValueError:
                    raise Bad(f"time '{shown(tok)}' is not a number") from None
                if not math.isfinite(t):
                    raise Bad(f"time '{shown(tok)}' is not a finite number") from None
        off = _nonneg(_int(f[fi].strip(), "offset"), "offset") * cols.offset_scale
        ln = _int(f[li].strip(), "length") * cols.length_scale
        return (t, op, off, ln, f[vi].strip() if vi is not None else "0", None)
    return parse


LINE_PARSERS = {"msr": _msr, "cloudphysics": _cloudphysics, "alibaba": _alibaba, "tencent": _tencent}


# -- format detection -----------------------------------------------------------------
_HEADERS = {
    "msr": "timestamp,hostname,disknumber,type,offset,size,responsetime",
    "cloudphysics": "version,time,op,size,lbn",
    "alibaba": "device_id,opcode,offset,length,timestamp",
    "tencent": "timestamp,offset,size,iotype,volumeid",
}


def detect_format(head: Sequence[str]) -> str | None:
    """The format of a trace from its first non-empty lines, or None."""
    lines = [ln.strip() for ln in head if ln.strip()]
    if not lines:
        return None
    first = lines[0]
    if first in ("fio version 2 iolog", "fio version 3 iolog"):
        return "fio"
    low = first.replace(" ", "").lower()
    for name, header in _HEADERS.items():
        if low == header:
            return name
    if any(_BLK_EVENT.match(ln) for ln in lines[:5]):
        return "blkparse"
    f = first.split(",")
    if len(f) == 7 and f[3].strip().lower() in ("read", "write") and f[0].strip().isdigit():
        return "msr"
    if len(f) == 5:
        if f[1].strip().upper() in ("R", "W") and f[0].strip().isdigit() and f[4].strip().isdigit():
            return "alibaba"
        if all(x.strip().isdigit() for x in f) and f[3].strip() in ("0", "1"):
            return "tencent"
        if f[2].strip().lower() in ("28", "2a") and f[0].strip().isdigit():
            return "cloudphysics"
    return None


def unknown_format(path: Path, head: Sequence[str]) -> DbtierError:
    sample = next((ln.strip() for ln in head if ln.strip()), "")
    shown = sample if len(sample) <= 80 else sample[:77] + "..."
    return DbtierError(
        f"{path}: unknown trace format (first line: '{shown}'); known formats: {known_formats_text()}",
        f"name the format with --format, or {COLUMNS_HELP}")
