"""The client is never the limit: the OLTP driver's CPU share at the knee, per engine and workload.

Usage: uv run python bench/oltp_driver_cpu.py [--engines mariadb[,postgres]]
           [--workloads sysbench-point,sysbench-rw,tpcc] [--clients 1,2,4,8] [--duration 5] [--warmup 2]
           [--scale 1] [--warehouses 1] [--json PATH]

Runs `dbtier bench oltp --json` as a user would (a subprocess, a managed throw-away server in a
scratch directory under /var/tmp), one sweep per engine × workload: MariaDB with sysbench
(sysbench-point, sysbench-rw, and tpcc through dbtier's Lua) and, with --engines postgres, PostgreSQL
with pgbench (its tpcc and select-only). At the knee of each sweep (the document's `knee`) it prints
the driver's CPU (`overhead.client_cpu_cores`, and `client_cpu_pct_of_machine`) and the point's
bottleneck verdict: `client` means the driver, not the database, set the limit there.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import _figures  # noqa: E402  (bench/ is on sys.path: the script's own directory)

# PostgreSQL's counterparts of MariaDB's sysbench workloads (pgbench has no sysbench-*).
PG_WORKLOADS = {"sysbench-point": "select-only", "sysbench-rw": "tpcb", "sysbench-ro": "select-only",
                "sysbench-wo": "tpcb", "tpcc": "tpcc"}
DRIVER = {"mariadb": "sysbench", "postgres": "pgbench"}


def at_knee(doc: dict[str, Any]) -> dict[str, Any]:
    """The driver's figures at the knee of one `bench oltp` result document (pure; unit-tested).

    The knee point is the point whose client count is `knee.clients` (its first repeat, the median,
    is what `points[]` holds); with no knee (every point failed) the figures are None."""
    knee = doc.get("knee") if isinstance(doc.get("knee"), dict) else None
    points = [p for p in doc.get("points") or [] if isinstance(p, dict)]
    p = next((q for q in points if knee and q.get("clients") == knee.get("clients")), None)
    if p is None:
        return {"knee_clients": None, "tps": None, "tpm": None, "client_cpu_cores": None,
                "client_cpu_pct_of_machine": None, "machine_busy_pct": None, "bottleneck": None,
                "driver_is_limit": None}
    ov = p.get("overhead") or {}
    bottleneck = p.get("bottleneck")
    return {"knee_clients": p.get("clients"), "tps": p.get("tps"), "tpm": p.get("tpm"),
            "client_cpu_cores": ov.get("client_cpu_cores"),
            "client_cpu_pct_of_machine": ov.get("client_cpu_pct_of_machine"),
            "machine_busy_pct": (p.get("cpu_util") or {}).get("busy_pct"),
            "bottleneck": bottleneck, "driver_is_limit": bottleneck == "client"}


def run(engine: str, workload: str, a: argparse.Namespace) -> dict[str, Any]:
    """One sweep through the CLI; the result document, or {"error": text}."""
    work = Path(tempfile.mkdtemp(prefix="dbtier-driver-cpu-", dir="/var/tmp"))
    work.chmod(0o755)  # the server's unprivileged OS user must traverse it
    size = ["--warehouses", str(a.warehouses)] if workload == "tpcc" else ["--scale", str(a.scale)]
    cmd = [sys.executable, "-m", "dbtier", "bench", "oltp", "--engine", engine, "--workload", workload, *size,
           "--clients", a.clients, "--duration", str(a.duration), "--warmup", str(a.warmup), "--json",
           "--out", str(work / "run")]
    try:
        r = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
        if r.returncode:
            return {"error": (r.stderr.strip().splitlines() or [f"exit {r.returncode}"])[-1]}
        return json.loads(r.stdout)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--engines", default="mariadb", help="mariadb, postgres or both (comma-separated)")
    ap.add_argument("--workloads", default="sysbench-point,sysbench-rw,tpcc",
                    help="MariaDB workloads; PostgreSQL runs pgbench's counterpart of each")
    ap.add_argument("--clients", default="1,2,4,8")
    ap.add_argument("--duration", type=float, default=5)
    ap.add_argument("--warmup", type=float, default=2)
    ap.add_argument("--scale", type=int, default=1, help="sysbench-*/pgbench scale")
    ap.add_argument("--warehouses", type=int, default=1)
    _figures.add_option(ap)
    a = ap.parse_args()
    engines = [e.strip() for e in a.engines.split(",") if e.strip()]
    workloads = [w.strip() for w in a.workloads.split(",") if w.strip()]
    rows: list[dict[str, Any]] = []
    for engine in engines:
        if engine == "postgres" and not shutil.which("pgbench"):
            print("postgres: pgbench is not installed, skipped", file=sys.stderr)
            continue
        seen = set()
        for w in workloads:
            wl = PG_WORKLOADS.get(w, w) if engine == "postgres" else w
            if wl in seen:
                continue
            seen.add(wl)
            doc = run(engine, wl, a)
            row: dict[str, Any] = {"engine": engine, "workload": wl, "driver": DRIVER.get(engine, "?")}
            if "error" in doc:
                row["error"] = doc["error"]
                print(f"{engine} {wl}: failed: {doc['error']}", file=sys.stderr)
            else:
                row.update(at_knee(doc))
                row["cpu_count"] = doc.get("machine", {}).get("cpu_count")
                row["points"] = [{"clients": p.get("clients"), "tps": p.get("tps"), "nopm": p.get("nopm"),
                                  "client_cpu_cores": (p.get("overhead") or {}).get("client_cpu_cores"),
                                  "client_cpu_pct_of_machine": (p.get("overhead") or {}).get(
                                      "client_cpu_pct_of_machine"),
                                  "bottleneck": p.get("bottleneck")} for p in doc.get("points") or []]
            rows.append(row)

    def num(x: Any, fmt: str) -> str:
        return format(x, fmt) if isinstance(x, (int, float)) else "-"

    print(f"driver CPU at the knee; sweep {a.clients} clients, {a.duration:g} s points")
    print(f"{'engine':<8} {'workload':<15} {'driver':<8} {'knee':>4} {'TPS':>8} {'driver cores':>12} "
          f"{'% machine':>9} {'busy %':>6} bottleneck")
    for r in rows:
        if "error" in r:
            print(f"{r['engine']:<8} {r['workload']:<15} {r['driver']:<8} failed: {r['error']}")
            continue
        print(f"{r['engine']:<8} {r['workload']:<15} {r['driver']:<8} {num(r['knee_clients'], 'd'):>4} "
              f"{num(r['tps'], ',.0f'):>8} {num(r['client_cpu_cores'], '.2f'):>12} "
              f"{num(r['client_cpu_pct_of_machine'], '.1f'):>9} {num(r['machine_busy_pct'], '.0f'):>6} "
              f"{r['bottleneck'] or '-'}{'  <- the driver is the limit' if r['driver_is_limit'] else ''}")
    _figures.write("oltp_driver_cpu", a, {"runs": rows})
    return 1 if rows and all("error" in r for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
