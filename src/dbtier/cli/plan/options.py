"""Options every `plan` action shares: pricing (drive ports, devices only) and the cost over the service
life (years, electricity, what ranks the designs)."""

from __future__ import annotations

import argparse
from typing import Any, Sequence

from dbtier.cli import options as argtypes
from dbtier.model.plan.endurance import DEFAULT_SERVICE_YEARS
from dbtier.model.plan.tco import DEFAULT_USD_PER_KWH


def add_prices_option(g: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """`--prices FILE`: the user's quotes over the catalog's prices (plan's actions, advise)."""
    g.add_argument("--prices", metavar="FILE",
                   help="your own quotes, replacing the catalog's price of each device they name: CSV with the "
                        "header id,price_usd,currency,date,source, or TOML [[price]] tables with those fields; "
                        "USD only (convert first), date YYYY-MM-DD or YYYY-MM, source optional. A quote older "
                        "than a year is applied and flagged; `dbtier catalog show ID --prices FILE` says which "
                        "price a device uses")


def add_grade_option(p: argparse.ArgumentParser, default: str | None = None) -> None:
    """`--grade production|lab`: which drives an on-prem design may use (plan size, advise; None: production)."""
    from dbtier.model.plan.prices import GRADES
    p.add_argument("--grade", choices=GRADES, default=default,
                   help="production (default): datacenter drives only (power-loss protection, a datacenter "
                        "warranty), with shared arrays; lab: client drives too, for a test box or a developer's "
                        "machine. Study devices are offered under neither (plan size: unless --devices names them)")


def add_pricing_options(p: argparse.ArgumentParser) -> None:
    """`--server-ports N`, `--devices-only` and `--prices FILE`, shared by every plan action."""
    g = p.add_argument_group("pricing")
    add_prices_option(g)
    g.add_argument("--server-ports", type=int, default=None, metavar="N",
                   help="SAS/SATA drive ports the server already has (default: the catalog's [server] drive_ports, "
                        "8): the first N drives use them and HBA/enclosure units are bought only past them; "
                        "0 buys one per 16 drives from the first. PCIe cards and NVMe drives use no drive port")
    g.add_argument("--devices-only", action="store_true",
                   help="price the devices alone (no controller, enclosure or slot), as studies that price the "
                        "I/O system by its drives do; the controllers' MB/s ceilings still apply")


def add_cost_options(p: argparse.ArgumentParser, ranks: bool = False) -> argparse._ArgumentGroup:
    """`--service-years`, `--usd-per-kwh` (every plan action) and, where designs are ranked, `--cost`."""
    g = p.add_argument_group("cost over the service life")
    if ranks:
        g.add_argument("--cost", choices=("tco", "purchase"), default="tco",
                       help="what ranks the designs: tco (default), the cost over the service life (purchase, "
                            "replacements, energy, cloud months), or purchase, the price paid today (what the "
                            "2009-2011 studies compared)")
    g.add_argument("--service-years", type=argtypes.positive_float(50), default=DEFAULT_SERVICE_YEARS, metavar="N",
                   help=f"years the storage must serve (default {DEFAULT_SERVICE_YEARS:g})")
    g.add_argument("--usd-per-kwh", type=argtypes.positive_float(100), default=DEFAULT_USD_PER_KWH, metavar="USD",
                   help=f"electricity price (default {DEFAULT_USD_PER_KWH}: the US EIA's 2024 average commercial "
                        "price, about 13 cents/kWh)")
    return g


def add_array_options(p: argparse.ArgumentParser) -> None:
    """How arrays are sized: a shared array's data reduction, RAID 5/6 group widths (plan size and advise)."""
    g = p.add_argument_group("arrays")
    g.add_argument("--data-reduction", type=argtypes.positive_float(10), default=1.0, metavar="X",
                   help="a shared array's dedupe and compression, X:1 (default 1.0: none assumed; each array "
                        "candidate says the figure it assumes)")
    g.add_argument("--wide-parity-groups", action="store_true",
                   help="also size RAID 5 sets wider than 12 drives and RAID 6 wider than 16 (RAID-Z, "
                        "declustered RAID, or a vendor who supports them): by default a wider set is not offered")


def plan_params(action: str, catalog_files: Sequence[str], prices: str | None, server_ports: int | None,
                devices_only: bool, cost: str | None, service_years: float, usd_per_kwh: float,
                **extra: Any) -> dict[str, Any]:
    """A plan run's params: the options every action records, in this order (`prices` only when given,
    `cost` only for the actions that take it: None), then the action's own."""
    return {"action": action, "catalog_files": list(catalog_files), **({"prices": prices} if prices else {}),
            "server_ports": server_ports, "devices_only": devices_only,
            **({"cost": cost} if cost is not None else {}), "service_years": service_years,
            "usd_per_kwh": usd_per_kwh, **extra}
