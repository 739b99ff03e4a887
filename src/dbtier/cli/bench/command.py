"""`dbtier bench oltp`: TPC-C-like and pgbench workloads, swept over clients, on an engine of workloads/engine.py."""

from __future__ import annotations

import argparse
import os
from typing import Any

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from dbtier.cli import options as argtypes
from dbtier.cli.markup import esc, lit
from dbtier.cli.common import Sink, add_output_options, console, emit, usage
from dbtier.cli.settings_options import add_engine_options, engine_options
from dbtier.report.figures.core import busiest_device, spread_text
from dbtier.workloads import oltp
from dbtier.workloads.engine import engine_class, names
from dbtier.workloads.oltp import MAX_PGBENCH_SCALE, MAX_WAREHOUSES
from dbtier.cli.bench.backup import register_backup
from dbtier.cli.bench.dss import register_dss
from dbtier.cli.bench.oltp_checks import MAX_CLIENTS, checked, workload
from dbtier.cli.own_checkout import default_dir

# Upper bounds of the numeric options: far past any real run, and small enough that nothing derived
# from them (connections, bytes, seconds of progress) can overflow.
DEFAULT_WAREHOUSES, DEFAULT_SCALE = 1, 10
MAX_RATE = 1e9                  # transactions/s
# --memory: below 64 MiB PostgreSQL's backends are OOM-killed at a few clients
MEMORY = argtypes.size_or(("none",), lo=64 * 1024 * 1024)

def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="run database workloads on chosen storage",
                       description="Run real database workloads on chosen storage.")
    bsub = p.add_subparsers(dest="bench_command", metavar="WORKLOAD")
    o = bsub.add_parser("oltp", help="TPC-C-like and pgbench workloads on PostgreSQL, swept over clients",
                        description="OLTP on PostgreSQL: a managed throw-away cluster (default) or your server "
                        "(--dsn); data, indexes, WAL and temp placed on chosen directories; a sweep over client "
                        "counts with TPS, latency, CPU and device figures and the bottleneck at each point.")
    o.add_argument("--workload", choices=oltp_workloads(),
                   help="postgres: tpcc (TPC-C-like, 45/43/4/4/4; the default), tpcb, select-only (pgbench "
                   "built-ins), readmix (80%% index range scans, 20%% writes); mariadb: sysbench-rw, sysbench-ro, "
                   "sysbench-wo, sysbench-point (sysbench's oltp_read_write, _read_only, _write_only, _point_select)")
    o.add_argument("--warehouses", type=argtypes.positive_int(MAX_WAREHOUSES),
                   help="tpcc: warehouses (about 110 MB each; default 1, or past free memory without a cgroup)")
    o.add_argument("--scale", type=argtypes.positive_int(MAX_PGBENCH_SCALE),
                   help="tpcb/select-only/readmix: pgbench scale (16 MB each); sysbench-*: 100,000 rows each over 4 "
                   "tables; default 10, or past free memory without a cgroup")
    o.add_argument("--clients", type=argtypes.int_list(1, MAX_CLIENTS), default="1,2,4,8,16",
                   help="client counts to sweep (default 1,2,4,8,16)")
    o.add_argument("--duration", type=argtypes.duration(0, argtypes.WEEK_S), default=30.0,
                   help="measured seconds per point (default 30)")
    o.add_argument("--warmup", type=argtypes.duration(0, argtypes.WEEK_S, lo_open=False), default=5.0,
                   help="seconds run before each point, excluded (default 5)")
    o.add_argument("--repeat", type=argtypes.positive_int(argtypes.MAX_REPEAT), default=1,
                   help="runs per point; the median is reported with the spread")
    o.add_argument("--rate", type=argtypes.positive_float(MAX_RATE),
                   help="open loop: transactions/s per point, latency from the scheduled start")
    o.add_argument("--place", metavar="ROLE=DIR,...", help="postgres: data=DIR,index=DIR,wal=DIR,temp=DIR; "
                   "mariadb: data, redo, undo, temp, binlog (any subset; InnoDB cannot place index). On the "
                   "managed server data=DIR holds the whole datadir; with --engine mariadb --dsn only data=DIR "
                   "(absolute, on the server's host) is taken: dbtier's tables are created with DATA DIRECTORY='DIR'")
    o.add_argument("--placement-matrix", metavar="FAST,SLOW",
                   help="the placement study: all slow; indexes fast; + tables; + WAL; + temp; all fast")
    o.add_argument("--dir", help="where unplaced parts of the managed cluster go (default . -- refused inside "
                   "dbtier's own checkout: give the directory to test)")
    o.add_argument("--dsn", help="use your server: PostgreSQL (password from PGPASSWORD or ~/.pgpass only) or, "
                   "with --engine mariadb, mysql://USER@HOST:PORT/ (password from MYSQL_PWD or ~/.my.cnf only)")
    o.add_argument("--port", type=argtypes.port(), help="managed cluster's TCP port on 127.0.0.1 (default: a free one)")
    o.add_argument("--os-user", help="OS user the managed cluster runs as (default postgres when root)")
    o.add_argument("--memory", type=MEMORY, metavar="SIZE|none",
                   help="memory budget of the managed server, page cache included (a memory cgroup), so reads "
                   "reach the device; default: a quarter of the loaded database, at least 128MiB; none: unbounded")
    o.add_argument("--emulate", metavar="DIR=RATE",
                   help="root: make DIR (one of the placement's directories) an emulated slow tier, a loop device "
                   "there throttled to RATE (e.g. 150iops, or 150riops,300wiops); its figures are labelled emulated")
    o.add_argument("--engine", choices=names("oltp"), default="postgres",
                   help=f"the database engine ({', '.join(names('oltp'))}; default postgres)")
    for name in names("oltp"):   # each engine's own settings (PostgreSQL: --shared-buffers, ...)
        add_engine_options(o, engine_class(name, "oltp"), "oltp")
    add_output_options(o)
    o.set_defaults(func=run_oltp)
    register_dss(bsub)
    register_backup(bsub)
    p.set_defaults(func=usage(p))


