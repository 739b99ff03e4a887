"""Device arrays: what a configuration of catalog devices delivers and costs, and what limits each figure.

Pure: catalog objects in, immutable figures out. No I/O, no subprocess.

A configuration is a catalog device x count x layout plus the overhead units it
needs: ceil(count / per_devices) of each overhead `Catalog.overheads_for`
returns, each unit costing `price_usd` and passing at most `max_mbps`. The two
mixed layouts add a second device set (`preferred-read-mirror`: the slow side;
`read-cache`: the backing set) with its own overhead units: the sides of a
mirror share no controller (surviving the loss of one side is the point), and a
cache in front of existing storage has its own.

The server's own drive ports. A server already has P SAS/SATA ports with bays
(`server_ports`: the catalog's `[server] drive_ports`, 8 shipped, or
`--server-ports`). An overhead that supplies drive ports (`after_server_ports`:
an HBA and its enclosure share) is bought only for the devices beyond them:
    units = ceil(max(0, n - P) / per_devices)
so one SATA SSD on a motherboard port costs the SSD alone, and 24 SAS disks on
a server with 8 ports pay for ceil(16 / 16) = 1 HBA unit. Devices whose
overheads supply no ports (PCIe cards take a slot, NVMe drives a bay, cloud
volumes nothing) never use the server's drive ports, and overheads without
`after_server_ports` are bought for every device, as before. The server's own
controller is taken to be of the class of the overhead it stands in for: for
the MB/s ceiling it counts as one more unit whenever it serves a device
(ceiling = (units + 1) x max_mbps; as for any units, the devices are taken to
be spread evenly over the controllers). In a mixed layout the server's ports serve
the first set that needs ports (the fast side or the cache set, else the other
one); the other set buys its own, as the sides share no controller.

Pricing is "devices and overheads" (the default: devices plus the overhead
units bought) or "devices only" (`devices_only`: the devices' own prices, as
studies that price "the I/O system" by its drives do; the overheads' MB/s
ceilings still apply, since the hardware is still there, only unpriced).
`Config.pricing()` says which was used; every result carries it.

Units: GB = 10**9 bytes, MB/s with MB = 10**6 bytes, latency in microseconds,
prices in US dollars. Device figures are the catalog's datasheet figures.

The model (what a storage architect does on paper, stated exactly so that tests
can check it on hand-worked numbers):

Per host I/O, each layout makes the devices do some work. For n devices with
random read/write IOPS R and W, sequential MB/s Sr and Sw, capacity C:

    layout        usable   host read   backend I/Os per     seq read   seq write   min n
                           served by   small host write                              (step)
    jbod, raid0   n C      1 of n      1 write              n Sr       n Sw        1
    raid1         C        1 of n      n writes (n-way)     n Sr       Sw          2
    raid10        n C / 2  1 of n      2 writes             n Sr       n Sw / 2    4 (even)
    raid5         (n-1) C  1 of n      2 reads + 2 writes   (n-1) Sr   (n-1) Sw    3
    raid6         (n-2) C  1 of n      3 reads + 3 writes   (n-2) Sr   (n-2) Sw    4
    mirror2       n C / 2  1 of n      2 writes             n Sr       n Sw / 2    2
    mirror3       n C / 3  1 of n      3 writes             n Sr       n Sw / 3    3

The "write penalty" is the number of backend I/Os per host write (1, n, 2, 4, 6,
2, 3). Random write IOPS are time-weighted over those backend I/Os:
    write_iops = n / (reads/R + writes/W)
so raid5 of 4 disks of 250/250 IOPS gives 4 / (2/250 + 2/250) = 250 (= n W / 4),
and a device whose reads and writes differ is charged each at its own rate.
Random reads go to one device (any mirror copy, any raid5/6 member): n R.

- jbod and raid0 are modelled alike: the load is spread over every device (a
  database's many files and concurrent sessions do that); `plan size` lists them
  once, as raid0.
- raid5/raid6 sequential writes are full-stripe writes (the controller gathers a
  stripe, so there is no read-modify-write): the parity strips take one (two)
  device's bandwidth, leaving (n-1) Sw ((n-2) Sw) of data. Sequential reads skip
  the parity strips, which costs the same share: (n-1) Sr ((n-2) Sr).
- mirror2 / mirror3 are Oracle ASM normal / high redundancy: every extent has 2
  (3) copies on different failure groups (one device per failure group here),
  reads go to the primary copy, spread over all devices. Unlike raid10 any count
  of at least 2 (3) works. The space ASM keeps free to re-mirror after a failure
  (REQUIRED_MIRROR_FREE_MB) is not subtracted.
- `preferred-read-mirror` (ASM preferred-read failure group, or any host mirror
  with a read preference): a fast set and a slow set, each a stripe of its
  devices and each holding a full copy. Usable = the smaller side. All reads go
  to the fast side; every write goes to both, so writes run at the slower
  side's rate. Sequential reads from the fast side, writes at the slower side.
- `read-cache` with hit ratio h: a cache set (a stripe of flash) in front of a
  backing set (any of the layouts above, raid10 by default). Usable = the
  backing set. A fraction h of random reads is served by the cache, the rest
  (misses) and every write by the backing set; filling the cache on a miss is
  not charged (flash absorbs it). The cache and the backing set work
  concurrently, so random read IOPS are the bottleneck law
      read_iops = min(cache_read_iops / h, backing_read_iops / (1 - h))
  (not the serial 1 / (h/cache + (1-h)/backing), which would make the devices
  wait for each other). Sequential reads bypass the cache (as flash caches do for
  scans: bcache's sequential cutoff, Oracle's Smart Flash Cache for full scans):
  sequential figures are the backing set's. h is an input: it assumes the cache
  holds the hot set; `simulate` is where hit ratios come from.

Controllers and buses (overheads): their `max_mbps` caps MB/s; an array controller
pair's `max_iops` (when given) caps IOPS too, a host I/O counted once. The
raid layouts are done by the controller, so host MB/s crosses the bus once;
mirror2/mirror3 are host-based (ASM), so each written MB crosses it once per
copy: a mirror2 array's write MB/s is at most units x max_mbps / 2.

Mixed load. Every figure comes from "resources" (the device set of each side,
each overhead's units): a resource spends `read` seconds per host read and
`write` seconds per host write, and can spend at most one second per second.
At read fraction r the array sustains
    iops(r) = 1 / max over resources of (r * read + (1 - r) * write)
For a single device set this is exactly the time-weighted
    1 / (r / read_iops + (1 - r) / write_iops);
for the two-set layouts each set carries only its share (the slow side only
writes, the cache only hits), and the first to saturate sets the figure. The
same holds for MB/s. The resource that saturates is the figure's `limit`:
"devices", "write penalty" (devices, where the layout's backend writes are what
runs out), "controller/bus" (naming the overhead), "fast side", "slow side",
"cache set" or "backing set".

Latency is a single I/O with nothing queued (the catalog's figure): a read takes
one device read; a mirrored write takes one write (the copies go in parallel);
a raid5/raid6 small write reads old data and parity, then writes: read + write
latency. preferred-read-mirror: reads at the fast side, writes at the slower of
the two. read-cache: reads h x cache + (1 - h) x backing (the mean), writes at
the backing set. Controllers add no latency.

Price: devices plus the overhead units bought (devices alone with
`devices_only`). $/GB is per usable GB; $/IOPS is per IOPS at
the configuration's read fraction; $/(MB/s) per MB/s at the same read fraction
(time-weighted the same way).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

from dbtier.core.errors import DbtierError
from dbtier.core.units import parse_int
from dbtier.model.plan.catalog import Catalog, Device, Overhead

LAYOUTS = ("jbod", "raid0", "raid1", "raid10", "raid5", "raid6", "mirror2", "mirror3",
           "preferred-read-mirror", "read-cache")
SET_LAYOUTS = LAYOUTS[:8]                  # one homogeneous device set
MIXED_LAYOUTS = ("preferred-read-mirror", "read-cache")
REDUNDANT_LAYOUTS = ("raid1", "raid10", "raid5", "raid6", "mirror2", "mirror3", "preferred-read-mirror")
# A cloud volume is replicated by its provider, and a shared array does its own RAID, so a stripe of
# either is already redundant.
SELF_REDUNDANT_KINDS = ("cloud-volume", "shared-array")

LAYOUT_HELP = {
    "jbod": "devices side by side, no redundancy (modelled like raid0)",
    "raid0": "striped, no redundancy",
    "raid1": "n-way mirror: usable 1x, reads nx, writes 1x",
    "raid10": "striped mirrors: usable n/2, write penalty 2 (even count, at least 4)",
    "raid5": "single parity: usable n-1, write penalty 4 (at least 3)",
    "raid6": "double parity: usable n-2, write penalty 6 (at least 4)",
    "mirror2": "ASM normal redundancy: 2 copies across failure groups (at least 2)",
    "mirror3": "ASM high redundancy: 3 copies across failure groups (at least 3)",
    "preferred-read-mirror": "fast set + slower set, each a full copy: reads from the fast side, writes to both",
    "read-cache": "cache set in front of a backing set with a read hit ratio; writes go to the backing set",
}

DEFAULT_READ_FRACTION = 0.5
DEFAULT_HIT_RATIO = 0.9
DEFAULT_BACKING_LAYOUT = "raid10"

# A tiny tolerance for "meets": 4 x 250 IOPS must meet 1,000 IOPS despite float rounding.
EPS = 1e-9

# The most devices a configuration string may name (far beyond any array; keeps prices finite and exact).
MAX_COUNT = 10_000_000

# The most drive ports a server can be said to have of its own (--server-ports and [server] drive_ports).
MAX_SERVER_PORTS = 10_000


# -- layouts ------------------------------------------------------------------------

@dataclass(frozen=True)
class Rule:
    """One homogeneous layout of n devices: the multipliers of the table in the module docstring."""
    data_devices: float       # usable capacity in devices
    backend_reads: int        # per small host write
    backend_writes: int       # per small host write
    seq_read_devices: float   # devices' worth of sequential read bandwidth
    seq_write_devices: float  # devices' worth of sequential write bandwidth (after copies/parity)
    bus_copies: int           # times a written MB crosses the controller/bus
    read_modify_write: bool   # a small write reads before it writes (latency read + write)

    @property
    def write_penalty(self) -> int:
        return self.backend_reads + self.backend_writes


def min_count(layout: str) -> int:
    return {"jbod": 1, "raid0": 1, "raid1": 2, "raid10": 4, "raid5": 3, "raid6": 4, "mirror2": 2,
            "mirror3": 3, "preferred-read-mirror": 1, "read-cache": 1}[layout]


def count_step(layout: str) -> int:
    return 2 if layout == "raid10" else 1


def valid_counts_from(layout: str, at_least: int = 1) -> int:
    """The smallest valid count of `layout` that is >= at_least."""
    n = max(min_count(layout), at_least)
    step = count_step(layout)
    if step > 1 and (n - min_count(layout)) % step:
        n += step - (n - min_count(layout)) % step
    return n


def rule(layout: str, n: int) -> Rule:
    if layout in ("jbod", "raid0"):
        return Rule(n, 0, 1, n, n, 1, False)
    if layout == "raid1":
        return Rule(1, 0, n, n, 1, 1, False)
    if layout == "raid10":
        return Rule(n / 2, 0, 2, n, n / 2, 1, False)
    if layout == "raid5":
        return Rule(n - 1, 2, 2, n - 1, n - 1, 1, True)
    if layout == "raid6":
        return Rule(n - 2, 3, 3, n - 2, n - 2, 1, True)
    if layout == "mirror2":
        return Rule(n / 2, 0, 2, n, n / 2, 2, False)
    if layout == "mirror3":
        return Rule(n / 3, 0, 3, n, n / 3, 3, False)
    raise ValueError(f"not a single-set layout: {layout}")


def check_count(layout: str, n: int, what: str = "") -> None:
    """A clear error when `layout` cannot be built from `n` devices."""
    where = f" ({what})" if what else ""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise DbtierError(f"device count{where} must be a whole number of at least 1, got {n}",
                          "e.g. sas-15k-73gb:16:raid10")
    need = min_count(layout)
    if n < need:
        raise DbtierError(f"{layout} needs at least {need} devices, got {n}{where}",
                          f"use {need} or more, or a layout for fewer devices ({LAYOUT_HELP[layout]})")
    if layout == "raid10" and n % 2:
        raise DbtierError(f"raid10 needs an even number of devices, got {n}{where}",
                          f"use {n - 1} or {n + 1}, or mirror2 (ASM normal redundancy), which takes any count")


def check_layout(layout: str, allowed: Sequence[str] = LAYOUTS) -> None:
    if layout not in allowed:
        raise DbtierError(f"unknown layout '{layout}' (known: {', '.join(allowed)})",
                          "choose one of the known layouts")


# -- figures --------------------------------------------------------------------------

@dataclass(frozen=True)
class Figure:
    """A figure and the component that limits it (`limit`, one of a few categories; `detail` names it)."""
    value: float
    limit: str
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "limit": self.limit, "detail": self.detail}


@dataclass(frozen=True)
class Resource:
    """Something that saturates: seconds of it spent per host read and per host write (I/O or MB)."""
    limit: str
    detail: str
    read: float
    write: float

    def load(self, reads: float, writes: float) -> float:
        """Fraction of a second used per second at `reads` and `writes` per second."""
        return reads * self.read + writes * self.write


def _peak(resources: Sequence[Resource], r: float) -> tuple[float, Resource]:
    """Operations per second at read fraction r, and the resource that saturates first."""
    worst = max(resources, key=lambda s: r * s.read + (1 - r) * s.write)
    demand = r * worst.read + (1 - r) * worst.write
    return (math.inf if demand <= 0 else 1.0 / demand), worst


def offered(resources: Sequence[Resource], reads: float = 0.0, writes: float = 0.0,
            side: str = "read") -> float:
    """The most `side` operations per second the resources sustain while also serving the other side's load.

    offered(res, writes=W, side="read") is the largest R with every resource's load(R, W) <= 1 (0 when W
    alone saturates one)."""
    best = math.inf
    for s in resources:
        per = s.read if side == "read" else s.write
        other = writes * s.write if side == "read" else reads * s.read
        left = 1.0 - other
        if per <= 0:
            if left < -EPS:
                return 0.0
            continue
        best = min(best, max(left, 0.0) / per)
    return best


def fits(resources: Sequence[Resource], reads: float, writes: float) -> bool:
    return all(s.load(reads, writes) <= 1.0 + EPS for s in resources)


# -- one homogeneous device set -----------------------------------------------------------

@dataclass(frozen=True)
class DeviceSet:
    """n devices of one kind in one single-set layout, with the overhead units they need."""
    device: Device
    count: int
    layout: str
    overheads: tuple[Overhead, ...] = ()
    role: str = ""            # "" for a plain array; "fast side", "slow side", "cache set", "backing set"
    server_ports: int = 0     # the server's own drive ports this set may use (see the module docstring)
    devices_only: bool = False

    @property
    def rule(self) -> Rule:
        return rule(self.layout, self.count)

    @property
    def needs_ports(self) -> bool:
        """The devices attach to drive ports (an overhead of theirs supplies them)."""
        return any(o.after_server_ports for o in self.overheads)

    @property
    def on_server_ports(self) -> int:
        """Devices on the server's own drive ports."""
        return min(self.count, self.server_ports) if self.needs_ports else 0

    def units(self, o: Overhead) -> int:
        """Units of `o` bought: one per `per_devices` devices, past the server's own ports for a port overhead."""
        n = self.count - self.on_server_ports if o.after_server_ports else self.count
        return math.ceil(n / o.per_devices)

    def ceiling_units(self, o: Overhead) -> int:
        """Units whose MB/s ceiling counts: those bought, plus the server's own controller when it serves devices."""
        return self.units(o) + (1 if o.after_server_ports and self.on_server_ports else 0)

    @property
    def capacity_gb(self) -> float:
        return self.rule.data_devices * self.device.capacity_gb

    @property
    def device_price_usd(self) -> float:
        return self.count * self.device.price_usd

    @property
    def overhead_price_usd(self) -> float:
        if self.devices_only:
            return 0.0
        return sum(self.units(o) * o.price_usd for o in self.overheads)

    @property
    def price_usd(self) -> float:
        return self.device_price_usd + self.overhead_price_usd

    def _label(self, plain: str) -> str:
        return self.role or plain

    def _what(self) -> str:
        prefix = f"{self.role}: " if self.role else ""
        return f"{prefix}{self.count} x {self.device.id} {self.layout}"

    def iops_resources(self, read_weight: float = 1.0, write_weight: float = 1.0) -> list[Resource]:
        d, n, ru = self.device, self.count, self.rule
        per_write = (ru.backend_reads / d.read_iops + ru.backend_writes / d.write_iops) / n
        # A plain array's write figures name the write penalty instead (see `_throughput_figure`).
        out = [Resource(self._label("devices"), self._what(), read_weight / (n * d.read_iops),
                        write_weight * per_write)]
        for o in self.overheads:       # an array controller pair caps IOPS as well as MB/s
            if o.max_iops is not None:
                k = self.ceiling_units(o)
                cap = k * o.max_iops
                out.append(Resource("controller/bus", f"{o.id}: {k} unit{'s' if k != 1 else ''} x "
                                                      f"{o.max_iops:,.0f} IOPS = {cap:,.0f} IOPS",
                                    read_weight / cap, write_weight / cap))
        return out

    def mbps_resources(self, read_weight: float = 1.0, write_weight: float = 1.0) -> list[Resource]:
        d, ru = self.device, self.rule
        out = [Resource(self._label("devices"), self._what(),
                        read_weight / (ru.seq_read_devices * d.read_mbps),
                        write_weight / (ru.seq_write_devices * d.write_mbps))]
        for o in self.overheads:
            k = self.ceiling_units(o)
            cap = k * o.max_mbps
            prefix = f"{self.role}: " if self.role else ""
            if o.after_server_ports and self.on_server_ports:
                bought = self.units(o)
                detail = (f"{prefix}{o.id}: the server's own controller ({self.on_server_ports} on its ports)"
                          + (f" + {bought} unit{'s' if bought != 1 else ''}" if bought else "")
                          + f", {k} x {o.max_mbps:,.0f} MB/s = {cap:,.0f} MB/s")
            else:
                detail = (f"{prefix}{o.id}: {k} unit{'s' if k != 1 else ''} x "
                          f"{o.max_mbps:,.0f} MB/s = {cap:,.0f} MB/s")
            if ru.bus_copies > 1:
                detail += f"; each written MB crosses it {ru.bus_copies} times (host mirroring)"
            out.append(Resource("controller/bus", detail, read_weight / cap, write_weight * ru.bus_copies / cap))
        return out

    @property
    def read_latency_us(self) -> float:
        return self.device.read_latency_us

    @property
    def write_latency_us(self) -> float:
        d = self.device
        return d.read_latency_us + d.write_latency_us if self.rule.read_modify_write else d.write_latency_us

    def overhead_rows(self) -> list[dict[str, Any]]:
        return [{"id": o.id, "name": o.name, "units": self.units(o), "per_devices": o.per_devices,
                 "unit_price_usd": o.price_usd,
                 "price_usd": 0.0 if self.devices_only else self.units(o) * o.price_usd,
                 "priced": not self.devices_only,
                 "after_server_ports": o.after_server_ports,
                 "devices_on_server_ports": self.on_server_ports if o.after_server_ports else 0,
                 "ceiling_units": self.ceiling_units(o),
                 "max_mbps": o.max_mbps, "role": self.role or None} for o in self.overheads]


