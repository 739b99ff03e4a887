"""`dbtier history import|fetch|consolidate|requirement`: IOPS and MB/s from a database's own I/O history.

import reads one source's exports (AWR, DMA, SQL Server, PostgreSQL, diskstats, iostat, sar, Prometheus,
CloudWatch, Azure Monitor: cli/history/imports.py) into intervals and peaks; fetch reads a Prometheus' API
first (cli/history/fetch.py); consolidate puts several imports on one UTC time grid and compares the peak
of the sum with the sum of the peaks; requirement writes what `dbtier plan size --from-history`
reads. Full series go to Parquet files in the run directory; result.json has the summaries.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Sequence

from dbtier.cli.history import fetch as history_fetch

from dbtier.cli.history import imports as history_import
from dbtier.cli.history import render
from dbtier.cli import options as argtypes
from dbtier.cli.common import Run, usage, add_output_options, console, emit
from dbtier.cli.markup import esc
from dbtier.cli.history.imports import MAX_TOP, memory_option, progress_bar
from dbtier.core.errors import DbtierError
from dbtier.core.units import UnitError, parse_duration
from dbtier.history import SOURCES
from dbtier.history import store
from dbtier.history.calls import ConsolidateRequest, RequirementRequest, consolidate, requirement


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("history", help="IOPS and MB/s requirements from databases' own I/O history",
                       description="Read a database's I/O history (Oracle AWR, Google DMA, SQL Server, PostgreSQL, "
                       "diskstats, iostat, sar, Prometheus, CloudWatch, Azure Monitor), find its peaks, consolidate several on a common time grid, and "
                       "write the requirement `dbtier plan size --from-history` reads.")
    hsub = p.add_subparsers(dest="history_command", metavar="ACTION")

    ip = hsub.add_parser("import", help="read exported history into intervals, peaks and profiles",
                         description="Read one source's exported files (the collectors in collectors/ make them; "
                         "Prometheus, CloudWatch and Azure Monitor answers as saved) into per-interval read/write "
                         "IOPS, MB/s, I/O size and latency; peaks (p50, p95, p99, max, top intervals), hour-of-day "
                         "and day-of-week profiles, and the provenance (counters, deltas or the source's averages). "
                         "Full series go to Parquet.")
    ip.add_argument("--source", "-s", choices=list(SOURCES),
                    help="what the files are (default: told from their first bytes)")
    ip.add_argument("files", nargs="+", metavar="FILE", help="exported files (a DMA collection: its .zip or .tgz)")
    history_import.read_options(ip)
    history_import.timing_options(ip)
    ip.add_argument("--into", metavar="RUN_DIR",
                    help="add these files to an earlier import run: a new run holding its databases (their series "
                    "linked, not read again) and these; a database the new files add to is read again from its "
                    "earlier files and the new ones together")
    ip.add_argument("--skip-bad-files", action="store_true",
                    help="import the files that read and list the ones that do not (with their error) in "
                    "skipped_files, instead of stopping at the first")
    memory_option(ip)
    add_output_options(ip)
    ip.set_defaults(func=history_import.run_import)

    history_fetch.add_parser(hsub)

    cp = hsub.add_parser("consolidate", help="several databases on one time grid: peak of the sum vs sum of peaks",
                         description="Put the databases of one or more import runs on a common UTC time grid, add "
                         "them up, and report the peak of the sum beside the sum of the peaks (their ratio is the "
                         "consolidation gain) and which databases drive the combined peak. DMA imports (hour-of-day "
                         "statistics) are added per hour of day instead, the result saying why those figures are "
                         "bounds or estimates.")
    cp.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories of `dbtier history import`")
    cp.add_argument("--step", metavar="DURATION", help="grid cell (3600, 15m, 1h; default: the longest median "
                    "snapshot interval of the databases, to the minute)")
    cp.add_argument("--top", type=argtypes.positive_int(MAX_TOP), default=10, metavar="N",
                    help="drivers of the combined peak to list (10)")
    cp.add_argument("--percentile", choices=["95", "99", "max"], default="max",
                    help="each database's own peak for sum_of_peaks: p95, p99 or max of its intervals (max)")
    cp.add_argument("--full-grid", action="store_true",
                    help="write every database's cells to grid.parquet (default: the drivers' only)")
    memory_option(cp)
    add_output_options(cp)
    cp.set_defaults(func=run_consolidate)

    rp = hsub.add_parser("requirement", help="the requirement `dbtier plan size --from-history` reads",
                         description="Take read/write IOPS and MB/s at a percentile of an import run or a "
                         "consolidation run, with the headroom the planner adds on top, and the capacity. An import "
                         "of several databases, or of a clustered database's instances, is their sum (consolidated "
                         "as `history consolidate` does).")
    rp.add_argument("run", metavar="RUN_DIR", help="a `dbtier history import` or `consolidate` run directory")
    rp.add_argument("--percentile", choices=["95", "99", "max"], default="95",
                    help="which peak of the interval rates (default 95)")
    rp.add_argument("--headroom", type=argtypes.nonneg_float(argtypes.MAX_HEADROOM), default=0.3, metavar="FRACTION",
                    help="margin the planner adds on top of every figure (default 0.3 = 30%%)")
    rp.add_argument("--capacity-gb", type=argtypes.nonneg_float(argtypes.MAX_FIGURE), metavar="GB",
                    help="capacity to require (default: the allocated size the source reports, else none)")
    rp.add_argument("--database", metavar="NAME", help="one database of an import run of several (NAME of a "
                    "clustered database: all its NAME/N instances, summed)")
    add_output_options(rp)
    rp.set_defaults(func=run_requirement)

    p.set_defaults(func=usage(p))



def _step_seconds(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        secs = parse_duration(text)     # ASCII digits only; NaN, inf and '١' refused
    except UnitError as exc:
        why = str(exc).removeprefix(repr(text)).lstrip(": ").removeprefix("is ")
        raise DbtierError(f"--step {text}: {why}", "e.g. --step 3600, --step 15m or --step 1h") from None
    if not (1 <= secs <= 7 * 86400):
        raise DbtierError(f"--step {text}: must be between 1 s and 7 days", "e.g. --step 1h")
    return int(round(secs))


def run_consolidate(args: argparse.Namespace) -> int:
    req = ConsolidateRequest(runs=tuple(args.runs), step_s=_step_seconds(args.step), top=args.top,
                             percentile=args.percentile, full_grid=args.full_grid)
    runs: list[Run] = []

    def start(inputs: Sequence[str]) -> Path:
        runs.append(Run("history.consolidate", args, {"action": "consolidate", "runs": list(args.runs),
                                                      "step": args.step, "top": args.top,
                                                      "percentile": args.percentile}, inputs=list(inputs)))
        return runs[0].dir.path

    bar, _ = progress_bar(args, 2)
    with store.memory_cap(args.memory), bar:
        task = bar.add_task("consolidating", total=2)
        res = consolidate(req, start, lambda what: bar.update(task, completed=0 if what == "consolidating" else 1,
                                                              description=what))
    run = runs[0]
    run.doc.update(res.to_json())
    run.finish()
    emit(run.doc, args, lambda: render.consolidation(console(args), run.doc, run.dir.path))
    return 0


def run_requirement(args: argparse.Namespace) -> int:
    req = RequirementRequest(run=args.run, percentile=args.percentile, headroom=args.headroom,
                             capacity_gb=args.capacity_gb, database=args.database)
    runs: list[Run] = []

    def start(inputs: Sequence[str]) -> Path:
        runs.append(Run("history.requirement", args, {"action": "requirement", "run": args.run,
                                                      "percentile": args.percentile, "headroom": args.headroom,
                                                      "capacity_gb": args.capacity_gb, "database": args.database},
                        inputs=list(inputs)))
        return runs[0].dir.path

    res = requirement(req, start)
    run = runs[0]
    run.doc.update(res.to_json())
    run.finish()

    def show() -> None:
        render.requirement(console(args), run.doc["requirement"], run.doc["from"], run.doc["with_headroom"],
                           args.run, run.dir.path, run.doc.get("by_file_type"))
        for n in run.doc["notes"]:
            console(args).print(f"[yellow]note:[/yellow] {esc(n)}", highlight=False)

    emit(run.doc, args, show)
    return 0
