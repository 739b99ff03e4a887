"""`plan size --cloud PROVIDER`: for each of the provider's volume types, the cheapest stripe that meets the
requirement with headroom, within one instance's caps (or, with `--instances auto`, on the cheapest instance
whose caps carry it sustained), ranked by the monthly price. Pure: dbtier.model.cloud.volumes does the arithmetic.

Parity RAID over cloud volumes is never offered (the provider replicates each volume): a stripe only.

A clustered database (N instances attaching the same volumes) is offered only the types whose volumes N
instances can attach read-write at once (`VolumeType.for_attach`), and never an instance store.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Sequence

from dbtier.core.errors import DbtierError
from dbtier.model.cloud.volumes import (GIB_PER_GB, MIB_PER_MB, PROVIDERS, Bucket, Instance, VolumeSet, VolumeType,
                                cheapest_set, gp2_bucket, instance_bucket, need_for, replay, to_unit, under_caps_of)
from dbtier.model.plan.requirement import Requirement

MAX_VOLUMES = 16


@dataclass(frozen=True)
class Part:
    """One volume set of a design: the whole database's (role None) or one role's (data, log, temp, archive).
    `volume_type` None: the instance's own NVMe (instance store), carried by `local`."""
    role: str | None
    volume_type: VolumeType | None
    volumes: VolumeSet | None
    need_iops: float = 0.0           # what it carries, for the instance caps: counted I/Os a second
    need_mbps: float = 0.0           # MB/s (10^6 B/s)
    local: dict[str, Any] | None = None

    @property
    def monthly(self) -> dict[str, float]:
        if self.volumes is None:
            return {"capacity": 0.0, "iops": 0.0, "throughput": 0.0, "total": 0.0}
        return dict(self.volumes.monthly)

    def volume_dicts(self) -> list[dict[str, Any]]:
        if self.volumes is None:
            return [{**(self.local or {}), "role": self.role}]
        return [v.to_dict(self.role) for v in self.volumes.volumes]


