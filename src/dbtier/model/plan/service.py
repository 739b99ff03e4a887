"""What a design must do over its service life beyond the rates: the terms of `plan size` and, per
design, the figures it was sized on, its endurance, its durable writes and its cost over time.

Pure. `Terms` carries the options; `Life` applies them to a requirement: the host's average day
(`dbtier.model.plan.endurance`), the durable-writes policy (`dbtier.model.plan.power_loss`), the devices as they
are sized (their sustained or burst write figures, or the flush-bound rate of an unprotected
device), the wear test the count search uses, and each candidate's `endurance`, `durable_writes`,
`sized_on` and `tco` objects (`dbtier.model.plan.tco`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Sequence

from dbtier.core.errors import DbtierError
from dbtier.model.plan.array import Config, Evaluation
from dbtier.model.plan.catalog import Device
from dbtier.model.plan.power_loss import Durable, ProbeFlush, check_policy, judge, policy_for
from dbtier.model.plan.endurance import (DEFAULT_SERVICE_YEARS, PAGE_BYTES, HostWrites, SetLoad, check_service_years,
                                    check_waf, host_writes, lasts, layout_write_factor, replacements, set_endurance)
from dbtier.model.plan.requirement import Requirement
from dbtier.model.plan.shared_array import check_data_reduction
from dbtier.model.plan.tco import DEFAULT_USD_PER_KWH, USD_PER_KWH_SOURCE, check_usd_per_kwh, tco, utilisation

WORN = ("fail", "replace")
COSTS = ("tco", "purchase")
MAX_BURST_SECONDS = 86_400


@dataclass(frozen=True)
class Terms:
    """The service-life options of `plan size` (and the cost basis of every plan action)."""
    service_years: float = DEFAULT_SERVICE_YEARS
    worn: str = "fail"                      # a design that wears out early: fail, or priced with replacements
    waf: float | None = None                # device write amplification (None: the class default)
    durable_writes: str | None = None       # required | no | None (required when the requirement writes)
    write_burst_seconds: float | None = None  # writes come in bursts this long (burst figures where they fit)
    usd_per_kwh: float = DEFAULT_USD_PER_KWH
    cost: str = "tco"                       # what ranks the candidates: tco or purchase
    probe: ProbeFlush | None = None         # this machine's commit rate, for unprotected devices
    clustered: bool | None = None           # None: from the requirement's instances
    data_reduction: float = 1.0             # a shared array's dedupe + compression, x:1 (an assumption, said)
    wide_parity_groups: bool = False        # RAID 5/6 sets wider than search.PARITY_GROUP_MAX may be sized

    def __post_init__(self) -> None:
        check_service_years(self.service_years)
        check_waf(self.waf)
        check_policy(self.durable_writes)
        check_usd_per_kwh(self.usd_per_kwh)
        check_data_reduction(self.data_reduction)
        if self.worn not in WORN:
            raise DbtierError(f"--worn must be 'fail' or 'replace', got '{self.worn}'",
                              "fail drops a design that wears out early; replace prices its replacements")
        if self.cost not in COSTS:
            raise DbtierError(f"--cost must be 'tco' or 'purchase', got '{self.cost}'",
                              "tco ranks by cost over the service life; purchase by the price paid today")
        b = self.write_burst_seconds
        if b is not None and (isinstance(b, bool) or not isinstance(b, (int, float)) or not math.isfinite(b)
                              or not 0 < b <= MAX_BURST_SECONDS):
            raise DbtierError(f"--write-burst-seconds must be a number of seconds from 0 to {MAX_BURST_SECONDS:,} "
                              f"(a day), got {b}", "e.g. --write-burst-seconds 60")

    def to_dict(self) -> dict[str, Any]:
        return {"service_years": self.service_years, "worn": self.worn, "waf": self.waf,
                "durable_writes": self.durable_writes, "write_burst_seconds": self.write_burst_seconds,
                "usd_per_kwh": self.usd_per_kwh, "usd_per_kwh_source": (
                    USD_PER_KWH_SOURCE if self.usd_per_kwh == DEFAULT_USD_PER_KWH else "--usd-per-kwh"),
                "cost": self.cost, "probe": self.probe.to_dict() if self.probe else None,
                "clustered": self.clustered, "data_reduction": self.data_reduction,
                "wide_parity_groups": self.wide_parity_groups}


@dataclass(frozen=True)
class Sized:
    """A catalog device as it is sized: its write figures replaced by what it sustains under the terms."""
    device: Device          # the effective device (write_iops/write_mbps as sized)
    raw: Device             # the catalog's entry
    durable: Durable
    sized_on: dict[str, Any]


def _with_writes(d: Device, durable: Durable, burst: bool) -> tuple[Device, dict[str, Any]]:
    """The device with the write figures it is sized on, and `sized_on` saying which."""
    on: dict[str, Any] = {}
    notes: list[str] = []
    unchecked: list[str] = []
    w_iops, w_mbps, w_lat = d.write_iops, d.write_mbps, d.write_latency_us
    for key, sustained in (("write_iops", d.sustained_write_iops), ("write_mbps", d.sustained_write_mbps)):
        if not d.flash:
            on[key] = "sustained"
        elif burst:
            on[key] = "burst"
        elif sustained is not None:
            on[key] = "sustained"
            if key == "write_iops":
                w_iops = sustained
            else:
                w_mbps = sustained
        else:
            on[key] = "burst"
            unchecked.append(f"sustained_{key}")
    if not d.flash:
        notes.append(f"{d.kind}: the rated write figures are sustained ones")
    elif burst:
        notes.append("burst figures: the requirement's write bursts fit the drive's write cache")
    if unchecked:
        notes.append(f"{d.id} has no {' or '.join(unchecked)}: sized on the datasheet (burst) figure, "
                     "unchecked for sustained writes")
    if durable.flush_write_iops is not None and durable.flush_write_iops < w_iops:
        w_iops = durable.flush_write_iops
        w_lat = max(w_lat, 1e6 / durable.flush_write_iops)
        on["write_iops"] = "flush-bound"
        notes.append(f"no power-loss protection: random writes at the flush-bound {w_iops:,.0f} IOPS "
                     f"({durable.flush_source})")
    on.update({"write_iops_value": w_iops, "write_mbps_value": w_mbps, "unchecked": unchecked,
               "detail": "; ".join(notes)})
    return replace(d, write_iops=w_iops, write_mbps=w_mbps, write_latency_us=w_lat), on


def _role_load(role: str, weights: Sequence[float], host: HostWrites, hit_ratio: float | None) -> SetLoad:
    """A set's share of the host's day: a read cache's set writes what read misses fill into it."""
    if role == "cache set":
        h = hit_ratio if hit_ratio is not None else 0.0
        return SetLoad(role, (1 - h) * host.read_tb_per_day, h * host.read_tb_per_day, True)
    return SetLoad(role, weights[1] * host.write_tb_per_day, weights[0] * host.read_tb_per_day, host.random)


