"""One provider's designs for a requirement: the sizing `plan size --cloud` and advise's cloud options share.

The caller reads the history (its interval rates and its per-file-type parts, history/intervals.py) and hands
them over as data; this sizes each volume type's cheapest stripe (one set per role with roles), replays the
rates through every burst bucket, or marks the buckets unchecked for hour-of-day statistics. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from dbtier.core.errors import DbtierError
from dbtier.model.cloud import roles as cloud_roles
from dbtier.model.cloud import sizing
from dbtier.model.cloud.sizing import CloudCandidate, Intervals
from dbtier.model.plan.requirement import Requirement
from dbtier.results.result import Frozen, Result


@dataclass(frozen=True)
class CloudRequest:
    provider: str
    requirement: Requirement
    instance: str | None                   # an instance name, "auto", or None (no instance cap)
    service_years: float
    clustered: bool = False
    attach: int = 1                        # instances sharing the volumes
    copies: int = 1                        # every volume in two zones: 2
    instance_store: bool = False
    roles: str | None = None               # --roles SPEC: one volume set per role
    file_types: Sequence[tuple[str, float, float, float, float, float, float]] = ()  # the history's parts
    statistic: str = "p95"                 # the history's statistic, for the roles' requirements
    rates: Intervals | None = None         # the history's interval rates: replayed through the buckets
    allow_throttling: bool = False         # keep a design the replay would throttle (said)
    unchecked: tuple[str, str] | None = None   # (why, basis): hour-of-day statistics, the buckets said in words


@dataclass
class CloudDesigns:
    found: list[CloudCandidate]
    missed: list[dict[str, Any]]                               # types that cannot meet it, and why
    throttled: list[dict[str, Any]] = field(default_factory=list)   # dropped by the replay, and why
    separated: dict[str, Any] | None = None                    # with roles: what the history separated
    by_role: dict[str, Intervals] | None = None


def designs(req: CloudRequest, types: dict[str, Any], instances: dict[str, Any]) -> CloudDesigns:
    """The provider's designs meeting `req`, cheapest a month first (see the module doc)."""
    separated, by_role = None, None
    if req.roles:
        spec = cloud_roles.parse_spec(req.roles)
        reqs, by_role, separated = cloud_roles.role_requirements(req.file_types, req.requirement, req.statistic,
                                                                 spec)
        found, missed = cloud_roles.size_roles(types, instances, req.provider, reqs, spec, req.instance,
                                               req.service_years, req.clustered, req.copies, attach=req.attach)
        separated["requirements"] = {r: q.to_dict() for r, q in reqs.items()}
    else:
        found, missed = sizing.size_cloud(types, instances, req.provider, req.requirement, req.instance,
                                          req.service_years, req.clustered, copies=req.copies,
                                          instance_store=req.instance_store, attach=req.attach)
    throttled: list[dict[str, Any]] = []
    if req.unchecked is not None:
        found = sizing.burst_unchecked(found, *req.unchecked)
    elif req.rates is not None:
        found, throttled = sizing.with_history(found, req.rates, req.allow_throttling, by_role)
    return CloudDesigns(found, missed, throttled, separated, by_role)


# -- `plan size --cloud` as a library call ----------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class CloudPlanRequest:
    """`plan size --cloud PROVIDER`: the requirement on `provider`'s volumes under `instance` (a name, "auto",
    or None), the `top` cheapest a month over `service_years`; `instances` sharing them (a cluster: the
    `engine`'s vendor support checked, else the history's `source_name`'s engine), every volume in two zones
    with `mirror_zones`, an instance's own NVMe with `instance_store`, one set per role with `roles`.
    A history comes as data, read by the caller (history/intervals.py): its document section `history`, its
    `source` (the history run's `from`), whether it holds hour-of-day statistics only (`hourly`), its
    interval `rates` (replayed through every burst bucket; a throttled design is dropped unless
    `allow_throttling`) and its per-file-type parts (`file_types`, for `roles`). `instances_json`: the text
    of `aws ec2 describe-instance-types --output json` from `instances_file`, fetched on `instances_as_of`."""
    provider: str
    requirement: Requirement
    instance: str | None = None
    instances: int | None = None
    engine: str | None = None
    service_years: float = 5.0
    top: int = 5
    mirror_zones: bool = False
    instance_store: bool = False
    roles: str | None = None
    allow_throttling: bool = False
    from_history: str | None = None
    history: Mapping[str, Any] | None = None
    source: Mapping[str, Any] = field(default_factory=dict)
    hourly: bool = False
    hourly_why: str = ""
    rates: Intervals | None = None
    file_types: Sequence[tuple[str, float, float, float, float, float, float]] = ()
    instances_file: str | None = None
    instances_json: str | None = None
    instances_as_of: str | None = None

    def __post_init__(self) -> None:
        if self.instances_file and self.provider != "aws":
            raise DbtierError("--instances-file reads `aws ec2 describe-instance-types` output: it goes with "
                              "--cloud aws", "drop it, or use --cloud aws")
        if self.roles and not self.from_history:
            raise DbtierError("--roles sizes one volume set per role from the history's file types: it needs "
                              "--from-history", "e.g. --from-history REQ_RUN --roles, or size without --roles")


