"""Linux /proc/diskstats snapshots (collectors/diskstats.sh), one counter row per device per snapshot.

A snapshot starts with a marker line: `# dbtier-diskstats time=EPOCH btime=EPOCH host=NAME` (the
collector's), or a line holding only a time (`date +%s` or `date -Is` in a shell loop of your own;
then no boot time is known). The lines after it are /proc/diskstats as the kernel prints it:
`major minor name` and 11, 15 or 17 counters. dbtier takes reads completed, sectors read, ms
reading, writes completed, sectors written, ms writing; sectors are 512 bytes whatever the
device's sector size. Latency is ms reading / reads (iostat's r_await).

Counters that wrap: the kernel prints the ms fields as 32-bit `unsigned int` (they wrap after
2^32 ms, 49.7 days of busy time) and the I/O and sector counts as `unsigned long` (64-bit on
64-bit kernels, 32-bit on 32-bit ones); the boot time (btime) tells a reboot from a wrap. See
series.py for the rule. Which devices count: by default every whole disk, not partitions of a
disk that is listed too, nor loop, ram, zram, sr, fd, md, nbd or device-mapper (dm-*) devices,
so nothing is counted twice; `--devices sdb,sdc` (or `dm-3`) names them instead. The others are
kept as `detail`. The database is `--database`, else the host from the marker, else the file name.
"""

from __future__ import annotations

import csv
import datetime as _dt
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Sequence

import duckdb

if TYPE_CHECKING:
    import _csv

from dbtier.core.debris import temp_file
from dbtier.core.errors import DbtierError
from dbtier.core.files import sql_str
from dbtier.history import limits
from dbtier.history.sources import csvio
from dbtier.history.sources import detect
from dbtier.history.tables import COUNTER_TABLE_COLUMNS, ReadOptions, ReadResult, database_name_from_file

SOURCE = "diskstats"
FIELDS = ("reads completed", "reads merged", "sectors read", "ms reading", "writes completed", "writes merged",
          "sectors written", "ms writing", "I/Os in progress", "ms doing I/O", "weighted ms doing I/O",
          "discards completed", "discards merged", "sectors discarded", "ms discarding", "flushes completed",
          "ms flushing")
_MARKER = re.compile(r"^#\s*dbtier-diskstats\b(.*)$")
_KV = re.compile(r"(\w+)=(\S+)")
_EPOCH = re.compile(r"^\s*(\d{9,11}(\.\d+)?)\s*$")
_ISO = re.compile(r"^\s*\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(\.\d+)?([+-]\d\d:?\d\d|Z)?\s*$")
_NOT_DISKS = re.compile(r"^(loop|ram|zram|sr|fd|md|nbd|dm-)\d*")


def parse_time(text: str, tz: str = "UTC") -> _dt.datetime | None:
    """A marker's time as naive UTC: epoch seconds, or ISO 8601 (local in `tz` without an offset)."""
    text = text.strip()
    m = _EPOCH.match(text)
    if m:
        try:
            return _dt.datetime(1970, 1, 1) + _dt.timedelta(seconds=float(m.group(1)))
        except (OverflowError, ValueError):
            return None
    if _ISO.match(text):
        try:
            t = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
            if t.tzinfo is None:
                import zoneinfo
                t = t.replace(tzinfo=zoneinfo.ZoneInfo(tz))
            return t.astimezone(_dt.timezone.utc).replace(tzinfo=None)
        except (ValueError, OverflowError):    # (year 1 or 9999 moved across a day boundary)
            return None
    return None


def whole_disks(names: Iterable[str]) -> set[str]:
    """The names that are whole disks (see the module docstring)."""
    names = set(names)
    out = set()
    for n in names:
        if _NOT_DISKS.match(n):
            continue
        mm = re.fullmatch(r"dev(\d+)-(\d+)", n)      # sar without -p: devMAJOR-MINOR
        if mm:
            major, minor = int(mm.group(1)), int(mm.group(2))
            if major in (1, 7, 11) or (major in (8, 65, 66, 67, 68, 69, 70, 71, 128, 129, 130, 131, 132, 133, 134,
                                                 135) and minor % 16) or (major in (3, 22, 33, 34) and minor % 64):
                continue
        if any(n != p and is_partition_of(n, p) for p in names):
            continue
        out.add(n)
    return out


