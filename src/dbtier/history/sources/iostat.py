"""`iostat -x` and `sar -d` text output (sysstat 10 to 12): rates per device per interval, as printed.

**iostat** must be run with `-t` (a time on each report): `iostat -x -t 60 > iostat.txt`, best with
`S_TIME_FORMAT=ISO` so the time carries its offset. Without an offset the time is local in
`--tz`, and a date like 03/04/24 is read month first (the C and en_US locales). The first report
is dropped: without `-y` it is the average since boot, and with `-y` its start is not printed.
Each later report covers the time since the previous one. Columns: r/s, w/s, rkB/s and wkB/s (or
rMB/s, wMB/s with -m; rsec/s, wsec/s in old versions), r_await and w_await (or await).

**sar -d** (`sar -d -p 60` live, or `sar -d -p -f /var/log/sysstat/saDD`): each line's time ends
an interval that began at the previous time (or at the block header's time). sar gives tps, not
reads and writes apart: read and write IOPS are split from tps in proportion to rkB/s and wkB/s
(an estimate, said in the result); await (one figure for both) is reported as both latencies.
`LINUX RESTART` lines begin a new segment; `Average:` lines are skipped; a time going back means
the next day. Without `-p`, devices are named devMAJOR-MINOR.

kB are 1024 bytes (sysstat's); MB/s in dbtier are 10^6 bytes/s. Which devices count: as diskstats
(whole disks by default, `--devices` to choose). The database is `--database`, else the host
name in the header line.
"""

from __future__ import annotations

import csv
import datetime as _dt
import os
import re
import zoneinfo
from pathlib import Path
from typing import Sequence

import duckdb

from dbtier.core.debris import temp_file
from dbtier.core.errors import DbtierError
from dbtier.core.files import sql_str
from dbtier.history import limits
from dbtier.history.sources import csvio
from dbtier.history.sources import detect
from dbtier.history.sources.diskstats import roles
from dbtier.history.tables import INTERVAL_TABLE_COLUMNS, MB, ReadOptions, ReadResult, database_name_from_file

_HEADER = re.compile(r"^Linux\s+\S+\s+\(([^)]*)\)\s+(\S+)")
_ISO_T = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d([+-]\d{4}|[+-]\d\d:\d\d|Z)?$")
_US_T = re.compile(r"^(\d\d/\d\d/\d{2,4})\s+(\d\d:\d\d:\d\d)(\s+[AP]M)?$")
KB = 1024.0


def _local_to_utc(t: _dt.datetime, tz: str) -> _dt.datetime:
    if t.tzinfo is None:
        t = t.replace(tzinfo=zoneinfo.ZoneInfo(tz))
    try:
        return t.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    except OverflowError:        # year 1 or 9999 moved across a day boundary: say "not plausible" below
        return _dt.datetime.max if t.year > 2000 else _dt.datetime.min


def _check_time(path: str, lineno: int, t: _dt.datetime) -> _dt.datetime:
    problem = limits.time_problem(t)
    if problem:
        raise DbtierError(f"{path}: line {lineno}: report time {problem}", "fix or remove that report")
    return t


def _date(text: str) -> _dt.date | None:
    for fmt in ("%Y-%m-%d", "%m/%d/%y", "%m/%d/%Y", "%d/%m/%Y", "%d.%m.%Y"):
        try:
            return _dt.datetime.strptime(text, fmt).date()
        except ValueError:
            pass
    return None


def _report_time(s: str, tz: str) -> _dt.datetime | None:
    s = s.strip()
    if _ISO_T.match(s):
        try:
            iso = re.sub(r"([+-]\d\d)(\d\d)$", r"\1:\2", s).replace("Z", "+00:00")
            return _local_to_utc(_dt.datetime.fromisoformat(iso), tz)
        except ValueError:
            return None
    m = _US_T.match(s)
    if m:
        d = _date(m.group(1))
        try:
            if m.group(3):
                tm = _dt.datetime.strptime(f"{m.group(2)} {m.group(3).strip()}", "%I:%M:%S %p").time()
            else:
                tm = _dt.datetime.strptime(m.group(2), "%H:%M:%S").time()
        except ValueError:
            return None
        if d is None:
            return None
        return _local_to_utc(_dt.datetime.combine(d, tm), tz)
    return None


