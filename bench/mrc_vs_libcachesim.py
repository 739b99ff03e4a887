"""`dbtier simulate mrc` against libCacheSim on the same trace and sizes, every policy libCacheSim has of
dbtier's, each run as a user runs it, on every core for both; misses must be equal.

Generates (not timed) an oracleGeneral trace, zstd-compressed: --requests requests drawn from a Zipf(--alpha)
law bounded to --objects objects of 512 B to 256 KiB (log-uniform, one size an object), the next-access field
filled in. Then:

- dbtier: one `dbtier simulate mrc TRACE --policy <all of them> --sizes ... --json` process, end to end
  (start, reading and decompressing the trace once, every replay on every core); numba's compilation is
  warmed up beforehand, untimed, as it is cached after a machine's first run.
- libCacheSim (the `libcachesim` package, its C engine): process_trace of a fresh cache per policy and size,
  each job in a worker process, as many workers as cores. Its W-TinyLFU allocates a counting Bloom filter of
  INT_MAX 4-byte counters for any main cache over about 150 MB and touches most of its 8 GiB on a trace of
  millions of objects: two at once would take 16 GiB, so one runs at a time (started first, whenever none
  is running, the other workers taking the other jobs meanwhile: no worker ever waits).

Prints dbtier's wall time against libCacheSim's, the ratio (the target: dbtier at least twice as fast over
the whole set), libCacheSim's CPU time by policy, and each policy's misses on both sides.

  uv run python bench/mrc_vs_libcachesim.py [--requests 10000000] [--objects 2000000] [--sizes 1%,3%,10%,30%]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _figures  # noqa: E402
from _oracle import write_oracle_general  # noqa: E402
from mrc_speed import timed  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
# dbtier's policy -> libCacheSim's class (s3fifo-2023 has none in the package: not compared)
CLASSES = {"lru": "LRU", "fifo": "FIFO", "clock": "Clock", "s3fifo": "S3FIFO", "sieve": "Sieve", "twoq": "TwoQ",
           "slru": "SLRU", "lfu": "LFU", "arc": "ARC", "lirs": "LIRS", "wtinylfu": "WTinyLFU", "belady": "Belady"}


def generate(path: Path, n: int, n_obj: int, alpha: float, seed: int = 38) -> None:
    import numpy as np
    rng = np.random.default_rng(seed)
    cdf = np.cumsum(1.0 / np.arange(1, n_obj + 1) ** alpha)      # a Zipf law bounded to the objects
    ids = np.minimum(np.searchsorted(cdf, rng.random(n) * cdf[-1]), n_obj - 1)
    sizes = np.exp(rng.uniform(np.log(512), np.log(256 * 1024), n_obj)).astype(np.uint32)
    write_oracle_general(path, ids, ids.astype(np.uint64) * np.uint64(2654435761) + np.uint64(1),  # ids far apart
                         sizes[ids])


def _lcs_job(trace: str, policy: str, cap: int) -> tuple[str, int, float, float, float, float]:
    """(policy, cap, miss ratio, byte miss ratio, wall s, CPU s) of one libCacheSim process_trace."""
    import libcachesim as lcs
    t, c = time.perf_counter(), time.process_time()
    reader = lcs.TraceReader(trace, lcs.TraceType.ORACLE_GENERAL_TRACE)
    mr, bmr = getattr(lcs, CLASSES[policy])(cap).process_trace(reader)
    return policy, cap, mr, bmr, time.perf_counter() - t, time.process_time() - c


def _run_lcs(trace: Path, jobs: list[tuple[str, int]], workers: int) -> list[tuple]:
    """Every job on `workers` processes, at most one W-TinyLFU at a time (the longest: started first when
    none runs), the others in order: a free worker always has a job it may start."""
    wt = [j for j in jobs if j[0] == "wtinylfu"]
    rest = [j for j in jobs if j[0] != "wtinylfu"]
    out, running = [], {}
    with ProcessPoolExecutor(workers, mp_context=mp.get_context("spawn")) as pool:
        while wt or rest or running:
            while len(running) < workers:
                busy = any(j[0] == "wtinylfu" for j in running.values())
                job = wt.pop(0) if wt and not busy else rest.pop(0) if rest else None
                if job is None:
                    break
                running[pool.submit(_lcs_job, str(trace), *job)] = job
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for f in done:
                out.append(f.result())
                del running[f]
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=10_000_000)
    ap.add_argument("--objects", type=int, default=2_000_000)
    ap.add_argument("--alpha", type=float, default=1.0)
    ap.add_argument("--sizes", default="1%,3%,10%,30%", help="cache sizes, as dbtier simulate mrc --sizes takes them")
    ap.add_argument("--policy", default=",".join(CLASSES), help="comma-separated (default: all twelve)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="libCacheSim's worker processes")
    ap.add_argument("--generate", metavar="PATH", help=argparse.SUPPRESS)
    _figures.add_option(ap)
    args = ap.parse_args()
    if args.generate:
        generate(Path(args.generate), args.requests, args.objects, args.alpha)
        return
    import libcachesim
    policies = [p.strip() for p in args.policy.split(",") if p.strip()]
    with tempfile.TemporaryDirectory(prefix="dbtier-mrc-lcs-") as d:
        trace = Path(d) / "zipf.oracleGeneral.zst"
        t0 = time.perf_counter()
        subprocess.run([sys.executable, __file__, "--generate", str(trace), "--requests", str(args.requests),
                        "--objects", str(args.objects), "--alpha", str(args.alpha)], check=True)
        print(f"generated {args.requests:,} requests over {args.objects:,} objects (512 B-256 KiB), "
              f"{trace.stat().st_size / 1e6:.0f} MB zstd, in {time.perf_counter() - t0:.1f} s (not timed)")
        base = [sys.executable, "-m", "dbtier", "simulate", "mrc", str(trace), "--json", "--policy", ",".join(policies)]
        # numba compiles the kernels once per machine (cached after): warmed up on a tenth of the sizes' work
        subprocess.run(base + ["--sizes", "0.1%", "--out", str(Path(d) / "warm")], cwd=ROOT, capture_output=True)
        wall, cpu, rss, doc = timed(base + ["--sizes", args.sizes, "--out", str(Path(d) / "run")])
        n = doc["mrc"]["trace"]["requests"]
        caches = [p["cache_bytes"] for p in doc["mrc"]["curves"][0]["points"]]
        ours = {c["policy"]: [p["misses"] for p in c["points"]] for c in doc["mrc"]["curves"]}
        print(f"dbtier simulate mrc, {len(policies)} policies x {len(caches)} sizes "
              f"({', '.join(f'{c / 2**20:,.0f} MiB' for c in caches)}): {wall:.1f} s wall, {cpu:.1f} s CPU, "
              f"{rss:,.0f} MiB peak")
        # libCacheSim: a job per policy and size, the slowest policies first
        slow_first = sorted(policies, key=lambda p: p not in ("wtinylfu", "lirs", "s3fifo", "twoq", "lfu"))
        jobs = [(p, c) for p in slow_first for c in caches]
        t = time.perf_counter()
        done = _run_lcs(trace, jobs, args.workers)
        lcs_wall = time.perf_counter() - t
        theirs = {p: [0] * len(caches) for p in policies}
        lcs_cpu = {p: 0.0 for p in policies}
        for p, c, mr, _, _, cs in done:
            theirs[p][caches.index(c)] = int(round(mr * n))
            lcs_cpu[p] += cs
        print(f"libCacheSim {libcachesim.__version__} process_trace, {len(jobs)} jobs on {args.workers} worker "
              f"processes: {lcs_wall:.1f} s wall, {sum(lcs_cpu.values()):.1f} s CPU")
        print(f"dbtier / libCacheSim: {lcs_wall / wall:.2f}x faster (target 2x)")
        equal = all(ours[p] == theirs[p] for p in policies)
        print(f"{'policy':10s} {'libCacheSim CPU s':>17s}  misses at each size (dbtier = libCacheSim)")
        for p in policies:
            mark = "=" if ours[p] == theirs[p] else "!="
            print(f"{p:10s} {lcs_cpu[p]:17.1f}  {', '.join(f'{x:,}' for x in ours[p])} {mark} "
                  f"{'' if mark == '=' else ', '.join(f'{x:,}' for x in theirs[p])}")
        print("misses equal at every policy and size" if equal else "MISMATCH: see the rows marked !=")
    figures = {"requests": args.requests, "objects": args.objects, "caches_bytes": caches,
               "libcachesim_version": libcachesim.__version__,
               "dbtier": {"wall_s": wall, "cpu_s": cpu, "peak_rss_mib": rss},
               "libcachesim": {"wall_s": lcs_wall, "cpu_s": sum(lcs_cpu.values()), "workers": args.workers,
                               "cpu_s_by_policy": lcs_cpu},
               "speedup": lcs_wall / wall, "misses_equal": equal,
               "misses": {p: {"dbtier": ours[p], "libcachesim": theirs[p]} for p in policies}}
    _figures.write("mrc_vs_libcachesim", args, figures)
    if not equal:
        sys.exit(1)


if __name__ == "__main__":
    main()