@dataclass(frozen=True)
class CloudCandidate:
    provider: str
    instance: Instance | None
    parts: tuple[Part, ...]
    caps: dict[str, Any] | None
    service_years: float
    replayed: dict[str, Any] | None = None      # the history replayed through its burst buckets
    copies: int = 1                             # 2: mirrored across zones (every volume twice)
    attach: int = 1                             # instances attaching each volume (a cluster's: more than 1)
    notes: tuple[str, ...] = ()                 # said with the design (e.g. burst credits not checked)

    @property
    def volume_type(self) -> VolumeType | None:
        return self.parts[0].volume_type

    @property
    def volumes(self) -> VolumeSet | None:
        return self.parts[0].volumes

    @property
    def local(self) -> bool:
        return any(p.volume_type is None for p in self.parts)

    @property
    def name(self) -> str:
        return "+".join(dict.fromkeys("instance-store" if p.volume_type is None else p.volume_type.type
                                      for p in self.parts))

    @property
    def monthly(self) -> dict[str, float]:
        m = {"capacity": 0.0, "iops": 0.0, "throughput": 0.0}
        for p in self.parts:
            for k in m:
                m[k] += p.monthly[k] * self.copies
        premium = (self.instance.premium_usd_per_month or 0.0) * self.copies if self.local and self.instance else 0.0
        m["instance_premium"] = premium
        m["total"] = sum(m.values())
        return m

    @property
    def total_month(self) -> float:
        return self.monthly["total"]

    def contract(self) -> dict[str, Any]:
        monthly = self.monthly
        burst = self.replayed
        if burst is None and self.caps is not None and not self.caps["sustained"] and self.instance is not None \
                and "burst only" in (self.caps["binding"] or ""):
            b = instance_bucket(self.instance.baseline_iops, self.instance.max_iops, "IOPS")
            burst = {"bucket": b.name, "capacity": b.capacity, "assumption": b.assumption,
                     "note": "the requirement is over the instance's baseline: it holds only while the burst "
                             "bucket lasts (30 minutes at the maximum); replay the history to see for how long"}
        binding = (self.caps or {}).get("binding") or "; ".join(
            (f"{p.role}: " if p.role else "") + (p.volumes.binding if p.volumes else "the instance's NVMe")
            for p in self.parts)
        vols = [d for p in self.parts for d in p.volume_dicts()]
        count = sum(p.volumes.count if p.volumes else 1 for p in self.parts) * self.copies
        types = [{"role": p.role, "type": vt.type, "name": vt.name, "model": vt.model, "source": vt.source,
                  "as_of": vt.as_of, "latency_us": vt.latency_us, "durability_pct": vt.durability_pct}
                 for p in self.parts if (vt := p.volume_type) is not None]
        vt0 = self.volume_type
        notes = []
        if self.local and self.instance is not None:
            notes.append(f"the instance store of {self.instance.name} does not survive a stop, hibernation or "
                         "termination: the database needs a replica or a rebuild from backup"
                         + ("" if self.copies > 1 else " (--mirror-zones prices a second copy in another zone)"))
        if self.copies > 1:
            notes.append("mirrored across zones: every volume twice (a volume attaches within one zone, so the "
                         "second copy is a standby's or a second node's; its instance is not priced here)")
        if self.attach > 1:
            for p in self.parts:
                if p.volume_type is not None and p.volume_type.shared_note:
                    notes.append(f"shared by {self.attach} instances: {p.volume_type.shared_note}")
        notes.extend(self.notes)
        sets = [{"role": p.role, "type": p.volume_type.type if p.volume_type else "instance-store",
                 "count": p.volumes.count if p.volumes else 1,
                 "binding": p.volumes.binding if p.volumes else "the instance's NVMe",
                 "monthly_usd": (p.monthly["total"] * self.copies if p.volumes else monthly["instance_premium"])}
                for p in self.parts]
        return {"cloud": {
            "provider": self.provider, "instance": self.instance.name if self.instance else None,
            "volumes": vols, "sets": sets, "copies": self.copies,
            "monthly_usd": monthly,
            "caps": self.caps, "binding": binding, "burst": burst,
            "service_life_usd": monthly["total"] * 12 * self.service_years,
            "latency_us": vt0.latency_us if vt0 else None, "durability_pct": vt0.durability_pct if vt0 else None,
            "multi_attach": all(p.volume_type.multi_attach for p in self.parts if p.volume_type) and not self.local,
            "attach": self.attach,
            "ephemeral": self.local, "notes": notes,
            "volume_type": types[0] if len(types) == 1 and len(self.parts) == 1 else None,
            "volume_types": types,
        }, "device": f"{self.provider}-{self.name}", "count": count,
           "layout": "stripe" + (", mirrored across zones" if self.copies > 1 else ""),
           "description": f"{count} x {self.provider} {self.name}" + (" striped" if not self.local else "")
                          + (" x 2 zones" if self.copies > 1 else "")
                          + (f" on {self.instance.name}" if self.instance else ""),
           "price_usd": monthly["total"] * 12 * self.service_years}


def part_for(vt: VolumeType, req: Requirement, role: str | None = None, capacity_gb: float | None = None,
             max_volumes: int = MAX_VOLUMES) -> tuple[Part | None, str | None]:
    """The cheapest stripe of `vt` for `req` (a role's capacity given apart): (part, why not)."""
    cap = req.capacity_gb if capacity_gb is None else capacity_gb
    need = need_for(vt, req.read_iops or 0, req.write_iops or 0, req.read_mbps or 0, req.write_mbps or 0,
                    cap or 0, req.headroom)
    try:
        s = cheapest_set(vt, need, max_volumes)
    except DbtierError as exc:        # a price the data does not have
        return None, exc.message
    if s is None:
        return None, (f"no stripe of up to {max_volumes} {vt.type} volumes carries {need.iops:,.0f} I/Os per second "
                      f"and {need.throughput:,.0f} {vt.throughput_unit} in {need.size:,.0f} GiB")
    mbps = need.throughput / MIB_PER_MB if vt.throughput_unit == "MiB/s" else need.throughput
    return Part(role, vt, s, need.iops, mbps), None


