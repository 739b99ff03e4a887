"""AWS CloudWatch: EBS volume metrics as `aws cloudwatch get-metric-data` (or `get-metric-statistics`) print them.

    aws cloudwatch get-metric-data --metric-data-queries file://q.json --scan-by TimestampAscending \\
        --start-time 2026-11-01T00:00:00Z --end-time 2026-11-08T00:00:00Z --output json > ebs.json

with one query per metric and volume, `"Stat": "Sum"`: `VolumeReadOps`, `VolumeWriteOps`,
`VolumeReadBytes`, `VolumeWriteBytes` (optionally `VolumeTotalReadTime`, `VolumeTotalWriteTime`, seconds:
the latency; Nitro instances' `EBSReadOps` ... of AWS/EC2 likewise). Each result is told by its `Label`
or its `Id` (CloudWatch labels a result with its metric name unless the query gives another label): it
must name one of those metrics; the volume is the `vol-...` (or instance `i-...`) in the label or id,
else `--database`. A volume is a unit of the database (`--database`, else the file name); volumes add up.

**Semantics: delta.** A point is the Sum over one period starting at its timestamp: IOPS = Sum / Period,
MB/s = bytes / Period / 10^6, latency = time / operations. The output does not carry the period: it is
the smallest spacing of a result's timestamps (EBS reports every minute or five; a period shorter than
that returns points at the collection spacing, so the spacing is the honest period), and every result
must have the same one ("a mixed period" is refused). Points come newest first by default: sorted. The
CLI pages a long answer and repeats an `Id` per page, and pages saved as separate files repeat it too:
they are merged by Id (a time in two pages with different values is refused). A result with
`StatusCode` InternalError or Forbidden is refused; a missing period is a gap, never a zero.
`get-metric-statistics` answers (`Label`, `Datapoints` with `Sum`) are read the same way.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from pathlib import Path
from typing import Any, Sequence

import duckdb

from dbtier.core.errors import DbtierError
from dbtier.history import limits
from dbtier.history.sources import csvio
from dbtier.history.sources import detect
from dbtier.history.tables import INTERVAL_TABLE_COLUMNS, MB, ReadOptions, ReadResult, database_name_from_file

SOURCE = "cloudwatch"
METRICS = {"volumereadops": "read_ios", "volumewriteops": "write_ios", "volumereadbytes": "read_bytes",
           "volumewritebytes": "write_bytes", "volumetotalreadtime": "read_time_s", "volumetotalwritetime": "write_time_s",
           "ebsreadops": "read_ios", "ebswriteops": "write_ios", "ebsreadbytes": "read_bytes",
           "ebswritebytes": "write_bytes"}
_VOL = re.compile(r"\b(vol-[0-9a-f]{8,17}|i-[0-9a-f]{8,17})\b")


def metric_of(text: str) -> str | None:
    key = re.sub(r"[^a-z]", "", text.lower())
    hits = [m for m in METRICS if m in key]
    return max(hits, key=len) if hits else None        # (volumereadbytes, not volumereadops' prefix)


def _time(path: str, line: int, what: str, v: Any) -> float:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        t = float(v)          # boto3 answers saved with default=str print epoch seconds sometimes
    elif isinstance(v, str):
        try:
            d = _dt.datetime.fromisoformat(v.strip().replace("Z", "+00:00"))
        except ValueError:
            raise DbtierError(f"{path}: line {line}: {what}: timestamp {v!r} is not ISO 8601",
                              "save the CLI's JSON output (--output json) as it is") from None
        if d.tzinfo is None:
            d = d.replace(tzinfo=_dt.timezone.utc)
        t = d.timestamp()
    else:
        raise DbtierError(f"{path}: line {line}: {what}: timestamp {v!r} is not a time", "save the CLI's output as it is")
    year = 1970 + t / 31557600
    if not (limits.FIRST_YEAR <= year <= limits.LAST_YEAR):
        raise DbtierError(f"{path}: line {line}: {what}: timestamp {v!r} is outside {limits.FIRST_YEAR}-"
                          f"{limits.LAST_YEAR}", "fix or remove that point")
    return t


def _line(text: str, needle: str, start: int = 0) -> int:
    i = text.find(needle, start)
    return text.count("\n", 0, i) + 1 if i >= 0 else 1


def _results(path: str) -> list[tuple[str, str, int, list[Any], list[Any]]]:
    """(id, label, line, timestamps, values) of each result of one file."""
    doc, text = csvio.load_json(path, "the CLI's --output json answer")
    out = []
    if isinstance(doc, dict) and "Datapoints" in doc:            # get-metric-statistics
        label = str(doc.get("Label") or "")
        pts = doc.get("Datapoints")
        if not isinstance(pts, list):
            raise DbtierError(f"{path}: line {_line(text, 'Datapoints')}: Datapoints is not a list",
                              "save the CLI's output as it is")
        ts, vs = [], []
        for p in pts:
            if not isinstance(p, dict) or "Sum" not in p:
                have = ", ".join(k for k in (p if isinstance(p, dict) else {}) if k not in ("Timestamp", "Unit"))
                raise DbtierError(f"{path}: line {_line(text, 'Datapoints')}: {label}: a datapoint without Sum "
                                  f"(it has {have or 'nothing'}): IOPS need the Sum of each period",
                                  "ask for --statistics Sum")
            ts.append(p.get("Timestamp"))
            vs.append(p["Sum"])
        return [(label, label, _line(text, "Label"), ts, vs)]
    if not (isinstance(doc, dict) and isinstance(doc.get("MetricDataResults"), list)):
        raise DbtierError(f"{path}: line 1: not `aws cloudwatch get-metric-data` output (no MetricDataResults)",
                          "save `aws cloudwatch get-metric-data ... --output json`")
    pos = 0
    for k, r in enumerate(doc["MetricDataResults"]):
        rid = str(r.get("Id") or "") if isinstance(r, dict) else ""
        pos = max(pos, text.find(f'"{rid}"', pos + 1 if k else 0)) if rid else pos
        line = text.count("\n", 0, pos) + 1
        if not isinstance(r, dict):
            raise DbtierError(f"{path}: line {line}: MetricDataResults[{k}] is not an object", "save the CLI's output")
        what = f"MetricDataResults[{k}] (Id {rid or '?'}, label {r.get('Label')!r})"
        status = r.get("StatusCode")
        if status in ("InternalError", "Forbidden"):
            msgs = "; ".join(str(m.get("Value")) for m in r.get("Messages") or [] if isinstance(m, dict))
            raise DbtierError(f"{path}: line {line}: {what}: StatusCode {status}" + (f" ({msgs})" if msgs else ""),
                              "fetch it again (a Forbidden answer: the role lacks cloudwatch:GetMetricData, or "
                              "the data is in another Region)")
        if "Values" not in r or "Timestamps" not in r:
            miss = " and ".join(x for x in ("Timestamps", "Values") if x not in r)
            raise DbtierError(f"{path}: line {line}: {what} has no {miss}",
                              "save the CLI's output as it printed it (a page cut short, or a --query that dropped them)")
        if not isinstance(r["Values"], list) or not isinstance(r["Timestamps"], list) or \
                len(r["Values"]) != len(r["Timestamps"]):
            raise DbtierError(f"{path}: line {line}: {what}: Timestamps and Values are not lists of the same length",
                              "save the CLI's output as it is")
        out.append((rid, str(r.get("Label") or ""), line, r["Timestamps"], r["Values"]))
    return out


def read(con: duckdb.DuckDBPyConnection, paths: Sequence[str | Path], opts: ReadOptions) -> ReadResult:
    merged: dict[tuple[str, str, str], dict[float, tuple[float, str, int]]] = {}  # (db, unit, column) -> t -> value
    label_of: dict[tuple[str, str, str], str] = {}
    for p in paths:
        csvio.check_file(p)
        path = str(p)
        if detect.guess(path) not in (None, SOURCE):
            detect.refuse_other(path, SOURCE, "CloudWatch output")
        for rid, label, line, ts, vs in _results(path):
            metric = metric_of(label) or metric_of(rid)
            what = f"Id {rid!r}" + (f" (label {label!r})" if label and label != rid else "")
            if metric is None:
                raise DbtierError(f"{path}: line {line}: {what} names none of VolumeReadOps, VolumeWriteOps, "
                                  "VolumeReadBytes, VolumeWriteBytes (or VolumeTotalReadTime/WriteTime)",
                                  "give each query the metric's name as its Label or Id (e.g. \"Id\": \"vol0_readops\")")
            m = _VOL.search(label) or _VOL.search(rid)
            db = opts.database or database_name_from_file(path)
            unit = m.group(1) if m else (opts.database or "volume")
            key = (db, unit, METRICS[metric])
            label_of[key] = f"{path}: line {line}: {what}"
            seen = merged.setdefault(key, {})
            for t_raw, v in zip(ts, vs):
                t = _time(path, line, what, t_raw)
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                    raise DbtierError(f"{path}: line {line}: {what}: value {v!r} at {t_raw} is not a count or size",
                                      "save the CLI's output as it is")
                if t in seen and seen[t][0] != v:
                    raise DbtierError(f"{path}: line {line}: {what}: {t_raw} is {v:g} here and {seen[t][0]:g} in "
                                      f"{seen[t][1]} line {seen[t][2]}", "import each page once (pages of two "
                                      "different fetches overlap)")
                seen[t] = (float(v), path, line)
    if not merged or not any(merged.values()):
        raise DbtierError(f"{', '.join(map(str, paths[:3]))}: no data points (every result's Values is empty)",
                          "check the time range and the volume id (EBS reports only while a volume is attached)")
    period = _period(merged, label_of)
    rows = []
    units: dict[tuple[str, str, float], dict[str, float]] = {}
    for (db, unit, col), pts in merged.items():
        for t, (v, _, _) in pts.items():
            units.setdefault((db, unit, t), {})[col] = v
    for (db, unit, t), c in sorted(units.items()):
        ri, wi = c.get("read_ios"), c.get("write_ios")
        rb, wb = c.get("read_bytes"), c.get("write_bytes")
        rt, wt = c.get("read_time_s"), c.get("write_time_s")
        start = _dt.datetime(1970, 1, 1) + _dt.timedelta(seconds=t)
        rows.append((db, unit, "part", start, start + _dt.timedelta(seconds=period), float(period),
                     None if ri is None else ri / period, None if wi is None else wi / period,
                     None if ri is None and wi is None else ((ri or 0) + (wi or 0)) / period,
                     None if rb is None else rb / period / MB, None if wb is None else wb / period / MB,
                     None if rb is None and wb is None else ((rb or 0) + (wb or 0)) / period / MB,
                     None if rt is None or not ri else rt * 1000 / ri, None if wt is None or not wi else wt * 1000 / wi))
    con.execute(f"CREATE OR REPLACE TABLE cw_intervals ({INTERVAL_TABLE_COLUMNS})")
    con.executemany("INSERT INTO cw_intervals VALUES (" + ", ".join("?" * 14) + ")", rows)
    vols = sorted({u for _, u, _ in merged})
    notes = [f"CloudWatch: Sum per {period:g}-s period / {period:g} s (the period is the points' spacing; "
             "get-metric-data's output does not say it, so each query must ask for Stat Sum)",
             f"volumes added up: {', '.join(vols[:8])}" + (" ..." if len(vols) > 8 else "")]
    return ReadResult(SOURCE, "intervals", "cw_intervals", [str(p) for p in paths], notes=notes, semantics="delta",
                      native_step_s=float(period))


def _period(merged: dict, label_of: dict) -> float:
    """The period: the smallest spacing of each result's points, the same for every result."""
    periods: dict[float, str] = {}
    for key, pts in merged.items():
        ts = sorted(pts)
        gaps = [round(b - a, 3) for a, b in zip(ts, ts[1:])]
        if gaps:
            periods.setdefault(min(gaps), label_of[key])
    if not periods:
        raise DbtierError(f"{next(iter(label_of.values()))}: one data point per result: the period cannot be told "
                          "from the output", "fetch a range of at least two periods")
    if len(periods) > 1:
        (p1, w1), (p2, w2) = sorted(periods.items())[:2]
        raise DbtierError(f"a mixed period: {w1} has points {p1:g} s apart, {w2} {p2:g} s apart",
                          "ask for one Period in every query (and fetch again)")
    return next(iter(periods))
