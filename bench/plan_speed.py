"""How fast is `dbtier plan`? Each action over the whole catalog, in-process and as one CLI call.

Usage: uv run python bench/plan_speed.py [--repeat 20] [--json PATH]

In-process: the model and planner only (catalog loaded once), median and worst of
--repeat runs:
  - equivalent: one pair (the DESIGN example), and every ordered pair of catalog devices;
  - budget: every catalog device on one budget, in jbod and raid10;
  - size: every device x layout (mixed designs included) for three requirements;
  - value: a saved probe run priced as a configuration.
End to end: one `python -m dbtier plan ...` per action (a fresh process: interpreter
start, imports, catalog load, machine metadata, the run directory), and
`python -m dbtier --version` for the start-up share alone. The target is well under
a second per action.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
from dbtier.model.plan.array import evaluate, parse_spec  # noqa: E402
from dbtier.model.plan.catalog import load_catalog  # noqa: E402
from dbtier.model.plan.planner import Requirement, budget, equivalent, size, value  # noqa: E402

import _figures  # noqa: E402  (bench/ is on sys.path: the script's own directory)

PROBE = ROOT / "tests" / "data" / "probe" / "quick-ext4-virtio.json"
CARD, DISK = "fusionio-iodrive-duo-1.2tb", "sas-15k-73gb"


def timed(fn, repeat: int) -> tuple[float, float]:
    """(median, worst) seconds of `repeat` calls."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), max(times)


def cli(*args: str) -> float:
    with tempfile.TemporaryDirectory() as d:
        t = time.perf_counter()
        r = subprocess.run([sys.executable, "-m", "dbtier", *args, "--out", f"{d}/run", "--json"],
                           capture_output=True, text=True, cwd=d)
        dt = time.perf_counter() - t
    if r.returncode != 0:
        raise SystemExit(f"dbtier {' '.join(args)} failed: {r.stderr}")
    return dt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    _figures.add_option(ap)
    a = ap.parse_args()
    n = a.repeat

    t = time.perf_counter()
    cat = load_catalog()
    load_s = time.perf_counter() - t
    ids = list(cat.devices)
    probe = json.loads(PROBE.read_text())
    reqs = {
        "OLTP 20K/5K IOPS, 10 TB": Requirement(read_iops=20_000, write_iops=5000, capacity_gb=10_000),
        "DSS 4 GB/s read, 1 GB/s write, 50 TB": Requirement(read_mbps=4000, write_mbps=1000, capacity_gb=50_000),
        "all five + 200 µs ceiling": Requirement(read_iops=50_000, write_iops=20_000, read_mbps=2000,
                                                 write_mbps=1000, capacity_gb=5000, max_read_latency_us=200),
    }

    print(f"catalog: {len(ids)} devices, {len(cat.overheads)} overheads (loaded in {load_s * 1e3:.1f} ms)")
    print(f"in-process, median / worst of {n} runs:")
    rows = []
    rows.append(("equivalent, the DESIGN example", *timed(lambda: equivalent(cat, CARD, DISK), n)))
    pairs = [(x, y) for x in ids for y in ids if x != y]
    rows.append((f"equivalent, all {len(pairs)} ordered pairs",
                 *timed(lambda: [equivalent(cat, x, y) for x, y in pairs], max(n // 5, 1))))
    rows.append((f"budget $20,000, all {len(ids)} devices, jbod", *timed(lambda: budget(cat, 20_000, ids), n)))
    rows.append((f"budget $20,000, all {len(ids)} devices, raid10",
                 *timed(lambda: budget(cat, 20_000, ids, "raid10"), n)))
    for name, req in reqs.items():
        sz = size(cat, req)
        rows.append((f"size: {name} ({sz.considered} designs, {sz.found} meet)", *timed(lambda: size(cat, req), n)))
    rows.append(("size, redundancy none", *timed(lambda: size(cat, reqs["OLTP 20K/5K IOPS, 10 TB"],
                                                              redundancy="none"), n)))
    rows.append(("value of a probe run", *timed(lambda: value(probe, evaluate(parse_spec(cat, f"{DISK}:8:raid10"))),
                                                n)))
    width = max(len(r[0]) for r in rows)
    for name, med, worst in rows:
        print(f"  {name:<{width}}  {med * 1e3:8.2f} ms  {worst * 1e3:8.2f} ms")

    figures = {"catalog_devices": len(ids), "catalog_load_ms": load_s * 1e3,
               "in_process": [{"action": name, "median_ms": med * 1e3, "worst_ms": worst * 1e3}
                              for name, med, worst in rows], "end_to_end": []}
    print("end to end, one CLI call each (fresh process, --json, run directory written):")
    e2e = [("--version (start-up only)", None),
           ("plan equivalent", ("plan", "equivalent", "--reference", CARD, "--using", DISK)),
           ("plan budget", ("plan", "budget", "--usd", "20000", "--devices", ",".join(ids))),
           ("plan size", ("plan", "size", "--read-iops", "20000", "--write-iops", "5000", "--capacity-gb", "10000")),
           ("plan value", ("plan", "value", "--result", str(PROBE), "--config", f"{DISK}:8:raid10"))]
    probe_code = ("import time; t = time.perf_counter(); import dbtier.cli.main as m; m.build_parser(); "
                  "a = time.perf_counter() - t\n"
                  "import sys; own = [k for k in sys.modules if k.startswith(('dbtier.model.plan.array', "
                  "'dbtier.model.plan.planner', 'dbtier.cli.plan.command'))]\n"
                  "from dbtier.measure.machine import machine_info; t = time.perf_counter(); machine_info(); "
                  "b = time.perf_counter() - t\n"
                  "print(a, b)")
    r = subprocess.run([sys.executable, "-X", "importtime", "-c", probe_code], capture_output=True, text=True,
                       check=True)
    imports_s, machine_s = map(float, r.stdout.split())
    own_us = sum(int(line.split("|")[1]) for line in r.stderr.splitlines()
                 if line.startswith("import time:") and line.split("|")[2].strip() in
                 ("dbtier.model.plan.array", "dbtier.model.plan.planner", "dbtier.model.plan.plandoc", "dbtier.cli.plan.command",
                  "dbtier.cli.plan.render"))
    heavy = sorted(((int(line.split("|")[1]), line.split("|")[2].strip()) for line in r.stderr.splitlines()
                    if line.startswith("import time:") and line.split("|")[2].strip().startswith("dbtier.")),
                   reverse=True)[:3]
    print(f"  start-up share: imports + argument parser {imports_s * 1e3:.0f} ms (plan's own modules "
          f"{own_us / 1e3:.0f} ms; heaviest: {', '.join(f'{m} {us / 1e3:.0f} ms' for us, m in heavy)}), "
          f"machine metadata {machine_s * 1e3:.0f} ms")
    figures.update(startup_imports_ms=imports_s * 1e3, startup_plan_modules_ms=own_us / 1e3,
                   machine_metadata_ms=machine_s * 1e3)
    for name, args in e2e:
        if args is None:
            t = time.perf_counter()
            subprocess.run([sys.executable, "-m", "dbtier", "--version"], capture_output=True, check=True)
            dt = time.perf_counter() - t
        else:
            dt = min(cli(*args) for _ in range(3))
        print(f"  {name:<{width}}  {dt * 1e3:8.0f} ms  (best of {'1' if args is None else '3'})")
        figures["end_to_end"].append({"action": name, "best_ms": dt * 1e3, "of": 1 if args is None else 3})
    _figures.write("plan_speed", a, figures)


if __name__ == "__main__":
    main()