def local_part(inst: Instance, req: Requirement, role: str | None = None) -> tuple[Part | None, str | None]:
    """The instance's own NVMe (instance store) for `req`: reads and writes share its time (R/r + W/w <= 1,
    with headroom); AWS recommends leaving 10% of it unpartitioned (its write speed falls as it fills)."""
    h = 1 + req.headroom
    r_io, w_io = inst.local_nvme_read_iops, inst.local_nvme_write_iops
    if not inst.local_nvme_gb:
        return None, f"{inst.name} has no instance store"
    if inst.premium_usd_per_month is None:
        return None, f"{inst.name}: what its instance store adds to the price is not in the data"
    if (req.read_iops or req.write_iops) and (not r_io or not w_io):
        return None, f"{inst.name}: its instance store's random read and write IOPS are not both in the data"
    usable = inst.local_nvme_gb * LOCAL_USABLE
    if (req.capacity_gb or 0) * h > usable + 1e-9:
        return None, f"{inst.name}: {usable:,.0f} GB of instance store (90% of {inst.local_nvme_gb:,.0f}) is too small"
    busy = ((req.read_iops or 0) / r_io if r_io else 0) + ((req.write_iops or 0) / w_io if w_io else 0)
    if busy * h > 1 + 1e-9:
        return None, f"{inst.name}: its instance store is {busy * h:.0%} busy at the requirement with headroom"
    local = {"type": "instance-store", "size_gib": inst.local_nvme_gb * GIB_PER_GB, "iops": r_io,
             "write_iops": w_io, "ephemeral": True,
             "monthly_usd": {"instance_premium": inst.premium_usd_per_month}}
    return Part(role, None, None, 0.0, 0.0, local), None


LOCAL_USABLE = 0.9        # AWS: leave 10% of an instance-store NVMe unpartitioned (ec2ug:storage-optimized)


def size_cloud(types: dict[str, VolumeType], instances: dict[str, Instance], provider: str, req: Requirement,
               instance_name: str | None, service_years: float = 5.0, clustered: bool = False,
               max_volumes: int = MAX_VOLUMES, copies: int = 1, instance_store: bool = False,
               attach: int | None = None) -> tuple[list[CloudCandidate], list[dict[str, Any]]]:
    """(candidates ranked by monthly price, volume types that could not meet it and why). `attach`: the
    instances sharing the volumes (default: 2 when `clustered`, else 1)."""
    n = shared_by(clustered, attach)
    insts = instances_for(instances, provider, instance_name)
    found: list[CloudCandidate] = []
    missed: list[dict[str, Any]] = []
    for vt in types_for(types, provider, clustered, n, missed):
        part, why = part_for(vt, req, max_volumes=max_volumes)
        if part is None:
            missed.append({"type": vt.type, "reason": why})
            continue
        c, why = place((part,), insts, instance_name, provider, service_years, copies)
        if c is None:
            missed.append({"type": vt.type, "reason": why})
        else:
            found.append(replace(c, attach=n))
    if instance_store and n > 1:
        missed.append({"type": "instance-store", "reason": f"an instance's own NVMe can't be attached to the other "
                                                           f"{n - 1} instance(s) of the cluster"})
    elif instance_store:
        stores = [i for i in (insts if instance_name else instances.values())
                  if i is not None and i.provider == provider and i.local_nvme_gb]
        if not stores:
            missed.append({"type": "instance-store", "reason": f"no {provider} instance with an instance store "
                                                               + (f"({instance_name})" if instance_name else "in the data")})
        for inst in sorted(stores, key=lambda i: (i.premium_usd_per_month or 0, i.name)):
            part, why = local_part(inst, req)
            if part is None:
                missed.append({"type": "instance-store", "reason": why})
                continue
            found.append(CloudCandidate(provider, inst, (part,), None, service_years, copies=copies))
            break                # the cheapest instance store that carries it
    found.sort(key=lambda c: (c.total_month, c.name))
    if not found:
        why = "; ".join(f"{m['type']}: {m['reason']}" for m in missed) or "no volume type of the provider"
        raise DbtierError(f"no {provider} volume set meets the requirement: {why}",
                          "lower the requirement, choose a larger --instance, or --instance auto")
    return found, missed


def shared_by(clustered: bool, attach: int | None) -> int:
    """How many instances attach each volume: `attach` when given, else 2 for a cluster, 1 otherwise."""
    if attach is not None and (isinstance(attach, bool) or not isinstance(attach, int) or attach < 1):
        raise DbtierError(f"the instances sharing the volumes must be a whole number of at least 1, got {attach!r}",
                          "e.g. --instances 2 for a two-node cluster")
    return attach if attach is not None else (2 if clustered else 1)


