"""How fast is `dbtier advise`? One DMA collection end to end, and 1,000 databases against `history consolidate`.

Targets: advise on one collection (a DMA .tgz, and the two-instance AWR export) in 3 s or less end to end, a
fresh process each time as a user runs it; on 1,000 databases (an import run of history_scale.py's generated
AWR fleet), within 10 s of what `history consolidate` takes for the same run.

  uv run python bench/advise_speed.py [--repeat 5] [--databases 1000] [--hours 720] [--dir DIR] [--keep]
                                      [--json PATH]   (the figures; default runs/bench/advise_speed-<UTC>.json)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import _figures  # noqa: E402  (bench/ is on sys.path: the script's own directory)
from history_scale import step  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = {"dma collection": ROOT / "tests" / "data" / "history" / "dma" / "dma-oracle19c-single.tgz",
           "two-instance AWR": ROOT / "tests" / "data" / "history" / "awr" / "awr_sysstat_PRODRAC.csv"}


def one_collection(work: Path, repeat: int) -> dict:
    out = {}
    for name, path in SAMPLES.items():
        walls = []
        for i in range(repeat):
            r = step(f"advise {name}", ["advise", str(path), "--out", str(work / f"one-{len(out)}-{i}"), "--json"],
                     work)
            walls.append(r["wall_s"])
        out[name] = {"median_wall_s": statistics.median(walls), "max_wall_s": max(walls), "walls_s": walls}
        print(f"advise {name:<18} median {statistics.median(walls):5.2f} s, max {max(walls):5.2f} s "
              f"({repeat} runs): {'under' if max(walls) <= 3.0 else 'OVER'} the 3 s target")
    return out


def fleet(work: Path, databases: int, hours: int) -> dict:
    gen = subprocess.run([sys.executable, str(Path(__file__).with_name("history_scale.py")), "--generate-into",
                          str(work / "awr"), "--databases", str(databases), "--hours", str(hours)])
    if gen.returncode != 0:
        raise SystemExit("generating the input failed")
    files = sorted(str(p) for p in (work / "awr").rglob("*.csv"))
    os.sync()
    imp = step("import", ["history", "import", "--source", "awr", *files, "--out", str(work / "import"), "--json"],
               work)
    print(f"{databases} databases x {hours} hourly snapshots imported in {imp['wall_s']:.1f} s (not compared)")
    cons = step("consolidate", ["history", "consolidate", str(work / "import"), "--out", str(work / "cons"),
                                "--json"], work)
    adv = step("advise", ["advise", str(work / "import"), "--out", str(work / "advise"), "--json"], work)
    extra = adv["wall_s"] - cons["wall_s"]
    print(f"history consolidate {cons['wall_s']:6.1f} s   advise {adv['wall_s']:6.1f} s   advise takes "
          f"{extra:+.1f} s: {'within' if extra <= 10.0 else 'OVER'} the 10 s target "
          f"(peak RSS {cons['peak_rss_mib']:.0f} / {adv['peak_rss_mib']:.0f} MiB)")
    return {"databases": databases, "hours": hours, "import": imp, "consolidate": cons, "advise": adv,
            "advise_minus_consolidate_s": extra}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--databases", type=int, default=1000)
    ap.add_argument("--hours", type=int, default=720, help="hourly snapshots per database (720: 30 days)")
    ap.add_argument("--dir", help="work directory (default: a temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the generated files and runs")
    _figures.add_option(ap)
    a = ap.parse_args()
    work = Path(a.dir) if a.dir else Path(tempfile.mkdtemp(prefix="dbtier-advise-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; "
              f"{time.strftime('%Y-%m-%d', time.gmtime())}")
        one = one_collection(work, a.repeat)
        many = fleet(work, a.databases, a.hours) if a.databases > 0 else None
        _figures.write("advise_speed", a, {"one_collection": one, "fleet": many})
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