# -- configurations -------------------------------------------------------------------------

@dataclass(frozen=True)
class Config:
    """device x count x layout (+ the second set of a mixed layout), with the overheads each set needs.

    Build it with `configure` (which looks the overheads up in a catalog and checks the counts)."""
    device: Device
    count: int
    layout: str
    overheads: tuple[Overhead, ...] = ()
    second: Device | None = None
    second_count: int = 0
    second_layout: str | None = None
    second_overheads: tuple[Overhead, ...] = ()
    hit_ratio: float | None = None
    server_ports: int = 0          # the server's own drive ports (0: every port overhead is bought)
    devices_only: bool = False     # price the devices alone

    @property
    def mixed(self) -> bool:
        return self.layout in MIXED_LAYOUTS

    def sets(self) -> list[DeviceSet]:
        if self.layout == "preferred-read-mirror":
            assert self.second is not None
            raw = [DeviceSet(self.device, self.count, "raid0", self.overheads, "fast side"),
                   DeviceSet(self.second, self.second_count, "raid0", self.second_overheads, "slow side")]
        elif self.layout == "read-cache":
            assert self.second is not None
            raw = [DeviceSet(self.device, self.count, "raid0", self.overheads, "cache set"),
                   DeviceSet(self.second, self.second_count, self.second_layout or DEFAULT_BACKING_LAYOUT,
                             self.second_overheads, "backing set")]
        else:
            raw = [DeviceSet(self.device, self.count, self.layout, self.overheads)]
        # the server's own ports serve the first set that attaches to ports; the other set buys its own
        out, ports = [], self.server_ports
        for s in raw:
            mine = ports if s.needs_ports else 0
            ports -= mine
            out.append(replace(s, server_ports=mine, devices_only=self.devices_only))
        return out

    def pricing(self) -> dict[str, Any]:
        """Which pricing was used, in a few keys and one sentence (every result carries it)."""
        sets = self.sets()
        on_ports = sum(s.on_server_ports for s in sets)
        port_sets = [s for s in sets if s.needs_ports]
        P = self.server_ports
        ported = sum(s.count for s in port_sets)
        if self.devices_only:
            text = ("devices only: controllers, enclosures and slots are not priced (--devices-only); "
                    "their MB/s ceilings still apply")
        elif not any(s.overheads for s in sets):
            text = ("devices and overheads: these devices need none (a PCIe card takes a slot, an NVMe drive a bay, "
                    "a cloud volume nothing)")
        elif not port_sets:
            text = "devices and overheads: every overhead unit the devices need is priced"
        elif P == 0:
            text = ("devices and overheads: the server has no drive ports of its own here (--server-ports 0), so "
                    "HBA/enclosure units are priced from the first drive")
        elif on_ports == ported:
            what = f"the {ported} drives fit" if ported > 1 else "the drive fits"
            text = (f"devices and overheads: {what} the server's own {P} drive port{'s' if P != 1 else ''}: "
                    "no HBA/enclosure is priced")
        else:
            text = (f"devices and overheads: {on_ports} drives on the server's own {P} drive ports, "
                    f"HBA/enclosure units priced for the other {ported - on_ports}")
        return {"basis": "devices only" if self.devices_only else "devices and overheads",
                "server_ports": self.server_ports, "devices_on_server_ports": on_ports, "text": text}

    def weights(self) -> list[tuple[float, float, float, float]]:
        """Per set: share of host (random reads, random writes, sequential read MB, sequential write MB)."""
        if self.layout == "preferred-read-mirror":
            return [(1, 1, 1, 1), (0, 1, 0, 1)]
        if self.layout == "read-cache":
            h = self.hit_ratio if self.hit_ratio is not None else DEFAULT_HIT_RATIO
            return [(h, 0, 0, 0), (1 - h, 1, 1, 1)]
        return [(1, 1, 1, 1)]

    def iops_resources(self) -> list[Resource]:
        return [res for s, w in zip(self.sets(), self.weights()) for res in s.iops_resources(w[0], w[1])
                if res.read or res.write]

    def mbps_resources(self) -> list[Resource]:
        return [res for s, w in zip(self.sets(), self.weights()) for res in s.mbps_resources(w[2], w[3])
                if res.read or res.write]

    @property
    def redundant(self) -> bool:
        if self.layout == "read-cache":
            backing = self.second_layout or DEFAULT_BACKING_LAYOUT
            return backing in REDUNDANT_LAYOUTS or (self.second is not None
                                                    and self.second.kind in SELF_REDUNDANT_KINDS)
        if self.layout == "preferred-read-mirror":
            return True
        return self.layout in REDUNDANT_LAYOUTS or self.device.kind in SELF_REDUNDANT_KINDS

    @property
    def spec(self) -> str:
        """The `DEVICE:COUNT:LAYOUT[...]` string `parse_spec` reads back."""
        s = f"{self.device.id}:{self.count}:{self.layout}"
        if self.second is not None:
            s += f":{self.second.id}:{self.second_count}"
            if self.layout == "read-cache":
                s += f":{self.second_layout or DEFAULT_BACKING_LAYOUT}"
        return s

    def describe(self) -> str:
        if self.layout == "preferred-read-mirror":
            return (f"{self.count} x {self.device.id} (reads) mirrored with {self.second_count} x "
                    f"{self.second.id if self.second else '?'}")
        if self.layout == "read-cache":
            h = self.hit_ratio if self.hit_ratio is not None else DEFAULT_HIT_RATIO
            return (f"{self.count} x {self.device.id} read cache ({h:.0%} hits) in front of {self.second_count} x "
                    f"{self.second.id if self.second else '?'} {self.second_layout or DEFAULT_BACKING_LAYOUT}")
        return f"{self.count} x {self.device.id} {self.layout}"