def types_for(types: dict[str, VolumeType], provider: str, clustered: bool, attach: int | None = None,
              missed: list[dict[str, Any]] | None = None) -> list[VolumeType]:
    """The provider's volume types; for a cluster of `attach` instances (default 2) only those N instances can
    attach read-write at once, restricted to the sizes that allow it (those left out are added to `missed`)."""
    if provider not in PROVIDERS:
        raise DbtierError(f"--cloud must be one of {', '.join(PROVIDERS)}, got '{provider}'", "e.g. --cloud aws")
    mine = [vt for vt in types.values() if vt.provider == provider]
    n = shared_by(clustered, attach)
    if n <= 1:
        return mine
    out = []
    for vt in mine:
        shared = vt.for_attach(n)
        if shared is not None:
            out.append(shared)
        elif missed is not None:
            most = vt.most_attach
            missed.append({"type": vt.type, "reason": "not shareable: one volume attaches to one instance (no generally "
                                                      "available multi-attach; its source says more)" if most <= 1
                           else f"at most {most} instances can attach one volume, the cluster has {n}"})
    return out


def instances_for(instances: dict[str, Instance], provider: str, instance_name: str | None) -> Sequence[Instance | None]:
    if instance_name in (None, ""):
        return [None]
    if instance_name == "auto":
        # the cheapest first (list price a month; unpriced last), then the smallest caps
        return sorted((i for i in instances.values() if i.provider == provider),
                      key=lambda i: (i.usd_per_month if i.usd_per_month is not None else math.inf, i.baseline_iops,
                                     i.baseline_throughput, i.name))
    from dbtier.model.cloud.volumes import instance as find
    return [find(instances, provider, instance_name)]


def place(parts: tuple[Part, ...], insts: Sequence[Instance | None], instance_name: str | None, provider: str,
           service_years: float, copies: int) -> tuple[CloudCandidate | None, str | None]:
    """The design on the instance given, or (auto) the first that carries it sustained."""
    for inst in insts:
        caps = set_caps(parts, inst) if inst is not None else None
        if inst is not None and caps is not None and "maximum" in (caps["binding"] or ""):
            if instance_name != "auto":
                return None, f"{inst.name} caps it: {caps['binding']}"
            continue
        if instance_name == "auto" and caps is not None and not caps["sustained"]:
            continue          # auto: the smallest instance that carries it sustained
        return CloudCandidate(provider, inst, parts, caps, service_years, copies=copies), None
    return None, "no instance in the data carries it sustained"


def set_caps(parts: Sequence[Part], inst: Instance) -> dict[str, Any]:
    """The instance's caps over every volume set of a design together (an instance store is not under them)."""
    io = sum(p.need_iops for p in parts)
    mbps = sum(p.need_mbps for p in parts)
    unit = next((p.volume_type.throughput_unit for p in parts if p.volume_type), inst.throughput_unit)
    tp = to_unit(mbps, unit)
    return {**under_caps_of(io, tp, inst, unit), "instance_mibps": inst.throughput_in("MiB/s")[0],
            "instance_max_mibps": inst.throughput_in("MiB/s")[1]}


def group_volumes(volumes: Sequence[Any]) -> list[tuple[int, dict[str, Any]]]:
    """A document's `cloud.volumes` with identical neighbours counted once (a stripe of n is one line), in
    order: [(count, volume)]."""
    out: list[tuple[int, dict[str, Any]]] = []
    for v in volumes:
        if not isinstance(v, dict):
            continue
        key = tuple(v.get(k) for k in ("role", "type", "size_gib", "iops"))
        if out and tuple(out[-1][1].get(k) for k in ("role", "type", "size_gib", "iops")) == key:
            out[-1] = (out[-1][0] + 1, out[-1][1])
        else:
            out.append((1, v))
    return out


