"""Does the quick probe find the peak? Compare its peak IOPS with the best of a hand-tuned fio grid.

Usage: uv run python bench/probe_vs_handtuned.py [DIR] [--runtime-s 5] [--repeat 1] [--json PATH]

For each of the summary's random tests (4 KiB read, 4 KiB write, 8 KiB 70/30)
it runs `dbtier probe --only random` (quick profile) and then fio by hand over a
grid of jobs x iodepth with longer points, on a file of the same size on the
same filesystem, and prints quick/best. The target is a ratio of at least 0.95.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
from dbtier.measure.fio import FioJob, build_args, parse_output  # noqa: E402

import _figures  # noqa: E402  (bench/ is on sys.path: the script's own directory)

GRID = [(1, 32), (1, 64), (2, 16), (2, 32), (2, 64), (4, 32)]
TESTS = {"read_iops_4k": ("randread", 4096, None), "write_iops_4k": ("randwrite", 4096, None),
         "mixed_iops_8k": ("randrw", 8192, 70)}


def fio_best(path: Path, size: int, rw: str, bs: int, mix: int | None, runtime_s: float) -> tuple[float, tuple]:
    best = (0.0, (0, 0))
    for jobs, qd in GRID:
        job = FioJob(f"hand-{rw}", rw, bs, size, filename=str(path), iodepth=qd, numjobs=jobs,
                     runtime_s=runtime_s, ramp_s=2.0, rwmixread=mix)
        out = subprocess.run(build_args(job), capture_output=True, text=True, check=True).stdout
        iops = parse_output(out)["iops"]
        best = max(best, (iops, (jobs, qd)))
    return best


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("dir", nargs="?", default=".")
    ap.add_argument("--runtime-s", type=float, default=5.0)
    ap.add_argument("--repeat", type=int, default=3)
    _figures.add_option(ap)
    a = ap.parse_args()
    target = Path(a.dir).resolve()
    ratios: dict[str, list[float]] = {k: [] for k in TESTS}
    bests: dict[str, list[float]] = {k: [] for k in TESTS}
    quicks: dict[str, list[float]] = {k: [] for k in TESTS}
    for rep in range(a.repeat):
        with tempfile.TemporaryDirectory(prefix="dbtier-bench-") as tmp:
            t0 = time.monotonic()
            r = subprocess.run([sys.executable, "-m", "dbtier", "probe", str(target), "--only", "random",
                                "--json", "--out", f"{tmp}/run"], capture_output=True, text=True)
            if r.returncode:
                print(r.stderr, file=sys.stderr)
                return 1
            doc = json.loads(r.stdout)
            t = doc["targets"][0]
            size = t["file_bytes"]
            elapsed = time.monotonic() - t0
            f = target / f".dbtier-bench-{os.getpid()}.fio"
            try:
                subprocess.run(build_args(FioJob("layout", "write", 1 << 20, size, filename=str(f), iodepth=16,
                                                 time_based=False, ramp_s=0)), capture_output=True, check=True)
                print(flush=True)
                print(f"run {rep + 1}: file {size >> 20} MiB on {target}; quick probe measured "
                      f"{len(t['points'])} points in {elapsed:.0f} s")
                print(f"{'measure':16} {'quick':>10} {'hand-tuned':>11} {'best jobs x qd':>15} {'ratio':>6}")
                for key, (rw, bs, mix) in TESTS.items():
                    best, cfg = fio_best(f, size, rw, bs, mix, a.runtime_s)
                    quick = t["summary"][key]
                    print(f"{key:16} {quick:10,.0f} {best:11,.0f} {f'{cfg[0]}x{cfg[1]}':>15} {quick / best:6.3f}")
                    ratios[key].append(quick / best)
                    bests[key].append(best)
                    quicks[key].append(quick)
            finally:
                f.unlink(missing_ok=True)
    print(f"\nover {a.repeat} runs (quick peak / hand-tuned best; target >= 0.95):")
    figures: dict = {"tests": {}}
    for key in TESTS:
        r, b, q = sorted(ratios[key]), bests[key], quicks[key]
        spread = (max(b) - min(b)) / statistics.median(b) * 100
        print(f"{key:16} median quick / median best {statistics.median(q) / statistics.median(b):.3f}  "
              f"per-run ratios {r[0]:.3f}-{r[-1]:.3f}  (hand-tuned best itself varied {spread:.0f}% run to run)")
        figures["tests"][key] = {"quick_iops": q, "hand_tuned_best_iops": b, "ratios": ratios[key],
                                 "median_ratio": statistics.median(q) / statistics.median(b),
                                 "hand_tuned_spread_pct": spread}
    figures["noise_floor"] = noise(target, a.runtime_s)
    _figures.write("probe_vs_handtuned", a, figures)
    return 0


def noise(target: Path, runtime_s: float, n: int = 5) -> dict:
    """The floor under any comparison: one fio configuration run n times in a row."""
    f = target / f".dbtier-bench-noise-{os.getpid()}.fio"
    try:
        subprocess.run(build_args(FioJob("layout", "write", 1 << 20, 1 << 30, filename=str(f), iodepth=16,
                                         time_based=False, ramp_s=0)), capture_output=True, check=True)
        xs = []
        for _ in range(n):
            job = FioJob("noise", "randread", 4096, 1 << 30, filename=str(f), iodepth=32, numjobs=2,
                         runtime_s=runtime_s, ramp_s=2.0)
            xs.append(parse_output(subprocess.run(build_args(job), capture_output=True, text=True,
                                                  check=True).stdout)["iops"])
        cv = statistics.stdev(xs) / statistics.mean(xs) * 100
        print(f"noise floor: 4 KiB randread 2x32, {runtime_s:.0f} s, {n} identical runs: "
              f"{min(xs):,.0f}-{max(xs):,.0f} IOPS, CV {cv:.1f}%")
        return {"randread_4k_2x32_iops": xs, "cv_pct": cv}
    finally:
        f.unlink(missing_ok=True)


if __name__ == "__main__":
    raise SystemExit(main())
