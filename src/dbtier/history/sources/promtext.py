"""Prometheus' text exposition (what `curl http://host:9100/metrics` saves from node_exporter, or
Prometheus' `/federate`) as labelled series: a history when there are two scrapes or more.

A scrape is a page of `# HELP` / `# TYPE` lines and samples, `name{label="value",...} value [timestamp]`,
values in Go's float notation (`1.726093e+06`, `NaN`, `+Inf`). Only the metrics `keep` names are parsed
(prometheus.py's disk and database counters); the rest of the page is counted by name and left out.

**When each scrape was taken**, in this order for each sample:

1. its own timestamp (`/federate` and the Pushgateway print one: milliseconds; OpenMetrics' seconds with
   a fraction are taken as such);
2. the `# TIME <unix seconds | ISO 8601>` line before its scrape: collectors/node_exporter.sh writes one
   before each scrape, so one file holds many (`# TIME 1795879396.9`, `# TIME 2026-11-28T15:23:16Z`;
   without an offset, in --tz);
3. for a file of one scrape with neither: the time in the file's name (`metrics-20261128T152316Z.prom`,
   `2026-11-28_15-23-16`, a 10-digit unix time; without `Z` or an offset, in --tz), else the file's
   modification time (curl -o writes it as the scrape ends; a copy without `cp -p` loses it).

`times_from` says which (the import's provenance). Several scrapes in one file with no time between them
are refused (their order is known, not their times), so is a sample before the first `# TIME` line.

**Databases.** A sample's `instance` label (Prometheus adds it: /federate), else `--database`, else the
file's name without the time and the extension (`metrics-20261128T152316Z.prom` -> `metrics`; without a
time in the name a trailing counter goes too: `scrape-001.prom` -> `scrape`), so one scrape a file
adds up to one database. A rate needs two scrape times: files that are one scrape of each database are
refused in those words; a database of one scrape beside others of more gives no interval (a note says so).

Pure parsing: no DuckDB. Every refusal names the file and line.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
import re
import statistics
import zoneinfo
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

from dbtier.core.errors import DbtierError
from dbtier.history import limits
from dbtier.history.sources import csvio
from dbtier.history.sources import promfiles
from dbtier.history.tables import ReadOptions

COLLECTOR = "collectors/node_exporter.sh"
TIME_LINES = "the `# TIME` lines"
STAMPS = "the samples' timestamps"
NAMES = "the file names"
MTIMES = "the files' modification times"
BASES = (STAMPS, TIME_LINES, NAMES, MTIMES)

_NAME = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
_LABEL = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*"((?:[^"\\\n]|\\.)*)"\s*(,|(?=\}))')
_ESC = re.compile(r"\\(.)")
_VALUE = re.compile(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|Inf|inf|NaN|nan)")
_STAMP = re.compile(r"-?\d+(?:\.\d+)?")
_NUMBER_TIME = re.compile(r"\d+(?:\.\d+)?")
# a time in a file name: 20261128T152316Z, 2026-11-28T15:23:16+01:00, 2026-11-28_15-23-16, 20261128-1523
_NAME_DATE = re.compile(r"(?<!\d)(\d{4})-?(\d{2})-?(\d{2})[T_ .-]?(\d{2})[:_.-]?(\d{2})(?:[:_.-]?(\d{2}))?"
                        r"(Z|[+-]\d{2}:?\d{2}(?!\d))?(?!\d)")
_NAME_EPOCH = re.compile(r"(?<!\d)(\d{10})(?:\.(\d{1,9}))?(?!\d)")
_SUFFIXES = (".prom", ".txt", ".metrics", ".out", ".log", ".text")
_COUNTER = re.compile(r"[-_.]\d+$")
MS_THRESHOLD = promfiles.MS_THRESHOLD


@dataclass
class Scrapes:
    """Every file's series, each with its database, and what the reader tells about them."""
    series: list[tuple[str, str, promfiles.Series]] = field(default_factory=list)   # (file, database, series)
    ignored: set[str] = field(default_factory=set)      # metric names left out
    times_from: dict[str, int] = field(default_factory=dict)    # basis -> files
    scrapes: dict[str, int] = field(default_factory=dict)       # database -> scrape times
    steps: list[float] = field(default_factory=list)    # per database: the median time between scrapes
    # databases of one scrape beside others of more (a batch of a larger import may end inside a database's
    # files: fleet.py reads those again together); when every database has one, the read is refused
    single: list[str] = field(default_factory=list)