def limits_as_of(types: dict[str, VolumeType], instances: dict[str, Instance], provider: str) -> dict[str, Any]:
    dates = sorted({t.as_of for t in types.values() if t.provider == provider}
                   | {i.as_of for i in instances.values() if i.provider == provider})
    return {"volumes_and_instances": dates, "note": "list prices and limits as of these dates: see "
                                                    "catalog/cloud_volumes.toml and instances.toml to update them"}


# -- the history replayed through every credit bucket a design has ----------------------------------------

def part_buckets(part: Part, shared: bool = False) -> list[tuple[Bucket, str]]:
    """Each credit bucket of one volume set and what it meters: "iops" or "throughput" (in the type's unit)
    per volume. `shared`: attached to several instances (Azure: a shared Premium SSD has no credit bursting)."""
    vt, vs = part.volume_type, part.volumes
    if vt is None or vs is None:
        return []                     # an instance store has no credits
    vol = vs.volumes[0]
    out: list[tuple[Bucket, str]] = []
    if vt.burst == "gp2-io-credits":
        out.append((gp2_bucket(vol.size), "iops"))
    elif vt.burst in ("st1-throughput-credits", "sc1-throughput-credits"):
        base = (vt.throughput_per_size or 0) * vol.size
        top = min((vt.burst_throughput_per_size or 0) * vol.size, vt.burst_throughput_max or base)
        out.append((Bucket(f"{vt.type} throughput credits", vol.size * 1024 * 1.0, base, max(base, top),
                           "a full bucket is 1 TiB of credits per TiB of size (AWS), full at the start"), "throughput"))
    elif vt.burst == "azure-disk-credits" and vt.model == "tiered" and not shared:
        t = vt.tier(vol.size)
        if len(t) > 4 and t[4] > t[1]:
            out.append((Bucket(f"{vt.type} P-tier credits", (t[4] - t[1]) * 1800.0, t[1], t[4],
                               "the bucket is not published: 30 minutes at the burst rate, (burst - target) x "
                               "1,800 s, full at the start"), "iops"))
    return out


def instance_buckets(c: CloudCandidate) -> list[tuple[Bucket, str]]:
    """The instance's own burst buckets: "instance iops" and "instance throughput" (in the first volume type's
    unit)."""
    inst, vt = c.instance, c.volume_type
    if inst is None or vt is None or inst.burst == "none" or inst.max_iops <= inst.baseline_iops:
        return []
    out = [(instance_bucket(inst.baseline_iops, inst.max_iops, "IOPS"), "instance iops")]
    b_tp, m_tp = inst.throughput_in(vt.throughput_unit)
    if m_tp > b_tp:
        out.append((instance_bucket(b_tp, m_tp, "throughput"), "instance throughput"))
    return out


Intervals = list[tuple[float, float, float]]
MAX_POINTS = 500          # the balance over time kept in the document (the lowest of each bin)


def _demand(vt: VolumeType, intervals: Intervals, meters: str, n: int) -> list[tuple[float, float]]:
    """(seconds, demand) per interval for one bucket: I/Os counted at the type's accounting size, throughput in
    its unit, a volume's share of a stripe of `n`."""
    out = []
    for secs, iops, mbps in intervals:
        per_io = max(1.0, math.ceil((mbps * 1e6 / iops / 1024) / vt.io_size_kib - 1e-9)) if iops else 1.0
        counted = iops * per_io
        tp = to_unit(mbps, vt.throughput_unit)
        out.append((secs, {"iops": counted / n, "throughput": tp / n, "instance iops": counted,
                           "instance throughput": tp}[meters]))
    return out


def _thin(points: list[tuple[float, float]]) -> dict[str, list[float]]:
    """At most MAX_POINTS (time, balance) points: the lowest of each bin, so every trough stays visible."""
    step = max(1, math.ceil(len(points) / MAX_POINTS))
    t, b = [], []
    for i in range(0, len(points), step):
        chunk = points[i:i + step]
        lo = min(chunk, key=lambda p: p[1])
        t.append(chunk[-1][0])
        b.append(lo[1])
    return {"t_s": t, "balance": b}