def _num(path: str, lineno: int, col: str, v: str) -> float:
    try:
        if not v.isascii():
            raise ValueError(v)
        x = float(v.replace(",", "."))
    except ValueError:
        raise DbtierError(f"{path}: line {lineno}: column {col}: {v!r} is not a number",
                          "fix or remove that line") from None
    if not (x >= 0 and x != float("inf")):
        raise DbtierError(f"{path}: line {lineno}: column {col}: {v} is negative or not finite",
                          "fix or remove that line")
    if not (x < limits.COUNTER_MAX):
        raise DbtierError(f"{path}: line {lineno}: column {col}: {v} is absurd (beyond 64 bits)",
                          "fix or remove that line")
    return x


def _plausible(path: str, lineno: int, device: str, **rates: float | None) -> None:
    """One device's rates over one interval, against limits.py (iops, bytes_per_s, lat_ms)."""
    for name, v in rates.items():
        if v is None:
            continue
        kind = "iops" if name.endswith("iops") or name == "tps" else "lat_ms" if "await" in name else "bytes_per_s"
        problem = limits.rate_problem(kind, v)
        if problem:
            raise DbtierError(f"{path}: line {lineno}: {device}: {name.replace('_', ' ')}: {problem}",
                              "fix or remove that line")


def _utf8(path: str, line: str) -> None:
    if "\ufffd" in line:     # text_io replaced a byte that is not UTF-8: say where
        bad = csvio.first_non_utf8(path)
        if bad:
            raise csvio.not_utf8_error(path, bad)


def _pick(cols: list[str], *names: str) -> int | None:
    for n in names:
        if n in cols:
            return cols.index(n)
    return None


def _load(con: duckdb.DuckDBPyConnection, table: str, rows_file: str, devices: set[str], opts: ReadOptions,
          paths: Sequence[str | Path] = ()) -> None:
    role = roles(devices, opts.devices)
    con.execute("CREATE OR REPLACE TEMP TABLE io_roles (unit VARCHAR, role VARCHAR)")
    con.executemany("INSERT INTO io_roles VALUES (?, ?)", sorted(role.items()))
    con.execute(f"CREATE OR REPLACE TABLE {table} ({INTERVAL_TABLE_COLUMNS})")
    con.execute(f"""INSERT INTO {table}
        SELECT database, c.unit, r.role, start, "end", (epoch_us("end") - epoch_us(start)) / 1e6, read_iops, write_iops, iops,
               read_mbps, write_mbps, read_mbps + write_mbps, read_lat_ms, write_lat_ms
        FROM read_csv({sql_str(csvio.duck_path(rows_file))}, header=false, auto_detect=false, compression='none', delim=',', quote='"', escape='"',
             columns={{'database': 'VARCHAR', 'unit': 'VARCHAR', 'start': 'TIMESTAMP', 'end': 'TIMESTAMP',
                       'read_iops': 'DOUBLE', 'write_iops': 'DOUBLE', 'iops': 'DOUBLE', 'read_mbps': 'DOUBLE',
                       'write_mbps': 'DOUBLE', 'read_lat_ms': 'DOUBLE', 'write_lat_ms': 'DOUBLE'}}) c
        JOIN io_roles r ON c.unit = r.unit""")
    if not any(v == "part" for v in role.values()):
        raise DbtierError(f"{', '.join(map(str, paths[:3]))}: no whole disk among the devices "
                          f"({', '.join(sorted(devices))})",
                          "name the database's devices with --devices")


def _dupes(con: duckdb.DuckDBPyConnection, table: str, paths: Sequence[str | Path]) -> int:
    before = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    con.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT DISTINCT * FROM {table}")
    after = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    bad = con.execute(f'SELECT database, file_type, "end" FROM {table} GROUP BY database, file_type, "end" '
                      "HAVING count(*) > 1 LIMIT 1").fetchone()
    if bad:
        files = ", ".join(map(str, paths[:3])) + (" ..." if len(paths) > 3 else "")
        raise DbtierError(f"{files}: duplicate reports with different values: {bad[0]}, device {bad[1]} at "
                          f"{bad[2].isoformat(sep=' ')} UTC appears twice",
                          "import each report once (the files overlap)")
    return int(before - after)