@dataclass
class _Sample:
    t: float | None
    value: float
    line: int


@dataclass
class _File:
    path: str
    samples: dict[tuple, list[_Sample]] = field(default_factory=dict)
    first_line: dict[tuple, int] = field(default_factory=dict)
    bases: set[str] = field(default_factory=set)
    untimed_line: int = 0          # first sample with no time of its own (needs the file's)


def read_all(paths: Sequence[str | Path], keep: Callable[[str], bool], opts: ReadOptions) -> Scrapes:
    """Every text scrape of `paths` as series (times resolved, see the module docstring), at least two
    scrape times per database; a DbtierError naming the file and line otherwise."""
    out = Scrapes()
    per_file: dict[str, list[tuple[str, float, str]]] = {}     # database -> (file, time, basis) of untimed files
    for p in paths:
        path = str(p)
        f = _parse(path, keep, opts.tz, out.ignored)
        file_time, fbasis = None, ""
        if f.untimed_line:
            file_time, fbasis = _file_time(path, opts.tz)
            f.bases.add(fbasis)
        for basis in f.bases:
            out.times_from[basis] = out.times_from.get(basis, 0) + 1
        dbs: set[str] = set()
        for key, samples in f.samples.items():
            s = _series(path, key, samples, f.first_line[key], file_time)
            db = opts.database or s.labels.get("instance") or name_of(path)
            dbs.add(db)
            out.series.append((path, db, s))
        if f.untimed_line and file_time is not None:
            for db in dbs:
                per_file.setdefault(db, []).append((path, file_time, fbasis))
    _check_per_file(per_file)
    times: dict[str, set[float]] = {}
    for _, db, s in out.series:
        times.setdefault(db, set()).update(s.times)
    for db, ts in times.items():
        out.scrapes[db] = len(ts)
        if len(ts) > 1:
            ordered = sorted(ts)
            out.steps.append(statistics.median(b - a for a, b in zip(ordered, ordered[1:])))
    out.single = sorted(db for db, n in out.scrapes.items() if n < 2)
    if out.single and len(out.single) == len(out.scrapes):
        _refuse_single(out.single, out, opts)
    return out


def _refuse_single(single: list[str], out: Scrapes, opts: ReadOptions) -> None:
    files = sorted({fp for fp, db, _ in out.series if db in single})
    names = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    hint = (f"scrape again after an interval and import both, or run {COLLECTOR} (a `# TIME` line before "
            "each scrape, many in one file)")
    if len(single) > 1 and not opts.database:
        hint += f"; files of one host named apart ({', '.join(single[:3])}): give --database NAME to read them as one"
    raise DbtierError(f"{names}: one scrape: a rate needs two", hint)


def _check_per_file(per_file: dict[str, list[tuple[str, float, str]]]) -> None:
    """Files that are one scrape each, timed by their names or mtimes: no two at one time; mtimes not
    all within a second (files copied without -p, not scraped)."""
    for db, items in per_file.items():
        at: dict[float, str] = {}
        for path, t, basis in items:
            if t in at:
                how = "their names" if basis == NAMES else "their modification times"
                raise DbtierError(f"{at[t]} and {path}: two scrapes of {db} at {promfiles.iso_time(t)} (from {how})",
                                  "import each scrape once; name each file with its own time "
                                  "(curl -o metrics-$(date -u +%Y%m%dT%H%M%SZ).prom URL)")
            at[t] = path
        mt = [t for _, t, basis in items if basis == MTIMES]
        if len(mt) > 1 and max(mt) - min(mt) < 1:
            files = ", ".join(p for p, _, b in items[:3] if b == MTIMES)
            raise DbtierError(f"{files}: {len(mt)} scrapes of {db} whose modification times are within one second: "
                              "copied, not scraped, then (the times a history needs are lost)",
                              "name each file with its scrape time (metrics-20261102T090000Z.prom), copy with cp -p, "
                              f"or run {COLLECTOR}")


def name_of(path: str) -> str:
    """The database a file's scrapes are of: its name without the time, the extension and a trailing counter."""
    stem = Path(path).name
    for _ in range(2):
        for suffix in _SUFFIXES:
            if stem.lower().endswith(suffix):
                stem = stem[: -len(suffix)]
    m = _NAME_DATE.search(stem) or _NAME_EPOCH.search(stem)
    if m:
        stem = stem[: m.start()] + "_" + stem[m.end():]
    else:
        stem = _COUNTER.sub("", stem)
    stem = re.sub(r"[-_. ]{2,}", "_", stem).strip("-_. ")
    return re.sub(r"[^A-Za-z0-9_.:@/#+-]+", "_", stem) or "node"


