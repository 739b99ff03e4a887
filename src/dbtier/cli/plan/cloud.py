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
from typing import Any

from dbtier.cli.plan import cloud_render as render
from dbtier.cli.common import Run, console, emit
from dbtier.core.errors import DbtierError
from dbtier.model.cloud.cluster import ENGINES


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


def run_cloud(args: argparse.Namespace, req: Any, history: dict[str, Any] | None, source: dict[str, Any],
              params: dict[str, Any]) -> int:
    """`history`: the document's `history` (None without --from-history); `source`: the history run's `from`
    (which import or consolidation its figures came from); `params`: the run's params as
    `dbtier.cli.plan.command` builds them for every plan action."""
    from dbtier.model.cloud import volumes as cloud
    from dbtier.model.cloud import sizing as cloud_plan
    from dbtier.model.cloud.design import CloudRequest, designs
    types, instances = cloud.load_volume_types(), cloud.load_instances()
    notes: list[str] = []
    if args.instances_file:
        if args.cloud != "aws":
            raise DbtierError("--instances-file reads `aws ec2 describe-instance-types` output: it goes with --cloud aws",
                              "drop it, or use --cloud aws")
        from dbtier.model.cloud.instances import parse_describe_instance_types
        path = Path(args.instances_file)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise DbtierError(f"{path}: cannot be read ({exc.__class__.__name__})",
                              "give the file `aws ec2 describe-instance-types --output json > FILE` wrote") from None
        as_of = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).date().isoformat()
        loaded, notes = parse_describe_instance_types(text, str(path), as_of)
        instances = {**instances, **loaded}
    clustered = args.instances is not None and args.instances > 1 or bool(req.instances and req.instances > 1)
    attach = (req.instances or args.instances or 2) if clustered else 1
    cluster = None
    if clustered:
        types, cluster = cluster_check(args, source, attach, types)
    if cluster:
        notes.append(f"{attach} instances ({cluster['engine'] or 'engine not known'}): {cluster['statement']}")
    if args.roles and not args.from_history:
        raise DbtierError("--roles sizes one volume set per role from the history's file types: it needs "
                          "--from-history", "e.g. --from-history REQ_RUN --roles, or size without --roles")
    from dbtier.history import intervals
    burst_checked, burst_note, unchecked, rates = None, None, None, None
    if args.from_history and intervals.hourly(source):
        # no time series to replay: size on the statistic and say the burst risk on each design with a bucket
        burst_checked = False
        basis = f"the highest hour-of-day {source.get('statistic') or 'statistic'}, with {req.headroom:.0%} headroom"
        burst_note = (f"burst credits not checked: {intervals.HOURLY_WHY}; the designs are sized on {basis}, within "
                      "each volume's baseline, but a burst longer than a bucket lasts would be throttled (said on "
                      "each design that has one)")
        unchecked = (intervals.HOURLY_WHY, basis)
    elif args.from_history:       # replay the history's intervals through every credit bucket of each design
        burst_checked, rates = True, intervals.rates(source)
    got = designs(CloudRequest(
        provider=args.cloud, requirement=req, instance=args.instance, service_years=args.service_years,
        clustered=clustered, attach=attach, copies=2 if args.mirror_zones else 1, instance_store=args.instance_store,
        roles=args.roles, file_types=intervals.by_file_type(source) if args.roles else (),
        statistic=str(source.get("statistic")), rates=rates, allow_throttling=args.allow_throttling,
        unchecked=unchecked), types, instances)
    if rates is not None and not got.found:
        raise DbtierError("every design meeting the requirement would be throttled by the history's demand: "
                          + "; ".join(f"{m['type']}: {m['reason']}" for m in got.throttled),
                          "choose a larger --instance or provisioned types, or --allow-throttling to list them")
    found, missed = got.found, got.missed + got.throttled
    run = Run("plan.size", args, params,
              inputs=[p for p in (args.from_history, args.instances_file) if p])
    cands = [c.contract() for c in found[:args.top]]
    run.doc.update({"plan": "size", "requirement": req.to_dict(), "candidates": cands,
                    "binding": cands[0]["cloud"]["binding"], "binding_detail": None,
                    "designs_tried": len(found) + len(missed), "designs_meeting": len(found),
                    "cloud_missed": missed, "limits_as_of": cloud_plan.limits_as_of(types, instances, args.cloud),
                    "ranked_by": "cloud.monthly_usd.total", "history": history, "roles": got.separated,
                    "cloud_notes": notes, "cluster": cluster, "burst_checked": burst_checked,
                    "burst_note": burst_note})
    run.finish()
    emit(run.doc, args, lambda: render.cloud(console(args), req, run.doc, run.dir.path))
    return 0


def cluster_check(args: argparse.Namespace, source: dict[str, Any], attach: int, types: dict[str, Any]
                  ) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the types the cluster may use, the engine's support for its `attach`-instance cluster on the provider's
    shared volumes) (--engine, else the history's source); one clear error where its vendor does not support
    it, naming the route."""
    from dbtier.model.cloud.cluster import engine_of, for_cluster
    engine = args.engine or engine_of(source.get("source"))
    engine_from = "--engine" if args.engine else (f"the history's source ({source.get('source')})" if engine else None)
    types, support = for_cluster(types, args.cloud, engine, attach)
    if not support["offered"]:
        raise DbtierError(f"a {attach}-instance {engine} cluster (engine from {engine_from}) on {args.cloud}'s shared "
                          f"volumes: {support['statement']} [{support['cite']}; grade {support['grade']}, "
                          f"dated {support['dated']}]",
                          f"size it on-prem (plan size without --cloud) or price {support['route']} with its provider")
    return types, {**support, "engine": engine, "engine_from": engine_from, "instances": attach}
