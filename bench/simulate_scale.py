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
--cache-gb, latency on an enterprise NVMe over a 15k disk), the same with --in-memory (the trace read whole
first, as before streaming) and `--design single`. Figures per run: wall
seconds, user+system CPU seconds and peak RSS of the child (getrusage(RUSAGE_CHILDREN) around each run:
the maximum RSS is over all children so far, so each run gets its own short-lived parent), requests per
wall second. The same for reading alone (a Python child calling `traces.read_trace`, and iterating
`traces.read_chunks` with 2^20-request chunks: the streaming reader's memory).

Large footprint (--footprint-requests, default 10 million; 0 skips): an MSR CSV of that many requests at
uniformly random 4 KiB-aligned offsets over --footprint-gb (800 GB), 4 to 64 KiB (about 34 million distinct
8 KiB blocks for 10 million: memory that followed the trace's distinct blocks, not the cache, shows here),
generated with numpy into a temporary directory (about 535 MB) and removed afterwards; then, in the same run,
DuckDB counting its lines (`SELECT count(*) FROM read_csv(...)` in a Python child: process start, import and
the read, as a user would measure it) and `dbtier simulate run` (read-cache, streamed, an enterprise NVMe over
a 15k disk) at each --footprint-cache-gb (64 and 2 GB) and `--design single`, each --footprint-repeat (3)
times, with the ratio of each one's fastest wall time to DuckDB's fastest (every run's is kept) and, for each cache, its blocks, its state's bytes (rows and table, `cache.state_bytes`:
what it costs per cached block) and the peak RSS above `--design single`'s on the same file.

Larger than memory (--cap-mb, default 1024 MiB; 0 skips): a trace --cap-factor (4) times the cap is
generated the same way and replayed (read-cache, streamed) inside a memory cgroup of that cap (v1's memory
controller or v2's, page cache counted, no swap), then with --in-memory under the same cap, which cannot
fit. Where no memory cgroup is writable the run goes uncapped and says so.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
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
    "read-cache-in-memory": ["--design", "read-cache", "--cache", "nvme-enterprise-3.84tb", "--backing",
                             "sas-15k-73gb", "--in-memory"],
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


# DuckDB counting the trace's lines, in a child of its own, as dbtier runs in a process of its own.
_DUCKDB = r"""
import sys, duckdb
n = duckdb.sql(f"SELECT count(*) FROM read_csv('{sys.argv[1]}', header = false)").fetchone()[0]
assert n > 0
print(n)
"""


# Reading alone, in a child of its own: the whole trace in memory (read_trace) or as chunks (read_chunks).
_READ = r"""
import sys
from dbtier.sim.trace import traces
if sys.argv[1] == "whole":
    n = len(traces.read_trace(sys.argv[2]))
else:
    n = sum(len(c) for c in traces.read_chunks(sys.argv[2], requests=1 << 20))
assert n > 0
"""


def generate(path: Path, n: int, blocks: int, alpha: float, read_pct: float, seed: int,
             span_bytes: int | None = None) -> None:
    """The MSR CSV: Zipf-like over `blocks` 8 KiB blocks, or (span_bytes) uniform 4 KiB-aligned offsets."""
    import pyarrow as pa
    import pyarrow.csv as pcsv
    rng = np.random.default_rng(seed)
    tmp = path.with_suffix(".part")
    step = 1_000_000
    t = FILETIME0
    if span_bytes is None:
        weights = 1.0 / np.arange(1, blocks + 1, dtype=np.float64) ** alpha
        cdf = np.cumsum(weights)
        cdf /= cdf[-1]
        scatter = rng.permutation(blocks).astype(np.int64)
    opts = pcsv.WriteOptions(include_header=False, quoting_style="none")
    writer = None
    try:
        for lo in range(0, n, step):
            m = min(step, n - lo)
            gaps = rng.integers(1, 2000, m)                 # ticks of 100 ns: 100 µs on average
            ts = t + np.cumsum(gaps)
            t = int(ts[-1])
            size = 4096 * (1 << rng.integers(0, 5, m))      # 4 to 64 KiB
            if span_bytes is None:
                rank = np.minimum(np.searchsorted(cdf, rng.random(m), side="right"), blocks - 1)
                off = scatter[rank] * 8192
            else:
                off = rng.integers(0, (span_bytes - size) // 4096, m) * 4096
            rd = rng.random(m) < read_pct / 100
            resp = rng.integers(100, 50000, m)
            const = pa.DictionaryArray.from_arrays(pa.array(np.zeros(m, dtype=np.int8)), pa.array(["hm"]))
            typ = pa.DictionaryArray.from_arrays(pa.array((~rd).astype(np.int8)), pa.array(["Read", "Write"]))
            table = pa.table({"ts": ts, "host": const, "disk": np.ones(m, dtype=np.int8), "type": typ,
                              "offset": off, "size": size, "resp": resp})
            if writer is None:
                writer = pcsv.CSVWriter(str(tmp), table.schema, write_options=opts)
            writer.write_table(table)
    finally:
        if writer is not None:
            writer.close()
    tmp.rename(path)


def memory_cgroup(cap_mb: int) -> Path | None:
    """A memory cgroup limited to cap_mb (page cache included; swap too where it can be limited), cgroup v1's
    memory controller or v2's; None where neither is writable (the run then goes uncapped, and says so)."""
    v1 = Path("/sys/fs/cgroup/memory")
    v2 = Path("/sys/fs/cgroup")
    name = f"dbtier-bench-{os.getpid()}"
    try:
        if (v1 / "memory.limit_in_bytes").exists():
            g = v1 / name
            g.mkdir()
            (g / "memory.limit_in_bytes").write_text(str(cap_mb << 20))
            if (g / "memory.memsw.limit_in_bytes").exists():
                (g / "memory.memsw.limit_in_bytes").write_text(str(cap_mb << 20))
            return g
        if "memory" in (v2 / "cgroup.controllers").read_text().split():
            g = v2 / name
            g.mkdir()
            (g / "memory.max").write_text(str(cap_mb << 20))
            (g / "memory.swap.max").write_text("0")
            return g
    except OSError:
        return None
    return None


def run_capped(cmd: list[str], group: Path | None) -> dict:
    """run_one inside the cgroup (the child's parent joins it first, so the whole run is capped)."""
    if group is None:
        return run_one(cmd)
    procs = group / "cgroup.procs"
    r = subprocess.run([sys.executable, "-c", _CHILD, *cmd], capture_output=True, text=True,
                       preexec_fn=lambda: procs.write_text(str(os.getpid())))
    if r.returncode != 0 or not r.stdout.strip():
        return {"rc": -9, "wall_s": None, "cpu_s": None, "peak_rss_mb": None, "stderr": r.stderr[-2000:]}
    return json.loads(r.stdout)


def run_one(cmd: list[str]) -> dict:
    r = subprocess.run([sys.executable, "-c", _CHILD, *cmd], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def fastest(runs: list[dict]) -> dict:
    """The fastest of repeated runs (a failed one if any failed), with every run's wall time and its index:
    on a shared machine one run's wall time swings by a quarter, so a ratio of two single runs says little."""
    bad = [r for r in runs if r["rc"] != 0]
    best = bad[0] if bad else min(runs, key=lambda r: r["wall_s"])
    return {**best, "index": runs.index(best), "wall_s_runs": [r["wall_s"] for r in runs]}


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
    ap.add_argument("--sections", nargs="+", default=["zipf", "footprint", "capped"],
                    choices=["zipf", "footprint", "capped"],
                    help="zipf: the Zipf trace's reading, designs and inputs; footprint: the large-footprint "
                    "trace; capped: the larger-than-memory run")
    ap.add_argument("--footprint-requests", type=float, default=10e6)
    ap.add_argument("--footprint-gb", type=float, default=800.0, help="the large-footprint trace's offset range")
    ap.add_argument("--footprint-cache-gb", type=float, nargs="+", default=[64.0, 2.0])
    ap.add_argument("--footprint-repeat", type=int, default=3,
                    help="runs of DuckDB's count and of each simulation: the fastest is compared (all are kept)")
    ap.add_argument("--cap-mb", type=int, default=1024, help="memory cap (MiB) of the larger-than-memory run; "
                    "0 skips it")
    ap.add_argument("--cap-factor", type=float, default=4.0, help="its trace file is this many times the cap")
    _figures.add_option(ap)
    args = ap.parse_args()
    n = int(args.requests)
    d = Path(args.dir)
    d.mkdir(parents=True, exist_ok=True)
    dbtier = [sys.executable, "-m", "dbtier"]
    figures: dict = {"requests": n}
    if "zipf" in args.sections:
        figures.update(zipf(args, d, n, dbtier))
    if "footprint" in args.sections and args.footprint_requests:
        figures["large_footprint"] = large_footprint(args, d, dbtier)
    if "capped" in args.sections and args.cap_mb:
        figures["larger_than_memory"] = larger_than_memory(args, d, _bytes_per_line(d, n, args), dbtier)
    _figures.write("simulate_scale", args, figures)


def _bytes_per_line(d: Path, n: int, args: argparse.Namespace) -> float:
    plain = d / f"msr-{n}-s{args.seed}.csv"
    if not plain.exists():
        generate(plain, n, int(args.blocks), args.alpha, args.read_pct, args.seed)
    return plain.stat().st_size / n


def zipf(args: argparse.Namespace, d: Path, n: int, dbtier: list[str]) -> dict:
    """The Zipf trace: reading alone, each design on each input."""
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

    figures: dict = {"csv_bytes": plain.stat().st_size, "read": figures_read, "runs": {}}
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
                extra = ["--cache-gb", f"{args.cache_gb:g}"] if design.startswith("read-cache") else []
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
    return figures


def large_footprint(args: argparse.Namespace, d: Path, dbtier: list[str]) -> dict:
    """The large-footprint trace (random offsets over --footprint-gb), generated into a temporary directory:
    DuckDB's count of it, then `simulate run` at each --footprint-cache-gb and `--design single`."""
    n = int(args.footprint_requests)
    span = int(args.footprint_gb * 1e9)
    out: dict = {"requests": n, "span_bytes": span, "block_size": 8192, "runs": {}}
    with tempfile.TemporaryDirectory(dir=d, prefix="footprint-") as tmp:
        path = Path(tmp) / f"msr-random-{n}.csv"
        t0 = time.perf_counter()
        generate(path, n, 0, 0.0, args.read_pct, args.seed, span_bytes=span)
        out["csv_bytes"] = path.stat().st_size
        out["generate_s"] = time.perf_counter() - t0
        print(f"large footprint: {n:,} requests at random offsets over {args.footprint_gb:g} GB, 4-64 KiB, MSR CSV "
              f"{out['csv_bytes'] / 1e6:,.0f} MB (generated in {out['generate_s']:.1f} s)")
        duck = fastest([run_one([sys.executable, "-c", _DUCKDB, str(path)]) for _ in range(args.footprint_repeat)])
        if duck["rc"] != 0:
            print(f"duckdb count: failed: {duck['stderr']}", file=sys.stderr)
            sys.exit(1)
        duck.pop("stderr")
        out["duckdb_count"] = duck
        print(f"  fastest of {args.footprint_repeat} runs each (every run's wall time in brackets)")
        print(f"  {'run':<22} {'wall s':>7} {'cpu s':>7} {'peak RSS MB':>12} {'x DuckDB':>9}")
        print(f"  {'duckdb count(*)':<22} {duck['wall_s']:>7.1f} {duck['cpu_s']:>7.1f} {duck['peak_rss_mb']:>12,.0f}"
              f"{'':>10}  {_walls(duck)}")
        runs = [(f"read-cache {gb:g} GB", [*DESIGNS["read-cache"], "--cache-gb", f"{gb:g}"]) for gb in
                args.footprint_cache_gb] + [("single", DESIGNS["single"])]
        for name, design in runs:
            with tempfile.TemporaryDirectory(dir=d) as o:
                res = fastest([run_one([*dbtier, "simulate", "run", str(path), *design, "--json", "--out",
                                        str(Path(o) / f"run{i}")]) for i in range(args.footprint_repeat)])
                if res["rc"] == 0:
                    doc = json.loads((Path(o) / f"run{res['index']}" / "result.json").read_text())
                    cache = (doc.get("simulation") or {}).get("cache") or {}
                    res["read_hit_ratio"] = doc.get("read_hit_ratio")
                    res["working_set_blocks"] = cache.get("working_set_blocks")
                    res["working_set_estimate"] = cache.get("working_set_estimate")
                    res["capacity_blocks"] = cache.get("capacity_blocks")
            if res["rc"] != 0:
                print(f"{name}: failed (exit {res['rc']}): {res['stderr']}", file=sys.stderr)
                sys.exit(1)
            res.pop("stderr")
            res["wall_vs_duckdb"] = res["wall_s"] / duck["wall_s"]
            out["runs"][name] = res
            print(f"  {name:<22} {res['wall_s']:>7.1f} {res['cpu_s']:>7.1f} {res['peak_rss_mb']:>12,.0f} "
                  f"{res['wall_vs_duckdb']:>9.1f}  {_walls(res)}")
    from dbtier.sim.cache import replay as cache
    base = out["runs"]["single"]["peak_rss_mb"]
    for name, res in out["runs"].items():
        if res.get("capacity_blocks"):
            cap = res["capacity_blocks"]
            res["state_bytes"] = cache.state_bytes(cap, "lru", 8192)      # the replay's rows and table at most
            res["state_bytes_per_cached_block"] = res["state_bytes"] / cap
            res["rss_above_single_mb"] = res["peak_rss_mb"] - base
            res["rss_above_single_per_cached_block"] = (res["peak_rss_mb"] - base) * 2**20 / cap
            print(f"  {name}: {cap:,} blocks, hit ratio {res['read_hit_ratio']:.4f}, working set "
                  f"{res['working_set_blocks']:,} blocks{' (estimate)' if res['working_set_estimate'] else ''}; "
                  f"cache state {res['state_bytes'] / 2**20:,.0f} MiB ({res['state_bytes_per_cached_block']:.1f} "
                  f"bytes a cached block: rows and table); peak RSS {res['rss_above_single_mb']:,.0f} MB above "
                  "--design single (that, the working-set count, the baseline's queueing model and latencies, the "
                  "cache's device I/Os)")
    return out


def _walls(res: dict) -> str:
    return "[" + " ".join(f"{w:.2f}" for w in res["wall_s_runs"]) + "]"


def larger_than_memory(args: argparse.Namespace, d: Path, bytes_per_line: float, dbtier: list[str]) -> dict:
    """A generated trace --cap-factor times the --cap-mb memory cap, replayed (read-cache, streamed) inside a
    memory cgroup of that cap; then --in-memory under the same cap, which cannot fit."""
    n = math.ceil(args.cap_factor * (args.cap_mb << 20) / bytes_per_line / 1e6) * 1_000_000
    big = d / f"msr-{n}-s{args.seed}.csv"
    t0 = time.perf_counter()
    if not big.exists():
        generate(big, n, int(args.blocks), args.alpha, args.read_pct, args.seed)
    size = big.stat().st_size
    print(f"larger than memory: {n:,} requests, MSR CSV {size / 1e6:,.0f} MB = {size / (args.cap_mb << 20):.1f}x "
          f"the {args.cap_mb:,} MiB cap (made or found in {time.perf_counter() - t0:.1f} s); in memory the "
          f"trace's arrays alone would take {n * 29 / 1e6:,.0f} MB")
    out: dict = {"requests": n, "csv_bytes": size, "cap_mb": args.cap_mb, "runs": {}}
    for how, extra in (("streamed", []), ("in-memory", ["--in-memory"])):
        group = memory_cgroup(args.cap_mb)
        out["capped_by"] = None if group is None else str(group.parent)
        with tempfile.TemporaryDirectory(dir=d) as tmp:
            cmd = [*dbtier, "simulate", "run", str(big), *DESIGNS["read-cache"], "--cache-gb", f"{args.cache_gb:g}",
                   *extra, "--json", "--out", str(Path(tmp) / "run")]
            try:
                res = run_capped(cmd, group)
                peak = [group / f for f in ("memory.max_usage_in_bytes", "memory.peak")
                        if group is not None and (group / f).exists()]
                res["cgroup_peak_mb"] = int(peak[0].read_text()) / 2**20 if peak else None   # page cache too
            finally:
                if group is not None:
                    group.rmdir()
        err = res.pop("stderr", "")
        res["completed"] = res["rc"] == 0
        res["requests_per_s"] = n / res["wall_s"] if res["completed"] else None
        if not res["completed"]:
            res["error"] = err.strip().splitlines()[-1] if err.strip() else "killed (out of memory under the cap)"
        out["runs"][how] = res
        if res["completed"]:
            print(f"  {how:<10} wall {res['wall_s']:.1f} s, cpu {res['cpu_s']:.1f} s, peak RSS "
                  f"{res['peak_rss_mb']:,.0f} MB, {res['requests_per_s']:,.0f} requests/s")
        else:
            print(f"  {how:<10} did not complete under the cap (exit {res['rc']}): {res['error']}")
        if how == "streamed" and group is None:
            print("  (no writable memory cgroup here: the run was not capped; compare its peak RSS with the cap)")
    return out


if __name__ == "__main__":
    main()
