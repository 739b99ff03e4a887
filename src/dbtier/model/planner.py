"""The planner: equal performance, equal budget, the cheapest configuration for a requirement, price/performance.

Pure: a catalog and numbers (or an already loaded result document) in, plain
results out. The array model, its layouts and what limits each figure are in
`dbtier.model.array`; this module searches over it.

- `equivalent`: how many `using` devices (with their controller/enclosure
  overhead, in a layout, jbod by default) match one `reference` device, metric by
  metric: `iops` = IOPS at the read fraction (time-weighted, so a 50/50 mix of a
  185K-read/278K-write card is 222,160 IOPS); `throughput` = both its sequential
  read and its sequential write MB/s (sequential work runs one way at a time: a
  scan or a backup reads, a load or a restore writes, so the array must match
  each); `capacity` = usable GB. The count is the smallest that matches; the
  price includes the overhead units bought (see "Pricing" below).
- `budget`: the largest count of each device whose price, overhead included, is
  within the budget (in a layout's valid counts: raid10 even, raid5 at least 3),
  and what it delivers. A device the budget cannot buy one valid array of gets
  count 0.
- `size`: every device x layout (and the mixed designs: a preferred-read mirror
  of flash with a cheaper set, a flash read cache in front of a cheaper backing
  set) at the smallest count that meets the requirement with headroom, ranked by
  price. Requirements:
    * random read and write IOPS happen together (an OLTP mix): a configuration
      meets them when every resource of the model has time for both,
      R'/read_iops + W'/write_iops <= 1 for a single device set. `meets` reports
      per requirement the rate offered while the other is also served
      (offered reads = the reads/s left beside W' writes/s), so both verdicts agree;
    * sequential read and write MB/s likewise happen together (history peaks are
      rates of the same interval);
    * capacity is usable GB;
    * headroom h applies to every rate and to capacity: a requirement x is met
      when the offered figure is at least x (1 + h); `margin` is offered / x - 1,
      so a requirement is met exactly when margin >= h;
    * `--max-read-latency-us` is a ceiling on the configuration's read latency
      (no headroom; margin = 1 - offered / ceiling). In this model latency does
      not depend on the count, so it selects devices and layouts.
  With redundancy "required" (the default) only layouts that survive a device
  failure are kept (raid1, raid10, raid5, raid6, mirror2, mirror3, a
  preferred-read mirror, a read cache over a redundant backing set), plus stripes
  of cloud volumes, which the provider replicates. Each set has at most
  `max_devices` devices. A read cache's backing set is raid10, raid5 or raid6
  (raid0 too without redundancy); its hit ratio is the `hit_ratio` input, and
  since a hit ratio presumes the hot data fits in the cache, the cache set must
  hold at least `cache_fraction` (default 10%, the usual flash-cache rule of
  thumb) of the backing set's usable capacity.
  `binding` says which requirement drove the cheapest choice: "latency" when a
  cheaper configuration met every other requirement but not the latency
  ceiling; otherwise the one among iops, throughput and capacity whose own
  smallest configuration of the winning design costs the most (on a tie, the one
  with the least margin).
- `requirement_from_history`: a run directory's result.json `requirement`
  object, {read_iops, write_iops, read_mbps, write_mbps, capacity_gb,
  percentile, headroom}, written by `dbtier history`; a missing or null rate
  is absent (listed in the result's `requirement.absent`), a 0 is a measured zero; neither is sized for; `headroom` is used unless the command line gives one.
- `value`: price/performance of a measured run for a configuration priced from
  the catalog: a probe run gives IOPS from `targets[0].summary`
  (mixed_iops_8k as the headline, the OLTP-like 8 KiB 70/30 mix; read_iops_4k
  and write_iops_4k beside it) and MB/s from read_mbps_seq; an OLTP bench run
  gives TPS and TPM from its best point (the highest tps in `points[]`; its
  `knee` is reported too). $/GB is per usable GB of the configuration. The
  measured figures are taken as what the configuration delivered: the run is not
  checked against it.

Pricing (every action): devices plus the overhead units bought, where a port
overhead (an HBA/enclosure, `after_server_ports`) is bought only for the devices
beyond the server's own drive ports (`server_ports`, default the catalog's
`[server] drive_ports`); or, with `devices_only`, the devices alone, as studies
that price "the I/O system" by its drives do. Each result says which
(`pricing`). Worked example, the MySQL TPC-C-like study (Percona, 2009): 7,439.85
TPM on 8 x 15K SAS in RAID 10 at $190 each = $1,520 is 4.9 TPM/$; 10,681.05 TPM on
one Intel X25-E at $390 is 27.4 TPM/$; 17,372.25 TPM on one Fusion-io 160 GB card
at $4,800 is 3.6 TPM/$. With the shipped catalog and its 8 server ports the SSD
and the card price exactly so (the disks too, once their price is set to the
study's $190 with --catalog).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

from dbtier.core.errors import DbtierError
from dbtier.model.array import (DEFAULT_HIT_RATIO, DEFAULT_READ_FRACTION, EPS, LAYOUTS, MIXED_LAYOUTS,
                                REDUNDANT_LAYOUTS, SELF_REDUNDANT_KINDS, SET_LAYOUTS, Config, DeviceSet,
                                Evaluation, check_hit_ratio, check_layout, check_read_fraction,
                                check_server_ports, configure,
                                count_step, evaluate, fits, min_count, offered, valid_counts_from)
from dbtier.model.catalog import Catalog, Device, Overhead

FLASH_KINDS = ("nvme", "pcie-flash", "sata-ssd", "sas-ssd")
REQUIREMENT_KEYS = ("read_iops", "write_iops", "read_mbps", "write_mbps", "capacity_gb")
CATEGORY = {"read_iops": "iops", "write_iops": "iops", "read_mbps": "throughput", "write_mbps": "throughput",
            "capacity_gb": "capacity", "read_latency_us": "latency"}
LABELS = {"read_iops": "read IOPS", "write_iops": "write IOPS", "read_mbps": "read MB/s",
          "write_mbps": "write MB/s", "capacity_gb": "capacity (GB)", "read_latency_us": "read latency (µs)"}
DEFAULT_MAX_DEVICES = 1024
DEFAULT_CACHE_FRACTION = 0.1
EQUIVALENT_MAX_COUNT = 10_000_000


def _fmt(x: float) -> str:
    if x == math.inf:
        return "unlimited"
    return f"{x:,.0f}" if abs(x) >= 100 or float(x).is_integer() else f"{x:,.2f}"


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


def _positive(name: str, x: float) -> None:
    if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x) or x <= 0:
        raise DbtierError(f"{name} must be a positive number, got {x}", f"give {name} a value above 0")


# -- equal performance ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Match:
    metric: str
    count: int
    evaluation: Evaluation
    reference_value: str      # what had to be matched, in words
    price_usd: float
    reference_price_usd: float

    @property
    def price_ratio(self) -> float:
        return self.price_usd / self.reference_price_usd if self.reference_price_usd else math.inf

    def contract(self) -> dict[str, Any]:
        return {"count": self.count, "price_usd": self.price_usd, "reference_price_usd": self.reference_price_usd,
                "price_ratio": self.price_ratio}


@dataclass(frozen=True)
class Equivalence:
    reference: Evaluation
    using: Device
    layout: str
    read_fraction: float
    by_metric: dict[str, Match]


def equivalent(catalog: Catalog, reference: str, using: str, read_fraction: float = DEFAULT_READ_FRACTION,
               layout: str = "jbod", max_count: int = EQUIVALENT_MAX_COUNT, server_ports: int | None = None,
               devices_only: bool = False) -> Equivalence:
    """How many `using` devices (in `layout`, with overhead) match one `reference` device on each metric.

    Each side is priced on a server with `server_ports` drive ports of its own (None: the catalog's)."""
    check_read_fraction(read_fraction)
    check_layout(layout, SET_LAYOUTS)
    ports = check_server_ports(catalog.server_ports if server_ports is None else server_ports)
    ref = evaluate(configure(catalog, reference, 1, "jbod", server_ports=ports, devices_only=devices_only),
                   read_fraction)
    dev = catalog.device(using)
    ovs = tuple(catalog.overheads_for(dev))

    def ev(n: int) -> Evaluation:
        return evaluate(Config(dev, n, layout, ovs, server_ports=ports, devices_only=devices_only), read_fraction)

    tests: dict[str, tuple[Callable[[Evaluation], bool], str, Callable[[Evaluation], str]]] = {
        "iops": (lambda e: e.iops.value >= ref.iops.value * (1 - EPS),
                 f"{_fmt(ref.iops.value)} IOPS at {read_fraction:.0%} reads",
                 lambda e: f"{_fmt(e.iops.value)} IOPS"),
        "throughput": (lambda e: e.read_mbps.value >= ref.read_mbps.value * (1 - EPS)
                       and e.write_mbps.value >= ref.write_mbps.value * (1 - EPS),
                       f"{_fmt(ref.read_mbps.value)} MB/s read and {_fmt(ref.write_mbps.value)} MB/s write",
                       lambda e: f"{_fmt(e.read_mbps.value)} MB/s read, {_fmt(e.write_mbps.value)} MB/s write"),
        "capacity": (lambda e: e.capacity_gb.value >= ref.capacity_gb.value * (1 - EPS),
                     f"{_fmt(ref.capacity_gb.value)} GB", lambda e: f"{_fmt(e.capacity_gb.value)} GB"),
    }
    out: dict[str, Match] = {}
    for metric, (ok, what, reached) in tests.items():
        n = smallest_count(layout, lambda n: ok(ev(n)), max_count)
        if n is None:
            top = ev(max_count if layout != "raid10" else max_count - max_count % 2)
            raise DbtierError(
                f"no count of {dev.id} in {layout} matches {ref.config.device.id} on {metric} ({what}); "
                f"even {top.config.count:,} of them reach only {reached(top)}",
                "try another layout (raid1 keeps one device's capacity and write rate) or another --using device")
        e = ev(n)
        out[metric] = Match(metric, n, e, what, e.price_usd, ref.price_usd)
    return Equivalence(ref, dev, layout, read_fraction, out)


# -- equal budget ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class BudgetOption:
    device: Device
    layout: str
    count: int
    evaluation: Evaluation | None      # None when the budget buys no valid array
    smallest_price_usd: float          # the price of the layout's smallest array of this device
    budget_usd: float

    def contract(self) -> dict[str, Any]:
        e = self.evaluation
        return {"device": self.device.id, "count": self.count,
                "price_usd": e.price_usd if e else 0,
                "capacity_gb": e.capacity_gb.value if e else 0,
                "iops": e.iops.value if e else 0,
                "read_mbps": e.read_mbps.value if e else 0,
                "write_mbps": e.write_mbps.value if e else 0,
                "read_latency_us": e.read_latency_us.value if e else None,
                "write_latency_us": e.write_latency_us.value if e else None}


def budget(catalog: Catalog, usd: float, devices: Sequence[str], layout: str = "jbod",
           read_fraction: float = DEFAULT_READ_FRACTION, server_ports: int | None = None,
           devices_only: bool = False) -> list[BudgetOption]:
    """The most of each device `usd` buys in `layout`, overhead included (unless `devices_only`)."""
    _positive("budget (--usd)", usd)
    check_read_fraction(read_fraction)
    check_layout(layout, SET_LAYOUTS)
    ports = check_server_ports(catalog.server_ports if server_ports is None else server_ports)
    if not devices:
        raise DbtierError("no devices to compare", "give --devices ID,ID,...")
    out = []
    for did in devices:
        dev = catalog.device(did)
        ovs = tuple(catalog.overheads_for(dev))

        def config(n: int) -> Config:
            return Config(dev, n, layout, ovs, server_ports=ports, devices_only=devices_only)

        def price(n: int) -> float:
            return sum(s.price_usd for s in config(n).sets())

        # an upper bound on the count: the devices alone, or the overhead units alone, exhaust the budget
        if dev.price_usd > 0:
            upper = int(usd // dev.price_usd)
        else:
            paid = [] if devices_only else [o for o in ovs if o.price_usd > 0]
            if not paid:
                why = "and --devices-only prices no overhead" if devices_only else "and needs no paid overhead"
                raise DbtierError(f"{dev.id} costs nothing (price_usd 0, {dev.notes or 'no notes'}) {why}: "
                                  "a budget does not limit it",
                                  "give it a price with --catalog to compare it on a budget")
            upper = min(int(usd // o.price_usd) * o.per_devices + o.per_devices
                        + (ports if o.after_server_ports else 0) for o in paid)
        smallest = valid_counts_from(layout)
        n = 0
        if upper >= smallest and price(smallest) <= usd * (1 + EPS):
            # the largest valid count within budget: price is monotone in the count
            step = count_step(layout)
            k_lo, k_hi = 0, (upper - smallest) // step
            while k_hi > k_lo:
                mid = (k_lo + k_hi + 1) // 2
                if price(smallest + mid * step) <= usd * (1 + EPS):
                    k_lo = mid
                else:
                    k_hi = mid - 1
            n = smallest + k_lo * step
        e = evaluate(config(n), read_fraction) if n else None
        out.append(BudgetOption(dev, layout, n, e, price(smallest), usd))
    if not any(o.count for o in out):
        cheapest = min(out, key=lambda o: o.smallest_price_usd)
        raise DbtierError(f"a budget of ${_fmt(usd)} buys no {layout} array of any of these devices; the cheapest, "
                          f"{min_count(layout)} x {cheapest.device.id} with its overhead, costs "
                          f"${_fmt(cheapest.smallest_price_usd)}",
                          "raise --usd, or choose cheaper devices or a layout that needs fewer of them")
    return out


# -- requirements ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Requirement:
    """Rates and capacity to meet, a read-latency ceiling, and the headroom on top.

    None is absent (nobody asked, or the source did not measure it: nothing to meet, and said so);
    0 is a measured zero (a read-only database's writes): also nothing to meet, but not missing."""
    read_iops: float | None = None
    write_iops: float | None = None
    read_mbps: float | None = None
    write_mbps: float | None = None
    capacity_gb: float | None = None
    max_read_latency_us: float | None = None
    headroom: float = 0.3
    percentile: float | None = None
    source: str = "command line"

    def __post_init__(self) -> None:
        for k in REQUIREMENT_KEYS:
            v = getattr(self, k)
            if v is None:
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or not (v >= 0):
                raise DbtierError(f"requirement {k} must be a number of at least 0, got {v}",
                                  f"give {k} a value above 0")
        if self.max_read_latency_us is not None:
            _positive("--max-read-latency-us", self.max_read_latency_us)
        h = self.headroom
        if isinstance(h, bool) or not isinstance(h, (int, float)) or not math.isfinite(h) or not (h >= 0):
            raise DbtierError(f"headroom must be 0 or more, got {h}", "e.g. --headroom 0.3 for 30% on top")
        if not self.given() and self.max_read_latency_us is None:
            raise DbtierError("no requirement given", "give at least one of --read-iops, --write-iops, "
                              "--read-mbps, --write-mbps, --capacity-gb, --max-read-latency-us, or --from-history")

    def given(self) -> list[str]:
        """The figures to meet: present and above 0."""
        return [k for k in REQUIREMENT_KEYS if (getattr(self, k) or 0) > 0]

    def absent(self) -> list[str]:
        """The figures nobody gave (None): not sized for, and the result says so."""
        return [k for k in REQUIREMENT_KEYS if getattr(self, k) is None]

    def keys(self) -> list[str]:
        return self.given() + (["read_latency_us"] if self.max_read_latency_us is not None else [])

    def categories(self) -> list[str]:
        return list(dict.fromkeys(CATEGORY[k] for k in self.keys()))

    def target(self, key: str) -> float:
        """The figure to reach, headroom included (0 for an absent one)."""
        return (getattr(self, key) or 0.0) * (1 + self.headroom)

    def only(self, category: str) -> "Requirement":
        """This requirement restricted to one category (the others dropped)."""
        keep = {k: (getattr(self, k) if CATEGORY[k] == category else None) for k in REQUIREMENT_KEYS}
        lat = self.max_read_latency_us if category == "latency" else None
        return replace(self, **keep, max_read_latency_us=lat)

    def to_dict(self) -> dict[str, Any]:
        return {"read_iops": self.read_iops, "write_iops": self.write_iops,
                "read_mbps": self.read_mbps, "write_mbps": self.write_mbps,
                "capacity_gb": self.capacity_gb, "max_read_latency_us": self.max_read_latency_us,
                "headroom": self.headroom, "percentile": self.percentile, "source": self.source,
                "absent": self.absent()}


def requirement_from_history(doc: dict[str, Any], source: str, overrides: dict[str, float | None] | None = None,
                             headroom: float | None = None, max_read_latency_us: float | None = None) -> Requirement:
    """The `requirement` object of a history run's result.json; `overrides` (given on the command line) win."""
    req = doc.get("requirement")
    if not isinstance(req, dict):
        raise DbtierError(f"{source}: no 'requirement' object in its result.json (a {doc.get('command') or '?'} run)",
                          "pass a run directory written by `dbtier history`, or give the requirement as options")
    values: dict[str, float | None] = {}
    for k in REQUIREMENT_KEYS:
        v = req.get(k)
        if v is None:           # the history run did not measure it: absent, not 0
            values[k] = None
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            raise DbtierError(f"{source}: requirement.{k} must be a number of at least 0, got {v!r}",
                              "re-run `dbtier history` to rewrite it, or give the figure as an option")
        values[k] = float(v)
    for k, v in (overrides or {}).items():
        if v is not None:
            values[k] = v
    h = headroom
    if h is None:
        hv = req.get("headroom")
        if hv is not None and (isinstance(hv, bool) or not isinstance(hv, (int, float)) or hv < 0):
            raise DbtierError(f"{source}: requirement.headroom must be a number of at least 0, got {hv!r}",
                              "give --headroom instead")
        h = 0.3 if hv is None else float(hv)
    pct = req.get("percentile")
    pct = float(pct) if isinstance(pct, (int, float)) and not isinstance(pct, bool) else None
    return Requirement(**values, max_read_latency_us=max_read_latency_us, headroom=h, percentile=pct,
                       source=f"history run {source}" + (f" (p{pct:g} of interval rates)" if pct is not None else ""))


def meets(e: Evaluation, req: Requirement) -> dict[str, dict[str, Any]]:
    """Per requirement: required, with_headroom, offered, met, margin (see the module docstring)."""
    out: dict[str, dict[str, Any]] = {}
    R, W = req.target("read_iops"), req.target("write_iops")
    Mr, Mw = req.target("read_mbps"), req.target("write_mbps")
    offers = {
        "read_iops": lambda: offered(e.iops_resources, writes=W, side="read"),
        "write_iops": lambda: offered(e.iops_resources, reads=R, side="write"),
        "read_mbps": lambda: offered(e.mbps_resources, writes=Mw, side="read"),
        "write_mbps": lambda: offered(e.mbps_resources, reads=Mr, side="write"),
        "capacity_gb": lambda: e.capacity_gb.value,
    }
    for k in req.given():
        need = getattr(req, k)
        got = offers[k]()
        out[k] = {"required": need, "with_headroom": req.target(k), "offered": got,
                  "met": got >= req.target(k) * (1 - EPS), "margin": got / need - 1}
    if req.max_read_latency_us is not None:
        lat = e.read_latency_us.value
        out["read_latency_us"] = {"required": req.max_read_latency_us, "with_headroom": req.max_read_latency_us,
                                  "offered": lat, "met": lat <= req.max_read_latency_us * (1 + EPS),
                                  "margin": 1 - lat / req.max_read_latency_us}
    return out


# -- sizing --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Shape:
    """A design without counts: device x layout, or the two devices (and backing layout) of a mixed layout."""
    device: Device
    layout: str
    second: Device | None = None
    second_layout: str | None = None

    @property
    def key(self) -> tuple:
        return (self.device.id, self.layout, self.second.id if self.second else None, self.second_layout)


@dataclass(frozen=True)
class Candidate:
    evaluation: Evaluation
    meets: dict[str, dict[str, Any]]
    binding: str
    binding_detail: str

    def contract(self) -> dict[str, Any]:
        e = self.evaluation
        d = e.to_dict()
        return {"device": d["device"], "count": d["count"], "layout": d["layout"], "price_usd": e.price_usd,
                "capacity_gb": e.capacity_gb.value, "read_iops": e.read_iops.value,
                "write_iops": e.write_iops.value, "read_mbps": e.read_mbps.value, "write_mbps": e.write_mbps.value,
                "meets": self.meets,
                # beyond the contract: the rest of the configuration and why this count
                **({"second": d["second"]} if "second" in d else {}),
                **({"hit_ratio": d["hit_ratio"]} if "hit_ratio" in d else {}),
                "spec": d["spec"], "description": d["description"], "redundant": d["redundant"],
                "read_latency_us": e.read_latency_us.value, "write_latency_us": e.write_latency_us.value,
                "binding": self.binding, "binding_detail": self.binding_detail,
                "overheads": d["overheads"], "limits": d["limits"]}


@dataclass(frozen=True)
class Sizing:
    requirement: Requirement
    candidates: list[Candidate]          # the top N, ranked by price
    found: int                           # designs that meet the requirement (before the top N cut)
    binding: str
    binding_detail: str
    considered: int                      # designs tried
    redundancy: str
    layouts: tuple[str, ...]
    hit_ratio: float
    max_devices: int
    cheaper_without_latency: Candidate | None = None


class _Search:
    """Smallest counts per device set, memoised: many mixed designs share a side."""

    def __init__(self, catalog: Catalog, req: Requirement, hit_ratio: float, max_devices: int,
                 cache_fraction: float = 0.1, server_ports: int = 0, devices_only: bool = False):
        self.catalog, self.req, self.h, self.max = catalog, req, hit_ratio, max_devices
        self.cache_fraction = cache_fraction
        self.server_ports, self.devices_only = server_ports, devices_only
        self._ovs: dict[str, tuple[Overhead, ...]] = {}
        self._memo: dict[tuple, int | None] = {}

    def ovs(self, d: Device) -> tuple[Overhead, ...]:
        if d.id not in self._ovs:
            self._ovs[d.id] = tuple(self.catalog.overheads_for(d))
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
        return Config(d, n, layout, self.ovs(d), second, m, second_layout,
                      self.ovs(second) if second is not None else (), h, self.server_ports, self.devices_only)

    def set_count(self, d: Device, layout: str, role: str, weights: tuple[float, float, float, float],
                  holds_data: bool, req: Requirement, min_capacity_gb: float = 0.0, ports: int = 0) -> int | None:
        key = (d.id, layout, role, weights, holds_data, req, min_capacity_gb, ports)
        if key in self._memo:
            return self._memo[key]
        R, W = req.target("read_iops"), req.target("write_iops")
        Mr, Mw = req.target("read_mbps"), req.target("write_mbps")
        G = req.target("capacity_gb") if holds_data else min_capacity_gb
        ovs = self.ovs(d)
        wr, ww, wmr, wmw = weights
        need_iops, need_mb = R * wr + W * ww > 0, Mr * wmr + Mw * wmw > 0

        def ok(n: int) -> bool:
            s = DeviceSet(d, n, layout, ovs, role, ports, self.devices_only)
            if G and s.capacity_gb < G * (1 - EPS):
                return False
            if need_iops and not fits(s.iops_resources(wr, ww), R, W):
                return False
            if need_mb and not fits(s.mbps_resources(wmr, wmw), Mr, Mw):
                return False
            return True

        n = smallest_count(layout, ok, self.max)
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
        n = top if shape.layout != "raid10" else top - top % 2
        return self._config(d, max(n, min_count(shape.layout)), shape.layout)


def shapes(devices: Sequence[Device], layouts: Sequence[str], redundancy: str) -> list[Shape]:
    """Every design to try. jbod and raid0 are one design (listed as raid0 when both are asked for)."""
    for lay in layouts:
        check_layout(lay)
    if redundancy not in ("required", "none"):
        raise DbtierError(f"--redundancy must be 'required' or 'none', got '{redundancy}'",
                          "required keeps only layouts that survive a device failure")
    wanted = list(dict.fromkeys(layouts))
    if "jbod" in wanted and "raid0" in wanted:
        wanted.remove("jbod")
    need = redundancy == "required"
    out: list[Shape] = []
    for d in devices:
        for lay in wanted:
            if lay in MIXED_LAYOUTS:
                continue
            if need and lay not in REDUNDANT_LAYOUTS and d.kind not in SELF_REDUNDANT_KINDS:
                continue
            out.append(Shape(d, lay))
    for fast in devices:
        if fast.kind not in FLASH_KINDS:
            continue
        for slow in devices:
            if slow.id == fast.id or slow.read_iops >= fast.read_iops or \
                    slow.price_usd / slow.capacity_gb >= fast.price_usd / fast.capacity_gb:
                continue
            if "preferred-read-mirror" in wanted:
                out.append(Shape(fast, "preferred-read-mirror", slow))
            if "read-cache" in wanted:
                for bl in ("raid0", "raid10", "raid5", "raid6"):
                    if need and bl not in REDUNDANT_LAYOUTS and slow.kind not in SELF_REDUNDANT_KINDS:
                        continue
                    out.append(Shape(fast, "read-cache", slow, bl))
    return out


def _binding(search: _Search, shape: Shape, e: Evaluation, m: dict[str, dict[str, Any]],
             read_fraction: float) -> tuple[str, str]:
    req = search.req
    cats = [c for c in req.categories() if c != "latency"]
    if not cats:
        return "latency", "only a read-latency ceiling was given"
    prices: dict[str, tuple[float, str]] = {}
    for c in cats:
        cfg = search.config(shape, req.only(c))
        if cfg is None:       # cannot happen when the whole requirement was met; keep the winner's price
            prices[c] = (e.price_usd, e.config.describe())
            continue
        ce = evaluate(cfg, read_fraction)
        prices[c] = (ce.price_usd, cfg.describe())
    top = max(p for p, _ in prices.values())
    tied = [c for c in cats if prices[c][0] >= top * (1 - EPS)]

    def margin(c: str) -> float:
        return min(v["margin"] for k, v in m.items() if CATEGORY[k] == c)

    pick = min(tied, key=margin)
    alone = "; ".join(f"{c} alone needs {desc} (${_fmt(p)})" for c, (p, desc) in prices.items())
    if len(cats) == 1:
        return pick, f"the only requirement besides latency: {alone}"
    why = ("it alone needs the most" if len(tied) == 1
           else "the requirements tie on price (the layout's smallest array meets them), and it has the least margin")
    return pick, f"{why}: {alone}"


def size(catalog: Catalog, req: Requirement, devices: Sequence[str] | None = None,
         layouts: Sequence[str] = LAYOUTS, redundancy: str = "required", hit_ratio: float = DEFAULT_HIT_RATIO,
         max_devices: int = DEFAULT_MAX_DEVICES, read_fraction: float | None = None, top: int = 10,
         cache_fraction: float = DEFAULT_CACHE_FRACTION, server_ports: int | None = None,
         devices_only: bool = False) -> Sizing:
    """The `top` cheapest designs, each at the smallest count meeting `req` with headroom."""
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise DbtierError(f"--top must be a whole number of at least 1, got {top}", "e.g. --top 10")
    check_hit_ratio(hit_ratio)
    if isinstance(max_devices, bool) or not isinstance(max_devices, int) or max_devices < 1:
        raise DbtierError(f"--max-devices must be a whole number of at least 1, got {max_devices}",
                          "e.g. --max-devices 1024")
    devs = [catalog.device(d) for d in devices] if devices else list(catalog.devices.values())
    if read_fraction is None:  # the requirement's own mix, for $/IOPS
        total = (req.read_iops or 0.0) + (req.write_iops or 0.0)
        read_fraction = (req.read_iops or 0.0) / total if total else DEFAULT_READ_FRACTION
    check_read_fraction(read_fraction)
    all_shapes = shapes(devs, layouts, redundancy)
    if not all_shapes:
        raise DbtierError(f"no design to try: the layouts {', '.join(layouts)} give no redundancy and "
                          "--redundancy is required",
                          "add a redundant layout (raid10, raid5, raid6, mirror2 ...) or use --redundancy none")
    if not (isinstance(cache_fraction, (int, float)) and math.isfinite(cache_fraction) and 0 <= cache_fraction <= 1):
        raise DbtierError(f"--cache-fraction must be between 0 and 1, got {cache_fraction}",
                          "e.g. --cache-fraction 0.1")
    ports = check_server_ports(catalog.server_ports if server_ports is None else server_ports)
    search = _Search(catalog, req, hit_ratio, max_devices, cache_fraction, ports, devices_only)

    found: list[tuple[Shape, Evaluation, dict[str, dict[str, Any]]]] = []
    cheaper_wo_latency: tuple[Shape, Evaluation, dict] | None = None
    for shape in all_shapes:
        cfg = search.config(shape)
        if cfg is None:
            continue
        e = evaluate(cfg, read_fraction)
        m = meets(e, req)
        failed = [k for k, v in m.items() if not v["met"]]
        if not failed:
            found.append((shape, e, m))
        elif failed == ["read_latency_us"] and (cheaper_wo_latency is None
                                                 or e.price_usd < cheaper_wo_latency[1].price_usd):
            cheaper_wo_latency = (shape, e, m)
    if not found:
        _unmeetable(search, all_shapes, req, read_fraction)
    found.sort(key=lambda t: (t[1].price_usd, -t[1].capacity_gb.value, t[1].config.count + t[1].config.second_count,
                              t[1].config.spec))
    candidates = [Candidate(e, m, *_binding(search, shape, e, m, read_fraction)) for shape, e, m in found[:top]]
    best = candidates[0]
    binding, detail = best.binding, best.binding_detail
    cheaper = None
    if cheaper_wo_latency is not None and cheaper_wo_latency[1].price_usd < best.evaluation.price_usd * (1 - EPS):
        s, e, m = cheaper_wo_latency
        cheaper = Candidate(e, m, "latency", "")
        binding = "latency"
        detail = (f"{e.config.describe()} would meet the rest for ${_fmt(e.price_usd)} but reads in "
                  f"{_fmt(e.read_latency_us.value)} µs, over the {_fmt(req.max_read_latency_us or 0)} µs ceiling")
    return Sizing(req, candidates, len(found), binding, detail, len(all_shapes), redundancy, tuple(layouts),
                  hit_ratio, max_devices, cheaper)


def _unmeetable(search: _Search, all_shapes: Sequence[Shape], req: Requirement, read_fraction: float) -> None:
    """Raise the clearest message for a requirement no design meets: which one, and the best reachable figure."""
    note = f" within {search.max:,} devices per set"
    pool = list(all_shapes)
    if req.max_read_latency_us is not None:
        evs = [(s, evaluate(search.largest(s), read_fraction)) for s in pool]
        lat_ok = [s for s, e in evs if e.read_latency_us.value <= req.max_read_latency_us * (1 + EPS)]
        if not lat_ok:
            s, e = min(evs, key=lambda t: t[1].read_latency_us.value)
            raise DbtierError(
                f"no configuration meets the read latency ceiling of {_fmt(req.max_read_latency_us)} µs; the best "
                f"reachable is {_fmt(e.read_latency_us.value)} µs ({s.device.id}, {s.layout})",
                "raise --max-read-latency-us, or add a faster device with --catalog")
        pool = lat_ok
        note += f" among designs reading in at most {_fmt(req.max_read_latency_us)} µs"
    tops = [(s, evaluate(search.largest(s), read_fraction)) for s in pool]
    for k in req.given():
        best_val, best_desc = -1.0, ""
        reach = False
        for s, e in tops:
            v = meets(e, req)[k]
            if v["met"]:
                reach = True
                break
            if v["offered"] > best_val:
                best_val, best_desc = v["offered"], e.config.describe()
        if not reach:
            concurrent = ""
            if k in ("read_iops", "write_iops", "read_mbps", "write_mbps"):
                other = {"read_iops": "write_iops", "write_iops": "read_iops", "read_mbps": "write_mbps",
                         "write_mbps": "read_mbps"}[k]
                if getattr(req, other):
                    concurrent = f" beside the required {LABELS[other]}"
            raise DbtierError(
                f"no configuration meets the {LABELS[k]} requirement of {_fmt(getattr(req, k))} "
                f"({_fmt(req.target(k))} with {req.headroom:.0%} headroom){note}; the best reachable is "
                f"{_fmt(best_val)} {LABELS[k]}{concurrent} ({best_desc})",
                "lower the requirement or --headroom, raise --max-devices, allow more --layouts, "
                "use --redundancy none, or add devices with --catalog")
    raise DbtierError(
        f"no single configuration meets {', '.join(LABELS[k] for k in req.keys())} together{note}: each is "
        "reachable alone, by different designs",
        "relax one of the requirements, raise --max-devices or allow more --layouts")


# -- price / performance of a measured run ---------------------------------------------------------------

@dataclass(frozen=True)
class Value:
    kind: str                       # "probe" or "bench"
    evaluation: Evaluation
    measured: dict[str, Any]
    figures: dict[str, float | None]
    figures_used: list[str]


def _num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def value(doc: dict[str, Any], e: Evaluation, source: str = "the run") -> Value:
    """TPM/$, TPS/$, IOPS/$, MB/s per $ and $/GB of a measured run, priced as configuration `e`; NOPM/$
    (new orders a minute, TPC-C's tpmC) too when the bench run's best point has NOPM (tpcc)."""
    price = e.price_usd
    if not (price > 0):
        raise DbtierError(f"{e.config.describe()} costs nothing in the catalog: price/performance is undefined",
                          "give the device a price with --catalog")
    cap = e.capacity_gb.value
    figures: dict[str, float | None] = {k: None for k in (
        "tpm_per_usd", "tps_per_usd", "iops_per_usd", "mbps_per_usd", "usd_per_gb", "usd_per_tpm", "usd_per_tps",
        "usd_per_iops")}
    figures["usd_per_gb"] = price / cap
    pricing = e.config.pricing()
    used = [f"price: ${_fmt(price)} for {e.config.describe()} from the catalog "
            f"(${_fmt(e.device_price_usd)} devices + ${_fmt(e.overhead_price_usd)} overhead); "
            f"$/GB per usable GB ({_fmt(cap)} GB)",
            f"pricing: {pricing['text']}"]
    measured: dict[str, Any] = {}
    points = doc.get("points")
    targets = doc.get("targets")
    if isinstance(points, list) and any(isinstance(p, dict) and _num(p.get("tps")) for p in points):
        kind = "bench"
        good = [p for p in points if isinstance(p, dict) and _num(p.get("tps"))]
        best = max(good, key=lambda p: p["tps"])
        tps = best["tps"]
        tpm = best.get("tpm") if _num(best.get("tpm")) else None
        measured = {"tps": tps, "tpm": tpm, "nopm": best.get("nopm") if _num(best.get("nopm")) else None,
                    "clients": best.get("clients"), "points": len(good)}
        knee = doc.get("knee")
        if isinstance(knee, dict):
            measured["knee"] = {"clients": knee.get("clients"), "tps": knee.get("tps")}
        figures["tps_per_usd"] = tps / price
        figures["usd_per_tps"] = price / tps if tps else None
        used.append(f"TPS: {_fmt(tps)}, the best of {len(good)} points in points[] (at {best.get('clients')} clients)"
                    f" of {source}")
        if tpm is not None:
            figures["tpm_per_usd"] = tpm / price
            figures["usd_per_tpm"] = price / tpm if tpm else None
            used.append(f"TPM: {_fmt(tpm)} from the same point")
        else:
            used.append("TPM: not in the best point; TPM/$ not computed")
        nopm = measured["nopm"]
        if nopm is not None:
            # TPC-C's tpmC (and tpcc-mysql's "TpmC", the MySQL study's TPM) counts new orders only
            figures["nopm_per_usd"] = nopm / price
            figures["usd_per_nopm"] = price / nopm if nopm else None
            used.append(f"NOPM: {_fmt(nopm)} from the same point (new orders a minute: TPC-C's tpmC)")
        if isinstance(knee, dict) and _num(knee.get("tps")):
            used.append(f"knee: {_fmt(knee['tps'])} TPS at {knee.get('clients')} clients (reported, not used)")
    elif isinstance(targets, list) and targets and isinstance(targets[0], dict) \
            and isinstance(targets[0].get("summary"), dict):
        kind = "probe"
        s = targets[0]["summary"]
        path = targets[0].get("path")
        iops = {k: s.get(k) for k in ("read_iops_4k", "write_iops_4k", "mixed_iops_8k") if _num(s.get(k))}
        mbps = s.get("read_mbps_seq") if _num(s.get("read_mbps_seq")) else None
        if not iops and mbps is None:
            raise DbtierError(f"{source}: the probe of {path} has no IOPS or MB/s in targets[0].summary "
                              "(it stopped before measuring them)", "pass a probe run that finished")
        measured = {"target": path, **iops, "read_mbps_seq": mbps,
                    "write_mbps_seq": s.get("write_mbps_seq") if _num(s.get("write_mbps_seq")) else None}
        headline = next((k for k in ("mixed_iops_8k", "read_iops_4k", "write_iops_4k") if k in iops), None)
        if headline:
            figures["iops_per_usd"] = iops[headline] / price
            figures["usd_per_iops"] = price / iops[headline]
            what = {"mixed_iops_8k": "8 KiB 70/30 random read/write peak", "read_iops_4k": "4 KiB random read peak",
                    "write_iops_4k": "4 KiB random write peak"}
            used.append(f"IOPS: {headline} = {_fmt(iops[headline])} ({what[headline]}) from targets[0].summary "
                        f"({path}) of {source}")
            figures.update({f"iops_per_usd_{k.replace('_iops', '')}": v / price for k, v in iops.items()})
        if mbps is not None:
            figures["mbps_per_usd"] = mbps / price
            used.append(f"MB/s: read_mbps_seq = {_fmt(mbps)} (sequential read) from the same summary")
        if len(targets) > 1:
            used.append(f"the run probed {len(targets)} targets; only the first ({path}) is used")
        used.append("TPS/TPM: a probe measures no transactions")
    else:
        raise DbtierError(f"{source}: a {doc.get('command') or 'unknown'} run with neither a probe summary "
                          "(targets[0].summary) nor OLTP points (points[] with tps)",
                          "pass a `dbtier probe` or `dbtier bench oltp` run directory")
    used.append("the measured figures are taken as what this configuration delivers; dbtier does not check that "
                "the run was on it")
    return Value(kind, e, measured, figures, used)
