"""`dbtier bench oltp`: TPC-C-like and pgbench workloads on PostgreSQL, swept over clients."""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from dbtier.cli.common import Run, add_output_options, console, emit
from dbtier.core.errors import DbtierError
from dbtier.model.oltp import WORKLOADS, knee, redact
from dbtier.workloads.postgres import Cluster, Settings, find_bindir, parse_placement

# The classic placement study, one step at a time (FAST, SLOW are the two directories).
MATRIX = (
    ("all-slow", {"data": "SLOW"}),
    ("index-fast", {"data": "SLOW", "index": "FAST"}),
    ("tables-fast", {"data": "FAST", "index": "FAST", "wal": "SLOW", "temp": "SLOW"}),
    ("wal-fast", {"data": "FAST", "index": "FAST", "temp": "SLOW"}),
    ("temp-fast", {"data": "FAST", "index": "FAST", "temp": "FAST"}),
    ("all-fast", {"data": "FAST"}),
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bench", help="run database workloads on chosen storage",
                       description="Run real database workloads on chosen storage.")
    bsub = p.add_subparsers(dest="bench_command", metavar="WORKLOAD")
    o = bsub.add_parser("oltp", help="TPC-C-like and pgbench workloads on PostgreSQL, swept over clients",
                        description="OLTP on PostgreSQL: a managed throw-away cluster (default) or your server "
                        "(--dsn); data, indexes, WAL and temp placed on chosen directories; a sweep over client "
                        "counts with TPS, latency, CPU and device figures and the bottleneck at each point.")
    o.add_argument("--workload", choices=WORKLOADS, default="tpcc",
                   help="tpcc (TPC-C-like, 45/43/4/4/4), tpcb, select-only (pgbench built-ins), "
                   "readmix (80%% index range scans, 20%% writes)")
    o.add_argument("--warehouses", type=int, default=1, help="tpcc: warehouses (about 100 MB each)")
    o.add_argument("--scale", type=int, default=10, help="tpcb/select-only/readmix: pgbench scale (16 MB each)")
    o.add_argument("--clients", default="1,2,4,8,16", help="client counts to sweep (default 1,2,4,8,16)")
    o.add_argument("--duration", type=float, default=30.0, help="measured seconds per point (default 30)")
    o.add_argument("--warmup", type=float, default=5.0, help="seconds run before each point, excluded (default 5)")
    o.add_argument("--repeat", type=int, default=1, help="runs per point; the median is reported with the spread")
    o.add_argument("--rate", type=float, help="open loop: transactions/s per point, latency from the scheduled start")
    o.add_argument("--place", metavar="ROLE=DIR,...", help="data=DIR,index=DIR,wal=DIR,temp=DIR (any subset)")
    o.add_argument("--placement-matrix", metavar="FAST,SLOW",
                   help="the placement study: all slow; indexes fast; + tables; + WAL; + temp; all fast")
    o.add_argument("--dir", default=".", help="where unplaced parts of the managed cluster go (default .)")
    o.add_argument("--dsn", help="use your PostgreSQL server (password from PGPASSWORD or ~/.pgpass only)")
    o.add_argument("--port", type=int, help="managed cluster's TCP port on 127.0.0.1 (default: a free one)")
    o.add_argument("--os-user", help="OS user the managed cluster runs as (default postgres when root)")
    o.add_argument("--shared-buffers", default="128MB", help="small forces physical reads (default 128MB)")
    o.add_argument("--synchronous-commit", default="on", choices=("on", "off", "local", "remote_write"))
    o.add_argument("--checkpoint-timeout", default="5min")
    o.add_argument("--max-wal-size", default="1GB")
    add_output_options(o)
    o.set_defaults(func=run_oltp)
    p.set_defaults(func=lambda a: (p.print_help(), 2)[1])


def _clients(text: str) -> list[int]:
    try:
        xs = [int(x) for x in text.split(",") if x.strip()]
    except ValueError as exc:
        raise DbtierError(f"--clients: {text!r} is not a list of whole numbers", "for example --clients 1,2,4,8") from exc
    if not xs or any(x < 1 for x in xs):
        raise DbtierError(f"--clients: every count must be at least 1 (got {text})", "for example --clients 1,2,4,8")
    return sorted(set(xs))


