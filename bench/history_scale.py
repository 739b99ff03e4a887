"""How fast is `dbtier history` at scale? 1,000 databases x one year of hourly AWR snapshots.

Generates the input (not timed): one CSV per database in collectors/oracle_awr.sql's sysstat layout,
8,760 hourly snapshots each (8.76 million rows, one per database and snapshot, five statistics a
row), with business-hours load shifted per database, time zones from UTC-5 to UTC+9 in
SNAP_TIMEZONE, snapshot times wandering by seconds, and an instance restart in one database in
ten. Then times the real command line, each step a fresh process:

  dbtier history import --source awr FILES...     (read, deltas, peaks, profiles, Parquet)
  dbtier history consolidate RUN                   (1,000 databases on one hourly UTC grid)
  dbtier history requirement RUN --percentile 99   (the summary plan size reads)

and prints wall time, CPU time and the peak resident memory of each step (the input is generated in a
child process of its own: a step's peak RSS would otherwise start at this process's size).

  uv run python bench/history_scale.py [--databases 1000] [--hours 8760] [--dir DIR] [--keep]
                                      [--memory-mb MB]   (DuckDB's limit; default dbtier's: RAM/4, at most 4 GB)
                                      [--json PATH]      (the figures; default runs/bench/history_scale-<UTC>.json)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import duckdb

import _figures  # noqa: E402  (bench/ is on sys.path: the script's own directory)

ZONES = ("+00:00", "+01:00", "+02:00", "-05:00", "+05:30", "+09:00")


def generate(out: Path, databases: int, hours: int, chunk: int = 1000) -> list[str]:
    """The CSV files, a chunk of databases at a time (10,000 databases' year at once would hold tens of GB)."""
    for lo in range(0, databases, chunk):
        _generate(out, lo, min(databases, lo + chunk), hours)
    return sorted(str(p) for p in out.rglob("*.csv"))


def _generate(out: Path, lo: int, hi: int, hours: int) -> None:
    con = duckdb.connect()
    con.execute("SET preserve_insertion_order = true")
    zones = "[" + ", ".join(f"'{z}'" for z in ZONES) + "]"
    con.execute(f"""
        CREATE TABLE g AS
        WITH base AS (
            SELECT d, h, {zones}[1 + d % {len(ZONES)}] AS tz,
                   TIMESTAMP '2024-01-01' + to_hours(h + 1) + to_seconds(5 + (d * 7 + h * 3) % 50) AS t_end,
                   (h >= {hours} // 2 AND d % 10 = 3) AS after_restart,
                   -- load: a base rate per database, a business-hours bump at a per-database hour, noise
                   (50 + d % 400) * (1 + 3 * exp(-power(((h + d) % 24) - 11, 2) / 8.0))
                       * (0.8 + 0.4 * ((hash(d, h) % 1000) / 1000.0)) AS r
            FROM range({lo}, {hi}) a(d), range({hours}) b(h)),
        deltas AS (
            SELECT *, (r * 3600)::BIGINT AS dr, (r * 0.4 * 3600)::BIGINT AS dw FROM base)
        SELECT d, 'DB' || lpad(d::VARCHAR, 4, '0') AS db_name, 3000000000 + d AS dbid, 1 AS instance_number,
               1000 + h AS snap_id, tz,
               CASE WHEN after_restart THEN '2024-07-01 03:12:00.000' ELSE '2023-12-30 22:05:41.000' END AS startup,
               strftime(t_end - INTERVAL 1 HOUR, '%Y-%m-%d %H:%M:%S.000') AS b,
               strftime(t_end, '%Y-%m-%d %H:%M:%S.000') AS e,
               sum(dr) OVER w AS rio, sum(dw) OVER w AS wio, sum(dr * 8192) OVER w AS rby,
               sum(dw * 8192) OVER w AS wby, sum(dw * 1536) OVER w AS redo
        FROM deltas
        WINDOW w AS (PARTITION BY d, after_restart ORDER BY h)""")
    con.execute(f"""COPY (SELECT db_name AS DB_NAME, snap_id AS SNAP_ID, dbid AS DBID, instance_number AS INSTANCE_NUMBER,
                          startup AS STARTUP_TIME, b AS BEGIN_INTERVAL_TIME, e AS END_INTERVAL_TIME, tz AS SNAP_TIMEZONE,
                          rio AS "physical read total IO requests", wio AS "physical write total IO requests",
                          rby AS "physical read total bytes", wby AS "physical write total bytes", redo AS "redo size",
                          d AS part
                   FROM g ORDER BY d, snap_id)
                   TO '{out}' (FORMAT csv, HEADER, PARTITION_BY (part), OVERWRITE_OR_IGNORE)""")
    con.close()


def step(name: str, argv: list[str], cwd: Path, env: dict | None = None) -> dict:
    """Run one dbtier command; its own wall time, CPU time and peak resident memory (wait4's rusage)."""
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "dbtier", *argv], cwd=cwd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.stderr.write(err)
        raise SystemExit(f"{name} failed")
    return {"step": name, "wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "peak_rss_mib": ru.ru_maxrss / 1024}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--databases", type=int, default=1000)
    ap.add_argument("--hours", type=int, default=8760)
    ap.add_argument("--dir", help="work directory (default: a temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the generated files and runs")
    ap.add_argument("--reuse", action="store_true", help="reuse the files a --keep run left in --dir")
    ap.add_argument("--memory-mb", type=int, help="DuckDB memory limit for the dbtier processes (DBTIER_MEMORY_MB)")
    ap.add_argument("--generate-into", help=argparse.SUPPRESS)   # the child that generates the input
    _figures.add_option(ap)
    a = ap.parse_args()
    if a.generate_into:
        generate(Path(a.generate_into), a.databases, a.hours)
        return 0
    work = Path(a.dir) if a.dir else Path(tempfile.mkdtemp(prefix="dbtier-history-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        t0 = time.perf_counter()
        if a.reuse and (work / "awr").exists():
            files = sorted(str(p) for p in (work / "awr").rglob("*.csv"))
            what = "reused"
        else:
            shutil.rmtree(work / "awr", ignore_errors=True)
            # in a child process: a child's peak RSS (wait4's ru_maxrss) starts at its parent's at fork, so a
            # parent grown by DuckDB's generation would report its own size for every timed step
            gen = subprocess.run([sys.executable, __file__, "--generate-into", str(work / "awr"),
                                  "--databases", str(a.databases), "--hours", str(a.hours)])
            if gen.returncode != 0:
                raise SystemExit("generating the input failed")
            files = sorted(str(p) for p in (work / "awr").rglob("*.csv"))
            what = "generated"
        os.sync()   # the generated files reach the disk now, not while the import is timed
        size = sum(os.path.getsize(f) for f in files)
        print(f"{what} {a.databases} databases x {a.hours} hourly snapshots = {a.databases * a.hours:,} rows "
              f"in {len(files)} files, {size / 1e9:.2f} GB, in {time.perf_counter() - t0:.1f} s (not timed)")
        runs = work / "runs"
        shutil.rmtree(runs, ignore_errors=True)
        env = {"DBTIER_MEMORY_MB": str(a.memory_mb)} if a.memory_mb else None
        print(f"load average before: {os.getloadavg()[0]:.1f}")
        results = [
            step("import", ["history", "import", "--source", "awr", *files, "--out", str(runs / "import"),
                            "--json"], work, env),
            step("consolidate", ["history", "consolidate", str(runs / "import"), "--out", str(runs / "cons"),
                                 "--json"], work, env),
            step("requirement", ["history", "requirement", str(runs / "cons"), "--percentile", "99",
                                 "--out", str(runs / "req"), "--json"], work, env),
        ]
        cons = json.loads((runs / "cons" / "result.json").read_text())
        req = json.loads((runs / "req" / "result.json").read_text())["requirement"]
        total = sum(r["wall_s"] for r in results)
        print(f"{'step':<12} {'wall s':>8} {'CPU s':>8} {'peak RSS MiB':>13}")
        for r in results:
            print(f"{r['step']:<12} {r['wall_s']:>8.1f} {r['cpu_s']:>8.1f} {r['peak_rss_mib']:>13.0f}")
        print(f"{'total':<12} {total:>8.1f} {sum(r['cpu_s'] for r in results):>8.1f} "
              f"{max(r['peak_rss_mib'] for r in results):>13.0f}")
        print(f"consolidation: sum of peaks {cons['sum_of_peaks']['iops']:,.0f} IOPS, peak of sum "
              f"{cons['peak_of_sum']['iops']:,.0f} IOPS at {cons['peak_time']}, gain {cons['gain']:.2f}")
        print(f"requirement (p99): read {req['read_iops']:,.0f} IOPS, write {req['write_iops']:,.0f} IOPS, "
              f"read {req['read_mbps']:,.0f} MB/s, write {req['write_mbps']:,.0f} MB/s")
        # the targets (history at fleet scale): 1,000 databases in 18.5 s, 10,000 in 180 s, every step <= 3 GiB
        target_s = 18.5 * a.databases / 1000 if a.databases <= 1000 else 180.0 * a.databases / 10000
        peak = max(r["peak_rss_mib"] for r in results)
        print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the end; "
              f"{'under' if total <= target_s else 'OVER'} the {target_s:.0f} s target, peak RSS "
              f"{'under' if peak <= 3072 else 'OVER'} 3 GiB")
        _figures.write("history_scale", a, {
            "rows": a.databases * a.hours, "files": len(files), "input_bytes": size, "steps": results,
            "total_wall_s": total, "total_cpu_s": sum(r["cpu_s"] for r in results),
            "peak_rss_mib": max(r["peak_rss_mib"] for r in results),
            "sum_of_peaks_iops": cons["sum_of_peaks"]["iops"], "peak_of_sum_iops": cons["peak_of_sum"]["iops"],
            "requirement_p99": {k: req[k] for k in ("read_iops", "write_iops", "read_mbps", "write_mbps")}})
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
