"""Shared arrays as an architect buys them: a controller pair with its own ceiling, and drives behind it.

Pure: the shipped `arrays.toml` (or any text in its format) in, immutable arrays and figures out.

One array (`Array`) is a design of its own in `plan size`. For n drives behind the controller pair,
with a drive of raw capacity g, usable fraction u (RAID/erasure parity, spares, metadata, formatting)
and an assumed data reduction d (`Terms.data_reduction`, 1.0:1 unless said):

    usable capacity  n x g x u x d
    shelves          ceil(n / drives_per_shelf)      (the first is the controller chassis's own bays)
    price            controllers + shelves x shelf price + n x drive price
    watts            controllers + shelves x shelf watts + n x (idle + (active - idle) x utilisation)

Performance is the least of what the drives deliver after the protection's write cost and the
controller pair's ceiling; it grows with drives only up to that ceiling, never with terabytes beyond it.
Every figure comes from resources that each spend a share of a second per host I/O (as in
`dbtier.model.plan.array`); at read fraction r the array sustains 1 / max(r x read + (1 - r) x write):

    drives, IOPS       read 1 / (n R)                     write (write_reads / R + write_writes / W) / n
    drives, MB/s       read s / (n Sr)                    write s / (n Sw)       s = (data + parity) / data
    controller IOPS    read 1 / C                         write 1 / C
    controller MB/s    read 1 / Cr                        write 1 / Cw

(R, W, Sr, Sw: one drive's random IOPS and MB/s; C the pair's IOPS at its stated block size, taken as
the ceiling for a database's smaller pages too, a conservative reading; Cr, Cw its read and write MB/s.)
Latency is the controller pair's (writes are acknowledged from its mirrored NVRAM).

The smallest drive count meeting a requirement of R*, W* IOPS, Mr*, Mw* MB/s and G* GB (targets with
headroom) has a closed form: each resource's load is (reads x read + writes x write) and the drives'
load falls as 1/n, so

    n = max(min_drives, ceil(G* / (g u d)), ceil(R*/R + W* (write_reads/R + write_writes/W)),
            ceil(s (Mr*/Sr + Mw*/Sw)))

and the design is feasible when n <= max_drives and the controller pair's loads R*/C + W*/C and
Mr*/Cr + Mw*/Cw are at most 1. `sized_on` names what set n (capacity, drives, minimum drives);
`limit` names the tightest limit at the requirement: the resource (or the capacity) with the highest
load of controller IOPS, controller MB/s, drives and capacity.

In the planner an array is one `ArrayConfig`: a `Config` of n drives (the device is the array's drive
as the array presents it: its usable share of capacity) with the controller pair and the shelves as
overhead units, so prices, power and the candidate contract are those of any design.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field, fields
from functools import lru_cache
from importlib import resources
from typing import Any, Sequence

from dbtier.core.errors import DbtierError
from dbtier.model.plan.array import EPS, Config, Resource
from dbtier.model.plan.catalog import Device, Overhead

FAMILIES = ("all-flash", "hybrid")
MIN_DATA_REDUCTION, MAX_DATA_REDUCTION = 1.0, 10.0
ARRAYS_FILE = "arrays.toml"


def check_data_reduction(x: float) -> float:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) \
            or not MIN_DATA_REDUCTION <= x <= MAX_DATA_REDUCTION:
        raise DbtierError(f"--data-reduction (a shared array's deduplication and compression, x:1) must be a "
                          f"ratio from {MIN_DATA_REDUCTION:g} to {MAX_DATA_REDUCTION:g}, got {x!r}",
                          "e.g. 1.0 (none assumed, the default) or 2.0 for 2:1; encrypted or already compressed "
                          "data reduces little")
    return float(x)


# -- the data --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Controllers:
    price_usd: float
    support_years: float
    iops: float
    iops_block_kib: float
    read_mbps: float
    write_mbps: float
    read_latency_us: float
    write_latency_us: float
    watts: float
    rack_units: float
    source: str


@dataclass(frozen=True)
class Drives:
    drive_class: str
    capacity_gb: float
    price_usd: float
    price_basis: str
    read_iops: float
    write_iops: float
    read_mbps: float
    write_mbps: float
    active_watts: float
    idle_watts: float
    source: str


@dataclass(frozen=True)
class Shelves:
    drives_per_shelf: int
    price_usd: float
    watts: float
    rack_units: float
    min_drives: int
    max_drives: int
    source: str


@dataclass(frozen=True)
class Protection:
    scheme: str
    usable_fraction: float
    write_reads: float
    write_writes: float
    stripe_data: int
    stripe_parity: int
    source: str

    @property
    def stripe_factor(self) -> float:
        """MB moved per MB of data in a full stripe: (data + parity) / data."""
        return (self.stripe_data + self.stripe_parity) / self.stripe_data


@dataclass(frozen=True)
class Array:
    id: str
    name: str
    family: str
    interface: str
    controllers: Controllers
    drives: Drives
    shelves: Shelves
    protection: Protection
    origin: str = ""

    def usable_gb_per_drive(self, data_reduction: float = 1.0) -> float:
        return self.drives.capacity_gb * self.protection.usable_fraction * data_reduction

    def shelf_count(self, n: int) -> int:
        return math.ceil(n / self.shelves.drives_per_shelf)

    def price_usd(self, n: int) -> float:
        """Controllers + shelves + drives."""
        return self.controllers.price_usd + self.shelf_count(n) * self.shelves.price_usd + n * self.drives.price_usd

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "family": self.family, "interface": self.interface,
                "controllers": vars(self.controllers), "drives": vars(self.drives), "shelves": vars(self.shelves),
                "protection": vars(self.protection), "origin": self.origin}


_PARTS = {"controllers": Controllers, "drives": Drives, "shelves": Shelves, "protection": Protection}
_TOP = {"id", "name", "family", "interface", *_PARTS}
_WHOLE = {"drives_per_shelf", "min_drives", "max_drives", "stripe_data", "stripe_parity"}
_MAY_BE_ZERO = {"write_reads"}


def parse_arrays(text: str, origin: str) -> list[Array]:
    """Validate an arrays file: every field known and present, numbers finite and positive, counts whole."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise DbtierError(f"{origin}: not valid TOML: {exc}", "fix the syntax at that line") from exc
    if set(data) - {"array"} or not isinstance(data.get("array"), list) or not data["array"]:
        raise DbtierError(f"{origin}: an arrays file holds [[array]] tables only",
                          "see the shipped dbtier/catalog/arrays.toml")
    out: list[Array] = []
    for i, e in enumerate(data["array"], 1):
        where = f"{origin}: array #{i} ({e.get('id', 'no id')!s})"
        unknown = set(e) - _TOP
        missing = _TOP - set(e)
        if unknown or missing:
            raise DbtierError(f"{where}: " + (f"unknown field '{sorted(unknown)[0]}'" if unknown
                                              else f"missing '{sorted(missing)[0]}'"),
                              f"an [[array]] has {', '.join(sorted(_TOP))}")
        for k in ("id", "name", "family", "interface"):
            if not isinstance(e[k], str) or not e[k].strip():
                raise DbtierError(f"{where}: '{k}' must be a non-empty string", f'e.g. {k} = "..."')
        if e["family"] not in FAMILIES:
            raise DbtierError(f"{where}: family '{e['family']}' is not one of {', '.join(FAMILIES)}",
                              "all-flash or hybrid")
        parts = {name: _part(cls, e[name], f"{where}: [array.{name}]") for name, cls in _PARTS.items()}
        a = Array(e["id"], e["name"], e["family"], e["interface"], origin=origin, **parts)
        sh, p = a.shelves, a.protection
        if not (1 <= sh.min_drives <= sh.max_drives):
            raise DbtierError(f"{where}: min_drives {sh.min_drives} must be from 1 to max_drives {sh.max_drives}",
                              "give the smallest and largest drive counts the array builds")
        if not 0 < p.usable_fraction <= 1:
            raise DbtierError(f"{where}: usable_fraction must be above 0 and at most 1, got {p.usable_fraction}",
                              "usable / raw capacity after parity, spares and metadata, e.g. 0.7")
        if p.write_writes < 1:
            raise DbtierError(f"{where}: write_writes must be at least 1 (a host write lands on a drive at least "
                              f"once), got {p.write_writes}", "e.g. 1.5 for full-stripe writes, 3 for RAID 6")
        if any(x.id == a.id for x in out):
            raise DbtierError(f"{where}: duplicate id '{a.id}'", "ids must be unique")
        out.append(a)
    return out


