"""`simulate convert`: a trace's Parquet copy replays to exactly the figures of the text it came from,
whole or one volume at a time; a changed source is said; a damaged copy is one clear message."""

from __future__ import annotations

import json
import os
from pathlib import Path

import jsonschema
import pytest

from conftest import ROOT, assert_clean_error, call_main
from dbtier.results.schema import result_schema
from test_simulate_volumes import CACHE, VOLUMES, msr_trace

TRACES = ROOT / "tests" / "data" / "traces"


def ok(tmp_path: Path, *args: str) -> dict:
    r = call_main(*args, "--json", cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def same_figures(a: dict, b: dict) -> None:
    for k in ("trace", "design", "policy", "read_hit_ratio", "request_hit_ratio", "curve", "latency_us",
              "device_util", "volumes"):
        assert a.get(k) == b.get(k), k
    assert a["simulation"]["cache"] == b["simulation"]["cache"]


@pytest.mark.slow
@pytest.mark.parametrize("name", ["msr-hm1.csv", "tencent-cbs.csv", "alibaba-block.csv"])
def test_the_copy_replays_like_the_committed_trace(tmp_path, name):
    src = TRACES / name
    conv = ok(tmp_path, "simulate", "convert", str(src), "--out", "conv")
    assert conv["convert"]["requests"] == conv["trace"]["requests"] > 0
    assert conv["convert"]["source"]["sha256"] and conv["convert"]["source"]["bytes"] == src.stat().st_size
    jsonschema.validate(conv, result_schema())
    a = ok(tmp_path, "simulate", "run", str(src), *CACHE, "--out", "text")
    b = ok(tmp_path, "simulate", "run", "conv", *CACHE, "--out", "parquet")
    same_figures(a, b)
    info_a, info_b = a["simulation"]["trace_info"], b["simulation"]["trace_info"]
    for k in ("format", "timed", "lines", "volumes", "volume_count", "ignored_lines", "time_origin_s"):
        assert info_a[k] == info_b[k], k


@pytest.mark.slow       # a second or more: `make test` runs it, test-fast does not
def test_every_volume_and_one_volume_from_the_copy(tmp_path):
    src = msr_trace(tmp_path / "msr.csv", per_volume=800)
    ok(tmp_path, "simulate", "convert", str(src), "--out", "conv")
    assert sorted(p.name for p in (tmp_path / "conv" / "trace.parquet").iterdir()) == \
        ["manifest.json", "volume=0", "volume=1", "volume=2"]
    same_figures(ok(tmp_path, "simulate", "run", str(src), *CACHE, "--volume", "all", "--jobs", "1", "--out", "t1"),
                 ok(tmp_path, "simulate", "run", "conv", *CACHE, "--volume", "all", "--jobs", "2", "--out", "p1"))
    same_figures(ok(tmp_path, "simulate", "run", str(src), *CACHE, "--volume", VOLUMES[1], "--out", "t2"),
                 ok(tmp_path, "simulate", "run", "conv", *CACHE, "--volume", VOLUMES[1], "--out", "p2"))
    r = call_main("report", "conv", "--out", "rep", cwd=tmp_path)
    assert r.returncode == 0 and "Trace converted (Parquet)" in (tmp_path / "rep" / "report.html").read_text()


def test_a_changed_source_is_said_and_a_damaged_copy_refused(tmp_path):
    src = tmp_path / "t.csv"
    src.write_text((TRACES / "msr-hm1.csv").read_text())
    ok(tmp_path, "simulate", "convert", str(src), "--out", "conv")
    with src.open("a") as f:
        f.write("128166372100000000,hm,1,Read,0,4096,100\n")
    doc = ok(tmp_path, "simulate", "run", "conv", *CACHE, "--out", "r")
    assert any("has changed since it was converted" in n for n in doc["simulation"]["trace_info"]["notes"])
    assert_clean_error(call_main("simulate", "run", "conv", *CACHE, "--format", "msr", cwd=tmp_path),
                       "--format reads a text trace")
    assert_clean_error(call_main("simulate", "convert", str(tmp_path), cwd=tmp_path), "convert reads a trace file")
    part = tmp_path / "conv" / "trace.parquet" / "volume=0" / "part-0.parquet"
    part.write_bytes(part.read_bytes()[:100])
    assert_clean_error(call_main("simulate", "run", "conv", *CACHE, "--out", "bad", cwd=tmp_path),
                       "cannot read the converted trace")
    (tmp_path / "conv" / "trace.parquet" / "manifest.json").write_text("{")
    assert_clean_error(call_main("simulate", "run", "conv", *CACHE, cwd=tmp_path), "not a readable converted trace")
    os.remove(tmp_path / "conv" / "trace.parquet" / "manifest.json")
    assert_clean_error(call_main("simulate", "run", "conv", *CACHE, cwd=tmp_path), "without a captured or converted")


def test_a_bad_line_part_way_leaves_no_copy(tmp_path):
    src = tmp_path / "t.csv"
    good = (TRACES / "msr-hm1.csv").read_text().splitlines()
    src.write_text("\n".join(good[:5] + ["128166372100000000,hm,1,Read,-5,4096,100"] + good[5:]) + "\n")
    r = call_main("simulate", "convert", str(src), "--out", "conv", cwd=tmp_path)
    assert_clean_error(r, f"{src}:6")
    assert not (tmp_path / "conv" / "trace.parquet").exists()
    assert json.loads((tmp_path / "conv" / "result.json").read_text())["status"] == "failed"
