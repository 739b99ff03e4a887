"""How fast `dbtier simulate run` is end to end on a large trace file, as a user runs it.

    uv run python bench/simulate_scale.py                      # 10 million requests, MSR CSV and its gzip
    uv run python bench/simulate_scale.py --requests 1e6       # a quicker look
    uv run python bench/simulate_scale.py --json fig.json      # the figures also as JSON (default runs/bench/)

The trace is generated once (kept under --dir, default /var/tmp/dbtier-scale/, reused when present): an
MSR Cambridge CSV (`Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`, Windows filetime ticks,
no header, one volume), --read-pct reads of 4 to 64 KiB over --blocks 8 KiB blocks with Zipf-like
popularity, one request per 100 µs on average; and the same file gzip-compressed.

What is timed: `dbtier simulate run TRACE --json` in a subprocess (process start, imports, reading,
replay, latency model, writing the run directory) for `--design read-cache` (LRU, the cache sized at
--cache-gb, latency on an enterprise NVMe over a 15k disk) and `--design single`. Figures per run: wall
seconds, user+system CPU seconds and peak RSS of the child (getrusage(RUSAGE_CHILDREN) around each run:
the maximum RSS is over all children so far, so each run gets its own short-lived parent), requests per
wall second. The same for reading alone (a Python child calling `traces.read_trace`, and iterating
`traces.read_chunks` with 2^20-request chunks: the streaming reader's memory).
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import _figures  # noqa: E402  (bench/ is on sys.path: the script's own directory)

FILETIME0 = 128166372000000000      # 2007-02-22, as MSR's hm_1 trace
DESIGNS = {
    "read-cache": ["--design", "read-cache", "--cache", "nvme-enterprise-3.84tb", "--backing", "sas-15k-73gb"],
    "single": ["--design", "single", "--device", "nvme-enterprise-3.84tb"],
}

# Run in a fresh parent so RUSAGE_CHILDREN's peak RSS is this one child's.
_CHILD = r"""
import json, resource, subprocess, sys, time
t0 = time.perf_counter()
r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
wall = time.perf_counter() - t0
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": r.returncode, "wall_s": wall, "cpu_s": u.ru_utime + u.ru_stime,
                  "peak_rss_mb": u.ru_maxrss / 1024, "stderr": r.stderr[-2000:]}))
"""


# Reading alone, in a child of its own: the whole trace in memory (read_trace) or as chunks (read_chunks).
_READ = r"""
import sys
from dbtier.sim import traces
if sys.argv[1] == "whole":
    n = len(traces.read_trace(sys.argv[2]))
else:
    n = sum(len(c) for c in traces.read_chunks(sys.argv[2], requests=1 << 20))
