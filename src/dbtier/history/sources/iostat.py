"""sysstat's `iostat -x` (text, or JSON with `-o JSON`) and `sar -d` output: rates per device per interval.

**iostat**, text or JSON (sysstat 10 to 12; the JSON is read by iostat_json.py). Report times:

- with `-t` (a time on each report: `iostat -x -t 60`, best with `S_TIME_FORMAT=ISO` so the time
  carries its offset), each report covers the time since the previous one. Without an offset the
  time is local in `--tz`, and a date like 03/04/24 is read month first (the C and en_US locales).
- without `-t`, the reports are `--interval` seconds apart (iostat's INTERVAL), the first at
  `--start` (an ISO 8601 time, or a time of day on the header's date), else at 00:00 of the header's
  date (in `--tz`; said as a limitation: the time of day is not known). Report k covers
  [start + (k-1) INTERVAL, start + k INTERVAL], whether or not `-y` was given (with -y, iostat prints
  its first report one interval after it starts: give that as --start).

The first report of each file is left out: without `-y` it is the average since boot, not an
interval; with `-y` and `-t` its start is not printed (and the file does not say whether -y was
given). Columns: r/s, w/s, rkB/s and wkB/s (or rMB/s, wMB/s with -m; rsec/s, wsec/s in old
versions), r_await and w_await (or await). `iostat` without `-x` (tps only) is refused.

**sar -d** (`sar -d -p 60` live, or `sar -d -p -f /var/log/sysstat/saDD`): each line's time ends
an interval that began at the previous time (or at the block header's time). sar gives tps, not
reads and writes apart: read and write IOPS are split from tps in proportion to rkB/s and wkB/s
(an estimate, said in the result); await (one figure for both) is reported as both latencies.
`LINUX RESTART` lines begin a new segment; `Average:` lines are skipped; a time going back means
the next day. Without `-p`, devices are named devMAJOR-MINOR.

kB are 1024 bytes (sysstat's); MB/s in dbtier are 10^6 bytes/s. Which devices count: as diskstats
(whole disks by default: no partitions of a listed disk, loop, ram, zram, md or dm-N devices), and
device-mapper devices under their own names (`iostat -N`, `sar -p`: vg0-data, luks-...; a '-' that
no kernel disk name has) are not counted either; `--devices` names them instead, never a disk and
one of its partitions together (its I/O would count twice). A device-mapper name without a '-'
(multipath's mpatha under -N) cannot be told from a disk: give --devices. The database is
`--database`, else the host name in the header line (JSON: `nodename`).
"""

from __future__ import annotations

import csv
import datetime as _dt
import os
import re
import zoneinfo
from pathlib import Path
from typing import Container, Iterable, Sequence

import duckdb

from dbtier.core.debris import temp_file
from dbtier.core.errors import DbtierError
from dbtier.core.files import sql_str
from dbtier.core.units import duration_text
from dbtier.history import limits
from dbtier.history import store
from dbtier.history.sources import csvio
from dbtier.history.sources import detect
from dbtier.history.sources import iostat_json
from dbtier.history.sources.diskstats import is_partition_of, roles
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


def _plausible(path: str, where: str, device: str, **rates: float | None) -> None:
    """One device's rates over one interval, against limits.py (iops, bytes_per_s, lat_ms)."""
    for name, v in rates.items():
        if v is None:
            continue
        kind = "iops" if name.endswith("iops") or name == "tps" else "lat_ms" if "await" in name else "bytes_per_s"
        problem = limits.rate_problem(kind, v)
        if problem:
            raise DbtierError(f"{path}: {where}: {device}: {name.replace('_', ' ')}: {problem}",
                              "fix or remove that line")


def _utf8(path: str, line: str) -> None:
    if "\ufffd" in line:     # text_io replaced a byte that is not UTF-8: say where
        bad = csvio.first_non_utf8(path)
        if bad:
            raise csvio.not_utf8_error(path, bad)


def _pick(cols: Container[str], *names: str) -> str | None:
    for n in names:
        if n in cols:
            return n
    return None