def name_time(name: str, tz: str) -> float | None:
    """Unix seconds of the time a file name carries (see the module docstring), or None."""
    m = _NAME_DATE.search(name)
    if m:
        y, mo, d, h, mi, s, off = m.groups()
        try:
            t = _dt.datetime(int(y), int(mo), int(d), int(h), int(mi), int(s or 0))
        except ValueError:
            return None
        return _to_unix(t, off, tz)
    m = _NAME_EPOCH.search(name)
    if m:
        return float(f"{m.group(1)}.{m.group(2) or 0}")
    return None


def _to_unix(t: _dt.datetime, off: str | None, tz: str) -> float:
    if off:
        if off == "Z":
            t = t.replace(tzinfo=_dt.timezone.utc)
        else:
            hh, mm = int(off[1:3]), int(off[-2:])
            sign = -1 if off[0] == "-" else 1
            t = t.replace(tzinfo=_dt.timezone(sign * _dt.timedelta(hours=hh, minutes=mm)))
    elif t.tzinfo is None:
        t = t.replace(tzinfo=zoneinfo.ZoneInfo(tz))
    return t.timestamp()


def _file_time(path: str, tz: str) -> tuple[float, str]:
    t = name_time(Path(path).name, tz)
    if t is not None:
        return t, NAMES
    return os.stat(path).st_mtime, MTIMES


def parse_time(text: str, tz: str) -> float | None:
    """A `# TIME` value: unix seconds (milliseconds past 10^11) or ISO 8601 (without an offset, in `tz`)."""
    text = text.strip()
    if _NUMBER_TIME.fullmatch(text):
        t = float(text)
        return t / 1000 if t > MS_THRESHOLD else t
    try:
        d = _dt.datetime.fromisoformat(text.replace(" UTC", "Z").replace("z", "Z"))
    except ValueError:
        return None
    try:
        return _to_unix(d, None, tz)
    except (OverflowError, ValueError, OSError):
        return None


def _bad(path: str, line: int, what: str, hint: str) -> DbtierError:
    return DbtierError(f"{path}: line {line}: {what}", hint)


def _parse(path: str, keep: Callable[[str], bool], tz: str, ignored: set[str]) -> _File:
    f = _File(path)
    cur: float | None = None       # the last # TIME
    time_line = 0
    in_block: set[tuple] = set()   # series seen since the last # TIME
    untimed: set[tuple] = set()    # series seen with no time at all
    t: float | None
    with csvio.text_io(path) as fh:
        for lineno, raw in enumerate(csvio.bounded(fh, path), 1):
            line = raw.strip()
            if not line:
                continue
            if line[0] == "#":
                if line.startswith("# TIME"):
                    tt = parse_time(line[6:], tz)
                    if tt is None or not line[6:7].isspace():
                        raise _bad(path, lineno, f"{line[:80]!r}: a `# TIME` line holds unix seconds or an ISO 8601 "
                                   "time", "write it with date +%s (as collectors/node_exporter.sh does)")
                    _check_year(path, lineno, tt)
                    if untimed:
                        raise _bad(path, lineno, f"the first `# TIME` line, after samples with no time (line "
                                   f"{f.untimed_line})", "put a `# TIME` line before each scrape, the first too")
                    if cur is not None and not tt > cur:
                        raise _bad(path, lineno, f"`# TIME` {promfiles.iso_time(tt)} is not after the one before "
                                   f"(line {time_line}, {promfiles.iso_time(cur)})", "keep the scrapes in time order")
                    cur, time_line = tt, lineno
                    in_block.clear()
                continue
            m = _NAME.match(line)
            if not m:
                raise _bad(path, lineno, f"{line[:80]!r} is not a sample line (name{{labels}} value [timestamp])",
                           "pass the page /metrics answered as it is")
            name = m.group(0)
            if not keep(name):
                ignored.add(name)
                continue
            labels, value, stamp = _sample(path, lineno, line, m.end())
            key = (name, tuple(sorted(labels.items())))
            if stamp is not None:
                t = stamp
                f.bases.add(STAMPS)
            elif cur is not None:
                if key in in_block:
                    raise _bad(path, lineno, f"{_describe(key)} twice after the `# TIME` line at line {time_line}",
                               "put a `# TIME` line before each scrape")
                in_block.add(key)
                t = cur
                f.bases.add(TIME_LINES)
            else:
                if key in untimed:
                    raise _bad(path, lineno, f"{_describe(key)} again: several scrapes with no time between them "
                               "(their order is known, not their times)",
                               f"put a `# TIME $(date +%s)` line before each scrape (as {COLLECTOR} does), or save "
                               "one scrape a file named with its time")
                untimed.add(key)
                f.untimed_line = f.untimed_line or lineno
                t = None
            if key not in f.samples:
                f.samples[key] = []
                f.first_line[key] = lineno
            f.samples[key].append(_Sample(t, value, lineno))
    return f


