"""`dbtier bench oltp`: TPC-C-like and pgbench workloads on PostgreSQL, swept over clients."""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from dbtier.cli import options as argtypes
from dbtier.cli.markup import esc
from dbtier.cli.common import Run, add_output_options, console, emit, usage
from dbtier.core.errors import DbtierError, Interrupted
from dbtier.measure import cgroup as memcg
from dbtier.measure import slowtier
from dbtier.measure.machine import devices_for
from dbtier.measure.probe import spare_bytes
from dbtier.report.figures import busiest_device, spread_text
from dbtier.model.guards import mark_oltp
from dbtier.model.placement import matrix_steps
from dbtier.model.oltp import KNEE_RULE, NOT_MEASURED_REMOTE, WORKLOADS, pgbench_seconds
from dbtier.workloads.dsn import check_dsn, redact_dsn
from dbtier.workloads.postgres import Cluster, Settings, find_bindir, parse_placement
from dbtier.workloads.tpcc import DEVIATIONS as TPCC_DEVIATIONS
from dbtier.cli.bench_backup import register_backup
from dbtier.cli.bench_dss import register_dss

# Upper bounds of the numeric options: far past any real run, and small enough that nothing derived
# from them (connections, bytes, seconds of progress) can overflow.
MAX_WAREHOUSES = 100_000        # about 10 TB of TPC-C-like data
MAX_PGBENCH_SCALE = 1_000_000   # about 16 TB
DEFAULT_WAREHOUSES, DEFAULT_SCALE = 1, 10
WAREHOUSE_BYTES, SCALE_BYTES = 110e6, 16e6   # loaded database per tpcc warehouse / pgbench scale unit, about
MAX_CLIENTS = 10_000            # max_connections is clients + 10
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
    o.add_argument("--workload", choices=WORKLOADS, default="tpcc",
                   help="tpcc (TPC-C-like, 45/43/4/4/4), tpcb, select-only (pgbench built-ins), "
                   "readmix (80%% index range scans, 20%% writes)")
    o.add_argument("--warehouses", type=argtypes.positive_int(MAX_WAREHOUSES),
                   help="tpcc: warehouses (about 110 MB each; default 1, or past free memory without a cgroup)")
    o.add_argument("--scale", type=argtypes.positive_int(MAX_PGBENCH_SCALE),
                   help="tpcb/select-only/readmix: pgbench scale (16 MB each; default 10, or past free memory "
                   "without a cgroup)")
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
    o.add_argument("--place", metavar="ROLE=DIR,...", help="data=DIR,index=DIR,wal=DIR,temp=DIR (any subset)")
    o.add_argument("--placement-matrix", metavar="FAST,SLOW",
                   help="the placement study: all slow; indexes fast; + tables; + WAL; + temp; all fast")
    o.add_argument("--dir", default=".", help="where unplaced parts of the managed cluster go (default .)")
    o.add_argument("--dsn", help="use your PostgreSQL server (password from PGPASSWORD or ~/.pgpass only)")
    o.add_argument("--port", type=argtypes.port(), help="managed cluster's TCP port on 127.0.0.1 (default: a free one)")
    o.add_argument("--os-user", help="OS user the managed cluster runs as (default postgres when root)")
    o.add_argument("--shared-buffers", type=argtypes.PG_SHARED_BUFFERS, default="128MB",
                   help="default 128MB; under a memory budget at most a quarter of it")
    o.add_argument("--memory", type=MEMORY, metavar="SIZE|none",
                   help="memory budget of the managed server, page cache included (a memory cgroup), so reads "
                   "reach the device; default: a quarter of the loaded database, at least 128MiB; none: unbounded")
    o.add_argument("--emulate", metavar="DIR=RATE",
                   help="root: make DIR (one of the placement's directories) an emulated slow tier, a loop device "
                   "there throttled to RATE (e.g. 150iops, or 150riops,300wiops); its figures are labelled emulated")
    o.add_argument("--synchronous-commit", default="on", choices=("on", "off", "local", "remote_write"))
    o.add_argument("--checkpoint-timeout", type=argtypes.pg_time(30, 86400), default="5min",
                   help="PostgreSQL checkpoint_timeout, 30s to 1d (default 5min)")
    o.add_argument("--max-wal-size", type=argtypes.pg_memory(32 * 1024, 2**31 * 1024.0, example="1GB"), default="1GB",
                   help="PostgreSQL max_wal_size, at least 32MB (default 1GB)")
    add_output_options(o)
    o.set_defaults(func=run_oltp)
    register_dss(bsub)
    register_backup(bsub)
    p.set_defaults(func=usage(p))


