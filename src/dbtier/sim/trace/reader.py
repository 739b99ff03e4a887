"""The whole-trace reader: `read_trace` turns a text block trace into a `Trace` (the invariants of one:
traces.py), through the vectorised reader (fastread.py) when it vouches for the file, else line by line
(formats.py), whose answers and messages are the reference; then the trace-wide checks (empty, the
ten-year span, time going backwards) and --sort. `from_arrays` makes a Trace in memory."""

from __future__ import annotations

import io
import math
import os
from dataclasses import dataclass, field
from itertools import chain, islice
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from dbtier.core.errors import DbtierError
from dbtier.sim.trace import limits
from dbtier.sim.names import COLUMNS_HELP, FORMATS
from dbtier.sim.trace.columns import Columns, csv_index, header_first, parse_columns
from dbtier.sim.trace.files import (DECOMPRESS_ERRORS, LineTooLong, damaged, decompressed, open_text, tell,
                                    text_lines)
from dbtier.sim.trace.formats import (LINE_PARSERS, Bad, BlkparseState, FioState, Ignore, blkparse_line, csv_line,
                                      detect_format, fio_line, shown, unknown_format)
from dbtier.sim.trace.limits import (FILETIME_S, MAX_ADDRESS_BYTES, MAX_LINE_CHARS, MAX_REQUEST_BYTES, MAX_SPAN_S,
                                     READ, T_LIM)

_SKIP_HINT = "fix or delete that line, or pass --skip-bad to count and skip malformed lines"


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


def read_trace(path: str | os.PathLike, fmt: str = "auto", columns: str | Columns | None = None, *,
               skip_bad: bool = False, sort: bool = False,
               progress: Callable[[float], None] | None = None) -> Trace:
    """Read a trace file into arrays. `fmt` is 'auto' or a key of FORMATS ('csv' needs `columns`)."""
    p = Path(path)
    fmt, cols = check_args(fmt, columns)
    if fmt in ("auto", *FAST_FORMATS):
        fast = _read_fast(p, fmt, cols, sort, progress)
        if fast is not None:
            return fast
    text, raw, size, compression = open_text(p)
    with raw, text:
        try:
            return _read_lines(p, fmt, cols, text, raw, size, skip_bad, sort, progress)
        except LineTooLong as exc:
            raise DbtierError(f"{p}:{exc.lineno}: a line of {exc.chars:,}+ characters, more than the "
                              f"{MAX_LINE_CHARS:,} a trace line may have: not a trace of a known layout",
                              "pass a text trace with one request per line") from None
        except DECOMPRESS_ERRORS as exc:
            raise damaged(p, exc, getattr(exc, "dbtier_lines_ok", 0), tell(raw), size, compression) from None


def check_args(fmt: str, columns: str | Columns | None) -> tuple[str, Columns | None]:
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


FAST_FORMATS = ("msr", "cloudphysics", "alibaba", "tencent", "csv")


def fast_start(p: Path, fmt: str, cols: Columns | None) -> tuple[str, Any, Any] | None:
    """(format, layout, batches) from the vectorised reader (fastread.py), or None where only the line reader
    may speak (an unknown format, a file that does not start with a request or the header, ...)."""
    from dbtier.sim.trace import fastread
    text, raw, size, compression = open_text(p)
    with text:
        try:
            head = list(islice(text_lines(text), 20))
        except (LineTooLong, *DECOMPRESS_ERRORS):
            return None
    raw.close()
    if fmt == "auto":
        fmt = detect_format(head) or ""
    if fmt not in FAST_FORMATS or not head or not head[0].strip() or head[0][:1] in " \t#":
        return None
    header = 0
    index = None
    if fmt == "csv":
        assert cols is not None
        ff = head[0].split(cols.delimiter)
        if header_first(cols, ff):
            header = 1
        try:
            index = csv_index(cols, ff if header else None, p)
        except DbtierError:
            return None
    else:
        try:
            LINE_PARSERS[fmt](head[0])
        except Ignore:
            header = 1
        except Bad:
            return None
    data = head[header] if len(head) > header else head[0]
    try:
        lay = fastread.layout(fmt, cols, index, data)
    except fastread.Reject:
        return None
    f = open(p, "rb")
    stream = decompressed(f, compression)
    state = fastread.State(max_volumes=limits.MAX_VOLUMES)   # (read at the call: tests lower it)

    def gen() -> Iterator[Any]:
        with f:
            for b in fastread.batches(stream, lay, header, state):
                yield b
    return fmt, lay, (state, gen(), f, size)


