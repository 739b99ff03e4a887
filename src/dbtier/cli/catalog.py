"""`dbtier catalog list|show|template`: the devices and overheads the planner prices arrays from, and a
commented entry to add a device the catalog lacks."""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import Any

from rich import box
from rich.table import Table
from rich.text import Text

from dbtier.cli.markup import esc, lit
from dbtier.cli.common import usage, Run, add_output_options, console, emit
from dbtier.model.plan import catalog_template
from dbtier.model.plan.catalog import DEVICE_CLASSES, KINDS, Catalog, Device, Overhead
from dbtier.model.plan.catalog_calls import (CatalogListRequest, CatalogRequest, CatalogShowRequest,
                                             CatalogTemplateRequest, class_of, device_template, list_catalog,
                                             show_device)
from dbtier.model.plan.prices import price_basis


def add_catalog_option(p: argparse.ArgumentParser) -> None:
    """`--catalog FILE` (repeatable), shared with every command that reads the catalog."""
    p.add_argument("--catalog", action="append", default=[], metavar="FILE",
                   help="extra catalog TOML file, loaded after the shipped ones; an entry with an existing id "
                        "replaces it (repeatable, later files win)")


def add_prices_option(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """`--prices FILE`: the user's own quotes replace the catalog's prices of the devices they name."""
    p.add_argument("--prices", metavar="FILE",
                   help="your own quotes: a CSV (header id,price_usd,currency,date,source) or TOML ([[price]] "
                        "tables with those fields) file; each replaces the catalog's price of that device id. "
                        "USD only; date YYYY-MM-DD or YYYY-MM; a quote older than a year is flagged")


def catalog_request(args: argparse.Namespace) -> CatalogRequest:
    """The catalog of --catalog, with the quote file of --prices (where the command has it)."""
    return CatalogRequest(catalog_files=tuple(args.catalog), prices_file=getattr(args, "prices", None) or None)


def load_priced(args: argparse.Namespace) -> tuple[Catalog, dict[str, Any] | None]:
    """The catalog of --catalog, with --prices applied when given: (catalog, the document's `prices` or None)."""
    return catalog_request(args).load()


def prices_lines(prices: Mapping[str, Any] | None) -> list[str]:
    """The terminal's lines for --prices: what was applied, and each stale quote (markup-free)."""
    if not prices:
        return []
    out = [f"prices: {len(prices['applied'])} quote(s) from {prices['file']} applied: "
           + ", ".join(f"{a['id']} ${a['price_usd']:,.2f} of {a['date']}" for a in prices["applied"])]
    return out + [f"stale price: {n}" for n in prices.get("notes") or []]


def print_prices(con: Any, prices: Mapping[str, Any] | None) -> None:
    for i, line in enumerate(prices_lines(prices)):
        con.print(esc(line), soft_wrap=True, style="dim" if i == 0 else "yellow")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("catalog", help="list and show the device catalog (figures, prices and their sources)",
                       description="The device catalog: devices of the classic flash studies and today's classes, "
                       "each with its source, plus controller/enclosure/bus overhead.")
    csub = p.add_subparsers(dest="catalog_command", metavar="ACTION")

    lp = csub.add_parser("list", help="list devices (and overheads)",
                         description="List catalog devices by class (device_class) with their key figures: "
                         "capacity, price and the date it held, endurance (DWPD), power-loss protection, IOPS, "
                         "MB/s and latency; then the overhead entries.")
    lp.add_argument("--kind", choices=KINDS, help="only devices of this kind")
    lp.add_argument("--class", dest="device_class", metavar="CLASS",
                    help=f"only devices of this class ({', '.join(DEVICE_CLASSES)})")
    add_catalog_option(lp)
    add_prices_option(lp)
    add_output_options(lp)
    lp.set_defaults(func=run_list)

    sp = csub.add_parser("show", help="show one device, its source and the overheads it needs",
                         description="Show every field of one device, where its figures come from, and the "
                         "controller/enclosure/bus overheads a plan adds for it.")
    sp.add_argument("id", metavar="ID", help="device id (see `dbtier catalog list`)")
    add_catalog_option(sp)
    add_prices_option(sp)
    add_output_options(sp)
    sp.set_defaults(func=run_show)

    tp = csub.add_parser("template", help="print a commented [[device]] entry to add a device the catalog lacks",
                         description="Print a [[device]] entry with every field, required and optional, its unit "
                         "and what it means, with placeholder figures of the class's order of magnitude. Save it, "
                         "replace the figures from the datasheet, and pass the file to --catalog FILE (any command "
                         "that reads the catalog; `dbtier catalog show ID --catalog FILE` checks it). The template "
                         "loads as it is.")
    tp.add_argument("--class", dest="device_class", metavar="CLASS", default=catalog_template.DEFAULT_CLASS,
                    help=f"the device's class (default {catalog_template.DEFAULT_CLASS}): "
                         + ", ".join(catalog_template.classes()))
    add_output_options(tp)
    tp.set_defaults(func=run_template)

    p.set_defaults(func=usage(p))



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
    req = CatalogListRequest(catalog_files=tuple(args.catalog), prices_file=args.prices or None, kind=args.kind,
                             device_class=args.device_class or None)
    res = list_catalog(req)  # before the run directory: a bad file leaves nothing behind
    devices, overheads, catalog, prices = list(res.devices), list(res.overheads), res.catalog, res.prices
    run = Run("catalog.list", args, req.list_params(), inputs=req.inputs, read_only=True)
    run.doc.update(res.to_json())
    run.finish()

    def render() -> None:
        con = console(args)
        con.print(_devices_table(devices, con.width))
        print_prices(con, prices)
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
                  + (f" Run: {esc(run.dir.path)}" if run.persist else "") + "[/dim]")

    emit(run.doc, args, render)
    return 0


