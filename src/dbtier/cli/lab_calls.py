"""The lab's steps as library calls: each typed step (dbtier.model.lab_steps) made into its command's request,
with the values its command line gives (read by the same option types), and called in the lab's process,
its run made in the lab's directory as the command makes it.

`request(step)` is the call's request; `call(step, out_dir)` makes the step's run there and calls. The step's
`argv()` stays the command line that makes the same request (tests/unit/test_lab_steps.py holds them equal),
recorded so that one step can be run again alone. What a step starts (a managed server, a loop device, test
files) it removes in its own `finally` and, if dbtier dies, the watchdog of dbtier.core.debris does.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from dbtier.cli import options as argtypes
from dbtier.cli.common import Run, Sink
from dbtier.model.lab_steps import BackupStep, DssStep, LabStep, OltpStep, PlanCloudStep, PlanSizeStep, ProbeStep

Request = Any       # one of the requests below: the call that takes it is chosen by its type


def store(out_dir: Path) -> argparse.Namespace:
    """How a step's run is kept: in `out_dir`, quiet (the lab shows one line a step)."""
    return argparse.Namespace(out=str(out_dir), runs_dir=None, force=False, name=None, json=True)


def request(step: LabStep) -> Request:
    """The request `step`'s command line makes (its checks made: a bad one raises DbtierError)."""
    if isinstance(step, ProbeStep):
        return _probe(step)
    if isinstance(step, OltpStep):
        return _oltp(step)
    if isinstance(step, DssStep):
        from dbtier.workloads.dss import DssRequest
        from dbtier.workloads.engine import default_options, engine_class
        return DssRequest(options=default_options(engine_class("duckdb", "dss"), "dss"), scale=argtypes.positive_float()(step.scale), repeat=argtypes.positive_int()(step.repeat),
                          data=step.data, temp=step.temp, probe=step.probe_dir, memory_limit=step.memory_limit,
                          emulate=step.emulate.text if step.emulate and step.emulate.dir == step.temp else None)
    if isinstance(step, BackupStep):
        from dbtier.workloads.backup import BackupRequest
        return BackupRequest(to=step.to, data=step.data, scale=argtypes.positive_float()(step.scale),
                             methods=tuple(m.strip() for m in step.methods.split(",") if m.strip()),
                             repeat=argtypes.positive_int()(step.repeat),
                             emulate=step.emulate.text if step.emulate and step.emulate.dir == step.to else None)
    if isinstance(step, PlanSizeStep):
        return _plan_size(step)
    if isinstance(step, PlanCloudStep):
        from dbtier.model.cloud.design import CloudPlanRequest
        return CloudPlanRequest(provider=step.provider, requirement=_requirement(step.load.figures()),
                                instance="auto", top=5)
    from dbtier.report.calls import ReportRequest
    return ReportRequest(runs=(step.lab_dir,))


def call(step: LabStep, out_dir: Path) -> str | None:
    """Make the step's run in `out_dir` and call: None when it ended ok, else what went wrong (its run says
    failed). A refusal or a fault raises, and the caller's lifecycle ends the run with it."""
    req = request(step)
    args = store(out_dir)
    if isinstance(step, ProbeStep):
        import contextlib
        from dbtier.measure import executor
        from dbtier.measure.probe import check_targets, probe
        executor.require("fio")
        sink = Sink("probe", args, paths=list(req.paths), devices=list(req.devices))
        res = probe(req, check_targets(req), lambda: sink.start(req.params()), sink.save,
                    lambda _path: contextlib.nullcontext(lambda _point: None))
        sink.run.finish("failed" if res.failed else "ok")
        return "; ".join(str(f["message"]) for f in res.failed) or None
    if isinstance(step, OltpStep):
        from dbtier.workloads import oltp
        sink = Sink("bench.oltp", args, paths=req.dirs(), inputs=req.dirs())
        oltp.bench(req, sink.start, sink.save_params)
    elif isinstance(step, DssStep):
        from dbtier.workloads import dss
        sink = Sink("bench.dss", args, paths=[p for p in (req.data, req.temp) if p],
                    inputs=[p for p in (req.probe, req.data, req.temp) if p])
        dss.run(req, sink.start, sink.save)
    elif isinstance(step, BackupStep):
        from dbtier.workloads import backup
        sink = Sink("bench.backup", args, paths=[req.data, req.to], inputs=[req.data, req.to])
        backup.run(req, sink.start, sink.save)
    elif isinstance(step, (PlanSizeStep, PlanCloudStep)):
        _plan(step, req, args)
        return None
    else:
        _report(req, args)
        return None
    sink.run.finish("ok")
    return None


