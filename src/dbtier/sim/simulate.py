"""One simulation: a trace through a design, into the result of the JSON contract.

`simulate` returns two dicts: `contract` has the result document's top-level
keys (trace, design, policy, read_hit_ratio, request_hit_ratio, curve,
latency_us, device_util, resync; busiest_utilisation, each device's busiest
second beside its average; recommended_cache_gb and recommended, the size a
--sweep's curve recommends and its rule: sim/sweep.py), `details` everything else a reader
or the report needs (device figures and their source, counters, CDFs, the
baseline, the timeline, notes on every modelling choice). Each part of the
replay returns its figures as an immutable result (mirror_plan.MirrorPlan,
CacheFigures, the models' figures) and `_document` alone puts them into the
two dicts, in the document's order.

Designs and their device roles:
- `single` (device): every request to one device; the baseline.
- `read-cache` (cache, backing): a cache of `cache_gb` in front of the backing
  device (policies and write modes in sim/cache/). A read's cached blocks come
  from the cache device and the rest from the backing device; a read miss
  fills the cache in the background; write-back destaging is background
  backing I/O.
- `preferred-read-mirror` (fast, slow): see `mirror.py`; its failure and resync
  over the trace are mirror_plan.py's.
The read-cache and mirror also replay the trace on their backing/slow device
alone, the baseline their latency is compared with.

A trace is replayed chunk by chunk whether it was read whole (`simulate`) or is
streamed (`simulate_stream`): the cache (cache.Replay), the design's device I/Os
(routing.py for the cache) and the queueing model (latency.Server) carry their
state across chunks, and what is kept of the requests (tally.py) is bounded by
the chunk -- so both give the same answers, and a trace larger than memory
replays in one pass.
"""

from __future__ import annotations

import collections
import functools
import itertools
import math
import os
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence, cast

import numpy as np

from dbtier.core.errors import DbtierError
from dbtier.core.units import size_text
from dbtier.core.priority import lower_priority
from dbtier.sim.cache import replay as cache_mod
from dbtier.sim.device import latency, tally
from dbtier.sim import mirror, mirror_plan, routing, sweep
from dbtier.sim.cache import workingset
from dbtier.sim.trace.blocks import cut_chunk
from dbtier.sim.trace.chunks import Chunk, chunks_of, prefetched, whole_ticks
from dbtier.sim.device.latency import DeviceModel, SubIOs
from dbtier.sim.names import DESIGNS, ROLES
from dbtier.sim.trace.traces import READ, WRITE, Trace

LATENCY_MODEL = (
    "Each device is a FIFO queue in front of `units` servers and a rate gate. Flash (and cloud volumes, arrays) "
    "has units = ceil(IOPS x QD1 latency) (Little's law), each busy for the QD1 latency per 4 KiB I/O: at low "
    "load an I/O takes its QD1 latency, at depth the device delivers its IOPS. A hard disk has one actuator "
    "(units = 1) and command queueing: a random I/O started with n I/Os outstanding takes "
    "s(n) = 1/IOPS + (QD1 latency - 1/IOPS) x 2/(n+1) (the expected shortest of n uniformly spread positioning "
    "times, n at most 32: the commands a disk holds), QD1 latency alone, the catalog's at-depth IOPS as the queue grows. The gate spaces starts by "
    "max(1/IOPS, b/bandwidth); an I/O continuing one of the device's last 8 I/Os is sequential (gate "
    "b/bandwidth; on a disk served in b/bandwidth). An I/O starts when it arrives, the gate opens and a unit "
    "frees (a trace-driven G/G/c queue over the trace's own arrival times) and completes its service time "
    "plus (b - 4 KiB)/bandwidth later. Checked against M/D/1, M/M/1 and M/M/c closed forms. Limits: FIFO order "
    "(a disk's reordering shortens service, not the order, so its tail is shorter than a real disk's); the "
    "reordering curve is an assumption calibrated only at depth 1 and at depth; no write-cache model beyond "
    "the figures. A request served by several devices completes with its last part; cache fills and "
    "write-back destaging occupy devices in the background. Utilisation: a disk's actuator busy time, a "
    "parallel device's share of its capacity, over the replay's span. A cloud volume named cloud:... is a "
    "fluid rate limiter instead: reads and writes share its IOPS and throughput limits (the lower of the "
    "stripe's and the instance's), an I/O of b bytes counts as max(1, ceil(b / the type's accounting size)) "
    "I/Os, its gate is max(counted / IOPS, b / bandwidth) sequential or not, and it completes the base latency "
    "after passing the gate; utilisation is the limiter's busy share.")

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
    region_size: int | None = None          # None: the tracking's unit (mirror.TRACKING)
    tracking: str | None = None             # None: mirror.DEFAULT_TRACKING
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
                "region_size": self.region_bytes if self.design == "preferred-read-mirror" else None,
                "tracking": self.tracking_model if self.design == "preferred-read-mirror" else None,
                "spread_ties": self.spread_ties}

    @property
    def tracking_model(self) -> str:
        return self.tracking or mirror.DEFAULT_TRACKING

    @property
    def region_bytes(self) -> int:
        """The mirror's change-tracking region: --region-size, else the tracking model's unit."""
        return mirror.tracking_of(self.tracking, self.region_size)["region_size"]


