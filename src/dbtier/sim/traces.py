"""Block I/O trace readers: one file in, numpy arrays out.

Pure parsing: every reader turns lines into requests (time, op, offset,
length, volume) and nothing else. A request is what the host asked of the
block device; splitting it into cache blocks happens later (`cache.py`).

Invariants of a returned Trace:
- arrays have one entry per read or write request, in file order (or sorted
  by time with `sort=True`); other lines (headers, flushes, trims, blkparse
  events other than the one chosen, fio open/close) are counted in `ignored`;
- `time_s` starts at 0 (the first request) and never decreases; an untimed
  trace (fio v2 without `wait`, a `--columns` map without time) has all zeros
  and `timed=False`;
- `op` is 0 for a read, 1 for a write; `offset_bytes` >= 0, `length_bytes` > 0;
- `volume` indexes `volumes` (disk, device, file or volume id of the trace);
  the same offset on two volumes is two different places.

A malformed line is a DbtierError naming file and line, unless `skip_bad`,
which counts it (and keeps the first few line numbers) instead. A line is
malformed too when its numbers are absurd for a block request (the caps below
keep every later sum inside int64 and every per-block expansion bounded):
a length above MAX_REQUEST_BYTES (1 GiB), an end beyond MAX_ADDRESS_BYTES
(2^55 bytes, 32 PiB), a negative offset or length, a time that is not finite
or beyond +-2^62 ticks. A zero-length request is ignored and noted with its
line. Trace-wide limits (a span over MAX_SPAN_S, more than MAX_VOLUMES
volumes, a line over MAX_LINE_CHARS, damaged compressed data) stop the read
with file and line even under `skip_bad`.

Only regular files are opened (a FIFO would block, /dev/zero never ends).

The CSV-like formats go through fastread.py first (pyarrow, a block at a time); it hands any file it
cannot vouch for back to the line reader here, whose answers and messages are the reference.
read_chunks() yields the same requests as chunks.Chunk in bounded memory.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import math
import os
import re
import zlib
from dataclasses import dataclass, field
from itertools import chain, islice
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from dbtier.core.errors import DbtierError
from dbtier.core.files import regular_file
from dbtier.sim.names import COLUMNS_HELP, FORMATS, TraceFormat, known_formats_text  # noqa: F401 (re-exported)

READ, WRITE = 0, 1
SECTOR = 512
FILETIME_S = 1e-7          # Windows filetime ticks (100 ns)

_SKIP_HINT = "fix or delete that line, or pass --skip-bad to count and skip malformed lines"

# Caps on what one line may say (README, simulate section). A request above 1 GiB is no block I/O a
# host issues (Linux caps a request far lower) and would cut into 131,072+ cache blocks; 2^55 bytes is
# beyond any volume and keeps offset + length, volume << 42 | block and every sum in int64.
MAX_REQUEST_BYTES = 1 << 30
MAX_ADDRESS_BYTES = 1 << 55
_T_LIM = 1 << 62                   # raw time ticks: t - t0 stays inside int64
MAX_SPAN_S = 10 * 365.25 * 86400   # ten years from the first request: beyond that the time column is wrong
MAX_VOLUMES = 1 << 16              # volume ids index int32 arrays and the cache's key (volume << 42)
MAX_LINE_CHARS = 1 << 20           # a longer line is not a trace line (and is not held in memory whole)
MAX_COLUMN = 4096                  # --columns numbers
_READ_CHUNK = 1 << 20


@dataclass
class Trace:
    path: str
    format: str
    time_s: np.ndarray
    op: np.ndarray
    offset_bytes: np.ndarray
    length_bytes: np.ndarray
    volume: np.ndarray
    volumes: tuple[str, ...] = ("0",)
    timed: bool = True
    time_origin: float = 0.0               # the first request's time on the trace's own clock, in seconds
    lines: int = 0
    skipped: int = 0                       # malformed lines skipped under --skip-bad
    skipped_lines: list[tuple[int, str]] = field(default_factory=list)   # first few (line, reason)
    ignored: dict[str, int] = field(default_factory=dict)                # non-I/O lines by kind
    sorted: bool = False                   # reordered by time (--sort)
    notes: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return int(self.op.shape[0])

    def summary(self) -> dict[str, Any]:
        """The contract's `trace` block."""
        reads = int(np.count_nonzero(self.op == READ))
        return {
            "requests": len(self),
            "reads": reads,
            "writes": len(self) - reads,
            "bytes": int(self.length_bytes.sum()),
            "duration_s": float(self.time_s[-1] - self.time_s[0]) if (self.timed and len(self)) else None,
        }

    def info(self) -> dict[str, Any]:
        """What was read and how, for the result document (beside the contract's block)."""
        return {
            "path": self.path, "format": self.format, "timed": self.timed, "lines": self.lines,
            "volumes": list(self.volumes[:50]), "volume_count": len(self.volumes),
            "skipped_bad_lines": self.skipped,
            "skipped_examples": [{"line": n, "reason": r} for n, r in self.skipped_lines],
            "ignored_lines": dict(self.ignored), "sorted_by_time": self.sorted,
            "time_origin_s": self.time_origin, "notes": list(self.notes),
        }

    def select(self, mask: np.ndarray) -> "Trace":
        keep = np.flatnonzero(mask)
        t = self.time_s[keep]
        t = t - t[0] if len(t) else t
        return Trace(self.path, self.format, t, self.op[keep], self.offset_bytes[keep], self.length_bytes[keep],
                     self.volume[keep], self.volumes, self.timed, self.time_origin, self.lines, self.skipped,
                     list(self.skipped_lines), dict(self.ignored), self.sorted, list(self.notes))

    def only_volume(self, name: str) -> "Trace":
        if name not in self.volumes:
            shown = ", ".join(self.volumes[:20]) + (" ..." if len(self.volumes) > 20 else "")
            raise DbtierError(f"{self.path}: no volume '{name}' in the trace (volumes: {shown})",
                              "pass one of the volumes listed to --volume, or leave --volume out")
        sub = self.select(self.volume == self.volumes.index(name))
        sub.volume = np.zeros(len(sub), dtype=np.int32)
        sub.volumes = (name,)
        return sub


