"""TPC-H generation + load time at a scale factor. Target: SF 1 under a minute.

Usage: uv run python bench/dss_load_speed.py [--scale 1] [--repeat 3] [--generator dbgen|tpchgen] [--json PATH]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
from dbtier.workloads.engine import ServerSpec  # noqa: E402
from dbtier.workloads.engine_duckdb import DuckDBEngine  # noqa: E402

import _figures  # noqa: E402  (bench/ is on sys.path: the script's own directory)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--generator", default="dbgen", choices=("dbgen", "tpchgen"))
    ap.add_argument("--dir", default=".")
    _figures.add_option(ap)
    a = ap.parse_args()
    times, runs = [], []
    for _ in range(a.repeat):
        work = Path(tempfile.mkdtemp(prefix="dbtier-dss-bench-", dir=a.dir))
        eng = DuckDBEngine(ServerSpec(work, {}, options={"generator": a.generator}))
        try:
            eng.open()
            load = eng.load_tpch(a.scale)
            times.append(load["seconds"])
            runs.append({"load_s": load["seconds"], "database_bytes": load["database_bytes"],
                         "lineitem_rows": load["rows"]["lineitem"]})
            print(f"SF {a.scale:g} {a.generator}: generated and loaded in {load['seconds']:.1f} s "
                  f"({load['database_bytes'] / 1e6:,.0f} MB, {load['rows']['lineitem']:,} lineitem rows)", flush=True)
        finally:
            eng.close()
            shutil.rmtree(work, ignore_errors=True)
    print(f"median {statistics.median(times):.1f} s over {len(times)} runs (target: under 60 s at SF 1)")
    _figures.write("dss_load_speed", a, {"runs": runs, "median_load_s": statistics.median(times)})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
