"""`dbtier show` and `dbtier compare` end to end: real processes on saved real result documents."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import assert_clean_error, call_main
from samples import LAB, MATRIX, PROBE, TPCC, make_lab, run_dir


def test_show_a_probe(tmp_path):
    run = run_dir(tmp_path / "runs", "p1", PROBE)
    r = call_main("show", str(run), "--out", str(tmp_path / "s"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    # the saved probe measured each point once (before repeats): no verdict, what is missing instead
    assert out.startswith("Verdict\n  good for: Not judged on /tmp/pt, too little evidence: the 4 KiB random read at")
    assert "probe again: every headline point is then measured at least twice" in " ".join(out.split())
    assert "saturates:" not in out
    for text in ("probe · p1 · ok", "4 KiB random read, peak", "109,270", "commits per second, best", "10,384",
                 "Where IOPS stop growing: /tmp/pt", "rand-mix-8k", "I/O: direct I/O (O_DIRECT)"):
        assert text in out, text
    doc = json.loads((tmp_path / "s" / "result.json").read_text())
    assert doc["command"] == "show" and doc["status"] == "ok" and doc["params"] == {"run": str(run)}
    assert doc["run"]["kind"] == "probe"


def test_show_json_is_the_summary(tmp_path):
    run = run_dir(tmp_path / "runs", "o1", TPCC)
    r = call_main("show", str(run), "--json", "--out", str(tmp_path / "s"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["run"] == {"dir": str(run), "command": "bench", "kind": "bench oltp", "status": "ok",
                          "started_at": "2026-11-21T23:53:57.823372Z", "finished_at": "2026-11-21T23:54:30.085092Z",
                          "host": "vm"}
    figs = {f["key"]: f for f in doc["figures"]}
    assert figs["knee_tps"]["value"] == 521.6 and figs["knee_tps"]["unit"] == "TPS"
    assert doc["tables"][0]["title"] == "Sweep" and doc["tables"][0]["rows"][0][:2] == [1, 305.0]
    assert {"what": "load", "how": "closed loop (each client sends its next transaction when the last returns)"} \
        in doc["method"]
    assert doc["verdict"]["sentences"][0].startswith("Where OLTP — TPC-C-like, 1 warehouse — saturates, and its "
                                                     "bottleneck, are not judged, too little evidence")


def test_show_a_lab_shows_every_step(tmp_path):
    lab = make_lab(tmp_path / "runs")
    r = call_main("show", str(lab), "--out", str(tmp_path / "s"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    for text in ("lab · lab · ok", "step probe", "step oltp", "step dss-1", "step backup-2", "step plan-size",
                 "Placement matrix (best point of each step)", "Per query", "Backup throughput",
                 "Cheapest configurations", "2 x nvme-consumer-2tb mirror2",
                 "placement: The placement matrix cannot tell the tiers apart"):
        assert text in r.stdout, text
    doc = json.loads((tmp_path / "s" / "result.json").read_text())
    assert [s["name"] for s in doc["steps"]] == ["probe", "oltp", "dss-1", "dss-2", "backup-1", "backup-2",
                                                 "plan-size"]
    assert doc["steps"][2]["summary"]["run"]["kind"] == "bench dss"


def test_show_any_command_and_a_missing_run(tmp_path):
    other = tmp_path / "runs" / "x"
    other.mkdir(parents=True)
    (other / "result.json").write_text(json.dumps({"schema_version": 1, "command": "catalog", "status": "ok",
                                                   "devices": 12}))
    r = call_main("show", str(other), "--out", str(tmp_path / "s"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "catalog · x · ok" in r.stdout and "devices" in r.stdout
    r = call_main("show", str(tmp_path / "nowhere"), "--out", str(tmp_path / "s2"), cwd=tmp_path)
    assert_clean_error(r, "no result.json there")
    assert not (tmp_path / "s2").exists()


def test_compare_two_runs(tmp_path):
    a = run_dir(tmp_path / "runs", "dss-fast", LAB / "dss-1.json")
    b = run_dir(tmp_path / "runs", "dss-slow", LAB / "dss-2.json")
    r = call_main("compare", str(a), str(b), "--out", str(tmp_path / "c"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    line = next(ln for ln in r.stdout.splitlines() if "power run, total" in ln)
    # single runs: the ratio is shown, not judged ("?": too little evidence, said under the table)
    assert [c.strip() for c in line.split("│")[1:7]] == ["power run, total", "0.826", "0.739", "-0.087", "0.89x ?", "s"]
    assert "bench dss: A = dss-fast, B = dss-slow" in r.stdout and "Q22" in r.stdout
    doc = json.loads((tmp_path / "c" / "result.json").read_text())
    assert doc["command"] == "compare" and doc["params"] == {"a": str(a), "b": str(b)}
    # the two read together: their temp directories share vda, so no tier is put above the other
    assert "cannot tell the temp tiers apart (0.739 s with temp on /var/tmp/lab-sample/slow, 0.826 s on " \
           "/var/tmp/lab-sample/fast)" in " ".join(r.stdout.split())
    assert any("both on vda" in t for t in doc["verdict"]["sentences"])


def test_compare_json(tmp_path):
    a = run_dir(tmp_path / "runs", "m", MATRIX)
    b = run_dir(tmp_path / "runs", "t", TPCC)
    r = call_main("compare", str(a), str(b), "--json", "--out", str(tmp_path / "c"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["a"]["dir"] == str(a) and doc["b"]["kind"] == "bench oltp"
    rows = {x["key"]: x for x in doc["rows"]}
    best = rows["best_tps"]
    assert (best["metric"], best["a"], best["b"], best["diff"]) == ("best TPS", 893.0, 639.0, -254.0)
    assert abs(best["ratio"] - 639 / 893) < 1e-12
    assert rows["knee_bottleneck"]["a"] == rows["knee_bottleneck"]["b"] == "cpu"
    assert rows["knee_bottleneck"]["ratio"] is None
    # 639 / 893 is 28% down, past the 5% floor, but each side is one run: not called worse (show's evidence rule)
    assert best["verdict"] == "too little evidence" and best["noise_pct"] >= 5.0
    assert rows["knee_bottleneck"]["verdict"] is None           # a text has no better or worse
    # a figure only one side has: the matrix's steps
    assert rows["step.all-slow.best_tps"]["b"] is None and rows["step.all-slow.best_tps"]["diff"] is None


def test_compare_needs_the_same_command(tmp_path):
    a = run_dir(tmp_path / "runs", "p", PROBE)
    b = run_dir(tmp_path / "runs", "t", TPCC)
    r = call_main("compare", str(a), str(b), "--out", str(tmp_path / "c"), cwd=tmp_path)
    err = assert_clean_error(r, f"{a} is a probe run and {b} a bench oltp run")
    assert "next: compare two probe runs, or show both in one report" in err
    assert not (tmp_path / "c").exists()
    c = run_dir(tmp_path / "runs", "d", LAB / "dss-1.json")
    r = call_main("compare", str(b), str(c), cwd=tmp_path)
    assert_clean_error(r, "a bench dss run")
    r = call_main("compare", str(a), cwd=tmp_path)
    assert r.returncode == 2 and "RUN_B" in r.stderr


def test_compare_two_labs(tmp_path):
    a = make_lab(tmp_path / "runs", "lab-a")
    b = make_lab(tmp_path / "runs", "lab-b", oltp=TPCC)
    r = call_main("compare", str(a), str(b), "--json", "--out", str(tmp_path / "c"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    rows = {x["key"]: x for x in json.loads(r.stdout)["rows"]}
    assert rows["oltp/best_tps"]["a"] == 893.0 and rows["oltp/best_tps"]["b"] == 639.0
    assert rows["probe/read_iops_4k"]["ratio"] == 1.0
    # a lab step's figures keep their runs' spread, so the noise rule applies inside labs too
    assert rows["probe/read_iops_4k"]["a_spread"]["n"] == 1           # the saved probe measured it once
    assert rows["oltp/best_tps"]["a_spread"]["n"] == 1 and rows["oltp/best_tps"]["verdict"] == "too little evidence"
    assert Path(tmp_path / "c" / "result.json").exists()
