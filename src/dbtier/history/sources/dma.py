"""Google Database Migration Assessment (DMA) collections for Oracle: hour-of-day I/O statistics.

Input: the .zip or .tgz the DMA collector writes (or its extracted directory, or its CSV files).
dbtier reads three extracts:

- `opdb__dbahistsysstat__*.csv`: per instance and hour of day (`HO`, `HOUR` in older collectors),
  statistics of the per-snapshot deltas of each system statistic: CNT, AVG, MEDIAN, MIN, MAX,
  SUM and PERC50/75/90/95/100. dbtier uses `physical read total IO requests`, `physical write
  total IO requests`, `physical read total bytes` and `physical write total bytes`.
- `opdb__awrsnapdetails__*.csv`: per instance and hour, the snapshots' count and their total
  length (SUM_SNAPS_DIFF_SECS), first and last begin time.
- `opdb__dbsummary__*.csv` (optional): DB_NAME and DB_SIZE_ALLOCATED_GB (the capacity).

Both formats the collectors have used are read: pipe-delimited with a plain header (collector
2.0.6+), and comma-delimited under SQL*Plus's concatenation header (`PKEY||','||DBID||...`, cut
short by the column width; values may be padded with spaces) in older ones.

Rates: a statistic S of the deltas in hour h gives S / (SUM_SNAPS_DIFF_SECS / CNT) per second
(the hour's mean snapshot length); the mean is exact, SUM_VALUE / SUM_SNAPS_DIFF_SECS. The result
has, per instance, one row per hour of day and statistic (avg, p50, p75, p90, p95, max).

What this source cannot give: these are statistics per hour of day, not a time series, so there
is no true peak of a sum (read + write, file types, instances, several databases), and no p99.
The database's p50 and p95 are the highest hour-of-day p50 and p95: an upper bound of the
percentile over all snapshots (each hour's p95 is at most their maximum, so the mixture's is too);
max is exact. The result says so in `limitations`. Times (MIN/MAX_BEGIN_INTERVAL_TIME) are the
database's local time, read in `--tz`.
"""

from __future__ import annotations

import csv
import lzma
import os
import re
import tarfile
import zipfile
import zlib
from pathlib import Path
from typing import Any, Literal, Sequence, overload

import duckdb

from dbtier.core.errors import DbtierError
from dbtier.core.files import is_regular, regular_file
from dbtier.history import limits
from dbtier.history import store
from dbtier.history.sources import detect
from dbtier.history.series import finite_or_none, iso
from dbtier.history.tables import MB, ReadOptions, ReadResult, instance_fields
from dbtier.history.sources.times import utc_sql

# What the result's `limitations` says about this source (see the module docstring).
DMA_LIMITATION = ("dma gives hour-of-day statistics of per-snapshot deltas, not a time series: it cannot give "
                  "true peaks of sums (of file types, instances or databases), nor p99. p50 and p95 here are the "
                  "highest hour-of-day p50/p95 (an upper bound of the percentile over all snapshots); max is exact.")

SOURCE = "dma"
SYSSTAT_COLS = ("pkey", "dbid", "instance_number", "hour", "stat_name", "cnt", "avg_value", "mode_value",
                "median_value", "min_value", "max_value", "sum_value", "perc50", "perc75", "perc90", "perc95",
                "perc100")
SNAP_COLS = ("pkey", "dbid", "instance_number", "hour", "min_snap_id", "max_snap_id", "min_begin_interval_time",
             "max_begin_interval_time", "cnt", "sum_snaps_diff_secs", "avg_snaps_diff_secs",
             "median_snaps_diff_secs", "mode_snaps_diff_secs", "min_snaps_diff_secs", "max_snaps_diff_secs")
SUMMARY_COLS = ("pkey", "dbid", "db_name", "cdb", "db_version", "db_fullversion", "log_mode", "force_logging",
                "redo_gb_per_day", "rac_dbinstaces", "characterset", "platform_name", "startup_time", "user_schemas",
                "buffer_cache_mb", "shared_pool_mb", "total_pga_allocated_mb", "db_size_allocated_gb",
                "db_size_in_use_gb", "db_long_size_gb", "dg_database_role", "dg_protection_mode",
                "dg_protection_level")
ALIASES = {"ho": "hour", "min_snapid": "min_snap_id", "max_snapid": "max_snap_id", "dbversion": "db_version",
           "dbfullversion": "db_fullversion", "'n/a'": "cdb"}
