"""The figures a bench script prints, written as JSON too, so every speed figure in the README can be
traced to a file: `--json PATH` (default runs/bench/<script>-<UTC timestamp>.json in the repository).

The document: {"bench": script, "finished_at": UTC ISO time, "machine": {cpu_count, load_average_1m,
platform, python}, "params": the script's options, "figures": what it measured (units in the names)}.
Not a script itself: `make bench` runs bench/[!_]*.py."""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def add_option(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--json", metavar="PATH", default=None,
                    help="write the figures as JSON here (default runs/bench/<script>-<UTC timestamp>.json)")


def write(script: str, args: argparse.Namespace, figures: dict) -> Path:
    """Write the figures document and say where (stderr: stdout keeps the printed table)."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    path = Path(args.json) if getattr(args, "json", None) else ROOT / "runs" / "bench" / f"{script}-{stamp}.json"
    params = {k: v for k, v in vars(args).items() if k != "json"}
    doc = {"bench": script, "finished_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "machine": {"cpu_count": os.cpu_count(), "load_average_1m": os.getloadavg()[0],
                       "platform": platform.platform(), "python": platform.python_version()},
           "params": params, "figures": figures}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=2, default=str) + "\n")
    print(f"figures: {path}", file=sys.stderr)
    return path