def _part(cls: type, value: Any, where: str) -> Any:
    if not isinstance(value, dict):
        raise DbtierError(f"{where} must be a table", "write it as [array.NAME] under its [[array]]")
    names = [f.name for f in fields(cls)]
    extra, missing = set(value) - set(names), set(names) - set(value)
    if extra or missing:
        raise DbtierError(f"{where}: " + (f"unknown field '{sorted(extra)[0]}'" if extra
                                          else f"missing '{sorted(missing)[0]}'"), f"fields: {', '.join(names)}")
    for k in names:
        v = value[k]
        if _is_text(cls, k):
            if not isinstance(v, str) or not v.strip():
                raise DbtierError(f"{where}: '{k}' must be a non-empty string", "say where the figures come from")
            continue
        whole = k in _WHOLE
        if isinstance(v, bool) or not isinstance(v, int if whole else (int, float)) or not math.isfinite(v) \
                or v < 0 or (v == 0 and k not in _MAY_BE_ZERO) or v > 1e9:
            raise DbtierError(f"{where}: '{k}' must be a {'whole ' if whole else ''}positive number, got {v!r}",
                              "give the figure from its source (units: GB, US dollars, IOPS, MB/s, µs, W, U)")
    return cls(**value)


def _is_text(cls: type, name: str) -> bool:
    return next(f for f in fields(cls) if f.name == name).type in ("str", str)


