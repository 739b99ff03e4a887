"""`dbtier lab [DIR ...]`: the whole study in one command.

Each step is a dbtier command run as a child process into its own run
directory under the lab's, so one failing step is reported while the others
still run, and Ctrl-C stops the running child (which cleans up after itself)
and keeps every finished step.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

from rich.table import Table

from dbtier.cli import options as argtypes
from dbtier.cli.bench.dss import MAX_TPCH_SCALE
from dbtier.cli.markup import esc, lit
from dbtier.cli.settings_options import pg_memory
from dbtier.cli.common import Run, add_output_options, console, emit
from dbtier.core.errors import DbtierError
from dbtier.measure import executor
from dbtier.model.lab import (oltp_steps, parse_engines, plan_cloud_argv, plan_engine, plan_size_argv,
                              requirement_from_oltp, standing, tiers)
from dbtier.workloads.engine import names as engine_names

PROFILES: dict[str, dict[str, Any]] = {
    # smoke: seconds-long steps that check the wiring (the test suite uses it), not the storage; its random
    # sweeps stop at their first load level (a latency ceiling of 1 ns: every point passes it)
    "smoke": {"probe_args": ["--point-seconds", "0.2", "--size", "128M", "--max-lat-ms", "0.000001"],
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


def _child(argv: list[str], out_dir: Path) -> tuple[int, str, float]:
    t0 = time.monotonic()
    done = executor.run([sys.executable, "-m", "dbtier", *argv, "--json", "--out", str(out_dir)],
                        timeout_s=6 * 3600, grace_s=60)
    err = next((ln[len("dbtier: error: "):] for ln in done.stderr.splitlines() if ln.startswith("dbtier: error: ")),
               None)
    if done.returncode != 0 and err is None:
        tail = [ln for ln in done.stderr.strip().splitlines() if ln.strip()][-1:] or [f"exit {done.returncode}"]
        err = tail[0]
    (out_dir.parent / f"{out_dir.name}.stderr.txt").write_text(done.stderr)
    return done.returncode, err or "", time.monotonic() - t0


def _load(run_dir: Path) -> dict[str, Any] | None:
    """A step's document, or None when the step left none that can be read (it failed)."""
    from dbtier.results.store import load_run
    try:
        return load_run(run_dir)
    except DbtierError:
        return None


