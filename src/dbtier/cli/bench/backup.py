"""`dbtier bench backup`: an engine's backup methods (workloads/engine.py) to a directory, and to null. The
work is the library call workloads/backup.run; this module parses argv, stores the run and prints."""

from __future__ import annotations

import argparse
import contextlib
from typing import Any, Iterator

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from dbtier.cli import options as argtypes
from dbtier.cli.bench.dss import MAX_TPCH_SCALE
from dbtier.cli.markup import esc
from dbtier.cli.common import Sink, add_output_options, console, emit
from dbtier.cli.settings_options import engine_options
from dbtier.cli.own_checkout import default_dir
from dbtier.workloads import backup
from dbtier.workloads.backup import BackupRequest
from dbtier.workloads.engine import engine_class, names


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


def backup_request(args: argparse.Namespace) -> BackupRequest:
    """The request of `bench backup`'s options, checked before anything starts."""
    cls = engine_class(args.engine, "backup")
    data = default_dir(args.data, "--data", "--data /mnt/nvme/dbtier")
    methods = None if args.methods is None else tuple(m.strip() for m in args.methods.split(",") if m.strip())
    req = BackupRequest(engine=args.engine, to=args.to, data=data, scale=args.scale, methods=methods,
                        repeat=args.repeat, emulate=args.emulate, port=args.port, os_user=args.os_user,
                        options=engine_options(cls, "backup", args))
    return req


def run_backup(args: argparse.Namespace) -> int:
    req = backup_request(args)

    sink = Sink("bench.backup", args, paths=[req.data, req.to], inputs=[req.data, req.to])
    out = console(args)

    def on_note(note: str) -> None:
        if not args.json:
            out.print(f"note: {esc(note)}", highlight=False)

    def on_result(rec: dict[str, Any]) -> None:
        if not args.json:
            out.print(esc(line(rec)))

    backup.run(req, sink.start, sink.save, on_result=on_result, on_note=on_note,
               progress=lambda what: _progress(out, what, args.json))
    run = sink.run
    run.finish("ok")
    emit(run.doc, args, lambda: out.print(f"result: {esc(run.dir.result_path)}"))
    return 0


@contextlib.contextmanager
def _progress(out: Console, what: str, quiet: bool) -> Iterator[None]:
    """What runs, on the terminal: a bar with the time it has taken, gone when it ends."""
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), TimeElapsedColumn(),
                  console=out, transient=True, disable=quiet) as progress:
        progress.add_task(what, total=None)
        yield


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
