"""`dbtier history fetch --prometheus URL`: a Prometheus' counters over a time range, read through its
HTTP API into files that `history import` reads (and the run keeps in raw/, so it can be imported again
offline).

build (pure): the queries and the chunks of the range. Prometheus refuses a range query of more than
11,000 points a series (`exceeded maximum resolution of 11,000 points per timeseries`), so the range is
split into chunks of at most 11,000 steps' samples, each starting one step after the previous ended (no
sample twice). execute: one GET /api/v1/query_range per query and chunk, by the standard library
(urllib) with a timeout. Every failure is one message naming the URL: refused or unreachable, HTTP 4xx
or 5xx (with Prometheus' own error text), `status: error`, an answer that is not JSON.

The queries: one PromQL selector of the metrics dbtier reads (node_exporter's disk counters and boot
time, postgres_exporter's and mysqld_exporter's I/O counters, prometheus.METRICS), narrowed by each
`--match` selector's label matchers (`{instance="db01:9100"}`); a `--match` that names a metric
(`node_disk_reads_completed_total{device="nvme0n1"}`) is queried as it is. Several `--match` are
several queries (their union), as Prometheus' own match[].
"""

from __future__ import annotations

import json
import re
import socket
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from dbtier.core.errors import DbtierError

MAX_POINTS = 11_000          # Prometheus' limit per series in one range query (web/api/v1/api.go)
DEFAULT_TIMEOUT_S = 30.0
_NAMES = ("node_disk_(reads_completed|writes_completed|read_bytes|written_bytes|read_time_seconds|"
          "write_time_seconds|io_time_seconds)_total|node_boot_time_seconds|"
          "pg_stat_database_(blks_read|blk_read_time|temp_bytes)(_total)?|"
          "pg_stat_bgwriter_buffers_(clean|backend|checkpoint)(_total)?|pg_stat_checkpointer_buffers_written(_total)?|"
          "mysql_global_status_innodb_(data_(reads|read|writes|written|fsyncs)|os_log_written)")
DEFAULT_SELECTOR = '{__name__=~"' + _NAMES + '"}'
_SELECTOR = re.compile(r"^\s*([A-Za-z_:][A-Za-z0-9_:]*)?\s*(?:\{(.*)\})?\s*$", re.S)


@dataclass(frozen=True)
class Chunk:
    query: str
    start: float
    end: float
    step: float
    name: str                # the file it is saved as


def queries(match: Sequence[str] | None) -> list[str]:
    """The PromQL of each query (see the module docstring)."""
    if not match:
        return [DEFAULT_SELECTOR]
    out = []
    for m in match:
        g = _SELECTOR.match(m or "")
        if not g or not (g.group(1) or (g.group(2) or "").strip()):
            raise DbtierError(f"--match {m!r}: not a series selector", "e.g. --match '{instance=\"db01:9100\"}' or "
                              "--match 'node_disk_reads_completed_total{device=\"nvme0n1\"}'")
        if g.group(1):
            out.append(m.strip())
        else:
            out.append('{__name__=~"' + _NAMES + '", ' + g.group(2).strip() + "}")
    return out


def plan(start: float, end: float, step: float, match: Sequence[str] | None = None,
         max_points: int = MAX_POINTS) -> list[Chunk]:
    """The queries x chunks of [start, end], each at most `max_points` samples a series. Pure."""
    if not (step > 0):
        raise DbtierError(f"--step {step:g}: must be more than 0 s", "e.g. --step 15s")
    if not (end > start):
        raise DbtierError("--end is not after --start", "give --start before --end")
    span = (max_points - 1) * step
    out = []
    for qi, q in enumerate(queries(match)):
        s, k = start, 0
        while s <= end:
            e = min(end, s + span)
            out.append(Chunk(q, s, e, step, f"prometheus-q{qi + 1}-{k + 1:05d}.json"))
            k += 1
            s = e + step
    return out


def url_of(base: str, c: Chunk) -> str:
    return (base.rstrip("/") + "/api/v1/query_range?" +
            urllib.parse.urlencode({"query": c.query, "start": f"{c.start:.3f}", "end": f"{c.end:.3f}",
                                    "step": f"{c.step:g}"}))


def check_base(url: str) -> str:
    p = urllib.parse.urlparse(url)
    if p.scheme not in ("http", "https") or not p.netloc:
        raise DbtierError(f"--prometheus {url}: not an http:// or https:// address", "e.g. --prometheus http://prom:9090")
    return url.rstrip("/")


def get(url: str, timeout_s: float = DEFAULT_TIMEOUT_S) -> bytes:
    """The body of a successful query_range answer; a DbtierError naming the URL otherwise."""
    shown = _short(url)
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers={"Accept": "application/json"}),
                                    timeout=timeout_s) as r:
            body = r.read()
    except urllib.error.HTTPError as exc:
        text = _error_text(exc.read() if exc.fp else b"")
        raise DbtierError(f"{shown}: HTTP {exc.code} {exc.reason}" + (f": {text}" if text else ""),
                          "check the query, range and step (a 400 says what Prometheus refused), or the address "
                          "(a 404: is it Prometheus' base URL?)") from None
    except urllib.error.URLError as exc:
        why = exc.reason.strerror if isinstance(exc.reason, OSError) and exc.reason.strerror else str(exc.reason)
        raise DbtierError(f"{shown}: no answer ({why})", "check the address and that Prometheus is running") from None
    except (socket.timeout, TimeoutError):
        raise DbtierError(f"{shown}: no answer within {timeout_s:g} s", "give a longer --timeout, or a shorter "
                          "range or fewer series (--match)") from None
    except OSError as exc:
        raise DbtierError(f"{shown}: the connection failed ({exc.strerror or exc})",
                          "check the address and that Prometheus is running") from None
    try:
        doc = json.loads(body)
    except ValueError:
        raise DbtierError(f"{shown}: the answer is not JSON ({body[:60]!r})",
                          "give Prometheus' base URL (the one its web UI is on)") from None
    if not isinstance(doc, dict) or doc.get("status") != "success":
        err = doc.get("error") if isinstance(doc, dict) else None
        raise DbtierError(f"{shown}: the answer's status is {doc.get('status') if isinstance(doc, dict) else '?'!r}"
                          + (f" ({err})" if err else ""), "check the query, range and step")
    return body


def _error_text(body: bytes) -> str:
    try:
        doc = json.loads(body)
        if isinstance(doc, dict) and doc.get("error"):
            return f"{doc.get('errorType') or 'error'}: {doc['error']}"[:300]
    except ValueError:
        pass
    return body.decode("utf-8", "replace").strip()[:200]


def _short(url: str) -> str:
    """The URL as shown in messages: whole, but a long query cut."""
    return url if len(url) <= 300 else url[:300] + "..."


def fetch(base: str, chunks: Sequence[Chunk], into: Path, timeout_s: float = DEFAULT_TIMEOUT_S,
          progress: Callable[[int, str], None] | None = None) -> list[Path]:
    """Each chunk's answer saved as it came (into/NAME); returns the files, in order."""
    out = []
    for i, c in enumerate(chunks):
        if progress:
            progress(i, f"prometheus: query {i + 1} of {len(chunks)}")
        body = get(url_of(base, c), timeout_s)
        path = into / c.name
        path.write_bytes(body)
        out.append(path)
    return out


def empty(paths: Sequence[Path]) -> bool:
    """No series in any answer."""
    for p in paths:
        try:
            if json.loads(p.read_bytes()).get("data", {}).get("result"):
                return False
        except (ValueError, AttributeError):
            return False
    return True
