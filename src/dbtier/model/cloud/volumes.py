"""Cloud volumes as the providers sell them: per-volume limits and prices as formulas, striped sets sized
continuously within the provider's rules, instance caps, and burst credit buckets replayed over time.

Pure: the data files (catalog/cloud_volumes.toml, catalog/instances.toml: every figure with `source` and
`as_of`) and numbers in, figures out.

Units are kept apart as the providers give them: sizes in GiB; AWS and Google throughput in MiB/s, Azure's
in MB/s. A requirement's MB/s (10^6 B/s) and GB are converted once, here (`to_unit`).

Volume models:
- provisioned (gp3, io1, io2, Premium SSD v2, Ultra, Hyperdisk): the size, IOPS and throughput are chosen
  within the type's ranges (IOPS at most `iops_per_size` x size; throughput at most `throughput_per_iops` x
  IOPS), and priced: size x usd_per_size_month + IOPS above `iops_free` (tiered for io2) + throughput above
  `throughput_free`;
- size-scaled (gp2, st1, sc1, pd-balanced, pd-ssd): IOPS = min(max, max(floor, base + per_size x size)),
  throughput likewise; priced by size alone;
- tiered (Azure Premium SSD): a disk is billed as the tier its size rounds up to, with that tier's figures.

I/O size accounting: an I/O up to `io_size_kib` counts as one, a larger one as ceil(size / io_size_kib):
a requirement of R IOPS of average size s KiB is R x ceil(s / io_size_kib) counted I/Os.

Shared volumes: `max_attach` is the most instances that can attach one volume read-write at once, at every
size (1: not shareable); `max_attach_by_size` raises it where the provider's limit grows with the size (Azure
Premium SSD maxShares 3 / 5 / 10 by tier). `for_attach(n)` is the type restricted to the sizes n instances can
share, or None.
"""

from __future__ import annotations

import math
import tomllib
import dataclasses
from dataclasses import dataclass, replace
from importlib import resources
from typing import Any, Sequence

from dbtier.core.errors import DbtierError

MIB_PER_MB = 1e6 / 2**20          # 1 MB/s = 0.953674 MiB/s
GIB_PER_GB = 1e9 / 2**30          # 1 GB = 0.931323 GiB
MODELS = ("provisioned", "size-scaled", "tiered")
PROVIDERS = ("aws", "azure", "gcp")


def to_unit(mbps: float, unit: str) -> float:
    """A throughput in MB/s (10^6 B/s) in the provider's unit."""
    return mbps * MIB_PER_MB if unit == "MiB/s" else mbps