def check_server_ports(n: int, what: str = "--server-ports") -> int:
    if isinstance(n, bool) or not isinstance(n, int) or not (0 <= n <= MAX_SERVER_PORTS):
        raise DbtierError(f"{what} must be a whole number from 0 to {MAX_SERVER_PORTS:,}, got {n!r}",
                          "the SAS/SATA drive ports the server has of its own, e.g. --server-ports 8 "
                          "(0: buy an HBA/enclosure for every drive)")
    return n


def configure(catalog: Catalog, device: str | Device, count: int, layout: str = "jbod",
              second: str | Device | None = None, second_count: int | None = None,
              second_layout: str | None = None, hit_ratio: float | None = None,
              server_ports: int | None = None, devices_only: bool = False) -> Config:
    """A checked configuration: known ids and layout, enough devices for the layout, overheads from the catalog.

    `server_ports` None takes the catalog's `[server] drive_ports`."""
    check_layout(layout)
    ports = check_server_ports(catalog.server_ports if server_ports is None else server_ports)
    dev = catalog.device(device) if isinstance(device, str) else device
    if layout in MIXED_LAYOUTS:
        role1, role2 = (("fast side", "slow side") if layout == "preferred-read-mirror"
                        else ("cache set", "backing set"))
        if second is None or second_count is None:
            example = ("fusionio-iodrive-duo-1.2tb:1:preferred-read-mirror:sas-15k-73gb:16"
                       if layout == "preferred-read-mirror"
                       else "nvme-enterprise-3.84tb:1:read-cache:hdd-7200-20tb:4:raid10")
            raise DbtierError(f"{layout} needs a second device set (the {role2}) after the layout",
                              f"e.g. {example}")
        sec = catalog.device(second) if isinstance(second, str) else second
        check_count("raid0", count, role1)
        if layout == "read-cache":
            sl = second_layout or DEFAULT_BACKING_LAYOUT
            check_layout(sl, SET_LAYOUTS)
            check_count(sl, second_count, f"{role2}, {sl}")
            if hit_ratio is None:
                hit_ratio = DEFAULT_HIT_RATIO
            check_hit_ratio(hit_ratio)
        else:
            sl = None
            check_count("raid0", second_count, role2)
            hit_ratio = None
        return Config(dev, count, layout, tuple(catalog.overheads_for(dev)), sec, second_count, sl,
                      tuple(catalog.overheads_for(sec)), hit_ratio, ports, devices_only)
    if second is not None:
        raise DbtierError(f"{layout} is a single device set; only preferred-read-mirror and read-cache take a "
                          "second device", f"e.g. {dev.id}:{max(count, min_count(layout))}:{layout}")
    check_count(layout, count)
    return Config(dev, count, layout, tuple(catalog.overheads_for(dev)), server_ports=ports,
                  devices_only=devices_only)