# -- iostat -----------------------------------------------------------------------------------------

def read(con: duckdb.DuckDBPyConnection, paths: Sequence[str | Path], opts: ReadOptions) -> ReadResult:
    tmp, claim = temp_file("dbtier-iostat-", ".csv", "iostat parse file")
    devices: set[str] = set()
    try:
        with open(tmp, "w", newline="") as out:
            w = csv.writer(out)
            for p in paths:
                csvio.check_file(p)
                devices |= _parse_iostat(str(p), w, opts)
        _load(con, "io_intervals", tmp, devices, opts, paths)
    finally:
        os.unlink(tmp)
        claim.release()
    dropped = _dupes(con, "io_intervals", paths)
    notes = ["iostat: the first report of each file is dropped (the average since boot, or an interval whose start "
             "is not printed)"]
    if dropped:
        notes.append(f"{dropped} duplicate device reports were kept once")
    return ReadResult("iostat", "intervals", "io_intervals", [str(p) for p in paths], notes=notes,
                      duplicates_dropped=dropped)


def _parse_iostat(path: str, w, opts: ReadOptions) -> set[str]:
    devices: set[str] = set()
    host = None
    prev_t: _dt.datetime | None = None
    cur_t: _dt.datetime | None = None
    cols: list[str] | None = None
    in_dev = False
    saw_device_header = False
    reports = 0
    written = 0
    detect.refuse_other(path, "iostat", "iostat")
    with csvio.text_io(path) as f:
        for lineno, line in enumerate(csvio.bounded(f, path), 1):
            s = line.strip()
            if not s:
                in_dev = False
                continue
            _utf8(path, s)
            m = _HEADER.match(s)
            if m:
                host = m.group(1)
                continue
            t = _report_time(s, opts.tz)
            if t is not None:
                prev_t, cur_t = cur_t, _check_time(path, lineno, t)
                reports += 1
                in_dev = False
                continue
            if s.startswith("avg-cpu") or (not in_dev and re.fullmatch(r"[\d.,\s]+", s)):
                continue
            if s.startswith("Device"):
                cols = s.replace("Device:", "Device").split()
                saw_device_header = True
                need = [("r/s",), ("w/s",), ("rkB/s", "rMB/s", "rsec/s"), ("wkB/s", "wMB/s", "wsec/s")]
                miss = [a[0] for a in need if _pick(cols, *a) is None]
                if miss:
                    raise DbtierError(f"{path}: line {lineno}: missing columns: {', '.join(miss)} "
                                      "(this is not `iostat -x` output?)", "run iostat -x -t INTERVAL")
                in_dev = True
                continue
            if not in_dev or cols is None:
                if lineno < 60:
                    other = detect.other_source(path, "iostat")
                    if other:
                        raise DbtierError(f"{path}: line {lineno}: this looks like a {other} file, not iostat",
                                          f"import it with --source {other.split()[0]}")
                raise DbtierError(f"{path}: line {lineno}: {s[:60]!r} is not part of `iostat -x -t` output",
                                  "fix or remove that line")
            parts = s.split()
            if len(parts) != len(cols):
                raise DbtierError(f"{path}: line {lineno}: {len(parts)} fields where the Device header has "
                                  f"{len(cols)}", "fix or remove that line")
            if cur_t is None:
                raise DbtierError(f"{path}: no report times: iostat was run without -t",
                                  "run `iostat -x -t INTERVAL` (S_TIME_FORMAT=ISO for times with their offset)")
            vals = {c: _num(path, lineno, c, v) for c, v in zip(cols[1:], parts[1:])}   # (the first report's too)
            if prev_t is None:          # the first report: since boot, or start unknown
                devices.add(parts[0])
                continue
            if cur_t <= prev_t:
                raise DbtierError(f"{path}: line {lineno}: report time {cur_t.isoformat(sep=' ')} UTC is not after "
                                  f"the previous one", "import the files in time order, each report once")
            rk = _pick(cols, "rkB/s", "rMB/s", "rsec/s")
            wk = _pick(cols, "wkB/s", "wMB/s", "wsec/s")
            scale = {"rkB/s": KB, "wkB/s": KB, "rMB/s": 1048576.0, "wMB/s": 1048576.0, "rsec/s": 512.0,
                     "wsec/s": 512.0}
            rm = vals[cols[rk]] * scale[cols[rk]] / MB
            wm = vals[cols[wk]] * scale[cols[wk]] / MB
            rl = vals.get("r_await", vals.get("await"))
            wl = vals.get("w_await", vals.get("await"))
            _plausible(path, lineno, parts[0], read_iops=vals["r/s"], write_iops=vals["w/s"],
                       read_bytes_per_s=rm * MB, write_bytes_per_s=wm * MB, r_await=rl, w_await=wl)
            db = opts.database or host or database_name_from_file(path)
            w.writerow([db, parts[0], prev_t.isoformat(sep=" "), cur_t.isoformat(sep=" "), vals["r/s"], vals["w/s"],
                        vals["r/s"] + vals["w/s"], rm, wm, rl if rl is not None else "", wl if wl is not None else ""])
            devices.add(parts[0])
            written += 1
    if not saw_device_header:
        detect.refuse_other(path, "iostat", "iostat")
        raise DbtierError(f"{path}: no `Device` header: not `iostat -x` output", "run iostat -x -t INTERVAL")
    if reports == 0:
        raise DbtierError(f"{path}: no report times: iostat was run without -t",
                          "run `iostat -x -t INTERVAL` (S_TIME_FORMAT=ISO for times with their offset)")
    if written == 0:
        raise DbtierError(f"{path}: only one report; the first is dropped, so nothing is left",
                          "let iostat run for at least two intervals")
    return devices


