"""`dbtier bench backup`: an engine's backup methods (workloads/engine.py) to a directory, and to null."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from dbtier.cli import options as argtypes
from dbtier.cli.bench_dss import MAX_TPCH_SCALE
from dbtier.cli.markup import esc
from dbtier.cli.common import Run, add_output_options, console, emit
from dbtier.core.errors import DbtierError
from dbtier.measure.machine import devices_for
from dbtier.model.guards import backup_guards
from dbtier.workloads.engine import ServerSpec, engine_class, names


def register_backup(bsub: argparse._SubParsersAction) -> None:
    b = bsub.add_parser("backup", help="full-backup MB/s to a directory and to a null sink; which side limits it",
                        description="Back up a database dbtier builds (PostgreSQL: pgbench data in the managed "
                        "cluster, with pg_basebackup plain, tar and tar+gzip; DuckDB: TPC-H, with a file copy and "
                        "EXPORT DATABASE) to --to DIR and to a null sink; MB/s for each and the limiting side: "
                        "source read, target write, or CPU for compression.")
    b.add_argument("--engine", choices=names("backup"), default="postgres")
    b.add_argument("--to", required=True, metavar="DIR", help="the backup target directory")
    b.add_argument("--data", default=".", help="where the source database is built (default .)")
    b.add_argument("--scale", type=argtypes.positive_float(MAX_TPCH_SCALE), default=20,
                   help="source size: pgbench scale (16 MB each, default 20) or TPC-H SF for duckdb")
    b.add_argument("--methods", help="postgres: plain,tar,tar-gzip; mariadb: plain,stream,stream-gzip (default all "
                   "of the engine's)")
    b.add_argument("--repeat", type=argtypes.positive_int(argtypes.MAX_REPEAT), default=1,
                   help="runs of each backup (default 1); MB/s is their median, with their spread (the verdict "
                        "names a backup's limiting side from 2 runs or more)")
    b.add_argument("--port", type=argtypes.port())
    b.add_argument("--os-user")
    add_output_options(b)
    b.set_defaults(func=run_backup)


def run_backup(args: argparse.Namespace) -> int:
    cls = engine_class(args.engine, "backup")
    if args.methods is not None and not cls.backup_methods:
        raise DbtierError(f"--methods does not apply to {args.engine} (it runs {', '.join(cls.backup_fixed)})",
                          "leave --methods out")
    methods = [m.strip() for m in args.methods.split(",") if m.strip()] if args.methods is not None \
        else list(cls.backup_methods)
    bad = [m for m in methods if m not in cls.backup_methods]
    if cls.backup_methods and (bad or not methods):
        raise DbtierError(f"--methods: unknown method {', '.join(bad) or '(none)'}",
                          f"choose from {', '.join(cls.backup_methods)}")
    if not (args.scale > 0):
        raise DbtierError(f"--scale must be positive, got {args.scale}", "for example --scale 20")
    if args.engine != "duckdb" and not (args.scale >= 1):
        raise DbtierError(f"--scale {args.scale:g}: the {args.engine} source is pgbench/sysbench data, whose scale "
                          "is at least 1", "for example --scale 20")
    for flag, d in (("--to", args.to), ("--data", args.data)):
        if not Path(d).is_dir():
            raise DbtierError(f"{flag} {d}: no such directory", "create it, or pass an existing directory")
    args.to, args.data = os.path.abspath(args.to), os.path.abspath(args.data)   # what the result and report say
    cls.check()
    params = {"engine": args.engine, "to": args.to, "data": args.data, "scale": args.scale,
              "methods": methods or list(cls.backup_fixed), "repeat": args.repeat,
              "method": "each backup timed end to end; OS page cache dropped first when root; null sink: "
                        "pg_basebackup tar / mariadb-backup xbstream to stdout discarded / file read to /dev/null"}
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
                          f"{rec['mbps']:7,.0f} MB/s  {rec['bottleneck']}"
                          + (f"  (median of {rec['runs']}: {min(rec['mbps_runs']):,.0f}–{max(rec['mbps_runs']):,.0f})"
                             if rec.get("runs", 1) > 1 else "")))
    engine = cls(ServerSpec(Path(args.data), {}, port=args.port, os_user=args.os_user, settings=cls.settings(args, [1])))
    try:
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), TimeElapsedColumn(),
                                   console=out, transient=True, disable=args.json) as progress:
            progress.add_task(f"building the {args.engine} source", total=None)
            engine.open()
            doc["source"] = engine.backup_source(args.scale)
            run.save()
            engine.backup(Path(args.to), methods, devices, src_dev, dst_dev, on_result, args.repeat)
    finally:
        engine.close()
    run.finish("ok")
    emit(doc, args, lambda: out.print(f"result: {esc(run.dir.result_path)}"))
    return 0
