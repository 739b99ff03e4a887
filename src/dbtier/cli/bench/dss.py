"""`dbtier bench dss`: TPC-H power runs on DuckDB or the managed PostgreSQL, data and temp placed."""

from __future__ import annotations

import argparse
import os
import shutil
from pathlib import Path
from typing import Any, Protocol, cast

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from dbtier.cli import options as argtypes
from dbtier.cli import settings_options as pgopt
from dbtier.cli.markup import esc
from dbtier.cli.common import Run, add_output_options, console, emit
from dbtier.cli.own_checkout import default_dir
from dbtier.core.errors import DbtierError
from dbtier.core.units import parse_int
from dbtier.measure import cgroup as memcg
from dbtier.measure import slowtier
from dbtier.measure.machine import devices_for
from dbtier.measure.placed import where
from dbtier.measure.probe import spare_bytes
from dbtier.model.dss import dss_scan, dss_totals
from dbtier.workloads.engine import Engine, ServerSpec, engine_class, names
from dbtier.workloads.settings import pg_memory_bytes


MAX_TPCH_SCALE = 100_000        # TPC-H's largest official scale factor
MAX_THREADS = 4096
MEMORY = argtypes.size_or(("none",), lo=64 * 1024 * 1024)
# DuckDB's allocations outside memory_limit and the worker's interpreter took about 45 MiB at SF 1
# (a 100 MiB budget around memory_limit=60MB was OOM-killed in Q9, 120 MiB ran); the rest is page cache.
DSS_BUDGET_MARGIN_BYTES = 128 * 2**20
DSS_BUDGET_RULE = f"memory_limit + {DSS_BUDGET_MARGIN_BYTES // 2**20} MiB"


class _DssPaths(Protocol):
    """What a DSS engine (DuckDB, PostgreSQL) holds beyond the Engine calls: where open() put the data and
    the queries' spills."""
    db_path: Path | None
    temp_path: Path | None


def _opened_paths(engine: Engine) -> tuple[Path, Path]:
    """The database and temp paths of a DSS engine, both set by its open()."""
    p = cast(_DssPaths, engine)
    assert p.db_path is not None and p.temp_path is not None
    return p.db_path, p.temp_path


def register_dss(bsub: argparse._SubParsersAction) -> None:
    d = bsub.add_parser("dss", help="TPC-H power run on DuckDB or PostgreSQL with data and temp placed",
                        description="TPC-H (22 queries, single stream) on DuckDB (embedded, default) or the managed "
                        "PostgreSQL: data generated with DuckDB's tpch extension, every answer checked against the "
                        "reference answers, per-query time, rows, temp spilled and bytes read/written per device.")
    d.add_argument("--engine", choices=names("dss"), default="duckdb")
    d.add_argument("--scale", type=argtypes.positive_float(MAX_TPCH_SCALE), default=1.0,
                   help="TPC-H scale factor (default 1, about 1 GB of data)")
    d.add_argument("--data", help="directory for the database files (default . -- refused inside dbtier's own "
                   "checkout: give the directory to test)")
    d.add_argument("--temp", action="append", metavar="DIR",
                   help="directory for spills (DuckDB temp_directory, PostgreSQL temp_tablespaces); one per run: "
                   "run once per tier and report the runs together (or `dbtier lab FAST SLOW`)")
    d.add_argument("--memory-limit", type=pgopt.pg_memory(64, 2**31 - 1, example="500MB"),
                   help="DuckDB memory_limit / PostgreSQL work_mem, small to force spills (e.g. 500MB)")
    d.add_argument("--memory", type=MEMORY, metavar="SIZE|none",
                   help="duckdb: the queries' memory budget, page cache included (a memory cgroup around a worker "
                   "process), so spill reaches the temp directory's device; default with --memory-limit: "
                   f"{DSS_BUDGET_RULE}; none: unbounded (spill may stay in the page cache)")
    d.add_argument("--emulate", metavar="DIR=RATE",
                   help="root: make DIR (the --temp or --data directory) an emulated slow tier, a loop "
                   "device there throttled to RATE (e.g. 150iops, or 150riops,300wiops), as bench oltp --emulate; "
                   "its figures are labelled emulated")
    d.add_argument("--threads", type=argtypes.positive_int(MAX_THREADS), help="DuckDB threads (default: all cores)")
    d.add_argument("--compression", choices=("on", "off"), default="on",
                   help="off forces uncompressed DuckDB storage (PostgreSQL: not applicable)")
    d.add_argument("--repeat", type=argtypes.positive_int(argtypes.MAX_REPEAT), default=2,
                   help="power runs: the first cold, the rest warm (default 2)")
    d.add_argument("--generator", choices=("dbgen", "tpchgen"), default="dbgen",
                   help="dbgen (the tpch extension; answers checked; default) or tpchgen-cli (faster, all cores; its "
                   "text columns differ from dbgen's, so answers cannot be checked)")
    d.add_argument("--queries", default="1-22", help="a subset, e.g. 1,3,5-9 (default all 22)")
    d.add_argument("--probe", metavar="RUN_DIR", help="a probe run of the data directory: compare scan MB/s with it")
    d.add_argument("--port", type=argtypes.port(), help="postgres: the managed cluster's port")
    d.add_argument("--os-user", help="postgres: the OS user the cluster runs as")
    for name in names("dss"):   # each engine's own settings (PostgreSQL: --shared-buffers)
        pgopt.add_engine_options(d, engine_class(name, "dss"), "dss")
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


