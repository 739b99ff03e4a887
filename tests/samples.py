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


# InnoDB's counters for a MariaDB point, made from a PostgreSQL point's (the documents are otherwise alike).
def _innodb_block(pg: dict) -> dict:
    reads, hits = pg.get("blks_read") or 0.0, pg.get("blks_hit") or 0.0
    requests = reads + hits
    return {"buffer_pool_reads": reads, "buffer_pool_read_requests": requests,
            "buffer_pool_hit_ratio": 1 - reads / requests if requests else None, "data_reads": reads,
            "data_writes": 1200.0, "log_bytes": pg.get("wal_bytes"), "fsyncs": pg.get("wal_syncs"),
            "row_lock_waits": 3.0, "data_reads_per_s": 100.0, "data_writes_per_s": 240.0,
            "log_written_mb_per_s": 1.35, "fsyncs_per_s": 284.0, "log_waits_per_s": 0.0}


def mariadb_doc(source: Path = TPCC, durable: bool | None = False, workload: str = "sysbench-rw") -> dict:
    """A MariaDB-shaped `bench oltp` document (CONTRACT15's keys) edited from a saved PostgreSQL run: engine
    "mariadb", params.engine "sysbench (MariaDB)", `innodb` instead of `pg` in every point, nopm null for a
    sysbench workload, and doc["durability"] (None: left out, as in an older document)."""
    doc = json.loads(source.read_text())
    doc["engine"] = "mariadb"
    doc["params"].update(engine="sysbench (MariaDB)", workload=workload, latency="sysbench's latency histogram",
                         settings={"innodb_flush_log_at_trx_commit": "2" if durable is False else "1",
                                   "innodb_doublewrite": "ON", "innodb_buffer_pool_size": "128M"})
    if workload != "tpcc":
        doc["params"]["warehouses"] = None
        for d in [doc, *doc.get("steps", [])]:
            if isinstance(d.get("load"), dict):
                d["load"].update(workload=workload, warehouses=None)
    if durable is not None:
        doc["durability"] = ({"durable": True, "reason": "innodb_flush_log_at_trx_commit=1, doublewrite on, "
                                                          "binary log off"} if durable else
                             {"durable": False, "reason": "innodb_flush_log_at_trx_commit=2: the redo log is not "
                                                          "flushed at each commit (up to a second of commits lost)"})
    for p in [*doc.get("points", []), *(q for s in doc.get("steps", []) for q in s.get("points", []))]:
        p["innodb"] = _innodb_block(p.pop("pg", {}) or {})
        p.pop("read_path", None)
        if workload != "tpcc":
            p["nopm"] = None
        p["raw"] = str(p.get("raw") or "").replace("pgbench", "sysbench")
        if isinstance(p.get("bottleneck_evidence"), str):   # the evidence names the driver
            p["bottleneck_evidence"] = p["bottleneck_evidence"].replace("pgbench", "sysbench")
    doc.pop("guards", None)
    return doc


# PostgreSQL's placement steps -> InnoDB's, by position, with InnoDB's roles (for a MariaDB matrix sample).
INNODB_STEP_NAMES = ("all-slow", "redo-fast", "undo-fast", "tables-fast", "temp-fast", "all-fast")


def mariadb_matrix_doc(durable: bool | None = True) -> dict:
    """The saved placement matrix as InnoDB's: step names and placements from model/placement.INNODB_MATRIX."""
    from dbtier.model.placement import INNODB_MATRIX, matrix_steps
    doc = mariadb_doc(MATRIX, durable=durable)
    fast, slow = doc["params"]["placement_matrix"].split(",")
    for s, (name, placement) in zip(doc["steps"], matrix_steps(fast, slow, INNODB_MATRIX)):
        s["name"] = name
        s["placement"] = {r: placement.get(r, placement["data"]) for r in ("data", "redo", "undo", "temp")}
    doc["placement"] = doc["steps"][-1]["placement"]
    return doc