@dataclass
class Columns:
    """A --columns map for the generic CSV reader."""
    time: str | None = None
    op: str = ""
    offset: str = ""
    length: str = ""
    volume: str | None = None
    time_scale: float = 1.0       # seconds per unit
    offset_scale: int = 1         # bytes per unit
    length_scale: int = 1
    read_tokens: frozenset[str] = frozenset({"r", "read", "rd"})
    write_tokens: frozenset[str] = frozenset({"w", "write", "wr"})
    delimiter: str = ","
    header: str = "auto"          # auto | yes | no


_TIME_UNITS = {"s": 1.0, "sec": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "filetime": FILETIME_S}
_DELIMS = {"comma": ",", ",": ",", "tab": "\t", "space": None, "semicolon": ";", "pipe": "|"}


def _colnum(ref: str) -> int | None:
    """A --columns reference as a column number (ASCII digits, optional sign), or None for a header name."""
    return int(ref) if re.fullmatch(r"[+-]?[0-9]+", ref) else None


def _spec_shown(spec: str) -> str:
    return repr(spec if len(spec) <= 120 else spec[:117] + "...")


def parse_columns(spec: str) -> Columns:
    """`time=1,op=Type,offset=5,length=6,time_unit=us,...` -> Columns (DbtierError on anything unclear).

    Every error names the spec: an unknown or repeated key, a missing op/offset/length, two fields on one
    column, a column number outside 1..MAX_COLUMN, an unknown unit, delimiter or header value, no tokens."""
    c = Columns()
    seen: set[str] = set()
    where = f"--columns {_spec_shown(spec)}"

    def bad(what: str) -> DbtierError:
        return DbtierError(f"{where}: {what}", COLUMNS_HELP)

    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        key, eq, value = part.partition("=")
        key, value = key.strip().lower(), value.strip()
        if not eq or not value:
            raise bad(f"'{part}' is not KEY=VALUE")
        if key == "size":
            key = "length"
        if key in seen:
            raise bad(f"{key} is given twice" + (" (size is another name for length)" if key == "length" else ""))
        seen.add(key)
        if key in ("time", "op", "offset", "length", "volume"):
            n = _colnum(value)
            if n is not None and not (1 <= n <= MAX_COLUMN):
                raise bad(f"{key}={value}: columns are numbered from 1 to {MAX_COLUMN}")
            setattr(c, key, str(n) if n is not None else value)
        elif key == "time_unit":
            if value.lower() not in _TIME_UNITS:
                raise bad(f"unknown time_unit '{value}' (s, ms, us, ns, filetime)")
            c.time_scale = _TIME_UNITS[value.lower()]
        elif key in ("offset_unit", "length_unit"):
            v = value.lower()
            scale = {"bytes": 1, "byte": 1, "b": 1, "sectors": SECTOR, "sector": SECTOR, "kib": 1024}.get(v)
            if scale is None:
                if not re.fullmatch(r"[0-9]{1,10}", v) or not (1 <= int(v) <= MAX_REQUEST_BYTES):
                    raise bad(f"{key} '{value}' is not bytes, sectors, kib or a number of bytes from 1 to "
                              f"{MAX_REQUEST_BYTES}")
                scale = int(v)
            setattr(c, key.replace("_unit", "_scale"), scale)
        elif key in ("read", "write"):
            tokens = frozenset(t.strip().lower() for t in value.split("|") if t.strip())
            if not tokens:
                raise bad(f"{key}='{value}' names no token")
            setattr(c, f"{key}_tokens", tokens)
        elif key == "delimiter":
            if value.lower() not in _DELIMS:
                raise bad(f"unknown delimiter '{value}' (comma, tab, space, semicolon, pipe)")
            c.delimiter = _DELIMS[value.lower()]
        elif key == "header":
            if value.lower() not in ("auto", "yes", "no"):
                raise bad(f"header must be auto, yes or no, not '{value}'")
            c.header = value.lower()
        else:
            raise bad(f"unknown key '{key}'")
    missing = [k for k in ("op", "offset", "length") if k not in seen]
    if missing:
        raise bad(f"missing {', '.join(missing)} (which column holds it?)")
    refs: dict[str, str] = {}
    for k in ("time", "op", "offset", "length", "volume"):
        ref = getattr(c, k)
        if ref is None:
            continue
        other = refs.get(ref.lower())
        if other is not None:
            raise bad(f"{other} and {k} both name column '{ref}'")
        refs[ref.lower()] = k
    if c.read_tokens & c.write_tokens:
        raise bad("the same token means read and write: " + ", ".join(sorted(c.read_tokens & c.write_tokens)))
    return c


# -- opening files -------------------------------------------------------------------

_DECOMPRESS_ERRORS = (EOFError, OSError, zlib.error, lzma.LZMAError)
_UNSUPPORTED_MAGIC = ((b"\x28\xb5\x2f\xfd", "zstd-compressed", "zstd -d {name}"),
                      (b"\x04\x22\x4d\x18", "lz4-compressed", "lz4 -d {name}"),
                      (b"PK\x03\x04", "a zip archive", "unzip {name}"),
                      (b"7z\xbc\xaf\x27\x1c", "a 7-zip archive", "7z x {name}"))


