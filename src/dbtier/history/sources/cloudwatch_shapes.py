"""CloudWatch answers as they are saved, read into one list of series (cloudwatch.py says what they are).

The shapes, told apart by their keys (in any case: camelCase serializers are read too):

- `aws cloudwatch get-metric-statistics` (boto3's `get_metric_statistics`): one object, `Label` before or
  after `Datapoints` (the CLI prints `Datapoints` first), `Datapoints` a list of `{Timestamp, Sum | Average
  | Maximum | Minimum | SampleCount | ExtendedStatistics, Unit}`, possibly empty; boto3 adds
  `ResponseMetadata`. Several in one file: concatenated (`aws ... >> file`, one after another) or a JSON
  list (a boto3 script's `json.dump` of its answers).
- `aws cloudwatch get-metric-data` (boto3's `get_metric_data`): `MetricDataResults`, each `{Id, Label,
  Timestamps, Values, StatusCode, Messages}`, and the page's own `Messages` and `NextToken`. Pages
  concatenated or saved as a JSON list (the same Id in several pages), or the results' list alone
  (`--query MetricDataResults`).

Timestamps: ISO 8601 with `Z` (AWS CLI v1, `cli_timestamp_format = none`) or `+00:00` (CLI v2), a space
before the time (Python's str() of boto3's datetimes), or epoch seconds (milliseconds past year 5000 in
seconds) as numbers or digit strings (scripts' own serializers). A time without an offset is UTC: CloudWatch
keeps UTC only.

JSON nested deeper than Python's parser goes, a number too long to parse, a wrong type anywhere: refused
in one line naming the file and line, never a traceback.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dbtier.core.errors import DbtierError
from dbtier.history import limits
from dbtier.history.sources import csvio

STATISTICS = ("Sum", "Average", "Maximum", "Minimum", "SampleCount")
_STAT_KEYS = {s.lower(): s for s in STATISTICS}
_MS_FROM = 1e11            # an epoch number above this is milliseconds (1e11 s is the year 5138)
_ANCHOR = re.compile(r'"(datapoints|id)"\s*:', re.I)
SAVE = "save the CLI's --output json answer (or boto3's response) as it is"


@dataclass
class Series:
    """One metric's points from one answer or result."""
    kind: str                      # "statistics" (get-metric-statistics) | "data" (get-metric-data)
    label: str
    rid: str                       # get-metric-data's Id ("" for get-metric-statistics)
    where: str                     # "FILE: line N" for messages
    times: list[float] = field(default_factory=list)       # epoch seconds, UTC
    stats: dict[str, list[float | None]] = field(default_factory=dict)  # statistic ("" for data) -> a value a time
    units: set[str] = field(default_factory=set)            # the datapoints' Unit (statistics)
    status: str = ""               # get-metric-data's StatusCode
    messages: list[str] = field(default_factory=list)


def show(v: Any) -> str:
    """A short, safe rendering of any JSON value for a message (never a deep repr)."""
    if isinstance(v, dict):
        return "an object"
    if isinstance(v, list):
        return "a list"
    text = json.dumps(v) if isinstance(v, str) else repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def _keys(d: dict) -> dict[str, Any]:
    """An object's keys in lower case (the CLI's PascalCase, camelCase serializers)."""
    return {str(k).lower(): v for k, v in d.items()}


def _text(v: Any) -> str:
    return v.strip() if isinstance(v, str) else ""


class _Lines:
    """Line numbers of the answers' anchors (`"Datapoints":`, `"Id":`), walked in document order."""

    def __init__(self, text: str):
        self.text = text
        self.anchors: dict[str, list[int]] = {"datapoints": [], "id": []}
        for m in _ANCHOR.finditer(text):
            self.anchors[m.group(1).lower()].append(m.start())
        self.next = {"datapoints": 0, "id": 0}
        self.pos = 0

    def take(self, kind: str) -> int:
        found = self.anchors[kind]
        k = self.next[kind]
        while k < len(found) and found[k] < self.pos:
            k += 1
        if k < len(found):
            self.pos = found[k]
            self.next[kind] = k + 1
        return self.text.count("\n", 0, self.pos) + 1


