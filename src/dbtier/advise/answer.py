"""The advice in words: a few lines a DBA pastes into a ticket, and the options' table rows. Pure."""

from __future__ import annotations

import math
from typing import Any

from dbtier.core.units import size_text

COLUMNS = ("where", "what", "purchase", "a month", "total", "binding", "reserve")


def usd(x: Any) -> str:
    if not isinstance(x, (int, float)) or isinstance(x, bool) or not math.isfinite(x):
        return "–"
    return f"${x:,.0f}" if abs(x) >= 10 or x == 0 else f"${x:,.2f}"


def num(x: Any, digits: int = 0) -> str:
    if not isinstance(x, (int, float)) or isinstance(x, bool) or not math.isfinite(x):
        return "–"
    return f"{x:,.{digits}f}"


def pct(x: Any) -> str:
    return "–" if not isinstance(x, (int, float)) or isinstance(x, bool) or not math.isfinite(x) else f"{x:.0%}"


def need(req: dict[str, Any]) -> str:
    parts = []
    if req.get("read_iops") is not None or req.get("write_iops") is not None:
        parts.append(f"{num(req.get('read_iops'))} read / {num(req.get('write_iops'))} write IOPS")
    if req.get("read_mbps") is not None or req.get("write_mbps") is not None:
        parts.append(f"{num(req.get('read_mbps'), 1)} / {num(req.get('write_mbps'), 1)} MB/s")
    if req.get("capacity_gb") is not None:
        parts.append(f"{num(req.get('capacity_gb'), 0)} GB")
    if req.get("write_tb_per_day") is not None:
        parts.append(f"{size_text(req['write_tb_per_day'] * 1e12)} written a day")
    return ", ".join(parts) or "no figure"


def option_line(o: dict[str, Any]) -> str:
    if not o.get("meets"):
        return f"{o['where']}: no option: {'; '.join(o.get('caveats') or []) or 'none meets it'}"
    money = (f"{usd(o.get('purchase_usd'))} to buy" if o["where"] == "on-prem"
             else f"{usd(o.get('monthly_usd'))} a month")
    on = f" on {o['instance']}" if o.get("instance") and f"on {o['instance']}" not in str(o.get("description")) else ""
    return (f"{o['where']}: {o.get('description')}{on}: {money}, {usd(o.get('total_usd'))} over "
            f"{o.get('service_years'):g} years ({usd(o.get('per_year_usd'))} a year); bound by "
            f"{o.get('binding') or '?'}; {pct(o.get('reserve'))} reserve")


def lines(advice: dict[str, Any]) -> list[str]:
    """The answer first: what the database needs, the recommendation and why, then each other place."""
    req = advice.get("requirement") or {}
    dbs = advice.get("databases") or []
    who = ", ".join(f"{d['name']}" + (f" ({d['instances']} instances)" if (d.get("instances") or 1) > 1 else "")
                    for d in dbs[:5]) + (f" and {len(dbs) - 5} more" if len(dbs) > 5 else "")
    out = [f"{who or 'the database'} needs {need(req)} "
           f"(the {req.get('basis') or 'history'}; planned with {req.get('headroom', 0):.0%} headroom)."]
    if req.get("capacity_gb") is None:
        out.append("Capacity is not known (the history does not give every database's allocated size): the options "
                   "are sized without it; give --capacity-gb.")
    out += [f"Check: {w}" for w in advice.get("warnings") or []]
    if advice.get("bound"):
        out.append(f"These figures are bounds or estimates: {str(advice['bound']).rstrip('.')}.")
    opts = advice.get("options") or []
    rec = advice.get("recommended")
    if rec is None:
        out.append("No option meets the requirement: " + "; ".join(option_line(o) for o in opts))
        return out
    best = opts[rec]
    out.append(f"Recommended: {option_line(best)}.")
    n = sum(1 for o in opts if o.get("meets"))
    why = [f"the cheapest over {best.get('service_years'):g} years of the {n} options that meet the requirement"
           if n > 1 else "the only option that meets the requirement"]
    out.append("Why: " + "; ".join(why) + ".")
    if best.get("caveats"):
        out.append("What would break it: " + "; ".join(best["caveats"]) + ".")
    for i, o in enumerate(opts):
        if i != rec:
            out.append(f"  {option_line(o)}")
    cur = advice.get("current")
    if cur:
        if cur.get("meets") is None:
            out.append(f"Today's storage ({cur.get('target')}): the probe measured none of the required figures.")
        else:
            short = [m for m, f in (cur.get("figures") or {}).items() if not f["met"]]
            out.append(f"Today's storage ({cur.get('target')}) "
                       + ("meets it" if cur["meets"] else f"falls short on {', '.join(short)}")
                       + f": smallest margin {pct(cur.get('margin'))} over the requirement.")
    return out


def rows(advice: dict[str, Any]) -> list[tuple[str, ...]]:
    """The options' table, cheapest first (the recommended one marked)."""
    out: list[tuple[str, ...]] = []
    for i, o in enumerate(advice.get("options") or []):
        mark = " *" if i == advice.get("recommended") else ""
        if not o.get("meets"):
            out.append((o["where"] + mark, str(o.get("description")), "–", "–", "–", "no option", "–"))
            continue
        what = str(o.get("description"))
        out.append((o["where"] + mark, what, usd(o.get("purchase_usd")), usd(o.get("monthly_usd")),
                    usd(o.get("total_usd")), str(o.get("binding") or "–"),
                    pct(o.get("reserve"))))
    return out
