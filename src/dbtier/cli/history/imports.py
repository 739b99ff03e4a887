"""`dbtier history import`: one source's exported files into a run (also what `history fetch` ends with).

The source is `--source`, or sniffed from each file's first bytes (every file must be of one source).
"""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path
from typing import Any, Sequence

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from dbtier.cli.history import render
from dbtier.cli import options as argtypes
from dbtier.cli.common import Run, console, emit
from dbtier.cli.markup import esc
from dbtier.core.errors import DbtierError
from dbtier.history import SOURCES, fleet, store
from dbtier.history.sources import detect
from dbtier.history.tables import ReadOptions
from dbtier.history.sources.times import check_tz
from dbtier.results.store import load_run

# --top: DuckDB's arg_max(x, by, n) takes n below 10^6; 10^4 busiest intervals is more than a table shows.
MAX_TOP = 10_000


def memory_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--memory", type=argtypes.whole(256, 1 << 30, name="whole number of MB, at least 256"),
                   metavar="MB", help="memory the whole command may use (default: a quarter of RAM, between 768 "
                   "MB and 3 GiB; or DBTIER_MEMORY_MB): larger inputs take more batches and spill to "
                   "DBTIER_TMPDIR (else TMPDIR), never more memory")


def progress_bar(args: argparse.Namespace, total: int):
    con = console(args)
    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), TimeElapsedColumn(), console=con,
                    transient=True, disable=args.json or not con.is_terminal), total


def read_options(p: argparse.ArgumentParser) -> None:
    """The options every import has (import and fetch)."""
    p.add_argument("--tz", type=argtypes.zone(), default="UTC", metavar="ZONE",
                   help="time zone of times printed without an offset (AWR without SNAP_TIMEZONE, iostat, sar, "
                   "DMA); IANA name, default UTC")
    p.add_argument("--profile-tz", type=argtypes.zone(), metavar="ZONE",
                   help="time zone of the hour-of-day profiles (default: --tz)")
    p.add_argument("--database", metavar="NAME", help="name the database (sources that carry no name: diskstats, "
                   "iostat, sar, CloudWatch, or PostgreSQL without a cluster column; Prometheus: else its instance "
                   "label; elsewhere it replaces the name)")
    p.add_argument("--devices", metavar="LIST", help="diskstats/iostat/sar/Prometheus node_exporter: comma-separated "
                   "devices whose I/O is the database's (default: every whole disk, no partitions, loop, ram, zram "
                   "or device-mapper)")
    p.add_argument("--top", type=argtypes.positive_int(MAX_TOP), default=10, metavar="N",
                   help="busiest intervals kept per database (10)")


def timing_options(p: argparse.ArgumentParser, start: bool = True) -> None:
    """For snapshots that carry no time of their own (psql output without \\watch headers or now(), iostat
    without -t): how far apart they were taken, and when the first was."""
    p.add_argument("--interval", type=argtypes.duration(0, 7 * 86400), metavar="DURATION",
                   help="seconds between snapshots that carry no time (psql without \\watch or now(), iostat "
                   "without -t): 60, 1m; CloudWatch: the --period the answers were fetched with (needed when a "
                   "metric has one point)")
    if start:       # advise has its own --start (the history's first time), which the readers take as well
        p.add_argument("--start", metavar="TIME",
                       help="with --interval: the first snapshot's time, ISO 8601 (2026-11-02T09:00; without an "
                       "offset, in --tz); iostat's header date is used when it is not given")


def sniff_source(files: Sequence[str]) -> str:
    """The one source every file looks like (detect.guess), or a clear error naming the file."""
    seen: dict[str, str] = {}
    for f in files:
        g = detect.guess(f)
        if g is None:
            if not os.path.exists(f):
                raise DbtierError(f"{f}: no such file", "check the path")
            raise DbtierError(f"{f}: cannot tell which source this file is from its first lines",
                              f"give --source (one of {', '.join(SOURCES)})")
        seen.setdefault(g, f)
    if len(seen) > 1:
        (a, fa), (b, fb) = list(seen.items())[:2]
        raise DbtierError(f"{fa} looks like {detect.NAMES[a]} and {fb} like {detect.NAMES[b]}: one import reads "
                          "one source", "import each source's files separately")
    return next(iter(seen))


