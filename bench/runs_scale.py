"""How fast `dbtier runs` lists 10,000 run directories, cold and warm, as a user runs it (a new process).

    uv run python bench/runs_scale.py                          # 10,000 runs in a fresh directory under /var/tmp
    uv run python bench/runs_scale.py --runs 2000 --keep       # fewer; keep the directory afterwards
    uv run python bench/runs_scale.py --dir /var/tmp/r10k      # reuse (or make) this directory
    uv run python bench/runs_scale.py --json fig.json          # the figures also as JSON (default runs/bench/)

The runs are made from the saved real documents of every kind (tests/runs_corpus.py: probes, fleet probe,
OLTP sweeps and placement matrices, DSS, backup, history import/consolidate/requirement, plan, simulate,
report, compare, catalog, cleanup), in turn, each a copy with its own start time (one every 53 minutes),
host (db0 ... db11) and, for probes, figures scaled by 0.85-1.15; one in 100 is a lab with its step runs,
one in 500 is damaged (a truncated result.json, a directory without one, a foreign JSON).

What is timed, each the wall time of `python -m dbtier runs --runs-dir DIR` with its table written to a pipe
(read and dropped), from process start to exit:

- cold: no index file and, as root, the page cache dropped first (`sync; echo 3 > /proc/sys/vm/drop_caches`;
  otherwise said): every result.json read from disk and indexed;
- cold index, warm cache: no index file, files in the page cache (the CPU part of cold);
- warm: the index present and current (best and median of 3); then --json, a --kind/--where/--sort listing,
  `runs sql`, `runs trend` and the `--version` start-up alone for scale.

Targets: warm under 5 s, cold under 30 s on the project's 2-core machine.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

import _figures  # noqa: E402  (bench/ is on sys.path: the script's own directory)

sys.path.insert(0, str(_figures.ROOT / "tests"))
import runs_corpus  # noqa: E402
from samples import make_lab  # noqa: E402

PROBE_KEYS = ("read_iops_4k", "write_iops_4k", "mixed_iops_8k", "read_mbps_seq", "commit_lat_us_p50")
BASE = _dt.datetime(2024, 1, 1, tzinfo=_dt.timezone.utc)


def generate(root: Path, n: int, seed: int) -> dict:
    rng = random.Random(seed)
    sources = [(name, orjson.loads(p.read_bytes())) for name, p in runs_corpus.SOURCES.items()]
    made = damaged = labs = 0
    t0 = time.perf_counter()
    i = 0
    while made < n:
        started = BASE + _dt.timedelta(minutes=53 * i)
        stamp = started.strftime("%Y%m%dT%H%M%SZ")
        if i % 500 == 499:
            kind = ("truncated", "empty", "foreign")[(i // 500) % 3]
            d = root / f"{stamp}-damaged-{i:05d}"
            if kind == "truncated":
                runs_corpus.put(d, runs_corpus.PROBE.read_bytes()[:3000])
            elif kind == "empty":
                d.mkdir(parents=True)
            else:
                runs_corpus.put(d, b'{"exported_by": "another tool", "rows": []}')
            damaged += 1
            made += 1
        elif i % 100 == 49 and made + 8 <= n:
            lab = make_lab(root, f"{stamp}-lab-{i:05d}")
            made += 1 + sum(1 for x in lab.iterdir() if (x / "result.json").exists())
            labs += 1
        else:
            name, doc = sources[i % len(sources)]
            scale = {k: rng.uniform(0.85, 1.15) for k in PROBE_KEYS} if name.startswith("probe") else None
            v = runs_corpus.vary(doc, started, f"db{i % 12}", scale)
            runs_corpus.put(root / f"{stamp}-{name}-{i:05d}", orjson.dumps(v))
            made += 1
        i += 1
    size = sum(f.stat().st_size for f in root.rglob("result.json"))
    return {"runs": made, "labs": labs, "damaged": damaged, "result_json_bytes": size,
            "generate_s": time.perf_counter() - t0}


def drop_caches() -> bool:
    if os.geteuid() != 0:
        return False
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
        return True
    except OSError:
        return False


def timed(argv: list[str], cwd: Path) -> float:
    """Wall seconds of `python -m dbtier ARGV`, its output read from a pipe and dropped."""
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "dbtier", *argv], cwd=cwd, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env={**os.environ, "COLUMNS": "200"})
    took = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"dbtier {' '.join(argv)} failed ({r.returncode}): {r.stderr.decode()[-2000:]}")
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=10_000, help="run directories to make (default 10,000)")
    ap.add_argument("--dir", type=Path, default=None, help="where (default a new directory under /var/tmp)")
    ap.add_argument("--keep", action="store_true", help="keep the directory afterwards")
    ap.add_argument("--seed", type=int, default=1)
    _figures.add_option(ap)
    args = ap.parse_args()
    root = args.dir or Path(tempfile.mkdtemp(prefix="dbtier-runs-bench-", dir="/var/tmp"))
    root.mkdir(parents=True, exist_ok=True)
    figures: dict = {"dir": str(root), "cpus": len(os.sched_getaffinity(0))}
    try:
        if not any(root.iterdir()):
            figures.update(generate(root, args.runs, args.seed))
            print(f"made {figures['runs']:,} run directories ({figures['labs']} labs with their steps, "
                  f"{figures['damaged']} damaged; {figures['result_json_bytes'] / 1e6:,.0f} MB of result.json) "
                  f"in {figures['generate_s']:.1f} s: {root}")
        else:
            print(f"reusing {root}")
        index = root / ".dbtier-runs-index.parquet"
        listing = ["runs", "--runs-dir", str(root)]

        index.unlink(missing_ok=True)
        figures["page_cache_dropped"] = drop_caches()
        figures["cold_s"] = timed(listing, root)
        index.unlink(missing_ok=True)
        timed(["--version"], root)          # the interpreter and packages back in the page cache
        figures["cold_index_warm_cache_s"] = timed(listing, root)
        warm = [timed(listing, root) for _ in range(3)]
        figures["warm_s"] = warm
        figures["warm_best_s"], figures["warm_median_s"] = min(warm), statistics.median(warm)
        figures["warm_json_s"] = timed([*listing, "--json"], root)
        figures["warm_where_s"] = timed([*listing, "--kind", "probe", "--where", "read_iops_4k > 100000",
                                         "--sort", "read_iops_4k desc"], root)
        figures["warm_sql_s"] = timed(["runs", "sql", "--runs-dir", str(root),
                                       "SELECT host, count(*), avg(read_iops_4k) FROM probe GROUP BY host"], root)
        figures["warm_trend_s"] = timed(["runs", "trend", "probe.read_iops_4k", "--by", "host", "--runs-dir",
                                         str(root)], root)
        figures["startup_version_s"] = timed(["--version"], root)
        figures["target_warm_s"], figures["target_cold_s"] = 5.0, 30.0
        load = os.getloadavg()[0]
        print(f"dbtier runs over {figures.get('runs', 'the')} runs, {figures['cpus']} CPUs, load average {load:.2f}:")
        cold_note = "page cache dropped" if figures["page_cache_dropped"] else "page cache NOT dropped (not root)"
        print(f"  cold (no index, {cold_note})       {figures['cold_s']:6.2f} s   (target 30 s)")
        print(f"  cold index, warm page cache          {figures['cold_index_warm_cache_s']:6.2f} s")
        print(f"  warm (best / median of 3)            {figures['warm_best_s']:6.2f} / {figures['warm_median_s']:.2f} s"
              "   (target 5 s)")
        print(f"  warm --json                          {figures['warm_json_s']:6.2f} s")
        print(f"  warm --kind probe --where --sort     {figures['warm_where_s']:6.2f} s")
        print(f"  warm runs sql (group by host)        {figures['warm_sql_s']:6.2f} s")
        print(f"  warm runs trend --by host            {figures['warm_trend_s']:6.2f} s")
        print(f"  dbtier --version (start-up alone)    {figures['startup_version_s']:6.2f} s")
        _figures.write("runs_scale", args, figures)
    finally:
        if not args.keep and args.dir is None:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
