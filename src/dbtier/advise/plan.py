"""Run the planners for an advice: on-prem from the catalog, each provider's volumes, the current storage.

No I/O beyond reading the shipped catalogs (and, for the burst replay, the history's series files).
"""

from __future__ import annotations

from typing import Any, Sequence

from dbtier.advise import options
from dbtier.core.errors import DbtierError

HOURLY_BURST = ("burst credits not checked: hour-of-day statistics are not the time series a replay needs; each "
                "hour's figure is within the volumes' sustained rate, but a burst longer than a bucket lasts (about "
                "30 minutes at the burst rate) would be throttled")


def engine_of(sources: set[Any]) -> str | None:
    """The database engine the history's sources tell (AWR and DMA: Oracle), None when they do not or disagree."""
    from dbtier.model.cloud.cluster import engine_of as of_source
    engines = {of_source(str(s)) for s in sources}
    return engines.pop() if len(engines) == 1 else None


def requirement(req: dict[str, Any], label: str) -> Any:
    from dbtier.model.plan.requirement import requirement_from_history
    return requirement_from_history({"requirement": req}, label)


def on_prem(R: Any, terms: Any, catalog: Any = None) -> dict[str, Any]:
    """The catalog's cheapest design for R under `terms` (model/service.Terms: the service life, a shared
    array's data reduction, parity group widths); `catalog`: the one to search, quotes applied and graded by
    `prepared_catalog`; None: the shipped catalog graded for production."""
    from dbtier.model.plan.sizing import size
    service_years = terms.service_years
    if catalog is None:
        catalog = prepared_catalog(None, "production")[0]
    try:
        sz = size(catalog, R, top=1, terms=terms)
    except DbtierError as exc:
        return options.none_for("on-prem", f"no design in the catalog meets it: {exc.message}", service_years)
    if not sz.candidates:
        return options.none_for("on-prem", f"no design in the catalog meets it ({sz.binding_detail})", service_years)
    return options.on_prem(sz.candidates[0].contract(), service_years)


def prepared_catalog(prices_file: str | None, grade: str
                     ) -> tuple[Any, dict[str, Any] | None, dict[str, Any]]:
    """The shipped catalog with --prices applied and graded (model/plan/prices.py): (catalog, the document's
    `prices` or None, the grade's {grade, allows, text, left_out, unstated})."""
    from dbtier.model.plan.catalog import load_catalog
    from dbtier.model.plan.prices import grade_filter, load_prices
    catalog, prices = load_catalog(), None
    if prices_file:
        catalog, prices = load_prices(prices_file, catalog)
    catalog, graded = grade_filter(catalog, grade)
    return catalog, prices, graded


def on_cloud(R: Any, source: dict[str, Any], provider: str, instance: str, service_years: float, hourly: bool,
             engine: str | None, roles: "Roles | None" = None) -> dict[str, Any]:
    """The provider's cheapest volume set (one per role with `roles`) as an option, or why there is none."""
    from dbtier.model.cloud import volumes as cloud
    from dbtier.model.cloud.cluster import for_cluster
    from dbtier.model.cloud.design import CloudRequest, designs
    clustered = bool(R.instances and R.instances > 1)
    attach = R.instances if clustered else 1
    types = cloud.load_volume_types()
    if clustered:
        types, support = for_cluster(types, provider, engine, attach)
        if not support.get("offered"):
            return options.none_for(provider, str(support.get("statement")), service_years, support.get("route"))
    rates = None
    try:
        if not hourly:
            from dbtier.history.intervals import rates as history_rates
            rates = history_rates(source)
        got = designs(CloudRequest(provider=provider, requirement=R, instance=instance, service_years=service_years,
                                   clustered=clustered, attach=attach, roles=roles.spec_text if roles else None,
                                   file_types=roles.file_types if roles else (),
                                   statistic=str(source.get("statistic")), rates=rates),
                      types, cloud.load_instances())
    except DbtierError as exc:
        return options.none_for(provider, exc.message, service_years)
    found = got.found
    if rates is not None and not found:
        why = "; ".join(f"{m['type']}: {m['reason']}" for m in got.throttled[:3])
        return options.none_for(provider, f"every design would be throttled by the history's bursts ({why})",
                                service_years)
    best = found[0]
    need = {"iops": sum(p.need_iops for p in best.parts)}
    return options.cloud(best.contract(), service_years, need, R.headroom, HOURLY_BURST if hourly else None)


