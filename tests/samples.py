"""Saved real result documents, assembled into run directories for report, show and compare tests.

`make_lab` builds the directory `dbtier lab /fast /slow` writes: its result.json (a real lab run
whose probe, OLTP and plan steps were skipped, here filled in from the saved probe, OLTP and plan
documents) and one run directory per step.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
PROBE = DATA / "probe" / "quick-ext4-virtio.json"
TPCC = DATA / "bench" / "oltp-tpcc.json"
MATRIX = DATA / "bench" / "oltp-matrix-tpcb.json"
# bench oltp --placement-matrix FAST,SLOW --emulate SLOW=150iops --memory 80MiB: tpcc, 2 warehouses, 1 client
MATRIX_EMULATED = DATA / "bench" / "oltp-matrix-tpcc-emulated.json"
DSS_SPILL = DATA / "bench" / "dss-duckdb-sf0.3-spill.json"
BACKUP_DUCKDB = DATA / "bench" / "backup-duckdb.json"
LAB = DATA / "lab"


def run_dir(root: Path, name: str, source: Path) -> Path:
    """A run directory holding a copy of a saved document."""
    d = root / name
    d.mkdir(parents=True)
    shutil.copy(source, d / "result.json")
    return d


def make_lab(root: Path, name: str = "lab", oltp: Path | None = MATRIX, probe: Path | None = PROBE,
             plan: bool = True, fail: dict[str, str] | None = None) -> Path:
    """A lab directory: the real lab document with its dss-1/2 and backup-1/2 runs, plus probe, oltp and
    plan-size steps from the saved documents (None leaves a step skipped); `fail` marks steps failed."""
    lab = root / name
    lab.mkdir(parents=True)
    doc = json.loads((LAB / "lab.json").read_text())
    sources = {"probe": probe, "oltp": oltp, "dss-1": LAB / "dss-1.json", "dss-2": LAB / "dss-2.json",
               "backup-1": LAB / "backup-1.json", "backup-2": LAB / "backup-2.json",
               "plan-size": LAB / "plan-size.json" if plan else None}
    for step in doc["steps"]:
        src = sources.get(step["name"])
        if src is None:
            continue
        run_dir(lab, step["name"], src)
        step.update(status="ok", run_dir=step["name"], error=None)
        if step["name"] in ("probe", "oltp", "plan-size"):
            step["seconds"] = {"probe": 108.4, "oltp": 74.0, "plan-size": 0.9}[step["name"]]
    for name_, err in (fail or {}).items():
        for step in doc["steps"]:
            if step["name"] == name_:
                step.update(status="failed", error=err, run_dir=None)
                shutil.rmtree(lab / name_, ignore_errors=True)
    doc["params"]["skip"] = [s for s in ("probe", "oltp", "plan") if sources.get(
        {"plan": "plan-size"}.get(s, s)) is None]
    (lab / "result.json").write_text(json.dumps(doc, indent=1))
    return lab
