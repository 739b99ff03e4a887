"""The search behind `plan size`: every design (device x layout, and the mixed designs) and, per design,
the smallest count of each device set that meets a requirement.

Pure. The counts come from `smallest_count`, a binary search over a layout's valid counts of a
monotone test (more devices never offer less); the test is the array model's `fits` for the rates,
the capacity, and (when the service life is checked) the endurance of every device of the set.
A shared array (`dbtier.model.plan.shared_array`: a controller pair and drives behind it) is one design of its
own: its drive count comes from that module's closed form, and it joins no mixed design.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Collection, Mapping, Sequence

from dbtier.core.errors import DbtierError
from dbtier.model.plan.array import (DEFAULT_BACKING_LAYOUT, EPS, MIXED_LAYOUTS, REDUNDANT_LAYOUTS, SELF_REDUNDANT_KINDS,
                                Config, DeviceSet, check_layout, count_step, fits, min_count, valid_counts_from)
from dbtier.model.plan.catalog import FLASH_KINDS, Catalog, Device, Overhead
from dbtier.model.plan.requirement import Requirement
from dbtier.model.plan.shared_array import Array, ArrayConfig, array_overheads, size_array, targets

DEFAULT_MAX_DEVICES = 1024
DEFAULT_CACHE_FRACTION = 0.1

# A cloud volume is replicated by its provider, so a parity or mirror layout over cloud volumes buys copies
# of copies: on these kinds only a stripe is built (jbod/raid0, and raid0 as a read cache's backing set),
# never a preferred-read mirror. `plan size` leaves them out unless named with --devices; the provider
# model (`plan size --cloud PROVIDER`) is where cloud volumes are sized in full.
STRIPE_ONLY_KINDS = ("cloud-volume",)
STRIPE_LAYOUTS = ("jbod", "raid0")


def check_stripe_only(device: Device, layout: str, second: Device | None = None,
                      second_layout: str | None = None) -> None:
    """A clear error for a parity or mirror layout over a cloud volume (see STRIPE_ONLY_KINDS)."""
    if layout == "preferred-read-mirror":
        bad = next((d for d in (device, second) if d is not None and d.kind in STRIPE_ONLY_KINDS), None)
    elif layout == "read-cache":
        bad = (second if second is not None and second.kind in STRIPE_ONLY_KINDS
               and (second_layout or DEFAULT_BACKING_LAYOUT) not in STRIPE_LAYOUTS else None)
    else:
        bad = device if device.kind in STRIPE_ONLY_KINDS and layout not in STRIPE_LAYOUTS else None
    if bad is not None:
        asked = (second_layout or DEFAULT_BACKING_LAYOUT) if layout == "read-cache" else layout
        raise DbtierError(f"{bad.id} is a {bad.kind}, which its provider already replicates: it is priced as a "
                          f"stripe only, not in {asked}",
                          "use the layout jbod or raid0 for it, or size cloud storage with "
                          "`dbtier plan size --cloud aws|azure|gcp`")


def fmt(x: float) -> str:
    if x == math.inf:
        return "unlimited"
    return f"{x:,.0f}" if abs(x) >= 100 or float(x).is_integer() else f"{x:,.2f}"


# The widest parity group a design is sized with. A wider RAID 5 or 6 set rebuilds a failed drive from
# every other one, for longer, with more exposure to a second failure (RAID 5) or an unrecoverable read;
# storage vendors' guidance keeps RAID 5 groups to about 8-12 drives and RAID 6 to about 12-16 (a
# practice rule, not a single sourced figure). Without it a wide set of small drives wins on parity
# alone (42 x 1.92 TB in one RAID 5 for 60 TB) where an architect buys fewer, larger drives. Terms'
# wide_parity_groups (--wide-parity-groups) lifts it: RAID-Z, declustered RAID, a vendor who says so.
PARITY_GROUP_MAX = {"raid5": 12, "raid6": 16}


def smallest_count(layout: str, ok: Callable[[int], bool], max_count: int) -> int | None:
    """The smallest valid count of `layout` (<= max_count) for which ok(count) holds; ok must be monotone."""
    lo = valid_counts_from(layout)
    if lo > max_count:
        return None
    step = count_step(layout)
    k_hi = (max_count - lo) // step
    if not ok(lo + k_hi * step):
        return None
    k_lo = 0
    if ok(lo):
        return lo
    # ok(lo + k_lo*step) is false, ok(lo + k_hi*step) is true
    while k_hi - k_lo > 1:
        mid = (k_lo + k_hi) // 2
        if ok(lo + mid * step):
            k_hi = mid
        else:
            k_lo = mid
    return lo + k_hi * step



# -- sizing --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Shape:
    """A design without counts: device x layout, or the two devices (and backing layout) of a mixed layout."""
    device: Device
    layout: str
    second: Device | None = None
    second_layout: str | None = None

    @property
    def key(self) -> tuple[str, str, str | None, str | None]:
        return (self.device.id, self.layout, self.second.id if self.second else None, self.second_layout)


class Search:
    """Smallest counts per device set, memoised: many mixed designs share a side."""

    def __init__(self, catalog: Catalog, req: Requirement, hit_ratio: float, max_devices: int,
                 cache_fraction: float = 0.1, server_ports: int = 0, devices_only: bool = False,
                 lasts: Callable[[Device, str, int, str, tuple[float, float, float, float]], bool] | None = None,
                 arrays: Mapping[str, Array] | None = None, data_reduction: float = 1.0,
                 group_max: Mapping[str, int] | None = None):
        self.catalog, self.req, self.h, self.max = catalog, req, hit_ratio, max_devices
        # shared arrays by the id of their device (`shared_array.array_device`), and the data reduction assumed
        self.arrays: dict[str, Array] = dict(arrays or {})
        self.data_reduction = data_reduction
        self.group_max = PARITY_GROUP_MAX if group_max is None else group_max
        self.cache_fraction = cache_fraction
        self.server_ports, self.devices_only = server_ports, devices_only
        # lasts(device, layout, n, role, weights): does every device of the set last the service life?
        # (None: wear is not a constraint, e.g. worn devices are replaced and priced)
        self.lasts = lasts
        self._ovs: dict[str, tuple[Overhead, ...]] = {}
        self._memo: dict[tuple[Any, ...], int | None] = {}

    def ovs(self, d: Device) -> tuple[Overhead, ...]:
        if d.id not in self._ovs:
            a = self.arrays.get(d.id)
            self._ovs[d.id] = array_overheads(a) if a is not None else tuple(self.catalog.overheads_for(d))
        return self._ovs[d.id]

    def needs_ports(self, d: Device) -> bool:
        return any(o.after_server_ports for o in self.ovs(d))

    def ports(self, first: Device, second: Device | None = None) -> tuple[int, int]:
        """The server's ports for each set, as `Config.sets` gives them: the first set that attaches to ports."""
        a = self.server_ports if self.needs_ports(first) else 0
        b = self.server_ports if second is not None and not a and self.needs_ports(second) else 0
        return a, b

    def _config(self, d: Device, n: int, layout: str, second: Device | None = None, m: int = 0,
                second_layout: str | None = None, h: float | None = None) -> Config:
        a = self.arrays.get(d.id)
        if a is not None and second is None:
            return ArrayConfig(d, n, layout, self.ovs(d), server_ports=self.server_ports,
                               devices_only=self.devices_only, array=a, data_reduction=self.data_reduction)
        return Config(d, n, layout, self.ovs(d), second, m, second_layout,
                      self.ovs(second) if second is not None else (), h, self.server_ports, self.devices_only)

    def set_count(self, d: Device, layout: str, role: str, weights: tuple[float, float, float, float],
                  holds_data: bool, req: Requirement, min_capacity_gb: float = 0.0, ports: int = 0) -> int | None:
        key = (d, layout, role, weights, holds_data, req, min_capacity_gb, ports)
        if key in self._memo:
            return self._memo[key]
        R, W = req.target("read_iops"), req.target("write_iops")
        Mr, Mw = req.target("read_mbps"), req.target("write_mbps")
        G = req.target("capacity_gb") if holds_data else min_capacity_gb
        a = self.arrays.get(d.id)
        if a is not None:     # the array's closed form; it manages its own wear
            n0 = size_array(a, targets(R, W, Mr, Mw, G, weights), self.data_reduction, self.max).drives
            self._memo[key] = n0
            return n0
        ovs = self.ovs(d)
        wr, ww, wmr, wmw = weights
        need_iops, need_mb = R * wr + W * ww > 0, Mr * wmr + Mw * wmw > 0

        lasts = self.lasts

        def ok(n: int) -> bool:
            if lasts is not None and not lasts(d, layout, n, role, weights):
                return False
            s = DeviceSet(d, n, layout, ovs, role, ports, self.devices_only)
            if G and s.capacity_gb < G * (1 - EPS):
                return False
            if need_iops and not fits(s.iops_resources(wr, ww), R, W):
                return False
            if need_mb and not fits(s.mbps_resources(wmr, wmw), Mr, Mw):
                return False
            return True

        n = smallest_count(layout, ok, min(self.max, self.group_max.get(layout, self.max)))
        self._memo[key] = n
        return n

    def config(self, shape: Shape, req: Requirement | None = None) -> Config | None:
        """The cheapest configuration of this shape meeting `req`'s count-dependent parts (latency aside)."""
        req = req or self.req
        d = shape.device
        if shape.layout == "preferred-read-mirror":
            assert shape.second is not None
            pa, pb = self.ports(d, shape.second)
            a = self.set_count(d, "raid0", "fast side", (1, 1, 1, 1), True, req, ports=pa)
            b = self.set_count(shape.second, "raid0", "slow side", (0, 1, 0, 1), True, req, ports=pb)
            if a is None or b is None:
                return None
            return self._config(d, a, shape.layout, shape.second, b)
        if shape.layout == "read-cache":
            assert shape.second is not None and shape.second_layout is not None
            h = self.h
            pa, pb = self.ports(d, shape.second)
            b = self.set_count(shape.second, shape.second_layout, "backing set", (1 - h, 1, 1, 1), True, req,
                               ports=pb)
            if b is None:
                return None
            # the hit ratio presumes the hot set fits: the cache holds cache_fraction of the backing set
            hot = self.cache_fraction * DeviceSet(shape.second, b, shape.second_layout).capacity_gb
            a = self.set_count(d, "raid0", "cache set", (h, 0, 0, 0), False, req, hot, ports=pa)
            if a is None:
                return None
            return self._config(d, a, shape.layout, shape.second, b, shape.second_layout, h)
        n = self.set_count(d, shape.layout, "", (1, 1, 1, 1), True, req, ports=self.ports(d)[0])
        if n is None:
            return None
        return self._config(d, n, shape.layout)

    def largest(self, shape: Shape) -> Config:
        """The shape at the most devices allowed (for "the best reachable figure")."""
        top = self.max
        d = shape.device
        if shape.layout in MIXED_LAYOUTS:
            assert shape.second is not None
            sl = shape.second_layout
            m = top if sl != "raid10" else top - top % 2
            return self._config(d, top, shape.layout, shape.second, m, sl,
                                self.h if shape.layout == "read-cache" else None)
        a = self.arrays.get(d.id)
        if a is not None:
            return self._config(d, max(1, min(top, a.shelves.max_drives)), shape.layout)
        n = top if shape.layout != "raid10" else top - top % 2
        return self._config(d, max(n, min_count(shape.layout)), shape.layout)