def _probe(step: ProbeStep) -> Any:
    from dbtier.measure.probe import ProbeRequest, with_profile
    point_s = argtypes.duration(0, 86400)(step.point_s) if step.point_s is not None else None
    return ProbeRequest(paths=tuple(step.dirs), profile=with_profile(step.profile, point_s),
                        size=argtypes.size()(step.size) if step.size is not None else None,
                        max_lat_ms=argtypes.positive_float(1e6)(step.max_lat_ms) if step.max_lat_ms is not None
                        else 50.0)


def _oltp(step: OltpStep) -> Any:
    """bench oltp's request for the step: a client sweep on the one directory (its data on the emulated tier
    when that is it), or the placement matrix fast,slow; checked as cli/bench/oltp_checks.py checks it."""
    from dbtier.cli.bench.oltp_checks import ready
    from dbtier.measure import slowtier
    from dbtier.model.placement import matrix_steps
    from dbtier.workloads.engine import default_options, engine_class
    from dbtier.workloads.oltp import MAX_WAREHOUSES, OltpRequest
    cls = engine_class(step.engine, "oltp")
    fast = os.path.abspath(step.fast)
    if step.slow is not None:
        slow = os.path.abspath(step.slow)
        steps = [(n, dict(pl)) for n, pl in matrix_steps(fast, slow, cls.matrix)]
        matrix: str | None = f"{fast},{slow}"
    else:
        steps = [("single", {"data": os.path.abspath(step.emulate.dir)} if step.emulate else {})]
        matrix = None
    ready(cls, steps)
    return OltpRequest(engine=step.engine, workload="tpcc",
                       warehouses=argtypes.positive_int(MAX_WAREHOUSES)(step.warehouses),
                       clients=tuple(sorted(set(argtypes.int_list(1)(step.clients)))),
                       repeat=argtypes.positive_int()(step.repeat), duration_s=argtypes.duration()(step.duration),
                       warmup_s=argtypes.duration(lo_open=False)(step.warmup), options=default_options(cls, "oltp"),
                       steps=tuple(steps), dir=fast, placement_matrix=matrix,
                       emulation=slowtier.parse(step.emulate.text) if step.emulate else None)


def _requirement(figures: dict[str, float | None]) -> Any:
    from dbtier.model.plan.plandoc import requirement_from_options
    daily = {"write_tb_per_day": None, "read_tb_per_day": None, "instances": None}
    return requirement_from_options(figures, None, 0.3, None, None, daily)[0]


def _plan_size(step: PlanSizeStep) -> Any:
    from dbtier.model.plan.calls import SizeRequest
    from dbtier.model.plan.catalog import load_catalog
    from dbtier.model.plan.power_loss import probe_flush
    from dbtier.model.plan.service import Terms
    from dbtier.results.store import load_run
    flush = probe_flush(load_run(step.probe_dir), step.probe_dir) if step.probe_dir else None
    return SizeRequest(requirement=_requirement(step.load.figures()), catalog=load_catalog(), top=5,
                       terms=Terms(durable_writes="required" if step.durable else "no", probe=flush))


def _plan(step: PlanSizeStep | PlanCloudStep, req: Any, args: argparse.Namespace) -> None:
    from dbtier.cli.plan.cloud import cloud_params
    from dbtier.cli.plan.command import size_params
    if isinstance(step, PlanSizeStep):
        from dbtier.model.plan.calls import size_plan
        res: Any = size_plan(req)
        run = Run("plan.size", args, size_params(req), inputs=[step.probe_dir] if step.probe_dir else [])
    else:
        from dbtier.model.cloud.design import cloud_plan
        res = cloud_plan(req)
        run = Run("plan.size", args, cloud_params(req))
    run.doc.update(res.to_json())
    run.finish()


def _report(req: Any, args: argparse.Namespace) -> None:
    from dbtier.report.calls import report
    sink = Sink("report", args)
    report(req, sink.start_reading, None, lambda section: sink.run.doc.update(section))
    sink.run.finish()