# -- sar -d -------------------------------------------------------------------------------------------

def read_sar(con: duckdb.DuckDBPyConnection, paths: Sequence[str | Path], opts: ReadOptions) -> ReadResult:
    tmp, claim = temp_file("dbtier-sar-", ".csv", "sar parse file")
    devices: set[str] = set()
    restarts = 0
    try:
        with open(tmp, "w", newline="") as out:
            w = csv.writer(out)
            for p in paths:
                csvio.check_file(p)
                d, r = _parse_sar(str(p), w, opts)
                devices |= d
                restarts += r
        _load(con, "sar_intervals", tmp, devices, opts, paths)
    finally:
        os.unlink(tmp)
        claim.release()
    dropped = _dupes(con, "sar_intervals", paths)
    notes = ["sar: `LINUX RESTART` records begin new segments" + (f" ({restarts} seen)" if restarts else "")]
    if dropped:
        notes.append(f"{dropped} duplicate device lines were kept once")
    lim = ["sar -d reports tps, not reads and writes apart: read/write IOPS are tps split in proportion to "
           "rkB/s and wkB/s (an estimate; total IOPS are exact), and await is both latencies"]
    return ReadResult("sar", "intervals", "sar_intervals", [str(p) for p in paths], notes=notes,
                      duplicates_dropped=dropped, limitations=lim)