def _open_text(path: Path) -> tuple[io.TextIOWrapper, Any, int, str | None]:
    """(text stream, raw file for progress, raw size, compression or None). gzip/bz2/xz are read
    transparently; a FIFO, device, socket or directory is refused before it is opened."""
    if not path.exists():
        raise DbtierError(f"trace file {path} not found",
                          "check the path (relative paths start at the current directory)")
    if path.is_dir():
        raise DbtierError(f"{path} is a directory, not a trace file",
                          "pass the trace file itself (or a `dbtier simulate capture` run directory)")
    regular_file(path, "trace file", "pass a regular file: copy the trace into one first")
    try:
        raw = open(path, "rb")
    except OSError as exc:
        raise DbtierError(f"cannot read trace file {path}: {exc.strerror}", "check its permissions") from exc
    size = os.fstat(raw.fileno()).st_size
    try:
        magic = raw.read(6)
        raw.seek(0)
    except OSError as exc:
        raw.close()
        raise DbtierError(f"cannot read trace file {path}: {exc.strerror or exc}", "check the file and its disk") \
            from exc
    for sig, what, cmd in _UNSUPPORTED_MAGIC:
        if magic.startswith(sig):
            raw.close()
            raise DbtierError(f"{path}: {what}; the trace readers take plain text, gzip, bz2 or xz",
                              f"unpack it first (`{cmd.format(name=path.name)}`) and pass the text file")
    stream: Any = raw
    compression = None
    if magic[:2] == b"\x1f\x8b":
        stream, compression = gzip.GzipFile(fileobj=raw), "gzip"
    elif magic[:3] == b"BZh":
        stream, compression = bz2.BZ2File(raw), "bz2"
    elif magic[:6] == b"\xfd7zXZ\x00":
        stream, compression = lzma.LZMAFile(raw), "xz"
    try:
        head = stream.peek(4096)[:4096] if hasattr(stream, "peek") else b""
    except _DECOMPRESS_ERRORS as exc:
        raw.close()
        raise _damaged(path, exc, 0, 0, size, compression) from None
    if b"\x00" in head:
        raw.close()
        hint = ("blktrace writes binary files: turn them into text with `blkparse -i NAME -o trace.txt` first"
                if ".blktrace." in path.name else "pass a text trace (CSV, blkparse text or a fio iolog)")
        raise DbtierError(f"{path}: binary data, not a text trace", hint)
    text = io.TextIOWrapper(stream, encoding="utf-8-sig", errors="replace", newline=None)   # -sig: drop a BOM
    return text, raw, size, compression


def _damaged(path: Path, exc: BaseException, lines_ok: int, pos: int, size: int,
             compression: str | None) -> DbtierError:
    """A read that failed part-way: where, why, and that nothing of the file was used."""
    reason = (str(exc) or type(exc).__name__) if not isinstance(exc, OSError) or not exc.strerror else exc.strerror
    if isinstance(exc, EOFError):
        reason = "the compressed data ends early (truncated file)"
    where = f"after line {lines_ok}" if lines_ok else "before the first line"
    if compression:
        cat = {"gzip": "zcat", "bz2": "bzcat", "xz": "xzcat"}[compression]
        return DbtierError(
            f"{path}: {compression} data damaged {where} (at about byte {pos:,} of {size:,}): {reason}; "
            "no request of this trace was used",
            f"copy the file again; or keep the readable part (`{cat} {path.name} > part.txt` stops at the "
            "damage) and pass that")
    return DbtierError(f"{path}: read failed {where} (at about byte {pos:,} of {size:,}): {reason}; "
                       "no request of this trace was used", "check the file and the disk it is on")


def _text_lines(text: io.TextIOWrapper) -> Iterator[str]:
    """The lines of `text` without their ends, read in 1 MiB pieces; _LineTooLong instead of a line longer
    than MAX_LINE_CHARS (so a file without newlines is never held whole)."""
    buf = ""
    while True:
        data = text.read(_READ_CHUNK)
        if not data:
            break
        parts = (buf + data).split("\n") if buf else data.split("\n")
        buf = parts.pop()
        if parts and max(map(len, parts)) > MAX_LINE_CHARS:
            i = next(i for i, x in enumerate(parts) if len(x) > MAX_LINE_CHARS)
            yield from parts[:i]
            raise _LineTooLong(len(parts[i]))
        yield from parts
        if len(buf) > MAX_LINE_CHARS:
            raise _LineTooLong(len(buf))
    if buf:
        yield buf


class _LineTooLong(Exception):
    def __init__(self, chars: int):
        self.chars = chars
        self.lineno = 0


# -- per-format line parsers -------------------------------------------------------
# Each returns (time, op, offset_bytes, length_bytes, volume, blkparse action or None), raises
# _Ignore(kind) for a line that is not a request (header, flush, ...) and _Bad(reason) for a malformed one.


class _Bad(Exception):
    pass


class _Ignore(Exception):
    """A well-formed line that is not a read or write request; its kind is counted."""

    def __init__(self, kind: str):
        self.kind = kind


def _shown(tok: Any) -> str:
    t = str(tok).strip()
    return t if len(t) <= 40 else f"{t[:20]}...({len(t)} characters)"


def _int(tok: str, what: str, base: int = 10) -> int:
    try:
        v = int(tok, base)
    except ValueError:
        raise _Bad(f"{what} '{_shown(tok)}' is not a whole number") from None
    # int() also takes '1_000' and non-ASCII digits ('١٢'); a trace writes neither
    if "_" in tok or not tok.isascii():
        raise _Bad(f"{what} '{_shown(tok)}' is not a whole number")
    return v


def _nonneg(v: int, what: str) -> int:
    if v < 0:
        raise _Bad(f"{what} {_shown(v)} is negative")
    return v


def _fields(line: str, n: int, layout: str, sep: str | None = ",") -> list[str]:
    f = line.split(sep)
    if len(f) != n:
        raise _Bad(f"{len(f)} fields, expected {n} ({layout})")
    return f


def _msr(line: str):
    f = _fields(line, 7, FORMATS["msr"].layout)
    typ = f[3].strip().lower()
    if typ == "read":
        op = READ
    elif typ == "write":
        op = WRITE
    elif f[0].strip().lower() == "timestamp":
        raise _Ignore("header")
    else:
        raise _Bad(f"Type '{f[3].strip()}' is neither Read nor Write")
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
        raise _Ignore("header")
    elif code in ("88", "8a", "a8", "aa", "08", "0a"):  # READ/WRITE (16), (12), (6): other CDB sizes
        op = READ if code in ("88", "a8", "08") else WRITE
    else:
        raise _Bad(f"op '{f[2].strip()}' is not a SCSI read (28) or write (2a) opcode")
    return (_int(f[1], "time"), op, _nonneg(_int(f[4], "lbn"), "lbn") * SECTOR, _int(f[3], "size"), "0", None)


def _alibaba(line: str):
    f = _fields(line, 5, FORMATS["alibaba"].layout)
    code = f[1].strip().upper()
    if code == "R":
        op = READ
    elif code == "W":
        op = WRITE
    elif code == "OPCODE":
        raise _Ignore("header")
    else:
        raise _Bad(f"opcode '{f[1].strip()}' is neither R nor W")
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
        raise _Ignore("header")
    else:
        raise _Bad(f"IOType '{code}' is neither 0 (read) nor 1 (write)")
    return (_int(f[0], "Timestamp"), op, _nonneg(_int(f[1], "Offset"), "Offset") * SECTOR,
            _int(f[2], "Size") * SECTOR, f[4].strip(), None)


