"""How fast `dbtier simulate` replays a cache: requests per second per core, and a size sweep on all cores.

    uv run python bench/simulate_speed.py                     # 50 million requests (about 2 GB of memory)
    uv run python bench/simulate_speed.py --requests 5e6      # a quicker look
    uv run python bench/simulate_speed.py --json fig.json     # the figures also as JSON (default runs/bench/)

The trace is generated: single-block (8 KiB) requests over `--blocks` distinct blocks, Zipf-like
popularity (P(rank k) ~ 1/k^alpha, popular blocks scattered over the address space), `--write-pct`
writes, one request per 10 µs. What is timed:

- load: generating the arrays, then `cache.prepare` (cutting into blocks, every block's key, and counting
  the distinct blocks exactly): its time and its peak memory above the process's resident set before it
  (Linux's VmHWM, reset through /proc/self/clear_refs), reported, not part of the replay figure (which
  includes finding each block's row from its key: the kernels hash, sim/slots.py);
- JIT: the kernels are compiled (or loaded from numba's cache) on a small prefix first: excluded;
- replay: one `cache.run_cache` call per policy (LRU, S3-FIFO, FIFO), write-around, on one core (the kernel is single-threaded),
  counters only (`record=False`), and again with the per-request outputs the latency model needs; the
  figure is requests per CPU-second of the replaying thread (robust to other processes on the machine),
  with the wall-clock rate beside it;
- streaming: the same replays through `cache.Replay` fed chunks of 2^20 requests (cutting each chunk into
  blocks included), counters compared with the whole-trace replay's;
- sweep: `cache.sweep` over 8 sizes with 1 thread, then with one thread per core (the kernels release
  the GIL): aggregate requests replayed per second;
- queueing model: `latency.serve` (design `single`) over the same requests on an enterprise NVMe and on a
  7,200 rpm disk (catalog figures; the disk is saturated at this arrival rate, which only makes its queue
  long), per CPU-second of the calling thread, best of 3.
"""

from __future__ import annotations

import argparse
import os
import re
import time

import numpy as np

from dbtier.model.plan.catalog import load_catalog
from dbtier.sim.cache import replay as cache
from dbtier.sim.device import latency
from dbtier.sim.trace.chunks import chunks_of
from dbtier.sim.trace.traces import from_arrays

import _figures  # noqa: E402  (bench/ is on sys.path: the script's own directory)

BS = 8192