def _emulation(text: str | None, dirs: list[str]) -> tuple[str | None, list[str]]:
    """(the emulated directory, the --emulate argv the steps get), checked before any step runs."""
    if not text:
        return None, []
    from dbtier.measure import slowtier
    emu = slowtier.parse(text)
    here = os.path.realpath(emu.dir)
    if here not in dirs:
        raise DbtierError(f"--emulate {text}: {emu.dir} is not one of the lab's directories ({', '.join(dirs)})",
                          "name one of them, e.g. dbtier lab FAST SLOW --emulate SLOW=150iops")
    if os.geteuid() != 0:
        raise DbtierError("--emulate needs root: it makes a loop device, mounts it and sets an I/O throttle",
                          "run as root, or give the lab two real tiers")
    return here, ["--emulate", f"{here}={text.rpartition('=')[2]}"]


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
    emulated, emu_argv = _emulation(args.emulate, dirs)
    run_ = Run("lab", args, {"dirs": dirs, "profile": args.profile, "skip": sorted(skip), "cloud": args.cloud,
                             "engines": engines, "settings": prof, "emulate": emu_argv[1] if emu_argv else None,
                             "dss_memory_limit": args.dss_memory_limit, "dss_scale": args.dss_scale}, paths=dirs)
    doc = run_.doc
    doc["steps"] = []
    lab = run_.dir.path.resolve()
    out = console(args)

    def step(name: str, argv: list[str] | None, why_skipped: str | None = None) -> dict[str, Any] | None:
        rec = {"name": name, "status": "skipped", "run_dir": None, "seconds": 0.0, "error": why_skipped,
               "argv": ["dbtier", *argv] if argv else None}
        doc["steps"].append(rec)
        if argv is None:
            run_.save()
            return None
        rec["status"] = "running"
        run_.save()
        with out.status(f"[bold]{esc(name)}[/bold]: dbtier {esc(' '.join(argv))}"):
            code, err, secs = _child(argv, lab / name)
        rec.update(status="ok" if code == 0 else "failed", run_dir=name, seconds=secs, error=err or None)
        run_.save()
        colour = "green" if code == 0 else "red"
        out.print(f"[{colour}]{esc(name)}: {rec['status']}[/{colour}] in {secs:.0f} s" + (f" — {esc(err)}" if err else ""))
        return _load(lab / name)

    try:
        probe = step("probe", ["probe", *dirs, *prof.get("probe_args", ["--profile", args.profile])]) \
            if "probe" not in skip else \
            step("probe", None, "skipped by --skip")
        fast, slow = tiers(dirs, probe)
        if emulated and len(dirs) >= 2:      # the emulated directory is the slow tier, whatever its own device
            slow = emulated
            fast = fast if fast != emulated else next(d for d in dirs if d != emulated)
        if len(dirs) >= 2:
            doc["params"].update(fast_dir=fast, slow_dir=slow)
        oltp = None
        # one OLTP step per engine, on the same storage; the plan sizes for PostgreSQL's (else the first's)
        planned = plan_engine(engines)
        for engine, name, argv in oltp_steps(engines, dirs, fast, slow, prof):
            if emulated:   # one directory: its data placed there, so the emulated tier holds it
                argv += (["--place", f"data={emulated}"] if len(dirs) == 1 else []) + emu_argv
            got = step(name, None, "skipped by --skip") if "oltp" in skip else step(name, argv)
            if engine == planned:
                oltp = got
        for i, d in enumerate(dirs):
            if "dss" in skip:
                step(f"dss-{i + 1}", None, "skipped by --skip")
                continue
            step(f"dss-{i + 1}", ["bench", "dss", "--scale", f"{args.dss_scale:g}" if args.dss_scale else prof["dss_scale"], "--repeat", prof["dss_repeat"],
                                  "--data", fast, "--temp", d] +
                 (["--probe", str(lab / "probe")] if probe else []) + (emu_argv if d == emulated else [])
                 + (["--memory-limit", args.dss_memory_limit] if args.dss_memory_limit else []))
        for i, d in enumerate(dirs):
            if "backup" in skip:
                step(f"backup-{i + 1}", None, "skipped by --skip")
                continue
            step(f"backup-{i + 1}", ["bench", "backup", "--to", d, "--data", fast, "--scale", prof["backup_scale"],
                                     "--methods", prof["backup_methods"], "--repeat", prof["backup_repeat"]]
                 + (emu_argv if d == emulated else []))
        req = requirement_from_oltp(oltp) if oltp else None
        doc["requirement"] = req
        if "plan" in skip:
            step("plan-size", None, "skipped by --skip")
        elif req is None:
            step("plan-size", None, "no measured load: the OLTP step did not finish")
        elif plan_size_argv(req) is None:
            step("plan-size", None, "the OLTP step measured no device load to size for")
        else:
            step("plan-size", plan_size_argv(req, oltp, probe, str(lab / "probe")))
        cloud_argv = plan_cloud_argv(req, args.cloud) if req else None
        if "cloud" in skip or "plan" in skip:
            step("plan-cloud", None, "skipped by --skip")
        elif cloud_argv is None:
            step("plan-cloud", None, "no measured load to size for")
        else:
            step("plan-cloud", cloud_argv)
        if probe:
            doc["standing"] = standing(probe)
        # The lab's own status and time are final before the report reads them (it shows them).
        run_.finish("failed" if any(s["status"] == "failed" for s in doc["steps"]) else "ok")
        code, err, secs = _child(["report", str(lab)], lab / "report")
        doc["report"] = {"status": "ok" if code == 0 else "failed", "run_dir": "report",
                         "html": str(lab / "report" / "report.html") if code == 0 else None, "error": err or None}
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