def replay_history(c: CloudCandidate, intervals: Intervals, by_role: dict[str, Intervals] | None = None
                   ) -> dict[str, Any] | None:
    """The history's (seconds, IOPS, MB/s) through each bucket of `c`: each volume set its own series (a role's,
    from `by_role`, else the whole database's), each volume its share of a stripe; the instance's buckets the
    whole. The worst bucket (a throttled one first) with the others beside, and its balance over time."""
    results = []
    for part in c.parts:
        if part.volume_type is None or part.volumes is None:
            continue                  # an instance store has no credits (part_buckets)
        series = (by_role or {}).get(part.role or "", intervals) if part.role else intervals
        for bucket, meters in part_buckets(part, c.attach > 1):
            r = replay(bucket, _demand(part.volume_type, series, meters, part.volumes.count))
            results.append({**r, "meters": meters, "role": part.role})
    for bucket, meters in instance_buckets(c):
        r = replay(bucket, _demand(c.volume_type, intervals, meters, 1))  # type: ignore[arg-type]
        results.append({**r, "meters": meters, "role": None})
    if not results:
        return None
    worst = max(results, key=lambda r: (r["throttled_intervals"], -r["min_balance"] / (r["capacity"] or 1)))
    longest = max(s for s, _, _ in intervals)
    over_time = _thin(worst.pop("balance_points"))
    for r in results:
        r.pop("balance_points", None)
    return {**worst, "balance_over_time": over_time, "buckets": results,
            "interval_note": f"the history's intervals are up to {longest:,.0f} s long: a burst shorter than an "
                             "interval is averaged into it and not seen (30 minutes is 1,800 s)"}


def with_history(found: list[CloudCandidate], intervals: Intervals, allow_throttling: bool,
                 by_role: dict[str, Intervals] | None = None) -> tuple[list[CloudCandidate], list[dict[str, Any]]]:
    """Each candidate replayed; one the history's demand would throttle is dropped (named), unless allowed."""
    kept, dropped = [], []
    for c in found:
        r = replay_history(c, intervals, by_role)
        c2 = replace(c, replayed=r)
        if r is not None and r["throttled_intervals"] and not allow_throttling:
            dropped.append({"type": c.name, "reason": f"the history would throttle it: {r['bucket']} "
                            f"runs dry after {r['dry_after_s'] or 0:,.0f} s, {r['throttled_intervals']} intervals "
                            f"short by up to {r['worst_shortfall']:,.0f} a second (--allow-throttling lists it)"})
            continue
        kept.append(c2)
    return kept, dropped


def _duration(seconds: float) -> str:
    return f"{seconds / 60:,.0f} min" if seconds < 5400 else f"{seconds / 3600:,.1f} h"


def burst_unchecked(found: list[CloudCandidate], why: str, basis: str) -> list[CloudCandidate]:
    """Each candidate with a burst bucket (gp2, st1/sc1, Azure Premium SSD P20 and below, an instance's burst)
    said in words, for a history that cannot be replayed (`why`, e.g. hour-of-day statistics): the requirement
    (`basis`, e.g. "the p95 of each hour of the day, with 30% headroom") is within the baseline, but a burst
    longer than the bucket lasts would be throttled. Candidates without a bucket are kept as they are."""
    out = []
    for c in found:
        said = []
        for part in c.parts:
            for b, meters in part_buckets(part, c.attach > 1):
                if b.ceiling > b.baseline:
                    unit = "IOPS" if meters == "iops" else part.volume_type.throughput_unit  # type: ignore[union-attr]
                    said.append(f"{b.name} ({_duration(b.capacity / (b.ceiling - b.baseline))} at "
                                f"{b.ceiling:,.0f} {unit} per volume)")
        over = c.caps is not None and not c.caps["sustained"]
        for b, meters in instance_buckets(c):
            unit = "IOPS" if meters == "instance iops" else c.volume_type.throughput_unit  # type: ignore[union-attr]
            said.append(f"{b.name} ({_duration(b.capacity / (b.ceiling - b.baseline))} at the {b.ceiling:,.0f} "
                        f"{unit} maximum, assumed)")
        if not said:
            out.append(c)
            continue
        within = ("is above the instance's baseline: it holds only while the instance's bucket lasts" if over else
                  "is within the baseline")
        out.append(replace(c, notes=c.notes + (
            f"burst credits not checked: {why}; the requirement ({basis}) {within}, but a burst longer than the "
            f"bucket would be throttled: {'; '.join(said)}",)))
    return out