_BLK_EVENT = re.compile(r"^\s*(\d+,\d+)\s+(\d+)\s+(\d+)\s+(\d+)\.(\d+)\s+(\d+)\s+([A-Za-z]{1,2})\s+(\S+)\s*(.*)$")
_BLK_IO = re.compile(r"^(\d+)\s+\+\s+(\d+)(?:\s|$)")
_BLK_SUMMARY = re.compile(r"^(CPU\d+ \(|Total \(|Throughput \(|Events \(|Skips:)")


class _BlkparseState:
    def __init__(self) -> None:
        self.in_summary = False


def _blkparse_line(state: _BlkparseState):
    def parse(line: str):
        if state.in_summary:
            raise _Ignore("summary")
        m = _BLK_EVENT.match(line)
        if m is None:
            if _BLK_SUMMARY.match(line):
                state.in_summary = True
                raise _Ignore("summary")
            raise _Bad("not a blkparse event line (dev cpu seq seconds.nanoseconds pid action rwbs ...)")
        dev, _cpu, _seq, sec, frac, _pid, action, rwbs, rest = m.groups()
        if action not in ("Q", "D", "C"):
            raise _Ignore(f"event {action}")
        io_ = _BLK_IO.match(rest)
        kind = rwbs.upper()
        if io_ is None:
            if rest.startswith("[") or rest == "" or "F" in kind or kind == "N":
                raise _Ignore("flush")
            raise _Bad(f"{action} event without 'sector + count'")
        if "D" in kind:
            raise _Ignore("discard")
        if "W" in kind:
            op = WRITE
        elif "R" in kind:
            op = READ
        else:
            raise _Ignore(f"event {action} {rwbs}")
        nsec = int(io_.group(2))
        if nsec == 0:
            raise _Ignore(f"event {action} of zero sectors (flush)")
        t_ns = int(sec) * 1_000_000_000 + int(frac.ljust(9, "0")[:9])
        return (t_ns, op, int(io_.group(1)) * SECTOR, nsec * SECTOR, dev, action)
    return parse


class _FioState:
    def __init__(self) -> None:
        self.version = 0
        self.wait_us = 0
        self.waits = 0


def _fio_line(state: _FioState):
    def parse(line: str):
        s = line.strip()
        if state.version == 0:
            if s == "fio version 2 iolog":
                state.version = 2
            elif s == "fio version 3 iolog":
                state.version = 3
            else:
                raise _Bad("a fio iolog starts with 'fio version 2 iolog' or 'fio version 3 iolog'")
            raise _Ignore("header")
        toks = s.split()
        ts = None
        if state.version == 3:
            if len(toks) < 3:
                raise _Bad("expected 'timestamp filename action [offset length]'")
            ts = _int(toks[0], "timestamp")
            toks = toks[1:]
        if len(toks) >= 4 and toks[-3] in ("read", "write", "trim", "sync", "datasync", "wait"):
            name, action, off, ln = " ".join(toks[:-3]), toks[-3], toks[-2], toks[-1]
        elif len(toks) >= 3 and toks[-2] in ("read", "write", "trim", "wait"):
            raise _Bad(f"'{toks[-2]}' needs an offset and a length ('filename {toks[-2]} offset length')")
        elif len(toks) >= 2:
            name, action, off, ln = " ".join(toks[:-1]), toks[-1], None, None
        else:
            raise _Bad("expected 'filename action [offset length]'")
        if action in ("add", "open", "close", "sync", "datasync", "trim"):
            raise _Ignore(action)
        if action == "wait":
            if state.version != 2 or off is None:
                raise _Bad("'wait' needs a microsecond count (fio v2)")
            state.wait_us += _nonneg(_int(off, "wait"), "wait")
            state.waits += 1
            raise _Ignore("wait")
        if action not in ("read", "write"):
            raise _Bad(f"unknown action '{action}'")
        if off is None:
            raise _Bad(f"'{action}' without offset and length")
        t = ts if ts is not None else state.wait_us
        return (t, READ if action == "read" else WRITE, _nonneg(_int(off, "offset"), "offset"),
                _int(ln, "length"), name, None)
    return parse


def _csv_line(cols: Columns, index: dict[str, int]):
    ti, oi, fi, li, vi = (index.get(k) for k in ("time", "op", "offset", "length", "volume"))
    need = max(i for i in (ti, oi, fi, li, vi) if i is not None) + 1
    delim = cols.delimiter

    def parse(line: str):
        f = line.split(delim)
        if len(f) < need:
            raise _Bad(f"{len(f)} fields, the --columns map needs at least {need}")
        code = f[oi].strip().lower()
        if code in cols.read_tokens:
            op = READ
        elif code in cols.write_tokens:
            op = WRITE
        else:
            raise _Bad(f"op '{f[oi].strip()}' is none of read tokens {sorted(cols.read_tokens)} "
                       f"or write tokens {sorted(cols.write_tokens)} (set read=... and write=... in --columns)")
        if ti is None:
            t: Any = 0
        else:
            tok = f[ti].strip()
            if "_" in tok or not tok.isascii():
                raise _Bad(f"time '{_shown(tok)}' is not a number")
            try:
                t = int(tok)
            except ValueError:
                try:
                    t = float(tok)
                except ValueError:
                    raise _Bad(f"time '{_shown(tok)}' is not a number") from None
                if not math.isfinite(t):
                    raise _Bad(f"time '{_shown(tok)}' is not a finite number")
        off = _nonneg(_int(f[fi].strip(), "offset"), "offset") * cols.offset_scale
        ln = _int(f[li].strip(), "length") * cols.length_scale
        return (t, op, off, ln, f[vi].strip() if vi is not None else "0", None)
    return parse


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


def _unknown_format(path: Path, head: Sequence[str]) -> DbtierError:
    sample = next((ln.strip() for ln in head if ln.strip()), "")
    shown = sample if len(sample) <= 80 else sample[:77] + "..."
    return DbtierError(
        f"{path}: unknown trace format (first line: '{shown}'); known formats: {known_formats_text()}",
        f"name the format with --format, or {COLUMNS_HELP}")