@dataclass(frozen=True)
class VolumeType:
    provider: str
    type: str
    name: str
    model: str
    size_min: float
    size_max: float
    throughput_unit: str
    io_size_kib: float
    source: str
    as_of: str
    size_unit: str = "GiB"
    iops_min: float = 0.0
    iops_max: float = math.inf
    iops_per_size: float | None = None
    iops_min_per_size: float | None = None
    iops_free: float = 0.0
    iops_base: float = 0.0
    iops_floor: float = 0.0
    throughput_min: float = 0.0
    throughput_max: float = math.inf
    throughput_free: float = 0.0
    throughput_per_iops: float | None = None
    throughput_per_size: float | None = None
    throughput_base: float = 0.0
    throughput_provisioned: bool = False
    throughput_steps: tuple[tuple[float, float], ...] = ()
    throughput_rule: str | None = None
    burst_iops: float | None = None
    burst_throughput_per_size: float | None = None
    burst_throughput_max: float | None = None
    usd_per_size_month: float = 0.0
    usd_per_iops_month: float = 0.0
    usd_iops_tiers: tuple[tuple[float, float], ...] = ()
    usd_per_throughput_month: float = 0.0
    tiers: tuple[tuple[float, ...], ...] = ()
    burst: str = "none"
    latency_us: float | None = None
    durability_pct: float | None = None
    multi_attach: bool = False
    max_attach: int = 1
    max_attach_by_size: tuple[tuple[float, float], ...] = ()
    shared_note: str | None = None
    price_region: str | None = None

    @property
    def key(self) -> str:
        return f"{self.provider}:{self.type}"

    # -- how many instances can share one volume -------------------------------------------------------------

    def attach_limit(self, size: float) -> int:
        """The most instances that can attach one volume of `size` GiB read-write at once."""
        for at_most, n in self.max_attach_by_size:
            if size <= at_most + 1e-9:
                return int(n)
        return self.max_attach

    @property
    def most_attach(self) -> int:
        """The most instances that can share one volume of some size."""
        return max([self.max_attach, *(int(n) for _, n in self.max_attach_by_size)])

    def for_attach(self, n: int) -> VolumeType | None:
        """The type restricted to the sizes whose volumes `n` instances can attach read-write at once (itself
        when every size can), None when no size can."""
        if n <= self.max_attach:
            return self
        if n > self.most_attach:
            return None
        lowest, below = None, 0.0
        for at_most, k in self.max_attach_by_size:
            if k >= n:
                lowest = below
                break
            below = at_most
        if lowest is None:
            return None
        size_min = max(self.size_min, math.floor(lowest) + 1)
        if self.model == "tiered":
            return replace(self, size_min=size_min, tiers=tuple(t for t in self.tiers if t[0] > lowest + 1e-9))
        return replace(self, size_min=size_min)

    # -- what one volume of `size` GiB can do ----------------------------------------------------------------

    def tier(self, size: float) -> tuple[float, ...]:
        """Azure Premium SSD: the tier the size rounds up to (size_gib, iops, mbps, usd_month, burst...)."""
        for t in self.tiers:
            if size <= t[0] + 1e-9:
                return t
        raise DbtierError(f"{self.key}: {size:,.0f} GiB is larger than the largest tier ({self.tiers[-1][0]:,.0f} GiB)",
                          "stripe several disks")

    def max_iops(self, size: float) -> float:
        """The most IOPS a volume of `size` GiB can be provisioned with (or has, size-scaled)."""
        if self.model == "tiered":
            return self.tier(size)[1]
        if self.model == "size-scaled":
            if self.iops_per_size is None and not self.iops_base and not self.iops_floor:
                # HDD classes (st1, sc1): an I/O counts as io_size_kib, so IOPS follow from the throughput
                return min(self.iops_max, self.throughput_at(size, 0) * 1024 / self.io_size_kib)
            return min(self.iops_max, max(self.iops_floor, self.iops_base + (self.iops_per_size or 0) * size))
        cap = self.iops_max
        if self.iops_per_size is not None:
            # the free baseline holds at any size (gp3, Premium SSD v2: 3,000 IOPS even at 1 GiB); the ratio
            # bounds what is provisioned above it
            cap = min(cap, max(self.iops_per_size * size, self.iops_free))
        return max(cap, self.iops_min) if cap >= self.iops_min else cap

    def throughput_at(self, size: float, iops: float) -> float:
        """The most throughput (the type's unit) a volume of `size` GiB provisioned with `iops` can have."""
        if self.model == "tiered":
            return self.tier(size)[2]
        if self.model == "size-scaled":
            if self.throughput_steps:
                for at_most, tp in self.throughput_steps:
                    if size <= at_most:
                        return min(tp, self.throughput_max)
                return self.throughput_max
            return min(self.throughput_max, self.throughput_base + (self.throughput_per_size or 0) * size)
        if self.throughput_rule == "io1":
            # up to 32,000 IOPS: 256 KiB per I/O up to 500 MiB/s; above: 16 KiB per I/O up to 1,000 MiB/s
            return min(500.0, iops * 0.25) if iops <= 32_000 else min(1_000.0, iops * 16 / 1024)
        cap = self.throughput_max
        if self.throughput_per_iops is not None:
            cap = min(cap, self.throughput_per_iops * iops)
        return max(cap, self.throughput_free)

    # -- price -------------------------------------------------------------------------------------------

    def monthly(self, size: float, iops: float, throughput: float) -> dict[str, float]:
        """The list price a month of one volume: {capacity, iops, throughput, total} in US dollars."""
        if self.model == "tiered":
            t = self.tier(size)
            if t[3] < 0:
                raise DbtierError(f"{self.key}: the price of the {t[0]:,.0f} GiB tier is not in the data "
                                  f"({self.as_of})", "give it in catalog/cloud_volumes.toml")
            return {"capacity": t[3], "iops": 0.0, "throughput": 0.0, "total": t[3]}
        for k in ("usd_per_size_month", "usd_per_iops_month", "usd_per_throughput_month"):
            if getattr(self, k) < 0:      # -1 in the data: the provider's price was not found
                raise DbtierError(f"{self.key}: its price ({k}) is not in the data ({self.as_of})",
                                  "give it in catalog/cloud_volumes.toml, or choose another type")
        cap = size * self.usd_per_size_month
        paid_iops = max(0.0, iops - self.iops_free) if self.model == "provisioned" else 0.0
        if self.usd_iops_tiers and self.model == "provisioned":
            io, left, lo = 0.0, paid_iops, 0.0
            for upto, usd in self.usd_iops_tiers:
                hi = upto if upto > 0 else math.inf
                n = max(0.0, min(left, hi - lo))
                io += n * usd
                left -= n
                lo = hi
            iops_usd = io
        else:
            iops_usd = paid_iops * self.usd_per_iops_month
        paid_tp = max(0.0, throughput - self.throughput_free) if self.throughput_provisioned else 0.0
        tp_usd = paid_tp * self.usd_per_throughput_month
        return {"capacity": cap, "iops": iops_usd, "throughput": tp_usd, "total": cap + iops_usd + tp_usd}