def oltp_workloads() -> tuple[str, ...]:
    """Every OLTP engine's workloads, in the registry's order (--workload's choices)."""
    return tuple(dict.fromkeys(w for n in names("oltp") for w in engine_class(n, "oltp").workloads))


def oltp_request(args: argparse.Namespace) -> oltp.OltpRequest:
    """The request of `bench oltp`'s options, checked before anything starts."""
    cls = engine_class(args.engine, "oltp")
    placed = {part.partition("=")[0].strip() for part in (args.place or "").split(",")}
    if args.dsn or args.placement_matrix or "data" in placed:   # nothing lands in --dir but its metadata
        args.dir = args.dir or "."
    args.dir = default_dir(args.dir, "--dir", "--dir /mnt/nvme/dbtier")
    args.workload = workload(args, cls)
    sized = (args.warehouses if args.workload == "tpcc" else args.scale) is None
    args.warehouses = DEFAULT_WAREHOUSES if args.warehouses is None else args.warehouses
    args.scale = DEFAULT_SCALE if args.scale is None else args.scale
    clients, steps, emulation = checked(args, cls)
    req = oltp.OltpRequest(engine=args.engine, workload=args.workload, warehouses=args.warehouses,
                           scale=args.scale, sized=sized, clients=tuple(clients), repeat=args.repeat,
                           duration_s=args.duration, warmup_s=args.warmup, rate=args.rate, memory=args.memory,
                           options=engine_options(cls, "oltp", args), steps=tuple(steps),
                           dir=os.path.abspath(args.dir), dsn=args.dsn, port=args.port, os_user=args.os_user,
                           placement_matrix=args.placement_matrix, emulation=emulation)
    return req


