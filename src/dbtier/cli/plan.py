"""`dbtier plan equivalent|budget|size|value`: arrays from the catalog, their cost, and the cheapest that fits.

Thin: parse, check the numbers, call `dbtier.model.planner`, write the run
directory, print. The document has `plan` (which action) and the action's
contract keys at top level (see README, "dbtier plan").
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path
from typing import Any, Sequence

from rich import box
from rich.table import Table

from dbtier.cli import options as argtypes
from dbtier.cli.catalog import add_catalog_option
from dbtier.cli.markup import esc, lit
from dbtier.cli.common import usage, Run, add_output_options, console, emit
from dbtier.core.errors import DbtierError
from dbtier.model.array import (DEFAULT_HIT_RATIO, DEFAULT_READ_FRACTION, LAYOUT_HELP, LAYOUTS, SET_LAYOUTS,
                                Evaluation, check_server_ports, evaluate, parse_spec)
from dbtier.model.catalog import load_catalog
from dbtier.model.planner import (DEFAULT_CACHE_FRACTION, DEFAULT_MAX_DEVICES, LABELS, BudgetOption, Equivalence,
                                  Requirement, Sizing, Value, budget, equivalent, requirement_from_history, size,
                                  value)
from dbtier.results.store import load_run

_LAYOUT_LIST = "; ".join(f"{k}: {v}" for k, v in LAYOUT_HELP.items())


def _list(values: Sequence[str] | None) -> list[str]:
    """`--devices a,b c` -> [a, b, c]: commas and spaces both separate."""
    return [v.strip() for item in (values or []) for v in item.split(",") if v.strip()]


def add_pricing_options(p: argparse.ArgumentParser) -> None:
    """`--server-ports N` and `--devices-only`, shared by every plan action."""
    g = p.add_argument_group("pricing")
    g.add_argument("--server-ports", type=int, default=None, metavar="N",
                   help="SAS/SATA drive ports the server already has (default: the catalog's [server] drive_ports, "
                        "8): the first N drives use them and HBA/enclosure units are bought only past them; "
                        "0 buys one per 16 drives from the first. PCIe cards and NVMe drives use no drive port")
    g.add_argument("--devices-only", action="store_true",
                   help="price the devices alone (no controller, enclosure or slot), as studies that price the "
                        "I/O system by its drives do; the controllers' MB/s ceilings still apply")


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
    req.add_argument("--from-history", metavar="RUN_DIR",
                     help="take the requirement from a `dbtier history` run (options given here override it)")
    sp.add_argument("--layouts", nargs="+", metavar="LAYOUT",
                    help=f"layouts to try (default all: {', '.join(LAYOUTS)})")
    sp.add_argument("--redundancy", choices=("required", "none"), default="required",
                    help="required (default): only layouts that survive a device failure (and cloud volumes, "
                         "which the provider replicates)")
    sp.add_argument("--devices", nargs="+", metavar="ID,ID", help="only these devices (default the whole catalog)")
    sp.add_argument("--hit-ratio", type=argtypes.fraction(), default=DEFAULT_HIT_RATIO, metavar="H",
                    help="read hit ratio of read-cache designs, 0..1 (default 0.9)")
    sp.add_argument("--cache-fraction", type=argtypes.fraction(), default=DEFAULT_CACHE_FRACTION, metavar="F",
                    help="a read cache holds at least this share of the backing set's capacity (default 0.1)")
    sp.add_argument("--max-devices", type=argtypes.positive_int(1_000_000), default=DEFAULT_MAX_DEVICES, metavar="N",
                    help=f"most devices in one set (default {DEFAULT_MAX_DEVICES})")
    sp.add_argument("--top", type=argtypes.positive_int(1_000_000), default=10, metavar="N",
                    help="how many candidates to list (default 10)")
    add_pricing_options(sp)
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
    add_catalog_option(vp)
    add_output_options(vp)
    vp.set_defaults(func=run_value)

    p.set_defaults(func=usage(p))



# -- checks ----------------------------------------------------------------------------------------

def _positive(option: str, x: float | None) -> None:
    if x is not None and (not math.isfinite(x) or x <= 0):
        raise DbtierError(f"{option} must be a positive number, got {x:g}", f"give {option} a value above 0")


def _fraction(option: str, x: float) -> None:
    if not math.isfinite(x) or not 0 <= x <= 1:
        raise DbtierError(f"{option} must be between 0 and 1, got {x:g}", f"e.g. {option} 0.5")


def _server_ports(args: argparse.Namespace) -> int | None:
    if args.server_ports is None:
        return None
    return check_server_ports(args.server_ports)


def _params(args: argparse.Namespace, action: str, **extra: Any) -> dict[str, Any]:
    return {"action": action, "catalog_files": list(args.catalog), "server_ports": args.server_ports,
            "devices_only": args.devices_only, **extra}


def _pricing(catalog: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The document's top-level `pricing`: which pricing every figure of this run used."""
    ports = catalog.server_ports if args.server_ports is None else args.server_ports
    basis = "devices only" if args.devices_only else "devices and overheads"
    where = "--server-ports" if args.server_ports is not None else "the catalog's default"
    text = ("devices only (--devices-only): controllers, enclosures and slots are not priced; their MB/s "
            "ceilings still apply" if args.devices_only else
            f"devices and overheads, on a server with {ports} drive port{'s' if ports != 1 else ''} of its own "
            f"({where}): HBA/enclosure units are priced only past them; PCIe cards and NVMe drives need none")
    return {"basis": basis, "server_ports": ports,
            "server_ports_from": "--server-ports" if args.server_ports is not None else "catalog", "text": text}


