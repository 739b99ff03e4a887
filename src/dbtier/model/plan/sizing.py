"""`plan size`: the cheapest configuration a storage architect would sign for a requirement.

Pure: a catalog, a requirement and the service-life terms in, ranked candidates out.

Every device x layout (and the mixed designs: a preferred-read mirror of flash with a cheaper set,
a flash read cache in front of a cheaper backing set; see `dbtier.model.plan.search`) at the smallest
count that meets the requirement with headroom (`dbtier.model.plan.requirement`), with the devices as
they are sized over the service life (`dbtier.model.plan.service`):

- random writes are sized on the sustained figure (after the SLC cache, on a full drive); the burst
  figure only where `--write-burst-seconds` says the writes come in bursts that fit each device's
  write cache at the resulting count (single-set designs);
- durable writes required (the default whenever the requirement writes): a device without
  power-loss protection is sized on its flush-bound write rate or dropped; `no` for a scratch tier;
- wear: with `worn` = fail (the default) the count grows until every device lasts the service life
  (flash) or stays within its workload rating (HDD), and a design no count makes last is dropped;
  with replace, worn devices are bought again and priced;
- a clustered database (2 or more instances) keeps only storage every node reaches (`shared_access`).

Shared arrays (`dbtier.model.plan.shared_array`, the shipped `arrays.toml` unless `arrays` is given) are
designs of their own: a controller pair, shelves and the smallest drive count behind it that meets the
requirement; performance is the least of the drives (after the protection's write cost) and the
controllers' ceiling. Every node of a cluster reaches them. Their capacity assumes the terms'
`data_reduction` (1.0:1 unless said) and every array candidate says so (its `array` object and its
`binding_detail`). With `devices`, only the arrays it names are tried. A user catalog's own
kind = "shared-array" devices (one device per usable TB with a controller overhead) still load and are
sized as before, as devices.

Cloud volumes (kind cloud-volume) are not on-prem storage: the search leaves them out unless `devices`
names them, and then builds stripes of them only (`dbtier.model.plan.search.STRIPE_ONLY_KINDS`: the provider
replicates each volume); `plan size --cloud PROVIDER` (`dbtier.model.cloud.sizing`) sizes them in full.

Designs of the same devices and counts at the same price (and the same replacements over the service
life) that differ only in layout (2 disks as raid1 or as mirror2, 6 as raid10 or raid5; a read cache's
backing set as raid10 or raid5) are one purchase: they are folded into one candidate before the top N
are cut, so the top N are N different purchases. The candidate is the layout that survives the most
device failures whatever devices fail (`failures_survived`), on a tie the first in `array.LAYOUTS`; its
figures are the ones shown and ranked (energy, and so the cost over the life, may differ a little by
the layouts' write work); `layouts` names every layout folded into it, that one first.

Candidates are ranked by cost over the service life (`tco.total_usd`) or, with cost = purchase, by
the price paid today (the studies' basis). With redundancy "required" (the default) only layouts
that survive a device failure are kept, plus stripes of cloud volumes and shared arrays, whose
provider or controllers replicate. Each set has at most `max_devices` devices. A read cache's
backing set is raid10, raid5 or raid6 (raid0 too without redundancy); since a hit ratio presumes the
hot data fits, the cache set holds at least `cache_fraction` of the backing set's capacity.

`binding` says what drove the cheapest choice: "durability" or "endurance" when the cheapest design
by purchase price (on the catalog's own figures) was dropped or grown for unprotected writes or for
wear; "latency" when a cheaper configuration met every other requirement but not the latency
ceiling; otherwise the one among iops, throughput and capacity whose own smallest configuration of
the winning design costs the most (on a tie, the one with the least margin); a candidate whose count
was raised so that it lasts says "endurance".
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

from dbtier.core.errors import DbtierError
from dbtier.model.plan.array import (DEFAULT_HIT_RATIO, DEFAULT_READ_FRACTION, EPS, LAYOUTS, Config, Evaluation,
                                check_hit_ratio, check_read_fraction, check_server_ports, evaluate)
from dbtier.model.plan.catalog import Catalog, Device
from dbtier.model.plan.requirement import CATEGORY, LABELS, Requirement, meets
from dbtier.model.plan.search import (DEFAULT_CACHE_FRACTION, DEFAULT_MAX_DEVICES, STRIPE_ONLY_KINDS, Shape, fmt, Search,
                                 shapes)
from dbtier.model.plan.service import Life, Sized, Terms
from dbtier.model.plan.shared_array import Array, ArrayConfig, array_device, design, shipped_arrays, targets


@dataclass(frozen=True)
class Candidate:
    evaluation: Evaluation
    meets: dict[str, dict[str, Any]]
    binding: str
    binding_detail: str
    life: dict[str, Any] | None = None     # endurance, endurance_reason, durable_writes, sized_on, tco
    layouts: tuple[str, ...] = ()          # the layouts folded into this design, its own first
    second_layouts: tuple[str, ...] = ()   # a read cache's: the backing layouts folded into it, its own first
    array: dict[str, Any] | None = None    # a shared array's parts, prices, what set its drives, what binds

    def cost(self, basis: str) -> float:
        """What ranks it: cost over the service life (tco) or the purchase price."""
        if basis == "tco" and self.life is not None:
            return float(self.life["tco"]["total_usd"])
        return self.evaluation.price_usd

    def contract(self) -> dict[str, Any]:
        e = self.evaluation
        d = e.to_dict()
        return {"device": d["device"], "count": d["count"], "layout": d["layout"],
                "device_class": e.config.device.device_class,
                "layouts": list(self.layouts or (d["layout"],)), "price_usd": e.price_usd,
                "capacity_gb": e.capacity_gb.value, "read_iops": e.read_iops.value,
                "write_iops": e.write_iops.value, "read_mbps": e.read_mbps.value, "write_mbps": e.write_mbps.value,
                "meets": self.meets,
                # beyond the contract: the rest of the configuration and why this count
                # a read cache's backing set names the layouts folded into it
                **({"second": {**d["second"], "layouts": list(self.second_layouts or (d["second"]["layout"],))}
                    if d["layout"] == "read-cache" else d["second"]} if "second" in d else {}),
                **({"hit_ratio": d["hit_ratio"]} if "hit_ratio" in d else {}),
                "spec": d["spec"], "description": d["description"], "redundant": d["redundant"],
                "read_latency_us": e.read_latency_us.value, "write_latency_us": e.write_latency_us.value,
                "binding": self.binding, "binding_detail": self.binding_detail,
                "overheads": d["overheads"], "limits": d["limits"], **({"array": self.array} if self.array else {}),
                **(self.life or {})}


@dataclass(frozen=True)
class Sizing:
    requirement: Requirement
    candidates: list[Candidate]          # the top N, ranked by the terms' cost
    found: int                           # designs that meet the requirement (layouts folded; before the top N cut)
    binding: str
    binding_detail: str
    considered: int                      # designs tried
    redundancy: str
    layouts: tuple[str, ...]
    hit_ratio: float
    max_devices: int
    cheaper_without_latency: Candidate | None = None
    terms: Terms = Terms()
    life: Life | None = None
    dropped: tuple[dict[str, Any], ...] = ()           # devices left out (durability, topology), with why
    cheaper_by_purchase: dict[str, Any] | None = None  # the naive cheapest design, and why it is not the answer
    cloud_left_out: tuple[str, ...] = ()               # cloud volumes the default search leaves to --cloud


# A design that meets the requirement: its shape, evaluation, the figures met (meets) and its life (Life.figures).
Found = tuple[Shape, Evaluation, dict[str, dict[str, Any]], dict[str, Any]]

# Device failures a single-set layout of n devices survives whatever devices fail: raid10 survives one (a
# second may take the same pair's other half); stripes survive none. What folding prefers.
def failures_survived(layout: str, n: int) -> int:
    return {"raid1": n - 1, "raid10": 1, "raid5": 1, "raid6": 2, "mirror2": 1, "mirror3": 2}.get(layout, 0)


def _same(a: float, b: float) -> bool:
    return abs(a - b) <= EPS * max(abs(a), abs(b), 1.0)


def _varied(t: tuple[Any, ...]) -> tuple[str, int]:
    """The layout folding may vary, and its count: a single set's, or a read cache's backing set's."""
    shape, c = t[0], t[1].config
    return (shape.second_layout, c.second_count) if shape.layout == "read-cache" else (shape.layout, c.count)