@dataclass(frozen=True)
class Instance:
    provider: str
    name: str
    baseline_iops: float
    baseline_throughput: float
    max_iops: float
    max_throughput: float
    throughput_unit: str
    source: str
    as_of: str
    family: str = ""
    vcpus: int | None = None
    memory_gib: float | None = None
    burst: str = "none"
    usd_per_month: float | None = None
    local_nvme_gb: float | None = None
    local_nvme_read_iops: float | None = None
    local_nvme_write_iops: float | None = None
    premium_usd_per_month: float | None = None

    def throughput_in(self, unit: str) -> tuple[float, float]:
        """(baseline, max) throughput in `unit` (MB/s <-> MiB/s)."""
        if unit == self.throughput_unit:
            return self.baseline_throughput, self.max_throughput
        f = MIB_PER_MB if unit == "MiB/s" else 1 / MIB_PER_MB
        return self.baseline_throughput * f, self.max_throughput * f


# -- loading -----------------------------------------------------------------------------------------------

_VOLUME_TUPLES = ("throughput_steps", "usd_iops_tiers", "tiers", "max_attach_by_size")


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _load(name: str) -> dict[str, Any]:
    text = (resources.files("dbtier.catalog") / name).read_text(encoding="utf-8")
    return tomllib.loads(text)


def _build(cls: type[Any], kw: dict[str, Any], where: str, needs: str) -> Any:
    """One entry as `cls`: an unknown field or a missing one named with the entry."""
    unknown = sorted(set(kw) - {f.name for f in dataclasses.fields(cls)})
    if unknown:
        raise DbtierError(f"{where}: unknown field '{unknown[0]}'", "fix the field name")
    try:
        return cls(**kw)
    except TypeError as exc:
        raise DbtierError(f"{where}: {exc}", f"every entry needs {needs}") from None


