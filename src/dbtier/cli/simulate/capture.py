"""`dbtier simulate capture`: record a block I/O trace of a device with blktrace (sim/trace/capture.py decides
what the machine allows; measure/capture.py's `run` takes it)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from dbtier.cli import options as argtypes
from dbtier.cli.simulate import render
from dbtier.cli.common import Run, add_output_options, console, emit
from dbtier.cli.markup import esc
from dbtier.measure import capture
from dbtier.results.store import RunDir


def register_capture(ssub: Any) -> None:
    """`simulate capture`'s options."""
    cp = ssub.add_parser("capture", help="record a block trace (blktrace) while a command or a timer runs",
                         description="Record the block I/O of DEVICE (or of the disk under a directory) with "
                         "blktrace while --run COMMAND runs, or for --duration seconds; blkparse turns it "
                         "into text that `dbtier simulate run` reads. Where the kernel does not allow it, says "
                         "exactly why.")
    cp.add_argument("target", metavar="DEVICE|DIR", help="a block device, or a directory on the disk to trace")
    cp.add_argument("--duration", type=argtypes.duration(0, argtypes.WEEK_S), metavar="S",
                    help="trace for S seconds (default: while the --run "
                    "command runs; 10 s without one)")
    cp.add_argument("--mount-debugfs", action="store_true",
                    help="mount debugfs at /sys/kernel/debug if it is not (and unmount it afterwards)")
    cp.add_argument("--run", dest="run_cmd", metavar="COMMAND",
                    help="the workload to trace while it runs, one quoted command line, "
                         "e.g. --run 'dbtier bench oltp --clients 16'")
    add_output_options(cp)
    cp.set_defaults(func=run_capture)


def run_capture(args: argparse.Namespace) -> int:
    req = capture.CaptureRequest.checked(target=args.target, duration_s=args.duration, run=args.run_cmd,
                                         mount_debugfs=args.mount_debugfs)
    runs: list[Run] = []

    def start(params: dict[str, Any]) -> RunDir:
        runs.append(Run("simulate.capture", args, params, devices=[params["block_device"]]))
        return runs[0].dir

    def save(section: dict[str, Any], errors: list[dict[str, Any]]) -> None:
        run = runs[0]
        run.doc["errors"] = errors
        run.doc.update(section)
        run.save()

    con = console(args)
    res = capture.run(req, start, save, lambda text: con.print(esc(text), highlight=False))
    run = runs[0]
    run.finish()
    section = run.doc["capture"]
    emit(run.doc, args, lambda: render.capture(con, section["trace"], Path(section["trace_file"]), run.dir.path))
    return 0 if res.returncode is None or res.returncode == 0 else 1