def check_hit_ratio(h: float) -> None:
    if not (isinstance(h, (int, float)) and math.isfinite(h) and 0 <= h <= 1):
        raise DbtierError(f"read hit ratio must be between 0 and 1, got {h}", "e.g. --hit-ratio 0.9")


def check_read_fraction(r: float) -> None:
    if not (isinstance(r, (int, float)) and math.isfinite(r) and 0 <= r <= 1):
        raise DbtierError(f"read fraction must be between 0 (all writes) and 1 (all reads), got {r}",
                          "e.g. --read-fraction 0.7 for 70% reads")


def parse_spec(catalog: Catalog, spec: str, hit_ratio: float | None = None, server_ports: int | None = None,
               devices_only: bool = False) -> Config:
    """`DEVICE:COUNT:LAYOUT`, `FAST:N:preferred-read-mirror:SLOW:M`, `CACHE:N:read-cache:BACKING:M[:LAYOUT]`."""
    example = "e.g. sas-15k-73gb:16:raid10, or fusionio-iodrive-duo-1.2tb:1:preferred-read-mirror:sas-15k-73gb:16"
    parts = [p.strip() for p in spec.split(":")]
    if len(parts) < 3 or any(not p for p in parts):
        raise DbtierError(f"configuration '{spec}' is not DEVICE:COUNT:LAYOUT", example)
    dev, count_s, layout, *rest = parts
    check_layout(layout)
    count = _count(count_s, spec)
    if layout in MIXED_LAYOUTS:
        most = 3 if layout == "read-cache" else 2
        if len(rest) < 2 or len(rest) > most:
            tail = "SLOW:COUNT" if layout == "preferred-read-mirror" else "BACKING:COUNT[:LAYOUT]"
            raise DbtierError(f"configuration '{spec}': {layout} takes DEVICE:COUNT:{layout}:{tail}", example)
        second_layout = rest[2] if len(rest) == 3 else None
        return configure(catalog, dev, count, layout, rest[0], _count(rest[1], spec), second_layout, hit_ratio,
                         server_ports, devices_only)
    if rest:
        raise DbtierError(f"configuration '{spec}': {layout} takes DEVICE:COUNT:LAYOUT only", example)
    return configure(catalog, dev, count, layout, server_ports=server_ports, devices_only=devices_only)


