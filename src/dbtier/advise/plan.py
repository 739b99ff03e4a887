"""Run the planners for an advice: on-prem from the catalog, each provider's volumes, the current storage.

No I/O beyond reading the shipped catalogs (and, for the burst replay, the history's series files).
"""

from __future__ import annotations

import argparse
from typing import Any, Sequence

from dbtier.advise import options
from dbtier.core.errors import DbtierError

HOURLY_BURST = ("burst credits not checked: hour-of-day statistics are not the time series a replay needs; each "
                "hour's figure is within the volumes' sustained rate, but a burst longer than a bucket lasts (about "
                "30 minutes at the burst rate) would be throttled")


def engine_of(sources: set[Any]) -> str | None:
    """The database engine the history's sources tell (AWR and DMA: Oracle), None when they do not or disagree."""
    from dbtier.model.cloud_cluster import engine_of as of_source
    engines = {of_source(str(s)) for s in sources}
    return engines.pop() if len(engines) == 1 else None


def requirement(req: dict[str, Any], label: str) -> Any:
    from dbtier.model.requirement import requirement_from_history
    return requirement_from_history({"requirement": req}, label)


def on_prem(R: Any, service_years: float) -> dict[str, Any]:
    from dbtier.model.catalog import load_catalog
    from dbtier.model.service import Terms
    from dbtier.model.sizing import size
    try:
        sz = size(load_catalog(), R, top=1, terms=Terms(service_years=service_years))
    except DbtierError as exc:
        return options.none_for("on-prem", f"no design in the catalog meets it: {exc.message}", service_years)
    if not sz.candidates:
        return options.none_for("on-prem", f"no design in the catalog meets it ({sz.binding_detail})", service_years)
    return options.on_prem(sz.candidates[0].contract(), service_years)


def cluster_check(provider: str, engine: str | None, instances: int) -> dict[str, Any] | None:
    """The provider's statement for a clustered database (None: volumes may be sized for it)."""
    from dbtier.model import cloud_cluster
    got = cloud_cluster.cluster_support(provider, engine, instances)
    return None if got.get("offered") else got


def on_cloud(R: Any, source: dict[str, Any], provider: str, instance: str, service_years: float, hourly: bool,
             engine: str | None) -> dict[str, Any]:
    from dbtier.model import cloud, cloud_plan
    clustered = bool(R.instances and R.instances > 1)
    if clustered:
        refused = cluster_check(provider, engine, R.instances)
        if refused is not None:
            return options.none_for(provider, str(refused.get("statement")), service_years, refused.get("route"))
    try:
        found, _missed = cloud_plan.size_cloud(cloud.load_volume_types(), cloud.load_instances(), provider, R,
                                               instance, service_years, clustered)
        if not hourly:
            from dbtier.history.intervals import rates
            found, throttled = cloud_plan.with_history(found, rates(source), False, None)
            if not found:
                why = "; ".join(f"{m['type']}: {m['reason']}" for m in throttled[:3])
                return options.none_for(provider, f"every design would be throttled by the history's bursts ({why})",
                                        service_years)
    except DbtierError as exc:
        return options.none_for(provider, exc.message, service_years)
    best = found[0]
    need = {"iops": sum(p.need_iops for p in best.parts)}
    return options.cloud(best.contract(), service_years, need, R.headroom, HOURLY_BURST if hourly else None)


def options_for(req: dict[str, Any], source: dict[str, Any], clouds: Sequence[str], instance: str,
                service_years: float, hourly: bool, engine: str | None) -> tuple[list[dict[str, Any]], list[str]]:
    R = requirement(req, f"history {source.get('of')}")
    if not R.given():
        raise DbtierError(f"{source.get('run_dir')}: the history holds no rate and no capacity to size for",
                          "give history with read or write figures, or --capacity-gb")
    opts = [on_prem(R, service_years)]
    opts += [on_cloud(R, source, p, instance, service_years, hourly, engine) for p in clouds]
    return opts, []


def assumptions(req: dict[str, Any], source: dict[str, Any], args: argparse.Namespace, hourly: bool,
                notes: Sequence[str], docs: Sequence[dict[str, Any]]) -> list[str]:
    years = args.service_years
    out = [f"sized for the {source.get('basis') or source.get('statistic')}, with {req.get('headroom', 0):.0%} "
           "headroom on top of every figure",
           f"every option is priced over {years:g} years of service: on-prem as the catalog's purchase price plus "
           f"energy (and replacements where flash wears out); cloud as the monthly list price x 12 x {years:g}",
           "storage only: servers and cloud instances are not priced (each option needs its own)",
           f"capacity: {source.get('capacity_from')}"]
    inst = req.get("instances")
    if isinstance(inst, int) and inst > 1:
        out.append(f"{inst} instances share the storage (a cluster): on-prem, only storage every node reaches; in "
                   "the cloud, only volumes that many instances can attach, where the database's vendor supports "
                   "its cluster")
    if args.instance == "auto":
        out.append("cloud instance: the cheapest in dbtier's data whose volume caps carry the load sustained")
    if hourly:
        out.append(HOURLY_BURST)
    if source.get("bound"):
        out.append(str(source["bound"]))
    out += [str(n) for n in notes]
    return out


def current_of(doc: dict[str, Any], path: str, req: dict[str, Any]) -> dict[str, Any]:
    """--current: a probe run (or a lab's probe step) against the requirement."""
    probe = doc
    if doc.get("command") == "lab":
        kids = [c.get("doc") for c in doc.get("_children") or [] if isinstance(c, dict)]
        probe = next((k for k in kids if isinstance(k, dict) and k.get("command") == "probe"), None)
        if probe is None:
            raise DbtierError(f"--current {path}: the lab has no probe step", "give a `dbtier probe` run")
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