STATS = {"physical read total io requests": "read_ios", "physical read total bytes": "read_bytes",
         "physical write total io requests": "write_ios", "physical write total bytes": "write_bytes"}
STATISTICS = (("avg", None), ("p50", "perc50"), ("p75", "perc75"), ("p90", "perc90"), ("p95", "perc95"),
              ("max", "perc100"))
EXTRACTS = ("dbahistsysstat", "awrsnapdetails", "dbsummary")
_MEMBER = re.compile(r"(?:^|[/:\\])opdb__([a-z0-9]+)__[^/]*\.csv$", re.I)


def _members(path: Path) -> dict[str, list[tuple[str, str]]]:
    """{extract: [(name, text)]} for the extracts dbtier reads, from an archive, a directory or CSV files.

    Only regular files are read: in a directory, links are followed only to regular files (never
    to a FIFO, which blocks, or /dev/zero, which never ends), and archive members that are not
    regular files are skipped. Every member is read under the caps of limits.py, counting the bytes
    it really expands to (a zip's declared sizes can lie)."""
    out: dict[str, list[tuple[str, str]]] = {}

    def add(name: str, data: bytes) -> None:
        m = _MEMBER.search(name)
        if m and m.group(1).lower() in EXTRACTS:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                text = data.decode("latin-1")    # older collectors spool in the database's character set
            out.setdefault(m.group(1).lower(), []).append((name, text))

    name = path.name.lower()
    budget = _Budget(path)
    member = None
    try:
        if path.is_dir():
            for f in _dir_members(path):
                member = str(f)
                with open(f, "rb") as fh:
                    add(member, budget.read(member, fh, f.stat().st_size))
        elif name.endswith(".zip"):
            with zipfile.ZipFile(path) as z:
                for info in z.infolist():
                    if info.is_dir() or not _MEMBER.search(info.filename):
                        continue
                    member = f"{path}:{info.filename}"
                    with z.open(info) as zf:
                        add(member, budget.read(member, zf, info.compress_size))
        elif name.endswith((".tgz", ".tar.gz", ".tar")):
            # Streaming: members one by one, each size checked before it is read or skipped (a
            # tar.gz is not seekable; skipping a member decompresses it, so it is counted too).
            with tarfile.open(path, mode="r|*") as t:
                for m in t:
                    member = f"{path}:{m.name}"
                    budget.declare(member, m.size)
                    if m.isfile() and _MEMBER.search(m.name):
                        tf = t.extractfile(m)
                        if tf is not None:
                            add(member, budget.read(member, tf, None))
                member = None
        elif _MEMBER.search(name):
            regular_file(path, "DMA extract")
            with open(path, "rb") as fh:
                add(str(path), budget.read(str(path), fh, path.stat().st_size))
        else:
            regular_file(path, "DMA collection", "pass the .zip or .tgz the DMA collector wrote (or its directory)")
            other = detect.other_source(path, SOURCE)
            hint = f"import it with --source {other.split()[0]}" if other else \
                "pass the .zip or .tgz the DMA collector wrote (or its opdb__*.csv files)"
            raise DbtierError(f"{path}: not a DMA collection" + (f" (it looks like a {other} file)" if other else ""),
                              hint)
    except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError, ValueError, zlib.error, lzma.LZMAError) as exc:
        where = f" at member {member.split(':', 1)[-1] if member and member.startswith(str(path)) else member}" \
            if member else ""
        pos = f", {budget.total:,} bytes into its contents" if budget.total else ""
        raise DbtierError(f"{path}: cannot open the DMA archive{where}{pos} ({exc}): truncated or damaged?",
                          "pass the .zip or .tgz exactly as the collector wrote it") from exc
    return out


def _dir_members(root: Path) -> list[Path]:
    """The opdb__*.csv files under a collection directory, sorted. Links to directories are not
    followed (no loops, nothing outside); links to files only when they lead to a regular file."""
    found = []
    for d, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        for f in sorted(files) + sorted(x for x in dirs if _MEMBER.search(x)):
            p = Path(d) / f
            if not _MEMBER.search(str(p)):
                continue
            if not is_regular(p):
                regular_file(p, "DMA extract", "remove it from the collection directory, or pass the .zip/.tgz")
                raise DbtierError(f"DMA extract {p}: not a regular file", "remove it from the collection directory")
            found.append(p)
    return found