# -- devices ----------------------------------------------------------------------------------------

_BY_ID = re.compile(r"^(ata|scsi|nvme|wwn|virtio|usb|pci|mmc|ide|xen|memstick|ieee1394|cciss)-")
_BY_ID_PART = re.compile(r"-part\d+$")
_DEV_MM = re.compile(r"^dev\d+-\d+$")


def mapper_names(names: Iterable[str]) -> set[str]:
    """The names that are device-mapper devices under their own names (`iostat -N`, `sar -p`: vg0-data,
    luks-3f2a..., a '-' no kernel disk name has), and partitions under persistent names (`iostat -j ID`:
    ata-...-part1). dm-N and sar's devMAJOR-MINOR are diskstats.whole_disks' to judge."""
    return {n for n in names if "-" in n and not n.startswith("dm-") and not _DEV_MM.match(n)
            and not (_BY_ID.match(n) and not _BY_ID_PART.search(n))}


def device_roles(names: set[str], devices: str | None) -> dict[str, str]:
    """Each device's role: `part` (counted) or `detail`. See the module docstring."""
    if devices:
        role = roles(names, devices)
        chosen = sorted(n for n, r in role.items() if r == "part")
        for d in chosen:
            for q in chosen:
                if is_partition_of(q, d) or (_BY_ID_PART.search(q) and _BY_ID_PART.sub("", q) == d):
                    raise DbtierError(f"--devices names {d} and {q}, a partition of it: its I/O would count twice",
                                      f"name the disk or its partitions, not both (e.g. --devices {d})")
        return role
    mapper = mapper_names(names)
    role = roles(names - mapper, None)
    role.update({n: "detail" for n in mapper})
    return role


def _load(con: duckdb.DuckDBPyConnection, table: str, rows_file: str, devices: set[str], opts: ReadOptions,
          paths: Sequence[str | Path] = ()) -> dict[str, str]:
    role = device_roles(devices, opts.devices)
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
    return role


def _dupes(con: duckdb.DuckDBPyConnection, table: str, paths: Sequence[str | Path]) -> int:
    before = store.one_row(con.execute(f"SELECT count(*) FROM {table}"))[0]
    con.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT DISTINCT * FROM {table}")
    after = store.one_row(con.execute(f"SELECT count(*) FROM {table}"))[0]
    bad = con.execute(f'SELECT database, file_type, "end" FROM {table} GROUP BY database, file_type, "end" '
                      "HAVING count(*) > 1 LIMIT 1").fetchone()
    if bad:
        files = ", ".join(map(str, paths[:3])) + (" ..." if len(paths) > 3 else "")
        raise DbtierError(f"{files}: duplicate reports with different values: {bad[0]}, device {bad[1]} at "
                          f"{bad[2].isoformat(sep=' ')} UTC appears twice",
                          "import each report once (the files overlap)")
    return int(before - after)


# -- iostat: report times ---------------------------------------------------------------------------

_CLOCK = re.compile(r"^\d\d?:\d\d(:\d\d(\.\d+)?)?$")
NO_TIMES = "no report times: iostat was run without -t"
NO_TIMES_NEXT = ("give --interval SECONDS (iostat's INTERVAL) and --start TIME (when the first report was "
                 "printed), or run `iostat -x -t INTERVAL` (S_TIME_FORMAT=ISO for times with their offset)")


