"""`dbtier catalog list|show`: the devices and overheads the planner prices arrays from."""

from __future__ import annotations

import argparse
from typing import Any

from rich import box
from rich.table import Table

from dbtier.cli.markup import esc, lit
from dbtier.cli.common import usage, Run, add_output_options, console, emit
from dbtier.model.catalog import KINDS, Catalog, Device, Overhead, load_catalog


def add_catalog_option(p: argparse.ArgumentParser) -> None:
    """`--catalog FILE` (repeatable), shared with every command that reads the catalog."""
    p.add_argument("--catalog", action="append", default=[], metavar="FILE",
                   help="extra catalog TOML file, loaded after the shipped ones; an entry with an existing id "
                        "replaces it (repeatable, later files win)")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("catalog", help="list and show the device catalog (figures, prices and their sources)",
                       description="The device catalog: devices of the classic flash studies and today's classes, "
                       "each with its source, plus controller/enclosure/bus overhead.")
    csub = p.add_subparsers(dest="catalog_command", metavar="ACTION")

    lp = csub.add_parser("list", help="list devices (and overheads)",
                         description="List catalog devices with their key figures, and the overhead entries.")
    lp.add_argument("--kind", choices=KINDS, help="only devices of this kind")
    add_catalog_option(lp)
    add_output_options(lp)
    lp.set_defaults(func=run_list)

    sp = csub.add_parser("show", help="show one device, its source and the overheads it needs",
                         description="Show every field of one device, where its figures come from, and the "
                         "controller/enclosure/bus overheads a plan adds for it.")
    sp.add_argument("id", metavar="ID", help="device id (see `dbtier catalog list`)")
    add_catalog_option(sp)
    add_output_options(sp)
    sp.set_defaults(func=run_show)

    p.set_defaults(func=usage(p))



def _params(args: argparse.Namespace, action: str, **extra: Any) -> dict[str, Any]:
    return {"action": action, "catalog_files": list(args.catalog), **extra}


def _server_line(catalog: Catalog) -> str:
    """What the server already has, in one line (markup-safe)."""
    s = catalog.server
    if s is None:
        return ("[dim]server: no [server] table, so no drive ports of its own: HBA/enclosure units are priced "
                "from the first drive[/dim]")
    return (f"[dim]server: {s.drive_ports} drive port{'s' if s.drive_ports != 1 else ''} of its own "
            f"(from {esc(s.origin)}); overheads marked 'past ports' are priced only for drives beyond them "
            "(`dbtier plan ... --server-ports N` to change, --devices-only to price drives alone)[/dim]")


def run_list(args: argparse.Namespace) -> int:
    catalog = load_catalog(args.catalog)  # before the run directory: a bad file leaves nothing behind
    devices = catalog.of_kind(args.kind)
    if args.kind:  # only the overheads those devices need
        overheads = list({o.id: o for d in devices for o in catalog.overheads_for(d)}.values())
    else:
        overheads = list(catalog.overheads.values())
    run = Run("catalog", args, _params(args, "list", kind=args.kind), inputs=args.catalog, read_only=True)
    run.doc["catalog"] = catalog.provenance()
    run.doc["devices"] = [d.to_dict() for d in devices]
    run.doc["overheads"] = [o.to_dict() for o in overheads]
    run.doc["server"] = catalog.server.to_dict() if catalog.server is not None else None
    run.finish()

    def render() -> None:
        con = console(args)
        con.print(_devices_table(devices, con.width))
        if overheads:
            con.print()
            con.print(_overheads_table(overheads, "overheads (controllers, enclosures, buses)"))
        con.print(_server_line(catalog), soft_wrap=True)
        for origin in catalog.files:
            mine = [e.id + (" (replaces an earlier entry)" if f"{what}:{e.id}" in catalog.overridden else "")
                    for what, entries in (("device", devices), ("overhead", overheads))
                    for e in entries if e.origin == origin]
            if mine and not origin.startswith("shipped:"):
                con.print()
                con.print(esc(f"from {origin}: " + ", ".join(mine)), soft_wrap=True)
        con.print()
        con.print(f"[dim]{len(devices)} devices; `dbtier catalog show ID` gives sources."
                  + (f" Run: {esc(run.dir.path)}" if run.dir else "") + "[/dim]")

    emit(run.doc, args, render)
    return 0


def run_show(args: argparse.Namespace) -> int:
    catalog = load_catalog(args.catalog)
    device = catalog.device(args.id)
    overheads = catalog.overheads_for(device)
    run = Run("catalog", args, _params(args, "show", id=args.id), inputs=args.catalog, read_only=True)
    run.doc["catalog"] = catalog.provenance()
    run.doc["device"] = device.to_dict()
    run.doc["overheads"] = [o.to_dict() for o in overheads]
    run.finish()

    def render() -> None:
        con = console(args)
        con.print(_device_table(device))
        con.print()
        if overheads:
            con.print(_overheads_table(overheads, "overheads a plan adds for it"))
            if any(o.after_server_ports for o in overheads):
                con.print(_server_line(catalog), soft_wrap=True)
        else:
            con.print("[dim]no controller/enclosure overhead: the device carries its own[/dim]")
        if run.dir:
            con.print(f"[dim]Run: {esc(run.dir.path)}[/dim]")

    emit(run.doc, args, render)
    return 0


def _n(x: float, digits: int = 0) -> str:
    """1,500 / 0.12 / 0.5: thousands separators, and small fractions are not rounded away."""
    if digits == 0 and x < 100 and not float(x).is_integer():
        return f"{x:.2g}"
    return f"{x:,.{digits}f}"