def zipf_trace(n: int, blocks: int, alpha: float, write_pct: float, seed: int):
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, blocks + 1, dtype=np.float64) ** alpha
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    rank = np.searchsorted(cdf, rng.random(n), side="right").astype(np.int64)
    rank = np.minimum(rank, blocks - 1)
    scatter = rng.permutation(blocks).astype(np.int64)      # popular blocks are not neighbours on disk
    offset = scatter[rank] * BS
    op = (rng.random(n) < write_pct / 100).astype(np.uint8)
    t = np.arange(n, dtype=np.float64) * 1e-5
    return from_arrays(t, op, offset, np.full(n, BS, dtype=np.int64), name="zipf")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=float, default=50e6)
    ap.add_argument("--blocks", type=float, default=10e6, help="distinct blocks (default 10 million: 82 GB)")
    ap.add_argument("--alpha", type=float, default=0.9)
    ap.add_argument("--write-pct", type=float, default=10.0)
    ap.add_argument("--cache-pct", type=float, default=10.0, help="cache size, %% of the working set")
    ap.add_argument("--seed", type=int, default=1)
    _figures.add_option(ap)
    args = ap.parse_args()
    n, blocks = int(args.requests), int(args.blocks)
    cores = os.cpu_count() or 1

    t0 = time.perf_counter()
    tr = zipf_trace(n, blocks, args.alpha, args.write_pct, args.seed)
    t_gen = time.perf_counter() - t0
    cache.prepare(from_arrays([0.0], [0], [0], [BS]), BS)         # its JIT (or cache load) is not its memory
    rss0 = _reset_peak_rss()
    t0 = time.perf_counter()
    prep = cache.prepare(tr, BS)
    t_prep = time.perf_counter() - t0
    prep_peak = _peak_rss() - rss0 if rss0 is not None else None
    queue_speed, queue_figures = serve_speed(tr)
    cap = max(1, int(prep.nids * args.cache_pct / 100))
    print(f"trace: {n:,} requests ({args.write_pct:g}% writes), Zipf alpha {args.alpha:g} over {blocks:,} blocks; "
          f"{prep.nids:,} touched ({prep.working_set_bytes / 1e9:.1f} GB of 8 KiB blocks)")
    peak = f", peak {prep_peak / 1e6:,.0f} MB above the trace" if prep_peak is not None else ""
    print(f"load (not timed below): generate {t_gen:.1f} s, prepare (block keys, exact count) {t_prep:.2f} s{peak}")
    figures: dict = {"requests": n, "blocks_touched": prep.nids, "cache_blocks": cap, "generate_s": t_gen,
                     "prepare_s": t_prep, "prepare_peak_bytes": prep_peak, "replay": [], "sweep": []}

    small = cache.cut(tr.offset_bytes[:10_000], tr.length_bytes[:10_000], tr.volume[:10_000], tr.op[:10_000], BS)
    t0 = time.perf_counter()
    for policy in cache.POLICIES:
        cache.run_cache(small, 100, policy, record=True)
        cache.run_cache(small, 100, policy, record=False)
    print(f"JIT compile or cache load (excluded): {time.perf_counter() - t0:.1f} s")

    def timed(policy: str, record: bool, repeat: int = 3) -> tuple[float, float, cache.CacheResult]:
        """Best wall time and best CPU time of this thread (the kernel runs on it: one core). The CPU time
        is the per-core figure even when other processes share the machine; wall time is what you wait."""
        wall, cpu, res = float("inf"), float("inf"), None
        for _ in range(repeat):
            t0, c0 = time.perf_counter(), time.thread_time()
            res = cache.run_cache(prep, cap, policy, "write-around", record=record)
            wall = min(wall, time.perf_counter() - t0)
            cpu = min(cpu, time.thread_time() - c0)
        return wall, cpu, res

    whole: dict[str, dict] = {}
    print(f"\nreplay, cache {cap:,} blocks ({args.cache_pct:g}% of the working set), write-around, one core, "
          "best of 3 (per CPU-second of the replaying thread; wall clock in brackets):")
    for policy in ("lru", "s3fifo", "fifo"):
        for record in (False, True):
            wall, cpu, res = timed(policy, record)
            what = "counters + per-request outputs" if record else "counters only"
            print(f"  {policy:7s} {what:31s} {n / cpu / 1e6:6.1f} M requests/s  ({n / wall / 1e6:.1f} M/s wall, "
                  f"{wall:.2f} s; read hit ratio {res.read_hit_ratio:.3f})")
            figures["replay"].append({"policy": policy, "record": record, "m_requests_per_cpu_s": n / cpu / 1e6,
                                      "m_requests_per_wall_s": n / wall / 1e6, "wall_s": wall,
                                      "read_hit_ratio": res.read_hit_ratio})
            if not record:
                whole[policy] = res.counters

    chunk = 1 << 20
    print(f"\nstreaming replay (cache.Replay fed chunks of {chunk:,} requests: cutting, counting the working set and the kernel, "
          "counters only, one core, best of 2):")
    figures["streaming"] = []
    for policy in ("lru", "s3fifo", "fifo"):
        cpu, wall = float("inf"), float("inf")
        for _ in range(2):
            t0, c0 = time.perf_counter(), time.thread_time()
            rp = cache.Replay(cap, policy, "write-around", BS, record=False)
            for ch in chunks_of(tr, chunk):
                rp.feed(ch)
            cpu, wall = min(cpu, time.thread_time() - c0), min(wall, time.perf_counter() - t0)
        same = rp.result().counters == whole[policy]
        print(f"  {policy:7s} {n / cpu / 1e6:6.1f} M requests/s  ({n / wall / 1e6:.1f} M/s wall; counters "
              f"{'identical to' if same else 'DIFFER FROM'} the whole-trace replay's)")
        figures["streaming"].append({"policy": policy, "chunk_requests": chunk, "m_requests_per_cpu_s": n / cpu / 1e6,
                                     "m_requests_per_wall_s": n / wall / 1e6, "same_counters": same})
    del tr

    caps = [max(1, int(prep.nids * f)) for f in (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)]
    print(f"\nLRU size sweep, {len(caps)} sizes ({len(caps) * n:,} requests replayed), wall clock:")
    for jobs in sorted({1, cores}):
        t0, c0 = time.perf_counter(), time.process_time()
        curve = cache.sweep(prep, caps, "lru", jobs=jobs)
        secs, cpu = time.perf_counter() - t0, time.process_time() - c0
        print(f"  {jobs} thread{'s' if jobs > 1 else ' '} {len(caps) * n / secs / 1e6:6.1f} M requests/s in all "
              f"({secs:.1f} s wall, {cpu:.1f} s CPU: {cpu / secs:.2f} cores busy)")
        figures["sweep"].append({"threads": jobs, "sizes": len(caps), "m_requests_per_wall_s": len(caps) * n / secs / 1e6,
                                 "wall_s": secs, "cpu_s": cpu})
    load = os.getloadavg()[0]
    print(f"  load average during the run: {load:.1f} on {cores} cores"
          + ("  (other processes share the machine: wall-clock figures are low)" if load > cores else ""))
    print("  hit ratios: " + ", ".join(f"{c / prep.nids:.1%}: {r.read_hit_ratio:.3f}" for c, r in zip(caps, curve)))
    print(queue_speed)
    figures["load_average_1m"] = load
    figures["queueing_model"] = queue_figures
    _figures.write("simulate_speed", args, figures)


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as f:
        return int(re.search(rf"{field}:\s+(\d+) kB", f.read()).group(1))