def start_time(path: str, day_text: str | None, opts: ReadOptions) -> tuple[_dt.datetime, str | None]:
    """The first report's time (UTC) in a file without -t: --start (ISO 8601, or a time of day on the
    header's date), else 00:00 of the header's date; and what was assumed, when the time of day is not known."""
    day = _date(day_text) if day_text else None
    s = (opts.start or "").strip()
    assumed = None
    bad_start = DbtierError(f"--start {s!r}: not an ISO 8601 time", "e.g. --start 2026-11-02T09:00 (in --tz), "
                            "2026-11-02T09:00+01:00, or 09:00 on iostat's header date")
    if s and _CLOCK.match(s):
        if day is None:
            raise DbtierError(f"--start {s}: a time of day, but {path} has no header date to put it on",
                              "give the whole time: --start 2026-11-02T09:00")
        try:
            local = _dt.datetime.combine(day, _dt.time.fromisoformat("0" + s if s.index(":") == 1 else s))
        except ValueError:
            raise bad_start from None
    elif s:
        try:
            local = _dt.datetime.fromisoformat(re.sub(r"([+-]\d\d)(\d\d)$", r"\1:\2", s).replace("Z", "+00:00"))
        except ValueError:
            raise bad_start from None
    elif day is not None:
        local = _dt.datetime.combine(day, _dt.time())
        assumed = (f"{path}: iostat without -t: the reports are placed {duration_text(opts.interval_s or 0)} apart "
                   f"from 00:00 of the header's date {day_text} ({opts.tz}), as the time of day is not in the file: "
                   "the peaks and percentiles hold, the hours of day and calendar days do not (give --start)")
    else:
        raise DbtierError(f"{path}: {NO_TIMES}, and no header date", NO_TIMES_NEXT)
    t = _local_to_utc(local, opts.tz)
    problem = limits.time_problem(t)
    if problem:
        raise DbtierError(f"{path}: the first report's time {t.isoformat(sep=' ')} UTC {problem}",
                          "fix --start")
    return t, assumed


class Reports:
    """One host's iostat reports in one file (text or JSON), to interval rows: their times (-t, or
    --interval from start_time()), the first report left out, the units, the plausibility limits."""

    def __init__(self, path: str, w, opts: ReadOptions, host: str | None = None, day_text: str | None = None):
        self.path, self.w, self.opts = path, w, opts
        self.host, self.day_text = host, day_text
        self.timed: bool | None = None
        self.n = 0                          # reports begun
        self.prev_t: _dt.datetime | None = None
        self.cur_t: _dt.datetime | None = None
        self.origin: _dt.datetime | None = None
        self.devices: set[str] = set()
        self.units: set[str] = set()
        self.written = 0
        self.assumed: str | None = None

    def begin(self, where: str, stamp: str | None) -> None:
        """A report begins; `stamp` is its time as -t printed it (None: no -t)."""
        path, timed = self.path, stamp is not None
        if self.timed is not None and self.timed != timed:
            raise DbtierError(f"{path}: {where}: a report {'with' if timed else 'without'} a time after reports "
                              f"{'without' if timed else 'with'} one", "import each iostat run as it wrote it")
        self.timed = timed
        if stamp is not None:       # timed
            t = _report_time(stamp, self.opts.tz)
            if t is None:
                raise DbtierError(f"{path}: {where}: report time {stamp!r} is not one dbtier reads",
                                  "run iostat with S_TIME_FORMAT=ISO (times with their offset) or LC_TIME=C")
            problem = limits.time_problem(t)
            if problem:
                raise DbtierError(f"{path}: {where}: report time {problem}", "fix or remove that report")
            self.prev_t, self.cur_t = self.cur_t, t
        else:
            step = self.opts.interval_s
            if step is None:
                raise DbtierError(f"{path}: {NO_TIMES}: give --interval", NO_TIMES_NEXT)
            if not (0 < step < 1e9):
                raise DbtierError(f"--interval {step:g}: not a number of seconds between reports",
                                  "give iostat's INTERVAL in seconds")
            if self.origin is None:
                self.origin, self.assumed = start_time(path, self.day_text, self.opts)
            try:
                self.cur_t = self.origin + _dt.timedelta(seconds=step * self.n)
            except OverflowError:
                self.cur_t = _dt.datetime.max
            self.prev_t = None if self.n == 0 else self.origin + _dt.timedelta(seconds=step * (self.n - 1))
            if limits.time_problem(self.cur_t):
                raise DbtierError(f"{path}: {where}: report {self.n + 1}, {step:g} s after report 1, "
                                  f"{limits.time_problem(self.cur_t)}", "check --interval and --start")
        self.n += 1

    def device(self, where: str, name: str, vals: dict[str, float]) -> None:
        """One device's line of the current report (`vals`: column -> number, checked by the caller)."""
        path = self.path
        if self.n == 0:
            raise DbtierError(f"{path}: {where}: device figures before the first report", "pass iostat's output whole")
        rk = _pick(vals, *READ_BYTES)
        wk = _pick(vals, *WRITE_BYTES)
        if "r/s" not in vals or "w/s" not in vals or rk is None or wk is None:
            miss = [c for c, ok in (("r/s", "r/s" in vals), ("w/s", "w/s" in vals), ("rkB/s", rk), ("wkB/s", wk))
                    if not ok]
            tps = " (tps alone: iostat without -x)" if "tps" in vals else ""
            raise DbtierError(f"{path}: {where}: {name}: no {', '.join(miss)}{tps}: not `iostat -x` output",
                              "run iostat -x (reads and writes apart)")
        self.devices.add(name)
        self.units.add(rk.removeprefix("r"))
        if self.n == 1:             # the first report: the average since boot, or (-y with -t) start unknown
            return
        # begin() set both for every report after the first
        assert self.cur_t is not None and self.prev_t is not None
        if self.cur_t <= self.prev_t:
            raise DbtierError(f"{path}: {where}: report time {self.cur_t.isoformat(sep=' ')} UTC is not after "
                              f"the previous one", "import the files in time order, each report once")
        rm = vals[rk] * SCALE[rk] / MB
        wm = vals[wk] * SCALE[wk] / MB
        rl = vals.get("r_await", vals.get("await"))
        wl = vals.get("w_await", vals.get("await"))
        _plausible(path, where, name, read_iops=vals["r/s"], write_iops=vals["w/s"],
                   read_bytes_per_s=rm * MB, write_bytes_per_s=wm * MB, r_await=rl, w_await=wl)
        db = self.opts.database or self.host or database_name_from_file(path)
        self.w.writerow([db, name, self.prev_t.isoformat(sep=" "), self.cur_t.isoformat(sep=" "), vals["r/s"],
                         vals["w/s"], vals["r/s"] + vals["w/s"], rm, wm, "" if rl is None else rl,
                         "" if wl is None else wl])
        self.written += 1

    def finish(self) -> None:
        if self.n == 1:
            raise DbtierError(f"{self.path}: one report only: iostat's first report is the average since boot "
                              "(or, with -y, an interval whose start is not printed), so no interval is left",
                              "let iostat run for at least two reports: iostat -x -o JSON INTERVAL COUNT")