class _Budget:
    """Bytes read out of one collection, against limits.py's caps (a zip bomb stops early)."""

    def __init__(self, path: Path):
        self.path = path
        self.total = 0
        try:
            self.archive_size = max(path.stat().st_size, 1) if path.is_file() else None
        except OSError:
            self.archive_size = None

    def declare(self, member: str, size: int) -> None:
        """A tar member's size from its header, before it is read or skipped."""
        if size > limits.MEMBER_MAX_BYTES:
            raise self._error(member, f"{size:,} bytes, over the {limits.MEMBER_MAX_BYTES:,}-byte cap of one member")
        if self.total + size > limits.ARCHIVE_MAX_BYTES:
            raise self._error(member, f"the archive expands beyond {limits.ARCHIVE_MAX_BYTES:,} bytes")
        if self.archive_size and self.total + size > max(limits.RATIO_FLOOR_BYTES,
                                                         limits.MAX_RATIO * self.archive_size):
            raise self._error(member, f"the archive expands more than {limits.MAX_RATIO} times its size")
        self.total += size

    def read(self, member: str, f: Any, compressed: int | None) -> bytes:
        """Read `f` whole in chunks, stopping at the first cap it passes."""
        chunks, n = [], 0
        ratio_of = self.archive_size
        if compressed is not None:    # a zip member's compressed size (no more than the archive: headers can lie)
            ratio_of = max(1, min(compressed, self.archive_size or compressed))
        while True:
            b = f.read(1 << 20)
            if not b:
                break
            n += len(b)
            chunks.append(b)
            if n > limits.MEMBER_MAX_BYTES:
                raise self._error(member, f"over the {limits.MEMBER_MAX_BYTES:,}-byte cap of one member")
            if self.total + n > limits.ARCHIVE_MAX_BYTES:
                raise self._error(member, f"the collection expands beyond {limits.ARCHIVE_MAX_BYTES:,} bytes")
            if ratio_of and n > max(limits.RATIO_FLOOR_BYTES, limits.MAX_RATIO * ratio_of):
                raise self._error(member, f"it expands more than {limits.MAX_RATIO} times its compressed size "
                                          f"({ratio_of:,} bytes)")
        if compressed is not None:     # (a tar member was counted by declare())
            self.total += n
        return b"".join(chunks)

    def _error(self, member: str, why: str) -> DbtierError:
        return DbtierError(f"{member}: refused: {why} (a damaged archive or a decompression bomb)",
                           "pass the collection as the DMA collector wrote it; real collections are a few MB")


def _split(line: str, delim: str) -> list[str]:
    if delim == "|":
        return [x.strip() for x in line.split("|")]
    return [x.strip() for x in next(csv.reader([line], delimiter=delim, skipinitialspace=True))]


def parse_extract(name: str, text: str, known: Sequence[str]) -> list[tuple[int, dict[str, str]]]:
    """[(line number, {column: value})] of one extract; the header's names, or `known` when the
    SQL*Plus header is cut short."""
    lines = text.splitlines()
    first = next((i for i, l in enumerate(lines) if l.strip()), None)
    if first is None:
        raise DbtierError(f"{name} is empty", "collect again with the DMA collector")
    header = lines[first].strip()
    concat = "||" in header
    if concat:
        raw = [h.strip().strip("'").lower() for h in re.split(r"\|\|\s*'[,|]'\s*\|\|", header)]
        sample = next((l for l in lines[first + 1:] if l.strip()), "")
        delim = "|" if sample.count("|") > sample.count(",") else ","
    else:
        delim = "|" if header.count("|") >= header.count(",") else ","
        raw = [h.strip().lower() for h in header.split(delim)]
    names = [ALIASES.get(h, h) for h in raw]
    rows = []
    for i in range(first + 1, len(lines)):
        line = lines[i]
        if not line.strip():
            continue
        try:
            fields = _split(line, delim)
        except (csv.Error, StopIteration):
            raise DbtierError(f"{name}: line {i + 1}: not valid {delim!r}-separated text", "collect again") from None
        if concat and len(fields) == len(known):   # SQL*Plus's header may be cut short: the known order
            cols = list(known)
        elif len(fields) == len(names):
            cols = names
        elif len(fields) == len(known):
            cols = list(known)
        else:
            raise DbtierError(f"{name}: line {i + 1}: {len(fields)} fields where the header has {len(names)}",
                              "collect again with the DMA collector (the file is cut or edited)")
        rows.append((i + 1, dict(zip(cols, fields))))
    return rows