def load_volume_types(data: dict[str, Any] | None = None, origin: str = "shipped:cloud_volumes.toml"
                      ) -> dict[str, VolumeType]:
    """Every volume type by `provider:type`, checked (an entry that breaks a rule is named)."""
    data = _load("cloud_volumes.toml") if data is None else data
    out: dict[str, VolumeType] = {}
    for i, e in enumerate(data.get("volume", []), 1):
        where = f"{origin}: volume #{i} ({e.get('provider')}:{e.get('type')})"
        if e.get("provider") not in PROVIDERS or e.get("model") not in MODELS:
            raise DbtierError(f"{where}: provider must be one of {', '.join(PROVIDERS)} and model one of "
                              f"{', '.join(MODELS)}", "fix the entry")
        kw = {k: (tuple(tuple(x) if isinstance(x, list) else x for x in v) if k in _VOLUME_TUPLES
                  and isinstance(v, list) else v) for k, v in e.items()}
        for k, v in kw.items():
            price_unknown = k.startswith("usd_") and v == -1        # -1: the price was not found (said)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and (not math.isfinite(v) or v < 0) \
                    and not price_unknown:
                raise DbtierError(f"{where}: field '{k}' must be a finite number of at least 0, got {v}",
                                  "give the figure from the provider's page")
        vt = _build(VolumeType, kw, where, "provider, type, name, model, size_min, size_max, throughput_unit, "
                                           "io_size_kib, source and as_of")
        if vt.size_min > vt.size_max or vt.iops_min > vt.iops_max or vt.throughput_min > vt.throughput_max:
            raise DbtierError(f"{where}: a minimum is above its maximum", "check the size, IOPS and throughput ranges")
        if vt.model == "tiered" and not vt.tiers:
            raise DbtierError(f"{where}: a tiered type needs `tiers`", "list [size_gib, iops, mbps, usd_month, ...]")
        check_attach(vt, where)
        out[vt.key] = vt
    return out


def check_attach(vt: VolumeType, where: str) -> None:
    """`multi_attach`, `max_attach` and `max_attach_by_size` of one entry, which must agree."""
    def whole(v: Any) -> bool:
        return _finite(v) and v >= 1 and float(v).is_integer()
    if not isinstance(vt.multi_attach, bool):
        raise DbtierError(f"{where}: field 'multi_attach' must be true or false, got {vt.multi_attach!r}",
                          "true where several instances can attach one volume read-write (generally available)")
    if not whole(vt.max_attach):
        raise DbtierError(f"{where}: field 'max_attach' must be a whole number of at least 1 (the most instances "
                          f"that attach one volume read-write), got {vt.max_attach!r}",
                          "give the provider's limit (1: not shareable)")
    below = 0.0
    rows = vt.max_attach_by_size if isinstance(vt.max_attach_by_size, tuple) else ((vt.max_attach_by_size,),)
    for row in rows:
        if not isinstance(row, tuple) or len(row) != 2 or not _finite(row[0]) or row[0] <= below or not whole(row[1]) or row[1] < vt.max_attach:
            raise DbtierError(f"{where}: field 'max_attach_by_size' must list [size_at_or_below, max_attach] with "
                              f"sizes rising and each max_attach a whole number of at least max_attach "
                              f"({vt.max_attach}), got {list(row)}", "e.g. [[512, 3], [4096, 5], [32767, 10]]")
        below = row[0]
    if vt.multi_attach != (vt.most_attach > 1):
        raise DbtierError(f"{where}: multi_attach is {str(vt.multi_attach).lower()} but max_attach is "
                          f"{vt.most_attach}", "multi_attach = true goes with max_attach (or a max_attach_by_size "
                                               "row) above 1, false with 1")


def load_instances(data: dict[str, Any] | None = None, origin: str = "shipped:instances.toml") -> dict[str, Instance]:
    data = _load("instances.toml") if data is None else data
    out: dict[str, Instance] = {}
    for i, e in enumerate(data.get("instance", []), 1):
        where = f"{origin}: instance #{i} ({e.get('name')})"
        inst = _build(Instance, e, where, "provider, name, baseline_iops, baseline_throughput, max_iops, "
                                          "max_throughput, throughput_unit, source and as_of")
        for k in ("baseline_iops", "baseline_throughput", "max_iops", "max_throughput"):
            if not _finite(getattr(inst, k)) or getattr(inst, k) <= 0:
                raise DbtierError(f"{where}: field '{k}' must be a finite positive number", "give the provider's figure")
        if inst.max_iops < inst.baseline_iops or inst.max_throughput < inst.baseline_throughput:
            raise DbtierError(f"{where}: its maximum is below its baseline", "check the figures")
        out[inst.name] = inst
    return out


