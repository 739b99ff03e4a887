"""`dbtier plan size --cloud PROVIDER`: cloud volumes as the providers sell them (dbtier.model.cloud.sizing).

Thin: the requirement is parsed by `dbtier.cli.plan.command`; this sizes each volume type's cheapest stripe, replays a
history through its credit buckets (--from-history), writes the document and prints it.

A clustered requirement (more than one instance) is sized only on volumes every instance can attach, and
refused where the engine's vendor does not support its cluster on the provider (Oracle RAC: its route is the
vendor's own cloud service, named). A history of hour-of-day statistics (DMA) is sized without the replay,
and the burst risk is said on every design that has a bucket."""

from __future__ import annotations

import argparse
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

from dbtier.cli.plan import cloud_render as render
from dbtier.cli.common import Run, console, emit
from dbtier.cli.plan.options import plan_params
from dbtier.core.errors import DbtierError
from dbtier.model.cloud.cluster import ENGINES
from dbtier.model.cloud.design import CloudPlanRequest
from dbtier.model.plan.service import Terms


def add_cloud_options(sp: argparse.ArgumentParser) -> None:
    """`plan size`'s cloud options."""
    cg = sp.add_argument_group("cloud volumes as the providers sell them")
    cg.add_argument("--cloud", choices=("aws", "azure", "gcp"),
                    help="size provisioned cloud volumes of this provider instead of catalog devices: for each "
                         "volume type the cheapest stripe (count, size, provisioned IOPS and throughput within the "
                         "provider's rules), priced by its formula a month")
    cg.add_argument("--allow-throttling", action="store_true",
                    help="with --cloud --from-history: list a design whose burst credits the history's demand "
                         "would drain (said), instead of dropping it")
    cg.add_argument("--instance", metavar="NAME|auto",
                    help="with --cloud: the instance or VM whose volume caps bind (e.g. r6i.4xlarge); auto: the "
                         "smallest in the data that carries the load sustained")
    cg.add_argument("--instances-file", metavar="FILE",
                    help="with --cloud aws: current instance caps from `aws ec2 describe-instance-types --output "
                         "json` (they replace the shipped figures of the same instance types)")
    cg.add_argument("--instance-store", action="store_true",
                    help="with --cloud: also offer an instance's own NVMe (i4i, Lsv3), priced as the instance's "
                         "premium over the same shape without it; its data does not survive a stop (said)")
    cg.add_argument("--mirror-zones", action="store_true",
                    help="with --cloud: every volume twice, in two zones (a standby's or a second node's copy)")
    cg.add_argument("--engine", choices=ENGINES,
                    help="with --cloud and more than one instance: the database engine, whose vendor's support for "
                         "its cluster on the provider's shared volumes is checked (Oracle RAC is supported on none: "
                         "refused, naming Oracle Database@AWS, @Azure or @Google Cloud); default: the history's "
                         "source (awr, dma: oracle; sqlserver; postgres: postgresql)")
    cg.add_argument("--roles", nargs="?", const="auto", metavar="ROLE=TYPE[:GB],...",
                    help="with --cloud --from-history: one volume set per role the history separates (data, log, "
                         "temp, archive) under one instance's caps; pin a type and capacity per role, e.g. "
                         "--roles log=io2:200,data=gp3 (default: each role its cheapest type)")


def cloud_request(args: argparse.Namespace, req: Any, history: dict[str, Any] | None, source: dict[str, Any]
                  ) -> CloudPlanRequest:
    """`req`: the requirement; `history`: the document's `history` (None without --from-history); `source`:
    the history run's `from` (which import or consolidation its figures came from). The history's intervals
    and the instances file are read here and handed to the call as data."""
    from dbtier.history import intervals
    text, as_of = None, None
    if args.instances_file and args.cloud == "aws":     # another provider: the request refuses the file
        path = Path(args.instances_file)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise DbtierError(f"{path}: cannot be read ({exc.__class__.__name__})",
                              "give the file `aws ec2 describe-instance-types --output json > FILE` wrote") from None
        as_of = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).date().isoformat()
    hourly = bool(args.from_history) and intervals.hourly(source)
    return CloudPlanRequest(
        provider=args.cloud, requirement=req, instance=args.instance, instances=args.instances, engine=args.engine,
        service_years=args.service_years, top=args.top, mirror_zones=args.mirror_zones,
        instance_store=args.instance_store, roles=args.roles, allow_throttling=args.allow_throttling,
        from_history=args.from_history, history=history, source=source, hourly=hourly,
        hourly_why=intervals.HOURLY_WHY if hourly else "",
        rates=intervals.rates(source) if args.from_history and not hourly else None,
        file_types=intervals.by_file_type(source) if args.roles and args.from_history else (),
        instances_file=args.instances_file, instances_json=text, instances_as_of=as_of)


def cloud_params(request: CloudPlanRequest, cost: str = Terms.cost, usd_per_kwh: float = Terms.usd_per_kwh,
                 catalog_files: Sequence[str] = (), prices: str | None = None, server_ports: int | None = None,
                 devices_only: bool = False) -> dict[str, Any]:
    """`plan size --cloud`'s params: the options every plan action records (their defaults the terms'), then
    the cloud request's."""
    return plan_params("size", catalog_files, prices, server_ports, devices_only, cost, request.service_years,
                       usd_per_kwh, requirement=request.requirement.to_dict(), cloud=request.provider,
                       instance=request.instance, from_history=request.from_history, roles=request.roles,
                       mirror_zones=request.mirror_zones, instance_store=request.instance_store,
                       instances_file=request.instances_file)


def run_cloud(args: argparse.Namespace, creq: CloudPlanRequest) -> int:
    """The cloud plan of the request (dbtier.model.cloud.design.cloud_plan), stored and printed."""
    from dbtier.model.cloud.design import cloud_plan
    res = cloud_plan(creq)
    params = cloud_params(creq, args.cost, args.usd_per_kwh, args.catalog, args.prices, args.server_ports,
                          args.devices_only)
    run = Run("plan.size", args, params,
              inputs=[p for p in (args.from_history, args.instances_file) if p])
    run.doc.update(res.to_json())
    run.finish()
    emit(run.doc, args, lambda: render.cloud(console(args), creq.requirement, run.doc, run.dir.path))
    return 0