def _clients(xs: list[int] | str) -> list[int]:
    """The sweep's client counts, ascending, each once (--clients is parsed by argtypes.int_list)."""
    if isinstance(xs, str):
        xs = argtypes.int_list(1, MAX_CLIENTS)(xs)
    return sorted(set(xs))


def _check(args: argparse.Namespace) -> None:
    # The option types checked each number; this guards callers that build args by hand (NaN fails it).
    for name in ("duration", "warmup", "warehouses", "scale", "repeat"):
        v = getattr(args, name)
        if not (v > 0 or (v == 0 and name == "warmup")):
            raise DbtierError(f"--{name} must be positive, got {v}", f"pass a number above zero to --{name}")
    if args.rate is not None and not (args.rate > 0):
        raise DbtierError(f"--rate must be positive, got {args.rate}", "transactions per second, e.g. --rate 500")
    if args.dsn is not None:
        check_dsn(args.dsn)
    if args.dsn and (args.place or args.placement_matrix):
        raise DbtierError("--place and --placement-matrix need the managed cluster, not --dsn",
                          "placement moves files, which dbtier only does on a cluster it created")
    if args.place and args.placement_matrix:
        raise DbtierError("--place and --placement-matrix cannot be combined", "use one of them")
    if args.dsn and getattr(args, "memory", None) is not None:
        raise DbtierError(f"--memory {args.memory} needs the managed cluster, not --dsn",
                          "dbtier bounds only a server it starts; size your server's memory yourself")


def _steps(args: argparse.Namespace) -> list[tuple[str, dict[str, str]]]:
    if args.placement_matrix:
        parts = [x.strip() for x in args.placement_matrix.split(",")]
        if len(parts) != 2 or not all(parts):
            raise DbtierError(f"--placement-matrix takes FAST,SLOW (got {args.placement_matrix!r})",
                              "for example --placement-matrix /mnt/nvme,/mnt/hdd")
        if os.path.realpath(parts[0]) == os.path.realpath(parts[1]):
            raise DbtierError(f"--placement-matrix: {parts[0]} is given twice", "pass two different directories")
        fast, slow = parts
        return matrix_steps(fast, slow)
    return [("single", parse_placement(args.place))]


