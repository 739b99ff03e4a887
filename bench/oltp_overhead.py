"""Is the client the limit? dbtier's own CPU (pgbench + samplers) at the knee of a real sweep.

Usage: uv run python bench/oltp_overhead.py [--workload tpcc] [--clients 1,2,4,8,16] [--duration 20] [--json PATH]

Runs `dbtier bench oltp` on a managed cluster in a scratch directory and prints,
per point, TPS, machine CPU, pgbench's CPU and the sampler's CPU as shares of
the whole machine; the targets are pgbench + samplers under 15% at the knee and
sampling under 1%.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import _figures  # noqa: E402  (bench/ is on sys.path: the script's own directory)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workload", default="tpcc")
    ap.add_argument("--clients", default="1,2,4,8,16")
    ap.add_argument("--duration", default="20")
    _figures.add_option(ap)
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="dbtier-oltp-bench-", dir="/var/tmp"))
    work.chmod(0o755)
    try:
        r = subprocess.run([sys.executable, "-m", "dbtier", "bench", "oltp", "--workload", a.workload,
                            "--clients", a.clients, "--duration", a.duration, "--warmup", "5", "--json",
                            "--out", str(work / "run")], cwd=work, capture_output=True, text=True)
        if r.returncode:
            print(r.stderr, file=sys.stderr)
            return 1
        doc = json.loads(r.stdout)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{a.workload}, {a.duration} s points on {doc['machine']['cpu_count']} CPUs")
    print(f"{'clients':>7} {'TPS':>8} {'machine CPU %':>13} {'pgbench %':>9} {'sampler %':>9} {'dbtier total %':>14} bottleneck")
    for p in doc["points"]:
        o = p["overhead"]
        total = o["client_cpu_pct_of_machine"] + o["sampler_cpu_pct_of_machine"]
        print(f"{p['clients']:>7} {p['tps']:>8,.0f} {p['cpu_util']['busy_pct']:>13.1f} "
              f"{o['client_cpu_pct_of_machine']:>9.2f} {o['sampler_cpu_pct_of_machine']:>9.3f} {total:>14.2f} {p['bottleneck']}")
    k = doc["knee"]
    at = next(p for p in doc["points"] if p["clients"] == k["clients"])
    o = at["overhead"]
    print(f"knee: {k['clients']} clients, {k['tps']:,.0f} TPS; dbtier's own CPU there "
          f"{o['client_cpu_pct_of_machine'] + o['sampler_cpu_pct_of_machine']:.2f}% of the machine "
          f"(target < 15%), sampling {o['sampler_cpu_pct_of_machine']:.3f}% (target < 1%)")
    _figures.write("oltp_overhead", a, {
        "cpu_count": doc["machine"]["cpu_count"],
        "points": [{"clients": p["clients"], "tps": p["tps"], "machine_busy_pct": p["cpu_util"]["busy_pct"],
                    "client_cpu_pct_of_machine": p["overhead"]["client_cpu_pct_of_machine"],
                    "sampler_cpu_pct_of_machine": p["overhead"]["sampler_cpu_pct_of_machine"],
                    "bottleneck": p["bottleneck"]} for p in doc["points"]],
        "knee": {"clients": k["clients"], "tps": k["tps"],
                 "dbtier_cpu_pct_of_machine": o["client_cpu_pct_of_machine"] + o["sampler_cpu_pct_of_machine"],
                 "sampler_cpu_pct_of_machine": o["sampler_cpu_pct_of_machine"]}})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
