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
from dbtier.core.units import parse_int
from dbtier.measure import cgroup as memcg
from dbtier.measure import slowtier
from dbtier.measure.machine import devices_for
from dbtier.measure.probe import spare_bytes
from dbtier.report.figures import busiest_device, spread_text
from dbtier.model.dss import dss_scan, dss_totals
from dbtier.model.guards import backup_guards, mark_oltp
from dbtier.model.placement import matrix_steps
from dbtier.model.oltp import KNEE_RULE, NOT_MEASURED_REMOTE, WORKLOADS, pgbench_seconds
from dbtier.workloads.dsn import check_dsn, redact_dsn
from dbtier.workloads.postgres import Cluster, Settings, find_bindir, parse_placement
from dbtier.workloads.tpcc import DEVIATIONS as TPCC_DEVIATIONS

# Upper bounds of the numeric options: far past any real run, and small enough that nothing derived
# from them (connections, bytes, seconds of progress) can overflow.
MAX_WAREHOUSES = 100_000        # about 10 TB of TPC-C-like data
MAX_PGBENCH_SCALE = 1_000_000   # about 16 TB
DEFAULT_WAREHOUSES, DEFAULT_SCALE = 1, 10
WAREHOUSE_BYTES, SCALE_BYTES = 110e6, 16e6   # loaded database per tpcc warehouse / pgbench scale unit, about
MAX_CLIENTS = 10_000            # max_connections is clients + 10
MAX_REPEAT = 1000
MAX_RATE = 1e9                  # transactions/s
MAX_TPCH_SCALE = 100_000        # TPC-H's largest official scale factor
MAX_THREADS = 4096
# shared_buffers: at least 16 pages of 8 kB; at most PostgreSQL's INT_MAX/2 pages; a bare number is pages
PG_SHARED_BUFFERS = argtypes.pg_memory(128, (2**30 - 1) * 8.0, plain_kb=8, example="128MB")
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
    o.add_argument("--repeat", type=argtypes.positive_int(MAX_REPEAT), default=1,
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
    o.add_argument("--shared-buffers", type=PG_SHARED_BUFFERS, default="128MB",
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
    args.memory_fallback = fallback
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
                    _run_step(args, run, step, placement, settings, clients, progress, task, out)
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


def _run_step(args, run, step, placement, settings, clients, progress, task, out) -> None:
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
            step["memory"] = _memory_budget(args, cluster, step, cg, run, progress.console, clients)
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


def _memory_budget(args, cluster, step, cg, run, out, clients: list[int]) -> dict[str, Any]:
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
    fallback = getattr(args, "memory_fallback", None)
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
    """Where no memory cgroup can be made: None when one can; else {mechanism, reason}. With the data set's
    size left to dbtier, it is sized past free memory when the data directory's disk can hold it (`size`,
    args changed); otherwise the run goes on unbounded and says its reads will come from memory (`none`)."""
    why = memcg.can_make()
    if why is None:
        return None
    head = f"no memory cgroup can be made ({why})"
    try:
        avail = memcg.mem_available_bytes(Path("/proc/meminfo").read_text())
    except OSError:
        avail = None
    if not sized:
        return {"mechanism": "none", "reason": f"{head}: the server runs unbounded with the data set asked for, so "
                "reads will come from memory wherever it fits there"}
    if avail is None:
        return {"mechanism": "none", "reason": f"{head}, and /proc/meminfo gives no MemAvailable: reads will come "
                "from memory"}
    data_dir = steps[0][1].get("data") or args.dir
    spare = spare_bytes(data_dir, 10)
    tpcc = args.workload == "tpcc"
    units, why_size = memcg.size_past_memory(avail, WAREHOUSE_BYTES if tpcc else SCALE_BYTES,
                                             MAX_WAREHOUSES if tpcc else MAX_PGBENCH_SCALE, spare)
    if units is None:
        return {"mechanism": "none", "reason": f"{head}; {why_size}: reads will come from memory"}
    if tpcc:
        args.warehouses = units
    else:
        args.scale = units
    return {"mechanism": "size", "reason": f"{head}; the data set is {why_size} on {data_dir}"}


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


def register_dss(bsub: argparse._SubParsersAction) -> None:
    d = bsub.add_parser("dss", help="TPC-H power run on DuckDB or PostgreSQL with data and temp placed",
                        description="TPC-H (22 queries, single stream) on DuckDB (embedded, default) or the managed "
                        "PostgreSQL: data generated with DuckDB's tpch extension, every answer checked against the "
                        "reference answers, per-query time, rows, temp spilled and bytes read/written per device.")
    d.add_argument("--engine", choices=("duckdb", "postgres"), default="duckdb")
    d.add_argument("--scale", type=argtypes.positive_float(MAX_TPCH_SCALE), default=1.0,
                   help="TPC-H scale factor (default 1, about 1 GB of data)")
    d.add_argument("--data", default=".", help="directory for the database files (default .)")
    d.add_argument("--temp", help="directory for spills (DuckDB temp_directory, PostgreSQL temp_tablespaces)")
    d.add_argument("--memory-limit", type=argtypes.pg_memory(64, 2**31 - 1, example="500MB"),
                   help="DuckDB memory_limit / PostgreSQL work_mem, small to force spills (e.g. 500MB)")
    d.add_argument("--threads", type=argtypes.positive_int(MAX_THREADS), help="DuckDB threads (default: all cores)")
    d.add_argument("--compression", choices=("on", "off"), default="on",
                   help="off forces uncompressed DuckDB storage (PostgreSQL: not applicable)")
    d.add_argument("--repeat", type=argtypes.positive_int(MAX_REPEAT), default=2,
                   help="power runs: the first cold, the rest warm (default 2)")
    d.add_argument("--generator", choices=("dbgen", "tpchgen"), default="dbgen",
                   help="dbgen (the tpch extension; answers checked; default) or tpchgen-cli (faster, all cores; its "
                   "text columns differ from dbgen's, so answers cannot be checked)")
    d.add_argument("--queries", default="1-22", help="a subset, e.g. 1,3,5-9 (default all 22)")
    d.add_argument("--probe", metavar="RUN_DIR", help="a probe run of the data directory: compare scan MB/s with it")
    d.add_argument("--port", type=argtypes.port(), help="postgres: the managed cluster's port")
    d.add_argument("--os-user", help="postgres: the OS user the cluster runs as")
    d.add_argument("--shared-buffers", type=PG_SHARED_BUFFERS, default="256MB",
                   help="postgres: shared_buffers (default 256MB)")
    add_output_options(d)
    d.set_defaults(func=run_dss)


def _queries(text: str) -> tuple[int, ...]:
    out: list[int] = []
    try:
        for part in text.split(","):
            a, _, b = part.strip().partition("-")
            lo, hi = parse_int(a), (parse_int(b) if b else None)   # ASCII digits: int() takes '٣' and '1_0'
            if not (1 <= lo <= 22 and (hi is None or 1 <= hi <= 22)):
                raise DbtierError(f"--queries: TPC-H has queries 1 to 22 (got {text})", "for example --queries 1-22")
            out += list(range(lo, hi + 1)) if hi is not None else [lo]
    except ValueError as exc:
        raise DbtierError(f"--queries: {text!r} is not a list of query numbers", "for example --queries 1,3,5-9") from exc
    if not out or any(q < 1 or q > 22 for q in out):
        raise DbtierError(f"--queries: TPC-H has queries 1 to 22 (got {text})", "for example --queries 1-22")
    return tuple(sorted(set(out)))


def _precheck_dss(args: argparse.Namespace) -> dict[str, float]:
    from dbtier.model.dss import estimate
    if not (args.scale > 0):
        raise DbtierError(f"--scale must be positive, got {args.scale}", "for example --scale 1")
    if not (args.repeat >= 1):
        raise DbtierError(f"--repeat must be at least 1, got {args.repeat}", "for example --repeat 2")
    for flag, d in (("--data", args.data), ("--temp", args.temp)):
        if d and not Path(d).is_dir():
            raise DbtierError(f"{flag} {d}: no such directory", "create it, or pass an existing directory")
    est = estimate(args.engine, args.scale, args.compression)
    try:
        avail = memcg.mem_available_bytes(Path("/proc/meminfo").read_text())
    except OSError:
        avail = None
    if avail is not None and avail < est["memory_gb"] * 1e9:
        raise DbtierError(
            f"not enough memory for TPC-H SF {args.scale:g}: generating it needs about {est['memory_gb']:.1f} GB, "
            f"{avail / 1e9:.1f} GB is available", "choose a smaller --scale")
    free = spare_bytes(args.data, 10)
    if free < est["disk_gb"] * 1e9:
        raise DbtierError(
            f"not enough disk for TPC-H SF {args.scale:g} on {args.engine}: it needs about {est['disk_gb']:.1f} GB "
            f"in {args.data}, which has {max(free, 0) / 1e9:.1f} GB to spare after dbtier's free-space margin",
            "choose a smaller --scale or a directory with more space")
    return est


def run_dss(args: argparse.Namespace) -> int:
    from dbtier.workloads import dss
    queries = _queries(args.queries)
    est = _precheck_dss(args)
    probe_ref = _probe_reference(args.probe)
    dss.tpch_extension()  # the generator must be there before anything starts
    if args.generator == "tpchgen":
        dss.tpchgen()
    if args.engine == "postgres":
        find_bindir()
        if args.compression == "off":
            raise DbtierError("--compression off applies to DuckDB only",
                              "PostgreSQL has no table compression to switch off; leave --compression out")
    params = {"engine": args.engine, "scale": args.scale, "data": args.data, "temp": args.temp,
              "memory_limit": args.memory_limit, "threads": args.threads, "compression": args.compression,
              "repeat": args.repeat, "queries": list(queries), "estimate": est, "generator": args.generator,
              "method": "single stream (power run); run 1 cold (database reopened, OS page cache dropped when "
                        "root), later runs warm; every answer checked where reference answers exist"}
    run = Run("bench", args, params, paths=[p for p in (args.data, args.temp) if p],
              inputs=[p for p in (args.probe, args.data, args.temp) if p])
    doc = run.doc
    doc.update({"bench": "dss", "engine": args.engine, "scale": args.scale, "placement": None, "load": None,
                "runs": [], "queries": [], "total_seconds": None, "geomean_seconds": None, "answers_ok": None})
    out = console(args)
    engine = None
    cluster = None
    try:
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                                   TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(), console=out,
                                   transient=True, disable=args.json) as progress:
            task = progress.add_task(f"generating TPC-H SF {args.scale:g}", total=len(queries) * args.repeat)
            if args.engine == "duckdb":
                engine = dss.DuckDBEngine(Path(args.data), Path(args.temp) if args.temp else None,
                                          args.memory_limit, args.threads, args.compression, args.generator)
            else:
                placement = {"data": args.data, **({"temp": args.temp} if args.temp else {})}
                cluster = Cluster(args.data, placement, Settings(shared_buffers=args.shared_buffers),
                                  port=args.port, os_user=args.os_user)
                cluster.__enter__()
                engine = dss.PostgresEngine(cluster, args.memory_limit, args.generator)
            doc["placement"] = {"data": str(engine.db_path), "temp": str(engine.temp_path)}
            devices = devices_for([str(engine.db_path.parent), str(engine.temp_path)])
            doc["devices"] = devices
            try:
                doc["load"] = engine.load(args.scale)
            except Exception as exc:
                raise dss.engine_error(exc, f"loading TPC-H SF {args.scale:g}", args.engine) from exc
            run.save()
            expected = dss.answers(args.scale) if args.generator == "dbgen" else None
            doc["answers_checked"] = expected is not None
            for r in range(args.repeat):
                progress.update(task, description=f"run {r + 1} ({'cold' if r == 0 else 'warm'})")

                def on_query(rec: dict[str, Any], r=r) -> None:
                    progress.advance(task)
                    doc["runs"][r].append(rec)
                    dss_totals(doc)
                    run.save()
                    if not args.json:
                        progress.console.print(f"run {r + 1} Q{rec['query']:>2}  {rec['seconds']:8.3f} s  "
                                               f"{rec['rows']:>6} rows  temp {rec['temp_bytes'] / 1e6:8.1f} MB  "
                                               f"read {rec['read_bytes'] / 1e6:8.1f} MB  "
                                               f"{'ok' if rec['answer_ok'] else ('unchecked' if rec['answer_ok'] is None else 'WRONG')}")
                doc["runs"].append([])
                dss.power_run(engine, r + 1, r == 0, devices, expected, on_query, queries)
            dss_scan(doc, probe_ref, devices)
    finally:
        if engine is not None:
            engine.close()
        if cluster is not None:
            if cluster.log_path and Path(cluster.log_path).exists():
                shutil.copy(cluster.log_path, run.dir.raw_path("server-dss.log"))
            cluster.close()
    run.finish("ok")

    def render() -> None:
        out.print(f"TPC-H SF {args.scale:g} on {args.engine}: total {doc['total_seconds']:.2f} s, geometric mean "
                  f"{doc['geomean_seconds']:.3f} s, answers {'ok' if doc['answers_ok'] else 'not checked'}")
        out.print(f"result: {esc(run.dir.result_path)}")
    emit(doc, args, render)
    return 0


def _probe_reference(probe_dir: str | None) -> dict[str, Any] | None:
    """The --probe run, read (and refused) before the benchmark starts, not after it."""
    if not probe_dir:
        return None
    from dbtier.results.store import load_run
    probe = load_run(probe_dir)
    if probe.get("command") != "probe":
        raise DbtierError(f"--probe {probe_dir}: not a probe run ({probe.get('command')})", "pass a `dbtier probe` run directory")
    targets = (probe.get("machine") or {}).get("targets")
    if not isinstance(targets, list):
        raise DbtierError(f"--probe {probe_dir}: its result.json has no machine.targets list",
                          "pass a run directory written by `dbtier probe`")
    return probe


# ---------------------------------------------------------------------- backup


def register_backup(bsub: argparse._SubParsersAction) -> None:
    b = bsub.add_parser("backup", help="full-backup MB/s to a directory and to a null sink; which side limits it",
                        description="Back up a database dbtier builds (PostgreSQL: pgbench data in the managed "
                        "cluster, with pg_basebackup plain, tar and tar+gzip; DuckDB: TPC-H, with a file copy and "
                        "EXPORT DATABASE) to --to DIR and to a null sink; MB/s for each and the limiting side: "
                        "source read, target write, or CPU for compression.")
    b.add_argument("--engine", choices=("postgres", "duckdb"), default="postgres")
    b.add_argument("--to", required=True, metavar="DIR", help="the backup target directory")
    b.add_argument("--data", default=".", help="where the source database is built (default .)")
    b.add_argument("--scale", type=argtypes.positive_float(MAX_TPCH_SCALE), default=20,
                   help="source size: pgbench scale (16 MB each, default 20) or TPC-H SF for duckdb")
    b.add_argument("--methods", default="plain,tar,tar-gzip", help="postgres: plain,tar,tar-gzip (default all)")
    b.add_argument("--port", type=argtypes.port())
    b.add_argument("--os-user")
    add_output_options(b)
    b.set_defaults(func=run_backup)


def run_backup(args: argparse.Namespace) -> int:
    from dbtier.workloads import backup, dss
    from dbtier.workloads.oltp import Database, load
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    bad = [m for m in methods if m not in backup.PG_METHODS]
    if bad or not methods:
        raise DbtierError(f"--methods: unknown method {', '.join(bad) or '(none)'}",
                          f"choose from {', '.join(backup.PG_METHODS)}")
    if not (args.scale > 0):
        raise DbtierError(f"--scale must be positive, got {args.scale}", "for example --scale 20")
    if args.engine == "postgres" and not (args.scale >= 1):
        raise DbtierError(f"--scale {args.scale:g}: the postgres source is pgbench data, whose scale is at least 1",
                          "for example --scale 20")
    for flag, d in (("--to", args.to), ("--data", args.data)):
        if not Path(d).is_dir():
            raise DbtierError(f"{flag} {d}: no such directory", "create it, or pass an existing directory")
    if args.engine == "postgres":
        find_bindir()
    else:
        dss.tpch_extension()
    params = {"engine": args.engine, "to": args.to, "data": args.data, "scale": args.scale,
              "methods": methods if args.engine == "postgres" else ["file copy", "EXPORT DATABASE parquet"],
              "method": "each backup timed end to end; OS page cache dropped first when root; null sink: "
                        "pg_basebackup tar to stdout discarded / file read to /dev/null"}
    run = Run("bench", args, params, paths=[args.data, args.to], inputs=[args.data, args.to])
    doc = run.doc
    doc.update({"bench": "backup", "engine": args.engine, "source": None, "targets": []})
    out = console(args)
    src_dev = (devices_for([args.data]) or [None])[0]
    dst_dev = (devices_for([args.to]) or [None])[0]
    devices = [d for d in dict.fromkeys([src_dev, dst_dev]) if d]

    def on_result(rec: dict[str, Any]) -> None:
        doc["targets"].append(rec)
        doc["guards"] = backup_guards(doc["targets"])
        run.save()
        if not args.json:
            out.print(esc(f"{rec['method']:<24} {rec['target']:<4} {rec['bytes'] / 1e6:8,.0f} MB {rec['seconds']:7.2f} s "
                          f"{rec['mbps']:7,.0f} MB/s  {rec['bottleneck']}"))
    cluster = engine = None
    try:
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), TimeElapsedColumn(),
                                   console=out, transient=True, disable=args.json) as progress:
            progress.add_task(f"building the {args.engine} source", total=None)
            if args.engine == "postgres":
                cluster = Cluster(args.data, {}, Settings(), port=args.port, os_user=args.os_user)
                cluster.__enter__()
                db = Database(cluster)
                db.create()
                doc["source"] = load(db, "tpcb", 1, int(args.scale), lambda m: None)
                run.save()
                backup.pg_backups(cluster, Path(args.to), methods, devices, src_dev, dst_dev, on_result)
            else:
                engine = dss.DuckDBEngine(Path(args.data), None, None, None, "on")
                doc["source"] = engine.load(args.scale)
                engine.close_conn()
                run.save()
                backup.duckdb_backups(engine.db_path, Path(args.to), devices, src_dev, dst_dev, on_result)
    finally:
        if engine is not None:
            engine.close()
        if cluster is not None:
            cluster.close()
    run.finish("ok")
    emit(doc, args, lambda: out.print(f"result: {esc(run.dir.result_path)}"))
    return 0