def _temp_arg(args: argparse.Namespace) -> None:
    """--temp given once at most: one temp directory per run (the runs of two tiers are reported together)."""
    temps = args.temp or []
    if len(temps) > 1:
        raise DbtierError(f"--temp is given {len(temps)} times ({', '.join(temps)}): a bench dss run places temp "
                          "in one directory", "run bench dss once per --temp and `dbtier report RUN1 RUN2`, or "
                          "`dbtier lab FAST SLOW --dss-memory-limit 80MB --skip probe,oltp,backup,plan` "
                          "(--emulate SLOW=150iops for a slow tier)")
    args.temp = temps[0] if temps else None


def _budget(args: argparse.Namespace) -> int | None:
    """The queries' memory budget in bytes (None: unbounded), from --memory and --memory-limit."""
    if args.memory == "none":
        return None
    if args.memory is not None and args.engine != "duckdb":
        raise DbtierError("--memory applies to --engine duckdb only",
                          "PostgreSQL's temp is bounded by --memory-limit (work_mem); leave --memory out")
    if args.memory is not None:
        return int(args.memory)
    if args.engine == "duckdb" and args.memory_limit:
        return pg_memory_bytes(args.memory_limit) + DSS_BUDGET_MARGIN_BYTES
    return None


def _emulation(args: argparse.Namespace):
    """The --emulate tier (not yet made), or None; refused unless it names the --temp or --data directory."""
    if not args.emulate:
        return None
    emu = slowtier.parse(args.emulate)
    here = os.path.realpath(emu.dir)
    if here not in {os.path.realpath(d) for d in (args.temp, args.data) if d}:
        raise DbtierError(f"--emulate {args.emulate}: {emu.dir} is neither the --temp nor the --data directory",
                          f"for example --temp {emu.dir} --emulate {emu.dir}=150iops")
    return emu


