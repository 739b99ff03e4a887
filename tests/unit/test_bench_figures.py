"""bench/ scripts write their figures as JSON as well as printing them (bench/_figures.py), so every speed
figure in the README can be traced to a file."""

from __future__ import annotations

import argparse
import importlib.util
import json

from conftest import ROOT

BENCH = ROOT / "bench"


def _figures():
    spec = importlib.util.spec_from_file_location("_figures", BENCH / "_figures.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_every_bench_script_takes_json_and_writes_its_figures():
    scripts = sorted(p for p in BENCH.glob("*.py") if not p.name.startswith("_"))
    assert len(scripts) >= 6
    for p in scripts:
        text = p.read_text()
        assert "_figures.add_option(ap)" in text, p.name
        assert f'_figures.write("{p.stem}", ' in text, p.name        # named after the script
        assert "--json" in text.split('"""')[1], p.name                 # the usage lines say so


def test_the_figures_document(tmp_path):
    fig = _figures()
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    fig.add_option(ap)
    args = ap.parse_args(["--json", str(tmp_path / "out" / "f.json")])
    path = fig.write("plan_speed", args, {"median_ms": 1.5})
    doc = json.loads(path.read_text())
    assert path == tmp_path / "out" / "f.json"
    assert doc["bench"] == "plan_speed" and doc["params"] == {"repeat": 3} and doc["figures"] == {"median_ms": 1.5}
    assert doc["machine"]["cpu_count"] >= 1 and doc["finished_at"].endswith("Z")


def test_the_default_file_is_under_runs_bench():
    fig = _figures()
    ap = argparse.ArgumentParser()
    fig.add_option(ap)
    assert ap.parse_args([]).json is None            # write() then picks runs/bench/<script>-<UTC>.json
    assert fig.ROOT == ROOT
