"""Azure Monitor: disk and VM I/O metrics as `az monitor metrics list` (or the REST API's Metrics - List) print them.

    az monitor metrics list --resource DISK_OR_VM_ID --interval PT1M --aggregation Average Total \\
        --metric "Composite Disk Read Operations/sec" "Composite Disk Write Operations/sec" \\
                 "Composite Disk Read Bytes/sec" "Composite Disk Write Bytes/sec" \\
        --start-time 2026-11-01T00:00:00Z --end-time 2026-11-02T00:00:00Z -o json > disk.json

**Semantics: rate.** Azure gives no counters: `... Operations/Sec` (CountPerSecond) and `... Bytes/sec`
(BytesPerSecond) are averages over the time grain (`average`); a VM's `Disk Read Bytes` / `Disk Write
Bytes` (unit Bytes) are totals over the grain (`total`), divided by it. So a peak here is the highest
grain's average, and the requirement says "p99 of 60-s averages": a burst inside a minute is not seen.

Which metrics (names in any case): a managed disk's `Composite Disk Read|Write Operations/sec` and
`... Bytes/sec` (a unit per disk resource); a VM's `Disk Read|Write Operations/Sec` and `Disk Read|Write
Bytes` (all its disks: the VM's `total`), `OS Disk ...` and `Data Disk ...` (per disk, by their LUN
dimension: `part`, or `detail` when the VM's own total is there, so nothing is counted twice). A point
without the aggregation is missing (a gap), not a zero. The grain is the answer's `interval` (ISO 8601
`PT1M`, or the CLI's `0:01:00`), else the points' spacing. The database is `--database`, else the
resource's name (from its id), else the file name.
"""

from __future__ import annotations

import datetime as _dt
import json
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

SOURCE = "azure"
# lower-case metric name -> (scope, column): scope total (the VM's all disks), part (a disk)
METRICS = {}
for _scope, _prefix in (("total", "disk"), ("part", "os disk"), ("part", "data disk"), ("part", "composite disk")):
    for _op, _col in (("read", "read"), ("write", "write")):
        METRICS[f"{_prefix} {_op} operations/sec"] = (_scope, f"{_col}_iops")
        METRICS[f"{_prefix} {_op} bytes/sec"] = (_scope, f"{_col}_bps")
        METRICS[f"{_prefix} {_op} bytes"] = (_scope, f"{_col}_bytes")
