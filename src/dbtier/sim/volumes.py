"""Every volume of a multi-volume trace replayed on its own (`simulate run --volume all`).

A multi-volume trace (MSR Cambridge's 36 volumes, Alibaba's and Tencent's thousands) is many hosts'
or databases' I/O side by side. Without --volume, dbtier replays them together through one design (one
cache shared by all: the consolidated array's question). With `--volume all` each volume gets the design
to itself -- its own devices and its own cache of --cache-gb -- the question "what does each of these
databases get from this design", and the replays are independent: one process per volume on every core
(`jobs`), or on a Dask cluster (`cluster`: a scheduler's address; dask's `distributed` must be installed
on this machine and on the workers, with this dbtier).

The results are put together (`combine`, pure): per volume its own figures; in total the trace's counts
summed, hit ratios from the summed block and request counts (not averaged ratios), latency percentiles
from the merged histograms (latency.HIST_RULE, not averaged percentiles), and each role's utilisation as
the busiest volume's (each volume has devices of its own, so there is no shared utilisation to add up).

Times (--restart-at, --fail) count from the whole trace's first request, while a volume's replay starts
at its own first request; they are refused here rather than shifted silently (replay one volume with
--volume NAME for them).
"""

from __future__ import annotations

import multiprocessing
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from dbtier.core.errors import DbtierError
from dbtier.sim.device import latency, tally
from dbtier.sim.trace.traces import Trace

ALL = "all"


@dataclass(frozen=True)
class VolumeResult:
    """One volume's replay, reduced to what the total needs (arrays of a fixed size, whatever the trace)."""
    volume: str
    contract: dict[str, Any]
    cache: dict[str, Any] | None            # the replay's cache counters (read-cache)
    curve: list[dict[str, Any]] | None      # its curve_detail
    read_hist: np.ndarray
    write_hist: np.ndarray
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def check(p: Any) -> None:
    """Refuse what per-volume replays cannot mean (see the module docstring), before any work."""
    if p.restart_at_s:
        raise DbtierError("--restart-at with --volume all: restart times count from the whole trace's first "
                          "request, each volume's replay from its own", "replay one volume with --volume NAME")
    if p.failure is not None:
        raise DbtierError("--fail with --volume all: failure times count from the whole trace's first request, "
                          "each volume's replay from its own", "replay one volume with --volume NAME")


@dataclass
class Source:
    """The volumes to replay, one at a time: `items()` yields (name, a Trace or an object whose load() makes
    one in the worker -- a converted trace's volume file, so no process holds the whole trace)."""
    path: str
    names: list[str]                 # the volumes with requests, in the trace's order
    info: dict[str, Any]             # the reader's account (Trace.info())
    summary: dict[str, Any]          # the whole trace's figures (Trace.summary())
    items: Callable[[], Iterator[tuple[str, Any]]]


def from_trace(trace: Trace) -> Source:
    """An in-memory trace's volumes (each a copy of its rows, made when its turn comes)."""
    counts = np.bincount(trace.volume, minlength=len(trace.volumes)) if len(trace) else np.zeros(0, dtype=int)
    names = [n for i, n in enumerate(trace.volumes) if i < counts.size and counts[i]]
    return Source(trace.path, names, trace.info(), trace.summary(),
                  lambda: ((n, trace.only_volume(n)) for n in names))


def replay_volume(name: str, trace: Any, p: Any, devices: dict[str, latency.DeviceModel]) -> VolumeResult:
    """One volume through the design (in a worker process): its figures and latency histograms."""
    from dbtier.sim.simulate import simulate
    if not isinstance(trace, Trace):
        trace = trace.load()            # a converted volume: read here, by the worker
    out = simulate(trace, p, devices)
    det = out.details
    lat = out.latencies
    assert lat is not None              # simulate() always keeps them
    return VolumeResult(name, out.contract, det.get("cache"), det.get("curve_detail"),
                        lat.hist["read"], lat.hist["write"],
                        list(det.get("notes") or []), list(out.warnings))


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def combine(results: Sequence[VolumeResult], design: str, policy: str | None,
            whole: dict[str, Any]) -> dict[str, Any]:
    """The total of several volumes' replays (pure): the contract's keys, plus `volumes` (one entry each).
    `whole`: the trace's own summary (requests, reads, writes, bytes, duration over all volumes)."""
    rh = np.sum([r.read_hist for r in results], axis=0) if results else np.zeros(1, dtype=np.int64)
    wh = np.sum([r.write_hist for r in results], axis=0) if results else np.zeros(1, dtype=np.int64)
    caches = [r.cache for r in results if r.cache]
    read_hit = req_hit = None
    if caches:
        read_hit = _ratio(sum(c["read_block_hits"] for c in caches), sum(c["read_blocks"] for c in caches))
        req_hit = _ratio(sum(c["read_req_hits"] for c in caches), sum(c["read_reqs"] for c in caches))
    roles = list((results[0].contract.get("device_util") or {}).keys()) if results else []
    util = {role: max((r.contract["device_util"][role] for r in results), default=None) for role in roles}
    curve = _curve(results)
    return {
        "trace": dict(whole), "design": design, "policy": policy,
        "read_hit_ratio": read_hit, "request_hit_ratio": req_hit,
        "curve": [{"cache_gb": c["cache_gb"], "read_hit_ratio": c["read_hit_ratio"]} for c in curve] if curve else None,
        "latency_us": {"read": latency.percentiles_from_histogram_us(rh),
                       "write": latency.percentiles_from_histogram_us(wh)},
        "device_util": util, "resync": None,
        "volumes": [{"volume": r.volume, "trace": r.contract["trace"], "read_hit_ratio": r.contract["read_hit_ratio"],
                     "request_hit_ratio": r.contract["request_hit_ratio"], "latency_us": r.contract["latency_us"],
                     "device_util": r.contract["device_util"]} for r in results],
    }