def run_import(args: argparse.Namespace) -> int:
    source = args.source or sniff_source(list(args.files))
    doc, run_dir = import_into_run(args, source, list(args.files), {"files": list(args.files)},
                                   inputs=list(args.files))
    emit(doc, args, lambda: render.import_run(console(args), doc, run_dir))
    return 0


def import_into_run(args: argparse.Namespace, source: str, files: list[str], params: dict[str, Any],
                    inputs: Sequence[str], raw_files: Sequence[Path] = ()) -> tuple[dict[str, Any], Path]:
    """Read `files` (all of it before the run directory is made: bad input leaves nothing), then the run:
    its document, its series and raw/ (`raw_files` moved there whole, else copies of small inputs), in the
    memory --memory gives."""
    with store.memory_cap(getattr(args, "memory", None)):
        return _import_into_run(args, source, files, params, inputs, raw_files)


def _import_into_run(args: argparse.Namespace, source: str, files: list[str], params: dict[str, Any],
                     inputs: Sequence[str], raw_files: Sequence[Path]) -> tuple[dict[str, Any], Path]:
    tz = check_tz(args.tz)
    ptz = check_tz(args.profile_tz or tz)
    opts = ReadOptions(tz=tz, database=args.database, devices=args.devices,
                       interval_s=getattr(args, "interval", None), start=getattr(args, "start", None))
    into = earlier_import(args.into, source, ptz) if getattr(args, "into", None) else None
    skip_bad = bool(getattr(args, "skip_bad_files", False))
    sizes = store.input_sizes(files)
    bar, _ = progress_bar(args, len(files))
    with store.workdir(sum(sizes)) as work, bar:
        task = bar.add_task(esc(f"{source}: reading {len(files):,} file(s)"), total=len(files))

        def progress(done: int, what: str) -> None:
            bar.update(task, completed=done, description=esc(what))

        imp = fleet.import_files(work, source, files, sizes, opts, args.top, ptz, skip_bad=skip_bad,
                                 progress=progress, into=into)
        params = {"action": "import", "source": source, **params, "tz": tz, "profile_tz": ptz,
                  "database": args.database, "devices": args.devices, "top": args.top, "skip_bad_files": skip_bad,
                  "memory_mb": store.memory_cap_mb(), "into": getattr(args, "into", None)}
        run = Run("history.import", args, params, inputs=list(inputs) + ([args.into] if into is not None else []))
        run.doc.update(imp.to_json())
        if into is not None:
            run.doc["appended_to"] = into["_run_dir"]
        run.doc["batches"] = imp.batches
        if skip_bad:
            run.doc["skipped_files"] = [dict(x) for x in imp.skipped]
        run.save()
        progress(len(files), f"{source}: writing the series")
        run.doc["series_files"] = fleet.move_parts(imp.parts, run.dir.path)
        if raw_files:
            moved = {}
            for f in raw_files:                 # what was fetched: kept whole, to import again offline
                moved[str(f)] = str(run.dir.raw_path(f.name))
                shutil.move(str(f), moved[str(f)])
            run.doc["files"] = [moved.get(f, f) for f in run.doc.get("files") or []]
            for held in (run.doc.get("database_files") or {}).values():
                held["files"] = [moved.get(f, f) for f in held.get("files") or []]
        else:
            note = store.copy_inputs(files, run.dir.raw_path)
            if note:
                run.doc["raw_note"] = note
        run.finish()
    return run.doc, run.dir.path


def earlier_import(run_dir: str, source: str, profile_tz: str) -> dict:
    doc = load_run(run_dir)
    params = doc.get("params") or {}
    if doc.get("command") != "history" or params.get("action") != "import":
        raise DbtierError(f"--into {run_dir}: not a `dbtier history import` run", "give an import run directory")
    if doc.get("source") != source or doc.get("kind") == "hourly":
        raise DbtierError(f"--into {run_dir}: a {doc.get('source')} import; these files are read as {source}"
                          + (" (a dma import has no time series to add to)" if doc.get("kind") == "hourly" else ""),
                          "add files of the same source (and not to a dma import)")
    if (doc.get("profile_tz") or "UTC") != profile_tz:
        raise DbtierError(f"--into {run_dir}: its profiles are in {doc.get('profile_tz')}, these would be in "
                          f"{profile_tz}", f"give --profile-tz {doc.get('profile_tz')}")
    return doc
