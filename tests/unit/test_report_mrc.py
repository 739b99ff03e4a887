"""The report of a `dbtier simulate mrc` run: one chart of every policy's miss-ratio curve with Belady as the
bound, each policy's headroom to it (hand-computed here), the trace, sampled runs and runs without Belady."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

from conftest import DATA, call_main, load_doc
from dbtier.report.figures import core as F
from dbtier.report.figures import tables as FT
from dbtier.report.html import render_html
from dbtier.report.markdown import render_markdown
from test_report_html import check_structure, external_references

MIB = 2**20
SIZES = [1 * MIB, 2 * MIB, 4 * MIB]
# miss ratio and byte miss ratio per size; S3-FIFO misses less than Belady at 4 MiB (objects of varied sizes)
CURVES = {"lru": ([0.60, 0.45, 0.30], [0.70, 0.55, 0.40]),
          "s3fifo": ([0.55, 0.40, 0.24], [0.65, 0.50, 0.35]),
          "belady": ([0.40, 0.30, 0.25], [0.50, 0.45, 0.38])}
# the gaps to Belady in percentage points, by hand: (miss ratio - Belady's) * 100
GAPS = {("1 MiB", "LRU"): 20.0, ("2 MiB", "LRU"): 15.0, ("4 MiB", "LRU"): 5.0,
        ("1 MiB", "S3-FIFO"): 15.0, ("2 MiB", "S3-FIFO"): 10.0, ("4 MiB", "S3-FIFO"): -1.0}


def _doc(policies=("lru", "s3fifo", "belady"), rate: float | None = None) -> dict:
    curves = [{"policy": p, "sample_rate": rate or 1.0,
               "points": [{"cache_bytes": s, "requests": 1000, "misses": round(mr * 1000), "miss_ratio": mr,
                           "bytes": 8000 * MIB, "byte_misses": round(bmr * 8000 * MIB), "byte_miss_ratio": bmr}
                          for s, mr, bmr in zip(SIZES, *CURVES[p])]} for p in policies]
    m = {"trace": {"format": "oracleGeneral", "mode": "object", "requests": 1000, "objects": 300,
                   "footprint_bytes": 12 * MIB},
         "curves": curves, "estimates": rate is not None}
    if rate is not None:
        m["note"] = f"SHARDS spatial sample at {rate:g} of the objects: every figure is an estimate"
    return {"schema_version": 1, "command": "simulate", "status": "ok", "_run_dir": "/runs/mrc",
            "params": {"action": "mrc", "trace": "t.oracleGeneral.bin", "policy": list(policies)}, "mrc": m}


def _series(html: str) -> list[str]:
    return re.findall(r'<g class="series"><title>([^<]*)</title>', html)


def _table(doc: dict, title: str) -> F.Table:
    return next(t for t in FT.tables(doc) if t.title.startswith(title))


def test_one_chart_with_every_policy_and_belady_dashed_as_the_bound():
    html = render_html([_doc()])
    check_structure(html)
    assert external_references(html) == []
    assert html.count("<svg") == 1
    assert _series(html) == ["LRU", "S3-FIFO", "Belady (optimal bound)"]
    belady = html[html.index("<title>Belady (optimal bound)</title>"):]
    assert 'stroke-dasharray="6 4"' in belady[:belady.index("</g>")]
    assert "cache size (MiB, log scale)" in html and "miss ratio (%)" in html
    assert "the classic MIN heuristic" in html     # the caption: a bound only for objects of one size
    # the trace's facts
    assert "oracleGeneral" in html and "1,000" in html and "300" in html and "12 MiB" in html


def test_headroom_equals_the_hand_computed_gaps_negative_included():
    doc = _doc()
    t = _table(doc, "Miss ratio and headroom to Belady")
    assert t.columns == ["cache", "policy", "miss ratio %", "above Belady (pp)", "misses", "byte miss ratio %"]
    got = {(r[0], r[1]): r[3] for r in t.rows if r[1] != "Belady"}
    assert got.keys() == GAPS.keys()
    for k, gap in GAPS.items():
        assert got[k] == pytest.approx(gap), k
    assert [r[3] for r in t.rows if r[1] == "Belady"] == ["the bound"] * 3
    row = next(r for r in t.rows if r[:2] == ["4 MiB", "S3-FIFO"])
    assert row[2] == pytest.approx(24.0) and row[4] == 240 and row[5] == pytest.approx(35.0)
    # the best real policy at each size, with its headroom
    best = _table(doc, "Best real policy at each cache size").rows
    assert [r[:2] for r in best] == [["1 MiB", "S3-FIFO"], ["2 MiB", "S3-FIFO"], ["4 MiB", "S3-FIFO"]]
    assert [r[4] for r in best] == pytest.approx([15.0, 10.0, -1.0])
    md = render_markdown([doc])
    assert "| 4 MiB | S3-FIFO | 24.00 | -1.00 | 240 | 35.00 |" in md
    assert "| 1 MiB | LRU | 60.00 | 20.00 | 600 | 70.00 |" in md
    html = render_html([doc])
    assert "-1.00 pp" in html and "+20.00 pp" in html
    assert "At 4 MiB: S3-FIFO misses 24.00%, 1.00 pp below Belady&#x27;s 25.00%" in html
    assert "At 1 MiB: S3-FIFO misses 55.00%, 15.00 pp above Belady&#x27;s 40.00%" in html


def test_a_sampled_run_says_its_figures_are_estimates():
    doc = _doc(rate=0.01)
    html = render_html([doc])
    assert "Miss ratio by cache size (SHARDS estimates at 0.01)" in html
    assert "SHARDS spatial sample at 0.01 of the objects: every figure is an estimate" in html
    md = render_markdown([doc])
    assert "SHARDS spatial sample at 0.01 of the objects" in md and "(SHARDS estimates at 0.01)" in md
    assert "estimates" not in render_html([_doc()]).split("<h3>", 1)[1].split("How these numbers")[0]


def test_without_belady_the_bound_is_said_not_computed():
    doc = _doc(("lru", "s3fifo"))
    html = render_html([doc])
    check_structure(html)
    assert _series(html) == ["LRU", "S3-FIFO"]
    assert "Belady&#x27;s bound was not computed" in html and "--policy lru,s3fifo,belady" in html
    assert "pp above" not in html and "pp below" not in html
    assert all(r[3] is None for r in _table(doc, "Miss ratio and headroom").rows)
    assert [r[3] for r in _table(doc, "Best real policy").rows] == ["not computed"] * 3
    md = render_markdown([doc])
    assert "| 1 MiB | S3-FIFO | 55.00 | not computed | — |" in md and "--policy lru,s3fifo,belady" in md


def test_a_malformed_mrc_document_does_not_cost_the_report():
    doc = _doc()
    bad = copy.deepcopy(doc)
    bad["mrc"]["curves"][0]["points"] = "oops"
    bad["mrc"]["trace"] = None
    html = render_html([bad])
    check_structure(html)
    assert _series(html) == ["LRU", "S3-FIFO", "Belady (optimal bound)"]   # LRU drawn without points
    assert render_markdown([bad])


def test_the_cli_run_and_its_report(tmp_path: Path):
    trace = DATA / "objects" / "cloudPhysicsIO.oracleGeneral.bin"
    r = call_main("simulate", "mrc", str(trace), "--policy", "lru,s3fifo,belady", "--sizes", "256MiB,1GiB",
                  "--out", str(tmp_path / "run"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = call_main("report", str(tmp_path / "run"), "--format", "both", "--out", str(tmp_path / "rep"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    html = (tmp_path / "rep" / "report.html").read_text()
    md = (tmp_path / "rep" / "report.md").read_text()
    check_structure(html)
    assert _series(html) == ["LRU", "S3-FIFO", "Belady (optimal bound)"]
    # Belady's headroom from the run's own numbers, worked out here
    pts = {c["policy"]: c["points"] for c in load_doc(tmp_path / "run")["mrc"]["curves"]}
    for i, size in enumerate(("256 MiB", "1 GiB")):
        for pol, name in (("lru", "LRU"), ("s3fifo", "S3-FIFO")):
            gap = (pts[pol][i]["miss_ratio"] - pts["belady"][i]["miss_ratio"]) * 100
            assert f"| {size} | {name} | {pts[pol][i]['miss_ratio'] * 100:.2f} | {gap:.2f} |" in md
            assert f"{gap:+.2f} pp" in html
    assert "| 1 GiB | Belady | 43.01 | the bound | 48,974 |" in md     # compulsory misses only: one per object


@pytest.mark.slow    # compiles kernels only it needs: the full suite's
def test_every_policy_on_one_chart_with_its_own_colour_and_what_it_follows(tmp_path: Path):
    # a run of every policy (issue 38's set): one chart, twelve real curves of twelve colours and Belady's,
    # each policy's name in the table, and the method naming what each follows with its parameters
    trace = DATA / "objects" / "cloudPhysicsIO.oracleGeneral.bin"
    r = call_main("simulate", "mrc", str(trace), "--policy", "all", "--sizes", "128MiB,512MiB", "--out",
                  str(tmp_path / "run"), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = load_doc(tmp_path / "run")
    html = render_html([doc])
    check_structure(html)
    names = ["LRU", "FIFO", "CLOCK", "S3-FIFO", "S3-FIFO (2023)", "SIEVE", "2Q", "SLRU", "LFU", "ARC", "LIRS",
             "W-TinyLFU"]
    assert html.count("<svg") == 1 and _series(html) == names + ["Belady (optimal bound)"]
    strokes = re.findall(r'<g class="series"><title>[^<]*</title><polyline [^>]*stroke="([^"]+)"', html)
    assert len(strokes) == 13 and len(set(strokes[:12])) == 12
    rows = _table(doc, "Miss ratio and headroom to Belady").rows
    assert {r[1] for r in rows} == set(names) | {"Belady"}
    misses = {(r[0], r[1]): r[4] for r in rows}
    assert misses[("128 MiB", "W-TinyLFU")] == 90456 and misses[("512 MiB", "LIRS")] == 70363   # libCacheSim's
    md = render_markdown([doc])
    assert "S3FIFO.c, its rule since December 2024" in md and "small_size_ratio=0.1" in md
    assert "2Q: libCacheSim (libcachesim 0.3.5) TwoQ.c" in html and "a_in_size_ratio=0.25" in html