def _check(args: argparse.Namespace) -> None:
    for name in ("duration", "warmup", "warehouses", "scale", "repeat"):
        v = getattr(args, name)
        if v < 0 or (v == 0 and name != "warmup"):
            raise DbtierError(f"--{name} must be positive, got {v}", f"pass a number above zero to --{name}")
    if args.rate is not None and args.rate <= 0:
        raise DbtierError(f"--rate must be positive, got {args.rate}", "transactions per second, e.g. --rate 500")
    if args.dsn and (args.place or args.placement_matrix):
        raise DbtierError("--place and --placement-matrix need the managed cluster, not --dsn",
                          "placement moves files, which dbtier only does on a cluster it created")
    if args.place and args.placement_matrix:
        raise DbtierError("--place and --placement-matrix cannot be combined", "use one of them")


def _steps(args: argparse.Namespace) -> list[tuple[str, dict[str, str]]]:
    if args.placement_matrix:
        parts = [x.strip() for x in args.placement_matrix.split(",")]
        if len(parts) != 2 or not all(parts):
            raise DbtierError(f"--placement-matrix takes FAST,SLOW (got {args.placement_matrix!r})",
                              "for example --placement-matrix /mnt/nvme,/mnt/hdd")
        if os.path.realpath(parts[0]) == os.path.realpath(parts[1]):
            raise DbtierError(f"--placement-matrix: {parts[0]} is given twice", "pass two different directories")
        fast, slow = parts
        return [(n, {r: fast if d == "FAST" else slow for r, d in pl.items()}) for n, pl in MATRIX]
    placement = parse_placement(args.place)
    dirs = list(placement.values())
    return [("single", placement)]


def run_oltp(args: argparse.Namespace) -> int:
    _check(args)
    clients = _clients(args.clients)
    steps = _steps(args)
    find_bindir()
    for _, placement in steps:
        for role, d in placement.items():
            if not Path(d).is_dir():
                raise DbtierError(f"--place {role}={d}: no such directory", "create it, or pass an existing directory")
    settings = Settings(shared_buffers=args.shared_buffers, synchronous_commit=args.synchronous_commit,
                        checkpoint_timeout=args.checkpoint_timeout, max_wal_size=args.max_wal_size,
                        max_connections=max(clients) + 10)
    params = {"workload": args.workload, "warehouses": args.warehouses, "scale": args.scale, "clients": clients,
              "duration_s": args.duration, "warmup_s": args.warmup, "repeat": args.repeat, "rate": args.rate,
              "mode": "dsn" if args.dsn else "managed", "dsn": redact(args.dsn) if args.dsn else None,
              "settings": settings.conf(), "placement_requested": steps[0][1] if len(steps) == 1 else None,
              "placement_matrix": args.placement_matrix, "engine": "pgbench (PostgreSQL)",
              "latency": "per-transaction pgbench logs" + ("; from the scheduled start (open loop)" if args.rate else ""),
              "knee_rule": "throughput +<5% per step, or p95 latency growing faster than throughput"}
    dirs = sorted({d for _, pl in steps for d in pl.values()} | {args.dir})
    run = Run("bench", args, params, paths=dirs)
    doc = run.doc
    doc["bench"] = "oltp"
    doc.update({"points": [], "knee": None, "placement": None})
    if args.placement_matrix:
        doc["steps"] = []
    out = console(args)
    total = len(steps) * len(clients) * args.repeat * (args.duration + args.warmup)
    try:
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), TimeElapsedColumn(), TimeRemainingColumn(),
                      console=out, transient=True, disable=args.json) as progress:
            task = progress.add_task("oltp", total=total)
            for name, placement in steps:
                step = {"name": name, "placement": None, "points": [], "knee": None, "load": None}
                if args.placement_matrix:
                    doc["steps"].append(step)
                else:  # one step: its figures are the document's, saved as they come
                    doc["points"] = step["points"]
                _run_step(args, run, step, placement, settings, clients, progress, task, out)
                run.save()
    except KeyboardInterrupt:
        run.finish("interrupted")
        raise
    except DbtierError as exc:
        doc["errors"].append({"message": exc.message, "hint": exc.hint})
        run.finish("failed")
        raise
    if args.placement_matrix:
        # The top-level view is the all-fast step (the best case); every step is in steps[].
        last = doc["steps"][-1]
        doc["points"], doc["knee"], doc["placement"] = last["points"], last["knee"], last["placement"]
    run.finish("ok")
    emit(doc, args, lambda: _render(doc, out, run))
    return 0