class Life:
    """The terms applied to one requirement."""

    def __init__(self, req: Requirement, terms: Terms, hit_ratio: float):
        self.req, self.terms, self.h = req, terms, hit_ratio
        self.host = host_writes(req.write_iops, req.write_mbps, req.read_iops, req.read_mbps,
                                req.write_tb_per_day, req.read_tb_per_day, req.daily_source or "given")
        self.durable_required, self.durable_reason = policy_for(terms.durable_writes, req.has_writes)
        self.clustered = terms.clustered if terms.clustered is not None else (
            req.instances is not None and req.instances > 1)

    # -- the devices -----------------------------------------------------------------------------------

    def sized(self, devices: Sequence[Device]) -> tuple[list[Sized], list[dict[str, Any]]]:
        """The devices as sized (sustained figures, flush-bound where unprotected), and those dropped."""
        kept: list[Sized] = []
        dropped: list[dict[str, Any]] = []
        for d in devices:
            if self.clustered and not d.shared_access:
                dropped.append({"device": d.id, "reason": "topology",
                                "detail": f"{d.id} is not storage every node of a clustered database reaches "
                                          "(shared_access)"})
                continue
            j = judge(d, self.durable_required, self.terms.probe)
            if not j.kept:
                dropped.append({"device": d.id, "reason": "durability", "detail": j.reason})
                continue
            dev, on = _with_writes(d, j, False)
            kept.append(Sized(dev, d, j, on))
        return kept, dropped

    def burst_variant(self, s: Sized) -> Sized | None:
        """The device on its burst figures, when the requirement's bursts may fit its write cache."""
        d = s.raw
        if self.terms.write_burst_seconds is None or not d.flash or d.write_cache_gb is None:
            return None
        if s.device.write_iops >= d.write_iops and s.device.write_mbps >= d.write_mbps:
            return None
        if s.durable.flush_write_iops is not None:
            return None      # flush-bound writes gain nothing from a cache burst
        dev, on = _with_writes(d, s.durable, True)
        return Sized(dev, d, s.durable, on)

    def burst_fits(self, cfg: Config) -> tuple[bool, str]:
        """Does a burst of --write-burst-seconds at the required write rate fit each device's write cache?"""
        seconds = self.terms.write_burst_seconds or 0.0
        r = self.req
        rate = r.target("write_mbps") * 1e6 if r.write_mbps else r.target("write_iops") * PAGE_BYTES
        s = cfg.sets()[0]
        per_device = rate * layout_write_factor(s.layout, s.count, self.host.random) / s.count * seconds
        cache = (s.device.write_cache_gb or 0.0) * 1e9
        why = (f"a {seconds:g} s burst writes {per_device / 1e9:,.1f} GB to each device against a "
               f"{cache / 1e9:,.1f} GB write cache")
        return per_device <= cache * (1 + 1e-9), why

    # -- wear --------------------------------------------------------------------------------------------

    def wear_test(self) -> Callable[[Device, str, int, str, tuple[float, float, float, float]], bool] | None:
        """The count search's test: every device of a set lasts the service life (None when worn are replaced)."""
        if self.terms.worn != "fail" or not (self.host.write_tb_per_day or self.host.read_tb_per_day):
            return None
        host, waf, years, h = self.host, self.terms.waf, self.terms.service_years, self.h

        def test(d: Device, layout: str, n: int, role: str, weights: tuple[float, float, float, float]) -> bool:
            return lasts(d, layout, n, _role_load(role, weights, host, h), waf, years)
        return test

    def endurance(self, cfg: Config) -> tuple[dict[str, Any] | None, str | None, list[int]]:
        """(endurance object or None, the reason when None, replacements per device of each set)."""
        per_set = [set_endurance(s.device, s.layout, s.count, _role_load(s.role, w, self.host, cfg.hit_ratio),
                                 self.terms.waf, self.terms.service_years)
                   for s, w in zip(cfg.sets(), cfg.weights())]
        repl = [replacements(e.get("lifetime_years"), self.terms.service_years)
                if self.terms.worn == "replace" else 0 for s, e in zip(cfg.sets(), per_set)]
        if all(s.device.kind == "cloud-volume" for s in cfg.sets()):
            return None, per_set[0]["reason"], repl
        if not self.host.write_tb_per_day and not self.host.read_tb_per_day:
            return None, "the requirement has no writes or reads a day: nothing wears", repl

        def worst(e: dict[str, Any]) -> tuple[Any, ...]:
            life = e.get("lifetime_years")
            return (e["passes"], e["checked"], math.inf if life is None else life, -(e.get("used_fraction") or 0))
        limiting = min(per_set, key=worst)
        out = {k: limiting.get(k) for k in ("device_writes_tb_per_day", "lifetime_years", "service_years",
                                            "used_fraction", "figure_source", "passes", "checked", "reason")}
        out["host"] = self.host.to_dict()
        out["worn"] = self.terms.worn
        out["replacements_per_device"] = max(repl) if repl else 0
        if len(per_set) > 1:
            out["sets"] = per_set
        else:
            out.update({k: limiting[k] for k in ("layout_write_factor", "waf", "waf_source", "rated_tbw",
                                                 "workload_tb_per_year") if k in limiting})
        return out, None, repl

    # -- one candidate -------------------------------------------------------------------------------------

    def figures(self, e: Evaluation, sized: dict[Device, Sized]) -> dict[str, Any]:
        """endurance, durable_writes, sized_on and tco of one evaluated design (`sized` by the effective device)."""
        cfg = e.config
        endurance, why, repl = self.endurance(cfg)
        sets = cfg.sets()
        judged = [sized[s.device].durable for s in sets]
        prot = [j.protected for j in judged]
        protected = False if False in prot else (None if None in prot else True)
        durable: dict[str, Any] = {"required": self.durable_required, "protected": protected,
                   "reason": self.durable_reason + ": " + "; ".join(dict.fromkeys(j.reason for j in judged))}
        stated = [s.device.durability_pct for s in sets if s.device.durability_pct is not None]
        if stated:   # a cloud volume's provider states how rarely it loses one
            durable["durability_pct"] = min(stated)
        on = {s.role or "devices": sized[s.device].sized_on for s in sets}
        sized_on = dict(next(iter(on.values()))) if len(on) == 1 else {
            "write_iops": _worst_basis(v["write_iops"] for v in on.values()),
            "write_mbps": _worst_basis(v["write_mbps"] for v in on.values()), "sets": on}
        r = self.req
        util = utilisation(e, r.read_iops or 0, r.write_iops or 0, r.read_mbps or 0, r.write_mbps or 0)
        cost = tco(e, self.terms.service_years, self.terms.usd_per_kwh, util, repl)
        return {"endurance": endurance, "endurance_reason": why, "durable_writes": durable, "sized_on": sized_on,
                "tco": cost}


def _worst_basis(values: Iterable[str]) -> str:
    vs = list(values)
    for b in ("flush-bound", "burst", "sustained"):
        if b in vs:
            return b
    return vs[0]
