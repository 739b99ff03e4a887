"""`dbtier plan equivalent|budget|size|value`: arrays from the catalog, their cost, and the cheapest that fits.

Thin: parse, check the numbers, call `dbtier.model.plan.planner`, build the document with
`dbtier.model.plan.plandoc`, write the run directory, print with `dbtier.cli.plan.render`.
The document has `plan` (which action) and the action's contract keys at top level
(docs/commands/plan.md).
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any, Sequence

from dbtier.cli import options as argtypes
from dbtier.cli.plan import render
from dbtier.cli.plan.cloud import add_cloud_options
from dbtier.cli.plan.options import (add_array_options, add_cost_options, add_grade_option, add_pricing_options,
                                    plan_params)
from dbtier.cli.catalog import add_catalog_option, load_priced
from dbtier.cli.common import usage, Run, add_output_options, console, emit
from dbtier.core.errors import DbtierError
from dbtier.model.plan import plandoc
from dbtier.model.plan.array import (DEFAULT_HIT_RATIO, DEFAULT_READ_FRACTION, LAYOUT_HELP, LAYOUTS, SET_LAYOUTS,
                                check_server_ports)
from dbtier.model.plan.requirement import Requirement
from dbtier.model.plan.search import DEFAULT_CACHE_FRACTION, DEFAULT_MAX_DEVICES
from dbtier.model.plan.calls import (BudgetRequest, EquivalentRequest, SizeRequest, ValueRequest, budget_plan,
                                     equivalent_plan, size_plan, value_plan)
from dbtier.model.plan.catalog import Catalog
from dbtier.results.result import Result
from dbtier.model.plan.power_loss import probe_flush
from dbtier.model.guards import doc_guards
from dbtier.model.plan.service import Terms
from dbtier.results.store import load_run

if TYPE_CHECKING:
    from dbtier.model.cloud.design import CloudPlanRequest

_LAYOUT_LIST = "; ".join(f"{k}: {v}" for k, v in LAYOUT_HELP.items())


def _list(values: Sequence[str] | None) -> list[str]:
    """`--devices a,b c` -> [a, b, c]: commas and spaces both separate."""
    return [v.strip() for item in (values or []) for v in item.split(",") if v.strip()]


def _terms(args: argparse.Namespace, **extra: Any) -> Terms:
    return Terms(service_years=args.service_years, usd_per_kwh=args.usd_per_kwh, cost=getattr(args, "cost", "tco"),
                 **extra)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("plan", help="device arrays from the catalog: equal performance, equal budget, the cheapest "
                                    "configuration for a requirement, price/performance of a run",
                       description="Model device arrays (count, layout, controller and bus limits, enclosure cost) "
                                   "from the device catalog. Every figure says what limits it.")
    psub = p.add_subparsers(dest="plan_command", metavar="ACTION")

    ep = psub.add_parser("equivalent", help="how many of one device match another, metric by metric, and the cost",
                         description="How many --using devices, with their controller/enclosure overhead, match one "
                                     "--reference device on IOPS (at --read-fraction), on sequential throughput "
                                     "(read and write) and on capacity, and what each costs.")
    ep.add_argument("--reference", required=True, metavar="ID", help="the device to match (one of it)")
    ep.add_argument("--using", required=True, metavar="ID", help="the device to match it with (as many as needed)")
    ep.add_argument("--layout", default="jbod", choices=SET_LAYOUTS, help="layout of the --using array (default jbod)")
    ep.add_argument("--read-fraction", type=argtypes.fraction(), default=DEFAULT_READ_FRACTION, metavar="R",
                    help="share of reads in the IOPS mix, 0..1 (default 0.5)")
    add_pricing_options(ep)
    add_cost_options(ep)
    add_catalog_option(ep)
    add_output_options(ep)
    ep.set_defaults(func=run_equivalent)

    bp = psub.add_parser("budget", help="what a budget buys of each device, overhead included",
                         description="The most of each device that --usd buys (controller/enclosure overhead "
                                     "included) and what that array delivers.")
    bp.add_argument("--usd", type=argtypes.positive_float(), required=True, metavar="N",
                    help="the budget in US dollars")
    bp.add_argument("--devices", nargs="+", required=True, metavar="ID,ID",
                    help="device ids to compare (comma- or space-separated)")
    bp.add_argument("--layout", default="jbod", choices=SET_LAYOUTS, help="layout of each array (default jbod)")
    bp.add_argument("--read-fraction", type=argtypes.fraction(), default=DEFAULT_READ_FRACTION, metavar="R",
                    help="share of reads for the IOPS figure, 0..1 (default 0.5)")
    add_pricing_options(bp)
    add_cost_options(bp)
    add_catalog_option(bp)
    add_output_options(bp)
    bp.set_defaults(func=run_budget)

    sp = psub.add_parser("size", help="the cheapest configurations that meet a requirement",
                         description="Try every device x count x layout of the catalog (and mixed designs: a "
                                     "preferred-read mirror of flash with a cheaper set, a flash read cache in front "
                                     "of a cheaper backing set), keep those that meet every requirement with "
                                     "headroom, and rank them by price. Layouts: " + _LAYOUT_LIST + ".")
    req = sp.add_argument_group("requirement (any of them; rates happen together)")
    req.add_argument("--read-iops", type=argtypes.positive_float(), metavar="R", help="random read IOPS")
    req.add_argument("--write-iops", type=argtypes.positive_float(), metavar="W", help="random write IOPS")
    req.add_argument("--read-mbps", type=argtypes.positive_float(), metavar="M",
                     help="sequential read MB/s (MB = 10^6 bytes)")
    req.add_argument("--write-mbps", type=argtypes.positive_float(), metavar="M", help="sequential write MB/s")
    req.add_argument("--capacity-gb", type=argtypes.positive_float(), metavar="G",
                     help="usable capacity in GB (10^9 bytes)")
    req.add_argument("--max-read-latency-us", type=argtypes.positive_float(), metavar="L",
                     help="read latency ceiling in microseconds")
    req.add_argument("--headroom", type=argtypes.nonneg_float(argtypes.MAX_HEADROOM), metavar="H",
                     help="margin on top of every rate and the capacity (default 0.3, or the history run's)")
    req.add_argument("--write-tb-per-day", type=argtypes.nonneg_float(1e6), metavar="TB",
                     help="the database's average written TB a day (TB = 10^12 bytes), for endurance (default: "
                          "the history run's, else the peak write rate held 24 h, said as pessimistic)")
    req.add_argument("--read-tb-per-day", type=argtypes.nonneg_float(1e6), metavar="TB",
                     help="average read TB a day, for HDD workload ratings (default as for writes)")
    req.add_argument("--instances", type=argtypes.positive_int(1000), metavar="N",
                     help="database instances sharing the storage (Oracle RAC: 2 or more keeps only storage every "
                          "node reaches; default: the history run's, else 1)")
    req.add_argument("--from-history", metavar="RUN_DIR",
                     help="take the requirement from a `dbtier history` run (options given here override it)")
    sp.add_argument("--layouts", nargs="+", metavar="LAYOUT",
                    help=f"layouts to try (default all: {', '.join(LAYOUTS)})")
    sp.add_argument("--redundancy", choices=("required", "none"), default="required",
                    help="required (default): only layouts that survive a device failure (and cloud volumes, "
                         "which the provider replicates)")
    sp.add_argument("--devices", nargs="+", metavar="ID,ID", help="only these devices (default the whole catalog "
                    "the --grade allows; a study device of 2009-2011 is offered only when named here)")
    add_grade_option(sp)
    sp.add_argument("--hit-ratio", type=argtypes.fraction(), default=DEFAULT_HIT_RATIO, metavar="H",
                    help="read hit ratio of read-cache designs, 0..1 (default 0.9)")
    sp.add_argument("--cache-fraction", type=argtypes.fraction(), default=DEFAULT_CACHE_FRACTION, metavar="F",
                    help="a read cache holds at least this share of the backing set's capacity (default 0.1)")
    sp.add_argument("--max-devices", type=argtypes.positive_int(1_000_000), default=DEFAULT_MAX_DEVICES, metavar="N",
                    help=f"most devices in one set (default {DEFAULT_MAX_DEVICES})")
    sp.add_argument("--top", type=argtypes.positive_int(1_000_000), default=10, metavar="N",
                    help="how many candidates to list (default 10)")
    add_cloud_options(sp)
    add_pricing_options(sp)
    g = add_cost_options(sp, ranks=True)
    g.add_argument("--worn", choices=("fail", "replace"), default="fail",
                   help="a design whose flash wears out (or whose HDDs pass their workload rating) before the "
                        "service life ends: fail (default; the count grows to spread the writes, else the design "
                        "is dropped) or replace (priced with its replacements)")
    g.add_argument("--waf", type=argtypes.positive_float(100), metavar="X",
                   help="device write amplification beyond the endurance rating (default by class: 1.0 for "
                        "enterprise flash rated on JESD219's enterprise workload, 3.0 for client flash)")
    g.add_argument("--durable-writes", choices=("required", "no"),
                   help="required (the default when the requirement writes): devices without power-loss "
                        "protection are sized on their flush-bound write rate, or dropped; no: a temp or scratch "
                        "tier (DSS temp, tempdb) whose contents are rebuilt after a crash")
    g.add_argument("--write-burst-seconds", type=argtypes.positive_float(86_400), metavar="S",
                   help="the writes come in bursts of at most S seconds: a flash device may be sized on its "
                        "burst figures where such a burst fits its write cache (default: sustained figures)")
    g.add_argument("--probe", metavar="RUN_DIR",
                   help="a `dbtier probe` run of this machine: its durable commit rate (one writer, fsync "
                        "honest) prices devices without power-loss protection whose catalog entry has none")
    add_array_options(sp)
    add_catalog_option(sp)
    add_output_options(sp)
    sp.set_defaults(func=run_size)

    vp = psub.add_parser("value", help="price/performance of a measured run for a configuration",
                         description="TPM/$, TPS/$, IOPS/$ and $/GB of a probe or OLTP bench run, priced as a "
                                     "configuration from the catalog, so runs on different hardware can be ranked "
                                     "by what they cost.")
    vp.add_argument("--result", required=True, metavar="RUN_DIR", help="a probe or bench run directory")
    vp.add_argument("--config", required=True, metavar="DEVICE:COUNT:LAYOUT",
                    help="the configuration the run was on, e.g. sas-15k-73gb:8:raid10; mixed designs: "
                         "FAST:N:preferred-read-mirror:SLOW:M or CACHE:N:read-cache:BACKING:M[:LAYOUT]")
    vp.add_argument("--hit-ratio", type=argtypes.fraction(), default=DEFAULT_HIT_RATIO, metavar="H",
                    help="read hit ratio when --config is a read-cache (default 0.9)")
    add_pricing_options(vp)
    add_cost_options(vp)
    add_catalog_option(vp)
    add_output_options(vp)
    vp.set_defaults(func=run_value)

    p.set_defaults(func=usage(p))



# -- checks ----------------------------------------------------------------------------------------

def _inputs(args: argparse.Namespace, *paths: str | None) -> list[str]:
    """What the run reads (never removed by --force): the given paths, the catalog files and the quote file."""
    return [p for p in (*paths, *args.catalog, args.prices) if p]


def _server_ports(args: argparse.Namespace) -> int | None:
    return None if args.server_ports is None else check_server_ports(args.server_ports)


def _params(args: argparse.Namespace, action: str, **extra: Any) -> dict[str, Any]:
    return plan_params(action, args.catalog, args.prices, args.server_ports, args.devices_only,
                       getattr(args, "cost", None), args.service_years, args.usd_per_kwh, **extra)


def size_params(request: SizeRequest, catalog_files: Sequence[str] = (), prices: str | None = None,
                server_ports: int | None = None, from_history: str | None = None) -> dict[str, Any]:
    """`plan size`'s params, from its request and the files it read (`lab`'s plan step writes the same)."""
    t = request.terms
    return plan_params("size", catalog_files, prices, server_ports, request.devices_only, t.cost, t.service_years,
                       t.usd_per_kwh, requirement=request.requirement.to_dict(), layouts=list(request.layouts),
                       devices=list(request.devices) if request.devices else None, redundancy=request.redundancy,
                       hit_ratio=request.hit_ratio, cache_fraction=request.cache_fraction,
                       max_devices=request.max_devices, top=request.top, from_history=from_history,
                       terms=t.to_dict(), grade=request.grade)


def _store(run: Run, result: Result) -> dict[str, Any]:
    """The action's section into its run's document, the run finished: the document."""
    run.doc.update(result.to_json())
    run.finish()
    return run.doc


def _pricing(args: argparse.Namespace, catalog: Catalog, prices: dict[str, Any] | None,
             **terms: Any) -> dict[str, Any]:
    """The request's pricing fields from the options every action has."""
    return dict(catalog=catalog, terms=_terms(args, **terms), server_ports=_server_ports(args),
                devices_only=args.devices_only, prices=prices)