def _curve(results: Sequence[VolumeResult]) -> list[dict[str, Any]] | None:
    """The total hit-ratio curve where every volume swept the same sizes: at each size the summed hits over
    the summed reads (a volume's read blocks and read requests are the same at every size). None otherwise."""
    curves = [r.curve for r in results if r.curve is not None and len(r.curve) >= 2]
    caches = [r.cache for r in results if r.cache is not None]
    if not results or len(curves) < len(results) or len(caches) < len(results):
        return None
    sizes = [pt["cache_gb"] for pt in curves[0]]
    if any([pt["cache_gb"] for pt in c] != sizes for c in curves):
        return None
    blocks = [c["read_blocks"] for c in caches]
    reqs = [c["read_reqs"] for c in caches]
    out = []
    for i, gb in enumerate(sizes):
        hits = sum((c[i]["read_hit_ratio"] or 0.0) * n for c, n in zip(curves, blocks))
        req_hits = sum((c[i]["request_hit_ratio"] or 0.0) * n for c, n in zip(curves, reqs))
        out.append({"cache_gb": gb, "read_hit_ratio": _ratio(hits, sum(blocks)),
                    "request_hit_ratio": _ratio(req_hits, sum(reqs)),
                    "larger_than_working_set": all(c[i]["larger_than_working_set"] for c in curves)})
    return out


# the cache figures that add up over volumes (counts); the rest are each volume's own (its size, its mode)
_SUMMED = ("read_blocks", "read_block_hits", "read_reqs", "read_req_hits", "working_set_bytes",
           "read_working_set_bytes", "working_set_blocks")


def details(results: Sequence[VolumeResult], src: Source, p: Any, devices: dict[str, latency.DeviceModel],
            cluster: str | None) -> dict[str, Any]:
    """The `simulation` block of a --volume all run: what the one-volume renderers read, for the total."""
    from dbtier.sim.names import ROLES
    from dbtier.sim.simulate import LATENCY_MODEL
    rh = np.sum([r.read_hist for r in results], axis=0)
    wh = np.sum([r.write_hist for r in results], axis=0)
    caches = [r.cache for r in results if r.cache]
    cache: dict[str, Any] | None = None
    if caches:
        counters = [k for k, v in caches[0].items() if isinstance(v, int) and not isinstance(v, bool)
                    and k not in ("capacity_blocks", "capacity_bytes")]
        cache = {**{k: caches[0][k] for k in ("policy", "write_mode", "cache_gb", "capacity_blocks",
                                               "capacity_bytes", "seq_cutoff_bytes") if k in caches[0]},
                 **{k: sum(c.get(k) or 0 for c in caches) for k in dict.fromkeys([*counters, *_SUMMED])
                    if k in caches[0]},
                 "per_volume": True}
        # a sum with an estimated part is an estimate; its relative error is at most the largest part's
        est = [c for c in caches if c.get("working_set_estimate")]
        if "working_set_method" in caches[0]:
            cache.update(working_set_estimate=bool(est), working_set_method=(est or caches)[0]["working_set_method"],
                         working_set_relative_std_error=max(c["working_set_relative_std_error"] for c in caches))
        cache["read_hit_ratio"] = _ratio(cache.get("read_block_hits", 0), cache.get("read_blocks", 0))
        cache["request_hit_ratio"] = _ratio(cache.get("read_req_hits", 0), cache.get("read_reqs", 0))
    notes = [f"--volume all: {len(results):,} volumes, each through the design on its own (its own devices"
             + (f" and a {caches[0]['cache_gb']:g} GB cache" if caches else "") + "); totals: counts summed, "
             "hit ratios from the summed counts, " + latency.HIST_RULE + "; utilisation: the busiest volume's",
             *(f"volume {r.volume}: {n}" for r in results for n in r.notes)]
    return {"trace_info": src.info, "block_size": p.block_size, "params": p.to_dict(),
            "devices": {r: devices[r].to_dict() for r in ROLES[p.design]}, "latency_model": LATENCY_MODEL,
            "cache": cache, "curve_detail": _curve(results), "mirror": None, "baseline": None,
            "cdf_us": {"read": tally.histogram_cdf(rh), "write": tally.histogram_cdf(wh)}, "timeline": None,
            "time_spread_resolution_s": None, "notes": notes, "timings_s": {},
            "volumes_mode": "each", "cluster": cluster, "histogram_rule": latency.HIST_RULE}