@lru_cache(maxsize=1)
def shipped_arrays() -> tuple[Array, ...]:
    """The arrays shipped with the catalog (dbtier/catalog/arrays.toml)."""
    text = (resources.files("dbtier.catalog") / ARRAYS_FILE).read_text(encoding="utf-8")
    return tuple(parse_arrays(text, f"shipped:{ARRAYS_FILE}"))


# -- the model ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Targets:
    """What the array must do (with headroom): IOPS, MB/s and GB; 0 where not asked."""
    read_iops: float = 0.0
    write_iops: float = 0.0
    read_mbps: float = 0.0
    write_mbps: float = 0.0
    capacity_gb: float = 0.0


def iops_resources(a: Array, n: int) -> list[Resource]:
    d, p, c = a.drives, a.protection, a.controllers
    how = (f"{p.write_reads:g} reads + {p.write_writes:g} writes per host write" if p.write_reads
           else f"{p.write_writes:g} drive writes per host write")
    return [Resource("drives", f"{n} x {d.drive_class}: {n} x {d.read_iops:,.0f} read / {d.write_iops:,.0f} write "
                               f"IOPS, {how} ({p.scheme})",
                     1 / (n * d.read_iops), (p.write_reads / d.read_iops + p.write_writes / d.write_iops) / n),
            Resource("controller IOPS", f"{a.id} controller pair: {c.iops:,.0f} IOPS at {c.iops_block_kib:g} KiB",
                     1 / c.iops, 1 / c.iops)]


def mbps_resources(a: Array, n: int) -> list[Resource]:
    d, p, c = a.drives, a.protection, a.controllers
    s = p.stripe_factor
    return [Resource("drives", f"{n} x {d.drive_class}: {d.read_mbps:,.0f} / {d.write_mbps:,.0f} MB/s each, "
                               f"{p.stripe_parity} of every {p.stripe_data + p.stripe_parity} strips parity",
                     s / (n * d.read_mbps), s / (n * d.write_mbps)),
            Resource("controller MB/s", f"{a.id} controller pair: {c.read_mbps:,.0f} MB/s read, "
                                        f"{c.write_mbps:,.0f} MB/s write", 1 / c.read_mbps, 1 / c.write_mbps)]


def drives_needed(a: Array, t: Targets, data_reduction: float = 1.0) -> dict[str, float]:
    """Drives each part of the requirement needs on its own (fractional), before the array's minimum."""
    d, p = a.drives, a.protection
    return {"capacity": t.capacity_gb / a.usable_gb_per_drive(data_reduction),
            "drives (IOPS)": (t.read_iops / d.read_iops
                              + t.write_iops * (p.write_reads / d.read_iops + p.write_writes / d.write_iops)),
            "drives (MB/s)": p.stripe_factor * (t.read_mbps / d.read_mbps + t.write_mbps / d.write_mbps)}


def _up(x: float) -> int:
    """ceil, forgiving float noise (4 x 250 IOPS meets 1,000)."""
    return max(0, math.ceil(x * (1 - EPS)))


