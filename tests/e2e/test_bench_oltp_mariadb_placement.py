"""InnoDB's placement through the CLI: `--placement-matrix FAST,SLOW` walks model/placement.INNODB_STEPS
with each part's files really in the step's directory (seen on disk while the run goes), the report
renders the matrix with InnoDB's labels; `--binlog on` puts the binary log in the placed directory and
sync_binlog decides durability. Nothing left running or on disk."""

from __future__ import annotations

import json
import subprocess
import threading
from contextlib import contextmanager
from pathlib import Path

import jsonschema
import pytest

from conftest import assert_clean_error, have, run_dbtier
from dbtier.model.placement import INNODB_STEPS
from dbtier.results.schema import result_schema

pytestmark = [pytest.mark.engine,
              pytest.mark.skipif(not have("mariadb-install-db") or not have("sysbench"),
                                 reason="MariaDB or sysbench is not installed")]

SHORT = ["--engine", "mariadb", "--workload", "sysbench-rw", "--scale", "1", "--clients", "1", "--duration", "2",
         "--warmup", "0", "--memory", "none"]


@contextmanager
def files_seen(*roots: Path):
    """Every file path that existed under roots at some moment while the block ran (sampled every 0.1 s)."""
    seen: set[Path] = set()
    stop = threading.Event()

    def watch():
        while True:
            for r in roots:
                try:
                    seen.update(p for p in r.rglob("*") if p.is_file())
                except OSError:          # a directory removed while walked
                    pass
            if stop.wait(0.1):
                return
    t = threading.Thread(target=watch, daemon=True)
    t.start()
    try:
        yield seen
    finally:
        stop.set()
        t.join()


def left(*roots: Path) -> list[str]:
    found = [str(p) for r in roots for p in r.iterdir()]
    out = subprocess.run(["pgrep", "-a", "-f", "dbtier-mariadb-"], capture_output=True, text=True).stdout
    return found + [x for x in out.splitlines() if "mariadbd" in x and any(str(r) in x for r in roots)]


def dirs(pg_dir: Path, *names: str) -> list[Path]:
    out = []
    for n in names:
        d = pg_dir / n
        d.mkdir()
        d.chmod(0o755)
        out.append(d)
    return out


def under(path: Path | str, d: Path | str) -> bool:
    return Path(path).is_relative_to(Path(d))


def test_placement_matrix_walks_innodbs_steps(pg_dir):
    fast, slow = dirs(pg_dir, "fast", "slow")
    with files_seen(fast, slow) as seen:
        r = run_dbtier("bench", "oltp", *SHORT, "--placement-matrix", f"{fast},{slow}", "--json", "--out", "run",
                       cwd=pg_dir)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, result_schema())
    steps = doc["steps"]
    names = ["all-slow", "redo-fast", "undo-fast", "tables-fast", "temp-fast", "all-fast"]
    assert [s["name"] for s in steps] == names == [s.name for s in INNODB_STEPS]
    # where each step puts each part (written out here, not taken from the model)
    want = {"all-slow": dict(data="slow", redo="slow", undo="slow", temp="slow"),
            "redo-fast": dict(data="slow", redo="fast", undo="slow", temp="slow"),
            "undo-fast": dict(data="slow", redo="fast", undo="fast", temp="slow"),
            "tables-fast": dict(data="fast", redo="fast", undo="fast", temp="slow"),
            "temp-fast": dict(data="fast", redo="fast", undo="fast", temp="fast"),
            "all-fast": dict(data="fast", redo="fast", undo="fast", temp="fast")}
    tier = {"fast": fast, "slow": slow}
    for s in steps:
        assert s["points"][0]["tps"] > 0 and s["load"]["rows"] == 100_000
        pl = s["placement"]
        assert set(pl) == {"data", "redo", "undo", "temp"}
        for role, where in want[s["name"]].items():
            assert under(pl[role], tier[where]), (s["name"], role, pl[role])
        # the files themselves, seen on disk during the run: each in its role's directory
        files = {p.name: p for p in seen if under(p, Path(pl["data"]).parent)
                 or any(under(p, pl[r]) for r in ("redo", "undo", "temp"))}
        assert under(files["ib_logfile0"], pl["redo"]), s["name"]
        assert under(files["undo001"], pl["undo"]), s["name"]
        assert under(files["sbtest1.ibd"], Path(pl["data"]) / "dbtier_bench"), s["name"]
        assert under(files["ibdata1"], pl["data"]), s["name"]
        assert under(files["ibtmp1"], tier[want[s["name"]]["temp"]]), s["name"]
        if "temp" in dict(next(x.placement for x in INNODB_STEPS if x.name == s["name"])):
            assert under(files["ibtmp1"], pl["temp"]), s["name"]
    assert doc["placement"] == steps[-1]["placement"]
    # the report renders the matrix with InnoDB's step labels
    for fmt, out in (("html", "r.html"), ("md", "r.md")):
        rr = run_dbtier("report", str(pg_dir / "run"), "--format", fmt, "--output", out, cwd=pg_dir)
        assert rr.returncode == 0, rr.stderr
        text = (pg_dir / out).read_text()
        for n in names:
            assert n in text, (fmt, n)
    html = (pg_dir / "r.html").read_text()
    for s in INNODB_STEPS:
        assert s.label in html, s.label
    assert left(fast, slow) == []


def test_binlog_in_its_placed_directory_and_sync_binlog_decides_durability(pg_dir):
    (bl,) = dirs(pg_dir, "bl")
    with files_seen(bl) as seen:
        r = run_dbtier("bench", "oltp", *SHORT, "--binlog", "on", "--place", f"binlog={bl}", "--json", "--out", "on",
                       cwd=pg_dir)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    jsonschema.validate(doc, result_schema())
    assert under(doc["placement"]["binlog"], bl) and not under(doc["placement"]["data"], bl)
    assert doc["params"]["settings"]["sync_binlog"] == "1"
    assert doc["durability"] == {"durable": True,
                                 "reason": "innodb_flush_log_at_trx_commit=1, doublewrite on, sync_binlog=1"}
    logs = [p for p in seen if p.name.startswith("mariadb-bin.0")]
    assert logs and all(under(p, doc["placement"]["binlog"]) for p in logs)
    assert any(p.name == "mariadb-bin.index" for p in seen)
    assert left(bl) == []

    r = run_dbtier("bench", "oltp", *SHORT, "--binlog", "on", "--sync-binlog", "0", "--json", "--out", "off",
                   cwd=pg_dir)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["params"]["settings"]["sync_binlog"] == "0"
    assert doc["placement"]["binlog"] == doc["placement"]["data"]
    assert doc["durability"]["durable"] is False
    assert doc["durability"]["reason"].startswith("sync_binlog=0 with the binary log on")
    assert doc["points"][0]["tps"] > 0

    # a binary-log directory without the binary log: refused before anything starts
    r = run_dbtier("bench", "oltp", *SHORT, "--place", f"binlog={bl}", cwd=pg_dir)
    assert_clean_error(r, "binary logging is off, there is no binary log to place")
    assert left(bl) == [] and not list(pg_dir.glob("dbtier-mariadb-*"))
