"""`dbtier bench dss`: TPC-H power runs on DuckDB or the managed PostgreSQL, data and temp placed.

The command reads argv into a `DssRequest` (workloads/dss.py: the checks and the work), calls `run`,
shows the per-query lines and the progress bar, finishes the run and renders it.
"""

from __future__ import annotations

import argparse
import contextlib
from typing import Any, Iterator

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from dbtier.cli import options as argtypes
from dbtier.cli import settings_options as pgopt
from dbtier.cli.markup import esc
from dbtier.cli.common import Sink, add_output_options, console, emit
from dbtier.cli.own_checkout import default_dir
from dbtier.core.errors import DbtierError
from dbtier.workloads import dss
from dbtier.workloads.dss import DSS_BUDGET_RULE, DssRequest, PowerShow
from dbtier.workloads.engine import engine_class, names


MAX_TPCH_SCALE = 100_000        # TPC-H's largest official scale factor
MAX_THREADS = 4096
MEMORY = argtypes.size_or(("none",), lo=64 * 1024 * 1024)


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


def _temp_arg(args: argparse.Namespace) -> None:
    """--temp given once at most: one temp directory per run (the runs of two tiers are reported together)."""
    temps = args.temp or []
    if len(temps) > 1:
        raise DbtierError(f"--temp is given {len(temps)} times ({', '.join(temps)}): a bench dss run places temp "
                          "in one directory", "run bench dss once per --temp and `dbtier report RUN1 RUN2`, or "
                          "`dbtier lab FAST SLOW --dss-memory-limit 80MB --skip probe,oltp,backup,plan` "
                          "(--emulate SLOW=150iops for a slow tier)")
    args.temp = temps[0] if temps else None


def dss_request(args: argparse.Namespace) -> DssRequest:
    """The request of `bench dss`'s options, checked before anything starts."""
    args.data = default_dir(args.data, "--data", "--data /mnt/nvme/dbtier")
    queries = dss.parse_queries(args.queries)
    _temp_arg(args)
    cls = engine_class(args.engine, "dss")
    return DssRequest(engine=args.engine, scale=args.scale, data=args.data, temp=args.temp,
                      memory_limit=args.memory_limit, memory=args.memory, threads=args.threads,
                      compression=args.compression, repeat=args.repeat, queries=queries, generator=args.generator,
                      probe=args.probe, port=args.port, os_user=args.os_user,
                      options=pgopt.engine_options(cls, "dss", args), emulate=args.emulate)


def run_dss(args: argparse.Namespace) -> int:
    req = dss_request(args)
    sink = Sink("bench.dss", args, paths=[p for p in (req.data, req.temp) if p],
                inputs=[p for p in (args.probe, req.data, req.temp) if p])
    out = console(args)

    def on_note(text: str) -> None:
        if not args.json:
            out.print(f"note: {esc(text)}", highlight=False)

    dss.run(req, sink.start, sink.save, lambda total: _progress(out, req.scale, total, args.json), on_note)
    run = sink.run
    run.finish("ok")
    doc = run.doc

    def render() -> None:
        out.print(f"TPC-H SF {args.scale:g} on {args.engine}: total {doc['total_seconds']:.2f} s, geometric mean "
                  f"{doc['geomean_seconds']:.3f} s, answers {'ok' if doc['answers_ok'] else 'not checked'}")
        for g in doc.get("guards") or []:
            if g.get("kind") == "temp-in-memory":
                out.print(f"[bold yellow]temp tier not exercised[/bold yellow]: {esc(g['message'])}", highlight=False)
        out.print(f"result: {esc(run.dir.result_path)}")
    emit(doc, args, render)
    return 0


@contextlib.contextmanager
def _progress(out: Console, scale: float, total: int, quiet: bool) -> Iterator[PowerShow]:
    """The power runs on the terminal: a bar over every query timed, and each query's line as it comes."""
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=out, transient=True, disable=quiet) as progress:
        task = progress.add_task(f"generating TPC-H SF {scale:g}", total=total)

        def run_started(run_no: int, cold: bool) -> None:
            progress.update(task, description=f"run {run_no} ({'cold' if cold else 'warm'})")

        def query_done(rec: dict[str, Any]) -> None:
            progress.advance(task)
            if not quiet:
                progress.console.print(f"run {rec['run']} Q{rec['query']:>2}  {rec['seconds']:8.3f} s  "
                                       f"{rec['rows']:>6} rows  temp {rec['temp_bytes'] / 1e6:8.1f} MB  "
                                       + (f"(dev {rec['temp_device_write_bytes'] / 1e6:.1f} MB)  "
                                          if rec["temp_bytes"] and rec.get("temp_device_write_bytes")
                                          is not None else "")
                                       + f"read {rec['read_bytes'] / 1e6:8.1f} MB  "
                                       f"{'ok' if rec['answer_ok'] else ('unchecked' if rec['answer_ok'] is None else 'WRONG')}")

        yield PowerShow(run_started, query_done)


# ---------------------------------------------------------------------- backup