@dataclass(frozen=True, kw_only=True)
class PlanCloud(Result):
    """`plan size --cloud`'s answer: the designs meeting the requirement (cheapest a month first) and the ones
    that miss it, and the document's section made from them (kind plan.size, as the on-prem plan)."""
    kind: str = "plan.size"
    request: CloudPlanRequest
    found: tuple[CloudCandidate, ...]


def cloud_plan(req: CloudPlanRequest) -> PlanCloud:
    """The provider's designs for the request, ranked by their monthly cost (the module doc); a DbtierError
    where a clustered engine's vendor does not support the cluster, or every design would be throttled."""
    from dbtier.model.cloud import volumes
    types, instances = volumes.load_volume_types(), volumes.load_instances()
    notes: list[str] = []
    if req.instances_file:
        from dbtier.model.cloud.instances import parse_describe_instance_types
        loaded, notes = parse_describe_instance_types(req.instances_json or "", req.instances_file,
                                                      req.instances_as_of or "")
        instances = {**instances, **loaded}
    need = req.requirement
    clustered = req.instances is not None and req.instances > 1 or bool(need.instances and need.instances > 1)
    attach = (need.instances or req.instances or 2) if clustered else 1
    cluster = None
    if clustered:
        types, cluster = cluster_check(req, attach, types)
    if cluster:
        notes.append(f"{attach} instances ({cluster['engine'] or 'engine not known'}): {cluster['statement']}")
    burst_checked: bool | None = None
    burst_note, unchecked, rates = None, None, None
    if req.from_history and req.hourly:
        # no time series to replay: size on the statistic and say the burst risk on each design with a bucket
        burst_checked = False
        basis = f"the highest hour-of-day {req.source.get('statistic') or 'statistic'}, with {need.headroom:.0%} headroom"
        burst_note = (f"burst credits not checked: {req.hourly_why}; the designs are sized on {basis}, within "
                      "each volume's baseline, but a burst longer than a bucket lasts would be throttled (said on "
                      "each design that has one)")
        unchecked = (req.hourly_why, basis)
    elif req.from_history:       # replay the history's intervals through every credit bucket of each design
        burst_checked, rates = True, req.rates
    got = designs(CloudRequest(
        provider=req.provider, requirement=need, instance=req.instance, service_years=req.service_years,
        clustered=clustered, attach=attach, copies=2 if req.mirror_zones else 1, instance_store=req.instance_store,
        roles=req.roles, file_types=req.file_types if req.roles else (),
        statistic=str(req.source.get("statistic")), rates=rates, allow_throttling=req.allow_throttling,
        unchecked=unchecked), types, instances)
    if rates is not None and not got.found:
        raise DbtierError("every design meeting the requirement would be throttled by the history's demand: "
                          + "; ".join(f"{m['type']}: {m['reason']}" for m in got.throttled),
                          "choose a larger --instance or provisioned types, or --allow-throttling to list them")
    found, missed = got.found, got.missed + got.throttled
    cands = [c.contract() for c in found[:req.top]]
    section = {"plan": "size", "requirement": need.to_dict(), "candidates": cands,
               "binding": cands[0]["cloud"]["binding"], "binding_detail": None,
               "designs_tried": len(found) + len(missed), "designs_meeting": len(found),
               "cloud_missed": missed, "limits_as_of": sizing.limits_as_of(types, instances, req.provider),
               "ranked_by": "cloud.monthly_usd.total", "history": req.history, "roles": got.separated,
               "cloud_notes": notes, "cluster": cluster, "burst_checked": burst_checked,
               "burst_note": burst_note}
    return PlanCloud(section=Frozen(section), request=req, found=tuple(found))


def cluster_check(req: CloudPlanRequest, attach: int, types: dict[str, Any]
                  ) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the types the cluster may use, the engine's support for its `attach`-instance cluster on the provider's
    shared volumes) (--engine, else the history's source); one clear error where its vendor does not support
    it, naming the route."""
    from dbtier.model.cloud.cluster import engine_of, for_cluster
    src = req.source.get("source")
    engine = req.engine or engine_of(src)
    engine_from = "--engine" if req.engine else (f"the history's source ({src})" if engine else None)
    types, support = for_cluster(types, req.provider, engine, attach)
    if not support["offered"]:
        raise DbtierError(f"a {attach}-instance {engine} cluster (engine from {engine_from}) on {req.provider}'s "
                          f"shared volumes: {support['statement']} [{support['cite']}; grade {support['grade']}, "
                          f"dated {support['dated']}]",
                          f"size it on-prem (plan size without --cloud) or price {support['route']} with its provider")
    return types, {**support, "engine": engine, "engine_from": engine_from, "instances": attach}