def _count(text: str, spec: str) -> int:
    try:
        n = parse_int(text)     # ASCII digits: int() also takes '٣' and '1_6'
    except ValueError:
        raise DbtierError(f"configuration '{spec}': device count '{text}' is not a whole number",
                          "e.g. sas-15k-73gb:16:raid10") from None
    if n < 1:
        raise DbtierError(f"configuration '{spec}': device count must be at least 1, got {n}",
                          "e.g. sas-15k-73gb:16:raid10")
    if n > MAX_COUNT:
        raise DbtierError(f"configuration '{spec}': device count {n:,} is more than {MAX_COUNT:,}",
                          "give the count of devices in the array, e.g. sas-15k-73gb:16:raid10")
    return n


# -- evaluation --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Evaluation:
    config: Config
    read_fraction: float
    capacity_gb: Figure
    read_iops: Figure
    write_iops: Figure
    iops: Figure                # at read_fraction
    read_mbps: Figure
    write_mbps: Figure
    mbps: Figure                # at read_fraction
    read_latency_us: Figure
    write_latency_us: Figure
    price_usd: float
    device_price_usd: float
    overhead_price_usd: float
    overheads: tuple[dict[str, Any], ...] = field(default=())
    iops_resources: tuple[Resource, ...] = field(default=(), repr=False)
    mbps_resources: tuple[Resource, ...] = field(default=(), repr=False)

    @property
    def usd_per_gb(self) -> float:
        return self.price_usd / self.capacity_gb.value

    @property
    def usd_per_iops(self) -> float:
        return self.price_usd / self.iops.value

    @property
    def usd_per_mbps(self) -> float:
        return self.price_usd / self.mbps.value

    @property
    def write_penalty(self) -> int | None:
        return None if self.config.mixed else rule(self.config.layout, self.config.count).write_penalty

    FIGURES = ("capacity_gb", "read_iops", "write_iops", "iops", "read_mbps", "write_mbps", "mbps",
               "read_latency_us", "write_latency_us")

    def to_dict(self) -> dict[str, Any]:
        c = self.config
        d: dict[str, Any] = {"device": c.device.id, "count": c.count, "layout": c.layout}
        if c.second is not None:
            d["second"] = {"device": c.second.id, "count": c.second_count,
                           "layout": c.second_layout or "raid0",
                           "role": "slow side" if c.layout == "preferred-read-mirror" else "backing set"}
        if c.hit_ratio is not None:
            d["hit_ratio"] = c.hit_ratio
        d.update({"spec": c.spec, "description": c.describe(), "redundant": c.redundant,
                  "price_usd": self.price_usd, "device_price_usd": self.device_price_usd,
                  "overhead_price_usd": self.overhead_price_usd,
                  "capacity_gb": self.capacity_gb.value,
                  "read_iops": self.read_iops.value, "write_iops": self.write_iops.value,
                  "iops": self.iops.value, "read_fraction": self.read_fraction,
                  "read_mbps": self.read_mbps.value, "write_mbps": self.write_mbps.value, "mbps": self.mbps.value,
                  "read_latency_us": self.read_latency_us.value, "write_latency_us": self.write_latency_us.value,
                  "usd_per_gb": self.usd_per_gb, "usd_per_iops": self.usd_per_iops,
                  "usd_per_mbps": self.usd_per_mbps, "write_penalty": self.write_penalty,
                  "overheads": [dict(o) for o in self.overheads], "pricing": c.pricing(),
                  "limits": {k: {"limit": getattr(self, k).limit, "detail": getattr(self, k).detail}
                             for k in self.FIGURES}})
        return d