def is_partition_of(name: str, disk: str) -> bool:
    """The kernel names a partition `<disk><N>` when the disk's name ends in a letter (sda1, xvdb2) and
    `<disk>p<N>` when it ends in a digit (nvme0n1p1, mmcblk0p2): so nvme0n10 is a namespace of its own,
    not partition 0 of nvme0n1."""
    if not name.startswith(disk) or name == disk:
        return False
    rest = name[len(disk):]
    return bool(re.fullmatch(r"p\d+", rest) if disk[-1:].isdigit() else re.fullmatch(r"\d+", rest))


def roles(names: Iterable[str], devices: str | None) -> dict[str, str]:
    names = set(names)
    if devices:
        chosen = {d.strip().removeprefix("/dev/") for d in devices.split(",") if d.strip()}
        if not chosen:
            raise DbtierError(f"--devices {devices!r}: names no device", "e.g. --devices sdb,sdc")
        missing = sorted(chosen - names)
        if missing:
            raise DbtierError(f"--devices: {', '.join(missing)} not in the data (it has {', '.join(sorted(names))})",
                              "name devices as the input does")
        return {n: ("part" if n in chosen else "detail") for n in names}
    disks = whole_disks(names)
    return {n: ("part" if n in disks else "detail") for n in names}


def read(con: duckdb.DuckDBPyConnection, paths: Sequence[str | Path], opts: ReadOptions) -> ReadResult:
    tmp, claim = temp_file("dbtier-diskstats-", ".csv", "diskstats parse file")
    try:
        names: set[str] = set()
        with open(tmp, "w", newline="") as out:
            w = csv.writer(out)
            for p in paths:
                csvio.check_file(p)
                names |= _parse_file(str(p), w, opts)
        con.execute(f"CREATE OR REPLACE TABLE ds_counters ({COUNTER_TABLE_COLUMNS})")
        role = roles(names, opts.devices)
        con.execute("CREATE OR REPLACE TEMP TABLE ds_roles (unit VARCHAR, role VARCHAR)")
        con.executemany("INSERT INTO ds_roles VALUES (?, ?)", sorted(role.items()))
        con.execute(f"""INSERT INTO ds_counters
            SELECT database, c.unit, c.unit, r.role, sample_time, epoch, read_ios, read_bytes, write_ios, write_bytes,
                   read_time_ms, write_time_ms, NULL, _file, NULL
            FROM read_csv({sql_str(csvio.duck_path(tmp))}, header=false, auto_detect=false, compression='none', delim=',', quote='"', escape='"',
                 columns={{'database': 'VARCHAR', 'unit': 'VARCHAR', 'sample_time': 'TIMESTAMP', 'epoch': 'VARCHAR',
                           'read_ios': 'DOUBLE', 'read_bytes': 'DOUBLE', 'write_ios': 'DOUBLE',
                           'write_bytes': 'DOUBLE', 'read_time_ms': 'DOUBLE', 'write_time_ms': 'DOUBLE',
                           '_file': 'VARCHAR'}}) c JOIN ds_roles r ON c.unit = r.unit""")
    finally:
        os.unlink(tmp)
        claim.release()
    counted = sorted(n for n, r in role.items() if r == "part")
    if not counted:
        raise DbtierError(f"{paths[0]}: no whole disk among the devices ({', '.join(sorted(names))})",
                          "name the database's devices with --devices")
    notes = [f"diskstats: counted devices {', '.join(counted)}; the others are kept as detail"
             + ("" if opts.devices else " (choose with --devices)")]
    # Sector counts wrap as sectors (unsigned long), and are held as bytes (x 512): the wrap rule works in
    # sectors, so a 32-bit kernel's sector counter wrapping at 2^32 sectors is a wrap, not a reset.
    wrap = {"read_ios": "auto", "read_bytes": ("auto", 512), "write_ios": "auto", "write_bytes": ("auto", 512),
            "read_time_ms": 32, "write_time_ms": 32}
    return ReadResult(SOURCE, "counters", "ds_counters", [str(p) for p in paths], notes=notes, wrap_bits=wrap,
                      one_unit=True)


def _in_order(path: str, lineno: int, t: _dt.datetime, prev: _dt.datetime | None, prev_line: int) -> None:
    """A capture is written in time order: a snapshot not after the one before is a clock jump, a
    hand edit or two captures pasted together, and its deltas would be wrong."""
    problem = limits.time_problem(t)
    if problem:
        raise DbtierError(f"{path}: line {lineno}: snapshot time {problem}", "fix or remove that snapshot")
    if prev is not None and not (t > prev):
        raise DbtierError(f"{path}: line {lineno}: snapshot time {t.isoformat(sep=' ')} UTC is not after the "
                          f"previous snapshot's ({prev.isoformat(sep=' ')} UTC, line {prev_line})",
                          "keep each capture in time order (pass captures as separate files)")