def shapes(devices: Sequence[Device], layouts: Sequence[str], redundancy: str,
           arrays: Collection[str] = ()) -> list[Shape]:
    """Every design to try. jbod and raid0 are one design (listed as raid0 when both are asked for).
    A device of a STRIPE_ONLY_KINDS kind gets stripes only. A shared array (its id in `arrays`) is one design,
    jbod (the array protects its drives itself, whatever the layouts asked), and joins no mixed design."""
    for lay in layouts:
        check_layout(lay)
    if redundancy not in ("required", "none"):
        raise DbtierError(f"--redundancy must be 'required' or 'none', got '{redundancy}'",
                          "required keeps only layouts that survive a device failure")
    wanted = list(dict.fromkeys(layouts))
    if "jbod" in wanted and "raid0" in wanted:
        wanted.remove("jbod")
    need = redundancy == "required"
    out: list[Shape] = [Shape(d, "jbod") for d in devices if d.id in arrays]
    devices = [d for d in devices if d.id not in arrays]
    for d in devices:
        for lay in wanted:
            if lay in MIXED_LAYOUTS:
                continue
            if need and lay not in REDUNDANT_LAYOUTS and d.kind not in SELF_REDUNDANT_KINDS:
                continue
            if d.kind in STRIPE_ONLY_KINDS and lay not in STRIPE_LAYOUTS:
                continue
            out.append(Shape(d, lay))
    for fast in devices:
        if fast.kind not in FLASH_KINDS:
            continue
        for slow in devices:
            if slow.id == fast.id or slow.read_iops >= fast.read_iops or \
                    slow.price_usd / slow.capacity_gb >= fast.price_usd / fast.capacity_gb:
                continue
            stripe_only = slow.kind in STRIPE_ONLY_KINDS
            if "preferred-read-mirror" in wanted and not stripe_only:
                out.append(Shape(fast, "preferred-read-mirror", slow))
            if "read-cache" in wanted:
                for bl in ("raid0", "raid10", "raid5", "raid6"):
                    if need and bl not in REDUNDANT_LAYOUTS and slow.kind not in SELF_REDUNDANT_KINDS:
                        continue
                    if stripe_only and bl not in STRIPE_LAYOUTS:
                        continue
                    out.append(Shape(fast, "read-cache", slow, bl))
    return out