@overload
def _f(name: str, line: int, col: str, v: str | None, required: Literal[True] = ...) -> float: ...
@overload
def _f(name: str, line: int, col: str, v: str | None, required: bool) -> float | None: ...
def _f(name: str, line: int, col: str, v: str | None, required: bool = True) -> float | None:
    """The number in column `col`; a required one is never None (an empty one is an error)."""
    if v is None or v.strip() == "":
        if required:
            raise DbtierError(f"{name}: line {line}: column {col.upper()} is empty; a number is needed", "collect again")
        return None
    try:
        if not v.isascii():
            raise ValueError(v)
        x = float(v)
    except ValueError:
        raise DbtierError(f"{name}: line {line}: column {col.upper()}: {v!r} is not a number",
                          "collect again with the DMA collector") from None
    if x != x or x in (float("inf"), float("-inf")):
        raise DbtierError(f"{name}: line {line}: column {col.upper()}: {v} is not finite", "collect again")
    if not (abs(x) < limits.COUNTER_MAX):
        raise DbtierError(f"{name}: line {line}: column {col.upper()}: {v} is beyond 64 bits; no statistic reaches it",
                          "collect again")
    return x


def _hour(name: str, line: int, v: str) -> int:
    hour = _f(name, line, "hour", v)
    if not (0 <= hour <= 23 and hour == int(hour)):
        raise DbtierError(f"{name}: line {line}: column HOUR: {v} is not an hour of day (0 to 23)", "collect again")
    return int(hour)