def run_oltp(args: argparse.Namespace) -> int:
    req = oltp_request(args)
    cls = engine_class(req.engine, "oltp")
    dirs = req.dirs()
    # --dsn: a placed directory is this machine's (its device in the metadata) only when the server runs here
    machine_dirs = [req.dir] if args.dsn and not cls.dsn_is_local(args.dsn) else dirs
    sink = Sink("bench.oltp", args, paths=machine_dirs, inputs=dirs)
    out = console(args)
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), TimeElapsedColumn(),
                  TimeRemainingColumn(), console=out, transient=True, disable=args.json) as progress:
        task = progress.add_task("oltp", total=req.total_s())
        hooks = oltp.Hooks() if args.json else oltp.Hooks(
            note=lambda t: progress.console.print(f"note: {esc(t)}", highlight=False),
            say=lambda t: progress.console.print(esc(t), highlight=False),
            status=lambda t: progress.update(task, description=t),
            advance=lambda s: progress.advance(task, s),
            point=lambda p, first, name: progress.console.print(
                _points_table([p], header=first, step=name, width=progress.console.width)))
        oltp.bench(req, sink.start, sink.save_params, hooks)
    run = sink.run
    run.finish("ok")
    doc = run.doc
    emit(doc, args, lambda: _render(doc, out, run))
    return 0


# Each point as it is measured: every column on a terminal of 130 columns or more; on a narrower one the
# columns the end of the run shows again in full (p50, await, the runs' spread) stay out, so a line fits 80.
_POINT_COLS = (("step", 11), ("clients", 7), ("TPS", 9), ("NOPM", 9), ("p50 ms", 8), ("p95 ms", 7), ("p99 ms", 7),
               ("CPU %", 5), ("busy %", 6), ("await ms", 8), ("bottleneck", 10), ("runs (TPS)", 16))
_NARROW_LEFT_OUT = frozenset({"p50 ms", "await ms", "runs (TPS)"})


def _points_table(points: list[dict[str, Any]], header: bool, step: str, width: int = 200) -> Table:
    t = Table(show_header=header, box=None, pad_edge=False, collapse_padding=True)
    cols = [(n, w) for n, w in _POINT_COLS if width >= 130 or n not in _NARROW_LEFT_OUT]
    for name, w in cols:
        t.add_column(name, min_width=w, justify="left" if name in ("step", "bottleneck", "runs (TPS)") else "right",
                     no_wrap=True)
    for p in points:
        dev = busiest_device(p)
        lat = p["lat_ms"]
        cell = {"step": step, "clients": str(p["clients"]), "TPS": f"{p['tps']:,.0f}",
                "NOPM": "-" if p["nopm"] is None else f"{p['nopm']:,.0f}", "p50 ms": _f(lat["p50"]),
                "p95 ms": _f(lat["p95"]), "p99 ms": _f(lat["p99"]), "CPU %": f"{p['cpu_util']['busy_pct']:.0f}",
                "busy %": "-" if not dev else f"{dev['busy_pct']:.0f}",
                "await ms": "-" if not dev else f"{dev['await_ms']:.2f}", "bottleneck": p["bottleneck"],
                "runs (TPS)": spread_text(p.get("tps_spread"), 0)}
        t.add_row(*(lit(cell[n]) for n, _ in cols))
    return t


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _render(doc: dict[str, Any], out, run) -> None:
    steps = doc.get("steps") or [{"name": "single", "points": doc["points"], "knee": doc["knee"]}]
    for s in steps:
        k = s["knee"]
        if k:
            out.print(esc(f"{s['name']}: knee at {k['clients']} clients, {k['tps']:,.0f} TPS ({k['reason']})"))
    if doc.get("deviations"):
        out.print(f"TPC-C-like, not TPC-C: {len(doc['deviations'])} deviations are listed in the result (deviations)")
    out.print(f"result: {esc(run.dir.result_path)}")


# ---------------------------------------------------------------------- dss
