"""One simulation: a trace through a design, into the result of the JSON contract.

`simulate` returns two dicts: `contract` has exactly the keys of the issue's
JSON contract (trace, design, policy, read_hit_ratio, request_hit_ratio,
curve, latency_us, device_util, resync), `details` everything else a reader
or the report needs (device figures and their source, counters, CDFs, the
baseline, the timeline, notes on every modelling choice).

Designs and their device roles:
- `single` (device): every request to one device; the baseline.
- `read-cache` (cache, backing): a cache of `cache_gb` in front of the backing
  device (policies and write modes in `cache.py`). A read's cached blocks come
  from the cache device and the rest from the backing device; a read miss
  fills the cache in the background; write-back destaging is background
  backing I/O.
- `preferred-read-mirror` (fast, slow): see `mirror.py`.
The read-cache and mirror also replay the trace on their backing/slow device
alone, the baseline their latency is compared with.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from dbtier.core.errors import DbtierError
from dbtier.sim import cache as cache_mod
from dbtier.sim import latency, mirror
from dbtier.sim.latency import DeviceModel, SubIOs
from dbtier.sim.names import DESIGNS, ROLES
from dbtier.sim.traces import READ, WRITE, Trace

TIMELINE_BUCKETS = 60

LATENCY_MODEL = (
    "Each device is a FIFO queue in front of `units` servers and a rate gate. Flash (and cloud volumes, arrays) "
    "has units = ceil(IOPS x QD1 latency) (Little's law), each busy for the QD1 latency per 4 KiB I/O: at low "
    "load an I/O takes its QD1 latency, at depth the device delivers its IOPS. A hard disk has one actuator "
    "(units = 1) and command queueing: a random I/O started with n I/Os outstanding takes "
    "s(n) = 1/IOPS + (QD1 latency - 1/IOPS) x 2/(n+1) (the expected shortest of n uniformly spread positioning "
    "times), QD1 latency alone, the catalog's at-depth IOPS as the queue grows. The gate spaces starts by "
    "max(1/IOPS, b/bandwidth); an I/O continuing one of the device's last 8 I/Os is sequential (gate "
    "b/bandwidth; on a disk served in b/bandwidth). An I/O starts when it arrives, the gate opens and a unit "
    "frees (a trace-driven G/G/c queue over the trace's own arrival times) and completes its service time "
    "plus (b - 4 KiB)/bandwidth later. Checked against M/D/1, M/M/1 and M/M/c closed forms. Limits: FIFO order "
    "(a disk's reordering shortens service, not the order, so its tail is shorter than a real disk's); the "
    "reordering curve is an assumption calibrated only at depth 1 and at depth; no write-cache model beyond "
    "the figures. A request served by several devices completes with its last part; cache fills and "
    "write-back destaging occupy devices in the background. Utilisation: a disk's actuator busy time, a "
    "parallel device's share of its capacity, over the replay's span.")

RESYNC_MODEL = (
    "The copy reads each dirty region whole from the survivor and writes it to the returning side "
    "(sequential on both): with no other load at min(survivor read MB/s, returning write MB/s). It gets the "
    "device time the trace's requests leave: per bucket of time, min(read MB/s x (1 - survivor busy), write "
    "MB/s x (1 - returning busy)), the busy fractions from replaying the trace with the resync's routing "
    "(reads on the survivor, writes to both); full rate after the trace ends. The requests' latency during the "
    "resync is modelled without the copy's I/O (the copy yields, as md's throttle intends): optimistic for "
    "that window. The unprotected window runs from the failure to the end of the copy.")


@dataclass
class Params:
    design: str = "single"
    block_size: int = 8192
    policy: str = "lru"
    write_mode: str = "write-around"
    cache_gb: float | None = None
    seq_cutoff_bytes: int | None = None
    restart_at_s: tuple[float, ...] = ()
    sweep_gb: tuple[float, ...] | None = None      # () = automatic sizes, None = no sweep
    failure: mirror.Failure | None = None
    region_size: int = mirror.DEFAULT_REGION
    spread_ties: bool = True
    jobs: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"design": self.design, "block_size": self.block_size,
                "policy": self.policy if self.design == "read-cache" else None,
                "write_mode": self.write_mode if self.design == "read-cache" else None,
                "cache_gb": self.cache_gb, "seq_cutoff_bytes": self.seq_cutoff_bytes,
                "restart_at_s": list(self.restart_at_s),
                "sweep_gb": None if self.sweep_gb is None else list(self.sweep_gb),
                "fail": None if self.failure is None else {"side": self.failure.side,
                                                            "at_s": self.failure.fail_at_s,
                                                            "return_at_s": self.failure.return_at_s},
                "region_size": self.region_size if self.design == "preferred-read-mirror" else None,
                "spread_ties": self.spread_ties}


@dataclass
class Outcome:
    contract: dict[str, Any]
    details: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    latency_s: np.ndarray | None = None     # per request, for merging several replays (sim/volumes.py)


Progress = Callable[[str, float], None]


def _noop(phase: str, frac: float) -> None:
    pass


def check_params(p: Params, trace: Trace | None, devices: dict[str, DeviceModel]) -> None:
    """Refuse combinations that mean nothing, before any work (`trace` None: not read yet, and no times
    given -- sim/volumes.check refuses them first)."""
    if p.design not in DESIGNS:
        raise DbtierError(f"unknown design '{p.design}' (known: {', '.join(DESIGNS)})", "choose one with --design")
    for role in ROLES[p.design]:
        if role not in devices:
            raise DbtierError(f"design {p.design} needs --{role} ID", "name a catalog device "
                              "(`dbtier catalog list`) or a probe run directory")
    end = float(trace.time_s[-1]) if trace is not None and len(trace) else 0.0
    if p.block_size <= 0 or p.block_size & (p.block_size - 1):
        raise DbtierError(f"--block-size {p.block_size} must be a power of two bytes", "e.g. --block-size 8K")
    if p.region_size <= 0:
        raise DbtierError(f"--region-size {p.region_size} must be positive", "e.g. --region-size 64M")
    if p.design == "read-cache":
        if p.cache_gb is None and p.sweep_gb is None:
            raise DbtierError("design read-cache needs --cache-gb GB (or --sweep)", "e.g. --cache-gb 16")
        if p.cache_gb is not None and p.cache_gb <= 0:
            raise DbtierError(f"--cache-gb must be positive, got {p.cache_gb:g}", "e.g. --cache-gb 16")
        if p.cache_gb is not None and cache_mod.capacity_blocks(p.cache_gb, p.block_size) < 1:
            raise DbtierError(f"--cache-gb {p.cache_gb:g} holds no {p.block_size}-byte block",
                              "give a larger cache or a smaller --block-size")
        for t in p.restart_at_s:
            if not trace.timed:
                raise DbtierError("--restart-at needs a timed trace; this one has no timestamps",
                                  "leave --restart-at out")
            if t < 0 or t > end:
                raise DbtierError(f"--restart-at {t:g} s is outside the trace (0 to {end:g} s)",
                                  "give a time within the trace, in seconds from its first request")
    else:
        for flag, val in (("--cache-gb", p.cache_gb), ("--seq-cutoff", p.seq_cutoff_bytes),
                          ("--sweep", p.sweep_gb)):
            if val is not None:
                raise DbtierError(f"{flag} applies to --design read-cache, not {p.design}", f"drop {flag}")
        if p.restart_at_s:
            raise DbtierError(f"--restart-at applies to --design read-cache, not {p.design}", "drop --restart-at")
    if p.failure is not None:
        if p.design != "preferred-read-mirror":
            raise DbtierError(f"--fail applies to --design preferred-read-mirror, not {p.design}", "drop --fail")
        if not trace.timed:
            raise DbtierError("--fail needs a timed trace; this one has no timestamps", "leave --fail out")
        for what, t in (("--fail", p.failure.fail_at_s), ("--return", p.failure.return_at_s)):
            if t is not None and t > end:
                raise DbtierError(f"{what} at {t:g} s is after the trace ends ({end:g} s)",
                                  "give a time within the trace, in seconds from its first request")


def simulate(trace: Trace, p: Params, devices: dict[str, DeviceModel],
             progress: Progress | None = None) -> Outcome:
    progress = progress or _noop
    check_params(p, trace, devices)
    timings: dict[str, float] = {}
    notes: list[str] = []
    warnings: list[str] = []
    roles = ROLES[p.design]
    models = [devices[r] for r in roles]

    times = trace.time_s
    res = None
    if trace.timed and p.spread_ties:
        times, res = latency.spread_ties(trace.time_s)
        if res is not None:
            notes.append(f"the trace's clock ticks every {res:g} s; requests sharing a tick were spread evenly "
                         "across it for the queueing model (--no-spread keeps them as bursts)")

    contract: dict[str, Any] = {
        "trace": trace.summary(), "design": p.design, "policy": None, "read_hit_ratio": None,
        "request_hit_ratio": None, "curve": None, "latency_us": None, "device_util": None, "resync": None,
    }
    details: dict[str, Any] = {
        "trace_info": trace.info(), "block_size": p.block_size, "params": p.to_dict(),
        "devices": {r: devices[r].to_dict() for r in roles}, "latency_model": LATENCY_MODEL,
        "cache": None, "curve_detail": None, "mirror": None, "baseline": None, "cdf_us": None,
        "timeline": None, "time_spread_resolution_s": res, "notes": notes, "timings_s": timings,
    }

    subs = SubIOs.empty()
    idx = np.arange(len(trace), dtype=np.int64)
    is_read = trace.op == READ
    events: list[dict[str, Any]] = []

    if p.design == "single":
        subs.add(idx, 0, trace.op, trace.length_bytes,
                offset=trace.offset_bytes, volume=trace.volume)

    elif p.design == "read-cache":
        progress("cutting into blocks", 0.0)
        t0 = time.perf_counter()
        prep = cache_mod.prepare(trace, p.block_size)
        bypass = None
        if p.seq_cutoff_bytes:
            bypass = cache_mod.sequential_bypass(trace.offset_bytes, trace.length_bytes, trace.volume,
                                                 int(p.seq_cutoff_bytes))
        restart_req = cache_mod.restart_requests(trace.time_s, p.restart_at_s) if p.restart_at_s else None
        timings["prepare"] = time.perf_counter() - t0
        ws = prep.working_set_bytes
        contract["policy"] = p.policy

        curve_detail = None
        if p.sweep_gb is not None:
            sizes = list(p.sweep_gb) or cache_mod.default_sweep_gb(ws, p.block_size)
            if p.cache_gb is not None and p.cache_gb not in sizes:
                sizes.append(p.cache_gb)
            sizes = sorted(set(sizes))
            caps = [cache_mod.capacity_blocks(g, p.block_size) for g in sizes]
            progress(f"sweeping {len(caps)} cache sizes", 0.0)
            t0 = time.perf_counter()
            results = cache_mod.sweep(prep, caps, p.policy, p.write_mode, bypass, restart_req, p.jobs)
            timings["sweep"] = time.perf_counter() - t0
            curve_detail = [{"cache_gb": g, "capacity_blocks": r.capacity_blocks,
                             "read_hit_ratio": r.read_hit_ratio, "request_hit_ratio": r.request_hit_ratio,
                             "larger_than_working_set": r.capacity_blocks >= prep.nids}
                            for g, r in zip(sizes, results)]
        cache_gb = p.cache_gb if p.cache_gb is not None else (curve_detail[-1]["cache_gb"] if curve_detail else 0)
        cap = cache_mod.capacity_blocks(cache_gb, p.block_size)
        progress("replaying the cache", 0.0)
        t0 = time.perf_counter()
        cr = cache_mod.run_cache(prep, cap, p.policy, p.write_mode, bypass, restart_req, record=True)
        timings["replay"] = time.perf_counter() - t0
        if curve_detail is None:
            curve_detail = [{"cache_gb": cache_gb, "capacity_blocks": cap, "read_hit_ratio": cr.read_hit_ratio,
                             "request_hit_ratio": cr.request_hit_ratio, "larger_than_working_set": cap >= prep.nids}]
        contract["read_hit_ratio"] = cr.read_hit_ratio
        contract["request_hit_ratio"] = cr.request_hit_ratio
        contract["curve"] = [{"cache_gb": c["cache_gb"], "read_hit_ratio": c["read_hit_ratio"]} for c in curve_detail]
        if cap >= prep.nids:
            msg = (f"the cache ({cache_gb:g} GB, {cap:,} blocks) is larger than the trace's working set "
                   f"({ws / 1e9:.3g} GB, {prep.nids:,} distinct {p.block_size}-byte blocks): once a block is "
                   "cached it stays, only first-touch misses remain")
            warnings.append(msg)
            notes.append(msg)
        over = [c["cache_gb"] for c in curve_detail if c["larger_than_working_set"] and c["cache_gb"] != cache_gb]
        if over:
            notes.append("sweep sizes larger than the working set: " + ", ".join(f"{g:g} GB" for g in over))
        details["cache"] = {
            **cr.to_dict(), "cache_gb": cache_gb, "capacity_bytes": cap * p.block_size,
            "seq_cutoff_bytes": p.seq_cutoff_bytes, "restart_at_s": list(p.restart_at_s),
            "working_set_bytes": ws, "read_working_set_bytes": prep.read_working_set_bytes,
            "working_set_blocks": prep.nids,
        }
        details["curve_detail"] = curve_detail
        for t in p.restart_at_s:
            events.append({"t_s": t, "event": "restart", "label": "cache emptied (restart)"})

        # Device I/Os. A read's cached blocks come from the cache (its bytes shared pro rata); an admitted miss
        # reads whole blocks from the backing device, from its first missing block on (so a stream of small
        # reads stays sequential there); a bypassing read fetches just what it asked for.
        k = prep.nblk.astype(np.float64)
        h = cr.hits.astype(np.float64)
        ln = trace.length_bytes.astype(np.float64)
        byp = np.zeros(len(trace), dtype=bool) if bypass is None else bypass
        r_hit = is_read & (cr.hits > 0)
        subs.add(idx[r_hit], 0, READ, (ln * h / k)[r_hit],
                 offset=trace.offset_bytes[r_hit], volume=trace.volume[r_hit])
        r_fetch = is_read & (cr.hits < prep.nblk) & ~byp
        first_block = trace.offset_bytes // p.block_size
        fetch_off = (first_block + cr.first_miss) * p.block_size
        subs.add(idx[r_fetch], 1, READ, ((k - h) * p.block_size)[r_fetch],
                 offset=fetch_off[r_fetch], volume=trace.volume[r_fetch])
        r_pass = is_read & (cr.hits < prep.nblk) & byp
        subs.add(idx[r_pass], 1, READ, (ln * (k - h) / k)[r_pass],
                 offset=trace.offset_bytes[r_pass], volume=trace.volume[r_pass])
        fill = is_read & (cr.admitted > 0)
        subs.add(idx[fill], 0, WRITE, cr.admitted[fill].astype(np.float64) * p.block_size, fg=False)
        w = ~is_read
        if p.write_mode == "write-around":
            subs.add(idx[w], 1, WRITE, ln[w],
                    offset=trace.offset_bytes[w], volume=trace.volume[w])
        else:
            to_cache = w & ~byp
            subs.add(idx[to_cache], 0, WRITE, ln[to_cache],
                    offset=trace.offset_bytes[to_cache], volume=trace.volume[to_cache])
            to_back = (w & byp) if p.write_mode == "write-back" else w
            subs.add(idx[to_back], 1, WRITE, ln[to_back],
                    offset=trace.offset_bytes[to_back], volume=trace.volume[to_back])
        dst = cr.destaged > 0
        subs.add(idx[dst], 1, WRITE, cr.destaged[dst].astype(np.float64) * p.block_size, fg=False)
        if p.write_mode == "write-back":
            notes.append(f"write-back: {cr.counters['destaged_blocks']:,} dirty blocks destaged on eviction or "
                         f"restart; {cr.counters['dirty_blocks_at_end']:,} still dirty at the end of the trace")
        # the device I/Os are made: what only they needed goes back before the queueing model runs
        del k, h, ln, byp, first_block, fetch_off, r_hit, r_fetch, r_pass, fill, w, dst, bypass
        prep.ids = np.zeros(0, dtype=np.int32)
        cr.admitted = cr.destaged = cr.first_miss = None     # the timeline needs only the hits

    else:  # preferred-read-mirror
        f = p.failure
        resync_block = None
        resync_s = None
        copy: dict[str, Any] | None = None
        if f is not None:
            down_end = np.inf if f.return_at_s is None else f.return_at_s
            in_window = (~is_read) & (trace.time_s >= f.fail_at_s) & (trace.time_s < down_end)
            regions = mirror.dirty_regions(trace.offset_bytes[in_window], trace.length_bytes[in_window],
                                           trace.volume[in_window], p.region_size)
            returning, surviving = devices[f.side], devices[f.survivor]
            end = float(trace.time_s[-1])
            if f.return_at_s is not None:
                # The copy gets the device time the foreground leaves: replay the trace with the resync's routing
                # from the return on, take each side's busy time per bucket, and integrate the copy over it.
                progress("resync: foreground load", 0.0)
                t0 = time.perf_counter()
                span = float(times[-1] - times[0])
                bucket = span / max(1, math.ceil(span / max(1.0, span / 100_000))) if span > 0 else 1.0
                fg_load = latency.serve(_mirror_subs(trace, mirror.phases(trace.time_s, f, np.inf), f),
                                        models, times, True, bucket_s=bucket)
                surv_i, ret_i = roles.index(f.survivor), roles.index(f.side)
                nbytes = regions * p.region_size
                resync_s = mirror.copy_seconds(nbytes, f.return_at_s, surviving.read_mbps, returning.write_mbps,
                                               fg_load.busy_by_bucket_s[surv_i], fg_load.busy_by_bucket_s[ret_i],
                                               float(times[0]), bucket)
                idle_s = nbytes / mirror.copy_rate_bytes_per_s(surviving.read_mbps, returning.write_mbps)
                timings["resync"] = time.perf_counter() - t0
                copy = {"survivor_read_mbps": surviving.read_mbps, "returning_write_mbps": returning.write_mbps,
                        "rate_mbps_idle": min(surviving.read_mbps, returning.write_mbps),
                        "rate_mbps_mean": nbytes / resync_s / 1e6 if resync_s else None,
                        "seconds_idle": idle_s, "bucket_s": bucket,
                        "foreground_util": _window_util(fg_load, bucket, float(times[0]), f.return_at_s,
                                                        f.return_at_s + resync_s, {"survivor": surv_i,
                                                                                  "returning": ret_i})}
            resync_block = mirror.resync(regions, p.region_size, f, end, resync_s)
            contract["resync"] = resync_block
            events.append({"t_s": f.fail_at_s, "event": "fail", "label": f"{f.side} side fails"})
            if f.return_at_s is not None:
                events.append({"t_s": f.return_at_s, "event": "return", "label": f"{f.side} side returns"})
                events.append({"t_s": f.return_at_s + resync_s, "event": "resynced",
                               "label": f"resync done ({resync_block['bytes'] / 1e9:.3g} GB)"})
            else:
                notes.append(f"the {f.side} side never returns within the trace: no resync; the design ran without "
                             "redundancy to the end")
            if f.return_at_s is not None and f.return_at_s + resync_s > end:
                notes.append("the resync ends after the trace does (it runs at the full copy rate from then on)")
        ph = mirror.phases(trace.time_s, f, resync_s)
        subs = _mirror_subs(trace, ph, f)
        details["mirror"] = {"region_size": p.region_size,
                             "failure": None if f is None else {"side": f.side, "fail_at_s": f.fail_at_s,
                                                                "return_at_s": f.return_at_s,
                                                                "survivor": f.survivor},
                             "resync_rate_mbps": None if copy is None else copy["rate_mbps_idle"],
                             "resync_copy": copy, "resync_model": None if copy is None else RESYNC_MODEL,
                             "requests_degraded": int((ph == 1).sum()), "requests_resyncing": int((ph == 2).sum())}
        if copy is not None:
            fu = copy["foreground_util"]
            notes.append(
                f"resync: {resync_block['bytes'] / 1e9:.3g} GB read from the {f.survivor} side "
                f"({copy['survivor_read_mbps']:g} MB/s) and written to the {f.side} side "
                f"({copy['returning_write_mbps']:g} MB/s): {copy['seconds_idle']:,.1f} s at "
                f"{copy['rate_mbps_idle']:g} MB/s on idle devices; the foreground kept the survivor "
                f"{_pct(fu['survivor'])} and the returning side {_pct(fu['returning'])} busy meanwhile, so it took "
                f"{resync_s:,.1f} s (mean {copy['rate_mbps_mean']:,.1f} MB/s). " + RESYNC_MODEL)

    progress("queueing model", 0.0)
    t0 = time.perf_counter()
    served = latency.serve(subs, models, times, trace.timed, consume=True)
    timings["latency"] = time.perf_counter() - t0
    lat = served.latency_s
    contract["latency_us"] = {"read": latency.percentiles_us(lat[is_read]),
                              "write": latency.percentiles_us(lat[~is_read])}
    util = served.utilisation()
    contract["device_util"] = {role: float(u) for role, u in zip(roles, util)}
    for role, u in zip(roles, util):
        if u >= 0.99:
            msg = (f"the {role} device ({devices[role].id}) is saturated (utilisation {u:.0%}): requests queue "
                   "without bound and latency reflects the backlog")
            warnings.append(msg)
            notes.append(msg)
    details["cdf_us"] = {"read": latency.cdf_points(lat[is_read]), "write": latency.cdf_points(lat[~is_read])}

    if p.design != "single":
        base_role = "backing" if p.design == "read-cache" else "slow"
        bsubs = SubIOs.empty()
        bsubs.add(idx, 0, trace.op, trace.length_bytes,
                offset=trace.offset_bytes, volume=trace.volume)
        bserved = latency.serve(bsubs, [devices[base_role]], times, trace.timed, consume=True)
        blat = bserved.latency_s
        details["baseline"] = {
            "design": "single", "role": base_role, "device": devices[base_role].id,
            "latency_us": {"read": latency.percentiles_us(blat[is_read]),
                           "write": latency.percentiles_us(blat[~is_read])},
            "device_util": float(bserved.utilisation()[0]),
            "cdf_us": {"read": latency.cdf_points(blat[is_read]), "write": latency.cdf_points(blat[~is_read])},
        }

    details["timeline"] = _timeline(trace, lat, cache_blocks=None if p.design != "read-cache"
                                    else (prep.nblk, cr.hits), events=events)
    return Outcome(contract, details, warnings, lat)


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{x:.0%}"


def _window_util(served: latency.Served, bucket_s: float, t0: float, start_s: float, end_s: float,
                 which: dict[str, int]) -> dict[str, float | None]:
    """Each device's mean foreground busy fraction over [start_s, end_s) (buckets overlapping it, weighted by
    overlap; None when the window lies past the trace)."""
    b = served.busy_by_bucket_s
    lo = np.arange(b.shape[1]) * bucket_s + t0
    w = np.clip(np.minimum(lo + bucket_s, end_s) - np.maximum(lo, start_s), 0.0, None)
    if not w.sum() > 0:
        return {k: None for k in which}
    return {k: float((np.minimum(b[i] / bucket_s, 1.0) * w).sum() / w.sum()) for k, i in which.items()}


def _mirror_subs(trace: Trace, ph: np.ndarray, f: mirror.Failure | None) -> SubIOs:
    """Device I/Os of the preferred-read mirror for phases `ph` (0 in sync, 1 one side down, 2 resyncing):
    reads from the fast side in sync, else from the survivor; writes to both, or to the survivor while down."""
    subs = SubIOs.empty()
    idx = np.arange(len(trace), dtype=np.int64)
    is_read = trace.op == READ
    fast, slow = 0, 1
    survivor = None if f is None else (fast if f.survivor == "fast" else slow)
    normal = ph == 0
    r = is_read
    w = ~is_read
    subs.add(idx[r & normal], fast, READ, trace.length_bytes[r & normal],
             offset=trace.offset_bytes[r & normal], volume=trace.volume[r & normal])
    if survivor is not None:
        degraded_r = r & ~normal
        subs.add(idx[degraded_r], survivor, READ, trace.length_bytes[degraded_r],
                 offset=trace.offset_bytes[degraded_r], volume=trace.volume[degraded_r])
        down_w = w & (ph == 1)
        subs.add(idx[down_w], survivor, WRITE, trace.length_bytes[down_w],
                 offset=trace.offset_bytes[down_w], volume=trace.volume[down_w])
    both_w = w & (ph != 1)
    subs.add(idx[both_w], fast, WRITE, trace.length_bytes[both_w],
             offset=trace.offset_bytes[both_w], volume=trace.volume[both_w])
    subs.add(idx[both_w], slow, WRITE, trace.length_bytes[both_w],
             offset=trace.offset_bytes[both_w], volume=trace.volume[both_w])
    return subs


def _timeline(trace: Trace, lat_s: np.ndarray, cache_blocks: Any,
              events: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Per time bucket: requests, read latency mean/p99, and the read hit ratio (block-weighted)."""
    if not trace.timed or len(trace) < 2 or trace.time_s[-1] <= 0:
        return {"bucket_s": None, "series": [], "events": events}
    end = float(trace.time_s[-1])
    nb = TIMELINE_BUCKETS
    width = end / nb
    bucket = np.minimum((trace.time_s / width).astype(np.int64), nb - 1)
    bounds = np.searchsorted(bucket, np.arange(nb + 1))
    is_read = trace.op == READ
    series = []
    for b in range(nb):
        s, e = bounds[b], bounds[b + 1]
        rd = is_read[s:e]
        rl = lat_s[s:e][rd]
        point: dict[str, Any] = {"t_s": b * width, "requests": int(e - s), "reads": int(rd.sum()),
                                 "read_mean_us": float(rl.mean() * 1e6) if rl.size else None,
                                 "read_p99_us": float(np.percentile(rl, 99) * 1e6) if rl.size else None}
        if cache_blocks is not None:
            nblk, hits = cache_blocks
            nbk = nblk[s:e][rd]
            point["read_hit_ratio"] = float(hits[s:e][rd].sum() / nbk.sum()) if nbk.size else None
        series.append(point)
    return {"bucket_s": width, "series": series, "events": events}
