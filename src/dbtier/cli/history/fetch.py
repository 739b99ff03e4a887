"""`dbtier history fetch --prometheus URL --start T --end T [--step D] [--match SELECTOR ...]`: a Prometheus'
disk and database counters over a time range (history/sources/promfetch.py), kept in the run's raw/ and imported
as `history import` does (the same document: `dbtier history import RUN/raw/*.json` reads them again).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import re
import time
import urllib.error
import urllib.request
import zoneinfo
from pathlib import Path

from dbtier.cli.history import imports as history_import
from dbtier.cli.history import render
from dbtier.cli import options as argtypes
from dbtier.cli.common import add_output_options, console, emit
from dbtier.core.errors import DbtierError
from dbtier.core.units import UnitError, parse_duration
from dbtier.core.workdir import workdir
from dbtier.history.sources import promfetch

_REL = re.compile(r"^now(?:\s*-\s*(\S+))?$")
_PROM_DUR = re.compile(r"(\d+)(ms|s|m|h|d|w|y)")
_PROM_UNIT = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}


def add_parser(hsub: argparse._SubParsersAction) -> None:
    fp = hsub.add_parser("fetch", help="read a Prometheus' disk counters over a time range and import them",
                         description="Query a Prometheus (or a compatible API: Thanos, Mimir, VictoriaMetrics) for "
                         "node_exporter's disk counters (and postgres_exporter's, mysqld_exporter's I/O counters) "
                         "over --start..--end, in chunks under its 11,000-points-per-series limit; keep the answers "
                         "in the run's raw/ and import them as `history import` does.")
    fp.add_argument("--prometheus", required=True, metavar="URL", help="Prometheus' base URL (http://prom:9090)")
    fp.add_argument("--start", required=True, metavar="TIME",
                    help="ISO 8601 (2026-11-01T00:00:00Z; without an offset: in --tz), unix seconds, or now-DURATION")
    fp.add_argument("--end", required=True, metavar="TIME", help="as --start (now, 2026-11-02T00:00:00Z, ...)")
    fp.add_argument("--step", type=argtypes.duration(lo=0.001, hi=86400), metavar="DURATION",
                    help="seconds between samples (15s, 1m; default: the longest scrape interval of Prometheus' "
                    "targets, else 60 s); not shorter than the scrape interval")
    fp.add_argument("--match", action="append", metavar="SELECTOR",
                    help="narrow the series: label matchers ('{instance=\"db01:9100\"}') added to dbtier's metrics, "
                    "or a whole selector with a metric name; repeat for several (their union)")
    fp.add_argument("--timeout", type=argtypes.duration(lo=0.1, hi=3600), default=promfetch.DEFAULT_TIMEOUT_S,
                    metavar="SECONDS", help="per request (30)")
    history_import.read_options(fp)
    history_import.memory_option(fp)
    add_output_options(fp)
    fp.set_defaults(func=run_fetch)


def parse_time(text: str, tz: str, now: float | None = None) -> float:
    """Unix seconds from ISO 8601, unix seconds, `now` or `now-1h`."""
    s = (text or "").strip()
    now = time.time() if now is None else now
    m = _REL.match(s)
    if m:
        if not m.group(1):
            return now
        try:
            return now - parse_duration(m.group(1))
        except UnitError:
            raise DbtierError(f"{text!r}: {m.group(1)!r} is not a duration", "e.g. now-6h, now-90m") from None
    if re.fullmatch(r"\d{9,11}(\.\d+)?", s):
        return float(s)
    try:
        d = _dt.datetime.fromisoformat(s.replace("Z", "+00:00"))
    except ValueError:
        raise DbtierError(f"{text!r} is not a time", "give ISO 8601 (2026-11-01T00:00:00Z), unix seconds or "
                          "now-6h") from None
    if d.tzinfo is None:
        d = d.replace(tzinfo=zoneinfo.ZoneInfo(tz))
    return d.timestamp()


def scrape_interval(base: str, timeout_s: float) -> float | None:
    """The longest scrape interval of the active targets (/api/v1/targets), or None when the API does not
    say (Thanos, VictoriaMetrics); an unreachable Prometheus fails here, with its URL."""
    url = base + "/api/v1/targets?state=active"
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as r:
            doc = json.loads(r.read())
    except urllib.error.HTTPError as exc:
        if exc.code >= 500:
            promfetch.get(url, timeout_s)        # the same message as a query's
        return None
    except (urllib.error.URLError, OSError):
        promfetch.get(url, timeout_s)
        return None
    except ValueError:
        return None
    best = None
    for t in ((doc.get("data") or {}).get("activeTargets") or []) if isinstance(doc, dict) else []:
        txt = str(t.get("scrapeInterval") or "")
        parts = _PROM_DUR.findall(txt)
        if parts and "".join(a + b for a, b in parts) == txt:
            secs = sum(int(a) * _PROM_UNIT[b] for a, b in parts)
            best = secs if best is None else max(best, secs)
    return best


def run_fetch(args: argparse.Namespace) -> int:
    doc, run_dir = fetch_into_run(args)
    emit(doc, args, lambda: render.import_run(console(args), doc, run_dir))
    return 0


def fetch_into_run(args: argparse.Namespace) -> tuple[dict, Path]:
    """Fetch the range from the Prometheus of `args` and import it into a run (`args.out`)."""
    base = promfetch.check_base(args.prometheus)
    now = time.time()
    start, end = parse_time(args.start, args.tz, now), parse_time(args.end, args.tz, now)
    scrape = scrape_interval(base, args.timeout)
    step = args.step if args.step is not None else (scrape or 60.0)
    if scrape and step < scrape - 1e-9:
        raise DbtierError(f"--step {step:g}s is shorter than the scrape interval ({scrape:g} s) of {base}'s targets: "
                          "steps would repeat samples and the rates would be wrong",
                          f"give --step {scrape:g}s or longer")
    chunks = promfetch.plan(start, end, step, args.match)
    bar, _ = history_import.progress_bar(args, len(chunks))
    with workdir(0, "the fetched answers", "dbtier-fetch-") as work, bar:
        task = bar.add_task("prometheus", total=len(chunks))
        files = promfetch.fetch(base, chunks, work, args.timeout,
                                lambda i, what: bar.update(task, completed=i, description=what))
        if promfetch.empty(files):
            raise DbtierError(f"{base}: no series between {_iso(start)} and {_iso(end)} for "
                              f"{'; '.join(dict.fromkeys(c.query for c in chunks))[:400]}",
                              "check the range (Prometheus keeps 15 days by default) and --match")
        params = {"files": [f"raw/{p.name}" for p in files],
                  "fetch": {"prometheus": base, "start": _iso(start), "end": _iso(end), "step_s": step,
                            "scrape_interval_s": scrape, "match": args.match, "queries": sorted({c.query for c in chunks}),
                            "requests": len(chunks), "points_per_series_max": promfetch.MAX_POINTS}}
        return history_import.import_into_run(args, "prometheus", [str(p) for p in files], params,
                                              inputs=[], raw_files=[Path(p) for p in files])


def _iso(t: float) -> str:
    return _dt.datetime.fromtimestamp(t, _dt.timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")