assert n > 0
"""


def generate(path: Path, n: int, blocks: int, alpha: float, read_pct: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    tmp = path.with_suffix(".part")
    step = 1_000_000
    t = FILETIME0
    weights = 1.0 / np.arange(1, blocks + 1, dtype=np.float64) ** alpha
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    scatter = rng.permutation(blocks).astype(np.int64)
    with open(tmp, "w") as f:
        for lo in range(0, n, step):
            m = min(step, n - lo)
            gaps = rng.integers(1, 2000, m)                 # ticks of 100 ns: 100 µs on average
            ts = t + np.cumsum(gaps)
            t = int(ts[-1])
            rank = np.minimum(np.searchsorted(cdf, rng.random(m), side="right"), blocks - 1)
            off = scatter[rank] * 8192
            size = 4096 * (1 << rng.integers(0, 5, m))      # 4 to 64 KiB
            rd = rng.random(m) < read_pct / 100
            resp = rng.integers(100, 50000, m)
            typ = np.where(rd, "Read", "Write")
            f.write("".join(f"{a},hm,1,{b},{c},{d},{e}\n"
                            for a, b, c, d, e in zip(ts.tolist(), typ.tolist(), off.tolist(), size.tolist(),
                                                     resp.tolist())))
    tmp.rename(path)


def run_one(cmd: list[str]) -> dict:
    r = subprocess.run([sys.executable, "-c", _CHILD, *cmd], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--requests", type=float, default=10e6)
    ap.add_argument("--blocks", type=float, default=2e6, help="distinct 8 KiB blocks (default 2 million: 16 GB)")
    ap.add_argument("--alpha", type=float, default=0.9)
    ap.add_argument("--read-pct", type=float, default=70.0)
    ap.add_argument("--cache-gb", type=float, default=2.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", default="/var/tmp/dbtier-scale", help="where the generated traces are kept")
    ap.add_argument("--designs", nargs="*", default=list(DESIGNS), choices=list(DESIGNS))
    ap.add_argument("--read", nargs="*", default=["whole", "chunks"], choices=["whole", "chunks"],
                    help="also time reading alone: the whole trace in memory, and streamed as chunks")
    ap.add_argument("--inputs", nargs="+", default=["plain", "gzip", "converted"],
                    choices=["plain", "gzip", "converted"],
                    help="converted: the plain trace's `simulate convert` copy (the conversion timed too)")
    _figures.add_option(ap)
    args = ap.parse_args()
    n = int(args.requests)
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    plain = d / f"msr-{n}-s{args.seed}.csv"
    gz = plain.with_name(plain.name + ".gz")
    t0 = time.perf_counter()
    if not plain.exists():
        generate(plain, n, int(args.blocks), args.alpha, args.read_pct, args.seed)
    if "gzip" in args.inputs and not gz.exists():
        with open(plain, "rb") as src, gzip.open(gz.with_suffix(".part"), "wb", compresslevel=6) as dst:
            shutil.copyfileobj(src, dst, 1 << 22)
        gz.with_suffix(".part").rename(gz)
    print(f"trace: {n:,} requests, MSR CSV {plain.stat().st_size / 1e6:,.0f} MB"
          + (f", gzip {gz.stat().st_size / 1e6:,.0f} MB" if gz.exists() else "")
          + f" (made or found in {time.perf_counter() - t0:.1f} s)")

    figures_read: dict = {}
    print(f"{'reading':<11} {'input':<6} {'wall s':>7} {'cpu s':>7} {'peak RSS MB':>12} {'requests/s':>12}")
    for how in args.read:
        for kind in [k for k in args.inputs if k != "converted"]:
            res = run_one([sys.executable, "-c", _READ, how, str({"plain": plain, "gzip": gz}[kind])])
            if res["rc"] != 0:
                print(f"read {how} {kind}: failed: {res['stderr']}", file=sys.stderr)
                sys.exit(1)
            res.pop("stderr")
            res["requests_per_s"] = n / res["wall_s"]
            figures_read[f"{how}/{kind}"] = res
            print(f"{how:<11} {kind:<6} {res['wall_s']:>7.1f} {res['cpu_s']:>7.1f} {res['peak_rss_mb']:>12,.0f} "
                  f"{res['requests_per_s']:>12,.0f}")

    dbtier = [sys.executable, "-m", "dbtier"]
    figures: dict = {"requests": n, "csv_bytes": plain.stat().st_size, "read": figures_read, "runs": {}}
    files = {"plain": plain, "gzip": gz}
    conv_dir = None
    if "converted" in args.inputs:
        conv_dir = Path(tempfile.mkdtemp(dir=d, prefix="convert-"))
        res = run_one([*dbtier, "simulate", "convert", str(plain), "--json", "--out", str(conv_dir / "run")])
        if res["rc"] != 0:
            print(f"convert: failed (exit {res['rc']}): {res['stderr']}", file=sys.stderr)
            sys.exit(1)
        res.pop("stderr")
        res["requests_per_s"] = n / res["wall_s"]
        res["parquet_bytes"] = sum(f.stat().st_size for f in (conv_dir / "run" / "trace.parquet").rglob("*")
                                   if f.is_file())
        figures["convert"] = res
        files["converted"] = conv_dir / "run"
        print(f"convert     plain  {res['wall_s']:>7.1f} {res['cpu_s']:>7.1f} {res['peak_rss_mb']:>12,.0f} "
              f"{res['requests_per_s']:>12,.0f}   (Parquet {res['parquet_bytes'] / 1e6:,.0f} MB)")
    print(f"{'design':<11} {'input':<6} {'wall s':>7} {'cpu s':>7} {'peak RSS MB':>12} {'requests/s':>12}")
    for design in args.designs:
        for kind in args.inputs:
            with tempfile.TemporaryDirectory(dir=d) as out:
                extra = ["--cache-gb", f"{args.cache_gb:g}"] if design == "read-cache" else []
                cmd = [*dbtier, "simulate", "run", str(files[kind]), *DESIGNS[design], *extra, "--json",
                       "--out", str(Path(out) / "run")]
                res = run_one(cmd)
            if res["rc"] != 0:
                print(f"{design} {kind}: failed (exit {res['rc']}): {res['stderr']}", file=sys.stderr)
                sys.exit(1)
            res.pop("stderr")
            res["requests_per_s"] = n / res["wall_s"]
            figures["runs"][f"{design}/{kind}"] = res
            print(f"{design:<11} {kind:<6} {res['wall_s']:>7.1f} {res['cpu_s']:>7.1f} {res['peak_rss_mb']:>12,.0f} "
                  f"{res['requests_per_s']:>12,.0f}")
    if conv_dir is not None:
        shutil.rmtree(conv_dir, ignore_errors=True)
    _figures.write("simulate_scale", args, figures)


if __name__ == "__main__":
    main()
