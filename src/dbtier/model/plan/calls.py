"""`dbtier plan` as library calls, one per action, each a request in and a typed, immutable result out:

    size_plan(SizeRequest) -> PlanSize                    the cheapest designs that meet a requirement
    equivalent_plan(EquivalentRequest) -> PlanEquivalent  how many of one device match another
    budget_plan(BudgetRequest) -> PlanBudget              what a budget buys of each device
    value_plan(ValueRequest) -> PlanValue                 price/performance of a measured run

A request says what a person asks (the catalog and the terms of ownership every action shares, `Pricing`,
and the action's own figures); the figures are checked where the model uses them (array.py, planner.py,
sizing.py), the same checks for a library caller as for the command's options. A result
(dbtier.results.result) holds the model's own typed answer (a `Sizing`, an `Equivalence`, ...) and the
section the command writes into its document, made from it by plandoc.py. The command parses its options
into a request, calls, stores the section and renders the typed answer; a library user gets the same
figures with no run directory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dbtier.model.plan import plandoc
from dbtier.model.plan.array import (DEFAULT_HIT_RATIO, DEFAULT_READ_FRACTION, LAYOUTS, Config, evaluate,
                                     parse_spec)
from dbtier.model.plan.catalog import Catalog
from dbtier.model.plan.planner import BudgetOption, Equivalence, Value, budget, equivalent, value
from dbtier.model.plan.prices import grade_filter
from dbtier.model.plan.requirement import Requirement
from dbtier.model.plan.search import DEFAULT_CACHE_FRACTION, DEFAULT_MAX_DEVICES
from dbtier.model.plan.service import Terms
from dbtier.model.plan.sizing import Sizing, size
from dbtier.results.result import Frozen, Result


@dataclass(frozen=True, kw_only=True)
class Pricing:
    """What every plan action prices with: the catalog, the terms of ownership, the server's own drive ports
    (None: the catalog's), whether controllers and enclosures are priced, and what a quote file changed in
    the catalog (the document's `prices`, None without one)."""
    catalog: Catalog
    terms: Terms = Terms()
    server_ports: int | None = None
    devices_only: bool = False
    prices: dict[str, Any] | None = field(default=None, compare=False)

    def section(self, action: str, body: dict[str, Any], catalog: Catalog | None = None) -> Frozen:
        """The action's section of the document: `plan`, its body, then how it was priced (`catalog`: the one
        searched, when the action narrowed it)."""
        searched = catalog or self.catalog
        return Frozen({"plan": action, **body,
                       "pricing": plandoc.pricing(searched.server_ports, self.server_ports, self.devices_only),
                       "prices": self.prices, "catalog": searched.provenance()})


@dataclass(frozen=True, kw_only=True)
class SizeRequest(Pricing):
    """`plan size`: the cheapest designs of the catalog that meet `requirement`.

    `devices` None: every device `grade` allows; named devices are searched whatever their grade.
    `history`: the provenance of a requirement taken from a history run (the document's `history`)."""
    requirement: Requirement
    devices: tuple[str, ...] | None = None
    layouts: tuple[str, ...] = LAYOUTS
    redundancy: str = "required"
    hit_ratio: float = DEFAULT_HIT_RATIO
    cache_fraction: float = DEFAULT_CACHE_FRACTION
    max_devices: int = DEFAULT_MAX_DEVICES
    top: int = 10
    grade: str = "production"
    history: dict[str, Any] | None = field(default=None, compare=False)


@dataclass(frozen=True, kw_only=True)
class PlanSize(Result):
    """`plan size`'s answer: the sizing (its candidates, ranked) and the catalog it searched (after the
    grade), and the document's section made from them."""
    kind: str = "plan.size"
    request: SizeRequest
    sizing: Sizing
    searched: Catalog


def size_plan(req: SizeRequest) -> PlanSize:
    """The cheapest designs that meet the request, ranked; the grade filters the catalog before the search
    (the devices it leaves out are listed in the section's `grade`, never sized)."""
    devices = list(req.devices) if req.devices else None
    catalog, graded = grade_filter(req.catalog, req.grade, devices)
    sz = size(catalog, req.requirement, devices, list(req.layouts), req.redundancy, req.hit_ratio,
              req.max_devices, top=req.top, cache_fraction=req.cache_fraction, server_ports=req.server_ports,
              devices_only=req.devices_only, terms=req.terms)
    return PlanSize(section=req.section("size", plandoc.size_body(sz, req.history, graded), catalog), request=req,
                    sizing=sz, searched=catalog)


@dataclass(frozen=True, kw_only=True)
class EquivalentRequest(Pricing):
    """`plan equivalent`: how many `using` devices in `layout` match one `reference` device."""
    reference: str
    using: str
    layout: str = "jbod"
    read_fraction: float = DEFAULT_READ_FRACTION


@dataclass(frozen=True, kw_only=True)
class PlanEquivalent(Result):
    kind: str = "plan.equivalent"
    request: EquivalentRequest
    equivalence: Equivalence


def equivalent_plan(req: EquivalentRequest) -> PlanEquivalent:
    eq = equivalent(req.catalog, req.reference, req.using, req.read_fraction, req.layout,
                    server_ports=req.server_ports, devices_only=req.devices_only, terms=req.terms)
    return PlanEquivalent(section=req.section("equivalent", plandoc.equivalent_body(eq)), request=req,
                          equivalence=eq)


@dataclass(frozen=True, kw_only=True)
class BudgetRequest(Pricing):
    """`plan budget`: the most of each of `devices` that `usd` buys in `layout`."""
    usd: float
    devices: tuple[str, ...]
    layout: str = "jbod"
    read_fraction: float = DEFAULT_READ_FRACTION


@dataclass(frozen=True, kw_only=True)
class PlanBudget(Result):
    kind: str = "plan.budget"
    request: BudgetRequest
    options: tuple[BudgetOption, ...]


def budget_plan(req: BudgetRequest) -> PlanBudget:
    options = budget(req.catalog, req.usd, list(req.devices), req.layout, req.read_fraction, req.server_ports,
                     req.devices_only, terms=req.terms)
    body = plandoc.budget_body(options, req.usd, req.layout, req.read_fraction)
    return PlanBudget(section=req.section("budget", body), request=req, options=tuple(options))


@dataclass(frozen=True, kw_only=True)
class ValueRequest(Pricing):
    """`plan value`: a measured run (`run`, its document as dbtier.results.store.load_run reads it, from
    `run_dir`) priced as the configuration `config` (DEVICE:COUNT:LAYOUT, or a mixed design's spec);
    `guards`: the run's cache guard, dbtier.model.guards.doc_guards of it (no price/performance is built on
    reads that came from memory)."""
    run: dict[str, Any] = field(compare=False)
    run_dir: str
    config: str
    hit_ratio: float = DEFAULT_HIT_RATIO
    guards: tuple[dict[str, Any], ...] = ()


@dataclass(frozen=True, kw_only=True)
class PlanValue(Result):
    kind: str = "plan.value"
    request: ValueRequest
    configured: Config
    value: Value


def value_plan(req: ValueRequest) -> PlanValue:
    cfg = parse_spec(req.catalog, req.config, req.hit_ratio, req.server_ports, req.devices_only)
    v = value(req.run, evaluate(cfg), req.run_dir, terms=req.terms)
    body = plandoc.value_body(v, req.run_dir, req.run.get("command"), list(req.guards))
    return PlanValue(section=req.section("value", body), request=req, configured=cfg, value=v)