def _reset_peak_rss() -> int | None:
    """Reset the process's peak resident set to its current one (Linux); the current one in bytes, or
    None where that cannot be done."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return _status_kb("VmRSS") * 1024
    except (OSError, AttributeError):
        return None


def _peak_rss() -> int:
    return _status_kb("VmHWM") * 1024


def serve_speed(tr) -> tuple[str, list[dict]]:
    """Requests per CPU-second of `latency.serve` (one device, every request), best of 3, after a warm-up."""
    cat = load_catalog()
    n = len(tr)
    idx = np.arange(n, dtype=np.int64)
    figures = []
    lines = [f"\nqueueing model (latency.serve, design single, {n:,} requests, best of 3, per CPU-second):"]
    for dev_id in ("nvme-enterprise-3.84tb", "hdd-7200-20tb"):
        model = latency.from_catalog(cat.device(dev_id))
        subs = latency.SubIOs.empty()
        subs.add(idx, 0, tr.op, tr.length_bytes, offset=tr.offset_bytes, volume=tr.volume)
        small = latency.SubIOs.empty()
        small.add(idx[:1000], 0, tr.op[:1000], tr.length_bytes[:1000], offset=tr.offset_bytes[:1000],
                  volume=tr.volume[:1000])
        latency.serve(small, [model], tr.time_s[:1000], True)          # JIT compile or cache load
        cpu = float("inf")
        for _ in range(3):
            c0 = time.thread_time()
            latency.serve(subs, [model], tr.time_s, True)
            cpu = min(cpu, time.thread_time() - c0)
        lines.append(f"  {dev_id:24s} {n / cpu / 1e6:6.2f} M requests/s ({cpu:.2f} s CPU)")
        figures.append({"device": dev_id, "m_requests_per_cpu_s": n / cpu / 1e6, "cpu_s": cpu})
    return "\n".join(lines), figures


if __name__ == "__main__":
    main()