def _parse_file(path: str, w: _csv.Writer, opts: ReadOptions) -> set[str]:
    names: set[str] = set()
    t: _dt.datetime | None = None
    btime: str | None = None
    host = None
    snapshots = 0
    rows = 0
    detect.refuse_other(path, "diskstats", "diskstats")
    prev_t: _dt.datetime | None = None
    prev_line = 0
    with csvio.text_io(path) as f:
        for lineno, line in enumerate(csvio.bounded(f, path), 1):
            s = line.strip()
            if not s:
                continue
            if "\ufffd" in s:
                bad = csvio.first_non_utf8(path)
                if bad:
                    raise csvio.not_utf8_error(path, bad)
            m = _MARKER.match(s)
            if m:
                kv = dict(_KV.findall(m.group(1)))
                t = parse_time(kv.get("time", ""), opts.tz)
                if t is None:
                    raise DbtierError(f"{path}: line {lineno}: the marker has no valid time= ({s[:80]!r})",
                                      "use collectors/diskstats.sh, which writes time=<epoch seconds>")
                btime = kv.get("btime")
                host = kv.get("host", host)
                snapshots += 1
                _in_order(path, lineno, t, prev_t, prev_line)
                prev_t, prev_line = t, lineno
                continue
            if s.startswith("#"):
                continue
            parts = s.split()
            if len(parts) == 1 or (len(parts) <= 3 and parse_time(s, opts.tz) is not None):
                tt = parse_time(s, opts.tz)
                if tt is None:
                    raise DbtierError(f"{path}: line {lineno}: {s[:60]!r} is neither a time nor a diskstats line",
                                      "each snapshot starts with a time line (date +%s) or the collector's marker")
                t, btime = tt, None
                snapshots += 1
                _in_order(path, lineno, t, prev_t, prev_line)
                prev_t, prev_line = t, lineno
                continue
            if len(parts) < 14:
                other = detect.other_source(path, SOURCE) if lineno < 60 else None
                if other:
                    raise DbtierError(f"{path}: line {lineno}: this looks like a {other} file, not diskstats",
                                      f"import it with --source {other.split()[0]}")
                raise DbtierError(f"{path}: line {lineno}: {len(parts)} fields; a /proc/diskstats line has 14, 18 "
                                  "or 20 (major minor name and the counters)", "fix or remove that line")
            if t is None:
                raise DbtierError(f"{path}: line {lineno}: a diskstats line before any snapshot time",
                                  "record each snapshot with collectors/diskstats.sh (it writes the time first)")
            name = parts[2]
            vals = []
            for i in (0, 2, 3, 4, 6, 7):
                v = parts[3 + i]
                if not (v.isascii() and v.isdigit()):
                    raise DbtierError(f"{path}: line {lineno}: field {4 + i} ({FIELDS[i]}) of {name}: {v!r} is not "
                                      "a counter", "fix or remove that line")
                if int(v) >= limits.COUNTER_MAX_UNSIGNED:
                    raise DbtierError(f"{path}: line {lineno}: field {4 + i} ({FIELDS[i]}) of {name}: {v} is beyond "
                                      "64 bits; the kernel's counters are not", "fix or remove that line")
                vals.append(int(v))
            if not (parts[0].isascii() and parts[0].isdigit() and parts[1].isascii() and parts[1].isdigit()):
                raise DbtierError(f"{path}: line {lineno}: {parts[0]} {parts[1]} is not a major minor device number",
                                  "fix or remove that line")
            r, rs, rms, wr, ws, wms = vals
            db = opts.database or host or database_name_from_file(path)
            w.writerow([db, name, t.isoformat(sep=" "), btime or "", r, rs * 512, wr, ws * 512, rms, wms, path])
            names.add(name)
            rows += 1
    if snapshots == 0:
        raise DbtierError(f"{path}: no snapshot times (plain /proc/diskstats has none)",
                          "record it with collectors/diskstats.sh, or put `date +%s` before each copy")
    if rows == 0:
        raise DbtierError(f"{path}: no /proc/diskstats lines", "record it with collectors/diskstats.sh")
    return names