def fold(designs: Sequence[tuple[Any, ...]], spent: Callable[[tuple[Any, ...]], float]
         ) -> list[tuple[tuple[Any, ...], tuple[str, ...]]]:
    """Designs (shape, evaluation, ...) with those of the same devices and counts at the same price and the
    same `spent` (what else is bought for them: replacements) that differ only in layout (a read cache: in
    its backing set's) folded into one, in the order of the first of each: (the preferred one, the layouts
    folded, its own first). Preferred: the layout that survives the most device failures
    (`failures_survived`), on a tie the first in `array.LAYOUTS`. A preferred-read mirror has one layout."""
    groups: list[list[tuple[Any, ...]]] = []
    open_groups: dict[tuple[Any, ...], list[list[tuple[Any, ...]]]] = {}
    for t in designs:
        shape, c = t[0], t[1].config
        mixed = shape.second is not None
        if mixed and shape.layout != "read-cache":
            groups.append([t])
            continue
        key = (shape.device.id, c.count, shape.layout if mixed else "", shape.second.id if mixed else "",
               c.second_count if mixed else 0)
        same_buy = open_groups.setdefault(key, [])
        for g in same_buy:
            if _same(g[0][1].price_usd, t[1].price_usd) and _same(spent(g[0]), spent(t)):
                g.append(t)
                break
        else:
            same_buy.append([t])
            groups.append(same_buy[-1])
    out = []
    for g in groups:
        g = sorted(g, key=lambda t: (-failures_survived(*_varied(t)), LAYOUTS.index(_varied(t)[0])))
        out.append((g[0], tuple(_varied(t)[0] for t in g)))
    return out


