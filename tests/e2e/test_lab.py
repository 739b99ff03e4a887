"""`dbtier lab` end to end (smoke profile: real engines, seconds-long steps)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pytest import approx

from conftest import assert_clean_error, have, load_doc, postgres_processes, run_dbtier

pytestmark = pytest.mark.engine  # every step on real engines


def test_lab_on_one_directory_runs_every_step(pg_dir):
    # as `make lab`, the TPC-H scale set over the profile's 0.01
    r = run_dbtier("lab", ".", "--profile", "smoke", "--dss-scale", "0.02", "--json", "--out", "lab", cwd=pg_dir)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["command"] == "lab" and doc["status"] == "ok"
    names = [s["name"] for s in doc["steps"]]
    assert names == ["probe", "oltp", "dss-1", "backup-1", "plan-size", "plan-cloud"]
    for s in doc["steps"]:
        assert s["status"] == "ok", s
        child = load_doc(pg_dir / "lab" / s["run_dir"])
        assert child["status"] == "ok"
    assert load_doc(pg_dir / "lab" / "dss-1")["scale"] == 0.02
    req = doc["requirement"]
    # measured figures as measured (no token 1 for a rate that did not show up); capacity >= 10 GB by rule
    assert req and req["capacity_gb"] >= 10 and req["absent"] == []
    assert all(req[k] >= 0 for k in ("read_iops", "write_iops", "read_mbps", "write_mbps"))
    plan = load_doc(pg_dir / "lab" / "plan-size")
    assert plan["candidates"] and plan["binding"]
    # the plan step got the OLTP run's durability and the probe's commit rate; its cheapest design passes
    # durable writes and the service life (or the document says which it could not check)
    oltp = load_doc(pg_dir / "lab" / "oltp")
    terms = plan["params"]["terms"]
    assert terms["durable_writes"] == ("no" if oltp["durability"]["durable"] is False else "required")
    assert terms["probe"]["run_dir"].endswith("probe") and terms["probe"]["commits_per_s"] > 0
    best = plan["candidates"][0]
    if terms["durable_writes"] == "required":
        assert best["durable_writes"]["protected"] is not False
    assert best["endurance"] is None or best["endurance"]["passes"] is True
    # the same measured load on AWS volumes, on the cheapest instance that carries it sustained
    cloud = load_doc(pg_dir / "lab" / "plan-cloud")
    c = cloud["candidates"][0]["cloud"]
    assert cloud["params"]["cloud"] == "aws" and c["instance"] and c["caps"]["sustained"]
    assert c["volumes"] and c["monthly_usd"]["total"] > 0 and cloud["requirement"]["read_iops"] == approx(
        req["read_iops"], rel=0.01, abs=1)
    assert doc["standing"][0]["closest"]
    assert doc["report"]["status"] == "ok" and Path(doc["report"]["html"]).stat().st_size > 10_000
    # the report is written once the lab's status and time are final: its own section shows them
    html = Path(doc["report"]["html"]).read_text()
    assert "badge running" not in html and load_doc(pg_dir / "lab")["finished_at"]
    assert "Against the catalog" in html and "above 1 better" in html
    assert "The cheapest configuration for the measured load" in html and "over 5 years" in html
    assert "aws volumes as the provider sells them" in html
    # given ".", every step names the directory absolutely (the report showed "paths: ." and "to .")
    where = str(Path(pg_dir).resolve())
    assert load_doc(pg_dir / "lab" / "probe")["params"]["paths"] == [where]
    assert load_doc(pg_dir / "lab" / "backup-1")["params"]["to"] == where
    assert "<code>.</code>" not in html and "to .<" not in html
    assert list(pg_dir.glob("dbtier-*")) == [] and postgres_processes("dbtier-pg-") == []


@pytest.mark.skipif(not have("mariadb-install-db") or not have("sysbench"), reason="MariaDB or sysbench is not installed")
def test_lab_runs_the_oltp_step_on_both_engines_and_shows_them_side_by_side(pg_dir):
    """`lab --engines postgres,mariadb`: the same tpcc workload on the same storage, one step per engine, the
    plan sized from PostgreSQL's run, the report with both engines."""
    r = run_dbtier("lab", str(pg_dir), "--profile", "smoke", "--engines", "postgres,mariadb", "--skip",
                   "probe,dss,backup", "--json", "--out", "lab", cwd=pg_dir)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["params"]["engines"] == ["postgres", "mariadb"]
    steps = {s["name"]: s for s in doc["steps"]}
    assert steps["oltp-postgres"]["status"] == "ok" and steps["oltp-mariadb"]["status"] == "ok"
    pg, maria = (load_doc(pg_dir / "lab" / steps[n]["run_dir"]) for n in ("oltp-postgres", "oltp-mariadb"))
    assert pg["engine"] == "postgres" and maria["engine"] == "mariadb"
    assert pg["params"]["workload"] == maria["params"]["workload"] == "tpcc"
    assert pg["points"][0]["nopm"] > 0 and maria["points"][0]["nopm"] > 0
    html = Path(doc["report"]["html"]).read_text()
    assert "MariaDB" in html and "PostgreSQL" in html
    assert list(pg_dir.glob("dbtier-*")) == [] and postgres_processes("dbtier-pg-") == []