# -- the actions ---------------------------------------------------------------------------------------

def run_equivalent(args: argparse.Namespace) -> int:
    catalog, prices = load_priced(args)
    res = equivalent_plan(EquivalentRequest(reference=args.reference, using=args.using, layout=args.layout,
                                            read_fraction=args.read_fraction, **_pricing(args, catalog, prices)))
    run = Run("plan.equivalent", args, _params(args, "equivalent", reference=args.reference, using=args.using,
                                    layout=args.layout, read_fraction=args.read_fraction), inputs=_inputs(args))
    doc = _store(run, res)
    emit(doc, args, lambda: render.equivalent(console(args), res.equivalence, doc["pricing"]["text"], run.dir.path,
                                              prices))
    return 0


def run_budget(args: argparse.Namespace) -> int:
    devices = _list(args.devices)
    catalog, prices = load_priced(args)
    res = budget_plan(BudgetRequest(usd=args.usd, devices=tuple(devices), layout=args.layout,
                                    read_fraction=args.read_fraction, **_pricing(args, catalog, prices)))
    run = Run("plan.budget", args, _params(args, "budget", usd=args.usd, devices=devices, layout=args.layout,
                                    read_fraction=args.read_fraction), inputs=_inputs(args))
    doc = _store(run, res)
    emit(doc, args, lambda: render.budget(console(args), list(res.options), args.usd, args.layout,
                                          args.read_fraction, doc["pricing"]["text"], run.dir.path, prices))
    return 0


