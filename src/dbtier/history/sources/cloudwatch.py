"""AWS CloudWatch: RDS, Aurora, EBS and EC2 disk metrics as `aws cloudwatch get-metric-statistics` or
`get-metric-data` (or boto3) give them.

    aws cloudwatch get-metric-statistics --namespace AWS/RDS --metric-name ReadIOPS --statistics Average \\
        --dimensions Name=DBInstanceIdentifier,Value=orders-db --period 300 \\
        --start-time 2026-11-01T00:00:00Z --end-time 2026-11-02T00:00:00Z > read-iops.json
    aws cloudwatch get-metric-data --metric-data-queries file://q.json --start-time ... --end-time ... > ebs.json

The shapes (one answer or several, concatenated or in a JSON list, get-metric-data pages, epoch or ISO
times) are cloudwatch_shapes.py's. What the numbers are:

**A metric's Unit decides.** A `Count` or `Bytes` metric (EBS `VolumeReadOps`, EC2 `EBSReadOps` and
`DiskReadOps`, Aurora's `VolumeReadIOPs`) is a total per period: its `Sum` divided by the period is the
period's mean rate; any other statistic of it is refused, with why ("a Maximum of a Count: a per-period total,
give Sum"). A `/Second` metric (RDS `ReadIOPS`, `ReadThroughput`) is a rate, taken as it is: its `Average` is
the period's mean rate, its `Maximum` the busiest of the per-minute rates RDS publishes (said so in the
basis); its Sum, Minimum, SampleCount and percentiles are refused. A get-metric-statistics datapoint carries
its Unit and statistics; a get-metric-data result carries neither, so the metric's documented unit is used
and the statistic is the one its Label or Id names (`Sum`, `Average`/`avg`, `Maximum`/`max`), else Sum
for a total and Average for a rate (said in the notes). Latency: RDS `ReadLatency` (seconds per I/O, its
Average) or EBS `VolumeTotalReadTime` (Sum) divided by the reads.

**Which metric** a series is: the name in its Label (the metric's name unless the query gave another) or
Id. Other metrics are left out by name and why ("CPUUtilization: a CPU metric, not disk I/O"); a file
with no disk I/O metric is refused with those reasons.

**The period** is not in either answer: it is `--interval` when given (needed when there is one point a
metric), else the smallest spacing of a series' points, the same for every series ("a mixed period" is
refused). A missing period is a gap, never a zero. The unit (a volume, an instance) is the `vol-...` or
`i-...` id, or what the Label holds beside the metric's name, else the family (EBS volume, RDS instance);
units add up into the database (`--database`, else the file name), except where one family is the sum of
another: EC2's `EBS*` metrics cover the instance's EBS volumes and Aurora's cluster volume its instances,
so those are kept as detail. A time in two answers with different values is refused (get-metric-statistics
answers do not say their volume or instance: two of them in one file must be of one).
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import duckdb

from dbtier.core.errors import DbtierError
from dbtier.core.units import duration_text
from dbtier.history import limits
from dbtier.history.sources import cloudwatch_shapes as shapes
from dbtier.history.sources import csvio
from dbtier.history.sources import detect
from dbtier.history.tables import INTERVAL_TABLE_COLUMNS, MB, ReadOptions, ReadResult, database_name_from_file

SOURCE = "cloudwatch"

# The disk I/O metrics read: (name, column, documented unit, family).
_IO = (
    ("VolumeReadOps", "read_ios", "Count", "ebs"), ("VolumeWriteOps", "write_ios", "Count", "ebs"),
    ("VolumeReadBytes", "read_bytes", "Bytes", "ebs"), ("VolumeWriteBytes", "write_bytes", "Bytes", "ebs"),
    ("VolumeTotalReadTime", "read_time_s", "Seconds", "ebs"), ("VolumeTotalWriteTime", "write_time_s", "Seconds", "ebs"),
    ("EBSReadOps", "read_ios", "Count", "ec2"), ("EBSWriteOps", "write_ios", "Count", "ec2"),
    ("EBSReadBytes", "read_bytes", "Bytes", "ec2"), ("EBSWriteBytes", "write_bytes", "Bytes", "ec2"),
    ("DiskReadOps", "read_ios", "Count", "ec2store"), ("DiskWriteOps", "write_ios", "Count", "ec2store"),
    ("DiskReadBytes", "read_bytes", "Bytes", "ec2store"), ("DiskWriteBytes", "write_bytes", "Bytes", "ec2store"),
    ("ReadIOPS", "read_ios", "Count/Second", "rds"), ("WriteIOPS", "write_ios", "Count/Second", "rds"),
    ("ReadThroughput", "read_bytes", "Bytes/Second", "rds"), ("WriteThroughput", "write_bytes", "Bytes/Second", "rds"),
    ("ReadLatency", "read_lat_s", "Seconds", "rds"), ("WriteLatency", "write_lat_s", "Seconds", "rds"),
    ("VolumeReadIOPs", "read_ios", "Count", "aurora"), ("VolumeWriteIOPs", "write_ios", "Count", "aurora"),
)
METRICS = {n.lower(): col for n, col, _, _ in _IO}            # lower-case name -> column
_SPEC = {n.lower(): (n, col, unit, fam) for n, col, unit, fam in _IO}
FAMILIES = {"ebs": "EBS volume", "ec2": "EC2 instance (EBS)", "ec2store": "EC2 instance store",
            "rds": "RDS instance", "aurora": "Aurora cluster volume"}
_COVERED_BY = {"ebs": "ec2", "rds": "aurora"}   # family -> the family whose metrics are its sum (it is then detail)

# Metrics of those namespaces that are not disk I/O, refused by name with why.
_WHY = {
    "a CPU metric, not disk I/O": ("CPUUtilization", "CPUCreditUsage", "CPUCreditBalance", "CPUSurplusCreditBalance",
                                   "CPUSurplusCreditsCharged"),
    "a network metric, not disk I/O": ("NetworkIn", "NetworkOut", "NetworkPacketsIn", "NetworkPacketsOut",
                                       "NetworkReceiveThroughput", "NetworkTransmitThroughput", "NetworkThroughput",
                                       "StorageNetworkReadThroughput", "StorageNetworkWriteThroughput",
                                       "StorageNetworkThroughput"),
    "a memory metric, not disk I/O": ("FreeableMemory", "SwapUsage"),
    "storage space, not I/O": ("FreeStorageSpace", "VolumeBytesUsed", "FreeLocalStorage", "BinLogDiskUsage",
                               "TransactionLogsDiskUsage"),
    "a queue depth (I/Os waiting), not I/O done": ("DiskQueueDepth", "VolumeQueueLength"),
    "an I/O credit balance in percent, not I/O": ("BurstBalance", "EBSIOBalance%", "EBSByteBalance%"),
    "seconds without I/O, not I/O": ("VolumeIdleTime",),
    "a percentage of the provisioned IOPS, not I/O": ("VolumeThroughputPercentage",),
    "I/O counted in 256 KiB units, not the I/Os issued (fetch VolumeReadOps and VolumeWriteOps)":
        ("VolumeConsumedReadWriteOps",),
    "connections, not disk I/O": ("DatabaseConnections",),
    "a status check, not disk I/O": ("StatusCheckFailed", "StatusCheckFailed_Instance", "StatusCheckFailed_System"),
    "replication lag, not disk I/O": ("ReplicaLag", "AuroraReplicaLag"),
}
NOT_IO = {re.sub(r"[^a-z]", "", n.lower()): (n, why) for why, names in _WHY.items() for n in names}

_ID = re.compile(r"\b(vol-[0-9a-f]{8,17}|i-[0-9a-f]{8,17})\b")
_STAT_WORD = re.compile(r"(?<![a-z])(sum|average|avg|maximum|max|minimum|samplecount|p\d{1,2}(?:\.\d+)?)(?![a-z0-9])",
                        re.I)
_STAT_NAME = {"sum": "Sum", "average": "Average", "avg": "Average", "maximum": "Maximum", "max": "Maximum",
              "minimum": "Minimum", "samplecount": "SampleCount"}
_TIME_SCALE = {"Seconds": 1.0, "Milliseconds": 1e-3, "Microseconds": 1e-6}
_MEAN = {"Sum": "mean", "Average": "mean", "Maximum": "max"}


def _norm(text: str) -> str:
    return re.sub(r"[^a-z]", "", text.lower())


def identify(text: str) -> str | None:
    """The known metric (lower-case name, of METRICS or NOT_IO) a label or Id names: a word of it that is one,
    else the longest one inside it."""
    known = METRICS.keys() | NOT_IO.keys()
    for word in re.split(r"[\s,;:/()\[\]{}|=\"'.]+", text):
        if _norm(word) in known:
            return _norm(word)
    key = _norm(text)
    hits = [m for m in known if m in key]
    return max(hits, key=len) if hits else None


def metric_of(text: str) -> str | None:
    """The disk I/O metric (a key of METRICS) a label or Id names, or None."""
    m = identify(text)
    return m if m in METRICS else None


@dataclass
class _Acc:
    """What the files hold, before the period is known."""
    points: dict[tuple[str, str, str, str], dict[float, tuple[float, str]]] = field(default_factory=dict)
    stat_of: dict[tuple[str, str, str, str], tuple[str, str, str, str]] = field(default_factory=dict)  # stat, unit, name, where
    left: dict[str, tuple[str, str]] = field(default_factory=dict)   # what -> (where, why it was left out)
    empty: list[str] = field(default_factory=list)
    assumed: set[str] = field(default_factory=set)
    partial: dict[str, list[str]] = field(default_factory=dict)   # Id -> where it was PartialData
    complete: set[str] = field(default_factory=set)               # Ids with a page that is Complete
    notes: list[str] = field(default_factory=list)


def read(con: duckdb.DuckDBPyConnection, paths: Sequence[str | Path], opts: ReadOptions) -> ReadResult:
    acc = _Acc()
    for p in paths:
        csvio.check_file(p)
        path = str(p)
        if detect.guess(path) not in (None, SOURCE):
            detect.refuse_other(path, SOURCE, "CloudWatch output")
        series, notes = shapes.load(path)
        acc.notes.extend(notes)
        for s in series:
            _take(path, s, opts, acc)
    names = ", ".join(map(str, paths[:3])) + (" ..." if len(paths) > 3 else "")
    io = [k for k in acc.points if k[3] in ("read_ios", "write_ios", "read_bytes", "write_bytes")]
    if not io:
        if acc.empty:
            raise DbtierError(f"{names}: no data points ({', '.join(acc.empty[:3])}: Datapoints or Values empty)",
                              "check the time range and the dimensions (EBS reports only while a volume is attached)")
        said = [f"{where}: {w}: {r}" for w, (where, r) in list(acc.left.items())[:3]]
        raise DbtierError("; ".join(said or [f"{names}: no answer"]) + (" ..." if len(acc.left) > 3 else "")
                          + f": no disk I/O metric in {'the file' if len(paths) == 1 else 'the files'}",
                          "fetch ReadIOPS, WriteIOPS, ReadThroughput, WriteThroughput (RDS), VolumeReadOps, "
                          "VolumeWriteOps, VolumeReadBytes, VolumeWriteBytes (EBS), EBSReadOps ... (EC2) or "
                          "VolumeReadIOPs, VolumeWriteIOPs (Aurora)")
    kinds = _one_kind(acc, io)
    period = _period(acc, opts)
    rows = _rows(acc, period)
    con.execute(f"CREATE OR REPLACE TABLE cw_intervals ({INTERVAL_TABLE_COLUMNS})")
    con.executemany("INSERT INTO cw_intervals VALUES (" + ", ".join("?" * 14) + ")", rows)
    return _result(acc, io, kinds, period, [str(p) for p in paths])


def _take(path: str, s: shapes.Series, opts: ReadOptions, acc: _Acc) -> None:
    """One series into acc: identified, its statistic and unit checked, its points kept."""
    what = (f"Id {s.rid!r}" + (f" (label {s.label[:80]!r})" if s.label and s.label != s.rid else "")) if s.rid \
        else (s.label[:80] or "an answer without a Label")
    key = identify(s.label) or identify(s.rid)
    if key is None:
        acc.left[what] = (s.where, "names no metric dbtier reads (a metric-math expression or a label of its own?)")
        return
    if key in NOT_IO:
        name, why = NOT_IO[key]
        acc.left.setdefault(name, (s.where, why))
        return
    name, col, documented, family = _SPEC[key]
    if s.status and s.status != "Complete":
        acc.partial.setdefault(s.rid or what, []).append(f"{s.where} ({s.status[:20]})")
    elif s.status:
        acc.complete.add(s.rid)
    acc.notes.extend(f"{s.where}: {m}" for m in s.messages)
    if not s.times:
        acc.empty.append(f"{name} ({s.where})")
        return
    unit = _unit(s, name, col, documented)
    stat, values = _statistic(s, name, col, unit, acc)
    if stat is None:
        return
    db = opts.database or database_name_from_file(path[:-5] if path.lower().endswith(".json") else path)
    k = (db, family, _unit_name(s, name, family), col)
    old = acc.stat_of.get(k)
    if old and (old[0], old[1]) != (stat, unit):
        raise DbtierError(f"{s.where}: {name}: {stat} in {unit} here, {old[0]} in {old[1]} at {old[3]}",
                          "fetch every answer of a metric with one statistic")
    acc.stat_of[k] = (stat, unit, name, s.where)
    scale = _TIME_SCALE.get(unit, 1.0)
    seen = acc.points.setdefault(k, {})
    for t, v in zip(s.times, values):
        if v is None:
            raise DbtierError(f"{s.where}: {name}: a datapoint at {_iso(t)} without {stat} (others have it)",
                              shapes.SAVE)
        v *= scale
        if t in seen and seen[t][0] != v:
            raise DbtierError(f"{s.where}: {what}: {_iso(t)} is {v:g} here and {seen[t][0]:g} at {seen[t][1]}",
                              "import each page once (pages of two fetches overlap); get-metric-statistics answers "
                              "do not say their volume or instance: save each one's in its own file")
        seen[t] = (v, s.where)


def _unit(s: shapes.Series, name: str, col: str, documented: str) -> str:
    """The Unit the datapoints say (the documented one when they say none), checked against the metric."""
    units = {u for u in s.units if u and u != "None"}
    if len(units) > 1:
        raise DbtierError(f"{s.where}: {name}: datapoints in {' and '.join(sorted(units))}",
                          "fetch it with one --unit (or none)")
    unit = units.pop() if units else documented
    allowed = {"ios": ("Count", "Count/Second"), "bytes": ("Bytes", "Bytes/Second")}.get(
        col.split("_", 1)[1], tuple(_TIME_SCALE))
    if unit not in allowed:
        raise DbtierError(f"{s.where}: {name} in {unit[:30]}: {name} is published in {documented} (dbtier reads "
                          f"{' or '.join(allowed)})", "fetch it without --unit, as AWS publishes it")
    return unit


def _statistic(s: shapes.Series, name: str, col: str, unit: str, acc: _Acc) -> tuple[str | None, list]:
    """The statistic read and its values; a wrong one for an I/O rate or total is refused with why, for a
    latency left out (said)."""
    rate = unit.endswith("/Second")
    latency = col.endswith("_lat_s")
    wanted = ("Average",) if latency else ("Average", "Maximum") if rate else ("Sum",)
    if s.kind == "data":
        words = [m.group(1) for m in _STAT_WORD.finditer(s.label)] or [m.group(1) for m in _STAT_WORD.finditer(s.rid)]
        have = [_STAT_NAME.get(words[0].lower(), words[0])] if words else [wanted[0]]
        if not words:
            acc.assumed.add(f"{name} {wanted[0]}")
        values = {have[0]: s.stats.get("", [])}
    else:
        order = [*wanted, "Maximum", "Average", "Sum", "Minimum", "SampleCount"]
        have = sorted(s.stats, key=lambda x: order.index(x) if x in order else len(order))
        values = s.stats
    for stat in wanted:
        if stat in have:
            return stat, values[stat]
    got = have[0] if have else "no statistic"
    if latency or col.endswith("_time_s"):
        acc.left[f"{name} {got}"] = (s.where, f"the latency is read from {name}'s {wanted[0]}")
        return None, []
    why, step = _refusal(unit, got)
    raise DbtierError(f"{s.where}: {name}: {why}", step)


def _refusal(unit: str, stat: str) -> tuple[str, str]:
    """Why a statistic of a total or a rate is not I/O, and what to fetch."""
    if not unit.endswith("/Second"):
        why = {"Maximum": f"a Maximum of a {unit}: a per-period total, give Sum (the Maximum is the largest single "
                          "sample in the period, not the period's I/O)",
               "Average": f"an Average of a {unit}: a per-period total, give Sum (the Average is the mean of the "
                          "samples in the period, whose spacing the answer does not say)",
               "Minimum": f"a Minimum of a {unit}: the smallest sample in the period, never what the storage must "
                          "carry; give Sum",
               "SampleCount": "SampleCount: how many samples CloudWatch holds in each period, not I/O; give Sum",
               }.get(stat, f"{stat[:20]}: a percentile of the samples in the period, not its total; give Sum")
        return why, "fetch it again with --statistics Sum (get-metric-data: \"Stat\": \"Sum\")"
    why = {"Sum": f"a Sum of a {unit} rate: the per-minute rates of the period added up, not a rate; give Average "
                  "(or Maximum)",
           "Minimum": f"a Minimum of a {unit} rate: the slowest minute of the period, never what the storage must "
                      "carry; give Average or Maximum",
           "SampleCount": "SampleCount: how many per-minute samples CloudWatch holds in each period, not I/O; give "
                          "Average",
           }.get(stat, f"{stat[:20]}: a percentile of the per-minute rates in the period; give Average or Maximum")
    return why, "fetch it again with --statistics Average (or Maximum: the busiest minute of each period)"


def _unit_name(s: shapes.Series, name: str, family: str) -> str:
    """The volume or instance: an id in the label or Id, what the label holds beside the metric's name, or
    the family."""
    m = _ID.search(s.label) or _ID.search(s.rid)
    if m:
        return m.group(1)
    i = s.label.lower().find(name.lower())
    if i >= 0:
        rest = _STAT_WORD.sub(" ", s.label[:i] + " " + s.label[i + len(name):])
        rest = re.sub(r"\s+", " ", rest).strip(" -_:/()[],")
        if rest and len(rest) <= 64 and re.fullmatch(r"[A-Za-z0-9._:/ -]+", rest):
            return rest
    return FAMILIES[family]


def _one_kind(acc: _Acc, io: list) -> set[str]:
    """The statistics of the I/O series: means (Sums of totals, Averages of rates) or Maxima, not both."""
    kinds: dict[str, str] = {}
    for k in io:
        stat, _, name, where = acc.stat_of[k]
        kinds.setdefault(_MEAN[stat], f"{name} ({stat}, {where})")
    if len(kinds) > 1:
        raise DbtierError(f"{kinds['mean']} is a mean over the period, {kinds['max']} the busiest minute: they do not "
                          "add up", "fetch every rate with one statistic (Average, or Maximum for all)")
    return set(kinds)


def _period(acc: _Acc, opts: ReadOptions) -> float:
    """--interval, else the smallest spacing of each series' points, the same for every series."""
    periods: dict[float, str] = {}
    for k, pts in acc.points.items():
        ts = sorted(pts)
        gaps = [round(b - a, 3) for a, b in zip(ts, ts[1:])]
        if gaps:
            periods.setdefault(min(gaps), f"{acc.stat_of[k][2]} ({acc.stat_of[k][3]})")
    if opts.interval_s:
        given = float(opts.interval_s)
        short = [(p, w) for p, w in periods.items() if p < given - 1e-6]
        if short:
            p, w = min(short)
            raise DbtierError(f"--interval {given:g}: {w} has points {p:g} s apart: its period is at most {p:g} s",
                              "give the --period the answers were fetched with")
        return given
    if not periods:
        first = next(iter(acc.stat_of.values()))
        raise DbtierError(f"{first[3]}: {first[2]}: one data point: the period cannot be told from the answer",
                          "give --interval PERIOD (the --period it was fetched with), or fetch at least two periods")
    if len(periods) > 1:
        (p1, w1), (p2, w2) = sorted(periods.items())[:2]
        raise DbtierError(f"a mixed period: {w1} has points {p1:g} s apart, {w2} {p2:g} s apart",
                          "ask for one Period in every query (and fetch again)")
    return next(iter(periods))