def volume_type(types: dict[str, VolumeType], provider: str, name: str) -> VolumeType:
    key = f"{provider}:{name}"
    if key not in types:
        known = ", ".join(sorted(t.type for t in types.values() if t.provider == provider))
        raise DbtierError(f"unknown {provider} volume type '{name}' (known: {known})", "choose one of those")
    return types[key]


def instance(instances: dict[str, Instance], provider: str, name: str) -> Instance:
    inst = instances.get(name)
    if inst is None or inst.provider != provider:
        known = ", ".join(sorted(i.name for i in instances.values() if i.provider == provider))
        raise DbtierError(f"unknown {provider} instance '{name}' (known: {known})",
                          "choose one of those, or load current figures with --instances-file "
                          "(`aws ec2 describe-instance-types` JSON)")
    return inst


# -- one volume set: the cheapest stripe of one type ---------------------------------------------------------

@dataclass(frozen=True)
class Need:
    """What a volume set must carry, in the type's own accounting and units."""
    iops: float              # counted I/Os per second (I/O size accounting applied), reads and writes together
    throughput: float        # in the type's throughput unit
    size: float              # GiB


def need_for(vt: VolumeType, read_iops: float, write_iops: float, read_mbps: float, write_mbps: float,
             capacity_gb: float, headroom: float = 0.0) -> Need:
    """Reads and writes share one IOPS limit; each I/O larger than the type's accounting size counts as
    several: the average I/O size is MB/s over IOPS (1 MiB = 1024 KiB)."""
    iops = (read_iops or 0.0) + (write_iops or 0.0)
    mbps = (read_mbps or 0.0) + (write_mbps or 0.0)
    per_io = 1.0
    if iops > 0 and mbps > 0:
        avg_kib = mbps * 1e6 / iops / 1024
        per_io = max(1.0, math.ceil(avg_kib / vt.io_size_kib - 1e-9))
    h = 1 + headroom
    return Need(iops * per_io * h, to_unit(mbps, vt.throughput_unit) * h, (capacity_gb or 0.0) * GIB_PER_GB * h)


@dataclass(frozen=True)
class Volume:
    type: VolumeType
    size: float
    iops: float
    throughput: float

    @property
    def monthly(self) -> dict[str, float]:
        return self.type.monthly(self.size, self.iops, self.throughput)

    def to_dict(self, role: str | None = None) -> dict[str, Any]:
        unit = self.type.throughput_unit
        return {"type": self.type.type, "size_gib": self.size, "iops": self.iops,
                f"throughput_{'mibps' if unit == 'MiB/s' else 'mbps'}": self.throughput,
                "throughput_unit": unit, "role": role, "monthly_usd": self.monthly}


@dataclass(frozen=True)
class VolumeSet:
    volumes: tuple[Volume, ...]
    binding: str             # what sized it: "capacity", "iops", "throughput", "a volume's IOPS limit", ...

    @property
    def count(self) -> int:
        return len(self.volumes)

    @property
    def iops(self) -> float:
        return sum(v.iops for v in self.volumes)

    @property
    def throughput(self) -> float:
        return sum(v.throughput for v in self.volumes)

    @property
    def monthly(self) -> dict[str, float]:
        out = {"capacity": 0.0, "iops": 0.0, "throughput": 0.0, "total": 0.0}
        for v in self.volumes:
            for k, x in v.monthly.items():
                out[k] += x
        return out


