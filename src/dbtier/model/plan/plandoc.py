"""The `dbtier plan` document: each action's body, the pricing note, and the requirement from options.

Pure: planner results and option values in, the document's top-level keys out
(the contract keys the report and `--json` read; docs/commands/plan.md).
`dbtier.cli.plan.command` parses and prints; what the document says is decided here.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

from dbtier.core.errors import DbtierError
from dbtier.model.plan.planner import BudgetOption, Equivalence, Value
from dbtier.model.plan.requirement import Requirement, requirement_from_history
from dbtier.model.plan.sizing import Sizing

# the headroom `plan size` adds on top when neither --headroom nor a history run gives one
DEFAULT_HEADROOM = 0.3


# -- numbers as the plan prints them (the terminal tables and the document's notes share them) ---------

def number_text(x: float | None, digits: int = 0) -> str:
    """1,234 / 2.50 (a small fraction keeps two decimals) / ∞ / - for none."""
    if x is None:
        return "-"
    if x == math.inf:
        return "∞"
    if digits == 0 and abs(x) < 10 and not float(x).is_integer():
        return f"{x:.2f}"
    return f"{x:,.{digits}f}"


def usd_text(x: float | None) -> str:
    """$1,234 / $2.50 (cents only below $10) / - for none."""
    return "-" if x is None else ("$" + number_text(x, 2 if 0 < abs(x) < 10 and not float(x).is_integer() else 0))


# -- the document's top level ----------------------------------------------------------------------

def pricing(catalog_server_ports: int, server_ports: int | None, devices_only: bool) -> dict[str, Any]:
    """The document's top-level `pricing`: which pricing every figure of this run used.

    `server_ports` is --server-ports (None: the catalog's `catalog_server_ports`)."""
    ports = catalog_server_ports if server_ports is None else server_ports
    basis = "devices only" if devices_only else "devices and overheads"
    where = "--server-ports" if server_ports is not None else "the catalog's default"
    text = ("devices only (--devices-only): controllers, enclosures and slots are not priced; their MB/s "
            "ceilings still apply" if devices_only else
            f"devices and overheads, on a server with {ports} drive port{'s' if ports != 1 else ''} of its own "
            f"({where}): HBA/enclosure units are priced only past them; PCIe cards and NVMe drives need none")
    return {"basis": basis, "server_ports": ports,
            "server_ports_from": "--server-ports" if server_ports is not None else "catalog", "text": text}


def mix_rule(read_fraction: float, read_iops: float, write_iops: float) -> dict[str, Any]:
    """How IOPS at a read/write mix are reckoned (model.array): each I/O takes its own time, so the mix's IOPS
    are the harmonic mean of the read and write IOPS weighted by the mix, 1 / (r / R + (1 - r) / W); the
    arithmetic mean r R + (1 - r) W (what a study that "averages read and write IOPS" takes) is beside it."""
    r = read_fraction
    harmonic = 1 / (r / read_iops + (1 - r) / write_iops) if read_iops > 0 and write_iops > 0 else 0.0
    mean = r * read_iops + (1 - r) * write_iops
    text = (f"IOPS at {r:.0%} reads are time-weighted (each I/O takes its own time): the harmonic mean of read and "
            f"write IOPS weighted by the mix, 1 / ({r:g} / {number_text(read_iops)} + {1 - r:g} / "
            f"{number_text(write_iops)}) = {number_text(harmonic)} for the reference; the arithmetic mean, "
            f"{r:g} x {number_text(read_iops)} + {1 - r:g} x {number_text(write_iops)} = {number_text(mean)}, "
            "is what a study that averages read and write IOPS matches")
    return {"rule": "harmonic", "read_fraction": r, "harmonic_iops": harmonic, "arithmetic_mean_iops": mean,
            "text": text}


def power_text(watts: float | None, rack_units: float | None) -> str:
    """'9,787 W, 74.6 U' (watts at the load compared on; rack units of the controllers and enclosures)."""
    w = "watts unknown" if watts is None else f"{number_text(watts)} W"
    return w + ("" if rack_units is None else f", {number_text(rack_units, 1)} U")


def equivalent_body(eq: Equivalence) -> dict[str, Any]:
    ref = eq.reference
    return {"reference": eq.reference.to_dict(),
            "mix_rule": mix_rule(eq.read_fraction, ref.read_iops.value, ref.write_iops.value),
            "using": {"device": eq.using.id, "layout": eq.layout},
            "read_fraction": eq.read_fraction,
            "by_metric": {k: m.contract() for k, m in eq.by_metric.items()},
            "arrays": {k: m.evaluation.to_dict() for k, m in eq.by_metric.items()},
            "matched": {k: m.reference_value for k, m in eq.by_metric.items()}}


def budget_body(options: Sequence[BudgetOption], usd: float, layout: str, read_fraction: float) -> dict[str, Any]:
    """Each option's contract, with what the budget leaves (`left_usd`) and, when it buys none, why."""
    opts = []
    for o in options:
        d = o.contract()
        d.update({"layout": o.layout, "smallest_price_usd": o.smallest_price_usd, "left_usd": usd - d["price_usd"],
                  "array": o.evaluation.to_dict() if o.evaluation else None})
        if not o.count:
            d["note"] = f"the budget buys no {o.layout} array of it: the smallest costs {usd_text(o.smallest_price_usd)}"
        opts.append(d)
    return {"usd": usd, "layout": layout, "read_fraction": read_fraction, "options": opts}


def size_body(sz: Sizing, history: dict[str, Any] | None = None,
              grade: dict[str, Any] | None = None) -> dict[str, Any]:
    """`grade`: what `model.prices.grade_filter` offered and left out before the search (None: not filtered)."""
    life = sz.life
    return {"requirement": sz.requirement.to_dict(),
            "candidates": [_with_classes(c) for c in sz.candidates],
            "binding": sz.binding,
            "binding_detail": sz.binding_detail,
            "designs_tried": sz.considered,
            "designs_meeting": sz.found,
            "ranked_by": "tco.total_usd" if sz.terms.cost == "tco" else "price_usd (purchase)",
            "terms": sz.terms.to_dict(),
            "host_writes": life.host.to_dict() if life else None,
            "durable_writes": ({"required": life.durable_required, "reason": life.durable_reason}
                               if life else None),
            "topology": ({"clustered": life.clustered, "instances": sz.requirement.instances,
                          "reason": ("a clustered database: only storage every node reaches (shared_access)"
                                     if life.clustered else "a single instance: any storage")} if life else None),
            "dropped": list(sz.dropped),
            "cloud_volumes_left_out": list(sz.cloud_left_out),
            "cheaper_by_purchase": sz.cheaper_by_purchase,
            "grade": grade,
            "history": history}


def _with_classes(c: Any) -> dict[str, Any]:
    """A candidate's contract, its second set's device class beside the first's (a mixed design)."""
    d: dict[str, Any] = c.contract()
    second = c.evaluation.config.second
    if second is not None and isinstance(d.get("second"), dict):
        d["second"] = {**d["second"], "device_class": second.device_class}
    return d


def value_body(v: Value, run_dir: str, command: Any, guards: list[Any] | None = None) -> dict[str, Any]:
    """`guards`: the priced run's cache guard (the verdict builds no price/performance on reads that came
    from memory)."""
    return {"result": {"run_dir": run_dir, "command": command, "kind": v.kind, "guards": list(guards or [])},
            "config": v.evaluation.to_dict(),
            "measured": v.measured,
            "value": v.figures,
            "tco": v.tco,
            "value_tco": v.figures_tco,
            "figures_used": v.figures_used}


# -- plan size: the requirement ------------------------------------------------------------------------

def requirement_from_options(given: dict[str, float | None], max_read_latency_us: float | None,
                             headroom: float | None, history: dict[str, Any] | None = None,
                             history_dir: str | None = None, daily: dict[str, Any] | None = None,
                             ) -> tuple[Requirement, dict[str, Any] | None]:
    """The requirement of `plan size` and the document's `history` (None without --from-history).

    With a history run (`history`, its loaded result; `history_dir`, as given) its requirement is the
    base and the options given override it; without one, the options are the requirement and at least
    one of them must be given. Headroom: --headroom, else the history run's, else DEFAULT_HEADROOM.
    `daily`: --write-tb-per-day, --read-tb-per-day and --instances (None: not given)."""
    daily = {k: v for k, v in (daily or {}).items() if v is not None}
    if history is not None:
        assert history_dir is not None
        req = requirement_from_history(history, history_dir, given, headroom, max_read_latency_us, daily)
        return req, {"run_dir": str(Path(history_dir)), "requirement": history.get("requirement")}
    if not any(v is not None for v in given.values()) and max_read_latency_us is None:
        raise DbtierError("no requirement given", "give at least one of --read-iops, --write-iops, --read-mbps, "
                          "--write-mbps, --capacity-gb, --max-read-latency-us, or --from-history RUN_DIR")
    figures: dict[str, Any] = dict(given)     # Requirement's figures (float or None), by keyword
    req = Requirement(**figures, max_read_latency_us=max_read_latency_us,
                      headroom=DEFAULT_HEADROOM if headroom is None else headroom, **daily,
                      daily_source="--write-tb-per-day" if "write_tb_per_day" in daily else None)
    return req, None