def _si(x: float, digits: int = 3) -> str:
    """Compact number for narrow tables, `digits` significant: 250, 3.3K, 185K, 1.4M (5 digits: 12500)."""
    if x >= 10**digits:
        if x >= 1_000_000:
            return f"{x / 1_000_000:.3g}M"
        return f"{x / 1000:.3g}K"
    return f"{x:.{digits}g}"


def _devices_table(devices: list[Device], width: int) -> Table:
    """One section per kind; figures read/write. Narrow terminals drop $/GB (`show` has it)."""
    wide = width >= 80
    t = Table(title="devices (read/write figures; `dbtier catalog show ID` gives sources)", title_justify="left",
              box=box.SIMPLE_HEAD, pad_edge=False, padding=0, show_edge=False)
    cols = ["id", "GB", "$"] + (["$/GB"] if wide else []) + ["IOPS", "MB/s", "latency µs"]
    for name in cols:
        t.add_column(name, justify="left" if name == "id" else "right", no_wrap=True)
    for kind in KINDS:
        group = [d for d in devices if d.kind == kind]
        if not group:
            continue
        t.add_row(f"[bold underline]{esc(kind)}[/]", *[""] * (len(t.columns) - 1))
        for d in group:
            row = [lit(d.id), _n(d.capacity_gb), _n(d.price_usd)]
            if wide:
                row.append(_n(d.price_usd / d.capacity_gb, 2))
            row += [f"{_si(d.read_iops)}/{_si(d.write_iops)}", f"{_si(d.read_mbps, 5)}/{_si(d.write_mbps, 5)}",
                    f"{_si(d.read_latency_us, 5)}/{_si(d.write_latency_us, 5)}"]
            t.add_row(*row)
    return t


def _life_rows(d: Device) -> list[tuple[str, str]]:
    """The service-life figures the entry has (plan size uses them; a missing one is said)."""
    rows: list[tuple[str, str]] = []
    if d.flash or d.kind == "hdd":
        tbw = d.rated_tbw
        if d.flash:
            rows.append(("endurance", "absent: unchecked for wear" if tbw is None else
                         f"{_n(tbw)} TBW = {_n(d.rated_dwpd or 0, 2)} DWPD over {_n(d.warranty_years or 0)} years"))
            if d.sustained_write_iops is not None or d.sustained_write_mbps is not None:
                rows.append(("sustained writes IOPS / MB/s", f"{_n(d.sustained_write_iops or 0)} / "
                                                             f"{_n(d.sustained_write_mbps or 0)}  (the figures "
                                                             "above are bursts)"))
            if d.write_cache_gb is not None:
                rows.append(("write cache", f"{_n(d.write_cache_gb)} GB at the burst rate"))
        elif d.workload_tb_per_year is not None:
            rows.append(("workload rating", f"{_n(d.workload_tb_per_year)} TB a year"))
    if d.kind != "cloud-volume":
        plp = {True: "yes", False: "no: durable writes wait for a cache flush", None: "absent: unchecked"}[
            d.power_loss_protection]
        rows.append(("power-loss protection", plp))
        if d.flush_write_iops is not None:
            rows.append(("flush-bound write IOPS", _n(d.flush_write_iops)))
        if d.active_watts is not None:
            rows.append(("watts active / idle", f"{_n(d.active_watts, 1)} / {_n(d.idle_watts or 0, 2)}"))
    else:
        if d.usd_per_month is not None:
            rows.append(("price a month", f"${_n(d.usd_per_month, 2)}"))
        if d.durability_pct is not None:
            rows.append(("durability", f"{d.durability_pct:g}% a year (the provider's)"))
    if d.shared_access:
        rows.append(("shared access", "every node of a cluster reaches it"))
    return rows


def _device_table(d: Device) -> Table:
    t = Table(title=esc(f"{d.id}: {d.name}"), title_justify="left", show_header=False)
    t.add_column("field", style="bold")
    t.add_column("value", overflow="fold")
    rows = [
        ("kind", d.kind), ("interface", d.interface),
        ("capacity", f"{_n(d.capacity_gb)} GB"),
        ("price", f"${_n(d.price_usd)}  (${_n(d.price_usd / d.capacity_gb, 2)}/GB)"),
        ("random IOPS read / write", f"{_n(d.read_iops)} / {_n(d.write_iops)}"),
        ("sequential MB/s read / write", f"{_n(d.read_mbps)} / {_n(d.write_mbps)}"),
        ("latency µs read / write", f"{_n(d.read_latency_us)} / {_n(d.write_latency_us)}"),
        *_life_rows(d),
        ("source", d.source),
    ]
    if d.notes:
        rows.append(("notes", d.notes))
    rows.append(("from", d.origin))
    for k, v in rows:
        t.add_row(k, lit(v))
    return t


def _overheads_table(overheads: list[Overhead], title: str) -> Table:
    t = Table(title=f"{title}: one unit per N devices", title_justify="left", box=box.SIMPLE_HEAD,
              pad_edge=False, padding=0, show_edge=False)
    for name in ("id", "$/unit", "N", "MB/s cap", "past ports", "applies to"):
        t.add_column(name, justify="right" if name in ("$/unit", "N", "MB/s cap") else "left",
                     no_wrap=(name != "applies to"))
    for o in overheads:
        t.add_row(lit(o.id), _n(o.price_usd), str(o.per_devices), _n(o.max_mbps), "yes" if o.after_server_ports else "no",
                  lit(", ".join(o.applies_to)))
    return t
