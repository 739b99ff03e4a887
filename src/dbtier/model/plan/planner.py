"""The planner: equal performance, equal budget, the cheapest configuration for a requirement, price/performance.

Pure: a catalog and numbers (or an already loaded result document) in, plain
results out. The array model, its layouts and what limits each figure are in
`dbtier.model.plan.array`; this module searches over it.

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
- `size` (the cheapest configuration for a requirement, with endurance, durable writes and cost
  over the service life): `dbtier.model.plan.sizing`; the requirement: `dbtier.model.plan.requirement`.
- `value`: price/performance of a measured run for a configuration priced from
  the catalog: a probe run gives IOPS from `targets[0].summary`
  (mixed_iops_8k as the headline, the OLTP-like 8 KiB 70/30 mix; read_iops_4k
  and write_iops_4k beside it) and MB/s from read_mbps_seq; an OLTP bench run
  gives TPS and TPM from its best point (the highest tps in `points[]`; its
  `knee` is reported too). $/GB is per usable GB of the configuration. The
  measured figures are taken as what the configuration delivered: the run is not
  checked against it.

Cloud volumes (kind cloud-volume) are replicated by their provider: every action takes them as a stripe
(jbod or raid0) and refuses a parity or mirror layout over them (`dbtier.model.plan.search.check_stripe_only`).

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
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from dbtier.core.errors import DbtierError
from dbtier.model.plan.array import (DEFAULT_READ_FRACTION, EPS, SET_LAYOUTS, Config, Evaluation, check_layout,
                                check_read_fraction, check_server_ports, configure, count_step, evaluate, min_count,
                                valid_counts_from)
from dbtier.model.plan.catalog import Catalog, Device
from dbtier.model.plan.requirement import (CATEGORY, LABELS, REQUIREMENT_KEYS, Requirement, positive,  # noqa: F401
                                      meets, requirement_from_history)
from dbtier.model.plan.search import (DEFAULT_CACHE_FRACTION, DEFAULT_MAX_DEVICES, check_stripe_only, fmt,  # noqa: F401
                                 smallest_count)
from dbtier.model.plan.service import Terms
from dbtier.model.plan.sizing import Candidate, Sizing, size  # noqa: F401
from dbtier.model.plan.tco import tco


def _full_load_tco(e: Evaluation, terms: Terms | None) -> dict[str, Any]:
    """Cost over the service life of an array run at the load it is compared on (active watts, no wear:
    equal performance, budget and a measured run carry no written bytes a day)."""
    t = terms or Terms()
    out = tco(e, t.service_years, t.usd_per_kwh, 1.0)
    out["basis"] = ("active watts (the array at the load it is compared on); replacements not priced: "
                    "no written bytes a day (see plan size --write-tb-per-day)")
    return out

EQUIVALENT_MAX_COUNT = 10_000_000


# -- equal performance ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Match:
    metric: str
    count: int
    evaluation: Evaluation
    reference_value: str      # what had to be matched, in words
    price_usd: float
    reference_price_usd: float
    tco: dict[str, Any] | None = None
    reference_tco: dict[str, Any] | None = None

    @property
    def price_ratio(self) -> float:
        return self.price_usd / self.reference_price_usd if self.reference_price_usd else math.inf

    @property
    def tco_ratio(self) -> float | None:
        if not self.tco or not self.reference_tco or not self.reference_tco["total_usd"]:
            return None
        return float(self.tco["total_usd"] / self.reference_tco["total_usd"])

    def contract(self) -> dict[str, Any]:
        return {"count": self.count, "price_usd": self.price_usd, "reference_price_usd": self.reference_price_usd,
                "price_ratio": self.price_ratio, "tco": self.tco, "reference_tco": self.reference_tco,
                "tco_ratio": self.tco_ratio}


@dataclass(frozen=True)
class Equivalence:
    reference: Evaluation
    using: Device
    layout: str
    read_fraction: float
    by_metric: dict[str, Match]


def equivalent(catalog: Catalog, reference: str, using: str, read_fraction: float = DEFAULT_READ_FRACTION,
               layout: str = "jbod", max_count: int = EQUIVALENT_MAX_COUNT, server_ports: int | None = None,
               devices_only: bool = False, terms: Terms | None = None) -> Equivalence:
    """How many `using` devices (in `layout`, with overhead) match one `reference` device on each metric.

    Each side is priced on a server with `server_ports` drive ports of its own (None: the catalog's)."""
    check_read_fraction(read_fraction)
    check_layout(layout, SET_LAYOUTS)
    ports = check_server_ports(catalog.server_ports if server_ports is None else server_ports)
    ref = evaluate(configure(catalog, reference, 1, "jbod", server_ports=ports, devices_only=devices_only),
                   read_fraction)
    dev = catalog.device(using)
    check_stripe_only(dev, layout)
    ovs = tuple(catalog.overheads_for(dev))

    def ev(n: int) -> Evaluation:
        return evaluate(Config(dev, n, layout, ovs, server_ports=ports, devices_only=devices_only), read_fraction)

    tests: dict[str, tuple[Callable[[Evaluation], bool], str, Callable[[Evaluation], str]]] = {
        "iops": (lambda e: e.iops.value >= ref.iops.value * (1 - EPS),
                 f"{fmt(ref.iops.value)} IOPS at {read_fraction:.0%} reads",
                 lambda e: f"{fmt(e.iops.value)} IOPS"),
        "throughput": (lambda e: e.read_mbps.value >= ref.read_mbps.value * (1 - EPS)
                       and e.write_mbps.value >= ref.write_mbps.value * (1 - EPS),
                       f"{fmt(ref.read_mbps.value)} MB/s read and {fmt(ref.write_mbps.value)} MB/s write",
                       lambda e: f"{fmt(e.read_mbps.value)} MB/s read, {fmt(e.write_mbps.value)} MB/s write"),
        "capacity": (lambda e: e.capacity_gb.value >= ref.capacity_gb.value * (1 - EPS),
                     f"{fmt(ref.capacity_gb.value)} GB", lambda e: f"{fmt(e.capacity_gb.value)} GB"),
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
        out[metric] = Match(metric, n, e, what, e.price_usd, ref.price_usd, _full_load_tco(e, terms),
                            _full_load_tco(ref, terms))
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
    tco: dict[str, Any] | None = None  # cost over the service life of what the budget buys

    def contract(self) -> dict[str, Any]:
        e = self.evaluation
        return {"device": self.device.id, "count": self.count,
                "price_usd": e.price_usd if e else 0,
                "capacity_gb": e.capacity_gb.value if e else 0,
                "iops": e.iops.value if e else 0,
                "read_mbps": e.read_mbps.value if e else 0,
                "write_mbps": e.write_mbps.value if e else 0,
                "read_latency_us": e.read_latency_us.value if e else None,
                "write_latency_us": e.write_latency_us.value if e else None, "tco": self.tco}


def budget(catalog: Catalog, usd: float, devices: Sequence[str], layout: str = "jbod",
           read_fraction: float = DEFAULT_READ_FRACTION, server_ports: int | None = None,
           devices_only: bool = False, terms: Terms | None = None) -> list[BudgetOption]:
    """The most of each device `usd` buys in `layout`, overhead included (unless `devices_only`)."""
    positive("budget (--usd)", usd)
    check_read_fraction(read_fraction)
    check_layout(layout, SET_LAYOUTS)
    ports = check_server_ports(catalog.server_ports if server_ports is None else server_ports)
    if not devices:
        raise DbtierError("no devices to compare", "give --devices ID,ID,...")
    for did in devices:
        check_stripe_only(catalog.device(did), layout)
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
        out.append(BudgetOption(dev, layout, n, e, price(smallest), usd, _full_load_tco(e, terms) if e else None))
    if not any(o.count for o in out):
        cheapest = min(out, key=lambda o: o.smallest_price_usd)
        raise DbtierError(f"a budget of ${fmt(usd)} buys no {layout} array of any of these devices; the cheapest, "
                          f"{min_count(layout)} x {cheapest.device.id} with its overhead, costs "
                          f"${fmt(cheapest.smallest_price_usd)}",
                          "raise --usd, or choose cheaper devices or a layout that needs fewer of them")
    return out


# -- price / performance of a measured run ---------------------------------------------------------------

@dataclass(frozen=True)
class Value:
    kind: str                       # "probe" or "bench"
    evaluation: Evaluation
    measured: dict[str, Any]
    figures: dict[str, float | None]
    figures_used: list[str]
    tco: dict[str, Any] | None = None
    figures_tco: dict[str, float | None] | None = None   # the same figures per dollar of cost over the life


def _num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def value(doc: dict[str, Any], e: Evaluation, source: str = "the run", terms: Terms | None = None) -> Value:
    """TPM/$, TPS/$, IOPS/$, MB/s per $ and $/GB of a measured run, priced as configuration `e`; NOPM/$
    (new orders a minute, TPC-C's tpmC) too when the bench run's best point has NOPM (tpcc)."""
    c = e.config
    check_stripe_only(c.device, c.layout, c.second, c.second_layout)
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
    used = [f"price: ${fmt(price)} for {e.config.describe()} from the catalog "
            f"(${fmt(e.device_price_usd)} devices + ${fmt(e.overhead_price_usd)} overhead); "
            f"$/GB per usable GB ({fmt(cap)} GB)",
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
        used.append(f"TPS: {fmt(tps)}, the best of {len(good)} points in points[] (at {best.get('clients')} clients)"
                    f" of {source}")
        if tpm is not None:
            figures["tpm_per_usd"] = tpm / price
            figures["usd_per_tpm"] = price / tpm if tpm else None
            used.append(f"TPM: {fmt(tpm)} from the same point")
        else:
            used.append("TPM: not in the best point; TPM/$ not computed")
        nopm = measured["nopm"]
        if nopm is not None:
            # TPC-C's tpmC (and tpcc-mysql's "TpmC", the MySQL study's TPM) counts new orders only
            figures["nopm_per_usd"] = nopm / price
            figures["usd_per_nopm"] = price / nopm if nopm else None
            used.append(f"NOPM: {fmt(nopm)} from the same point (new orders a minute: TPC-C's tpmC)")
        if isinstance(knee, dict) and _num(knee.get("tps")):
            used.append(f"knee: {fmt(knee['tps'])} TPS at {knee.get('clients')} clients (reported, not used)")
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
            used.append(f"IOPS: {headline} = {fmt(iops[headline])} ({what[headline]}) from targets[0].summary "
                        f"({path}) of {source}")
            figures.update({f"iops_per_usd_{k.replace('_iops', '')}": v / price for k, v in iops.items()})
        if mbps is not None:
            figures["mbps_per_usd"] = mbps / price
            used.append(f"MB/s: read_mbps_seq = {fmt(mbps)} (sequential read) from the same summary")
        if len(targets) > 1:
            used.append(f"the run probed {len(targets)} targets; only the first ({path}) is used")
        used.append("TPS/TPM: a probe measures no transactions")
    else:
        raise DbtierError(f"{source}: a {doc.get('command') or 'unknown'} run with neither a probe summary "
                          "(targets[0].summary) nor OLTP points (points[] with tps)",
                          "pass a `dbtier probe` or `dbtier bench oltp` run directory")
    used.append("the measured figures are taken as what this configuration delivers; dbtier does not check that "
                "the run was on it")
    cost = _full_load_tco(e, terms)
    scale = price / cost["total_usd"] if cost["total_usd"] else None
    per_tco = {k: (None if v is None or scale is None else (v / scale if k.startswith("usd_per") else v * scale))
               for k, v in figures.items()}
    used.append(f"cost over {cost['service_years']:g} years: ${fmt(cost['total_usd'])} ({cost['basis']}); "
                "value_tco gives every figure per dollar of it")
    return Value(kind, e, measured, figures, used, cost, per_tco)