def _csv_index(cols: Columns, header_fields: list[str] | None, path: Path) -> dict[str, int]:
    index: dict[str, int] = {}
    names = [h.strip().lower() for h in header_fields] if header_fields else None
    for key in ("time", "op", "offset", "length", "volume"):
        ref = getattr(cols, key)
        if ref is None:
            continue
        n = _colnum(ref)
        if n is not None:
            if not (1 <= n <= MAX_COLUMN):
                raise DbtierError(f"--columns: {key}={ref}: columns are numbered from 1 to {MAX_COLUMN}",
                                  COLUMNS_HELP)
            index[key] = n - 1
        elif names is not None and ref.lower() in names:
            index[key] = names.index(ref.lower())
        else:
            have = f"the header has: {', '.join(h.strip() for h in header_fields)}" if header_fields else \
                "the file has no header line, so use column numbers (1 = first)"
            raise DbtierError(f"{path}: --columns {key}={ref}: no such column; {have}", COLUMNS_HELP)
    return index


# -- the reader -------------------------------------------------------------------------

def read_trace(path: str | os.PathLike, fmt: str = "auto", columns: str | Columns | None = None, *,
               skip_bad: bool = False, sort: bool = False,
               progress: Callable[[float], None] | None = None) -> Trace:
    """Read a trace file into arrays. `fmt` is 'auto' or a key of FORMATS ('csv' needs `columns`)."""
    p = Path(path)
    fmt, cols = _check_args(fmt, columns)
    if fmt in ("auto", *_FAST):
        fast = _read_fast(p, fmt, cols, sort, progress)
        if fast is not None:
            return fast
    text, raw, size, compression = _open_text(p)
    with raw, text:
        try:
            return _read_lines(p, fmt, cols, text, raw, size, skip_bad, sort, progress)
        except _LineTooLong as exc:
            raise DbtierError(f"{p}:{exc.lineno}: a line of {exc.chars:,}+ characters, more than the "
                              f"{MAX_LINE_CHARS:,} a trace line may have: not a trace of a known layout",
                              "pass a text trace with one request per line") from None
        except _DECOMPRESS_ERRORS as exc:
            raise _damaged(p, exc, getattr(exc, "dbtier_lines_ok", 0), _tell(raw), size, compression) from None


def _check_args(fmt: str, columns: str | Columns | None) -> tuple[str, Columns | None]:
    """(format, parsed --columns), or the DbtierError for a format and columns that do not go together."""
    cols = parse_columns(columns) if isinstance(columns, str) else columns
    if cols is not None and fmt == "auto":
        fmt = "csv"
    if fmt not in ("auto", *FORMATS):
        raise DbtierError(f"unknown --format '{fmt}' (known: auto, {', '.join(FORMATS)})",
                          "leave --format out to detect it, or map the columns with --columns")
    if fmt == "csv" and cols is None:
        raise DbtierError("--format csv needs --columns", COLUMNS_HELP)
    if cols is not None and fmt != "csv":
        raise DbtierError(f"--columns maps a CSV, but --format is {fmt}", "leave --format out (or pass --format csv) "
                          f"with --columns, or leave --columns out to read the {fmt} layout")
    return fmt, cols


_FAST = ("msr", "cloudphysics", "alibaba", "tencent", "csv")


def _fast_start(p: Path, fmt: str, cols: Columns | None) -> tuple[str, Any, Any] | None:
    """(format, layout, batches) from the vectorised reader (fastread.py), or None where only the line reader
    may speak (an unknown format, a file that does not start with a request or the header, ...)."""
    from dbtier.sim import fastread
    text, raw, size, compression = _open_text(p)
    with text:
        try:
            head = list(islice(_text_lines(text), 20))
        except (_LineTooLong, *_DECOMPRESS_ERRORS):
            return None
    raw.close()
    if fmt == "auto":
        fmt = detect_format(head) or ""
    if fmt not in _FAST or not head or not head[0].strip() or head[0][:1] in " \t#":
        return None
    header = 0
    index = None
    if fmt == "csv":
        assert cols is not None
        ff = head[0].split(cols.delimiter)
        refs_by_name = any(_colnum(getattr(cols, k)) is None for k in ("time", "op", "offset", "length", "volume")
                           if getattr(cols, k) is not None)
        if cols.header == "yes" or (cols.header == "auto" and (refs_by_name or not any(
                x.strip().replace(".", "", 1).isdigit() for x in ff))):
            header = 1
        try:
            index = _csv_index(cols, ff if header else None, p)
        except DbtierError:
            return None
    else:
        try:
            {"msr": _msr, "cloudphysics": _cloudphysics, "alibaba": _alibaba, "tencent": _tencent}[fmt](head[0])
        except _Ignore:
            header = 1
        except _Bad:
            return None
    data = head[header] if len(head) > header else head[0]
    try:
        lay = fastread.layout(fmt, cols, index, data)
    except fastread.Reject:
        return None
    f = open(p, "rb")
    stream: Any = {"gzip": lambda: gzip.GzipFile(fileobj=f), "bz2": lambda: bz2.BZ2File(f),
                   "xz": lambda: lzma.LZMAFile(f), None: lambda: f}[compression]()
    state = fastread.State(max_volumes=MAX_VOLUMES)

    def gen() -> Iterator[Any]:
        with f:
            for b in fastread.batches(stream, lay, header, state):
                yield b
    return fmt, lay, (state, gen(), f, size)