_ISO_DUR = re.compile(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$")
_CLI_DUR = re.compile(r"^(?:(\d+) days?, )?(\d+):(\d\d):(\d\d(?:\.\d+)?)$")
_RESOURCE = re.compile(r"/providers/Microsoft\.Compute/(?:virtualMachines|disks)/([^/]+)", re.I)


def grain_seconds(text: Any) -> float | None:
    """PT1M -> 60, the CLI's '0:01:00' or '1 day, 0:00:00' -> seconds; None when not a duration."""
    if not isinstance(text, str):
        return None
    s = text.strip()
    m = _ISO_DUR.match(s)
    if m and any(m.groups()):
        d, h, mi, se = (float(x) if x else 0.0 for x in m.groups())
        return d * 86400 + h * 3600 + mi * 60 + se
    m = _CLI_DUR.match(s)
    if m:
        return float(m.group(1) or 0) * 86400 + int(m.group(2)) * 3600 + int(m.group(3)) * 60 + float(m.group(4))
    return None


def _line(text: str, needle: str, start: int = 0) -> int:
    i = text.find(needle, start)
    return text.count("\n", 0, i) + 1 if i >= 0 else 1


def _t(path: str, line: int, what: str, v: Any) -> _dt.datetime:
    try:
        d = _dt.datetime.fromisoformat(str(v).strip().replace("Z", "+00:00"))
    except ValueError:
        raise DbtierError(f"{path}: line {line}: {what}: timeStamp {v!r} is not ISO 8601",
                          "save the az CLI's JSON output as it is") from None
    d = d.astimezone(_dt.timezone.utc).replace(tzinfo=None) if d.tzinfo else d
    if limits.time_problem(d):
        raise DbtierError(f"{path}: line {line}: {what}: timeStamp {limits.time_problem(d)}", "fix or remove that point")
    return d


def read(con: duckdb.DuckDBPyConnection, paths: Sequence[str | Path], opts: ReadOptions) -> ReadResult:
    points: dict[tuple[str, str, str, _dt.datetime], dict[str, float]] = {}   # (db, unit, scope, t) -> col -> value
    grains: dict[float, str] = {}
    ignored: set[str] = set()
    for p in paths:
        csvio.check_file(p)
        path = str(p)
        if detect.guess(path) not in (None, SOURCE):
            detect.refuse_other(path, SOURCE, "Azure Monitor output")
        _one_file(path, opts, points, grains, ignored)
    if not points:
        names = ", ".join(sorted(ignored)[:4]) or "none"
        raise DbtierError(f"{', '.join(map(str, paths[:3]))}: no disk I/O metric with data (the metrics are: {names})",
                          "ask for \"Composite Disk Read Operations/sec\" ... of a disk, or \"Disk Read Operations/Sec\" "
                          "and \"Disk Read Bytes\" ... of a VM")
    if len(grains) > 1:
        (g1, w1), (g2, w2) = sorted(grains.items())[:2]
        raise DbtierError(f"a mixed time grain: {w1} is {g1:g} s, {w2} {g2:g} s", "fetch every file with one --interval")
    grain = next(iter(grains))
    has_total = {db for db, _, scope, _ in points if scope == "total"}
    rows = []
    for (db, unit, scope, t), c in sorted(points.items()):
        role = "total" if scope == "total" else ("detail" if db in has_total else "part")
        rb = c.get("read_bps", c["read_bytes"] / grain if "read_bytes" in c else None)
        wb = c.get("write_bps", c["write_bytes"] / grain if "write_bytes" in c else None)
        ri, wi = c.get("read_iops"), c.get("write_iops")
        rows.append((db, unit, role, t, t + _dt.timedelta(seconds=grain), grain, ri, wi,
                     None if ri is None and wi is None else (ri or 0) + (wi or 0),
                     None if rb is None else rb / MB, None if wb is None else wb / MB,
                     None if rb is None and wb is None else ((rb or 0) + (wb or 0)) / MB, None, None))
    con.execute(f"CREATE OR REPLACE TABLE az_intervals ({INTERVAL_TABLE_COLUMNS})")
    con.executemany("INSERT INTO az_intervals VALUES (" + ", ".join("?" * 14) + ")", rows)
    notes = [f"Azure Monitor: {grain:g}-s averages as the source gives them (no counters: dbtier cannot see "
             "inside a grain)"]
    if has_total:
        notes.append("the VM's own Disk ... metrics are its total; per-disk (OS/Data Disk) metrics are kept as detail")
    if ignored:
        notes.append(f"left out: {', '.join(sorted(ignored)[:5])}")
    return ReadResult(SOURCE, "intervals", "az_intervals", [str(p) for p in paths], notes=notes, semantics="rate",
                      native_step_s=grain, averaging_s=grain)


def _one_file(path: str, opts: ReadOptions, points: dict, grains: dict, ignored: set) -> None:
    doc, text = csvio.load_json(path, "the az CLI's -o json answer")
    if not (isinstance(doc, dict) and isinstance(doc.get("value"), list)):
        raise DbtierError(f"{path}: line 1: not `az monitor metrics list` output (no \"value\" list of metrics)",
                          "save `az monitor metrics list ... -o json`")
    grain = grain_seconds(doc.get("interval"))
    pos = 0
    for k, m in enumerate(doc["value"]):
        name = ((m.get("name") or {}).get("value") if isinstance(m, dict) and isinstance(m.get("name"), dict)
                else None) or ""
        pos = max(pos, text.find(json.dumps(name)[1:-1], pos)) if name else pos
        line = text.count("\n", 0, pos) + 1
        spec = METRICS.get(name.strip().lower())
        if spec is None:
            ignored.add(name or f"value[{k}]")
            continue
        scope, col = spec
        unit_kind = str(m.get("unit") or "")
        if col.endswith("_bytes") and unit_kind.lower() not in ("bytes", ""):
            raise DbtierError(f"{path}: line {line}: {name}: unit {unit_kind!r}, not Bytes", "save the CLI's output as it is")
        agg = "total" if col.endswith("_bytes") else "average"
        rid = str(m.get("id") or "")
        res = _RESOURCE.search(rid)
        db = opts.database or (res.group(1) if res else None) or database_name_from_file(path)
        series = m.get("timeseries")
        if not isinstance(series, list):
            raise DbtierError(f"{path}: line {line}: {name} has no timeseries list", "save the CLI's output as it is")
        for ts in series:
            meta = {str((x.get("name") or {}).get("value", "")).lower(): str(x.get("value"))
                    for x in (ts.get("metadatavalues") or []) if isinstance(x, dict)}
            base = "all disks" if scope == "total" else ("os disk" if name.lower().startswith("os disk")
                                                         else (res.group(1) if res and "composite" in name.lower()
                                                               else "data disk"))
            unit = f"{base} LUN {meta['lun']}" if "lun" in meta else base
            data = ts.get("data") or []
            times = []
            for pt in data:
                if not isinstance(pt, dict) or "timeStamp" not in pt:
                    raise DbtierError(f"{path}: line {line}: {name}: a point without timeStamp",
                                      "save the CLI's output as it is")
                t = _t(path, line, name, pt["timeStamp"])
                times.append(t)
                v = pt.get(agg)
                if v is None:
                    continue            # no data in that grain: a gap, not a zero
                if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
                    raise DbtierError(f"{path}: line {line}: {name} at {pt['timeStamp']}: {agg} {v!r} is not a rate",
                                      "save the CLI's output as it is")
                key = (db, unit, scope, t)
                old = points.setdefault(key, {}).get(col)
                if old is not None and old != v:
                    raise DbtierError(f"{path}: line {line}: {name} at {pt['timeStamp']} appears twice with different "
                                      "values", "import each answer once")
                points[key][col] = float(v)
            g = grain
            if g is None and len(times) > 1:
                g = min((b - a).total_seconds() for a, b in zip(sorted(times), sorted(times)[1:]))
            if g:
                grains.setdefault(g, f"{path}: line {line} ({name})")
            elif times:
                raise DbtierError(f"{path}: line {line}: {name}: no interval in the answer and one point: the time "
                                  "grain cannot be told", "ask for a range of at least two grains (--interval PT1M)")