def _one(vt: VolumeType, need: Need, n: int) -> tuple[Volume, str] | None:
    """The cheapest single volume carrying 1/n of `need` (None when no volume of the type can)."""
    iops, tp, size = need.iops / n, need.throughput / n, max(need.size / n, vt.size_min)
    why = "capacity"
    if vt.model == "tiered":
        for t in vt.tiers:
            if t[3] < 0:
                continue                  # its price is not in the data: not offered
            if t[0] + 1e-9 >= size and t[1] + 1e-9 >= iops and t[2] + 1e-9 >= tp:
                return Volume(vt, t[0], t[1], t[2]), ("capacity" if t[0] >= size and t is vt.tier(size) else
                                                       "the tier's IOPS or throughput")
        return None
    if vt.model == "size-scaled":
        # the smallest size whose derived IOPS and throughput meet the need (both grow with size)
        def ok(s: float) -> bool:
            return vt.max_iops(s) + 1e-9 >= iops and vt.throughput_at(s, 0) + 1e-9 >= tp
        if not ok(vt.size_max):
            return None
        s = size
        if not ok(s):
            lo, hi = s, vt.size_max
            for _ in range(100):
                mid = (lo + hi) / 2
                lo, hi = (lo, mid) if ok(mid) else (mid, hi)
            s = math.ceil(hi)
            why = "IOPS or throughput (they grow with size)"
        s = max(math.ceil(s - 1e-9), vt.size_min)
        if s > vt.size_max:
            return None
        return Volume(vt, float(s), vt.max_iops(s), vt.throughput_at(s, 0)), why
    # provisioned: size for capacity and for the IOPS it must be allowed; IOPS, then throughput
    io = max(iops, vt.iops_min)
    if io > vt.iops_max + 1e-9:
        return None
    if vt.iops_per_size and io > vt.iops_free + 1e-9:
        need_size = io / vt.iops_per_size
        if need_size > size:
            size, why = need_size, f"IOPS (at most {vt.iops_per_size:,.0f} per GiB)"
    if vt.iops_min_per_size:
        io = max(io, vt.iops_min_per_size * size)
    size = float(max(math.ceil(size - 1e-9), vt.size_min))
    if size > vt.size_max + 1e-9:
        return None
    # throughput: provisioned at what is needed (at least the free or minimum amount), within the IOPS rule
    thr = max(tp, vt.throughput_free, vt.throughput_min) if vt.throughput_provisioned else vt.throughput_at(size, io)
    if tp > vt.throughput_at(size, io) + 1e-9:
        # more IOPS buy more throughput where throughput is at most per_iops x IOPS
        if vt.throughput_per_iops and tp <= vt.throughput_max + 1e-9:
            io2 = tp / vt.throughput_per_iops
            if io2 <= vt.iops_max + 1e-9:
                io = max(io, io2)
                if vt.iops_per_size and io > vt.iops_free + 1e-9 and io / vt.iops_per_size > size:
                    size = float(math.ceil(io / vt.iops_per_size))
                thr = max(tp, vt.throughput_free) if vt.throughput_provisioned else vt.throughput_at(size, io)
                why = "throughput (IOPS raised to allow it)"
            else:
                return None
        else:
            return None
    if io > iops + 1e-9 and why == "capacity":
        if n > 1 and vt.iops_free and iops <= vt.iops_free + 1e-9:
            why = f"IOPS within each volume's free {vt.iops_free:,.0f}"      # more volumes, not paid IOPS
        elif io <= vt.iops_min + 1e-9:
            why = "the type's minimum IOPS"
    return Volume(vt, size, io, thr), why


def cheapest_set(vt: VolumeType, need: Need, max_volumes: int = 16) -> VolumeSet | None:
    """The cheapest stripe of 1..max_volumes identical volumes of `vt` carrying `need` (each volume its
    share): several small volumes can beat one large one when each brings a free baseline."""
    best: VolumeSet | None = None
    for n in range(1, max_volumes + 1):
        got = _one(vt, need, n)
        if got is None:
            continue
        v, why = got
        s = VolumeSet(tuple([v] * n), why if n == 1 else f"{why}; {n} volumes striped")
        if best is None or s.monthly["total"] < best.monthly["total"] - 1e-9:
            best = s
    return best


# -- an instance's caps ------------------------------------------------------------------------------------

def under_caps(s: VolumeSet, inst: Instance, need: Need, vt: VolumeType) -> dict[str, Any]:
    """Whether the instance carries one set's need sustained (its baseline), or only in bursts (its maximum)."""
    return under_caps_of(need.iops, need.throughput, inst, vt.throughput_unit)