# -- running the replays --------------------------------------------------------------------------------------

Done = Callable[[VolumeResult, int, int], None]


def run(src: Source, p: Any, devices: dict[str, latency.DeviceModel], jobs: int | None = None,
        client: Any = None, done: Done | None = None) -> list[VolumeResult]:
    """Every volume's replay, in the trace's volume order, on this machine's processes or on `client`'s
    Dask cluster (`connect`; closed when done); `done(result, finished, total)` after each."""
    check(p)
    total = len(src.names)
    if total == 0:
        raise DbtierError(f"{src.path}: no requests to replay", "pass a trace with read or write requests")
    order = {name: i for i, name in enumerate(src.names)}
    if client is not None:
        got = _on_dask(client, src, p, devices, total, done)
    else:
        got = _on_processes(src, p, devices, jobs, total, done)
    return sorted(got, key=lambda r: order[r.volume])


def _on_processes(src: Source, p: Any, devices: dict, jobs: int | None, total: int,
                  done: Done | None) -> list[VolumeResult]:
    jobs = max(1, min(jobs or multiprocessing.cpu_count() or 1, total))
    got: list[VolumeResult] = []
    if jobs == 1:
        for name, sub in src.items():
            got.append(replay_volume(name, sub, p, devices))
            if done:
                done(got[-1], len(got), total)
        return got
    # spawn, not fork: a forked child of a process with threads (DuckDB's, numba's) can hang on their locks.
    # At most `jobs` volumes are in flight, so memory holds `jobs` volumes' copies, not the whole trace twice.
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:   # leaving it terminates the workers
        pending: list[Any] = []
        for name, sub in src.items():
            pending.append(pool.apply_async(replay_volume, (name, sub, p, devices)))
            del sub
            while len(pending) >= jobs:
                pending = _collect(pending, got, total, done)
        while pending:
            pending = _collect(pending, got, total, done)
    return got


def _collect(pending: list[Any], got: list[VolumeResult], total: int, done: Done | None) -> list[Any]:
    """Wait for the first finished replay of `pending` (polling: AsyncResult has no wait-for-any)."""
    while True:
        for i, a in enumerate(pending):
            if a.ready():
                got.append(a.get())             # a worker's DbtierError is raised here, as it was raised there
                if done:
                    done(got[-1], len(got), total)
                return pending[:i] + pending[i + 1:]
        pending[0].wait(0.05)


def connect(address: str) -> Any:
    """A Dask client of the scheduler at `address` with at least one worker, or a DbtierError saying what
    to start (called before the run directory exists: an unreachable cluster leaves nothing behind)."""
    try:
        from distributed import Client
    except ImportError:
        raise DbtierError("--cluster needs Dask's `distributed` package on this machine",
                          "install it (pip install distributed), or leave --cluster out to use this machine's "
                          "cores") from None
    try:
        client = Client(address, timeout="10s")
    except (OSError, TimeoutError, ValueError) as exc:
        raise DbtierError(f"--cluster {address}: no Dask scheduler answers there ({exc})",
                          "start one with `dask scheduler` and a `dask worker ADDRESS` on each host (with this "
                          "dbtier installed), or leave --cluster out") from None
    if not client.scheduler_info().get("workers"):
        client.close()
        raise DbtierError(f"--cluster {address}: the scheduler has no workers",
                          f"start `dask worker {address}` on each host, then run again")
    return client


def _on_dask(client: Any, src: Source, p: Any, devices: dict, total: int,
             done: Done | None) -> list[VolumeResult]:
    from distributed import as_completed
    got: list[VolumeResult] = []
    with client:
        futures = []
        for name, sub in src.items():
            if not isinstance(sub, Trace):
                sub = sub.load()    # a converted volume's file may not be on the workers' disks: send its data
            # scattered first: a volume's arrays travel to a worker as data, not inside the task graph
            futures.append(client.submit(replay_volume, name, client.scatter(sub), p, devices, pure=False))
        for fut in as_completed(futures):
            got.append(fut.result())
            if done:
                done(got[-1], len(got), total)
    return got
