"""`dbtier simulate capture`: record a block I/O trace of a device with blktrace (sim/capture.py decides
what the machine allows; measure/capture.py runs it)."""

from __future__ import annotations

import argparse
import shlex
from typing import Any

from dbtier.cli import options as argtypes
from dbtier.cli.simulate import render
from dbtier.cli.common import Run, add_output_options, console, emit
from dbtier.cli.markup import esc
from dbtier.core.errors import DbtierError
from dbtier.measure import capture
from dbtier.sim.trace import capture as cap


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
    try:
        cmd = shlex.split(args.run_cmd) if args.run_cmd else []
    except ValueError as exc:
        raise DbtierError(f"--run: cannot split '{args.run_cmd}': {exc}", "quote the command line once") from None
    if args.duration is not None and not (args.duration > 0):
        raise DbtierError(f"--duration must be positive, got {args.duration:g}", "e.g. --duration 60")
    facts, info = capture.facts(args.target)
    with capture.debugfs(facts, args.mount_debugfs) as facts:
        problem = cap.obstacle(facts)
        if problem is not None:
            raise problem
        assert facts.block_device and facts.blktrace and facts.blkparse
        return _capture(args, facts, cmd, info)


def _capture(args: argparse.Namespace, facts: cap.Facts, cmd: list[str], info: dict[str, Any]) -> int:
    assert facts.block_device is not None       # run_capture() went on only past cap.obstacle()
    duration = cap.capture_seconds(args.duration, bool(cmd))
    params = {"action": "capture", "target": args.target, "block_device": facts.block_device,
              "duration_s": duration, "command": cmd or None}
    run = Run("simulate.capture", args, params, devices=[facts.block_device])
    raw = run.dir.path / "raw"
    raw.mkdir(exist_ok=True)
    trace_file = run.dir.path / cap.CAPTURE_TRACE
    con = console(args)
    workload = capture.record(facts, raw, trace_file, cmd, duration, args.duration,
                              lambda text: con.print(esc(text), highlight=False))
    from dbtier.sim.trace.traces import read_trace
    try:
        trace = read_trace(trace_file, "blkparse")
        summary: dict[str, Any] | None = trace.summary()
    except DbtierError as exc:          # an idle device: nothing to replay, but the capture itself worked
        summary = None
        run.doc["errors"].append({"message": exc.message, "hint": exc.hint})
    run.doc["capture"] = {"block_device": facts.block_device, "trace_file": str(trace_file),
                          "command_returncode": None if workload is None else workload.returncode,
                          "trace": summary}
    run.finish()

    emit(run.doc, args, lambda: render.capture(con, summary, trace_file, run.dir.path))
    return 0 if workload is None or workload.returncode == 0 else 1
