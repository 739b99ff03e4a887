"""Prometheus-family files as labelled series of (time, value) samples, whatever the file's format.

Formats, told apart by their first bytes (`sniff`):

- `query_range`: the HTTP API's answer to `/api/v1/query_range` (what `curl` saves):
  `{"status":"success","data":{"resultType":"matrix","result":[{"metric":{...},"values":[[1761955200,"812334411"],...]}]}}`;
  `promtool query range -o json` prints the bare `result` list. Times are unix seconds, values strings
  (JSON has no NaN or Inf). A time over 10^11 is milliseconds (a rewritten file), refused; so are NaN and
  Inf (a division or a function result, not a counter), and `status: error`.
- `dump`: `promtool tsdb dump` text, one raw scrape sample a line: `{__name__="x", device="vda"} 812334411 1761955200123`
  (value `%g`, milliseconds). A NaN there is a staleness marker (the target went away): skipped, counted.
- `vmexport`: VictoriaMetrics' `/api/v1/export` JSON lines: `{"metric":{...},"values":[...],"timestamps":[ms,...]}`.
- `text`: the text exposition a scrape answers (`curl .../metrics`, `/federate`): a `# TIME`, `# HELP` or
  `# TYPE` line first, or a `node_` sample. Scrapes are a history only together (their times may come from
  the file's name): promtext.py reads them, all files at once.

Every refusal names the file and line (a JSON answer is often one line: the line is where the sample is).
Pure parsing: no DuckDB, no network.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

from dbtier.core.errors import DbtierError
from dbtier.history import limits

# One JSON answer is read whole: past this, split the range (dbtier history fetch does).
MAX_JSON_BYTES = 256 * 2**20
MS_THRESHOLD = 1e11          # unix seconds past this are year 5138: milliseconds

_TEXT_COMMENT = re.compile(r"# (TIME|HELP|TYPE)(\s|$)")
_TEXT_SAMPLE = re.compile(r"node_[A-Za-z0-9_:]*(\{.*\})?[ \t]+\S+([ \t]+\S+)?$")
_DUMP_LINE = re.compile(r"^\{(.*)\}\s+(\S+)\s+(-?\d+)\s*$")
_LABEL = re.compile(r'\s*([A-Za-z_][A-Za-z0-9_]*)="((?:[^"\\]|\\.)*)"\s*(?:,|$)')
_METRIC_KEY = re.compile(r'"metric"\s*:')
_ESC = re.compile(r"\\(.)")      # a label value's escapes: \" \\ \n


@dataclass
class Series:
    labels: dict[str, str]          # __name__ included when the file has it
    times: list[float]              # unix seconds, increasing
    values: list[float]
    line: int                       # the line the series starts on (messages)

    @property
    def name(self) -> str | None:
        return self.labels.get("__name__")

    def describe(self) -> str:
        rest = ",".join(f'{k}="{v}"' for k, v in sorted(self.labels.items()) if k != "__name__")
        return f"{self.name or ''}{{{rest}}}"


def sniff(path: str | os.PathLike) -> str | None:
    """query_range | dump | vmexport | text, or None."""
    try:
        with open(path, "rb") as f:
            head = f.read(8192).decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    except OSError:
        return None
    if head.startswith("{") and '"metric"' in head[:200] and '"timestamps"' in head:
        return "vmexport"
    if head.startswith("{") and '"status"' in head and ('"data"' in head or '"error"' in head):
        return "query_range"
    if head.startswith("[") and ('"metric"' in head or head[1:].lstrip().startswith("]")):
        return "query_range"
    first = head.splitlines()[0] if head else ""
    if _DUMP_LINE.match(first) and "__name__=" in first:
        return "dump"
    line = first.strip()
    if _TEXT_COMMENT.match(line) or _TEXT_SAMPLE.match(line):
        return "text"
    return None


def read(path: str | os.PathLike) -> tuple[str, list[Series], int]:
    """(format, series, staleness markers skipped) of one file; a DbtierError naming file and line otherwise."""
    p = str(path)
    fmt = sniff(p)
    if fmt == "query_range":
        return fmt, _read_query_range(p), 0
    if fmt == "vmexport":
        return fmt, _read_vmexport(p), 0
    if fmt == "dump":
        series, stale = _read_dump(p)
        return fmt, series, stale
    if fmt == "text":
        raise DbtierError(f"{p}: a scrape's text (`curl .../metrics`): read with the others by the prometheus source",
                          "import it with dbtier history import (--source prometheus)")
    raise DbtierError(f"{p}: line 1: not a Prometheus query_range answer, `promtool tsdb dump` text, a "
                      "VictoriaMetrics export or a scrape's text (`# HELP`, `# TYPE` or `# TIME` first)", "save the API's answer as it is (curl -o FILE .../api/v1/query_range?...) "
                      "or use `dbtier history fetch --prometheus URL`")


def _line_at(text: str, pos: int) -> int:
    return text.count("\n", 0, max(0, pos)) + 1


def _bad(path: str, line: int, what: str, hint: str) -> DbtierError:
    return DbtierError(f"{path}: line {line}: {what}", hint)


def iso_time(t: float) -> str:
    try:
        return (_dt.datetime(1970, 1, 1) + _dt.timedelta(seconds=t)).isoformat(sep=" ") + " UTC"
    except (OverflowError, ValueError):
        return f"{t:g} s"


def _check_times(path: str, s: Series, ms: bool) -> None:
    """Increasing times, in the plausible years (limits.py)."""
    prev = None
    for t in s.times:
        if prev is not None and not t > prev:
            raise _bad(path, s.line, f"{s.describe()}: sample time {iso_time(t)} is not after the one before "
                       f"({iso_time(prev)})", "pass each series' samples once, in time order")
        prev = t
    for t in (s.times[0], s.times[-1]) if s.times else ():
        year = 1970 + t / 31557600
        if not (limits.FIRST_YEAR <= year <= limits.LAST_YEAR + 1):
            unit = "milliseconds" if ms else "seconds"
            raise _bad(path, s.line, f"{s.describe()}: sample time {t:.17g} {unit} is in the year {year:,.0f}, "
                       f"outside {limits.FIRST_YEAR}-{limits.LAST_YEAR}", "fix or remove that sample")


# -- query_range JSON -----------------------------------------------------------------------------------------

def _load_json(path: str) -> tuple[str, object]:
    size = os.path.getsize(path)
    if size > MAX_JSON_BYTES:
        raise DbtierError(f"{path}: {size / 2**20:,.0f} MiB of JSON in one answer (over {MAX_JSON_BYTES // 2**20} MiB)",
                          "fetch shorter ranges (dbtier history fetch splits them) and import the files together")
    text = Path(path).read_text(encoding="utf-8-sig", errors="replace")
    try:
        return text, json.loads(text)
    except json.JSONDecodeError as exc:
        raise _bad(path, exc.lineno, f"not valid JSON ({exc.msg}, column {exc.colno})",
                   "save the API's answer whole (a cut-off download?)") from None


def _read_query_range(path: str) -> list[Series]:
    text, doc = _load_json(path)
    if isinstance(doc, dict):
        status = doc.get("status")
        if status == "error":
            raise _bad(path, 1, f"the Prometheus API answered status \"error\" ({doc.get('errorType') or 'error'}: "
                       f"{str(doc.get('error') or 'no message')[:300]})", "fix the query (or the range and step) "
                       "and fetch it again")
        if status != "success" or not isinstance(doc.get("data"), dict):
            raise _bad(path, 1, f"a JSON answer with status {status!r} and no data: not a query_range answer",
                       "save the API's answer to /api/v1/query_range as it is")
        data = doc["data"]
        kind = data.get("resultType")
        if kind != "matrix":
            raise _bad(path, 1, f"resultType {kind!r}: an instant query's answer, not a range; history needs "
                       "samples over time", "query /api/v1/query_range (start, end, step), or use dbtier history fetch")
        result = data.get("result")
    else:
        result = doc            # promtool query range -o json: the bare matrix
    if not isinstance(result, list):
        raise _bad(path, 1, "the answer's result is not a list of series", "save the API's answer as it is")
    keys = [m.start() for m in _METRIC_KEY.finditer(text)]
    out = []
    for k, item in enumerate(result):
        pos = keys[k] if k < len(keys) else 0
        line = _line_at(text, pos)
        if not isinstance(item, dict) or not isinstance(item.get("metric"), dict) or \
                not isinstance(item.get("values"), list):
            raise _bad(path, line, f"series {k + 1} has no \"metric\" labels and \"values\" list",
                       "save the API's answer to a range query as it is")
        labels = {str(a): str(b) for a, b in item["metric"].items()}
        s = Series(labels, [], [], line)
        for pair in item["values"]:
            if not (isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], (int, float))
                    and not isinstance(pair[0], bool)):
                raise _bad(path, _find(text, pos, re.escape(json.dumps(pair)[:40])),
                           f"{s.describe()}: sample {pair!r} is not [seconds, \"value\"]", "save the API's answer as it is")
            t, v = float(pair[0]), pair[1]
            if t > MS_THRESHOLD:
                raise _bad(path, _find(text, pos, str(pair[0])), f"{s.describe()}: sample time {pair[0]} is in "
                           f"milliseconds (as seconds it is the year {1970 + t / 31557600:,.0f}); the query_range API "
                           "gives unix seconds", "pass the API's answer unchanged (a tool rewrote its times)")
            x = _number(v)
            if x is None or not math.isfinite(x):
                raise _bad(path, _find(text, pos, re.escape(json.dumps(v))), f"{s.describe()} at {iso_time(t)}: value "
                           f"{v!r} is not a finite number", "query the counters themselves (NaN and Inf come from a "
                           "division or a function), and fetch them again")
            s.times.append(t)
            s.values.append(x)
        _check_times(path, s, ms=False)
        out.append(s)
    return out


def _number(v: object) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return None
    return None


def _find(text: str, start: int, pattern: str) -> int:
    m = re.compile(pattern).search(text, start)
    return _line_at(text, m.start()) if m else _line_at(text, start)


# -- promtool tsdb dump ---------------------------------------------------------------------------------------

def _labels(path: str, lineno: int, body: str) -> dict[str, str]:
    out: dict[str, str] = {}
    pos = 0
    while pos < len(body):
        m = _LABEL.match(body, pos)
        if not m:
            raise _bad(path, lineno, f"labels {{{body[:120]}}} are not name=\"value\" pairs",
                       "pass `promtool tsdb dump` output as it printed it")
        out[m.group(1)] = _ESC.sub(lambda e: {"n": "\n"}.get(e.group(1), e.group(1)), m.group(2))
        pos = m.end()
    return out


def _read_dump(path: str) -> tuple[list[Series], int]:
    from dbtier.history.sources import csvio
    series: dict[str, Series] = {}
    stale = 0
    with csvio.text_io(path) as f:
        for lineno, raw in enumerate(csvio.bounded(f, path), 1):
            line = raw.strip()
            if not line:
                continue
            m = _DUMP_LINE.match(line)
            if not m:
                raise _bad(path, lineno, f"{line[:80]!r} is not a `promtool tsdb dump` line ({{labels}} value "
                           "milliseconds)", "pass `promtool tsdb dump` output as it printed it")
            key, v, ts = m.group(1), m.group(2), int(m.group(3))
            s = series.get(key)
            if s is None:
                s = series[key] = Series(_labels(path, lineno, key), [], [], lineno)
            x = _number(v)
            if x is None:
                raise _bad(path, lineno, f"{s.describe()}: value {v!r} is not a number", "fix or remove that line")
            if math.isnan(x):
                stale += 1          # a staleness marker: the series ended there
                continue
            if not math.isfinite(x):
                raise _bad(path, lineno, f"{s.describe()}: value {v!r} is not a finite number",
                           "fix or remove that line")
            t = ts / 1000.0
            if s.times and not t > s.times[-1]:
                raise _bad(path, lineno, f"{s.describe()}: sample time {iso_time(t)} is not after the one before "
                           f"({iso_time(s.times[-1])})", "dump each block once (a series printed twice?)")
            s.times.append(t)
            s.values.append(x)
    if not series:
        raise DbtierError(f"{path}: no samples in this `promtool tsdb dump` output",
                          "check the dump's --match, --min-time and --max-time")
    for s in series.values():
        _check_times(path, s, ms=True)
    return list(series.values()), stale


# -- VictoriaMetrics export -----------------------------------------------------------------------------------

def _read_vmexport(path: str) -> list[Series]:
    out = []
    with open(path, "r", encoding="utf-8-sig", errors="replace") as f:
        for lineno, line in enumerate(iter(lambda: f.readline(MAX_JSON_BYTES + 1), ""), 1):
            if len(line) > MAX_JSON_BYTES:
                raise _bad(path, lineno, f"a line over {MAX_JSON_BYTES // 2**20} MiB",
                           "export shorter ranges (start=, end=) and import the files together")
            if not line.strip():
                continue
            try:
                doc = json.loads(line)
            except json.JSONDecodeError as exc:
                raise _bad(path, lineno, f"not a JSON line ({exc.msg}, column {exc.colno})",
                           "pass VictoriaMetrics' /api/v1/export output as it is") from None
            if not (isinstance(doc, dict) and isinstance(doc.get("metric"), dict)
                    and isinstance(doc.get("values"), list) and isinstance(doc.get("timestamps"), list)):
                raise _bad(path, lineno, "not an export line ({\"metric\":{...},\"values\":[...],\"timestamps\":[...]})",
                           "pass VictoriaMetrics' /api/v1/export output as it is")
            labels = {str(a): str(b) for a, b in doc["metric"].items()}
            s = Series(labels, [], [], lineno)
            if len(doc["values"]) != len(doc["timestamps"]):
                raise _bad(path, lineno, f"{s.describe()}: {len(doc['values'])} values but "
                           f"{len(doc['timestamps'])} timestamps", "export it again")
            pairs = []
            for ts, v in zip(doc["timestamps"], doc["values"]):
                x = _number(v)
                if not isinstance(ts, (int, float)) or isinstance(ts, bool) or x is None or not math.isfinite(x):
                    raise _bad(path, lineno, f"{s.describe()}: sample ({ts!r}, {v!r}) is not (milliseconds, finite "
                               "number)", "export it again")
                pairs.append((ts / 1000.0, x))
            pairs.sort()
            s.times = [t for t, _ in pairs]
            s.values = [x for _, x in pairs]
            _check_times(path, s, ms=True)
            out.append(s)
    if not out:
        raise DbtierError(f"{path}: no series in this export", "check the export's match[] selector and range")
    return out
