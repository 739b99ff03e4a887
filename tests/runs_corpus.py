"""Runs directories for `dbtier runs`: every kind of run dbtier writes, from saved real documents, plus
damaged run directories (each with dbtier's run marker, as every run directory has) and folders that are
no runs (no marker, no result.json: not listed); and variants of a document (another time, host, figures) for trends, checks and the
10,000-run bench (bench/runs_scale.py)."""

from __future__ import annotations

import copy
import datetime as _dt
import json
import shutil
from pathlib import Path

from dbtier.results.store import RUN_MARKER
from samples import BACKUP_DUCKDB, DATA, DSS_SPILL, LAB, MATRIX, MATRIX_EMULATED, PROBE, TPCC, make_lab

PROBE_REPEATS = DATA / "probe" / "quick-ext4-virtio-repeats.json"
FLEET = DATA / "probe" / "fleet-2hosts-quick.json"
SAVED = DATA / "documents"

# Run directory name -> the saved document it holds (tests/data/documents/README.md says how each was made).
SOURCES: dict[str, Path] = {
    "probe": PROBE, "probe-repeats": PROBE_REPEATS, "probe-fleet": FLEET, "oltp": TPCC, "oltp-matrix": MATRIX,
    "oltp-emulated": MATRIX_EMULATED, "dss": DSS_SPILL, "backup": BACKUP_DUCKDB, "plan-size": LAB / "plan-size.json",
    **{p.stem: p for p in sorted(SAVED.glob("*.json"))},
}

# Damaged run directory (its run marker besides) -> (what is in it, words of the reason `dbtier runs` gives).
DAMAGED = {
    "damaged-truncated": ("the first 3000 bytes of a probe's result.json", "not valid JSON"),
    "damaged-empty": ("nothing but the marker", "no result.json"),
    "damaged-foreign": ("a JSON object that is not a dbtier document", "not a dbtier result"),
    "damaged-array": ("a JSON array", "not a dbtier result"),
    "damaged-future": ("a probe document of schema_version 99", "newer than this dbtier"),
}


# Folders a user keeps beside the runs, never runs: not listed.
NOT_RUNS = {
    "a-report": ("report.html", "<html></html>\n"),
    "pg_wal": ("000000010000000000000001", ""),
    "textfile": ("dbtier.prom", "# HELP x\n"),
}


def mark(d: Path, command: str = "probe", name: str | None = None) -> Path:
    """dbtier's run marker, as RunDir.create writes it."""
    d.mkdir(parents=True, exist_ok=True)
    (d / RUN_MARKER).write_text(json.dumps({"command": command, "name": name}) + "\n")
    return d


def put(d: Path, doc: dict | bytes) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    data = doc if isinstance(doc, bytes) else json.dumps(doc).encode()
    (d / "result.json").write_bytes(data)
    return d


def make_damaged(root: Path) -> None:
    put(root / "damaged-truncated", PROBE.read_bytes()[:3000])
    (root / "damaged-empty").mkdir(parents=True)
    put(root / "damaged-foreign", {"name": "not ours", "value": 1})
    put(root / "damaged-array", b"[1, 2, 3]")
    future = json.loads(PROBE.read_text())
    future["schema_version"] = 99
    put(root / "damaged-future", future)
    for name in DAMAGED:
        mark(root / name)


def make_not_runs(root: Path) -> None:
    for name, (file, text) in NOT_RUNS.items():
        (root / name).mkdir(parents=True)
        (root / name / file).write_text(text)


def make_corpus(root: Path) -> Path:
    """Every saved document as its own run directory (named as SOURCES), a lab with its step runs (`lab/`),
    the DAMAGED directories, the NOT_RUNS folders and `bench/` (bench figures, not runs)."""
    root.mkdir(parents=True, exist_ok=True)
    for name, src in SOURCES.items():
        (root / name).mkdir()
        shutil.copy(src, root / name / "result.json")
    make_lab(root, "lab")
    make_damaged(root)
    make_not_runs(root)
    (root / "bench").mkdir()
    (root / "bench" / "runs_scale-20250101T000000Z.json").write_text('{"bench": "runs_scale"}\n')
    return root


def stamp(t: _dt.datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def vary(doc: dict, started: _dt.datetime, host: str | None = None, scale: dict[str, float] | None = None) -> dict:
    """A copy of `doc` started at `started` (its duration kept), on `host`, with probe summary figures
    multiplied (`scale`: {key: factor}; the stored spread of the figure scaled alike)."""
    d = copy.deepcopy(doc)
    try:
        a = _dt.datetime.fromisoformat(d["started_at"].replace("Z", "+00:00"))
        b = _dt.datetime.fromisoformat(d["finished_at"].replace("Z", "+00:00"))
        took = b - a
    except (KeyError, TypeError, ValueError, AttributeError):
        took = _dt.timedelta(minutes=1)
    d["started_at"], d["finished_at"] = stamp(started), stamp(started + took)
    if host is not None and isinstance(d.get("machine"), dict):
        d["machine"]["hostname"] = host
    for key, f in (scale or {}).items():
        for t in d.get("targets") or []:
            if isinstance((t.get("summary") or {}).get(key), (int, float)):
                t["summary"][key] *= f
            sp = (t.get("spread") or {}).get(key)
            if isinstance(sp, dict):
                for k in ("median", "min", "max"):
                    if isinstance(sp.get(k), (int, float)):
                        sp[k] *= f
    return d
