"""`dbtier history import|consolidate|requirement`: IOPS and MB/s from a database's own I/O history.

import reads one source's exports (AWR, DMA, SQL Server, PostgreSQL, diskstats, iostat, sar) into
intervals and peaks; consolidate puts several imports on one UTC time grid and compares the peak
of the sum with the sum of the peaks; requirement writes what `dbtier plan size --from-history`
reads. Full series go to Parquet files in the run directory; result.json has the summaries.
"""

from __future__ import annotations

import argparse
import os

import duckdb
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from dbtier.cli import history_render as render
from dbtier.cli import options as argtypes
from dbtier.cli.markup import esc
from dbtier.cli.common import Run, usage, add_output_options, console, emit
from dbtier.core.errors import DbtierError
from dbtier.core.units import UnitError, parse_duration
from dbtier.history import SOURCES
from dbtier.history import fleet, store, summary
from dbtier.history.tables import ReadOptions
from dbtier.history.times import check_tz
from dbtier.results.store import load_run


# --top: DuckDB's arg_max(x, by, n) takes n below 10^6; 10^4 busiest intervals is more than a table shows.
MAX_TOP = 10_000


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("history", help="IOPS and MB/s requirements from databases' own I/O history",
                       description="Read a database's I/O history (Oracle AWR, Google DMA, SQL Server, PostgreSQL, "
                       "diskstats, iostat, sar), find its peaks, consolidate several on a common time grid, and "
                       "write the requirement `dbtier plan size --from-history` reads.")
    hsub = p.add_subparsers(dest="history_command", metavar="ACTION")

    ip = hsub.add_parser("import", help="read exported history into intervals, peaks and profiles",
                         description="Read one source's exported files (the collectors in collectors/ make them) "
                         "into per-interval read/write IOPS, MB/s, I/O size and latency; peaks (p50, p95, p99, max, "
                         "top intervals), hour-of-day and day-of-week profiles. Full series go to Parquet.")
    ip.add_argument("--source", "-s", required=True, choices=list(SOURCES), help="what the files are")
    ip.add_argument("files", nargs="+", metavar="FILE", help="exported files (a DMA collection: its .zip or .tgz)")
    ip.add_argument("--tz", type=argtypes.zone(), default="UTC", metavar="ZONE",
                    help="time zone of times printed without an offset (AWR without SNAP_TIMEZONE, iostat, sar, "
                    "DMA); IANA name, default UTC")
    ip.add_argument("--profile-tz", type=argtypes.zone(), metavar="ZONE",
                    help="time zone of the hour-of-day profiles (default: --tz)")
    ip.add_argument("--database", metavar="NAME", help="name the database (sources that carry no name: diskstats, "
                    "iostat, sar, or PostgreSQL without a cluster column; elsewhere it replaces the name)")
    ip.add_argument("--devices", metavar="LIST", help="diskstats/iostat/sar: comma-separated devices whose I/O is the "
                    "database's (default: every whole disk, no partitions, loop, ram, zram or device-mapper)")
    ip.add_argument("--top", type=argtypes.positive_int(MAX_TOP), default=10, metavar="N",
                    help="busiest intervals kept per database (10)")
    ip.add_argument("--into", metavar="RUN_DIR",
                    help="add these files to an earlier import run: a new run holding its databases (their series "
                    "linked, not read again) and these; a database the new files add to is read again from its "
                    "earlier files and the new ones together")
    ip.add_argument("--skip-bad-files", action="store_true",
                    help="import the files that read and list the ones that do not (with their error) in "
                    "skipped_files, instead of stopping at the first")
    _memory_option(ip)
    add_output_options(ip)
    ip.set_defaults(func=run_import)

    cp = hsub.add_parser("consolidate", help="several databases on one time grid: peak of the sum vs sum of peaks",
                         description="Put the databases of one or more import runs on a common UTC time grid, add "
                         "them up, and report the peak of the sum beside the sum of the peaks (their ratio is the "
                         "consolidation gain) and which databases drive the combined peak.")
    cp.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories of `dbtier history import`")
    cp.add_argument("--step", metavar="DURATION", help="grid cell (3600, 15m, 1h; default: the longest median "
                    "snapshot interval of the databases, to the minute)")
    cp.add_argument("--top", type=argtypes.positive_int(MAX_TOP), default=10, metavar="N",
                    help="drivers of the combined peak to list (10)")
    cp.add_argument("--percentile", choices=["95", "99", "max"], default="max",
                    help="each database's own peak for sum_of_peaks: p95, p99 or max of its intervals (max)")
    cp.add_argument("--full-grid", action="store_true",
                    help="write every database's cells to grid.parquet (default: the drivers' only)")
    _memory_option(cp)
    add_output_options(cp)
    cp.set_defaults(func=run_consolidate)

    rp = hsub.add_parser("requirement", help="the requirement `dbtier plan size --from-history` reads",
                         description="Take read/write IOPS and MB/s at a percentile of an import run (one database) "
                         "or a consolidation run, with the headroom the planner adds on top, and the capacity.")
    rp.add_argument("run", metavar="RUN_DIR", help="a `dbtier history import` or `consolidate` run directory")
    rp.add_argument("--percentile", choices=["95", "99", "max"], default="95",
                    help="which peak of the interval rates (default 95)")
    rp.add_argument("--headroom", type=argtypes.nonneg_float(argtypes.MAX_HEADROOM), default=0.3, metavar="FRACTION",
                    help="margin the planner adds on top of every figure (default 0.3 = 30%%)")
    rp.add_argument("--capacity-gb", type=argtypes.nonneg_float(argtypes.MAX_FIGURE), metavar="GB",
                    help="capacity to require (default: the allocated size the source reports, else none)")
    rp.add_argument("--database", metavar="NAME", help="the database, when the import run has several")
    add_output_options(rp)
    rp.set_defaults(func=run_requirement)

    p.set_defaults(func=usage(p))