@dataclass
class Outcome:
    contract: dict[str, Any]
    details: dict[str, Any]
    warnings: list[str] = field(default_factory=list)
    latencies: tally.Latencies | None = None    # histograms (and latencies, when kept): sim/volumes.py merges them


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
    if p.region_size is not None and p.region_size <= 0:
        raise DbtierError(f"--region-size {p.region_size} must be positive", "e.g. --region-size 1M")
    mirror.tracking_of(p.tracking, p.region_size)           # an unknown model is refused here
    if p.design == "read-cache":
        if p.cache_gb is not None and p.cache_gb <= 0:
            raise DbtierError(f"--cache-gb must be positive, got {p.cache_gb:g}", "e.g. --cache-gb 16")
        if p.cache_gb is not None and cache_mod.capacity_blocks(p.cache_gb, p.block_size) < 1:
            raise DbtierError(f"--cache-gb {p.cache_gb:g} holds no {p.block_size}-byte block",
                              "give a larger cache or a smaller --block-size")
        for t in p.restart_at_s:
            if trace is None:           # streamed: checked against the first chunk and the end as they come
                break
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
    if p.design != "preferred-read-mirror":
        for flag, given in (("--tracking", p.tracking), ("--region-size", p.region_size)):
            if given is not None:
                raise DbtierError(f"{flag} applies to --design preferred-read-mirror, not {p.design}", f"drop {flag}")
    if p.failure is not None:
        if p.design != "preferred-read-mirror":
            raise DbtierError(f"--fail applies to --design preferred-read-mirror, not {p.design}", "drop --fail")
        # a failure is replayed on a trace read whole: streaming and --volume all are not chosen with one
        assert trace is not None
        if not trace.timed:
            raise DbtierError("--fail needs a timed trace; this one has no timestamps", "leave --fail out")
        for what, at in (("--fail", p.failure.fail_at_s), ("--return", p.failure.return_at_s)):
            if at is not None and at > end:
                raise DbtierError(f"{what} at {at:g} s is after the trace ends ({end:g} s)",
                                  "give a time within the trace, in seconds from its first request")


# Requests replayed at a time: their device I/Os are what the replay holds. 2^18 rather than 2^19: a chunk's
# block keys (about 10 MB on the large-footprint bench) stay under glibc's 16 MiB mmap threshold (core/malloc.py),
# so the heap's pages are reused instead of a fresh mapping faulted in each chunk: quicker and a smaller peak RSS
# at 64 GB and 2 GB caches, and 2^17 no quicker (bench/simulate_scale.py --sections footprint measures it).
CHUNK_REQUESTS = 1 << 18
MODEL_LAG = 1      # chunks the queueing models may fall behind the replay (each one more chunk held)
EXACT_LATENCIES = 1 << 24       # requests whose latencies are kept for exact percentiles (9 bytes each)
BUSIEST_S = 1.0                 # the busiest interval's width (wider past latency.MAX_INTERVALS of them)
ALT_MAX_BLOCKS = 1 << 22        # the other write mode's cache is replayed while it holds at most this many blocks


def simulate(trace: Trace, p: Params, devices: dict[str, DeviceModel], progress: Progress | None = None,
             chunk_requests: int = CHUNK_REQUESTS, exact_limit: int = EXACT_LATENCIES) -> Outcome:
    """A trace read whole, replayed chunk after chunk."""
    check_params(p, trace, devices)
    res = latency.tie_resolution(trace.time_s) if (trace.timed and p.spread_ties) else None
    return _replay(lambda: chunks_of(trace, chunk_requests), lambda: trace, p, devices, progress, res, trace,
                   exact_limit)


def simulate_stream(chunks: Callable[[], Iterable[Chunk]], meta: Callable[[], Trace], p: Params,
                    devices: dict[str, DeviceModel], progress: Progress | None = None,
                    exact_limit: int = EXACT_LATENCIES) -> Outcome:
    """A trace streamed in chunks (time order), never held whole: the same answers as `simulate` on the
    whole trace, the latency percentiles from histograms past `exact_limit` requests. `chunks()` starts a
    read (twice for an automatic --sweep: the first finds the working set); `meta()`, after a read, is the
    reader's account (traces.TraceChunks.meta). A coarse clock's tick is the first chunk's
    (latency.tie_resolution). No --fail: the failure's phases need the whole trace."""
    check_params(p, None, devices)
    if p.failure is not None:
        raise DbtierError("--fail needs the whole trace in memory", "leave --fail out, or read the trace whole")
    return _replay(chunks, meta, p, devices, progress, None, None, exact_limit)