def under_caps_of(need_io: float, need_tp: float, inst: Instance, unit: str) -> dict[str, Any]:
    """`need_tp` in `unit`: the instance's caps converted to it."""
    b_tp, m_tp = inst.throughput_in(unit)
    binding = None
    if need_io > inst.max_iops + 1e-9:
        binding = "the instance's IOPS maximum"
    elif need_tp > m_tp + 1e-9:
        binding = "the instance's throughput maximum"
    elif need_io > inst.baseline_iops + 1e-9:
        binding = "the instance's IOPS baseline (burst only)"
    elif need_tp > b_tp + 1e-9:
        binding = "the instance's throughput baseline (burst only)"
    return {"instance_iops": inst.baseline_iops, "instance_max_iops": inst.max_iops,
            "instance_throughput": b_tp, "instance_max_throughput": m_tp, "throughput_unit": unit,
            "sustained": binding is None, "binding": binding}


# -- burst credit buckets over time ------------------------------------------------------------------------

GP2_BUCKET = 5_400_000.0          # I/O credits: the bucket and the initial balance (ec2ug:general-purpose.md)


@dataclass(frozen=True)
class Bucket:
    """A credit bucket: credits earn at `baseline - demand` while demand is below baseline and are spent at
    `demand - baseline` above it, up to `ceiling` (demand above the ceiling is never served)."""
    name: str
    capacity: float
    baseline: float
    ceiling: float
    assumption: str | None = None
    start: float | None = None          # the initial balance (default: full)


def gp2_bucket(size_gib: float) -> Bucket:
    base = max(100.0, 3.0 * size_gib)
    ceiling = max(base, 3000.0) if base < 3000 else base
    return Bucket("gp2 I/O credits", GP2_BUCKET, min(base, 16_000.0), min(ceiling, 16_000.0))


def instance_bucket(baseline: float, maximum: float, what: str) -> Bucket:
    """AWS instance (and Azure VM) burst: 30 minutes at the maximum at least once a day; the bucket's size is
    not published: assumed (maximum - baseline) x 1,800 s."""
    return Bucket(f"instance {what} burst", (maximum - baseline) * 1800.0, baseline, maximum,
                  "the bucket is not published: assumed (maximum - baseline) x 1,800 s (30 minutes at the "
                  "maximum), full at the start")


def replay(bucket: Bucket, intervals: Sequence[tuple[float, float]]) -> dict[str, Any]:
    """Replay (seconds, demand per second) intervals through `bucket`: the lowest balance, the intervals
    throttled (demand not served in full at some point of the interval), the worst shortfall (per second) and
    when the bucket first ran dry (seconds from the start). Within an interval demand is taken as steady:
    an interval longer than the burst window hides shorter bursts (said in the result)."""
    bal = bucket.capacity if bucket.start is None else bucket.start
    low, t, throttled, worst = bal, 0.0, 0, 0.0
    dry_at: float | None = None
    points: list[tuple[float, float]] = []
    for secs, demand in intervals:
        if secs <= 0:
            continue
        over = demand - bucket.baseline
        short = max(0.0, demand - bucket.ceiling)
        if over <= 0:
            bal = min(bucket.capacity, bal - over * secs)
        else:
            spend = min(demand, bucket.ceiling) - bucket.baseline
            if spend > 0 and bal >= spend * secs:
                bal -= spend * secs
            elif spend > 0:
                lasts = bal / spend
                if dry_at is None:
                    dry_at = t + lasts
                bal = 0.0
                short = max(short, demand - bucket.baseline)
        if short > 1e-9:
            throttled += 1
            worst = max(worst, short)
        low = min(low, bal)
        t += secs
        points.append((t, bal))
    return {"bucket": bucket.name, "capacity": bucket.capacity, "min_balance": low,
            "throttled_intervals": throttled, "worst_shortfall": worst, "dry_after_s": dry_at,
            "assumption": bucket.assumption, "balance_points": points}