class Roles:
    """--roles: each role's requirement from the history's file types (model/cloud/roles.py), for every provider."""

    def __init__(self, spec_text: str, source: dict[str, Any], R: Any):
        from dbtier.history.intervals import by_file_type
        from dbtier.model.cloud import roles as cloud_roles
        self.spec_text = spec_text
        self.file_types = by_file_type(source)
        self.spec = cloud_roles.parse_spec(spec_text)
        self.reqs, self.by_role, self.separated = cloud_roles.role_requirements(
            self.file_types, R, str(source.get("statistic")), self.spec)


def on_prem_roles(roles: Roles, terms: Any, catalog: Any = None) -> dict[str, Any]:
    """On-prem with a design per role (each the catalog's cheapest for that role's requirement), added up."""
    service_years = terms.service_years
    parts = {role: on_prem(q, terms, catalog) for role, q in roles.reqs.items()}
    missing = [r for r, o in parts.items() if not o["meets"]]
    if missing:
        return options.none_for("on-prem", "; ".join(f"{r}: {parts[r]['caveats'][0]}" for r in missing),
                                service_years)
    def total(k: str) -> float | None:
        vals = [o.get(k) for o in parts.values()]
        nums = [v for v in vals if isinstance(v, (int, float))]
        return sum(nums) if len(nums) == len(vals) else None
    reserves = [o["reserve"] for o in parts.values() if o.get("reserve") is not None]
    return options.on_prem_row(
        description="; ".join(f"{r}: {o['description']}" for r, o in parts.items()),
        purchase=total("purchase_usd"), total=total("total_usd"), service_years=service_years,
        binding="; ".join(f"{r}: {o['binding']}" for r, o in parts.items()),
        reserve=min(reserves) if reserves else None,
        caveats=[f"{', '.join(rs)}: {c}" for c, rs in _by_text(parts).items()])