def _replay(chunks: Callable[[], Iterable[Chunk]], meta: Callable[[], Trace], p: Params,
            devices: dict[str, DeviceModel], progress: Progress | None, res: float | None, whole: Trace | None,
            exact_limit: int) -> Outcome:
    """The replay: per chunk, the cache (read-cache), the design's device I/Os and the queueing model, for the
    design and its baseline; what is kept of the requests is bounded by the chunk (sim/device/tally.py). `whole`:
    the trace when it is in memory (res, its clock's tick, found over all of it); else the first chunk's.
    Each part returns its figures; `_document` alone puts them into the result document."""
    progress = progress or _noop
    roles = ROLES[p.design]
    base_role = {"read-cache": "backing", "preferred-read-mirror": "slow"}.get(p.design)
    plan = (mirror_plan.plan(whole, p.failure, p.tracking, p.region_size, devices, roles, res, progress)
            if p.design == "preferred-read-mirror" else None)
    cache = (_CachePass(p, chunks, whole.path if whole is not None else "trace", progress)
             if p.design == "read-cache" else None)
    run = _run(chunks, meta, p, devices, roles, base_role, cache, None if plan is None else plan.phases, res,
               whole, exact_limit, progress)
    tr = meta()
    figs = cache.finish(run.last_t) if cache is not None else None
    return _document(p, devices, roles, tr, run, plan, figs, _device_figures(run, roles, base_role, devices))


@dataclass(frozen=True)
class _Pass:
    """The replay's outcome before it is summarised: the counts, the design's model and its baseline's, the
    design's tallies, the clock's tick the ties were spread over (and a finer one seen later)."""
    requests: int
    reads: int
    bytes: int
    last_t: float               # the last request's time
    last_spread: float          # its time with the ties spread
    timed: bool
    srv: latency.Server
    bsrv: latency.Server | None
    res: float | None
    finer: float | None
    lat: tally.Latencies
    timeline: tally.Timeline
    baseline: Future | None     # the baseline's (percentiles, cdf), computed on a thread
    seconds: float              # the replay's wall time


def _run(chunks: Callable[[], Iterable[Chunk]], meta: Callable[[], Trace], p: Params, devices: dict[str, DeviceModel],
         roles: Sequence[str], base_role: str | None, cache: "_CachePass | None", phases: np.ndarray | None,
         res: float | None, whole: Trace | None, exact_limit: int, progress: Progress) -> _Pass:
    """The chunks through the design and its baseline (`_chunks`), the clock's tick found on the first chunk
    when the trace is streamed; then the baseline's exact percentiles start on a thread."""
    models = [devices[r] for r in roles]
    lat, blat = tally.Latencies(exact_limit), tally.Latencies(exact_limit)
    timeline = tally.Timeline(cache is not None)
    t0 = time.perf_counter()
    if phases is None and (p.sweep_gb is None or p.sweep_gb):
        threading.Thread(target=_load_kernels, args=(p, devices, models, base_role), name="dbtier-kernels",
                         daemon=True).start()
    it = prefetched(chunks())
    first = next(it, None)
    if first is not None and whole is None and p.spread_ties and first.timed:
        res = latency.tie_resolution(first.time_s)
    stream: Iterable[Chunk] = [] if first is None else itertools.chain([first], it)
    if res is not None:
        stream = whole_ticks(stream)
    # the baseline's model runs in a thread beside the design's (the kernels release the GIL)
    side = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dbtier-baseline",
                              initializer=lower_priority) if base_role else None
    try:
        tot, timed, srv, bsrv, finer = _chunks(
            stream, p, devices, models, base_role, cache, phases, res, lat, blat, timeline, side, progress)
    finally:
        it.close()                  # stops the reader thread
        if side is not None:
            side.shutdown()
        if cache is not None:
            cache.close()
    if srv is None:
        raise DbtierError(f"{meta().path}: no requests to replay", "pass a trace with read or write requests")
    seconds = time.perf_counter() - t0
    # the baseline's exact percentiles (a selection over millions of latencies) beside the design's
    bsummary = None
    if bsrv is not None:
        bsum = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dbtier-summary")
        bsummary = bsum.submit(blat.summary)
        bsum.shutdown(wait=False)           # its one task still runs; its thread ends after it, whatever follows
    return _Pass(tot.requests, tot.reads, tot.bytes, tot.last_t, tot.last_spread, timed, srv, bsrv, res, finer, lat,
                 timeline, bsummary, seconds)


@dataclass(frozen=True)
class _DeviceFigures:
    """What the queueing models give the document: the design's latency percentiles and CDFs, each role's
    utilisation and busiest interval, the baseline's block (None for `single`), their notes and warnings."""
    latency_us: dict[str, Any]
    cdf_us: dict[str, Any]
    device_util: dict[str, float]
    busiest: dict[str, Any]
    percentiles: str            # how the percentiles were found (tally.Latencies.method)
    baseline: dict[str, Any] | None
    notes: tuple[str, ...]
    warnings: tuple[str, ...]


