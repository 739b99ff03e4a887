"""Miss-ratio curves of an object trace (`dbtier simulate mrc`), end to end as a user runs it.

Generates (not timed) a trace of --requests requests in oracleGeneral format, zstd-compressed: object ids
drawn from a Zipf(--alpha) law over --objects objects, each object one size (1 KB to 1 MB, log-uniform), the
next-access field filled in. Then times `dbtier simulate mrc` in a fresh process (start, reading and
decompressing, the curve): LRU's exact curve at 20 sizes, the same from a 1% SHARDS sample, and all six
policies at 8 sizes (on every core).

  uv run python bench/mrc_speed.py [--requests 10000000] [--objects 1000000] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _figures  # noqa: E402
from _oracle import write_oracle_general  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def generate(path: Path, n: int, n_obj: int, alpha: float, seed: int = 1) -> None:
    import numpy as np
    rng = np.random.default_rng(seed)
    ids = (rng.zipf(alpha, n) - 1) % n_obj
    sizes = np.exp(rng.uniform(np.log(1000), np.log(1_000_000), n_obj)).astype(np.uint32)
    write_oracle_general(path, ids, ids, sizes[ids])


def timed(cmd: list[str]) -> tuple[float, float, float, dict]:
    """(wall s, CPU s, peak RSS MiB, the JSON document) of one run, its own rusage (wait4), not the
    children's running maximum."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err, text=True, cwd=ROOT)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if p.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{err.read()}")
        return wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024, json.loads(out.read())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=int, default=10_000_000)
    ap.add_argument("--objects", type=int, default=1_000_000)
    ap.add_argument("--alpha", type=float, default=1.1)
    ap.add_argument("--generate", metavar="PATH", help=argparse.SUPPRESS)
    _figures.add_option(ap)
    args = ap.parse_args()
    if args.generate:
        generate(Path(args.generate), args.requests, args.objects, args.alpha)
        return
    with tempfile.TemporaryDirectory(prefix="dbtier-mrc-bench-") as d:
        trace = Path(d) / "zipf.oracleGeneral.zst"
        t0 = time.perf_counter()
        # in a process of its own: this one stays small, so its children's peak RSS (wait4) is theirs
        subprocess.run([sys.executable, __file__, "--generate", str(trace), "--requests", str(args.requests),
                        "--objects", str(args.objects), "--alpha", str(args.alpha)], check=True)
        print(f"generated {args.requests:,} requests over {args.objects:,} objects, {trace.stat().st_size / 1e6:.0f} MB "
              f"zstd, in {time.perf_counter() - t0:.1f} s (not timed)")
        base = [sys.executable, "-m", "dbtier", "simulate", "mrc", str(trace), "--json", "--out", str(Path(d) / "run")]
        # warm-up run: numba compiles the kernels once per machine (cached after); not timed
        subprocess.run(base[:-2] + ["--out", str(Path(d) / "warm"), "--policy", "lru,fifo,clock,s3fifo,arc,belady",
                                     "--sizes", "1%"], cwd=ROOT, capture_output=True)
        figures: dict = {"requests": args.requests, "objects": args.objects, "trace_bytes": trace.stat().st_size}
        sizes20 = ",".join(f"{p}%" for p in (1, 2, 3, 5, 7, 10, 13, 16, 20, 25, 30, 35, 40, 45, 50, 60, 70, 80, 90, 100))
        wall, cpu, rss, doc = timed(base[:-2] + ["--out", str(Path(d) / "lru"), "--policy", "lru", "--sizes", sizes20])
        exact = [p["miss_ratio"] for p in doc["mrc"]["curves"][0]["points"]]
        figures["lru_20_sizes"] = {"wall_s": wall, "cpu_s": cpu, "peak_rss_mib": rss,
                                   "miss_ratio_at_10pct": doc["mrc"]["curves"][0]["points"][5]["miss_ratio"]}
        print(f"LRU exact curve, 20 sizes: {wall:.1f} s wall, {cpu:.1f} s CPU, {rss:,.0f} MiB (target 15 s)")
        wall, cpu, rss, doc = timed(base[:-2] + ["--out", str(Path(d) / "shards"), "--policy", "lru", "--sizes", sizes20,
                                                 "--sample", "0.01"])
        errs = [abs(p["miss_ratio"] - x) for p, x in zip(doc["mrc"]["curves"][0]["points"], exact)]
        figures["lru_20_sizes_shards_1pct"] = {"wall_s": wall, "cpu_s": cpu, "peak_rss_mib": rss,
                                               "miss_ratio_at_10pct": doc["mrc"]["curves"][0]["points"][5]["miss_ratio"],
                                               "max_abs_error": max(errs), "mean_abs_error": sum(errs) / len(errs)}
        print(f"LRU, SHARDS at 1%, 20 sizes: {wall:.1f} s wall, {cpu:.1f} s CPU (target 3 s); miss ratio at 10% "
              f"{figures['lru_20_sizes_shards_1pct']['miss_ratio_at_10pct']:.4f} against "
              f"{figures['lru_20_sizes']['miss_ratio_at_10pct']:.4f} exact; over the 20 sizes the error is at most "
              f"{max(errs):.4f}, {sum(errs) / len(errs):.4f} on average")
        sizes8 = "1%,2%,5%,10%,20%,30%,50%,80%"
        wall, cpu, rss, doc = timed(base[:-2] + ["--out", str(Path(d) / "all"), "--policy",
                                                 "lru,fifo,clock,s3fifo,arc,belady", "--sizes", sizes8])
        figures["six_policies_8_sizes"] = {"wall_s": wall, "cpu_s": cpu, "peak_rss_mib": rss,
                                           "miss_ratio_at_10pct": {c["policy"]: c["points"][3]["miss_ratio"]
                                                                   for c in doc["mrc"]["curves"]}}
        print(f"six policies, 8 sizes: {wall:.1f} s wall, {cpu:.1f} s CPU, {rss:,.0f} MiB")
        for pol, mr in figures["six_policies_8_sizes"]["miss_ratio_at_10pct"].items():
            print(f"  {pol:7s} miss ratio at 10% of the footprint: {mr:.4f}")
    _figures.write("mrc_speed", args, figures)


if __name__ == "__main__":
    main()