def read(con: duckdb.DuckDBPyConnection, paths: Sequence[str | Path], opts: ReadOptions) -> ReadResult:
    members: dict[str, list[tuple[str, str]]] = {}
    for p in paths:
        p = Path(p)
        if not p.is_dir():     # a FIFO or a device is refused by name before it is opened
            regular_file(p, "input file", "pass the .zip or .tgz the DMA collector wrote (or its directory)")
        if p.is_file() and p.stat().st_size == 0:
            raise DbtierError(f"{p} is empty", "collect again with the DMA collector")
        for k, v in _members(p).items():
            members.setdefault(k, []).extend(v)
    for need in ("dbahistsysstat", "awrsnapdetails"):
        if need not in members:
            raise DbtierError(f"{', '.join(str(p) for p in paths)}: no opdb__{need}__*.csv in the collection",
                              "pass the whole DMA collection (.zip or .tgz); it needs the AWR extracts (collected "
                              "with AWR/Diagnostics Pack licensing)")
    snaps: dict[tuple[str, str, int], dict[str, Any]] = {}
    for name, text in members["awrsnapdetails"]:
        for line, r in parse_extract(name, text, SNAP_COLS):
            for c in ("pkey", "instance_number", "hour", "cnt", "sum_snaps_diff_secs"):
                if c not in r:
                    raise DbtierError(f"{name}: missing columns: {c.upper()}", "collect again with the DMA collector")
            hour = _hour(name, line, r["hour"])
            cnt = _f(name, line, "cnt", r["cnt"])
            secs = _f(name, line, "sum_snaps_diff_secs", r["sum_snaps_diff_secs"])
            if not (cnt > 0 and secs > 0):
                continue
            key = (r["pkey"], r["instance_number"], int(hour))
            if key in snaps:
                raise DbtierError(f"{name}: line {line}: instance {r['instance_number']} hour {int(hour)} appears twice",
                                  "pass each collection once")
            snaps[key] = {"cnt": cnt, "secs": secs, "line": line, "name": name,
                          "first": r.get("min_begin_interval_time"),
                          "last": r.get("max_begin_interval_time"), "dbid": r.get("dbid")}
    stats: dict[tuple[str, str, int], dict[str, dict[str, float | None]]] = {}
    for name, text in members["dbahistsysstat"]:
        for line, r in parse_extract(name, text, SYSSTAT_COLS):
            for c in ("pkey", "instance_number", "hour", "stat_name", "sum_value", "perc50", "perc95", "perc100"):
                if c not in r:
                    raise DbtierError(f"{name}: missing columns: {c.upper()}", "collect again with the DMA collector")
            stat = STATS.get(r["stat_name"].strip().lower())
            if stat is None:
                continue
            hour = _hour(name, line, r["hour"])
            key = (r["pkey"], r["instance_number"], int(hour))
            vals: dict[str, Any] = {"avg": _f(name, line, "sum_value", r["sum_value"])}
            for label, col in STATISTICS[1:]:
                vals[label] = _f(name, line, col, r.get(col), required=col in ("perc50", "perc95", "perc100"))
            for label, x in vals.items():
                if x is not None and not (x >= 0):
                    col = "sum_value" if label == "avg" else dict(STATISTICS[1:])[label]
                    raise DbtierError(f"{name}: line {line}: column {col.upper()}: {x:g} is negative; "
                                      f"{r['stat_name'].strip()} only grows", "collect again with the DMA collector")
            vals["_line"], vals["_name"] = line, name
            if stat in stats.setdefault(key, {}):
                raise DbtierError(f"{name}: line {line}: {r['stat_name']!r} for instance {r['instance_number']} hour "
                                  f"{int(hour)} appears twice", "pass each collection once")
            stats[key][stat] = vals
    if not stats:
        raise DbtierError(f"{members['dbahistsysstat'][0][0]}: none of the statistics dbtier needs ("
                          + ", ".join(STATS) + ")", "collect again with the DMA collector")
    summary: dict[str, dict[str, str]] = {}
    summary_problems: list[str] = []
    for name, text in members.get("dbsummary", []):
        try:
            for _, r in parse_extract(name, text, SUMMARY_COLS):
                summary[r.get("pkey", "")] = r
        except DbtierError as exc:   # optional (names and size only): said in the notes, not dropped silently
            summary_problems.append(f"dma: {exc.message}: database names and allocated sizes left out")
    rows = []
    for key, st in stats.items():
        pkey, inst, hour = key
        sn = snaps.get(key)
        if sn is None:
            continue
        secs = sn["secs"] / sn["cnt"]
        for label, _ in STATISTICS:
            rates: dict[str, float | None] = {}
            for stat in STATS.values():
                x = (st.get(stat) or {}).get(label)
                if x is None:
                    rates[stat] = None
                elif label == "avg":
                    rates[stat] = x / sn["secs"]
                else:
                    rates[stat] = x / secs
            _check_rates(key, label, rates, sn, st)
            rb, wb = rates.get("read_bytes"), rates.get("write_bytes")
            rows.append((pkey, inst, hour, label, sn["cnt"], secs, rates.get("read_ios"), rates.get("write_ios"),
                         None if rb is None else rb / MB, None if wb is None else wb / MB))
    if not rows:
        raise DbtierError(f"{paths[0]}: the sysstat and snapshot extracts have no instance and hour in common",
                          "pass both from the same collection")
    per_db: dict[str, set[str]] = {}
    for pkey, inst, *_ in rows:
        per_db.setdefault(pkey, set()).add(inst)
    con.execute("""CREATE OR REPLACE TABLE hourly (database VARCHAR, instance VARCHAR, hour INTEGER, statistic VARCHAR,
                   snapshots DOUBLE, interval_s DOUBLE, read_iops DOUBLE, write_iops DOUBLE, read_mbps DOUBLE,
                   write_mbps DOUBLE)""")
    named = []
    for pkey, inst, hour, label, cnt, secs, ri, wi, rm, wm in rows:
        db = opts.database or (summary.get(pkey, {}).get("db_name") or pkey)
        if len(per_db[pkey]) > 1:
            db = f"{db}/{inst}"
        named.append((db, inst, hour, label, cnt, secs, ri, wi, rm, wm))
    con.executemany("INSERT INTO hourly VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", named)
    caps: dict[str, float] = {}
    for pkey, r in summary.items():
        db = opts.database or r.get("db_name") or pkey
        try:
            gb = float(r.get("db_size_allocated_gb", ""))
        except ValueError:
            continue
        if 0 <= gb < 1e9:     # a size in GB; beyond an exabyte it is not one
            caps[db] = gb
    res = ReadResult(SOURCE, "hourly", "hourly", [str(p) for p in paths], capacity_gb=caps,
                     limitations=[DMA_LIMITATION])
    res.instances = _instances(per_db, summary, opts)
    res.notes.append(f"dma: snapshot times are the database's local time, read as {opts.tz} (--tz)")
    res.notes += summary_problems
    res.extra["spans"] = _spans(con, snaps, summary, per_db, opts)
    return res


def _instances(per_db: dict[str, set], summary: dict[str, dict[str, str]], opts: ReadOptions) -> dict[str, int]:
    """{database as named in `hourly`: instances}: the instance numbers the extracts hold for its PKEY, or
    dbsummary's RAC_DBINSTACES (sic) when that says more (an instance without snapshots in the period)."""
    out = {}
    for pkey, insts in per_db.items():
        n = len(insts)
        said = (summary.get(pkey) or {}).get("rac_dbinstaces", "").strip()
        if said.isascii() and said.isdigit() and 0 < int(said) < 1000:
            n = max(n, int(said))
        db = opts.database or (summary.get(pkey, {}).get("db_name") or pkey)
        for inst in insts:
            out[f"{db}/{inst}" if len(insts) > 1 else db] = n
    return out