def _device_figures(run: _Pass, roles: Sequence[str], base_role: str | None,
                    devices: dict[str, DeviceModel]) -> _DeviceFigures:
    """Each role's utilisation over the replay's span, bursts the average hides, saturated devices; the same
    for the baseline."""
    span = max(run.srv.last_s, run.last_spread if run.timed else 0.0)
    util = np.minimum(run.srv.busy / span, 1.0) if span > 0 else np.zeros(len(roles))
    pct, cdf = run.lat.summary()
    device_util = {role: float(u) for role, u in zip(roles, util)}
    busiest = dict(zip(roles, run.srv.busiest()))
    notes = sweep.burst_notes({"device_util": device_util, "busiest_utilisation": busiest}, roles, devices, pct, "")
    warnings = []
    for role, u in zip(roles, util):
        if u >= 0.99:
            msg = (f"the {role} device ({devices[role].id}) is saturated (utilisation {u:.0%}): requests queue "
                   "without bound and latency reflects the backlog")
            warnings.append(msg)
            notes.append(msg)
    method = run.lat.method()
    baseline = None
    if run.bsrv is not None and run.baseline is not None and base_role is not None:
        bspan = max(run.bsrv.last_s, run.last_spread if run.timed else 0.0)
        b_pct, b_cdf = run.baseline.result()
        baseline = {
            "design": "single", "role": base_role, "device": devices[base_role].id, "latency_us": b_pct,
            "device_util": float(min(run.bsrv.busy[0] / bspan, 1.0)) if bspan > 0 else 0.0, "cdf_us": b_cdf,
            "busiest_utilisation": run.bsrv.busiest()[0],
        }
        notes += sweep.burst_notes({"device_util": {base_role: baseline["device_util"]},
                                    "busiest_utilisation": {base_role: baseline["busiest_utilisation"]}},
                                   [base_role], devices, b_pct, " alone (the baseline)")
    return _DeviceFigures(pct, cdf, device_util, busiest, method, baseline, tuple(notes), tuple(warnings))


def _document(p: Params, devices: dict[str, DeviceModel], roles: Sequence[str], tr: Trace, run: _Pass,
              plan: mirror_plan.MirrorPlan | None, figs: "CacheFigures | None", dev: _DeviceFigures) -> Outcome:
    """The one place the parts become the result document: the contract's keys and `simulation`'s (their
    order is the document's), the notes and warnings in the order the parts come, the timeline's events."""
    cf = figs if figs is not None else _NO_CACHE
    contract: dict[str, Any] = {
        "trace": {"requests": run.requests, "reads": run.reads, "writes": run.requests - run.reads,
                  "bytes": run.bytes, "duration_s": run.last_t if run.timed else None},
        "design": p.design, "policy": p.policy if p.design == "read-cache" else None,
        "read_hit_ratio": cf.read_hit_ratio, "request_hit_ratio": cf.request_hit_ratio,
        "curve": None if cf.curve is None else list(cf.curve), "latency_us": dev.latency_us,
        "device_util": dev.device_util, "resync": None if plan is None else plan.resync,
        "busiest_utilisation": dev.busiest, "recommended_cache_gb": cf.recommended_cache_gb,
        "recommended": cf.recommended,
    }
    notes = [*_tick_note(run.res), *(plan.notes if plan is not None else ()), *_finer_note(run.res, run.finer),
             *cf.notes, *dev.notes]
    timings = {k: v for k, v in (("resync", None if plan is None else plan.resync_timing_s),
                                 ("working_set", cf.working_set_s), ("replay", run.seconds)) if v is not None}
    # dicts, all of them: MirrorPlan only types its events read-only (Mapping)
    events = cast(list[dict[str, Any]], [*(plan.events if plan is not None else ()), *cf.events])
    details: dict[str, Any] = {
        "trace_info": tr.info(), "block_size": p.block_size, "params": p.to_dict(),
        "devices": {r: devices[r].to_dict() for r in roles}, "latency_model": LATENCY_MODEL,
        "cache": cf.cache, "curve_detail": None if cf.curve_detail is None else list(cf.curve_detail),
        "mirror": None if plan is None else plan.mirror, "baseline": dev.baseline, "cdf_us": dev.cdf_us,
        "timeline": run.timeline.result(run.timed, events), "time_spread_resolution_s": run.res, "notes": notes,
        "timings_s": timings, "latency_percentiles": dev.percentiles,
    }
    return Outcome(contract, details, [*cf.warnings, *dev.warnings], run.lat)


def _tick_note(res: float | None) -> list[str]:
    """The clock's tick the ties were spread over (none when they were not)."""
    if res is None:
        return []
    return [f"the trace's clock ticks every {res:g} s; requests sharing a tick were spread evenly across it for "
            "the queueing model (--no-spread keeps them as bursts)"]


def _finer_note(res: float | None, finer: float | None) -> list[str]:
    """A finer tick seen past the first chunk of a streamed trace: its ties were spread over the coarser one."""
    if finer is None:
        return []
    return [f"the trace's clock ticked every {res:g} s in its first requests and every {finer:g} s later: "
            f"ties were spread over {res:g} s throughout (reading the trace whole spreads them over the finest tick)"]