def _binding(search: Search, shape: Shape, e: Evaluation, m: dict[str, dict[str, Any]],
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
        return float(min(v["margin"] for k, v in m.items() if CATEGORY[k] == c))

    pick = min(tied, key=margin)
    alone = "; ".join(f"{c} alone needs {desc} (${fmt(p)})" for c, (p, desc) in prices.items())
    if len(cats) == 1:
        return pick, f"the only requirement besides latency: {alone}"
    why = ("it alone needs the most" if len(tied) == 1
           else "the requirements tie on price (the layout's smallest array meets them), and it has the least margin")
    return pick, f"{why}: {alone}"



def size(catalog: Catalog, req: Requirement, devices: Sequence[str] | None = None,
         layouts: Sequence[str] = LAYOUTS, redundancy: str = "required", hit_ratio: float = DEFAULT_HIT_RATIO,
         max_devices: int = DEFAULT_MAX_DEVICES, read_fraction: float | None = None, top: int = 10,
         cache_fraction: float = DEFAULT_CACHE_FRACTION, server_ports: int | None = None,
         devices_only: bool = False, terms: Terms = Terms(), arrays: Sequence[Array] | None = None) -> Sizing:
    """The `top` cheapest designs under `terms`, each at the smallest count meeting `req` with headroom.

    `arrays`: the shared arrays to try (None: the shipped ones)."""
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise DbtierError(f"--top must be a whole number of at least 1, got {top}", "e.g. --top 10")
    check_hit_ratio(hit_ratio)
    if isinstance(max_devices, bool) or not isinstance(max_devices, int) or max_devices < 1:
        raise DbtierError(f"--max-devices must be a whole number of at least 1, got {max_devices}",
                          "e.g. --max-devices 1024")
    offered = [a for a in (shipped_arrays() if arrays is None else arrays) if a.id not in catalog.devices]
    if devices:
        named = {a.id: a for a in offered}
        offered = [named[d] for d in dict.fromkeys(devices) if d in named]
        raw, cloud = [catalog.device(d) for d in devices if d not in named], []
    else:
        every = list(catalog.devices.values())
        raw = [d for d in every if d.kind not in STRIPE_ONLY_KINDS]
        cloud = [d.id for d in every if d.kind in STRIPE_ONLY_KINDS]
        if not raw:
            raise DbtierError(f"the catalog holds only cloud volumes ({', '.join(cloud)}): `plan size` sizes "
                              "on-prem storage", "use --cloud aws|azure|gcp, or name the volumes with --devices "
                              "to size them as stripes")
    if read_fraction is None:  # the requirement's own mix, for $/IOPS
        total = (req.read_iops or 0.0) + (req.write_iops or 0.0)
        read_fraction = (req.read_iops or 0.0) / total if total else DEFAULT_READ_FRACTION
    check_read_fraction(read_fraction)
    raw = raw + [array_device(a, terms.data_reduction) for a in offered]
    amap = {a.id: a for a in offered}
    if not (isinstance(cache_fraction, (int, float)) and math.isfinite(cache_fraction) and 0 <= cache_fraction <= 1):
        raise DbtierError(f"--cache-fraction must be between 0 and 1, got {cache_fraction}",
                          "e.g. --cache-fraction 0.1")
    ports = check_server_ports(catalog.server_ports if server_ports is None else server_ports)
    life = Life(req, terms, hit_ratio)
    kept, dropped = life.sized(raw)
    if not kept:
        _all_dropped(raw, dropped, life)
    by_device: dict[Device, Sized] = {s.device: s for s in kept}
    all_shapes = shapes([s.device for s in kept], layouts, redundancy, amap)
    if not all_shapes and kept and all(s.device.kind in STRIPE_ONLY_KINDS for s in kept):
        what = "a cloud volume" if len(kept) == 1 else "cloud volumes"
        raise DbtierError(f"no design to try: {', '.join(s.device.id for s in kept)}: {what}, which the provider "
                          f"replicates, sized as a stripe only (raid0); the layouts {', '.join(layouts)} have none",
                          "add raid0 to --layouts, or size cloud storage with --cloud aws|azure|gcp")
    if not all_shapes:
        raise DbtierError(f"no design to try: the layouts {', '.join(layouts)} give no redundancy and "
                          "--redundancy is required",
                          "add a redundant layout (raid10, raid5, raid6, mirror2 ...) or use --redundancy none")
    dr = terms.data_reduction
    gm: dict[str, int] | None = {} if terms.wide_parity_groups else None
    search = Search(catalog, req, hit_ratio, max_devices, cache_fraction, ports, devices_only, life.wear_test(),
                    amap, dr, gm)
    free = Search(catalog, req, hit_ratio, max_devices, cache_fraction, ports, devices_only, None, amap, dr, gm)

    found: list[Found] = []
    cheaper_wo_latency: tuple[Shape, Evaluation, dict[str, dict[str, Any]]] | None = None
    for shape in all_shapes:
        options = [(shape, search.config(shape))]
        burst = life.burst_variant(by_device[shape.device]) if shape.second is None else None
        if burst is not None:
            by_device[burst.device] = burst
            bshape = replace(shape, device=burst.device)
            bcfg = search.config(bshape)
            if bcfg is not None and life.burst_fits(bcfg)[0]:
                options.append((bshape, bcfg))
        for sh, cfg in options:
            if cfg is None:
                continue
            e = evaluate(cfg, read_fraction)
            m = meets(e, req)
            failed = [k for k, v in m.items() if not v["met"]]
            if not failed:
                found.append((sh, e, m, life.figures(e, by_device)))
            elif failed == ["read_latency_us"] and (cheaper_wo_latency is None
                                                     or e.price_usd < cheaper_wo_latency[1].price_usd):
                cheaper_wo_latency = (sh, e, m)
    if not found:
        if life.wear_test() is not None and any(free.config(s) is not None for s in all_shapes):
            _worn_out(free, all_shapes, life, read_fraction)
        _unmeetable(search, all_shapes, req, read_fraction)

    def cost(t: Found) -> float:
        return float(t[3]["tco"]["total_usd"]) if terms.cost == "tco" else t[1].price_usd

    def rank(t: Found) -> tuple[float, float, int, str]:
        e = t[1]
        return (cost(t), -e.capacity_gb.value, e.config.count + e.config.second_count, e.config.spec)
    found.sort(key=rank)
    # one design per shape: a burst variant and its sustained twin are one design, the cheaper kept
    seen: set[tuple[str, str, str | None, str | None]] = set()
    unique = []
    for t in found:
        key = (t[0].device.id, t[0].layout, t[0].second.id if t[0].second else None, t[0].second_layout)
        if key not in seen:
            seen.add(key)
            unique.append(t)
    designs = fold(unique, lambda t: t[3].get("tco", {}).get("replacements_usd") or 0.0)
    designs.sort(key=lambda d: rank(d[0]))       # by the figures shown: the preferred layout's
    candidates = []
    for (shape, e, m, figs), lays in designs[:top]:
        b, why = _binding(search, shape, e, m, read_fraction)
        grown = _grown_by_wear(free, shape, e, life)
        if grown:
            b, why = "endurance", grown
        mine = (shape.layout,) if shape.layout == "read-cache" else lays
        arr = None
        if isinstance(e.config, ArrayConfig) and e.config.array is not None:
            tg = targets(req.target("read_iops"), req.target("write_iops"), req.target("read_mbps"),
                         req.target("write_mbps"), req.target("capacity_gb"))
            arr = design(e.config.array, e.config.count, tg, dr)
            why += (f"; {arr['id']}: {arr['drives']} drives on {arr['shelves']} shel"
                    f"{'f' if arr['shelves'] == 1 else 'ves'}, sized on {arr['sized_on']}, tightest limit "
                    f"{arr['limit']} ({arr['loads'][arr['limit']]:.0%} used); {arr['note']}")
        candidates.append(Candidate(e, m, b, why, figs, mine, lays if shape.layout == "read-cache" else (), arr))
    best = candidates[0]
    binding, detail = best.binding, best.binding_detail
    cheaper = None
    if cheaper_wo_latency is not None and cheaper_wo_latency[1].price_usd < best.evaluation.price_usd * (1 - EPS):
        s, e, m = cheaper_wo_latency
        cheaper = Candidate(e, m, "latency", "")
        binding = "latency"
        detail = (f"{e.config.describe()} would meet the rest for ${fmt(e.price_usd)} but reads in "
                  f"{fmt(e.read_latency_us.value)} µs, over the {fmt(req.max_read_latency_us or 0)} µs ceiling")
    naive = _cheapest_by_purchase(catalog, req, raw, layouts, redundancy, hit_ratio, max_devices, cache_fraction,
                                  ports, devices_only, read_fraction, life, best, by_device, dropped, amap)
    if naive is not None and naive["reason"] in ("durability", "endurance") and binding != "latency":
        binding, detail = naive["reason"], naive["detail"]
    return Sizing(req, candidates, len(designs), binding, detail, len(all_shapes), redundancy, tuple(layouts),
                  hit_ratio, max_devices, cheaper, terms, life, tuple(dropped), naive, tuple(cloud))


def _grown_by_wear(free: Search, shape: Shape, e: Evaluation, life: Life) -> str | None:
    """Why the design has more devices than its rates need, when wear is what grew it."""
    if life.wear_test() is None:
        return None
    cfg = free.config(shape)
    if cfg is None or (cfg.count, cfg.second_count) == (e.config.count, e.config.second_count):
        return None
    return (f"{cfg.describe()} would meet the rates but would not last the {life.terms.service_years:g}-year "
            f"service life; {e.config.describe()} spreads the writes so that every device does")


def _cheapest_by_purchase(catalog: Catalog, req: Requirement, raw: Sequence[Device], layouts: Sequence[str],
                          redundancy: str, hit_ratio: float, max_devices: int, cache_fraction: float, ports: int,
                          devices_only: bool, read_fraction: float, life: Life, best: Candidate,
                          by_device: dict[Device, Sized], dropped: Sequence[dict[str, Any]],
                          arrays: dict[str, Array] | None = None) -> dict[str, Any] | None:
    """The design the catalog's own (datasheet) figures make cheapest to buy, and why it is not the answer."""
    pool = [d for d in raw if not life.clustered or d.shared_access]
    naive_search = Search(catalog, req, hit_ratio, max_devices, cache_fraction, ports, devices_only, None, arrays,
                          life.terms.data_reduction, {} if life.terms.wide_parity_groups else None)
    top: tuple[float, Config] | None = None
    for sh in shapes(pool, layouts, redundancy, arrays or {}):
        cfg = naive_search.config(sh)
        if cfg is None:
            continue
        e = evaluate(cfg, read_fraction)
        if all(v["met"] for v in meets(e, req).values()) and (top is None or e.price_usd < top[0] * (1 - EPS)):
            top = (e.price_usd, cfg)
    if top is None:
        return None
    price, cfg = top
    w = best.evaluation.config
    if (cfg.spec == w.spec) or price >= best.evaluation.price_usd * (1 - EPS):
        return None
    out = {"design": cfg.describe(), "spec": cfg.spec, "price_usd": price}
    ids = {cfg.device.id} | ({cfg.second.id} if cfg.second else set())
    gone = [x for x in dropped if x["device"] in ids and x["reason"] == "durability"]
    sized = {s.raw.id: s for s in by_device.values()}
    flush = [sized[i] for i in ids if i in sized and sized[i].sized_on.get("write_iops") == "flush-bound"]
    end = life.endurance(cfg)[0]
    wear = [x for x in ((end.get("sets") or [end]) if end else []) if x.get("passes") is False]
    if gone:
        out.update(reason="durability", detail=f"the cheapest by purchase price, {cfg.describe()} at ${fmt(price)}, "
                                               f"was dropped: {gone[0]['detail']}")
    elif flush:
        out.update(reason="durability", detail=f"the cheapest by purchase price, {cfg.describe()} at ${fmt(price)}, "
                                               f"needs more devices at its flush-bound write rate: "
                                               f"{flush[0].durable.reason}")
    elif wear and life.terms.worn == "fail":
        out.update(reason="endurance", detail=f"the cheapest by purchase price, {cfg.describe()} at ${fmt(price)}, "
                                              f"would wear out: {wear[0]['reason']}")
    elif any(s.sized_on.get("write_iops") == "sustained" and s.raw.flash for i, s in sized.items() if i in ids):
        out.update(reason="sustained", detail=f"the cheapest by purchase price, {cfg.describe()} at ${fmt(price)}, "
                                              "was sized on its datasheet (burst) write figures; on its sustained "
                                              "figures it needs more")
    else:
        out.update(reason=life.terms.cost, detail=f"{cfg.describe()} costs less to buy (${fmt(price)}) but more "
                                                  f"over the {life.terms.service_years:g}-year service life")
    return out


def _all_dropped(raw: Sequence[Device], dropped: Sequence[dict[str, Any]], life: Life) -> None:
    why = "; ".join(x["detail"] for x in dropped[:4]) + (f"; and {len(dropped) - 4} more" if len(dropped) > 4 else "")
    if life.clustered and all(x["reason"] == "topology" for x in dropped):
        raise DbtierError(f"a clustered database ({life.req.instances or 'several'} instances) needs storage every "
                          f"node reaches, and none of the {len(raw)} devices offered is: {why}",
                          "add a shared array or a multi-attach volume (`dbtier catalog list` shows shared_access), "
                          "or --clustered no if the instances do not share storage")
    raise DbtierError(f"no device is left once durable writes are required: {why}",
                      "add devices with power-loss protection, give flush_write_iops in a --catalog entry, "
                      "pass --probe RUN_DIR, or --durable-writes no for a temp or scratch tier")


def _worn_out(free: Search, all_shapes: Sequence[Shape], life: Life, read_fraction: float) -> None:
    best: tuple[float, str] | None = None
    for s in all_shapes:
        cfg = free.config(s)
        if cfg is None:
            continue
        e = life.endurance(cfg)[0]
        if e and e.get("lifetime_years") is not None and (best is None or e["lifetime_years"] > best[0]):
            best = (e["lifetime_years"], f"{cfg.describe()}: {e['reason']}")
    years = life.terms.service_years
    raise DbtierError(f"no design that meets the rates lasts the {years:g}-year service life within "
                      f"{free.max:,} devices per set" + (f"; the longest-lived is {best[1]}" if best else ""),
                      "use --worn replace to price replacements, shorten --service-years, give the database's "
                      "own --write-tb-per-day (the default holds the peak for 24 h), or add higher-endurance devices")

def _unmeetable(search: Search, all_shapes: Sequence[Shape], req: Requirement, read_fraction: float) -> None:
    """Raise the clearest message for a requirement no design meets: which one, and the best reachable figure."""
    note = f" within {search.max:,} devices per set"
    pool = list(all_shapes)
    if req.max_read_latency_us is not None:
        evs = [(s, evaluate(search.largest(s), read_fraction)) for s in pool]
        lat_ok = [s for s, e in evs if e.read_latency_us.value <= req.max_read_latency_us * (1 + EPS)]
        if not lat_ok:
            s, e = min(evs, key=lambda t: t[1].read_latency_us.value)
            raise DbtierError(
                f"no configuration meets the read latency ceiling of {fmt(req.max_read_latency_us)} µs; the best "
                f"reachable is {fmt(e.read_latency_us.value)} µs ({s.device.id}, {s.layout})",
                "raise --max-read-latency-us, or add a faster device with --catalog")
        pool = lat_ok
        note += f" among designs reading in at most {fmt(req.max_read_latency_us)} µs"
    tops = [(s, evaluate(search.largest(s), read_fraction)) for s in pool]
    for k in req.given():
        best_val, best_desc = -1.0, ""
        reach = False
        for _s, e in tops:
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
                f"no configuration meets the {LABELS[k]} requirement of {fmt(getattr(req, k))} "
                f"({fmt(req.target(k))} with {req.headroom:.0%} headroom){note}; the best reachable is "
                f"{fmt(best_val)} {LABELS[k]}{concurrent} ({best_desc})",
                "lower the requirement or --headroom, raise --max-devices, allow more --layouts, "
                "use --redundancy none, or add devices with --catalog")
    raise DbtierError(
        f"no single configuration meets {', '.join(LABELS[k] for k in req.keys())} together{note}: each is "
        "reachable alone, by different designs",
        "relax one of the requirements, raise --max-devices or allow more --layouts")