def _memory_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--memory", type=argtypes.whole(256, 1 << 30, name="whole number of MB, at least 256"),
                   metavar="MB", help="memory the whole command may use (default: a quarter of RAM, between 768 "
                   "MB and 3 GiB; or DBTIER_MEMORY_MB): larger inputs take more batches and spill to "
                   "DBTIER_TMPDIR (else TMPDIR), never more memory")


def _apply_memory(args: argparse.Namespace) -> None:
    if getattr(args, "memory", None):
        os.environ["DBTIER_MEMORY_MB"] = str(args.memory)   # store.memory_cap_mb() reads it


def _progress(args: argparse.Namespace, total: int):
    con = console(args)
    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), TimeElapsedColumn(), console=con,
                    transient=True, disable=args.json or not con.is_terminal), total


def run_import(args: argparse.Namespace) -> int:
    tz = check_tz(args.tz)
    ptz = check_tz(args.profile_tz or tz)
    if args.top < 1:
        raise DbtierError(f"--top {args.top}: must be at least 1", "e.g. --top 10")
    opts = ReadOptions(tz=tz, database=args.database, devices=args.devices)
    _apply_memory(args)
    into = _earlier_import(args.into, args.source, ptz) if args.into else None
    sizes = _sizes(args.files)
    bar, _ = _progress(args, len(args.files))
    with store.workdir(sum(sizes)) as work, bar:
        task = bar.add_task(esc(f"{args.source}: reading {len(args.files):,} file(s)"), total=len(args.files))

        def progress(done: int, what: str) -> None:
            bar.update(task, completed=done, description=esc(what))

        # read before the run directory is made: bad input leaves nothing
        imp = fleet.import_files(work, args.source, list(args.files), sizes, opts, args.top, ptz,
                                 skip_bad=args.skip_bad_files, progress=progress, into=into)
        params = {"action": "import", "source": args.source, "files": list(args.files), "tz": tz, "profile_tz": ptz,
                  "database": args.database, "devices": args.devices, "top": args.top,
                  "skip_bad_files": args.skip_bad_files, "memory_mb": store.memory_cap_mb(), "into": args.into}
        run = Run("history", args, params, inputs=list(args.files) + ([args.into] if args.into else []))
        run.doc.update(imp.doc)
        if into is not None:
            run.doc["appended_to"] = into["_run_dir"]
        run.doc["batches"] = imp.batches
        if args.skip_bad_files:
            run.doc["skipped_files"] = imp.skipped
        run.save()
        progress(len(args.files), f"{args.source}: writing the series")
        run.doc["series_files"] = fleet.move_parts(imp.parts, run.dir.path)
        note = store.copy_inputs(args.files, run.dir.raw_path)
        if note:
            run.doc["raw_note"] = note
        run.finish()

    emit(run.doc, args, lambda: render.import_run(console(args), run.doc, run.dir.path))
    return 0