def _by_text(parts: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """{caveat: the roles it applies to}: one line for what several roles' designs share."""
    out: dict[str, list[str]] = {}
    for role, o in parts.items():
        for c in o.get("caveats") or []:
            out.setdefault(c, []).append(role)
    return out


def options_for(req: dict[str, Any], source: dict[str, Any], clouds: Sequence[str], instance: str,
                service_years: float, hourly: bool, engine: str | None, roles: str | None = None,
                catalog: Any = None, terms_extra: dict[str, Any] | None = None
                ) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """(the options, what --roles separated: {role: file types, requirements} or None). `catalog`: the
    on-prem search's (`prepared_catalog`; None: the shipped one, production grade)."""
    R = requirement(req, f"history {source.get('of')}")
    if not R.given():
        raise DbtierError(f"{source.get('run_dir')}: the history holds no rate and no capacity to size for",
                          "give history with read or write figures, or --capacity-gb")
    split = Roles(roles, source, R) if roles else None
    from dbtier.model.plan.service import Terms
    terms = Terms(service_years=service_years, **(terms_extra or {}))
    opts = [on_prem_roles(split, terms, catalog) if split else on_prem(R, terms, catalog)]
    opts += [on_cloud(R, source, p, instance, service_years, hourly, engine, split) for p in clouds]
    separated = None
    if split is not None:
        separated = {**split.separated, "requirements": {r: q.to_dict() for r, q in split.reqs.items()}}
    return opts, separated


def assumptions(req: dict[str, Any], source: dict[str, Any], hourly: bool, prices: dict[str, Any] | None = None,
                grade: dict[str, Any] | None = None, *, service_years: float, instance: str, roles: str | None,
                data_reduction: float = 1.0, wide_parity_groups: bool = False) -> list[str]:
    """What the advice assumes, a sentence each: the basis, the service life, what is priced, the grade and
    quotes, the capacity's source, a cluster, a shared array's figures, the instance, the burst check, roles."""
    years = service_years
    out = [f"sized for the {source.get('basis') or source.get('statistic')}, with {req.get('headroom', 0):.0%} "
           "headroom on top of every figure",
           f"every option is priced over {years:g} years of service: on-prem as the catalog's purchase price plus "
           f"energy (and replacements where flash wears out); cloud as the monthly list price x 12 x {years:g}",
           "storage only: servers and cloud instances are not priced (each option needs its own)",
           *([f"on-prem grade {grade['text']}"] if grade else []),
           *([f"on-prem prices: {len(prices['applied'])} quote(s) from {prices['file']} replace the catalog's ("
              + ", ".join(f"{a['id']} ${a['price_usd']:,.2f} of {a['date']}" for a in prices["applied"]) + ")"]
             if prices else []),
           *[f"stale price: {n}" for n in (prices or {}).get("notes") or []],
           f"capacity: {source.get('capacity_from')}"]
    inst = req.get("instances")
    if isinstance(inst, int) and inst > 1:
        out.append(f"{inst} instances share the storage (a cluster): on-prem, only storage every node reaches; in "
                   "the cloud, only volumes that many instances can attach, where the database's vendor supports "
                   "its cluster")
    out.append(f"a shared array's capacity assumes {data_reduction:g}:1 data reduction "
               "(--data-reduction); RAID 5 sets of at most 12 drives, RAID 6 of at most 16"
               + (" unless wider (--wide-parity-groups)" if wide_parity_groups else ""))
    if instance == "auto":
        out.append("cloud instance: the cheapest in dbtier's data whose volume caps carry the load sustained")
    if hourly:
        out.append(HOURLY_BURST)
    if roles:
        out.append("--roles: each role's design is checked for flash wear against the whole database's writes a "
                   "day (the history does not split the bytes by role): a bound on the wear")
    if source.get("bound"):
        out.append(str(source["bound"]))
    return out


def current_of(doc: dict[str, Any], path: str, req: dict[str, Any]) -> dict[str, Any]:
    """--current: a probe run (or a lab's probe step) against the requirement."""
    probe = doc
    if doc.get("command") == "lab":
        kids = [c.get("doc") for c in doc.get("_children") or [] if isinstance(c, dict)]
        step = next((k for k in kids if isinstance(k, dict) and k.get("command") == "probe"), None)
        if step is None:
            raise DbtierError(f"--current {path}: the lab has no probe step", "give a `dbtier probe` run")
        probe = step
    targets = probe.get("targets") or []
    if not targets or not isinstance(targets[0].get("summary"), dict):
        raise DbtierError(f"--current {path}: the probe has no measured target", "give a finished `dbtier probe` run")
    t = targets[0]
    return options.current(t["summary"], str(t.get("path") or t.get("target") or path), req)


def warnings(docs: Sequence[dict[str, Any]]) -> list[str]:
    """What in the history itself deserves a look, a line each naming the database: no writes at all, a single
    interval."""
    out = []
    for db in (db for d in docs for db in d.get("databases") or []):
        name = db.get("name")
        pk = db.get("peaks") or {}
        w = [((pk.get(m) or {}).get("max")) for m in ("write_iops", "write_mbps")]
        if all(isinstance(v, (int, float)) and v == 0 for v in w):
            out.append(f"{name}: no writes in its history (write IOPS and MB/s 0 throughout): a read-only copy, or "
                       "an export without the write statistics; sized as it is")
        if db.get("intervals") == 1:
            out.append(f"{name}: one interval of history: its peaks are that interval's rates, too little to size "
                       "on (collect a week or more)")
    return out