READ_BYTES = ("rkB/s", "rMB/s", "rsec/s")
WRITE_BYTES = ("wkB/s", "wMB/s", "wsec/s")
SCALE = {"rkB/s": KB, "wkB/s": KB, "rMB/s": 1048576.0, "wMB/s": 1048576.0, "rsec/s": 512.0, "wsec/s": 512.0}


# -- iostat -----------------------------------------------------------------------------------------

def read(con: duckdb.DuckDBPyConnection, paths: Sequence[str | Path], opts: ReadOptions) -> ReadResult:
    tmp, claim = temp_file("dbtier-iostat-", ".csv", "iostat parse file")
    devices: set[str] = set()
    runs: list[Reports] = []
    notes: list[str] = []
    try:
        with open(tmp, "w", newline="") as out:
            w = csv.writer(out)
            for p in paths:
                csvio.check_file(p)
                runs += _parse_json(str(p), w, opts, notes) if _is_json(p) else [_parse_iostat(str(p), w, opts)]
        for r in runs:
            devices |= r.devices
        role = _load(con, "io_intervals", tmp, devices, opts, paths)
    finally:
        os.unlink(tmp)
        claim.release()
    dropped = _dupes(con, "io_intervals", paths)
    counted = sorted(n for n, r in role.items() if r == "part")
    others = sorted(n for n, r in role.items() if r != "part")
    notes[:0] = ["iostat: the first report of each file is left out: without -y it is the average since boot, "
                 "not an interval (with -y and -t, an interval whose start is not printed)",
                 f"iostat: counted devices {', '.join(counted)}"
                 + (f"; {', '.join(others)} kept as detail (partitions, device-mapper, loop ...)" if others else "")]
    untimed = [r for r in runs if not r.timed]
    if any(r.timed for r in runs) and (opts.interval_s is not None or opts.start):
        notes.append("iostat: --interval and --start are not used for reports that carry their time (-t)")
    if dropped:
        notes.append(f"{dropped} duplicate device reports were kept once")
    step = opts.interval_s if untimed and len(untimed) == len(runs) else None
    units = sorted({u for r in runs for u in r.units})
    said = {"statistic": "iostat -x's means over each report's interval (r/s, w/s, r_await, w_await)",
            "unit": ", ".join(f"{u} of {'1024 bytes' if u == 'kB/s' else '2^20 bytes' if u == 'MB/s' else '512-byte sectors'}"
                              for u in units) or None,
            "period_s": step}
    return ReadResult("iostat", "intervals", "io_intervals", [str(p) for p in paths], notes=notes,
                      duplicates_dropped=dropped, limitations=[r.assumed for r in untimed if r.assumed],
                      semantics="rate", native_step_s=step, averaging_s=step, extra={"provenance": said})