def _precheck_dss(args: argparse.Namespace) -> dict[str, float]:
    from dbtier.model.dss import estimate
    if not (args.scale > 0):
        raise DbtierError(f"--scale must be positive, got {args.scale}", "for example --scale 1")
    if not (args.repeat >= 1):
        raise DbtierError(f"--repeat must be at least 1, got {args.repeat}", "for example --repeat 2")
    for flag, d in (("--data", args.data), ("--temp", args.temp)):
        if d and not Path(d).is_dir():
            raise DbtierError(f"{flag} {d}: no such directory", "create it, or pass an existing directory")
    args.data = os.path.abspath(args.data)                       # what the result and the report say
    args.temp = os.path.abspath(args.temp) if args.temp else args.temp
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
    args.data = default_dir(args.data, "--data", "--data /mnt/nvme/dbtier")
    queries = _queries(args.queries)
    _temp_arg(args)
    est = _precheck_dss(args)
    budget = _budget(args)
    emulation = _emulation(args)
    probe_ref = _probe_reference(args.probe)
    dss.tpch_extension()  # the generator must be there before anything starts
    if args.generator == "tpchgen":
        dss.tpchgen()
    engine_class(args.engine, "dss").check()
    if args.engine == "postgres":
        if args.compression == "off":
            raise DbtierError("--compression off applies to DuckDB only",
                              "PostgreSQL has no table compression to switch off; leave --compression out")
    params = {"engine": args.engine, "scale": args.scale, "data": args.data, "temp": args.temp,
              "memory_limit": args.memory_limit, "threads": args.threads, "compression": args.compression,
              "repeat": args.repeat, "queries": list(queries), "estimate": est, "generator": args.generator,
              "memory": args.memory, "emulate": args.emulate,
              "method": "single stream (power run); run 1 cold (database reopened, OS page cache dropped when "
                        "root), later runs warm; every answer checked where reference answers exist"}
    run = Run("bench.dss", args, params, paths=[p for p in (args.data, args.temp) if p],
              inputs=[p for p in (args.probe, args.data, args.temp) if p])
    doc = run.doc
    doc.update({"bench": "dss", "engine": args.engine, "scale": args.scale, "placement": None,
                "placement_where": None, "load": None, "runs": [], "queries": [], "total_seconds": None,
                "geomean_seconds": None, "answers_ok": None,
                "emulated": None, "emulated_roles": [], "memory": None, "temp_tier": None})
    out = console(args)
    cls = engine_class(args.engine, "dss")
    placement = {"data": args.data, **({"temp": args.temp} if args.temp else {})}
    engine = tier = None
    try:
        if emulation:
            tier = slowtier.SlowTier(emulation)
            placement = dss.emulate(tier, placement, est, doc)
            if not args.json:
                out.print(f"note: {esc(doc['emulated']['note'])}", highlight=False)
        spec = ServerSpec(Path(placement["data"]), placement,
                          port=args.port, os_user=args.os_user, settings=cls.settings(pgopt.engine_options(cls, "dss", args), [1]),
                          options={"memory_limit": args.memory_limit, "threads": args.threads,
                                   "compression": args.compression, "generator": args.generator,
                                   "memory_budget_bytes": budget})
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                                   TextColumn("{task.completed}/{task.total}"), TimeElapsedColumn(), console=out,
                                   transient=True, disable=args.json) as progress:
            task = progress.add_task(f"generating TPC-H SF {args.scale:g}", total=len(queries) * args.repeat)
            engine = cls(spec)
            engine.open()
            db_path, temp_path = _opened_paths(engine)
            doc["placement"] = {"data": str(db_path), "temp": str(temp_path)}
            doc["placement_where"] = where(doc["placement"])   # each part's directory, disk, filesystem, mount
            devices = devices_for([str(db_path.parent), str(temp_path)])
            doc["devices"] = devices
            temp_dev = devices_for([str(temp_path if temp_path.exists() else temp_path.parent)])
            doc["temp_tier"] = {"device": temp_dev[0] if temp_dev else None}
            try:
                doc["load"] = engine.load_tpch(args.scale)
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
                                               + (f"(dev {rec['temp_device_write_bytes'] / 1e6:.1f} MB)  "
                                                  if rec["temp_bytes"] and rec.get("temp_device_write_bytes")
                                                  is not None else "")
                                               + f"read {rec['read_bytes'] / 1e6:8.1f} MB  "
                                               f"{'ok' if rec['answer_ok'] else ('unchecked' if rec['answer_ok'] is None else 'WRONG')}")
                doc["runs"].append([])
                dss.power_run(engine, r + 1, r == 0, devices, expected, on_query, queries,
                              doc["temp_tier"]["device"])
                doc["memory"] = dss.memory_record(engine, budget)
            dss_scan(doc, probe_ref, devices)
    finally:
        if engine is not None:
            log = engine.server_log()
            if log is not None and log.exists():
                shutil.copy(log, run.dir.raw_path("server-dss.log"))
            engine.close()
            doc["memory"] = dss.memory_record(engine, budget)
        if tier is not None:
            for left in tier.close():
                doc.setdefault("notes", []).append(f"the emulated tier could not be removed whole: {left}")
    run.finish("ok")

    def render() -> None:
        out.print(f"TPC-H SF {args.scale:g} on {args.engine}: total {doc['total_seconds']:.2f} s, geometric mean "
                  f"{doc['geomean_seconds']:.3f} s, answers {'ok' if doc['answers_ok'] else 'not checked'}")
        for g in doc.get("guards") or []:
            if g.get("kind") == "temp-in-memory":
                out.print(f"[bold yellow]temp tier not exercised[/bold yellow]: {esc(g['message'])}", highlight=False)
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
