"""`dbtier simulate convert TRACE`: a trace's compact Parquet copy in a run directory (sim/columnar.py),
read once and replayed often by `simulate run RUN_DIR`."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from dbtier.cli.simulate import render
from dbtier.cli.common import Run, console, emit
from dbtier.cli.markup import esc
from dbtier.core.errors import DbtierError

if TYPE_CHECKING:
    from dbtier.sim.trace.traces import Trace


def _room(run: Run, source_bytes: int) -> None:
    """Refuse a copy the disk cannot take with the 10% margin every writer keeps. The Parquet copy is smaller
    than its text (about 10 bytes a request against 50 or more) and near its gzip: the source's size bounds it."""
    free = shutil.disk_usage(run.dir.path).free
    if source_bytes > free * 0.9:
        raise DbtierError(f"{run.dir.path}: the converted copy may take up to {source_bytes / 1e9:,.2f} GB and "
                          f"{free / 1e9:,.2f} GB is free (a 10% margin kept)",
                          "free some space, or write the run elsewhere with --out")


def run_convert(args: argparse.Namespace) -> int:
    from dbtier.sim.trace import columnar
    from dbtier.sim.trace.traces import read_chunks, read_trace
    path = Path(args.trace)
    if path.is_dir():
        raise DbtierError(f"{path} is a directory: convert reads a trace file", "pass the trace file itself")
    if not path.is_file():
        read_trace(path, args.format, args.columns)     # read_trace's own message for a missing or odd path
    params = {"action": "convert", "trace": str(path), "format": args.format, "columns": args.columns,
              "skip_bad": args.skip_bad, "sort": args.sort}
    with render.Progress(console(args), args.json) as prog:
        run = Run("simulate.convert", args, params, inputs=[str(path)])
        out = run.dir.path / columnar.CONVERTED
        key = columnar.source_key(path, lambda f: prog("hashing the source", f))
        prog("converting", 0.0)
        try:
            _room(run, key["bytes"])
            if args.sort:               # sorting needs the whole trace in memory
                trace = read_trace(path, args.format, args.columns, skip_bad=args.skip_bad, sort=True)
                m = columnar.write(trace, out, key)
            else:                       # one chunk in memory at a time, whatever the trace's size
                chunks = read_chunks(path, args.format, args.columns, skip_bad=args.skip_bad)

                def meta() -> Trace:
                    assert chunks.meta is not None      # set once the chunks are exhausted, when write_chunks asks
                    return chunks.meta
                m = columnar.write_chunks(chunks, meta, out, key)
        except DbtierError:
            shutil.rmtree(out, ignore_errors=True)        # a bad line part-way: the copy so far is no copy
            raise
        except OSError as exc:
            shutil.rmtree(out, ignore_errors=True)        # ours, half written
            raise DbtierError(f"{out}: writing the converted copy failed ({exc.strerror or exc})",
                              "free some space, or write the run elsewhere with --out") from None
    run.doc["trace"] = m["summary"]
    run.doc["convert"] = {"source": key, "path": str(out), "format": m["format"], "requests": m["requests"],
                          "volumes": len(m["volumes"]), "bytes_written": m["bytes_written"],
                          "lines": m["lines"], "skipped_bad_lines": m["skipped"]}
    run.finish()
    con = console(args)
    emit(run.doc, args, lambda: con.print(
        f"{esc(str(path))} ({esc(m['format'])}): {m['requests']:,} requests, {len(m['volumes']):,} volumes -> "
        f"{esc(str(out))} ({m['bytes_written'] / 1e6:,.1f} MB, source {key['bytes'] / 1e6:,.1f} MB)\n"
        f"[dim]replay it: dbtier simulate run {esc(str(run.dir.path))} --design ...[/dim]", highlight=False))
    return 0