def _chunks(stream: Iterable[Chunk], p: Params, devices: dict[str, DeviceModel], models: list[DeviceModel],
            base_role: str | None, cache: "_CachePass | None", phases: np.ndarray | None, res: float | None,
            lat: tally.Latencies, blat: tally.Latencies, timeline: tally.Timeline, side: ThreadPoolExecutor | None,
            progress: Progress) -> tuple["_Totals", bool, latency.Server | None, latency.Server | None, float | None]:
    """Each chunk through the design (and its baseline, on `side`), then the models' last requests. One chunk
    ahead: a chunk's cache replay (and its baseline) start before the previous chunk's queueing model runs,
    so they overlap; every model still takes the chunks in order. (The totals, whether the trace is timed,
    the design's model and the baseline's (None without requests), a tick finer than `res` seen.)"""
    srv: latency.Server | None = None
    bsrv: latency.Server | None = None
    tot = _Totals()
    timed = True
    finer = None

    def finish(c: Chunk, times: np.ndarray, idx: np.ndarray, is_read: np.ndarray, bdone: Any, started: Any) -> None:
        assert srv is not None          # made for the first chunk, before any chunk is finished
        subs, extra = _design_ios(p, cache, phases, c, idx, started)
        _take(srv.feed(subs, c.first_request, times, {"t": c.time_s, "read": is_read, **extra}, consume=True),
              lat, timeline)
        if bdone is not None:
            bdone.result()
        tot.add(c, times, is_read)
        progress(f"replaying ({tot.requests:,} requests)", c.read_fraction or 0.0)

    # the previous chunk's model runs on a helper of lower priority while this thread waits for it (the same
    # work in the same order; the cache replay, which the run waits on, keeps a core: core/priority.py)
    model = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dbtier-model", initializer=lower_priority)
    modelled: collections.deque[Future] = collections.deque()
    try:
        pending = None
        for c in stream:
            n = len(c)
            if n == 0:
                continue
            if res is not None and finer is None:
                finer = _finer_tick(c.time_s, res)
            times = latency.spread_ties(c.time_s, res)
            if srv is None:
                timed = c.timed
                srv, bsrv = _servers(p, models, devices[base_role] if base_role else None, timed, float(times[0]))
            idx = np.arange(c.first_request, c.first_request + n, dtype=np.int64)
            is_read = c.op == READ
            # the baseline on `side` and the cache on its pool while the previous chunk's model runs on `model`
            bdone = side.submit(_feed_tally, blat, bsrv, [(idx, c.op, c.length_bytes, c.offset_bytes, c.volume)],
                                c.first_request, times, is_read) if bsrv is not None and side is not None else None
            job = (c, times, idx, is_read, bdone, cache.start(c) if cache is not None else None)
            if pending is not None:
                modelled.append(model.submit(finish, *pending))
                if len(modelled) > MODEL_LAG:
                    modelled.popleft().result()
            pending = job
        if pending is not None:
            modelled.append(model.submit(finish, *pending))
        while modelled:
            modelled.popleft().result()
    finally:
        model.shutdown()
    if srv is not None:
        _drain(srv, bsrv, tot.requests, cache is not None, lat, blat, timeline)
    return tot, timed, srv, bsrv, finer


@dataclass
class _Totals:
    """What the replay counts as the chunks' models finish (on the model's thread, chunks in order)."""
    requests: int = 0
    reads: int = 0
    bytes: int = 0
    last_t: float = 0.0             # the last request's time
    last_spread: float = 0.0        # its time with the ties spread

    def add(self, c: Chunk, times: np.ndarray, is_read: np.ndarray) -> None:
        self.requests += len(c)
        self.reads += int(np.count_nonzero(is_read))
        self.bytes += int(c.length_bytes.sum())
        self.last_t, self.last_spread = float(c.time_s[-1]), float(times[-1])


def _servers(p: Params, models: list[DeviceModel], base: DeviceModel | None, timed: bool,
             t0: float) -> tuple[latency.Server, latency.Server | None]:
    """The design's queueing model and its baseline's (`base`: the baseline's device), from the first request
    at `t0`: busy time per second from it (the busiest second beside the average)."""
    if p.restart_at_s and not timed:
        raise DbtierError("--restart-at needs a timed trace; this one has no timestamps", "leave --restart-at out")
    srv = latency.Server(models, timed, t0, BUSIEST_S, grow=True)
    return srv, (latency.Server([base], timed, t0, BUSIEST_S, grow=True) if base is not None else None)


def _design_ios(p: Params, cache: "_CachePass | None", phases: np.ndarray | None, c: Chunk, idx: np.ndarray,
                started: Any) -> tuple[SubIOs, dict[str, np.ndarray]]:
    """The chunk's device I/Os under the design, and what the timeline takes beside them (a cache's hits and
    blocks per request)."""
    if p.design == "single":
        subs = SubIOs.empty()
        subs.add(idx, 0, c.op, c.length_bytes, offset=c.offset_bytes, volume=c.volume)
        return subs, {}
    if cache is not None:
        subs = SubIOs.empty()
        hits, nblk = cache.finish_chunk(started, c, subs)
        return subs, {"hits": hits, "nblk": nblk}
    n = len(c)
    ph = np.zeros(n, dtype=np.int8) if phases is None else phases[c.first_request:c.first_request + n]
    return mirror_plan.subios(c, idx, ph, p.failure), {}


def _finer_tick(time_s: np.ndarray, res: float) -> float | None:
    """The smallest step between distinct times when it is finer than the tick `res`, else None."""
    steps = np.diff(time_s)
    pos = steps[steps > 0]
    return float(pos.min()) if pos.size and pos.min() < res else None