def _doc(run: Run, action: str, catalog: Any, body: dict[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    run.doc["plan"] = action
    run.doc.update(body)
    run.doc["pricing"] = _pricing(catalog, args)
    run.doc["catalog"] = catalog.provenance()
    run.finish()
    return run.doc


# -- formatting --------------------------------------------------------------------------------------

def _n(x: float | None, digits: int = 0) -> str:
    if x is None:
        return "-"
    if x == math.inf:
        return "∞"
    if digits == 0 and abs(x) < 10 and not float(x).is_integer():
        return f"{x:.2f}"
    return f"{x:,.{digits}f}"


def _usd(x: float | None) -> str:
    return "-" if x is None else ("$" + _n(x, 2 if 0 < abs(x) < 10 and not float(x).is_integer() else 0))


def _si(x: float) -> str:
    """Compact: 950, 12.5K, 2.94M."""
    if x == math.inf:
        return "∞"
    if abs(x) >= 1_000_000:
        return f"{x / 1_000_000:.3g}M"
    if abs(x) >= 10_000:
        return f"{x / 1000:.3g}K"
    return _n(x)


def _short(e: Evaluation) -> str:
    c = e.config
    if c.layout == "preferred-read-mirror" and c.second is not None:
        return f"{c.count}×{c.device.id} ⇄ {c.second_count}×{c.second.id} (pref. read)"
    if c.layout == "read-cache" and c.second is not None:
        return (f"{c.count}×{c.device.id} cache {c.hit_ratio:.0%} → {c.second_count}×{c.second.id} "
                f"{c.second_layout}")
    return f"{c.count}×{c.device.id} {c.layout}"


def _table(title: str, cols: Sequence[str], left: int = 1) -> Table:
    # titles and headers carry device ids from catalog files: never markup
    t = Table(title=esc(title), title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
    for i, c in enumerate(cols):
        t.add_column(esc(c), justify="left" if i < left else "right", no_wrap=True)
    return t


def _figures_table(title: str, evs: Sequence[tuple[str, Evaluation]]) -> Table:
    """Rows of figures, one column per configuration; the limit of each figure in the last column of a row."""
    t = _table(title, ["", *(name for name, _ in evs)])
    rows = [("price", lambda e: _usd(e.price_usd)),
            ("usable capacity GB", lambda e: _n(e.capacity_gb.value)),
            ("read / write IOPS", lambda e: f"{_n(e.read_iops.value)} / {_n(e.write_iops.value)}"),
            (f"IOPS at {evs[0][1].read_fraction:.0%} reads", lambda e: _n(e.iops.value)),
            ("read / write MB/s", lambda e: f"{_n(e.read_mbps.value)} / {_n(e.write_mbps.value)}"),
            ("read / write latency µs", lambda e: f"{_n(e.read_latency_us.value)} / {_n(e.write_latency_us.value)}"),
            ("$/GB", lambda e: _usd(e.usd_per_gb)),
            ("$/IOPS", lambda e: _usd(e.usd_per_iops)),
            ("$ per MB/s", lambda e: _usd(e.usd_per_mbps))]
    for name, fn in rows:
        t.add_row(name, *(fn(e) for _, e in evs))
    return t


# -- document bodies (the contract keys at top level; the report reads them) ---------------------------

def equivalent_body(eq: Equivalence) -> dict[str, Any]:
    return {"reference": eq.reference.to_dict(),
            "using": {"device": eq.using.id, "layout": eq.layout},
            "read_fraction": eq.read_fraction,
            "by_metric": {k: m.contract() for k, m in eq.by_metric.items()},
            "arrays": {k: m.evaluation.to_dict() for k, m in eq.by_metric.items()},
            "matched": {k: m.reference_value for k, m in eq.by_metric.items()}}


def budget_body(options: Sequence[BudgetOption], usd: float, layout: str, read_fraction: float) -> dict[str, Any]:
    opts = []
    for o in options:
        d = o.contract()
        d.update({"layout": o.layout, "smallest_price_usd": o.smallest_price_usd, "left_usd": usd - d["price_usd"],
                  "array": o.evaluation.to_dict() if o.evaluation else None})
        if not o.count:
            d["note"] = f"the budget buys no {o.layout} array of it: the smallest costs {_usd(o.smallest_price_usd)}"
        opts.append(d)
    return {"usd": usd, "layout": layout, "read_fraction": read_fraction, "options": opts}


def size_body(sz: Sizing, history: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"requirement": sz.requirement.to_dict(),
            "candidates": [c.contract() for c in sz.candidates],
            "binding": sz.binding,
            "binding_detail": sz.binding_detail,
            "designs_tried": sz.considered,
            "designs_meeting": sz.found,
            "history": history}


def value_body(v: Value, run_dir: str, command: Any) -> dict[str, Any]:
    return {"result": {"run_dir": run_dir, "command": command, "kind": v.kind},
            "config": v.evaluation.to_dict(),
            "measured": v.measured,
            "value": v.figures,
            "figures_used": v.figures_used}


# -- equivalent ----------------------------------------------------------------------------------------

def run_equivalent(args: argparse.Namespace) -> int:
    _fraction("--read-fraction", args.read_fraction)
    catalog = load_catalog(args.catalog)
    eq = equivalent(catalog, args.reference, args.using, args.read_fraction, args.layout,
                    server_ports=_server_ports(args), devices_only=args.devices_only)
    run = Run("plan", args, _params(args, "equivalent", reference=args.reference, using=args.using,
                                    layout=args.layout, read_fraction=args.read_fraction))
    doc = _doc(run, "equivalent", catalog, equivalent_body(eq), args)

    def render() -> None:
        con = console(args)
        ref = eq.reference
        t = _table(f"{eq.using.id} ({eq.layout}) to match one {ref.config.device.id} "
                   f"({_usd(ref.price_usd)})", ["metric", "to match", "count", "price", "× reference"], left=2)
        for k, m in eq.by_metric.items():
            t.add_row(k, m.reference_value, _n(m.count), _usd(m.price_usd), f"{m.price_ratio:.2f}×")
        con.print(t)
        con.print()
        evs = [(f"1 × {ref.config.device.id}", ref)] + [(f"{m.count} × ({k})", m.evaluation)
                                                          for k, m in eq.by_metric.items()]
        con.print(_figures_table("what each delivers", evs))
        over = eq.by_metric["iops"].evaluation.overheads
        if over:
            o = over[0]
            con.print(f"[dim]overhead: {esc(o['id'])}, ${o['unit_price_usd']:,.0f} per {o['per_devices']} devices, "
                      f"{o['max_mbps']:,.0f} MB/s each[/dim]")
        con.print(f"[dim]pricing: {esc(doc['pricing']['text'])}[/dim]", soft_wrap=True)
        con.print(f"[dim]Run: {esc(run.dir.path)}[/dim]")

    emit(doc, args, render)
    return 0


# -- budget ----------------------------------------------------------------------------------------------

def run_budget(args: argparse.Namespace) -> int:
    _positive("--usd", args.usd)
    _fraction("--read-fraction", args.read_fraction)
    devices = _list(args.devices)
    catalog = load_catalog(args.catalog)
    options = budget(catalog, args.usd, devices, args.layout, args.read_fraction, _server_ports(args),
                     args.devices_only)
    run = Run("plan", args, _params(args, "budget", usd=args.usd, devices=devices, layout=args.layout,
                                    read_fraction=args.read_fraction))
    doc = _doc(run, "budget", catalog, budget_body(options, args.usd, args.layout, args.read_fraction),
               args)

    def render() -> None:
        con = console(args)
        t = _table(f"what {_usd(args.usd)} buys ({args.layout}, overhead included)",
                   ["device", "count", "price", "GB", f"IOPS@{args.read_fraction:.0%}r", "MB/s r/w",
                    "latency µs r/w"])
        for o in options:
            e = o.evaluation
            if e is None:
                t.add_row(lit(o.device.id), "0", f"(smallest {_usd(o.smallest_price_usd)})", "-", "-", "-", "-")
                continue
            t.add_row(lit(o.device.id), _n(o.count), _usd(e.price_usd), _n(e.capacity_gb.value), _n(e.iops.value),
                      f"{_n(e.read_mbps.value)}/{_n(e.write_mbps.value)}",
                      f"{_n(e.read_latency_us.value)}/{_n(e.write_latency_us.value)}")
        con.print(t)
        for o in options:
            if o.evaluation is not None:
                con.print(f"[dim]{esc(o.device.id)}: MB/s limited by {esc(o.evaluation.read_mbps.limit)} "
                          f"({esc(o.evaluation.read_mbps.detail)})[/dim]")
        con.print(f"[dim]pricing: {esc(doc['pricing']['text'])}[/dim]", soft_wrap=True)
        con.print(f"[dim]Run: {esc(run.dir.path)}[/dim]")

    emit(doc, args, render)
    return 0


# -- size -----------------------------------------------------------------------------------------------------

_REQ_OPTIONS = {"read_iops": "--read-iops", "write_iops": "--write-iops", "read_mbps": "--read-mbps",
                "write_mbps": "--write-mbps", "capacity_gb": "--capacity-gb"}


def _requirement(args: argparse.Namespace) -> tuple[Requirement, dict[str, Any] | None]:
    for key, opt in _REQ_OPTIONS.items():
        _positive(opt, getattr(args, key))
    _positive("--max-read-latency-us", args.max_read_latency_us)
    if args.headroom is not None and (not math.isfinite(args.headroom) or args.headroom < 0):
        raise DbtierError(f"--headroom must be 0 or more, got {args.headroom:g}", "e.g. --headroom 0.3 for 30% on top")
    given = {k: getattr(args, k) for k in _REQ_OPTIONS}
    if args.from_history:
        hist = load_run(args.from_history)
        req = requirement_from_history(hist, args.from_history, given, args.headroom, args.max_read_latency_us)
        return req, {"run_dir": str(Path(args.from_history)), "requirement": hist.get("requirement")}
    if not any(v is not None for v in given.values()) and args.max_read_latency_us is None:
        raise DbtierError("no requirement given", "give at least one of --read-iops, --write-iops, --read-mbps, "
                          "--write-mbps, --capacity-gb, --max-read-latency-us, or --from-history RUN_DIR")
    req = Requirement(**given, max_read_latency_us=args.max_read_latency_us,
                      headroom=0.3 if args.headroom is None else args.headroom)
    return req, None


def run_size(args: argparse.Namespace) -> int:
    req, history = _requirement(args)
    _fraction("--hit-ratio", args.hit_ratio)
    if args.top < 1:
        raise DbtierError(f"--top must be at least 1, got {args.top}", "e.g. --top 10")
    if args.max_devices < 1:
        raise DbtierError(f"--max-devices must be at least 1, got {args.max_devices}", "e.g. --max-devices 1024")
    layouts = _list(args.layouts) or list(LAYOUTS)
    devices = _list(args.devices) or None
    catalog = load_catalog(args.catalog)
    _fraction("--cache-fraction", args.cache_fraction)
    sz = size(catalog, req, devices, layouts, args.redundancy, args.hit_ratio, args.max_devices, top=args.top,
              cache_fraction=args.cache_fraction, server_ports=_server_ports(args), devices_only=args.devices_only)
    run = Run("plan", args, _params(args, "size", requirement=req.to_dict(), layouts=layouts, devices=devices,
                                    redundancy=args.redundancy, hit_ratio=args.hit_ratio,
                                    cache_fraction=args.cache_fraction,
                                    max_devices=args.max_devices, top=args.top, from_history=args.from_history),
              inputs=[p for p in (args.from_history, *args.catalog) if p])
    doc = _doc(run, "size", catalog, size_body(sz, history), args)

    def render() -> None:
        con = console(args)
        parts = [f"{LABELS[k]} {_n(getattr(req, k))}" for k in req.given()]
        if req.max_read_latency_us is not None:
            parts.append(f"read latency ≤ {_n(req.max_read_latency_us)} µs")
        con.print(esc(f"requirement: {', '.join(parts)}; headroom {req.headroom:.0%}; from {req.source}"))
        # the figures the requirement is about (all of them go to --json)
        cats = req.categories()
        cols = ["#", "configuration", "price", "GB"]
        cols += ["IOPS r/w"] if "iops" in cats else []
        cols += ["MB/s r/w"] if "throughput" in cats else []
        cols += ["read µs"] if "latency" in cats else []
        t = _table(f"cheapest of {sz.found:,} designs that meet it ({sz.considered:,} tried, redundancy "
                   f"{args.redundancy})", cols + ["binding"], left=2)
        t.columns[1].no_wrap = False
        t.columns[1].overflow = "fold"
        for i, c in enumerate(sz.candidates, 1):
            e = c.evaluation
            row = [str(i), lit(_short(e)), _usd(e.price_usd), _si(e.capacity_gb.value)]
            row += [f"{_si(e.read_iops.value)}/{_si(e.write_iops.value)}"] if "iops" in cats else []
            row += [f"{_si(e.read_mbps.value)}/{_si(e.write_mbps.value)}"] if "throughput" in cats else []
            row += [_si(e.read_latency_us.value)] if "latency" in cats else []
            t.add_row(*row, lit(c.binding))
        con.print(t)
        con.print(f"binding: [bold]{esc(sz.binding)}[/bold] — {esc(sz.binding_detail)}", soft_wrap=True)
        con.print(f"[dim]pricing: {esc(doc['pricing']['text'])}[/dim]", soft_wrap=True)
        con.print(f"[dim]`--json` gives each requirement's margin (offered / required - 1; met at "
                  f"{req.headroom:.0%} or more). Run: {esc(run.dir.path)}[/dim]")

    emit(doc, args, render)
    return 0


# -- value ---------------------------------------------------------------------------------------------------

def run_value(args: argparse.Namespace) -> int:
    _fraction("--hit-ratio", args.hit_ratio)
    catalog = load_catalog(args.catalog)
    cfg = parse_spec(catalog, args.config, args.hit_ratio, _server_ports(args), args.devices_only)
    result = load_run(args.result)
    v = value(result, evaluate(cfg), str(args.result))
    run = Run("plan", args, _params(args, "value", result=args.result, config=args.config),
              inputs=[result["_run_dir"], *args.catalog])
    doc = _doc(run, "value", catalog, value_body(v, str(args.result), result.get("command")), args)

    def render() -> None:
        con = console(args)
        con.print(esc(f"price/performance of {args.result} ({v.kind} run) as {cfg.describe()}"), soft_wrap=True)
        t = Table(show_header=False, box=box.SIMPLE_HEAD)
        t.add_column("figure", style="bold")
        t.add_column("value", justify="right")
        labels = [("tpm_per_usd", "TPM per $", 3), ("tps_per_usd", "TPS per $", 4), ("iops_per_usd", "IOPS per $", 3),
                  ("mbps_per_usd", "MB/s per $", 4), ("usd_per_gb", "$ per GB", 2), ("usd_per_tpm", "$ per TPM", 2),
                  ("usd_per_tps", "$ per TPS", 2), ("usd_per_iops", "$ per IOPS", 3)]
        for key, label, digits in labels:
            x = v.figures.get(key)
            if x is not None:
                t.add_row(label, f"{x:,.{digits}f}")
        con.print(t)
        for line in v.figures_used:
            con.print(f"[dim]· {esc(line)}[/dim]", soft_wrap=True)
        con.print(f"[dim]Run: {esc(run.dir.path)}[/dim]")

    emit(doc, args, render)
    return 0
