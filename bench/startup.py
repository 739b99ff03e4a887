"""How fast does `dbtier` start? `dbtier --version` and `dbtier --help` as a user runs them (the console script,
a fresh process each time), against two yardsticks: `python -c "import numpy"` and
`python -c "import duckdb, numpy"`.

Target: --version and --help start in about the time Python takes to import numpy (they load no engine, no
numba, no numpy: the commands that use those import them). Each figure is the best of --repeat runs (the
least disturbed by the rest of the machine): wall time and peak resident memory (wait4's rusage).

  uv run python bench/startup.py [--repeat 15] [--json PATH]   (default runs/bench/startup-<UTC>.json)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import _figures  # noqa: E402  (bench/ is on sys.path: the script's own directory)

# The console script uv installed next to this interpreter (.venv/bin/dbtier), run as a user's shell runs it.
DBTIER = str(Path(sys.executable).with_name("dbtier"))
COMMANDS = {
    "dbtier --version": [DBTIER, "--version"],
    "dbtier --help": [DBTIER, "--help"],
    "python -c 'import numpy'": [sys.executable, "-c", "import numpy"],
    "python -c 'import duckdb, numpy'": [sys.executable, "-c", "import duckdb, numpy"],
}


def once(argv: list[str]) -> tuple[float, float]:
    """One run: its wall time (s) and peak resident memory (MiB)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert p.stderr is not None
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.stderr.write(err.decode(errors="replace"))
        raise SystemExit(f"{' '.join(argv)} failed")
    return wall, ru.ru_maxrss / 1024


def measure(argv: list[str], repeat: int) -> dict:
    once(argv)          # a first run warms the page cache and Python's bytecode cache; not counted
    runs = [once(argv) for _ in range(repeat)]
    walls = [w for w, _ in runs]
    return {"best_wall_s": min(walls), "median_wall_s": sorted(walls)[len(walls) // 2],
            "best_peak_rss_mib": min(r for _, r in runs), "walls_s": walls}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=15, help="runs of each command; the best is reported")
    _figures.add_option(ap)
    a = ap.parse_args()
    if not os.path.exists(DBTIER):
        raise SystemExit(f"no console script at {DBTIER}; run this with the project's interpreter (uv run python)")
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; "
          f"{time.strftime('%Y-%m-%d', time.gmtime())}; best of {a.repeat}")
    figures = {name: measure(argv, a.repeat) for name, argv in COMMANDS.items()}
    numpy_s = figures["python -c 'import numpy'"]["best_wall_s"]
    for name, f in figures.items():
        print(f"{name:<34} {f['best_wall_s'] * 1000:6.0f} ms (median {f['median_wall_s'] * 1000:4.0f})  "
              f"{f['best_peak_rss_mib']:5.0f} MiB   {f['best_wall_s'] / numpy_s:4.1f}x import numpy", flush=True)
    _figures.write("startup", a, figures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