def _is_json(p: str | Path) -> bool:
    with open(p, "rb") as f:
        return f.read(4096).decode("utf-8", "replace").lstrip("\ufeff \t\r\n").startswith(("{", "["))


def _parse_json(path: str, w, opts: ReadOptions, notes: list[str]) -> list[Reports]:
    """sysstat's JSON (iostat_json.walk): one Reports per host."""
    detect.refuse_other(path, "iostat", "iostat")
    text = iostat_json.read_text(path)
    if "\ufffd" in text:
        _utf8(path, "\ufffd")
    end = iostat_json.Walk()
    runs: list[Reports] = []
    cur: Reports | None = None
    saw_disk = False
    for item in iostat_json.walk(path, text, end):
        if isinstance(item, iostat_json.Host):
            if cur is not None:
                cur.finish()
            name, day = item.fields.get("nodename"), item.fields.get("date")
            cur = Reports(path, w, opts, host=str(name) if name is not None else None,
                          day_text=str(day) if day is not None else None)
            runs.append(cur)
            continue
        rep, where = item.data, f"report {item.index} (line {item.line})"
        stamp = rep.get("timestamp")
        if isinstance(stamp, dict) or any(isinstance(d, dict) and "disk-device" in d for d in rep.get("disk") or ()):
            raise DbtierError(f"{path}: this is sar's JSON (`sadf -j`), not iostat's",
                              "import sar's text instead: `sar -d -p -f saDD > sar.txt`, then --source sar")
        if stamp is not None and not isinstance(stamp, str):
            raise DbtierError(f"{path}: {where}: \"timestamp\" is {stamp!r}, not a time", "pass iostat's JSON whole")
        disks = rep.get("disk")
        if disks is None:
            continue                      # (iostat -c: CPU only; refused below when no report has disks)
        if not isinstance(disks, list):
            raise DbtierError(f"{path}: {where}: \"disk\" is not a list of devices", "pass iostat's JSON whole")
        saw_disk = True
        assert cur is not None          # walk() yields each host before its reports
        cur.begin(where, stamp)
        for d in disks:
            name = d.get("disk_device") if isinstance(d, dict) else None
            if not isinstance(name, str) or not name.strip():
                raise DbtierError(f"{path}: {where}: a device without its \"disk_device\" name",
                                  "pass iostat's JSON whole")
            vals = {k: _json_num(path, where, name, k, v) for k, v in d.items() if k != "disk_device"}
            cur.device(where, name.strip(), vals)
    if not saw_disk:
        raise DbtierError(f"{path}: sysstat JSON without device figures (iostat -c, or no report)",
                          "run iostat -x -o JSON INTERVAL COUNT")
    assert cur is not None          # a report with disks was read: its host came before it
    cur.finish()
    if end.truncated:
        notes.append(f"{path}: {end.truncated}")
    return runs


