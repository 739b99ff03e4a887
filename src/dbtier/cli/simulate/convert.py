"""`dbtier simulate convert TRACE`: a trace's compact Parquet copy in a run directory (sim/convert.py, the
library call), read once and replayed often by `simulate run RUN_DIR`."""

from __future__ import annotations

import argparse
from pathlib import Path

from dbtier.cli.simulate import render
from dbtier.cli.common import Run, console, emit
from dbtier.cli.markup import esc


def run_convert(args: argparse.Namespace) -> int:
    from dbtier.sim import convert
    req = convert.ConvertRequest(trace=Path(args.trace), format=args.format, columns=args.columns,
                                 skip_bad=args.skip_bad, sort=args.sort)
    convert.check(req)              # before the run directory is made
    params = {"action": "convert", "trace": str(req.trace), "format": args.format, "columns": args.columns,
              "skip_bad": args.skip_bad, "sort": args.sort}
    with render.Progress(console(args), args.json) as prog:
        run = Run("simulate.convert", args, params, inputs=[str(req.trace)])
        res = convert.convert(req, run.dir.path, prog)
    run.doc.update(res.to_json())
    run.finish()
    c = res["convert"]
    con = console(args)
    emit(run.doc, args, lambda: con.print(
        f"{esc(str(req.trace))} ({esc(c['format'])}): {c['requests']:,} requests, {c['volumes']:,} volumes -> "
        f"{esc(str(res.path))} ({c['bytes_written'] / 1e6:,.1f} MB, source {c['source']['bytes'] / 1e6:,.1f} MB)\n"
        f"[dim]replay it: dbtier simulate run {esc(str(run.dir.path))} --design ...[/dim]", highlight=False))
    return 0
