"""`dbtier bench backup`: an engine's backup methods (workloads/engine.py) to a directory, and to null."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from dbtier.cli import options as argtypes
from dbtier.cli.bench.dss import MAX_TPCH_SCALE
from dbtier.cli.markup import esc
from dbtier.cli.common import Run, add_output_options, console, emit
from dbtier.cli.settings_options import engine_options
from dbtier.cli.own_checkout import default_dir
from dbtier.core.errors import DbtierError
from dbtier.measure import slowtier
from dbtier.measure.machine import devices_for
from dbtier.model.dss import BACKUP_RULE, estimate
from dbtier.model.guards import backup_guards
from dbtier.workloads.engine import ServerSpec, engine_class, names

# The source's size per unit of --scale, to size an emulated tier: pgbench 16 MB a scale (with WAL and
# indexes), sysbench's 4 tables of 100,000 rows a scale (with InnoDB's own files), TPC-H per SF (model.dss).
_SOURCE_BYTES_PER_SCALE = {"postgres": 24e6, "mariadb": 128e6}


def register_backup(bsub: argparse._SubParsersAction) -> None:
    b = bsub.add_parser("backup", help="full-backup MB/s to a directory and to a null sink; which side limits it",
                        description="Back up a database dbtier builds (PostgreSQL: pgbench data in the managed "
                        "cluster, with pg_basebackup plain, tar and tar+gzip; DuckDB: TPC-H, with a file copy and "
                        "EXPORT DATABASE) to --to DIR and to a null sink; MB/s for each and the limiting side: "
                        "source read, target write, or CPU for compression.")
    b.add_argument("--engine", choices=names("backup"), default="postgres")
    b.add_argument("--to", required=True, metavar="DIR", help="the backup target directory")
    b.add_argument("--data", help="where the source database is built (default . -- refused inside dbtier's own "
                   "checkout: give the directory to test)")
    b.add_argument("--scale", type=argtypes.positive_float(MAX_TPCH_SCALE), default=20,
                   help="source size: pgbench scale (16 MB each, default 20) or TPC-H SF for duckdb")
    b.add_argument("--methods", help="postgres: plain,tar,tar-gzip; mariadb: plain,stream,stream-gzip (default all "
                   "of the engine's)")
    b.add_argument("--repeat", type=argtypes.positive_int(argtypes.MAX_REPEAT), default=1,
                   help="runs of each backup (default 1); MB/s is their median, with their spread (the verdict "
                        "names a backup's limiting side from 2 runs or more)")
    b.add_argument("--emulate", metavar="DIR=RATE",
                   help="root: make DIR (--to or --data) an emulated tier, a loop device there throttled to RATE: "
                        "bytes per second (e.g. 40MiBps, 200MBps) or I/Os per second (150iops, 150riops,300wiops); "
                        "its figures are labelled emulated")
    b.add_argument("--port", type=argtypes.port())
    b.add_argument("--os-user")
    add_output_options(b)
    b.set_defaults(func=run_backup)


def run_backup(args: argparse.Namespace) -> int:
    cls = engine_class(args.engine, "backup")
    args.data = default_dir(args.data, "--data", "--data /mnt/nvme/dbtier")
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
    emulation = _emulation(args)
    cls.check()
    params = {"engine": args.engine, "to": args.to, "data": args.data, "scale": args.scale,
              "methods": methods or list(cls.backup_fixed), "repeat": args.repeat, "emulate": args.emulate,
              "method": "each backup timed end to end, its writes synced to the device before the clock stops; "
                        "OS page cache dropped first when root; null sink: pg_basebackup tar / mariadb-backup "
                        "xbstream to stdout discarded / file read to /dev/null",
              "limit_rule": BACKUP_RULE}
    run = Run("bench.backup", args, params, paths=[args.data, args.to], inputs=[args.data, args.to])
    doc = run.doc
    doc.update({"bench": "backup", "engine": args.engine, "source": None, "targets": [], "emulated": None})
    out = console(args)
    tier = slowtier.SlowTier(emulation) if emulation else None
    try:
        data, to = args.data, args.to
        if tier:
            per = _SOURCE_BYTES_PER_SCALE.get(args.engine) or estimate("duckdb", 1)["disk_gb"] * 1e9
            tier.open_for(2 * args.scale * per)
            doc["emulated"] = tier.describe()
            placed = tier.place({"source": args.data, "target": args.to})
            data, to = placed["source"], placed["target"]
            doc["emulated"]["roles"] = [r for r, d in (("source", data), ("target", to)) if d == tier.mount]
            doc.setdefault("notes", []).append(doc["emulated"]["note"])
            if not args.json:
                out.print(f"note: {esc(doc['emulated']['note'])}", highlight=False)
            run.save()
        _run_backups(args, cls, methods, doc, run, out, data, to, tier)
    finally:
        if tier:
            for left in tier.close():
                doc.setdefault("notes", []).append(f"the emulated tier could not be removed whole: {left}")
    run.finish("ok")
    emit(doc, args, lambda: out.print(f"result: {esc(run.dir.result_path)}"))
    return 0


def _emulation(args: argparse.Namespace) -> slowtier.Emulation | None:
    """--emulate DIR=RATE, DIR one of --to and --data (checked before anything is built), or None."""
    if not args.emulate:
        return None
    emu = slowtier.parse(args.emulate, allow_bps=True)
    here = os.path.realpath(emu.dir)
    if here not in (os.path.realpath(args.to), os.path.realpath(args.data)):
        raise DbtierError(f"--emulate {args.emulate}: {emu.dir} is neither --to ({args.to}) nor --data ({args.data})",
                          "emulate the backup target (--emulate TO_DIR=40MiBps) or the source's directory")
    return emu


def line(rec: dict[str, Any]) -> str:
    """A backup's terminal line: bytes, seconds and MB/s of one run (bytes / seconds = MB/s), the median of
    the runs named as such beside it."""
    text = (f"{rec['method']:<24} {rec['target']:<4} {rec['bytes'] / 1e6:8,.0f} MB {rec['seconds']:7.2f} s "
            f"{rec['mbps']:7,.0f} MB/s  {rec['bottleneck']}")
    if rec.get("runs", 1) > 1:
        sp = rec["mbps_spread"]
        text += (f"  (run {rec['run']} of {rec['runs']}, the middle one; median {sp['median']:,.0f} MB/s, "
                 f"runs {sp['min']:,.0f}–{sp['max']:,.0f})")
    return text


def _run_backups(args: argparse.Namespace, cls, methods: list[str], doc: dict[str, Any], run: Run, out,
                 data: str, to: str, tier: slowtier.SlowTier | None) -> None:
    src_dev = next(iter(devices_for([data])), None)
    dst_dev = next(iter(devices_for([to])), None)
    devices = [d for d in dict.fromkeys([src_dev, dst_dev]) if d]
    limit = {k: getattr(tier.emu, k) for k in ("read_bps", "write_bps", "read_iops", "write_iops")} if tier else None

    def on_result(rec: dict[str, Any]) -> None:
        raw = rec.pop("raw_outputs", None) or {}
        for name, text in raw.items():
            run.dir.raw_path(name).write_text(text)
        rec["raw_files"] = [f"raw/{name}" for name in raw]
        if tier:       # the limiting side against the throttle of the side that is emulated
            from dbtier.workloads.backup import judge
            judge(rec, src_dev, dst_dev, limit if data == tier.mount else None,
                          limit if to == tier.mount else None)
        doc["targets"].append(rec)
        doc["guards"] = backup_guards(doc["targets"])
        run.save()
        if not args.json:
            out.print(esc(line(rec)))
    engine = cls(ServerSpec(Path(data), {}, port=args.port, os_user=args.os_user, settings=cls.settings(engine_options(cls, "backup", args), [1])))
    try:
        with Progress(TextColumn("[bold]{task.description}"), BarColumn(), TimeElapsedColumn(),
                                   console=out, transient=True, disable=args.json) as progress:
            progress.add_task(f"building the {args.engine} source", total=None)
            engine.open()
            doc["source"] = engine.backup_source(args.scale)
            run.save()
            engine.backup(Path(to), methods, devices, src_dev, dst_dev, on_result, args.repeat)
    finally:
        engine.close()