def run_oltp(args: argparse.Namespace) -> int:
    sized = (args.warehouses if args.workload == "tpcc" else args.scale) is None
    args.warehouses = DEFAULT_WAREHOUSES if args.warehouses is None else args.warehouses
    args.scale = DEFAULT_SCALE if args.scale is None else args.scale
    _check(args)
    clients = _clients(args.clients)
    steps = _steps(args)
    emulation = slowtier.parse(args.emulate) if args.emulate else None
    if emulation and args.dsn:
        raise DbtierError("--emulate needs the managed cluster, not --dsn", "dbtier emulates only tiers it places")
    if emulation and not any(os.path.realpath(d) == os.path.realpath(emulation.dir)
                             for _, pl in steps for d in pl.values()):
        raise DbtierError(f"--emulate {args.emulate}: {emulation.dir} is not one of the placement's directories",
                          "name the slow directory of --placement-matrix FAST,SLOW (or one of --place)")
    find_bindir()
    for _, placement in steps:
        for role, d in placement.items():
            if not Path(d).is_dir():
                raise DbtierError(f"--place {role}={d}: no such directory", "create it, or pass an existing directory")
    fallback = None if args.dsn or args.memory == "none" else _no_cgroup_fallback(args, steps, sized)
    settings = Settings(shared_buffers=args.shared_buffers, synchronous_commit=args.synchronous_commit,
                        checkpoint_timeout=args.checkpoint_timeout, max_wal_size=args.max_wal_size,
                        max_connections=max(clients) + 10)
    params = {"workload": args.workload, "warehouses": args.warehouses, "scale": args.scale, "clients": clients,
              "duration_s": args.duration, "warmup_s": args.warmup, "repeat": args.repeat, "rate": args.rate,
              "mode": "dsn" if args.dsn else "managed", "dsn": redact_dsn(args.dsn) if args.dsn else None,
              "settings": settings.conf(), "memory": args.memory,
              "placement_requested": steps[0][1] if len(steps) == 1 else None,
              "placement_matrix": args.placement_matrix, "engine": "pgbench (PostgreSQL)",
              "latency": "per-transaction pgbench logs" + ("; from the scheduled start (open loop)" if args.rate else ""),
              "knee_rule": KNEE_RULE,
              "not_measured": list(NOT_MEASURED_REMOTE) if args.dsn else []}
    if args.duration != pgbench_seconds(args.duration):
        # pgbench -T takes whole seconds; every rate divides by the time pgbench measured
        params["duration_note"] = (f"pgbench -T takes whole seconds: --duration {args.duration:g} ran "
                                   f"{pgbench_seconds(args.duration)} s per point; TPS, TPM and NOPM divide by the "
                                   "time pgbench measured (duration_s of each point)")
    dirs = sorted({d for _, pl in steps for d in pl.values()} | {args.dir})
    run = Run("bench", args, params, paths=dirs, inputs=dirs)
    doc = run.doc
    doc["bench"] = "oltp"
    doc["not_measured"] = params["not_measured"]
    if params.get("duration_note") and not args.json:
        console(args).print(f"note: {params['duration_note']}", highlight=False)
    # What a tpcc run is not, next to its figures (workloads/tpcc.py; README, `bench oltp`).
    doc["deviations"] = list(TPCC_DEVIATIONS) if args.workload == "tpcc" else None
    doc.update({"points": [], "knee": None, "placement": None, "memory": None, "guards": [], "emulated": None})
    if args.placement_matrix:
        doc["steps"] = []
    out = console(args)
    total = len(steps) * len(clients) * args.repeat * (args.duration + args.warmup)
    tier = slowtier.SlowTier(emulation) if emulation else None
    try:
        if tier:
            steps = _emulate(args, run, tier, steps, out)
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), TimeElapsedColumn(),
                      TimeRemainingColumn(), console=out, transient=True, disable=args.json) as progress:
            task = progress.add_task("oltp", total=total)
            for name, placement in steps:
                step = {"name": name, "placement": None, "points": [], "knee": None, "load": None, "memory": None}
                if tier:
                    step["emulated_roles"] = sorted(r for r, d in placement.items() if d == tier.mount)
                if args.placement_matrix:
                    doc["steps"].append(step)
                else:  # one step: its figures are the document's, saved as they come
                    doc["points"] = step["points"]
                try:
                    _run_step(args, run, step, placement, settings, clients, progress, task, out, fallback)
                finally:
                    if tier and step["placement"]:   # the parts the cluster really put there
                        step["emulated_roles"] = sorted(r for r, d in step["placement"].items()
                                                        if str(d).startswith(tier.mount + "/"))
                run.save()
    finally:
        if tier:
            for left in tier.close():
                doc.setdefault("notes", []).append(f"the emulated tier could not be removed whole: {left}")
    if args.placement_matrix:
        # The top-level view is the all-fast step (the best case); every step is in steps[].
        last = doc["steps"][-1]
        doc["points"], doc["knee"], doc["placement"] = last["points"], last["knee"], last["placement"]
        doc["memory"] = last.get("memory")
    run.finish("ok")
    emit(doc, args, lambda: _render(doc, out, run))
    return 0