def _documents(path: str, text: str) -> list[Any]:
    """Every JSON value of the file: one, or several concatenated."""
    dec = json.JSONDecoder()
    docs = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in " \t\r\n":
            i += 1
        if i >= n:
            break
        try:
            doc, i = dec.raw_decode(text, i)
        except RecursionError:
            raise DbtierError(f"{path}: JSON nested deeper than any AWS answer (line {text.count(chr(10), 0, i) + 1} "
                              "opens thousands of lists or objects): not a CloudWatch answer", SAVE) from None
        except json.JSONDecodeError as exc:
            raise DbtierError(f"{path}: line {exc.lineno}: not valid JSON ({exc.msg})", SAVE + ", whole") from None
        except ValueError as exc:        # e.g. an integer of thousands of digits
            first = (str(exc).splitlines() or ["?"])[0][:80]
            raise DbtierError(f"{path}: line {text.count(chr(10), 0, i) + 1}: not valid JSON ({first})", SAVE) from None
        docs.append(doc)
    if not docs:
        raise DbtierError(f"{path}: no JSON in the file", SAVE)
    return docs


def load(path: str) -> tuple[list[Series], list[str]]:
    """(series, notes) of one file: every answer, page or result in it, in file order."""
    size = os.path.getsize(path)
    if size > csvio.JSON_MAX_BYTES:
        raise DbtierError(f"{path}: {size / 2**20:,.0f} MiB of JSON", "split the time range into several files")
    text = Path(path).read_text(encoding="utf-8-sig", errors="replace")
    lines = _Lines(text)
    out: list[Series] = []
    notes: list[str] = []
    next_token = False
    items: list[tuple[str, Any]] = []
    for k, doc in enumerate(_documents(path, text)):
        if isinstance(doc, list):
            items.extend((f"element {j + 1} of the list", d) for j, d in enumerate(doc))
        else:
            items.append((f"JSON value {k + 1}", doc))
    for what, d in items:
        if not isinstance(d, dict):
            raise DbtierError(f"{path}: line {lines.take('id')}: {what} is {show(d)}, not a CloudWatch answer "
                              "(an object with Datapoints or MetricDataResults)", SAVE)
        kd = _keys(d)
        if "datapoints" in kd:
            out.append(_statistics(path, kd, lines.take("datapoints")))
        elif "metricdataresults" in kd:
            results = kd["metricdataresults"]
            if not isinstance(results, list):
                raise DbtierError(f"{path}: line {lines.take('id')}: MetricDataResults is {show(results)}, not a list",
                                  SAVE)
            out.extend(_result(path, r, j, lines.take("id")) for j, r in enumerate(results))
            notes.extend(f"{path}: {m}" for m in _messages(path, kd.get("messages"), "the answer"))
            next_token = bool(_text(kd.get("nexttoken")))
        elif "id" in kd and ("timestamps" in kd or "values" in kd):
            out.append(_result(path, d, 0, lines.take("id")))
        else:
            have = ", ".join(sorted(str(k) for k in d)[:6]) or "no keys"
            raise DbtierError(f"{path}: line {lines.take('id')}: {what} ({have}) is neither a get-metric-statistics "
                              "answer (Datapoints) nor a get-metric-data one (MetricDataResults)", SAVE)
    if next_token:
        notes.append(f"{path}: its last page has a NextToken: CloudWatch had more points than it holds (import the "
                     "later pages' files too)")
    return out, notes


def _messages(path: str, msgs: Any, whose: str) -> list[str]:
    if msgs is None:
        return []
    if not isinstance(msgs, list):
        raise DbtierError(f"{path}: {whose}: Messages is {show(msgs)}, not a list", SAVE)
    out = []
    for m in msgs:
        km = _keys(m) if isinstance(m, dict) else {}
        code, value = _text(km.get("code")), _text(km.get("value"))
        if code or value:
            out.append(f"{whose}: CloudWatch said {code + ': ' if code else ''}{value}"[:300])
    return out


def _statistics(path: str, kd: dict[str, Any], line: int) -> Series:
    label = _text(kd.get("label"))
    where = f"{path}: line {line}"
    s = Series("statistics", label, "", where)
    pts = kd["datapoints"]
    if not isinstance(pts, list):
        raise DbtierError(f"{where}: {label or 'the answer'}: Datapoints is {show(pts)}, not a list", SAVE)
    for j, p in enumerate(pts):
        if not isinstance(p, dict):
            raise DbtierError(f"{where}: {label or 'the answer'}: datapoint {j + 1} is {show(p)}, not an object", SAVE)
        kp = _keys(p)
        if "timestamp" not in kp:
            raise DbtierError(f"{where}: {label or 'the answer'}: datapoint {j + 1} has no Timestamp", SAVE)
        t = time_of(where, label, kp["timestamp"])
        s.times.append(t)
        row: dict[str, float] = {}
        for key, v in kp.items():
            if key in _STAT_KEYS:
                row[_STAT_KEYS[key]] = number(where, label, _STAT_KEYS[key], v, kp["timestamp"])
            elif key == "extendedstatistics":
                if not isinstance(v, dict):
                    raise DbtierError(f"{where}: {label}: datapoint {j + 1}: ExtendedStatistics is {show(v)}", SAVE)
                for pk, pv in v.items():
                    row[str(pk)[:20]] = number(where, label, str(pk)[:20], pv, kp["timestamp"])
            elif key == "unit":
                if not isinstance(v, str):
                    raise DbtierError(f"{where}: {label}: datapoint {j + 1}: Unit is {show(v)}, not a unit name", SAVE)
                s.units.add(v.strip())
        for stat in set(row) | set(s.stats):
            s.stats.setdefault(stat, [None] * j).append(row.get(stat))
    return s