def _json_num(path: str, where: str, device: str, key: str, v: object) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise DbtierError(f"{path}: {where}: {device}: {key!r} is {str(v)[:40]!r}, not a number",
                          "pass iostat's JSON as it wrote it")
    x = float(v)
    if not (x >= 0 and x != float("inf")):
        raise DbtierError(f"{path}: {where}: {device}: {key} {v} is negative or not finite", "fix or remove that report")
    if not (x < limits.COUNTER_MAX):
        raise DbtierError(f"{path}: {where}: {device}: {key} {v} is absurd (beyond 64 bits)", "fix or remove that report")
    return x


def _parse_iostat(path: str, w, opts: ReadOptions) -> Reports:
    run = Reports(path, w, opts)
    cols: list[str] | None = None
    in_dev = False
    saw_device_header = False
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
                run.host, run.day_text = m.group(1), m.group(2)
                continue
            if _US_T.match(s) or _ISO_T.match(s):
                run.begin(f"line {lineno}", s)
                in_dev = False
                continue
            if s.startswith("avg-cpu") or (not in_dev and re.fullmatch(r"[\d.,\s]+", s)):
                continue
            if s.startswith("Device"):
                cols = s.replace("Device:", "Device").split()
                saw_device_header = True
                need = [("r/s",), ("w/s",), READ_BYTES, WRITE_BYTES]
                miss = [a[0] for a in need if _pick(cols, *a) is None]
                if miss:
                    raise DbtierError(f"{path}: line {lineno}: missing columns: {', '.join(miss)} "
                                      "(this is not `iostat -x` output?)", "run iostat -x -t INTERVAL")
                if not run.timed:           # without -t, each Device header begins a report
                    run.begin(f"line {lineno}", None)
                in_dev = True
                continue
            if not in_dev or cols is None:
                if lineno < 60:
                    other = detect.other_source(path, "iostat")
                    if other:
                        raise DbtierError(f"{path}: line {lineno}: this looks like a {other} file, not iostat",
                                          f"import it with --source {other.split()[0]}")
                raise DbtierError(f"{path}: line {lineno}: {s[:60]!r} is not part of `iostat -x` output",
                                  "fix or remove that line")
            parts = s.split()
            if len(parts) != len(cols):
                raise DbtierError(f"{path}: line {lineno}: {len(parts)} fields where the Device header has "
                                  f"{len(cols)}", "fix or remove that line")
            vals = {c: _num(path, lineno, c, v) for c, v in zip(cols[1:], parts[1:])}   # (the first report's too)
            run.device(f"line {lineno}", parts[0], vals)
    if not saw_device_header:
        detect.refuse_other(path, "iostat", "iostat")
        raise DbtierError(f"{path}: no `Device` header: not `iostat -x` output", "run iostat -x -t INTERVAL")
    run.finish()
    return run


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
            rk = _pick(cols, "rkB/s", "rd_sec/s")
            wk = _pick(cols, "wkB/s", "wr_sec/s")
            assert rk is not None and wk is not None        # the header was refused without them
            scale = {"rkB/s": KB, "wkB/s": KB, "rd_sec/s": 512.0, "wr_sec/s": 512.0}
            rb, wb = vals[rk] * scale[rk], vals[wk] * scale[wk]
            tps = vals["tps"]
            share = rb / (rb + wb) if rb + wb > 0 else 0.0
            ri = tps * share if rb + wb > 0 else 0.0
            wi = tps - ri if rb + wb > 0 else 0.0
            lat = vals.get("await")
            _plausible(path, f"line {lineno}", dev, tps=tps, read_bytes_per_s=rb, write_bytes_per_s=wb, await_ms=lat)
            db = opts.database or host or database_name_from_file(path)
            w.writerow([db, dev, prev_t.isoformat(sep=" "), cur_t.isoformat(sep=" "), ri, wi, tps, rb / MB,
                        wb / MB, "" if lat is None else lat, "" if lat is None else lat])
            devices.add(dev)
            written += 1
    if written == 0:
        detect.refuse_other(path, "sar", "sar -d")
        raise DbtierError(f"{path}: no `sar -d` device lines", "run sar -d -p INTERVAL (or sar -d -p -f saDD)")
    return devices, restarts