def _run_step(args, run, step, placement, settings, clients, progress, task, out, fallback) -> None:
    # psycopg loads here, not at start-up: every other command stays fast to start.
    from dbtier.workloads.oltp import Database, load, run_sweep
    cluster = None
    db = None
    cg: memcg.MemoryCgroup | None = None
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
        if cluster is not None:
            progress.update(task, description=f"{step['name']}: memory budget")
            cg = memcg.MemoryCgroup(0)   # made before it is filled in: close() in finally sees a half-made one
            step["memory"] = _memory_budget(args, cluster, step, cg, run, progress.console, clients, fallback)
        else:
            step["memory"] = {"budget_bytes": None, "mechanism": "none", "data_bytes": step["load"]["database_bytes"],
                              "shared_buffers_bytes": None, "reason": "--dsn: not a server dbtier starts"}
        _sync(run.doc, step, args)
        run.save()
        devices = devices_for(list(step["placement"].values())) if cluster else []
        raw = run.dir.raw_path("x").parent

        def on_point(point: dict[str, Any], knee_so_far: dict[str, Any] | None) -> None:
            step["points"].append(point)
            step["knee"] = knee_so_far
            _sync(run.doc, step, args)
            mark_oltp(run.doc, remote=bool(args.dsn))   # the cache guard, over every point so far
            run.save()
            if not args.json:
                progress.console.print(_points_table([point], header=len(step["points"]) == 1, step=step["name"]))
        run_sweep(db, args.workload, clients, args.repeat, args.duration, args.warmup, args.warehouses, args.rate,
                  raw, devices, step["name"],
                  on_clients=lambda c: progress.update(task, description=f"{step['name']}: {c} clients"),
                  on_run=lambda: progress.advance(task, args.duration + args.warmup), on_point=on_point)
    except DbtierError as exc:
        kills = cg.oom_count() if cg is not None and not isinstance(exc, Interrupted) else 0
        if kills:   # the budget, not the storage, ended the run: say so
            raise DbtierError(f"{exc.message}\nthe kernel killed {kills} server process(es) at the "
                              f"{cg.limit_bytes / 2**20:,.0f} MiB memory budget (out of memory)",
                              "give the server more with --memory (or fewer --clients); finished points are kept"
                              ) from exc
        raise
    finally:
        try:
            if cluster is not None:
                if cluster.log_path and Path(cluster.log_path).exists():
                    shutil.copy(cluster.log_path, run.dir.raw_path(f"server-{step['name']}.log"))
                cluster.close()
            elif db is not None:
                db.drop()
        finally:
            if cg is not None:   # after the server stopped: nothing of it is left inside
                cg.close()
                if step.get("memory") and cg.oom_kills is not None:
                    step["memory"]["oom_kills"] = cg.oom_kills
                if cg.created:
                    run.doc.setdefault("notes", []).append(f"the memory cgroup {cg.plan.dir} could not be removed: "
                                                           "a process is still inside it")


def _memory_budget(args, cluster, step, cg, run, out, clients: list[int],
                   fallback: dict[str, str] | None) -> dict[str, Any]:
    """Bound the managed server: a memory cgroup with the budget, shared_buffers out of it, the server
    restarted inside it with its files' pages dropped, so measured points start cold. The load ran unbounded."""
    data_bytes = int(step["load"]["database_bytes"])
    requested_sb = argtypes.pg_memory_bytes(args.shared_buffers, plain_kb=8)
    mem = {"budget_bytes": None, "mechanism": "none", "data_bytes": data_bytes, "shared_buffers_bytes": requested_sb,
           "reason": None, "rule": memcg.RULE}
    if args.memory == "none":
        mem["reason"] = "--memory none: the server runs unbounded; reads may come from the page cache"
        _note_once(run, args, out, mem["reason"])
        return mem
    budget, cache, sb = memcg.budget_parts(args.memory if isinstance(args.memory, int) else None, data_bytes,
                                           max(clients), requested_sb)
    if fallback:   # no cgroup can be made here: said once, the data set sized past free memory where it could be
        mem.update(mechanism=fallback["mechanism"], reason=fallback["reason"])
        _note_once(run, args, out, fallback["reason"])
        return mem
    cg.limit_bytes = budget
    cg.open()
    if cg.mechanism == "none":
        mem["reason"] = (f"no memory cgroup could be made ({cg.reason}): the server runs unbounded, without the "
                         f"{budget / 2**20:,.0f} MiB budget, and reads may come from memory")
        _note_once(run, args, out, mem["reason"])
        return mem
    mem.update(budget_bytes=budget, mechanism=cg.mechanism, shared_buffers_bytes=sb, cache_bytes=cache,
               cgroup=cg.plan.dir)
    if sb != requested_sb:
        mem["reason"] = (f"shared_buffers {sb // 1024} kB (a quarter of the budget's cache part) instead of "
                         f"{args.shared_buffers}: it comes out of the budget")
    if memcg.small_data(data_bytes, cache):
        note = (f"the database ({data_bytes / 2**20:,.0f} MiB) is less than {memcg.DATA_PER_BUDGET}x the memory "
                f"budget's cache part ({cache / 2**20:,.0f} MiB): much of it is read from memory")
        mem["reason"] = "; ".join(x for x in (mem["reason"], note) if x)
    if not args.json:
        rule = f", default: {memcg.RULE}" if args.memory is None else ""
        out.print(esc(f"memory: {budget / 2**20:,.0f} MiB budget ({cg.mechanism}{rule}), "
                      f"shared_buffers {sb / 2**20:,.0f} MiB, database {data_bytes / 2**20:,.0f} MiB"), highlight=False)
    cluster.cgroup_procs = cg.plan.procs
    cluster.restart({"shared_buffers": f"{sb // 1024}kB"} if sb != requested_sb else None,
                    before_start=lambda: memcg.drop_cached(sorted(set(step["placement"].values()))))
    return mem