def _earlier_import(run_dir: str, source: str, profile_tz: str) -> dict:
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


def _sizes(paths: list[str]) -> list[int]:
    """Each input's size (what a batch holds); an unreadable one counts 0 (its reader names it)."""
    out = []
    for p in paths:
        try:
            out.append(os.stat(p).st_size)
        except OSError:
            out.append(0)
    return out


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
    step = _step_seconds(args.step)
    _apply_memory(args)
    if args.top < 1:
        raise DbtierError(f"--top {args.top}: must be at least 1", "e.g. --top 10")
    docs = [load_run(r) for r in args.runs]
    bar, _ = _progress(args, 2)
    # the grid goes to Parquet files in the work directory, a batch of databases at a time: about the totals' size
    grid_bytes = sum(_sizes([str(p) for d in docs for p in store.series_files(d["_run_dir"], store.TOTALS_FILE)]))
    with store.workdir(grid_bytes) as work, store.open_db(work) as con, bar:
        task = bar.add_task("consolidating", total=2)
        try:
            part = summary.summarise_consolidation(con, docs, step, args.top, args.percentile, work=work,
                                                   full_grid=args.full_grid)
        except duckdb.Error as exc:   # a Parquet file damaged past its footer: name the runs' series
            why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise DbtierError(f"cannot read the series of {', '.join(d['_run_dir'] for d in docs)}: {why[:300]}",
                              "re-run `dbtier history import` for the run whose totals.parquet is damaged") from None
        bar.update(task, advance=1, description="writing Parquet")
        run = Run("history", args, {"action": "consolidate", "runs": list(args.runs), "step": args.step,
                                    "top": args.top, "percentile": args.percentile},
                  inputs=[d["_run_dir"] for d in docs])
        run.doc.update(part)
        run.save()
        drivers = None if args.full_grid else [d["database"] for d in run.doc["drivers"]]
        run.doc["grid_databases"] = "all" if drivers is None else drivers
        run.doc["series_files"] = store.write_consolidation_files(con, run.dir.path, drivers)
        run.finish()

    emit(run.doc, args, lambda: render.consolidation(console(args), run.doc, run.dir.path))
    return 0


def run_requirement(args: argparse.Namespace) -> int:
    if args.capacity_gb is not None and not (args.capacity_gb >= 0):
        raise DbtierError(f"--capacity-gb {args.capacity_gb}: must be 0 or more", "e.g. --capacity-gb 500")
    doc = load_run(args.run)
    req, source = summary.requirement(doc, args.percentile, args.headroom, args.capacity_gb, args.database)
    run = Run("history", args, {"action": "requirement", "run": args.run, "percentile": args.percentile,
                                "headroom": args.headroom, "capacity_gb": args.capacity_gb,
                                "database": args.database}, inputs=[doc["_run_dir"]])
    run.doc["requirement"] = dict(req)
    run.doc.update(req)
    run.doc["from"] = source
    run.doc["with_headroom"] = summary.with_headroom(req)
    run.doc["absent"] = source["absent"]   # what the source did not measure: missing, not 0
    run.finish()

    emit(run.doc, args, lambda: render.requirement(console(args), req, source, run.doc["with_headroom"], args.run,
                                                   run.dir.path))
    return 0