def _read_fast(p: Path, fmt: str, cols: Columns | None, sort: bool,
               progress: Callable[[float], None] | None) -> Trace | None:
    """The whole trace through the vectorised reader, or None: then the line reader reads it."""
    from dbtier.sim import fastread
    for float_time in (False, True):
        start = _fast_start(p, fmt, cols)
        if start is None:
            return None
        fmt2, lay, (state, gen, f, size) = start
        lay.float_time = float_time
        scale = _time_scale(fmt2, cols)
        cols_of: list[list[np.ndarray]] = [[], [], [], [], []]
        t0: Any = None
        try:
            for b in gen:
                # seconds from the first request batch by batch, as _finish computes them for the whole
                # (elementwise, so the same values); copies, so pyarrow's buffers go with the batch
                if t0 is None:
                    t0 = b.t[0]
                ts = (b.t - t0).astype(np.float64) * scale if b.t.dtype == np.int64 else (b.t - t0) * scale
                for k, a in enumerate((ts, b.op, b.offset, b.length, b.volume)):
                    cols_of[k].append(np.array(a, copy=True) if k in (2, 3) else a)
                del b, ts
                if progress is not None and size:
                    progress(min(_tell(f) / size, 1.0))
        except fastread.Reject:
            gen.close()
            if fmt2 == "csv" and lay.time is not None and not float_time:
                continue
            return None
        break
    else:
        return None
    if t0 is None:
        return None
    # one column at a time, each batch's piece dropped as it is joined: the peak is the trace and one column
    out = []
    for k in range(5):
        out.append(np.concatenate(cols_of[k]) if len(cols_of[k]) > 1 else cols_of[k][0])
        cols_of[k] = []
    time_s, op, off, ln, vol = out
    del out
    import pyarrow as pa
    pa.default_memory_pool().release_unused()      # mimalloc keeps the freed batches otherwise
    hl = state.header_lines
    ignored = {"header": hl} if hl else {}
    untimed = fmt2 == "csv" and cols is not None and cols.time is None
    return _finish(p, fmt2, cols, None, op, off, ln, vol, lambda i: int(i) + 1 + hl,
                   tuple(sorted(state.volumes, key=state.volumes.get)), ignored, [], 0, [], state.rows + hl, [],
                   sort, untimed, time_s=time_s, origin_raw=float(t0) * scale)


class TraceChunks:
    """A trace as chunks.Chunk of at most `requests` requests in file order (iterate once). When the
    vectorised reader vouches for the file it holds one chunk and one block of the file at a time;
    otherwise (or from the first request it cannot vouch for on) the rest comes from read_trace, with its
    answers and messages. Once the chunks are exhausted, `meta` is the Trace without its requests (zero-length
    arrays): volumes, lines, ignored, notes, timed, time_origin, as read_trace gives them. No --sort: a trace
    whose time goes backwards stops with read_trace's message."""

    def __init__(self, path: str | os.PathLike, fmt: str = "auto", columns: str | Columns | None = None, *,
                 requests: int = 1 << 20, skip_bad: bool = False):
        if requests <= 0:
            raise ValueError("a chunk holds at least one request")
        self.path = Path(path)
        self.fmt, self.cols = _check_args(fmt, columns)
        self.requests = requests
        self.skip_bad = skip_bad
        self.meta: Trace | None = None

    def __iter__(self) -> Iterator[Any]:
        from dbtier.sim import fastread
        from dbtier.sim.chunks import Chunk, chunks_of
        p, cols, requests = self.path, self.cols, self.requests
        done = 0
        start = _fast_start(p, self.fmt, cols) if self.fmt in ("auto", *_FAST) else None
        if start is not None:
            fmt2, lay, (state, gen, raw, size) = start
            scale = _time_scale(fmt2, cols)
            untimed = fmt2 == "csv" and cols is not None and cols.time is None
            t0 = None
            last = -math.inf
            buf: list[Any] = []
            held = 0
            try:
                for b in gen:
                    if t0 is None:
                        t0 = b.t[0]
                    ts = (b.t - t0).astype(np.float64) * scale if lay.time is not None else np.zeros(len(b.op))
                    if lay.time is not None and (not (np.abs(ts) <= MAX_SPAN_S).all() or ts[0] < last
                                                 or (np.diff(ts) < 0).any()):
                        raise fastread.Reject("time checks")      # the line reader says where
                    if len(ts):
                        last = ts[-1]
                    buf.append((ts, b.op, b.offset, b.length, b.volume))
                    held += len(ts)
                    if held >= requests:
                        arrs = [np.concatenate([x[k] for x in buf]) if len(buf) > 1 else buf[0][k] for k in range(5)]
                        lo = 0
                        while held - lo >= requests:
                            yield Chunk(*(a[lo:lo + requests] for a in arrs), first_request=done, timed=not untimed,
                                        read_fraction=min(1.0, _tell(raw) / size) if size else None)
                            done += requests
                            lo += requests
                        held -= lo
                        buf = [tuple(a[lo:] for a in arrs)] if held else []
                if held:
                    arrs = [np.concatenate([x[k] for x in buf]) for k in range(5)]
                    yield Chunk(*arrs, first_request=done, timed=not untimed, read_fraction=1.0)
                    done += held
                if done:
                    hl = state.header_lines
                    e = np.zeros(0)
                    self.meta = Trace(str(p), fmt2, e, e.astype(np.uint8), e.astype(np.int64), e.astype(np.int64),
                                      e.astype(np.int32), tuple(sorted(state.volumes, key=state.volumes.get)),
                                      not untimed, float(t0) * scale, state.rows + hl, 0, [],
                                      {"header": hl} if hl else {}, False,
                                      ["no time column: untimed, replayed back to back"] if untimed else [])
                    return
            except fastread.Reject:
                gen.close()
        whole = read_trace(p, self.fmt, cols, skip_bad=self.skip_bad)
        for c in chunks_of(whole, requests):
            if c.first_request + len(c) <= done:
                continue
            if c.first_request < done:
                k = done - c.first_request
                c = Chunk(c.time_s[k:], c.op[k:], c.offset_bytes[k:], c.length_bytes[k:], c.volume[k:], done, c.timed,
                          c.read_fraction)
            yield c
        self.meta = whole.select(np.zeros(len(whole), dtype=bool))
        self.meta.time_s = np.zeros(0)


def read_chunks(path: str | os.PathLike, fmt: str = "auto", columns: str | Columns | None = None, *,
                requests: int = 1 << 20, skip_bad: bool = False) -> TraceChunks:
    """The trace as chunks (TraceChunks: iterate it; its `meta` is complete afterwards)."""
    return TraceChunks(path, fmt, columns, requests=requests, skip_bad=skip_bad)


def _tell(raw: Any) -> int:
    try:
        return int(raw.tell())
    except (OSError, ValueError):
        return 0


