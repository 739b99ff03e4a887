"""The options of an advice, one row each, on one basis: the total over the service life. Pure.

- on-prem: the cheapest design `plan size` finds in the catalog (owned hardware): the purchase, and the
  total over the service life as its TCO has it (purchase, replacements, energy);
- a cloud provider: the cheapest volume set `plan size --cloud` finds on the named instance (or the
  smallest that carries it): no purchase, the monthly price, and the total = monthly x 12 x years.

`reserve` is the smallest margin the option leaves over the measured requirement (0.36: 36% above the
most demanding figure; the headroom the planners size for is part of it). `recommended` is the cheapest
total among the options that meet the requirement; options that do not (no design, a provider with no
option for the database) are listed after, with why.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

WHERE = ("on-prem", "aws", "azure", "gcp")


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) else None


def on_prem(candidate: dict[str, Any], service_years: float) -> dict[str, Any]:
    """An on-prem option from `plan size`'s best candidate (its contract)."""
    tco = candidate.get("tco") or {}
    purchase = _num(tco.get("purchase_usd"))
    purchase = _num(candidate.get("price_usd")) if purchase is None else purchase
    total = _num(tco.get("total_usd"))
    total = purchase if total is None else total
    margins = [_num(m.get("margin")) for m in (candidate.get("meets") or {}).values() if isinstance(m, dict)]
    known = [m for m in margins if m is not None]
    layouts = candidate.get("layouts") or [candidate.get("layout")]
    desc = str(candidate.get("description") or candidate.get("spec"))
    if len(layouts) > 1:
        desc += f" (or {' / '.join(str(x) for x in layouts[1:])} at the same price)"
    row = on_prem_row(desc, purchase, total, service_years, _binding(candidate.get("binding")),
                      min(known) if known else None, on_prem_caveats(candidate))
    row["meets"] = all((m or {}).get("met") for m in (candidate.get("meets") or {}).values())
    return row


def on_prem_row(description: str, purchase: float | None, total: float | None, service_years: float,
                binding: str | None, reserve: float | None, caveats: list[str]) -> dict[str, Any]:
    """An on-prem option: bought once, `total` over the service life (purchase, energy, replacements)."""
    return {"where": "on-prem", "instance": None, "description": description,
            "purchase_usd": purchase, "monthly_usd": None, "total_usd": total,
            "per_year_usd": total / service_years if total is not None else None,
            "service_years": service_years, "binding": binding, "meets": True, "reserve": reserve,
            "caveats": caveats}


def _binding(b: Any) -> str | None:
    return {"iops": "IOPS", "throughput": "MB/s", "capacity": "capacity"}.get(str(b), None if b is None else str(b))


def on_prem_caveats(c: dict[str, Any]) -> list[str]:
    """What would break an on-prem design: flash wear, writes a power loss would lose, burst figures."""
    out = []
    e = c.get("endurance") or {}
    used = _num(e.get("used_fraction"))
    if used is not None and used >= 0.5:
        out.append(f"flash wear: {used:.0%} of the devices' rated endurance is used over the service life "
                   "at the history's writes a day; more writes shorten it")
    dw = c.get("durable_writes") or {}
    if dw.get("required") and dw.get("protected") is False:
        out.append(f"no power-loss protection: {dw.get('reason')}")
    sized = c.get("sized_on") or {}
    if "burst" in (sized.get("write_iops"), sized.get("write_mbps")):
        out.append("sized on the devices' burst write figures: a write burst longer than their cache is slower")
    return out


