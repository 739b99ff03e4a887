"""`dbtier lab [DIR ...]`: the whole study in one command.

The steps are typed requests (model/lab_steps.py) built from the lab's options and the earlier steps'
results; each is its command's library call, made in this process into its own run directory under the
lab's (cli/lab_calls.py). A step that fails is reported and the others still run; Ctrl-C stops the running
step, which removes what it made in its own `finally`, and keeps every finished one. The lab document
records each step's `dbtier ARGV`, the command line that makes the same request, so one step can be run
again alone.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

from rich.table import Table

from dbtier.cli import options as argtypes
from dbtier.cli.bench.dss import MAX_TPCH_SCALE
from dbtier.cli.markup import esc, lit
from dbtier.cli.settings_options import pg_memory
from dbtier.cli.common import Run, add_output_options, console, describe_bug, emit, lifecycle
from dbtier.core.errors import DbtierError
from dbtier.model.lab import parse_engines, plan_engine, requirement_from_oltp, standing, tiers
from dbtier.model.lab_steps import (EmulatedTier, LabStep, ReportStep, backup_steps, dss_steps, oltp_steps,
                                    plan_cloud_step, plan_size_step, probe_step)
from dbtier.workloads.engine import names as engine_names

PROFILES: dict[str, dict[str, Any]] = {
    # smoke: seconds-long steps that check the wiring (the test suite uses it), not the storage; its random
    # sweeps stop at their first load level (a latency ceiling of 1 ns: every point passes it)
    "smoke": {"probe_point_s": "0.2", "probe_size": "128M", "probe_max_lat_ms": "0.000001",
              "oltp_warehouses": "1",
              "oltp_clients": "1,2", "oltp_duration": "2", "oltp_warmup": "0", "oltp_repeat": "1",
              "matrix_clients": "1", "matrix_duration": "1", "dss_scale": "0.01", "dss_repeat": "1", "backup_scale": "1",
              "backup_methods": "tar", "backup_repeat": "1"},
    # quick and full: enough warehouses (about 110 MB each) that the data set is at least 4x the default
    # memory budget's cache part (128 MiB, or a quarter of the data), so the OLTP reads reach the storage;
    # and every OLTP point and backup run at least twice (report.verdict.MIN_RUNS): the verdict judges on repeats
    "quick": {"oltp_warehouses": "5", "oltp_clients": "1,2,4,8", "oltp_duration": "8", "oltp_warmup": "2",
              "oltp_repeat": "2", "matrix_clients": "1,4", "matrix_duration": "5", "dss_scale": "0.1", "dss_repeat": "2",
              "backup_scale": "5", "backup_methods": "tar,tar-gzip", "backup_repeat": "2"},
    "full": {"oltp_warehouses": "20", "oltp_clients": "1,2,4,8,16,32", "oltp_duration": "60", "oltp_warmup": "10",
             "oltp_repeat": "3", "matrix_clients": "1,4,16", "matrix_duration": "30", "dss_scale": "1", "dss_repeat": "3",
             "backup_scale": "50", "backup_methods": "plain,tar,tar-gzip", "backup_repeat": "3"},
}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("lab", help="the whole study: probe, OLTP, DSS, backup, plan, report",
                       description="Study the storage under each directory (default: the current one): probe it, "
                       "run an OLTP sweep on a managed PostgreSQL (and on each engine of --engines; the placement matrix "
                       "with two or more directories, fastest as the fast tier), a TPC-H power run on DuckDB with temp on each "
                       "directory, backups to each directory and to null, plan the cheapest configuration for the "
                       "measured load, and write the report.")
    p.add_argument("dirs", nargs="*", metavar="DIR", help="directories to study (tiers); default: .")
    p.add_argument("--profile", choices=sorted(PROFILES), default="quick",
                   help="quick (every step, a few minutes for one directory on 2 cores), full, or smoke "
                   "(seconds-long steps that only check the wiring)")
    p.add_argument("--engines", default="postgres",
                   help="comma-separated OLTP engines, each run on the same storage (bench oltp --engine E): "
                   f"{', '.join(engine_names('oltp'))}; default postgres. With two or more the steps are oltp-ENGINE, "
                   "the plan sizes for PostgreSQL's run (else the first engine's) and the report shows them side by "
                   "side")
    p.add_argument("--skip", default="", help="comma-separated steps to leave out: probe,oltp,dss,backup,plan,cloud")
    p.add_argument("--emulate", metavar="DIR=RATE",
                   help="root: make DIR (one of the directories) an emulated slow tier, a loop device there throttled "
                   "to RATE (e.g. 150iops, or 150riops,300wiops), in every step that places something there: the "
                   "OLTP step (bench oltp --emulate), the TPC-H step with temp there (bench dss --emulate) and the "
                   "backup to it (bench backup --emulate); DIR is the slow tier. The probe measures DIR's own device")
    p.add_argument("--dss-memory-limit", type=pg_memory(64, 2**31 - 1, example="80MB"), metavar="SIZE",
                   help="the TPC-H steps' DuckDB memory_limit (bench dss --memory-limit), small so that queries "
                   "spill to temp and the temp tiers are compared (80MB at --profile full's SF 1 spills Q9, Q10 "
                   "and Q18); default: DuckDB's own, which spills nothing at the profiles' scales")
    p.add_argument("--dss-scale", type=argtypes.positive_float(MAX_TPCH_SCALE), metavar="SF",
                   help="the TPC-H steps' scale factor (bench dss --scale) instead of the profile's (smoke 0.01, "
                   "quick 0.1, full 1): larger when the verdict says the power runs were too short to judge")
    p.add_argument("--cloud", choices=("aws", "azure", "gcp"), default="aws",
                   help="the provider whose volumes the cloud step sizes for the measured load (default aws)")
    add_output_options(p)
    p.set_defaults(func=run)


def _call(request: LabStep, out_dir: Path) -> tuple[int, str, float]:
    """The step's library call into `out_dir`: (0 or 1, what went wrong, seconds). Its run ends as a command's
    does (cli/common.lifecycle): failed with the error, or with the traceback of a fault in dbtier; Ctrl-C
    ends it interrupted and goes on up, stopping the lab."""
    from dbtier.cli import lab_calls
    from dbtier.core import owner
    t0 = time.monotonic()
    lab_run = owner.current_run        # the lab's own: each step's run names itself while it runs
    try:
        with lifecycle():
            err = lab_calls.call(request, out_dir) or ""
    except DbtierError as exc:
        err = exc.message
    except Exception as exc:  # noqa: BLE001 - a fault in dbtier: the step's run keeps the traceback
        err = f"{describe_bug(exc)} (a bug in dbtier; its traceback is in the step's run directory)"
    finally:
        owner.current_run = lab_run
    return (1 if err else 0), err, time.monotonic() - t0


def _load(run_dir: Path) -> dict[str, Any] | None:
    """A step's document, or None when the step left none that can be read (it failed)."""
    from dbtier.results.store import load_run
    try:
        return load_run(run_dir)
    except DbtierError:
        return None