def _drain(srv: latency.Server, bsrv: latency.Server | None, n_req: int, cached: bool, lat: tally.Latencies,
           blat: tally.Latencies, timeline: tally.Timeline) -> None:
    """The models' last requests, once every chunk has been fed, into the tallies."""
    ends = {"t": np.zeros(0), "read": np.zeros(0, dtype=bool)}
    if cached:
        ends.update(hits=np.zeros(0, dtype=np.int32), nblk=np.zeros(0, dtype=np.int32))
    _take(srv.feed(SubIOs.empty(), n_req, np.zeros(0), ends, final=True), lat, timeline)
    if bsrv is not None:
        blat.add(*_feed(bsrv, [], n_req, np.zeros(0), ends["read"], final=True))


def _feed(srv: latency.Server, ios: list[tuple[np.ndarray, ...]], first: int, times: np.ndarray,
          is_read: np.ndarray, final: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Requests straight to device 0 (the baseline): (latency, is_read) of those the model completed."""
    subs = SubIOs.empty()
    for idx, op, nbytes, offset, volume in ios:
        subs.add(idx, 0, op, nbytes, offset=offset, volume=volume)
    d = srv.feed(subs, first, times, {"read": is_read}, final=final, consume=True)
    return d["latency_s"], d["read"]


def _load_kernels(p: Params, devices: dict[str, DeviceModel], models: list[DeviceModel],
                  base_role: str | None) -> None:
    """Two requests through the same steps, thrown away: numba loads each kernel from its cache on first use
    (0.1 s to set itself up, then tens of ms a kernel, one at a time), which here overlaps the reader's first
    chunk instead of following it. Best effort: the replay itself reports any error."""
    try:
        c = Chunk(np.array([0.0, 1e-3]), np.array([READ, WRITE], dtype=np.uint8), np.array([0, 8192], dtype=np.int64),
                  np.array([8192, 8192], dtype=np.int64), np.zeros(2, dtype=np.int32))
        cache = _CachePass(p, lambda: [c], "warm-up", _noop) if p.design == "read-cache" else None
        try:
            _chunks([c], p, devices, models, base_role, cache, None, None, tally.Latencies(0), tally.Latencies(0),
                    tally.Timeline(cache is not None), None, _noop)
        finally:
            if cache is not None:
                cache.close()
    except Exception:       # noqa: BLE001 - a warm-up only
        pass


def _feed_tally(blat: tally.Latencies, *args: Any) -> None:
    """The baseline's chunk through its model and into its tally, on its own thread (chunks in order)."""
    blat.add(*_feed(*args))


def _take(done: dict[str, Any], lat: tally.Latencies, timeline: tally.Timeline) -> None:
    """Requests the model has completed: into the latency tally and the timeline."""
    bins = lat.add(done["latency_s"], done["read"])
    timeline.add(done["t"], done["read"], done["latency_s"], done.get("hits"), done.get("nblk"), bins)


class _CachePass:
    """The read-cache design's replay chunk by chunk: the cache (and, for --sweep, one cache per size fed
    the same blocks), each chunk's device I/Os, and the working set (exact while small, else an estimate:
    workingset.py)."""

    def __init__(self, p: Params, chunks: Callable[[], Iterable[Chunk]], path: str, progress: Progress):
        self.p = p
        self.path = path
        self.ws = workingset.WorkingSet(p.block_size, workingset.EXACT_BLOCKS)
        self.counted = False            # the working set known before the replay (an automatic sweep's pass)
        self.counted_s: float | None = None     # that pass's wall time
        sizes = None
        # the working set is counted first for an automatic sweep's sizes and for the default cache size
        if p.cache_gb is None or p.sweep_gb == ():
            progress("finding the working set", 0.0)
            t0 = time.perf_counter()
            for c in chunks():
                self.ws.feed_chunk(c, path)
            self.counted = True
            self.counted_s = time.perf_counter() - t0
        # no --cache-gb: the working set, the size at which every re-read hits (at least one block)
        self.defaulted = p.cache_gb is None
        self.cap = max(1, self.ws.nids) if p.cache_gb is None else cache_mod.capacity_blocks(p.cache_gb, p.block_size)
        self.cache_gb = self.cap * p.block_size / 1e9 if p.cache_gb is None else p.cache_gb
        if p.sweep_gb is not None:
            sizes = list(p.sweep_gb) or cache_mod.default_sweep_gb(self.ws.bytes, p.block_size)
            if self.cache_gb not in sizes and not (self.defaulted and sizes and
                                                   math.isclose(sizes[-1], self.cache_gb, rel_tol=1e-12)):
                sizes.append(self.cache_gb)
            sizes = sorted(set(sizes))
        self.sizes = sizes
        self.main = cache_mod.Replay(self.cap, p.policy, p.write_mode, p.block_size, keep_records=False)
        # the other write mode's read hits, from one more cache fed the same blocks in the same pass, while
        # its footprint is small (ALT_MAX_BLOCKS): the kernels run one write mode at a time
        self.alt_mode = sweep.other_write_mode(p.write_mode)
        self.alt: cache_mod.Replay | None = cache_mod.Replay(self.cap, p.policy, self.alt_mode, p.block_size,
                                                             record=False)
        self.alt_dropped = False
        self.sweeps = [cache_mod.Replay(cache_mod.capacity_blocks(g, p.block_size), p.policy, p.write_mode,
                                        p.block_size, record=False) for g in sizes or []]
        self.cutoff = cache_mod.SequentialCutoff(p.seq_cutoff_bytes) if p.seq_cutoff_bytes else None
        self.restarts = cache_mod.Restarts(p.restart_at_s)
        jobs = max(1, min(p.jobs or os.cpu_count() or 1, len(self.sweeps) + 3))
        # the caches on one pool, the count on a helper of lower priority (it only has to keep up)
        self.pool = ThreadPoolExecutor(max_workers=max(1, jobs - 1)) if jobs > 1 else None
        self.ws_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dbtier-workingset",
                                          initializer=lower_priority) if jobs > 1 and not self.counted else None
        self.last: dict[int, Future] = {}       # each cache's (and the count's) latest task

    def start(self, c: Chunk) -> tuple[Any, ...]:
        """Start the chunk's replay through the caches (and its working-set count) on the pool. Each cache takes
        the chunks in order: a chunk's task waits for its previous chunk's, which the pool (first in, first
        out) has already started."""
        p = self.p
        prep = cut_chunk(c, p.block_size, self.path)
        byp = self.cutoff.feed(c.offset_bytes, c.length_bytes, c.volume) if self.cutoff else None
        rr = self.restarts.feed(c.time_s, prep.first_request)
        work: list[tuple[Any, Callable[[], Any]]] = [
            (rp, functools.partial(rp.feed_prepared, prep, byp, rr)) for rp in (self.main, *self.sweeps)]
        if self.alt is not None:
            work.append((self.alt_mode, lambda: self._feed_alt(prep, byp, rr)))
        if not self.counted:
            work.append((self.ws, lambda: self.ws.feed_chunk(c, self.path)))
        futures = []
        for owner, task in work:
            before = self.last.get(id(owner))
            pool = self.ws_pool if owner is self.ws else self.pool
            fut = pool.submit(_after, before, task) if pool is not None else _done(task())
            self.last[id(owner)] = fut
            futures.append(fut)
        return prep, byp, futures

    def _feed_alt(self, prep: Any, byp: Any, rr: Any) -> None:
        """The other write mode's cache takes the chunk; past ALT_MAX_BLOCKS of footprint it is dropped."""
        alt = self.alt
        if alt is None:
            return
        alt.feed_prepared(prep, byp, rr)
        if alt.rows.hiwater > ALT_MAX_BLOCKS:
            self.alt, self.alt_dropped = None, True

    def finish_chunk(self, started: tuple[Any, ...], c: Chunk, subs: SubIOs) -> tuple[np.ndarray, np.ndarray]:
        """The chunk's replay done: add its device I/Os (sim/routing.py) to `subs`; (hits, blocks) per request."""
        prep, byp, futures = started
        hits, adm, dst, fm = futures[0].result()
        for f in futures[1:]:
            f.result()
        ios = routing.cache_ios(c.first_request, c.op, c.offset_bytes, c.length_bytes, c.volume, prep.nblk, hits,
                                adm, dst, fm, byp, self.p.block_size, self.p.write_mode)
        for name in ("req", "dev", "fg", "op", "nbytes", "offset", "volume"):
            getattr(subs, name).extend(getattr(ios, name))
        return hits, prep.nblk

    def close(self) -> None:
        for pool in (self.pool, self.ws_pool):
            if pool is not None:
                pool.shutdown(cancel_futures=True)      # after a failure: the chunks not started are dropped

    def finish(self, end_s: float) -> "CacheFigures":
        """The cache's figures once the replay is done (`end_s`: the trace's last request)."""
        p = self.p
        for t in p.restart_at_s:
            if t > end_s:               # a streamed trace's end is known only now (check_params's message)
                raise DbtierError(f"--restart-at {t:g} s is outside the trace (0 to {end_s:g} s)",
                                  "give a time within the trace, in seconds from its first request")
        cr = self.main.result()
        curve_detail = self._curve_detail(cr)
        alt = self.alt.result() if self.alt is not None else None
        rec = sweep.recommend(curve_detail) if self.sizes is not None else None
        notes, warnings = self._notes(cr, alt, curve_detail)
        return CacheFigures(
            read_hit_ratio=cr.read_hit_ratio, request_hit_ratio=cr.request_hit_ratio,
            curve=tuple({"cache_gb": c["cache_gb"], "read_hit_ratio": c["read_hit_ratio"]} for c in curve_detail),
            recommended_cache_gb=rec["cache_gb"] if rec else None, recommended=rec, cache=self._block(cr, alt),
            curve_detail=tuple(curve_detail), notes=notes, warnings=warnings,
            events=tuple({"t_s": t, "event": "restart", "label": "cache emptied (restart)"} for t in p.restart_at_s),
            working_set_s=self.counted_s)

    def _curve_detail(self, cr: Any) -> list[dict[str, Any]]:
        """Each size's hit ratios: the sweep's sizes, else the one cache's. Whether a cache holds the whole
        working set is exact even where its size is an estimate (Replay)."""
        if self.sizes is None:
            return [{"cache_gb": self.cache_gb, "capacity_blocks": self.cap, "read_hit_ratio": cr.read_hit_ratio,
                     "request_hit_ratio": cr.request_hit_ratio,
                     "larger_than_working_set": self.main.covers_working_set}]
        return [{"cache_gb": g, "capacity_blocks": rp.capacity, "read_hit_ratio": r.read_hit_ratio,
                 "request_hit_ratio": r.request_hit_ratio, "larger_than_working_set": rp.covers_working_set}
                for g, rp, r in zip(self.sizes, self.sweeps, (rp.result() for rp in self.sweeps))]

    def _notes(self, cr: Any, alt: Any, curve_detail: list[dict[str, Any]]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(notes, warnings): the cache's size against the working set, the other write mode, the sweep's
        sizes past the working set, an estimated working set, write-back's destaging."""
        p, ws, cap, cache_gb = self.p, self.ws, self.cap, self.cache_gb
        nids = ws.nids
        notes: list[str] = []
        warnings: list[str] = []
        about = "" if ws.exact else "about "
        if self.defaulted:
            notes.append(f"the cache is the trace's working set ({about}{size_text(cache_gb * 1e9)}, "
                         f"{about}{nids:,} distinct {p.block_size}-byte blocks), the default without --cache-gb: the size at which every "
                         "re-read hits, so only first-touch misses remain")
        elif self.main.covers_working_set:
            msg = (f"the cache ({size_text(cache_gb * 1e9)}, {cap:,} blocks) is larger than the trace's working set "
                   f"({about}{size_text(ws.bytes)}, {about}{nids:,} distinct {p.block_size}-byte blocks): once a "
                   "block is cached it stays, only first-touch misses remain")
            warnings.append(msg)
            notes.append(msg)
        alt_note = sweep.write_mode_note(p.write_mode, cr.read_hit_ratio, self.alt_mode,
                                         alt.read_hit_ratio if alt else None)
        if alt_note:
            notes.append(alt_note)
        elif self.alt_dropped:
            notes.append(f"{self.alt_mode} was not compared: the trace touches more than {ALT_MAX_BLOCKS:,} blocks, "
                         "past which a second cache in the same replay costs too much memory (run it with "
                         f"--write-mode {self.alt_mode})")
        over = [c["cache_gb"] for c in curve_detail if c["larger_than_working_set"] and c["cache_gb"] != cache_gb]
        if over:
            notes.append("sweep sizes larger than the working set: " + ", ".join(size_text(g * 1e9) for g in over))
        if not ws.exact:
            notes.append(f"the working set ({nids:,} distinct {p.block_size}-byte blocks, {ws.read_nids:,} of them "
                         f"read) is an estimate: past {ws.exact_max:,} blocks it is counted by "
                         f"{ws.describe()['working_set_method']}"
                         + ("; the sweep's sizes are halvings of it" if self.counted else ""))
        if p.write_mode == "write-back":
            notes.append(f"write-back: {cr.counters['destaged_blocks']:,} dirty blocks destaged on eviction or "
                         f"restart; {cr.counters['dirty_blocks_at_end']:,} still dirty at the end of the trace")
        return tuple(notes), tuple(warnings)

    def _block(self, cr: Any, alt: Any) -> dict[str, Any]:
        """The document's `simulation.cache` block: the counters, the sizes, the working set, the other write mode."""
        p, ws = self.p, self.ws
        return {
            **cr.to_dict(), "cache_gb": self.cache_gb, "capacity_bytes": self.cap * p.block_size,
            "seq_cutoff_bytes": p.seq_cutoff_bytes, "restart_at_s": list(p.restart_at_s),
            "working_set_bytes": ws.bytes, "read_working_set_bytes": ws.read_bytes,
            "working_set_blocks": ws.nids, **ws.describe(), "cache_gb_from": "working set" if self.defaulted
            else "--cache-gb",
            "write_mode_alternative": None if alt is None else {
                "write_mode": self.alt_mode, "read_hit_ratio": alt.read_hit_ratio,
                "request_hit_ratio": alt.request_hit_ratio, "margin_pp": sweep.WRITE_MODE_MARGIN_PP,
                "method": "a second cache of the same size fed the same blocks in the same replay"},
        }


@dataclass(frozen=True)
class CacheFigures:
    """The read-cache's part of the result document: the contract's hit ratios, curve and recommendation,
    the `cache` and `curve_detail` blocks, its notes, warnings and timeline events (restarts), and the
    working-set pass's wall time (None when the working set was counted during the replay)."""
    read_hit_ratio: float | None
    request_hit_ratio: float | None
    curve: tuple[dict[str, Any], ...] | None
    recommended_cache_gb: float | None
    recommended: dict[str, Any] | None
    cache: dict[str, Any] | None
    curve_detail: tuple[dict[str, Any], ...] | None
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    events: tuple[dict[str, Any], ...] = ()
    working_set_s: float | None = None


_NO_CACHE = CacheFigures(None, None, None, None, None, None, None)      # a design without a cache


def _after(before: Future | None, task: Callable[[], Any]) -> Any:
    if before is not None:
        before.result()
    return task()


def _done(value: Any) -> Future:
    f: Future = Future()
    f.set_result(value)
    return f