def test_lab_with_two_tiers_runs_the_placement_matrix(pg_dir):
    a, b = pg_dir / "a", pg_dir / "b"
    for d in (a, b):
        d.mkdir()
        d.chmod(0o755)
    # no probe (its two targets would take a minute here): without one the first directory is the fast tier
    # (tests/unit/test_lab_model.py checks the choice from a probe)
    r = run_dbtier("lab", str(a), str(b), "--profile", "smoke", "--skip", "probe,dss,backup,plan", "--json",
                   "--out", "lab", cwd=pg_dir)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert (doc["params"]["fast_dir"], doc["params"]["slow_dir"]) == (str(a), str(b))
    oltp = load_doc(pg_dir / "lab" / "oltp")
    assert len(oltp["steps"]) == 6
    assert [s["status"] for s in doc["steps"] if s["name"].startswith(("dss", "backup"))] == ["skipped"] * 4


def test_a_failed_step_is_reported_and_the_rest_still_run(pg_dir):
    # without PostgreSQL the OLTP and backup steps fail; DSS still runs; the exit status says so
    r = run_dbtier("lab", str(pg_dir), "--profile", "smoke", "--skip", "probe", "--json", "--out", "lab",
                   cwd=pg_dir, env={"DBTIER_PG_BINDIR": str(pg_dir / "nowhere")})
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    by = {s["name"]: s for s in doc["steps"]}
    assert by["oltp"]["status"] == "failed" and "PostgreSQL is not installed" in by["oltp"]["error"]
    assert by["dss-1"]["status"] == "ok"
    assert by["plan-size"]["status"] == "skipped"
    assert doc["status"] == "failed"


def test_ctrl_c_stops_the_running_step_and_keeps_finished_ones(pg_dir):
    # probe and OLTP skipped (a minute here; `bench oltp`'s own Ctrl-C test covers OLTP): DSS finishes,
    # then the interrupt lands in the backup step, which has a PostgreSQL cluster up
    proc = subprocess.Popen([sys.executable, "-m", "dbtier", "lab", str(pg_dir), "--profile", "smoke", "--skip",
                             "probe,oltp", "--out", "lab"],
                            cwd=pg_dir, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 180
    while time.time() < deadline:
        try:
            steps = load_doc(pg_dir / "lab")["steps"]
            if any(s["name"] == "backup-1" and s["status"] == "running" for s in steps) and \
                    list(pg_dir.glob("dbtier-pg-*")):
                break
        except (FileNotFoundError, KeyError, json.JSONDecodeError):
            pass
        time.sleep(0.1)
    time.sleep(1)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    doc = load_doc(pg_dir / "lab")
    assert doc["status"] == "interrupted"
    by = {s["name"]: s["status"] for s in doc["steps"]}
    assert by["dss-1"] == "ok" and by["backup-1"] == "interrupted", by
    assert list(pg_dir.glob("dbtier-pg-*")) == [] and postgres_processes("dbtier-pg-") == []


def test_lab_bad_input(pg_dir):
    assert_clean_error(run_dbtier("lab", str(pg_dir / "nope"), cwd=pg_dir), "no such directory")
    assert_clean_error(run_dbtier("lab", str(pg_dir), str(pg_dir), cwd=pg_dir), "given twice")
    assert_clean_error(run_dbtier("lab", "--skip", "coffee", cwd=pg_dir), "unknown step coffee")