def _parse_sar(path: str, w, opts: ReadOptions) -> tuple[set[str], int]:
    devices: set[str] = set()
    host = None
    day: _dt.date | None = None
    cols: list[str] | None = None
    dev_i = 0
    prev_t = cur_t = None
    last_clock: _dt.time | None = None
    restarts = written = 0
    detect.refuse_other(path, "sar", "sar")
    with csvio.text_io(path) as f:
        for lineno, line in enumerate(csvio.bounded(f, path), 1):
            s = line.strip()
            if not s:
                continue
            _utf8(path, s)
            m = _HEADER.match(s)
            if m:
                host, day = m.group(1), _date(m.group(2))
                if day is None:
                    raise DbtierError(f"{path}: line {lineno}: the date {m.group(2)!r} is not one dbtier reads",
                                      "run sar with S_TIME_FORMAT=ISO or LC_TIME=C")
                if not (limits.FIRST_YEAR <= day.year <= limits.LAST_YEAR):
                    raise DbtierError(f"{path}: line {lineno}: the date {m.group(2)!r} is outside "
                                      f"{limits.FIRST_YEAR}-{limits.LAST_YEAR}: a typo or a clock fault",
                                      "fix the header line's date")
                last_clock = None
                continue
            if s.startswith("Average:") or s.startswith("Summary"):
                continue
            parts = s.split()
            ampm = len(parts) > 1 and parts[1] in ("AM", "PM")
            clock_txt = " ".join(parts[:2]) if ampm else parts[0]
            rest = parts[2:] if ampm else parts[1:]
            try:
                clock = (_dt.datetime.strptime(clock_txt, "%I:%M:%S %p") if ampm else
                         _dt.datetime.strptime(clock_txt, "%H:%M:%S")).time()
            except ValueError:
                if lineno < 60:
                    other = detect.other_source(path, "sar")
                    if other:
                        raise DbtierError(f"{path}: line {lineno}: this looks like a {other} file, not sar -d",
                                          f"import it with --source {other.split()[0]}") from None
                raise DbtierError(f"{path}: line {lineno}: {s[:60]!r} does not start with a time",
                                  "pass `sar -d` output as sar prints it") from None
            if day is None:
                raise DbtierError(f"{path}: line {lineno}: no `Linux ... (host) DATE` header line before the data",
                                  "keep sar's first line: it has the date")
            if last_clock is not None and clock < last_clock:
                day = day + _dt.timedelta(days=1)
            last_clock = clock
            t = _check_time(path, lineno, _local_to_utc(_dt.datetime.combine(day, clock), opts.tz))
            if t != cur_t:
                prev_t, cur_t = cur_t, t
            if rest and rest[0] == "LINUX" and len(rest) > 1 and rest[1] == "RESTART":
                restarts += 1
                prev_t = None
                continue
            if "DEV" in rest and "tps" in rest:      # sysstat 12 with -p puts DEV last
                cols = rest
                dev_i = cols.index("DEV")
                need = [("tps",), ("rkB/s", "rd_sec/s"), ("wkB/s", "wr_sec/s")]
                miss = [a[0] for a in need if _pick(cols, *a) is None]
                if miss:
                    raise DbtierError(f"{path}: line {lineno}: missing columns: {', '.join(miss)} "
                                      "(is this `sar -d` output?)", "run sar -d -p")
                continue
            if cols is None:
                raise DbtierError(f"{path}: line {lineno}: data before the `DEV tps ...` header line",
                                  "pass `sar -d` output as sar prints it")
            if len(rest) != len(cols):
                raise DbtierError(f"{path}: line {lineno}: {len(rest)} fields where the DEV header has {len(cols)}",
                                  "fix or remove that line")
            vals = {c: _num(path, lineno, c, v) for i, (c, v) in enumerate(zip(cols, rest)) if i != dev_i}
            if prev_t is None:          # (after a restart: no interval, but its numbers are checked too)
                continue
            dev = rest[dev_i]
            rk = cols[_pick(cols, "rkB/s", "rd_sec/s")]
            wk = cols[_pick(cols, "wkB/s", "wr_sec/s")]
            scale = {"rkB/s": KB, "wkB/s": KB, "rd_sec/s": 512.0, "wr_sec/s": 512.0}
            rb, wb = vals[rk] * scale[rk], vals[wk] * scale[wk]
            tps = vals["tps"]
            share = rb / (rb + wb) if rb + wb > 0 else 0.0
            ri = tps * share if rb + wb > 0 else 0.0
            wi = tps - ri if rb + wb > 0 else 0.0
            lat = vals.get("await")
            _plausible(path, lineno, dev, tps=tps, read_bytes_per_s=rb, write_bytes_per_s=wb, await_ms=lat)
            db = opts.database or host or database_name_from_file(path)
            w.writerow([db, dev, prev_t.isoformat(sep=" "), cur_t.isoformat(sep=" "), ri, wi, tps, rb / MB,
                        wb / MB, "" if lat is None else lat, "" if lat is None else lat])
            devices.add(dev)
            written += 1
    if written == 0:
        detect.refuse_other(path, "sar", "sar -d")
        raise DbtierError(f"{path}: no `sar -d` device lines", "run sar -d -p INTERVAL (or sar -d -p -f saDD)")
    return devices, restarts