@dataclass(frozen=True)
class ArraySizing:
    """One array sized for one requirement, or why it cannot be (`drives` None)."""
    array: Array
    drives: int | None
    sized_on: str                 # capacity | drives | minimum drives | controller IOPS | controller MB/s | max drives
    detail: str
    data_reduction: float
    loads: dict[str, float] = field(default_factory=dict)

    @property
    def limit(self) -> str:
        """The tightest limit at the requirement: the highest load of the controller, the drives, the capacity."""
        return tightest(self.loads) if self.loads else self.sized_on


def size_array(a: Array, t: Targets, data_reduction: float = 1.0, max_drives: int | None = None) -> ArraySizing:
    """The smallest drive count meeting `t`, what set it, and the loads at it (the module docstring's closed form)."""
    check_data_reduction(data_reduction)
    c = a.controllers
    top = a.shelves.max_drives if max_drives is None else min(max_drives, a.shelves.max_drives)
    note = data_reduction_note(data_reduction)
    ctrl_iops = (t.read_iops + t.write_iops) / c.iops
    ctrl_mb = t.read_mbps / c.read_mbps + t.write_mbps / c.write_mbps
    if ctrl_iops > 1 + EPS:
        return ArraySizing(a, None, "controller IOPS", f"{a.id}: the controller pair's {c.iops:,.0f} IOPS ceiling is "
                      f"below the {t.read_iops + t.write_iops:,.0f} IOPS required", data_reduction)
    if ctrl_mb > 1 + EPS:
        return ArraySizing(a, None, "controller MB/s", f"{a.id}: the controller pair's {c.read_mbps:,.0f} MB/s read / "
                      f"{c.write_mbps:,.0f} MB/s write ceiling is below the MB/s required", data_reduction)
    need = drives_needed(a, t, data_reduction)
    counts = {"minimum drives": a.shelves.min_drives, "capacity": _up(need["capacity"]),
              "drives": max(_up(need["drives (IOPS)"]), _up(need["drives (MB/s)"]))}
    n = max(counts.values())
    on = next(k for k in ("capacity", "drives", "minimum drives") if counts[k] == n)
    if n > top:
        return ArraySizing(a, None, "max drives", f"{a.id} needs {n} drives ({on}), more than the {top} it takes",
                      data_reduction)
    loads = loads_at(a, n, t, data_reduction)
    why = {"capacity": f"{n} drives hold {n * a.usable_gb_per_drive(data_reduction):,.0f} GB usable "
                       f"({a.protection.usable_fraction:.0%} of {a.drives.capacity_gb:,.0f} GB each)",
           "drives": f"{n} drives carry the I/O after the {a.protection.scheme} write cost",
           "minimum drives": f"{n} drives, the fewest the array builds ({a.protection.scheme})"}[on]
    return ArraySizing(a, n, on, f"{why}; {note}", data_reduction, loads)


def data_reduction_note(data_reduction: float) -> str:
    return f"capacity assumes {data_reduction:.1f}:1 data reduction"


def loads_at(a: Array, n: int, t: Targets, data_reduction: float = 1.0) -> dict[str, float]:
    """Each limit's load at the requirement with n drives (1 = fully used): controller IOPS and MB/s, drives,
    capacity."""
    c = a.controllers
    need = drives_needed(a, t, data_reduction)
    return {"controller IOPS": (t.read_iops + t.write_iops) / c.iops,
            "controller MB/s": t.read_mbps / c.read_mbps + t.write_mbps / c.write_mbps,
            "drives": max(need["drives (IOPS)"], need["drives (MB/s)"]) / n, "capacity": need["capacity"] / n}


def tightest(loads: dict[str, float]) -> str:
    """The limit with the highest load (on a tie, the first of controller IOPS, controller MB/s, drives, capacity)."""
    order = list(loads)
    return max(order, key=lambda k: (loads[k], -order.index(k)))


