"""`dbtier history import|consolidate|requirement`: IOPS and MB/s from a database's own I/O history.

import reads one source's exports (AWR, DMA, SQL Server, PostgreSQL, diskstats, iostat, sar) into
intervals and peaks; consolidate puts several imports on one UTC time grid and compares the peak
of the sum with the sum of the peaks; requirement writes what `dbtier plan size --from-history`
reads. Full series go to Parquet files in the run directory; result.json has the summaries.
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any

import duckdb
from rich import box
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from dbtier.cli import options as argtypes
from dbtier.cli.markup import esc, lit
from dbtier.cli.common import Run, usage, add_output_options, console, emit
from dbtier.core.errors import DbtierError
from dbtier.core.files import is_regular
from dbtier.core.units import UnitError, parse_duration
from dbtier.history import SOURCES
from dbtier.history import read as read_history
from dbtier.history import store, summary
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



def _progress(args: argparse.Namespace, total: int):
    con = console(args)
    return Progress(TextColumn("[bold]{task.description}"), BarColumn(), TimeElapsedColumn(), console=con,
                    transient=True, disable=args.json or not con.is_terminal), total


def _copy_raw(run: Run, files: list[str]) -> None:
    """Small inputs are kept beside the document (raw/); large ones are named, not copied. Only
    regular files (a DMA collection directory is named in params.files, not copied); two inputs
    of the same name from different directories are both kept (the second as NAME.2, ...)."""
    sizes = {}
    for f in files:
        if not is_regular(f):
            continue
        try:
            sizes[f] = Path(f).stat().st_size
        except OSError:
            continue
    if sum(sizes.values()) > 50_000_000:
        run.doc["raw_note"] = "inputs over 50 MB in all are not copied into raw/; params.files names them"
        return
    used: set[str] = set()
    for f in sizes:
        name, k = Path(f).name, 1
        while name in used:
            k += 1
            name = f"{Path(f).name}.{k}"
        used.add(name)
        shutil.copyfile(f, run.dir.raw_path(name))


def run_import(args: argparse.Namespace) -> int:
    tz = check_tz(args.tz)
    ptz = check_tz(args.profile_tz or tz)
    if args.top < 1:
        raise DbtierError(f"--top {args.top}: must be at least 1", "e.g. --top 10")
    opts = ReadOptions(tz=tz, database=args.database, devices=args.devices)
    con = store.connect()
    steps = ["read files", "intervals from counters", "totals, peaks and profiles", "write Parquet"]
    bar, _ = _progress(args, len(steps))
    with bar:
        task = bar.add_task(esc(f"{args.source}: reading {len(args.files)} file(s)"), total=len(steps))

        def step(name: str) -> None:
            bar.update(task, description=esc(f"{args.source}: {name}"), advance=1)

        res = read_history(con, args.source, args.files, opts)   # before the run directory: bad input leaves nothing
        doc_part = summary.summarise_import(con, res, top=args.top, profile_tz=ptz, step=step)
        params = {"action": "import", "source": args.source, "files": list(args.files), "tz": tz, "profile_tz": ptz,
                  "database": args.database, "devices": args.devices, "top": args.top}
        run = Run("history", args, params, inputs=list(args.files))
        run.doc.update(doc_part)
        run.save()
        step("write Parquet")
        run.doc["series_files"] = store.write_import_files(con, run.dir.path, res.kind, run.doc["databases"])
        _copy_raw(run, [f for f in args.files])
        run.finish()
    con.close()

    def render() -> None:
        out = console(args)
        out.print(_import_table(run.doc))
        for line in _periods(run.doc):
            out.print(f"[dim]{esc(line)}[/dim]")
        for note in run.doc.get("notes") or []:
            out.print(f"[dim]note: {esc(note)}[/dim]")
        for lim in run.doc.get("limitations") or []:
            out.print(f"[yellow]limitation: {esc(lim)}[/yellow]")
        out.print(f"[dim]{len(run.doc['databases'])} database(s); full series in "
                  f"{esc(', '.join(run.doc['series_files']))}. Run: {esc(run.dir.path)}[/dim]")
        out.print(f"[dim]next: dbtier history requirement {esc(run.dir.path)}   or   "
                  f"dbtier history consolidate {esc(run.dir.path)} OTHER_RUN ...[/dim]")

    emit(run.doc, args, render)
    return 0


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
    if args.top < 1:
        raise DbtierError(f"--top {args.top}: must be at least 1", "e.g. --top 10")
    docs = [load_run(r) for r in args.runs]
    con = store.connect()
    bar, _ = _progress(args, 2)
    with bar:
        task = bar.add_task("consolidating", total=2)
        try:
            part = summary.summarise_consolidation(con, docs, step, args.top, args.percentile)
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
    con.close()

    def render() -> None:
        out = console(args)
        d = run.doc
        t = Table(title="consolidation (each database on a common UTC grid of "
                  f"{d['grid']['step_seconds']} s, {d['grid']['cells']} cells)", title_justify="left",
                  box=box.SIMPLE_HEAD, show_edge=False)
        for c in ("", "IOPS", "MB/s"):
            t.add_column(c, justify="left" if not c else "right")
        sp = d["sum_of_peaks"]
        t.add_row(f"sum of the peaks ({sp['percentile']} of each own series)", _n(sp["iops"]), _n(sp["mbps"], 1))
        t.add_row("sum of the peaks on the grid", _n(d["sum_of_peaks_grid"]["iops"]),
                  _n(d["sum_of_peaks_grid"]["mbps"], 1))
        t.add_row("peak of the sum (on the grid)", _n(d["peak_of_sum"]["iops"]), _n(d["peak_of_sum"]["mbps"], 1))
        t.add_row("gain (grid sum of peaks / peak of sum)", _ratio(d.get("gain")), _ratio(d.get("gain_mbps")))
        out.print(t)
        out.print(esc(f"peak of the sum at {d['peak_time']} (MB/s: {d['peak_time_mbps']}); window "
                      f"{d['grid']['start']} to {d['grid']['end']}"))
        dt = Table(title="what drives the combined IOPS peak", title_justify="left", box=box.SIMPLE_HEAD,
                   show_edge=False)
        for c in ("database", "IOPS at peak", "share", "its own peak", "of own peak"):
            dt.add_column(c, justify="left" if c == "database" else "right")
        for dr in d["drivers"]:
            dt.add_row(lit(dr["database"]), _n(dr["iops"]), _pct(dr["share"]), _n(dr["own_peak_iops"]),
                       _pct(dr["of_own_peak"]))
        out.print(dt)
        out.print(f"[dim]Run: {esc(run.dir.path)}; next: dbtier history requirement {esc(run.dir.path)}[/dim]")

    emit(run.doc, args, render)
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
    run.doc["with_headroom"] = {k: None if req[k] is None else req[k] * (1 + req["headroom"]) for k in
                                ("read_iops", "write_iops", "read_mbps", "write_mbps", "capacity_gb")}
    run.doc["absent"] = source["absent"]   # what the source did not measure: missing, not 0
    run.finish()

    def render() -> None:
        out = console(args)
        t = Table(title=esc(f"requirement: {source['statistic']} of {source['of']} (from {args.run})"),
                  title_justify="left", box=box.SIMPLE_HEAD, show_edge=False)
        for c in ("", "measured", f"with {req['headroom']:.0%} headroom"):
            t.add_column(c, justify="left" if not c else "right")
        for k, label, digits in (("read_iops", "read IOPS", 0), ("write_iops", "write IOPS", 0),
                                 ("read_mbps", "read MB/s", 1), ("write_mbps", "write MB/s", 1),
                                 ("capacity_gb", "capacity GB", 1)):
            t.add_row(label, _n(req[k], digits), _n(run.doc["with_headroom"][k], digits))
        out.print(t)
        for k, why in source["absent"].items():
            out.print(f"[yellow]{esc(k)}: missing[/yellow] — {esc(why)}; plan size will not size for it", highlight=False)
        out.print(f"[dim]capacity from {esc(source['capacity_from'])}. Run: {esc(run.dir.path)}[/dim]")
        out.print(f"[dim]next: dbtier plan size --from-history {esc(run.dir.path)}[/dim]")

    emit(run.doc, args, render)
    return 0


# -- terminal tables ---------------------------------------------------------------------------

def _n(x: Any, digits: int = 0) -> str:
    if x is None:
        return "–"
    return f"{x:,.{digits}f}"


def _pct(x: Any) -> str:
    return "–" if x is None else f"{x:.0%}"


def _ratio(x: Any) -> str:
    return "–" if x is None else f"{x:.2f}x"


def _si(x: Any) -> str:
    """Compact: 950, 9.5K, 185K, 1.2M; small fractions keep two significant digits."""
    if x is None:
        return "–"
    ax = abs(x)
    if ax >= 1e6:
        return f"{x / 1e6:.3g}M"
    if ax >= 1e4:
        return f"{x / 1e3:.3g}K"
    if ax >= 100 or x == 0:
        return f"{x:,.0f}"
    return f"{x:.3g}"


def _pm(p: dict[str, Any] | None) -> str:
    p = p or {}
    return f"{_si(p.get('p95'))} / {_si(p.get('max'))}"


def _import_table(doc: dict[str, Any], limit: int = 30) -> Table:
    t = Table(title=esc(f"{doc.get('source')} history: p95 / max of the interval rates"), title_justify="left",
              box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    t.add_column("database", ratio=1, overflow="fold")
    for c in ("intervals", "read IOPS", "write IOPS", "read MB/s", "write MB/s"):
        t.add_column(c, justify="right", no_wrap=True)
    dbs = doc.get("databases") or []
    for db in dbs[:limit]:
        pk = db.get("peaks") or {}
        t.add_row(lit(db["name"]), _n(db.get("intervals")), _pm(pk.get("read_iops")), _pm(pk.get("write_iops")),
                  _pm(pk.get("read_mbps")), _pm(pk.get("write_mbps")))
    if len(dbs) > limit:
        t.caption = f"... and {len(dbs) - limit} more databases (--json has them all)"
    return t


def _periods(doc: dict[str, Any], limit: int = 5) -> list[str]:
    out = []
    for db in (doc.get("databases") or [])[:limit]:
        extra = f", {db['restarts']} restart(s)" if db.get("restarts") else ""
        extra += f", {db['wraps']} counter wrap(s)" if db.get("wraps") else ""
        out.append(f"{db['name']}: {db.get('start')} to {db.get('end')} UTC{extra}")
    return out