def _read_lines(p: Path, fmt: str, cols: Columns | None, text: io.TextIOWrapper, raw: Any, size: int,
                skip_bad: bool, sort: bool, progress: Callable[[float], None] | None) -> Trace:
    lineno = 0
    source = _text_lines(text)
    head: list[str] = []
    try:
        for ln in islice(source, 20):
            head.append(ln)
    except _LineTooLong as exc:
        exc.lineno = len(head) + 1
        raise
    except _DECOMPRESS_ERRORS as exc:
        exc.dbtier_lines_ok = len(head)      # type: ignore[union-attr]
        raise
    if fmt == "auto":
        found = detect_format(head)
        if found is None:
            if not any(ln.strip() for ln in head):
                raise DbtierError(f"{p}: empty trace (no lines)", "pass a trace with read or write requests")
            raise _unknown_format(p, head)
        fmt = found

    header_fields = None
    header_line = 0
    if fmt == "csv":
        assert cols is not None
        first_i, first = next(((i, ln) for i, ln in enumerate(head) if ln.strip()), (0, ""))
        ff = first.rstrip("\r").split(cols.delimiter)
        refs_by_name = any(_colnum(getattr(cols, k)) is None for k in ("time", "op", "offset", "length", "volume")
                           if getattr(cols, k) is not None)
        if cols.header == "yes" or (cols.header == "auto" and (refs_by_name or not any(
                x.strip().replace(".", "", 1).isdigit() for x in ff))):
            header_fields, header_line = ff, first_i + 1
        parser = _csv_line(cols, _csv_index(cols, header_fields, p))
    elif fmt == "blkparse":
        parser = _blkparse_line(_BlkparseState())
    elif fmt == "fio":
        fio_state = _FioState()
        parser = _fio_line(fio_state)
    else:
        parser = {"msr": _msr, "cloudphysics": _cloudphysics, "alibaba": _alibaba, "tencent": _tencent}[fmt]

    times: list = []
    ops: list[int] = []
    offs: list[int] = []
    lens: list[int] = []
    vols: list[int] = []
    lines_of: list[int] = []
    actions: list[str] = []
    vol_index: dict[str, int] = {}
    ignored: dict[str, int] = {}
    bad: list[tuple[int, str]] = []
    nbad = 0
    zero_lines: list[int] = []
    is_blk = fmt == "blkparse"
    # One comparison chain per request keeps the common case fast; _absurd says what is wrong.
    max_len, max_end, t_lim = MAX_REQUEST_BYTES, MAX_ADDRESS_BYTES, _T_LIM

    # line numbers for the errors raised while reading (a line too long, damaged compressed data)
    try:
        for lineno, line in enumerate(chain(head, source), 1):
            if lineno == header_line:
                ignored["header"] = ignored.get("header", 0) + 1
                continue
            # (the text stream turns \r\n and \r into \n: no line ends in \r)
            if line[:1] in " \t#" and (not line.strip() or line.lstrip().startswith("#")):
                continue
            try:
                t, op, off, ln, vol, act = parser(line)
                if not (0 < ln <= max_len and off + ln <= max_end and -t_lim < t < t_lim):
                    reason = _absurd(t, off, ln)
                    if reason is None:
                        ignored["zero-length"] = ignored.get("zero-length", 0) + 1
                        if len(zero_lines) < 5:
                            zero_lines.append(lineno)
                        continue
                    raise _Bad(reason)
            except _Ignore as ign:
                ignored[ign.kind] = ignored.get(ign.kind, 0) + 1
                continue
            except _Bad as exc:
                if not skip_bad:
                    raise DbtierError(f"{p}:{lineno}: malformed {fmt} line: {exc}", _SKIP_HINT) from None
                nbad += 1
                if len(bad) < 10:
                    bad.append((lineno, str(exc)))
                continue
            times.append(t)
            ops.append(op)
            offs.append(off)
            lens.append(ln)
            v = vol_index.get(vol)
            if v is None:
                if len(vol_index) >= MAX_VOLUMES:
                    raise DbtierError(f"{p}:{lineno}: volume '{_shown(vol)}' is one more than the {MAX_VOLUMES:,} "
                                      "distinct volumes a trace may have: the volume field does not hold volumes",
                                      "map the right column with --columns volume=COL (or leave volume out)")
                v = vol_index[vol] = len(vol_index)
            vols.append(v)
            lines_of.append(lineno)
            if is_blk:
                actions.append(act)
            if progress is not None and lineno % 65536 == 0 and size:
                progress(min(_tell(raw) / size, 1.0))
    except _LineTooLong as exc:
        exc.lineno = lineno + 1
        raise
    except _DECOMPRESS_ERRORS as exc:
        exc.dbtier_lines_ok = lineno      # type: ignore[union-attr]
        raise
    total_lines = lineno

    notes: list[str] = []
    if is_blk and actions:
        acts = np.array(actions)
        chosen = next(a for a in ("Q", "D", "C") if (acts == a).any())
        keep = acts == chosen
        dropped = int((~keep).sum())
        if dropped:
            for a in ("Q", "D", "C"):
                n = int((acts == a).sum())
                if a != chosen and n:
                    ignored[f"event {a}"] = ignored.get(f"event {a}", 0) + n
        notes.append({"Q": "requests are blkparse Q (queued) events: what the host asked, before merging",
                      "D": "requests are blkparse D (issued) events: the trace has no Q events",
                      "C": "requests are blkparse C (completed) events: the trace has no Q or D events"}[chosen])
        idx = np.flatnonzero(keep)
        times = [times[i] for i in idx]
        ops = [ops[i] for i in idx]
        offs = [offs[i] for i in idx]
        lens = [lens[i] for i in idx]
        vols = [vols[i] for i in idx]
        lines_of = [lines_of[i] for i in idx]

    if all(type(t) is int for t in times[:1000]) and all(type(t) is int for t in times):
        t_raw = np.array(times, dtype=np.int64)
    else:
        t_raw = np.array(times, dtype=np.float64)
    line_no = np.array(lines_of, dtype=np.int64)
    untimed = ((fmt == "fio" and fio_state.version == 2 and fio_state.waits == 0)
               or (fmt == "csv" and cols is not None and cols.time is None))
    return _finish(p, fmt, cols, t_raw, np.array(ops, dtype=np.uint8), np.array(offs, dtype=np.int64),
                   np.array(lens, dtype=np.int64), np.array(vols, dtype=np.int32), line_no.__getitem__,
                   tuple(sorted(vol_index, key=vol_index.get)), ignored, zero_lines, nbad, bad, total_lines, notes,
                   sort, untimed)