def _emulation(text: str | None, dirs: list[str]) -> EmulatedTier | None:
    """The emulated directory and its rate as the steps get them, checked before any step runs."""
    if not text:
        return None
    from dbtier.measure import slowtier
    emu = slowtier.parse(text)
    here = os.path.realpath(emu.dir)
    if here not in dirs:
        raise DbtierError(f"--emulate {text}: {emu.dir} is not one of the lab's directories ({', '.join(dirs)})",
                          "name one of them, e.g. dbtier lab FAST SLOW --emulate SLOW=150iops")
    if os.geteuid() != 0:
        raise DbtierError("--emulate needs root: it makes a loop device, mounts it and sets an I/O throttle",
                          "run as root, or give the lab two real tiers")
    return EmulatedTier(here, text.rpartition('=')[2])


def run(args: argparse.Namespace) -> int:
    dirs = args.dirs or ["."]
    for d in dirs:
        if not Path(d).is_dir():
            raise DbtierError(f"{d}: no such directory", "pass directories that exist (tiers to study)")
    if len({os.path.realpath(d) for d in dirs}) != len(dirs):
        raise DbtierError("a directory is given twice", "give each tier once")
    dirs = [os.path.realpath(d) for d in dirs]      # the steps' documents and the report name them absolutely
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    bad = skip - {"probe", "oltp", "dss", "backup", "plan", "cloud"}
    if bad:
        raise DbtierError(f"--skip: unknown step {', '.join(sorted(bad))}",
                          "steps are probe,oltp,dss,backup,plan,cloud")
    engines = parse_engines(args.engines, engine_names("oltp"))
    prof = PROFILES[args.profile]
    emu = _emulation(args.emulate, dirs)
    run_ = Run("lab", args, {"dirs": dirs, "profile": args.profile, "skip": sorted(skip), "cloud": args.cloud,
                             "engines": engines, "settings": prof, "emulate": emu.text if emu else None,
                             "dss_memory_limit": args.dss_memory_limit, "dss_scale": args.dss_scale}, paths=dirs)
    doc = run_.doc
    doc["steps"] = []
    lab = run_.dir.path.resolve()
    out = console(args)

    def skip_step(name: str, why: str) -> None:
        doc["steps"].append({"name": name, "status": "skipped", "run_dir": None, "seconds": 0.0, "error": why,
                             "argv": None})
        run_.save()

    def step(request: LabStep) -> dict[str, Any] | None:
        name, argv = request.name, request.argv()
        rec = {"name": name, "status": "running", "run_dir": None, "seconds": 0.0, "error": None,
               "argv": ["dbtier", *argv]}
        doc["steps"].append(rec)
        run_.save()
        with out.status(f"[bold]{esc(name)}[/bold]: dbtier {esc(' '.join(argv))}"):
            code, err, secs = _call(request, lab / name)
        rec.update(status="ok" if code == 0 else "failed", run_dir=name, seconds=secs, error=err or None)
        run_.save()
        colour = "green" if code == 0 else "red"
        out.print(f"[{colour}]{esc(name)}: {rec['status']}[/{colour}] in {secs:.0f} s" + (f" — {esc(err)}" if err else ""))
        return _load(lab / name)

    try:
        if "probe" in skip:
            probe = None
            skip_step("probe", "skipped by --skip")
        else:
            probe = step(probe_step(dirs, args.profile, prof))
        fast, slow = tiers(dirs, probe)
        if emu and len(dirs) >= 2:      # the emulated directory is the slow tier, whatever its own device
            slow = emu.dir
            fast = fast if fast != emu.dir else next(d for d in dirs if d != emu.dir)
        if len(dirs) >= 2:
            doc["params"].update(fast_dir=fast, slow_dir=slow)
        oltp = None
        # one OLTP step per engine, on the same storage; the plan sizes for PostgreSQL's (else the first's)
        planned = plan_engine(engines)
        for engine, request in oltp_steps(engines, dirs, fast, slow, prof, emu):
            if "oltp" in skip:
                skip_step(request.name, "skipped by --skip")
                continue
            got = step(request)
            if engine == planned:
                oltp = got
        probe_dir = str(lab / "probe")
        for dss in dss_steps(dirs, fast, prof, args.dss_scale, probe_dir if probe else None, emu,
                             args.dss_memory_limit or None):
            if "dss" in skip:
                skip_step(dss.name, "skipped by --skip")
            else:
                step(dss)
        for backup in backup_steps(dirs, fast, prof, emu):
            if "backup" in skip:
                skip_step(backup.name, "skipped by --skip")
            else:
                step(backup)
        req = requirement_from_oltp(oltp) if oltp else None
        doc["requirement"] = req
        size = plan_size_step(req, oltp, probe, probe_dir) if req else None
        if "plan" in skip:
            skip_step("plan-size", "skipped by --skip")
        elif req is None:
            skip_step("plan-size", "no measured load: the OLTP step did not finish")
        elif size is None:
            skip_step("plan-size", "the OLTP step measured no device load to size for")
        else:
            step(size)
        cloud = plan_cloud_step(req, args.cloud) if req else None
        if "cloud" in skip or "plan" in skip:
            skip_step("plan-cloud", "skipped by --skip")
        elif cloud is None:
            skip_step("plan-cloud", "no measured load to size for")
        else:
            step(cloud)
        if probe:
            doc["standing"] = standing(probe)
        # The lab's own status and time are final before the report reads them (it shows them).
        run_.finish("failed" if any(s["status"] == "failed" for s in doc["steps"]) else "ok")
        report = ReportStep(str(lab))
        code, err, secs = _call(report, lab / report.name)
        doc["report"] = {"status": "ok" if code == 0 else "failed", "run_dir": report.name,
                         "html": str(lab / report.name / "report.html") if code == 0 else None,
                         "error": err or None}
        if code != 0:
            doc["status"] = "failed"            # the report could not be written: the lab failed after all
        run_.save()
    except BaseException as exc:
        # The lifecycle (cli/common.py) ends the lab's run; the step that was running says how it ended.
        for s in doc["steps"]:
            if s["status"] == "running":
                s["status"] = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
        raise
    failed = doc["status"] == "failed"

    def render() -> None:
        t = Table(title=f"dbtier lab ({args.profile})", title_justify="left")
        for c in ("step", "status", "seconds", "note"):
            t.add_column(c)
        for s in doc["steps"]:
            t.add_row(lit(s["name"]), lit(s["status"]), f"{s['seconds']:.0f}", lit(s["error"] or ""))
        out.print(t)
        if doc.get("report", {}).get("html"):
            out.print(f"report: {esc(doc['report']['html'])}")
        out.print(f"result: {esc(run_.dir.result_path)}")
    emit(doc, args, render)
    return 1 if failed else 0