def _no_cgroup_fallback(args, steps, sized: bool) -> dict[str, str] | None:
    """Where no memory cgroup can be made: {mechanism, reason} from memcg.no_cgroup (None when one can);
    with `size`, the workload's size is set past free memory here."""
    why = memcg.can_make()
    if why is None:
        return None
    try:
        avail = memcg.mem_available_bytes(Path("/proc/meminfo").read_text())
    except OSError:
        avail = None
    data_dir = steps[0][1].get("data") or args.dir
    tpcc = args.workload == "tpcc"
    mechanism, reason, units = memcg.no_cgroup(
        why, sized, avail, WAREHOUSE_BYTES if tpcc else SCALE_BYTES, MAX_WAREHOUSES if tpcc else MAX_PGBENCH_SCALE,
        spare_bytes(data_dir, 10) if sized and avail is not None else 0, data_dir)
    if units is not None:
        if tpcc:
            args.warehouses = units
        else:
            args.scale = units
    return {"mechanism": mechanism, "reason": reason}


def _emulate(args, run, tier: slowtier.SlowTier, steps, out) -> list[tuple[str, dict[str, str]]]:
    """Make the emulated tier and put every part placed in its directory on it instead."""
    est = args.warehouses * WAREHOUSE_BYTES if args.workload == "tpcc" else args.scale * SCALE_BYTES
    wal = argtypes.pg_memory_bytes(args.max_wal_size, plain_kb=1024)
    usable = spare_bytes(tier.emu.dir, 10)
    tier.open(slowtier.backing_bytes(3 * est + 2 * wal + slowtier.GIB, usable))
    run.doc["emulated"] = tier.describe()
    _note_once(run, args, out, tier.describe()["note"])
    here = os.path.realpath(tier.emu.dir)
    return [(n, {r: tier.mount if os.path.realpath(d) == here else d for r, d in pl.items()}) for n, pl in steps]


def _note_once(run, args, out, text: str) -> None:
    notes = run.doc.setdefault("notes", [])
    if text in notes:
        return
    notes.append(text)
    if not args.json:
        out.print(f"note: {esc(text)}", highlight=False)


def _sync(doc: dict[str, Any], step: dict[str, Any], args: argparse.Namespace) -> None:
    if not args.placement_matrix:
        doc.update(points=step["points"], knee=step["knee"], placement=step["placement"], load=step["load"],
                   memory=step.get("memory"))


def _points_table(points: list[dict[str, Any]], header: bool, step: str) -> Table:
    t = Table(show_header=header, box=None, pad_edge=False)
    for name, w in (("step", 11), ("clients", 7), ("TPS", 9), ("NOPM", 9), ("p50 ms", 8), ("p95 ms", 8),
                    ("p99 ms", 8), ("CPU%", 5), ("dev busy%", 9), ("await ms", 8), ("bottleneck", 10),
                    ("runs (TPS)", 16)):
        t.add_column(name, width=w, justify="left" if name in ("step", "bottleneck", "runs (TPS)") else "right",
                     no_wrap=True)
    for p in points:
        dev = busiest_device(p)
        lat = p["lat_ms"]
        t.add_row(step, str(p["clients"]), f"{p['tps']:,.0f}", "-" if p["nopm"] is None else f"{p['nopm']:,.0f}",
                  _f(lat["p50"]), _f(lat["p95"]), _f(lat["p99"]), f"{p['cpu_util']['busy_pct']:.0f}",
                  "-" if not dev else f"{dev['busy_pct']:.0f}", "-" if not dev else f"{dev['await_ms']:.2f}",
                  p["bottleneck"], spread_text(p.get("tps_spread"), 0))
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