def _run_step(args, run, step, placement, settings, clients, progress, task, out) -> None:
    # psycopg loads here, not at start-up: every other command stays fast to start.
    from dbtier.workloads.oltp import Database, devices_for, load, run_point
    cluster = None
    db = None
    try:
        if args.dsn:
            db = Database(dsn=args.dsn)
            step["placement"] = {"data": "server", "index": "server", "wal": "server", "temp": "server"}
        else:
            cluster = Cluster(args.dir, placement, settings, port=args.port, os_user=args.os_user)
            cluster.__enter__()
            db = Database(cluster)
            step["placement"] = cluster.placement()
        db.create()
        progress.update(task, description=f"{step['name']}: loading {args.workload}")
        step["load"] = load(db, args.workload, args.warehouses, args.scale, lambda m: None)
        _sync(run.doc, step, args)
        run.save()
        devices = devices_for(list(step["placement"].values())) if cluster else []
        raw = run.dir.raw_path("x").parent
        for c in clients:
            progress.update(task, description=f"{step['name']}: {c} clients")
            reps = []
            for r in range(args.repeat):
                tag = f"{step['name']}-c{c}-r{r + 1}"
                reps.append(run_point(db, args.workload, c, args.duration, args.warmup, args.warehouses, args.rate,
                                      raw, devices, tag))
                progress.advance(task, args.duration + args.warmup)
            point = _median_point(reps)
            step["points"].append(point)
            step["knee"] = knee(step["points"])
            _sync(run.doc, step, args)
            run.save()
            if not args.json:
                progress.console.print(_points_table([point], header=len(step["points"]) == 1, step=step["name"]))
    finally:
        if cluster is not None:
            if cluster.log_path and Path(cluster.log_path).exists():
                shutil.copy(cluster.log_path, run.dir.raw_path(f"server-{step['name']}.log"))
            cluster.close()
        elif db is not None:
            db.drop()


def _sync(doc: dict[str, Any], step: dict[str, Any], args: argparse.Namespace) -> None:
    if not args.placement_matrix:
        doc.update(points=step["points"], knee=step["knee"], placement=step["placement"], load=step["load"])


def _median_point(reps: list[dict[str, Any]]) -> dict[str, Any]:
    """The run with the median TPS stands for the point; the spread of all runs is kept."""
    ordered = sorted(reps, key=lambda p: p["tps"])
    point = dict(ordered[(len(ordered) - 1) // 2])
    tps = [p["tps"] for p in reps]
    point["repeats"] = len(reps)
    point["tps_runs"] = tps
    point["tps_spread_pct"] = (100.0 * (max(tps) - min(tps)) / statistics.median(tps)) if len(tps) > 1 and statistics.median(tps) else 0.0
    return point


def _points_table(points: list[dict[str, Any]], header: bool, step: str) -> Table:
    t = Table(show_header=header, box=None, pad_edge=False)
    for name, w in (("step", 11), ("clients", 7), ("TPS", 9), ("NOPM", 9), ("p50 ms", 8), ("p95 ms", 8),
                    ("p99 ms", 8), ("CPU%", 5), ("dev busy%", 9), ("await ms", 8), ("bottleneck", 10)):
        t.add_column(name, width=w, justify="left" if name in ("step", "bottleneck") else "right", no_wrap=True)
    for p in points:
        dev = max(p["devices"], key=lambda d: d["busy_pct"], default=None)
        lat = p["lat_ms"]
        t.add_row(step, str(p["clients"]), f"{p['tps']:,.0f}", "-" if p["nopm"] is None else f"{p['nopm']:,.0f}",
                  _f(lat["p50"]), _f(lat["p95"]), _f(lat["p99"]), f"{p['cpu_util']['busy_pct']:.0f}",
                  "-" if not dev else f"{dev['busy_pct']:.0f}", "-" if not dev else f"{dev['await_ms']:.2f}",
                  p["bottleneck"])
    return t


def _f(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def _render(doc: dict[str, Any], out, run) -> None:
    steps = doc.get("steps") or [{"name": "single", "points": doc["points"], "knee": doc["knee"]}]
    for s in steps:
        k = s["knee"]
        if k:
            out.print(f"{s['name']}: knee at {k['clients']} clients, {k['tps']:,.0f} TPS ({k['reason']})")
    out.print(f"result: {run.dir.result_path}")