def _finish(p: Path, fmt: str, cols: Columns | None, t_raw: np.ndarray | None, op_a: np.ndarray, off_a: np.ndarray,
            len_a: np.ndarray, vol_a: np.ndarray, line_of: Callable[[int], Any], volumes: tuple[str, ...],
            ignored: dict[str, int], zero_lines: list[int], nbad: int, bad: list[tuple[int, str]],
            total_lines: int, notes: list[str], sort: bool, untimed: bool, *, time_s: np.ndarray | None = None,
            origin_raw: float = 0.0) -> Trace:
    """The requests read (raw times in the format's unit, int64 or float64; or `time_s` already in seconds
    from the first request and its `origin_raw`) into a Trace: the notes, the trace-wide checks (empty,
    ten-year span, time backwards) and --sort. `line_of(i)` is request i's line."""
    if zero_lines:
        n = ignored["zero-length"]
        notes.append(f"{n:,} zero-length request{'s' if n > 1 else ''} ignored (line "
                     + ", ".join(map(str, zero_lines)) + (", ..." if n > len(zero_lines) else "") + ")")
    if not len(op_a):
        what = f"{total_lines} lines" + (f", {nbad} malformed and skipped" if nbad else "")
        if ignored:
            what += "; ignored: " + ", ".join(f"{k} {v}" for k, v in ignored.items())
        raise DbtierError(f"{p}: empty trace: no read or write requests ({what})",
                          "pass a trace with read or write requests" +
                          (" (the file is in the " + fmt + " format)" if fmt != "csv" else ""))

    scale = _time_scale(fmt, cols)
    timed = True
    if untimed:
        timed = False
        notes.append("fio v2 iolog without wait lines: untimed, replayed back to back" if fmt == "fio"
                     else "no time column: untimed, replayed back to back")

    if time_s is None:
        assert t_raw is not None
        origin_raw = float(t_raw[0]) * scale
        if t_raw.dtype == np.int64:
            time_s = (t_raw - t_raw[0]).astype(np.float64) * scale
        else:
            time_s = (t_raw - t_raw[0]) * scale
        del t_raw

    if timed:
        # within ten years of the first request: beyond, the time column or its unit is wrong (and a
        # 1e300 s timestamp would make every later figure meaningless)
        far = np.flatnonzero(~(np.abs(time_s) <= MAX_SPAN_S))
        if far.size:
            i = int(far[0])
            raise DbtierError(
                f"{p}:{line_of(i)}: time {time_s[i]:.6g} s from the first request (line {line_of(0)}) is more "
                f"than ten years away: not the trace's clock",
                "check the time column and its unit (--columns time_unit=s|ms|us|ns|filetime), or fix that line")

    did_sort = False
    if timed and len(time_s) > 1:
        back = np.flatnonzero(np.diff(time_s) < 0)
        if back.size:
            if not sort:
                i = int(back[0]) + 1
                raise DbtierError(
                    f"{p}:{line_of(i)}: time goes backwards: {_fmt_t(time_s[i])} after {_fmt_t(time_s[i - 1])} "
                    f"at line {line_of(i - 1)} (seconds from the first request; {back.size} such steps)",
                    "sort the file by time first, or pass --sort to sort the requests in memory")
            order = np.argsort(time_s, kind="stable")
            time_s, op_a, off_a, len_a, vol_a = time_s[order], op_a[order], off_a[order], len_a[order], vol_a[order]
            did_sort = True
            notes.append(f"sorted by time: {back.size} steps backwards in the file")
            origin_raw += float(time_s[0])
            time_s = time_s - time_s[0]
    if not timed:
        time_s = np.zeros(len(op_a), dtype=np.float64)

    return Trace(str(p), fmt, time_s, op_a, off_a, len_a, vol_a, volumes, timed, origin_raw, total_lines, nbad,
                 bad, ignored, did_sort, notes)


def _time_scale(fmt: str, cols: Columns | None) -> float:
    """Seconds per unit of the format's time column."""
    return {"msr": FILETIME_S, "cloudphysics": 1.0, "alibaba": 1e-6, "tencent": 1.0, "blkparse": 1e-9,
            "fio": 1e-6}.get(fmt, cols.time_scale if cols else 1.0)


def _absurd(t: Any, off: int, ln: int) -> str | None:
    """Why a parsed request is out of range, or None for a zero-length one (ignored and noted)."""
    if not (-_T_LIM < t < _T_LIM):
        if isinstance(t, float) and not math.isfinite(t):
            return f"time {t} is not a finite number"
        return f"time {_shown(t)} is beyond +-2^62 ticks of the trace's clock"
    if ln < 0:
        return f"length {_shown(ln)} bytes is negative"
    if ln == 0:
        return None
    if ln > MAX_REQUEST_BYTES:
        return (f"length {_shown(ln)} bytes is more than one request can be (the cap is 1 GiB, "
                f"{MAX_REQUEST_BYTES:,} bytes)")
    return (f"offset {_shown(off)} + length {_shown(ln)} ends beyond byte {MAX_ADDRESS_BYTES:,} (2^55, 32 PiB), "
            "the largest address a trace may use")


def _fmt_t(x: float) -> str:
    return f"{x:.6f}".rstrip("0").rstrip(".") + " s"


def from_arrays(time_s: Sequence[float] | np.ndarray, op: Sequence[int] | np.ndarray,
                offset_bytes: Sequence[int] | np.ndarray, length_bytes: Sequence[int] | np.ndarray,
                volume: Sequence[int] | np.ndarray | None = None, name: str = "<arrays>") -> Trace:
    """A Trace made in memory (tests, the bench's generated trace)."""
    t = np.asarray(time_s, dtype=np.float64)
    n = len(t)
    vol = np.zeros(n, dtype=np.int32) if volume is None else np.asarray(volume, dtype=np.int32)
    nvol = int(vol.max()) + 1 if n else 1
    return Trace(name, "arrays", t - (t[0] if n else 0.0), np.asarray(op, dtype=np.uint8),
                 np.asarray(offset_bytes, dtype=np.int64), np.asarray(length_bytes, dtype=np.int64), vol,
                 tuple(str(i) for i in range(nvol)), True, 0.0, n)
