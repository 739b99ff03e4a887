"""`plan size --cloud PROVIDER`: for each of the provider's volume types, the cheapest stripe that meets the
requirement with headroom, within one instance's caps (or, with `--instances auto`, on the cheapest instance
whose caps carry it sustained), ranked by the monthly price. Pure: dbtier.model.cloud does the arithmetic.

Parity RAID over cloud volumes is never offered (the provider replicates each volume): a stripe only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from dbtier.core.errors import DbtierError
from dbtier.model.cloud import (MIB_PER_MB, PROVIDERS, Bucket, Instance, VolumeType, cheapest_set, gp2_bucket,
                                instance_bucket, need_for, replay, under_caps)
from dbtier.model.requirement import Requirement

MAX_VOLUMES = 16


@dataclass(frozen=True)
class CloudCandidate:
    provider: str
    instance: Instance | None
    volume_type: VolumeType
    volumes: Any                 # dbtier.model.cloud.VolumeSet
    caps: dict[str, Any] | None
    service_years: float
    replayed: dict[str, Any] | None = None      # the history replayed through its burst buckets

    @property
    def monthly(self) -> dict[str, float]:
        m = dict(self.volumes.monthly)
        m["instance_premium"] = 0.0
        return m

    @property
    def total_month(self) -> float:
        return self.volumes.monthly["total"]

    def contract(self) -> dict[str, Any]:
        vt = self.volume_type
        monthly = self.monthly
        burst = self.replayed
        if burst is None and self.caps is not None and not self.caps["sustained"] and self.instance is not None \
                and "burst only" in (self.caps["binding"] or ""):
            b = instance_bucket(self.instance.baseline_iops, self.instance.max_iops, "IOPS")
            burst = {"bucket": b.name, "capacity": b.capacity, "assumption": b.assumption,
                     "note": "the requirement is over the instance's baseline: it holds only while the burst "
                             "bucket lasts (30 minutes at the maximum); replay the history to see for how long"}
        return {"cloud": {
            "provider": self.provider, "instance": self.instance.name if self.instance else None,
            "volumes": [v.to_dict() for v in self.volumes.volumes],
            "monthly_usd": monthly,
            "caps": self.caps, "binding": self.volumes.binding if not (self.caps and self.caps["binding"])
            else self.caps["binding"], "burst": burst,
            "service_life_usd": monthly["total"] * 12 * self.service_years,
            "latency_us": vt.latency_us, "durability_pct": vt.durability_pct, "multi_attach": vt.multi_attach,
            "volume_type": {"type": vt.type, "name": vt.name, "model": vt.model, "source": vt.source,
                            "as_of": vt.as_of},
        }, "device": f"{self.provider}-{vt.type}", "count": self.volumes.count, "layout": "stripe",
           "description": f"{self.volumes.count} x {self.provider} {vt.type} striped"
                          + (f" on {self.instance.name}" if self.instance else ""),
           "price_usd": monthly["total"] * 12 * self.service_years}


def size_cloud(types: dict[str, VolumeType], instances: dict[str, Instance], provider: str, req: Requirement,
               instance_name: str | None, service_years: float = 5.0, clustered: bool = False,
               max_volumes: int = MAX_VOLUMES) -> tuple[list[CloudCandidate], list[dict[str, Any]]]:
    """(candidates ranked by monthly price, volume types that could not meet it and why)."""
    if provider not in PROVIDERS:
        raise DbtierError(f"--cloud must be one of {', '.join(PROVIDERS)}, got '{provider}'", "e.g. --cloud aws")
    mine = [vt for vt in types.values() if vt.provider == provider]
    if clustered:
        mine = [vt for vt in mine if vt.multi_attach]
    insts: Sequence[Instance | None]
    if instance_name in (None, ""):
        insts = [None]
    elif instance_name == "auto":
        insts = sorted((i for i in instances.values() if i.provider == provider), key=lambda i: (i.max_iops, i.name))
    else:
        from dbtier.model.cloud import instance as find
        insts = [find(instances, provider, instance_name)]
    found: list[CloudCandidate] = []
    missed: list[dict[str, Any]] = []
    for vt in mine:
        need = need_for(vt, req.read_iops or 0, req.write_iops or 0, req.read_mbps or 0, req.write_mbps or 0,
                        req.capacity_gb or 0, req.headroom)
        try:
            s = cheapest_set(vt, need, max_volumes)
        except DbtierError as exc:        # a price the data does not have
            missed.append({"type": vt.type, "reason": exc.message})
            continue
        if s is None:
            missed.append({"type": vt.type, "reason": f"no stripe of up to {max_volumes} {vt.type} volumes carries "
                                                      f"{need.iops:,.0f} I/Os per second and {need.throughput:,.0f} "
                                                      f"{vt.throughput_unit} in {need.size:,.0f} GiB"})
            continue
        placed = False
        for inst in insts:
            caps = under_caps(s, inst, need, vt) if inst is not None else None
            if caps is not None and "maximum" in (caps["binding"] or ""):
                if instance_name != "auto":
                    missed.append({"type": vt.type, "reason": f"{inst.name} caps it: {caps['binding']}"})
                continue
            if instance_name == "auto" and caps is not None and not caps["sustained"]:
                continue          # auto: the smallest instance that carries it sustained
            found.append(CloudCandidate(provider, inst, vt, s, caps, service_years))
            placed = True
            break
        if not placed and instance_name == "auto":
            missed.append({"type": vt.type, "reason": "no instance in the data carries it sustained"})
    found.sort(key=lambda c: (c.total_month, c.volume_type.type))
    if not found:
        why = "; ".join(f"{m['type']}: {m['reason']}" for m in missed) or "no volume type of the provider"
        raise DbtierError(f"no {provider} volume set meets the requirement: {why}",
                          "lower the requirement, choose a larger --instance, or --instance auto")
    return found, missed


def limits_as_of(types: dict[str, VolumeType], instances: dict[str, Instance], provider: str) -> dict[str, Any]:
    dates = sorted({t.as_of for t in types.values() if t.provider == provider}
                   | {i.as_of for i in instances.values() if i.provider == provider})
    return {"volumes_and_instances": dates, "note": "list prices and limits as of these dates: see "
                                                    "catalog/cloud_volumes.toml and instances.toml to update them"}


# -- the history replayed through every credit bucket a design has ----------------------------------------

def buckets(c: CloudCandidate) -> list[tuple[Bucket, str]]:
    """Each credit bucket of a design and what it meters: "iops" per volume, "throughput" per volume (in the
    type's unit), "instance iops", "instance throughput"."""
    vt, vol = c.volume_type, c.volumes.volumes[0]
    out: list[tuple[Bucket, str]] = []
    if vt.burst == "gp2-io-credits":
        out.append((gp2_bucket(vol.size), "iops"))
    elif vt.burst in ("st1-throughput-credits", "sc1-throughput-credits"):
        base = (vt.throughput_per_size or 0) * vol.size
        top = min((vt.burst_throughput_per_size or 0) * vol.size, vt.burst_throughput_max or base)
        out.append((Bucket(f"{vt.type} throughput credits", vol.size * 1024 * 1.0, base, max(base, top),
                           "a full bucket is 1 TiB of credits per TiB of size (AWS), full at the start"), "throughput"))
    elif vt.burst == "azure-disk-credits" and vt.model == "tiered":
        t = vt.tier(vol.size)
        if len(t) > 4 and t[4] > t[1]:
            out.append((Bucket(f"{vt.type} P-tier credits", (t[4] - t[1]) * 1800.0, t[1], t[4],
                               "the bucket is not published: 30 minutes at the burst rate, (burst - target) x "
                               "1,800 s, full at the start"), "iops"))
    inst = c.instance
    if inst is not None and inst.burst != "none" and inst.max_iops > inst.baseline_iops:
        out.append((instance_bucket(inst.baseline_iops, inst.max_iops, "IOPS"), "instance iops"))
        b_tp, m_tp = inst.throughput_in(vt.throughput_unit)
        if m_tp > b_tp:
            out.append((instance_bucket(b_tp, m_tp, "throughput"), "instance throughput"))
    return out


def replay_history(c: CloudCandidate, intervals: list[tuple[float, float, float]]) -> dict[str, Any] | None:
    """The history's (seconds, IOPS, MB/s) through each bucket of `c` (each volume its share of a stripe; I/Os
    counted at the type's accounting size); the worst one (a throttled one first) with the others beside."""
    vt, n = c.volume_type, c.volumes.count
    results = []
    for bucket, meters in buckets(c):
        demand = []
        for secs, iops, mbps in intervals:
            per_io = max(1.0, -(-((mbps * 1e6 / iops / 1024) if iops else 0) // vt.io_size_kib)) if iops else 1.0
            counted = iops * per_io
            tp = mbps * MIB_PER_MB if vt.throughput_unit == "MiB/s" else mbps
            value = {"iops": counted / n, "throughput": tp / n, "instance iops": counted,
                     "instance throughput": tp}[meters]
            demand.append((secs, value))
        r = replay(bucket, demand)
        r["meters"] = meters
        results.append(r)
    if not results:
        return None
    worst = max(results, key=lambda r: (r["throttled_intervals"], -r["min_balance"] / (r["capacity"] or 1)))
    longest = max(s for s, _, _ in intervals)
    return {**worst, "buckets": results,
            "interval_note": f"the history's intervals are up to {longest:,.0f} s long: a burst shorter than an "
                             "interval is averaged into it and not seen (30 minutes is 1,800 s)"}


def with_history(found: list[CloudCandidate], intervals: list[tuple[float, float, float]],
                 allow_throttling: bool) -> tuple[list[CloudCandidate], list[dict[str, Any]]]:
    """Each candidate replayed; one the history's demand would throttle is dropped (named), unless allowed."""
    kept, dropped = [], []
    for c in found:
        r = replay_history(c, intervals)
        c2 = CloudCandidate(c.provider, c.instance, c.volume_type, c.volumes, c.caps, c.service_years, r)
        if r is not None and r["throttled_intervals"] and not allow_throttling:
            dropped.append({"type": c.volume_type.type, "reason": f"the history would throttle it: {r['bucket']} "
                            f"runs dry after {r['dry_after_s'] or 0:,.0f} s, {r['throttled_intervals']} intervals "
                            f"short by up to {r['worst_shortfall']:,.0f} a second (--allow-throttling lists it)"})
            continue
        kept.append(c2)
    return kept, dropped
