"""`plan size` as a library call: `size_plan(SizeRequest) -> PlanSize`.

The request says what a person asks (the requirement, the catalog, the terms of ownership and the search's
bounds), checked once where it is made; the answer is typed and immutable (dbtier.results.result): the
sizing itself (`Sizing`: the ranked candidates, what binds, what was dropped) and the section `dbtier plan
size` writes into its document, made from it. The command parses its options into a SizeRequest, calls
this, stores the section and renders the sizing; a library user gets the same figures with no run directory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dbtier.model.plan import plandoc
from dbtier.model.plan.array import DEFAULT_HIT_RATIO, LAYOUTS
from dbtier.model.plan.catalog import Catalog
from dbtier.model.plan.prices import grade_filter
from dbtier.model.plan.requirement import Requirement
from dbtier.model.plan.search import DEFAULT_CACHE_FRACTION, DEFAULT_MAX_DEVICES
from dbtier.model.plan.service import Terms
from dbtier.model.plan.sizing import Sizing, size
from dbtier.results.result import Frozen, Result


@dataclass(frozen=True, kw_only=True)
class SizeRequest:
    """What `plan size` is asked: the cheapest designs of `catalog` that meet `requirement` on `terms`.

    `devices` None: every device `grade` allows; named devices are searched whatever their grade.
    `server_ports` None: the catalog's. `history`: the provenance of a requirement taken from a history run
    (the document's `history`). `prices`: what a quote file changed in the catalog (the document's `prices`).
    The figures are checked by the search (`sizing.size`), the same checks for a library caller as for the
    command's options."""
    requirement: Requirement
    catalog: Catalog
    terms: Terms = Terms()
    devices: tuple[str, ...] | None = None
    layouts: tuple[str, ...] = LAYOUTS
    redundancy: str = "required"
    hit_ratio: float = DEFAULT_HIT_RATIO
    cache_fraction: float = DEFAULT_CACHE_FRACTION
    max_devices: int = DEFAULT_MAX_DEVICES
    top: int = 10
    server_ports: int | None = None
    devices_only: bool = False
    grade: str = "production"
    history: dict[str, Any] | None = field(default=None, compare=False)
    prices: dict[str, Any] | None = field(default=None, compare=False)


@dataclass(frozen=True, kw_only=True)
class PlanSize(Result):
    """`plan size`'s answer: the sizing (its candidates, ranked), the catalog it searched (after the grade),
    and the document's section made from them."""
    kind: str = "plan.size"
    request: SizeRequest
    sizing: Sizing
    searched: Catalog


def size_plan(req: SizeRequest) -> PlanSize:
    """The cheapest designs that meet the request, ranked; the grade filters the catalog before the search
    (the devices it leaves out are listed in the section's `grade`, never sized)."""
    catalog, graded = grade_filter(req.catalog, req.grade, list(req.devices) if req.devices else None)
    sz = size(catalog, req.requirement, list(req.devices) if req.devices else None, list(req.layouts),
              req.redundancy, req.hit_ratio, req.max_devices, top=req.top, cache_fraction=req.cache_fraction,
              server_ports=req.server_ports, devices_only=req.devices_only, terms=req.terms)
    section = {"plan": "size", **plandoc.size_body(sz, req.history, graded),
               "pricing": plandoc.pricing(catalog.server_ports, req.server_ports, req.devices_only),
               "prices": req.prices, "catalog": catalog.provenance()}
    return PlanSize(section=Frozen(section), request=req, sizing=sz, searched=catalog)
