"""`dbtier plan size --cloud PROVIDER`: cloud volumes as the providers sell them (dbtier.model.cloud_plan).

Thin: the requirement is parsed by `dbtier.cli.plan`; this sizes each volume type's cheapest stripe, replays a
history through its credit buckets (--from-history), writes the document and prints it."""

from __future__ import annotations

import argparse
from typing import Any

from dbtier.cli import plan_render as render
from dbtier.cli.common import Run, console, emit
from dbtier.core.errors import DbtierError
from dbtier.results.store import load_run


def run_cloud(args: argparse.Namespace, req: Any, history: dict[str, Any] | None, params: dict[str, Any]) -> int:
    """`params`: the run's params as `dbtier.cli.plan` builds them for every plan action."""
    from dbtier.model import cloud, cloud_plan
    types, instances = cloud.load_volume_types(), cloud.load_instances()
    clustered = args.instances is not None and args.instances > 1 or bool(req.instances and req.instances > 1)
    found, missed = cloud_plan.size_cloud(types, instances, args.cloud, req, args.instance, args.service_years,
                                          clustered)
    if args.from_history:         # replay the history's intervals through every credit bucket of each design
        from dbtier.history.intervals import rates
        found, throttled = cloud_plan.with_history(found, rates(load_run(args.from_history).get("from") or {}),
                                                   args.allow_throttling)
        missed += throttled
        if not found:
            raise DbtierError("every design meeting the requirement would be throttled by the history's demand: "
                              + "; ".join(f"{m['type']}: {m['reason']}" for m in throttled),
                              "choose a larger --instance or provisioned types, or --allow-throttling to list them")
    run = Run("plan", args, params,
              inputs=[p for p in (args.from_history,) if p])
    cands = [c.contract() for c in found[:args.top]]
    run.doc.update({"plan": "size", "requirement": req.to_dict(), "candidates": cands,
                    "binding": cands[0]["cloud"]["binding"], "binding_detail": None,
                    "designs_tried": len(found) + len(missed), "designs_meeting": len(found),
                    "cloud_missed": missed, "limits_as_of": cloud_plan.limits_as_of(types, instances, args.cloud),
                    "ranked_by": "cloud.monthly_usd.total", "history": history})
    run.finish()
    emit(run.doc, args, lambda: render.cloud(console(args), req, run.doc, run.dir.path))
    return 0