def _sample(path: str, lineno: int, line: str, pos: int) -> tuple[dict[str, str], float, float | None]:
    """(labels with __name__, value, time in unix seconds or None) of a sample line after its name."""
    labels = {"__name__": line[:pos]}
    if pos < len(line) and line[pos] == "{":
        pos += 1
        while True:
            while pos < len(line) and line[pos] in " \t":
                pos += 1
            if pos < len(line) and line[pos] == "}":
                pos += 1
                break
            m = _LABEL.match(line, pos)
            if not m:
                raise _bad(path, lineno, f"labels in {line[:120]!r} are not name=\"value\" pairs",
                           "pass the page /metrics answered as it is")
            labels[m.group(1)] = _ESC.sub(lambda e: {"n": "\n"}.get(e.group(1), e.group(1)), m.group(2))
            pos = m.end()
    rest = line[pos:].split(" # ", 1)[0].split()         # OpenMetrics: an exemplar after " # "
    if not rest or len(rest) > 2 or not line[pos:pos + 1].isspace():
        raise _bad(path, lineno, f"{line[:120]!r} is not name{{labels}} value [timestamp]",
                   "pass the page /metrics answered as it is")
    if not _VALUE.fullmatch(rest[0]):
        raise _bad(path, lineno, f"{_describe((labels['__name__'], tuple(sorted(labels.items()))))}: value "
                   f"{rest[0][:40]!r} is not a number", "pass the page /metrics answered as it is")
    value = float(rest[0])
    if not math.isfinite(value):
        raise _bad(path, lineno, f"{_describe((labels['__name__'], tuple(sorted(labels.items()))))}: value "
                   f"{rest[0]!r} is not a finite number; no disk counter is", "fix or remove that line")
    if abs(value) >= limits.COUNTER_MAX_UNSIGNED:
        raise _bad(path, lineno, f"value {rest[0]} is 2^64 or more: no counter reaches it", "fix or remove that line")
    stamp = None
    if len(rest) == 2:
        if not _STAMP.fullmatch(rest[1]):
            raise _bad(path, lineno, f"timestamp {rest[1][:40]!r} is not a number of milliseconds",
                       "pass the page as Prometheus printed it")
        x = float(rest[1])
        stamp = x / 1000 if abs(x) > MS_THRESHOLD else x
        _check_year(path, lineno, stamp)
    return labels, value, stamp


def _check_year(path: str, lineno: int, t: float) -> None:
    year = 1970 + t / 31557600
    if not (limits.FIRST_YEAR <= year <= limits.LAST_YEAR + 1):
        raise _bad(path, lineno, f"time {t:.17g} s is in the year {year:,.0f}, outside {limits.FIRST_YEAR}-"
                   f"{limits.LAST_YEAR}", "fix the clock or the time written")


def _describe(key: tuple) -> str:
    name, labels = key
    rest = ",".join(f'{k}="{v}"' for k, v in labels if k != "__name__")
    return f"{name}{{{rest}}}" if rest else name


def _series(path: str, key: tuple, samples: list[_Sample], line: int, file_time: float | None) -> promfiles.Series:
    """One series of one file, in time order; the same time twice must say the same."""
    pts: list[tuple[float, float, int]] = []
    for x in samples:
        t = x.t if x.t is not None else file_time
        if t is None:      # never: read_all gives a file with untimed samples its own time
            raise _bad(path, x.line, f"{_describe(key)} has no time", "put a `# TIME` line before each scrape")
        pts.append((t, x.value, x.line))
    pts.sort()
    s = promfiles.Series(dict(key[1]), [], [], line)
    for t, v, ln in pts:
        if s.times and t == s.times[-1]:
            if v != s.values[-1]:
                raise _bad(path, ln, f"{_describe(key)} at {promfiles.iso_time(t)}: {v:g}, and {s.values[-1]:g} "
                           "on another line of the same time", "import each scrape once")
            continue
        s.times.append(t)
        s.values.append(v)
    return s