def run_show(args: argparse.Namespace) -> int:
    req = CatalogShowRequest(catalog_files=tuple(args.catalog), prices_file=args.prices or None, id=args.id)
    res = show_device(req)
    device, overheads, catalog, basis = res.device, list(res.overheads), res.catalog, res.price
    run = Run("catalog.show", args, req.show_params(), inputs=req.inputs, read_only=True)
    run.doc.update(res.to_json())
    run.finish()

    def render() -> None:
        con = console(args)
        con.print(_device_table(device, basis))
        if basis["stale"]:
            con.print(esc(f"stale price: the quote of {basis['date']} is more than a year old; storage prices "
                          "move that much in a year: get a fresh quote"), soft_wrap=True, style="yellow")
        con.print()
        if overheads:
            con.print(_overheads_table(overheads, "overheads a plan adds for it"))
            if any(o.after_server_ports for o in overheads):
                con.print(_server_line(catalog), soft_wrap=True)
        else:
            con.print("[dim]no controller/enclosure overhead: the device carries its own[/dim]")
        if run.persist:
            con.print(f"[dim]Run: {esc(run.dir.path)}[/dim]")

    emit(run.doc, args, render)
    return 0


def run_template(args: argparse.Namespace) -> int:
    req = CatalogTemplateRequest(device_class=args.device_class)
    res = device_template(req)
    run = Run("catalog.template", args, req.params(), read_only=True)
    run.doc.update(res.to_json())
    run.finish()

    def render() -> None:
        # the TOML as it is (no markup, no wrapping): `dbtier catalog template > mine.toml` is the file
        import sys
        sys.stdout.write(res.text)
        sys.stdout.flush()

    emit(run.doc, args, render)
    return 0


def _class_order(devices: list[Device]) -> list[str]:
    present = list(dict.fromkeys(class_of(d) for d in devices))
    known = [c for c in DEVICE_CLASSES if c in present]
    return known + sorted(c for c in present if c not in known and c != "no class") + (
        ["no class"] if "no class" in present else [])


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
    """One section per class (device_class): capacity, price and the date it held, DWPD, power-loss
    protection, figures read/write. Narrow terminals drop $/GB, MB/s and latency and give the date's month
    (`show` has them all)."""
    wide = width >= 100
    t = Table(title="devices by class (read/write figures; `dbtier catalog show ID` gives sources)",
              title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False, padding=(0, 1, 0, 0), show_edge=False)
    cols = ["id", "GB", "$", "price date" if wide else "date"] + (["$/GB"] if wide else []) + [
        "DWPD", "PLP", "IOPS"] + (["MB/s", "latency µs"] if wide else [])
    for name in cols:
        t.add_column(name, justify="left" if name in ("id", "price date", "PLP") else "right", no_wrap=True)
    for cls in _class_order(devices):
        group = [d for d in devices if class_of(d) == cls]
        grades = sorted({d.grade for d in group if d.grade})
        head = esc(cls) + (f" [dim]({esc(', '.join(grades))})[/dim]" if grades else "")
        t.add_row(f"[bold underline]{head}[/]", *[""] * (len(t.columns) - 1))
        for d in group:
            dwpd = d.rated_dwpd
            date = d.price_date or "-"
            row: list[str | Text] = [lit(d.id), _n(d.capacity_gb), _n(d.price_usd), lit(date if wide else date[:7])]
            if wide:
                row.append(_n(d.price_usd / d.capacity_gb, 2))
            row += ["-" if dwpd is None else f"{dwpd:.2g}",
                    {True: "yes", False: "no", None: "-"}[d.power_loss_protection],
                    f"{_si(d.read_iops)}/{_si(d.write_iops)}"]
            if wide:
                row += [f"{_si(d.read_mbps, 5)}/{_si(d.write_mbps, 5)}",
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


def _device_table(d: Device, basis: Mapping[str, Any] | None = None) -> Table:
    t = Table(title=esc(f"{d.id}: {d.name}"), title_justify="left", show_header=False)
    t.add_column("field", style="bold")
    t.add_column("value", overflow="fold")
    rows = [
        ("kind", d.kind), ("class", f"{d.device_class or '-'}, grade {d.grade or 'not stated'}"),
        ("interface", d.interface),
        ("capacity", f"{_n(d.capacity_gb)} GB"),
        ("price", f"${_n(d.price_usd)}  (${_n(d.price_usd / d.capacity_gb, 2)}/GB)"),
        ("price used", (basis or price_basis(d))["text"]),
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