def _rows(acc: _Acc, period: float) -> list[tuple]:
    """The intervals table's rows: each unit's period, its rates per second."""
    fams: dict[str, set[str]] = {}
    for db, fam, _, _ in acc.points:
        fams.setdefault(db, set()).add(fam)
    cells: dict[tuple[str, str, str, float], dict[str, tuple[float, str, str]]] = {}
    for (db, fam, unit, col), pts in acc.points.items():
        stat = acc.stat_of[(db, fam, unit, col)][0]
        for t, (v, where) in pts.items():
            cells.setdefault((db, fam, unit, t), {})[col] = (v, stat, where)
    rows = []
    for (db, fam, unit, t), c in sorted(cells.items()):
        def rate(col: str, what: str) -> float | None:
            if col not in c:
                return None
            v, stat, where = c[col]
            r = v / period if stat == "Sum" else v
            bad = limits.rate_problem(what, r)
            if bad:
                raise DbtierError(f"{where}: {col.replace('_', ' ')} at {_iso(t)}: {bad}", "fix or remove that point")
            return r
        ri, wi = rate("read_ios", "iops"), rate("write_ios", "iops")
        rb, wb = rate("read_bytes", "bytes_per_s"), rate("write_bytes", "bytes_per_s")
        role = "detail" if _COVERED_BY.get(fam) in fams[db] else "part"
        start = _dt.datetime(1970, 1, 1) + _dt.timedelta(seconds=t)
        rows.append((db, unit, role, start, start + _dt.timedelta(seconds=period), float(period), ri, wi,
                     None if ri is None and wi is None else (ri or 0) + (wi or 0),
                     None if rb is None else rb / MB, None if wb is None else wb / MB,
                     None if rb is None and wb is None else ((rb or 0) + (wb or 0)) / MB,
                     _latency(c, "read", t), _latency(c, "write", t)))
    return rows