def design(a: Array, n: int, t: Targets, data_reduction: float = 1.0) -> dict[str, Any]:
    """The `array` object of a candidate of n drives: its parts and prices, what set the drive count, what binds."""
    s = size_array(a, t, data_reduction)
    shelves = a.shelf_count(n)
    loads = loads_at(a, n, t, data_reduction)
    return {"id": a.id, "family": a.family, "drives": n, "drive_class": a.drives.drive_class, "shelves": shelves,
            "price_usd": a.price_usd(n), "controllers_usd": a.controllers.price_usd,
            "shelves_usd": shelves * a.shelves.price_usd, "drives_usd": n * a.drives.price_usd,
            "support_years": a.controllers.support_years, "drive_price_basis": a.drives.price_basis,
            "protection": a.protection.scheme, "usable_fraction": a.protection.usable_fraction,
            "usable_gb": n * a.usable_gb_per_drive(), "data_reduction": data_reduction,
            "sized_on": s.sized_on if s.drives == n else "given", "limit": tightest(loads), "loads": loads,
            "detail": s.detail, "note": data_reduction_note(data_reduction), "origin": a.origin}


# -- in the planner ----------------------------------------------------------------------------------------

def array_device(a: Array, data_reduction: float = 1.0) -> Device:
    """One drive as the array presents it: its usable share of capacity (x data reduction), its price and power;
    the latency is the controller pair's. Self-redundant, protected and reached by every cluster node."""
    d, c = a.drives, a.controllers
    return Device(id=a.id, name=a.name, kind="shared-array", interface=a.interface,
                  capacity_gb=a.usable_gb_per_drive(data_reduction), price_usd=d.price_usd,
                  read_iops=d.read_iops, write_iops=d.write_iops, read_mbps=d.read_mbps, write_mbps=d.write_mbps,
                  read_latency_us=c.read_latency_us, write_latency_us=c.write_latency_us,
                  source=f"{a.origin}: {a.id} (drives: {d.source}; controllers: {c.source})",
                  notes=f"one drive of {a.id}: {d.drive_class}, {a.protection.usable_fraction:.0%} usable; "
                        + data_reduction_note(data_reduction),
                  warranty_years=c.support_years, power_loss_protection=True, active_watts=d.active_watts,
                  idle_watts=d.idle_watts, shared_access=True, origin=a.origin,
                  device_class="shared-array", grade="datacenter")


def array_overheads(a: Array) -> tuple[Overhead, Overhead]:
    """The controller pair (one per array: per max_drives) and the shelves (per drives_per_shelf)."""
    c, sh = a.controllers, a.shelves
    return (Overhead(id=f"{a.id}-controllers", name=f"{a.id}: dual controllers with {c.support_years:g} years of "
                     "support", price_usd=c.price_usd, per_devices=sh.max_drives, max_mbps=c.read_mbps,
                     applies_to=(a.id,), source=c.source, watts=c.watts, rack_units=c.rack_units, max_iops=c.iops,
                     origin=a.origin),
            Overhead(id=f"{a.id}-shelf", name=f"{a.id}: drive shelf of {sh.drives_per_shelf} bays",
                     price_usd=sh.price_usd, per_devices=sh.drives_per_shelf, max_mbps=c.read_mbps,
                     applies_to=(a.id,), source=sh.source, watts=sh.watts, rack_units=sh.rack_units,
                     origin=a.origin))


@dataclass(frozen=True)
class ArrayConfig(Config):
    """n drives of one shared array behind its controller pair: `Config` with the array's own resources."""
    array: Array | None = None
    data_reduction: float = 1.0

    def iops_resources(self) -> list[Resource]:
        assert self.array is not None
        return iops_resources(self.array, self.count)

    def mbps_resources(self) -> list[Resource]:
        assert self.array is not None
        return mbps_resources(self.array, self.count)

    def describe(self) -> str:
        a = self.array
        assert a is not None
        k = a.shelf_count(self.count)
        return (f"{self.count} x {a.id} drives ({a.drives.capacity_gb / 1000:g} TB) behind its controller pair, "
                f"{k} shel{'f' if k == 1 else 'ves'}")


def array_config(a: Array, n: int, data_reduction: float = 1.0, devices_only: bool = False,
                 device: Device | None = None) -> ArrayConfig:
    return ArrayConfig(device or array_device(a, data_reduction), n, "jbod", array_overheads(a),
                       devices_only=devices_only, array=a, data_reduction=data_reduction)


def targets(read_iops: float, write_iops: float, read_mbps: float, write_mbps: float, capacity_gb: float,
            weights: Sequence[float] = (1, 1, 1, 1)) -> Targets:
    wr, ww, wmr, wmw = weights
    return Targets(read_iops * wr, write_iops * ww, read_mbps * wmr, write_mbps * wmw, capacity_gb)