_REQ_OPTIONS = {"read_iops": "--read-iops", "write_iops": "--write-iops", "read_mbps": "--read-mbps",
                "write_mbps": "--write-mbps", "capacity_gb": "--capacity-gb"}


def _requirement(args: argparse.Namespace, history: dict[str, Any] | None
                 ) -> tuple[Requirement, dict[str, Any] | None]:
    # every figure's range is checked once, by its option's type (cli/options.py)
    daily = {"write_tb_per_day": args.write_tb_per_day, "read_tb_per_day": args.read_tb_per_day,
             "instances": args.instances}
    return plandoc.requirement_from_options({k: getattr(args, k) for k in _REQ_OPTIONS}, args.max_read_latency_us,
                                            args.headroom, history, args.from_history, daily)


def size_request(args: argparse.Namespace) -> tuple[SizeRequest | CloudPlanRequest, dict[str, Any] | None]:
    """`plan size`'s request (with --cloud, the cloud plan's), checked, and the quote file's document (None
    without --prices)."""
    loaded = load_run(args.from_history) if args.from_history else None     # read once
    req, history = _requirement(args, loaded)
    if args.cloud:
        for opt, given in (("--prices", args.prices), ("--grade", args.grade)):
            if given:
                raise DbtierError(f"{opt} goes with an on-prem plan: --cloud prices the providers' volumes at "
                                  "their list prices", f"drop {opt}, or drop --cloud to size owned devices")
        from dbtier.cli.plan.cloud import cloud_request
        return cloud_request(args, req, history, (loaded or {}).get("from") or {}), None
    for opt in ("instance", "instances_file", "instance_store", "mirror_zones", "roles", "engine"):
        if getattr(args, opt):
            raise DbtierError(f"--{opt.replace('_', '-')} goes with --cloud", "e.g. --cloud aws --instance r6i.4xlarge")
    catalog, prices = load_priced(args)
    probe = probe_flush(load_run(args.probe), args.probe) if args.probe else None
    devices = _list(args.devices) or None
    return SizeRequest(requirement=req, devices=tuple(devices) if devices else None,
                          layouts=tuple(_list(args.layouts) or LAYOUTS), redundancy=args.redundancy,
                          hit_ratio=args.hit_ratio, cache_fraction=args.cache_fraction, max_devices=args.max_devices,
                          top=args.top, grade=args.grade or "production", history=history,
                          **_pricing(args, catalog, prices, worn=args.worn, waf=args.waf,
                                     durable_writes=args.durable_writes,
                                     write_burst_seconds=args.write_burst_seconds, probe=probe,
                                     data_reduction=args.data_reduction,
                                     wide_parity_groups=args.wide_parity_groups)), prices