def _latency(c: dict, op: str, t: float) -> float | None:
    """ms per I/O: RDS's latency Average, or EBS's total time over the period's I/Os."""
    if f"{op}_lat_s" in c:
        v = c[f"{op}_lat_s"][0] * 1000
    elif f"{op}_time_s" in c and c.get(f"{op}_ios", (0, "", ""))[0] and c[f"{op}_ios"][1] == "Sum":
        v = c[f"{op}_time_s"][0] * 1000 / c[f"{op}_ios"][0]
    else:
        return None
    bad = limits.rate_problem("lat_ms", v)
    if bad:
        where = (c.get(f"{op}_lat_s") or c[f"{op}_time_s"])[2]
        raise DbtierError(f"{where}: {op} latency at {_iso(t)}: {bad}", "fix or remove that point")
    return v


def _result(acc: _Acc, io: list, kinds: set[str], period: float, files: list[str]) -> ReadResult:
    """The notes and provenance: which statistic of which unit over which period."""
    stats = sorted({acc.stat_of[k][0] for k in io}, key=("Sum", "Average", "Maximum").index)
    units = sorted({acc.stat_of[k][1] for k in io})
    d = duration_text(period, adjective=True)
    by: dict[tuple[str, str], set[str]] = {}
    for k in io:
        stat, unit, name, _ = acc.stat_of[k]
        by.setdefault((stat, unit), set()).add(name)
    notes = [f"CloudWatch: {', '.join(sorted(n))} ({unit}): "
             + (f"Sum per {period:g}-s period / {period:g} s" if stat == "Sum" else
                f"{stat} per {period:g}-s period, taken as it is (a rate)")
             for (stat, unit), n in sorted(by.items())]
    if "max" in kinds:
        basis = (f"the busiest 1-minute rate of each {d} period (CloudWatch's Maximum of the per-minute rates: a peak "
                 "minute, not the period's mean)")
        notes.append("Maxima: each the busiest minute of its own period; reads' and writes' may be of different "
                     "minutes, so their sum can exceed any one minute's")
    elif stats == ["Sum"]:
        basis = f"{d} sums divided by the period (CloudWatch's Sum)"
    elif stats == ["Average"]:
        basis = f"{d} averages (CloudWatch's Average of the per-minute rates; dbtier cannot see inside them)"
    else:
        basis = f"{d} mean rates (CloudWatch's Sums divided by the period, and its Averages)"
    if acc.assumed:
        notes.append("get-metric-data's answer does not say its statistic: taken as "
                     + ", ".join(sorted(acc.assumed)) + " (a Label or Id naming Sum, Average or Maximum says otherwise)")
    details = sorted({(db, fam) for db, fam, _, _ in acc.points if _COVERED_BY.get(fam) in
                      {f for d2, f, _, _ in acc.points if d2 == db}})
    for db, fam in details:
        notes.append(f"{db}: {FAMILIES[fam]} metrics kept as detail ({FAMILIES[_COVERED_BY[fam]]} metrics are their sum)")
    units_seen = sorted({u for _, _, u, _ in acc.points})
    notes.append(f"units added up: {', '.join(units_seen[:8])}" + (" ..." if len(units_seen) > 8 else ""))
    if acc.left:
        notes.append("left out: " + "; ".join(f"{w} ({r})" for w, (_, r) in list(acc.left.items())[:6]))
    if acc.empty:
        notes.append("no points: " + ", ".join(acc.empty[:6]))
    if acc.partial:
        later = [i for i in acc.partial if i in acc.complete]
        alone = [i for i in acc.partial if i not in acc.complete]
        first = next(iter(acc.partial.values()))[0]
        notes.append(f"not Complete (read, and joined with the pages after them): Ids {', '.join(later[:6])}, first "
                     f"at {first}" if later else f"not Complete: Ids {', '.join(alone[:6])} (first at {first}) have no "
                     "later page in these files: their range may be cut short")
        if later and alone:
            notes.append(f"not Complete and no later page in these files: Ids {', '.join(alone[:6])}")
    notes.extend(acc.notes[:20])
    sem = "delta" if stats == ["Sum"] else "rate"
    averaging = None if sem == "delta" else 60.0 if "max" in kinds else float(period)
    prov = {"statistic": ", ".join(stats), "unit": ", ".join(units), "period_s": float(period), "basis": basis}
    return ReadResult(SOURCE, "intervals", "cw_intervals", files, notes=notes, semantics=sem,
                      native_step_s=float(period), averaging_s=averaging, extra={"provenance": prov})


def _iso(t: float) -> str:
    return (_dt.datetime(1970, 1, 1) + _dt.timedelta(seconds=t)).isoformat() + "Z"