def _result(path: str, r: Any, j: int, line: int) -> Series:
    where = f"{path}: line {line}"
    if not isinstance(r, dict):
        raise DbtierError(f"{where}: MetricDataResults[{j}] is {show(r)}, not an object", SAVE)
    kr = _keys(r)
    rid, label = _text(kr.get("id")), _text(kr.get("label"))
    what = f"Id {rid or '?'}" + (f" (label {label!r})" if label and label != rid else "")
    s = Series("data", label, rid, where, status=_text(kr.get("statuscode")))
    s.messages = _messages(path, kr.get("messages"), what)
    if s.status in ("InternalError", "Forbidden"):
        said = "; ".join(s.messages)
        raise DbtierError(f"{where}: {what}: StatusCode {s.status}" + (f" ({said})" if said else ""),
                          "fetch it again (a Forbidden answer: the role lacks cloudwatch:GetMetricData, or the data "
                          "is in another Region)")
    if "timestamps" not in kr or "values" not in kr:
        miss = " and ".join(x for x, k in (("Timestamps", "timestamps"), ("Values", "values")) if k not in kr)
        raise DbtierError(f"{where}: MetricDataResults[{j}] ({what}) has no {miss}",
                          "save the CLI's output as it printed it (a page cut short, or a --query that dropped them)")
    ts, vs = kr["timestamps"], kr["values"]
    if not isinstance(ts, list) or not isinstance(vs, list) or len(ts) != len(vs):
        raise DbtierError(f"{where}: {what}: Timestamps and Values are not lists of the same length", SAVE)
    s.times = [time_of(where, what, t) for t in ts]
    s.stats[""] = [number(where, what, "value", v, t) for t, v in zip(ts, vs)]
    return s


def number(where: str, what: str, stat: str, v: Any, t: Any) -> float:
    """A statistic's value: a finite, non-negative number."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise DbtierError(f"{where}: {what}: {stat} {show(v)} at {show(t)} is not a number", SAVE)
    try:
        f = float(v)
    except OverflowError:          # an integer beyond any float
        f = math.inf
    if not math.isfinite(f) or f < 0:
        raise DbtierError(f"{where}: {what}: {stat} {show(v)} at {show(t)} is not a count, size, rate or time",
                          "fix or remove that point")
    return f


def time_of(where: str, what: str, v: Any) -> float:
    """Epoch seconds (UTC) of a timestamp in any of the shapes above."""
    if isinstance(v, str) and re.fullmatch(r"\s*\d{9,14}(\.\d*)?\s*", v):
        v = float(v)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        try:
            t = float(v)
        except OverflowError:
            t = math.inf
        if math.isfinite(t) and t > _MS_FROM:
            t /= 1000.0
        if not math.isfinite(t):
            raise DbtierError(f"{where}: {what}: timestamp {show(v)} is not a time", SAVE)
    elif isinstance(v, str):
        try:
            d = _dt.datetime.fromisoformat(v.strip().replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            raise DbtierError(f"{where}: {what}: timestamp {show(v)} is not ISO 8601 or epoch seconds", SAVE) from None
        if d.tzinfo is None:
            d = d.replace(tzinfo=_dt.timezone.utc)
        try:
            t = d.timestamp()
        except (OverflowError, ValueError):
            t = math.inf
    else:
        raise DbtierError(f"{where}: {what}: timestamp {show(v)} is not a time", SAVE)
    year = 1970 + t / 31556952
    if not (limits.FIRST_YEAR <= year < limits.LAST_YEAR + 1):
        raise DbtierError(f"{where}: {what}: timestamp {show(v)} is outside {limits.FIRST_YEAR}-{limits.LAST_YEAR}",
                          "fix or remove that point")
    return t