def run_size(args: argparse.Namespace) -> int:
    request, prices = size_request(args)
    if not isinstance(request, SizeRequest):
        from dbtier.cli.plan.cloud import run_cloud
        return run_cloud(args, request)
    req = request.requirement
    res = size_plan(request)
    run = Run("plan.size", args, size_params(request, args.catalog, args.prices, args.server_ports,
                                             args.from_history),
              inputs=_inputs(args, args.from_history, args.probe))
    doc = _store(run, res)
    emit(doc, args, lambda: render.size(console(args), req, res.sizing, args.redundancy, doc["pricing"]["text"],
                                        run.dir.path, prices, doc["grade"]))
    return 0


def run_value(args: argparse.Namespace) -> int:
    catalog, prices = load_priced(args)
    result = load_run(args.result)
    res = value_plan(ValueRequest(run=result, run_dir=str(args.result), config=args.config, hit_ratio=args.hit_ratio,
                                  guards=tuple(doc_guards(result)), **_pricing(args, catalog, prices)))
    run = Run("plan.value", args, _params(args, "value", result=args.result, config=args.config),
              inputs=_inputs(args, result["_run_dir"]))
    doc = _store(run, res)
    emit(doc, args, lambda: render.value(console(args), res.value, str(args.result), res.configured.describe(),
                                         run.dir.path, prices))
    return 0
