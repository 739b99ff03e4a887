"""Cost over the service life: purchase, replacements, energy and cloud months.

Pure: an evaluated configuration and numbers in, the `tco` object out.

    purchase_usd      devices bought outright plus the overhead units (controllers, enclosures,
                      array controller pairs); cloud volumes are not bought
    replacements_usd  flash devices that wear out before the service life ends, bought again at
                      today's price (`--worn replace`): ceil(service / lifetime) - 1 each
    energy_usd        every device at idle + (active - idle) x utilisation watts, every overhead
                      unit at its watts, for the service life's hours, at `usd_per_kwh`;
                      utilisation is the busiest resource's share at the requirement (no headroom),
                      applied to every device (an upper bound for the idle side of a mixed design)
    cloud_usd         a cloud volume's monthly list price x 12 x service years (the catalog's
                      `usd_per_month`, else its 36-month `price_usd` / 36)
    total_usd         their sum; per_year_usd = total / service years

A figure the catalog lacks (a device's watts) leaves energy unpriced: energy_usd is null, the
total omits it and `unchecked` names it, never a silent zero.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from dbtier.core.errors import DbtierError
from dbtier.model.plan.array import DeviceSet, Evaluation

HOURS_PER_YEAR = 8766          # 365.25 days
# US EIA, Electric Power Monthly table 5.6.A: average retail price of electricity to the commercial
# sector, 2024: 12.7-13.1 cents per kWh by month (data centres buy at commercial or industrial rates).
DEFAULT_USD_PER_KWH = 0.13
USD_PER_KWH_SOURCE = ("US EIA Electric Power Monthly (table 5.6.A): average retail price to the commercial sector, "
                      "2024, about 13 cents per kWh; the power the devices draw, no cooling overhead (PUE) added")


def check_usd_per_kwh(x: float) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x <= 0:
        raise DbtierError(f"--usd-per-kwh must be a finite positive number, got {x}", "e.g. --usd-per-kwh 0.13")
    if x > 100:
        raise DbtierError(f"--usd-per-kwh must be at most 100 dollars, got {x:g}", "e.g. --usd-per-kwh 0.13")
    return float(x)


def monthly_usd(s: DeviceSet) -> float:
    d = s.device
    per = d.usd_per_month if d.usd_per_month is not None else d.price_usd / 36
    return s.count * per


def utilisation(e: Evaluation, reads_iops: float, writes_iops: float, reads_mb: float, writes_mb: float) -> float:
    """The busiest resource's share of a second at the given host rates, at most 1."""
    loads = [r.load(reads_iops, writes_iops) for r in e.iops_resources]
    loads += [r.load(reads_mb, writes_mb) for r in e.mbps_resources]
    return min(1.0, max(loads, default=0.0))


def tco(e: Evaluation, service_years: float, usd_per_kwh: float, util: float,
        replacements: Sequence[int] | None = None) -> dict[str, Any]:
    """The `tco` object of one configuration. `replacements`: per set, replacements per device."""
    sets = e.config.sets()
    hours = service_years * HOURS_PER_YEAR
    purchase = cloud = repl = 0.0
    watts = 0.0
    unpriced: list[str] = []
    rack_units = 0.0
    for i, s in enumerate(sets):
        d = s.device
        if d.kind == "cloud-volume":
            cloud += monthly_usd(s) * 12 * service_years
        else:
            purchase += s.device_price_usd
            if d.active_watts is None or d.idle_watts is None:
                unpriced.append(f"{d.id} has no active/idle watts")
            else:
                watts += s.count * (d.idle_watts + (d.active_watts - d.idle_watts) * util)
            k = replacements[i] if replacements else 0
            repl += k * s.device_price_usd
        purchase += s.overhead_price_usd
        for o in s.overheads:
            units = s.units(o)
            if not units:
                continue
            if o.watts is None:
                unpriced.append(f"overhead {o.id} has no watts")
            else:
                watts += units * o.watts
            rack_units += units * (o.rack_units or 0.0)
    energy = None if unpriced else watts * hours / 1000 * usd_per_kwh
    total = purchase + repl + cloud + (energy or 0.0)
    return {"purchase_usd": purchase, "replacements_usd": repl, "energy_usd": energy, "cloud_usd": cloud,
            "total_usd": total, "per_year_usd": total / service_years, "service_years": service_years,
            "watts": None if unpriced else watts, "utilisation": util, "usd_per_kwh": usd_per_kwh,
            "rack_units": rack_units, "unchecked": (["energy: " + "; ".join(dict.fromkeys(unpriced))]
                                                    if unpriced else [])}