def _check_rates(key: tuple, label: str, rates: dict[str, float | None], sn: dict, st: dict) -> None:
    """A statistic per second beyond limits.py is refused, naming the sysstat line it came from."""
    for stat, v in rates.items():
        if v is None:
            continue
        problem = limits.rate_problem("bytes_per_s" if stat.endswith("bytes") else "iops", v)
        if problem:
            src = st.get(stat) or {}
            raise DbtierError(f"{src.get('_name', 'opdb__dbahistsysstat')}: line {src.get('_line')}: instance {key[1]} hour {key[2]}: "
                              f"{label} of {stat.replace('_', ' ')} per second (over the hour's mean snapshot of "
                              f"{sn['secs'] / sn['cnt']:g} s, opdb__awrsnapdetails line {sn['line']}): {problem}",
                              "collect again with the DMA collector")


def _spans(con: duckdb.DuckDBPyConnection, snaps: dict[Any, Any], summary: dict[str, Any], per_db: dict[str, set[str]],
           opts: ReadOptions) -> dict[str, Any]:
    """{database: (first snapshot begin, last snapshot begin)} in UTC, from the snapshot extract's times."""
    out: dict[str, list] = {}
    for (pkey, inst, _hour), sn in snaps.items():
        db = opts.database or (summary.get(pkey, {}).get("db_name") or pkey)
        if len(per_db.get(pkey, ())) > 1:
            db = f"{db}/{inst}"
        for k in ("first", "last"):
            v = sn.get(k)
            if not v:
                continue
            t = store.one_row(con.execute(f"SELECT {utc_sql('v', opts.tz)} FROM (SELECT CAST(? AS VARCHAR) AS v)",
                                          [v]))[0]
            if t is None:
                continue
            cur = out.setdefault(db, [t, t])
            cur[0], cur[1] = min(cur[0], t), max(cur[1], t)
    return {k: (iso(a), iso(b)) for k, (a, b) in out.items()}


def summarise(con: duckdb.DuckDBPyConnection, res: ReadResult) -> dict[str, Any]:
    """databases[] (peaks as upper bounds, see the module docstring) and hour_of_day per database."""
    spans: dict[str, Any] = res.extra.get("spans", {})
    dbs = [r[0] for r in con.execute("SELECT DISTINCT database FROM hourly ORDER BY database").fetchall()]
    out = []
    for db in dbs:
        peaks = {}
        for m in ("read_iops", "write_iops", "read_mbps", "write_mbps"):
            got = dict(con.execute(f"SELECT statistic, max({m}) FROM hourly WHERE database = ? GROUP BY statistic",
                                   [db]).fetchall())
            peaks[m] = {"p50": finite_or_none(got.get("p50")), "p95": finite_or_none(got.get("p95")), "p99": None,
                        "max": finite_or_none(got.get("max"))}
        n = store.one_row(con.execute("SELECT sum(snapshots) FROM hourly WHERE database = ? AND statistic = 'avg'",
                                      [db]))[0]
        hours = []
        for h, cnt, secs in con.execute("SELECT hour, any_value(snapshots), any_value(interval_s) FROM hourly "
                                        "WHERE database = ? GROUP BY hour ORDER BY hour", [db]).fetchall():
            item: dict[str, Any] = {"hour": h, "snapshots": int(cnt), "interval_s": finite_or_none(secs)}
            rows = con.execute("SELECT statistic, read_iops, write_iops, read_mbps, write_mbps FROM hourly "
                               "WHERE database = ? AND hour = ?", [db, h]).fetchall()
            for i, m in enumerate(("read_iops", "write_iops", "read_mbps", "write_mbps")):
                item[m] = {st: finite_or_none(r[1 + i]) for r in rows for st in [r[0]]}
            hours.append(item)
        start, end = spans.get(db, (None, None))
        out.append({"name": db, "intervals": int(n or 0), "start": start, "end": end, "peaks": peaks,
                    "peaks_method": "hour-of-day upper bound (p50, p95); max exact; no p99",
                    "capacity_gb": res.capacity_gb.get(db.split("/")[0]),
                    **instance_fields(res.instances.get(db)), "hour_of_day": hours})
    return {"source": res.source, "kind": "hourly", "files": res.files, "notes": list(res.notes),
            "limitations": list(res.limitations), "databases": out}