def _read_fast(p: Path, fmt: str, cols: Columns | None, sort: bool,
               progress: Callable[[float], None] | None) -> Trace | None:
    """The whole trace through the vectorised reader, or None: then the line reader reads it."""
    from dbtier.sim.trace import fastread
    for float_time in (False, True):
        start = fast_start(p, fmt, cols)
        if start is None:
            return None
        fmt2, lay, (state, gen, f, size) = start
        lay.float_time = float_time
        scale = time_scale(fmt2, cols)
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
                    progress(min(tell(f) / size, 1.0))
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


def _read_lines(p: Path, fmt: str, cols: Columns | None, text: io.TextIOWrapper, raw: Any, size: int,
                skip_bad: bool, sort: bool, progress: Callable[[float], None] | None) -> Trace:
    lineno = 0
    source = text_lines(text)
    head: list[str] = []
    try:
        for ln in islice(source, 20):
            head.append(ln)
    except LineTooLong as exc:
        exc.lineno = len(head) + 1
        raise
    except DECOMPRESS_ERRORS as exc:
        exc.dbtier_lines_ok = len(head)      # type: ignore[union-attr]
        raise
    if fmt == "auto":
        found = detect_format(head)
        if found is None:
            if not any(ln.strip() for ln in head):
                raise DbtierError(f"{p}: empty trace (no lines)", "pass a trace with read or write requests")
            raise unknown_format(p, head)
        fmt = found

    header_fields = None
    header_line = 0
    if fmt == "csv":
        assert cols is not None
        first_i, first = next(((i, ln) for i, ln in enumerate(head) if ln.strip()), (0, ""))
        ff = first.rstrip("\r").split(cols.delimiter)
        if header_first(cols, ff):
            header_fields, header_line = ff, first_i + 1
        parser = csv_line(cols, csv_index(cols, header_fields, p))
    elif fmt == "blkparse":
        parser = blkparse_line(BlkparseState())
    elif fmt == "fio":
        fio_state = FioState()
        parser = fio_line(fio_state)
    else:
        parser = LINE_PARSERS[fmt]

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
    max_len, max_end, t_lim = MAX_REQUEST_BYTES, MAX_ADDRESS_BYTES, T_LIM
    max_volumes = limits.MAX_VOLUMES        # (read at the call: tests lower it)

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
                    raise Bad(reason)
            except Ignore as ign:
                ignored[ign.kind] = ignored.get(ign.kind, 0) + 1
                continue
            except Bad as exc:
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
                if len(vol_index) >= max_volumes:
                    raise DbtierError(f"{p}:{lineno}: volume '{shown(vol)}' is one more than the {max_volumes:,} "
                                      "distinct volumes a trace may have: the volume field does not hold volumes",
                                      "map the right column with --columns volume=COL (or leave volume out)")
                v = vol_index[vol] = len(vol_index)
            vols.append(v)
            lines_of.append(lineno)
            if is_blk:
                actions.append(act)
            if progress is not None and lineno % 65536 == 0 and size:
                progress(min(tell(raw) / size, 1.0))
    except LineTooLong as exc:
        exc.lineno = lineno + 1
        raise
    except DECOMPRESS_ERRORS as exc:
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
                   tuple(sorted(vol_index, key=vol_index.__getitem__)), ignored, zero_lines, nbad, bad, total_lines,
                   notes, sort, untimed)


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

    scale = time_scale(fmt, cols)
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


def time_scale(fmt: str, cols: Columns | None) -> float:
    """Seconds per unit of the format's time column."""
    return {"msr": FILETIME_S, "cloudphysics": 1.0, "alibaba": 1e-6, "tencent": 1.0, "blkparse": 1e-9,
            "fio": 1e-6}.get(fmt, cols.time_scale if cols else 1.0)


def _absurd(t: Any, off: int, ln: int) -> str | None:
    """Why a parsed request is out of range, or None for a zero-length one (ignored and noted)."""
    if not (-T_LIM < t < T_LIM):
        if isinstance(t, float) and not math.isfinite(t):
            return f"time {t} is not a finite number"
        return f"time {shown(t)} is beyond +-2^62 ticks of the trace's clock"
    if ln < 0:
        return f"length {shown(ln)} bytes is negative"
    if ln == 0:
        return None
    if ln > MAX_REQUEST_BYTES:
        return (f"length {shown(ln)} bytes is more than one request can be (the cap is 1 GiB, "
                f"{MAX_REQUEST_BYTES:,} bytes)")
    return (f"offset {shown(off)} + length {shown(ln)} ends beyond byte {MAX_ADDRESS_BYTES:,} (2^55, 32 PiB), "
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