def cloud(contract: dict[str, Any], service_years: float, need: dict[str, float], headroom: float,
          hourly_note: str | None = None) -> dict[str, Any]:
    """A provider's option from `plan size --cloud`'s best candidate (its contract). `need`: the requirement
    with headroom as the provider model sized it ({iops, mbps, gib}: what the volumes had to carry)."""
    c = contract.get("cloud") or {}
    monthly = _num((c.get("monthly_usd") or {}).get("total"))
    total = monthly * 12 * service_years if monthly is not None else None
    offered_iops = sum(_num(v.get("iops")) or 0 for v in c.get("volumes") or [])
    margins = []
    if need.get("iops") and offered_iops:
        margins.append(offered_iops / need["iops"] * (1 + headroom) - 1)
    caveats = []
    burst = c.get("burst")
    if isinstance(burst, dict):
        caveats.append(burst_caveat(burst))
    caps = c.get("caps") or {}
    if caps and caps.get("binding"):
        caveats.append(f"instance cap: {c.get('instance')}: {caps.get('binding')}")
    if hourly_note and not isinstance(burst, dict):
        caveats.append(hourly_note)
    caveats += [str(n) for n in c.get("notes") or []]
    return {"where": c.get("provider"), "instance": c.get("instance"), "description": contract.get("description"),
            "purchase_usd": 0.0, "monthly_usd": monthly, "total_usd": total,
            "per_year_usd": monthly * 12 if monthly is not None else None, "service_years": service_years,
            "binding": c.get("binding"), "meets": True, "reserve": min(margins) if margins else None,
            "caveats": caveats}


def burst_caveat(burst: dict[str, Any]) -> str:
    """What a burst bucket leaves: the history replayed through it (its lowest balance), or the risk in words."""
    cap, low = _num(burst.get("capacity")), _num(burst.get("min_balance"))
    if cap and low is not None:
        left = f"the history's busiest stretch leaves {low / cap:.0%} of it"
        if burst.get("throttled_intervals"):
            left = f"the history drains it in {burst['throttled_intervals']} interval(s)"
        return (f"burst bucket {burst.get('bucket')}: {left}; a longer or higher burst than the history's would "
                "drain it" + (f" ({burst['interval_note']})" if burst.get("interval_note") else ""))
    return f"burst bucket {burst.get('bucket') or ''}: {burst.get('note') or burst.get('assumption')}".replace("  ", " ")


def none_for(where: str, why: str, service_years: float, route: str | None = None) -> dict[str, Any]:
    """A place with no option for this database, and why (no design meets it; the vendor's cluster is not
    supported there: its own route named, not priced)."""
    return {"where": where, "instance": None, "description": route or "no option", "purchase_usd": None,
            "monthly_usd": None, "total_usd": None, "per_year_usd": None, "service_years": service_years,
            "binding": None, "meets": False, "reserve": None, "caveats": [why]}


def rank(options: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], int | None]:
    """(options by total over the service life, those that meet first; the index of the recommended one:
    the cheapest that meets, None when none does)."""
    order = sorted(options, key=lambda o: (not o["meets"], o["total_usd"] is None,
                                           o["total_usd"] if o["total_usd"] is not None else 0.0,
                                           WHERE.index(o["where"]) if o["where"] in WHERE else 9))
    rec = 0 if order and order[0]["meets"] and order[0]["total_usd"] is not None else None
    return order, rec


def current(summary: dict[str, Any], target: str, req: dict[str, Any]) -> dict[str, Any]:
    """Whether the storage a probe measured meets the requirement with its headroom, figure by figure:
    {target, figures: {metric: {required, with_headroom, measured, met, margin}}, meets, margin}."""
    h = _num(req.get("headroom")) or 0.0
    figs = {}
    for key, metric in (("read_iops_4k", "read_iops"), ("write_iops_4k", "write_iops"),
                        ("read_mbps_seq", "read_mbps"), ("write_mbps_seq", "write_mbps")):
        need, got = _num(req.get(metric)), _num(summary.get(key))
        if need is None or need <= 0 or got is None:
            continue
        figs[metric] = {"required": need, "with_headroom": need * (1 + h), "measured": got,
                        "met": got >= need * (1 + h), "margin": got / need - 1}
    ok = bool(figs) and all(f["met"] for f in figs.values())
    margin = min((f["margin"] for f in figs.values()), default=None)
    return {"target": target, "figures": figs, "meets": ok if figs else None, "margin": margin,
            "basis": "the probe's 4 KiB random peaks and sequential MB/s, each alone (the requirement's rates "
                     "happen together, so a margin is an upper bound of what is left)"}
