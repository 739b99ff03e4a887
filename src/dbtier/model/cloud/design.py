"""One provider's designs for a requirement: the sizing `plan size --cloud` and advise's cloud options share.

The caller reads the history (its interval rates and its per-file-type parts, history/intervals.py) and hands
them over as data; this sizes each volume type's cheapest stripe (one set per role with roles), replays the
rates through every burst bucket, or marks the buckets unchecked for hour-of-day statistics. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from dbtier.model.cloud import roles as cloud_roles
from dbtier.model.cloud import sizing
from dbtier.model.cloud.sizing import CloudCandidate, Intervals
from dbtier.model.plan.requirement import Requirement


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