def _throughput_figure(resources: Sequence[Resource], r: float, config: Config, writes: bool,
                       sequential: bool = False) -> Figure:
    """IOPS or MB/s at read fraction r; a plain array's devices limit writes through the layout's penalty."""
    value, res = _peak(resources, r)
    if not (writes and res.limit == "devices" and not config.mixed):
        return Figure(value, res.limit, res.detail)
    ru = rule(config.layout, config.count)
    n = config.count
    if sequential:
        lost = n - ru.seq_write_devices
        if not lost:
            return Figure(value, res.limit, res.detail)
        how = (f"{lost:g} of {n} devices' bandwidth goes to parity (full-stripe writes)" if ru.backend_reads
               else f"every MB is written {ru.backend_writes if config.layout != 'raid1' else n} times")
    else:
        if ru.write_penalty == 1:
            return Figure(value, res.limit, res.detail)
        how = (f"{ru.backend_reads} reads + {ru.backend_writes} writes per host write" if ru.backend_reads
               else f"{ru.backend_writes} copies of every write")
    return Figure(value, "write penalty", f"{res.detail}: {how}")


def evaluate(config: Config, read_fraction: float = DEFAULT_READ_FRACTION) -> Evaluation:
    check_read_fraction(read_fraction)
    sets = config.sets()
    iops_res = config.iops_resources()
    mbps_res = config.mbps_resources()

    # capacity
    if config.layout == "preferred-read-mirror":
        fast, slow = sets
        small = min(sets, key=lambda s: s.capacity_gb)
        capacity = Figure(small.capacity_gb, small.role,
                          f"each side holds a full copy; the {small.role} holds {small.capacity_gb:,.0f} GB")
    elif config.layout == "read-cache":
        b = sets[1]
        capacity = Figure(b.capacity_gb, "backing set",
                          f"{b.count} x {b.device.id} {b.layout}; the cache adds no capacity")
    else:
        s = sets[0]
        ru = s.rule
        if ru.data_devices == s.count:
            capacity = Figure(s.capacity_gb, "devices", f"{s.count} x {s.device.capacity_gb:,.0f} GB")
        else:
            capacity = Figure(s.capacity_gb, "redundancy",
                              f"{config.layout}: {ru.data_devices:g} of {s.count} devices' capacity holds data")

    read_iops = _throughput_figure(iops_res, 1.0, config, False)
    write_iops = _throughput_figure(iops_res, 0.0, config, True)
    iops = _throughput_figure(iops_res, read_fraction, config, read_fraction < 1)
    read_mbps = _throughput_figure(mbps_res, 1.0, config, False, True)
    write_mbps = _throughput_figure(mbps_res, 0.0, config, True, True)
    mbps = _throughput_figure(mbps_res, read_fraction, config, read_fraction < 1, True)

    # latency
    if config.layout == "preferred-read-mirror":
        fast, slow = sets
        read_lat = Figure(fast.read_latency_us, "fast side", f"reads from {fast.device.id}")
        w = max(sets, key=lambda s: s.write_latency_us)
        write_lat = Figure(w.write_latency_us, w.role, f"a write completes when both sides have it; "
                                                       f"{w.device.id} is the slower")
    elif config.layout == "read-cache":
        cache, back = sets
        h = config.hit_ratio if config.hit_ratio is not None else DEFAULT_HIT_RATIO
        hit, miss = h * cache.read_latency_us, (1 - h) * back.read_latency_us
        read_lat = Figure(hit + miss, "backing set" if miss >= hit else "cache set",
                          f"{h:.0%} hits at {cache.read_latency_us:,.0f} µs, {1 - h:.0%} misses at "
                          f"{back.read_latency_us:,.0f} µs")
        write_lat = Figure(back.write_latency_us, "backing set", f"writes go to {back.device.id} {back.layout}")
    else:
        s = sets[0]
        read_lat = Figure(s.read_latency_us, "devices", f"one {s.device.id} read")
        if s.rule.read_modify_write:
            write_lat = Figure(s.write_latency_us, "write penalty",
                               f"{config.layout} small write: read old data and parity "
                               f"({s.device.read_latency_us:,.0f} µs), then write "
                               f"({s.device.write_latency_us:,.0f} µs)")
        else:
            write_lat = Figure(s.write_latency_us, "devices",
                               f"one {s.device.id} write" + (" (copies in parallel)" if s.rule.backend_writes > 1
                                                              else ""))

    device_price = sum(s.device_price_usd for s in sets)
    overhead_price = sum(s.overhead_price_usd for s in sets)
    rows = tuple(row for s in sets for row in s.overhead_rows())
    return Evaluation(config, read_fraction, capacity, read_iops, write_iops, iops, read_mbps, write_mbps, mbps,
                      read_lat, write_lat, device_price + overhead_price, device_price, overhead_price, rows,
                      tuple(iops_res), tuple(mbps_res))


def iops_at(read_iops: float, write_iops: float, r: float) -> float:
    """Time-weighted IOPS at read fraction r: 1 / (r / read_iops + (1 - r) / write_iops)."""
    check_read_fraction(r)
    return 1.0 / (r / read_iops + (1 - r) / write_iops)
